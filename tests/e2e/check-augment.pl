#!/usr/bin/perl
# check-augment.pl - checks an augmented profile against its input, independently of
# cgjit's code: cgcheck (kcachegrind's identity rules) and callgrind_annotate read the
# files, and the expected JIT costs are computed here from the input and the maps.
#
# usage: check-augment.pl [--bias N] CGCHECK IN OUT MAP-OR-JITDUMP...   (IN and OUT plain text)
# Prints one "ok"/"not ok" line per check; exits 1 if any failed. With a jitdump it also
# checks the line of every JIT cost line against the dump's DEBUG_INFO rows (debug
# addresses minus --bias) and the ELF files' code against the dump's CODE_LOAD bytes.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use JitDump;

my $bias = 0;
if (@ARGV && $ARGV[0] eq '--bias') { shift; $bias = hex(shift); }
my ($cgcheck, $in, $out, @maps) = @ARGV;
die "usage: $0 [--bias N] CGCHECK IN OUT MAP...\n" unless @maps;
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

# Map entries in order; the later entry wins for an address (cgjit's documented rule), and
# a jitdump entry wins over a map entry.
my @syms;    # [start, end, name, order, load]
my @loads;
for my $m (@maps) {
	my $magic = '';
	if (open(my $z, '-|', 'zstd', '-q', '-dcf', $m)) { binmode $z; read($z, $magic, 4); close $z; }
	if ($magic eq 'DTiJ' || $magic eq 'JiTD') {
		my @l = JitDump::read_dump($m);
		push @loads, @l;
		push @syms, [$_->{start}, $_->{start} + $_->{size}, $_->{name}, 1e9 + scalar @syms, $_] for @l;
		next;
	}
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
sub is_jit_object {
	my ($o) = @_;
	$o =~ s{.*/}{};
	return $map_base{$o} || $o =~ /^jit-\d+\.dump(?:\.g\d+)?\.elf$/;
}
sub owner_sym {   # the winning entry for an address
	my ($a) = @_;
	my $best;
	for my $s (@by_start) {
		last if $s->[0] > $a;
		$best = $s if $a < $s->[1] && (!$best || $s->[3] > $best->[3]);
	}
	return $best;
}

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
		next if $c eq 'call';
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
	next unless is_jit_object($obj);
	my $base = $fn;
	if (!$symname{$base}) {
		for (my $i = rindex($fn, "'"); $i > 0; $i = rindex($fn, "'", $i - 1)) {
			if ($symname{substr($fn, 0, $i)}) { $base = substr($fn, 0, $i); last; }
		}
	}
	addv($actual{"$part\t$base"} //= [], $c);
	my ($first) = split / /, $c;
	$annot_expect{$fn} += $first;
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
	# entries for fi= files come without the [object]
	next unless /^\s*([\d,]+)(?: \(\s*[\d.]+%\))?\s+(.*?)(?: \[([^\]]*)\])?\s*$/;
	my ($cost, $key, $obj) = ($1, $2, $3);
	next if defined $obj && !is_jit_object($obj);
	$cost =~ tr/,//d;
	$annot{$key} += $cost;
}
# callgrind_annotate keys a function by file:name and splits it per fi= file (jitdump
# line tables): add up the entries "FILE:name" of each JIT function over its files.
my %annot_by_fn;
for my $fn (keys %annot_expect) {
	for my $k (keys %annot) {
		$annot_by_fn{$fn} += $annot{$k} if substr($k, -length($fn) - 1) eq ":$fn";
	}
}
my @adiff;
for my $k (keys %annot_expect) {
	next unless $annot_expect{$k};
	my $got = $annot_by_fn{$k} // 'missing';
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
	my $key = "$part\t$fn\t$file\t$obj";
	if (is_jit_object($obj)) {
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

# 7. with a jitdump: every cost line of JIT code shows the file and line of its address
# in the DEBUG_INFO rows of the load that owns it (rows shifted by --bias)
if (@loads && @addrs && grep { @{$_->{rows}} } @loads) {
	my (undef, @lines) = run($cgcheck, '--lines', $out);
	my ($n, @bad) = (0);
	for (@lines) {
		chomp;
		my ($part, $addr, $line, $file, $fn, $obj) = split /\t/;
		next unless is_jit_object($obj);
		my $s = owner_sym(hex($addr));
		next unless $s && $s->[4] && @{$s->[4]{rows}};
		my @rows = sort { $a->[0] <=> $b->[0] }
			   map { [$_->[0] - $s->[0] >= $bias ? $_->[0] - $bias : $s->[0], $_->[1], $_->[2]] } @{$s->[4]{rows}};
		my $row = $rows[0];
		for (@rows) { $row = $_ if $_->[0] <= hex($addr); }
		$n++;
		push @bad, "$addr in $fn: $file:$line, the dump says $row->[2]:$row->[1]"
			if $row->[1] != $line || $row->[2] ne $file;
	}
	check(!@bad && $n > 0, "$n JIT cost lines carry the file and line of the dump's DEBUG_INFO rows"
	      . (@bad ? ": " . join('; ', @bad[0 .. ($#bad > 3 ? 3 : $#bad)]) : ""));
}

# 8. with a jitdump: objdump -d of the ELF files (the ob= of the JIT functions) at each
# load's address shows exactly the bytes of its CODE_LOAD
if (@loads) {
	my %elf;
	for (@list_out) { my (undef, undef, undef, $obj) = split /\t/; $elf{$obj} = 1 if $obj =~ /\.elf$/; }
	my %seen;
	my ($n, @bad) = (0);
	for my $l (@loads) {
		next if $seen{"$l->{start}:$l->{size}:$l->{name}"}++;
		# code a later load replaced at its start is no function of the output
		my $o = owner_sym($l->{start});
		next unless $o && $o->[4] && $o->[4] == $l;
		my $want = unpack('H*', $l->{code});
		my $found = 0;
		for my $e (sort keys %elf) {
			my ($rc, @d) = run('objdump', '-d', '-z', sprintf('--start-address=0x%x', $l->{start}),
					   sprintf('--stop-address=0x%x', $l->{start} + $l->{size}), $e);
			my $got = join('', map { /^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)/ ? $1 : '' } @d);
			$got =~ tr/ //d;
			if ($got eq $want) { $found = 1; last; }
		}
		$n++;
		push @bad, sprintf("%s at 0x%x", $l->{name}, $l->{start}) unless $found;
	}
	check(!@bad && $n > 0 && scalar(keys %elf) > 0, "objdump -d of the ELF files shows each of $n CODE_LOADs' bytes at its address"
	      . (@bad ? ": missing " . join('; ', @bad[0 .. ($#bad > 3 ? 3 : $#bad)]) : ""));
}

exit($failed ? 1 : 0);
