#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# 40-record-all: prof record -a, the whole machine: every task on the
# CPUs (-C) or of a cgroup (--cgroup), with a command, -d or a signal; the
# idle task counted as the machine's idle time; the filters and views of
# report and prof tail on such a spool; the privileges it needs.  Targets
# measure their own CPU time (ladder: SECONDS of its CPU clock, about 999
# samples a second of it), which is what the counts are checked against.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
	[ -z "${CG:-}" ] || rmdir "$CG" 2>/dev/null || true
	[ -z "${W:-}" ] || rm -rf "$W"
}

# A command that writes its pid to the file pid, then execs its arguments:
# the target's pid, since other processes of the machine may run the same
# program ("${WITH_PID[@]}" TARGET [ARG...])
WITH_PID=(sh -c 'echo $$ >pid && exec "$@"' sh)

# The share of PID's samples in SPOOL whose stack holds CHAIN (folded).
share_with() {
	"$PROF" report -q --format=folded --pid="$2" "$1" |
		awk -v chain="$3" '{ n = $NF; all += n; if (index($0, chain)) have += n }
			END { printf "%d\n", all ? 100 * have / all : 0 }'
}

# The samples of the report's filters ARGS... of SPOOL (json's count).
samples_of() {
	local spool=$1 n

	shift
	n=$("$PROF" report -q --format=json "$@" "$spool" 2>/dev/null | jq .samples)
	echo "${n:-0}"	# none matches: report says so, exit 2
}

@test "-a -- COMMAND: the command's samples and function names, and its exit status" {
	run -0 --separate-stderr "$PROF" record -a -o a.spool -- "${WITH_PID[@]}" "$T/ladder" 1
	assert_output --regexp '^ladder: [0-9]+ rounds'
	assert_regex "$stderr" '(^|'$'\n'')prof: the whole machine: busy [0-9.]+% of [0-9]+ CPUs? \([0-9]+ idle samples, [0-9]+ of the recorder left out\), [0-9]+ processes seen'
	pid=$(cat pid)
	run -0 "$PROF" report -q --pid="$pid" a.spool
	assert_line --regexp 'ladder_d +ladder$'
	# its stacks as complete as a launched program's
	share=$(share_with a.spool "$pid" 'main;ladder_a;ladder_b;ladder_c;ladder_d')
	((share >= 95)) || fail "$share% of ladder's stacks are whole"
	# a second of its CPU clock: ~999 samples whatever else ran
	n=$(samples_of a.spool --pid="$pid")
	((n >= 900 && n <= 1100)) || fail "$n samples of ladder's second of CPU time"
	run -7 "$PROF" record -a -q -o e.spool -- "$T/exitcode" 7
	assert_output --partial 'exiting with status 7'
	run -127 --separate-stderr "$PROF" record -a -q -o n.spool -- ./no-such-command
}

