#!/bin/bash
# End-to-end tests of `cgjit report`, `cgjit diff` and `cgjit check` on the stored samples:
# the numbers against callgrind_annotate and cg_annotate (tests/e2e/check-report.pl), before
# and after augment, also with --jit-only; --focus on JIT functions against
# callgrind_annotate and the file's arcs (tests/e2e/check-focus.pl); every format; a diff
# that must find a deliberate slowdown; budgets that hold and budgets the slowdown
# exceeds, with a focus and with names that match nothing; the warnings, notes and
# documents' keys (tests/e2e/check-schema.pl); the errors.
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"
# check-report.pl and check-focus.pl ask callgrind_annotate the same of each augmented
# sample: one answer each (tests/e2e/Annotate.pm), kept where `make` says (shared with the
# other scripts and with check-asan), else for this run
export CGJIT_ANNOTATE_CACHE="${CGJIT_ANNOTATE_CACHE:-$tmp/annotate}"

check_lines() {   # SCRIPT ARGS...: a checker's "ok", "not ok" and "skip" lines counted
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"skip - "*) skip "${line#skip - }" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$@" 2>/dev/null || echo "not ok - $* failed")
}
check_report() { check_lines "$top/tests/e2e/check-report.pl" "$CGJIT" "$2" "$1"; }   # NAME PLAIN-PROFILE

