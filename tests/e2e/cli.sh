#!/bin/bash
# End-to-end tests of what a newcomer meets first (issue 11, "rough edges"): option
# errors, --help and --version, arguments in the wrong order, the default output of a
# compressed profile, map and dump of the same code, a dump without debug records, a
# profile augmented twice, and the progress line (on a terminal only, through script(1)).
. "$(dirname "$0")/harness.sh"

s=$top/samples
echo "# option errors: which one, what is wrong, one usage line"
for c in "augment --stats|option '--stats' needs a value" "augment -o|option '-o' needs a value" \
	"augment --bogus=1 x|unknown option '--bogus'" "augment -qz x|unknown option '-z'" \
	"augment --help=1|option '--help' takes no value" "report --top|option '--top' needs a value" \
	"check -b|option '-b' needs a value" "timeline --warmup|option '--warmup' needs a value" \
	"flamegraph --event|option '--event' needs a value" "diff --no-such|unknown option '--no-such'" \
	"augment --keep-addresses -zq x|unknown option '-z'" "report --event=Ir -xq f|unknown option '-x'"; do
	args=${c%%|*}
	want=${c#*|}
	# shellcheck disable=SC2086
	"$CGJIT" $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 2 ] && [ "$(head -n 1 "$tmp/err")" = "cgjit: $want" ] && [ "$(wc -l <"$tmp/err")" = 3 ] && ! tr -d "[:print:]\n" <"$tmp/err" | grep -q . && [ ! -s "$tmp/out" ]' \
		"cgjit $args: exit 2, '$want', one usage line, printable (exit $rc)"
done

echo "# an empty output name: one message for every command that writes a file"
for c in "augment x -o|-o" "augment x --stats|--stats" "flamegraph x -o|-o" "timeline x --output|-o"; do
	args=${c%%|*}
	want="${c#*|} '' is an empty file name, expected a file to write"
	# shellcheck disable=SC2086
	(cd "$tmp" && "$CGJIT" $args '' >out 2>err)
	rc=$?
	expect '[ $rc = 2 ] && [ "$(head -n 1 "$tmp/err")" = "cgjit: $want" ] && [ "$(wc -l <"$tmp/err")" = 3 ] && [ ! -s "$tmp/out" ] && [ "$(ls "$tmp")" = "$(printf "err\nout")" ]' \
		"cgjit $args '': exit 2, '$want', one usage line, nothing written (exit $rc)"
done

echo "# --help and --version"
"$CGJIT" --help >"$tmp/out"
expect 'grep -q "perf maps" "$tmp/out" && grep -q "jitdumps" "$tmp/out" && grep -q "^  flamegraph " "$tmp/out"' \
	"cgjit --help names perf maps, jitdumps and every command"
for c in augment report diff check timeline flamegraph; do
	"$CGJIT" $c --version >"$tmp/out" 2>&1
	expect '[ $? = 0 ] && grep -q "^cgjit [0-9][0-9.]*$" "$tmp/out"' "cgjit $c --version prints the version"
done

echo "# a perf map or a jitdump where the profile belongs"
cp "$s/node-diff-base/perf-8698.map" "$s/node-diff-base/callgrind.out.8698.zst" "$tmp/"
(cd "$tmp" && "$CGJIT" augment perf-8698.map callgrind.out.8698.zst) >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -qF "perf-8698.map: this is a perf map (lines '"'"'START SIZE NAME'"'"'), not a callgrind profile; the profile goes first: cgjit augment PROFILE [PERF-MAP|JITDUMP...]" "$tmp/err" && [ ! -e "$tmp/jit.perf-8698.map" ]' \
	"swapped arguments (map first): says so, exit 1, no output (exit $rc)"
"$CGJIT" augment "$s/node-jitdump/jit-28244.dump.zst" "$s/node-jitdump/callgrind.out.28244.zst" -o "$tmp/x.out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "jit-28244.dump.zst: this is a jitdump, not a callgrind profile; the profile goes first" "$tmp/err" && [ ! -e "$tmp/x.out" ]' \
	"swapped arguments (jitdump first, compressed): says so, exit 1 (exit $rc)"
