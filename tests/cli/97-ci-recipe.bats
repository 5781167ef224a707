#!/usr/bin/env bats
# The CI recipe of the README, run as it is written there: main's block
# records the base, a change's block records the change, writes the flame
# graphs and fails (exit 3) when a function's share grew by more than 5
# points.  The benchmark is tests/targets/stages; the change that makes one
# function slower is its stage_parse made three times heavier.
load test_helper

setup() {
	require_perf_events
	cd "$BATS_TEST_TMPDIR"
	# ./bench, as a project would have it; WEIGHTS stands for the code change
	cat >bench <<-EOF2
	#!/bin/sh
	exec "$BUILD/targets/stages" 1 \${WEIGHTS:-1 1}
	EOF2
	chmod +x bench
	mkdir -p bin
	ln -sf "$PROF" bin/prof
	PATH="$BATS_TEST_TMPDIR/bin:$PATH"
}

# The indented block of the README after the paragraph starting with $1.
recipe() {
	awk -v start="$1" '
		index($0, start) == 1 { on = 1; next }
		on == 1 && /^    / { on = 2 }
		on == 2 && /^    / { sub(/^    /, ""); print; next }
		on == 2 { exit }' "$TOP/README"
}

@test "the README's CI recipe: a change that slows a function down fails the job, with graphs to look at" {
	main=$(recipe "Profiling in CI:")
	change=$(recipe "In a change's job")
	[[ $main == *"prof record"* && $change == *"--fail-above"* ]] || fail "no recipe found in README"
	run -0 sh -ec "$main"
	[ -s base.spool ]
	[ -s base.svg ]
	# the same code: the job passes
	run -0 sh -ec "$change"
	assert_line --regexp '^ *[0-9.]+% +[0-9.]+% +[-+][0-9.]+%  stage_parse  stages$'
	[ -s new.spool ]
	[ -s new.svg ]
	[ -s diff.svg ]
	# stage_parse three times slower: its share grows from ~50% to ~75%, the job fails
	WEIGHTS="3 1" run -3 sh -ec "$change"
	assert_line --regexp '^ *[45][0-9]\.[0-9]+% +7[0-9]\.[0-9]+% +\+2[0-9]\.[0-9]+%  stage_parse  stages$'
	# the artefacts show it: stage_parse red in the differential graph, render blue
	# (a title's second line is the module)
	tr '\n' ' ' <diff.svg | grep -Eq '<title>stage_parse \([0-9]+ samples, 7[0-9.]+%; base [45][0-9.]+%, \+2[0-9.]+ points\) stages</title><rect [^>]* fill="rgb\(255,[0-9]{1,2},[0-9]{1,2}\)"'
	tr '\n' ' ' <diff.svg | grep -Eq '<title>stage_render \([0-9]+ samples, 2[0-9.]+%; base [45][0-9.]+%, -2[0-9.]+ points\) stages</title><rect [^>]* fill="rgb\([0-9]{1,2},[0-9]{1,2},255\)"'
	grep -q '>Flame graph of new.spool<' new.svg
}