@test "-a leaves the recorder out and counts the idle task, not as a process" {
	"$PROF" record -a -o s.spool -- "$T/ladder" 0.5 >/dev/null 2>s.err &
	rec=$!
	wait "$rec"
	run -0 "$PROF" report -q --by-process s.spool
	refute_line --regexp "^process [^ ]+ \\(pid $rec\\)"
	refute_line --regexp '^process [^ ]+ \(pid 0\)'
	assert_line --regexp '^process ladder \(pid [0-9]+\)'
	# the counters: idle and the recorder's samples are of those delivered,
	# and none of them is written
	run -0 "$PROF" report -q --format=json s.spool
	read -r events written idle cpus < <(jq -r '.counters |
		"\(.sample_events) \(.samples) \(.idle_samples // 0) \(.cpus)"' <<<"$output")
	[ "$cpus" -eq "$(nproc)" ]
	((written + idle <= events)) || fail "$written written + $idle idle > $events delivered"
	run -0 "$PROF" report -q s.spool
	assert_line --regexp '^event: +cpu-clock, 999 Hz, user stack [0-9]+ bytes, the whole machine$'
	assert_line --regexp "^machine: +busy [0-9.]+% of $cpus CPUs? \\($idle idle samples\\)\$"
	busy=$(awk -v e="$events" -v i="$idle" 'BEGIN { printf "%.1f", 100 * (e - i) / e }')
	assert_line --regexp "^machine: +busy $busy% "
	refute_line --partial '[idle]'
	# shown as a process only if asked
	run -0 "$PROF" report -q --idle --by-process s.spool
	assert_line "process [idle] (pid 0): $idle sample$( ((idle == 1)) || echo s) ($(awk -v e="$events" -v i="$idle" 'BEGIN { printf "%.1f", 100 * i / e }')% of the $events the CPUs delivered)"
	run -0 "$PROF" record -q -o l.spool -- "$T/ladder" 0.1
	run -0 "$PROF" report -q --idle l.spool
	assert_line 'idle: not known (not a recording of the whole machine)'
}

@test "-a -d SECONDS: the machine without a command, every process running" {
	"$T/ladder" 30 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	run -0 --separate-stderr "$PROF" record -a -d 1 -o d.spool
	assert_regex "$stderr" 'prof: the whole machine: busy'
	# it was running before: read from /proc, named, its stacks complete
	run -0 "$PROF" report -q --pid="${BG[0]}" d.spool
	assert_line --regexp 'ladder_d +ladder$'
	# (the header's stacks line is the whole machine's: the ladder's own here)
	chain='_start;__libc_start_main;__libc_start_call_main;main;ladder_a;ladder_b;ladder_c;ladder_d'
	share=$(share_with d.spool "${BG[0]}" "$chain")
	[ "$share" -ge 95 ] || fail "the whole chain in $share% of the ladder's samples"
	run -0 "$PROF" report -q --by-process d.spool
	assert_line --regexp "^process ladder \\(pid ${BG[0]}\\): "
	# and a SIGINT ends it too, with a whole spool
	"$PROF" record -a -q -o i.spool &
	rec=$!
	BG+=($rec)
	sleep 2
	kill -INT "$rec"
	wait "$rec" || fail "prof record -a ended by SIGINT: exit status $?"
	run -0 "$PROF" report -q i.spool
	assert_line --regexp '^machine: +busy '
}

@test "-C LIST: only those CPUs' samples" {
	(($(nproc) >= 2)) || skip_or_fail "one CPU only"
	require_cmd taskset util-linux
	# pinned to CPU 1: nothing of it on CPU 0, all of it on CPU 1; a
	# second ladder pinned to CPU 0 is what CPU 0 runs meanwhile (an idle
	# machine may run nothing else there, and idle samples are no process's)
	taskset -c 0 "$T/ladder" 3 >/dev/null &
	BG+=($!)
	run -0 --separate-stderr "$PROF" record -a -C 0 -o c0.spool -- "${WITH_PID[@]}" taskset -c 1 "$T/ladder" 0.5
	assert_regex "$stderr" 'busy [0-9.]+% of 1 CPU '
	run -0 "$PROF" report -q --format=perf-script c0.spool
	refute_line --regexp '^[^	].* \[00[1-9]\] '
	assert_line --regexp "^ladder +${BG[-1]}/${BG[-1]} +\\[000\\] "
	# (the pid's samples before taskset pinned it are sh's and taskset's)
	[ "$(samples_of c0.spool --pid="$(cat pid)" --comm=ladder)" -eq 0 ]
	run -0 "$PROF" record -a -q -C 1 -o c1.spool -- "${WITH_PID[@]}" taskset -c 1 "$T/ladder" 0.5
	n=$(samples_of c1.spool --pid="$(cat pid)" --comm=ladder)
	((n >= 450 && n <= 550)) || fail "$n samples of ladder's 0.5 s on CPU 1"
	run -0 "$PROF" report -q --format=perf-script --pid="$(cat pid)" --comm=ladder c1.spool
	refute_line --regexp '^[^	].* \[000\] '
}

@test "--cgroup=PATH: only the tasks of that cgroup" {
	local root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$root" ] || skip_or_fail "no cgroup v2 mounted"
	CG="$root/prof-test-$$-$BATS_TEST_NUMBER"
	mkdir "$CG" || skip_or_fail "cannot make a cgroup under $root"
	# busy4 burns outside it, meanwhile
	"$T/busy4" 2 >/dev/null &
	BG+=($!)
	run -0 --separate-stderr "$PROF" record -a --cgroup="${CG#"$root"/}" -o g.spool -- \
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" 1' "$CG" "$T/ladder"
	run -0 "$PROF" report -q --by-process g.spool
	assert_line --regexp '^process ladder \(pid [0-9]+\): [0-9]+ samples'
	refute_line --regexp '^process busy4 '
	n=$(samples_of g.spool --comm=ladder)
	((n >= 900 && n <= 1100)) || fail "$n samples of ladder's second"
	[ "$(samples_of g.spool)" -le $((n + 20)) ]
	# an absolute path names the same cgroup
	run -0 "$PROF" record -a -q --cgroup="$CG" -d 0.3 -o g2.spool
}

@test "report's filters and views, and prof tail, on a whole-machine spool" {
	run -0 --separate-stderr "$PROF" record -a -k -o f.spool -- "${WITH_PID[@]}" "$T/busy4" 0.5
	pid=$(cat pid)
	run -0 "$PROF" report -q --pid="$pid" f.spool
	assert_line --regexp 'busy_spin +busy4$'
	n=$(samples_of f.spool --pid="$pid")
	((n >= 1800 && n <= 2200)) || fail "$n samples of busy4's 4 x 0.5 s"
	[ "$(samples_of f.spool --comm=busy-0 --pid="$pid")" -le $((n / 3)) ]
	run -0 "$PROF" report -q --by-thread --pid="$pid" f.spool
	for i in 0 1 2 3; do
		assert_line --regexp "^thread busy-$i \\(tid [0-9]+\\): "
	done
	tid=$(sed -nE 's/^thread busy-2 \(tid ([0-9]+)\).*/\1/p' <<<"$output")
	run -0 "$PROF" report -q --tid="$tid" --format=folded f.spool
	assert_output --regexp 'busy_thread_2;busy_spin [0-9]+'
	refute_output --partial 'busy_thread_1'
	run -0 "$PROF" report -q --no-kernel --pid="$pid" --format=folded f.spool
	assert_output --regexp 'busy_spin [0-9]+'
	all=$(samples_of f.spool)
	early=$(samples_of f.spool --time=,0.2)
	late=$(samples_of f.spool --time=0.2,)
	((early + late == all && early > 0)) || fail "--time: $early + $late != $all"
	# prof tail follows such a recording while it is written
	"$PROF" record -a -q -o t.spool -- "${WITH_PID[@]}" "$T/ladder" 1.5 >/dev/null &
	BG+=($!)
	run -0 --separate-stderr timeout 60 "$PROF" tail --format=samples --idle=10 t.spool
	assert_line --regexp "^ *[0-9.]+ $(cat pid) $(cat pid) ladder .*;ladder_d\$"
}

@test "-a --off-cpu: a thread's waits on a CPU's events, timed as it measured them" {
	run -0 --separate-stderr "$PROF" record -a --off-cpu -o o.spool -- "${WITH_PID[@]}" "$T/waiter" 1
	# the off-CPU time of sleep_phase by its own clocks (wall less CPU), in us
	truth=$(awk '$1 == "phase" && $2 == "sleep_phase" { print ($3 - $4) / 1000 }' <<<"$output")
	got=$("$PROF" report -q --weight=off-cpu --pid="$(cat pid)" --format=folded o.spool |
		awk '/;sleep_phase;/ { n += $NF } END { print n + 0 }')
	awk -v a="$truth" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 0.05 * a) }' ||
		fail "sleep_phase: $got us off-CPU in the profile, $truth us by its clocks"
}

