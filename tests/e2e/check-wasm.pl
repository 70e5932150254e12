#!/usr/bin/perl
# check-wasm.pl - the WebAssembly functions of an augmented node profile against the
# module's source, V8's perf map and the profile's input (tests/e2e/wasm.sh).
#
#   check-wasm.pl [--mask N] CGCHECK WAT MAP-OR-JITDUMP IN OUT
#
# WAT is the module's text (samples/src/wasm.wat), MAP-OR-JITDUMP the perf map or the
# jitdump (read by JitDump.pm; zstd too) of the run, IN the profile before augment, OUT
# after. V8 names compiled wasm code JS:NAME-INDEX-TIER
# (docs/formats.md 4.2); NAME comes from the module's name section, which wat2wasm
# --debug-names fills from the functions' $ids, and V8 writes wasm-function[INDEX] for a
# function without one. This script reads the function names and indices from WAT itself,
# and with --mask N (node's --wasm-tier-mask-for-testing) expects function i in TurboFan
# when bit i is set and in Liftoff otherwise. It checks that
#   1. every function of WAT has a map entry (or code load), named as above, and no other wasm entry exists;
#   2. with --mask, each entry has the expected tier; without, both tiers occur;
#   3. each wasm function of OUT ('N parts added up) has exactly the self cost that IN has
#      at the addresses of its map entries (cgcheck --addrs of IN: the cost lines of
#      object ???, wherever callgrind put them), which is not 0, and no file (V8 gives
#      none for wasm);
#   4. cgcheck accepts OUT.
# Prints one "ok - ..." or "not ok - ..." line per check.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use JitDump;
no warnings "portable";   # 64-bit addresses through hex()

my $mask;
if (@ARGV && $ARGV[0] eq '--mask') {
	shift;
	$mask = shift;
}
@ARGV == 5 or die "usage: check-wasm.pl [--mask N] CGCHECK WAT MAP-OR-JITDUMP IN OUT\n";
my ($cgcheck, $wat, $map, $in, $out) = @ARGV;

sub ok { my ($c, $what) = @_; print(($c ? "ok" : "not ok"), " - $what\n"); }

# Functions in the order of the module's function index space (no imports in this module).
my @fn;
open(my $w, '<', $wat) or die "$wat: $!\n";
while (<$w>) {
	s/;;.*//;
	while (/\(func\b(\s+\$([^\s()]+))?/g) {
		push @fn, defined $2 ? $2 : 'wasm-function[' . scalar(@fn) . ']';
	}
}
close $w;
ok(@fn > 0, "$wat: " . scalar(@fn) . " functions");

# V8's wasm entries in the map or the dump: JS:NAME-INDEX-TIER.
my @syms;
if ($map =~ /\.dump(\.zst)?$/) {
	@syms = map { [ $_->{start}, $_->{size}, $_->{name} ] } JitDump::read_dump($map);
} else {
	open(my $m, '<', $map) or die "$map: $!\n";
	while (<$m>) {
		chomp;
		push @syms, [ hex $1, hex $2, $3 ] if /^(?:0x)?([0-9a-fA-F]+) (?:0x)?([0-9a-fA-F]+) (.*)$/;
	}
	close $m;
}
my (%entry, @ranges);
for my $s (@syms) {
	my ($start, $size, $name) = @$s;
	next unless $name =~ /^JS:(.+)-(\d+)-(liftoff|turbofan)$/;
	push @{ $entry{$name}{ranges} }, [ $start, $start + $size ];
	@{ $entry{$name} }{qw(fname idx tier)} = ($1, $2, $3);
	push @ranges, [ $start, $start + $size, $name ];
}

# 1. and 2.
my %tiers;
for my $i (0 .. $#fn) {
	my @e = grep { $entry{$_}{idx} == $i } keys %entry;
	ok(@e >= 1 && !grep({ $entry{$_}{fname} ne $fn[$i] } @e),
	   "function $i of the module: map entries (" . join(', ', sort @e) . ") named $fn[$i]");
	for my $e (@e) {
		$tiers{ $entry{$e}{tier} }++;
		next unless defined $mask;
		my $want = ($mask >> $i) & 1 ? 'turbofan' : 'liftoff';
		ok($entry{$e}{tier} eq $want, "$e: $want, as --wasm-tier-mask-for-testing=$mask says");
	}
}
my @stray = grep { $entry{$_}{idx} > $#fn } keys %entry;
ok(!@stray, "no wasm entry beyond the module's functions" . (@stray ? ": @stray" : ""));
ok(defined $mask || ($tiers{liftoff} && $tiers{turbofan}),
   "both tiers: " . join(', ', map { "$_ $tiers{$_}" } sort keys %tiers));

# 3. The input's self cost at each wasm function's addresses.
my %want;
open(my $a, '-|', $cgcheck, '--addrs', $in) or die "cgcheck --addrs: $!\n";
while (<$a>) {
	chomp;
	my ($part, $addr, $func, @cost) = split /\t/;
	next if !@cost || $cost[0] eq 'call';
	my $x = hex $addr;
	for my $r (@ranges) {
		if ($x >= $r->[0] && $x < $r->[1]) {
			$want{ $r->[2] } += $cost[0];
			last;
		}
	}
}
close $a or die "cgcheck --addrs $in failed\n";

my (%got, %file);
open(my $l, '-|', $cgcheck, '--list', $out) or die "cgcheck --list: $!\n";
while (<$l>) {
	chomp;
	my ($part, $name, $file, $obj, $self) = split /\t/;
	(my $base = $name) =~ s/'\d+$//;
	next unless $entry{$base};
	my @c = split / /, $self;
	$got{$base} += $c[0];
	$file{$base}{$file} = 1;
}
my $listed = close $l;

for my $e (sort keys %entry) {
	my ($g, $x) = ($got{$e} // 0, $want{$e} // 0);
	ok($g == $x && $x > 0, "$e: self cost $g in the output = $x at its addresses in the input");
	my @f = sort keys %{ $file{$e} || {} };
	ok("@f" eq '???', "$e: no file (V8 gives none for wasm): '@f'");
}

# 4.
ok($listed, "cgcheck accepts $out");
