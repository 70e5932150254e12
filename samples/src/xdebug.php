<?php
// cgjit's Xdebug sample (samples/xdebug-php): classes from an include, closures, a
// recursive function, PHP's internal functions (php::...), a little string work.
require __DIR__ . '/xdebug/shapes.php';

function fib(int $n): int
{
    return $n < 2 ? $n : fib($n - 1) + fib($n - 2);
}

function make_shapes(int $n): array
{
    $shapes = [];
    for ($i = 0; $i < $n; $i++) {
        $shapes[] = $i % 3 === 0 ? new Rect($i % 7 + 1, $i % 5 + 1) : new Circle($i % 11 + 1);
    }
    return $shapes;
}

$scale = 3;
$scaled = function (Shape $s) use ($scale): float {
    return $s->area() * $scale;
};
$shapes = make_shapes(200);
$areas = array_map($scaled, $shapes);
usort($shapes, fn (Shape $a, Shape $b) => $a->area() <=> $b->area());
$words = array_map(fn (Shape $s) => $s->describe(), array_slice($shapes, 0, 50));
$total = array_reduce($areas, fn (float $acc, float $a) => $acc + $a, 0.0);
printf("%d shapes, total %.1f, fib %d, %s\n", count($shapes), $total, fib(14), md5(implode(",", $words)));
