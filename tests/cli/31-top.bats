#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# prof top: recording and showing live, on a pipe (blocks a script reads,
# JSON) and on a terminal (a pty: the view, the keys, the terminal's
# settings restored), the hidden recording that leaves nothing behind, -o,
# --by-process, --weight with --off-cpu, and usage errors.  Ground truth:
# ladder burns its CPU in main -> ladder_a -> ladder_b -> ladder_c ->
# ladder_d; waiter's compute phase never waits.
load test_helper

setup() {
	setup_recording
	mkdir tmp
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
}

teardown() {
	kill_background
}

# Wait for background process PID; its exit status goes to $rc.
wait_rc() {
	rc=0
	wait "$1" || rc=$?
}

# The last block of a top output (file $1): from its last "prof top:" line.
last_block() {
	awk '/^prof top:/ { n = 0 } { b[n++] = $0 } END { for (i = 0; i < n; i++) print b[i] }' "$1"
}

# The self and total shares of function $2 in block file $1: "SELF TOTAL".
shares() {
	awk -v f="$2" '$3 == f { sub(/%/, "", $1); sub(/%/, "", $2); print $1, $2; exit }' "$1"
}

# Whether "$1 >= $2" (decimals).
at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

# A python3 pty runner: run ARGV on a new terminal, type KEYS (one every
# 0.3 s) once the output matched WAIT, save the output in OUT and print
# "exit N" and whether the terminal's settings are those it had before
# (and were not while prof top ran).
write_ptyrun() {
	cat >ptyrun.py <<'EOF'
import os, pty, re, select, sys, termios, time
wait, keys, out, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    time.sleep(0.3)	# the parent reads the settings before they change
    os.execvp(argv[0], argv)
before = termios.tcgetattr(fd)
during = None
data, sent, start = b'', False, time.time()
while time.time() - start < 60:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b''
        if not d:
            break
        data += d
    if not sent and re.search(wait.encode(), data):
        during = termios.tcgetattr(fd)
        for k in keys:
            os.write(fd, k.encode())
            time.sleep(0.3)
        sent = True
after = termios.tcgetattr(fd)
_, st = os.waitpid(pid, 0)
open(out, 'wb').write(data)
print('exit', os.waitstatus_to_exitcode(st))
print('restored', after == before)
print('raw during', during is not None and not (during[3] & termios.ICANON))
EOF
}

@test "top on a pipe of a command: blocks with ladder's chain at its shares, status passed" {
	run -0 --separate-stderr "$PROF" top -i 0.5 -- "$T/ladder" 1
	grep '^prof top: ' <<<"$output" >headers
	[ "$(wc -l <headers)" -ge 2 ] || fail "fewer than two blocks: $output"
	assert_regex "$(head -n 1 headers)" '^prof top: [0-9:]+, [0-9.]+ s recorded, [0-9]+ samples \([0-9]+/s\), 0 lost, [0-9]+ process(es)? alive, weight cpu, decaying$'
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	read -r self total < <(shares last ladder_d)
	at_least "$self" 90 || fail "ladder_d self $self%: $(cat last)"
	for f in main ladder_a ladder_b ladder_c; do
		read -r self total < <(shares last "$f")
		at_least "$total" 90 || fail "$f total $total%: $(cat last)"
		at_least 1 "$self" || fail "$f self $self%: $(cat last)"
	done
	# the process each belongs to: ladder[PID], the only one
	run -0 awk '$3 == "ladder_d" { print $NF }' last
	assert_output --regexp '^ladder\[[0-9]+\]$'
}

@test "top passes the command's exit status through" {
	run -3 --separate-stderr "$PROF" top -- "$T/exitcode" 3
	assert_output --partial 'prof top: '
}

@test "top --format=json: an object per interval, ladder_d first" {
	run -0 --separate-stderr "$PROF" top --format=json -i 0.5 -- "$T/ladder" 1
	grep '^{' <<<"$output" >objects
	[ "$(wc -l <objects)" -ge 2 ] || fail "fewer than two objects: $output"
	run -0 jq -r '.rows[0].function' <(tail -n 1 objects)
	assert_output ladder_d
	run -0 jq -r '[.weight, .by, (.rows[0].self >= 90), (.rows[0].procs == 1)] | @tsv' \
		<(tail -n 1 objects)
	assert_output $'cpu\tfunction\ttrue\ttrue'
}

