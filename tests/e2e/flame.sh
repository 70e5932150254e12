#!/bin/bash
# End-to-end tests of `cgjit flamegraph` on every stored sample, after augment as
# tests/e2e/reports.sh runs it: the SVG is well-formed XML (xmllint) and its frames fit
# into each other (tests/e2e/check-flame.pl); the folded stacks add up to the event's total
# that `cgjit report --format json` gives, and each function's stacks to its self cost in
# `cgjit report` and callgrind_annotate / cg_annotate (tests/e2e/check-flame-self.pl);
# a lattice-shaped call graph (tests/e2e/make-lattice.pl) stays within the frame cap;
# --diff colours the deliberately slowed-down JIT function red; --jit-only (only JIT frames,
# each at its self cost) and --focus (every stack from the focus, its frames at the costs
# of report --focus) on the samples, also with --diff; parts, events, cachegrind; the
# errors (exit 1/2, no output file left).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"

command -v xmllint >/dev/null || { notok "xmllint not found (Debian: libxml2-utils, scripts/setup)"; finish; exit; }

total_of() {   # PROFILE EVENT [report options]: the event's total per cgjit report
	local p=$1 e=$2
	shift 2
	"$CGJIT" report -f json -n 1 "$@" "$p" | perl -MJSON::XS -e 'local $/; print decode_json(<STDIN>)->{totals}{$ARGV[0]}' "$e"
}
folded_sum() { perl -ne '/ (\d+)$/ or die "bad line: $_"; $s += $1; END { print $s + 0 }' "$1"; }

augment() {   # SAMPLE: $tmp/SAMPLE.in (plain) and $tmp/SAMPLE.out (augmented)
	local n=$1 syms=() f
	zstd -q -dcf "$top/samples/$n"/callgrind.out.* >"$tmp/$n.in"
	for f in "$top/samples/$n"/perf-*.map "$top/samples/$n"/jit-*.dump "$top/samples/$n"/jit-*.dump.zst; do
		[ -e "$f" ] && syms+=("$f")
	done
	"$CGJIT" augment -q --no-elf -o "$tmp/$n.out" "$tmp/$n.in" "${syms[@]}"
}

check_svg() {   # SVG LABEL
	local svg=$1 r
	expect 'xmllint --noout "$svg" 2>"$tmp/xml.err"' "$2: well-formed XML"
	r=$(perl "$top/tests/e2e/check-flame.pl" "$svg")
	expect '[ $? = 0 ]' "$2: children within their parents ($r)"
}

check_self() {   # [check-flame-self.pl options] PROFILE FOLDED [SVG]: its "ok"/"not ok" lines
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"# "*) echo "$line" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$top/tests/e2e/check-flame-self.pl" "$@" 2>&1 || echo "not ok - check-flame-self.pl $* failed")
}

echo "# SVG and folded stacks on every augmented sample: each function at its self cost"
for dir in "$top"/samples/*/; do
	n=$(basename "$dir")
	[ -n "$(ls "$dir" | grep "^callgrind\.out\.")" ] || continue
	# no perf map or jitdump (raptorjit-traces: an auditlog, which augment does not read yet)
	ls "$dir" | grep -qE '^(perf-.*\.map|jit-.*\.dump(\.zst)?)$' || continue
	if ! augment "$n" 2>"$tmp/err"; then
		notok "$n: augment failed: $(cat "$tmp/err")"
		continue
	fi
	p=$tmp/$n.out
	"$CGJIT" flamegraph -o "$tmp/$n.svg" "$p" 2>"$tmp/err"
	expect '[ $? = 0 ] && [ ! -s "$tmp/err" ]' "$n: flamegraph -o $n.svg"
	check_svg "$tmp/$n.svg" "$n"
	"$CGJIT" flamegraph -f folded -o "$tmp/$n.folded" "$p"
	t=$(total_of "$p" Ir)
	s=$(folded_sum "$tmp/$n.folded")
	expect '[ -n "$t" ] && [ "$s" = "$t" ]' "$n: folded values add up to the Ir total ($s = $t)"
	expect '! grep -q "^\[other\]" "$tmp/$n.folded"' "$n: the root has no cost of its own ([other] absent)"
	check_self "$CGJIT" "$p" "$tmp/$n.folded" "$tmp/$n.svg"
done

echo "# --jit-only on every augmented sample: only JIT frames, each at its self cost"
for dir in "$top"/samples/*/; do
	n=$(basename "$dir")
	[ -e "$tmp/$n.out" ] || continue
	"$CGJIT" flamegraph --jit-only -o "$tmp/$n-jit.svg" "$tmp/$n.out" 2>"$tmp/err"
	expect '[ $? = 0 ] && [ ! -s "$tmp/err" ]' "$n: flamegraph --jit-only"
	check_svg "$tmp/$n-jit.svg" "$n --jit-only"
	"$CGJIT" flamegraph --jit-only -f folded -o "$tmp/$n-jit.folded" "$tmp/$n.out"
	check_self --jit-only "$CGJIT" "$tmp/$n.out" "$tmp/$n-jit.folded" "$tmp/$n-jit.svg"
