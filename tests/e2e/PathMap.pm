# PathMap.pm - what cgjit augment --root / --path-map should make of a JIT name or a file
# name, computed here from the README's rules without cgjit's code, for check-augment.pl:
# a path lies under OLD when it starts with OLD at a component boundary and no ".."
# component follows; the longest OLD wins (of equal ones the later); the rest follows NEW,
# or stands alone when NEW is empty ("." for OLD itself). In a JIT name the path is the one
# its runtime's convention gives (README rule 4), found here with regular expressions.
package PathMap;
use strict;
use warnings;

# new(["OLD", "NEW"], ...): trailing slashes of both dropped ("/" stays)
sub new {
	my ($class, @pairs) = @_;
	my @v = map { [trim($_->[0]), trim($_->[1])] } @pairs;
	return bless { maps => \@v }, $class;
}

sub trim { my ($s) = @_; $s =~ s{(?<=.)/+$}{}; return $s; }

sub empty { return !@{$_[0]{maps}}; }

sub path {
	my ($self, $p) = @_;
	my ($best, $rest);
	for my $m (@{$self->{maps}}) {
		my ($old) = @$m;
		next unless substr($p, 0, length $old) eq $old;
		my $r = substr($p, length $old);
		next unless $r eq '' || $r =~ m{^/} || $old eq '/';
		next if $best && length($old) < length($best->[0]);
		($best, $rest) = ($m, $r);
	}
	return $p unless $best;
	$rest =~ s{^/+}{};
	return $p if $rest =~ m{(?:^|/)\.\.(?:/|$)};
	my $new = $best->[1];
	return $rest eq '' ? ($new eq '' ? '.' : $new) : $new eq '' ? $rest : $new eq '/' ? "/$rest" : "$new/$rest";
}

# The name with the path of its convention mapped: V8, CPython, LuaJIT, PHP, MoarVM, in
# that order (the first that matches decides).
sub name {
	my ($self, $n) = @_;
	return $n if $self->empty;
	my ($pre, $file, $post);
	if ($n =~ /^(?:JS|LazyCompile|Function|Script|Eval|InterpretedFunction|RegExp):./) {
		($pre, $file, $post) = $n =~ /^(.* )(\S+?)(:\d+(?::\d+)?)$/ or return $n;
	} elsif ($n =~ /^py::/) {
		($pre, $file, $post) = $n =~ /^(py::[^:]*:)(.+)()$/ or return $n;
	} elsif ($n =~ /^TRACE_\d*::/) {
		($pre, $file, $post) = $n =~ /^(TRACE_.*?::\@?)(.+)(:\d+)$/ or return $n;
	} elsif ($n =~ /^(?:TRACE-\d+\$|JIT\$)/) {
		my ($head, $what, $tail) = $n =~ /^(TRACE-\d+\$)(.*)(\$\d+)$/;
		($head, $what, $tail) = $n =~ /^(JIT\$)(.*)()$/ unless defined $head;
		return $n unless defined $head;
		# top-level code is named after its file: a '/' or a '.', which no PHP function
		# or class name holds; PHP 8.4's closures {closure:SCOPE:LINE}
		if ($what =~ /\}$/) {
			($pre, $file, $post) = $what =~ /^(.*?\{closure:)(.+)(:\d+\})$/ or return $n;
			return $n unless $file =~ m{[/.]};
			($pre, $post) = ("$head$pre", "$post$tail");
		} elsif ($what =~ m{[/.]} && $what !~ /^\{/) {
			($pre, $file, $post) = ($head, $what, $tail);
		} else {
			return $n;
		}
	} elsif ($n =~ /^(.*\()([^(]+)(:\d+\))$/) {
		($pre, $file, $post) = ($1, $2, $3);
	} else {
		return $n;
	}
	return $pre . $self->path($file) . $post;
}

1;
