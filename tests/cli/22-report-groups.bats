#!/usr/bin/env bats
# prof report --by-thread and --by-process on a synthetic spool of one
# process (pid 4242) and three threads, 3000 samples in turn (ladder tid
# 4242, worker-1 tid 4243, worker-2 tid 4244), frames named from the ladder
# target.  worker-1 is renamed worker-one before sample 1200, so it has 400
# samples under its first name and 600 under its second; the process execs
# (comm "relaunched") before sample 2000: 2000 samples as ladder, 1000 after.
load test_helper

LADDER="$BUILD/targets/ladder"

setup() {
	s=$(spool groups.spool --elf "$LADDER" --rename-at 1200 --exec-at 2000)
}

# the lines of $output from the first empty one on: the views without the header
sections() {
	sed -n '/^$/,$p' <<<"$output"
}

# the sum of the counts of the folded lines in $output whose root frame is $1 (all if none)
folded_sum() {
	awk -v root="$1" '{ split($1, f, ";") } root == "" || f[1] == root { n += $NF }
		END { print n + 0 }' <<<"$output"
}

@test "folded --by-thread: a root frame NAME-TID, the name as it was at each sample" {
	run -0 --separate-stderr "$PROF" report -q --format=folded --by-thread "$s"
	assert_output - <<-'EOF'
	ladder-4242;[empty stack] 28
	ladder-4242;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 62
	ladder-4242;_start;main 259
	ladder-4242;_start;main;ladder_a 234
	ladder-4242;_start;main;ladder_a;ladder_b 182
	ladder-4242;_start;main;ladder_a;ladder_b;ladder_c 156
	ladder-4242;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 79
	worker-1-4243;[empty stack] 13
	worker-1-4243;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 25
	worker-1-4243;_start;main 88
	worker-1-4243;_start;main;ladder_a 77
	worker-1-4243;_start;main;ladder_a;ladder_b 74
	worker-1-4243;_start;main;ladder_a;ladder_b;ladder_c 82
	worker-1-4243;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 41
	worker-2-4244;[empty stack] 24
	worker-2-4244;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 59
	worker-2-4244;_start;main 274
	worker-2-4244;_start;main;ladder_a 223
	worker-2-4244;_start;main;ladder_a;ladder_b 153
	worker-2-4244;_start;main;ladder_a;ladder_b;ladder_c 169
	worker-2-4244;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 98
	worker-one-4243;[empty stack] 9
	worker-one-4243;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 49
	worker-one-4243;_start;main 155
	worker-one-4243;_start;main;ladder_a 139
	worker-one-4243;_start;main;ladder_a;ladder_b 112
	worker-one-4243;_start;main;ladder_a;ladder_b;ladder_c 95
	worker-one-4243;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 41
	EOF
	assert_equal "$stderr" ""
}

@test "folded --by-thread: counts sum to the samples, per thread as they were sent" {
	run -0 --separate-stderr "$PROF" report -q --format=folded --by-thread "$s"
	assert_equal "$(folded_sum)" 3000
	assert_equal "$(folded_sum ladder-4242)" 1000
	assert_equal "$(folded_sum worker-1-4243)" 400
	assert_equal "$(folded_sum worker-one-4243)" 600
	assert_equal "$(folded_sum worker-2-4244)" 1000
}

@test "folded --by-thread: a thread renamed before its first sample has only its new name" {
	s2=$(spool early.spool --elf "$LADDER")
	run -0 --separate-stderr "$PROF" report -q --format=folded --by-thread "$s2"
	refute_output --partial "worker-1-"
	assert_equal "$(folded_sum worker-one-4243)" 1000
	assert_equal "$(folded_sum)" 3000
}

@test "folded --by-process: a root frame COMM-PID, the comm as it was at each sample" {
	run -0 --separate-stderr "$PROF" report -q --format=folded --by-process "$s"
	assert_output - <<-'EOF'
	ladder-4242;[empty stack] 47
	ladder-4242;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 129
	ladder-4242;_start;main 533
	ladder-4242;_start;main;ladder_a 426
	ladder-4242;_start;main;ladder_a;ladder_b 349
	ladder-4242;_start;main;ladder_a;ladder_b;ladder_c 345
	ladder-4242;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 171
	relaunched-4242;[empty stack] 27
	relaunched-4242;[truncated: stack-copy];main;ladder_a;ladder_b;ladder_c;ladder_d 66
	relaunched-4242;_start;main 243
	relaunched-4242;_start;main;ladder_a 247
	relaunched-4242;_start;main;ladder_a;ladder_b 172
	relaunched-4242;_start;main;ladder_a;ladder_b;ladder_c 157
	relaunched-4242;_start;main;ladder_a;ladder_b;ladder_c;ladder_d 88
	EOF
	assert_equal "$(folded_sum)" 3000
	assert_equal "$(folded_sum ladder-4242)" 2000
	assert_equal "$(folded_sum relaunched-4242)" 1000
}

