#!/usr/bin/env bats
# prof tail: following spools while they are written, and prof record
# --live.  The synthetic cases use spoolgen and trickle; those that record
# need perf events (root, or perf_event_paranoid <= 1).
load test_helper

setup() {
	T="$BUILD/targets"
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	kill_background
}

# The live symbolizer names a libc function after the debug file's .symtab
# (__libc_start_main@@GLIBC_2.34), the spool's symbol records after its
# .dynsym (__libc_start_main): compare names without ELF symbol versions.
unversion() {
	sed -E 's/@@?[A-Za-z0-9_.]+//g'
}

# "STACK COUNT" per stack of a `prof tail --format=samples` output, sorted.
sample_counts() {
	cut -d' ' -f5- "$1" | unversion | sort | uniq -c |
		awk '{ c = $1; sub(/^ *[0-9]+ /, ""); print $0 " " c }' | sort
}

# The same of `prof report --format=folded` of a spool.
folded_counts() {
	"$PROF" report -q --format=folded "$1" | unversion | sort
}

# Wait for background process PID; its exit status goes to $rc.
wait_rc() {
	rc=0
	wait "$1" || rc=$?
}

# ---- spools written by a test program ------------------------------------

@test "tail of a finished spool prints every sample, as report counts them, and exits 0" {
	spool="$(spool s.spool --samples 3000 --elf "$T/ladder")"
	run -0 --separate-stderr "$PROF" tail --format=samples "$spool"
	assert_equal "${#lines[@]}" 3000
	assert_regex "${lines[0]}" '^0\.001001 4242 4242 ladder _start;main;ladder_a;ladder_b;ladder_c$'
	printf '%s\n' "$output" >tail.out
	assert_equal "$(sample_counts tail.out)" "$(folded_counts "$spool")"
}

@test "a spool written one byte at a time reads as the whole file" {
	spool="$(spool whole.spool --samples 2000 --elf "$T/ladder" --block 512)"
	"$PROF" tail --format=samples "$spool" >whole.out
	timeout 60 "$PROF" tail --format=samples --idle=20 trickled.spool >trickled.out &
	BG+=($!)
	"$BUILD/trickle" --delay-us 50 "$spool" trickled.spool
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
	[ "$(wc -l <whole.out)" -eq 2000 ]
	cmp whole.out trickled.out
}

@test "a file that is not a spool is an error at once" {
	echo 'hello' >text
	run -1 --separate-stderr timeout 5 "$PROF" tail text
	assert_equal "$stderr" "prof: 'text' is not a prof spool"
	assert_equal "$output" ""
}

