#!/usr/bin/env bats
# prof record --off-cpu and the reports' --weight: where threads wait,
# checked against waiter, a target whose threads sleep, block on a pipe,
# contend on a mutex and compute, timing each phase themselves (wall and
# CPU clocks), and against synthetic spools whose intervals are known.
# --off-cpu samples in the kernel: it needs what require_perf_events asks
# for (root, or kernel.perf_event_paranoid <= 1).
load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	kill_background
}

# phase_shares FOLDED: "PHASE WEIGHT" per phase function of waiter (the
# first *_phase frame of each stack), then "all TOTAL".
phase_shares() {
	awk '{
		n = $NF; total += n
		if (match($0, /;[a-z]+_phase(;| )/)) {
			p = substr($0, RSTART + 1, RLENGTH - 2); w[p] += n
		}
	} END { for (p in w) print p, w[p]; print "all", total }' "$1"
}

# compare_shares TRUTH PROFILE: each phase's share of TRUTH ("phase NAME
# VALUE" lines) and of PROFILE (phase_shares), in points; fails naming
# those more than 5 points apart.
compare_shares() {
	awk -v tol=5 '
		FNR == NR { truth[$1] = $2; tsum += $2; next }
		$1 == "all" { psum = $2; next }
		{ prof[$1] = $2 }
		END {
			bad = 0
			for (p in truth) {
				t = 100 * truth[p] / tsum; g = 100 * prof[p] / psum
				d = t - g; if (d < 0) d = -d
				printf "%-14s truth %5.1f%%  profile %5.1f%%\n", p, t, g
				if (d > tol) { printf "  %s: %.1f points apart\n", p, d; bad = 1 }
			}
			exit bad
		}' "$1" "$2"
}

@test "--off-cpu: each phase's share of wall and of off-CPU time is within 5 points of what waiter measured" {
	require_perf_events
	run -0 --separate-stderr "$PROF" record --off-cpu -o w.spool -- "$BUILD/targets/waiter" 2
	# wall: the phase's wall clock; off-CPU: its wall less its CPU time
	awk '$1 == "phase" { print $2, $3 }' <<<"$output" >truth-wall
	awk '$1 == "phase" { print $2, $3 - $4 }' <<<"$output" >truth-off
	[ "$(wc -l <truth-wall)" -eq 7 ] || fail "waiter printed: $output"
	assert_regex "$stderr" $'\nprof: off-CPU: [0-9]+ intervals, [0-9.]+ s \\(blocked [0-9.]+ s, runnable [0-9.]+ s\\), [0-9.]+% complete stacks; lost: 0 switch samples, 0 switch records'
	run -0 "$PROF" report -q --weight=wall --format=folded w.spool
	printf '%s\n' "$output" >wall.folded
	phase_shares wall.folded >wall.shares
	run compare_shares truth-wall wall.shares
	[ "$status" -eq 0 ] || fail "wall: $output"
	run -0 "$PROF" report -q --weight=off-cpu --format=folded w.spool
	printf '%s\n' "$output" >off.folded
	phase_shares off.folded >off.shares
	run compare_shares truth-off off.shares
	[ "$status" -eq 0 ] || fail "off-CPU: $output"
}

@test "--off-cpu: a thread's wall time is its lifetime, and the mutex waiter's stack shows the caller of pthread_mutex_lock" {
	require_perf_events
	require_libc_debug
	run -0 "$PROF" record -q --off-cpu -o w.spool -- "$BUILD/targets/waiter" 1
	grep '^thread ' <<<"$output" >lifetimes
	[ "$(wc -l <lifetimes)" -eq 7 ] || fail "waiter printed: $output"
	# seven threads, each as long as it lived by its own clock
	"$PROF" report -q --weight=wall --by-thread w.spool >threads
	run -0 lifetimes_agree lifetimes <threads
	# the waits on the lock: lock_phase calls pthread_mutex_lock, blocked in a futex
	# (glibc's mutex is not fair: one locker may take it back each time, the other waits)
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --comm=locker1,locker2 w.spool
	assert_line --regexp '^clone3;start_thread;locker_main;lock_phase;pthread_mutex_lock;.*\[blocked\] [0-9]+$'
	refute_line --regexp ';\[runnable\];|\[blocked\];'
	# blocked and runnable never share a stack: each stack ends in exactly one state
	run -0 "$PROF" report -q --weight=off-cpu --format=folded w.spool
	refute_line --regexp '[^]] [0-9]+$'
}

