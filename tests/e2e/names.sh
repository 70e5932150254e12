#!/bin/bash
# End-to-end test of stable JIT names across checkouts (issue 22, item 2): one small node
# program recorded under valgrind by `cgjit record` from two directories, ci1 and ci2, as
# two CI checkouts would. V8's names carry the script's path; record makes them relative
# to the command's directory (augment --root), so `cgjit diff` matches every function:
# 0 only in one file, every JIT function matched, the total within 0.00%. Without a root
# the JIT functions are only in one file each (what main did); `diff --path-map` matches
# profiles augmented without a root the same way, and `check --baseline` and
# `flamegraph --diff` take it too. The JSON documents hold no temporary directory, and
# callgrind_annotate finds the relative source file from the checkout. (check-augment.pl
# checks augment --root on the stored node jitdump in run.sh.) Runs node with V8's deterministic flags and
# valgrind's --fair-sched=yes (without it, a spinning libuv thread made sched_yield appear
# in one run and not in the other); about half a minute.
# Prints "ok"/"not ok" per check and "N passed, N failed, N skipped" last.
. "$(dirname "$0")/harness.sh"

for tool in valgrind node callgrind_annotate; do
	if ! command -v "$tool" >/dev/null; then
		notok "$tool is needed (scripts/setup installs valgrind and nodejs)"
		finish
		exit
	fi
done

cleanup() {
	# record moves the dumps out of the checkouts; nothing of this test is left in /tmp
	[ -n "${CGJIT_TEST_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

# json FILE PERL-EXPR: evaluates EXPR with $d the decoded document of FILE
json() {
	perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); print eval($ARGV[0]) // ""' "$2" <"$1"
}

# A bubble sort compiled by TurboFan (JS:*bubbleSort), with Sparkplug and interpreter
# tiers before it; a few seconds under valgrind.
for d in ci1 ci2; do
	mkdir -p "$tmp/$d"
	cat >"$tmp/$d/bench.js" <<'EOF'
function makeArray(n) {
  const a = [];
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    a.push(x % 1000);
  }
  return a;
}

function bubbleSort(a) {
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j + 1 < a.length - i; j++)
      if (a[j] > a[j + 1]) {
        const t = a[j];
        a[j] = a[j + 1];
        a[j + 1] = t;
      }
  return a;
}

let sum = 0;
for (let k = 0; k < 40; k++)
  sum += bubbleSort(makeArray(120))[60];
console.log(sum);
EOF
	t0=$SECONDS
	(cd "$tmp/$d" && "$CGJIT" record -q --fair-sched=yes -- node --single-threaded --predictable \
		--hash-seed=1 --random-seed=1 bench.js >/dev/null 2>"$tmp/$d.err")
	echo "# record in $d: exit $? in $((SECONDS - t0))s"
done
pid1=$(ls "$tmp/ci1" | sed -n 's/^callgrind\.out\.\([0-9]*\)$/\1/p' | head -n 1)
pid2=$(ls "$tmp/ci2" | sed -n 's/^callgrind\.out\.\([0-9]*\)$/\1/p' | head -n 1)
a=ci1/callgrind.out.jit.$pid1
b=ci2/callgrind.out.jit.$pid2
cd "$tmp" || exit 1
expect '[ -s "$a" ] && [ -s "$b" ] && [ -s ci1/jit-$pid1.dump ]' \
	"record from ci1 and ci2: augmented profiles and the jitdumps beside them"

echo "# record: names relative to the command's directory"
# (a name or file is written where its id is first used: on a fn=, cfn=, fl=, cfi= ... line)
expect 'grep -Eq "^c?fn=\([0-9]+\) JS:\*bubbleSort bench.js:11:20$" "$a" &&
	grep -Eq "^(c?fl|fi|fe|cfi)=\([0-9]+\) bench.js$" "$a" &&
	! grep -E "^(c?fn|c?fl|fi|fe|cfi)=" "$a" "$b" | grep -qF "$tmp"' \
	"the JIT names and files are bench.js, bench.js:11:20 (no name or file holds the checkout's path)"