"$CGJIT" report "$s/node-diff-base/perf-8698.map" >/dev/null 2>"$tmp/err"
expect '[ $? = 1 ] && grep -q "this is a perf map" "$tmp/err"' "report of a perf map: says what it is"

echo "# the map beside the profile is found from the pid: line (where record and the samples keep it)"
mkdir -p "$tmp/beside"
cp "$s/node-diff-base/perf-8698.map" "$s/node-diff-base/callgrind.out.8698.zst" "$tmp/beside/"
"$CGJIT" augment -o "$tmp/beside.out" "$tmp/beside/callgrind.out.8698.zst" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -q "^  perf-map   .*beside/perf-8698.map: 2456 symbols" "$tmp/err"' \
	"augment PROFILE alone finds perf-PID.map in the profile's directory"
"$CGJIT" augment -o "$tmp/beside2.out" --map-dir "$tmp/nowhere" "$tmp/beside/callgrind.out.8698.zst" 2>"$tmp/err"
expect '[ $? = 1 ] && grep -q "neither perf-8698.map (.*nowhere) nor jit-8698.dump" "$tmp/err"' \
	"--map-dir is the only place looked for the map when given"

"$CGJIT" timeline "$s/node-diff-base/callgrind.out.8698.zst" >"$tmp/out" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -s "$tmp/out" ] && grep -q "byte 0: not a jitdump file: .* (this is a callgrind profile)" "$tmp/err"' \
	"timeline of a callgrind profile: says what it is"

echo "# a compressed profile gives a plain output by default"
(cd "$tmp" && "$CGJIT" augment -q callgrind.out.8698.zst perf-8698.map)
expect '[ -f "$tmp/callgrind.out.jit.8698" ] && head -c 18 "$tmp/callgrind.out.jit.8698" | grep -q "^# callgrind format" && callgrind_annotate "$tmp/callgrind.out.jit.8698" >/dev/null 2>&1' \
	"callgrind.out.PID.zst -> callgrind.out.jit.PID, plain text that callgrind_annotate reads"
(cd "$tmp" && "$CGJIT" augment -q callgrind.out.8698.zst perf-8698.map -o z.out.zst)
expect '[ "$(head -c 4 "$tmp/z.out.zst" | od -An -tx1 | tr -d " ")" = 28b52ffd ]' "-o NAME.zst still writes zstd"

echo "# the same profile augmented again"
(cd "$tmp" && "$CGJIT" augment callgrind.out.jit.8698 perf-8698.map) >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "callgrind.out.jit.8698:[0-9]*: this profile was written by cgjit augment already" "$tmp/err" && [ ! -e "$tmp/callgrind.out.jit.jit.8698" ]' \
	"an augmented profile is recognised: exit 1, no callgrind.out.jit.jit.PID (exit $rc)"

echo "# a map and a dump of the same code (node --perf-prof --perf-basic-prof)"
"$CGJIT" augment --no-elf -o "$tmp/nj.out" "$s/node-jitdump/callgrind.out.28244.zst" "$s/node-jitdump/perf-28244.map" \
	"$s/node-jitdump/jit-28244.dump.zst" 2>"$tmp/err"
expect '! grep -q "overlaps" "$tmp/err" && grep -q "^  map and dump      2457 perf-map entries for code a jitdump also describes" "$tmp/err"' \
	"no 'overlaps' for the dump's own code; the summary says the dump's entries are used"
"$CGJIT" augment --no-elf -o "$tmp/nj.out" "$s/node-jitdump/callgrind.out.28244.zst" "$s/node-jitdump/perf-28244.map" \
	"$s/node-jitdump/jit-28244.dump.zst" --stats "$tmp/nj.yaml" -q
expect 'grep -q "map_overlaps: 0" "$tmp/nj.yaml" && grep -q "map_superseded: 2457" "$tmp/nj.yaml"' "--stats: map_overlaps 0, map_superseded 2457"

