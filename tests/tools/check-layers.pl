#!/usr/bin/perl
# check-layers.pl [SRC] - checks src/'s include rules (src/README.md, "may include"):
# every `#include "FOLDER/name.h"` of a file in FOLDER0 names a folder FOLDER0 may include,
# the header exists, the table of folders has no cycle, and no header includes itself
# through others; README's "Source layout" names every .c file, and the source files it,
# docs/design.md, src/README.md and any src/FOLDER/name path in docs/ name exist. Prints "ok"/"not ok" lines and "N passed, N failed, N skipped"; exits 1 on
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

# the documents that map the sources name files that exist, and README's "Source layout"
# names every source file (the map drifts when a file is split or renamed)
my $top = "$src/..";
my %have;
for my $f (glob("$src/*/*.[ch] $top/agent/*.[ch] $top/tests/*/*.[ch] $top/scripts/*.[ch]")) { (my $b = $f) =~ s{.*/}{}; $have{$b} = 1; }
sub slurp { my ($f) = @_; open(my $h, '<', $f) or die "$f: $!\n"; local $/; my $t = <$h>; close $h; $t }
sub named {   # source names in TEXT: x.c, x.h, x.{c,h} (as x.c and x.h)
	my ($text) = @_;
	my @n;
	while ($text =~ /\b([a-z][a-z0-9_]*)\.(\{c,h\}|[ch]\b)/g) {
		push @n, $2 eq '{c,h}' ? ("$1.c", "$1.h") : "$1.$2";
	}
	return @n;
}
my $readme = slurp("$top/README.md");
my ($layout) = $readme =~ /^## Source layout\n(.*?)(?=^## )/ms;
$layout //= '';
my %in_layout = map { $_ => 1 } named($layout);
my @unlisted = grep { !$in_layout{$_} } map { s{.*/}{}r } glob("$src/*/*.c");
check($layout && !@unlisted, "README's Source layout names every .c file of $src/"
      . (@unlisted ? ": not " . join(', ', @unlisted) : ""));
my @gone;
for my $doc ('README.md Source layout', 'docs/design.md', 'src/README.md') {
	my $text = $doc =~ /^README/ ? $layout : slurp("$top/$doc");
	push @gone, map { "$doc: $_" } grep { !$have{$_} } named($text);
}
# elsewhere in docs/, an explicit src/FOLDER/name path
for my $doc (glob("$top/docs/*.md"), "$top/README.md") {
	my $text = slurp($doc);
	(my $short = $doc) =~ s{^\Q$top\E/}{};
	while ($text =~ m{\bsrc/(\w+/[a-z][a-z0-9_]*\.[ch])\b}g) {
		push @gone, "$short: src/$1" unless -f "$src/$1";
	}
}
check(!@gone, "the source files README, docs/ and src/README.md name exist"
      . (@gone ? ": not " . join('; ', @gone[0 .. ($#gone > 9 ? 9 : $#gone)]) : ""));

print "$pass passed, $fail failed, 0 skipped\n";
exit($fail ? 1 : 0);