expect 'readelf -sW ci1/jit-$pid1.dump.elf | grep -q " JS:\*bubbleSort bench.js:11:20$" &&
	readelf --debug-dump=line ci1/jit-$pid1.dump.elf 2>/dev/null | grep -q "[[:space:]]bench.js$" &&
	! readelf -sW --debug-dump=line ci1/jit-$pid1.dump.elf 2>/dev/null | grep -qF "$tmp"' \
	"the ELF file of the JIT code: symbols and .debug_line files are relative too"

echo "# diff of the two record runs: every function matched"
"$CGJIT" diff -n 0 -f json "$a" "$b" >root.json
"$CGJIT" diff -n 5 "$a" "$b" >root.txt
rel=$(json root.json 'abs($d->{totals_change_rel}{Ir})')
only=$(json root.json 'join q(; ), map { "$_->{name} ($_->{status}, $_->{baseline_self}/$_->{self} Ir)" } grep { $_->{status} ne "both" } @{$d->{functions}}')
only_jit=$(json root.json 'scalar grep { $_->{status} ne "both" && $_->{jit} } @{$d->{functions}}')
# At node's exit a libuv thread may spin on an async handle that the main thread is still
# sending on (uv__async_close -> sched_yield): a race between node's threads that valgrind
# runs one at a time but wakes by the clock. It made libc's sched_yield (5 or 10 Ir) appear
# in one run and not the other in 10 of 20 pairs with --fair-sched=yes (also with node's
# --v8-pool-size=0 or --no-memory-reducer; 2 of 3 without), measured on the 2-core machine
# under load. It has no path in its name; it is allowed, alone.
other=$(json root.json 'scalar grep { $_->{status} ne "both" && !($_->{name} eq "sched_yield" && $_->{baseline_self} + $_->{self} <= 100) } @{$d->{functions}}')
expect '[ "$only_jit" = 0 ] && [ "$other" = 0 ]' \
	"diff: 0 functions only in new or only in base (JIT: $only_jit; others: ${only:-none})"
expect 'perl -e "exit !($rel < 0.00005)" && grep -q "^total .* [+-]0\.00%$" root.txt' \
	"diff: the total changed by $(json root.json '$d->{totals_change}{Ir}') Ir, 0.00% ($rel)"
# every JIT function of each run, by name, and the same set in both
jit_names() { "$CGJIT" report -n 1000000 -f json "$1" | perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>);
	print map { "$_->{name}\n" } grep { $_->{jit} } @{$d->{functions}}' | sort; }
jit_names "$a" >jit1
jit_names "$b" >jit2
expect '[ "$(wc -l <jit1)" -gt 5 ] && cmp -s jit1 jit2 && grep -qx "JS:\*bubbleSort bench.js:11:20" jit1' \
	"both runs have the same $(wc -l <jit1) JIT functions, every one matched by the diff"

echo "# without a root: the JIT functions only in one file each (what main did)"
for d in ci1 ci2; do
	p=$(ls $d/callgrind.out.[0-9]* | head -n 1)
	"$CGJIT" augment -q -o $d/noroot.out "$p" $d/jit-*.dump 2>>"$tmp/$d.err"
	# --root given by hand from elsewhere: what record did
	"$CGJIT" augment -q --root $d -o $d/root.out "$p" $d/jit-*.dump 2>>"$tmp/$d.err"
done
"$CGJIT" diff -n 0 -f json ci1/noroot.out ci2/noroot.out >noroot.json
n_added=$(json noroot.json '$d->{added}')
n_jit=$(json noroot.json 'scalar grep { $_->{jit} && $_->{status} ne "both" && $_->{name} =~ m{/ci[12]/bench\.js:} } @{$d->{functions}}')
expect '[ "$n_added" -gt 0 ] && [ "$n_jit" = $((2 * $(grep -c "bench\.js:" jit1))) ] &&
	"$CGJIT" diff ci1/noroot.out ci2/noroot.out | grep -q "JS:\*bubbleSort .*/ci1/bench.js:11:20 (only in base)"' \
	"augment without --root: every JIT function only in one file ($n_jit entries, JS:*bubbleSort $tmp/ci1/bench.js:11:20 only in base)"

