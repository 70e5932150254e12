// cgjit's Go pprof sample (samples/go-pprof): a CPU profile of its own run, written to the
// file named by its argument, for `go tool pprof -callgrind`. Hashing, sorting, a map and
// a recursive function, so that the profile has several callers and callees.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"time"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func hashAll(rounds int) [32]byte {
	var sum [32]byte
	for i := 0; i < rounds; i++ {
		sum = sha256.Sum256(append(sum[:], strconv.Itoa(i)...))
	}
	return sum
}

func sortWords(n int) int {
	words := make([]string, n)
	for i := range words {
		words[i] = strconv.Itoa((i * 7919) % n)
	}
	sort.Strings(words)
	counts := map[byte]int{}
	for _, w := range words {
		counts[w[0]]++
	}
	return counts['1']
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	total := 0
	for time.Now().Before(deadline) {
		total += fib(25)
		h := hashAll(2000)
		total += int(h[0])
		total += sortWords(20000)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(total > 0)
}
