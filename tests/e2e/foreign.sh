#!/bin/bash
# End-to-end tests of other writers' callgrind files (issue 26): the stored samples
# samples/xdebug-php (Xdebug 3's profiler, one plain and one .gz) and samples/go-pprof
# (go tool pprof -callgrind) through cgjit report, diff, check and flamegraph against
# callgrind_annotate (tests/e2e/check-foreign.pl: totals, "(calculated)", the summary,
# every function's self and inclusive cost, the folded stacks, a diff against itself, a
# budget); the report's formats; the new keys against docs/reports.md (check-schema.pl);
# augment's refusals; live runs with php+Xdebug and go where they are installed.
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"
cd "$tmp" || exit 1
xd=$top/samples/xdebug-php
gp=$top/samples/go-pprof

# check_lines ARGS...: runs a Perl checker and counts its ok/not ok lines
check_lines() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"# "*) echo "$line" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done < <(perl "$@" 2>&1 || echo "not ok - $* failed")
}
check_foreign() { check_lines "$top/tests/e2e/check-foreign.pl" "$CGJIT" "$@"; }   # PROFILE ANNOTATED NAME

command -v callgrind_annotate >/dev/null || { notok "callgrind_annotate not found (apt-get install valgrind)"; finish; exit 1; }

echo "# Xdebug: report, diff, check, flamegraph = callgrind_annotate (plain and .gz)"
plain=$(ls "$xd"/cachegrind.out.* | grep -v '\.gz$' | head -1)
packed=$(ls "$xd"/cachegrind.out.*.gz | head -1)
check_foreign "$plain" "$plain" xdebug-php
gzip -dc "$packed" >"$tmp/xd2"
check_foreign "$packed" "$tmp/xd2" "xdebug-php $(basename "$packed")"
"$CGJIT" report -n 50 "$packed" >"$tmp/r.gz.txt"
"$CGJIT" report -n 50 "$tmp/xd2" >"$tmp/r.plain.txt"
expect 'diff -q <(tail -n +2 "$tmp/r.gz.txt") <(tail -n +2 "$tmp/r.plain.txt") >/dev/null' \
	"the .gz's report is the decompressed file's (but for its name)"
gzip -dc "$packed" | gzip -c | "$CGJIT" report -n 50 - >"$tmp/r.pipe.txt"
expect '[ $? = 0 ] && diff -q <(tail -n +2 "$tmp/r.pipe.txt") <(tail -n +2 "$tmp/r.plain.txt") >/dev/null' "... and read from a pipe"
"$CGJIT" report "$plain" >"$tmp/r.txt"
expect 'grep -q "^summary   Time_(10ns) " "$tmp/r.txt" && grep -q "^note      the file.s summary: line differs from what its cost lines add up to" "$tmp/r.txt" &&
	! grep -q "(calculated)" "$tmp/r.txt" && grep -q "  {main}  \[???, " "$tmp/r.txt" && grep -q "  php::usort  \[???, php:internal\]" "$tmp/r.txt"' \
	"report text: the summary line and its note, {main} and php:: functions, no (calculated)"
"$CGJIT" report -f yaml "$plain" >"$tmp/r.yaml"
expect 'grep -q "^totals_calculated: false$" "$tmp/r.yaml" && grep -qF "Time_(10ns): 10ns" "$tmp/r.yaml" && grep -qF "Memory_(bytes): bytes" "$tmp/r.yaml"' \
	"report YAML: totals_calculated false, the units named (10ns, bytes)"
n=$(wc -l <"$plain")
head -n $((n / 2)) "$plain" >"$tmp/cut.xdebug"
"$CGJIT" report "$tmp/cut.xdebug" >"$tmp/r.cut" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -s "$tmp/r.cut" ] && grep -q "cut.xdebug:$((n / 2)): the file ends inside part 1 without .summary:., which Xdebug writes last (file truncated?)" "$tmp/err"' \
	"an Xdebug profile cut in half: exit 1, the line where it ends, no output (Xdebug writes summary: last)"
"$CGJIT" augment -o "$tmp/aug.out" "$plain" 2>"$tmp/err"
rc=$?
expect '[ $rc = 1 ] && grep -q "this profile was written by Xdebug: .*nothing to augment" "$tmp/err" && [ ! -e "$tmp/aug.out" ]' \
	"augment of an Xdebug file: exit 1, says why there is nothing to augment, no output"
