#!/bin/bash
# End-to-end tests of WebAssembly in node (issue 23): the stored sample samples/node-wasm
# (samples/src/wasm.wat built by wat2wasm --debug-names, run by wasm.js) augmented with its
# jitdump, its perf map and both, each result through check-wasm.pl (every function of the
# module named as V8 names it, from the name section, in the tier the sample's
# --wasm-tier-mask-for-testing gives it, with exactly the self cost the input has at its
# addresses) and check-augment.pl (cgcheck's invariants; run.sh does the same for every
# sample); samples/src/wasm.wasm against wat2wasm's output of wasm.wat; and a live
# `cgjit record` of the same program with the sample's wasm flags: the same checks, and
# each wasm function's self cost and calls equal to the sample's when node is the
# sample's version (the run is repeatable: docs/record.md 1.1). Prints "ok"/"not ok" per
# check ("skip" for those this machine cannot run) and "N passed, N failed, N skipped".
. "$(dirname "$0")/harness.sh"

s=$top/samples/node-wasm
src=$top/samples/src
e2e=$top/tests/e2e
mask=$(sed -n 's/.*--wasm-tier-mask-for-testing=\([0-9]*\).*/\1/p' "$s"/COMMAND)
wasmflags=$(grep -o -e '--no-wasm-[a-z-]*' -e '--wasm-tier-mask-for-testing=[0-9]*' "$s"/COMMAND | tr '\n' ' ')
expect '[ -n "$mask" ] && [ -n "$wasmflags" ]' "node-wasm/COMMAND gives the tier mask ($mask) and the wasm flags ($wasmflags)"

# check_wasm NAME SYMFILE IN OUT: check-wasm.pl's lines as this script's.
check_wasm() {
	local name=$1 line
	shift
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		*) notok "$name: ${line#not ok - }" ;;
		esac
	done < <(perl "$e2e/check-wasm.pl" --mask "$mask" "$CGCHECK" "$src/wasm.wat" "$@" 2>&1 || echo "not ok - check-wasm.pl failed")
}

# check_augment NAME IN OUT SYMFILE...: check-augment.pl's lines as this script's.
check_augment() {
	local name=$1 line
	shift
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		"not ok - "*) notok "$name: ${line#not ok - }" ;;
		esac
	done < <(perl "$e2e/check-augment.pl" --bias 0x40 "$CGCHECK" "$@" 2>&1 || echo "not ok - check-augment.pl failed")
}

echo "# the stored sample: dump, map, both"
prof=$(ls "$s"/callgrind.out.*)
zstd -q -dc "$prof" >"$tmp/in"
dump=$(ls "$s"/jit-*.dump*)
map=$(ls "$s"/perf-*.map)
for v in dump map both; do
	case $v in
	dump) syms=("$dump") ;;
	map) syms=("$map") ;;
	both) syms=("$dump" "$map") ;;
	esac
	if "$CGJIT" augment -q -o "$tmp/$v.out" --elf "$tmp" "$tmp/in" "${syms[@]}" 2>"$tmp/err"; then
		check_wasm "node-wasm ($v)" "${syms[0]}" "$tmp/in" "$tmp/$v.out"
	else
		notok "node-wasm ($v): cgjit augment failed: $(cat "$tmp/err")"
	fi
done
check_augment "node-wasm (both)" "$tmp/in" "$tmp/both.out" "$dump" "$map"
# the checker can fail: the input names no wasm function
n=$(perl "$e2e/check-wasm.pl" --mask "$mask" "$CGCHECK" "$src/wasm.wat" "$map" "$tmp/in" "$tmp/in" 2>/dev/null | grep -c '^not ok - .*self cost 0 in the output')
expect '[ "$n" -gt 0 ]' "check-wasm.pl finds the wasm functions unnamed in the input ($n not ok)"

echo "# samples/src/wasm.wasm is what wat2wasm makes of wasm.wat"
if command -v wat2wasm >/dev/null; then
	wat2wasm --debug-names "$src/wasm.wat" -o "$tmp/wasm.wasm"
	expect 'cmp -s "$tmp/wasm.wasm" "$src/wasm.wasm"' "wat2wasm --debug-names wasm.wat gives samples/src/wasm.wasm"
else
	skip "no wat2wasm (apt-get install wabt): samples/src/wasm.wasm not rebuilt"
fi

echo "# a live cgjit record of wasm.js with the sample's wasm flags"
if ! command -v valgrind >/dev/null || ! command -v node >/dev/null; then
	notok "valgrind and node are needed (scripts/setup installs valgrind; node: nodejs)"
	finish
	exit
fi
mkdir "$tmp/live"
cp "$src/wasm.js" "$src/wasm.wasm" "$tmp/live/"
# shellcheck disable=SC2086 # the flags are words
(cd "$tmp/live" && "$CGJIT" record -q -d out -- node $wasmflags wasm.js >prog.out 2>err)
rc=$?
expect '[ "$rc" = 0 ]' "cgjit record -- node $wasmflags wasm.js: status $rc $(tail -3 "$tmp/live/err")"
live=$(ls "$tmp"/live/out/callgrind.out.[0-9]* 2>/dev/null | grep -v '\.jit\.' | head -1)
ldump=$(ls "$tmp"/live/out/jit-*.dump 2>/dev/null | head -1)
lout=$(ls "$tmp"/live/out/callgrind.out.jit.* 2>/dev/null | head -1)
if [ -n "$live" ] && [ -n "$ldump" ] && [ -n "$lout" ]; then
	check_wasm "live" "$ldump" "$live" "$lout"
	# one run after another gives each wasm function the same cost and calls
	if [ "$(node --version)" = "$(sed -n 's/^Runtime: *node //p' "$s"/README)" ]; then
		wasm_list() { "$CGCHECK" --list "$1" | awk -F'\t' '$2 ~ /^JS:.*-[0-9]+-(liftoff|turbofan)/ { print $2, $5, $7 }'; }
		wasm_list "$tmp/both.out" >"$tmp/sample.list"
		wasm_list "$lout" >"$tmp/live.list"
		expect '[ -s "$tmp/live.list" ] && cmp -s "$tmp/sample.list" "$tmp/live.list"' \
			"live run: every wasm function's self cost and calls as in the sample ($(wc -l <"$tmp/live.list") lines; $(diff "$tmp/sample.list" "$tmp/live.list" | head -2 | tr '\n' ' '))"
	else
		skip "node $(node --version) is not the sample's: the live run's costs not compared"
	fi
else
	notok "live: record left no profile, jitdump or augmented profile in out/ ($(ls "$tmp/live/out" 2>&1 | tr '\n' ' '))"
fi
# record moves the maps and dumps of its runs out of /tmp and the current directory
pid=${live##*.}
expect '[ -n "$pid" ] && ! [ -e "/tmp/perf-$pid.map" ] && ! [ -e "/tmp/jit-$pid.dump" ] && ! ls "$tmp"/live/jit-*.dump >/dev/null 2>&1' \
	"live: no map or dump of the run left behind"
finish
