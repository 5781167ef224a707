#!/usr/bin/env bats
# The languages people write: their frames named and whole, as the runtime
# itself would name them.  Go: a release build (-ldflags="-s -w": no
# .symtab, no DWARF, no CFI) named from .gopclntab, and unwound through its
# functions' SP tables, so that a frameless leaf keeps its caller.  Java:
# compiled methods named with no JVM flag, from the perf map the JVM writes
# when prof asks over its attach protocol.
load test_helper

setup() {
	setup_recording
}

# go_build OUT SRC [FLAGS...]: Debian's go, with its caches in the test's directory
go_build() {
	local out=$1 src=$2
	shift 2
	require_cmd go golang-go
	HOME="$BATS_TEST_TMPDIR" GOCACHE="$BATS_TEST_TMPDIR/gocache" GOPATH="$BATS_TEST_TMPDIR/gopath" \
		GOFLAGS= GO111MODULE=off CGO_ENABLED=0 go build "$@" -o "$out" "$src" ||
		fail "go build of $src failed"
}

# share SPOOL AWK-CONDITION: the percentage of the folded profile's samples whose stack matches
share() {
	"$PROF" report -q --format=folded "$1" |
		awk -v cond="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
			k = split(s, f, ";"); leaf = f[k]
			if ((cond == "leaf" && leaf == "main.spin") ||
			    (cond == "work" && s ~ /(^|;)main\.work(;|$)/) ||
			    (cond == "side" && s ~ /(^|;)main\.side;main\.spin$/)) hit += n }
			END { print all ? int(100 * hit / all) : 0 }'
}

@test "go, stripped: names from .gopclntab, and a frameless leaf keeps its caller" {
	go_build spin "$TOP/tests/targets/go/spin.go" -ldflags="-s -w"
	# what makes it hard: no symbol table, no CFI of any kind
	run -0 readelf -SW spin
	refute_output --partial ' .symtab '
	refute_output --partial ' .eh_frame '
	refute_output --partial ' .debug_frame '
	assert_output --partial ' .gopclntab '
	run -0 --separate-stderr "$PROF" record -o s.spool -- ./spin 1 2
	assert_line --regexp '^spin: [0-9]+$'
	# main.work calls main.spin: its samples hold both, main.side's too, each
	# in the share of the CPU it had (by its own thread's clock, as it
	# measured it: a busy machine need not split it in halves)
	read -r nwork nside < <(awk '/^cpu:/ { print $3, $5 }' <<<"$output")
	[ $((nwork + nside)) -gt 0 ] || fail "spin measured no CPU time: $output"
	want=$((100 * nwork / (nwork + nside)))
	leaf=$(share s.spool leaf)
	work=$(share s.spool work)
	side=$(share s.spool side)
	[ "$leaf" -ge 95 ] || fail "main.spin is the leaf of $leaf% of the samples"
	[ "$work" -ge $((want - 10)) ] && [ "$work" -le $((want + 10)) ] ||
		fail "main.work;main.spin in $work% of the samples, its CPU time $want% of it"
	[ "$side" -ge $((100 - want - 10)) ] && [ "$side" -le $((100 - want + 10)) ] ||
		fail "main.side;main.spin in $side% of the samples, its CPU time $((100 - want))% of it"
	[ $((work + side)) -ge 95 ] || fail "main.spin under its caller in $((work + side))% only"
	run -0 "$PROF" report -q --format=folded s.spool
	assert_line --regexp '^runtime\.goexit;runtime\.main;main\.main;main\.work;main\.spin [0-9]+$'
	# (a sample now and then in the runtime's own stack switches, mcall or
	# nanotime1 on the system stack, stops there: not main.spin's)
	refute_line --regexp '0x[0-9a-f]+.*;main\.spin [0-9]+$'
	run -0 "$PROF" report -q s.spool
	assert_line --regexp '^stacks: +[0-9]+ complete \((99|100)\.[0-9]%\)'
	assert_line --regexp '^names: +spin: \.gopclntab \((9[0-9]|100)\.[0-9]% of the samples, 0\.0% of them unnamed\)$'
	# file:line from its pc-line tables: the loop's lines, and where main.work calls
	local src="$TOP/tests/targets/go/spin.go" body call
	body=$(awk '/^func spin/ { f = 1 } f && /s \+= i \* i % 7/ { print NR; exit }' "$src")
	call=$(awk '/^func work/ { f = 1 } f && /s \+= spin\(/ { print NR; exit }' "$src")
	run -0 "$PROF" report -q --lines s.spool
	assert_line --regexp "^ *[0-9.]+% +[0-9.]+% +[0-9]+ +main\\.spin \\(spin\\.go:($body|$((body - 1)))\\) +spin\$"
	assert_line --regexp "^ *[0-9.]+% +[0-9.]+% +[0-9]+ +main\\.work \\(spin\\.go:$call\\) +spin\$"
	# the SP tables, not frame pointers, unwound them (the vDSO's odd frame aside)
	fp=$(sed -n 's/^unwound: .* fp-no-cfi \([0-9]*\) .*/\1/p' <<<"$output")
	[ -n "$fp" ]
	[ "$fp" -le 10 ] || fail "$fp frames unwound by frame pointers for want of CFI"
}

