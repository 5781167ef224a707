#!/usr/bin/env bats
# The fuzz harness over its seed corpus (and any crash files saved there),
# built with the regular compiler: what `make fuzz` found stays fixed.
load test_helper

@test "the fuzz harness replays the whole corpus cleanly" {
	run -0 "$BUILD/fuzz-replay" "$TOP"/tests/fuzz/corpus/*
	assert_output --regexp "^replayed [0-9]+ inputs$"
}

@test "the corpus holds valid, cut and foreign inputs" {
	run -0 "$PROF" report -q "$TOP/tests/fuzz/corpus/small.spool"
	run -1 "$PROF" report "$TOP/tests/fuzz/corpus/text"
}
