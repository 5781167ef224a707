#!/usr/bin/env bats
# The compiled unwinder against libdwfl, its oracle: PROF_UNWIND=check
# unwinds every sample with both engines.  On the test targets, gcc's cc1,
# python3, perl, a Go program and node running JavaScript, every sample
# must have the same frames, or differ only where the check shows libdwfl
# wrong: it lost the caller of a leaf frame (the compiled engine's caller
# follows a call instruction; libdwfl 0.188 does this in node), or it
# stopped at a frame without CFI where the compiled engine went on (frame
# pointers, or a leaf's return address: GMP's assembly) to a complete
# stack.  Where only the completeness differs, libdwfl is wrong too: it
# calls incomplete a walk that missed a read it did not need (ld.so's
# start), and complete one whose return address it could not compute.
# The frames the check logs as other are explained one by one from the
# program's files by tests/tools/unwind-differences, which says what it
# accepts and why (libdwfl skipping a caller one instruction later than a
# leaf's, and code without CFI at a function's entry, where neither engine
# has a stack); a difference it cannot explain fails the test.
# Also: frame pointers through JIT code, tables shared by processes, the
# tables' memory bound, and the completeness people see.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
}

# check LOG COMMAND...: record COMMAND with both engines, and hold every
# sample to the same frames, or to a difference the check shows as
# libdwfl's, or one unwind-differences explains from the files COMMAND
# ran.  The check's line is in $check; its log of the differences in LOG.
check() {
	local log=$1 n same frames leaf further other bin why
	shift
	run -0 --separate-stderr env PROF_UNWIND=check PROF_UNWIND_CHECK_LOG="$log" \
		"$PROF" record -v -o check.spool -- "$@"
	check=$(grep '^prof: unwind check: ' <<<"$stderr")
	[[ $check =~ check:\ ([0-9]+)\ samples,\ ([0-9]+)\ identical\ .*,\ ([0-9]+)\ with\ the\ same\ frames\ but\ another\ completeness,\ ([0-9]+)\ where\ .*,\ ([0-9]+)\ where\ .*,\ ([0-9]+)\ with\ other\ frames$ ]] ||
		fail "no check line in: $stderr"
	n=${BASH_REMATCH[1]} same=${BASH_REMATCH[2]} frames=${BASH_REMATCH[3]}
	leaf=${BASH_REMATCH[4]} further=${BASH_REMATCH[5]} other=${BASH_REMATCH[6]}
	((n >= 200)) || fail "only $n samples: $check"
	((same + frames + leaf + further + other == n)) || fail "the counts do not add up: $check"
	# the files the frames are in: the program, its libraries, the targets' library
	bin=$(readlink -f "$(command -v "$1")")
	why=$("$TOP/tests/tools/unwind-differences" "$log" "$bin" \
		$(ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }') \
		"$T/libdltarget.so") ||
		fail "$check; $why"
	[[ $why == "other frames: $other, "* ]] || fail "the log does not hold the $other other frames: $why"
	echo "$check; $why"
}

@test "the test targets: both engines give the same frames" {
	check ladder.log "$T/ladder" 1
	check recursion.log "$T/recursion" 1
	check threads.log "$T/threads" 1
	check inline.log "$T/inline" 1
	check dlopen.log "$T/dlopen_main" 1
	check forker.log "$T/forker" 1
	check jit.log "$T/jit" --frames 1
	require_cxx_target
	check cxx.log "$T/cxx_target" 1
}

@test "gcc's cc1 at -O2: the same frames, and 98% of stacks complete at the default copy" {
	local i
	for i in $(seq 1 400); do
		echo "struct s$i { int a, b; double c[4]; };"
		echo "static int f$i(struct s$i *p, int n) { int k = 0; for (int j = 0; j < n; j++) { k += p->a * j + (int)p->c[j & 3]; if (k > $i) k -= p->b; } return k; }"
		echo "int g$i(int n) { struct s$i v = { n, $i, { 1, 2, 3, 4 } }; return f$i(&v, n) + (n > 1 ? g$((i > 1 ? i - 1 : 1))(n - 1) : 0); }"
	done >big.c
	check cc1.log "$(gcc -print-prog-name=cc1)" -quiet -O2 big.c -o big.s
	assert_regex "$stderr" "prof: [0-9]+ samples, .*, (9[89]|100)\.[0-9]% complete stacks"
}

# (The programs below run for their CPU time, as the targets do: the same
# samples however loaded the machine is.)
@test "python3 and perl: the same frames" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	check py.log python3 -c '
import hashlib, json, time
d = {"a": list(range(300)), "b": "x" * 1000}
while time.process_time() < 1.5:
    s = json.dumps(d); json.loads(s); hashlib.sha256(s.encode()).hexdigest()'
	check perl.log perl -e 'my $s = 0; while ((times)[0] + (times)[1] < 2) { $s += sqrt($_) for 1 .. 100000 } print "$s\n"'
}

