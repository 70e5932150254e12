#!/usr/bin/perl
# check-foreign.pl CGJIT PROFILE ANNOTATED NAME: cgjit's report, diff, check and flamegraph
# of PROFILE (another writer's callgrind file: Xdebug's, go tool pprof's; plain or .gz)
# against callgrind_annotate --inclusive=no/yes of ANNOTATED (the same file, plain: for a
# .gz the decompressed copy, for pprof's the copy with calls=1, see foreign.sh), for every
# event the file counts:
#  - totals: callgrind_annotate's PROGRAM TOTALS is the file's summary: when it has one
#    (cgjit's "summary"), else calculated from the cost lines ("(calculated)": cgjit's
#    totals_calculated); cgjit's totals are the cost lines' sum, callgrind_annotate's
#    self costs added up;
#  - every function's self cost (all of them: --top larger than the file's count) and,
#    where it calls neither itself nor a cycle, its inclusive cost;
#  - diff of PROFILE against itself: every total and function unchanged;
#  - check: a total limit at the total holds and one below it is exceeded (exit 3);
#    a function limit at the largest self cost holds;
#  - flamegraph --format folded --min-width 0: the values add up to the total, and the
#    stacks that end in each function to its self cost within docs/flamegraph.md section
#    1's bound (each frame's own cost is rounded).
# Prints "ok - ..." / "not ok - ..." lines.
use strict;
use warnings;
use JSON::XS;
use File::Temp qw(tempdir);
use Cwd qw(abs_path);

my ($cgjit, $profile, $annotated, $name) = @ARGV;
$annotated = abs_path($annotated);
my $dir = tempdir(CLEANUP => 1);
sub ok { print "ok - $name: $_[0]\n"; }
sub notok { print "not ok - $name: $_[0]\n"; }
sub expect { $_[0] ? ok($_[1]) : notok($_[1]); }

sub cgjit_json {
	my $out = `'$cgjit' @_`;
	die "cgjit @_ failed\n" if $? >> 8 > 3 || !length $out;
	return decode_json($out);
}

# callgrind_annotate's totals line and function list for EVENT, run from an empty
# directory (it strips the current directory from file names)
sub annotate {
	my ($event, $incl) = @_;
	my $empty = tempdir(CLEANUP => 1);
	open(my $fh, "-|", "cd $empty && callgrind_annotate --inclusive=$incl --threshold=100 "
		. "--show='$event' --sort='$event' '$annotated'") or die "callgrind_annotate: $!";
	my (%cost, $total, $calc);
	my $block = 0;
	while (<$fh>) {
		if (/^-+$/) { $block++; next; }
		if (/^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS( \(calculated\))?/) {
			($total, $calc) = ($1, $2 ? 1 : 0);
			$total =~ tr/,//d;
			next;
		}
		next unless $block == 6;
		next unless /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*?)(?: \[[^\]]*\])?$/;
		my ($c, $k) = ($1, $2);
		$c =~ tr/,//d;
		$cost{$k} += $c;
	}
	close $fh;
	return ($total, $calc, \%cost);
}

