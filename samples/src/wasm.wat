;; WebAssembly module of the node-wasm samples (scripts/make-samples), loaded by wasm.js.
;; Build: wat2wasm --debug-names wasm.wat -o wasm.wasm (wabt). --debug-names writes the
;; name section, so V8 names each function after its $id; the one function without an
;; $id has no name there and V8 calls it wasm-function[4].
;; The function indices (V8 puts them in its names too): 0 fill, 1 checksum,
;; 2 collatz_steps, 3 fib, 4 (unnamed), 5 run, 6 late.
(module
  (memory (export "memory") 1)

  ;; N bytes of a linear congruential sequence from SEED at address 0.
  (func $fill (param $n i32) (param $seed i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $seed
          (i32.add (i32.mul (local.get $seed) (i32.const 1103515245)) (i32.const 12345)))
        (i32.store8 (local.get $i) (i32.shr_u (local.get $seed) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; A rotate-and-xor hash of the first N bytes of memory: the hot loop.
  (func $checksum (param $n i32) (result i32)
    (local $i i32) (local $h i32)
    (local.set $h (i32.const 0x811c9dc5))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h
          (i32.mul (i32.xor (local.get $h) (i32.load8_u (local.get $i)))
                   (i32.const 16777619)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $h))

  ;; Steps of the Collatz sequence from N down to 1.
  (func $collatz_steps (param $n i32) (result i32)
    (local $steps i32)
    (block $done
      (loop $next
        (br_if $done (i32.le_u (local.get $n) (i32.const 1)))
        (if (i32.and (local.get $n) (i32.const 1))
          (then (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 3)) (i32.const 1))))
          (else (local.set $n (i32.shr_u (local.get $n) (i32.const 1)))))
        (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
        (br $next)))
    (local.get $steps))

  ;; Recursion: wasm calling wasm.
  (func $fib (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))

  ;; No $id: no entry in the name section.
  (func (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (local.get $x)) (i32.const 7)))

  ;; One round, called by wasm.js in its hot loop.
  (func $run (export "run") (param $round i32) (result i32)
    (local $i i32) (local $acc i32)
    (call $fill (i32.const 512) (local.get $round))
    (local.set $acc (call $checksum (i32.const 512)))
    (loop $next
      (local.set $acc (i32.add (local.get $acc)
        (call $collatz_steps (i32.add (local.get $i) (i32.const 1)))))
      (local.set $acc (i32.add (local.get $acc) (call 4 (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $next (i32.lt_u (local.get $i) (i32.const 256))))
    (i32.add (local.get $acc) (call $fib (i32.const 12))))

  ;; Called once at the end: never hot enough to leave Liftoff.
  (func $late (export "late") (param $n i32) (result i32)
    (i32.add (call $checksum (local.get $n)) (call $fib (i32.const 5)))))