@test "--off-cpu: a thread waiting for a CPU is runnable, apart from one that blocked" {
	require_perf_events
	command -v taskset >/dev/null || skip_or_fail "taskset is not installed (util-linux)"
	# on one CPU the computer and the lock holder take turns: both wait runnable
	run -0 --separate-stderr taskset -c 0 "$PROF" record --off-cpu -o w.spool -- "$BUILD/targets/waiter" 1
	truth=$(awk '$2 == "compute_phase" { print $3 - $4, $3 }' <<<"$output")
	run -0 "$PROF" report -q --weight=off-cpu --format=folded w.spool
	# compute_phase never blocks: its off-CPU time is runnable, as much as it measured
	run -0 awk -v truth="$truth" '
		/;compute_phase;/ { if (/\[runnable\] [0-9]+$/) run += $NF; else other += $NF }
		END {
			split(truth, t, " "); want = t[1] / 1000
			printf "runnable %d us, other %d us, measured %d us\n", run, other, want
			if (want < 50000 || run < 0.8 * want || run > 1.2 * want || other > 0.05 * run)
				exit 1
		}' <<<"$output"
	# the sleeper blocks
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --comm=sleeper w.spool
	assert_line --regexp ';sleep_phase;.*\[blocked\] [0-9]+$'
}

@test "--off-cpu -k: the kernel's stack says what it waited in; --no-kernel leaves it out" {
	require_perf_events
	run -0 "$PROF" record -q --off-cpu -k -o k.spool -- "$BUILD/targets/waiter" 1
	run -0 "$PROF" report -q --weight=off-cpu --format=folded k.spool
	printf '%s\n' "$output" >k.folded
	assert_line --regexp ';sleep_phase;.*nanosleep;.*schedule;\[blocked\] [0-9]+$'
	assert_line --regexp ';pipe_phase;.*read;.*pipe_read;.*\[blocked\] [0-9]+$'
	assert_line --regexp ';lock_phase;pthread_mutex_lock;.*futex.*;\[blocked\] [0-9]+$'
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --no-kernel k.spool
	refute_line --regexp 'schedule|do_syscall_64|entry_SYSCALL'
	assert_line --regexp ';sleep_phase;(__)?nanosleep;clock_nanosleep;\[blocked\] [0-9]+$'
	# the same time, with or without the kernel's frames
	total() { awk '{ s += $NF } END { print s }'; }
	[ "$(total <<<"$output")" -eq "$(total <k.folded)" ]
}

@test "--off-cpu -p: a mostly sleeping process waits the whole recording" {
	require_perf_events
	sleep 60 &
	BG+=($!)
	sleep 0.2
	run -0 --separate-stderr "$PROF" record --off-cpu -p "${BG[0]}" -d 1 -o a.spool
	run -0 "$PROF" report -q --weight=off-cpu --format=folded a.spool
	assert_line --regexp ';clock_nanosleep;\[blocked\] [0-9]+$'
	# the whole recording of waiting, as long as the recording says it took,
	# but for the start and end of the recording that are no interval's (the
	# attach and enable, the drain: a few ms idle, 10% allowed)
	us=$("$PROF" report -q --format=json a.spool | jq '.counters.duration_ns / 1000 | floor')
	run -0 awk -v us="$us" '{ s += $NF }
		END { print s " us off-CPU in " us " us"; exit !(s <= us && s >= 0.9 * us) }' <<<"$output"
	kill "${BG[0]}"
}

