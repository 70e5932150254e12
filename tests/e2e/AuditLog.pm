# AuditLog.pm - a small, independent reader of RaptorJIT's auditlog for the end-to-end checks
# (docs/formats.md, "RaptorJIT's auditlog"; it shares no code with cgjit or with
# samples/src/auditstats.py). read_log() decodes the msgpack records (the forms msgpack
# defines for maps, strings, binaries, unsigned integers, nil and booleans); layouts() reads
# struct member offsets from the log's DWARF blob with binutils' readelf; traces() joins
# each trace_stop event to the GCtrace, MCode[], GCproto and GCstr snapshots before it.
package AuditLog;
use strict;
use warnings;

sub slurp {
	my ($path) = @_;
	open(my $z, '-|', 'zstd', '-q', '-dcf', $path) or die "$path: $!\n";
	binmode $z;
	local $/;
	my $d = <$z>;
	close $z or die "$path: cannot read\n";
	return $d;
}

# one msgpack value at $$pos of $$d, advancing $$pos
sub value {
	my ($d, $pos) = @_;
	die "byte $$pos: past the end\n" if $$pos >= length($$d);
	my $b = ord(substr($$d, $$pos++, 1));
	my $take = sub {
		my ($n) = @_;
		die "byte $$pos: $n bytes run past the end\n" if $$pos + $n > length($$d);
		my $s = substr($$d, $$pos, $n);
		$$pos += $n;
		return $s;
	};
	my $map = sub {
		my ($n) = @_;
		my %m;
		for (1 .. $n) { my $k = value($d, $pos); $m{$k} = value($d, $pos); }
		return \%m;
	};
	return $b if $b < 0x80;
	return $map->($b & 0x0f) if $b >= 0x80 && $b <= 0x8f;
	return $take->($b & 0x1f) if $b >= 0xa0 && $b <= 0xbf;
	return undef if $b == 0xc0;
	return 0 if $b == 0xc2;
	return 1 if $b == 0xc3;
	return $take->(unpack('C', $take->(1))) if $b == 0xc4 || $b == 0xd9;
	return $take->(unpack('n', $take->(2))) if $b == 0xc5 || $b == 0xda;
	return $take->(unpack('N', $take->(4))) if $b == 0xc6 || $b == 0xdb;
	return unpack('C', $take->(1)) if $b == 0xcc;
	return unpack('n', $take->(2)) if $b == 0xcd;
	return unpack('N', $take->(4)) if $b == 0xce;
	return unpack('Q>', $take->(8)) if $b == 0xcf;
	return $map->(unpack('n', $take->(2))) if $b == 0xde;
	return $map->(unpack('N', $take->(4))) if $b == 0xdf;
	die sprintf("byte %d: msgpack type 0x%02x not read here\n", $$pos - 1, $b);
}

# [ { offset => N, map => {...} }, ... ] in file order
sub read_log {
	my ($path) = @_;
	my $d = slurp($path);
	my ($pos, @r) = (0);
	while ($pos < length($d)) {
		my $at = $pos;
		my $v = eval { value(\$d, \$pos) };
		die "$path: $@" unless defined $v || !$@;
		die "$path: byte $at: a record that is not a map\n" unless ref($v) eq 'HASH';
		push @r, { offset => $at, map => $v };
	}
	return \@r;
}

# { STRUCT => { size => N, members => { NAME => [OFFSET, SIZE] } } } for the named structs
sub layouts {
	my ($blob, @want) = @_;
	my $f = "/tmp/auditlog-$$.dwo";
	open(my $o, '>:raw', $f) or die "$f: $!\n";
	print $o $blob;
	close $o;
	my @lines = `readelf --debug-dump=info $f`;
	unlink $f;
	my (%die, @order, $cur);
	for (@lines) {
		if (/^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)/) {
			$cur = { depth => $1, off => hex($2), tag => $3 };
			$die{hex $2} = $cur;
			push @order, $cur;
		} elsif ($cur && /^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*?)\s*$/) {
			my ($k, $v) = ($1, $2);
			$v =~ s/^.*\): //;   # "(indexed string: 0x7bc): GCtrace"
			$cur->{$k} = $v;
		}
	}
	my $size_of = sub {
		my ($t) = @_;
		for (1 .. 20) {
			my $x = $die{$t} or return undef;
			return $x->{DW_AT_byte_size} + 0 if defined $x->{DW_AT_byte_size};
			defined $x->{DW_AT_type} or return undef;
			($t = $x->{DW_AT_type}) =~ s/[<>]//g;
			$t = hex $t;
		}
		return undef;
	};
	my %want = map { $_ => 1 } @want;
	my %out;
	for my $i (0 .. $#order) {
		my $s = $order[$i];
		next unless $s->{tag} eq 'DW_TAG_structure_type' && defined $s->{DW_AT_name}
			&& $want{$s->{DW_AT_name}} && defined $s->{DW_AT_byte_size} && !$out{$s->{DW_AT_name}};
		my %m;
		for my $c (@order[$i + 1 .. $#order]) {
			last if $c->{depth} <= $s->{depth};
			next unless $c->{depth} == $s->{depth} + 1 && $c->{tag} eq 'DW_TAG_member';
			(my $t = $c->{DW_AT_type}) =~ s/[<>]//g;
			$m{$c->{DW_AT_name}} = [$c->{DW_AT_data_member_location} + 0, $size_of->(hex $t)];
		}
		$out{$s->{DW_AT_name}} = { size => $s->{DW_AT_byte_size} + 0, members => \%m };
	}
	return \%out;
}