echo "# augment --root by hand, diff --path-map: the same as record's"
"$CGJIT" diff -n 0 -f json ci1/root.out ci2/root.out >byhand.json
"$CGJIT" diff -n 0 -f json --path-map "$tmp/ci1=" --path-map "$tmp/ci2=" ci1/noroot.out ci2/noroot.out >pathmap.json
same_doc() { # the documents without the base and new paths
	[ "$(json "$1" 'delete @$d{qw(profile baseline)}; JSON::XS->new->canonical->encode($d)')" = \
	  "$(json "$2" 'delete @$d{qw(profile baseline)}; JSON::XS->new->canonical->encode($d)')" ]
}
expect 'same_doc root.json byhand.json' "augment --root ci1 (run elsewhere) gives the diff of record's default root"
expect 'same_doc root.json pathmap.json' \
	"diff --path-map $tmp/ci1= --path-map $tmp/ci2= on profiles augmented without a root: the same diff, 0 only in one"

echo "# check --baseline and flamegraph --diff take --path-map"
cat >budget.yaml <<'EOF'
functions:
  - glob: "JS:[*]bubbleSort *"
    soft: 5%
EOF
"$CGJIT" check -f json --budget budget.yaml --baseline ci1/noroot.out ci2/noroot.out >check-plain.json
"$CGJIT" check -f json --budget budget.yaml --baseline ci1/noroot.out --path-map "$tmp/ci1=" \
	--path-map "$tmp/ci2=" ci2/noroot.out >check-map.json
expect '[ "$(json check-plain.json "\$d->{results}[0]{verdict}")" = skipped ] &&
	[ "$(json check-map.json "\$d->{results}[0]{verdict}")" = held ] &&
	[ "$(json check-map.json "\$d->{results}[0]{function}{name}")" = "JS:*bubbleSort bench.js:11:20" ]' \
	"check --baseline: bubbleSort's soft limit is skipped without --path-map (not in the baseline), held with it"
"$CGJIT" flamegraph -o plain.svg --diff ci1/noroot.out ci2/noroot.out
"$CGJIT" flamegraph -o map.svg --diff ci1/noroot.out --path-map "$tmp/ci1=" --path-map "$tmp/ci2=" ci2/noroot.out
# frames of the script's functions that say "not in the base profile" (the title's line before
# that note names the function's object and file)
new_frames() { grep -B1 "^not in the base profile" "$1" | grep -c "bench\.js$"; }
expect '[ "$(new_frames plain.svg)" -gt 0 ] && [ "$(new_frames map.svg)" = 0 ] &&
	grep -q "JS:\*bubbleSort bench.js:11:20" map.svg' \
	"flamegraph --diff: no frame of bench.js 'not in the base profile' with --path-map ($(new_frames plain.svg) without)"

echo "# the documents hold no temporary directory"
"$CGJIT" report -n 1000 -f json "$a" >report.json
"$CGJIT" check -f json --budget budget.yaml --baseline "$a" "$b" >check.json
expect '! grep -qF "$tmp" report.json root.json check.json &&
	[ -z "$(json report.json "join q(,), grep { m{/} } map { \$_->{object} } @{\$d->{functions}}")" ] &&
	grep -q "\"object\" *: *\"jit-$pid1.dump.elf\"" report.json' \
	"report, diff and check JSON: objects by file name (jit-$pid1.dump.elf), files relative, no $tmp"

echo "# callgrind_annotate finds the relative source file"
expect '(cd ci1 && callgrind_annotate --auto=yes "callgrind.out.jit.$pid1") | grep -q "^-- Auto-annotated source: bench.js" &&
	callgrind_annotate --auto=yes --include=ci1 "$a" | grep -q "^-- Auto-annotated source: .*bench.js"' \
	"callgrind_annotate --auto=yes annotates bench.js from the checkout, and from elsewhere with --include=CHECKOUT"

finish
