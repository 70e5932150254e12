#!/usr/bin/perl
# check-layers.pl [SRC] - checks src/'s include rules (src/README.md, "may include"):
# every `#include "FOLDER/name.h"` of a file in FOLDER0 names a folder FOLDER0 may include,
# the header exists, the table of folders has no cycle, and no header includes itself
# through others. Prints "ok"/"not ok" lines and "N passed, N failed, N skipped"; exits 1 on
# a failure. Independent of the build: it reads the sources as text.
use strict;
use warnings;

my $src = shift // 'src';
my ($pass, $fail) = (0, 0);
sub check { my ($ok, $what) = @_; print(($ok ? "ok" : "not ok") . " - $what\n"); $ok ? $pass++ : $fail++; }

# the table: | `folder/` | what | may include |
my %may;
open(my $r, '<', "$src/README.md") or die "$src/README.md: $!\n";
while (<$r>) {
	next unless /^\| `(\w+)\/` \| .* \| ([\w, ]+) \|\s*$/;
	$may{$1} = { map { $_ => 1 } split /,\s*/, $2 };
}
close $r;
check(scalar(keys %may) >= 2, "src/README.md names the folders and what each may include ("
      . join(' ', sort keys %may) . ")");

# the folders' graph has no cycle (each may include itself)
my %state;
my $cycle = '';
sub visit {
	my ($f, @path) = @_;
	return if ($state{$f} // 0) == 2;
	if (($state{$f} // 0) == 1) { $cycle ||= join(' -> ', @path, $f); return; }
	$state{$f} = 1;
	visit($_, @path, $f) for grep { $_ ne $f } sort keys %{$may{$f}};
	$state{$f} = 2;
}
visit($_) for sort keys %may;
check(!$cycle, "the folders' rules have no cycle" . ($cycle ? ": $cycle" : ""));

# every file's includes
my (@bad, %incl, $nfiles);
opendir(my $d, $src) or die "$src: $!\n";
for my $folder (sort grep { -d "$src/$_" && !/^\./ } readdir $d) {
	push @bad, "$folder/: a folder src/README.md does not name" unless $may{$folder};
	opendir(my $fd, "$src/$folder") or die;
	for my $file (sort grep { /\.[ch]$/ } readdir $fd) {
		$nfiles++;
		open(my $f, '<', "$src/$folder/$file") or die;
		while (<$f>) {
			next unless /^\s*#\s*include\s+"([^"]+)"/;
			my $h = $1;
			push @{$incl{"$folder/$file"}}, $h;
			if ($h !~ m{^(\w+)/[^/]+\.h$}) { push @bad, "$folder/$file includes '$h': not FOLDER/name.h"; next; }
			my $to = $1;
			push @bad, "$folder/$file includes '$h': no such header" unless -f "$src/$h";
			push @bad, "$folder/$file includes '$h': $folder/ may not include $to/"
				unless $to eq $folder || ($may{$folder} && $may{$folder}{$to});
		}
		close $f;
	}
	closedir $fd;
}
closedir $d;
check(!@bad && $nfiles, "every #include of the $nfiles files of $src/ follows the folders' rules"
      . (@bad ? ": " . join('; ', @bad[0 .. ($#bad > 9 ? 9 : $#bad)]) : ""));

# no header includes itself through others
my ($hcycle, %hs) = ('');
sub hvisit {
	my ($h, @path) = @_;
	return if ($hs{$h} // 0) == 2;
	if (($hs{$h} // 0) == 1) { $hcycle ||= join(' -> ', @path, $h); return; }
	$hs{$h} = 1;
	hvisit($_, @path, $h) for @{$incl{$h} // []};
	$hs{$h} = 2;
}
hvisit($_) for sort grep { /\.h$/ } keys %incl;
check(!$hcycle, "no header includes itself through others" . ($hcycle ? ": $hcycle" : ""));

print "$pass passed, $fail failed, 0 skipped\n";
exit($fail ? 1 : 0);
