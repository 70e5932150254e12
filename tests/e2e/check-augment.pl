#!/usr/bin/perl
# check-augment.pl - checks an augmented profile against its input, independently of
# cgjit's code: cgcheck (kcachegrind's identity rules) and callgrind_annotate read the
# files, and the expected JIT costs are computed here from the input and the maps.
#
# usage: check-augment.pl CGCHECK IN OUT MAP...   (IN and OUT plain text)
# Prints one "ok"/"not ok" line per check; exits 1 if any failed.
use strict;
use warnings;

my ($cgcheck, $in, $out, @maps) = @ARGV;
die "usage: $0 CGCHECK IN OUT MAP...\n" unless @maps;
my $failed = 0;
my $name = $out;

sub check {
	my ($ok, $what) = @_;
	print(($ok ? "ok" : "not ok") . " - $name: $what\n");
	$failed++ unless $ok;
}

sub run {
	my @cmd = @_;
	open(my $fh, '-|', @cmd) or die "cannot run @cmd: $!";
	my @lines = <$fh>;
	close $fh;
	return ($? >> 8, @lines);
}

# Map entries in order; the later entry wins for an address (cgjit's documented rule).
my @syms;    # [start, end, name, order]
for my $m (@maps) {
	open(my $fh, '<', $m) or die "$m: $!";
	while (my $l = <$fh>) {
		$l =~ s/\r?\n$//;
		next unless $l =~ /^\s*(?:0[xX])?([0-9a-fA-F]+)\s+(?:0[xX])?([0-9a-fA-F]+)\s+(.*?)\s*$/;
		my ($s, $z, $n) = (hex($1), hex($2), $3);
		push @syms, [$s, $s + $z, $n, scalar @syms] if $z > 0;
	}
}
my %symname = map { $_->[2] => 1 } @syms;
my @by_start = sort { $a->[0] <=> $b->[0] } @syms;
my %owner_cache;
sub owner {
	my ($a) = @_;
	return $owner_cache{$a} if exists $owner_cache{$a};
	my $best;
	for my $s (@by_start) {
		last if $s->[0] > $a;
		$best = $s if $a < $s->[1] && (!$best || $s->[3] > $best->[3]);
	}
	return $owner_cache{$a} = $best ? $best->[2] : undef;
}
my %map_base = map { (my $b = $_) =~ s{.*/}{}; $b => 1 } @maps;

