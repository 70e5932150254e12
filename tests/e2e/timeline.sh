#!/bin/bash
# End-to-end tests of `cgjit timeline` on real jitdumps (samples/*-jitdump, tests/jitprog's
# dumps with a CODE_MOVE, a generated dump of many moves): the counts in its JSON against
# an independent reading of the records (Perl, below), bucket sums, late loads for a
# warm-up in percent and in seconds, recompiled and moved functions; the SVG is
# well-formed XML; the text; malformed dumps (exit 1, FILE: byte N, no output file).
# Prints "ok"/"not ok" per check ("skip" for those this machine cannot run) and
# "N passed, N failed, N skipped" last; exits 1 on any failure.
. "$(dirname "$0")/harness.sh"

# count.pl DUMP WARMUP_PCT: the records as the jitdump specification lays them out, read
# here without cgjit: "loads moves bytes span late recompiled moved_functions".
cat >"$tmp/count.pl" <<'EOF'
use strict;
use warnings;
my ($path, $pct) = @ARGV;
open(my $z, '-|', 'zstd', '-q', '-dcf', $path) or die;
binmode $z;
local $/;
my $d = <$z>;
my $le = unpack('V', substr($d, 0, 4)) == 0x4A695444;
my ($u32, $u64) = $le ? ('V', 'Q<') : ('N', 'Q>');
my $off = unpack($u32, substr($d, 8, 4));
my ($loads, $moves, $bytes, $min, $max, @load, %count, %by_index, %moved) = (0, 0, 0);
while ($off + 16 <= length $d) {
	my ($id, $size) = unpack("$u32$u32", substr($d, $off, 8));
	my $ts = unpack($u64, substr($d, $off + 8, 8));
	last if $size < 16 || $off + $size > length $d;
	$min = $ts if !defined $min || $ts < $min;
	$max = $ts if !defined $max || $ts > $max;
	my $r = substr($d, $off, $size);
	if ($id == 0) {
		$loads++;
		my $csize = unpack($u64, substr($r, 40, 8));
		my $nul = index($r, "\0", 56);
		my ($name, $sz) = (undef, 0);
		if ($size >= 57 && $csize <= $size - 57 && $nul >= 0 && $nul < $size - $csize) {
			($name = substr($r, 56, $nul - 56)) =~ s/[ \t]+$//;
			$sz = $csize;
			$count{$name}++;
			$by_index{unpack($u64, substr($r, 48, 8))} = $name;
		}
		$bytes += $sz;
		push @load, [$ts, $sz];
	} elsif ($id == 1) {
		$moves++;
		if ($size >= 64) {
			my $index = unpack($u64, substr($r, 56, 8));
			$moved{$by_index{$index} // "(code_index $index)"}++;
		}
	}
	$off += $size;
}
my $span = defined $min ? $max - $min : 0;
my $after = int($span * $pct / 100);
my $late = grep { $_->[0] - $min > $after } @load;
my $recompiled = grep { $_ >= 2 } values %count;
print join(" ", $loads, $moves, $bytes, $span, $late, $recompiled, scalar keys %moved), "\n";
EOF

# The same figures from cgjit's JSON, plus the sums over its buckets.
cat >"$tmp/fromjson.pl" <<'EOF'
use strict;
use warnings;
use JSON::XS;
local $/;
my $d = decode_json(<STDIN>);
my ($l, $b, $m) = (0, 0, 0);
for (@{$d->{buckets}}) { $l += $_->{loads}; $b += $_->{bytes}; $m += $_->{moves}; }
print join(" ", @$d{qw(loads moves bytes span)}, $d->{late}{loads}, $d->{recompiled}{functions},
	   $d->{moved}{functions}), "\n";
print join(" ", $l, $m, $b, scalar @{$d->{buckets}}), "\n";
EOF

# A dump of many moves of 3 functions (scripts/make-hostile-jitdump: 3000 moves).
perl "$top/scripts/make-hostile-jitdump" "$tmp/hostile" 3000 10 64 3 >/dev/null

dumps=("$top"/samples/*/jit-*.dump* "$top"/tests/jitprog/profiles/*/jit-*.dump "$tmp/hostile/jit-4243.dump")
echo "# counts = an independent reading of the records (${#dumps[@]} dumps)"
for f in "${dumps[@]}"; do
	n=${f#"$top"/}
	n=${n#"$tmp"/}
	if ! "$CGJIT" timeline -f json -w 50% -b 37 -n 0 "$f" >"$tmp/t.json" 2>"$tmp/err"; then
		notok "$n: timeline failed: $(cat "$tmp/err")"
		continue
	fi
	want=$(perl "$tmp/count.pl" "$f" 50)
	got=$(perl "$tmp/fromjson.pl" <"$tmp/t.json")
	read -r loads moves bytes _ <<<"$want"
	expect '[ "$(head -1 <<<"$got")" = "$want" ]' \
		"$n: loads moves bytes span late recompiled moved = $want (got $(head -1 <<<"$got"))"
	expect '[ "$(tail -1 <<<"$got")" = "$loads $moves $bytes 37" ]' \
		"$n: the 37 buckets add up to the loads, moves and bytes"
	"$CGJIT" timeline -f svg -o "$tmp/t.svg" "$f"
	expect 'xmllint --noout "$tmp/t.svg"' "$n: the SVG is well-formed XML (xmllint)"
done

f=$top/samples/node-jitdump/jit-28244.dump.zst
echo "# node-jitdump: warm-up in seconds, text, lists"
"$CGJIT" timeline -f json -w 10% "$f" >"$tmp/pct.json"
span=$(perl -MJSON::XS -e 'local $/; print decode_json(<STDIN>)->{span}' <"$tmp/pct.json")
secs=$(perl -e 'printf "%.9f", int($ARGV[0] / 10) / 1e9' "$span")
"$CGJIT" timeline -f json -w "$secs" "$f" >"$tmp/sec.json"
expect 'perl -MJSON::XS -e "local \$/; my (\$a, \$b) = map { open(my \$h, q(<), \$_) or die; decode_json(<\$h>) } @ARGV;
	exit !(\$a->{late}{after} == \$b->{late}{after} && \$a->{late}{loads} == \$b->{late}{loads} && \$a->{late}{loads} > 0
	       && \$b->{late}{warmup} =~ / s\$/)" "$tmp/pct.json" "$tmp/sec.json"' \
	"--warmup $secs (seconds) = --warmup 10% on this dump: the same late loads"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); my @l = @{\$d->{late}{list}};
	exit !(\$d->{schema} eq q(cgjit.timeline/1) && \$d->{clock} eq q(monotonic) && \$d->{unit} eq q(ns) && @l == 20
	       && !grep { \$l[\$_]{time} < \$l[\$_ - 1]{time} || \$l[\$_]{time} <= \$d->{late}{after} } 1 .. \$#l)" <"$tmp/pct.json"' \
	"JSON: schema, clock, the last 20 late loads in time order, all after the warm-up"
"$CGJIT" timeline "$f" >"$tmp/t.txt"
expect 'grep -q "^clock: CLOCK_MONOTONIC nanoseconds" "$tmp/t.txt" && grep -q "^warm-up: 10% of the span = " "$tmp/t.txt" \
	&& [ "$(grep -c "^ *[0-9.]* s  *[0-9.]* s  " "$tmp/t.txt")" = 20 ] && grep -q "^Recompiled .*: 1 function, 1 extra load$" "$tmp/t.txt" \
	&& grep -q "JS:\*sumSquares" "$tmp/t.txt"' "text: clock, warm-up, 20 bucket rows, the recompiled function (sumSquares)"
"$CGJIT" timeline -f json "$tmp/hostile/jit-4243.dump" >"$tmp/h.json"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); my @m = @{\$d->{moved}{list}};
	exit !(\$d->{moves} == 3000 && @m == 3 && \$m[0]{moves} + \$m[1]{moves} + \$m[2]{moves} == 3000)" <"$tmp/h.json"' \
	"3000 moves of 3 functions: each named, the counts add up"

echo "# times under valgrind: said, and detected from a profile of the pid beside the dump"
expect 'grep -q "^note: times are the recorded run.s: under valgrind (cgjit record) a program and its JIT run many times slower" "$tmp/t.txt" \
	&& grep -qF "note: this run was under valgrind: its callgrind profile $top/samples/node-jitdump/callgrind.out.28244.zst is beside the dump" "$tmp/t.txt"' \
	"text: the note on valgrind's times, and the sample's profile beside its dump found"
cp "$f" "$tmp/jit-28244.dump.zst"
"$CGJIT" timeline -f json "$tmp/jit-28244.dump.zst" >"$tmp/alone.json"
"$CGJIT" timeline -f svg "$tmp/jit-28244.dump.zst" >"$tmp/alone.svg"
expect 'perl -MJSON::XS -e "local \$/; my \$d = decode_json(<STDIN>); exit !(!defined \$d->{valgrind_profile} && @{\$d->{notes}} == 1 && \$d->{notes}[0] =~ /under valgrind/)" <"$tmp/alone.json" \
	&& grep -q "times as the run took them: under valgrind, many times a native run" "$tmp/alone.svg"' \
	"a dump without a profile beside it: the general note only (JSON, SVG)"
: >"$tmp/callgrind.out.28244"
"$CGJIT" timeline -f svg "$tmp/jit-28244.dump.zst" >"$tmp/beside.svg"
expect 'grep -q "recorded under valgrind (its profile is beside the dump)" "$tmp/beside.svg" && xmllint --noout "$tmp/beside.svg"' \
	"callgrind.out.28244 beside it: the SVG says the run was under valgrind"

echo "# the JSON has exactly the keys docs/timeline.md lists (a dump with a move, one with a recompilation, an auditlog with aborts)"
"$CGJIT" timeline -f json "$top/tests/jitprog/profiles/jitdump-instr/jit-30961.dump" >"$tmp/s-moves.json"
"$CGJIT" timeline -f json "$top/samples/raptorjit-traces/audit.log" >"$tmp/s-auditlog.json"
perl "$top/tests/e2e/check-schema.pl" "$top/docs/timeline.md" "$tmp/s-moves.json" "$tmp/pct.json" "$tmp/s-auditlog.json" >"$tmp/schema.out" 2>&1
expect '! grep -q "^not ok" "$tmp/schema.out" && grep -q "^ok - 3 documents of cgjit.timeline/1" "$tmp/schema.out"' \
	"timeline JSON: the keys of docs/timeline.md section 6, at every level: $(grep -v "^ok" "$tmp/schema.out" | head -n 3)"
"$CGJIT" timeline --help >"$tmp/help.txt"
expect 'grep -q "json (schema cgjit.timeline/1," "$tmp/help.txt" && grep -q "docs/timeline.md section 6" "$tmp/help.txt"' \
	"timeline --help names its schema and docs/timeline.md"

echo "# errors"
for b in dump-short-header dump-bad-version dump-record-too-small dump-record-huge; do
	rm -f "$tmp/out"
	"$CGJIT" timeline -f svg -o "$tmp/out" "$bad/$b.dump" >"$tmp/stdout" 2>"$tmp/err"
	rc=$?
	expect '[ $rc = 1 ] && [ ! -e "$tmp/out" ] && [ ! -s "$tmp/stdout" ] && grep -q "^cgjit: .*/$b.dump: byte [0-9]*: " "$tmp/err"' \
		"$b: exit 1 ($rc), FILE: byte N, no output file ($(cat "$tmp/err"))"
done
"$CGJIT" timeline "$top/samples/node-jitdump/perf-28244.map" >"$tmp/stdout" 2>"$tmp/err"
expect '[ $? = 1 ] && [ ! -s "$tmp/stdout" ] && grep -q "perf-28244.map: byte 0: not a jitdump file" "$tmp/err"' "a perf map: not a jitdump, exit 1"
"$CGJIT" timeline -f json -o "$tmp/out" "$bad/dump-truncated-tail.dump" 2>"$tmp/err"
expect '[ $? = 0 ] && grep -q "warning: .*dump-truncated-tail.dump: the last 72 bytes are a record cut off" "$tmp/err" \
	&& perl -MJSON::XS -e "local \$/; exit !(decode_json(<STDIN>)->{truncated_bytes} == 72)" <"$tmp/out"' \
	"a record cut off at the end: a warning, exit 0, the records before it used"
cp "$bad/good.dump" "$tmp/self.dump"
"$CGJIT" timeline -o "$tmp/self.dump" "$tmp/self.dump" 2>"$tmp/err"
expect '[ $? = 1 ] && cmp -s "$bad/good.dump" "$tmp/self.dump" && grep -q "same file as the input" "$tmp/err"' \
	"-o the dump itself: refused, the dump unchanged"
"$CGJIT" timeline --warmup 5x "$f" 2>"$tmp/err" >/dev/null
expect '[ $? = 2 ] && grep -q "warmup takes SECONDS" "$tmp/err"' "--warmup 5x: exit 2"
"$CGJIT" timeline --buckets 0 "$f" 2>/dev/null >/dev/null
expect '[ $? = 2 ]' "--buckets 0: exit 2"
"$CGJIT" timeline --format yaml "$f" 2>/dev/null >/dev/null
expect '[ $? = 2 ]' "--format yaml: exit 2"
"$CGJIT" timeline 2>/dev/null >/dev/null
expect '[ $? = 2 ]' "no DUMP: exit 2"
"$CGJIT" timeline - <"$f" >/dev/null 2>&1
expect '[ $? = 0 ]' "reads stdin (-), zstd included"

finish
