// Workload for the node-baseline samples: functions that run long in Sparkplug
// (baseline, JS:^) code. collatz is a short loop called 20,000 times, fib a
// recursion, sumMod one long loop (a single call: interpreter -> baseline ->
// optimized by on-stack replacement when TurboFan is allowed).
'use strict';
function collatz(n) { let c = 0; while (n !== 1) { n = (n & 1) ? 3 * n + 1 : n >>> 1; c++; } return c; }
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sumMod(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; return s; }

let acc = 0;
for (let i = 1; i < 20000; i++) acc += collatz(i);
acc += fib(22);
acc += sumMod(300000);
console.log(acc);
