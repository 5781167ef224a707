// spin.go - a Go program whose hot leaf is frameless: main.main calls
// main.work, which calls main.spin (a loop with no frame of its own) for
// SECONDS of CPU, measured by its own clock; a second goroutine runs
// main.side -> main.spin meanwhile when given a second argument "2", and
// then prints how many calls of main.spin each caller made.
// Built by the tests with -ldflags="-s -w" (no .symtab, no DWARF, no CFI):
// the names are in .gopclntab alone, and frame pointers lose main.work.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

// The calls of spin each caller made: what share of the CPU each had,
// whatever the scheduler gave them (each written by its goroutine alone,
// read after done).
var workCalls, sideCalls int

//go:noinline
func work(d time.Duration) int {
	t := time.Now()
	s := 0
	for time.Since(t) < d {
		s += spin(100000)
		workCalls++
	}
	return s
}

//go:noinline
func side(d time.Duration, done chan int) {
	t := time.Now()
	s := 0
	for time.Since(t) < d {
		s += spin(100000)
		sideCalls++
	}
	done <- s
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	d := time.Duration(secs * float64(time.Second))
	done := make(chan int, 1)
	two := len(os.Args) > 2 && os.Args[2] == "2"
	if two {
		go side(d, done)
	}
	s := work(d)
	if two {
		s += <-done
	}
	fmt.Println("spin:", s)
	if two {
		fmt.Println("calls: work", workCalls, "side", sideCalls)
	}
}
