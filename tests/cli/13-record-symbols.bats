#!/usr/bin/env bats
# Names captured at record time: kernel frames (-k), JIT perf maps, and
# binaries deleted or replaced while or after they were recorded.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
}

count_matching() {
	awk -v re="$1" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) hit += n }
		END { print hit + 0 }' "$2"
}

# The ladder's chain, named, in most samples of folded file $1: a share, not
# a count, since a loaded machine gives the target less of the CPU.
chain_named() {
	local hits total
	hits=$(count_matching ';main;ladder_a;ladder_b;ladder_c;ladder_d$' "$1")
	total=$(awk '{ n += $NF } END { print n + 0 }' "$1")
	[ "$hits" -ge 20 ] && [ $((hits * 100)) -ge $((total * 80)) ] ||
		fail "ladder chain in $hits of $total samples"
}

# a directory and a copy of prof that user nobody can reach
nobody_copy() {
	NOBODY_DIR=$(mktemp -d /tmp/prof-nobody.XXXXXX)
	cp "$PROF" "$T/$1" "$NOBODY_DIR/"
	chmod 755 "$NOBODY_DIR"/*
	chmod 1777 "$NOBODY_DIR"
}

@test "-k: kernel frames, named from kallsyms, below the user frames" {
	run -0 --separate-stderr "$PROF" record -k -o k.spool -- "$T/sysloop" 0.5
	run -0 "$PROF" report -q k.spool
	assert_line --regexp '^event: .*, kernel frames'
	"$PROF" report -q --format=folded k.spool >k.folded
	# user frames from _start down to the syscall, then the kernel's read path
	hits=$(count_matching '^_start;.*;main;sys_read_stat;[^;]*pread[^;]*;.*(entry_SYSCALL|do_syscall_64).*(vfs_read|ksys_pread|seq_read)' k.folded)
	[ "$hits" -ge 100 ] || fail "kernel read path under sys_read_stat in $hits samples"
	# and never a kernel frame above a user one
	assert_equal "$(count_matching '(do_syscall_64|vfs_read);.*sys_read_stat' k.folded)" 0
	# the names are in the spool: no /proc/kallsyms is needed to report it
	run -0 "$PROF" report -q k.spool
	assert_line --regexp '^spool holds: .* [1-9][0-9]* symbols$'
}

@test "without -k there are no kernel frames" {
	"$PROF" record -q -o u.spool -- "$T/sysloop" 0.3 >/dev/null
	"$PROF" report -q --format=folded u.spool >u.folded
	assert_equal "$(count_matching 'do_syscall_64|vfs_read|entry_SYSCALL' u.folded)" 0
	run -0 "$PROF" report -q u.spool
	refute_line --regexp '^event: .*kernel frames'
}

@test "-k where the kernel refuses kernel sampling: user frames only, and it says so" {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root to run prof as another user"
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	nobody_copy ladder
	run --separate-stderr runuser -u nobody -- "$NOBODY_DIR/prof" record -k \
		-o "$NOBODY_DIR/n.spool" -- "$NOBODY_DIR/ladder" 0.3
	assert_equal "$status" 0
	"$PROF" report -q --format=folded "$NOBODY_DIR/n.spool" >n.folded
	[ "$(count_matching 'ladder_d$' n.folded)" -ge 100 ] || fail "no user frames"
	if [ "$paranoid" -ge 2 ]; then
		assert_equal "${stderr_lines[0]}" "prof: warning: kernel sampling refused (kernel.perf_event_paranoid is $paranoid): recording user space only"
		run -0 "$PROF" report -q "$NOBODY_DIR/n.spool"
		refute_line --regexp '^event: .*kernel frames'
	else
		run -0 "$PROF" report -q "$NOBODY_DIR/n.spool"
		assert_line --regexp '^event: .*kernel frames'
	fi
	rm -rf "$NOBODY_DIR"
}

@test "a JIT's function is named from its perf map, also after the map is deleted" {
	run -0 "$PROF" record -q -o j.spool -- "$T/jit" 0.5
	rm -f /tmp/perf-*.map
	run -0 --separate-stderr "$PROF" report j.spool
	assert_line --regexp '^ *[0-9.]+% +[0-9.]+% +[0-9]+ +jit_hot_loop +\[anon\]$'
	"$PROF" report -q --format=folded j.spool >j.folded
	total=$(awk '{ t += $NF } END { print t }' j.folded)
	hits=$(count_matching 'jit_hot_loop$' j.folded)
	[ $((hits * 100)) -ge $((total * 90)) ] || fail "jit_hot_loop is the leaf of $hits of $total samples"
}

@test "a perf map that is a symlink is not followed" {
	ln -s /etc/passwd "/tmp/perf-$$.map.link"
	# the target's own map is replaced by a link once it is written (not
	# before: the target would write through the link)
	"$T/jit" 60 >/dev/null &
	pid=$!
	BG+=("$pid")
	wait_for_line "/tmp/perf-$pid.map" 'jit_hot_loop' || fail "jit wrote no perf map"
	rm -f "/tmp/perf-$pid.map"
	ln -s /etc/passwd "/tmp/perf-$pid.map"
	run -0 --separate-stderr "$PROF" record -q -p "$pid" -d 0.3 -o l.spool
	kill "$pid"
	rm -f "/tmp/perf-$pid.map" "/tmp/perf-$$.map.link"
	run -0 "$PROF" report -q --format=folded l.spool
	refute_output --partial "root:"
	refute_output --partial "jit_hot_loop"
}

@test "a JIT in a container: its perf map is found in its /tmp, by the pid its namespace gives it" {
	unshare --fork --pid --mount --mount-proc true 2>/dev/null ||
		skip_or_fail "unshare --pid --mount is not permitted here"
	# a /tmp of its own hides this test's directory: the target goes beside it
	mkdir -p /run/prof-test-$$
	cp "$T/jit" /run/prof-test-$$/jit
	unshare --fork --pid --mount --mount-proc \
		sh -c "mount -t tmpfs none /tmp && exec /run/prof-test-$$/jit 60" >/dev/null &
	BG+=("$!")
	local pid="" i
	for i in $(seq 100); do
		pid=$(pgrep -n -f "^/run/prof-test-$$/jit") && [ -e "/proc/$pid/root/tmp/perf-1.map" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail "the target did not start"
	# the map is /tmp/perf-1.map in its namespace; the host has none of its pid
	[ ! -e "/tmp/perf-$pid.map" ]
	run -0 "$PROF" record -q -p "$pid" -d 0.5 -o c.spool
	kill "$pid"
	rm -rf /run/prof-test-$$
	run -0 "$PROF" report -q --format=folded c.spool
	assert_line --regexp ';main;jit_hot_loop [0-9]+$'
}

@test "a binary deleted while it is recorded is still symbolized" {
	cp "$T/ladder" ./doomed
	./doomed 60 >/dev/null &
	pid=$!
	BG+=("$pid")
	wait_for_exec "$pid" ./doomed || fail "doomed did not start"
	"$PROF" record -q -p "$pid" -o del.spool &
	rec=$!
	BG+=("$rec")
	# deleted once the recording runs (its spool is written from the start
	# of sampling), then recorded on until it has samples to name
	wait_for_spool_samples del.spool 1 || fail "the recording did not start"
	rm ./doomed
	wait_for_spool_samples del.spool 100 || fail "no samples after the delete"
	kill "$pid"
	wait "$rec"
	"$PROF" report -q --format=folded del.spool >del.folded
	chain_named del.folded
}

@test "a spool names the frames of a binary removed after the recording" {
	cp "$T/ladder" ./gone
	"$PROF" record -q -o gone.spool -- ./gone 0.3 >/dev/null
	rm ./gone
	"$PROF" report -q --format=folded gone.spool >gone.folded
	chain_named gone.folded
}

@test "a spool reported after its binary was rebuilt warns, and names frames from what it carries" {
	cp "$T/ladder" ./app
	"$PROF" record -q -o app.spool -- ./app 0.3 >/dev/null
	cp "$T/recursion" ./app	# "rebuilt": another program at the same path
	run -0 --separate-stderr "$PROF" report --format=folded app.spool
	assert_regex "$stderr" "^prof: warning: '$BATS_TEST_TMPDIR/app' has build-id [0-9a-f]+, not the recorded [0-9a-f]+: using the names the spool carries \(no inline frames or lines\)$"
	assert_output --partial ";main;ladder_a;ladder_b;ladder_c;ladder_d "
	refute_output --partial "recurse"
	rm ./app
	run -0 --separate-stderr "$PROF" report --format=folded app.spool
	assert_equal "$stderr" "prof: warning: cannot open '$BATS_TEST_TMPDIR/app': No such file or directory: using the names the spool carries (no inline frames or lines)"
	assert_output --partial ";main;ladder_a;ladder_b;ladder_c;ladder_d "
}
