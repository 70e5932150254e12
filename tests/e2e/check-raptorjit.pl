#!/usr/bin/perl
# check-raptorjit.pl - the stored RaptorJIT sample (samples/raptorjit-traces) is what
# docs/formats.md ("RaptorJIT's auditlog") says it is (tests/e2e/raptorjit.sh).
#
#   check-raptorjit.pl CGCHECK SOURCE AUDITLOG PROFILE [AUGMENTED TIMELINE]
#
# SOURCE is samples/src/raptor.lua, AUDITLOG the run's audit.log (read by AuditLog.pm, struct
# offsets from its own DWARF blob through readelf), PROFILE the callgrind profile of the same
# run (its self cost per address in object ??? from cgcheck --addrs). Checks the framing and
# record kinds, the traces' numbers, chunk and lines against SOURCE, that the late phase's
# traces are compiled last, and that every trace's MCode[] range carries cost in the profile
# with pseudo-functions only at root traces' entries. With AUGMENTED (PROFILE after `cgjit
# augment PROFILE AUDITLOG`) and TIMELINE (`cgjit timeline --format json --top 0 --warmup 0.5
# AUDITLOG`): every trace is a function named "TRACE_N KIND::CHUNK:LINE" in file raptor.lua
# with the self cost the profile has on its MCode[] bytes, and the timeline lists the traces
# compiled after 0.5 s of the log's first event, which are phase 3's, and the 4 aborts.
# Prints one "ok - ..." or "not ok - ..." line per check.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use AuditLog;
use JSON::XS;
no warnings "portable";   # 64-bit addresses through hex()

@ARGV == 4 || @ARGV == 6 or die "usage: check-raptorjit.pl CGCHECK SOURCE AUDITLOG PROFILE [AUGMENTED TIMELINE]\n";
my ($cgcheck, $source, $log, $profile, $augmented, $timeline) = @ARGV;
sub ok { my ($c, $what) = @_; print(($c ? "ok" : "not ok"), " - $what\n"); }

my $src = do { local $/; open(my $f, '<:raw', $source) or die "$source: $!\n"; <$f> };
my @lines = split /\n/, $src;
my ($hot_line) = grep { $lines[$_ - 1] =~ /^\tfor _ = 1, n do/ } 1 .. @lines;   # checksum()'s loop
my ($late_line) = grep { $lines[$_ - 1] =~ /^-- Phase 3/ } 1 .. @lines;