@test "--off-cpu without the privilege: one line that names the fix, exit 1, no spool" {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "dropping to user nobody needs root"
	command -v setpriv >/dev/null || skip_or_fail "setpriv is not installed (util-linux)"
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ] ||
		skip_or_fail "kernel.perf_event_paranoid is below 2: nobody may sample the kernel"
	W=$(mktemp -d /tmp/prof-nobody.XXXXXX)
	chmod 755 "$W"
	cp "$PROF" "$W/prof"
	chown nobody "$W"
	cd "$W"
	run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$W/prof" record --off-cpu -o u.spool -- /bin/true
	assert_equal "$(grep -c . <<<"$stderr")" 1
	assert_regex "$stderr" '^prof: off-CPU intervals sample threads inside the kernel .*kernel\.perf_event_paranoid 2 forbids: run as root, grant CAP_PERFMON, or set kernel\.perf_event_paranoid to 1$'
	[ ! -e u.spool ]
	cd /
	rm -rf "$W"
}

@test "--weight=off-cpu|wall on a spool without off-CPU intervals: one line, exit 1" {
	sp=$(spool plain.spool)
	run -1 --separate-stderr "$PROF" report --weight=off-cpu "$sp"
	assert_regex "$stderr" '^prof: --weight=off-cpu: a report by off-CPU time needs off-CPU intervals, and this spool has none; record with prof record --off-cpu$'
	run -1 --separate-stderr "$PROF" report --weight=wall --format=folded "$sp"
	run -1 --separate-stderr "$PROF" tail --weight=off-cpu "$sp"
	assert_regex "$stderr" '^prof: --weight=off-cpu: a report by off-CPU time needs off-CPU intervals'
	run -64 --separate-stderr "$PROF" report --weight=idle "$sp"
	assert_regex "$stderr" "'idle' is not a weight; the weights are: cpu, off-cpu, wall"
	# a spool of cycles has no time to add up to wall time
	run -0 "$PROF" report -q --weight=cpu "$sp"
}

@test "a spool is version 4.0 with off-CPU intervals or without; 1.0 to 3.0 still read" {
	sp=$(spool plain.spool)
	off=$(spool off.spool --offcpu 10)
	[ "$(od -An -tu1 -j8 -N4 "$sp" | xargs)" = "4 0 0 0" ]
	[ "$(od -An -tu1 -j8 -N4 "$off" | xargs)" = "4 0 0 0" ]
	# the corpus keeps spools of the versions before, written by an older prof
	[ "$(od -An -tu1 -j8 -N1 "$TOP/tests/fuzz/corpus/offcpu.spool" | xargs)" = "2" ]
	run -0 "$PROF" report -q "$TOP/tests/fuzz/corpus/offcpu.spool"
	assert_line "off-CPU:      30 intervals, 0.115 s, 30 switch-outs sampled, 0 lost (0.00%)"
	[ "$(od -An -tu1 -j8 -N1 "$TOP/tests/fuzz/corpus/small.spool" | xargs)" = "1" ]
	run -0 "$PROF" report -q "$TOP/tests/fuzz/corpus/small.spool"
	assert_line "samples:      20 written, 20 delivered by the kernel, 0 lost (0.00%)"
	[ "$(od -An -tu1 -j8 -N1 "$TOP/tests/fuzz/corpus/v3-offcpu.spool" | xargs)" = "3" ]
	run -0 "$PROF" report -q "$TOP/tests/fuzz/corpus/v3-offcpu.spool"
	assert_line --regexp '^off-CPU: +[1-9][0-9]* intervals'
	# a version this prof does not know: one line
	cp "$off" v5.spool
	printf '\005' | dd of=v5.spool bs=1 seek=8 conv=notrunc status=none
	run -1 --separate-stderr "$PROF" report v5.spool
	assert_equal "$stderr" "prof: spool 'v5.spool' has format version 5.0; this prof reads 1.x to 4.x (a newer prof wrote it)"
}

