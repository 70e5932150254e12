#!/usr/bin/perl
# check-focus.pl CGJIT PROFILE [NAME]: `cgjit report --focus` against callgrind_annotate and
# the file's own call arcs, read here without cgjit, on the plain file PROFILE. For the
# largest JIT functions F (up to 3) that are on no cycle through other functions and have
# no fi= lines (the cases where callgrind_annotate's figures are comparable, as in
# check-report.pl), `report --no-fold --focus F --focus-object OBJECT --focus-file FILE`
# must show:
#  1. F alone in the focus, at 100% inclusive, its inclusive cost the focus's total;
#  2. that total equal to callgrind_annotate --inclusive=yes for F (less F's calls of
#     itself, which callgrind_annotate adds again), where the file's arcs agree with
#     themselves (the calls into F cost what F spends: its self cost and its calls out);
#     where they do not (code entered without a call, an arc that returns elsewhere), the
#     focus takes what F spent, and the total is at most F's self cost and calls out;
#  3. every function whose only caller is F (in the arcs of the file, calls of itself
#     aside), on no cycle, with all of its self and inclusive cost under F: its self cost
#     equal to callgrind_annotate --inclusive=no, its inclusive cost to --inclusive=yes
#     (less its calls of itself);
#  4. the self costs under F adding up to the total, within one unit per function listed
#     (each is rounded on its own).
# For the two largest JIT functions on a cycle: F at 100%, its total at most its self cost
# and calls out (the arcs out of a focus are taken at their cost, less only what their
# callees spend in all); its share of the run printed beside callgrind_annotate's, which
# counts recursion through other functions again (java-instr's Interpreter'2: 3053306%).
# Prints "ok - ..." / "not ok - ..." lines, or "skip - ..." when no JIT function qualifies.
use strict;
use warnings;
use Cwd qw(abs_path);
use JSON::XS;
use FindBin;
use lib $FindBin::Bin;
use Annotate;

my ($cgjit, $profile, $name) = @ARGV;
$name //= $profile;
$profile = abs_path($profile);

sub annotate { return Annotate::costs($profile, $_[0]); }

sub report {
	my @args = @_;
	open(my $fh, "-|", $cgjit, "report", "--no-fold", "-f", "json", "-n", "1000000", @args, $profile)
		or die "$cgjit: $!";
	local $/;
	my $json = <$fh>;
	close $fh;
	return $? == 0 && length $json ? decode_json($json) : undef;
}

