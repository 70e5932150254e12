// bench.js - the benchmark of the CI example (docs/ci/github-actions.yml, README "Use in
// CI"): benchmark() sorts copies of a fixed pseudo-random array ROUNDS times, and the
// budget (docs/ci/perf-budget.yaml) measures what runs inside it. tests/e2e/ci-example.sh
// runs the job on a scratch repository whose pull request raises ROUNDS from 37 to 39:
// a 5% slower benchmark().
const ROUNDS = 37;

function bubbleSort(a) {
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j + 1 < a.length - i; j++)
      if (a[j] > a[j + 1]) {
        const t = a[j];
        a[j] = a[j + 1];
        a[j + 1] = t;
      }
  return a;
}

function input(n) {
  let seed = 42;
  const a = [];
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    a.push(seed % 100000);
  }
  return a;
}

function benchmark() {
  const data = input(600);
  let check = 0;
  for (let r = 0; r < ROUNDS; r++)
    check += bubbleSort(data.slice())[r];
  return check;
}

console.log(benchmark());
