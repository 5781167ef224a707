#!/usr/bin/env bats
# The shape of the tree: cmd/ stays a thin client of lib/prof.h, and lib/'s
# folders use only the stages lib/README allows them.
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

@test "the public headers name only prof_ and PROF_ things, by prof.h's rules" {
	run "$TOP/tests/tools/api-names" "$TOP/lib/prof.h" "$TOP"/lib/prof/*.h
	assert_success
	assert_output ""
	# the check catches what the rules forbid
	cat >"$BATS_TEST_TMPDIR/planted.h" <<-'EOF'
	enum prof_color { PROF_RED, PROF_GREEN };
	enum prof_tail_mode { PROF_TAIL_STATE_X, PROF_TAIL_STATE_Y };
	int helper(void);
	struct prof_bag { unsigned long n[PROF_BAG__COUNT]; };
	#define MAX_BAGS 4
	EOF
	run "$TOP/tests/tools/api-names" "$TOP"/lib/prof/*.h "$BATS_TEST_TMPDIR/planted.h"
	assert_failure 1
	assert_line --partial 'enum prof_color: its values share "PROF_", which names nothing of the enum'
	assert_line 'enum prof_tail_mode: its prefix PROF_TAIL_STATE_ begins values of enum prof_tail_state too'
	assert_line --partial 'function helper is not prof_'
	assert_line --partial 'an array sized by PROF_BAG__COUNT'
	assert_line --partial 'macro MAX_BAGS is not PROF_'
}

@test "lib/'s folders use only what lib/README's table allows, in includes and in calls" {
	[ -d "$BUILD/lib/record" ] || fail "no objects in $BUILD/lib: build first"
	run "$TOP/tests/tools/lib-layers" "$TOP/lib" "$BUILD/lib"
	assert_success
	assert_output ""
}

@test "the layering check finds an include of a later stage, a circle of includes, a call to one, and a circle of calls" {
	local t=$BATS_TEST_TMPDIR
	cp -r "$TOP/lib" "$t/lib"
	echo '#include "report/report.h"' >>"$t/lib/record/launch.c"
	echo '#include "tail.h"' >>"$t/lib/symbols/vdso.c"
	echo '#include "spool/spool_format.h"' >>"$t/lib/opts.c"
	# a circle through headers: recorder.h includes sorter.h
	echo '#include "recorder.h"' >>"$t/lib/record/sorter.c"
	run "$TOP/tests/tools/lib-layers" "$t/lib"
	assert_failure 1
	assert_line 'lib/record/launch.c includes "report/report.h": lib/record/ may not use lib/report/'
	assert_line 'lib/symbols/vdso.c includes "tail.h" of lib/tail/ by bare name: write "tail/tail.h"'
	assert_line 'lib/opts.c (shared by every stage) includes "spool/spool_format.h" of lib/spool/'
	assert_line 'files of lib/ that include each other (a .c and its .h as one), round a circle: lib/record/recorder lib/record/sorter '

	mkdir -p "$t/o/record" "$t/o/report"
	echo 'int r(void); int a(void) { return r(); }' >"$t/a.c"
	echo 'int d(void); int r(void) { return 1; } int c(void) { return d(); }' >"$t/c.c"
	echo 'int c(void); int d(void) { return c(); }' >"$t/d.c"
	cc -c "$t/a.c" -o "$t/o/record/a.o"
	cc -c "$t/c.c" -o "$t/o/report/c.o"
	cc -c "$t/d.c" -o "$t/o/report/d.o"
	run "$TOP/tests/tools/lib-layers" "$TOP/lib" "$t/o"
	assert_failure 1
	assert_line 'lib/record/a.c calls r of lib/report/c.c: lib/record/ may not use lib/report/'
	assert_line 'files of lib/ that call each other (round a circle): lib/report/c.c lib/report/d.c '
}

@test "lib/README names every folder and file of lib/" {
	local f
	for f in "$TOP"/lib/*/ "$TOP"/lib/*.c "$TOP"/lib/*/*.c; do
		f=${f#"$TOP"/lib/}
		case $f in */) grep -qE "^    ${f%/}/ " "$TOP/lib/README" || fail "lib/README does not name lib/$f" ;;
		*) grep -qwF "$(basename "$f")" "$TOP/lib/README" || fail "lib/README does not name lib/$f" ;;
		esac
	done
}