done

echo "# --focus on the JIT function of the largest inclusive cost: its frames carry report --focus's costs"
for n in node-instr node-diff-base java-jvmti php-tracing moarvm-instr python-jitdump; do
	p=$tmp/$n.out
	IFS=$'\t' read -r name obj file < <("$CGJIT" report -f json -n 100000 "$p" | perl -MJSON::XS -e '
		local $/; my ($f) = grep { $_->{jit} } @{decode_json(<STDIN>)->{functions_by_inclusive}};
		print join("\t", $f->{name}, $f->{object} =~ s{.*/}{}r, $f->{file}) if $f')
	if [ -z "$name" ]; then
		notok "$n: no JIT function to focus on"
		continue
	fi
	fo=(--focus "name:$name" --focus-object "$obj" --focus-file "$file")
	"$CGJIT" flamegraph "${fo[@]}" -o "$tmp/$n-focus.svg" "$p" 2>"$tmp/err"
	expect '[ $? = 0 ]' "$n: flamegraph --focus '$name'"
	check_svg "$tmp/$n-focus.svg" "$n --focus"
	"$CGJIT" flamegraph "${fo[@]}" -f folded -o "$tmp/$n-focus.folded" "$p"
	expect 'perl -e '"'"'my $f = shift; $f =~ tr/;/:/; while (<>) { /^(.*) \d+$/ or exit 1; exit 1 if (split /;/, $1)[0] ne $f } exit !$.'"'"' "$name" "$tmp/$n-focus.folded"' \
		"$n --focus: every stack starts at the focus"
	check_self --focus "name:$name" --focus-object "$obj" --focus-file "$file" "$CGJIT" "$p" "$tmp/$n-focus.folded" "$tmp/$n-focus.svg"
done

echo "# JIT names and layout"
expect 'grep -q "<title>JS:[*~^]" "$tmp/node-instr.svg" && grep -q "<title>[^<]*Prog\.fib" "$tmp/java-instr.svg"' \
	"augmented names appear in the frames (JS:*... for node, Prog.fib for java)"
expect 'grep -q "^clone;start_thread;" "$tmp/java-instr.folded"' \
	"java: the threads' run starts at clone (its arc out far exceeds the calls in)"
"$CGJIT" flamegraph -f folded --min-width 0 -o "$tmp/all.folded" "$tmp/node-instr.out" 2>"$tmp/err"
s=$(folded_sum "$tmp/all.folded")
n_all=$(wc -l <"$tmp/all.folded")
n_def=$(wc -l <"$tmp/node-instr.folded")
expect '[ "$s" = "$(total_of "$tmp/node-instr.out" Ir)" ] && [ "$n_all" -gt "$n_def" ]' \
	"--min-width 0: more stacks ($n_all > $n_def), the same total"
expect '[ "$n_all" -le 200000 ] && grep -q "^cgjit: note: more than 200000 frames are at least 1 Ir wide (--min-width 0); frames narrower than [0-9]* Ir ([0-9.e-]*%) are drawn as \[elided\] (--max-frames raises the cap)$" "$tmp/err"' \
	"--min-width 0 on node-instr: within the default cap of 200000 frames ($n_all lines), and a note says so"
"$CGJIT" flamegraph -f folded --max-depth 3 "$tmp/node-instr.out" >"$tmp/d3.folded"
expect '[ "$(folded_sum "$tmp/d3.folded")" = "$(total_of "$tmp/node-instr.out" Ir)" ] && ! grep -q "^[^;]*;[^;]*;[^;]*;[^;]*;" "$tmp/d3.folded" && ! grep -v "^[^;]*;[^;]*;[^;]*;\[elided\] [0-9]*$" "$tmp/d3.folded" | grep -q "^[^;]*;[^;]*;[^;]*;"' \
	"--max-depth 3: at most three function frames per stack, then one [elided], the same total (stdout)"
check_self "$CGJIT" "$tmp/node-instr.out" "$tmp/d3.folded"
"$CGJIT" flamegraph -o "$tmp/again.svg" "$tmp/node-instr.out"
expect 'cmp -s "$tmp/again.svg" "$tmp/node-instr.svg"' "the same profile gives the same SVG"
"$CGJIT" flamegraph -o "$tmp/raw.svg" "$tmp/node-instr.in"
check_svg "$tmp/raw.svg" "node-instr not augmented"
"$CGJIT" flamegraph -o "$tmp/z.svg.zst" "$tmp/node-instr.out"
expect 'zstd -q -dc "$tmp/z.svg.zst" | cmp -s - "$tmp/node-instr.svg"' "-o FILE.zst: the same SVG, compressed"

echo "# parts, events, cachegrind"
"$CGJIT" flamegraph -f folded --part 2 "$tmp/moarvm-parts.out" >"$tmp/p2.folded"
expect '[ "$(folded_sum "$tmp/p2.folded")" = "$(total_of "$tmp/moarvm-parts.out" Ir --part 2)" ]' \
	"--part 2: folded values add up to part 2's total"
zstd -q -dcf "$top/samples/node-cachegrind/cachegrind.out.zst" >"$tmp/cg.out"
"$CGJIT" flamegraph -f folded --event D1mr "$tmp/cg.out" >"$tmp/cg.folded"
expect '[ "$(folded_sum "$tmp/cg.folded")" = "$(total_of "$tmp/cg.out" D1mr)" ] && ! grep -q ";" "$tmp/cg.folded"' \
	"cachegrind --event D1mr: no calls, so one frame per function; the D1mr total"
"$CGJIT" flamegraph --event D1mr -o "$tmp/cg.svg" "$tmp/cg.out"
check_svg "$tmp/cg.svg" "cachegrind SVG"
check_self --event D1mr "$CGJIT" "$tmp/cg.out" "$tmp/cg.folded" "$tmp/cg.svg"
check_self --part 2 "$CGJIT" "$tmp/moarvm-parts.out" "$tmp/p2.folded"

echo "# a lattice: 2^40 stacks from 160 arcs (tests/e2e/make-lattice.pl)"
perl "$top/tests/e2e/make-lattice.pl" 40 2 1000000 >"$tmp/lattice.cg"
"$CGJIT" flamegraph -f folded --min-width 0 -o "$tmp/lattice.folded" "$tmp/lattice.cg" 2>"$tmp/err"
rc=$?
lines=$(wc -l <"$tmp/lattice.folded")
expect '[ $rc = 0 ] && [ "$lines" -gt 1000 ] && [ "$lines" -le 200000 ] && [ "$(wc -c <"$tmp/lattice.folded")" -le $((200000 * 300)) ] && grep -q "^cgjit: note: more than 200000 frames" "$tmp/err"' \
	"--min-width 0: at most 200000 frames ($lines lines, 300 bytes each at most), and a note on stderr"
"$CGJIT" flamegraph --min-width 0 --max-frames 5000 -o "$tmp/lattice.svg" "$tmp/lattice.cg" 2>"$tmp/err"
r=$(perl "$top/tests/e2e/check-flame.pl" "$tmp/lattice.svg")
expect '[ $? = 0 ] && [ "${r%% frames*}" -le 5000 ] && [ "${r%% frames*}" -gt 2500 ] && grep -q "^cgjit: note: more than 5000 frames" "$tmp/err"' \
	"--max-frames 5000: an SVG of at most 5000 frames, more than half the cap used ($r)"
"$CGJIT" flamegraph -f folded --min-width 0 --max-frames 5000 -o "$tmp/lattice5k.folded" "$tmp/lattice.cg" 2>/dev/null
check_self "$CGJIT" "$tmp/lattice.cg" "$tmp/lattice5k.folded" "$tmp/lattice.svg"
"$CGJIT" flamegraph -f folded -o "$tmp/lattice-def.folded" "$tmp/lattice.cg" 2>"$tmp/err"
expect '[ ! -s "$tmp/err" ]' "the default --min-width stays within the cap: no note"

echo "# --diff: the slowed-down JIT function is red"
"$CGJIT" flamegraph --diff "$tmp/node-diff-base.out" -o "$tmp/diff.svg" "$tmp/node-diff-slow.out"
check_svg "$tmp/diff.svg" "diff SVG"
# checksum's frames: a title starting with its JIT name, its self change against the base
# positive, and a red fill (the red channel 50 above green and blue)
cat >"$tmp/diff-check.pl" <<'EOF'
local $/;
my $svg = <STDIN>;
my ($n, $red) = (0, 0);
while ($svg =~ m{<title>JS:.checksum [^<]*\nself [\d,]+ -> [\d,]+ \(\+[\d,]+[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"}g) {
	$n++;
	$red++ if $1 >= $2 + 50 && $1 >= $3 + 50;
}
print "$n frames, $red red\n";
exit !($n > 0 && $red > 0);
EOF
r=$(perl "$tmp/diff-check.pl" <"$tmp/diff.svg")
expect '[ $? = 0 ]' "--diff: checksum grew and is drawn red ($r)"
expect 'grep -q "Differential flame graph: node-diff-slow.out against node-diff-base.out" "$tmp/diff.svg"' "--diff: the heading names both profiles"
"$CGJIT" flamegraph --diff "$tmp/node-diff-slow.out" -o "$tmp/same.svg" "$tmp/node-diff-slow.out"
expect '! grep -q "fill=\"rgb(222,36,36)\"\|+[1-9]" "$tmp/same.svg"' "--diff of a profile with itself: no change, nothing red"

echo "# --diff under a focus: the self costs under it compared; --jit-only --diff"
"$CGJIT" flamegraph --focus 'glob:JS:*checksum *' --diff "$tmp/node-diff-base.out" -o "$tmp/fdiff.svg" "$tmp/node-diff-slow.out"
check_svg "$tmp/fdiff.svg" "diff SVG under a focus"
r=$(perl "$tmp/diff-check.pl" <"$tmp/fdiff.svg")
expect '[ $? = 0 ] && grep -q "under the focus glob JS:\*checksum \*: [0-9,]* of the profile.s 822,276,529 Ir" "$tmp/fdiff.svg"' \
	"--focus with --diff: checksum red under its own focus ($r), the SVG says what it is cut to"
"$CGJIT" flamegraph --jit-only --diff "$tmp/node-diff-base.out" -o "$tmp/jdiff.svg" "$tmp/node-diff-slow.out"
r=$(perl "$tmp/diff-check.pl" <"$tmp/jdiff.svg")
expect '[ $? = 0 ] && ! grep -q "<title>Builtins_" "$tmp/jdiff.svg"' "--jit-only with --diff: checksum red, no builtin drawn ($r)"

echo "# errors: exit status, message, no output file"
p=$tmp/node-instr.out
"$CGJIT" flamegraph -o "$tmp/x.svg" "$tmp/missing" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -e "$tmp/x.svg" ] && [ ! -s "$tmp/out" ] && grep -q "missing" "$tmp/err"' "missing profile: exit 1, message, no file"
head -c 100000 "$p" >"$tmp/cut"
echo keep >"$tmp/keep.svg"
"$CGJIT" flamegraph -o "$tmp/keep.svg" "$tmp/cut" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "cut:[0-9]*: " "$tmp/err" && [ "$(cat "$tmp/keep.svg")" = keep ] && [ ! -s "$tmp/out" ]' \
	"truncated profile: exit 1 with FILE:LINE, an existing -o file untouched"
"$CGJIT" flamegraph --diff "$tmp/cut" -o "$tmp/x.svg" "$p" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -e "$tmp/x.svg" ] && grep -q "cut:[0-9]*: " "$tmp/err"' "truncated --diff base: exit 1, no file"
expect '[ -z "$(ls -A "$tmp" | grep "^\.cgjit-tmp")" ]' "no temporary left behind"
"$CGJIT" flamegraph --format xml "$p" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "format takes svg or folded, got .xml." "$tmp/err"' "--format xml: exit 2"
"$CGJIT" flamegraph -f folded --diff "$p" "$p" >/dev/null 2>"$tmp/err"
expect '[ $? = 2 ] && grep -q "folded stacks have no colours" "$tmp/err"' "--diff with --format folded: exit 2"
for bad in "--min-width 101" "--min-width x" "--max-depth 0" "--part 0" "--max-frames 1" "--max-frames x"; do
	"$CGJIT" flamegraph $bad "$p" >/dev/null 2>"$tmp/err"
	expect '[ $? = 2 ]' "$bad: exit 2"
done
"$CGJIT" flamegraph >/dev/null 2>"$tmp/err"
expect '[ $? = 2 ] && grep -q "needs a PROFILE" "$tmp/err"' "no PROFILE: exit 2"
"$CGJIT" flamegraph --focus checksum -o "$tmp/x.svg" "$tmp/node-diff-base.out" 2>"$tmp/err"
expect '[ $? = 2 ] && [ ! -e "$tmp/x.svg" ] && grep -q "the focus name .checksum. matches no function; did you mean .JS:^checksum " "$tmp/err"' \
	"--focus naming nothing: exit 2, the closest names, no file"
"$CGJIT" flamegraph --focus 'glob:JS:*checksum *' --diff "$tmp/node-instr.out" -o "$tmp/x.svg" "$tmp/node-diff-slow.out" 2>"$tmp/err"
expect '[ $? = 2 ] && [ ! -e "$tmp/x.svg" ] && grep -q "node-instr.out: the focus glob" "$tmp/err"' \
	"--focus naming nothing in the --diff base: exit 2, says which file"
"$CGJIT" flamegraph --focus-file x.js "$p" >/dev/null 2>"$tmp/err"
expect '[ $? = 2 ] && grep -q "focus-file narrows --focus, which is not given" "$tmp/err"' "--focus-file without --focus: exit 2"
"$CGJIT" flamegraph --focus main "$tmp/cg.out" >/dev/null 2>"$tmp/err"
expect '[ $? = 2 ] && grep -q "a cachegrind file records no calls" "$tmp/err"' "--focus on a cachegrind file: exit 2"

"$CGJIT" flamegraph --event Dr -o "$tmp/x.svg" "$p" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -e "$tmp/x.svg" ] && grep -q "no event .Dr. (it counts: Ir)" "$tmp/err"' "--event the file does not count: exit 1"
"$CGJIT" flamegraph --event D1mr --diff "$p" -o "$tmp/x.svg" "$tmp/cg.out" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -e "$tmp/x.svg" ] && grep -q "no event .D1mr." "$tmp/err"' "--diff BASE without the event: exit 1"
cp "$p" "$tmp/self.out"
"$CGJIT" flamegraph -o "$tmp/self.out" "$tmp/self.out" 2>"$tmp/err"
expect '[ $? = 1 ] && cmp -s "$p" "$tmp/self.out"' "-o the profile itself: refused, profile intact"
"$CGJIT" flamegraph -o /dev/full "$p" 2>"$tmp/err"
expect '[ $? = 1 ] && grep -qi "space" "$tmp/err"' "a failed write (/dev/full): exit 1"

finish
