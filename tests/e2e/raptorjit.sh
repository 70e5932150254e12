#!/bin/bash
# End-to-end checks of the stored RaptorJIT sample, samples/raptorjit-traces (CI cannot build
# RaptorJIT: scripts/build-raptorjit, scripts/make-samples raptorjit-traces): its audit.log
# and callgrind profile are what docs/formats.md ("RaptorJIT's auditlog") says, read by
# check-raptorjit.pl with its own msgpack reader (AuditLog.pm, no cgjit code), struct offsets
# from the log's DWARF blob (readelf) and per-address costs from cgcheck --addrs.
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
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$top/tests/e2e/check-raptorjit.pl" "$CGCHECK" "$top/samples/src/raptor.lua" "$log" "$tmp/in" 2>&1 \
		|| echo "not ok - check-raptorjit.pl failed")
	if command -v python3 >/dev/null; then
		python3 "$top/samples/src/auditstats.py" "$log" "$prof" >"$tmp/stats" 2>&1
		sed -n '/^    auditlog:/,$p' "$SAMPLE/README" | sed 's/^    //' >"$tmp/readme-stats"
		expect 'diff -q "$tmp/readme-stats" "$tmp/stats" >/dev/null' \
			"the sample README's numbers are auditstats.py's on the stored files"
	else
		skip "raptorjit: no python3 for samples/src/auditstats.py"
	fi
fi
if [ -n "${RAPTORJIT:-}" ] && [ -x "$RAPTORJIT" ]; then
	out=$(cd "$tmp" && cp "$top/samples/src/raptor.lua" . && "$RAPTORJIT" -a live.log raptor.lua)
	expect '[ "$out" = "sum 122280 odd 2884270 closures 501 total 210" ] && [ -s "$tmp/live.log" ]' \
		"\$RAPTORJIT runs raptor.lua (the sample's output) and writes an auditlog"
else
	skip "raptorjit: \$RAPTORJIT is not set (scripts/build-raptorjit): the stored sample only"
fi
finish
