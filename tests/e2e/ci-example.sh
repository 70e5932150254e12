#!/bin/bash
# End-to-end test of the GitHub Actions job in docs/ci/github-actions.yml (shown in the
# README, "Use in CI"): its run steps, all but the install, are taken from the file and run
# in order with `bash -e` (the shell GitHub gives a step) in a scratch git repository of
# docs/ci/bench.js and docs/ci/perf-budget.yaml whose pull request makes benchmark() 5%
# slower (ROUNDS 37 -> 39), as GitHub would run them: RUNNER_TEMP, GITHUB_STEP_SUMMARY, the
# BASE commit, cgjit on PATH. Real node under real valgrind. Checks each step's exit status
# (the budget step must fail with 3), the job summary, the flame graph, and that the README
# shows the file as it is; then issue 22's promises: the base commit recorded again from
# another checkout directory diffs to 0.00% with no function only in one run and holds the
# 1% budget, and report --focus puts benchmark() at 100%.
. "$(dirname "$0")/harness.sh"

yml=$top/docs/ci/github-actions.yml
expect 'perl -0ne '"'"'BEGIN { local $/; open my $f, "<", shift; $y = <$f> } exit !(index($_, join("", map { "    $_\n" } split /\n/, $y)) >= 0)'"'"' "$yml" "$top/README.md"' \
	"README shows docs/ci/github-actions.yml verbatim (indented as a code block)"

if ! command -v node >/dev/null || ! command -v valgrind >/dev/null; then
	notok "node and valgrind are needed to run the CI example (scripts/setup installs valgrind; node: nodejs)"
	finish
	exit
fi