@test "a Go program: CFI in compressed .debug_frame, the same frames; without it, .gopclntab" {
	command -v go >/dev/null || skip_or_fail "go is not installed (golang-go)"
	mkdir gofib
	cat >gofib/main.go <<-'EOF'
	package main

	import (
		"fmt"
		"syscall"
		"time"
	)

	//go:noinline
	func fib(n int) int {
		if n < 2 {
			return n
		}
		return fib(n-1) + fib(n-2)
	}

	// the process's CPU time
	func cpu() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}

	func main() {
		total := 0
		for cpu() < 1500*time.Millisecond {
			total += fib(25)
		}
		fmt.Println("go:", total)
	}
	EOF
	printf 'module gofib\ngo 1.19\n' >gofib/go.mod
	(cd gofib && GOFLAGS=-mod=mod GOCACHE="$BATS_TEST_TMPDIR/gocache" go build -o ../gofib.bin .)
	check go.log ./gofib.bin
	run -0 "$PROF" report -q --format=folded check.spool
	assert_line --regexp '(^|;)main\.main;main\.fib;main\.fib;.* [0-9]+$'
	# without DWARF (-ldflags=-w) no CFI is left: .gopclntab's SP tables lead
	# the way, not frame pointers (50-runtimes.bats checks the stripped build)
	(cd gofib && GOFLAGS=-mod=mod GOCACHE="$BATS_TEST_TMPDIR/gocache" go build -ldflags=-w \
		-o ../gofib-w.bin .)
	run -0 --separate-stderr "$PROF" record -v -o w.spool -- ./gofib-w.bin
	assert_regex "$stderr" "prof: [0-9]+ samples, .*, (9[89]|100)\.[0-9]% complete stacks"
	assert_regex "$stderr" "fp-no-cfi [0-9]{1,2} "
	run -0 "$PROF" report -q --format=folded w.spool
	assert_line --regexp '^runtime\.goexit[^;]*;runtime\.main;main\.main;main\.fib;main\.fib;.* [0-9]+$'
}

@test "node --perf-basic-prof: 99% of stacks complete through JIT frames, the same frames as libdwfl" {
	command -v node >/dev/null || skip_or_fail "node is not installed (nodejs)"
	cat >fib.js <<-'EOF'
	function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
	const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
	let s = 0;
	while (cpu() < 2000) s += fib(22);
	console.log("node:", s);
	EOF
	check node.log node --perf-basic-prof fib.js
	assert_regex "$stderr" "prof: [0-9]+ samples, .*, (99|100)\.[0-9]% complete stacks"
	assert_regex "$stderr" "prof: unwound [0-9]+ user frames: fp-anon [1-9][0-9]*"
	run -0 "$PROF" report -q --format=folded check.spool
	# V8's names from the perf map, through three levels of recursion at least:
	# "JS:*fib /path/fib.js:1:13" (node 20), "LazyCompile:*fib /path/fib.js:1" (node 18)
	grep -qE '(;(JS|LazyCompile):\*fib [^;]*/fib\.js:1(:[0-9]+)?){3}' <<<"$output" ||
		fail "no JS fib frames"
	unset output
}

@test "JIT code with frame pointers and a frameless JIT leaf: complete stacks to main" {
	require_libc_debug
	run -0 --separate-stderr "$PROF" record -v -o j.spool -- "$T/jit" --frames 1
	assert_regex "$stderr" 'prof: unwound [0-9]+ user frames: fp-anon [1-9]'
	run -0 "$PROF" report -q --format=folded j.spool
	total=$(awk '{ n += $NF } END { print n }' <<<"$output")
	hits=$(grep -E '^_start;__libc_start_main;__libc_start_call_main;main;jit_outer;jit_inner [0-9]+$' <<<"$output" | awk '{ print $NF }')
	((hits * 100 >= total * 95)) || fail "main;jit_outer;jit_inner in $hits of $total samples"
	run -0 "$PROF" record -q -o l.spool -- "$T/jit" 1
	run -0 "$PROF" report -q --format=folded l.spool
	assert_line --regexp '^_start;__libc_start_main;__libc_start_call_main;main;jit_hot_loop [0-9]+$'
}

@test "one table per file, whatever the number of processes that map it" {
	run -0 --separate-stderr "$PROF" record -v -o p.spool -- \
		sh -c "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do '$T/ladder' 0.1; done"
	assert_regex "$stderr" 'prof: [0-9]+ samples, [0-9]+ lost, 13 processes'
	[[ $stderr =~ unwind\ tables:\ ([0-9]+)\ files ]] || fail "no tables line: $stderr"
	# ladder, libc, ld.so, the vDSO, sh: not one per process
	((BASH_REMATCH[1] <= 6)) || fail "${BASH_REMATCH[1]} tables for 13 processes"
}

@test "the tables' memory bound: rows dropped and compiled again, the same frames" {
	local i
	for i in $(seq 1 200); do
		echo "static int f$i(int n) { int k = 0; for (int j = 0; j < n; j++) k += j * $i; return k; }"
		echo "int g$i(int n) { return f$i(n) + (n > 1 ? g$((i > 1 ? i - 1 : 1))(n - 1) : 0); }"
	done >small.c
	PROF_UNWIND_TABLE_MAX=16384 check bound.log "$(gcc -print-prog-name=cc1)" -quiet -O2 small.c -o small.s
	[[ $stderr =~ \ ([0-9]+)\ flushes ]] || fail "no flushes in: $stderr"
	((BASH_REMATCH[1] > 0)) || fail "the bound was never reached: $stderr"
}