@test "top -p PID -d: the process's functions, exit 0 when -d ends it" {
	"$T/ladder" 60 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	run -0 --separate-stderr "$PROF" top -p "$!" -d 2 -i 0.5
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	read -r self total < <(shares last ladder_d)
	at_least "$self" 90 || fail "ladder_d self $self%: $(cat last)"
	run -0 awk '$3 == "ladder_d" { print $NF }' last
	assert_output "ladder[${BG[0]}]"
	# the process goes on
	kill -0 "${BG[0]}"
}

@test "top -o FILE keeps a recording prof report reads, with the summary" {
	run -0 --separate-stderr "$PROF" top -o t.spool -- "$T/ladder" 0.5
	assert_regex "$stderr" 'prof: [0-9]+ samples, 0 lost, .*: t\.spool'
	run -0 "$PROF" report -q --format=folded t.spool
	assert_output --regexp 'main;ladder_a;ladder_b;ladder_c;ladder_d [0-9]+'
	# nothing in TMPDIR: the recording went to FILE
	run -0 find tmp -mindepth 1
	assert_output ''
}

@test "top without -o leaves no file: not while it runs, not after SIGINT" {
	"$T/ladder" 60 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	"$PROF" top -p "${BG[0]}" -i 0.3 >top.txt 2>top.err &
	local top=$!
	BG+=("$top")
	wait_for_line top.txt 'ladder_d' || fail "no view: $(cat top.txt top.err)"
	# the file is unlinked as soon as sampling starts: nothing to see
	run -0 find tmp -mindepth 1
	assert_output ''
	kill -INT "$top"
	wait_rc "$top"
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat top.err)"
	run -0 find tmp -mindepth 1
	assert_output ''
}

@test "top without -o removes its recording after a command, and says no summary" {
	run -0 --separate-stderr "$PROF" top -- "$T/ladder" 0.3
	assert_equal "$stderr" ''
	run -0 find tmp -mindepth 1
	assert_output ''
}

@test "top --by-process: ladder[PID] with nearly every sample, ladder_d its hottest" {
	run -0 --separate-stderr "$PROF" top --by-process -i 0.5 -- "$T/ladder" 1
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	run -0 sed -n 2p last
	assert_output --regexp '^ *self% +samples +process +hottest function$'
	run -0 awk '$3 ~ /^ladder\[/ { sub(/%/, "", $1); print ($1 + 0 >= 95), $4 }' last
	assert_output '1 ladder_d'
}

# compare_phases TRUTH BLOCK: each phase's share of TRUTH ("NAME VALUE"
# lines) and its total share in a top block, in points; fails naming those
# more than 5 points apart.
compare_phases() {
	awk -v tol=5 '
		FNR == NR { truth[$1] = $2; tsum += $2; next }
		$3 in truth { sub(/%/, "", $2); got[$3] = $2 + 0 }
		END {
			bad = 0
			for (p in truth) {
				t = 100 * truth[p] / tsum; d = t - got[p]; if (d < 0) d = -d
				printf "%-14s truth %5.1f%%  top %5.1f%%\n", p, t, got[p]
				if (d > tol) { printf "  %s: %.1f points apart\n", p, d; bad = 1 }
			}
			exit bad
		}' "$1" "$2"
}

@test "top --weight=off-cpu and wall: each phase of waiter within 5 points of what it measured" {
	# one block, at the end: an interval longer than the run, so nothing decayed
	run -0 --separate-stderr "$PROF" top --off-cpu --weight=off-cpu -i 1000 -n 500 -- \
		"$BUILD/targets/waiter" 2
	awk '$1 == "phase" { print $2, $3 - $4 }' <<<"$output" >truth-off
	[ "$(wc -l <truth-off)" -eq 7 ] || fail "waiter printed: $output"
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	assert_regex "$(head -n 1 last)" 'weight off-cpu, decaying$'
	run compare_phases truth-off last
	[ "$status" -eq 0 ] || fail "off-CPU: $output"
	run -0 --separate-stderr "$PROF" top --off-cpu --weight=wall -i 1000 -n 500 -- \
		"$BUILD/targets/waiter" 2
	awk '$1 == "phase" { print $2, $3 }' <<<"$output" >truth-wall
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	run compare_phases truth-wall last
	[ "$status" -eq 0 ] || fail "wall: $output"
}

