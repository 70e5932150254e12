#!/usr/bin/perl
# make-lattice.pl LAYERS WIDTH SELF > lattice.cg: a callgrind file whose call graph is a
# lattice, hostile to flame graphs built from arcs: main calls the WIDTH functions of layer
# 0, and every function of layer i calls every function of layer i + 1, so the stacks
# number WIDTH^LAYERS while the file has LAYERS * WIDTH^2 arcs. Each function costs SELF
# itself; its arcs out share the next layer's inclusive cost equally among its WIDTH
# callers, so the arcs are consistent (up to rounding down). With 40 layers of 2 and SELF
# 1000000, `cgjit flamegraph --min-width 0 --format folded` before the frame cap wrote
# 41,648,127 lines (5.7 GB); it now stops at 200,000 frames (docs/flamegraph.md, 1.5).
use strict;
use warnings;

my ($layers, $width, $self) = @ARGV;
die "usage: $0 LAYERS WIDTH SELF\n" unless defined $self && $layers >= 1 && $width >= 1;
print "# callgrind format\nversion: 1\ncreator: make-lattice.pl\npid: 1\ncmd: lattice\n",
	"part: 1\npositions: line\nevents: Ir\n\nob=lattice\nfl=lattice.c\n";
my $incl = sub { ($layers - $_[0]) * $self };   # the inclusive cost of a function of layer i
print "fn=main\n1 1\n";
for my $j (0 .. $width - 1) {
	print "cfn=L0N$j\ncalls=1 1\n1 ", $incl->(0), "\n";
}
my $total = 1;
for my $i (0 .. $layers - 1) {
	for my $j (0 .. $width - 1) {
		print "fn=L${i}N$j\n1 $self\n";
		$total += $self;
		next if $i == $layers - 1;
		for my $k (0 .. $width - 1) {
			print "cfn=L", $i + 1, "N$k\ncalls=1 1\n1 ", int($incl->($i + 1) / $width), "\n";
		}
	}
}
print "totals: $total\n";
