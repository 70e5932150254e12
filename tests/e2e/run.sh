#!/bin/bash
# End-to-end tests: real callgrind profiles through cgjit, each result checked by the
# independent oracle (tests/tools/cgcheck, kcachegrind's identity rules) and by
# callgrind_annotate; CLI behaviour; the malformed-input table tests/bad/cases.
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"

is_zstd() { [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "28b52ffd" ]; }

# augment_and_check [--bias N] [--no-objdump] [--root DIR] [--path-map OLD=NEW]... NAME PROFILE
# SYMBOLFILE...: augment (with --root and --path-map), then run check-augment.pl on the
# result (with all of them).
augment_and_check() {
	local checker=() paths=()
	while :; do
		case $1 in
		--bias) checker+=(--bias "$2") ;;
		--root | --path-map) paths+=("$1" "$2") ;;
		--no-objdump) checker+=("$1"); shift; continue ;;
		*) break ;;
		esac
		shift 2
	done
	local name=$1 profile=$2
	shift 2
	local plain=$profile out=$tmp/$name.out
	if is_zstd "$profile"; then
		plain=$tmp/$name.in
		zstd -q -dc "$profile" >"$plain"
	fi
	if ! "$CGJIT" augment -q -o "$out" --elf "$tmp" "${paths[@]}" "$profile" "$@" 2>"$tmp/err"; then
		notok "$name: cgjit augment failed: $(cat "$tmp/err")"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$top/tests/e2e/check-augment.pl" "${checker[@]}" "${paths[@]}" "$CGCHECK" "$plain" "$out" "$@" 2>/dev/null)
}

