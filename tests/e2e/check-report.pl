#!/usr/bin/perl
# check-report.pl CGJIT PROFILE: `cgjit report --format json --no-fold` against
# callgrind_annotate --inclusive=no and --inclusive=yes on the same plain file, for every
# listed function; and the default report, which folds callgrind's recursion copies
# name'N into name: each listed function's self cost against the sum of callgrind_annotate's
# over the name and its copies; and `--jit-only --no-fold`: only JIT functions, each at
# callgrind_annotate's self cost.
# callgrind_annotate keys a function by "file:name"; cgjit by (object, file, name), like
# kcachegrind, and these differ in three documented ways (docs/reports.md):
#  - cost lines under fi=/fe= go to "that file:name" in callgrind_annotate, to the function
#    in cgjit: such functions are compared by the sum over their name's fi= files;
#  - callgrind_annotate adds a function's calls to itself to its inclusive cost; cgjit does
#    not (they happen inside an outer activation): compared as annotate - self-calls;
#  - on a cycle through other functions cgjit caps inclusive cost at what entered the cycle.
# Prints "ok - ..." / "not ok - ..." lines.
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

my $json = `'$cgjit' report --format json --no-fold --top 25 '$profile'`;
my $folded_json = `'$cgjit' report --format json --top 25 '$profile'`;
my $jit_json = `'$cgjit' report --format json --jit-only --no-fold --top 25 '$profile'`;
if ($? != 0 || !length $json) {
	print "not ok - $name: cgjit report failed\n";
	exit 0;
}
my $doc = decode_json($json);
my $folded = decode_json($folded_json);
my $jit_doc = decode_json($jit_json);
my $self = annotate("no");
my $incl = annotate("yes");

# the self-call arcs and fi= files per function, read from the file itself
# callgrind writes "calls=0" for a call that began in an earlier part; callgrind_annotate
# then takes the call's cost line for the caller's self cost (it only reads it as a call
# when the count is above 0), and its callee misses that inclusive cost: those two
# figures of such functions are left out.
my (%selfcall, %fifiles, %zero_caller, %zero_callee);
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
		elsif (/^f[ie]=(.*)/) { $fi = $id->("fl", $1); $fifiles{"$fl:$fn"}{$fi} = 1 if defined $fn && $fi ne $fl; }
		elsif (/^fn=(.*)/) { $fn = $id->("fn", $1); $fi = $fl; }
		elsif (/^cf[il]=(.*)/) { $cfl = $id->("fl", $1); }
		elsif (/^cfn=(.*)/) { $cfn = $id->("fn", $1); }
		elsif (/^calls=(\d+)/) { $calls = $1 ? 1 : 2; }
		elsif ($calls && /^[0-9+*-]/) {
			# the first event's cost (a cost left out is 0, as in a line "* *")
			my $c = (split ' ')[$npos] // 0;
			my $callee = ($cfl // $fi) . ":$cfn";
			$selfcall{"$fi:$fn"} += $c if $callee eq "$fi:$fn";
			if ($calls == 2) {
				$zero_caller{"$fi:$fn"} = 1;
				$zero_callee{$callee} = 1;
			}
			$calls = 0; $cfl = undef;
		}
		elsif (/^(ob|cob|jfi|jfn)=(.*)/) {
			my ($tag, $v) = ($1, $2);
			$id->($tag =~ /ob/ ? "ob" : $tag =~ /fi/ ? "fl" : "fn", $v);
		}
	}
}