@test "go, stripped: a damaged .gopclntab is read without harm" {
	require_cmd python3 python3
	go_build spin "$TOP/tests/targets/go/spin.go" -ldflags="-s -w"
	run -0 "$PROF" record -q -o s.spool -- ./spin 0.3
	cp spin spin.good
	# the report reads the file at the recorded path: each time another damage
	python3 - "$PROF" <<-'PY'
	import random, subprocess, sys
	prof = sys.argv[1]
	sec = subprocess.run(["readelf", "-SW", "spin.good"], capture_output=True, text=True).stdout
	f = next(l for l in sec.splitlines() if " .gopclntab " in l).split(".gopclntab", 1)[1].split()
	off, size = int(f[2], 16), int(f[3], 16)
	assert size > 0
	good = open("spin.good", "rb").read()
	random.seed(5)
	for i in range(150):
	    b = bytearray(good)
	    # the header's offsets, or anywhere in the tables
	    for _ in range(random.randint(1, 6)):
	        at = off + (random.randrange(64) if i % 3 == 0 else random.randrange(size))
	        b[at] = random.randrange(256)
	    open("spin", "wb").write(b)
	    r = subprocess.run([prof, "report", "-q", "--lines", "s.spool"], capture_output=True)
	    if r.returncode != 0:
	        sys.exit("report failed (%d) on damage %d: %s" % (r.returncode, i, r.stderr.decode()))
	PY
}

@test "go, stripped, attached: the same names and callers in -p mode" {
	go_build spin "$TOP/tests/targets/go/spin.go" -ldflags="-s -w"
	./spin 3 >out &
	pid=$!
	sleep 0.3
	run -0 "$PROF" record -q -o p.spool -p "$pid" -d 1
	wait "$pid"
	work=$(share p.spool work)
	[ "$work" -ge 95 ] || fail "main.work;main.spin in $work% of the attached samples"
}

# java_build: Hot.class in the test's directory
java_build() {
	require_cmd javac openjdk-17-jdk-headless
	cp "$TOP/tests/targets/java/Hot.java" . && javac Hot.java || fail "javac Hot.java failed"
}