@test "--weight on a synthetic spool: every format weighs the intervals by their time" {
	require_cmd jq jq
	sp=$(spool off.spool --offcpu 100 --elf "$BUILD/targets/ladder" --kernel)
	# intervals j = 0..99 last (1 + j % 7) ms: 395 ms in all, 299 blocked, 96 runnable
	run -0 "$PROF" report -q --weight=off-cpu --format=folded "$sp"
	run -0 awk '{ s += $NF } END { print s; exit s != 395000 }' <<<"$output"
	refute_line --regexp '[^]] [0-9]+$'
	run -0 "$PROF" report -q --weight=off-cpu --format=json "$sp"
	run -0 jq -r '[.weight, .unit, .total, .samples, .counters.offcpu_intervals,
		       (.stacks | map(.count) | add),
		       (.functions[] | select(.name == "[blocked]") | .self)] | @tsv' <<<"$output"
	assert_output $'off-cpu\tns\t395000000\t100\t100\t395000000\t299000000'
	run -0 "$PROF" report -q --weight=off-cpu "$sp"
	assert_line --regexp '^ +self% +total% +self ms +function +module$'
	assert_line --regexp '^ *[0-9.]+% +[0-9.]+% +299\.00  \[blocked\]'
	run -0 "$PROF" report --weight=off-cpu --format=tree "$sp"
	assert_line --regexp '^weight: +off-CPU time, 0\.395 s in 100 intervals$'
	assert_line --regexp '^ total%   self%   total ms  call tree$'
	# wall: every sample's period too (3000 samples of 1001001 ns)
	run -0 "$PROF" report -q --weight=wall --format=json "$sp"
	assert_equal "$(jq .total <<<"$output")" $((3000 * 1001001 + 395000000))
	# inverted: the states are the roots
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --inverted "$sp"
	refute_line --regexp '^[^[]'
	# a thread's intervals only: j % 3 == 0
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --tid=4242 "$sp"
	run -0 awk '{ s += $NF } END { print s }' <<<"$output"
	want=$(awk 'BEGIN { for (j = 0; j < 100; j += 3) s += 1000 * (1 + j % 7); print s }')
	assert_output "$want"
	# by thread: three sections whose times add up
	run -0 "$PROF" report -q --weight=off-cpu --by-thread "$sp"
	run -0 awk '/^thread / { s += $(NF - 2) } END { printf "%.2f\n", s }' <<<"$output"
	assert_output "395.00"
	# --diff of a spool with itself: nothing changed, stacks in microseconds
	run -0 "$PROF" report -q --weight=off-cpu --diff --format=folded "$sp" "$sp"
	run -0 awk '$(NF - 1) != $NF { exit 1 } { s += $NF } END { print s }' <<<"$output"
	assert_output 395000
	run -0 "$PROF" report -q --weight=off-cpu --diff --format=json "$sp" "$sp"
	assert_equal "$(jq -r '[.weight, .unit, .base.total] | @tsv' <<<"$output")" $'off-cpu\tns\t395000000'
}