my ($checked, $bad, $skipped, $recursive, $zero) = (0, 0, 0, 0, 0);
my %seen;
for my $list ("functions", "functions_by_inclusive") {
	for my $f (@{$doc->{$list}}) {
		my $k = "$f->{file}:$f->{name}";
		next if $seen{$k}++;
		my $want_self = $self->{$k} // 0;
		$want_self += $self->{"$_:$f->{name}"} // 0 for keys %{$fifiles{$k} // {}};
		$checked++;
		if ($zero_caller{$k} || $zero_callee{$k}) {
			$zero++;
			next;
		}
		if ($want_self != $f->{self}) {
			print "not ok - $name: self of '$k': cgjit $f->{self}, callgrind_annotate $want_self\n";
			$bad++;
			next;
		}
		if ($f->{in_cycle} || %{$fifiles{$k} // {}}) {
			$skipped++;
			next;
		}
		$recursive++ if $f->{self_calls};
		my $want_incl = $incl->{$k} // 0;
		$want_incl -= $selfcall{$k} // 0 if $f->{self_calls};
		# a function nobody calls: callgrind_annotate's sum of its lines and calls out
		if ($want_incl != $f->{inclusive}) {
			print "not ok - $name: inclusive of '$k': cgjit $f->{inclusive}, callgrind_annotate $want_incl"
				. ($f->{self_calls} ? " (minus self-calls)" : "") . "\n";
			$bad++;
		}
	}
}
print $bad ? "not ok - $name: $bad of $checked functions differ from callgrind_annotate\n"
	   : "ok - $name: report equals callgrind_annotate for $checked functions (inclusive: "
	     . ($checked - $skipped) . " compared, $recursive of them less their self-calls; $skipped on a cycle or with fi= lines"
	     . ($zero ? "; $zero with calls=0 lines not compared" : "") . ")\n";

# The default report folds name'N (a part of only digits after the first) into name: its
# self cost is the sum of callgrind_annotate's over the name and its copies, in the file of
# their fn= line and the fi= files callgrind_annotate splits them into.
sub fold_name {
	my @p = split /'/, $_[0], -1;
	return join "'", $p[0], grep { !/^\d+$/ } @p[1 .. $#p];
}
my %folded_self;
for my $k (keys %$self) {
	my ($file, $fn) = $k =~ /^(.*?):(.*)$/ or next;
	$folded_self{"$file:" . fold_name($fn)} += $self->{$k};
}
# a fi= piece "FI:name" belongs to the function "FL:name" it was written under
for my $k (keys %fifiles) {
	my ($file, $fn) = $k =~ /^(.*?):(.*)$/ or next;
	for my $fi (keys %{$fifiles{$k}}) {
		my $piece = $self->{"$fi:$fn"} // 0;
		$folded_self{"$file:" . fold_name($fn)} += $piece;
		$folded_self{"$fi:" . fold_name($fn)} -= $piece;
	}
}
my ($fchecked, $fbad, $fcopies) = (0, 0, 0);
for my $f (@{$folded->{functions}}) {
	my $k = "$f->{file}:$f->{name}";
	next if $zero_caller{$k} || $zero_callee{$k};
	$fchecked++;
	$fcopies++ if grep { /^\Q$f->{file}:$f->{name}\E'\d+(?:'|$)/ } keys %$self;
	my $want = $folded_self{$k} // 0;
	if ($want != $f->{self}) {
		print "not ok - $name: folded self of '$k': cgjit $f->{self}, callgrind_annotate summed over copies $want\n";
		$fbad++;
	}
}
print $fbad ? "not ok - $name: $fbad of $fchecked folded functions differ from callgrind_annotate\n"
	    : "ok - $name: folded report equals callgrind_annotate summed over recursion copies for $fchecked functions ($fcopies with copies)\n";

# --jit-only: the JIT functions alone, as many as there are (up to 25), at their self cost
my ($jchecked, $jbad) = (0, 0);
my @jl = @{$jit_doc->{functions}};
my $njit = $jit_doc->{kinds}{jit}{functions};
if (grep { !$_->{jit} } @jl) {
	print "not ok - $name: report --jit-only lists a function that is not JIT\n";
	$jbad++;
}
if (@jl != ($njit < 25 ? $njit : 25) || $jit_doc->{totals}{$jit_doc->{event}} != $doc->{totals}{$doc->{event}}) {
	print "not ok - $name: report --jit-only lists " . scalar(@jl) . " of $njit JIT functions, or changed the totals\n";
	$jbad++;
}
for my $f (@jl) {
	my $k = "$f->{file}:$f->{name}";
	next if $zero_caller{$k} || $zero_callee{$k};
	my $want = $self->{$k} // 0;
	$want += $self->{"$_:$f->{name}"} // 0 for keys %{$fifiles{$k} // {}};
	$jchecked++;
	if ($want != $f->{self}) {
		print "not ok - $name: --jit-only self of '$k': cgjit $f->{self}, callgrind_annotate $want\n";
		$jbad++;
	}
}
print $jbad ? "not ok - $name: report --jit-only differs\n"
	    : "ok - $name: report --jit-only lists $jchecked JIT functions only (of $njit), each at callgrind_annotate's self cost\n";
