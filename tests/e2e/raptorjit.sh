#!/bin/bash
# End-to-end checks of the stored RaptorJIT sample, samples/raptorjit-traces (CI cannot build
# RaptorJIT: scripts/build-raptorjit, scripts/make-samples raptorjit-traces): its audit.log
# and callgrind profile are what docs/formats.md ("RaptorJIT's auditlog") says, read by
# check-raptorjit.pl with its own msgpack reader (AuditLog.pm, no cgjit code), struct offsets
# from the log's DWARF blob (readelf) and per-address costs from cgcheck --addrs; then
# `cgjit augment PROFILE audit.log` (check-raptorjit.pl: every trace named with its cost;
# check-augment.pl: the invariants every augmented profile keeps, the ELF file's code against
# the log's MCode[]) and `cgjit timeline audit.log` (the late traces, the aborts).
# samples/src/auditstats.py's numbers (the sample's README) are checked to be current.
# Prints "ok"/"not ok" per check and "N passed, N failed, N skipped" last; exits 1 on any
# failure.
. "$(dirname "$0")/harness.sh"

SAMPLE=$top/samples/raptorjit-traces
prof=$(ls "$SAMPLE"/callgrind.out.* | head -1)
zstd -q -dcf "$prof" >"$tmp/in"
log=$(ls "$SAMPLE"/audit.log* | head -1)

if ! command -v readelf >/dev/null; then
	skip "raptorjit: no readelf (binutils) to read the log's DWARF blob"
else
	# cgjit augment with the log, cgjit timeline of the log
	"$CGJIT" augment -q -o "$tmp/out" --elf "$tmp" "$tmp/in" "$log" 2>"$tmp/err"
	expect '[ -s "$tmp/out" ] && [ ! -s "$tmp/err" ] && [ -s "$tmp/$(basename "$log").auditlog.elf" ]' \
		"cgjit augment PROFILE audit.log: an output and the traces' ELF file audit.log.auditlog.elf, quietly $(head -c 200 "$tmp/err")"
	"$CGJIT" report --jit-only -n 3 "$tmp/out" >"$tmp/report" 2>&1
	expect 'grep -q "^JIT       12 functions, 88.99% of Ir" "$tmp/report" && grep -q "JIT TRACE_1 loop::@raptor.lua:15  \[audit.log.auditlog.elf, raptor.lua\]" "$tmp/report"' \
		"cgjit report --jit-only counts the 12 traces as JIT code (their ELF file's name says so)"
	"$CGJIT" timeline --format json --top 0 --warmup 0.5 "$log" >"$tmp/timeline.json" 2>"$tmp/err"
	expect '[ -s "$tmp/timeline.json" ] && [ ! -s "$tmp/err" ]' "cgjit timeline audit.log $(head -c 200 "$tmp/err")"
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$top/tests/e2e/check-raptorjit.pl" "$CGCHECK" "$top/samples/src/raptor.lua" "$log" "$tmp/in" \
		"$tmp/out" "$tmp/timeline.json" 2>&1 || echo "not ok - check-raptorjit.pl failed"
		perl "$top/tests/e2e/check-augment.pl" "$CGCHECK" "$tmp/in" "$tmp/out" "$log" 2>&1 \
		|| echo "not ok - check-augment.pl failed")
	if command -v python3 >/dev/null; then
		python3 "$top/samples/src/auditstats.py" "$log" "$prof" >"$tmp/stats" 2>&1
		sed -n '/^    auditlog:/,$p' "$SAMPLE/README" | sed 's/^    //' >"$tmp/readme-stats"
		expect 'diff -q "$tmp/readme-stats" "$tmp/stats" >/dev/null' \
			"the sample README's numbers are auditstats.py's on the stored files"
	else
		skip "raptorjit: no python3 for samples/src/auditstats.py"
	fi
fi
echo "# the log as input: compressed, from a pipe, named *.auditlog, cut, malformed"
zstd -q -c "$log" >"$tmp/t.auditlog.zst"
"$CGJIT" augment -q -o "$tmp/out2" --elf "$tmp" "$tmp/in" <(zstd -q -dc "$tmp/t.auditlog.zst") 2>"$tmp/err"
expect '[ -s "$tmp/out2" ] && [ "$(grep -c "^fn=.*TRACE_" "$tmp/out2")" = "$(grep -c "^fn=.*TRACE_" "$tmp/out")" ]' \
	"a zstd-compressed log from a pipe names the same traces $(head -c 200 "$tmp/err")"
"$CGJIT" augment -q -o "$tmp/out3" --elf "$tmp" "$tmp/in" "$tmp/t.auditlog.zst" 2>"$tmp/err"
expect '[ -s "$tmp/out3" ] && [ -s "$tmp/t.auditlog.elf" ] && [ ! -e "$tmp/t.auditlog.auditlog.elf" ]' \
	"a log named t.auditlog(.zst) gets t.auditlog.elf $(head -c 200 "$tmp/err")"
