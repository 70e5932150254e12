# Annotate.pm - what callgrind_annotate (or cg_annotate) prints for a profile, for the
# checkers that compare cgjit's figures with it (check-report.pl, check-focus.pl,
# check-augment.pl, check-flame-self.pl).
# callgrind_annotate takes seconds on a sample, and the checkers ask about the same files:
# the samples, and augmented outputs that several scripts, `make check` and `make
# check-asan` write byte for byte alike. So one question per file (table) gives both self
# and inclusive costs, and with CGJIT_ANNOTATE_CACHE set to a directory (the Makefile's e2e
# target sets one that all share) each answer is kept there and read back the next time,
# under the MD5 of everything it depends on: the profile's bytes, the command, the
# directory it ran in, the tool's own script and this file.
package Annotate;
use strict;
use warnings;
use Cwd qw(abs_path);
use Digest::MD5;
use Fcntl qw(:flock);
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
	# scripts run in parallel ask of the same files: one runs the tool, the others wait for
	# its answer (the lock is let go when $lock goes out of scope)
	my $lock;
	if ($kept) {
		make_path(($kept =~ m{^(.*)/})[0]);
		open($lock, '>>', "$kept.lock") or die "$kept.lock: $!";
		flock($lock, LOCK_EX) or die "$kept.lock: $!";
	}
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

# tree_shows_all_calls(PROFILE): whether the tree lists every call callgrind_annotate counts.
# It charges a call's cost to the function current at its cost line, but lists the call
# under the function current at its cfn= line: a calls= line after a fn=, fi= or fe= line
# with no cfn= between (or after a fl=, taken so to be safe; the format lets cfn= stay
# current; callgrind and cgjit write one before every call) is counted and not listed.
# And at the end callgrind_annotate files the
# last function under the last fl= line's file, so a fl= after the last fn=, fi= or fe=
# makes an entry of its own.
sub tree_shows_all_calls {
	my ($profile) = @_;
	open(my $in, '<', $profile) or die "$profile: $!";
	my $text = do { local $/; <$in> };
	close $in;
	my $last = '';
	while ($text =~ /^(cfn|fn|fi|fe|fl|calls)=/mg) {
		return 0 if $1 eq 'calls' && $last ne 'cfn';
		$last = $1 unless $1 eq 'calls';
	}
	return $last ne 'fl';
}

