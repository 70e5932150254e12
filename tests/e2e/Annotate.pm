# Annotate.pm - what callgrind_annotate (or cg_annotate) prints for a profile, for the
# checkers that compare cgjit's figures with it (check-report.pl, check-focus.pl,
# check-augment.pl, check-flame-self.pl).
# callgrind_annotate takes seconds on a sample, and the checkers ask it the same questions
# of the same files: the samples, and augmented outputs that `make check` and `make
# check-asan` write byte for byte alike. With CGJIT_ANNOTATE_CACHE set to a directory
# (the Makefile's e2e target sets one that both share), each answer is kept there and read
# back the next time, under the MD5 of everything it depends on: the profile's bytes, the
# command, the directory it ran in, the tool's own script and this file.
package Annotate;
use strict;
use warnings;
use Digest::MD5;
use File::Path qw(make_path);
use File::Temp qw(tempdir);

# the MD5 of a file's bytes
sub file_md5 {
	my ($path) = @_;
	open(my $in, '<', $path) or die "$path: $!";
	binmode $in;
	my $sum = Digest::MD5->new->addfile($in)->hexdigest;
	close $in;
	return $sum;
}

# the MD5 of TOOL, found in PATH (a newer callgrind_annotate may answer otherwise)
my %tool_md5;
sub tool_md5 {
	my ($tool) = @_;
	return $tool_md5{$tool} //= do {
		my ($path) = grep { -f && -x } map { "$_/$tool" } split /:/, $ENV{PATH} // '';
		$path ? file_md5($path) : 'none';
	};
}

# where the answer to KEY-PARTS... about PROFILE is kept, or undef without a cache
sub cache_path {
	my ($profile, @parts) = @_;
	my $cache = $ENV{CGJIT_ANNOTATE_CACHE} or return undef;
	my $key = Digest::MD5->new;
	$key->add(join("\0", file_md5($profile), file_md5(__FILE__), @parts));
	return "$cache/" . $key->hexdigest;
}

# lines(DIR, PROFILE, TOOL, ARGS...): the exit status of `cd DIR && TOOL ARGS... PROFILE`
# and the lines it prints on stdout (stderr dropped); DIR undef: an empty directory (the
# tools strip the current directory from file names). Only answers with status 0 are kept.
sub lines {
	my ($dir, $profile, $tool, @args) = @_;
	my $where = defined $dir ? $dir : '';
	my $kept = cache_path($profile, 'lines', $where, tool_md5($tool), $tool, @args);
	if ($kept && -e $kept) {
		my ($rc, @l) = @{read_lines($kept)};
		return ($rc, @l);
	}
	$dir //= tempdir(CLEANUP => 1);
	my $q = sub { my $s = shift; $s =~ s/'/'\\''/g; return "'$s'"; };
	my $cmd = join(' ', 'cd', $q->($dir), '&&', map { $q->($_) } $tool, @args, $profile);
	open(my $fh, '-|', "$cmd 2>/dev/null") or die "$tool: $!";
	my @l = <$fh>;
	close $fh;
	my $rc = $? >> 8;
	# only a run that worked: a failure (killed, out of memory) must not outlive this run
	write_lines($kept, [$rc, @l]) if $kept && $? == 0;
	return ($rc, @l);
}

# costs(PROFILE, "no"|"yes"): callgrind_annotate's function list with --inclusive=no or
# --inclusive=yes, every function listed: "file:name" => cost (summed where a name appears
# under several objects).
sub costs {
	my ($profile, $incl) = @_;
	my (undef, @out) = lines(undef, $profile, 'callgrind_annotate', "--inclusive=$incl",
				 '--threshold=100');
	my %cost;
	my $body = 0;
	for (@out) {
		# the function list is the fourth block between dashed lines
		if (/^-+$/) { $body++; last if $body > 6; next; }
		next unless $body == 6;
		next unless /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*?)(?: \[[^\]]*\])?$/;
		my ($c, $k) = ($1, $2);
		$c =~ tr/,//d;
		$cost{$k} += $c;
	}
	return \%cost;
}

# the exit status, then the lines; written under a temporary name and renamed, so that a
# reader never sees half an answer (scripts run in parallel)
sub write_lines {
	my ($path, $v) = @_;
	make_path(($path =~ m{^(.*)/})[0]);
	my $tmp = "$path.$$";
	open(my $out, '>', $tmp) or die "$tmp: $!";
	print $out "$v->[0]\n", @$v[1 .. $#$v];
	close $out or die "$tmp: $!";
	rename($tmp, $path) or die "$path: $!";
}

sub read_lines {
	my ($path) = @_;
	open(my $in, '<', $path) or die "$path: $!";
	my @l = <$in>;
	close $in;
	chomp(my $rc = shift @l);
	return [$rc, @l];
}

1;
