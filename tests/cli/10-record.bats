#!/usr/bin/env bats
# prof record -- CMD on real programs: exit statuses, spools, signals,
# inheritance.  Needs perf events (root, or perf_event_paranoid <= 1).
load test_helper

setup() {
	setup_recording
}

@test "record writes a spool whose stacks are complete, and a one-line summary" {
	run -0 --separate-stderr "$PROF" record -o l.spool -- "$T/ladder" 0.5
	assert_output --regexp '^ladder: [0-9]+ rounds'
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" '^prof: [0-9]+ samples, [0-9]+ lost( \([0-9]+ gaps, [0-9]+ reconciliations\))?, 1 process, 1 thread, (cpu-clock|cycles)[^,]*, [0-9.]+% complete stacks, [0-9.]+ [KM]?i?B spool \([0-9.]+ B/sample\): l.spool$'
	run -0 "$PROF" report -q l.spool
	assert_line --regexp '^stacks: +[0-9]+ complete \((9[5-9]|100)\.[0-9]%\), [0-9]+ truncated, 0 empty$'
	assert_line --regexp '^samples: +[1-9][0-9]{2,} written'
}

@test "small rings at a busy pace: the recorder drains a clock's rings in time, unwoken" {
	# 512 KiB rings hold 31 samples of a 16 KiB stack copy, and four busy
	# threads on two CPUs fill each at ~999 a second.  The kernel does not
	# wake the recorder for a clock's ring: it comes as the rate says the
	# ring may be a quarter full.  Coming by its 100 ms timeout alone, it
	# would lose most of them.
	run -0 --separate-stderr "$PROF" record -e cpu-clock -F 999 -s 16384 -m 128 -o s.spool -- "$T/busy4" 1
	read -r samples lost < <(sed -nE 's/^prof: ([0-9]+) samples, ([0-9]+) lost.*/\1 \2/p' <<<"$stderr")
	echo "$samples samples, $lost lost"
	((samples > 1000))
	((lost * 20 <= samples + lost))
}

@test "a small ring at a fast rate on a sleeping command: the recorder sleeps too" {
	# 32 pages hold one sample of a 64 KiB stack copy: the rate says the
	# ring may reach its watermark in half a millisecond.  A wait rounded
	# down to 0 ms spun the recorder for the whole second (~1 s of CPU).
	run -0 --separate-stderr "$PROF" record -v -F 999 -s 65528 -m 32 -o s.spool -- sleep 1
	cpu=$(sed -nE "s/^prof: the recorder's own CPU time: ([0-9.]+) s.*/\1/p" <<<"$stderr")
	echo "recorder CPU: $cpu s"
	[ -n "$cpu" ]
	awk -v c="$cpu" 'BEGIN { exit !(c < 0.25) }'
}

@test "record -q prints nothing on stderr, and prof.spool is the default" {
	run -0 --separate-stderr "$PROF" record -q -- "$T/exitcode" 0
	assert_equal "$stderr" ""
	[ -f prof.spool ]
	run -0 "$PROF" report -q prof.spool
}

@test "the command's exit status passes through: 0, 7, 128+N" {
	run -0 "$PROF" record -q -- "$T/exitcode" 0
	run -7 "$PROF" record -q -- "$T/exitcode" 7
	run -143 "$PROF" record -q -- "$T/exitcode" --signal 15
	run -137 "$PROF" record -q -- "$T/exitcode" --signal 9
}

@test "a command that is not found exits 127, one that is not executable 126" {
	run -127 --separate-stderr "$PROF" record -- ./no-such-program
	assert_equal "$stderr" "prof: './no-such-program': command not found"
	echo 'not a program' >data.txt
	run -126 --separate-stderr "$PROF" record -- ./data.txt
	assert_equal "$stderr" "prof: cannot execute './data.txt': Permission denied"
}

@test "a failed run leaves an existing spool untouched" {
	"$PROF" record -q -o keep.spool -- "$T/exitcode" 0
	before=$(sha256sum keep.spool)
	run -127 "$PROF" record -q -o keep.spool -- ./no-such-program
	assert_equal "$(sha256sum keep.spool)" "$before"
	run ls -A
	refute_output --partial ".tmp."
}

@test "record -- true gives a valid spool with (next to) no samples and a trailer" {
	run "$PROF" record -o t.spool -- true
	assert_success
	run -0 --separate-stderr "$PROF" report t.spool
	# true's exec takes a millisecond or so of CPU: a loaded machine may sample it
	assert_line --regexp '^samples:      [0-9] written, [0-9] delivered by the kernel, 0 lost \(0\.00%\)$'
	assert_equal "$stderr" ""
}