@test "top on a terminal: the view at once, p switches, q quits 0, settings restored" {
	require_cmd python3 python3
	write_ptyrun
	"$T/ladder" 60 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	run -0 python3 ptyrun.py 'ladder_d' 'pq' screen "$PROF" top -p "${BG[0]}"
	assert_line 'exit 0'
	assert_line 'restored True'
	assert_line 'raw during True'
	# the alternate screen, entered and left; the view and, after p, processes
	grep -aqF $'\e[?1049h' screen || fail "no full screen"
	grep -aqF $'\e[?1049l' screen || fail "the screen was not given back"
	grep -aq 'prof top: ' screen || fail "no view: $(cat -v screen)"
	grep -aq 'hottest function' screen || fail "p did not switch: $(cat -v screen)"
	kill -0 "${BG[0]}"
}

@test "top on a terminal: w without --off-cpu says why, h lists the keys" {
	require_cmd python3 python3
	write_ptyrun
	"$T/ladder" 60 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	run -0 python3 ptyrun.py 'ladder_d' 'whq' screen "$PROF" top -p "${BG[0]}"
	assert_line 'exit 0'
	grep -aq 'w: only cpu was recorded' screen || fail "$(cat -v screen)"
	grep -aq 'keys: q quit, p functions/processes' screen || fail "$(cat -v screen)"
}

@test "top of the whole machine: ladder[PID] among the rest, its chain whole, busy share" {
	"$T/ladder" 60 >/dev/null &
	BG+=($!)
	wait_for_exec "$!" "$T/ladder"
	run --separate-stderr "$PROF" top -d 3 -i 1 -n 5000
	if [ "$status" -eq 1 ]; then
		# no whole machine here (perf_event_paranoid, or no -a): one line why
		assert_regex "$stderr" '^prof: [^'$'\n'']*$'
		skip_or_fail "no whole machine here: $stderr"
	fi
	assert_equal "$status" 0
	printf '%s\n' "$output" >top.txt
	last_block top.txt >last
	assert_regex "$(head -n 1 last)" ', [0-9]+ lost, busy [0-9.]+%, [0-9]+ process(es)? alive, '
	# other ladders may run beside ours (other tests): "ladder[PID] (N procs)"
	run -0 awk '$3 == "ladder_d" { print $5 }' last
	assert_output --regexp '^ladder\[[0-9]+\]$'
	# ladder_d's samples carry the whole chain up to ladder_a, as in a -p recording
	read -r dself dtotal < <(shares last ladder_d)
	read -r aself atotal < <(shares last ladder_a)
	at_least "$atotal" "$(awk -v d="$dself" 'BEGIN { print d * 0.95 }')" ||
		fail "ladder_a total $atotal%, ladder_d self $dself%: $(cat last)"
	# by process: ours is a row, ladder_d its hottest function
	run -0 --separate-stderr "$PROF" top --by-process --format=json -d 2 -i 1 -n 5000
	run -0 jq -r --argjson pid "${BG[0]}" '.rows[] | select(.pid == $pid) | .process + " " + .function' \
		<(grep '^{' <<<"$output" | tail -n 1)
	assert_output 'ladder ladder_d'
}

