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
	echo '#include "tail_state.h"' >>"$t/lib/symbols/vdso.c"
	echo '#include "spool/spool_format.h"' >>"$t/lib/opts.c"
	# a circle through headers: recorder.h includes sorter.h
	echo '#include "recorder.h"' >>"$t/lib/record/sorter.c"
	run "$TOP/tests/tools/lib-layers" "$t/lib"
	assert_failure 1
	assert_line 'lib/record/launch.c includes "report/report.h": lib/record/ may not use lib/report/'
	assert_line 'lib/symbols/vdso.c includes "tail_state.h" of lib/tail/ by bare name: write "tail/tail_state.h"'
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

@test "no check in tests/ is an && list or a ! whose failure bats would ignore" {
	local files
	mapfile -t files < <(find "$TOP/tests" -path "$TOP/tests/npm" -prune -o \( -name '*.bats' -o -name '*.bash' \) -print | sort)
	[ "${#files[@]}" -gt 20 ] || fail "no bats files in $TOP/tests"
	run "$TOP/tests/tools/bats-chainlint" "${files[@]}"
	assert_success
	assert_output ""
}

@test "the chain lint finds the checks that cannot fail, and only those" {
	local t=$BATS_TEST_TMPDIR/planted.bats n
	# each line marked "never fails" checks something false, and bats passes
	# the test all the same; the lint names each of those lines, and no other.
	# (%test is @test: bats would take an @test line here for one of this file)
	sed 's/^%test /@test /' >"$t" <<-'PLANTED'
	#!/usr/bin/env bats
	bats_require_minimum_version 1.5.0
	bats_load_library bats-support
	helper() {
		[ -s "$1" ] && [ -s "$2" ]	# never fails
		grep -q x "$1" && return 0
		[ -z "$2" ]
	}

	%test "broken" {
		helper /nonexistent ""
		run -0 true
		[ "$status" -eq 1 ] && [ "$output" = x ]	# never fails
		! grep -q root /etc/passwd	# never fails
		for f in a b; do
			[ "$f" = c ] &&	# never fails
				[ -n "$f" ]
		done
		(cd / && [ -e /nonexistent ] && pwd; true)	# never fails
		{ [ -e /nonexistent ] && true; }	# never fails
		if true; then [ 1 -eq 2 ] && true; fi	# never fails
		x=$(echo "a && b"); [ "$x" = y ] && echo "$x"	# never fails
		true
	}

	%test "sound" {
		[[ -e / && -d / ]]
		((1 && 2))
		(cd / && [ -d / ])
		awk 'NR > 1 && $1 > 2' /dev/null
		bash -c '[ 1 -eq 2 ] && true; true'
		if [ -s /nonexistent ] && [ -d / ]; then false; fi
		while ! [ -d / ]; do [ -e / ] && break; done
		[ -e /nonexistent ] && skip "told to"
		[ -e /nonexistent ] && fail "it is there"
		! [ -e /nonexistent ] || fail "it is there"
		cat <<-EOF
			[ 1 -eq 2 ] && true
		EOF
		[ -d / ] && [ -s /nonexistent ] || fail "a sound check fails its test"
	}
	PLANTED
	run -1 "$TOP/tests/tools/bats-chainlint" "$t"
	assert_equal "${#lines[@]}" "$(grep -c '# never fails$' "$t")"
	for n in $(grep -n '# never fails$' "$t" | cut -d: -f1); do
		assert_line --regexp "^${t//./\\.}:$n: (an && list|a !) whose status bats ignores: "
	done
	assert_line "$t:13: an && list whose status bats ignores: [ \"\$status\" -eq 1 ] && [ \"\$output\" = x ]	# never fails"
	# bats agrees: the broken test passes, the sound one fails at its last line
	# (a bats of its own: this one's settings, such as a -f filter, stay here)
	run -1 bats --tap "$t"
	assert_line "ok 1 broken"
	assert_line "not ok 2 sound"
	assert_line --partial "a sound check fails its test"
}

