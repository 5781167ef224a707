#!/usr/bin/env bats
# The fuzz harness over its seed corpus (and any crash files saved there),
# built with the regular compiler: what `make fuzz` found stays fixed.  And
# the structure-aware mutator's mutants of the corpus, a fixed few, as
# `make fuzz` would try them.
load test_helper

@test "the fuzz harness replays the whole corpus cleanly" {
	run -0 "$BUILD/fuzz-replay" "$TOP"/tests/fuzz/corpus/*
	assert_output --regexp "^replayed [0-9]+ inputs$"
}

@test "the corpus holds valid, cut, damaged and foreign inputs" {
	local c="$TOP/tests/fuzz/corpus"
	run -0 --separate-stderr "$PROF" report -q "$c/small.spool"
	assert_line "samples:      20 written, 20 delivered by the kernel, 0 lost (0.00%)"
	# cut inside its third block: the two before it are read
	run -0 --separate-stderr "$PROF" report "$c/cut.spool"
	assert_equal "${stderr_lines[0]}" "prof: warning: spool '$c/cut.spool' is cut short (block 3 at offset 430: incomplete (246 of 259 bytes)): showing its 2 complete blocks"
	assert_line "samples:      0 read (no trailer: counters unknown)"
	assert_line "spool size:   700 bytes in 2 blocks"
	# an interval out of range, in a block whose checksums vouch for it
	run -0 --separate-stderr "$PROF" report "$c/offcpu-duration-2p55.spool"
	assert_equal "${stderr_lines[-1]}" "prof: warning: spool '$c/offcpu-duration-2p55.spool' is damaged (block 3 at offset 686: record at byte 53: off-CPU duration out of range): showing the 2 valid blocks before it"
	run -1 --separate-stderr "$PROF" report "$c/text"
	assert_equal "$stderr" "prof: '$c/text' is not a prof spool"
}

@test "mutants of the corpus, inside its blocks with checksums redone, read without an error" {
	# each is written to mutant before it is tried: a failure leaves it there
	run -0 "$BUILD/fuzz-replay" --mutate 200 --seed 1 --save "$BATS_TEST_TMPDIR/mutant" \
		"$TOP"/tests/fuzz/corpus/*
	assert_output --regexp "^replayed [0-9]+ inputs and 200 mutants of each$"
}