"$CGJIT" augment -o "$tmp/aug.out" "$packed" 2>"$tmp/err"
expect '[ $? = 1 ] && grep -q "written by Xdebug" "$tmp/err"' "... and of the .gz"

perl -0ne 'print $1 if /with `php-budget.yaml`:\n\n```yaml\n(.*?)```/s' "$top/README.md" >"$tmp/php-budget.yaml"
"$CGJIT" check -f json -b "$tmp/php-budget.yaml" "$plain" >"$tmp/pb.json"
expect '[ $? = 0 ] && perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(\$d->{held} == 3 && \$d->{results}[1]{functions} > 0)" <"$tmp/pb.json"' \
	"the README's PHP budget holds on the sample, its glob matching methods"

echo "# go tool pprof -callgrind: calls=0 and no totals"
prof=$gp/cpu.callgrind
# callgrind_annotate adds a calls=0 line's cost to the caller's self cost (it reads a call
# only when the count is above 0: sub read_input_file, "$curr_call_counter>0"), which
# counts every sampled callee twice; the count changes no cost, so it reads a copy with
# calls=1, as kcachegrind and cgjit read the file
sed 's/^calls=0 /calls=1 /' "$prof" >"$tmp/pprof1"
check_foreign "$prof" "$tmp/pprof1" go-pprof
(cd "$tmp" && mkdir -p e && cd e && callgrind_annotate --threshold=100 "$prof") >"$tmp/ann0.txt" 2>/dev/null
t0=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS (calculated).*/\1/p' "$tmp/ann0.txt" | tr -d ,)
t=$("$CGJIT" report -f json "$prof" | perl -MJSON::XS -e 'local $/; my $d = decode_json(<STDIN>); print $d->{totals}{$d->{event}}')
expect '[ -n "$t0" ] && [ -n "$t" ] && [ "$t0" -gt "$t" ]' \
	"the copy is needed: callgrind_annotate on the file itself counts calls=0 costs as self ($t0, cgjit $t)"
"$CGJIT" report -f json -n 1000 "$prof" >"$tmp/p0.json"
"$CGJIT" report -f json -n 1000 "$tmp/pprof1" >"$tmp/p1.json"
expect 'perl -MJSON::XS -e "sub f { local \$/; open(my \$h, q(<), shift) or die; my \$d = decode_json(<\$h>); join(q(;), map { qq(\$_->{name},\$_->{self},\$_->{inclusive}) } @{\$d->{functions}}) } exit !(f(q($tmp/p0.json)) eq f(q($tmp/p1.json)))"' \
	"cgjit reads calls=0 as a call: the same self and inclusive costs as the calls=1 copy"
"$CGJIT" report "$prof" >"$tmp/r.txt"
"$CGJIT" report -f markdown "$prof" >"$tmp/r.md"
expect 'grep -qE "^total     cpu\(ms\) +1\.460 s \(calculated\)$" "$tmp/r.txt" && grep -q "^note      the file gives no totals: or summary: line" "$tmp/r.txt" &&
	grep -qE "^\| cpu\(ms\) \| 1\.460 s \(calculated\) \|$" "$tmp/r.md" && grep -qE "^ +280\.000 ms  19\.18% " "$tmp/r.txt"' \
	"report text and Markdown say (calculated), in seconds (the unit of cpu(ms) is known): 1,460 ms = 1.460 s"
x=$(ls "$top"/samples/xdebug-php/cachegrind.out.[0-9]* | grep -v '\.gz$' | head -1)
"$CGJIT" report -n 1 "$x" >"$tmp/x.txt"
"$CGJIT" report -f json -n 1 "$x" >"$tmp/x.json"
cat >"$tmp/units.pl" <<'PL'
use JSON::XS;
local $/;
open(my $h, '<', $ARGV[0]) or die;
my $d = decode_json(<$h>);
open(my $x, '<', $ARGV[1]) or die;
my $txt = <$x>;
my ($t, $m) = ($d->{totals}{'Time_(10ns)'}, $d->{totals}{'Memory_(bytes)'});
my $ms = sprintf('%.3f ms', $t * 10 / 1e6);
(my $b = $m) =~ s/(\d)(?=(\d{3})+$)/$1,/g;
exit !($d->{units}{'Time_(10ns)'} eq '10ns' && $txt =~ /^total     Time_\(10ns\) +\Q$ms\E$/m
       && $txt =~ /^total     Memory_\(bytes\) +\Q$b B\E$/m);
