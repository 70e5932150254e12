#!/usr/bin/perl
# check-flame.pl SVG: the frames of a `cgjit flamegraph` SVG fit into each other. Frames are
# nested <g class="f" data-x data-v data-d> groups (x and width in cost units, depth); for
# each frame: its depth is its parent's + 1, it lies inside its parent and after its
# previous sibling, its children's widths add up to at most its own (exactly, in cost
# units; in pixels within 0.01 per child); the root is as wide as the svg's data-total.
# Prints "N frames, depth D" and exits 0, or prints the first problem and exits 1.
use strict;
use warnings;

my ($path) = @ARGV;
open(my $fh, "<", $path) or die "$path: $!\n";
my $svg = do { local $/; <$fh> };
sub fail { print "$path: $_[0]\n"; exit 1; }

my ($total) = $svg =~ /<svg [^>]*data-total="(\d+)"/ or fail("no data-total on <svg>");
my $start = index($svg, '<g id="frames">');
fail("no <g id=\"frames\">") if $start < 0;
pos($svg) = $start + length('<g id="frames">');
my (@stack, $frames, $maxd, $roots);
$frames = $maxd = $roots = 0;
while ($svg =~ m{\G.*?(<g class="f" data-x="(\d+)" data-v="(\d+)" data-d="(\d+)"[^>]*>|</g>|<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)")}gs) {
	if (defined $2) {
		my %f = (x => $2, v => $3, d => $4, next => $2, kids => 0, kpx => 0, nkids => 0, n => ++$frames);
		if (@stack) {
			my $p = $stack[-1];
			fail("frame $f{n}: depth $f{d} under a frame of depth $p->{d}") if $f{d} != $p->{d} + 1;
			fail("frame $f{n}: [$f{x}, +$f{v}) is not inside its parent [$p->{x}, +$p->{v}) or overlaps a sibling")
				if $f{x} < $p->{next} || $f{x} + $f{v} > $p->{x} + $p->{v};
			$p->{next} = $f{x} + $f{v};
			$p->{kids} += $f{v};
			$p->{nkids}++;
		} else {
			fail("root frame: depth $f{d}, width $f{v}, total $total") if $f{d} != 0 || $f{v} != $total || $roots++;
		}
		$maxd = $f{d} if $f{d} > $maxd;
		push @stack, \%f;
	} elsif (defined $5) {
		fail("a <rect> outside a frame") unless @stack;
		my $f = $stack[-1];
		fail("frame $f->{n}: two rects") if defined $f->{px};
		$f->{px} = $6;
		$stack[-2]{kpx} += $6 if @stack > 1;
	} else {
		last unless @stack;   # the close of <g id="frames">
		my $f = pop @stack;
		fail("frame $f->{n}: children $f->{kids} wider than the frame $f->{v}") if $f->{kids} > $f->{v};
		fail("frame $f->{n}: no rect") unless defined $f->{px};
		fail("frame $f->{n}: children $f->{kpx}px wider than the frame $f->{px}px")
			if $f->{kpx} > $f->{px} + 0.01 * ($f->{nkids} + 1);
	}
}
fail("unclosed frames") if @stack;
fail("no frames") unless $frames;
print "$frames frames, depth $maxd\n";
exit 0;
