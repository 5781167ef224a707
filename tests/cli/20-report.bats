#!/usr/bin/env bats
# prof report on spools written by libprof's writer: metadata, counters,
# and every way a spool can be bad.
load test_helper

# What naming the frames of spoolgen's default spool warns, first: its
# executable is made up, and its libc is this host's under a made-up build-id.
symbol_warnings() {
	local libc=/usr/lib/x86_64-linux-gnu/libc.so.6 id
	id=$(readelf -n "$libc" | sed -n 's/^ *Build ID: //p')
	echo "prof: warning: cannot open '/usr/bin/ladder': No such file or directory; its frames are shown as file offsets"
	echo "prof: warning: '$libc' has build-id $id, not the recorded 101112131415161718191a1b1c1d1e1f20212223: its function names may be wrong"
}

@test "report prints the metadata and counters of a spool" {
	s=$(spool a.spool --samples 3000 --stacks 50)
	run -0 --separate-stderr "$PROF" report "$s"
	assert_line --index 0 "# prof report of $s"
	assert_line "command:      ./ladder --iterations 3000"
	assert_line "started:      2025-11-30 22:00:00 UTC"
	assert_line "event:        cpu-clock, 999 Hz, user stack 32768 bytes, children followed"
	assert_line "host:         spoolgen, Linux 6.1.0-synthetic x86_64, page size 4096"
	assert_line "duration:     3.003 s"
	assert_line "samples:      3000 written, 3000 delivered by the kernel, 0 lost (0.00%)"
	assert_line "stacks:       2798 complete (93.3%), 202 truncated, 0 empty"
	assert_line "unwind errors: stack-copy 202"
	assert_line "tracked:      1 processes, 3 threads; 0 lifecycle gaps, 0 reconciliations"
	assert_line "spool holds:  1 processes, 3 threads, 2 modules, 227 frames, 233 stack nodes, 1 symbols"
	assert_line --regexp "^spool size:   [0-9]+ bytes in [0-9]+ blocks, [0-9.]+ bytes/sample$"
	# 6.7% truncated stacks is above the 5% a trustworthy profile allows
	assert_equal "$stderr" "$(symbol_warnings)
prof: warning: 6.7% of stacks are incomplete: callers may be missing"
}

@test "-q silences warnings, not the report" {
	s=$(spool a.spool)
	run -0 --separate-stderr "$PROF" report -q "$s"
	assert_equal "$stderr" ""
	assert_line "samples:      3000 written, 3000 delivered by the kernel, 0 lost (0.00%)"
}

@test "report reads prof.spool by default" {
	cd "$BATS_TEST_TMPDIR"
	"$SPOOLGEN" --samples 10 prof.spool
	run -0 --separate-stderr "$PROF" report
	assert_line --index 0 "# prof report of prof.spool"
}

@test "a missing spool is an error that names it" {
	run -1 --separate-stderr "$PROF" report "$BATS_TEST_TMPDIR/none.spool"
	assert_equal "$stderr" "prof: cannot open spool '$BATS_TEST_TMPDIR/none.spool': No such file or directory"
	assert_equal "$output" ""
}

@test "the default spool missing is an error too" {
	cd "$BATS_TEST_TMPDIR"
	run -1 --separate-stderr "$PROF" report
	assert_equal "$stderr" "prof: cannot open spool 'prof.spool': No such file or directory"
}

@test "a file that is not a spool is an error" {
	f="$BATS_TEST_TMPDIR/notes.txt"
	echo "hello, this is not a spool" >"$f"
	run -1 --separate-stderr "$PROF" report "$f"
	assert_equal "$stderr" "prof: '$f' is not a prof spool"
}

@test "an empty file and a directory are errors" {
	f="$BATS_TEST_TMPDIR/empty.spool"
	: >"$f"
	run -1 --separate-stderr "$PROF" report "$f"
	assert_equal "$stderr" "prof: spool '$f' is empty"
	run -1 --separate-stderr "$PROF" report "$BATS_TEST_TMPDIR"
	assert_equal "$stderr" "prof: cannot read spool '$BATS_TEST_TMPDIR': is a directory"
}

@test "a spool of a newer major version is refused" {
	s=$(spool a.spool --samples 10)
	printf '\005' | dd of="$s" bs=1 seek=8 conv=notrunc status=none
	run -1 --separate-stderr "$PROF" report "$s"
	assert_equal "$stderr" "prof: spool '$s' has format version 5.0; this prof reads 1.x to 4.x (a newer prof wrote it)"
}