@test "folded: without their root frames, the groups add up to the plain report" {
	run -0 --separate-stderr "$PROF" report -q --format=folded "$s"
	plain=$output
	for by in --by-thread --by-process; do
		run -0 --separate-stderr "$PROF" report -q --format=folded "$by" "$s"
		merged=$(awk '{ c = $NF; sub(/ [0-9]+$/, ""); sub(/^[^;]*;/, ""); n[$0] += c }
			END { for (k in n) print k, n[k] }' <<<"$output" | LC_ALL=C sort)
		assert_equal "$merged" "$(LC_ALL=C sort <<<"$plain")"
	done
}

@test "top --by-thread: the header, then a section per thread, most samples first" {
	run -0 --separate-stderr "$PROF" report -q --by-thread "$s"
	assert_line --index 0 "# prof report of $s"
	assert_line "stacks:       2731 complete (91.0%), 195 truncated, 74 empty"
	assert_equal "$(sections)" "$(
		cat <<-'EOF'

		thread ladder (tid 4242): 1000 samples (33.3%)
		  self%  total%  samples  function                 module
		  8.63%  32.40%      259  main                     ladder
		  7.80%  23.77%      234  ladder_a                 ladder
		  6.07%  15.97%      182  ladder_b                 ladder
		  5.20%   9.90%      156  ladder_c                 ladder
		  4.70%   4.70%      141  ladder_d                 ladder
		  0.93%   0.93%       28  [empty stack]
		  0.00%  30.33%        0  _start                   ladder
		  0.00%   2.07%        0  [truncated: stack-copy]

		thread worker-2 (tid 4244): 1000 samples (33.3%)
		  self%  total%  samples  function                 module
		  9.13%  32.53%      274  main                     ladder
		  7.43%  23.40%      223  ladder_a                 ladder
		  5.63%  10.87%      169  ladder_c                 ladder
		  5.23%   5.23%      157  ladder_d                 ladder
		  5.10%  15.97%      153  ladder_b                 ladder
		  0.80%   0.80%       24  [empty stack]
		  0.00%  30.57%        0  _start                   ladder
		  0.00%   1.97%        0  [truncated: stack-copy]

		thread worker-one (tid 4243): 600 samples (20.0%)
		  self%  total%  samples  function                 module
		  5.17%  19.70%      155  main                     ladder
		  4.63%  14.53%      139  ladder_a                 ladder
		  3.73%   9.90%      112  ladder_b                 ladder
		  3.17%   6.17%       95  ladder_c                 ladder
		  3.00%   3.00%       90  ladder_d                 ladder
		  0.00%  18.07%        0  _start                   ladder
		  0.00%   1.63%        0  [truncated: stack-copy]
		(1 more function not shown)

		thread worker-1 (tid 4243): 400 samples (13.3%)
		  self%  total%  samples  function                 module
		  2.93%  12.90%       88  main                     ladder
		  2.73%   4.93%       82  ladder_c                 ladder
		  2.57%   9.97%       77  ladder_a                 ladder
		  2.47%   7.40%       74  ladder_b                 ladder
		  2.20%   2.20%       66  ladder_d                 ladder
		  0.00%  12.07%        0  _start                   ladder
		  0.00%   0.83%        0  [truncated: stack-copy]
		(1 more function not shown)
		EOF
	)"
}

@test "top --by-thread: the sections' samples, and their self samples, add up to all samples" {
	run -0 --separate-stderr "$PROF" report -q --by-thread --limit=0 --min-percent=0 "$s"
	assert_equal "$(grep -c '^thread ' <<<"$output")" 4
	assert_equal "$(awk '/^thread / { n += $(NF - 2) } END { print n }' <<<"$output")" 3000
	# in each section, the self samples of its rows are the section's samples
	run awk '/^thread / { if (want != "") print want, got; want = $(NF - 2); got = 0; next }
		want != "" && /^ +[0-9.]+% / { got += $3 }
		END { print want, got }' <<<"$output"
	assert_output - <<-'EOF'
	1000 1000
	1000 1000
	600 600
	400 400
	EOF
}

@test "top --by-thread: --limit applies to each section" {
	run -0 --separate-stderr "$PROF" report -q --by-thread --limit=2 "$s"
	assert_equal "$(sections)" "$(
		cat <<-'EOF'

		thread ladder (tid 4242): 1000 samples (33.3%)
		  self%  total%  samples  function  module
		  8.63%  32.40%      259  main      ladder
		  7.80%  23.77%      234  ladder_a  ladder
		(6 more functions not shown)

		thread worker-2 (tid 4244): 1000 samples (33.3%)
		  self%  total%  samples  function  module
		  9.13%  32.53%      274  main      ladder
		  7.43%  23.40%      223  ladder_a  ladder
		(6 more functions not shown)

		thread worker-one (tid 4243): 600 samples (20.0%)
		  self%  total%  samples  function  module
		  5.17%  19.70%      155  main      ladder
		  4.63%  14.53%      139  ladder_a  ladder
		(6 more functions not shown)

		thread worker-1 (tid 4243): 400 samples (13.3%)
		  self%  total%  samples  function  module
		  2.93%  12.90%       88  main      ladder
		  2.73%   4.93%       82  ladder_c  ladder
		(6 more functions not shown)
		EOF
	)"
}