# table(PROFILE[, EVENT]): callgrind_annotate's figures for every function of the callgrind
# file PROFILE, for EVENT (default: the file's first): "file:name" => {self => N, incl => N,
# obj => OBJECT or undef (the pieces of fi= files have none)}.
# One run gives both figures: with --tree=both and --inclusive=no it prints each function's
# self cost, the cost of the calls into it ("<" lines, before it) and of its calls out (">"
# lines, after it). Its --inclusive=yes figure is, in callgrind_annotate 3.19's code, the sum
# of the calls into a function (callers with a count above 0) where there are any, else the
# function's self cost and calls out; a callee with no fn= block of its own shows only in its
# callers' ">" lines. --threshold=100 lists every function. callgrind_annotate prints no
# calls of a function named "???:???": a file with one is refused rather than given figures
# that miss them (no sample has one). Where the tree does not list every call
# (tree_shows_all_calls), the inclusive costs are callgrind_annotate's own --inclusive=yes list.
sub table {
	my ($profile, $event) = @_;
	my ($rc, @out) = tree($profile, $event);
	die "$profile: callgrind_annotate failed (exit $rc)\n" if $rc;
	# where the tree misses calls, its own --inclusive=yes list gives the inclusive costs
	my $incl_list;
	unless (tree_shows_all_calls($profile)) {
		my ($rc2, @l) = lines(undef, abs_path($profile), 'callgrind_annotate', '--inclusive=yes',
				      '--threshold=100', '--auto=no', '--show=' . ($event // first_event($profile)));
		die "$profile: callgrind_annotate --inclusive=yes failed (exit $rc2)\n" if $rc2;
		$incl_list = function_list(@l);
	}
	my (%fn, %into, @callers, $cur);
	my $body = 0;
	for (@out) {
		chomp;
		# the function list is the fourth block between dashed lines
		if (/^-+$/) { $body++; next; }
		next unless $body == 6;
		if ($_ eq '') { @callers = (); undef $cur; next; }
		/^\s*([\d,]+|\.)(?: \(\s*-?[\d.]+%\))?\s+([<*>])\s+(.*?)(?: \[([^\]]*)\])?$/
			or die "$profile: callgrind_annotate printed '$_'\n";
		my ($c, $kind, $name, $obj) = ($1, $2, $3, $4);
		$c = $c eq '.' ? 0 : $c =~ tr/,//dr;
		if ($kind eq '*') {
			die "$profile: a function named ???:???, whose calls callgrind_annotate does not print\n"
				if $name eq '???:???';
			die "$profile: '$name' listed twice\n" if $fn{$name};
			$cur = $fn{$name} = {self => $c, obj => $obj, out => 0, ncallers => scalar @callers};
			$cur->{into} += $_ for @callers;
			next;
		}
		$name =~ s/ \(([\d,]+)x\)$// or die "$profile: no call count in '$_'\n";
		if ($kind eq '<') {
			push @callers, $c;
		} else {
			die "$profile: a callee line before its function: '$_'\n" unless $cur;
			$cur->{out} += $c;
			$into{$name} += $c;
		}
	}
	my %t;
	for my $k (keys %fn) {
		my $f = $fn{$k};
		$t{$k} = {self => $f->{self}, obj => $f->{obj},
			  incl => $f->{ncallers} ? $f->{into} : $f->{self} + $f->{out}};
	}
	for my $k (keys %into) {
		$t{$k} //= {self => 0, obj => undef, incl => $into{$k}};
	}
	if ($incl_list) {
		$_->{incl} = 0 for values %t;
		$t{$_}{incl} = $incl_list->{$_} for keys %$incl_list;
		$t{$_}{self} //= 0 for keys %$incl_list;
	}
	return \%t;
}

# The function list of callgrind_annotate's output lines (no tree): "file:name" => cost of
# the first event shown, summed where a name appears under several objects.
sub function_list {
	my %cost;
	my $body = 0;
	for (@_) {
		# the function list is the fourth block between dashed lines
		if (/^-+$/) { $body++; last if $body > 6; next; }
		next unless $body == 6 && /^\s*([\d,]+|\.)(?: \(\s*-?[\d.]+%\))?\s+(.*?)(?: \[[^\]]*\])?$/;
		$cost{$2} += $1 eq '.' ? 0 : $1 =~ tr/,//dr;
	}
	return \%cost;
}

# the first event of PROFILE's events: line
sub first_event {
	my ($profile) = @_;
	open(my $in, '<', $profile) or die "$profile: $!";
	while (<$in>) { if (/^events:\s*(\S+)/) { close $in; return $1; } }
	die "$profile: no events: line\n";
}

# tree(PROFILE[, EVENT]): lines() of the one question table() asks: every function's self
# cost and its calls in and out, for EVENT (default: the file's first), no source annotated
# (what a source file holds is no part of the kept answer's key)
sub tree {
	my ($profile, $event) = @_;
	$profile = abs_path($profile);   # callgrind_annotate runs in an empty directory
	$event //= first_event($profile);
	return lines(undef, $profile, 'callgrind_annotate', '--tree=both', '--inclusive=no',
		     '--threshold=100', '--auto=no', "--show=$event");
}

# costs(PROFILE, "no"|"yes"): callgrind_annotate's --inclusive=no or --inclusive=yes figure
# of every function, for the file's first event: "file:name" => cost.
sub costs {
	my ($profile, $incl) = @_;
	my $t = table($profile);
	my $key = $incl eq 'yes' ? 'incl' : 'self';
	return {map { ($_ => $t->{$_}{$key}) } keys %$t};
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