my $doc0 = cgjit_json("report -f json -n 1 '$profile'");
my @events = sort keys %{$doc0->{totals}};
for my $event (@events) {
	my ($atotal, $acalc, $aself) = annotate($event, "no");
	my (undef, undef, $aincl) = annotate($event, "yes");
	my $sum = 0;
	$sum += $_ for values %$aself;
	my $doc = cgjit_json("report -f json --no-fold -n 1000000 -e '$event' '$profile'");
	my $total = $doc->{totals}{$event};
	if ($acalc) {
		expect($doc->{totals_calculated} && $total == $atotal && !defined $doc->{summary},
		       "$event: total $total (calculated), callgrind_annotate's PROGRAM TOTALS (calculated) $atotal");
	} else {
		my $s = $doc->{summary} ? $doc->{summary}{$event} : "none";
		expect(!$doc->{totals_calculated} && $s eq $atotal,
		       "$event: summary $s, callgrind_annotate's PROGRAM TOTALS $atotal");
	}
	expect($total == $sum, "$event: total $total = callgrind_annotate's self costs added up ($sum)");
	my ($checked, $incl_checked, @diffs) = (0, 0);
	my %mine;
	for my $f (@{$doc->{functions}}) {
		my $k = "$f->{file}:$f->{name}";
		$mine{$k} += $f->{self};
		next if $f->{self_calls} || $f->{in_cycle};
		$incl_checked++;
		my $want = $aincl->{$k} // 0;
		push @diffs, "inclusive of '$k': cgjit $f->{inclusive}, callgrind_annotate $want"
			if $want != $f->{inclusive};
	}
	my %keys = map { $_ => 1 } grep({ $mine{$_} } keys %mine), grep({ $aself->{$_} } keys %$aself);
	for my $k (sort keys %keys) {
		$checked++;
		my ($m, $a) = ($mine{$k} // 0, $aself->{$k} // 0);
		push @diffs, "self of '$k': cgjit $m, callgrind_annotate $a" if $m != $a;
	}
	print "# $_\n" for @diffs[0 .. ($#diffs < 9 ? $#diffs : 9)];
	expect(!@diffs && $checked > 0 && @{$doc->{functions}} == $doc->{function_count},
	       "$event: self cost of all $checked functions with one, and inclusive of $incl_checked "
	       . "(not recursive), equal callgrind_annotate's" . (@diffs ? " (" . @diffs . " differ)" : ""));
	$doc->{units}{$event} =~ /^\S+$/ or notok("$event: no unit in units") if $event =~ /\(.+\)$/;

	# flamegraph: the folded stacks
	my (%drawn, %lines);
	my $folded_sum = 0;
	open(my $fg, "-|", "'$cgjit' flamegraph -f folded --min-width 0 -e '$event' '$profile'") or die;
	while (<$fg>) {
		chomp;
		my ($stack, $v) = /^(.*) (\d+)$/ or next;
		$folded_sum += $v;
		my $leaf = (split /;/, $stack)[-1];
		$drawn{$leaf} += $v;
		$lines{$leaf}++;
	}
	close $fg;
	expect($? == 0 && $folded_sum == $total, "$event: flamegraph's folded values add up to the total ($folded_sum)");
	my %by_name;
	$by_name{$_->{name} =~ s/;/:/gr} += $_->{self} for @{$doc->{functions}};
	# docs/flamegraph.md section 1's bound (check-flame-self.pl's, without the SVG): a
	# frame's own cost is rounded, so a function is drawn wider than its self cost by
	# less than one unit per folded line of it, and narrower by less than that plus the
	# elided cost and one unit per frame (N: the folded lines, each a frame)
	my $n = 0;
	$n += $_ for values %lines;
	my $elided = $drawn{"[elided]"} // 0;
	my @off = grep {
		my ($dr, $sf, $l) = ($drawn{$_} // 0, $by_name{$_}, $lines{$_} // 0);
		$dr - $sf >= ($l || 1) || $sf - $dr >= $l + $elided + $n
	} keys %by_name;
	print "# flamegraph: '$_' drawn " . ($drawn{$_} // 0) . ", self $by_name{$_}\n" for (sort @off)[0 .. ($#off < 4 ? $#off : 4)];
	expect(!@off, "$event: each function's folded stacks carry its self cost (" . scalar(keys %by_name) . " functions)");
}

# diff of the file against itself
my $ev = $events[0];
my $d = cgjit_json("diff -f json -n 1000 '$profile' '$profile'");
my $zero = !grep { $d->{totals_change}{$_} != 0 } keys %{$d->{totals_change}};
expect($zero && $d->{changed} == 0 && $d->{added} == 0 && $d->{removed} == 0
       && $d->{totals_calculated} == $doc0->{totals_calculated}
       && $d->{baseline_totals_calculated} == $doc0->{totals_calculated},
       "diff against itself: no change, $d->{changed} functions changed, totals_calculated kept");

# check: limits at the totals and at the largest self cost
my $top = $doc0->{functions}[0];
my $t = $doc0->{totals}{$doc0->{event}};
my $budget = "$dir/budget.yaml";
for my $case ([$t, 0, "held"], [$t - 1, 3, "exceeded"]) {
	my ($hard, $want_rc, $verdict) = @$case;
	open(my $b, ">", $budget) or die;
	my $q = JSON::XS->new->allow_nonref;
	print $b "event: " . $q->encode($doc0->{event}) . "\ntotal:\n  hard: $hard\nfunctions:\n"
		. "  - name: " . $q->encode($top->{name}) . "\n    file: " . $q->encode($top->{file})
		. "\n    hard: $top->{self}\n";
	close $b;
	my $out = `'$cgjit' check -f json --budget '$budget' '$profile'`;
	my $rc = $? >> 8;
	my $c = decode_json($out);
	my @v = map { $_->{verdict} } @{$c->{results}};
	expect($rc == $want_rc && "@v" eq "$verdict held" && $c->{totals_calculated} == $doc0->{totals_calculated},
	       "check: total limit $hard on $t: $verdict (exit $rc), '$top->{name}' at its self cost $top->{self}: held");
}