@test "a spool without a trailer is reported with a warning" {
	s=$(spool a.spool --samples 500 --no-trailer)
	run -0 --separate-stderr "$PROF" report "$s"
	assert_line "samples:      500 read (no trailer: counters unknown)"
	assert_equal "$stderr" "$(symbol_warnings)
prof: warning: spool '$s' has no trailer: the recording is still running or was killed"
}

@test "a spool cut inside a block keeps every complete block" {
	s=$(spool a.spool --samples 2000 --raw --block 4096)
	size=$(stat -c %s "$s")
	head -c $((size - 100)) "$s" >"$s.cut"
	run -0 --separate-stderr "$PROF" report "$s.cut"
	assert_line --regexp "^samples:      1[0-9]{3} read \(no trailer: counters unknown\)$"
	assert_equal "${#stderr_lines[@]}" 3
	assert_equal "${stderr_lines[0]}
${stderr_lines[1]}" "$(symbol_warnings)"
	assert_regex "${stderr_lines[2]}" "^prof: warning: spool '$s.cut' is cut short \(block [0-9]+ at offset [0-9]+: incomplete \([0-9]+ of [0-9]+ bytes\)\): showing its [0-9]+ complete blocks$"
}

@test "a damaged block stops the read there, with the reason" {
	s=$(spool a.spool --samples 2000 --raw --block 4096)
	printf '\377' | dd of="$s" bs=1 seek=9000 conv=notrunc status=none
	run -0 --separate-stderr "$PROF" report "$s"
	assert_equal "${#stderr_lines[@]}" 3
	assert_equal "${stderr_lines[0]}
${stderr_lines[1]}" "$(symbol_warnings)"
	assert_regex "${stderr_lines[2]}" "^prof: warning: spool '$s' is damaged \(block [0-9]+ at offset [0-9]+: payload checksum mismatch\): showing the [0-9]+ valid blocks before it$"
}

@test "a record its block's checksums vouch for, but out of range, stops the read at its block" {
	# an interval of 2^55 us, past 2^64 ns, in a block whose checksums match it
	s=$(spool a.spool --samples 2000 --offcpu 300 --block 4096)
	run -0 "$BUILD/spooledit" --record OFFCPU:100 --set duration=2^55 "$s" "$s.bad"
	run -0 --separate-stderr "$PROF" report "$s.bad"
	assert_equal "${#stderr_lines[@]}" 3
	assert_equal "${stderr_lines[0]}
${stderr_lines[1]}" "$(symbol_warnings)"
	assert_regex "${stderr_lines[2]}" "^prof: warning: spool '$s.bad' is damaged \(block [0-9]+ at offset [0-9]+: record at byte [0-9]+: off-CPU duration out of range\): showing the [0-9]+ valid blocks before it$"
	# what is shown is the report of the blocks before it: of the file cut there
	[[ ${stderr_lines[2]} =~ \(block\ ([0-9]+)\ at\ offset\ ([0-9]+): ]]
	blocks=$((BASH_REMATCH[1] - 1)) offset=${BASH_REMATCH[2]}
	assert_equal "${stderr_lines[2]##*showing the }" "$blocks valid blocks before it"
	assert_line --regexp "^spool size:   [0-9]+ bytes in $blocks blocks, "
	head -c "$offset" "$s.bad" >"$s.cut"
	damaged=$(sed '1d; /^spool size: /d' <<<"$output")
	run -0 --separate-stderr "$PROF" report "$s.cut"
	assert_line --regexp "^samples:      [0-9]+ read \(no trailer: counters unknown\)$"
	assert_equal "$damaged" "$(sed '1d; /^spool size: /d' <<<"$output")"
}

@test "a spool damaged in its metadata block cannot be read" {
	s=$(spool a.spool --samples 10 --raw)
	printf '\377' | dd of="$s" bs=1 seek=50 conv=notrunc status=none
	run -1 --separate-stderr "$PROF" report "$s"
	assert_equal "$stderr" "prof: spool '$s' is corrupt: block 1 at offset 16: payload checksum mismatch"
}

@test "several spools are one recording's files: each must be there" {
	run -1 --separate-stderr "$PROF" report a.spool b.spool
	assert_equal "$stderr" "prof: cannot open spool 'a.spool': No such file or directory"
}