sub addv { my ($acc, $c) = @_; my @c = split / /, $c; $acc->[$_] += $c[$_] for 0 .. $#c; }
sub vstr { my ($v) = @_; my @v = @$v; pop @v while @v > 1 && !$v[-1]; return join(' ', map { $_ // 0 } @v); }

# 1. the output passes the kcachegrind-rules checker (no split identity, ids, totals)
my ($rc, @err) = run($cgcheck, $out);
check($rc == 0, "cgcheck accepts the output (no split functions, ids defined once, totals add up)");

# 2. totals per event and part are those of the input
my ($rc1, @tin) = run($cgcheck, '--totals', $in);
my ($rc2, @tout) = run($cgcheck, '--totals', $out);
check($rc1 == 0 && join('', @tin) eq join('', @tout), "self cost totals per part and event equal the input's");

# 3. no address-named function of object ??? left inside a JIT range
my (undef, @list_out) = run($cgcheck, '--list', $out);
my @left;
for (@list_out) {
	my ($part, $fn, $file, $obj) = split /\t/;
	next unless $obj eq '???' && $fn =~ /^0x([0-9a-f]{16})(?:'|$)/;
	push @left, $fn if defined owner(hex($1));
}
check(!@left, "no pseudo-function left inside a JIT range" . (@left ? ": @left[0..($#left > 4 ? 4 : $#left)]" : ""));

# 4. each JIT symbol's self cost equals the input's cost on its addresses
my (undef, @list_in) = run($cgcheck, '--list', $in);
my (undef, @addrs) = run($cgcheck, '--addrs', $in);
my %expected;
if (@addrs) {
	for (@addrs) {
		chomp;
		my ($part, $addr, $fn, $c) = split /\t/;
		my $o = owner(hex($addr));
		# A line outside every range stays with the JIT function its block was entered at.
		$o //= owner(hex($1)) if $fn =~ /^0x([0-9a-f]{16})/;
		addv($expected{"$part\t$o"} //= [], $c) if defined $o;
	}
} else {
	for (@list_in) {
		chomp;
		my ($part, $fn, $file, $obj, $c) = split /\t/;
		next unless $obj eq '???' && $fn =~ /^0x([0-9a-f]{16})(?:'|$)/;
		my $o = owner(hex($1));
		addv($expected{"$part\t$o"} //= [], $c) if defined $o;
	}
}
my %actual;
my %annot_expect;   # "file:name" -> first-event self, summed over parts
for (@list_out) {
	chomp;
	my ($part, $fn, $file, $obj, $c) = split /\t/;
	(my $ob = $obj) =~ s{.*/}{};
	next unless $map_base{$ob};
	my $base = $fn;
	if (!$symname{$base}) {
		for (my $i = rindex($fn, "'"); $i > 0; $i = rindex($fn, "'", $i - 1)) {
			if ($symname{substr($fn, 0, $i)}) { $base = substr($fn, 0, $i); last; }
		}
	}
	addv($actual{"$part\t$base"} //= [], $c);
	my ($first) = split / /, $c;
	$annot_expect{($file eq '???' ? '???' : $file) . ":$fn"} += $first;
}
my @diff;
for my $k (sort(keys %expected), sort(keys %actual)) {
	my $e = vstr($expected{$k} // [0]);
	my $a = vstr($actual{$k} // [0]);
	push @diff, "$k: expected $e, got $a" if $e ne $a;
}
my $no_jit = !%expected && !%actual;   # e.g. a dump taken before any JIT code ran
check(!@diff && (scalar(keys %expected) > 0 || $no_jit), "each JIT symbol's self cost equals the input's cost in its address range ("
      . scalar(keys %expected) . " symbol/part pairs)" . (@diff ? ": " . join('; ', @diff[0 .. ($#diff > 3 ? 3 : $#diff)]) : ""));

# 5. callgrind_annotate reads the output and shows the JIT names with those self costs
my ($first_event, @summaries);
{
	open(my $fh, '<', $out) or die "$out: $!";
	while (<$fh>) {
		$first_event //= $1 if /^events:\s*(\S+)/;
		push @summaries, [split ' ', $1] if /^summary:\s*(.*)/;
	}
}
my ($arc, @ann) = run('callgrind_annotate', '--inclusive=no', '--threshold=100', "--show=$first_event", $out);
my %annot;
for (@ann) {
	next unless /^\s*([\d,]+)(?: \(\s*[\d.]+%\))?\s+(.*?) \[([^\]]*)\]\s*$/;
	my ($cost, $key, $obj) = ($1, $2, $3);
	(my $ob = $obj) =~ s{.*/}{};
	next unless $map_base{$ob};
	$cost =~ tr/,//d;
	$annot{$key} += $cost;
}
my @adiff;
for my $k (keys %annot_expect) {
	next unless $annot_expect{$k};
	my $got = $annot{$k} // 'missing';
	push @adiff, "$k: cgcheck $annot_expect{$k}, callgrind_annotate $got" if $got ne $annot_expect{$k};
}
check($arc == 0 && !@adiff && (scalar(keys %annot) > 0 || $no_jit), "callgrind_annotate shows the JIT functions with the same self costs ("
      . scalar(keys %annot) . " functions)" . (@adiff ? ": " . join('; ', @adiff[0 .. ($#adiff > 3 ? 3 : $#adiff)]) : ""));

# 6. no function's inclusive cost (self + calls to others) exceeds its part's total (or
# summary:, where callgrind counted a little more there, with cache simulation), unless the
# input already did: callgrind's call costs count recursive cycles more than once
# (Builtins_Call'2 in node). For a JIT function the input's figure is the sum over the
# pseudo-functions whose name or any of whose cost lines lie in its range (lines reached by
# a jump move to the symbol owning their address).
my %total;
for (@tout) { my ($p, $e, $v) = split /\t/; chomp $v; push @{$total{$p}}, $v; }
for my $p (keys %total) {
	my $s = $summaries[$p - 1] or next;
	for my $i (0 .. $#{$total{$p}}) { $total{$p}[$i] = $s->[$i] if ($s->[$i] // 0) > $total{$p}[$i]; }
}
my %contrib;   # "part\tpseudo-function" -> { symbol => 1 }
for (@addrs) {
	my ($part, $addr, $fn) = split /\t/;
	my $o = owner(hex($addr));
	$contrib{"$part\t$fn"}{$o} = 1 if defined $o;
}
my %in_incl;
# The bound counts the input's self-calls too: code a function reached by a jump can call
# the function back, which after the move is a call between two functions.
my (undef, @incl_in) = run($cgcheck, '--inclusive-all', $in);
for (@incl_in) {
	chomp;
	my ($part, $fn, $file, $obj, $c) = split /\t/;
	addv($in_incl{"$part\t$fn\t$file\t$obj"} //= [], $c);
	next unless $obj eq '???' && $fn =~ /^0x([0-9a-f]{16})/;
	my %to = %{$contrib{"$part\t$fn"} // {}};
	my $o = owner(hex($1));
	$to{$o} = 1 if defined $o;
	addv($in_incl{"$part\tjit\t$_"} //= [], $c) for keys %to;
}
my (undef, @incl) = run($cgcheck, '--inclusive', $out);
my @over;
for (@incl) {
	chomp;
	my ($part, $fn, $file, $obj, $c) = split /\t/;
	(my $ob = $obj) =~ s{.*/}{};
	my $key = "$part\t$fn\t$file\t$obj";
	if ($map_base{$ob}) {
		my $base = $fn;
		for (my $i = rindex($fn, "'"); !$symname{$base} && $i > 0; $i = rindex($fn, "'", $i - 1)) {
			$base = substr($fn, 0, $i);
		}
		$key = "$part\tjit\t$base";
	}
	my @c = split / /, $c;
	for my $i (0 .. $#c) {
		my $limit = $total{$part}[$i];
		my $was = $in_incl{$key} ? ($in_incl{$key}[$i] // 0) : 0;
		$limit = $was if $was > $limit;
		push @over, "$fn ($c[$i] > $limit)" if $c[$i] > $limit;
	}
}
check(!@over, "no function's inclusive cost exceeds the total, unless the input's already did" . (@over ? ": @over[0..($#over > 3 ? 3 : $#over)]" : ""));

exit($failed ? 1 : 0);
