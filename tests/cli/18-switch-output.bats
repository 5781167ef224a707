#!/usr/bin/env bats
# prof record --switch-output: a recording in files FILE.<timestamp>, each
# of which reads on its own, and prof report and prof tail reading them as
# one recording.
load test_helper

setup() {
	setup_recording
}

teardown() {
	kill_background
}

# samples FILE...: the samples prof report counts in them, as one recording
samples() {
	"$PROF" report -q --format=json "$@" | jq .samples
}

# wait_asleep PID: until PID runs prof and waits (for a file to appear, or
# to grow), for at most 30 s
wait_asleep() {
	local i
	for ((i = 0; i < 300; i++)); do
		if [ "$(readlink "/proc/$1/exe")" = "$(readlink -f "$PROF")" ] &&
			[ "$(awk '{ print $3 }' "/proc/$1/stat")" = S ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# wait_for_files BASE N: until there are N files BASE.*, for at most 30 s
wait_for_files() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(ls "$1".* 2>/dev/null | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "--switch-output=1s: a file a second, each reading on its own, all of them as one" {
	require_cmd jq jq
	require_libc_debug
	run -0 --separate-stderr "$PROF" record --switch-output=1s -o x.spool -- "$BUILD/targets/ladder" 3.5
	summary=$stderr
	mapfile -t files < <(ls x.spool.* 2>/dev/null)
	# a file a second of the recording, the last one partly filled
	ms=$("$PROF" report -q --format=json "${files[@]}" | jq '.counters.duration_ns / 1e6 | floor')
	((${#files[@]} >= ms / 1000 && ${#files[@]} <= ms / 1000 + 2)) ||
		fail "${#files[@]} files for $ms ms: ${files[*]}"
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
	# time runs on across the files, from the recording's start (counted
	# from each file's start, no sample would be past 1.1 s): --time=1,2
	# keeps the samples prof tail times from 1 to 2 s, to the microsecond it
	# prints them in
	"$PROF" tail --format=samples "${files[@]}" >times
	assert_equal "$(wc -l <times)" "$total"
	run -0 awk '{ t = $1 } END { print t; exit !(t >= 2) }' times
	second=$("$PROF" report -q --format=json --time=1,2 "${files[@]}" | jq .samples)
	run -0 awk -v n="$second" '
		$1 >= 1.000001 && $1 <= 1.999999 { inside++ }
		$1 >= 0.999999 && $1 <= 2.000001 { around++ }
		END { printf "--time=1,2: %d samples; %d to %d by their times\n", n, inside, around
		      exit !(inside > 0 && n >= inside && n <= around) }' times
	# the same stacks as one file would hold: the ladder on (nearly) every sample
	run -0 "$PROF" report -q --format=folded "${files[@]}"
	assert_line --regexp '^_start;__libc_start_main;__libc_start_call_main;main;ladder_a;ladder_b;ladder_c;ladder_d [0-9]+$'
}

@test "--switch-output=SIZE, --switch-max-files, and SIGUSR2" {
	require_cmd jq jq
	# (a file grows a block at a time, at least once a second: churn's are
	# 6-7K on an idle machine, and 2K leaves room for one that gives it a
	# fifth of the CPU)
	run -0 "$PROF" record -q --switch-output=2K -o s.spool -- "$BUILD/targets/churn" 3
	n=$(ls s.spool.* | wc -l)
	((n >= 2)) || fail "$n files of 2K"
	for f in s.spool.*; do
		(($(stat -c %s "$f") >= 2048)) || [ "$f" = "$(ls s.spool.* | tail -1)" ] ||
			fail "$f: $(stat -c %s "$f") bytes"
	done
	run -0 "$PROF" record -q --switch-output=2K --switch-max-files=2 -o m.spool -- "$BUILD/targets/churn" 2
	assert_equal "$(ls m.spool.* | wc -l)" 2
	# the newest two: they read as one, without the files before them
	run -0 "$PROF" report -q m.spool.*
	# signal: a new file on each SIGUSR2, none otherwise; each signal sent
	# once the file before it is there (prof takes SIGUSR2 before it makes
	# its first), and the recording stopped by SIGINT once the third is
	"$PROF" record -q --switch-output -o g.spool -- "$BUILD/targets/ladder" 60 &
	BG+=($!)
	wait_for_files g.spool 1 || fail "no first file"
	kill -USR2 "${BG[0]}"
	wait_for_files g.spool 2 || fail "no file after the first SIGUSR2"
	kill -USR2 "${BG[0]}"
	wait_for_files g.spool 3 || fail "no file after the second SIGUSR2"
	kill -INT "${BG[0]}"
	status=0
	wait "${BG[0]}" || status=$?
	assert_equal "$status" 130
	assert_equal "$(ls g.spool.* | wc -l)" 3
	assert_equal "$(samples g.spool.*)" "$("$PROF" report -q --format=json g.spool.* | jq .counters.samples)"
}

@test "--off-cpu across files: an interval cut at a switch is in both, each thread's time adds up" {
	run -0 "$PROF" record -q --off-cpu --switch-output=1s -o w.spool -- "$BUILD/targets/waiter" 3
	grep '^thread ' <<<"$output" >lifetimes
	[ "$(wc -l <lifetimes)" -eq 7 ] || fail "waiter printed: $output"
	mapfile -t files < <(ls w.spool.*)
	((${#files[@]} >= 3)) || fail "files: ${files[*]}"
	# as one recording: every thread as long as it lived by its own clock
	"$PROF" report -q --weight=wall --by-thread "${files[@]}" >all.threads
	run -0 lifetimes_agree lifetimes <all.threads
	# each file alone holds its part of each thread's time, and the parts add
	# up to the whole (to the 0.01 ms a report rounds each to)
	for f in "${files[@]}"; do
		"$PROF" report -q --weight=wall --by-thread "$f"
	done >parts.threads
	run -0 awk '
		/^thread / && match($0, /\(tid [0-9]+\)/) {
			t = substr($0, RSTART + 5, RLENGTH - 6)
			if (FILENAME == "all.threads") all[t] += $(NF - 2); else part[t] += $(NF - 2)
		}
		END {
			for (t in all) {
				d = part[t] - all[t]; if (d < 0) d = -d
				printf "tid %s: %.2f ms in all, %.2f ms in the parts\n", t, all[t], part[t]
				if (d > 0.01 * n + 0.005) bad = 1
			}
			exit bad
		}' n="${#files[@]}" all.threads parts.threads
	# the second file begins and ends with a switch, and every thread lived
	# through it: each has the file's whole time, the parts of its intervals
	# cut at both ends included (to 3%, as lifetimes_agree says why)
	duration=$("$PROF" report -q --format=json "${files[1]}" | jq .counters.duration_ns)
	"$PROF" report -q --weight=wall --by-thread "${files[1]}" >second.threads
	run -0 awk -v file_ms="$((duration / 1000000))" '
		/^thread / && match($0, /\(tid [0-9]+\)/) { ms[substr($0, RSTART + 5, RLENGTH - 6)] += $(NF - 2) }
		END {
			for (t in ms) {
				n++; d = ms[t] - file_ms; if (d < 0) d = -d
				printf "tid %s: %.2f ms, the file %d ms\n", t, ms[t], file_ms
				if (d > 0.03 * file_ms) bad = 1
			}
			exit bad || n != 7
		}' second.threads
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
	wait_asleep "${BG[0]}" || fail "prof tail did not start"
	wait_asleep "${BG[1]}" || fail "prof tail --format=json did not start"
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
	# time runs on across the files, from the recording's start: the 3.5 s
	# ladder has samples past the second file's end
	run -0 awk 'NR > 1 && $1 < prev { print "time went back at line " NR } { prev = $1 }
		    END { print "last", prev; exit !(prev >= 2) }' live.txt
	assert_equal "${#lines[@]}" 1
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
