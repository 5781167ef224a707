#!/usr/bin/env bats
# The command table, argp's usage handling and exit codes.
load test_helper

@test "no command is a usage error that names the commands" {
	run -64 --separate-stderr "$PROF"
	assert_equal "${stderr_lines[0]}" "prof: no command given; the commands are: record, report, tail, top, push, serve"
	assert_equal "$output" ""
}

@test "an unknown command is a usage error that names the valid ones" {
	run -64 --separate-stderr "$PROF" recrod
	assert_equal "${stderr_lines[0]}" "prof: 'recrod' is not a prof command; the commands are: record, report, tail, top, push, serve"
	assert_equal "${stderr_lines[1]}" "Try \`prof --help' or \`prof --usage' for more information."
}

@test "--version prints the version" {
	run -0 "$PROF" --version
	assert_output "prof 0.1.0"
}

@test "--help lists every command with its summary and the exit codes" {
	run -0 "$PROF" --help
	assert_line --regexp '^  record +run a command and sample it into a spool'
	assert_line --regexp '^  report +print the profile recorded in a spool'
	assert_line --regexp '^  tail +follow a spool'
	assert_output --partial "Exit status: 0 success, 1 failure, 64 usage error"
}

@test "--usage prints a one-line synopsis; a command's names every option its --help does" {
	run -0 --separate-stderr "$PROF" --usage
	assert_output "Usage: prof [-?V] [--help] [--usage] [--version] COMMAND [ARG...]"
	assert_equal "$stderr" ""
	# the long options of each command's synopsis and of its --help: the same set
	long_options() { grep -oE -- '--[a-z][a-z-]*' | sort -u; }
	for cmd in record report tail; do
		run -0 "$PROF" "$cmd" --usage
		assert_line --index 0 --regexp "^Usage: prof $cmd \\[-[a-zA-Z?]+\\] "
		usage=$(long_options <<<"$output")
		run -0 "$PROF" "$cmd" --help
		help=$(grep -E '^ +(-[a-zA-Z?], )?--[a-z]' <<<"$output" | long_options)
		[ -n "$help" ] || fail "prof $cmd --help lists no options"
		assert_equal "$usage" "$help"
	done
}

@test "a command's --help uses the command's name" {
	run -0 "$PROF" report --help
	assert_line --index 0 "Usage: prof report [OPTION...] [FILE...]"
}

@test "an unknown option of a command is a usage error naming the command" {
	run -64 --separate-stderr "$PROF" report --bogus
	assert_equal "${stderr_lines[0]}" "prof report: unrecognized option '--bogus'"
}

@test "a global option before the command is parsed by prof" {
	run -64 --separate-stderr "$PROF" --bogus report
	assert_equal "${stderr_lines[0]}" "prof: unrecognized option '--bogus'"
}

@test "tail --help shows its usage and its exit codes" {
	run -0 "$PROF" tail --help
	assert_line --index 0 "Usage: prof tail [OPTION...] [FILE...]"
	assert_output --partial "Exit status: 0 the recording finished (its trailer was read), 1 FILE is no"
	assert_output --partial "64 usage error."
}
