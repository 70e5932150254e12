#!/usr/bin/perl
# check-augment.pl - checks an augmented profile against its input, independently of
# cgjit's code: cgcheck (kcachegrind's identity rules) and callgrind_annotate read the
# files, and the expected JIT costs are computed here from the input and the maps.
#
# usage: check-augment.pl [--bias N] [--root DIR] [--path-map OLD=NEW]... [--no-objdump] CGCHECK IN OUT MAP-OR-JITDUMP...
# (IN and OUT plain text). Prints one "ok"/"not ok" line per check; exits 1 if any failed.
# With a jitdump it also checks the line of every JIT cost line against the dump's
# DEBUG_INFO rows (debug addresses minus --bias) and the ELF files' code against the dump's
# CODE_LOAD bytes. --root (an absolute path, as the names spell it) and --path-map are
# those OUT was augmented with: the expected names and files are mapped by PathMap.pm.
# --no-objdump leaves out check 8 (one objdump -d per ELF file, its lines split by load),
# for a dump whose code an earlier run checked.
use strict;
use warnings;
no warnings "portable";   # addresses above 2^32 in hex(): 64-bit perl only
use FindBin;
use lib $FindBin::Bin;
use Annotate;
use AuditLog;
use JitDump;
use PathMap;

my ($bias, $objdump) = (0, 1);
my @pairs;
while (@ARGV && $ARGV[0] =~ /^--(bias|root|path-map|no-objdump)$/) {
	if ($ARGV[0] eq '--no-objdump') { shift; $objdump = 0; next; }
	my ($opt, $v) = (shift, shift);
	if ($opt eq '--bias') { $bias = hex($v); }
	elsif ($opt eq '--root') { push @pairs, [$v, '']; }
	else { $v =~ /^([^=]+)=(.*)$/ or die "--path-map takes OLD=NEW\n"; push @pairs, [$1, $2]; }
}
my $pm = PathMap->new(@pairs);
my ($cgcheck, $in, $out, @maps) = @ARGV;
die "usage: $0 [--bias N] [--root DIR] [--path-map OLD=NEW]... CGCHECK IN OUT MAP...\n" unless @maps;
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
	# a RaptorJIT auditlog (no magic: a msgpack map whose first key is "type"): its traces
	# are loads with code, as a jitdump's
	if ($magic =~ /^[\x81-\x8f](?:\xa4ty|\xd9\x04t|\xda\x00\x04)/) {
		my @l = AuditLog::loads($m);
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
# --root, --path-map: every name as cgjit writes it (control bytes as '_'), its path mapped
unless ($pm->empty) {
	for (@syms) {
		(my $n = $_->[2]) =~ s/[\x00-\x1f\x7f]/_/g;
		$_->[2] = $pm->name($n) if $n ne '';
	}
}
my %symname = map { $_->[2] => 1 } @syms;
my @by_start = sort { $a->[0] <=> $b->[0] } @syms;
# The address space cut where an entry starts or ends, each piece with the entry that wins
# it (the latest): [start, end, index in @syms], in address order.
my @ranges;
{
	my (%start_at, %end_at);
	for my $i (0 .. $#syms) {
		next unless $syms[$i][1] > $syms[$i][0];
		push @{$start_at{$syms[$i][0]}}, $i;
		push @{$end_at{$syms[$i][1]}}, $i;
	}
	my (%active, $prev, $win);
	for my $b (sort { $a <=> $b } keys %{{ map { $_ => 1 } keys(%start_at), keys(%end_at) }}) {
		if (defined $win) {
			if (@ranges && $ranges[-1][1] == $prev && $ranges[-1][2] == $win) { $ranges[-1][1] = $b; }
			else { push @ranges, [$prev, $b, $win]; }
		}
		delete $active{$_} for @{$end_at{$b} // []};
		$active{$_} = 1 for @{$start_at{$b} // []};
		undef $win;
		for (keys %active) { $win = $_ if !defined $win || $syms[$_][3] > $syms[$win][3]; }
		$prev = $b;
	}
}
sub owner_sym {   # the winning entry for an address, or undef
	my ($a) = @_;
	my ($lo, $hi) = (0, scalar @ranges);   # the first piece starting above A
	while ($lo < $hi) {
		my $m = int(($lo + $hi) / 2);
		if ($ranges[$m][0] <= $a) { $lo = $m + 1 } else { $hi = $m }
	}
	return $lo > 0 && $a < $ranges[$lo - 1][1] ? $syms[$ranges[$lo - 1][2]] : undef;
}
sub owner { my $s = owner_sym($_[0]); return $s ? $s->[2] : undef; }
my %map_base = map { (my $b = $_) =~ s{.*/}{}; $b => 1 } @maps;
my %is_jit_object;   # asked for every line of cgcheck's lists, of a few objects
sub is_jit_object {
	my ($o) = @_;
	return $is_jit_object{$o} //= do {
		(my $b = $o) =~ s{.*/}{};
		$map_base{$b} || $b =~ /^jit-\d+\.dump(?:\.g\d+)?\.elf$/
			|| ($b =~ /^(.*?)(?:\.auditlog)?(?:\.g\d+)?\.elf$/ && $map_base{$1})   # an auditlog's ELF files
			|| 0;
	};
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

# 4. each JIT symbol's self cost equals the input's cost on its addresses: check 9 (inv4,
# computed by cgcheck --jit-invariants with README rules 5 and 9: lines no symbol covers
# leave the JIT function, lines inside an ELF function of the input go to it).
my (undef, @list_in) = run($cgcheck, '--list', $in);
my (undef, @addrs) = run($cgcheck, '--addrs', $in);
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

# 5. callgrind_annotate reads the output and shows the JIT names with those self costs
my ($first_event, @summaries);
{
	open(my $fh, '<', $out) or die "$out: $!";
	while (<$fh>) {
		$first_event //= $1 if /^events:\s*(\S+)/;
		push @summaries, [split ' ', $1] if /^summary:\s*(.*)/;
	}
}
my $ann = eval { Annotate::table($out, $first_event) };
my $ann_error = $@ =~ s/\n$//r;
my %annot;
for my $key (keys %{$ann // {}}) {
	# entries for fi= files come without an object
	my $obj = $ann->{$key}{obj};
	next if defined $obj && !is_jit_object($obj);
	$annot{$key} += $ann->{$key}{self};
}
# callgrind_annotate keys a function by file:name and splits it per fi= file (jitdump
# line tables): add up the entries "FILE:name" of each JIT function over its files.
my %annot_by_fn;
for my $fn (keys %annot_expect) {
	for my $k (keys %annot) {
		$annot_by_fn{$fn} += $annot{$k} if substr($k, -length($fn) - 1) eq ":$fn";
	}
}
my $no_jit = !%actual;   # e.g. a dump taken before any JIT code ran
my @adiff;
for my $k (keys %annot_expect) {
	next unless $annot_expect{$k};
	my $got = $annot_by_fn{$k} // 'missing';
	push @adiff, "$k: cgcheck $annot_expect{$k}, callgrind_annotate $got" if $got ne $annot_expect{$k};
}
check($ann && !@adiff && (scalar(keys %annot) > 0 || $no_jit),
      "callgrind_annotate shows the JIT functions with the same self costs ("
      . scalar(keys %annot) . " functions)" . ($ann ? "" : ": $ann_error") . (@adiff ? ": " . join('; ', @adiff[0 .. ($#adiff > 3 ? 3 : $#adiff)]) : ""));

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
# Rule 9: lines of a map symbol inside the span of an ELF function (at most 16 MiB, same
# part) go to that function, so the pseudo-functions holding such lines count toward its
# bound too. The span: the hull of the function's own cost lines in those of its fn=
# blocks that overlap a symbol's range (cgcheck --spans gives each block's).
my @end_max;   # per entry of @by_start, the largest end up to it
for my $i (0 .. $#by_start) {
	my $e = $by_start[$i][1];
	push @end_max, $i && $end_max[$i - 1] > $e ? $end_max[$i - 1] : $e;
}
sub overlaps_symbol {   # some symbol has an address in [LO, HI]
	my ($lo, $hi) = @_;
	my ($a, $b) = (0, scalar @by_start);   # the first entry starting above HI
	while ($a < $b) { my $m = int(($a + $b) / 2); if ($by_start[$m][0] <= $hi) { $a = $m + 1 } else { $b = $m } }
	return $a > 0 && $end_max[$a - 1] > $lo;
}
my %span_of;   # "part\tfunction key" -> [lo, hi]
my (undef, @span_rows) = run($cgcheck, '--spans', $in);
for (@span_rows) {
	chomp;
	my ($part, $fn, $file, $obj, $lo, $hi) = split /\t/;
	($lo, $hi) = (hex($lo), hex($hi));
	next unless overlaps_symbol($lo, $hi);
	my $s = $span_of{"$part\t$fn\t$file\t$obj"} //= [$lo, $hi];
	$s->[0] = $lo if $lo < $s->[0];
	$s->[1] = $hi if $hi > $s->[1];
}
my %spans;   # part -> [[lo, hi, key], ...] sorted by lo, with the running maximum of hi
for my $key (keys %span_of) {
	my ($lo, $hi) = @{$span_of{$key}};
	next if $hi - $lo > 16 << 20;
	push @{$spans{(split /\t/, $key)[0]}}, [$lo, $hi, $key];
}
for my $p (keys %spans) {
	my @v = sort { $a->[0] <=> $b->[0] } @{$spans{$p}};
	my $max = 0;
	for (@v) { $max = $_->[1] if $_->[1] > $max; push @$_, $max; }
	$spans{$p} = \@v;
}
sub elf_functions_at {   # keys of the ELF functions whose span covers ADDR in PART
	my ($part, $addr) = @_;
	my $v = $spans{$part} or return ();
	my ($lo, $hi) = (0, scalar @$v);
	while ($lo < $hi) { my $m = int(($lo + $hi) / 2); if ($v->[$m][0] <= $addr) { $lo = $m + 1 } else { $hi = $m } }
	my @k;
	for (my $j = $lo - 1; $j >= 0 && $v->[$j][3] >= $addr; $j--) {
		push @k, $v->[$j][2] if $v->[$j][1] >= $addr;
	}
	return @k;
}
my %elf_contrib;   # "part\tpseudo-function" -> { ELF function key => 1 }
for (@addrs) {
	my ($part, $addr, $fn) = split /\t/;
	next unless defined owner(hex($addr));
	$elf_contrib{"$part\t$fn"}{$_} = 1 for elf_functions_at($part, hex($addr));
}
# Code no symbol covers (RaptorJIT's exit stubs) reached by a jump from a pseudo-function
# becomes a function of its own, named by its address: its bound is the inclusive cost of
# the input's pseudo-functions that held its lines, whose activations its calls were.
my %free_of;   # "part\tinput pseudo-function" -> { address name => 1 }
for (@addrs) {
	my ($part, $addr, $fn) = split /\t/;
	next if defined owner(hex($addr)) || $fn !~ /^0x[0-9a-f]{16}/;
	$free_of{"$part\t$fn"}{sprintf('0x%016x', hex($addr))} = 1;
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
	addv($in_incl{$_} //= [], $c) for keys %{$elf_contrib{"$part\t$fn"} // {}};
	addv($in_incl{"$part\tfree\t$_"} //= [], $c) for keys %{$free_of{"$part\t$fn"} // {}};
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
	} elsif ($obj eq '???' && !$in_incl{$key} && $fn =~ /^(0x[0-9a-f]{16})/ && $in_incl{"$part\tfree\t$1"}) {
		$key = "$part\tfree\t$1";
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

# 7. with a jitdump: every cost line and call site of JIT code (synthetic calls included:
# their file and line come from one row) shows the file and line of its address
# in the DEBUG_INFO rows of the load that owns it (rows shifted by --bias); a load whose
# rows cannot be machine-code offsets (JitDump::code_rows) shows the file and line of its
# V8 name on every line, or (other names) one file and line throughout
if (@loads && @addrs && grep { @{$_->{rows}} } @loads) {
	my (undef, @lines) = run($cgcheck, '--lines', $out);
	my ($n, $n_name, $nsite, @bad, %ignored, %first) = (0, 0, 0);
	for (@lines) {
		chomp;
		my ($part, $addr, $line, $file, $fn, $obj, $kind) = split /\t/;
		next unless is_jit_object($obj);
		my $s = owner_sym(hex($addr));
		next unless $s && $s->[4] && @{$s->[4]{rows}};
		my ($rows, $why) = JitDump::code_rows($s->[4], $bias);
		my ($wfile, $wline);
		if (@$rows) {
			my $row = $rows->[0];
			for (@$rows) { $row = $_ if $_->[0] <= hex($addr); }
			($wfile, $wline) = ($pm->path($row->[2]), $row->[1]);
		} else {
			$ignored{"$s->[0] $why"} = 1;
			$n_name++;
			($wfile, $wline) = JitDump::v8_place($s->[2]);
			($wfile, $wline) = @{$first{$s->[0]} //= [$file, $line]} unless defined $wfile;
		}
		$n++;
		$nsite++ if $kind ne 'self';
		push @bad, "$addr in $fn ($kind): $file:$line, the dump says $wfile:$wline" if $wline != $line || $wfile ne $file;
	}
	my $nb = grep { / baseline$/ } keys %ignored;
	check(!@bad && $n > 0, "$n JIT cost lines and call sites ($nsite of them call sites, synthetic calls included) carry the file and line of the dump's DEBUG_INFO rows ($n_name of "
	      . scalar(keys %ignored) . " functions whose rows are not machine-code offsets, $nb of them V8 baseline code: the name's)"
	      . (@bad ? ": " . join('; ', @bad[0 .. ($#bad > 3 ? 3 : $#bad)]) : ""));
}

# 8. with a jitdump: objdump -d of the ELF files (the ob= of the JIT functions) at each
# load's address shows exactly the bytes of its CODE_LOAD
if (@loads && $objdump) {
	my %elf;
	for (@list_out) { my (undef, undef, undef, $obj) = split /\t/; $elf{$obj} = 1 if $obj =~ /\.elf$/; }
	# one objdump -d per file (not one per load: node's dumps hold thousands): each file's
	# instruction lines by address, sorted, so a load's are the run from its start to its end;
	# objdump per load only where that run does not match
	my %dis;
	for my $e (sort keys %elf) {
		my ($rc, @d) = run('objdump', '-d', '-z', $e);
		my (%bytes, @addrs);
		for (@d) {
			next unless /^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)/;
			my $at = hex($1);
			push @addrs, $at unless exists $bytes{$at};
			$bytes{$at} .= $2;
		}
		@addrs = sort { $a <=> $b } @addrs;
		$dis{$e} = [\@addrs, \%bytes];
	}
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
			my ($addrs, $bytes) = @{$dis{$e}};
			my ($lo, $hi) = (0, scalar @$addrs);   # the first address >= start
			while ($lo < $hi) {
				my $mid = int(($lo + $hi) / 2);
				if ($addrs->[$mid] < $l->{start}) { $lo = $mid + 1; } else { $hi = $mid; }
			}
			my $got = '';
			for (my $i = $lo; $i < @$addrs && $addrs->[$i] < $l->{start} + $l->{size}; $i++) {
				$got .= $bytes->{$addrs->[$i]};
			}
			$got =~ tr/ //d;
			if ($got eq $want) { $found = 1; last; }
			# the file's sweep may run an instruction across the load's start (data such
			# as the JVM's sign masks lies between code): then objdump from the start
			my ($rc, @d) = run('objdump', '-d', '-z', sprintf('--start-address=0x%x', $l->{start}),
					   sprintf('--stop-address=0x%x', $l->{start} + $l->{size}), $e);
			$got = join('', map { /^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)/ ? $1 : '' } @d);
			$got =~ tr/ //d;
			if ($got eq $want) { $found = 1; last; }
		}
		$n++;
		push @bad, sprintf("%s at 0x%x", $l->{name}, $l->{start}) unless $found;
	}
	check(!@bad && $n > 0 && scalar(keys %elf) > 0, "objdump -d of the ELF files shows each of $n CODE_LOADs' bytes at its address"
	      . (@bad ? ": missing " . join('; ', @bad[0 .. ($#bad > 3 ? 3 : $#bad)]) : ""));
}

# 9. the call graph of every JIT function J (all symbols of one name, its 'N and 'caller
# variants grouped) adds up: cgcheck --jit-invariants reads the input, the output and the
# effective ranges written here (the entry that wins each address, as owner() decides) and
# finds, on its own, the input's returns recorded as calls (P -> B, B inside symbol F but not
# at its start, right after a call site s in F's code that calls P, no more calls and cost
# than the calls at s). It checks per part and J: inclusive (the calls into J from outside)
# = the input's calls into J's addresses from outside - returns recorded as calls +
# synthetic calls; self + calls to others <= the input's self cost on J's addresses + calls
# from them - the returns' cost; call count <= calls into J - returns + synthetic calls;
# self = the input's self cost on J's addresses. A line of the input is J's when it lies in
# J's ranges (README rule 5: no fallback to the function it was charged to) and not within
# an ELF function of the input (rule 9); without instr positions, by its function's entry.
{
	require File::Temp;
	my $rf = File::Temp->new(TEMPLATE => 'jit-ranges.XXXXXX', TMPDIR => 1);
	for my $r (@ranges) {
		my $s = $syms[$r->[2]];
		# names as cgjit writes them (README, Jitdump: control bytes as '_', empty: address)
		(my $n = $s->[2]) =~ s/[\x00-\x1f\x7f]/_/g;
		$n = sprintf('[JIT code at 0x%x]', $s->[0]) if $n eq '';
		printf $rf "0x%x 0x%x 0x%x %s\n", $r->[0], $r->[1] - $r->[0], $s->[0], $n;
	}
	my %jobj;
	for (@list_out) { my (undef, undef, undef, $obj) = split /\t/; $jobj{$obj =~ s{.*/}{}r} = 1 if is_jit_object($obj); }
	print $rf "object $_\n" for sort keys %jobj;
	close $rf;
	my ($jrc, @jl) = run($cgcheck, '--jit-invariants', $rf->filename, $in, $out);
	my (%viol, @notes, $summary);
	my ($nfn, $nret) = (0, 0);
	for (@jl) {
		chomp;
		my @f = split /\t/;
		if ($f[0] eq 'violation') { push @{$viol{$f[1]}}, "part $f[2] '$f[3]': $f[4]"; }
		elsif ($f[0] eq 'fn') { $nfn++; }
		elsif ($f[0] eq 'return') { $nret++; }
		elsif ($f[0] eq 'note' && $f[2] =~ /^no instr positions/) { push @notes, $f[2]; }
		elsif ($f[0] eq 'summary') { $summary = $_; }
	}
	my $how = "$nfn function/part pairs, $nret returns recorded as calls"
		. (@notes ? "; no instr positions, so returns recorded as calls were not looked for" : "");
	for my $c (['inv1', "each JIT function's inclusive cost = the input's calls into its addresses from outside - returns recorded as calls + synthetic calls"],
		   ['inv2', "each JIT function's self cost + calls to others <= the input's cost on its addresses + calls from there - returns recorded as calls"],
		   ['inv3', "each JIT function's call count <= the input's calls into it - returns recorded as calls + synthetic calls"],
		   ['inv4', "each JIT function's self cost = the input's on its addresses (rules 5 and 9)"],
		   ['inv5', "each JIT function's callers pay its self cost + callees (synthetic calls included) wherever its functions in the input added up so"],
		   ['inv6', "one function per JIT name: no name under two (object, file) keys (rule 3)"]) {
		my @v = (@{$viol{parts} // []}, @{$viol{$c->[0]} // []});
		check(defined $summary && $jrc != 2 && !@v && ($nfn > 0 || $no_jit), "$c->[1] ($how)"
		      . (@v ? ": " . scalar(@v) . " violations: " . join('; ', @v[0 .. ($#v > 2 ? 2 : $#v)]) : ""));
	}
}

exit($failed ? 1 : 0);
