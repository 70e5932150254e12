# JitDump.pm - a small, independent jitdump reader for the end-to-end checks (it shares no
# code with src/jitdump.c). Returns the code loads in file order; a CODE_MOVE adds a copy
# of the moved load at its new address; DEBUG_INFO rows belong to the next load.
package JitDump;
use strict;
use warnings;

sub read_dump {
	my ($path) = @_;
	my $data;
	if (open(my $z, '-|', 'zstd', '-q', '-dcf', $path)) {
		local $/;
		binmode $z;
		$data = <$z>;
		close $z;
	}
	die "$path: cannot read\n" unless defined $data && length($data) >= 40;
	my $m = unpack('V', substr($data, 0, 4));
	my $le = $m == 0x4A695444;
	die "$path: not a jitdump\n" unless $le || $m == 0x4454694A;
	my ($u32, $u64) = $le ? ('V', 'Q<') : ('N', 'Q>');
	my $total = unpack($u32, substr($data, 8, 4));
	my ($off, @loads, $rows, $dbg) = ($total);
	while ($off + 16 <= length($data)) {
		my ($id, $size) = (unpack($u32, substr($data, $off, 4)), unpack($u32, substr($data, $off + 4, 4)));
		last if $size < 16 || $off + $size > length($data);
		my $r = substr($data, $off, $size);
		if ($id == 0 && $size >= 57) {
			my ($addr, $csize, $index) = (unpack($u64, substr($r, 32, 8)), unpack($u64, substr($r, 40, 8)),
						      unpack($u64, substr($r, 48, 8)));
			my $nul = index($r, "\0", 56);
			if ($csize > 0 && $csize <= $size - 57 && $nul >= 0 && $nul < $size - $csize) {
				(my $name = substr($r, 56, $nul - 56)) =~ s/\s+$//;
				# rows are kept only if every one lies in this function, allowing the
				# 0x40 bias past its end, and no file name has control bytes (cgjit's
				# documented rule for garbage DEBUG_INFO, node 20)
				my $bad = sub { grep { $_->[0] < $addr || $_->[0] - $addr > $csize + 0x40
							|| $_->[2] =~ /[\x00-\x1f\x7f]/ } @{$_[0]} };
				if ($rows && $bad->($rows)) {
					# node 20: name fields of the full path's length, first 16 bytes
					# overwritten; read at the fixed stride, file from the V8 name
					my $file = $name =~ /^\w+:\S*\s(\S+?):\d+(?::\d+)?$/ ? $1 : undef;
					my @fixed;
					for my $pad (0 .. 7) {
						my $body = length($dbg) - 32 - $pad;
						my $n = unpack($u64, substr($dbg, 24, 8));
						# (a path of 20 bytes or more: at least 4 to compare past the 16)
						next unless $file && length($file) >= 20 && $n && $body % $n == 0
							&& $body / $n == 16 + length($file) + 1;
						my $st = $body / $n;
						@fixed = map { my $e = 32 + $_ * $st;
							       [unpack($u64, substr($dbg, $e, 8)), unpack($u32, substr($dbg, $e + 8, 4)), $file,
								substr($dbg, $e + 32, length($file) - 16)] } 0 .. $n - 1;
						@fixed = () if grep { $_->[3] ne substr($file, 16) } @fixed;
						last if @fixed;
					}
					$rows = @fixed && !$bad->(\@fixed) ? [map { [@$_[0 .. 2]] } @fixed] : undef;
				}
				push @loads, { start => $addr, size => $csize, name => $name, index => $index,
					       code => substr($r, $size - $csize), rows => $rows // [] };
			}
			$rows = undef;
		} elsif ($id == 1 && $size >= 64) {
			my ($old, $new, $index) = map { unpack($u64, substr($r, $_, 8)) } 32, 40, 56;
			for my $l (reverse @loads) {
				next unless $l->{index} == $index && $l->{start} == $old;
				push @loads, { %$l, start => $new,
					       rows => [map { [$_->[0] - $old + $new, $_->[1], $_->[2]] } @{$l->{rows}}] };
				last;
			}
		} elsif ($id == 2 && $size >= 32) {
			$dbg = $r;
			my $n = unpack($u64, substr($r, 24, 8));
			my ($p, @rows, $prev) = (32);
			for (1 .. $n) {
				last if $p + 17 > $size;
				my ($a, $line) = (unpack($u64, substr($r, $p, 8)), unpack($u32, substr($r, $p + 8, 4)));
				my $nul = index($r, "\0", $p + 16);
				last if $nul < 0;
				my $file = substr($r, $p + 16, $nul - $p - 16);
				$file = $prev if $file eq "\xff";
				push @rows, [$a, $line, $file];
				$prev = $file;
				$p = $nul + 1;
			}
			$rows = \@rows;
		}
		$off += $size;
	}
	return @loads;
}

# code_rows(LOAD, BIAS): the load's rows as [address, line, file] sorted by address, the
# bias taken off (an address less than BIAS into the function counts as its start), or
# no rows and the reason when they cannot be offsets into the load's machine code (cgjit's
# documented rule): V8's Sparkplug code ("JS:^name file:line:col") gets rows from its
# bytecode, so they are bytecode offsets; and in a dump with V8's 0x40 bias, rows whose
# highest address lies in the first quarter of a function of 256 bytes or more, at 4 or
# more distinct addresses, are taken for offsets of something else too. Other producers'
# rows are always used.
sub code_rows {
	my ($l, $bias) = @_;
	my @rows = sort { $a->[0] <=> $b->[0] }
		   map { my $off = $_->[0] - $l->{start}; [$l->{start} + ($off >= $bias ? $off - $bias : 0), $_->[1], $_->[2]] }
		   @{$l->{rows}};
	return ([], 'baseline') if @rows && $l->{name} =~ /^(?:JS|LazyCompile|Function|Script|Eval|InterpretedFunction|RegExp):\^/;
	my %at = map { $_->[0] => 1 } @rows;
	return ([], 'prefix') if @rows && $bias == 0x40 && $l->{size} >= 256 && keys(%at) >= 4
		&& ($rows[-1][0] - $l->{start}) < $l->{size} / 4;
	return (\@rows, '');
}

# The file and line in a V8 name ("JS:*fib /a/b.js:3:13" -> "/a/b.js", 3), or ().
sub v8_place {
	my ($name) = @_;
	return $name =~ /^(?:JS|LazyCompile|Function|Script|Eval|InterpretedFunction|RegExp):.*\s(\S+?):(\d+)(?::\d+)?$/ ? ($1, $2) : ();
}

1;
