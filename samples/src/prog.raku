# Small workload for cgjit samples: a few hot subs, loops and string ops.
sub fib(Int $n) { $n < 2 ?? $n !! fib($n - 1) + fib($n - 2) }

sub add-squares(Int $n) {
    my $s = 0;
    for 1..$n -> $i { $s += $i * $i }
    $s
}

sub shout(Str $s) { $s.uc ~ '!' }

sub words(Int $n) {
    my @w;
    for ^$n -> $i { @w.push: shout('w' ~ $i) }
    @w.join(' ').chars
}

my $total = 0;
for ^20 {
    $total += fib(12);
    $total += add-squares(200);
    $total += words(50);
}
say $total;
