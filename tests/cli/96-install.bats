#!/usr/bin/env bats
# make install into a DESTDIR: the command, the man pages and completions,
# and a library others can link: libprof.so.0 exporting only the API,
# libprof.a, prof/prof.h and libprof.pc.  A program outside the tree is built
# with pkg-config against the installed shared library, and run.
load test_helper

setup() {
	D="$BATS_TEST_TMPDIR/root"
	cd "$BATS_TEST_TMPDIR"
}

# make install, outside the make that runs the tests, to /usr/local whatever
# the tree was configured with
install_to() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$TOP" install DESTDIR="$1" \
		prefix=/usr/local exec_prefix=/usr/local bindir=/usr/local/bin libdir=/usr/local/lib \
		includedir=/usr/local/include datarootdir=/usr/local/share mandir=/usr/local/share/man \
		SANITIZE="${SANITIZE:-}" >/dev/null
}

@test "make install puts the command, the docs and the library in DESTDIR" {
	install_to "$D"
	local lib="$D/usr/local/lib" f
	for f in bin/prof include/prof/prof.h lib/libprof.a lib/pkgconfig/libprof.pc \
		share/man/man1/prof.1 share/man/man1/prof-record.1 share/man/man5/prof-spool.5 \
		share/bash-completion/completions/prof share/zsh/vendor-completions/_prof \
		share/fish/vendor_completions.d/prof.fish; do
		[ -f "$D/usr/local/$f" ] || fail "not installed: $f"
	done
	# the shared library: its soname, the links a linker and a loader look for
	run readelf -d "$lib/libprof.so"
	assert_line --regexp 'Library soname: \[libprof\.so\.0\]'
	assert_equal "$(readlink "$lib/libprof.so")" libprof.so.0
	assert_equal "$(readlink "$lib/libprof.so.0")" "$(basename "$(ls "$lib"/libprof.so.0.*)")"
	# it exports the API and nothing else
	nm -D --defined-only "$lib/libprof.so.0" | awk '{ sub(/@.*/, "", $NF); print $NF }' >exported
	run grep -v -e '^LIBPROF_[0-9.]*$' -e '^prof_' exported
	assert_output ""
	grep -qx prof_recorder_attach exported
	grep -qx prof_report_write exported
	run grep -x -e error_setx -e agg_build -e spool_file_create exported
	assert_output ""
}

@test "a program outside the tree builds with pkg-config against libprof.so.0, and runs" {
	require_perf_events
	command -v pkg-config >/dev/null || skip_or_fail "pkg-config is not installed (pkgconf)"
	install_to "$D"
	export PKG_CONFIG_SYSROOT_DIR="$D" PKG_CONFIG_PATH="$D/usr/local/lib/pkgconfig"
	run -0 pkg-config --modversion libprof
	assert_output "$("$PROF" --version | awk 'NR == 1 { print $2 }')"
	run -0 pkg-config --cflags --libs libprof
	assert_output --regexp "^-I$D/usr/local/include .*-L$D/usr/local/lib +-lprof *$"
	mkdir app
	cp "$TOP/examples/hottest.c" app/
	# a sanitizer build of the library needs its runtime in the program too
	san=
	if readelf -d "$D/usr/local/lib/libprof.so.0" | grep -q 'libasan'; then
		san="-fsanitize=address,undefined"
	fi
	# shellcheck disable=SC2046
	cc -std=gnu11 -O2 $san -o app/hottest app/hottest.c $(pkg-config --cflags --libs libprof)
	run -0 env LD_LIBRARY_PATH="$D/usr/local/lib" ldd app/hottest
	assert_line --regexp "^\s+libprof\.so\.0 => $D/usr/local/lib/libprof\.so\.0 "
	run -0 env LD_LIBRARY_PATH="$D/usr/local/lib" app/hottest h.spool "$BUILD/targets/ladder" 0.3
	assert_line --regexp '^hottest stack: [0-9]+ of [0-9]+ samples$'
	assert_line --regexp 'ladder_d'
}

@test "libprof.map lists each function of the public headers once, and nothing else" {
	grep -ohE '\bprof_[a-z_]+\(' "$TOP"/lib/prof/*.h | tr -d '(' | sort -u >declared
	sed -nE 's/^\t\t(prof_[a-z_]+);$/\1/p' "$TOP/lib/libprof.map" | sort >mapped
	run diff declared mapped
	assert_success
	assert_output ""
	run bash -c "sed -nE 's/^\t\t(prof_[a-z_]+);$/\1/p' '$TOP/lib/libprof.map' | sort | uniq -d"
	assert_output ""
}