# The inodes of the hidden files prof top $1 holds open in $TMPDIR, one a line.
hidden_inodes() {
	local f l
	for f in /proc/"$1"/fd/*; do
		l=$(readlink "$f") || continue
		case $l in "$TMPDIR"/*" (deleted)") stat -L -c %i "$f" ;; esac
	done | sort -u
}

# Until prof top $1 holds a hidden file that is not one of inodes $2.
wait_for_new_file() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -n "$(comm -13 <(printf '%s\n' $2) <(hidden_inodes "$1"))" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "top goes on in a new hidden file as processes come and go, and on SIGUSR2: counts and names whole" {
	# ladder runs while 2500 processes start and exit (4096 gone makes a
	# new file), then SIGUSR2 asks for another; a file "stop" ends it
	"$PROF" top --format=json -i 0.5 -n 5000 -- sh -c "'$T/ladder' 120 >/dev/null &
		echo \$! >ladder.pid
		for i in \$(seq 2500); do /bin/true; done; touch churned
		while [ ! -e stop ]; do sleep 0.1; done; kill \$!; wait; exit 0" >top.json 2>top.err &
	local top=$! i
	BG+=("$top")
	wait_for_line top.json '"ladder_d"' || fail "no view: $(cat top.json top.err)"
	local first
	first=$(hidden_inodes "$top")
	[ -n "$first" ] || fail "no hidden file open in $TMPDIR: $(ls -l /proc/$top/fd)"
	for ((i = 0; i < 1200; i++)); do
		[ -e churned ] && break
		sleep 0.1
	done
	[ -e churned ] || fail "the churn did not end"
	wait_for_new_file "$top" "$first" || fail "still in its first file after 2500 processes"
	local second
	second=$(hidden_inodes "$top")
	kill -USR2 "$top"
	wait_for_new_file "$top" "$second" || fail "SIGUSR2 made no new file"
	sleep 1.5	# prints from the newest file
	touch stop
	wait_rc "$top"
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat top.err)"
	run -0 find tmp -mindepth 1
	assert_output ''
	# the last view: ladder's chain whole and named, its process by pid and name
	grep '^{' top.json | tail -n 1 >last.json
	run -0 jq -r '.rows[0].function' last.json
	assert_output ladder_d
	run -0 jq -r --argjson pid "$(cat ladder.pid)" \
		'.rows[] | select(.function == "ladder_d") | [.process, .pid == $pid] | @tsv' last.json
	assert_output $'ladder\ttrue'
	local d a
	d=$(jq -r '.rows[] | select(.function == "ladder_d") | .self' last.json)
	a=$(jq -r '.rows[] | select(.function == "ladder_a") | .total' last.json)
	at_least "$a" "$(awk -v d="$d" 'BEGIN { print d * 0.95 }')" ||
		fail "ladder_a total $a%, ladder_d self $d%: $(cat last.json)"
}

@test "top usage errors exit 64 with one line" {
	run -64 --separate-stderr "$PROF" top --limit 0 -- true
	assert_regex "${stderr_lines[0]}" "invalid --limit '0'"
	run -64 --separate-stderr "$PROF" top -i 0 -- true
	assert_regex "${stderr_lines[0]}" "invalid --interval '0'"
	run -64 --separate-stderr "$PROF" top --weight=wall -- true
	assert_regex "${stderr_lines[0]}" '--weight wall needs --off-cpu'
	run -64 --separate-stderr "$PROF" top --weight=nope -- true
	run -64 --separate-stderr "$PROF" top --format=samples -- true
	assert_regex "${stderr_lines[0]}" "unknown format 'samples'"
	run -64 --separate-stderr "$PROF" top -p 1 -- true
	assert_regex "${stderr_lines[0]}" 'either -p PID or a command'
	run -64 --separate-stderr "$PROF" top -C 0 -p 1
	assert_regex "${stderr_lines[0]}" '-C and --cgroup are for the whole machine'
}

@test "top forgets the processes whose samples decayed to nothing" {
	# 300 short processes of ~3 ms of CPU each, then 10 s of one ladder:
	# at 10 prints a second the burst's processes decay to nothing and go
	run -0 --separate-stderr "$PROF" top --format=json -i 0.1 -- \
		sh -c "'$T/burst' 300 >/dev/null; exec '$T/ladder' 10"
	grep '^{' <<<"$output" >top.json
	run -0 jq -s 'map(.counted) | max' top.json
	((output >= 100)) || fail "the burst's processes were never counted: at most $output"
	run -0 jq -s 'last | .counted' top.json
	((output <= 5)) || fail "$output processes still counted at the end"
	# the ladder is still there, whole
	run -0 jq -r -s 'last | .rows[0].function' top.json
	assert_output ladder_d
}