# elapsed_ns SINCE: nanoseconds of wall time since $EPOCHREALTIME was SINCE
elapsed_ns() {
	local now=$EPOCHREALTIME
	echo $(((${now//[.,]/} - ${1//[.,]/}) * 1000))
}

@test "SIGINT to prof stops the recording with a trailer, and reaches the command" {
	launched=$EPOCHREALTIME
	"$PROF" record -q -o s.spool -- "$T/ladder" 10 &
	pid=$!
	# a second of recording: the spool is there from the start of sampling
	for ((i = 0; i < 300; i++)); do
		[ -s s.spool ] && break
		sleep 0.1
	done
	[ -s s.spool ] || fail "no spool"
	sleep 1
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	took=$(elapsed_ns "$launched")
	assert_equal "$status" 130
	run -0 --separate-stderr "$PROF" report s.spool
	assert_equal "$stderr" ""
	assert_line --regexp '^samples: +[0-9]+ written'
	# from before the second to after the signal, within prof's own run
	ns=$("$PROF" report -q --format=json s.spool | jq .counters.duration_ns)
	((ns >= 1000000000 && ns <= took)) || fail "a recording of $ns ns in $took ns"
}

@test "-d stops the recording and the command after that many seconds" {
	launched=$EPOCHREALTIME
	run -143 --separate-stderr "$PROF" record -d 0.5 -o d.spool -- "$T/ladder" 10
	took=$(elapsed_ns "$launched")
	run -0 "$PROF" report -q d.spool
	assert_line --regexp '^duration: +[0-9]+\.[0-9]+ s$'
	# at least its half second, and no longer than prof ran (the ladder's 10)
	ns=$("$PROF" report -q --format=json d.spool | jq .counters.duration_ns)
	((ns >= 500000000 && ns <= took)) || fail "a recording of $ns ns in $took ns"
}

@test "threads and forked children are followed; --no-inherit keeps to the first process" {
	run -0 "$PROF" record -q -o f.spool -- "$T/forker" 0.3
	run -0 "$PROF" report -q f.spool
	assert_line "tracked:      2 processes, 2 threads; 0 lifecycle gaps, 0 reconciliations"
	run -0 "$PROF" record -q --no-inherit -o n.spool -- "$T/forker" 0.3
	run -0 "$PROF" report -q n.spool
	assert_line "tracked:      1 processes, 1 threads; 0 lifecycle gaps, 0 reconciliations"
	run -0 "$PROF" record -q --no-inherit -o th.spool -- "$T/threads" 0.2
	run -0 "$PROF" report -q th.spool
	assert_line "tracked:      1 processes, 4 threads; 0 lifecycle gaps, 0 reconciliations"
}

@test "bad options are usage errors that say what was wrong" {
	run -64 --separate-stderr "$PROF" record
	assert_equal "${stderr_lines[0]}" "prof record: no command to record (prof record -- COMMAND [ARG...], or -p PID)"
	run -64 --separate-stderr "$PROF" record -e bogus -- true
	assert_equal "${stderr_lines[0]}" "prof record: unknown event 'bogus' (cpu-clock, task-clock or cycles)"
	run -64 --separate-stderr "$PROF" record -s 70K -- true
	assert_equal "${stderr_lines[0]}" "prof record: stack size '70K' is outside 1..65528 bytes"
	run -64 --separate-stderr "$PROF" record -m 3 -- true
	assert_equal "${stderr_lines[0]}" "prof record: mmap pages '3' must be a power of two"
	run -64 --separate-stderr "$PROF" record -d -1 -- true
	assert_equal "${stderr_lines[0]}" "prof record: invalid duration '-1'"
}

@test "a ring too small for one sample is an error naming the smallest that holds one" {
	[ "$(getconf PAGESIZE)" = 4096 ] || skip "the figures are of 4 KiB pages"
	run -1 --separate-stderr "$PROF" record -m 16 -o r.spool -- "$T/exitcode" 0
	assert_equal "$stderr" "prof: a ring of 16 pages cannot hold one sample of a 65528-byte stack copy: take 32 pages or more, or a smaller stack size"
	[ ! -e r.spool ]
	# a smaller copy fits: samples are kept (a ring of seven may still drop
	# a few on a busy machine: the recorder has ~2 ms to drain it)
	run -0 "$PROF" record -q -m 16 -s 8K -o r.spool -- "$T/ladder" 1
	run -0 "$PROF" report -q r.spool
	assert_line --regexp '^samples: +[1-9][0-9]{2,} written, '
}

@test "a rate above the kernel's maximum is an error naming the maximum; -F max works" {
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	run -1 --separate-stderr "$PROF" record -F $((max + 1)) -- true
	assert_equal "$stderr" "prof: sampling frequency $((max + 1)) Hz is above the kernel's maximum of $max Hz (kernel.perf_event_max_sample_rate)"
	run -0 "$PROF" record -q -F max -o m.spool -- "$T/exitcode" 0
	run -0 "$PROF" report -q m.spool
	assert_line --regexp "^event: +[a-z-]+, $max Hz, user stack 32768 bytes"
}

@test "examples/hottest records through the library API alone and names the hottest stack" {
	run -0 "$BUILD/hottest" h.spool "$T/ladder" 0.3
	assert_line --regexp '^[0-9]+ samples$'
	assert_line --regexp '^hottest stack: [0-9]+ of [0-9]+ samples$'
	assert_line "  main (ladder)"
	assert_line "  ladder_c (ladder)"
	assert_line --index -1 "  ladder_d (ladder)"
}

@test "examples/hottest --memory records into a caller-owned writer" {
	run -0 "$BUILD/hottest" --memory m.spool "$T/ladder" 0.3
	assert_line --regexp '^[0-9]+ bytes recorded in memory$'
	assert_line --index -1 "  ladder_d (ladder)"
	run -0 --separate-stderr "$PROF" report m.spool
	assert_equal "$stderr" ""
	assert_line --regexp '^samples: +[1-9][0-9]+ written'
	run ls -A
	refute_output --partial ".tmp."
}
