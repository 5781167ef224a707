#!/usr/bin/env bats
# prof record as an ordinary user (nobody), as most people run it: its own
# programs record with user-space frames at kernel.perf_event_paranoid 2;
# what needs privileges (kernel frames, other users' processes) says so.
# The suite runs as root, so these tests drop to nobody with setpriv.
load test_helper

setup() {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "dropping to user nobody needs root"
	command -v setpriv >/dev/null || skip_or_fail "setpriv is not installed (util-linux)"
	id nobody >/dev/null 2>&1 || skip_or_fail "there is no user nobody"
	# nobody may not reach the build: prof and the target in a directory it can
	W=$(mktemp -d /tmp/prof-nobody.XXXXXX)
	chmod 755 "$W"
	cp "$PROF" "$W/prof"
	cp "$BUILD/targets/ladder" "$W/ladder"
	mkdir "$W/out"
	chown nobody "$W/out"
	cd "$W/out"
}

teardown() {
	kill_background
	rm -rf "$W"
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"
}

paranoid() {
	cat /proc/sys/kernel/perf_event_paranoid
}

@test "as nobody: prof record -- ./app records its user-space stacks" {
	[ "$(paranoid)" -le 2 ] || skip_or_fail "kernel.perf_event_paranoid is $(paranoid): not even user space"
	run -0 --separate-stderr as_nobody "$W/prof" record -o u.spool -- "$W/ladder" 1
	assert_output --regexp '^ladder: [0-9]+ rounds'
	assert_regex "$stderr" '^prof: [0-9]+ samples, 0 lost, 1 process, 1 thread, .*: u\.spool$'
	run -0 "$W/prof" report -q u.spool
	assert_line --regexp '^stacks: +[0-9]+ complete \((9[5-9]|100)\.[0-9]%\)'
	assert_line --regexp 'ladder_d +ladder$'
	[ "$(stat -c %U u.spool)" = nobody ]
}

@test "as nobody with no locked memory of its own: the rings fit the kernel's allowance" {
	[ "$(paranoid)" -le 2 ] || skip_or_fail "kernel.perf_event_paranoid is $(paranoid)"
	# perf_event_mlock_kb per CPU is all an unprivileged user may lock for rings
	run -0 --separate-stderr as_nobody sh -c 'ulimit -l 0 && exec "$0" record -o m.spool -- "$1" 1' \
		"$W/prof" "$W/ladder"
	# such a ring holds a few full stack copies (about 4 of 64 KiB): a
	# recorder kept from its CPU for more than a few ms loses samples, as
	# many as the machine is busy (7.7% seen at a load of 8 on two cores),
	# and counts them: the ladder's second of CPU time is 999 samples, each
	# in the spool or lost, and most in the spool
	assert_regex "$stderr" '^prof: [1-9][0-9]+ samples, [0-9]+ lost'
	read -r samples lost < <(sed -nE 's/^prof: ([0-9]+) samples, ([0-9]+) lost.*/\1 \2/p' <<<"$stderr")
	((samples + lost >= 899 && samples > lost)) || fail "$samples samples, $lost lost"
	run -0 "$W/prof" report -q m.spool
	assert_line --regexp 'ladder_d +ladder$'
}

@test "as nobody, -k: kernel frames where the kernel allows them, else a warning and user frames" {
	[ "$(paranoid)" -le 2 ] || skip_or_fail "kernel.perf_event_paranoid is $(paranoid)"
	run -0 --separate-stderr as_nobody "$W/prof" record -k -o k.spool -- "$W/ladder" 0.5
	if [ "$(paranoid)" -eq 2 ]; then
		assert_equal "${stderr_lines[0]}" "prof: warning: kernel sampling refused (kernel.perf_event_paranoid is 2): recording user space only"
		run -0 "$W/prof" report -q k.spool
		assert_line --regexp '^event: .*, user stack [0-9]+ bytes, children followed$'
	else
		assert_equal "${#stderr_lines[@]}" 1
		run -0 "$W/prof" report -q k.spool
		assert_line --regexp '^event: .*, kernel frames, children followed$'
	fi
	assert_line --regexp 'ladder_d +ladder$'
}

@test "as nobody: -p attaches to its own process, and refuses another user's in one line" {
	[ "$(paranoid)" -le 2 ] || skip_or_fail "kernel.perf_event_paranoid is $(paranoid)"
	# setpriv execs the target: $! is its pid
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$W/ladder" 3 >/dev/null &
	BG+=($!)
	wait_for_exec "${BG[-1]}" "$W/ladder" || fail "the ladder did not start"
	run -0 --separate-stderr as_nobody "$W/prof" record -o p.spool -d 1 -p "${BG[-1]}"
	assert_regex "$stderr" '^prof: [1-9][0-9]+ samples, '
	run -0 "$W/prof" report -q p.spool
	assert_line --regexp 'ladder_d +ladder$'
	# root's process: no spool, one line that names the cause and the fix
	sleep 30 &
	BG+=($!)
	echo first >p.spool
	run -1 --separate-stderr as_nobody "$W/prof" record -o p.spool -p "${BG[-1]}"
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "$stderr" "prof: not permitted to attach to pid ${BG[-1]}: ptrace refused (the process is not yours, or is set non-dumpable; run as root)"
	assert_equal "$(cat p.spool)" first
}
