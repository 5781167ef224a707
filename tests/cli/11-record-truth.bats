#!/usr/bin/env bats
# Recordings of the ground-truth targets (tests/targets/, -O2 without frame
# pointers) checked against the call chains they are known to have, and
# against perf on the same workload.
load test_helper

setup() {
	setup_recording
}

# share LEAF FOLDED_FILE: percent of samples whose leaf frame is LEAF
leaf_share() {
	awk -v leaf="$1" '{ n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
		if (f[k] == leaf) hit += n } END { printf "%.1f", total ? 100 * hit / total : 0 }' "$2"
}

# count_matching REGEX FOLDED_FILE: samples whose stack (without count) matches REGEX
count_matching() {
	awk -v re="$1" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) hit += n }
		END { print hit + 0 }' "$2"
}

total_samples() {
	awk '{ total += $NF } END { print total + 0 }' "$1"
}

@test "ladder: >= 95% of samples carry main>a>b>c>d, >= 99% reach main" {
	"$PROF" record -q -o l.spool -- "$T/ladder" 1
	"$PROF" report -q --format=folded l.spool >l.folded
	total=$(total_samples l.folded)
	[ "$total" -ge 300 ] || fail "only $total samples"
	chain=$(count_matching '(^|;)main;ladder_a;ladder_b;ladder_c;ladder_d$' l.folded)
	main=$(count_matching '(^|;)main(;|$)' l.folded)
	[ $((chain * 100)) -ge $((total * 95)) ] || fail "full chain in $chain of $total samples"
	[ $((main * 100)) -ge $((total * 99)) ] || fail "main in $main of $total samples"
	# the outermost frames too: the unwind went all the way
	start=$(count_matching '^_start;' l.folded)
	[ $((start * 100)) -ge $((total * 99)) ] || fail "_start in $start of $total samples"
}

@test "recursion: stacks 60 recurse frames deep are seen whole" {
	"$PROF" record -q -o r.spool -- "$T/recursion" 1
	"$PROF" report -q --format=folded r.spool >r.folded
	# per stack: how many recurse frames, and whether it is main's whole chain
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); c = 0
		for (i = 1; i <= k; i++) if (f[i] == "recurse") c++
		if (c > max) max = c
		total += n
		if (c == 60 && f[1] == "_start" && f[k] == "recurse_leaf") whole += n }
		END { print max + 0, whole + 0, total + 0 }' r.folded >r.stats
	read -r deepest whole total <r.stats
	[ "$deepest" -ge 50 ] || fail "deepest stack has $deepest recurse frames"
	[ $((whole * 100)) -ge $((total * 90)) ] || fail "whole 60-deep chain in $whole of $total samples"
}

@test "dlopen: a function of a library loaded after the start is named" {
	"$PROF" record -q -o d.spool -- "$T/dlopen_main" 0.5
	"$PROF" report -q --format=folded d.spool >d.folded
	hits=$(count_matching ';main;dltarget_entry;dltarget_work$' d.folded)
	total=$(total_samples d.folded)
	[ $((hits * 100)) -ge $((total * 90)) ] || fail "dltarget chain in $hits of $total samples"
	run -0 "$PROF" report -q d.spool
	assert_line --regexp '^ *[0-9.]+% +[0-9.]+% +[0-9]+ +dltarget_work +libdltarget\.so$'
}

@test "forker: the child is followed, and absent with --no-inherit" {
	"$PROF" record -q -o f.spool -- "$T/forker" 0.5
	"$PROF" report -q --format=folded f.spool >f.folded
	child=$(count_matching ';main;child_busy;child_spin$' f.folded)
	parent=$(count_matching ';main;parent_busy;parent_spin$' f.folded)
	[ "$child" -ge 100 ] || fail "child chain in $child samples"
	[ "$parent" -ge 100 ] || fail "parent chain in $parent samples"
	"$PROF" record -q --no-inherit -o n.spool -- "$T/forker" 0.5
	"$PROF" report -q --format=folded n.spool >n.folded
	assert_equal "$(count_matching 'child_' n.folded)" 0
	parent=$(count_matching ';main;parent_busy;parent_spin$' n.folded)
	[ "$parent" -ge 100 ] || fail "parent chain in $parent samples"
}

@test "threads: each thread's function is there, under its thread's name" {
	"$PROF" record -q -o t.spool -- "$T/threads" 0.5
	"$PROF" report -q --by-thread --format=folded t.spool >t.folded
	for name in alpha beta gamma; do
		hits=$(count_matching "^$name-[0-9]+;.*;thread_$name;${name}_spin\$" t.folded)
		[ "$hits" -ge 200 ] || fail "$name: $hits samples of thread_$name under its name"
		# no other thread's function under this name
		other=$(count_matching "^$name-[0-9]+;.*thread_(alpha|beta|gamma)" t.folded)
		mine=$(count_matching "^$name-[0-9]+;.*thread_$name" t.folded)
		assert_equal "$other" "$mine"
	done
}

@test "exec: the new image's functions, under the new process" {
	"$PROF" record -q -o e.spool -- "$T/execer" 0.5
	"$PROF" report -q --by-process --format=folded e.spool >e.folded
	ladder=$(count_matching '^ladder-[0-9]+;.*main;ladder_a;ladder_b;ladder_c;ladder_d$' e.folded)
	parent=$(count_matching '^execer-[0-9]+;.*main;parent_busy;parent_spin$' e.folded)
	[ "$ladder" -ge 100 ] || fail "ladder chain under ladder in $ladder samples"
	[ "$parent" -ge 100 ] || fail "parent chain under execer in $parent samples"
	assert_equal "$(count_matching '^execer-[0-9]+;.*ladder_' e.folded)" 0
}

# perf_leaf_share LEAF PERF_DATA
perf_leaf_share() {
	perf report -i "$2" --stdio --no-children --sort sym -q 2>/dev/null |
		awk -v leaf="$1" '$NF == leaf { gsub(/%/, "", $1); s += $1 } END { printf "%.1f", s + 0 }'
}

require_perf_tool() {
	command -v perf >/dev/null || skip_or_fail "perf is not installed"
}

within_5_points() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 5) }' ||
		fail "$3: prof $1% vs perf $2%"
}

@test "ladder leaf share agrees with perf within 5 points" {
	require_perf_tool
	perf record -q -B -e cpu-clock -F 999 --call-graph dwarf -o p.data -- "$T/ladder" 1 >/dev/null 2>&1
	"$PROF" record -q -e cpu-clock -o l.spool -- "$T/ladder" 1 >/dev/null
	"$PROF" report -q --format=folded l.spool >l.folded
	within_5_points "$(leaf_share ladder_d l.folded)" "$(perf_leaf_share ladder_d p.data)" ladder_d
}

@test "threads leaf shares agree with perf within 5 points" {
	require_perf_tool
	perf record -q -B -e cpu-clock -F 999 --call-graph dwarf -o p.data -- "$T/threads" 1 >/dev/null 2>&1
	"$PROF" record -q -e cpu-clock -o t.spool -- "$T/threads" 1 >/dev/null
	"$PROF" report -q --format=folded t.spool >t.folded
	for leaf in alpha_spin beta_spin gamma_spin; do
		within_5_points "$(leaf_share $leaf t.folded)" "$(perf_leaf_share $leaf p.data)" "$leaf"
	done
}