@test "a spool that does not appear is given up after --idle, with exit 2" {
	# not before its second, and by itself (the timeout would exit 124)
	launched=$EPOCHREALTIME
	run -2 --separate-stderr timeout 30 "$PROF" tail --idle=1 never.spool
	now=$EPOCHREALTIME
	assert_equal "$stderr" "prof: no spool 'never.spool' appeared in 1 s"
	(((${now//[.,]/} - ${launched//[.,]/}) >= 1000000)) || fail "gave up after ${launched} to ${now}"
}

@test "a spool that appears later is followed to its trailer" {
	timeout 60 "$PROF" tail --format=samples --idle=20 later.spool >later.out &
	BG+=($!)
	sleep 0.5
	"$SPOOLGEN" --samples 500 later.spool
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
	[ "$(wc -l <later.out)" -eq 500 ]
}

@test "a spool without a trailer where nothing new comes: exit 2, the recording seems to have died" {
	spool="$(spool cut.spool --samples 300 --no-trailer)"
	run -2 --separate-stderr "$PROF" tail --format=samples --idle=1 "$spool"
	assert_equal "${#lines[@]}" 300
	assert_regex "${stderr_lines[-1]}" "^prof: spool '.*/cut.spool' has no trailer after [0-9]+ blocks and nothing new came for 1 s: the recording seems to have died$"
}

@test "a spool that shrinks while followed stops tail with exit 1" {
	spool="$(spool shrink.spool --samples 3000 --no-trailer)"
	timeout 60 "$PROF" tail --format=samples --idle=20 "$spool" >shrink.out 2>shrink.err &
	BG+=($!)
	wait_for_line shrink.out '.' || fail "nothing in shrink.out"
	sleep 0.3
	truncate -s 200 "$spool"
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 1
	assert_regex "$(tail -n 1 shrink.err)" "^prof: spool '.*/shrink.spool' shrank while being followed \(the file shrank from [0-9]+ to 200 bytes\): stopped after [0-9]+ blocks$"
}

@test "a block that fails its checksum stops tail with exit 1, after the valid blocks" {
	spool="$(spool bad.spool --samples 3000 --block 1024)"
	# a byte in the middle of the file: inside some block's payload or header
	size=$(stat -c %s "$spool")
	printf '\xff' | dd of="$spool" bs=1 seek=$((size / 2)) conv=notrunc status=none
	run -1 --separate-stderr "$PROF" tail --format=samples "$spool"
	assert_regex "${stderr_lines[-1]}" "^prof: spool '.*/bad.spool' is damaged \(block [0-9]+ at offset [0-9]+: [a-z ]*checksum mismatch\): stopped after [0-9]+ valid blocks$"
	[ "${#lines[@]}" -gt 0 ] && [ "${#lines[@]}" -lt 3000 ]
}

@test "a damaged block appended while tail follows stops it with exit 1" {
	spool="$(spool grow.spool --samples 500 --no-trailer)"
	timeout 60 "$PROF" tail --format=samples --idle=20 "$spool" >grow.out 2>grow.err &
	BG+=($!)
	wait_for_line grow.out '.' || fail "nothing in grow.out"
	# a block header with the right magic and a wrong checksum
	printf 'PBLK\x10\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\xde\xad\xbe\xef\x00\x00\x00\x00' >>"$spool"
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 1
	assert_regex "$(cat grow.err)" "is damaged \(block [0-9]+ at offset [0-9]+: header checksum mismatch\)"
	[ "$(wc -l <grow.out)" -eq 500 ]
}

@test "a next file of a series that is no spool stops tail there, with exit 1, after the files before it" {
	"$SPOOLGEN" --samples 30 x.spool.20261201101010000
	echo "not a spool, only named like the next file" >x.spool.20261201101011000
	run -1 --separate-stderr "$PROF" tail --format=samples x.spool.20261201101010000
	assert_equal "${#lines[@]}" 30
	assert_equal "${stderr_lines[-1]}" "prof: spool 'x.spool.20261201101010000' is damaged ('x.spool.20261201101011000' is not a prof spool): stopped after 2 valid blocks"
}

@test "--from-end skips the samples already there" {
	spool="$(spool end.spool --samples 300)"
	run -0 --separate-stderr "$PROF" tail --from-end --format=json "$spool"
	assert_equal "${#lines[@]}" 1
	assert_regex "${lines[0]}" '"all":\{"samples":0,"lost":0,"skipped":300\}'
	run -0 --separate-stderr "$PROF" tail --format=json "$spool"
	assert_regex "${lines[0]}" '"all":\{"samples":300,"lost":0,"skipped":0\}'
}

@test "--format=json prints one object per interval, with the documented keys" {
	require_cmd jq jq
	spool="$(spool j.spool --samples 300 --elf "$T/ladder")"
	run -0 --separate-stderr "$PROF" tail --format=json "$spool"
	assert_equal "${#lines[@]}" 1
	run jq -r '[.state, (.time > 0), .interval.samples, .interval.lost, .all.samples,
		    .all.lost, .all.skipped, .processes, .threads, (.functions | length),
		    (.functions[0] | keys | join(","))] | map(tostring) | join(" ")' <<<"${lines[0]}"
	assert_output "finished true 300 0 300 0 0 0 2 6 all,function,last,module"
}

@test "the top view prints a block per interval when stdout is no terminal" {
	spool="$(spool top.spool --samples 300 --elf "$T/ladder")"
	run -0 --separate-stderr "$PROF" tail "$spool"
	assert_line --index 0 --regexp "^prof tail: .*/top.spool, finished, 0\.3 s recorded, 0 processes and 2 threads alive$"
	assert_line --index 1 --regexp '^last 0\.3 s: 300 samples \([0-9]+/s\), 0 lost; all: 300 samples, 0 lost$'
	assert_line --index 2 --regexp '^ +last +self% +all +self% +function +module$'
	assert_line --regexp '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +ladder_c +ladder$'
	refute_output --partial $'\033'
}

@test "a live spool: a top block per --interval while it runs, the last one finished" {
	timeout 60 "$BUILD/livegen" --rate 1000 --seconds 3 --speed 1 g.spool &
	BG+=($!)
	run -0 --separate-stderr timeout 60 "$PROF" tail --interval=0.5 --idle=10 g.spool
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
	# (more than one while it runs: 6 on an idle machine, fewer on a loaded one)
	running=$(grep -cE '^prof tail: g.spool, running, [0-9.]+ s recorded, 1 process and 4 threads alive$' <<<"$output")
	[ "$running" -ge 2 ]
	assert_equal "$(grep -c '^prof tail: ' <<<"$output")" "$((running + 1))"
	assert_line --regexp '^prof tail: g.spool, finished, 3\.0 s recorded, 1 process and 4 threads alive$'
	assert_line --regexp '^last [0-9.]+ s: [0-9]+ samples, 0 lost; all: 3000 samples, 0 lost$|^last [0-9.]+ s: [0-9]+ samples \([0-9]+/s\), 0 lost; all: 3000 samples, 0 lost$'
}

@test "on a terminal the top view redraws in place" {
	spool="$(spool tty.spool --samples 300 --elf "$T/ladder")"
	run -0 script -qec "$PROF tail $spool" /dev/null
	assert_output --partial $'\033[H\033[Jprof tail: '"$spool, finished"
}

@test "bad option values are usage errors" {
	run -64 --separate-stderr "$PROF" tail --idle=0 x.spool
	assert_equal "${stderr_lines[0]}" "prof tail: invalid --idle '0': expected a number of seconds above 0"
	run -64 --separate-stderr "$PROF" tail --interval=soon x.spool
	assert_equal "${stderr_lines[0]}" "prof tail: invalid --interval 'soon': expected a number of seconds above 0"
	run -64 --separate-stderr "$PROF" tail --format=folded x.spool
	assert_equal "${stderr_lines[0]}" "prof tail: 'folded' is not a tail format; the formats are: top, samples, json"
	# several spools are the files of one recording: they must be there
	run -1 --separate-stderr "$PROF" tail a.spool b.spool
	assert_equal "$stderr" "prof: cannot open spool 'a.spool': No such file or directory"
}

# ---- live recordings ----------------------------------------------------------

@test "tail started before the recording writes: the samples report counts" {
	require_perf_events
	timeout 60 "$PROF" tail --format=samples --idle=20 before.spool >before.out 2>before.err &
	BG+=($!)
	sleep 0.3
	"$PROF" record -q -o before.spool -- "$T/ladder" 1.5
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
	[ "$(wc -l <before.out)" -gt 500 ]
	assert_equal "$(sample_counts before.out)" "$(folded_counts before.spool)"
	assert_equal "$(cat before.err)" ""
}

@test "tail started during the recording: the samples report counts" {
	require_perf_events
	"$PROF" record -q -o during.spool -- "$T/ladder" 3 >/dev/null &
	BG+=($!)
	# once the recording has flushed a block (the spool is written from the
	# start of sampling)
	wait_for_spool_samples during.spool 1 || fail "no samples in during.spool"
	run -0 --separate-stderr timeout 60 "$PROF" tail --format=samples --idle=20 during.spool
	printf '%s\n' "$output" >during.out
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
	assert_equal "$(sample_counts during.out)" "$(folded_counts during.spool)"
}

@test "tail started after the recording finished: the samples report counts" {
	require_perf_events
	"$PROF" record -q -o after.spool -- "$T/ladder" 1
	run -0 --separate-stderr timeout 20 "$PROF" tail --format=samples after.spool
	printf '%s\n' "$output" >after.out
	[ "$(wc -l <after.out)" -gt 500 ]
	assert_equal "$(sample_counts after.out)" "$(folded_counts after.spool)"
}

@test "lines of the target's hottest function show while the target still runs" {
	require_perf_events
	require_cmd pgrep procps
	"$PROF" record -q -o hot.spool -- "$T/ladder" 8 >/dev/null &
	BG+=($!)
	rec=${BG[-1]}
	timeout 60 "$PROF" tail --format=samples --idle=20 hot.spool >hot.out &
	BG+=($!)
	wait_for_line hot.out ' [0-9]+ [0-9]+ ladder _start;.*;ladder_c;ladder_d$' ||
		fail "no ladder_d line in hot.out"
	kill -0 "$rec"	# the recording, and so the target, still runs
	pgrep -P "$rec" >/dev/null
	wait_rc "${BG[-1]}"
	assert_equal "$rc" 0
}

@test "a recorder killed with SIGKILL: tail says so and ends by itself, with exit 2" {
	require_perf_events
	require_cmd pgrep procps
	"$PROF" record -q -o killed.spool -- "$T/ladder" 30 >/dev/null &
	BG+=($!)
	rec=${BG[-1]}
	# --idle cannot end it: the lock the recorder held, gone with it, does
	timeout 60 "$PROF" tail --format=samples --idle=600 killed.spool >killed.out 2>killed.err &
	BG+=($!)
	wait_for_line killed.out 'ladder_d$' || fail "no ladder_d line in killed.out"
	target=$(pgrep -P "$rec")
	BG+=($target)
	kill -9 "$rec" "$target"
	wait_rc "${BG[-2]}"
	assert_equal "$rc" 2
	assert_regex "$(cat killed.err)" "^prof: spool 'killed\.spool' ends here: its writer is gone and (it has no trailer after [0-9]+ blocks|it is cut short: .*) \(the recorder was killed\?\)$"
	# what it read is what the cut spool holds
	assert_equal "$(sample_counts killed.out)" "$(folded_counts killed.spool)"
}

@test "record --live shows the top view on stderr, then the summary" {
	require_perf_events
	run -0 --separate-stderr "$PROF" record --live -o live.spool -- "$T/ladder" 2.5
	assert_output --regexp '^ladder: [0-9]+ rounds'
	grep -qE '^prof tail: live.spool, running, [0-9.]+ s recorded, 1 process and 1 thread alive$' <<<"$stderr"
	grep -qE '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +ladder_d +ladder$' <<<"$stderr"
	# finished, as long as the spool says it recorded (to the tenth tail prints)
	recorded=$(sed -nE 's/^prof tail: live.spool, finished, ([0-9.]+) s recorded.*/\1/p' <<<"$stderr" | tail -n 1)
	[ -n "$recorded" ] || fail "no finished view: $stderr"
	ms=$("$PROF" report -q --format=json live.spool | jq '.counters.duration_ns / 1e6 | floor')
	awk -v r="$recorded" -v ms="$ms" 'BEGIN { d = r * 1000 - ms; exit !(d >= -100 && d <= 100) }' ||
		fail "the view says $recorded s recorded, the spool $ms ms"
	assert_regex "${stderr_lines[-1]}" '^prof: [0-9]+ samples, [0-9]+ lost( \([0-9]+ gaps, [0-9]+ reconciliations\))?, 1 process, 1 thread, .*: live.spool$'
	# the view's last count is the spool's
	all=$(grep -E '^last .*; all: [0-9]+ samples' <<<"$stderr" | tail -n 1 | sed -E 's/.*all: ([0-9]+) samples.*/\1/')
	assert_regex "${stderr_lines[-1]}" "^prof: $all samples"
	run -64 --separate-stderr "$PROF" record --live -q -- true
	assert_equal "${stderr_lines[0]}" "prof record: --live and --quiet cannot be used together"
}

@test "record --live --switch-output: one view across the files, its count the recording's" {
	require_perf_events
	run -0 --separate-stderr "$PROF" record --live --switch-output=1s -o live.spool -- \
		"$T/ladder" 3.5
	run -0 ls live.spool.*
	((${#lines[@]} >= 3)) || fail "fewer than three files: $output"
	# every view while it ran: ladder alive, the time from the recording's start
	run -0 grep -E '^prof tail: live.spool, running, ' <<<"$stderr"
	((${#lines[@]} >= 3)) || fail "fewer than three views: $stderr"
	# (the first is printed at once, before anything was read)
	local l
	for l in "${lines[@]:1}"; do
		assert_regex "$l" ', 1 process and 1 thread alive$'
	done
	local t prev=0
	for t in $(sed -nE 's/^prof tail: live.spool, [a-z]+, ([0-9.]+) s recorded.*/\1/p' <<<"$stderr"); do
		awk -v t="$t" -v p="$prev" 'BEGIN { exit !(t >= p) }' || fail "recorded time went $prev -> $t: $stderr"
		prev=$t
	done
	awk -v t="$prev" 'BEGIN { exit !(t >= 3) }' || fail "the last view says $prev s recorded"
	# one count over every file: the last "all" is every sample the files hold
	local all
	all=$(grep -E '^last .*; all: [0-9]+ samples' <<<"$stderr" | tail -n 1 | sed -E 's/.*all: ([0-9]+) samples.*/\1/')
	run -0 "$PROF" report -q --format=json live.spool.*
	assert_equal "$all" "$(jq '.counters.samples' <<<"$output")"
	assert_regex "${stderr_lines[-1]}" "^prof: $all samples, .*: live\\.spool\\.\\* \\([0-9]+ files\\)$"
}

@test "a hidden temporary file beside the spool is never followed" {
	spool f.spool --samples 3000 --elf "$T/ladder" >/dev/null
	# a cut copy, as a killed recorder leaves it, named after a pid that a
	# process which never opened it now has
	sleep 60 &
	BG+=($!)
	head -c 3000 "$BATS_TEST_TMPDIR/f.spool" >".f.spool.tmp.${BG[-1]}"
	touch -d '1 hour ago' ".f.spool.tmp.${BG[-1]}"
	# the finished spool is newer: tail reads it to its trailer, without waiting
	run -0 --separate-stderr timeout 20 "$PROF" tail --format=samples --idle=10 f.spool
	assert_equal "${#lines[@]}" 3000
}

@test "a recorder's tail names frames from the files the recorder holds, deleted or not" {
	require_perf_events
	cp "$T/ladder" ./doomed
	# doomed is deleted once the recorder has seen it mapped, before any name is
	# looked up: the tail's symbolizer reads the recorder's descriptor, a plain
	# one the path, which is gone
	run -0 --separate-stderr "$BUILD/rectail" --unlink ./doomed ul.spool -- ./doomed 2
	assert [ ! -e doomed ]
	assert_line "leaf: ladder_d"
	assert_line --regexp '^plain-leaf: doomed\+0x[0-9a-f]+$'
	# and the spool names it too (the recorder captured the names at the end)
	run -0 "$PROF" report -q --limit=1 ul.spool
	assert_line --regexp ' ladder_d +doomed$'
}

@test "a recorder's tail: one at a time, none for a sink, every sample, and it can discard" {
	require_perf_events
	run -0 --separate-stderr "$BUILD/rectail" rt.spool -- "$T/ladder" 2
	assert_line "busy: ok"
	assert_line "notsup: ok"
	assert_line "state: finished"
	tail=$(sed -n 's/^tail: //p' <<<"$output")
	assert_line "recorder: $tail"
	live=$(sed -n 's/^live: //p' <<<"$output")
	[ "$live" -gt 0 ]
	[ "$tail" -gt 1000 ]
	run -0 "$PROF" report -q --format=folded rt.spool
	# discarding gives back the disk space of what was read
	run -0 --separate-stderr "$BUILD/rectail" --discard --freq 20000 rd.spool -- "$T/busy4" 3
	assert_line "state: finished"
	read -r used size < <(sed -n 's/^allocated: \([0-9]*\) of \([0-9]*\)$/\1 \2/p' <<<"$output")
	# what stays: the header and metadata, and the file system block at the end
	[ "$size" -gt 20000 ] && [ "$((used * 2))" -lt "$size" ]
}