# jshare SPOOL WHAT: the percentage of the samples whose leaf is Hot.fib
# (WHAT=leaf), of those the share complete from start_thread through
# JavaMain with viaA, viaB or viaC right above the first fib, or main where C2
# inlined them into main's loop (its on-stack replacement: one physical
# frame, which is all a perf map can name) (WHAT=whole); with
# WHAT=broken, the three commonest stacks of fib that are not, for a
# failure to show (the one line of the others passes the sort alone)
jshare() {
	"$PROF" report -q --format=folded "$1" |
		awk -v what="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
			k = split(s, f, ";")
			if (f[k] != "long Hot.fib(int)") next
			leaf += n
			if (s ~ /;long Hot\.viaC\(int\);/) late += n
			if (s ~ /^clone3;start_thread;ThreadJavaMain;JavaMain;.*;(long Hot\.via[ABC]\(int\)|void Hot\.main\(java\.lang\.String\[\]\));long Hot\.fib\(int\)/)
				whole += n
			else {
				sub(/(;long Hot\.fib\(int\))+$/, ";fib...", s)
				broken[s] += n
			} }
			END { if (what == "leaf") print all ? int(100 * leaf / all) : 0
			      else if (what == "whole") print leaf ? int(100 * whole / leaf) : 0
			      else if (what == "late") print leaf ? int(100 * late / leaf) : 0
			      else for (s in broken) printf "  %d: %s\n", broken[s], s }' |
		sort -rn | head -3
}

@test "java, no flags but PreserveFramePointer: compiled methods named, stacks whole" {
	java_build
	before=$(ls /tmp/perf-*.map 2>/dev/null || true)
	run -0 --separate-stderr "$PROF" record -o j.spool -- java -XX:+PreserveFramePointer Hot 2
	# the JVM's own output is its own: SIGQUIT made no thread dump
	assert_output --regexp '^hot: [0-9]+ calls, [0-9]+$'
	refute_regex "$stderr" 'PreserveFramePointer|perf map'
	leaf=$(jshare j.spool leaf)
	whole=$(jshare j.spool whole)
	[ "$leaf" -ge 85 ] || fail "long Hot.fib(int) is the leaf of $leaf% of the samples"
	[ "$whole" -ge 95 ] || fail "$whole% of Hot.fib's samples are whole to start_thread; the commonest others:
$(jshare j.spool broken)"
	# prof asked for the map, and takes it away: nothing is left behind
	after=$(ls /tmp/perf-*.map 2>/dev/null || true)
	[ "$before" = "$after" ] || fail "perf maps left behind: $(comm -13 <(echo "$before") <(echo "$after"))"
	run -0 ls -A
	refute_output --partial .attach_pid
	run -0 "$PROF" report -q j.spool
	assert_line --regexp '^(names:)? +\[anon\]: (JVM interpreter and )?perf map \([0-9.]+% of the samples, [0-9.]+% of them unnamed\)$'
}

@test "java: code compiled late in a run is named too, from a map its samples asked for" {
	java_build
	# viaC is first called halfway through, after the perf maps prof asks
	# for as the JVM starts: its compiled code is in none of them
	run -0 --separate-stderr "$PROF" record -o l.spool -- java -XX:+PreserveFramePointer Hot 2 late
	assert_output --regexp '^hot: [0-9]+ calls, [0-9]+$'
	late=$(jshare l.spool late)
	whole=$(jshare l.spool whole)
	[ "$late" -ge 30 ] || fail "long Hot.viaC(int) is above fib in $late% of fib's samples"
	[ "$whole" -ge 95 ] || fail "$whole% of Hot.fib's samples are whole to start_thread; the commonest others:
$(jshare l.spool broken)"
}

@test "java -Xint: each interpreted frame named by its method, as compiled ones are" {
	java_build
	run -0 --separate-stderr "$PROF" record -o i.spool -- java -Xint Hot 1
	assert_regex "$stderr" 'prof: java: [1-9][0-9]* interpreter frames named, [0-9]+ unnamed'
	leaf=$(jshare i.spool leaf)
	whole=$(jshare i.spool whole)
	[ "$leaf" -ge 85 ] || fail "long Hot.fib(int) is the leaf of $leaf% of the samples"
	[ "$whole" -ge 95 ] || fail "$whole% of Hot.fib's samples are whole to start_thread; the commonest others:
$(jshare i.spool broken)"
	# main, each caller, fib: the names the perf map gives compiled code
	run -0 "$PROF" report -q --format=folded i.spool
	assert_line --regexp ';JavaMain;.*;void Hot\.main\(java\.lang\.String\[\]\);long Hot\.viaA\(int\);long Hot\.fib\(int\)(;long Hot\.fib\(int\))* [0-9]+$'
	assert_line --regexp ';void Hot\.main\(java\.lang\.String\[\]\);long Hot\.viaB\(int\);long Hot\.fib\(int\)(;long Hot\.fib\(int\))* [0-9]+$'
	run -0 "$PROF" report -q i.spool
	assert_line --regexp '^names: +\[anon\]: JVM interpreter( and perf map)? \('
}

