#!/usr/bin/env bats
# prof report's views (top, tree, folded) on a synthetic spool whose frames
# are real file offsets in the ladder target, so every name below comes from
# the ELF file: spoolgen --elf looks the offsets up, prof report maps them
# back.  3000 samples: 195 under a truncated unwind, 74 without a stack.
load test_helper

LADDER="$BUILD/targets/ladder"
INCOMPLETE="prof: warning: 9.0% of stacks are incomplete: callers may be missing"

setup() {
	s=$(spool ladder.spool --elf "$LADDER")
}

# the lines of $output from the one matching $1 on: the view without its header
from() {
	sed -n "/$1/,\$p" <<<"$output"
}

@test "top: a header, then functions by self samples, named from the ELF file" {
	run -0 --separate-stderr "$PROF" report "$s"
	assert_line --index 0 "# prof report of $s"
	assert_line --index 1 "command:      ./ladder --iterations 3000"
	assert_line "stacks:       2731 complete (91.0%), 195 truncated, 74 empty"
	assert_equal "$(from '^  self%')" "$(
		cat <<-'EOF'
		  self%  total%  samples  function                 module
		 25.87%  97.53%      776  main                     ladder
		 22.43%  71.67%      673  ladder_a                 ladder
		 17.37%  49.23%      521  ladder_b                 ladder
		 16.73%  31.87%      502  ladder_c                 ladder
		 15.13%  15.13%      454  ladder_d                 ladder
		  2.47%   2.47%       74  [empty stack]
		  0.00%  91.03%        0  _start                   ladder
		  0.00%   6.50%        0  [truncated: stack-copy]
		EOF
	)"
	# an empty line parts the header from the table
	assert_equal "$(grep -c '^$' <<<"$output")" 1
	assert_equal "$stderr" "$INCOMPLETE"
}

@test "top is the default format, and --format=top says so" {
	run -0 --separate-stderr "$PROF" report "$s"
	default=$output
	run -0 --separate-stderr "$PROF" report --format=top "$s"
	assert_equal "$output" "$default"
}

@test "top: --limit keeps the first rows and says how many are left out" {
	run -0 --separate-stderr "$PROF" report --limit=3 "$s"
	assert_equal "$(from '^  self%')" "$(
		cat <<-'EOF'
		  self%  total%  samples  function  module
		 25.87%  97.53%      776  main      ladder
		 22.43%  71.67%      673  ladder_a  ladder
		 17.37%  49.23%      521  ladder_b  ladder
		(5 more functions not shown)
		EOF
	)"
	run -0 --separate-stderr "$PROF" report --limit 0 --min-percent 0 "$s"
	assert_equal "$(from '^  self%' | wc -l)" 9
	refute_line --partial "not shown"
}

@test "top: --min-percent hides functions under that share of total samples" {
	run -0 --separate-stderr "$PROF" report --min-percent=5 "$s"
	assert_equal "$(from '^  self%')" "$(
		cat <<-'EOF'
		  self%  total%  samples  function                 module
		 25.87%  97.53%      776  main                     ladder
		 22.43%  71.67%      673  ladder_a                 ladder
		 17.37%  49.23%      521  ladder_b                 ladder
		 16.73%  31.87%      502  ladder_c                 ladder
		 15.13%  15.13%      454  ladder_d                 ladder
		  0.00%  91.03%        0  _start                   ladder
		  0.00%   6.50%        0  [truncated: stack-copy]
		(1 more function not shown)
		EOF
	)"
}

@test "tree: the call tree from the roots, with total and self percents" {
	run -0 --separate-stderr "$PROF" report --format=tree "$s"
	assert_line --index 0 "# prof report of $s"
	assert_equal "$(from '^ total%')" "$(
		cat <<-'EOF'
		 total%   self%  call tree
		 91.03%   0.00%  _start [ladder]
		 91.03%  25.87%    main [ladder]
		 65.17%  22.43%      ladder_a [ladder]
		 42.73%  17.37%        ladder_b [ladder]
		 25.37%  16.73%          ladder_c [ladder]
		  8.63%   8.63%            ladder_d [ladder]
		  6.50%   0.00%  [truncated: stack-copy]
		  6.50%   0.00%    main [ladder]
		  6.50%   0.00%      ladder_a [ladder]
		  6.50%   0.00%        ladder_b [ladder]
		  6.50%   0.00%          ladder_c [ladder]
		  6.50%   6.50%            ladder_d [ladder]
		  2.47%   2.47%  [empty stack]
		EOF
	)"
	assert_equal "$stderr" "$INCOMPLETE"
}

