<?php
// Workload for the php-tracing sample: a recursion (ack, fib) and loops, hot
// enough for opcache's tracing JIT to compile function entries, loops and
// side exits into traces.
function ack($m, $n) {
    if ($m == 0) return $n + 1;
    if ($n == 0) return ack($m - 1, 1);
    return ack($m - 1, ack($m, $n - 1));
}
function fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
function sum_squares($n) {
    $s = 0;
    for ($i = 1; $i <= $n; $i++) $s += $i * $i;
    return $s;
}
$t = 0;
for ($k = 0; $k < 20; $k++) {
    $t += ack(2, 50);
    $t += fib(15);
    $t += sum_squares(2000);
}
echo $t, "\n";
