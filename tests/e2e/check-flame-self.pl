#!/usr/bin/perl
# check-flame-self.pl [options] CGJIT PROFILE FOLDED [SVG]: a function's flame graph frames
# carry its self cost. FOLDED is `cgjit flamegraph --format folded` of the plain file
# PROFILE, SVG the SVG made with the same options. The self cost per function comes from
# `cgjit report --format json` (it folds too) and from callgrind_annotate --inclusive=no
# (cg_annotate for a cachegrind file): independent consumers of the file. Functions are
# compared by name (the last frame of a folded stack; callgrind_annotate's "file:name"
# split at a file the profile names; name'N recursion copies folded to name as flamegraph
# does, and names escaped as folded output escapes them). drawn(f) is the sum of the
# folded values of stacks ending in f. docs/flamegraph.md section 1 gives the bound: each
# frame's own cost is off by less than one unit, and cost cut into elision frames
# ("[elided]") is missing from the functions it came from. So, for every function:
#   drawn(f) - S(f) < L(f), the folded lines of f (a frame that rounds to 0 draws less);
#   S(f) - drawn(f) < n(f) + E + N, with n(f) f's frames in the SVG, E the elision
#   frames' total and N the number of frames (each may hide less than one unit of elided
#   cost that rounded to nothing);
# and the folded values add up to the report's total. Without SVG the second bound is
# not checked. Prints "ok - ..."/"not ok - ..." lines and, on a "# " line, three shares of
# the total: drawn under another function's name (sum over functions of drawn - S where
# positive), in elision frames (an older cgjit's "[other]" counted as one), and sum over
# functions of |drawn - S| / 2 (which counts half of the elided cost).
# Options: --event E, --part N (no callgrind_annotate then: it sums all parts),
# --measure (print only the share: works on any folded file, e.g. an older cgjit's),
# --focus F [--focus-object O] [--focus-file L] (FOLDED is `flamegraph` with the same
# options: the self costs are `report --focus F`'s, the
# total the focus's; callgrind_annotate has no focus and is not asked), --jit-only (FOLDED
# is `flamegraph --jit-only`: every frame is a JIT function, "[not JIT]" or "[elided]",
# and the JIT functions are compared, with report and callgrind_annotate).
use strict;
use warnings;
use Cwd qw(abs_path);
use FindBin;
use lib $FindBin::Bin;
use Annotate;
use Getopt::Long;
use JSON::XS;

my ($event, $part, $measure, $focus, $focus_object, $focus_file, $jit_only) = (undef, undef, 0, undef, undef, undef, 0);
GetOptions("event=s" => \$event, "part=i" => \$part, "measure" => \$measure, "focus=s" => \$focus,
	   "focus-object=s" => \$focus_object, "focus-file=s" => \$focus_file, "jit-only" => \$jit_only)
	or die "bad options\n";
my ($cgjit, $profile, $folded, $svg) = @ARGV;
die "usage: $0 [--event E] [--part N] [--measure] CGJIT PROFILE FOLDED [SVG]\n" unless defined $folded;
$profile = abs_path($profile);
(my $label = $profile) =~ s{.*/}{};
$label .= " --part $part" if defined $part;
$label .= " --event $event" if defined $event;
$label .= " --focus '$focus'" if defined $focus;
$label .= " --jit-only" if $jit_only;
my $elided = "[elided]";

# flamegraph's name rules, written again: callgrind's --separate-recs copies name'N are
# name (a part of digits after the first is a copy number), ';' is the frame separator,
# control characters are spaces, an empty name is "?"
sub fold_name {
	my @parts = split /'/, $_[0], -1;
	my $first = shift @parts;
	return join "'", $first, grep { !/^\d+$/ } @parts;
}
sub folded_name {
	my $s = fold_name($_[0]);
	$s =~ tr/;/:/;
	$s =~ s/[\x00-\x1f\x7f]/ /g;
	return length $s ? $s : "?";
}

# the folded stacks: drawn cost and lines per last frame
my (%drawn, %lines, $sum, %frame_names);
open(my $fh, "<", $folded) or die "$folded: $!\n";
while (<$fh>) {
	chomp;
	/^(.*) (\d+)$/ or die "$folded:$.: not a folded line: $_\n";
	my ($stack, $v) = ($1, $2);
	my $last = $stack =~ /;([^;]*)$/ ? $1 : $stack;
	$last = $elided if $last eq "[other]";   # an older cgjit's root self cost
	$drawn{$last} += $v;
	$lines{$last}++;
	$sum += $v;
	$frame_names{$_} = 1 for split /;/, $stack;
}
close $fh;
$sum //= 0;