@test "tree: --min-percent prunes a node with everything under it" {
	run -0 --separate-stderr "$PROF" report --format tree --min-percent=7 "$s"
	assert_equal "$(from '^ total%')" "$(
		cat <<-'EOF'
		 total%   self%  call tree
		 91.03%   0.00%  _start [ladder]
		 91.03%  25.87%    main [ladder]
		 65.17%  22.43%      ladder_a [ladder]
		 42.73%  17.37%        ladder_b [ladder]
		 25.37%  16.73%          ladder_c [ladder]
		  8.63%   8.63%            ladder_d [ladder]
		EOF
	)"
}

@test "folded: one line per stack, root first, no header, counts summing to the samples" {
	run -0 --separate-stderr "$PROF" report --format=folded "$s"
	assert_output - <<-'EOF'
	[empty stack] 74
	[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 195
	_start;main 776
	_start;main;ladder_a 673
	_start;main;ladder_a;ladder_b 521
	_start;main;ladder_a;ladder_b;ladder_c 502
	_start;main;ladder_a;ladder_b;ladder_c;ladder_d 259
	EOF
	assert_equal "$(awk '{ n += $NF } END { print n }' <<<"$output")" 3000
	assert_equal "$stderr" "$INCOMPLETE"
}

@test "folded ignores --min-percent and --limit: nothing is dropped" {
	run -0 --separate-stderr "$PROF" report --format=folded "$s"
	all=$output
	run -0 --separate-stderr "$PROF" report --format=folded --min-percent=50 --limit=1 "$s"
	assert_equal "$output" "$all"
}

@test "folded and top agree on every function's self samples" {
	run -0 --separate-stderr "$PROF" report --format=folded "$s"
	folded=$(awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); self[f[n]] += c }
		END { for (k in self) print k, self[k] }' <<<"$output" | sort)
	run -0 --separate-stderr "$PROF" report --limit=0 --min-percent=0 "$s"
	top=$(from '^  self%' | awk 'NR > 1 && $3 > 0 { c = $3; $1 = $2 = $3 = "";
		sub(/^ +/, ""); sub(/ +ladder$/, ""); print $0, c }' | sort)
	assert_equal "$top" "$folded"
}

@test "a build without PIE, where offsets are not addresses, gets the same names" {
	cc=${CC:-cc}
	"$cc" -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -fno-pie -no-pie \
		-o "$BATS_TEST_TMPDIR/ladder-nopie" "$TOP/tests/targets/ladder.c"
	# the text segment is loaded at 0x401000 from file offset 0x1000
	run -0 readelf -lW "$BATS_TEST_TMPDIR/ladder-nopie"
	assert_line --regexp '^  LOAD +0x001000 0x0000000000401000 '
	run -0 --separate-stderr "$PROF" report --format=folded "$s"
	pie=$output
	s2=$(spool nopie.spool --elf "$BATS_TEST_TMPDIR/ladder-nopie")
	run -0 --separate-stderr "$PROF" report --format=folded "$s2"
	assert_equal "$output" "$pie"
}

@test "a missing file: frames fall back to module+offset, with one warning" {
	cp "$LADDER" "$BATS_TEST_TMPDIR/gone"
	s2=$(spool gone.spool --elf "$BATS_TEST_TMPDIR/gone")
	rm "$BATS_TEST_TMPDIR/gone"
	run -0 --separate-stderr "$PROF" report --format=folded "$s2"
	assert_line --index 0 "[empty stack] 74"
	assert_line --regexp '^\[truncated: stack-copy\];gone\+0x[0-9a-f]+;gone\+0x[0-9a-f]+;gone\+0x[0-9a-f]+;gone\+0x[0-9a-f]+;gone\+0x[0-9a-f]+ [0-9]+$'
	refute_output --partial "ladder_"
	assert_equal "$stderr" "prof: warning: cannot open '$BATS_TEST_TMPDIR/gone': No such file or directory; its frames are shown as file offsets
$INCOMPLETE"
}