@test "java without PreserveFramePointer: one warning naming the flag, the leaf still named" {
	java_build
	run -0 --separate-stderr "$PROF" record -o j.spool -- java Hot 1
	assert_output --regexp '^hot: [0-9]+ calls, [0-9]+$'
	run -0 grep -c 'runs without -XX:+PreserveFramePointer: its stacks stop' <<<"$stderr"
	assert_output 1
	leaf=$(jshare j.spool leaf)
	[ "$leaf" -ge 85 ] || fail "long Hot.fib(int) is the leaf of $leaf% of the samples"
}

@test "java, attached: -p names a running JVM's methods, and its map is left as it was" {
	java_build
	java -XX:+PreserveFramePointer Hot 4 >out &
	pid=$!
	sleep 0.5
	run -0 "$PROF" record -q -o p.spool -p "$pid" -d 1.5
	leaf=$(jshare p.spool leaf)
	whole=$(jshare p.spool whole)
	[ ! -e "/tmp/perf-$pid.map" ] || fail "/tmp/perf-$pid.map left behind"
	wait "$pid"
	run -0 cat out
	assert_output --regexp '^hot: [0-9]+ calls, [0-9]+$'
	[ "$leaf" -ge 90 ] || fail "long Hot.fib(int) is the leaf of $leaf% of the samples"
	[ "$whole" -ge 95 ] || fail "$whole% of Hot.fib's samples are whole to start_thread; the commonest others:
$(jshare p.spool broken)"
}

# fibshare SPOOL: the per mille of the samples whose leaf is V8's JS fib, named;
# jitnamed SPOOL: the per mille of the samples in JIT code (fib, or a raw
# address no name covered) that are named fib
fibshare() {
	"$PROF" report -q --format=folded "$1" |
		awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
			k = split(s, f, ";")
			if (f[k] ~ /^(JS|LazyCompile):\*fib [^;]*\/fib\.js:1(:[0-9]+)?$/) hit += n }
			END { print all ? int(1000 * hit / all) : 0 }'
}
jitnamed() {
	"$PROF" report -q --format=folded "$1" |
		awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
			k = split(s, f, ";")
			if (f[k] ~ /^(JS|LazyCompile):\*fib [^;]*\/fib\.js:1(:[0-9]+)?$/) hit += n
			else if (f[k] ~ /^0x[0-9a-f]+$/) raw += n }
			END { print hit + raw ? int(1000 * hit / (hit + raw)) : 0 }'
}

@test "node --perf-prof: JS names from the jitdump it announced, as many as its perf map gives" {
	require_cmd node nodejs
	cat >fib.js <<-'EOF'
	function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
	const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
	let s = 0;
	while (cpu() < 1500) s += fib(22);
	console.log("node:", s);
	EOF
	before=$(ls /tmp/perf-*.map 2>/dev/null || true)
	run -0 "$PROF" record -q -o d.spool -- node --perf-prof fib.js
	# the names came from the jitdump in the cwd: V8 wrote no perf map
	after=$(ls /tmp/perf-*.map 2>/dev/null || true)
	[ "$before" = "$after" ] || fail "a perf map appeared: $(comm -13 <(echo "$before") <(echo "$after"))"
	run -0 ls jit-*.dump
	dump=$(fibshare d.spool)
	dumpjit=$(jitnamed d.spool)
	run -0 "$PROF" report -q d.spool
	assert_line --regexp '^names: +\[anon\]: jitdump \(9[0-9]\.[0-9]% of the samples, 0\.[0-9]% of them unnamed\)$'
	run -0 "$PROF" record -q -o m.spool -- node --perf-basic-prof fib.js
	map=$(fibshare m.spool)
	mapjit=$(jitnamed m.spool)
	# fib is the workload; what else runs (V8's and OpenSSL's start-up) varies
	# by a point or two from run to run, so the names are compared within
	# the JIT code's samples
	[ "$map" -ge 900 ] || fail "the perf map names fib in $map per mille of the samples"
	[ "$dump" -ge 900 ] || fail "the jitdump names fib in $dump per mille of the samples"
	[ "$dumpjit" -ge 990 ] || fail "the jitdump names $dumpjit per mille of the JIT samples (the map $mapjit)"
	[ "$dumpjit" -ge $((mapjit - 5)) ] || fail "the jitdump names $dumpjit per mille of the JIT samples, the map $mapjit"
}