@test "--weight=off-cpu exports: perf-script, pprof, speedscope and svg carry the time" {
	require_cmd jq jq
	sp=$(spool off.spool --offcpu 100 --elf "$BUILD/targets/ladder")
	run -0 "$PROF" report -q --weight=off-cpu --format=perf-script "$sp"
	assert_equal "$(grep -c ' offcpu-time: $' <<<"$output")" 100
	assert_line --regexp '^ladder +4242/4242 +[0-9]+\.[0-9]{6}: +1000000 offcpu-time: $'
	run -0 awk '/ offcpu-time: $/ { s += $(NF - 1) } END { print s }' <<<"$output"
	assert_output 395000000
	# wall: the samples with their event, the intervals as offcpu-time
	run -0 "$PROF" report -q --weight=wall --format=perf-script "$sp"
	assert_equal "$(grep -c ' cpu-clock: $' <<<"$output")" 3000
	run -0 "$PROF" report -q --weight=off-cpu --format=speedscope --by-thread "$sp"
	run -0 jq '[.profiles[] | .weights | add] | add' <<<"$output"
	assert_output 395000000
	run -0 "$PROF" report -q --weight=off-cpu --format=svg -o off.svg "$sp"
	grep -q 'data-unit="ns"' off.svg
	# the [blocked] frames are as wide as the 299 ms blocked
	run -0 awk -F'<title>\\[blocked\\] \\(' 'NF > 1 { s += $2 + 0 } END { printf "%.2f\n", s }' off.svg
	assert_output "299.00"
	# off-CPU frames in blues: blue the largest of the three
	run -0 awk -F'fill="rgb\\(' 'NF > 1 { split($2, c, /[,)]/); n++; if (c[3] > c[1] && c[3] >= c[2]) blue++ }
		END { print blue "/" n; exit blue < n * 0.9 }' off.svg
	if command -v go >/dev/null; then
		run -0 "$PROF" report -q --weight=off-cpu --format=pprof -o off.pb.gz "$sp"
		run -0 go tool pprof -raw off.pb.gz
		assert_line 'PeriodType: off-cpu nanoseconds'
		assert_line --regexp '^Samples:$'
		assert_line 'samples/count off-cpu/nanoseconds[dflt]'
	fi
}

@test "prof tail shows off-CPU time, and --weight=off-cpu ranks the functions that waited" {
	require_cmd jq jq
	sp=$(spool off.spool --offcpu 100 --elf "$BUILD/targets/ladder")
	run -0 "$PROF" tail --format=top "$sp"
	assert_line --regexp '^off-CPU last: [0-9.]+ s blocked, [0-9.]+ s runnable \(100 intervals\); all: 0\.299 s blocked, 0\.096 s runnable$'
	run -0 "$PROF" tail --weight=off-cpu --format=samples "$sp"
	assert_equal "${#lines[@]}" 100
	assert_line --regexp '^[0-9]+\.[0-9]{6} 4242 4243 worker-one 2000 .*;\[blocked\]$'
	run -0 awk '{ s += $5 } END { print s }' <<<"$output"
	assert_output 395000
	run -0 "$PROF" tail --weight=off-cpu --format=json "$sp"
	run -0 jq -rs 'last | [.weight, .unit, .offcpu.all.intervals, .offcpu.all.blocked_ns] | @tsv' <<<"$output"
	assert_output $'off-cpu\tns\t100\t299000000'
	run -0 "$PROF" tail --weight=off-cpu --format=top "$sp"
	assert_line --regexp '^ +last ms +self% +all ms +self%  function'
}

@test "--off-cpu: a context-switch storm is counted, and its losses said apart from samples" {
	require_perf_events
	require_cmd jq jq
	require_libc_debug
	run -0 --separate-stderr "$PROF" record --off-cpu -o p.spool -- "$BUILD/targets/pingpong" 1
	assert_regex "$stderr" $'\nprof: off-CPU: [0-9]+ intervals'
	# most of the switch-outs the target made are intervals, the rest counted lost
	rounds=$(awk '{ print $2 }' <<<"$output")
	run -0 "$PROF" report -q --format=json --weight=off-cpu p.spool
	run -0 jq -r '[.counters.offcpu_intervals, (.counters.lost["switch-samples"] // 0) + (.counters.lost["switch-records"] // 0)] | @tsv' <<<"$output"
	read -r intervals lost <<<"$output"
	echo "rounds $rounds, intervals $intervals, lost $lost"
	# each round trip blocks each of the two threads once
	((intervals + lost >= rounds * 2 * 9 / 10))
	run -0 "$PROF" report -q --weight=off-cpu --format=folded p.spool
	assert_line --regexp '^clone3;start_thread;pong_main;wait_ball;read;.*\[blocked\] [0-9]+$'
}