# 1. framing and record kinds
my $recs = eval { AuditLog::read_log($log) };
ok(defined $recs, "the auditlog is a sequence of msgpack maps to its last byte" . ($@ ? ": $@" : ""));
exit 0 unless $recs;
my (%kinds, $bad_mem, $prev_t, $t_order);
$t_order = 1;
for my $r (@$recs) {
	my $m = $r->{map};
	my $t = $m->{type} // '';
	$kinds{$t eq 'memory' ? "memory $m->{hint}" : $t eq 'event' ? "event $m->{event}" : "$t " . ($m->{name} // '')}++;
	$bad_mem++ if $t eq 'memory' && (join(',', sort keys %$m) ne 'address,data,hint,type');
	if ($t eq 'event') {
		$t_order = 0 if defined $prev_t && $m->{nanotime} < $prev_t;
		$prev_t = $m->{nanotime};
	}
}
my $kinds = join(', ', map { "$_ $kinds{$_}" } sort keys %kinds);
ok(@$recs == 184, "184 records (" . scalar(@$recs) . "): $kinds");
ok(!grep({ !/^(memory|event|blob) / } keys %kinds), "every record's type is memory, event or blob");
ok(!$bad_mem, "every memory record has exactly type, hint, address and data");
ok($t_order, "events' nanotime never decreases");
ok(($kinds{'event trace_stop'} // 0) == 12 && ($kinds{'memory MCode[]'} // 0) == 12
   && ($kinds{'memory GCtrace'} // 0) == 12, "12 trace_stop events, 12 MCode[] and 12 GCtrace snapshots");
ok(($kinds{'event new_prototype'} // 0) == 14 && ($kinds{'memory GCproto'} // 0) == 14,
   "a GCproto snapshot per new_prototype event (14)");
my @aborts = grep { ($_->{map}{event} // '') eq 'trace_abort' } @$recs;
ok(@aborts == 4 && !grep({ $_->{map}{TraceError} != 7 } @aborts),
   "4 trace_abort events, all TraceError 7 (NYI: bytecode, FNEW)");
my ($lex) = grep { ($_->{map}{event} // '') eq 'lex' } @$recs;
ok($lex && $lex->{map}{chunkname} eq '@raptor.lua' && $lex->{map}{source} eq $src,
   "the lex event names chunk \@raptor.lua and carries samples/src/raptor.lua byte for byte");
my ($blob) = grep { ($_->{map}{type} // '') eq 'blob' && $_->{map}{name} eq 'lj_dwarf.dwo' } @$recs;
ok($blob && substr($blob->{map}{data}, 0, 4) eq "\x7fELF", "one blob lj_dwarf.dwo, an ELF object");
exit 0 unless $blob;

# 2. struct layouts from the DWARF blob
my $lay = AuditLog::layouts($blob->{map}{data}, qw(GCtrace GCproto GCstr));
my @need = (map({ "GCtrace.$_" } qw(traceno parent exitno link mcode szmcode startpt startpc)),
	    map({ "GCproto.$_" } qw(chunkname lineinfo)), 'GCstr.len');
my @missing = grep { my ($s, $m) = split /\./; !($lay->{$s} && $lay->{$s}{members}{$m}) } @need;
ok(!@missing, "the DWARF blob describes " . join(' ', @need) . (@missing ? " (missing: @missing)" : ""));
exit 0 if @missing;

# 3. the traces
my $tr = AuditLog::traces($recs, $lay);
my @n = map { $_->{n} } @$tr;
ok("@n" eq join(' ', 1 .. 12), "traces numbered 1..12 in log order (@n)");
ok(!grep({ !defined $_->{code} || length($_->{code}) != $_->{size} } @$tr),
   "every trace's MCode[] record is at GCtrace.mcode with GCtrace.szmcode bytes");
my @names = map { "TRACE_$_->{n}::$_->{chunk}:$_->{line}" } @$tr;
ok(!grep({ $_->{chunk} ne '@raptor.lua' || $_->{line} < 1 || $_->{line} > @lines } @$tr),
   "every trace starts in \@raptor.lua at one of its lines: @names");
my %by = map { $_->{n} => $_ } @$tr;
ok($by{1}{line} == $hot_line && $by{1}{parent} == 0 && $by{1}{link} == 1,
   "TRACE_1 is the root trace of checksum()'s loop (line $hot_line) and loops to itself");
ok($by{2}{parent} == 1 && $by{3}{parent} == 1 && $by{2}{line} == $hot_line,
   "TRACE_2 and TRACE_3 are side traces of TRACE_1 (exits $by{2}{exitno}, $by{3}{exitno})");
my @late = grep { $_->{line} >= $late_line } @$tr;
my @early = grep { $_->{line} < $late_line } @$tr;
my $last_early = (sort { $b <=> $a } map({ $_->{nanotime} } @early), map({ $_->{map}{nanotime} } @aborts))[0];
ok(@late == 8 && !grep({ $_->{nanotime} <= $last_early } @late),
   "the 8 traces of phase 3 (line >= $late_line) are compiled after every other trace and abort");
my @sorted = sort { $a->{addr} <=> $b->{addr} } @$tr;
ok(!grep({ $sorted[$_]{addr} + $sorted[$_]{size} > $sorted[$_ + 1]{addr} } 0 .. $#sorted - 1),
   "the MCode[] ranges do not overlap");

# 4. the profile: self cost per address in object ???
open(my $fh, '-|', $cgcheck, '--addrs', $profile) or die "cgcheck --addrs: $!\n";
my (%cost, %fnames, $total);
while (<$fh>) {
	chomp;
	my ($part, $addr, $fn, $c) = split /\t/;
	next if !defined $c || $c eq 'call';
	my ($ir) = split / /, $c;
	$cost{hex $addr} += $ir;
	$total += $ir;
	$fnames{hex((split /'/, $fn)[0])} = 1;
}
close $fh or die "cgcheck --addrs $profile failed\n";
my %in;
for my $t (@$tr) {
	$in{$t->{n}} += $cost{$_} for grep { $_ >= $t->{addr} && $_ < $t->{addr} + $t->{size} } keys %cost;
}
ok(!grep({ !$in{$_->{n}} } @$tr), "every trace's MCode[] range has self cost in the profile: "
   . join(' ', map { "$_->{n}:" . ($in{$_->{n}} // 0) } @$tr));
my $sum = 0;
$sum += $_ for values %in;
ok($in{1} > 0.8 * $total, sprintf("TRACE_1 (0x%x, %d bytes) is the hot trace: %d of the %d Ir in object ??? (%.1f%%); all traces %d",
   $by{1}{addr}, $by{1}{size}, $in{1}, $total, 100 * $in{1} / $total, $sum));
my @fin = grep { my $f = $_; grep { $f >= $_->{addr} && $f < $_->{addr} + $_->{size} } @$tr } keys %fnames;
my %root_start = map { $_->{addr} => $_->{n} } grep { !$_->{parent} } @$tr;
ok(@fin == 4 && !grep({ !exists $root_start{$_} } @fin),
   "callgrind's pseudo-functions inside the traces start exactly at the 4 root traces' MCode "
   . "(" . join(' ', map { sprintf "0x%x", $_ } sort { $a <=> $b } @fin) . "); side traces, entered by patched jumps, have none");
exit 0 unless $augmented;

# 5. the augmented profile: each trace a function of its own with its addresses' cost
open($fh, '-|', $cgcheck, '--list', $augmented) or die "cgcheck --list: $!\n";
my (%self, %file);
while (<$fh>) {
	chomp;
	my (undef, $name, $f, undef, $c) = split /\t/;
	next unless $name =~ /^TRACE_/;
	$name =~ s/'\d+$//;   # callgrind's recursion levels, one function
	$self{$name} += (split / /, $c)[0];
	$file{$name}{$f} = 1;
}
close $fh or die "cgcheck --list $augmented failed\n";
my %want = map { ("TRACE_$_->{n} " . AuditLog::kind($_) . "::$_->{chunk}:$_->{line}") => $_ } @$tr;
my @got = sort keys %self;
ok(join("\n", @got) eq join("\n", sort keys %want), "the augmented profile has one function per trace, "
   . "named TRACE_N KIND::CHUNK:LINE (-jv's kinds): " . join('; ', map { "$_ $self{$_}" } sort { $self{$b} <=> $self{$a} } @got));
my @wrong = grep { !$want{$_} || $self{$_} != ($in{$want{$_}{n}} // 0) || join(',', keys %{$file{$_}}) ne 'raptor.lua' } @got;
ok(!@wrong && @got == 12, "each trace's self cost is the profile's on its MCode[] bytes, in file raptor.lua"
   . (@wrong ? " (not: @wrong)" : ""));
ok(($self{"TRACE_1 loop::\@raptor.lua:$hot_line"} // 0) == $in{1},
   "the hot trace is TRACE_1 loop::\@raptor.lua:$hot_line with $in{1} Ir");

# 6. the timeline: compile order, the late traces, the aborts
my $doc = do { local $/; open(my $t, '<', $timeline) or die "$timeline: $!\n"; JSON::XS::decode_json(<$t>) };
my ($first) = sort { $a <=> $b } map { $_->{map}{nanotime} } grep { ($_->{map}{type} // '') eq 'event' } @$recs;
my @want_late = map { "TRACE_$_->{n} " . AuditLog::kind($_) . "::$_->{chunk}:$_->{line}" }
	grep { $_->{nanotime} - $first > 500_000_000 } @$tr;
my @got_late = map { $_->{name} } @{$doc->{late}{list}};
ok($doc->{source} eq 'auditlog' && $doc->{loads} == 12 && $doc->{span} == $prev_t - $first,
   "timeline: an auditlog of 12 traces over the span of its events ($doc->{span} ns)");
ok("@got_late" eq "@want_late" && @want_late == 8 && !grep({ !/:(\d+)$/ || $1 < $late_line } @got_late),
   "timeline --warmup 0.5: the late traces are the 8 of phase 3, in compile order: @got_late");
my @ab = map { "$_->{name} $_->{error}" } @{$doc->{aborts}{list}};
ok($doc->{aborts}{count} == 4 && "@ab" eq "TRACE_4::\@raptor.lua:30 7 TRACE_4::\@raptor.lua:30 7 "
   . "TRACE_5::\@raptor.lua:30 7 TRACE_5::\@raptor.lua:30 7", "timeline: the 4 aborts at the closure loop, TraceError 7: @ab");