# the file's arcs by "file:name" (the file of the fn= line, as callgrind_annotate keys a
# function), its calls of itself, its fi= files, and calls=0 lines
my (%callers, %selfcall, %fifiles, %zero, %out, %in);
{
	open(my $fh, "<", $profile) or die;
	my (%names, $fl, $fi, $fn, $cfn, $calls, $cfl);
	my $id = sub {
		my ($kind, $v) = @_;
		if ($v =~ /^\((\d+)\)\s*(.*)$/) {
			$names{$kind}{$1} = $2 if length $2;
			return $names{$kind}{$1};
		}
		return $v;
	};
	my $npos = 1;   # the subpositions before a line's costs (positions: line, by default)
	while (<$fh>) {
		chomp;
		if (/^positions:\s*(.*)/) { my @p = split ' ', $1; $npos = @p; }
		elsif (/^fl=(.*)/) { $fl = $fi = $id->("fl", $1); }
		elsif (/^f[ie]=(.*)/) { $fi = $id->("fl", $1); $fifiles{"$fl:$fn"} = 1 if defined $fn && $fi ne $fl; }
		elsif (/^fn=(.*)/) { $fn = $id->("fn", $1); $fi = $fl; }
		elsif (/^cf[il]=(.*)/) { $cfl = $id->("fl", $1); }
		elsif (/^cfn=(.*)/) { $cfn = $id->("fn", $1); }
		elsif (/^calls=(\d+)/) { $calls = $1 ? 1 : 2; }
		elsif ($calls && /^[0-9+*-]/) {
			# the first event's cost (a cost left out is 0, as in a line "* *")
			my $c = (split ' ')[$npos] // 0;
			my ($caller, $callee) = ("$fl:$fn", ($cfl // $fi) . ":$cfn");
			if ($caller eq $callee) { $selfcall{$caller} += $c; }
			else { $callers{$callee}{$caller} = 1; $out{$caller} += $c; $in{$callee} += $c; }
			$zero{$caller} = $zero{$callee} = 1 if $calls == 2;
			$calls = 0; $cfl = undef;
		}
		elsif (/^(ob|cob|jfi|jfn)=(.*)/) {
			my ($tag, $v) = ($1, $2);
			$id->($tag =~ /ob/ ? "ob" : $tag =~ /fi/ ? "fl" : "fn", $v);
		}
	}
}

my $whole = report();
unless ($whole) {
	print "not ok - $name: cgjit report failed\n";
	exit 0;
}
my $total = $whole->{totals}{$whole->{event}};
my @focus = grep {
	my $k = "$_->{file}:$_->{name}";
	$_->{jit} && !$_->{in_cycle} && !$fifiles{$k} && !$zero{$k} && $_->{inclusive} >= $total / 1000
} @{$whole->{functions_by_inclusive}};
splice @focus, 3 if @focus > 3;
my @cyclic = grep {
	my $k = "$_->{file}:$_->{name}";
	$_->{jit} && $_->{in_cycle} && !$fifiles{$k} && !$zero{$k} && $_->{inclusive} >= $total / 1000
} @{$whole->{functions_by_inclusive}};
splice @cyclic, 2 if @cyclic > 2;
unless (@focus || @cyclic) {
	print "skip - $name: no JIT function of 0.1% inclusive or more\n";
	exit 0;
}
my $self = annotate("no");
my $incl = annotate("yes");
my ($checked, $bad, $callees, $disagree) = (0, 0, 0, 0);
for my $f (@focus) {
	my $k = "$f->{file}:$f->{name}";
	my $obj = $f->{object} =~ s{.*/}{}r;
	my $d = report("--focus", "name:$f->{name}", "--focus-object", $obj, "--focus-file", $f->{file});
	$checked++;
	my @err;
	unless ($d) {
		print "not ok - $name: report --focus '$f->{name}' failed\n";
		$bad++;
		next;
	}
	my $ev = $d->{event};
	my $t = $d->{totals}{$ev};
	my %under = map { ("$_->{file}:$_->{name}" => $_) } @{$d->{functions}};
	my $fo = $d->{scope}{focus};
	my $me = $under{$k};
	push @err, "the focus is not F alone" unless $fo && @{$fo->{functions}} == 1 && $fo->{functions}[0]{name} eq $f->{name};
	push @err, "F is not at 100% ($me->{inclusive_share})" unless $me && $me->{inclusive} == $t && $me->{inclusive_share} == 1;
	my $want = ($incl->{$k} // 0) - ($selfcall{$k} // 0);
	my $spent = ($self->{$k} // 0) + ($out{$k} // 0);
	if (($in{$k} // 0) == $spent) {
		push @err, "total $t, callgrind_annotate's inclusive $want" unless $t == $want;
	} else {
		$disagree++;
		push @err, "total $t, more than F's self cost and calls out $spent (the arcs in: "
			. ($in{$k} // 0) . ")" unless $t <= $spent && $t > 0;
	}
	push @err, "the profile's total is not kept" unless $fo && $fo->{profile_totals}{$ev} == $total;
	my $sum = 0;
	$sum += $_->{self} for @{$d->{functions}};
	my $n = @{$d->{functions}};
	push @err, "self costs add up to $sum, not $t (within $n)" unless abs($sum - $t) <= $n;
	# the functions only F calls: everything they do is under F
	for my $g (keys %callers) {
		my @c = keys %{$callers{$g}};
		next unless @c == 1 && $c[0] eq $k && !$fifiles{$g} && !$zero{$g};
		my $u = $under{$g};
		my $w = $whole->{functions_by_inclusive};
		my ($all) = grep { "$_->{file}:$_->{name}" eq $g } @$w;
		next unless $all && !$all->{in_cycle};
		$callees++;
		push @err, "'$g' is not under the focus" unless $u;
		next unless $u;
		push @err, "self of '$g' under F $u->{self}, callgrind_annotate $self->{$g}"
			unless $u->{self} == ($self->{$g} // 0);
		my $gi = ($incl->{$g} // 0) - ($selfcall{$g} // 0);
		push @err, "inclusive of '$g' under F $u->{inclusive}, callgrind_annotate $gi"
			unless $u->{inclusive} == $gi;
	}
	if (@err) {
		print "not ok - $name: --focus '$f->{name}': " . join("; ", @err) . "\n";
		$bad++;
	}
}
my @ratios;
for my $f (@cyclic) {
	my $k = "$f->{file}:$f->{name}";
	my $obj = $f->{object} =~ s{.*/}{}r;
	my $d = report("--focus", "name:$f->{name}", "--focus-object", $obj, "--focus-file", $f->{file});
	$checked++;
	my $t = $d ? $d->{totals}{$d->{event}} : -1;
	my ($me) = $d ? grep { "$_->{file}:$_->{name}" eq $k } @{$d->{functions}} : ();
	my $spent = ($self->{$k} // 0) + ($out{$k} // 0);
	my $want = ($incl->{$k} // 0) - ($selfcall{$k} // 0);
	if (!$me || $me->{inclusive} != $t || $t > $spent || $t <= 0) {
		print "not ok - $name: --focus '$f->{name}' (on a cycle): total $t, self cost and calls out $spent\n";
		$bad++;
		next;
	}
	push @ratios, sprintf("%.1f%% (callgrind_annotate %.1f%%)", 100 * $t / $total, 100 * $want / $total);
}
print $bad ? "not ok - $name: $bad of $checked focus reports differ\n"
	   : "ok - $name: report --focus on $checked JIT functions: 100%, total = callgrind_annotate's inclusive"
	     . ($disagree ? " ($disagree whose arcs disagree: at most their self cost and calls out)" : "")
	     . ", $callees callees called by F alone with all their cost under it, self costs adding up"
	     . (@ratios ? "; " . @ratios . " on a cycle within their calls out, of the run: " . join(", ", @ratios) : "")
	     . "\n";
