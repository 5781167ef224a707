#!/usr/bin/env bats
# Every process's samples right: short-lived processes (named after they
# are gone), processes in a mount namespace of their own (a file only they
# see), and children forked without exec (they run their parent's image),
# in launch mode and attached (-p) before they start.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
	if [ -n "${NSDIR:-}" ]; then
		umount "$NSDIR" 2>/dev/null || true
	fi
}

# burst_truth FOLDED MIN [-a]: the samples of the burst_child processes in
# FOLDED (report --by-process --format=folded) against their ground truth:
# at least MIN of them; >= 99% with every frame named (none module+0x...
# or a bare address); >= 98% complete (down to _start); >= 75% in
# burst_child's own chain main -> work_a (the rest is the dynamic loader's
# and libc's, named).  With -a (the kernel sampled too, on the user
# stack) the samples taken inside execve, once the new name is set and
# before the new image runs, have no user stack (the old one is gone), and
# those at the end of exit no user registers: they are counted apart, at
# most 10%, and the rest judged as above, but for 97% complete (a loaded
# machine loses records now and then under -a, a mapping with them).
burst_truth() {
	awk -v min="$2" -v mode="${3:-}" '
		mode == "-a" && $0 ~ /^burst_child-[0-9]+;\[truncated: no-(stack|registers)\];0x[0-9a-f]+ [0-9]+$/ {
			inexec += $NF; all += $NF; next
		}
		$1 ~ /^burst_child-[0-9]+;/ {
			n = $NF; total += n; all += n
			if ($0 !~ /\+0x|\[unknown|;0x[0-9a-f]+(;| )/) named += n
			if ($0 ~ /^burst_child-[0-9]+;_start[; ]/) complete += n
			if ($0 ~ /;main;work_a(;|$)/) own += n
			pids[$1] = 1
		}
		END {
			printf "burst_child: %d samples, %d named, %d complete, %d in main;work_a",
			       total, named, complete, own
			if (mode == "-a") printf "; %d more in execve or exit, without a user stack", inexec
			printf "\n"
			if (inexec * 10 > all) { print "too many without a user stack"; exit 1 }
			if (total < min) { print "fewer than " min " samples"; exit 1 }
			if (named * 100 < total * 99) { print "not named"; exit 1 }
			if (complete * 100 < total * (mode == "-a" ? 97 : 98)) { print "not complete"; exit 1 }
			if (own * 100 < total * 75) { print "not in their own chain"; exit 1 }
		}' "$1"
}

# the CPU time burst's children burned, in ms, from its output line
burst_ms() {
	awk '/^burst: / { printf "%d\n", $4 }' "$1"
}

# wait_for_file FILE: until it exists (a recorder's spool appears when
# sampling starts), for at most 30 s
wait_for_file() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# a directory with a tmpfs over it, in a mount namespace of its own: the
# script ns.sh, run by `unshare -m sh ns.sh`, mounts it, copies burst there
# and runs it (after the file go exists, with WAIT=1)
mount_ns_script() {
	unshare -m true 2>/dev/null || skip_or_fail "unshare -m is not permitted here"
	NSDIR="$BATS_TEST_TMPDIR/nsdir"
	mkdir -p "$NSDIR"
	cat >ns.sh <<-SH
		set -e
		mount -t tmpfs prof-test "$NSDIR"
		cp "$T/burst" "$T/burst_child" "$NSDIR/"
		if [ "\${WAIT:-0}" = 1 ]; then
			while [ ! -e go ]; do sleep 0.05; done
		fi
		exec "$NSDIR/burst" "\$1"
	SH
}

@test "launch: 300 short-lived processes, each named and complete though gone" {
	run -0 --separate-stderr "$PROF" record -o b.spool -- "$T/burst" 300
	echo "$output" >burst.out
	assert_output --regexp '^burst: 300 children, '
	"$PROF" report -q --by-process --format=folded b.spool >b.folded
	# ~3 ms of CPU each at 999 Hz: a sample a ms of their CPU, half at least
	run burst_truth b.folded $(($(burst_ms burst.out) / 2))
	assert_success
	run -0 awk -F'[-;]' '$1 == "burst_child" { p[$2] = 1 } END { print length(p) }' b.folded
	[ "$output" -ge 250 ] || fail "only $output of the 300 processes have samples"
}

@test "-p: the processes a shell starts after the attach, short-lived, named" {
	sh -c 'while [ ! -e go ]; do sleep 0.05; done; exec "$0" 300' "$T/burst" >burst.out &
	BG+=($!)
	pid=$!
	"$PROF" record -q -p "$pid" -o p.spool &
	BG+=($!)
	rec=$!
	wait_for_file p.spool || fail "the recording did not start"
	touch go
	wait "$rec"
	"$PROF" report -q --by-process --format=folded p.spool >p.folded
	run burst_truth p.folded $(($(burst_ms burst.out) / 2))
	assert_success
}

@test "launch: short-lived processes of a file only their mount namespace sees" {
	mount_ns_script
	run -0 --separate-stderr "$PROF" record -o ns.spool -- unshare -m sh ns.sh 100
	echo "$output" >burst.out
	assert_output --regexp '^burst: 100 children, '
	# the host does not see the binary they ran
	[ ! -e "$NSDIR/burst_child" ]
	"$PROF" report -q --by-process --format=folded ns.spool >ns.folded
	run burst_truth ns.folded $(($(burst_ms burst.out) / 2))
	assert_success
}

@test "-p: a process in its own mount namespace, attached, and its children" {
	mount_ns_script
	WAIT=1 unshare -m sh ns.sh 100 >burst.out &
	BG+=($!)
	pid=$!
	# attached once the namespace has its file (the copy is done)
	for ((i = 0; i < 300; i++)); do
		nsenter -t "$pid" -m test -e "$NSDIR/burst_child" 2>/dev/null && break
		sleep 0.1
	done
	"$PROF" record -q -p "$pid" -o pns.spool &
	BG+=($!)
	rec=$!
	wait_for_file pns.spool || fail "the recording did not start"
	touch go
	wait "$rec"
	[ ! -e "$NSDIR/burst_child" ]
	"$PROF" report -q --by-process --format=folded pns.spool >pns.folded
	run burst_truth pns.folded $(($(burst_ms burst.out) / 2))
	assert_success
}

# prefork_truth FOLDED OUT: each worker prefork printed in OUT ("worker
# PID") has its own process in FOLDED, its samples (>= 100 of its 0.5 s)
# all named, >= 98% from _start through main -> worker_main -> worker_a
# (to worker_b, or cpu_now: -a samples its system calls too); under -a the
# few without a user context (the kernel's end of exit) are counted apart
# (at most 1%)
prefork_truth() {
	awk '
		FNR == NR { if ($1 == "worker") want[$2] = 1; next }
		{
			split($1, a, /[-;]/); pid = a[2]
			if (!(pid in want)) next
			n = $NF
			if ($0 ~ /;\[truncated: no-(stack|registers)\];0x[0-9a-f]+ [0-9]+$/) {
				apart[pid] += n; next
			}
			total[pid] += n
			if ($0 ~ /\+0x|\[unknown|;0x[0-9a-f]+(;| )/) unnamed[pid] += n
			if ($0 ~ /^prefork-[0-9]+;_start;.*;main;worker_main;worker_a[; ]/) chain[pid] += n
		}
		END {
			bad = 0
			for (p in want) {
				printf "worker %s: %d samples, %d unnamed, %d in its chain, %d apart\n",
				       p, total[p], unnamed[p], chain[p], apart[p]
				if (total[p] < 100 || unnamed[p] > 0 || chain[p] * 100 < total[p] * 98 ||
				    apart[p] * 100 > total[p])
					bad = 1
			}
			if (length(want) != 3) { print "not 3 workers"; bad = 1 }
			exit bad
		}' "$2" "$1"
}

@test "launch: workers forked without exec, each its own process, named, complete" {
	run -0 --separate-stderr "$PROF" record -o l.spool -- "$T/prefork" 3 0.5
	echo "$output" >prefork.out
	"$PROF" report -q --by-process --format=folded l.spool >l.folded
	run prefork_truth l.folded prefork.out
	assert_success
}

@test "-p: a parent attached before it forks: its workers followed, each shown" {
	"$T/prefork" -w 3 0.5 >prefork.out &
	BG+=($!)
	pid=$!
	wait_for_exec "$pid" "$T/prefork" || fail "prefork did not start"
	"$PROF" record -q -p "$pid" -o f.spool &
	BG+=($!)
	rec=$!
	wait_for_spool_samples f.spool 20 || fail "no samples of the waiting parent"
	kill -USR1 "$pid"
	wait "$rec"
	"$PROF" report -q --by-process --format=folded f.spool >f.folded
	run prefork_truth f.folded prefork.out
	assert_success
	# the report shows each worker, by pid, under the parent's name
	run -0 "$PROF" report -q --by-process f.spool
	for w in $(awk '$1 == "worker" { print $2 }' prefork.out); do
		assert_line --regexp "^process prefork \\(pid $w\\): [0-9]+ samples"
	done
}

@test "-a: 300 short-lived processes, named and complete" {
	run -0 --separate-stderr "$PROF" record -a -o a.spool -- "$T/burst" 300
	echo "$output" >burst.out
	"$PROF" report -q --by-process --format=folded a.spool >a.folded
	run burst_truth a.folded $(($(burst_ms burst.out) / 2)) -a
	echo "# -a, burst 300: $output" >&3
	assert_success
}

@test "-a: short-lived processes of a file only their mount namespace sees" {
	mount_ns_script
	# the host has another file at that path: its names would be wrong
	cp "$T/prefork" "$NSDIR/burst_child"
	run -0 --separate-stderr "$PROF" record -a -o ans.spool -- unshare -m sh ns.sh 100
	echo "$output" >burst.out
	run -0 cmp "$T/prefork" "$NSDIR/burst_child"
	"$PROF" report -q --by-process --format=folded ans.spool >ans.folded
	run burst_truth ans.folded $(($(burst_ms burst.out) / 2)) -a
	echo "# -a, mount namespace: $output" >&3
	assert_success
	# (the whole machine: other processes may run prefork's names)
	run -0 awk '/^burst_child-/ && /worker_|parent_/ { n++ } END { print n + 0 }' ans.folded
	assert_output 0
}

@test "-a: workers forked without exec, each its own process, named, complete" {
	run -0 --separate-stderr "$PROF" record -a -o w.spool -- "$T/prefork" 3 0.5
	echo "$output" >prefork.out
	"$PROF" report -q --by-process --format=folded w.spool >w.folded
	run prefork_truth w.folded prefork.out
	assert_success
}