@test "tree --by-process: a section per process, percents of all samples" {
	run -0 --separate-stderr "$PROF" report -q --format=tree --by-process "$s"
	assert_line --index 0 "# prof report of $s"
	assert_equal "$(sections)" "$(
		cat <<-'EOF'

		process ladder (pid 4242): 2000 samples (66.7%)
		 total%   self%  call tree
		 60.80%   0.00%  _start [ladder]
		 60.80%  17.77%    main [ladder]
		 43.03%  14.20%      ladder_a [ladder]
		 28.83%  11.63%        ladder_b [ladder]
		 17.20%  11.50%          ladder_c [ladder]
		  5.70%   5.70%            ladder_d [ladder]
		  4.30%   0.00%  [truncated: stack-copy]
		  4.30%   0.00%    main [ladder]
		  4.30%   0.00%      ladder_a [ladder]
		  4.30%   0.00%        ladder_b [ladder]
		  4.30%   0.00%          ladder_c [ladder]
		  4.30%   4.30%            ladder_d [ladder]
		  1.57%   1.57%  [empty stack]

		process relaunched (pid 4242): 1000 samples (33.3%)
		 total%   self%  call tree
		 30.23%   0.00%  _start [ladder]
		 30.23%   8.10%    main [ladder]
		 22.13%   8.23%      ladder_a [ladder]
		 13.90%   5.73%        ladder_b [ladder]
		  8.17%   5.23%          ladder_c [ladder]
		  2.93%   2.93%            ladder_d [ladder]
		  2.20%   0.00%  [truncated: stack-copy]
		  2.20%   0.00%    main [ladder]
		  2.20%   0.00%      ladder_a [ladder]
		  2.20%   0.00%        ladder_b [ladder]
		  2.20%   0.00%          ladder_c [ladder]
		  2.20%   2.20%            ladder_d [ladder]
		  0.90%   0.90%  [empty stack]
		EOF
	)"
	# the roots of the sections add up to the roots of the plain tree
	assert_equal "$(awk '/^ +[0-9.]+% +[0-9.]+%  _start/ { n += $1 } END { print n }' <<<"$output")" 91.03
}

@test "tree --by-thread: --min-percent is of all samples, in each section" {
	run -0 --separate-stderr "$PROF" report -q --format=tree --by-thread --min-percent=10 "$s"
	assert_equal "$(sections)" "$(
		cat <<-'EOF'

		thread ladder (tid 4242): 1000 samples (33.3%)
		 total%   self%  call tree
		 30.33%   0.00%  _start [ladder]
		 30.33%   8.63%    main [ladder]
		 21.70%   7.80%      ladder_a [ladder]
		 13.90%   6.07%        ladder_b [ladder]

		thread worker-2 (tid 4244): 1000 samples (33.3%)
		 total%   self%  call tree
		 30.57%   0.00%  _start [ladder]
		 30.57%   9.13%    main [ladder]
		 21.43%   7.43%      ladder_a [ladder]
		 14.00%   5.10%        ladder_b [ladder]

		thread worker-one (tid 4243): 600 samples (20.0%)
		 total%   self%  call tree
		 18.07%   0.00%  _start [ladder]
		 18.07%   5.17%    main [ladder]
		 12.90%   4.63%      ladder_a [ladder]

		thread worker-1 (tid 4243): 400 samples (13.3%)
		 total%   self%  call tree
		 12.07%   0.00%  _start [ladder]
		 12.07%   2.93%    main [ladder]
		EOF
	)"
}

@test "--by-thread and --by-process together are a usage error" {
	run -64 --separate-stderr "$PROF" report --by-thread --by-process "$s"
	assert_equal "${stderr_lines[0]}" "prof report: --by-thread and --by-process cannot be used together"
	assert_equal "${stderr_lines[1]}" "Try \`prof report --help' or \`prof report --usage' for more information."
	assert_equal "$output" ""
	run -64 --separate-stderr "$PROF" report --format=folded --by-process --by-thread "$s"
	assert_equal "${stderr_lines[0]}" "prof report: --by-process and --by-thread cannot be used together"
	assert_equal "$output" ""
	# one of them twice is no conflict
	run -0 --separate-stderr "$PROF" report -q --format=folded --by-thread --by-thread "$s"
	assert_line --index 0 "ladder-4242;[empty stack] 28"
}

@test "--help lists --by-thread and --by-process" {
	run -0 "$PROF" report --help
	assert_line --regexp '^ +--by-thread +one profile per thread \(name at the sample, tid\)$'
	assert_line --regexp '^ +--by-process +one profile per process \(comm at the sample, pid\)$'
}