gzip -c "$log" >"$tmp/t2.auditlog.gz"
"$CGJIT" augment -q -o "$tmp/out3b" --elf "$tmp" "$tmp/in" "$tmp/t2.auditlog.gz" 2>"$tmp/err"
expect '[ -s "$tmp/out3b" ] && [ -s "$tmp/t2.auditlog.elf" ] && cmp -s <(grep -c "^fn=.*TRACE_" "$tmp/out3b") <(grep -c "^fn=.*TRACE_" "$tmp/out")' \
	"a gzip-compressed log named t2.auditlog.gz gets t2.auditlog.elf and the same traces $(head -c 200 "$tmp/err")"
"$CGJIT" timeline "$tmp/t.auditlog.zst" >"$tmp/tl" 2>"$tmp/err"
expect 'grep -q "RaptorJIT auditlog, 12 traces compiled (4,389 bytes of machine code), 4 aborted, 0 flushes" "$tmp/tl"' \
	"timeline of the compressed log: 12 traces, 4 aborts $(head -c 200 "$tmp/err")"
"$CGJIT" timeline -f svg -o "$tmp/tl.svg" "$tmp/t.auditlog.zst" 2>"$tmp/err"
if command -v xmllint >/dev/null; then
	expect 'xmllint --noout "$tmp/tl.svg" 2>>"$tmp/err" && grep -q "<title>[^<]*: 1 loads, 110 bytes, 4 aborts</title>" "$tmp/tl.svg" && grep -q "aborted trace recordings" "$tmp/tl.svg"' \
		"timeline -f svg of the log: well-formed, the aborts panel with the bucket of the 4 aborts $(head -c 200 "$tmp/err")"
else
	notok "timeline -f svg: xmllint (libxml2-utils) is required"
fi
"$CGJIT" augment -q --no-elf -o "$tmp/out6" "$tmp/in" "$log" 2>"$tmp/err"
"$CGJIT" report --jit-only -n 1 "$tmp/out6" >"$tmp/report6" 2>&1
expect 'grep -q "^ob=.*audit.log.auditlog$" "$tmp/out6" && grep -q "^JIT       12 functions, 88.99% of Ir" "$tmp/report6"' \
	"--no-elf: the traces' object is audit.log.auditlog, which report counts as JIT code $(head -c 200 "$tmp/err")"
(cd "$tmp" && "$CGJIT" augment -q -o out7 in - <"$log" 2>"$tmp/err")
expect '[ -s "$tmp/out7" ] && [ -s "$tmp/stdin.auditlog.elf" ]' "a log on stdin: its ELF file is stdin.auditlog.elf $(head -c 200 "$tmp/err")"
size=$(stat -c %s "$log")
head -c $((size - 100)) "$log" >"$tmp/cut.log"
"$CGJIT" augment -o "$tmp/out4" --elf "$tmp" "$tmp/in" "$tmp/cut.log" 2>"$tmp/err"
expect '[ -s "$tmp/out4" ] && grep -q "warning: the last [0-9]* bytes are a record cut off" "$tmp/err" && grep -q "11 traces\|12 traces" "$tmp/err"' \
	"a log cut inside its last record: the records before it, with a warning"
"$CGJIT" timeline "$tmp/cut.log" >"$tmp/tl" 2>"$tmp/err"
expect 'grep -q "cgjit: warning: .*cut.log: the last [0-9]* bytes are a record cut off (the process died before the log was flushed?)" "$tmp/err"' \
	"timeline of the cut log: the warning says why a log is cut $(head -c 200 "$tmp/err")"
perl -e 'print "\x81\xa4type\xa5other", "\x91\x01"' >"$tmp/bad.log"
"$CGJIT" augment -o "$tmp/out5" "$tmp/in" "$tmp/bad.log" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -e "$tmp/out5" ] && grep -qx "cgjit: $tmp/bad.log: byte 12: a record must be a msgpack map, got form 0x91 (an array)" "$tmp/err"' \
	"a malformed log: exit 1, nothing written, the byte offset: $(head -c 300 "$tmp/err")"
"$CGJIT" timeline "$tmp/bad.log" >"$tmp/tl" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "byte 12: a record must be a msgpack map" "$tmp/err"' "timeline of the malformed log: exit 1, the byte offset"

if [ -n "${RAPTORJIT:-}" ] && [ -x "$RAPTORJIT" ]; then
	out=$(cd "$tmp" && cp "$top/samples/src/raptor.lua" . && "$RAPTORJIT" -a live.log raptor.lua)
	expect '[ "$out" = "sum 122280 odd 2884270 closures 501 total 210" ] && [ -s "$tmp/live.log" ]' \
		"\$RAPTORJIT runs raptor.lua (the sample's output) and writes an auditlog"
	"$CGJIT" timeline --format json "$tmp/live.log" >"$tmp/live.json" 2>"$tmp/err"
	expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(\$d->{loads} >= 10 && \$d->{aborts}{count} >= 1)" <"$tmp/live.json"' \
		"cgjit timeline reads the live log: its traces and aborts $(head -c 200 "$tmp/err")"
else
	skip "raptorjit: \$RAPTORJIT is not set (scripts/build-raptorjit): the stored sample only"
fi
finish
