#!/usr/bin/env bats
# A minute of recording a churning service (tests/targets/churn: threads,
# dlopen/dlclose and children coming and going all the time, over a steady
# set of stacks): the recorder's descriptors do not grow, and its memory
# grows by no more than a small bound after the first 20 seconds, what it
# needs for the distinct stacks and files being learned by then.
# bench/soak runs the same for 20 minutes and prints the figures.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
}

# anon PID: the process's anonymous resident memory, KiB
anon() {
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$1/status"
}

@test "a minute of churn: the recorder's descriptors stay, its memory stays flat after 20 s" {
	require_libc_debug
	# Under ASan (make check SANITIZE=1) what the recorder frees waits in a
	# quarantine of up to 256 MiB before it is reused, and every allocation's
	# call stack is kept in a table that only grows: both would grow with
	# time whatever the recorder does, so both are off here, for this measure.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0:malloc_context_size=0 \
		"$PROF" record -q -o s.spool -- "$BUILD/targets/churn" 60 >churn.out &
	BG+=($!)
	local rec=${BG[0]} t base_anon base_fds anon fds max_anon=0 max_fds=0
	sleep 20
	base_anon=$(anon "$rec")
	base_fds=$(ls "/proc/$rec/fd" | wc -l)
	for t in 1 2 3 4 5 6 7 8; do
		sleep 5
		kill -0 "$rec" 2>/dev/null || break
		anon=$(anon "$rec")
		fds=$(ls "/proc/$rec/fd" | wc -l)
		if ((anon > max_anon)); then max_anon=$anon; fi
		if ((fds > max_fds)); then max_fds=$fds; fi
		echo "$((20 + 5 * t)) s: anon $anon KiB, $fds fds"
	done
	wait "$rec"
	echo "at 20 s: anon $base_anon KiB, $base_fds fds; then at most $max_anon KiB, $max_fds fds"
	((max_fds <= base_fds)) || fail "descriptors grew: $base_fds -> $max_fds"
	((max_anon - base_anon <= 1024)) || fail "memory grew by $((max_anon - base_anon)) KiB"
	# and what it recorded is whole: every child, thread and the library named
	run -0 grep -E '^churn: [0-9.]+ s, [0-9]+ threads, [0-9]+ dlopens, [0-9]+ children' churn.out
	run -0 "$PROF" report -q --format=folded s.spool
	assert_line --regexp ';work;step_0;step_[0-9];.*;leaf [0-9]+$'
	assert_line --regexp ';dltarget_entry;dltarget_work [0-9]+$'
	assert_line --regexp '^clone3;start_thread;short_thread;busy;'
}