# prof and a target where nobody can run them
nobody_setup() {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "dropping to user nobody needs root"
	require_cmd setpriv util-linux
	W=$(mktemp -d /tmp/prof-all.XXXXXX)
	chmod 755 "$W"
	cp "$PROF" "$W/prof"
	cp "$T/ladder" "$W/ladder"
	mkdir "$W/out"
	chown nobody "$W/out"
	cd "$W/out"
}

@test "as nobody at paranoid 2: -a fails in one line naming the setting, the capability and the fix" {
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] ||
		skip_or_fail "kernel.perf_event_paranoid allows CPU-wide events to everyone"
	nobody_setup
	run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$W/prof" record -a -d 1 -o x.spool
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^prof: recording every task needs kernel.perf_event_paranoid <= 0 \\(it is [0-9]\\), CAP_PERFMON or root: .*'setcap cap_perfmon,cap_sys_ptrace\\+ep prof'.*'sysctl kernel.perf_event_paranoid=0'"
	[ ! -e x.spool ]
}

@test "as nobody with ambient CAP_PERFMON alone: -a records the machine" {
	nobody_setup
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all true ||
		skip_or_fail "setpriv cannot drop to nobody"
	"$W/ladder" 30 >/dev/null &
	BG+=($!)
	run -0 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=+perfmon --ambient-caps=+perfmon "$W/prof" record -a -d 1 -o p.spool
	assert_regex "$stderr" 'prof: the whole machine: busy'
	[ "$(stat -c %U p.spool)" = nobody ]
	# root's ladder: sampled, though its maps are not nobody's to read
	run -0 "$PROF" report -q --by-process p.spool
	assert_line --regexp "^process ladder \\(pid ${BG[0]}\\): [0-9]+ samples"
}

@test "usage errors: -a with -p, -C or --cgroup without -a; bad CPU lists and cgroups" {
	run -64 --separate-stderr "$PROF" record -a -p 1
	assert_regex "${stderr_lines[0]}" 'either -a or -p PID'
	run -64 --separate-stderr "$PROF" record -C 0 -- true
	assert_regex "${stderr_lines[0]}" '-C/--cpu needs -a'
	run -64 --separate-stderr "$PROF" record --cgroup=x -- true
	assert_regex "${stderr_lines[0]}" '--cgroup needs -a'
	run -1 --separate-stderr "$PROF" record -a -C 0-x -d 1 -o b.spool
	assert_equal "$stderr" "prof: invalid CPU list '0-x' (e.g. 0-3,6)"
	run -1 --separate-stderr "$PROF" record -a -C 4000 -d 1 -o b.spool
	assert_regex "$stderr" '^prof: CPU 4000 is not online'
	run -1 --separate-stderr "$PROF" record -a --cgroup=no-such-group-here -d 1 -o b.spool
	assert_equal "$stderr" "prof: no such cgroup: no-such-group-here"
	[ ! -e b.spool ]
}
