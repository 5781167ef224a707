#!/usr/bin/env bats
# The ABI of libprof.so.0 is held, by abidiff, to the baseline its soname
# began with (tests/abi/libprof.so.0.abi, made by `make abi-baseline`):
# it may grow as prof.h's conventions allow (functions in a node of their
# own, structs at their end, enumerators), nothing else under one soname.
load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	command -v abidiff >/dev/null || skip_or_fail "abidiff is not installed (abigail-tools)"
}

@test "libprof.so keeps the ABI of its soname's baseline" {
	local so
	so=$(ls "$BUILD"/libprof.so.*.*.*)
	run "$TOP/tests/tools/abi-check" "$TOP/tests/abi/libprof.so.0.abi" "$so" "$TOP/lib/prof" \
		"$TOP/lib/prof.h"
	assert_success
	assert_output ""
}

# a library of two versions: v1 is the baseline, the others its changes
tiny() {
	local name=$1 hdr=$2 src=$3 map=$4
	mkdir -p "$name/inc/tiny"
	printf '%s\n' "$hdr" >"$name/inc/tiny/tiny.h"
	printf '#include <stddef.h>\n#include "tiny/tiny.h"\n%s\n' "$src" >"$name/t.c"
	printf '%s\n' "$map" >"$name/t.map"
	cc -g -O1 -fPIC -shared -I"$name/inc" -Wl,-soname,libtiny.so.0 \
		-Wl,--version-script="$name/t.map" -o "$name/libtiny.so.0.1" "$name/t.c"
}

check() {
	run "$TOP/tests/tools/abi-check" v1.abi "$1/libtiny.so.0.1" "$1/inc/tiny" "$1/inc/tiny/tiny.h"
}

@test "the ABI check lets a struct grow at its end and new functions come in a new node, nothing else" {
	local s1='struct tiny_s { size_t sz; int a; int b; };'
	tiny v1 "#include <stddef.h>
$s1
int tiny_f(struct tiny_s *s);
int tiny_g(void);" 'int tiny_f(struct tiny_s *s) { return s->a; } int tiny_g(void) { return 1; }' \
		'V1 { global: tiny_f; tiny_g; local: *; };'
	abidw --exported-interfaces-only --headers-dir v1/inc/tiny --drop-private-types \
		--no-corpus-path --no-comp-dir-path --out-file v1.abi v1/libtiny.so.0.1
	check v1
	assert_success

	# grown at the end, and a function in a node of its own
	tiny grown "#include <stddef.h>
struct tiny_s { size_t sz; int a; int b; long c; };
int tiny_f(struct tiny_s *s);
int tiny_g(void);
int tiny_h(void);" 'int tiny_f(struct tiny_s *s) { return s->a; } int tiny_g(void) { return 1; }
int tiny_h(void) { return 2; }' 'V1 { global: tiny_f; tiny_g; local: *; }; V2 { global: tiny_h; } V1;'
	check grown
	assert_success
	assert_output ""

	# a member put before another: old callers read the wrong field
	tiny moved "#include <stddef.h>
struct tiny_s { size_t sz; int a; long c; int b; };
int tiny_f(struct tiny_s *s);
int tiny_g(void);" 'int tiny_f(struct tiny_s *s) { return s->a; } int tiny_g(void) { return 1; }' \
		'V1 { global: tiny_f; tiny_g; local: *; };'
	check moved
	assert_failure 1
	assert_line "abi-check: a change old callers would see: 'int b' offset changed from 96 to 192 (in bits) (by +96 bits)"

	# a function gone
	tiny removed "#include <stddef.h>
$s1
int tiny_f(struct tiny_s *s);" 'int tiny_f(struct tiny_s *s) { return s->a; }' \
		'V1 { global: tiny_f; local: *; };'
	check removed
	assert_failure 1
	assert_line 'abi-check: 1 functions removed'

	# a function added to the node of the release before
	tiny oldnode "#include <stddef.h>
$s1
int tiny_f(struct tiny_s *s);
int tiny_g(void);
int tiny_h(void);" 'int tiny_f(struct tiny_s *s) { return s->a; } int tiny_g(void) { return 1; }
int tiny_h(void) { return 2; }' 'V1 { global: tiny_f; tiny_g; tiny_h; local: *; };'
	check oldnode
	assert_failure 1
	assert_line 'abi-check: a function added to V1, a node of the baseline: give it a node of its own'
}
