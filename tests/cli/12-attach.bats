#!/usr/bin/env bats
# prof record -p PID: attaching to running processes, which must not
# notice; and the lifecycle of processes and threads in both modes.
load test_helper

setup() {
	setup_recording
}

teardown() {
	# no target, nor a child of one, outlives its test
	local p
	for p in ${TARGET_PIDS:-}; do
		pkill -P "$p" 2>/dev/null || true
	done
	[ -n "${TARGET_PIDS:-}" ] && kill $TARGET_PIDS 2>/dev/null || true
}

# cpu_ticks PID: the user and system time PID has had, in clock ticks
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"
}

count_matching() {
	awk -v re="$1" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) hit += n }
		END { print hit + 0 }' "$2"
}

# start TARGET ARGS...: run it in the background, its output in target.out,
# and wait until it runs (the shell's child execs it)
start() {
	"$@" >target.out 2>&1 &
	TARGET=$!
	TARGET_PIDS="${TARGET_PIDS:-} $TARGET"
	wait_for_exec "$TARGET" "$1" || fail "$1 did not start"
}

# wait_for_child PID: until PID has forked a child, for at most 30 s
wait_for_child() {
	local i
	for ((i = 0; i < 300; i++)); do
		pgrep -P "$1" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

@test "attach to a running ladder: it finishes with its output and status; the chain is there" {
	# ladder runs for 2 s of its own CPU, so it outlives the 1 s recording
	start "$T/ladder" 2
	ticks0=$(cpu_ticks "$TARGET")
	run -0 --separate-stderr "$PROF" record -p "$TARGET" -d 1 -o a.spool
	ticks1=$(cpu_ticks "$TARGET")
	assert_regex "$stderr" '^prof: [0-9]+ samples, [0-9]+ lost( \([0-9]+ gaps, [0-9]+ reconciliations\))?, 1 process, 1 thread, '
	status=0
	wait "$TARGET" || status=$?
	assert_equal "$status" 0
	run cat target.out
	assert_output --regexp '^ladder: [0-9]+ rounds, checksum [0-9a-f]+$'
	"$PROF" report -q --format=folded a.spool >a.folded
	# in nearly every sample of the second; as many samples as the CPU time
	# the ladder had meanwhile (a loaded machine gives it less of that second)
	chain=$(count_matching '^_start;.*;main;ladder_a;ladder_b;ladder_c;ladder_d$' a.folded)
	total=$(awk '{ n += $NF } END { print n + 0 }' a.folded)
	cpu_ms=$(((ticks1 - ticks0) * 1000 / $(getconf CLK_TCK)))
	((total * 1000 >= cpu_ms * 999 * 7 / 10 - 20000)) ||
		fail "only $total samples for $cpu_ms ms of the ladder's CPU"
	[ "$total" -ge 5 ] || fail "only $total samples"
	((chain * 100 >= total * 95)) || fail "full chain in $chain of $total samples"
	run -0 "$PROF" report -q a.spool
	assert_line "command:      pid $TARGET"
}

@test "the recording ends by itself when the attached process exits" {
	start "$T/ladder" 0.7
	# no -d: it would record until the timeout otherwise
	run -0 timeout 30 "$PROF" record -q -p "$TARGET" -o e.spool
	run -0 "$PROF" report -q e.spool
	assert_line --regexp '^samples: +[1-9][0-9]* written'
}

@test "two pids at once, one of them with four busy threads" {
	# recorded to their ends, the seconds of CPU time they burn (not a
	# second of wall time, of which a loaded machine gives them little)
	start "$T/ladder" 2
	a=$TARGET
	start "$T/busy4" 1
	b=$TARGET
	run -0 timeout 120 "$PROF" record -q -p "$a,$b" -o two.spool
	"$PROF" report -q --by-process --format=folded two.spool >two.folded
	[ "$(count_matching "^ladder-$a;.*ladder_d\$" two.folded)" -ge 100 ] || fail "ladder missing"
	for n in 0 1 2 3; do
		hits=$(count_matching "^busy4-$b;.*;busy_thread_$n;busy_spin\$" two.folded)
		[ "$hits" -ge 50 ] || fail "busy_thread_$n: $hits samples"
	done
	"$PROF" report -q --by-thread --format=folded two.spool >threads.folded
	for n in 0 1 2 3; do
		hits=$(count_matching "^busy-$n-[0-9]+;.*;busy_thread_$n;busy_spin\$" threads.folded)
		[ "$hits" -ge 50 ] || fail "busy-$n: $hits samples under its name"
	done
}

@test "--children also attaches the children a process already has" {
	# long enough to outlive both recordings on a loaded machine; teardown ends it
	start "$T/forker" 6
	wait_for_child "$TARGET" || fail "forker did not fork"
	run -0 "$PROF" record -q -p "$TARGET" --children -d 1 -o c.spool
	"$PROF" report -q --by-process --format=folded c.spool >c.folded
	# (a second of wall time: a loaded machine may give them little of it)
	[ "$(count_matching ';child_busy;child_spin$' c.folded)" -ge 20 ] || fail "child missing"
	[ "$(count_matching ';parent_busy;parent_spin$' c.folded)" -ge 20 ] || fail "parent missing"
	run -0 "$PROF" record -q -p "$TARGET" -d 0.5 -o p.spool
	"$PROF" report -q --format=folded p.spool >p.folded
	assert_equal "$(count_matching 'child_' p.folded)" 0
}

@test "the target's own signal handling is intact: same output and status as without prof" {
	# the signals once it has its handlers (it forks its child after them)
	"$T/sigtarget" 1.5 >plain.out &
	pid=$!
	wait_for_child $pid || fail "sigtarget did not start"
	kill -STOP $pid; sleep 0.1; kill -CONT $pid; kill -INT $pid
	status=0
	wait $pid || status=$?
	assert_equal "$status" 3
	# (3 s: the attach may take a while on a loaded machine)
	start "$T/sigtarget" 3
	wait_for_child $TARGET || fail "sigtarget did not start"
	"$PROF" record -q -p "$TARGET" -o s.spool &
	rec=$!
	# the signals while it is recorded: its spool is written from the start
	for ((i = 0; i < 300; i++)); do
		[ -s s.spool ] && break
		sleep 0.1
	done
	[ -s s.spool ] || fail "the recording did not start"
	kill -STOP $TARGET; sleep 0.1; kill -CONT $TARGET; kill -INT $TARGET
	status=0
	wait $TARGET || status=$?
	assert_equal "$status" 3
	wait $rec
	assert_equal "$(cat target.out)" "$(cat plain.out)"
	assert_equal "$(cat plain.out)" "sigtarget: sigint=1 sigchld=1 sigcont=1"
	run -0 "$PROF" report -q --format=folded s.spool
	assert_output --partial ";main;sig_busy;sig_spin "
}

@test "attach errors: no such pid, a pid and a command, bad pids, --children alone" {
	# at once: it does not wait for such a pid to come
	run -1 --separate-stderr timeout 30 "$PROF" record -p 2147483000 -o x.spool
	assert_equal "$stderr" "prof: no process with pid 2147483000"
	[ ! -e x.spool ]
	run -64 --separate-stderr "$PROF" record -p 1 -- true
	assert_equal "${stderr_lines[0]}" "prof record: give either -p PID or a command, not both"
	run -64 --separate-stderr "$PROF" record -p 12x
	assert_equal "${stderr_lines[0]}" "prof record: invalid pid '12x'"
	run -64 --separate-stderr "$PROF" record --children -- true
	assert_equal "${stderr_lines[0]}" "prof record: --children needs -p PID"
}

@test "a pid given twice is attached once, with a warning" {
	start "$T/ladder" 1
	run -0 --separate-stderr "$PROF" record -p "$TARGET,$TARGET" -d 0.3 -o d.spool
	assert_equal "${stderr_lines[0]}" "prof: warning: pid $TARGET given twice; attaching to it once"
	assert_regex "${stderr_lines[1]}" '^prof: [0-9]+ samples, [0-9]+ lost( \([0-9]+ gaps, [0-9]+ reconciliations\))?, 1 process, 1 thread, '
}

@test "attaching without the right to ptrace names the gate" {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root to run prof as another user"
	# a copy that user nobody can reach, wherever the tree is
	dir=$(mktemp -d /tmp/prof-nobody.XXXXXX)
	chmod 755 "$dir"
	cp "$PROF" "$dir/prof"
	chmod 755 "$dir/prof"
	start "$T/ladder" 1
	run -1 --separate-stderr runuser -u nobody -- "$dir/prof" record -p "$TARGET" -o "$dir/never.spool"
	rm -rf "$dir"
	assert_regex "$stderr" "^prof: not permitted to attach to pid $TARGET: ptrace "
}

@test "exec in the same pid: only the new image's functions after it" {
	"$PROF" record -q -o x.spool -- sh -c \
		"i=0; while [ \$i -lt 150000 ]; do i=\$((i + 1)); done; exec '$T/ladder' 0.5" >/dev/null
	"$PROF" report -q --by-process --format=folded x.spool >x.folded
	[ "$(count_matching '^sh-[0-9]+;' x.folded)" -ge 20 ] || fail "no samples of the shell"
	[ "$(count_matching '^ladder-[0-9]+;.*ladder_d$' x.folded)" -ge 200 ] || fail "no ladder"
	assert_equal "$(count_matching '^sh-[0-9]+;.*ladder_' x.folded)" 0
	assert_equal "$(count_matching '^ladder-[0-9]+;.*(dash|sh)\+0x' x.folded)" 0
}

@test "200 short-lived threads are all sampled under their names" {
	"$PROF" record -q -o tp.spool -- "$T/threadpool" 1 >/dev/null
	run -0 "$PROF" report -q tp.spool
	assert_line --regexp '^tracked: +1 processes, 201 threads;'
	"$PROF" report -q --by-thread --format=folded tp.spool >tp.folded
	names=$(awk -F';' '$1 ~ /^pool-[0-9]+-[0-9]+$/ { sub(/-[0-9]+$/, "", $1); print $1 }' tp.folded | sort -u | wc -l)
	[ "$names" -ge 180 ] || fail "only $names pool-N names"
	[ "$(count_matching '^pool-[0-9]+-[0-9]+;.*;pool_task;pool_spin$' tp.folded)" -ge 500 ] || fail "pool_task chain"
}

@test "thread renames are recorded: samples before and after under each name" {
	"$PROF" record -q -o rn.spool -- "$T/threads" --rename 0.4 >/dev/null
	"$PROF" report -q --by-thread --format=folded rn.spool >rn.folded
	for n in alpha beta gamma; do
		[ "$(count_matching "^$n-[0-9]+;.*thread_$n" rn.folded)" -ge 50 ] || fail "$n"
		[ "$(count_matching "^${n}2-[0-9]+;.*thread_$n" rn.folded)" -ge 50 ] || fail "${n}2"
	done
}

@test "at -F max with 4 busy threads the spool stays valid and every loss is counted and warned" {
	run -0 --separate-stderr "$PROF" record -F max -o max.spool -- "$T/busy4" 1
	assert_regex "$stderr" '^prof: [0-9]+ samples, [0-9]+ lost( \([0-9]+ gaps, [0-9]+ reconciliations\))?, 1 process, 5 threads, '
	lost=$(echo "$stderr" | sed -E 's/^prof: [0-9]+ samples, ([0-9]+) lost.*/\1/')
	run -0 --separate-stderr "$PROF" report max.spool
	assert_line --regexp "^samples: +[0-9]+ written, [0-9]+ delivered by the kernel, $lost lost "
	if [ "$lost" -gt 0 ]; then
		assert_regex "${stderr_lines[0]}" "^prof: warning: $lost events were lost \([0-9.]+% of samples and losses\)"
		assert_line --regexp '^tracked: .* [1-9][0-9]* lifecycle gaps, [1-9][0-9]* reconciliations$'
	fi
}

@test "examples/hottest --pid attaches through the API, refreshing threads at each poll" {
	start "$T/busy4" 2
	run -0 "$BUILD/hottest" --pid "$TARGET" 0.6 h.spool
	assert_line --regexp '^[0-9]+ samples, 5 threads$'
	assert_line --regexp '^  busy_spin \(busy4\)$'
}