@test "unwind-differences explains a caller skipped at an entry or in a prologue, a JIT entry and libdwfl's stray caller, nothing else" {
	local t=$BATS_TEST_TMPDIR first pc ra deep nocall
	printf '%s\n' '__attribute__((noinline)) int leaf(int x) { return x * 3; }' \
		'int main(int argc, char **argv) { (void)argv; return leaf(argc) - 3; }' >"$t/p.c"
	cc -O0 -fno-omit-frame-pointer -o "$t/p" "$t/p.c"
	# off VADDR: its offset in p's file, as the check's log names a frame
	off() {
		local o v f
		while read -r o v f; do
			if (($1 >= v && $1 < v + f)); then
				printf '%#x' $(($1 - v + o))
				return
			fi
		done < <(readelf -lW "$t/p" | awk '$1 == "LOAD" { print $2, $3, $5 }')
	}
	leaf=0x$(nm "$t/p" | awk '$3 == "leaf" { print $1 }')
	ret=0x$(objdump -d --no-show-raw-insn "$t/p" | awk '/call.*<leaf>/ { getline; sub(":", "", $1); print $1; exit }')
	leaf_ret=0x$(objdump -d --no-show-raw-insn "$t/p" | awk '/<leaf>:/ { on = 1 } on && /\tret/ { sub(":", "", $1); print $1; exit }')
	first=$(off $((leaf)))	# leaf's first instruction: nothing pushed yet
	pc=$(off $((leaf + 1)))	# after leaf's push %rbp, before its mov %rsp,%rbp
	deep=$(off $((leaf + 4)))	# after both
	ra=$(off $((ret - 1)))	# main's call of leaf, as a caller's frame is logged
	nocall=$(off $((leaf_ret - 1)))	# leaf's ret: it follows a pop, not a call
	cat >"$t/check.log" <<-EOF
	pid 1 tid 1: other frames
	  compiled (complete): p+$pc p+$ra p+0x10
	  libdwfl (complete): p+$pc p+0x10
	pid 1 tid 1: other frames
	  compiled (complete): p+$deep p+$ra p+0x10
	  libdwfl (complete): p+$deep p+0x10
	pid 1 tid 1: other frames
	  compiled (complete): p+$pc p+$nocall p+0x10
	  libdwfl (complete): p+$pc p+0x10
	pid 1 tid 1: other frames
	  compiled (unmapped-pc): 0x7f0000001041 0x7f000000103f
	  libdwfl (unmapped-pc): 0x7f0000001041
	pid 1 tid 1: other frames
	  compiled (complete): 0x7f0000001041 p+$ra
	  libdwfl (unmapped-pc): 0x7f0000001041
	pid 1 tid 1: libdwfl lost the caller of a leaf frame
	  compiled (complete): p+$pc p+$ra p+0x10
	  libdwfl (complete): p+$pc p+0x10
	pid 1 tid 1: other frames
	  compiled (complete): p+$deep p+$ra p+0x10
	  libdwfl (unmapped-pc): p+$deep 0x1fd6809f
	pid 1 tid 1: other frames
	  compiled (complete): p+$deep p+$nocall p+0x10
	  libdwfl (unmapped-pc): p+$deep 0x1fd6809f
	pid 1 tid 1: other frames
	  compiled (complete): p+$first p+$ra p+0x10
	  libdwfl (complete): p+$first p+0x10
	EOF
	run -1 "$TOP/tests/tools/unwind-differences" "$t/check.log" "$t/p"
	assert_line --index 0 "other frames: 8, explained: 2 caller-skipped, 1 no-cfi-entry, 1 stray-caller; unexplained: 4"
	assert_line "  compiled (complete): p+$deep p+$ra p+0x10"
	assert_line "  compiled (complete): p+$pc p+$nocall p+0x10"
	assert_line "  compiled (complete): 0x7f0000001041 p+$ra"
	assert_line "  compiled (complete): p+$deep p+$nocall p+0x10"
	assert_equal "$(grep -c '^pid ' <<<"$output")" 4
	# the explained ones alone pass
	sed -n '1,3p;10,12p;19,21p;25,27p' "$t/check.log" >"$t/explained.log"
	run -0 "$TOP/tests/tools/unwind-differences" "$t/explained.log" "$t/p"
	assert_output "other frames: 4, explained: 2 caller-skipped, 1 no-cfi-entry, 1 stray-caller; unexplained: 0"
	# a file given by a link (ldd's libgmp.so.10), its frames named by the file (libgmp.so.10.4.1)
	ln -s p "$t/p.so.1"
	run -0 "$TOP/tests/tools/unwind-differences" "$t/explained.log" "$t/p.so.1"
	assert_output "other frames: 4, explained: 2 caller-skipped, 1 no-cfi-entry, 1 stray-caller; unexplained: 0"
}
