#!/usr/bin/env bats
# 98-debian-build: the tree builds as a Debian package builds it.  A copy is
# configured with dh_auto_configure's directories and dpkg-buildflags'
# hardening flags, built, installed into a DESTDIR and uninstalled from one;
# every file must land where Debian wants it, the flags must reach gcc and ld
# (RELRO, BIND_NOW, fortified calls, stack protector), and nothing may run
# apt-get, dpkg-query or npm: they are stubs on PATH that log being called.
# The copy builds prof and the library only, not the tests' own targets.
load test_helper

# dh_auto_configure's options (debhelper 13, compat 13), and --bindir, which
# dh leaves to configure's default
# shellcheck disable=SC2016
dh_configure_args() {
	local ma=$1
	printf '%s\n' --build="$(dpkg-architecture -qDEB_BUILD_GNU_TYPE)" --prefix=/usr \
		'--includedir=${prefix}/include' '--mandir=${prefix}/share/man' \
		'--infodir=${prefix}/share/info' --sysconfdir=/etc --localstatedir=/var \
		--disable-option-checking --disable-silent-rules "--libdir=\${prefix}/lib/$ma" \
		--runstatedir=/run --disable-maintainer-mode --disable-dependency-tracking \
		--bindir=/usr/bin
}

# copy_tree DIR: the working tree as it is, without what building made
copy_tree() {
	mkdir -p "$1"
	tar -C "$TOP" --exclude=./.git --exclude='./build*' --exclude=./prof \
		--exclude=./tests/npm/node_modules -cf - . | tar -xf - -C "$1"
	env -i PATH="$PATH" make -s -C "$1" distclean >/dev/null
}

# stubs DIR LOG: apt-get, apt, dpkg-query, npm, npx, curl and wget that log
# their call to LOG and fail
stubs() {
	local c
	mkdir -p "$1"
	for c in apt-get apt dpkg-query npm npx curl wget; do
		printf '#!/bin/sh\necho "%s $*" >>"%s"\necho "98-debian-build: %s must not run" >&2\nexit 1\n' \
			"$c" "$2" "$c" >"$1/$c"
		chmod +x "$1/$c"
	done
}

# pkg CMD...: CMD in the copy as a buildd runs it: a clean environment with
# dpkg-buildflags' flags (dh exports them), the stubs first on PATH, and no
# network where a network namespace can be had
pkg() {
	# shellcheck disable=SC2086
	(cd "$SRC" && env -i HOME="$HOME" LC_ALL=C PATH="$STUBS:$PATH" \
		CFLAGS="$D_CFLAGS" CPPFLAGS="$D_CPPFLAGS" LDFLAGS="$D_LDFLAGS" $OFFLINE "$@")
}

setup_file() {
	export PKG_SKIP=""
	if ! command -v dpkg-buildflags >/dev/null || ! command -v dpkg-architecture >/dev/null; then
		PKG_SKIP="dpkg-buildflags is not installed (dpkg-dev)"
		return 0
	fi
	export W="$BATS_FILE_TMPDIR" SRC="$BATS_FILE_TMPDIR/src" STUBS="$BATS_FILE_TMPDIR/stubs"
	export STUB_LOG="$BATS_FILE_TMPDIR/stubs.log" DEST="$BATS_FILE_TMPDIR/dest"
	export OFFLINE=""
	if unshare -n true 2>/dev/null; then OFFLINE="unshare -n"; fi
	copy_tree "$SRC"
	# a version of the copy's own, set where the tree keeps it: all that
	# names a version (configure, prof --version, the library's file name,
	# libprof.pc) must follow, or it is written twice
	export PKG_VERSION=9.8.7
	local h
	h=$(grep -rlE '^#define PROF_VERSION "' "$SRC/lib")
	[ "$(grep -c . <<<"$h")" = 1 ] || { echo "#define PROF_VERSION in other than one file: $h"; return 1; }
	sed -i "s/^#define PROF_VERSION \".*\"\$/#define PROF_VERSION \"$PKG_VERSION\"/" "$h"
	stubs "$STUBS" "$STUB_LOG"
	: >"$STUB_LOG"
	export MA
	MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	# as debian/rules sets it, for BIND_NOW; flags computed in the source
	# tree, as dpkg-buildflags' -ffile-prefix-map wants
	export D_CFLAGS D_CPPFLAGS D_LDFLAGS
	D_CFLAGS=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS)
	D_CPPFLAGS=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS)
	D_LDFLAGS=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS)

	local args
	mapfile -t args < <(dh_configure_args "$MA")
	pkg make configure >"$W/configure.log" 2>&1 || { cat "$W/configure.log"; return 1; }
	pkg ./configure "${args[@]}" >>"$W/configure.log" 2>&1 || { tail -n 30 "$W/configure.log"; return 1; }
	pkg make -j2 >"$W/build.log" 2>&1 || { tail -n 40 "$W/build.log"; return 1; }
	pkg make install DESTDIR="$DEST" >"$W/install.log" 2>&1 || { cat "$W/install.log"; return 1; }
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return
}

