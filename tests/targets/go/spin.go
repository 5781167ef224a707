// spin.go - a Go program whose hot leaf is frameless: main.main calls
// main.work, which calls main.spin (a loop with no frame of its own) for
// SECONDS of CPU, measured by its own clock; a second goroutine runs
// main.side -> main.spin meanwhile when given a second argument "2", and
// then prints the CPU time each caller had, by its own thread's clock.
// Built by the tests with -ldflags="-s -w" (no .symtab, no DWARF, no CFI):
// the names are in .gopclntab alone, and frame pointers lose main.work.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
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

// The CPU time each caller had, whatever the scheduler gave them: each
// goroutine is locked to its thread and reads that thread's clock, the
// one cpu-clock samples count (a count of calls is not: on a vCPU the
// hypervisor steals from, or beside a busy hyperthread, a thread does
// less work in the same CPU time).  Each written by its goroutine alone,
// read after done.
var workCPU, sideCPU time.Duration

// threadCPU: the CPU time of the calling thread so far
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func work(d time.Duration) int {
	runtime.LockOSThread()
	c := threadCPU()
	t := time.Now()
	s := 0
	for time.Since(t) < d {
		s += spin(100000)
	}
	workCPU = threadCPU() - c
	return s
}

//go:noinline
func side(d time.Duration, done chan int) {
	runtime.LockOSThread()
	c := threadCPU()
	t := time.Now()
	s := 0
	for time.Since(t) < d {
		s += spin(100000)
	}
	sideCPU = threadCPU() - c
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
		fmt.Println("cpu: work", workCPU.Microseconds(), "side", sideCPU.Microseconds())
	}
}