echo "# a dump without debug records"
"$CGJIT" augment --no-elf -o "$tmp/py.out" "$s/python-jitdump/callgrind.out.27515.zst" "$s/python-jitdump/jit-27515.dump" 2>"$tmp/err"
expect 'grep -q "209 loads, 0 moves, no debug records (no line numbers)" "$tmp/err" && ! grep -q "debug bias" "$tmp/err"' \
	"no 'debug bias (detected)' when there is nothing to detect it from"

echo "# an empty symbol file (a runtime killed before it flushed its dump)"
: >"$tmp/jit-1.dump"
"$CGJIT" augment --no-elf -o "$tmp/e.out" "$s/node-diff-base/callgrind.out.8698.zst" "$tmp/jit-1.dump" \
	"$s/node-diff-base/perf-8698.map" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -q "^  empty      .*jit-1.dump: no bytes (the runtime wrote nothing to it" "$tmp/err" && ! grep -q "perf-map .*jit-1.dump" "$tmp/err"' \
	"an empty file is called empty, not a perf map with 0 symbols"

echo "# progress line: on a terminal only"
zstd -q -dc "$s/node-diff-base/callgrind.out.8698.zst" >"$tmp/nd.in"
if command -v script >/dev/null; then
	CGJIT_PROGRESS_MIN_BYTES=1000 script -qec "'$CGJIT' augment '$tmp/nd.in' '$tmp/perf-8698.map' -o '$tmp/p1.out'" /dev/null >"$tmp/tty" 2>&1
	expect 'grep -aq "cgjit: reading .*nd.in: [0-9]* of 8 MB ([0-9]*%), [0-9]* MB/s" "$tmp/tty" && grep -aq "cgjit: wrote" "$tmp/tty"' \
		"on a terminal: the progress line, then the summary"
	CGJIT_PROGRESS_MIN_BYTES=1000 script -qec "'$CGJIT' augment -q '$tmp/nd.in' '$tmp/perf-8698.map' -o '$tmp/p2.out'" /dev/null >"$tmp/tty" 2>&1
	expect '[ ! -s "$tmp/tty" ]' "-q: no progress line either"
	script -qec "'$CGJIT' augment '$tmp/nd.in' '$tmp/perf-8698.map' -o '$tmp/p3.out'" /dev/null >"$tmp/tty" 2>&1
	expect '! grep -aq "reading" "$tmp/tty"' "under 100 MB: no progress line"
else
	notok "script(1) is needed for the progress test (package bsdutils)"
fi
CGJIT_PROGRESS_MIN_BYTES=1000 "$CGJIT" augment "$tmp/nd.in" "$tmp/perf-8698.map" -o "$tmp/p4.out" 2>"$tmp/err"
expect '! grep -q "reading" "$tmp/err" && grep -q "cgjit: wrote" "$tmp/err"' "stderr not a terminal: no progress line"

echo "# the test command: CI runs the README's, which includes the clang build"
readme_cmd=$(sed -n '/^Run the whole test suite/,/^    /{s/^    //p}' "$top/README.md")
ci_cmd=$(grep -v '^#\|^set \|^cd ' "$top/.ci/run")
expect '[ -n "$readme_cmd" ] && [ "$readme_cmd" = "$ci_cmd" ] && case $ci_cmd in *" check-clang"*) true ;; *) false ;; esac && grep -q "^check-clang:" "$top/Makefile"' \
	".ci/run runs exactly the README's test command ('$readme_cmd'), check-clang included"

# scripts that no test runs whole (make-samples needs every runtime) must at least parse
bad=""
for f in "$top"/scripts/* "$top"/tests/e2e/*.sh "$top"/tests/tools/*.sh "$top/.ci/run"; do
	head -n 1 "$f" | grep -q bash || continue
	bash -n "$f" 2>/dev/null || bad="$bad ${f#"$top"/}"
done
expect '[ -z "$bad" ]' "every bash script in scripts/, tests/ and .ci/ parses (bash -n)${bad:+: not$bad}"

finish
