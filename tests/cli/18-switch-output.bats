#!/usr/bin/env bats
# prof record --switch-output: a recording in files FILE.<timestamp>, each
# of which reads on its own, and prof report and prof tail reading them as
# one recording.
load test_helper

setup() {
	require_perf_events
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	kill_background
}

# samples FILE...: the samples prof report counts in them, as one recording
samples() {
	"$PROF" report -q --format=json "$@" | jq .samples
}

@test "--switch-output=1s: a file a second, each reading on its own, all of them as one" {
	require_cmd jq jq
	require_libc_debug
	run -0 --separate-stderr "$PROF" record --switch-output=1s -o x.spool -- "$BUILD/targets/ladder" 3.5
	summary=$stderr
	mapfile -t files < <(ls x.spool.* 2>/dev/null)
	((${#files[@]} >= 3 && ${#files[@]} <= 5)) || fail "files: ${files[*]}"
	[ ! -e x.spool ]
	for f in "${files[@]}"; do
		[[ $f =~ ^x\.spool\.[0-9]{17}$ ]] || fail "named $f"

		run -0 --separate-stderr "$PROF" report "$f"
		assert_equal "$stderr" ""	# a trailer, nothing cut: no warning
		assert_line --regexp '^samples: +[1-9][0-9]* written'
		assert_line --regexp 'ladder_d +ladder$'
	done
	total=0
	for f in "${files[@]}"; do
		total=$((total + $(samples "$f")))
	done
	assert_equal "$(samples "${files[@]}")" "$total"
	assert_regex "$summary" "^prof: $total samples, 0 lost, .*: x\\.spool\\.\\* \\(${#files[@]} files\\)\$"
	# one process and one thread across the files: they are matched, not repeated
	run -0 "$PROF" report "${files[@]}"
	assert_line --regexp '^spool holds: +1 processes, 1 threads, '
	assert_line --regexp '^# prof report of x\.spool\.[0-9]{17} \(and [0-9]+ more\)$'
	# time runs on across the files: the second second of the 3.5 s
	# recording holds 2/7 of its samples (a CPU time on a loaded machine
	# shrinks both alike); counted from each file's start, nearly none
	second=$("$PROF" report -q --format=json --time=1,2 "${files[@]}" | jq .samples)
	((second * 10 >= total * 2 && second * 10 <= total * 4)) ||
		fail "--time=1,2: $second of $total samples"
	# the same stacks as one file would hold: the ladder on (nearly) every sample
	run -0 "$PROF" report -q --format=folded "${files[@]}"
	assert_line --regexp '^_start;__libc_start_main;__libc_start_call_main;main;ladder_a;ladder_b;ladder_c;ladder_d [0-9]+$'
}

@test "--switch-output=SIZE, --switch-max-files, and SIGUSR2" {
	require_cmd jq jq
	# (a file grows a block at a time, at least once a second)
	run -0 "$PROF" record -q --switch-output=4K -o s.spool -- "$BUILD/targets/churn" 3
	n=$(ls s.spool.* | wc -l)
	((n >= 2)) || fail "$n files of 4K"
	for f in s.spool.*; do
		(($(stat -c %s "$f") >= 4096)) || [ "$f" = "$(ls s.spool.* | tail -1)" ] ||
			fail "$f: $(stat -c %s "$f") bytes"
	done
	run -0 "$PROF" record -q --switch-output=4K --switch-max-files=2 -o m.spool -- "$BUILD/targets/churn" 2
	assert_equal "$(ls m.spool.* | wc -l)" 2
	# the newest two: they read as one, without the files before them
	run -0 "$PROF" report -q m.spool.*
	# signal: a new file on each SIGUSR2, none otherwise
	"$PROF" record -q --switch-output -o g.spool -- "$BUILD/targets/ladder" 3 &
	BG+=($!)
	sleep 1
	kill -USR2 "${BG[0]}"
	sleep 1
	kill -USR2 "${BG[0]}"
	wait "${BG[0]}"
	assert_equal "$(ls g.spool.* | wc -l)" 3
	assert_equal "$(samples g.spool.*)" "$("$PROF" report -q --format=json g.spool.* | jq .counters.samples)"
}

@test "--off-cpu across files: an interval cut at a switch is in both, each thread's time adds up" {
	run -0 "$PROF" record -q --off-cpu --switch-output=1s -o w.spool -- "$BUILD/targets/waiter" 2
	mapfile -t files < <(ls w.spool.*)
	((${#files[@]} >= 2)) || fail "files: ${files[*]}"
	# as one recording: every thread of waiter lived about 2 s
	run -0 "$PROF" report -q --weight=wall --by-thread "${files[@]}"
	run -0 awk '/^thread / { n++; ms = $(NF - 2); if (ms < 1800 || ms > 2300) { print; bad = 1 } }
		    END { if (n != 7) { print n " threads"; bad = 1 }; exit bad }' <<<"$output"
	# the first file alone holds about its second of each thread's waits
	run -0 "$PROF" report -q --weight=wall --by-thread "${files[0]}"
	run -0 awk '/^thread sleeper / { ms = $(NF - 2); exit !(ms > 800 && ms < 1250) }' <<<"$output"
	# the sleeper's stack goes on in the next file
	run -0 "$PROF" report -q --weight=off-cpu --format=folded --comm=sleeper "${files[1]}"
	assert_line --regexp ';sleeper_main;sleep_phase;.*\[blocked\] [0-9]+$'
}

@test "prof tail reads the files of a recording as one" {
	require_cmd jq jq
	run -0 "$PROF" record -q --switch-output=1s -o t.spool -- "$BUILD/targets/ladder" 2.5
	run -0 "$PROF" tail --format=samples t.spool.*
	assert_equal "${#lines[@]}" "$(samples t.spool.*)"
	run -0 "$PROF" tail --format=json t.spool.*
	run -0 jq -rs 'last | .state' <<<"$output"
	assert_output finished
}

@test "prof tail FILE follows a recording split by --switch-output live, file after file" {
	require_cmd jq jq
	# started first: it waits for the recording, which never writes x.spool itself
	"$PROF" tail --format=samples --idle=20 x.spool >live.txt 2>live.err &
	BG+=($!)
	"$PROF" tail --format=json --idle=20 x.spool >live.json 2>&1 &
	BG+=($!)
	sleep 0.3
	run -0 --separate-stderr "$PROF" record --switch-output=1s --switch-max-files=2 \
		-o x.spool -- "$BUILD/targets/ladder" 3.5
	[[ $stderr =~ ^prof:\ ([0-9]+)\ samples ]] || fail "summary: $stderr"
	total=${BASH_REMATCH[1]}
	wait "${BG[0]}" || fail "tail exit $?: $(cat live.err)"
	wait "${BG[1]}" || fail "tail --format=json exit $?"
	# the files --switch-max-files removed were read before they went
	mapfile -t files < <(ls x.spool.*)
	assert_equal "${#files[@]}" 2
	assert_equal "$(wc -l <live.txt)" "$total"
	assert_equal "$(jq -s 'last | [.state, .all.samples] | join(" ")' -r live.json)" "finished $total"
	# one process and one thread all along: the same ones in every file
	assert_equal "$(awk '{ print $2, $3 }' live.txt | sort -u | wc -l)" 1
	# time runs on across the files, from the recording's start
	run -0 awk 'NR > 1 && $1 < prev { print "time went back at line " NR } { prev = $1 } END { print "last", int(prev) }' live.txt
	assert_output "last 3"
}

@test "prof tail FILE.STAMP reads on to the recording's end; --from-end starts at the newest file's end" {
	require_cmd jq jq
	run -0 "$PROF" record -q --switch-output=1s -o x.spool -- "$BUILD/targets/ladder" 3.5
	mapfile -t files < <(ls x.spool.*)
	((${#files[@]} >= 3)) || fail "files: ${files[*]}"
	run -0 "$PROF" tail --format=samples x.spool
	assert_equal "${#lines[@]}" "$(samples "${files[@]}")"
	run -0 "$PROF" tail --format=samples "${files[1]}"
	assert_equal "${#lines[@]}" "$(samples "${files[@]:1}")"
	# the last file given is followed by those after it, too
	run -0 "$PROF" tail --format=samples "${files[0]}" "${files[1]}"
	assert_equal "${#lines[@]}" "$(samples "${files[@]}")"
	run -0 "$PROF" tail --format=samples --from-end x.spool
	assert_output ""
}

@test "--switch-output usage errors, and files it cannot be" {
	run -64 --separate-stderr "$PROF" record --switch-output=10 -- true
	assert_regex "$stderr" "invalid --switch-output '10'"
	run -64 --separate-stderr "$PROF" record --switch-output=5x -- true
	run -64 --separate-stderr "$PROF" record --switch-max-files=3 -- true
	assert_regex "$stderr" '--switch-max-files needs --switch-output'
	run -1 --separate-stderr "$PROF" record --switch-output=1s -o /dev/null -- true
	assert_regex "$stderr" "needs a regular file: '/dev/null' is a pipe, a device or a directory"
	[ -z "$(ls /dev/null.* 2>/dev/null)" ]
	# the same file twice is no recording
	run -0 "$PROF" record -q -o one.spool -- true
	run -1 --separate-stderr "$PROF" report one.spool ./one.spool
	assert_regex "$stderr" "is given twice"
}
