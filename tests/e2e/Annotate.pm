# Annotate.pm - callgrind_annotate's function list for a plain callgrind file, as a hash
# "file:name" => cost (summed where a name appears under several objects), for the checkers
# that compare cgjit's figures with it (check-report.pl, check-focus.pl).
# callgrind_annotate takes seconds on a sample, and both checkers ask it the same questions
# of the same augmented file: with CGJIT_ANNOTATE_CACHE set to a directory, each answer is
# kept there under the file's MD5 and the option, and read back the next time.
package Annotate;
use strict;
use warnings;
use Digest::MD5;
use File::Temp qw(tempdir);

# costs(PROFILE, "no"|"yes"): --inclusive=no or --inclusive=yes, every function listed.
sub costs {
	my ($profile, $incl) = @_;
	my $cache = $ENV{CGJIT_ANNOTATE_CACHE};
	my $kept;
	if ($cache) {
		open(my $in, '<', $profile) or die "$profile: $!";
		binmode $in;
		$kept = "$cache/" . Digest::MD5->new->addfile($in)->hexdigest . ".incl-$incl";
		close $in;
		return read_list($kept) if -e $kept;
	}
	my %cost;
	# an empty directory: callgrind_annotate strips the current directory from fl= names only
	my $dir = tempdir(CLEANUP => 1);
	open(my $fh, "-|", "cd $dir && callgrind_annotate --inclusive=$incl --threshold=100 '$profile'")
		or die "callgrind_annotate: $!";
	my $body = 0;
	while (<$fh>) {
		# the function list is the fourth block between dashed lines
		if (/^-+$/) { $body++; last if $body > 6; next; }
		next unless $body == 6;
		next unless /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*?)(?: \[[^\]]*\])?$/;
		my ($c, $k) = ($1, $2);
		$c =~ tr/,//d;
		$cost{$k} += $c;
	}
	close $fh;
	write_list($kept, \%cost) if $kept;
	return \%cost;
}

# one "COST\tKEY" line per function; written under a temporary name and renamed, so that a
# reader never sees half a list
sub write_list {
	my ($path, $cost) = @_;
	mkdir(($path =~ m{^(.*)/})[0]);
	my $tmp = "$path.$$";
	open(my $out, '>', $tmp) or die "$tmp: $!";
	print $out "$cost->{$_}\t$_\n" for sort keys %$cost;
	close $out or die "$tmp: $!";
	rename($tmp, $path) or die "$path: $!";
}

sub read_list {
	my ($path) = @_;
	my %cost;
	open(my $in, '<', $path) or die "$path: $!";
	while (<$in>) {
		chomp;
		my ($c, $k) = split /\t/, $_, 2;
		$cost{$k} = $c;
	}
	close $in;
	return \%cost;
}

1;
