// Workload for the cgjit diff samples (node-diff-base, node-diff-slow): the same program
// twice, run with SLOW=0 and SLOW=1. With SLOW=1 only checksum() does more work (a
// deliberate slowdown of one JIT function), so `cgjit diff` must put it on top.
'use strict';
const SLOW = process.env.SLOW === '1';

function checksum(a) {
  let h = 0;
  const rounds = SLOW ? 3 : 1;
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < a.length; i++) h = (h * 31 + a[i]) | 0;
  return h;
}

function fill(n) {
  const a = new Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 7919) % 1000;
  return a;
}

let total = 0;
for (let k = 0; k < 40; k++) {
  const a = fill(5000);
  total += checksum(a);
}
console.log(total);
