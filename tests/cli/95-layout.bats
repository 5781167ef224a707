#!/usr/bin/env bats
# The shape of the tree: cmd/ stays a thin client of lib/prof.h.
load test_helper

@test "cmd/ includes nothing of lib/ but prof.h, and no library headers" {
	run grep -nE '#include *["<](elfutils/|libelf|gelf|zlib|linux/perf_event|dwarf)' "$TOP"/cmd/*.c "$TOP"/cmd/*.h
	assert_failure 1
	run bash -c "grep -hE '#include *\"' '$TOP'/cmd/*.c '$TOP'/cmd/*.h | sort -u"
	assert_output - <<-'EXPECTED'
	#include "cmd.h"
	#include "prof.h"
	EXPECTED
}

@test "the top level holds only what the layout allows" {
	cd "$TOP"
	git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
	run bash -c "git ls-files | cut -d/ -f1 | sort -u"
	for entry in "${lines[@]}"; do
		case "$entry" in
		cmd | lib | man | tests | completions | Makefile | configure.ac | README | COPYING | \
			.ci | bench | examples | .gitignore | .clang-format) ;;
		*) fail "unexpected top-level entry: $entry" ;;
		esac
	done
}

@test "the public header names only prof_ and PROF_ things" {
	run bash -c "grep -oE '^(int64_t|int|void|const [a-z_ ]+\*|uint64_t|bool|struct [a-z_]+ \*) *\**[a-z_]+\(' '$TOP/lib/prof.h' | grep -vE ' \**prof_[a-z_]+\($'"
	assert_output ""
}