# self cost per name from cgjit report
my @ropt = ("-n", "1000000000");
push @ropt, "-e", $event if defined $event;
push @ropt, "--part", $part if defined $part;
push @ropt, "--focus", $focus if defined $focus;
push @ropt, "--focus-object", $focus_object if defined $focus_object;
push @ropt, "--focus-file", $focus_file if defined $focus_file;
my $json = do {
	open(my $r, "-|", $cgjit, "report", "-f", "json", @ropt, $profile) or die "$cgjit: $!\n";
	local $/;
	<$r>;
};
my $doc = decode_json($json);
my $ev = $event // $doc->{event};
my $total = $doc->{totals}{$ev};
my (%self, %jit);
for my $f (@{$doc->{functions}}) {
	my $k = folded_name($f->{name});
	$self{$k} += $f->{self};
	$jit{$k} = 1 if $f->{jit};
}

my %names = (%self, %drawn);
if ($jit_only) {
	# only JIT functions are drawn: the others are no function's frames to compare
	my $not_jit = "[not JIT]";
	my @other = grep { $_ ne $elided && $_ ne $not_jit && !$jit{$_} } sort keys %frame_names;
	print +(@other ? "not ok" : "ok") . " - $label: every frame is a JIT function, $not_jit or $elided"
		. (@other ? " (not: '" . join("', '", @other[0 .. ($#other < 2 ? $#other : 2)]) . "')" : "") . "\n";
	delete $names{$_} for grep { !$jit{$_} } keys %names;
	$total = $sum;   # the cost under JIT frames, not the profile's
}

# the shares of the total drawn under another name, and elided
my ($abs, $more) = (0, 0);
for my $k (keys %names) {
	next if $k eq $elided;
	my $d = ($drawn{$k} // 0) - ($self{$k} // 0);
	$abs += abs($d);
	$more += $d if $d > 0;
}
my $pct = sub { $total ? sprintf("%.4f%%", 100 * $_[0] / $total) : "0%" };
printf "# %s: %s drawn under another function's name, %s elided, sum |drawn - self| / 2 = %s\n",
	$label, $pct->($more), $pct->($drawn{$elided} // 0), $pct->($abs / 2);
if ($measure) {
	# the functions drawn furthest from their self cost
	my @worst = sort { abs(($drawn{$b} // 0) - ($self{$b} // 0)) <=> abs(($drawn{$a} // 0) - ($self{$a} // 0)) || $a cmp $b }
		grep { $_ ne $elided } keys %names;
	my @jit = grep { $jit{$_} } @worst;
	printf "#   %s%s: self %d, drawn %d\n", $jit{$_} ? "JIT " : "", $_, $self{$_} // 0, $drawn{$_} // 0
		for @worst[0 .. ($#worst < 2 ? $#worst : 2)], @jit[0 .. ($#jit < 1 ? $#jit : 1)];
	exit 0;
}

print +($sum == $total ? "ok" : "not ok") . " - $label: folded values add up to the report's total ($sum, $total)\n"
	unless $jit_only;

# frames per name in the SVG, and how many there are
my (%frames, $nframes);
if (defined $svg) {
	open(my $s, "<", $svg) or die "$svg: $!\n";
	local $/;
	my $text = <$s>;
	while ($text =~ m{<g class="f" [^>]*data-d="(\d+)"[^>]*><title>([^\n<]*)}g) {
		my ($depth, $t) = ($1, $2);
		$nframes++;
		next unless $depth;   # the root, "all"
		$t =~ s/&lt;/</g; $t =~ s/&gt;/>/g; $t =~ s/&quot;/"/g; $t =~ s/&amp;/&/g;
		$frames{folded_name($t)}++;
	}
}

# every function: drawn within the bound
my ($bad, $n, $njit, $max_over, $max_under) = (0, 0, 0, 0, 0);
my $e = $drawn{$elided} // 0;
for my $k (sort keys %names) {
	next if $k eq $elided;
	my ($d, $s) = ($drawn{$k} // 0, $self{$k} // 0);
	$n++;
	$njit++ if $jit{$k};
	my ($over, $under) = ($d - $s, $s - $d);
	$max_over = $over if $over > $max_over;
	$max_under = $under if $under > $max_under;
	# under a focus the report's self cost is the exact share rounded to a unit: one more
	if ($over > 0 && $over >= ($lines{$k} // 0) + (defined $focus ? 1 : 0)) {
		print "not ok - $label: '$k' drawn $d, self $s: more than its $lines{$k} lines can round up\n";
		$bad++;
	} elsif (defined $svg && $under > 0 && $under >= ($frames{$k} // 0) + $e + $nframes + (defined $focus ? 1 : 0)) {
		print "not ok - $label: '$k' drawn $d, self $s: less than its " . ($frames{$k} // 0)
			. " frames' rounding and the $e elided\n";
		$bad++;
	}
}
print +($bad ? "not ok" : "ok") . " - $label: $n functions ($njit JIT) drawn at their self cost"
	. " (largest excess $max_over, largest shortfall $max_under"
	. (defined $svg ? "; $nframes frames, $e elided" : "") . ")\n";

# the same against callgrind_annotate / cg_annotate (it sums all parts, and has no focus)
exit 0 if defined $part || defined $focus;
my %files;
{
	open(my $p, "<", $profile) or die "$profile: $!\n";
	my %ids;
	while (<$p>) {
		next unless /^(?:fl|fi|fe|cfi|cfl)=(?:\((\d+)\))?\s*(.*?)\r?$/;
		my ($id, $name) = ($1, $2);
		if (defined $id) {
			$ids{$id} = $name if length $name;
			$name = $ids{$id};
		}
		$files{$name} = 1 if defined $name;
	}
}
my $cachegrind = $doc->{format} eq "cachegrind";
my $tool = $cachegrind ? "cg_annotate --threshold=0" : "callgrind_annotate";
my @self;   # ["file:name", self cost]
if ($cachegrind) {
	# in an empty directory: cg_annotate strips the current directory from names
	my (undef, @annotated) = Annotate::lines(undef, $profile, "cg_annotate", "--threshold=0",
						 "--show=$ev", "--sort=$ev");
	my ($in_list, $prev);
	for (@annotated) {
		chomp;
		if (/^-+$/) {
			$in_list = defined $prev && $prev =~ /file:function$/ ? 1 : $in_list ? 2 : 0;
			$prev = $_;
			next;
		}
		$prev = $_;
		next unless $in_list && $in_list == 1;
		# no " [object]" after the name (a name can end in "[clone .isra.0]")
		next unless /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*)$/;
		push @self, [$2, $1 =~ tr/,//dr];
	}
} else {
	# (callgrind_annotate 3.19 warns about the header lines of parts after the first, and
	# sums their costs: its warnings are not ours)
	my $t = Annotate::table($profile, $ev);
	push @self, [$_, $t->{$_}{self}] for keys %$t;
}
my %ann;
for (@self) {
	my ($key, $c) = @$_;
	# "file:name": the longest prefix that is a file of the profile
	my $name;
	for (my $i = length($key); ($i = rindex($key, ":", $i - 1)) > 0;) {
		if ($files{substr($key, 0, $i)}) {
			$name = substr($key, $i + 1);
			last;
		}
	}
	$name //= $key =~ /^[^:]*:(.*)$/ ? $1 : $key;
	$ann{folded_name($name)} += $c;
}
# callgrind_annotate takes the cost line after "calls=0" (a call begun in an earlier part)
# as the caller's self cost (docs/reports.md): those callers are not compared
my %zero;
{
	open(my $p, "<", $profile) or die;
	my (%fnid, $fn);
	while (<$p>) {
		if (/^fn=(?:\((\d+)\))?\s*(.*?)\r?$/) {
			$fn = defined $1 ? (length $2 ? ($fnid{$1} = $2) : $fnid{$1}) : $2;
		} elsif (/^cfn=\((\d+)\)\s*(.+?)\r?$/) {
			$fnid{$1} = $2;
		} elsif (/^calls=0 / && defined $fn) {
			$zero{folded_name($fn)} = 1;
		}
	}
}
my ($abad, $an, $skipped) = (0, 0, 0);
for my $k (sort keys %names) {
	next if $k eq $elided;
	if ($zero{$k}) {
		$skipped++;
		next;
	}
	my ($d, $s) = ($drawn{$k} // 0, $ann{$k} // 0);
	$an++;
	my $over = $d - $s;
	if (($over > 0 && $over >= ($lines{$k} // 0))
	    || (defined $svg && -$over > 0 && -$over >= ($frames{$k} // 0) + $e + $nframes)) {
		print "not ok - $label: '$k' drawn $d, callgrind_annotate self $s\n" if $abad < 10;
		$abad++;
	}
}
print +($abad ? "not ok" : "ok") . " - $label: $an functions drawn at the self cost of $tool"
	. ($skipped ? " ($skipped callers of calls=0 lines not compared)" : "") . "\n";