echo "# report = callgrind_annotate, before and after augment (every callgrind sample)"
for dir in "$top"/samples/*/; do
	n=$(basename "$dir")
	for p in "$dir"callgrind.out.*; do
		[ -e "$p" ] || continue
		zstd -q -dcf "$p" >"$tmp/$n.in"
		check_report "$n" "$tmp/$n.in"
		syms=()
		for f in "$dir"perf-*.map "$dir"jit-*.dump "$dir"jit-*.dump.zst; do
			[ -e "$f" ] && syms+=("$f")
		done
		# no perf map or jitdump (raptorjit-traces: an auditlog, which augment does not read yet)
		[ ${#syms[@]} -gt 0 ] || continue
		if "$CGJIT" augment -q --no-elf -o "$tmp/$n.out" "$tmp/$n.in" "${syms[@]}" 2>"$tmp/err"; then
			check_report "$n augmented" "$tmp/$n.out"
			check_lines "$top/tests/e2e/check-focus.pl" "$CGJIT" "$tmp/$n.out" "$n augmented"
		else
			notok "$n: augment failed: $(cat "$tmp/err")"
		fi
	done
done

echo "# Annotate.pm's one callgrind_annotate run per file, against its --inclusive=no and =yes"
# (all events, parts, fi= files, JIT names; and what no sample has: a callee with no fn=
# block, shown only in its callers' lists; a call of no cost, whose callee's inclusive cost
# is then 0; calls whose cfn= came under another fn= or fi= and a fl= after the last fn=,
# which the tree does not show as callgrind_annotate counts them)
printf 'events: Ir\nfl=a.c\nfn=main\n1 10\ncfn=leaf\ncalls=2 5\n1 30\ncfn=zero\ncalls=1 6\n1 0\nfn=other\n2 5\nfn=zero\n6 4\n' \
	>"$tmp/callee-only.cg"
printf 'events: Ir\nob=o\nfl=a.c\nfn=f\n1 5\ncfn=g\ncalls=1 0\n2 10\nfn=h\n1 7\ncalls=1 0\n3 20\nfn=g\n1 30\ntotals: 42\n' \
	>"$tmp/cfn-kept.cg"
printf 'events: Ir\nob=o\nfl=a.c\nfn=f\n1 5\ncfn=g\ncalls=1 0\n2 10\nfi=b.c\ncalls=1 0\n3 20\nfe=a.c\nfn=g\n1 30\n' \
	>"$tmp/cfn-kept-fi.cg"
printf 'events: Ir\nfl=a.c\nfn=g\n1 7\nfn=f\n1 3\ncfn=g\ncalls=1 0\n2 7\nfl=b.c\n' >"$tmp/fl-last.cg"
check_lines "$top/tests/e2e/check-annotate-table.pl" "$top/tests/jitprog/profiles/cachesim/callgrind.out.6914" \
	"$tmp/moarvm-parts.out" "$tmp/python-jitdump.out" "$tmp/callee-only.cg" "$tmp/cfn-kept.cg" \
	"$tmp/cfn-kept-fi.cg" "$tmp/fl-last.cg"

echo "# formats"
p=$tmp/node-jitdump.out
"$CGJIT" report -f json -n 5 "$p" >"$tmp/r.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(\$d->{schema} eq q(cgjit.report/2) && @{\$d->{functions}} == 5 && \$d->{kinds}{jit}{functions} > 0)" <"$tmp/r.json"' \
	"report --format json: cgjit.report/2, 5 functions per list, JIT functions counted"
"$CGJIT" report -f yaml -n 5 "$p" >"$tmp/r.yaml"
expect 'grep -q "^schema: cgjit.report/2$" "$tmp/r.yaml" && grep -q "^functions:" "$tmp/r.yaml" && [ "$(grep -c "^- name:" "$tmp/r.yaml")" = 10 ]' \
	"report --format yaml: the same document (10 entries in two lists)"
"$CGJIT" report -f markdown -n 5 "$p" >"$tmp/r.md"
expect 'grep -q "^| self | % | inclusive | % | calls | function | object | file |$" "$tmp/r.md" && grep -q "\*\*JIT\*\*" "$tmp/r.md"' \
	"report --format markdown: GitHub tables, JIT functions marked"
jit_top=$(perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); for (@{$d->{functions}}) { if ($_->{jit}) { print $_->{name}; last } }' <"$tmp/r.json")
"$CGJIT" report -n 5 "$p" >"$tmp/r.txt"
expect '[ -n "$jit_top" ] && grep -qF "JIT $jit_top" "$tmp/r.txt"' "report text: the top JIT function ('$jit_top') is marked"
"$CGJIT" report -n 3 "$tmp/node-jitdump.in" >"$tmp/raw.txt"
expect 'grep -q "run cgjit augment to name JIT code" "$tmp/raw.txt"' \
	"report on a profile not augmented: the share of unnamed JIT code hints at augment"
"$CGJIT" report -n 3 "$tmp/python-jitdump.out" >"$tmp/py.txt"
expect 'grep -q "^note      JIT functions carry only 0.05% of Ir as self cost, but py::fib:.* is 84.18% inclusive: CPython.s JIT code is trampolines" "$tmp/py.txt" && ! grep -q "^note" "$tmp/r.txt"' \
	"report of CPython 3.13 (JIT 0.05%): a note that its trampolines carry inclusive cost only; none for node"
"$CGJIT" report -n 3 --event Ir --part 2 "$tmp/moarvm-parts.in" >"$tmp/part.txt"
expect 'grep -q "3 parts (one read: --part)" "$tmp/part.txt"' "report --part 2 of 3"

echo "# cachegrind: self cost only, equal to cg_annotate"
zstd -q -dcf "$top/samples/node-cachegrind/cachegrind.out.zst" >"$tmp/cg.out"
"$CGJIT" report -f json -n 10 "$tmp/cg.out" >"$tmp/cg.json"
(cd "$tmp" && cg_annotate --show=Ir cg.out 2>/dev/null) >"$tmp/cg.ann"
cat >"$tmp/cg-check.pl" <<'EOF'
use JSON::XS;
local $/;
open(my $j, "<", $ARGV[0]) or die;
my $d = decode_json(<$j>);
open(my $a, "<", $ARGV[1]) or die;
my %c;
for (split /\n/, <$a>) {
	$c{$2} += $1 =~ tr/,//dr if /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$/;
}
exit 1 if $d->{inclusive} || @{$d->{functions}} != 10;
for (@{$d->{functions}}) {
	exit 1 unless ($c{"$_->{file}:$_->{name}"} // -1) == $_->{self};
}
exit 0;
EOF
expect 'perl "$tmp/cg-check.pl" "$tmp/cg.json" "$tmp/cg.ann"' \
	"cachegrind: no inclusive cost, the top 10 self costs equal cg_annotate's"
"$CGJIT" report "$tmp/cg.out" >"$tmp/cg.txt"
expect 'grep -q "inclusive cost does not exist there" "$tmp/cg.txt"' "cachegrind: the text says there is no inclusive cost"

echo "# valgrind's own cg_annotate test inputs (tests/valgrind): every function's self cost as cg_annotate's"
cat >"$tmp/cg-all.pl" <<'EOF'
use JSON::XS;
local $/;
open(my $j, "<", $ARGV[0]) or die;
my $d = decode_json(<$j>);
open(my $a, "<", $ARGV[1]) or die;
my (%c, $total);
for (split /\n/, <$a>) {
	$total = $1 =~ tr/,//dr if /^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/;
	$c{$2} += $1 =~ tr/,//dr if /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$/ && $2 ne 'PROGRAM TOTALS';
}
my $ev = $d->{event};
my $t = ref $d->{totals} eq 'HASH' ? $d->{totals}{$ev} : $d->{totals}[0];
my %g = map { ("$_->{file}:$_->{name}" => (ref $_->{self} ? $_->{self}[0] : $_->{self})) } @{$d->{functions}};
delete $g{$_} for grep { !$g{$_} } keys %g;
my @bad = grep { ($g{$_} // -1) != $c{$_} } keys %c;
push @bad, grep { !exists $c{$_} } keys %g;
print "total $t vs $total; differ: @bad[0 .. ($#bad > 2 ? 2 : $#bad)]\n" if @bad || $total != $t;
exit(@bad || !%c || $total != $t ? 1 : 0);
EOF
for f in "$top"/tests/valgrind/*.cgout; do
	b=$(basename "$f")
	[ "$b" = ann2.cgout ] && continue
	ev=$(sed -n 's/^events: *\([^ ]*\).*/\1/p' "$f")
	"$CGJIT" report -f json -n 1000000 "$f" >"$tmp/v.json" 2>"$tmp/err"
	(cd "$(dirname "$f")" && cg_annotate --show="$ev" --threshold=0 "$b" 2>/dev/null) >"$tmp/v.ann"
	expect 'perl "$tmp/cg-all.pl" "$tmp/v.json" "$tmp/v.ann" >"$tmp/err" 2>&1' \
		"tests/valgrind/$b: every function's self cost ($ev) and the total equal cg_annotate's $(head -c 200 "$tmp/err")"