echo "# real profiles: tests/jitprog (every callgrind variant)"
for dir in "$top"/tests/jitprog/profiles/*/; do
	v=$(basename "$dir")
	map=$(ls "$dir"perf-*.map | grep -v overlap | head -1)
	for p in "$dir"callgrind.out.*; do
		augment_and_check "jitprog-$v-$(basename "$p")" "$p" "$map"
	done
	for dump in "$dir"jit-*.dump; do
		[ -e "$dump" ] || continue
		augment_and_check "jitprog-$v-jitdump" "$(ls "$dir"callgrind.out.* | head -1)" "$dump"
		augment_and_check "jitprog-$v-jitdump+map" "$(ls "$dir"callgrind.out.* | head -1)" "$map" "$dump"
	done
done
p=$(ls "$top"/tests/jitprog/profiles/instr/callgrind.out.* | head -1)
augment_and_check jitprog-overlap "$p" "$(ls "$top"/tests/jitprog/profiles/instr/perf-*.overlap.map)"

echo "# real profiles: samples/ (MoarVM, node, JVM)"
for dir in "$top"/samples/*/; do
	ls "$dir"callgrind.out.* >/dev/null 2>&1 || continue
	syms=()
	for f in "$dir"perf-*.map "$dir"jit-*.dump "$dir"jit-*.dump.zst; do
		[ -e "$f" ] && syms+=("$f")
	done
	# no perf map or jitdump (raptorjit-traces: an auditlog, which augment does not read yet)
	[ ${#syms[@]} -gt 0 ] || continue
	bias=()
	[ -f "$dir"DEBUG_BIAS ] && bias=(--bias "$(cat "$dir"DEBUG_BIAS)")
	for p in "$dir"callgrind.out.*; do
		augment_and_check "${bias[@]}" "$(basename "$dir")-$(basename "$p")" "$p" "${syms[@]}"
	done
done

echo "# --root and --path-map: the same checks, the expected names and files mapped (PathMap.pm)"
# The directory the samples were recorded in, from the script's path in their names; each
# runtime's convention: V8 (map, and dump with line rows), CPython, MoarVM (its paths are
# relative: a relative OLD), jitprog's MoarVM-style names with jitdump rows in /src.
sample_dir() { grep -ao -m1 '/tmp/cgjit-sample\.[A-Za-z0-9]*/' "$@" | head -1 | sed 's,/$,,'; }
s=$top/samples
augment_and_check --bias 0x40 --root "$(sample_dir "$s"/node-jitdump/perf-*.map)" node-jitdump-root \
	"$s"/node-jitdump/callgrind.out.* "$s"/node-jitdump/perf-*.map "$s"/node-jitdump/jit-*.dump.zst
augment_and_check --root "$(sample_dir "$s"/node-instr/perf-*.map)" --path-map /tmp=/ci node-instr-root \
	"$s"/node-instr/callgrind.out.* "$s"/node-instr/perf-*.map
augment_and_check --root "$(sample_dir "$s"/python-jitdump/jit-*.dump)" python-jitdump-root \
	"$s"/python-jitdump/callgrind.out.* "$s"/python-jitdump/jit-*.dump
augment_and_check --path-map gen/moar=/opt/rakudo/gen/moar --path-map prog.raku=bench/prog.raku \
	moarvm-callers-path-map "$s"/moarvm-callers/callgrind.out.* "$s"/moarvm-callers/perf-*.map
j=$top/tests/jitprog/profiles/jitdump-instr
augment_and_check --root /src jitprog-jitdump-root "$(ls "$j"/callgrind.out.* | head -1)" "$j"/perf-*.map "$j"/jit-*.dump
for n in node-jitdump-root node-instr-root python-jitdump-root jitprog-jitdump-root; do
	expect '[ -s "$tmp/$n.out" ] && ! grep -q "cgjit-sample\|^f[lie]=([0-9]*) /src/\|(/src/" "$tmp/$n.out"' \
		"$n: no name or JIT file keeps the root (relative: bench.js, not /tmp/cgjit-sample.X/bench.js)"
done

echo "# real profiles: tests/jitprog/profiles/trampoline (JIT code jumping into unmapped stubs)"
# T and U (in the map and the dump) jump into the stubs S and V, which neither covers;
# callgrind charges S's 11,800 and V's 6,400 Ir, and their calls to B and jitprog_tramp_c,
# to T and U (tests/jitprog/README, "Trampoline"). Wherever augment puts those lines, the
# inclusive costs of T and U stay those of main's calls in the input: 18,600 and 10,600.
tramp=$top/tests/jitprog/profiles/trampoline
if [ -d "$tramp" ]; then
	p=$(ls "$tramp"/callgrind.out.* | head -1)
	for f in "$tramp"/perf-*.map "$tramp"/jit-*.dump; do
		rm -f "$tmp/tramp.out"
		"$CGJIT" augment -q --no-elf -o "$tmp/tramp.out" "$p" "$f" 2>"$tmp/err"
		incl=$(callgrind_annotate --inclusive=yes --threshold=100 "$tmp/tramp.out" 2>/dev/null)
		t=$(echo "$incl" | grep -F 'jit_T(/src/t.raku:5) [' | awk '{ gsub(",", "", $1); print $1 }')
		u=$(echo "$incl" | grep -F 'jit_U(/src/u.raku:8) [' | awk '{ gsub(",", "", $1); print $1 }')
		expect '[ "$t" = 18600 ] && [ "$u" = 10600 ]' \
			"trampoline with $(basename "$f"): inclusive jit_T $t (expected 18600), jit_U $u (expected 10600)"
		# Rule 5: a JIT function's self cost is its own addresses' cost (T 5,200, U 2,600);
		# the stubs become ??? functions named by their entries, with no source line.
		# (summed over the files callgrind_annotate splits a function into: the dump's rows
		# say /src/jit_T.wat, the name /src/t.raku, which is the function's file)
		self=$(callgrind_annotate --inclusive=no --threshold=100 "$tmp/tramp.out" 2>/dev/null)
		ts=$(echo "$self" | grep -F ':jit_T(/src/t.raku:5)' | grep -v '=>' | awk '{ gsub(",", "", $1); if ($1 != ".") n += $1 } END { print n }')
		us=$(echo "$self" | grep -F ':jit_U(/src/u.raku:8)' | grep -v '=>' | awk '{ gsub(",", "", $1); if ($1 != ".") n += $1 } END { print n }')
		ss=$(echo "$self" | grep -F '???:0x0000000010000e00 [???]' | awk '{ gsub(",", "", $1); print $1 }')
		vs=$(echo "$self" | grep -F '???:0x0000000010000e80 [???]' | awk '{ gsub(",", "", $1); print $1 }')
		expect '[ "$ts" = 5200 ] && [ "$us" = 2600 ] && [ "$ss" = 11800 ] && [ "$vs" = 6400 ]' \
			"trampoline with $(basename "$f"): self jit_T $ts (5200), jit_U $us (2600), stubs S $ss (11800) and V $vs (6400) on their own"
		expect 'grep -q "^# cgjit: synthetic call: code that no symbol covers" "$tmp/tramp.out" && ! grep -A3 "^fn=.*0x0000000010000e00" "$tmp/tramp.out" | grep -q "^0x10000e00 [1-9]"' \
			"trampoline with $(basename "$f"): stubs reached by marked synthetic calls, without source lines"
	done
fi

echo "# node baseline code: returns recorded as calls (README rule 6)"
# samples/node-baseline: JS:^collatz's entry fragment 0x...d045b80 is called 19,834 times
# with inclusive 215,908,325; the prologue builtin's return to +0x14 is recorded as a call.
# After augment the function's inclusive is the entry fragment's, not twice it, and only
# its real caller calls it.
nb=$top/samples/node-baseline
if [ -d "$nb" ]; then
	zstd -q -dc "$nb"/callgrind.out.*.zst >"$tmp/nb.in"
	entry=$(awk '/^calls=[0-9]+ 0xd045b80 / { c = $1; getline; split($0, a, " "); n += a[3]; k += substr(c, 7) } END { print n, k }' "$tmp/nb.in")
	"$CGJIT" augment -q -o "$tmp/nb.out" "$tmp/nb.in" "$nb"/perf-*.map 2>"$tmp/err"
	got=$(callgrind_annotate --inclusive=yes --threshold=100 "$tmp/nb.out" 2>/dev/null | grep -F 'JS:^collatz' | grep -F '[' | awk '{ gsub(",", "", $1); print $1 }')
	callers=$(callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$tmp/nb.out" 2>/dev/null | grep -B3 '\*  .*JS:^collatz.*\[' | grep -c '^ .*<')
	expect '[ -n "$got" ] && [ "$got" = "${entry% *}" ] && [ "$callers" = 1 ]' \
		"node-baseline: JS:^collatz inclusive $got = its entry fragment's $entry (cost, calls), one caller ($callers)"
fi

echo "# command line"
cp "$bad/good.cg" "$tmp/callgrind.out.4242"
"$CGJIT" augment -q "$tmp/callgrind.out.4242" "$bad/good.map"
expect '[ -f "$tmp/callgrind.out.jit.4242" ]' "default output: callgrind.out.PID -> callgrind.out.jit.PID"
expect 'grep -q "^fn=.*jit_main(/src/a.raku:3)" "$tmp/callgrind.out.jit.4242"' "JIT function named from the map"
expect 'grep -q "^fl=.*/src/a.raku" "$tmp/callgrind.out.jit.4242" && grep -q "^0x10000000 3 10" "$tmp/callgrind.out.jit.4242"' \
	"file and line taken from a MoarVM-style name"
cp "$bad/good.map" "$tmp/perf-4242.map"
"$CGJIT" augment -q --map-dir "$tmp" "$tmp/callgrind.out.4242" -o "$tmp/auto.out"
expect 'grep -q "^# cgjit: 2 JIT symbols from $tmp/perf-4242.map" "$tmp/auto.out" && grep -q "^fn=.*jit_main" "$tmp/auto.out"' \
	"map found from the profile's pid: line"
"$CGJIT" augment -q "$tmp/callgrind.out.4242" "$bad/good.map" -o - >"$tmp/stdout.out"
expect 'cmp -s "$tmp/stdout.out" "$tmp/callgrind.out.jit.4242"' "-o - writes the same profile to stdout"
"$CGJIT" augment -q - "$bad/good.map" -o "$tmp/stdin.out" <"$tmp/callgrind.out.4242"
expect 'cmp -s "$tmp/stdin.out" "$tmp/callgrind.out.jit.4242"' "- reads the profile from stdin"
zstd -q -c "$tmp/callgrind.out.4242" >"$tmp/in.zst"
"$CGJIT" augment -q "$tmp/in.zst" "$bad/good.map" -o "$tmp/fromzst.out"
expect 'cmp -s "$tmp/fromzst.out" "$tmp/callgrind.out.jit.4242"' "zstd input detected by magic"
"$CGJIT" augment -q "$tmp/callgrind.out.4242" "$bad/good.map" -o "$tmp/out.zst"
expect 'is_zstd "$tmp/out.zst" && zstd -q -dc "$tmp/out.zst" | cmp -s - "$tmp/callgrind.out.jit.4242"' "zstd output for a .zst name"
"$CGJIT" augment "$tmp/callgrind.out.4242" "$bad/good.map" -o "$tmp/s.out" --stats "$tmp/s.yaml" 2>"$tmp/summary"
expect 'grep -q "^pseudo_functions_resolved: 2$" "$tmp/s.yaml" && grep -q "jit_share: 1.000000" "$tmp/s.yaml"' "--stats writes YAML"
expect 'grep -q "2 named from symbols" "$tmp/summary" && grep -q "Ir .* 100.00%" "$tmp/summary"' "summary on stderr"
"$CGJIT" augment -q "$tmp/callgrind.out.4242" "$bad/good.map" -o "$tmp/q.out" 2>"$tmp/quiet"
expect '[ ! -s "$tmp/quiet" ]' "-q prints nothing"
"$CGJIT" augment -q --keep-addresses "$tmp/callgrind.out.4242" "$bad/good.map" -o "$tmp/k.out"
expect 'grep -q "jit_main(/src/a.raku:3) \[0x10000000\]" "$tmp/k.out"' "--keep-addresses puts the address in the name"
"$CGJIT" augment -q "$tmp/callgrind.out.jit.4242" "$bad/good.map" -o "$tmp/again.out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -e "$tmp/again.out" ] && grep -q "callgrind.out.jit.4242:[0-9]*: this profile was written by cgjit augment already" "$tmp/err"' \
	"augmenting an augmented profile: recognised, said, exit 1, no output (exit $rc)"
"$CGJIT" augment 2>/dev/null
expect '[ $? = 2 ]' "no profile: usage error, exit 2"
"$CGJIT" augment --bogus "$tmp/callgrind.out.4242" 2>/dev/null
expect '[ $? = 2 ]' "unknown option: exit 2"
"$CGJIT" augment - "$bad/good.map" </dev/null 2>/dev/null
expect '[ $? = 2 ]' "stdin without -o: exit 2"
bad_path_opt() {   # OPTION VALUE: a usage error, exit 2, no output
	"$CGJIT" augment "$1" "$2" -o "$tmp/pm.out" "$tmp/callgrind.out.4242" "$bad/good.map" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 2 ] && [ ! -e "$tmp/pm.out" ] && grep -q "^cgjit: --\(path-map\|root\): " "$tmp/err"' \
		"augment $1 '$2': usage error, exit 2 ($rc: $(head -n 1 "$tmp/err"))"
}
bad_path_opt --path-map /src
bad_path_opt --path-map =x
bad_path_opt --path-map "/src=a'b"
bad_path_opt --path-map "/src=a b"
bad_path_opt --root ""
for cmd in report diff check flamegraph; do
	"$CGJIT" $cmd --path-map nothing-to-map "$tmp/callgrind.out.4242" "$tmp/callgrind.out.4242" 2>"$tmp/err" >/dev/null
	rc=$?
	expect '[ $rc = 2 ] && grep -q "expected OLD=NEW" "$tmp/err"' "$cmd --path-map without '=': exit 2 ($rc)"
done
"$CGJIT" augment -q "$tmp/callgrind.out.4242" "$bad/good.map" -o /dev/full 2>"$tmp/err"
expect '[ $? = 1 ] && grep -q "/dev/full: write error: No space left" "$tmp/err" && [ -c /dev/full ]' \
	"a full disk is a clear error (and a device is written in place, never replaced)"
expect '[ -z "$(ls -A "$tmp" | grep cgjit-tmp)" ]' "no temporary file left behind"

echo "# interrupted runs and full disks leave nothing behind"
for sig in TERM INT; do
	rm -f "$tmp/fifo" "$tmp/sig.out"
	mkfifo "$tmp/fifo"
	(head -c 400 "$bad/good.cg"; sleep 3) >"$tmp/fifo" &
	feeder=$!
	env --default-signal="$sig" "$CGJIT" augment -q "$tmp/fifo" "$bad/good.map" -o "$tmp/sig.out" 2>/dev/null &
	victim=$!
	sleep 0.5
	kill -"$sig" "$victim"
	wait "$victim"
	rc=$?
	kill "$feeder" 2>/dev/null
	wait "$feeder" 2>/dev/null
	expect '[ "$rc" -gt 128 ] && [ ! -e "$tmp/sig.out" ] && ! ls -A "$tmp" | grep -q cgjit-tmp' \
		"SIG$sig in the middle of a run: no output, no temporary file (exit $rc)"
done
# A real full file system, where root may mount one (CI runs as root); skipped elsewhere.
mkdir -p "$tmp/small"
if mount -t tmpfs -o size=64k tmpfs "$tmp/small" 2>/dev/null; then
	p=$(ls "$top"/tests/jitprog/profiles/instr/callgrind.out.* | head -1)
	"$CGJIT" augment -q "$p" "$(ls "$top"/tests/jitprog/profiles/instr/perf-*.map | grep -v overlap)" \
		-o "$tmp/small/out" 2>"$tmp/err"
	rc=$?
	expect '[ "$rc" = 1 ] && grep -q "No space left on device" "$tmp/err" && [ -z "$(ls -A "$tmp/small")" ]' \
		"a full file system: clear error, nothing left in the directory"
	umount "$tmp/small"
else
	skip "cannot mount a small tmpfs here (not root)"
fi

echo "# malformed input (tests/bad/cases)"
while IFS='|' read -r prof map code text; do
	prof=$(echo $prof)
	map=$(echo $map)
	code=$(echo $code)
	text=$(echo "$text" | sed 's/^ *//; s/ *$//')
	case $prof in '#'* | '') continue ;; esac
	out=$tmp/bad.out
	rm -f "$out"
	args=("$bad/$prof")
	case $map in
	auto) args=(--map-dir "$bad" "${args[@]}") ;;
	-) ;;
	*) args+=("$bad/$map") ;;
	esac
	(cd "$bad" && "$CGJIT" augment -o "$out" "${args[@]}") 2>"$tmp/err" >/dev/null
	rc=$?
	if [ "$rc" != "$code" ]; then
		notok "bad/$prof + $map: exit $rc, expected $code ($(head -c 300 "$tmp/err"))"
	elif ! grep -qF -- "$text" "$tmp/err"; then
		notok "bad/$prof + $map: message '$(head -c 300 "$tmp/err")' lacks '$text'"
	elif [ "$code" != 0 ] && { [ -e "$out" ] || ls -A "$tmp" | grep -q cgjit-tmp; }; then
		notok "bad/$prof + $map: output file left behind"
	elif [ "$code" = 0 ] && ! "$CGCHECK" "$out" 2>"$tmp/cgcheck.err"; then
		notok "bad/$prof + $map: accepted, but the output is not consistent: $(head -c 300 "$tmp/cgcheck.err")"
	else
		ok "bad/$prof + $map: exit $code, '$text'$([ "$code" = 0 ] && echo ', output consistent')"
	fi
done <"$bad/cases"

finish