# the steps: name, then the run block's lines without their indentation
perl -ne '
	if (/^      - (?:name: (.*)|uses:)/) { $name = $1 // "uses"; $in = 0; next }
	if (/^        run: \|$/) { $in = 1; print "#STEP $name\n"; next }
	if ($in) { if (/^          (.*)$/ || /^()$/) { print "$1\n" } else { $in = 0 } }
' "$yml" >"$tmp/steps"
nsteps=$(grep -c '^#STEP ' "$tmp/steps")
expect '[ "$nsteps" = 4 ]' "the job has 4 run steps ($nsteps)"

repo=$tmp/repo
mkdir -p "$repo" "$tmp/runner" "$tmp/bin"
ln -s "$CGJIT" "$tmp/bin/cgjit"
(
	cd "$repo" && git init -q && git config user.email t@example.org && git config user.name test
	cp "$top/docs/ci/bench.js" "$top/docs/ci/perf-budget.yaml" .
	git add bench.js perf-budget.yaml && git commit -qm base
	sed -i "s/^const ROUNDS = 37;/const ROUNDS = 39;/" bench.js
	git commit -qam "two more rounds: benchmark() 5% slower"
) || notok "making the scratch repository"
base=$(git -C "$repo" rev-parse HEAD~1)

run_step() {   # NAME
	perl -ne 'BEGIN { $want = shift } if (/^#STEP (.*)/) { $on = $1 eq $want; next } print if $on' "$1" "$tmp/steps" >"$tmp/step.sh"
	(cd "$repo" && env RUNNER_TEMP="$tmp/runner" GITHUB_STEP_SUMMARY="$tmp/summary.md" \
		GITHUB_PATH="$tmp/github_path" BASE="$base" PATH="$tmp/bin:$PATH" \
		bash -e "$tmp/step.sh" >"$tmp/step.out" 2>&1)
}

run_step "Profile the pull request and its base"
rc=$?
expect '[ $rc = 0 ] && [ -s "$tmp/runner/profiles/head.out" ] && [ -s "$tmp/runner/profiles/base.out" ] && [ "$(git -C "$repo" rev-parse HEAD)" != "$base" ]' \
	"step 'Profile': both profiles written, the checkout back on the pull request (exit $rc)"
[ $rc = 0 ] || tail -n 20 "$tmp/step.out"
expect '[ "$(grep -c "^cgjit: wrote $tmp/runner/profiles/\(head\|base\)\.out\.d/callgrind\.out\.jit\.[0-9]*: Ir " "$tmp/step.out")" = 2 ] && ls "$tmp"/runner/profiles/head.out.d/jit-*.dump.elf >/dev/null && [ -z "$(git -C "$repo" status --porcelain)" ]' \
	"step 'Profile': cgjit record's final line for each run, the dumps beside the profiles, the checkout left clean"
run_step "Report and diff to the job summary"
rc=$?
expect '[ $rc = 0 ] && grep -q "^## Profile diff (Ir)" "$tmp/summary.md" && grep -q "^| .*JS:.bubbleSort bench.js:8:20.* \*\*JIT\*\*" "$tmp/summary.md" && grep -q "JS:.benchmark" "$tmp/summary.md"' \
	"step 'Report and diff': report and diff of benchmark()'s subtree in the summary, bubbleSort named as JIT code (exit $rc)"
[ $rc = 0 ] || tail -n 20 "$tmp/step.out"
run_step "Check the budget (exit 3 fails the job)"
rc=$?
expect '[ $rc = 3 ] && grep -q "^## Budget check: \*\*failed\*\*" "$tmp/summary.md" && grep -q "^| ❌ exceeded | total under .JS:\*benchmark \*. | Ir | .* | +[45]\.[0-9]*% |" "$tmp/summary.md"' \
	"step 'Check the budget': exit 3, benchmark()'s cost exceeds the 1% budget by the pull request's 4-6%, the table in the summary (exit $rc)"

profiles=$tmp/runner/profiles
focus='glob:JS:*benchmark *'
json() { perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); print eval $ARGV[0]' "$2" <"$1"; }
"$CGJIT" report -f json --focus "$focus" "$profiles/head.out" >"$tmp/focus.json"
expect '[ "$(json "$tmp/focus.json" "join q(,), map { \$_->{name} . q( ) . \$_->{inclusive_share} } grep { \$_->{name} =~ /^JS:.benchmark / } @{\$d->{functions_by_inclusive}}")" = "JS:~benchmark bench.js:29:19 1" ]' \
	"report --focus: benchmark() at 100% of the costs under it"

# the flame graph shows the regression: the function cgjit diff ranks first (largest self
# change) is the widest of the frames whose function grew, by the cost its frames draw
"$CGJIT" diff -f json --focus "$focus" "$profiles/base.out" "$profiles/head.out" >"$tmp/diff.json"
first=$(json "$tmp/diff.json" '$d->{functions}[0]{name}')
widest=$(perl -e '
	local $/;
	my $svg = <STDIN>;
	my (@stack, %own, %grew);
	while ($svg =~ m{<g class="f" [^>]*data-v="(\d+)" data-d="(\d+)"><title>([^\n<]*)([^<]*)</title>}g) {
		my ($w, $d, $name, $rest) = ($1, $2, $3, $4);
		$#stack = $d - 1 if $d <= $#stack;
		$own{$stack[$d - 1]} -= $w if $d > 0 && @stack >= $d;
		push @stack, $name;
		$own{$name} += $w;
		$grew{$name} = 1 if $rest =~ /\nself [\d,]+ -> [\d,]+ \(\+[1-9]/;
	}
	my ($w) = sort { $own{$b} <=> $own{$a} } grep { $grew{$_} } keys %own;
	print $w;' <"$profiles/flame-diff.svg")
expect '[ -n "$first" ] && [ "$first" = "$widest" ]' \
	"flamegraph --diff: the function diff ranks first ($first) is the widest frame that grew ($widest)"

# the base commit again, from another checkout directory: the same numbers
git clone -q "$repo" "$tmp/repo2" && git -C "$tmp/repo2" checkout -q "$base"
(cd "$tmp/repo2" && PATH="$tmp/bin:$PATH" cgjit record -q -d "$profiles/again.d" -- node bench.js >/dev/null 2>&1)
cp "$profiles"/again.d/callgrind.out.jit.* "$profiles/again.out" 2>/dev/null
"$CGJIT" diff -f json "$profiles/base.out" "$profiles/again.out" >"$tmp/again.json"
rel=$(json "$tmp/again.json" 'abs($d->{totals_change_rel}{Ir})')
# libc's sched_yield (a few Ir) may run in one of two node runs and not the other: a race
# between node's threads at exit (tests/e2e/names.sh)
only=$(json "$tmp/again.json" 'scalar grep { $_->{status} ne "both" && $_->{name} ne "sched_yield" } @{$d->{functions}}')
# From another directory node's counts are not always the same: in 31 runs of this script
# (2026-11-27) the total changed by about 0.001% in 29 and by 0.0103% in 2, which an
# earlier bound of 0.005% failed (README, "Use in CI")
expect '[ -s "$profiles/again.out" ] && [ "$only" = 0 ] && perl -e "exit !($rel < 0.0005)"' \
	"the base commit recorded again from another directory: the diff is under 0.05% ($rel), no function only in one run ($only)"
"$CGJIT" check --budget "$repo/perf-budget.yaml" --baseline "$profiles/base.out" "$profiles/again.out" >"$tmp/again.check" 2>&1
rc=$?
expect '[ $rc = 0 ] && grep -q "^result    passed: 2 held" "$tmp/again.check"' \
	"the rerun holds the 1% budget against the base run (exit $rc)"

# CI_EXAMPLE_SUMMARY=FILE keeps the job summary (docs/ci/sample-summary.md is one)
[ -z "${CI_EXAMPLE_SUMMARY:-}" ] || cp "$tmp/summary.md" "$CI_EXAMPLE_SUMMARY"

# the perf maps node wrote in /tmp for this test's runs: only those of the pids in its
# profiles (other runs may be writing maps in /tmp at the same time)
for pid in $(sed -n 's/^pid: *//p' "$tmp"/runner/profiles/*.out 2>/dev/null); do
	[ -O "/tmp/perf-$pid.map" ] && rm -f "/tmp/perf-$pid.map"
done
finish