# Debian's CPython 3.11 (not a python3 a user installed ahead of it on PATH)
require_python311() {
	PY=/usr/bin/python3.11
	[ -x "$PY" ] || skip_or_fail "no /usr/bin/python3.11 (python3.11)"
	PYT="$TOP/tests/targets/python/threads.py"
}

# def_line NAME: the line of "def NAME" in the target
def_line() {
	grep -n "^def $1(" "$PYT" | cut -d: -f1
}

# pyshare SPOOL: the percentage of the samples whose stack holds
# foo -> bar -> baz, each named with its file and the line of its def
pyshare() {
	local chain
	chain="foo \\($PYT:$(def_line foo)\\);bar \\($PYT:$(def_line bar)\\);baz \\($PYT:$(def_line baz)\\)"
	"$PROF" report -q --format=folded "$1" |
		awk -v chain="$chain" '{ n = $NF; all += n; if ($0 ~ chain) hit += n }
			END { print all ? int(100 * hit / all) : 0 }'
}

# whole_through_jit SPOOL: the percentage of the samples in work() whose stack is whole through the JIT code
whole_through_jit() {
	"$PROF" report -q --format=folded "$1" |
		awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
			if (s !~ /;work$/) next
			all += n
			if (s ~ /^_start;__libc_start_main;__libc_start_call_main;main;jit_trampoline;work$/) hit += n }
			END { print all ? int(100 * hit / all) : 0 }'
}

@test "jitdump CFI: a frameless trampoline unwound by the FDE its JIT wrote, to main" {
	# rbp clobbered, the return address not at rsp: only the CFI leads through it
	run -0 --separate-stderr "$PROF" record -o c.spool -- "$T/jitcfi" 1
	assert_output --regexp '^jitcfi: [0-9]+ calls$'
	share=$(whole_through_jit c.spool)
	[ "$share" -ge 95 ] || fail "$share% of work's samples reach _start through jit_trampoline"
	# without the unwinding record the same program's stacks stop in it
	run -0 "$PROF" record -q -o n.spool -- "$T/jitcfi" --no-cfi 1
	share=$(whole_through_jit n.spool)
	[ "$share" -le 5 ] || fail "without its CFI, $share% of the samples are whole"
	run -0 "$PROF" report -q --format=folded n.spool
	assert_line --regexp '(^|;)jit_trampoline;work [0-9]+$'
	# attached after the load: the file read from the start
	"$T/jitcfi" 3 >/dev/null &
	pid=$!
	sleep 0.5
	run -0 "$PROF" record -q -o a.spool -p "$pid" -d 1
	wait "$pid"
	share=$(whole_through_jit a.spool)
	[ "$share" -ge 95 ] || fail "attached: $share% of work's samples are whole"
}

@test "jitdump: code loaded where other code was is named by the load there at the sample" {
	# jit_a and jit_b take turns at one address, 50 loads a second
	run -0 "$PROF" record -q -o r.spool -- "$T/jitcfi" --reuse 1
	assert_output --regexp '^jitcfi: [0-9]+ calls, [0-9]+ loads$'
	run -0 "$PROF" report -q --format=folded r.spool
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /;work_[ab]$/) { all += n; if (s ~ /;jit_a;work_a$/ || s ~ /;jit_b;work_b$/) right += n } }
		END { print right + 0, all + 0 }' <<<"$output" >count.txt
	read -r right all <count.txt
	[ "$all" -gt 0 ]
	((right * 100 >= all * 95)) || fail "$right of $all samples in work_a or work_b under their own trampoline's name"
	# each is a frame of its own in the spool, not one address named twice
	assert_line --regexp ';main;jit_a;work_a [0-9]+$'
	assert_line --regexp ';main;jit_b;work_b [0-9]+$'
}