done
# ann2.cgout: implicit zeros, blanks, <unspecified> and cg_diff's negative counts; Debian's
# cg_annotate (3.19) cannot read it, so the figures are those of ann2.post.exp, what valgrind's
# newer cg_annotate prints for it (functions above its 0.5% threshold, by |cost|)
cat >"$tmp/ann2.pl" <<'EOF'
use JSON::XS;
local $/;
open(my $j, "<", $ARGV[0]) or die;
my $d = decode_json(<$j>);
open(my $e, "<", $ARGV[1]) or die;
my @l = split /\n/, <$e>;
my ($in, %want, $multi, $total) = (0);
for (@l) {
	$total = $1 =~ tr/,//dr if /^\s*(-?[\d,]+) \(100\.0%\)\s.*PROGRAM TOTALS/;
	$in = 1 if /^-- Function:file summary/;
	last if $in && /^-- Annotated source/;
	next unless $in;
	if (/^>\s+(-?[\d,]+) .*\s(\S+):(\S*)$/) {
		my ($v, $fn, $file) = ($1 =~ tr/,//dr, $2, $3);
		if ($file eq '') { $multi = $fn; } else { $multi = undef; $want{"$file:$fn"} = $v; }
	} elsif (defined $multi && /^\s+(-?[\d,]+) .*\s(\S+)$/) {
		$want{"$2:$multi"} = $1 =~ tr/,//dr;
	}
}
my %got = map { ("$_->{file}:$_->{name}" => $_->{self}) } @{$d->{functions}};
my @bad = grep { ($got{$_} // 'none') ne $want{$_} } sort keys %want;
print scalar(keys %want), " functions; total $d->{totals}{A} vs $total; differ: @bad\n";
exit(@bad || keys(%want) < 10 || $total != $d->{totals}{A} || $d->{functions}[0]{name} ne 'neg3' ? 1 : 0);
EOF
"$CGJIT" report -f json -n 1000 "$top/tests/valgrind/ann2.cgout" >"$tmp/v.json" 2>"$tmp/err"
expect 'perl "$tmp/ann2.pl" "$tmp/v.json" "$top/tests/valgrind/ann2.post.exp" >"$tmp/err" 2>&1' \
	"tests/valgrind/ann2.cgout: every function's self cost (A) as valgrind's ann2.post.exp gives it, negative ones too, the largest either way first: $(cat "$tmp/err")"
"$CGJIT" report "$top/tests/valgrind/ann2.cgout" >"$tmp/v.txt" 2>"$tmp/err"
expect 'grep -qE "^ +-1,000,000 -1000.00%  neg3  \[ann2-negatives.rs\]$" "$tmp/v.txt" && grep -q "^note .*negative counts (cg_diff" "$tmp/v.txt"' \
	"tests/valgrind/ann2.cgout in text: signed costs and shares, and a note saying why"
"$CGJIT" flamegraph -o "$tmp/v.svg" "$top/tests/valgrind/ann2.cgout" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -e "$tmp/v.svg" ] && grep -q "negative counts (cg_diff.s output" "$tmp/err"' \
	"tests/valgrind/ann2.cgout: flamegraph refuses negative widths, with the reason and no output"

echo "# diff: a deliberate slowdown of one JIT function comes out on top"
for n in node-diff-base node-diff-slow; do
	"$CGJIT" augment -q --no-elf -o "$tmp/$n.out" "$top/samples/$n"/callgrind.out.* "$top/samples/$n"/perf-*.map
done
"$CGJIT" diff -f json "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/d.json"
# checksum runs as V8 baseline code (JS:^), which calls builtins for its loads and
# arithmetic: their self cost grows with it. So checksum is the JIT function with the
# largest self change and among the five largest overall, and the first JIT entry.
cat >"$tmp/diff-check.pl" <<'EOF'
use JSON::XS;
local $/;
my $d = decode_json(<STDIN>);
my @c = @{$d->{functions}};
my ($first_jit) = grep { $_->{jit} } @c;
my ($rank) = grep { $c[$_]{name} =~ /^JS:.checksum / } 0 .. $#c;
exit !($first_jit->{name} =~ /^JS:.checksum / && $first_jit->{status} eq "both"
       && $first_jit->{self_change} > 0 && defined $rank && $rank < 5 && $d->{totals_change}{Ir} > 0);
EOF
expect 'perl "$tmp/diff-check.pl" <"$tmp/d.json"' \
	"diff: checksum (JIT, matched across runs: the pid in the map's name is ignored) is the first JIT function and in the top 5"
"$CGJIT" diff -f json "$tmp/node-diff-base.out" "$tmp/node-diff-base.out" >"$tmp/same.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(@{\$d->{functions}} == 0 && \$d->{changed} == 0 && \$d->{totals_change}{Ir} == 0)" <"$tmp/same.json"' \
	"diff of a profile with itself: no change"
n_all=$("$CGJIT" diff -n 0 -f json "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" | perl -MJSON::XS -e 'local $/; print scalar @{decode_json(<STDIN>)->{functions}}')
n_th=$("$CGJIT" diff -n 0 -t 1 -f json "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" | perl -MJSON::XS -e 'local $/; print scalar @{decode_json(<STDIN>)->{functions}}')
expect '[ "$n_th" -ge 1 ] && [ "$n_th" -lt $((n_all / 10)) ] && [ "$n_all" -gt 1000 ]' "diff --threshold 1: $n_th of $n_all changes shown"
echo "# diff and check --baseline of two different programs: a warning (their cmd: lines differ)"
"$CGJIT" diff -n 1 "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/w.txt" 2>"$tmp/w.err"
expect '! grep -q warning "$tmp/w.txt" "$tmp/w.err"' "diff of the same program run twice (SLOW=1 is in the environment): no warning"
"$CGJIT" diff -n 1 "$tmp/node-diff-base.out" "$tmp/node-instr.out" >"$tmp/w.txt" 2>"$tmp/w.err"
expect '[ $? = 0 ] && grep -qF "warning   the profiles ran different commands: the baseline '"'"'node --perf-basic-prof diff.js'"'"', this one '"'"'node --perf-basic-prof prog.js'"'"'" "$tmp/w.txt" && [ ! -s "$tmp/w.err" ]' \
	"diff of diff.js against prog.js: the text says they ran different commands, and which"
"$CGJIT" diff -n 1 -f json "$tmp/node-diff-base.out" "$tmp/node-instr.out" >"$tmp/w.json" 2>"$tmp/w.err"
expect 'grep -q "^cgjit: warning: the profiles ran different commands" "$tmp/w.err" && perl -MJSON::XS -e "local \$/; exit !(decode_json(<STDIN>)->{warnings}[0] =~ /different commands/)" <"$tmp/w.json"' \
	"diff --format json: the warning in \"warnings\" and on stderr"
"$CGJIT" diff -n 1 -f markdown "$tmp/node-diff-base.out" "$tmp/node-instr.out" >"$tmp/w.md" 2>/dev/null
expect 'grep -q "^> \*\*Warning:\*\* the profiles ran different commands" "$tmp/w.md"' "diff --format markdown: the warning as a quoted paragraph"
"$CGJIT" check -b "$top/samples/src/diff-budget.yaml" -B "$tmp/node-instr.out" "$tmp/node-diff-base.out" >"$tmp/w.txt" 2>/dev/null
expect 'grep -q "^warning   the profiles ran different commands" "$tmp/w.txt"' "check --baseline of another program: the same warning"
"$CGJIT" diff -f markdown "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/d.md"
expect 'grep -q "^| self change | % | self new | incl. change | % | function | object | file |$" "$tmp/d.md"' "diff --format markdown"
"$CGJIT" diff -f json "$tmp/node-diff-base.out" "$tmp/cg.out" >"$tmp/ev.json" 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && grep -q "\"event\": \"Ir\"" "$tmp/ev.json"' \
	"diff of an Ir-only base against a profile with cache events: compares the base's first event, Ir (exit $rc)"
printf 'events: Dr\nfl=a.c\nfn=f\n1 5\ntotals: 5\n' >"$tmp/dr.cg"
"$CGJIT" diff "$tmp/node-diff-base.out" "$tmp/dr.cg" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "dr.cg: no event .Ir. (it counts .Dr.): the base.s first event; pick one both count with --event" "$tmp/err"' \
	"diff against a profile without the base's first event: refused, says which (exit $rc)"
"$CGJIT" diff --event Ir "$tmp/node-diff-base.out" "$tmp/cg.out" >/dev/null 2>&1
expect '[ $? = 0 ]' "diff --event Ir picks an event both count"

echo "# check: budgets on the diff samples (samples/src/diff-budget.yaml)"
budget=$top/samples/src/diff-budget.yaml
"$CGJIT" check -b "$budget" "$tmp/node-diff-base.out" >"$tmp/c.txt" 2>"$tmp/err"
rc=$?
expect '[ $rc = 0 ] && grep -q "^result    passed: 2 held, 0 exceeded, 0 missing, 1 skipped" "$tmp/c.txt"' \
	"check of the base run: exit 0, hard limits held, the soft-only limit skipped without --baseline (exit $rc)"
"$CGJIT" check -b "$budget" -B "$tmp/node-diff-base.out" -f json "$tmp/node-diff-slow.out" >"$tmp/c.json" 2>"$tmp/err"
rc=$?
cat >"$tmp/check-check.pl" <<'EOF'
use JSON::XS;
local $/;
my $d = decode_json(<STDIN>);
my @r = @{$d->{results}};
# total: over both limits; checksum (all tiers): over both; fill: within 10% of the base
exit !($d->{schema} eq "cgjit.check/2" && !$d->{passed} && @r == 3
       && $r[0]{limit} eq "total" && "@{$r[0]{exceeded}}" eq "hard soft"
       && $r[1]{pattern} eq "JS:*checksum *" && "@{$r[1]{exceeded}}" eq "hard soft"
       && $r[1]{verdict} eq "exceeded" && $r[1]{value} > 3 * $r[1]{baseline_value}
       && $r[2]{pattern} eq "JS:*fill *" && $r[2]{verdict} eq "held" && $r[2]{baseline_value} > 0);
EOF
expect '[ $rc = 3 ] && perl "$tmp/check-check.pl" <"$tmp/c.json"' \
	"check of the slowed run against the base run: exit 3, total and checksum exceeded, fill held (exit $rc)"
"$CGJIT" check -b "$budget" -B "$tmp/node-diff-base.out" "$tmp/node-diff-base.out" >/dev/null 2>&1
expect '[ $? = 0 ]' "check of a run against itself: every limit holds"
"$CGJIT" check -b "$budget" -B "$tmp/node-diff-base.out" -f markdown "$tmp/node-diff-slow.out" >"$tmp/c.md" 2>/dev/null
expect 'grep -q "^## Budget check: \*\*failed\*\*" "$tmp/c.md" && grep -q "^| ❌ exceeded | total | Ir |" "$tmp/c.md" && grep -q "^| ✅ held | .JS:\*fill \*. (self, sum of 1) |" "$tmp/c.md"' \
	"check --format markdown"
"$CGJIT" check -b "$budget" -f yaml "$tmp/node-diff-base.out" >"$tmp/c.yaml" 2>/dev/null
expect 'grep -q "^schema: cgjit.check/2" "$tmp/c.yaml" && grep -q "^passed: true" "$tmp/c.yaml"' "check --format yaml"
printf 'event: Ir\ntotal:\n  hard: 12 M\n' >"$tmp/bad.yaml"
"$CGJIT" check -b "$tmp/bad.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "bad.yaml:3:9: .hard. takes a cost" "$tmp/err"' \
	"check with a bad budget file: exit 2, line and column, no output (exit $rc)"
printf 'total:\n  event: Dr\n  hard: 1\n' >"$tmp/bad.yaml"
"$CGJIT" check -b "$tmp/bad.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "bad.yaml:2:10: event .Dr. is not in .*node-diff-base.out (it counts .Ir.)" "$tmp/err"' \
	"check with a budget on an event the profile lacks: exit 2, points at the event (exit $rc)"
"$CGJIT" check -b "$budget" "$tmp/missing" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "missing" "$tmp/err"' "check of a missing profile: exit 1 (exit $rc)"
"$CGJIT" check -b "$budget" -B "$tmp/missing-base" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "missing-base" "$tmp/err"' "check with a missing baseline: exit 1 (exit $rc)"
"$CGJIT" check -b "$tmp/node-diff-base.out" "$budget" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "node-diff-base.out: this is a callgrind profile, not a budget file: cgjit check PROFILE --budget BUDGET.yaml" "$tmp/err"' \
	"check with the profile and the budget swapped: says so, exit 2 (exit $rc)"
"$CGJIT" check "$tmp/node-diff-base.out" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && grep -q "check needs a budget file: --budget FILE" "$tmp/err"' "check without --budget: exit 2 (exit $rc)"

echo "# check: budget files refused before the profile is read (exit 2, FILE:LINE:COLUMN, no output)"
refused() {   # BUDGET-TEXT MESSAGE-REGEX WHAT
	local text=$1 want=$2 what=$3
	printf '%s' "$text" >"$tmp/hostile.yaml"
	"$CGJIT" check -b "$tmp/hostile.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "^cgjit: $tmp/hostile.yaml:$want" "$tmp/err"' "$what (exit $rc)"
}
refused $'total:\n  hard: 1_\n' "2:9: 'hard' takes a cost" "hard: 1_ (a '_' not between two digits)"
refused $'total:\n  soft: 0x10\n' "2:9: 'soft' takes a change in percent" "soft: 0x10 (percentages are decimal; strtod read 16)"
refused $'total: {soft: " 5"}\n' "1:15: 'soft' takes a change in percent" "soft: \" 5\" (no spaces)"
refused $'total:\n  soft: 100000000000000000000%\n' "2:9: 'soft' takes a change in percent above -100 and at most 1000000" \
	"soft: 1e20 % (past 2^64 %, the limit was converted out of range and printed as 0)"
# libyaml's scanner is quadratic in the flow depth: 1 MiB of '[' took about 20 minutes
head -c 1048000 /dev/zero | tr '\0' '[' >"$tmp/deep.yaml"
"$CGJIT" check -b "$tmp/deep.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "^cgjit: $tmp/deep.yaml:1:33: nested deeper than 32 levels of lists and mappings: not a budget file$" "$tmp/err"' \
	"a generated budget of 1048000 '[': refused at the 33rd, exit 2 (exit $rc)"
{ printf 'total: {hard: 1G}  # '; head -c 1000000 /dev/zero | tr '\0' '['; printf '\nfunctions: [{name: "['; head -c 1000 /dev/zero | tr '\0' '{'; printf '", hard: 1, required: false}]\n'; } >"$tmp/text.yaml"
"$CGJIT" check -b "$tmp/text.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -q "^result    passed: 1 held, 0 exceeded, 0 missing, 1 skipped" "$tmp/out"' \
	"brackets in a comment and in a quoted name are text, not nesting: the budget is read"
refused "$(for i in $(seq 0 64); do printf -- '- &a%d 1\n' "$i"; done)" "65:3: more than 64 anchors" \
	"65 anchors (libyaml's loader compares each with every earlier one)"
refused $'total: {hard: 1G}\n---\ntotal: {hard: 1}\n' "2:1: a budget file is one YAML document, and a second one starts here" \
	"a second YAML document (its limits were ignored, and the check passed)"
refused $'total: {hard: 1G}\n--- [\n' "2:1: a budget file is one YAML document" "a second YAML document that is not valid YAML"
"$CGJIT" check -b <(printf 'total: {soft: 1000000}\n') -B "$tmp/node-diff-base.out" -f json "$tmp/node-diff-slow.out" >"$tmp/c.json" 2>"$tmp/err"
rc=$?
soft_limit=$(perl -MJSON::XS -e 'local $/; print decode_json(<STDIN>)->{results}[0]{soft_limit}' <"$tmp/c.json")
expect '[ $rc = 0 ] && [ "$soft_limit" = $((653829435 * 10001)) ]' "soft: 1000000, the largest: 10001 times the baseline, held (exit $rc)"

echo "# recursion copies f'2: folded into f by every command, kept apart by --no-fold"
printf "# callgrind format\nversion: 1\npositions: line\nevents: Ir\nfl=a.c\nfn=main\n1 1\ncfn=f\ncalls=1 1\n1 30\nfn=f\n1 10\ncfn=f'2\ncalls=1 1\n1 20\nfn=f'2\n1 20\ntotals: 31\n" >"$tmp/rec.cg"
self_of() {   # NAME REPORT-OPTIONS...: NAME's self cost in `cgjit report --format json`
	local name=$1
	shift
	"$CGJIT" report -f json "$@" "$tmp/rec.cg" | perl -MJSON::XS -e 'local $/; my ($f) = grep { $_->{name} eq $ARGV[0] } @{decode_json(<STDIN>)->{functions}}; print $f ? $f->{self} : "none"' "$name"
}
"$CGJIT" flamegraph -f folded --min-width 0 "$tmp/rec.cg" >"$tmp/rec.folded"
printf 'functions:\n  - name: f\n    hard: 29\n' >"$tmp/rec.yaml"
"$CGJIT" check -f json -b "$tmp/rec.yaml" "$tmp/rec.cg" >"$tmp/rec.json"
check_value=$(perl -MJSON::XS -e 'local $/; print decode_json(<STDIN>)->{results}[0]{value}' <"$tmp/rec.json")
expect '[ "$(self_of f)" = 30 ] && [ "$(self_of "f'"'"'2")" = none ] && [ "$(self_of f --fold-recursion)" = 30 ] && [ "$check_value" = 30 ] && grep -qx "main;f 30" "$tmp/rec.folded"' \
	"report, check and flamegraph fold f'2 into f by default: self 30 in each"
expect '[ "$(self_of f --no-fold)" = 10 ] && [ "$(self_of "f'"'"'2" --no-fold)" = 20 ]' "report --no-fold keeps f (10) and f'2 (20) apart"

echo "# names that are not UTF-8 (callgrind names are bytes; JSON strings are UTF-8)"
printf 'version: 1\ncreator: x\npositions: line\nevents: I\377r\nfl=a.c\nfn=f\377\376oo\n1 10\nfn=main\n2 5\ncfn=f\377\376oo\ncalls=1 1\n3 10\ntotals: 15\n' >"$tmp/utf8.cg"
"$CGJIT" report -f json "$tmp/utf8.cg" >"$tmp/u.json" 2>"$tmp/err"
expect 'grep -qF "\"name\": \"f\\\\xff\\\\xfeoo\"" "$tmp/u.json" && grep -qF "\"I\\\\xffr\": 15" "$tmp/u.json"' \
	"report --format json: bytes that are not UTF-8 in names and events written as \\xNN, not dropped"
"$CGJIT" diff -f json "$tmp/utf8.cg" "$tmp/utf8.cg" >"$tmp/u.json" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -qF "\"event\": \"I\\\\xffr\"" "$tmp/u.json"' "diff --format json of such a file"

echo "# --focus, --jit-only: the benchmark's function at 100%, diffed, budgeted"
"$CGJIT" report -n 3 --focus checksum "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -qF "node-diff-base.out: the focus name '"'"'checksum'"'"' matches no function; did you mean '"'"'JS:^checksum /tmp/cgjit-sample.diff/diff.js:7:18'"'"'" "$tmp/err"' \
	"report --focus checksum (not V8's name): exit 2, did you mean JS:^checksum (exit $rc)"
for n in node-diff-base node-diff-slow; do
	"$CGJIT" report -f json -n 3 --focus 'glob:JS:*checksum *' "$tmp/$n.out" >"$tmp/$n-focus.json"
done
cat >"$tmp/focus-check.pl" <<'EOF'
use JSON::XS;
my ($b, $s) = map { open(my $h, "<", $_) or die; local $/; decode_json(<$h>) } @ARGV;
my ($fb, $fs) = map { $_->{scope}{focus} } $b, $s;
# the slowed checksum does three times the work: its focus at least 3 times the base's
exit !($fb && $fs && $s->{totals}{Ir} > 3 * $b->{totals}{Ir} && $fb->{profile_totals}{Ir} == 653829435
       && (grep { $_->{name} =~ /^JS:.checksum / } @{$s->{functions_by_inclusive}}) && $fs->{calls} > 0
       && $s->{notes}[0] =~ /^costs under a focus are estimated from call arcs/);
EOF
expect 'perl "$tmp/focus-check.pl" "$tmp/node-diff-base-focus.json" "$tmp/node-diff-slow-focus.json"' \
	"report --focus 'glob:JS:*checksum *' on the diff samples: the slowed run's focus 3 times the base's, the profile's total kept, the estimate said"
"$CGJIT" diff -f json -n 5 --focus 'glob:JS:*checksum *' "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/s-diff-focus.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(\$d->{totals_change_rel}{Ir} > 2 && \$d->{scope}{focus}{pattern} eq q(JS:*checksum *))" <"$tmp/s-diff-focus.json"' \
	"diff --focus: the cost under checksum more than tripled"
"$CGJIT" diff -f json -n 0 --jit-only "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/s-diff-jit.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); my @f = @{\$d->{functions}}; exit !(@f && !grep { !\$_->{jit} } @f)" <"$tmp/s-diff-jit.json"' \
	"diff --jit-only: only JIT functions compared"
"$CGJIT" report -f json -n 5 --jit-only "$tmp/node-diff-base.out" >"$tmp/s-report-jit.json"
printf 'focus: {glob: "JS:*checksum *"}\ntotal: {hard: 60M, soft: 10%%}\nfunctions:\n  - {glob: "Builtins_*", sum: true, soft: 10%%}\n  - {name: checksum, hard: 1M}\n' >"$tmp/focus.yaml"
"$CGJIT" check -b "$tmp/focus.yaml" -B "$tmp/node-diff-base.out" "$tmp/node-diff-base.out" >"$tmp/c.txt"
rc=$?
expect '[ $rc = 3 ] && grep -q "^held .* total under JS:\*checksum \*" "$tmp/c.txt" && grep -qF "checksum (self) under JS:*checksum *  [$tmp/focus.yaml:5; matches no function; did you mean '"'"'JS:^checksum /tmp/cgjit-sample.diff/diff.js:7:18'"'"'" "$tmp/c.txt"' \
	"check with focus: in the budget file: the base run holds under checksum; name: checksum is missing, and says did you mean JS:^checksum (exit $rc)"
"$CGJIT" check -f json -b "$tmp/focus.yaml" -B "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/s-check-focus.json"
rc=$?
expect '[ $rc = 3 ] && perl -MJSON::XS -e "local \$/; my @r = @{decode_json(<STDIN>)->{results}}; exit !(\$r[0]{verdict} eq q(exceeded) && \$r[1]{verdict} eq q(exceeded) && \$r[2]{suggestions}[0] =~ /^JS:.checksum / && \$r[0]{focus}{match} eq q(glob))" <"$tmp/s-check-focus.json"' \
	"check of the slowed run under checksum: the total and the builtins it calls exceeded (exit $rc)"
"$CGJIT" check -f json --focus 'glob:JS:*fill *' --jit-only -b "$top/samples/src/diff-budget.yaml" "$tmp/node-diff-base.out" >"$tmp/s-check-cli.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(\$d->{scope}{focus}{pattern} eq q(JS:*fill *) && \$d->{scope}{jit_only} && \$d->{results}[0]{focus}{pattern} eq q(JS:*fill *))" <"$tmp/s-check-cli.json"' \
	"check --focus --jit-only: the limits measured under the command line's focus"
"$CGJIT" check --focus nosuch -b "$top/samples/src/diff-budget.yaml" "$tmp/node-diff-base.out" >"$tmp/out" 2>"$tmp/err"
expect '[ $? = 2 ] && [ ! -s "$tmp/out" ] && grep -q "the focus name .nosuch. matches no function" "$tmp/err"' "check --focus naming nothing: exit 2"

echo "# one JSON schema family: every document has exactly the keys docs/reports.md lists"
"$CGJIT" report -f json -n 5 "$tmp/node-diff-slow.out" >"$tmp/s-report.json"
"$CGJIT" report -f json -n 5 "$tmp/cg.out" >"$tmp/s-report-cg.json"
"$CGJIT" diff -f json -n 5 "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/s-diff.json"
"$CGJIT" diff -f json -n 5 "$tmp/node-diff-base.out" "$tmp/cg.out" >"$tmp/s-diff-cg.json" 2>/dev/null
printf 'total: {hard: 1G, soft: 5%%}\nfunctions:\n  - {glob: "JS:*checksum *", hard: 1}\n  - {glob: "JS:*fill *", sum: true, soft: 10%%}\n  - {name: gone, hard: 1}\n' >"$tmp/s.yaml"
"$CGJIT" check -f json -b "$tmp/s.yaml" -B "$tmp/node-diff-base.out" "$tmp/node-diff-slow.out" >"$tmp/s-check.json"
"$CGJIT" check -f json -b "$tmp/s.yaml" "$tmp/node-diff-slow.out" >"$tmp/s-check-nobase.json"
cp "$tmp/node-diff-slow-focus.json" "$tmp/s-report-focus.json"
perl "$top/tests/e2e/check-schema.pl" "$top/docs/reports.md" "$tmp"/s-*.json >"$tmp/schema.out" 2>&1
expect '! grep -q "^not ok" "$tmp/schema.out" && grep -q "^ok - 12 documents of cgjit.check/2, cgjit.diff/2, cgjit.report/2" "$tmp/schema.out"' \
	"report, diff and check JSON (callgrind and cachegrind, with and without a baseline, a focus, --jit-only): exactly the keys docs/reports.md lists: $(grep -v "^ok" "$tmp/schema.out" | head -n 3)"
# the checker itself: a key too many, one too few
perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); $d->{functions}[0]{extra} = 1; delete $d->{kinds}{jit}{share}; print encode_json($d)' \
	<"$tmp/s-report.json" >"$tmp/bad-report.json"
perl "$top/tests/e2e/check-schema.pl" "$top/docs/reports.md" "$tmp/bad-report.json" >"$tmp/schema.out" 2>&1
expect 'grep -q "at functions\[\], 1 objects: not documented: extra" "$tmp/schema.out" && grep -q "at kinds.\*, 1 objects: documented but missing: share" "$tmp/schema.out"' \
	"check-schema.pl finds a key that is not documented and a documented key that is missing"
for c in report:cgjit.report/2 diff:cgjit.diff/2 check:cgjit.check/2; do
	"$CGJIT" "${c%%:*}" --help >"$tmp/help.txt"
	expect 'grep -q "schema ${c#*:}, docs/reports.md section 3" "$tmp/help.txt"' "${c%%:*} --help names its schema ${c#*:} and docs/reports.md"
done

echo "# errors"
"$CGJIT" report "$tmp/missing" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "missing" "$tmp/err"' "report of a missing file: exit 1, message, no output"
"$CGJIT" report --format xml "$p" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc = 2 ] && grep -q "format takes text, json, markdown or yaml, got .xml." "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 3 ]' \
	"report --format xml: exit 2, names the choices, one usage line"
"$CGJIT" report --top >/dev/null 2>"$tmp/err"
expect 'grep -qF "option '"'"'--top'"'"' needs a value" "$tmp/err"' "report --top without a value: says so"
"$CGJIT" report --part 9 "$tmp/moarvm-parts.in" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "there is no part 9: the file has 3" "$tmp/err"' "report --part 9 of 3: exit 1"
"$CGJIT" report --event Dr "$p" >/dev/null 2>"$tmp/err"
expect 'grep -q "no event .Dr. (it counts: Ir)" "$tmp/err"' "report --event of an event the file does not count"
head -c 100000 "$p" >"$tmp/cut"
"$CGJIT" report "$tmp/cut" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "cut:[0-9]*: " "$tmp/err"' "report of a truncated file: exit 1 with the line, no output"
"$CGJIT" report - <"$p" >/dev/null 2>&1
expect '[ $? = 0 ]' "report reads stdin (-)"

finish
