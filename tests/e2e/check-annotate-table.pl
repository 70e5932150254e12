#!/usr/bin/perl
# check-annotate-table.pl PROFILE...: Annotate.pm's table (self and inclusive cost of every
# function from one callgrind_annotate --tree=both run) against callgrind_annotate's own
# --inclusive=no and --inclusive=yes lists of the same file, function by function, for the
# file's first event. The checkers rely on table; this keeps its reading of the tree honest
# should callgrind_annotate change. Prints an "ok"/"not ok" line per file.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Annotate;
use Cwd qw(abs_path);

for my $p (map { abs_path($_) } @ARGV) {
	my $event;
	open(my $in, '<', $p) or die "$p: $!";
	while (<$in>) { if (/^events:\s*(\S+)/) { $event = $1; last; } }
	close $in;
	my %list;
	for my $incl ('no', 'yes') {
		my ($rc, @out) = Annotate::lines(undef, $p, 'callgrind_annotate', "--inclusive=$incl",
						 '--threshold=100', "--show=$event");
		my $body = 0;
		for (@out) {
			# the function list is the fourth block between dashed lines
			if (/^-+$/) { $body++; last if $body > 6; next; }
			next unless $body == 6 && /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*?)(?: \[[^\]]*\])?$/;
			$list{$incl}{$2} += $1 =~ tr/,//dr;
		}
	}
	my $t = eval { Annotate::table($p) };
	chomp(my $why = $@);
	my (@diff, %all);
	$all{$_} = 1 for keys %{$list{no}}, keys %{$list{yes}}, keys %{$t // {}};
	for my $k (sort keys %all) {
		my @want = ($list{no}{$k} // 0, $list{yes}{$k} // 0);
		my $e = $t && $t->{$k};   # (not $t->{$k}{self}: that would make $t a table)
		my @got = ($e ? $e->{self} // 0 : 0, $e ? $e->{incl} // 0 : 0);
		push @diff, "'$k': self $got[0], inclusive $got[1]; callgrind_annotate $want[0], $want[1]"
			if "@got" ne "@want";
	}
	(my $name = $p) =~ s{.*/}{};
	print +($t && !@diff && %{$list{yes} // {}} ? "ok" : "not ok")
		. " - $name: Annotate.pm's one-run table gives callgrind_annotate's self and inclusive cost"
		. " ($event) of all " . scalar(keys %all) . " functions"
		. ($t ? "" : ": $why")
		. (@diff ? ": " . join("; ", @diff[0 .. ($#diff > 2 ? 2 : $#diff)]) : "") . "\n";
}
