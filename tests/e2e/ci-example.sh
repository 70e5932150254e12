#!/bin/bash
# End-to-end test of the GitHub Actions job in docs/ci/github-actions.yml (shown in the
# README, "Use in CI"): its run steps, all but the install, are taken from the file and run
# in order with `bash -e` (the shell GitHub gives a step) in a scratch git repository whose
# pull request slows samples/src/diff.js's checksum down, as GitHub would run them:
# RUNNER_TEMP, GITHUB_STEP_SUMMARY, the BASE commit, cgjit on PATH. Real node under real
# valgrind. Checks each step's exit status (the budget step must fail with 3), the job
# summary, and that the README shows the file as it is.
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
	sed "s/^const SLOW = .*/const SLOW = false;/" "$top/samples/src/diff.js" >bench.js
	cp "$top/samples/src/diff-budget.yaml" perf-budget.yaml
	git add bench.js perf-budget.yaml && git commit -qm base
	sed -i "s/^const SLOW = false;/const SLOW = true;/" bench.js
	git commit -qam "slower checksum"
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
expect '[ $rc = 0 ] && grep -q "^## Profile diff (Ir)" "$tmp/summary.md" && grep -q "^| .*JS:.checksum .*bench.js.* \*\*JIT\*\*" "$tmp/summary.md"' \
	"step 'Report and diff': report and diff in the summary, checksum named as JIT code (exit $rc)"
run_step "Check the budget (exit 3 fails the job)"
rc=$?
expect '[ $rc = 3 ] && grep -q "^## Budget check: \*\*failed\*\*" "$tmp/summary.md" && grep -q "^| ❌ exceeded | .JS:\*checksum \*. (self, sum of [0-9]*) |" "$tmp/summary.md"' \
	"step 'Check the budget': exit 3, the slowed checksum exceeds its budget, the table in the summary (exit $rc)"

# the perf maps node wrote in /tmp for this test's runs: only those of the pids in its
# profiles (other runs may be writing maps in /tmp at the same time)
for pid in $(sed -n 's/^pid: *//p' "$tmp"/runner/profiles/*.out 2>/dev/null); do
	[ -O "/tmp/perf-$pid.map" ] && rm -f "/tmp/perf-$pid.map"
done
finish
