#!/usr/bin/perl
# check-schema.pl DOC JSON...: the JSON documents of cgjit's commands have exactly the keys
# their documentation lists, at every level. DOC is docs/reports.md, whose headings
# "#### `SCHEMA` `PATH`[, `PATH`...]" (SCHEMA "*" for every schema) are followed by a table
# whose first column lists keys (`a`, `b`), or docs/timeline.md, whose schema is one JSON
# block with comments (keys are the quoted names before a colon, nested by their braces).
# A PATH is "." (the document), "x" (the object at key x), "x[]" (each element of the list
# x), "x.*" (each value of the object x), joined: "results[].function". A value that is null
# or an empty list has nothing to check. Each JSON file is read with JSON::XS; its "schema"
# key picks the tables. Prints "ok - ..." / "not ok - ..." lines: per SCHEMA and PATH,
# every documented key in every object found there and no key that is not documented; a
# documented PATH that no file reached is a failure too (the inputs must exercise it).
# SCHEMA_DEBUG=1 prints the keys read from DOC first.
use strict;
use warnings;
use JSON::XS;

my ($doc, @files) = @ARGV;
open(my $fh, "<", $doc) or die "$doc: $!\n";
my @lines = <$fh>;
close $fh;

my %keys;   # schema -> path -> { key => 1 }
sub add { my ($schema, $path, @k) = @_; $keys{$schema}{$path}{$_} = 1 for @k; }

# tables under "#### `SCHEMA` `PATH`" headings
my ($schema, @paths);
for (@lines) {
	if (/^#### `([^`]+)` (`.*)$/) {
		$schema = $1;
		my $rest = $2;
		@paths = $rest =~ /`([^`]+)`/g;
		# a heading's text after the paths (": what it is") is not a path
		@paths = grep { /^[.\w\[\]*]+$/ } @paths;
		next;
	}
	if (/^#/) { $schema = undef; next; }
	next unless defined $schema && /^\| (`[^|]*) \|/;
	my @k = $1 =~ /`([^`]+)`/g;
	add($schema, $_, @k) for @paths;
}

# a JSON block with comments (docs/timeline.md)
my $block = join "", @lines;
if ($block =~ /```\n(\{\n  "schema": "([^"]+)".*?\n\})\n```/s) {
	my ($text, $s) = ($1, $2);
	my @stack = ("");   # the path of each open brace or bracket
	my $last_key;
	while ($text =~ /\G(?:"([^"]*)"\s*(:)?|([{\[])|([}\]])|.)/gcs) {
		if (defined $1) {
			if ($2) { $last_key = $1; add($s, $stack[-1] eq "" ? "." : $stack[-1], $1); }
			else { $last_key = undef; }
		} elsif (defined $3) {
			my $parent = $stack[-1];
			my $p = defined $last_key ? ($parent eq "" ? $last_key : "$parent.$last_key")
				: $parent eq "" ? "" : "$parent";
			$p .= "[]" if $3 eq "[";
			# the top brace is the document itself
			push @stack, @stack == 1 && $3 eq "{" && !defined $last_key && !$p ? "" : $p;
			$last_key = undef;
		} elsif (defined $4) {
			pop @stack;
			$last_key = undef;
		}
	}
	# "list": [ { ... } ]: the element's keys are at "list[]"
}

sub objects_at {   # DOC PATH: the objects found there
	my ($d, $path) = @_;
	my @cur = ($d);
	return @cur if $path eq ".";
	for my $step (split /\./, $path) {
		my @next;
		my ($name, $list) = $step =~ /^(.*?)(\[\])?$/;
		for my $o (@cur) {
			next unless ref $o eq "HASH";
			my @v = $name eq "*" ? values %$o : exists $o->{$name} ? ($o->{$name}) : ();
			for my $v (@v) {
				if ($list) { push @next, @$v if ref $v eq "ARRAY"; }
				else { push @next, $v; }
			}
		}
		@cur = @next;
	}
	return grep { ref $_ eq "HASH" } @cur;
}

if ($ENV{SCHEMA_DEBUG}) { for my $s (sort keys %keys) { print "$s $_: @{[sort keys %{$keys{$s}{$_}}]}\n" for sort keys %{$keys{$s}} } }
my (%reached, $bad);
my $checked = 0;
for my $file (@files) {
	open(my $j, "<", $file) or die "$file: $!\n";
	local $/;
	my $d = decode_json(<$j>);
	close $j;
	my $s = $d->{schema} // "";
	unless ($keys{$s}) {
		print "not ok - $file: schema '$s' is not documented in $doc\n";
		$bad++;
		next;
	}
	my %paths = (%{$keys{$s}}, %{$keys{"*"} // {}});
	for my $path (sort keys %paths) {
		my $want = $paths{$path};
		# a shared piece applies where the document has it; one line per file and path
		my ($n, $first) = (0, undef);
		for my $o (objects_at($d, $path)) {
			$reached{"$s $path"}++;
			$checked++;
			my @missing = grep { !exists $o->{$_} } sort keys %$want;
			my @extra = grep { !$want->{$_} } sort keys %$o;
			next unless @missing || @extra;
			$n++;
			$first //= (@missing ? "documented but missing: @missing" : "")
				. (@missing && @extra ? "; " : "") . (@extra ? "not documented: @extra" : "");
		}
		next unless $n;
		print "not ok - $file ($s) at $path, $n objects: $first\n";
		$bad++;
	}
}
my %seen_schema = map { my $d = do { open(my $j, "<", $_) or die; local $/; decode_json(<$j>) }; ($d->{schema} // "") => 1 } @files;
for my $s (sort keys %seen_schema) {
	next unless $keys{$s};
	for my $path (sort keys %{$keys{$s}}) {
		next if $reached{"$s $path"};
		print "not ok - $s: no document reached the documented path $path (give inputs that do)\n";
		$bad++;
	}
}
print $bad ? "not ok - $bad problems in " . scalar(@files) . " documents\n"
	   : "ok - " . scalar(@files) . " documents of " . join(", ", sort keys %seen_schema)
	     . ": every object ($checked at documented paths) has exactly the keys $doc lists\n";