PL
expect 'perl "$tmp/units.pl" "$tmp/x.json" "$tmp/x.txt"' \
	"Xdebug in text: Time_(10ns) in ms (the JSON's count times 10 ns), Memory_(bytes) in bytes"
"$CGJIT" diff "$prof" "$prof" >"$tmp/d.txt"
"$CGJIT" check -b <(printf 'event: "cpu(ms)"\ntotal: {hard: 1G}\n') "$prof" >"$tmp/c.txt"
"$CGJIT" flamegraph -o "$tmp/f.svg" "$prof"
expect 'grep -q "^totals    (calculated) of both" "$tmp/d.txt" && grep -q "^totals    (calculated)" "$tmp/c.txt" &&
	grep -qE "cpu\(ms\) [0-9,]+ in all \(calculated\); " "$tmp/f.svg"' \
	"diff and check text and the flame graph's SVG say the totals are calculated"
"$CGJIT" augment -o "$tmp/aug.out" "$prof" "$bad/good.map" 2>"$tmp/err"
expect '[ $? = 1 ] && grep -q "expected .totals:" "$tmp/err" && [ ! -e "$tmp/aug.out" ]' \
	"augment keeps its strict reader: a file without totals: is refused"

echo "# the documents' keys (docs/reports.md section 3)"
"$CGJIT" report -f json -n 5 "$plain" >"$tmp/s-report-xd.json"
"$CGJIT" report -f json -n 5 "$prof" >"$tmp/s-report-pprof.json"
# (two runs of one program in two directories: diff and check warn that the commands differ)
"$CGJIT" diff -f json -n 5 "$plain" "$tmp/xd2" >"$tmp/s-diff-xd.json" 2>/dev/null
"$CGJIT" check -f json -b <(printf 'total: {hard: 1G}\nfunctions:\n  - {name: fib, hard: 1G}\n') -B "$tmp/xd2" "$plain" >"$tmp/s-check-xd.json" 2>/dev/null
perl "$top/tests/e2e/check-schema.pl" "$top/docs/reports.md" "$tmp"/s-*.json >"$tmp/schema.out" 2>&1
expect '! grep -q "^not ok" "$tmp/schema.out" && grep -q "^ok - 4 documents" "$tmp/schema.out"' \
	"report, diff and check JSON of these files: exactly the keys docs/reports.md lists: $(grep -v "^ok" "$tmp/schema.out" | head -n 3)"

echo "# live: a fresh Xdebug profile and a fresh pprof one, as the README's commands make them"
if command -v php >/dev/null && php -m 2>/dev/null | grep -qx xdebug; then
	mkdir -p "$tmp/php"
	cp -r "$top/samples/src/xdebug.php" "$top/samples/src/xdebug" "$tmp/php/"
	(cd "$tmp/php" && php -d xdebug.mode=profile -d xdebug.start_with_request=yes -d xdebug.output_dir=. xdebug.php >/dev/null)
	live=$(ls "$tmp"/php/cachegrind.out.* 2>/dev/null | head -1)
	if [ -n "$live" ]; then
		check_foreign "$live" "$live" "xdebug live"
	else
		notok "xdebug live: php wrote no cachegrind.out.*"
	fi
else
	skip "xdebug live (no php with Xdebug: apt-get install php8.2-cli php8.2-xdebug)"
fi
if command -v go >/dev/null; then
	mkdir -p "$tmp/go"
	cp "$top/samples/src/pprof.go" "$tmp/go/"
	if (cd "$tmp/go" && export HOME=$tmp/go GOCACHE=$tmp/go/cache GOFLAGS= GO111MODULE=off &&
		go build -o pprofsample pprof.go && ./pprofsample cpu.pprof >/dev/null &&
		go tool pprof -callgrind -output cpu.callgrind pprofsample cpu.pprof 2>/dev/null); then
		sed 's/^calls=0 /calls=1 /' "$tmp/go/cpu.callgrind" >"$tmp/go/c1"
		check_foreign "$tmp/go/cpu.callgrind" "$tmp/go/c1" "pprof live"
	else
		notok "pprof live: go build, the run or go tool pprof failed"
	fi
else
	skip "pprof live (no go: apt-get install golang-go)"
fi

finish