built() {
	[ -z "$PKG_SKIP" ] || skip_or_fail "$PKG_SKIP"
}

# nothing the copy's make ran called a stub
no_installer_ran() {
	run cat "$STUB_LOG"
	assert_output ""
}

# what is in a tree but directories: "PATH MODE", or "PATH -> TARGET" for a link
listing() {
	find "$1" -type f -printf '%P %m\n' -o -type l -printf '%P -> %l\n' -o ! -type d -printf '%P ?\n' |
		LC_ALL=C sort
}

@test "configure and prof say the version the tree holds, and configure keeps dh's directories" {
	built
	run -0 pkg ./configure --version
	assert_line --index 0 "prof configure $PKG_VERSION"
	run -0 pkg ./prof --version
	assert_output "prof $PKG_VERSION"
	run -0 grep -E '^(prefix|exec_prefix|bindir|libdir|includedir|datarootdir|mandir) = ' "$SRC/config.mk"
	assert_output - <<-EOF
	prefix = /usr
	exec_prefix = \${prefix}
	bindir = /usr/bin
	libdir = \${prefix}/lib/$MA
	includedir = \${prefix}/include
	datarootdir = \${prefix}/share
	mandir = \${prefix}/share/man
	EOF
}

@test "make install DESTDIR=: every file where Debian wants it, and nothing else" {
	built
	local v=$PKG_VERSION f
	{
		echo "usr/bin/prof 755"
		echo "usr/include/prof/prof.h 644"
		for f in "$SRC"/lib/prof/*.h; do
			echo "usr/include/prof/$(basename "$f") 644"
		done
		echo "usr/lib/$MA/libprof.a 644"
		echo "usr/lib/$MA/libprof.so -> libprof.so.0"
		echo "usr/lib/$MA/libprof.so.0 -> libprof.so.$v"
		echo "usr/lib/$MA/libprof.so.$v 644"
		echo "usr/lib/$MA/pkgconfig/libprof.pc 644"
		# under the prefix, as systemd looks for units in /usr/lib/systemd/system
		echo "usr/lib/systemd/system/prof-push.service 644"
		echo "usr/lib/systemd/system/prof-serve.service 644"
		echo "usr/share/bash-completion/completions/prof 644"
		echo "usr/share/fish/vendor_completions.d/prof.fish 644"
		for f in "$SRC"/man/*.1; do echo "usr/share/man/man1/$(basename "$f") 644"; done
		for f in "$SRC"/man/*.5; do echo "usr/share/man/man5/$(basename "$f") 644"; done
		echo "usr/share/zsh/vendor-completions/_prof 644"
	} | LC_ALL=C sort >want
	listing "$DEST" >got
	run diff want got
	assert_success
	# no directory made for nothing (/usr/local, say)
	run find "$DEST" -type d -empty
	assert_output ""
	# the files are the tree's
	cmp "$SRC/prof" "$DEST/usr/bin/prof"
	cmp "$SRC/lib/prof.h" "$DEST/usr/include/prof/prof.h"
	cmp "$SRC/man/prof.1" "$DEST/usr/share/man/man1/prof.1"
	no_installer_ran
}

@test "libprof.pc names the multiarch libdir and /usr/include; a program builds against the DESTDIR" {
	built
	command -v pkg-config >/dev/null || skip_or_fail "pkg-config is not installed (pkgconf)"
	export PKG_CONFIG_PATH="$DEST/usr/lib/$MA/pkgconfig"
	run -0 pkg-config --variable=libdir libprof
	assert_output "/usr/lib/$MA"
	run -0 pkg-config --variable=includedir libprof
	assert_output "/usr/include"
	run -0 env PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags libprof
	assert_output --regexp '^-I/usr/include *$'
	run -0 pkg-config --modversion libprof
	assert_output "$PKG_VERSION"
	# <prof/prof.h> and all it includes are in the installed layout
	export PKG_CONFIG_SYSROOT_DIR="$DEST"
	# shellcheck disable=SC2046
	run -0 cc -std=gnu11 -o hottest "$SRC/examples/hottest.c" $(pkg-config --cflags --libs libprof)
	run -0 readelf -d hottest
	assert_line --regexp 'NEEDED.*\[libprof\.so\.0\]'
}

@test "dpkg-buildflags' CPPFLAGS and CFLAGS reach every compile, LDFLAGS every link" {
	built
	local w n
	# each object of lib/ and cmd/ was compiled once, with every flag
	n=$(find "$SRC/build/lib" "$SRC/build/cmd" -name '*.o' | wc -l)
	((n > 50)) || fail "only $n objects in $SRC/build"
	# make's echo, a line a command
	sed -e ':a' -e '/\\$/N' -e 's/\\\n//' -e 'ta' -e 's/$/ /' "$W/build.log" >commands
	grep -E ' -c (lib|cmd)/[^ ]+\.c -o ' commands >compiles
	assert_equal "$(wc -l <compiles)" "$n"
	for w in $D_CPPFLAGS $D_CFLAGS; do
		run grep -vcF -- " $w " compiles
		assert_output 0
	done
	# prof and libprof.so were linked with every flag
	grep -E ' -o (prof|build/libprof\.so\.[0-9.]+) ' commands >links
	assert_equal "$(wc -l <links)" 2
	for w in $D_LDFLAGS; do
		run grep -vcF -- " $w " links
		assert_output 0
	done
}

@test "prof and libprof.so are hardened: RELRO, BIND_NOW, fortified calls, stack protector" {
	built
	local f
	for f in "$DEST/usr/bin/prof" "$DEST/usr/lib/$MA/libprof.so.0"; do
		run -0 readelf -lW "$f"
		assert_line --regexp '^ +GNU_RELRO '
		run -0 readelf -d "$f"
		assert_line --regexp '\(FLAGS\) +BIND_NOW'
		assert_line --regexp '\(FLAGS_1\) +Flags: NOW'
	done
	# prof's own objects (libiberty, linked in whole, is fortified by Debian's
	# build of it): _FORTIFY_SOURCE's checking calls (__snprintf_chk and the
	# like), and -fstack-protector's
	run -0 nm -A "$DEST/usr/lib/$MA/libprof.a" "$SRC"/build/cmd/*.o
	assert_line --regexp ' U __[a-z]+_chk$'
	assert_line --regexp ' U __stack_chk_fail$'
}

@test "make uninstall DESTDIR= takes away what install put there, and only that" {
	built
	local d="$BATS_TEST_TMPDIR/dest"
	# another package's files, beside prof's
	mkdir -p "$d/usr/bin" "$d/usr/include" "$d/usr/share/man/man1" "$d/usr/lib/$MA/pkgconfig"
	touch "$d/usr/bin/other" "$d/usr/include/other.h" "$d/usr/share/man/man1/other.1" \
		"$d/usr/lib/$MA/pkgconfig/other.pc"
	listing "$d" >before
	run -0 pkg make install DESTDIR="$d"
	[ -x "$d/usr/bin/prof" ] || fail "make install put no usr/bin/prof in $d"
	run -0 pkg make uninstall DESTDIR="$d"
	listing "$d" >after
	run diff before after
	assert_success
	# the headers' directory is prof's alone: it goes too
	[ ! -e "$d/usr/include/prof" ] || fail "uninstall left usr/include/prof"
	no_installer_ran
}

@test "make configure, ./configure, make, make install: none ran apt-get, dpkg-query or npm" {
	built
	no_installer_ran
	# and the stubs do catch it: .ci/deps, which only demo and check run, calls them
	stubs "$BATS_TEST_TMPDIR/stubs" "$BATS_TEST_TMPDIR/calls"
	run env PATH="$BATS_TEST_TMPDIR/stubs:$PATH" "$SRC/.ci/deps" build
	assert_failure
	run -0 cat "$BATS_TEST_TMPDIR/calls"
	assert_line --regexp '^dpkg-query -W '
}

@test "make check NO_DEPS=1 and make demo NO_DEPS=1 run no .ci/deps; without it they do" {
	built
	run -0 pkg make -n check NO_DEPS=1
	refute_line --partial '.ci/deps'
	run -0 pkg make -n demo NO_DEPS=1
	refute_line --partial '.ci/deps'
	run -0 pkg make -n check
	assert_line '.ci/deps check'
	run -0 pkg make -n demo
	assert_line '.ci/deps build'
	no_installer_ran
}

@test "make's command line moves the install: prefix=, and the old PREFIX= and LIBDIR=" {
	built
	run -0 pkg make -n install DESTDIR=/d prefix=/opt/x
	# configure was given libdir as ${prefix}/lib/MA, which moves, and
	# bindir as /usr/bin, which stays
	assert_line --regexp "^install -m 644 build/libprof\.a build/libprof\.so\.[0-9.]+ /d/opt/x/lib/$MA/$"
	assert_line 'install -m 755 prof /d/usr/bin/prof'
	assert_line --partial ' /d/opt/x/include/prof/prof.h'
	assert_line --partial ' /d/opt/x/share/man/man1/'
	run -0 pkg make -n install DESTDIR=/d bindir=/opt/y/bin PREFIX=/opt/y LIBDIR=/opt/y/lib64
	assert_line 'install -m 755 prof /d/opt/y/bin/prof'
	assert_line --regexp '^install -m 644 build/libprof\.a build/libprof\.so\.[0-9.]+ /d/opt/y/lib64/$'
	assert_line --partial ' /d/opt/y/share/zsh/vendor-completions/_prof'
	# an environment's PREFIX (conda and termux set one) moves nothing
	run -0 pkg env PREFIX=/opt/z make -n install DESTDIR=/d
	assert_line 'install -m 755 prof /d/usr/bin/prof'
}

@test "a plain make on a fresh tree configures by itself, for /usr/local, and installs nothing" {
	built
	local t="$BATS_TEST_TMPDIR/fresh"
	copy_tree "$t"
	# makefiles are remade even under -n: configure runs for real
	# shellcheck disable=SC2086
	run -0 env -i HOME="$HOME" LC_ALL=C PATH="$STUBS:$PATH" $OFFLINE make -C "$t" -n
	[ -f "$t/config.mk" ] || fail "make made no config.mk"
	assert_line --regexp '^gcc .* -o prof '
	run -0 env -i PATH="$PATH" make -C "$t" -s -n install DESTDIR=/d
	assert_line 'install -m 755 prof /d/usr/local/bin/prof'
	assert_line --regexp '^install -m 644 build/libprof\.a build/libprof\.so\.[0-9.]+ /d/usr/local/lib/$'
	no_installer_ran
}

@test "make configures again with the options ./configure was given, when configure.ac changes" {
	built
	touch "$SRC/configure.ac"
	# not from the environment: without dpkg-buildflags' there
	run -0 env -i HOME="$HOME" LC_ALL=C PATH="$STUBS:$PATH" make -C "$SRC" -n install DESTDIR=/d
	assert_line --partial 'config.status --recheck'
	assert_line 'install -m 755 prof /d/usr/bin/prof'
	assert_line --regexp "^install -m 644 build/libprof\.a build/libprof\.so\.[0-9.]+ /d/usr/lib/$MA/$"
	run -0 grep -E '^(CPPFLAGS|libdir) = ' "$SRC/config.mk"
	assert_output - <<-EOF
	CPPFLAGS = $D_CPPFLAGS
	libdir = \${prefix}/lib/$MA
	EOF
	no_installer_ran
}