@test "python 3.11: each eval loop's Python frames, foo -> bar -> baz in every thread" {
	require_python311
	run -0 --separate-stderr "$PROF" record -o p.spool -- "$PY" "$PYT" hot 1
	assert_output 'python: hot done'
	assert_regex "$stderr" 'prof: python: [1-9][0-9]* frames read, [0-9]+ stale \(not shown\), [0-9]+ eval loops unread'
	share=$(pyshare p.spool)
	[ "$share" -ge 95 ] || fail "foo;bar;baz in $share% of the samples"
	run -0 "$PROF" report -q --by-thread --format=folded p.spool
	# the main thread and both threads, each complete to its native root
	assert_line --regexp "^[^;]+;_start;__libc_start_main;.*;main \\($PYT:$(def_line main)\\);hot \\([^;]*;foo \\([^;]*;bar \\([^;]*;baz \\([^;]* [0-9]+\$"
	threads=$(grep -E "^[^;]+;clone3;start_thread;.*;Thread\\.run \\(.*;hot \\([^;]*;foo \\(" <<<"$output" |
		cut -d';' -f1 | sort -u | wc -l)
	[ "$threads" -eq 2 ] || fail "$threads threads' stacks are whole, not 2"
	# the report says what was read, and where the names came from
	run -0 "$PROF" report -q p.spool
	assert_line --regexp '^python: +[1-9][0-9]* frames read, [0-9]+ stale \(not shown\), [0-9]+ eval loops unread$'
	assert_line --regexp "baz \\($PYT:$(def_line baz)\\) +\\[python\\]\$"
	assert_line --regexp '^(names:)? +\[python\]: python \([0-9.]+% of the samples, 0\.0% of them unnamed\)$'
}

@test "python 3.11: a loop of short calls, the innermost frame right in 95% of samples" {
	require_python311
	run -0 --separate-stderr "$PROF" record -o t.spool -- "$PY" "$PYT" tiny 1
	assert_regex "$stderr" 'prof: python: [1-9][0-9]* frames read, [0-9]+ stale'
	# what ran was loop, or tiny under it: any other innermost Python frame is wrong
	"$PROF" report -q --format=folded t.spool |
		awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
			k = split(s, f, ";"); inner = ""; above = ""
			for (i = 1; i <= k; i++) if (f[i] ~ /\.py:[0-9]+\)$/) { above = inner; inner = f[i] }
			sub(/ \(.*/, "", inner); sub(/ \(.*/, "", above)
			if (inner == "loop" || (inner == "tiny" && above == "loop")) right += n
			else print n, s > "wrong.txt" }
			END { print right, all > "count.txt" }'
	read -r right all <count.txt
	((right * 100 >= all * 95)) || fail "the innermost Python frame is right in $right of $all samples: $(sort -nr wrong.txt | head -3)"
}

@test "python 3.11, attached and off-CPU: the Python frames of a running and of a waiting process" {
	require_python311
	"$PY" "$PYT" hot 3 >out &
	pid=$!
	sleep 0.5
	run -0 "$PROF" record -q -o a.spool -p "$pid" -d 1
	wait "$pid"
	share=$(pyshare a.spool)
	[ "$share" -ge 95 ] || fail "attached: foo;bar;baz in $share% of the samples"
	run -0 "$PROF" record -q --off-cpu -o w.spool -- "$PY" "$PYT" wait 0.5
	run -0 "$PROF" report -q --weight=off-cpu --format=folded w.spool
	assert_line --regexp "^_start;.*;waiter \\($PYT:$(def_line waiter)\\);sleeper \\($PYT:$(def_line sleeper)\\);.*clock_nanosleep;\\[blocked\\] [0-9]+\$"
}
