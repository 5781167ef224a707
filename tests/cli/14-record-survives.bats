#!/usr/bin/env bats
# A recording that survives its recorder: -o FILE is written from the
# moment sampling starts (an existing FILE becomes FILE.old then), a run
# that fails before that leaves FILE as it was, a recorder killed at any
# point leaves what it flushed readable, and a full disk stops sampling
# with one error while the command runs on.  The kill points are reached
# with gdb breakpoints, so they are exact, not timed.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
}

require_gdb() {
	command -v gdb >/dev/null || skip_or_fail "gdb is not installed"
}

# Run prof under gdb until FUNCTION is entered, then SIGKILL it there.
# Prints "hit" when the breakpoint was reached.
kill_at() {
	local fn=$1
	shift
	gdb -batch -nx -q -ex 'set breakpoint pending on' -ex "break $fn" -ex run \
		-ex 'printf "hit\n"' -ex 'signal SIGKILL' --args "$PROF" "$@" 2>&1 |
		grep -x hit || true
}

# The names in the current directory, sorted, on one line.
dir_names() {
	ls -A | LC_ALL=C sort | tr '\n' ' '
}

# The samples a spool holds, by its folded stacks.
spool_samples() {
	"$PROF" report -q --format=folded "$1" | awk '{ n += $NF } END { print n + 0 }'
}

@test "-o FILE: what was there becomes FILE.old when sampling starts, not before" {
	echo first >s.spool
	echo older >s.spool.old
	# failures before sampling starts leave both as they were
	run -127 "$PROF" record -o s.spool -- ./no-such-program
	echo 'not a program' >data.txt
	run -126 "$PROF" record -o s.spool -- ./data.txt
	rm data.txt
	run -64 "$PROF" record -o s.spool -F nonsense -- "$T/ladder" 0.1
	run -1 "$PROF" record -o s.spool -p 999999999
	assert_equal "$(cat s.spool)" first
	assert_equal "$(cat s.spool.old)" older
	assert_equal "$(dir_names)" "s.spool s.spool.old "
	# a recording moves it aside
	run -0 "$PROF" record -q -o s.spool -- "$T/ladder" 0.3
	assert_equal "$(cat s.spool.old)" first
	assert_equal "$(dir_names)" "s.spool s.spool.old "
	run -0 "$PROF" report -q s.spool
	assert_line --regexp 'ladder_d +ladder$'
}

@test "-o a pipe or a device: written as it is, nothing renamed beside it" {
	mkfifo f
	cat f >piped.spool &
	BG+=($!)
	run -0 "$PROF" record -q -o f -- "$T/ladder" 0.3
	wait "${BG[-1]}"
	run -0 "$PROF" report -q --format=folded piped.spool
	assert_line --regexp 'ladder_d [0-9]+$'
	run -0 "$PROF" record -q -o /dev/null -- "$T/ladder" 0.1
	[ -c /dev/null ]
	assert_equal "$(dir_names)" "f piped.spool "
	# a reader that goes away is a write error, not a silent death by SIGPIPE
	sleep 0.5 <f &
	BG+=($!)
	run -1 --separate-stderr "$PROF" record -o f -- "$T/ladder" 1.5
	assert_output --regexp '^ladder: [0-9]+ rounds'
	assert_equal "${stderr_lines[0]}" "prof: cannot write spool 'f': Broken pipe"
}

@test "killed during start-up, before sampling: FILE as it was, nothing beside it" {
	require_gdb
	require_cmd pgrep procps
	echo first >s.spool
	# launched: the spool is made, the command not yet released
	run kill_at prof_launched_release record -o s.spool -- "$T/ladder" 5
	assert_output hit
	assert_equal "$(cat s.spool)" first
	assert_equal "$(dir_names)" "s.spool "
	# the command never ran: it saw the recorder go, and exited
	run pgrep -f "$T/ladder 5"
	assert_failure
	# attached: the target, held while the events opened, runs on
	"$T/ladder" 10 >ladder.out &
	BG+=($!)
	run kill_at prof_recorder_enable record -o s.spool -p "${BG[-1]}"
	assert_output hit
	assert_equal "$(cat s.spool)" first
	assert_equal "$(dir_names)" "ladder.out s.spool "
	# running (R), not held (t) now that its recorder is gone
	for ((i = 0; i < 300; i++)); do
		state=$(awk '/^State:/ { print $2 }' "/proc/${BG[-1]}/status")
		[ "$state" = R ] && break
		sleep 0.1
	done
	assert_equal "$state" R
}