sub member {   # LAYOUTS STRUCT BYTES NAME: the little-endian unsigned value
	my ($lay, $st, $bytes, $name) = @_;
	my ($off, $size) = @{$lay->{$st}{members}{$name} or die "no member $st.$name\n"};
	my $v = 0;
	$v = $v * 256 + ord(substr($bytes, $off + $_, 1)) for reverse 0 .. $size - 1;
	return $v;
}

# the compiled traces in order: { n, parent, exitno, link, addr, size, code, chunk, line,
# nanotime }, each from the latest snapshots before its trace_stop
sub traces {
	my ($recs, $lay) = @_;
	my (%mem, @t);
	for my $r (@$recs) {
		my $m = $r->{map};
		if (($m->{type} // '') eq 'memory') { $mem{"$m->{hint} $m->{address}"} = $m->{data}; next; }
		next unless ($m->{type} // '') eq 'event' && $m->{event} eq 'trace_stop';
		my $T = $mem{"GCtrace $m->{GCtrace}"} // die "trace_stop at byte $r->{offset}: no GCtrace\n";
		my $g = sub { member($lay, 'GCtrace', $T, $_[0]) };
		my ($pt, $pc) = ($g->('startpt'), $g->('startpc'));
		my $P = $mem{"GCproto $pt"} // die "trace_stop at byte $r->{offset}: no GCproto\n";
		my $S = $mem{'GCstr ' . member($lay, 'GCproto', $P, 'chunkname')} // die "no chunk name\n";
		my $chunk = substr($S, $lay->{GCstr}{size}, member($lay, 'GCstr', $S, 'len'));
		my $li = member($lay, 'GCproto', $P, 'lineinfo') - $pt + 4 * (($pc - $pt - $lay->{GCproto}{size}) / 4);
		push @t, { n => $g->('traceno'), parent => $g->('parent'), exitno => $g->('exitno'),
			   link => $g->('link'), linktype => $g->('linktype'), addr => $g->('mcode'), size => $g->('szmcode'),
			   code => $mem{'MCode[] ' . $g->('mcode')}, chunk => $chunk,
			   line => unpack('V', substr($P, $li, 4)), nanotime => $m->{nanotime} };
	}
	return \@t;
}

# KIND of a trace (from traces()) in LuaJIT's -jv notation (LuaJIT's jit/v.lua), as the
# LuaJIT agent names traces: "(PARENT/EXIT) " for a side trace, then "loop", "-> N",
# "-> N KIND", "return", "interpreter", ...
sub kind {
	my ($t) = @_;
	my @types = qw(none root loop tail-recursion up-recursion down-recursion interpreter return stitch);
	my $lt = $types[$t->{linktype}] // "linktype-$t->{linktype}";
	my @k;
	push @k, "($t->{parent}/$t->{exitno})" if $t->{parent};
	if ($lt eq 'interpreter' || $lt eq 'stitch' || $t->{link} == $t->{n} || $t->{link} == 0) { push @k, $lt; }
	elsif ($lt eq 'root') { push @k, "-> $t->{link}"; }
	else { push @k, "-> $t->{link} $lt"; }
	return join(' ', @k);
}

# The traces of the log at PATH as check-augment.pl takes a jitdump's loads: start, size,
# name "TRACE_N KIND::CHUNK:LINE", code (the MCode[] bytes), no line rows.
sub loads {
	my ($path) = @_;
	my $recs = read_log($path);
	my ($blob) = grep { ($_->{map}{type} // '') eq 'blob' && ($_->{map}{name} // '') eq 'lj_dwarf.dwo' } @$recs;
	die "$path: no blob lj_dwarf.dwo\n" unless $blob;
	my $tr = traces($recs, layouts($blob->{map}{data}, qw(GCtrace GCproto GCstr)));
	return map { { start => $_->{addr}, size => $_->{size}, code => $_->{code}, rows => [],
		       name => "TRACE_$_->{n} " . kind($_) . "::$_->{chunk}:$_->{line}" } } @$tr;
}

1;
