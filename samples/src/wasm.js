// Workload for the node-wasm samples: wasm.wasm (built from wasm.wat by wat2wasm
// --debug-names) instantiated synchronously, its run() called in a hot loop from
// JavaScript, late() once at the end. V8 compiles each wasm function with Liftoff on
// its first call and again with TurboFan once it has run enough (dynamic tiering), so
// run, fill, checksum, collatz_steps, fib and the unnamed function 4 show up in both
// tiers and late in Liftoff only.
'use strict';
const fs = require('fs');
const path = require('path');

const bytes = fs.readFileSync(path.join(__dirname, 'wasm.wasm'));
const { run, late } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;

let acc = 0;
for (let round = 0; round < 300; round++) acc = (acc + run(round)) | 0;
acc = (acc + late(100)) | 0;
console.log(acc);