@test "killed while sampling: report reads every flushed block and says the recorder was killed" {
	require_cmd pgrep procps
	echo first >s.spool
	"$PROF" record -q -o s.spool -- "$T/ladder" 30 >/dev/null &
	BG+=($!)
	rec=${BG[-1]}
	# the recorder closes a block at least once a second
	wait_for_spool_samples s.spool 1001 || fail "fewer than 1001 samples in s.spool"
	target=$(pgrep -P "$rec")
	BG+=("$target")
	kill -9 "$rec"
	wait "$rec" || true
	assert_equal "$(cat s.spool.old)" first
	run -0 --separate-stderr "$PROF" report s.spool
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^prof: warning: spool 's\.spool' (has no trailer: its recorder was killed after [0-9]+ blocks|is cut short \(.*\): showing its [0-9]+ complete blocks)$"
	assert_line --regexp 'ladder_d +ladder$'
	[ "$(spool_samples s.spool)" -gt 1000 ]
	# the command was not harmed: it still runs, on its own
	kill -0 "$target"
}

@test "killed during the final symbol capture: every sample is there, named from the files" {
	require_gdb
	# the ladder's CPU time, as its shell's `times` measures it
	run kill_at capture_names record -o s.spool -- \
		bash -c '"$1" 1.5 >/dev/null; times >cpu.txt' sh "$T/ladder"
	assert_output hit
	run -0 --separate-stderr "$PROF" report s.spool
	assert_regex "$stderr" "^prof: warning: spool 's\.spool' has no trailer: its recorder was killed after [0-9]+ blocks$"
	assert_line --regexp 'ladder_d +ladder$'
	# every sample flushed before the capture: 999 a second of the ladder's
	# CPU time (a block a second going missing would lose a third or more)
	n=$(spool_samples s.spool)
	cpu=$(awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' cpu.txt)
	awk -v n="$n" -v cpu="$cpu" 'BEGIN { exit !(cpu > 0.3 && n >= 0.9 * 999 * cpu) }' ||
		fail "$n samples for $cpu s of CPU time"
	# prof tail reads the same, and ends by itself
	run -2 --separate-stderr timeout 30 "$PROF" tail --format=samples --idle=600 s.spool
	assert_equal "${#lines[@]}" "$n"
	assert_regex "${stderr_lines[-1]}" "^prof: spool 's\.spool' ends here: its writer is gone and it has no trailer after [0-9]+ blocks \(the recorder was killed\?\)$"
}

@test "a full disk: one error naming the file and the cause, the command runs on, exit 1" {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "mounting a small tmpfs needs root"
	command -v unshare >/dev/null || skip_or_fail "unshare is not installed"
	mkdir disk
	# a 64 KiB file system with 16 KiB left, mounted in a mount namespace of its
	# own (propagation unchanged: / is no mount point in a chroot) and unmounted
	# by the shell that mounted it; at 10 kHz the spool outgrows that within a
	# second or two of the command's 4
	run -1 --separate-stderr unshare -m --propagation unchanged sh -c '
		mount -t tmpfs -o size=64k tmpfs disk || exit 99
		trap "umount disk" EXIT
		dd if=/dev/zero of=disk/fill bs=4k count=12 2>/dev/null || exit 99
		"$0" record -F 10000 -o disk/x.spool -- "$1" 4 && exit 0
		rc=$?
		cp disk/x.spool copy.spool
		exit $rc' "$PROF" "$T/ladder"
	# the command ran to its end and printed its line
	assert_output --regexp '^ladder: [0-9]+ rounds'
	assert_equal "${#stderr_lines[@]}" 2
	assert_equal "${stderr_lines[0]}" "prof: cannot write spool 'disk/x.spool': No space left on device"
	# the summary says what the file holds
	n=$(spool_samples copy.spool 2>/dev/null)
	[ "$n" -gt 0 ]
	assert_regex "${stderr_lines[1]}" "^prof: $n samples, .*: disk/x\.spool$"
	run -0 --separate-stderr "$PROF" report copy.spool
	assert_regex "$stderr" "^prof: warning: spool 'copy\.spool' (is cut short|has no trailer)"
}
