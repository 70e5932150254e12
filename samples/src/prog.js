// Small workload for cgjit samples: a hot recursive function plus a string loop.
'use strict';
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

function sumSquares(n) {
  let s = 0;
  for (let i = 1; i <= n; i++) s += i * i;
  return s;
}

function words(n) {
  const w = [];
  for (let i = 0; i < n; i++) w.push(('w' + i).toUpperCase() + '!');
  return w.join(' ').length;
}

let total = 0;
for (let k = 0; k < 30; k++) {
  total += fib(20);
  total += sumSquares(2000);
  total += words(200);
}
console.log(total);