@test "a rebuilt file: a warning naming both build-ids, and its names still used" {
	cp "$LADDER" "$BATS_TEST_TMPDIR/rebuilt"
	s2=$(spool rebuilt.spool --elf "$BATS_TEST_TMPDIR/rebuilt")
	recorded=$(readelf -n "$LADDER" | sed -n 's/^ *Build ID: //p')
	"${CC:-cc}" -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once \
		-Wl,--build-id=0x00112233445566778899aabbccddeeff00112233 \
		-o "$BATS_TEST_TMPDIR/rebuilt" "$TOP/tests/targets/ladder.c"
	run -0 --separate-stderr "$PROF" report --format=folded "$s2"
	assert_line "_start;main;ladder_a;ladder_b;ladder_c;ladder_d 259"
	assert_equal "$stderr" "prof: warning: '$BATS_TEST_TMPDIR/rebuilt' has build-id 00112233445566778899aabbccddeeff00112233, not the recorded $recorded: its function names may be wrong
$INCOMPLETE"
}

@test "-q keeps the symbolizer's warnings off stderr too" {
	cp "$LADDER" "$BATS_TEST_TMPDIR/gone"
	s2=$(spool gone.spool --elf "$BATS_TEST_TMPDIR/gone")
	rm "$BATS_TEST_TMPDIR/gone"
	run -0 --separate-stderr "$PROF" report -q "$s2"
	assert_equal "$stderr" ""
}

@test "an unknown --format is a usage error that names the formats" {
	run -64 --separate-stderr "$PROF" report --format=flame "$s"
	assert_equal "${stderr_lines[0]}" "prof report: 'flame' is not a report format; the formats are: top, tree, folded, json, perf-script, pprof, gecko, speedscope, svg, html"
	assert_equal "${stderr_lines[1]}" "Try \`prof report --help' or \`prof report --usage' for more information."
	assert_equal "$output" ""
}

@test "a bad --limit or --min-percent is a usage error" {
	run -64 --separate-stderr "$PROF" report --limit=-1 "$s"
	assert_equal "${stderr_lines[0]}" "prof report: invalid --limit '-1': expected a number of rows, 0 for all"
	run -64 --separate-stderr "$PROF" report --limit=ten "$s"
	assert_equal "${stderr_lines[0]}" "prof report: invalid --limit 'ten': expected a number of rows, 0 for all"
	run -64 --separate-stderr "$PROF" report --min-percent=half "$s"
	assert_equal "${stderr_lines[0]}" "prof report: invalid --min-percent 'half': expected a percentage from 0 to 100"
	run -64 --separate-stderr "$PROF" report --min-percent=101 "$s"
	assert_equal "${stderr_lines[0]}" "prof report: invalid --min-percent '101': expected a percentage from 0 to 100"
	assert_equal "$output" ""
}

@test "--help lists the formats and the pruning options" {
	run -0 "$PROF" report --help
	assert_line --regexp '^ +--format=FORMAT +top, tree, folded, json, perf-script, pprof,$'
	assert_line --regexp '^ +gecko, speedscope, svg or html$'
	assert_line --regexp '^ +--limit=N +list N functions in top \(default 30\) or json$'
	assert_line --regexp '^ +--min-percent=PCT +hide what has under PCT% of samples \(top, tree:$'
	assert_line --regexp '^ +--inverted +tree, folded and svg: each stack from its leaf$'
}

@test "a report that cannot be written is an error" {
	run -1 --separate-stderr bash -c '"$1" report -q "$2" >/dev/full' _ "$PROF" "$s"
	assert_equal "$stderr" "prof: cannot write the report: No space left on device"
}
