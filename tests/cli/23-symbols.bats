#!/usr/bin/env bats
# Symbols people can trust: inline frames and source lines from DWARF,
# checked against the targets' sources (lines are found with grep, never
# written down); debug info found in separate files by build-id and by
# debuglink; C++ names demangled, against c++filt; stripped binaries; and
# debuginfod's error and timeout paths (no server is reachable here).
load test_helper

setup() {
	T="$BUILD/targets"
	SRC="$TOP/tests/targets"
	cd "$BATS_TEST_TMPDIR"
}

# count_matching REGEX FOLDED_FILE: samples whose stack (without count) matches REGEX
count_matching() {
	awk -v re="$1" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) hit += n }
		END { print hit + 0 }' "$2"
}

total_samples() {
	awk '{ total += $NF } END { print total + 0 }' "$1"
}

# split_debug BINARY DIR: DIR/BINARY's name stripped of its debug info
# (symbols kept), its debug file as DIR/NAME.debug; prints the build-id
split_debug() {
	local name
	name=$(basename "$1")
	mkdir -p "$2"
	objcopy --only-keep-debug "$1" "$2/$name.debug"
	objcopy --strip-debug "$1" "$2/$name"
	readelf -n "$1" | sed -n 's/^ *Build ID: //p'
}

@test "an inlined function is a frame of its own, at the right source line" {
	require_perf_events
	"$PROF" record -q -o i.spool -- "$T/inline" 0.5
	"$PROF" report -q --format=folded i.spool >i.folded
	total=$(total_samples i.folded)
	[ "$total" -ge 200 ] || fail "only $total samples"
	# the CPU burns in step, inlined in mix, inlined in churn: folded has bare names
	step=$(count_matching ';main;churn;mix;step$' i.folded)
	under=$(count_matching ';main;churn;mix(;step)?$' i.folded)
	[ $((step * 100)) -ge $((total * 50)) ] || fail "churn;mix;step in $step of $total samples"
	[ $((under * 100)) -ge $((total * 95)) ] || fail "under churn;mix in $under of $total samples"
	refute grep -F '[inlined]' i.folded

	churn=$(line_of "$SRC/inline.c" 'line: churn calls mix')
	mix=$(line_of "$SRC/inline.c" 'line: mix calls step')
	stepl=$(line_of "$SRC/inline.c" 'line: step */')
	run -0 --separate-stderr "$PROF" report -q --format=tree --lines i.spool
	assert_line --regexp "^ *[0-9.]+% +0\.00% +churn \(tests/targets/inline\.c:$churn\) \[inline\]$"
	assert_line --regexp "^ *[0-9.]+% +0\.00% +mix \[inlined\] \(tests/targets/inline\.c:$mix\) \[inline\]$"
	assert_line --regexp "^ *[0-9.]+% +[0-9.]+% +step \[inlined\] \(tests/targets/inline\.c:$stepl\) \[inline\]$"
	# nesting: churn, then mix one level in, then step one more
	indent() { sed -n "s/^ *[0-9.]*% *[0-9.]*%  \( *\)$1 .*/\1/p" <<<"$output" | head -n1 | wc -c; }
	assert_equal "$(indent mix)" "$(($(indent churn) + 2))"
	assert_equal "$(indent step)" "$(($(indent churn) + 4))"

	# top: the inlined function has the self samples, the real one none
	run -0 --separate-stderr "$PROF" report -q i.spool
	assert_line --regexp "^ *[0-9.]+% +[0-9.]+% +$step +step \[inlined\] +inline$"
	assert_line --regexp "^ +0\.00% +[0-9.]+% +0 +churn +inline$"
}

@test "every call-site line names the callee, every leaf line is in its function" {
	require_perf_events
	"$PROF" record -q -o l.spool -- "$T/ladder" 0.5
	"$PROF" record -q -o i.spool -- "$T/inline" 0.5
	for s in l i; do
		run -0 --separate-stderr "$PROF" report -q --format=tree --lines --min-percent=1 $s.spool
		# "INDENT SELF NAME FILE LINE" of the targets' frames, in tree order
		lines=$(sed -n -E 's/^ *[0-9.]+% +([0-9.]+)%  ( *)([a-z_]+)( \[inlined\])? \(tests\/targets\/([a-z]+\.c):([0-9]+)\) \[(ladder|inline)\]$/\2| \1 \3 \5 \6/p' <<<"$output")
		[ "$(wc -l <<<"$lines")" -ge 4 ] || fail "too few frames with lines in $s: $output"
		declare -A at=()
		while IFS='|' read -r indent rest; do
			read -r self name file line <<<"$rest"
			depth=${#indent}
			at[$depth]="$name $line"
			# the caller's line (one level up, if a target's frame) calls this frame
			if [ -n "${at[$((depth - 2))]:-}" ]; then
				read -r pname pline <<<"${at[$((depth - 2))]}"
				ptext=$(sed -n "${pline}p" "$SRC/$file")
				[[ $ptext == *"$name("* ]] || fail "$pname's line $pline ('$ptext') does not call $name"
				checked=$((${checked:-0} + 1))
			fi
			# a frame with samples of its own: its line lies within its function
			if [ "$self" != 0.00 ]; then
				start=$(grep -nE "^[^ ].*[ *]$name\(" "$SRC/$file" | head -n1 | cut -d: -f1)
				[ -n "$start" ] && [ "$line" -gt "$start" ] ||
					fail "$name's line $line is not after its start '$start'"
				end=$(awk -v s="$start" 'NR > s && /^}/ { print NR; exit }' "$SRC/$file")
				[ "$line" -lt "$end" ] || fail "$name's line $line is past its end $end"
			fi
			# what was deeper belongs to the previous subtree
			for k in "${!at[@]}"; do
				if [ "$k" -gt "$depth" ]; then unset "at[$k]"; fi
			done
		done <<<"$lines"
		unset at
	done
	# ladder: main>a>b>c>d is 4 calls; inline: main>churn>mix>step is 3
	[ "$checked" -ge 7 ] || fail "only $checked call sites checked"
}

@test "a debug file is found by build-id under --debug-dir" {
	require_perf_events
	id=$(split_debug "$T/inline" bin)
	[ ${#id} -eq 40 ] || fail "no build-id: '$id'"
	mkdir -p "dbg/.build-id/${id:0:2}"
	mv bin/inline.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
	"$PROF" record -q -o s.spool -- bin/inline 0.3
	# the stripped copy alone: names from its symbols, no inline frames
	run -0 --separate-stderr "$PROF" report -q --format=folded s.spool
	assert_line --regexp ';main;churn [0-9]+$'
	refute_line --regexp ';churn;mix'
	run -0 --separate-stderr "$PROF" report -vv --format=folded --debug-dir="$PWD/dbg" s.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
	assert_regex "$stderr" "prof: debug info for '$PWD/bin/inline': '$PWD/dbg/\.build-id/${id:0:2}/${id:2}\.debug' \(build-id\)"
	# a list of directories, the first without it; and the option given twice
	run -0 --separate-stderr "$PROF" report -q --format=folded --debug-dir="$PWD/none:$PWD/dbg" s.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
	run -0 --separate-stderr "$PROF" report -q --format=folded --debug-dir="$PWD/none" --debug-dir="$PWD/dbg" s.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
}

@test "a debug file is found through .gnu_debuglink: beside, in .debug/, under --debug-dir" {
	require_perf_events
	mkdir -p beside sub/.debug far
	objcopy --only-keep-debug "$T/inline" inline.debug
	objcopy --strip-debug --add-gnu-debuglink=inline.debug "$T/inline" beside/inline
	cp beside/inline sub/inline
	cp beside/inline far/inline
	cp inline.debug beside/
	cp inline.debug sub/.debug/
	mkdir -p "linkdbg$PWD/far"
	cp inline.debug "linkdbg$PWD/far/"
	for d in beside sub far; do
		"$PROF" record -q -o $d.spool -- $d/inline 0.3
	done
	run -0 --separate-stderr "$PROF" report -vv --format=folded beside.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
	assert_regex "$stderr" "debug info for '$PWD/beside/inline': '$PWD/beside/inline\.debug' \(debuglink\)"
	run -0 --separate-stderr "$PROF" report -vv --format=folded sub.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
	assert_regex "$stderr" "debug info for '$PWD/sub/inline': '$PWD/sub/\.debug/inline\.debug' \(debuglink\)"
	run -0 --separate-stderr "$PROF" report -q --format=folded far.spool
	refute_line --regexp ';churn;mix'
	run -0 --separate-stderr "$PROF" report -vv --format=folded --debug-dir="$PWD/linkdbg" far.spool
	assert_line --regexp ';main;churn;mix;step [0-9]+$'
	assert_regex "$stderr" "debug info for '$PWD/far/inline': '$PWD/linkdbg$PWD/far/inline\.debug' \(debuglink\)"
	# a debug file that is not the one linked (its CRC differs) is not used
	objcopy --remove-section=.comment inline.debug beside/inline.debug
	run -0 --separate-stderr "$PROF" report -q --format=folded beside.spool
	refute_line --regexp ';churn;mix'
}

@test "C++ names are demangled as c++filt does, and left mangled with --no-demangle" {
	require_perf_events
	require_cxx_target
	"$PROF" record -q -o c.spool -- "$T/cxx_target" 0.5
	mangled=$(nm "$T/cxx_target" | awk '$3 ~ /^_Z/ && $3 ~ /(shapes4spin|AccumulatorI[mj]E5churn|_ZZ4mainENKUlmE_clEm)/ { print $3 }' | sort)
	[ "$(wc -l <<<"$mangled")" -eq 4 ] || fail "expected 4 mangled functions, got: $mangled"
	run -0 --separate-stderr "$PROF" report -q --limit=0 --min-percent=0 c.spool
	for m in $mangled; do
		d=$(c++filt "$m")
		[[ $d == *::* ]] || fail "c++filt left $m as $d"
		assert_line --regexp "^ *[0-9.]+% +[0-9.]+% +[1-9][0-9]* +$(sed 's/[][\.*^$(){}+?|]/\\&/g' <<<"$d") +cxx_target$"
		refute_line --partial "$m"
	done
	assert_line --partial 'prof_test::shapes::Accumulator<unsigned int>::churn(unsigned long)'
	assert_line --partial 'main::{lambda(unsigned long)#1}::operator()(unsigned long) const'
	run -0 --separate-stderr "$PROF" report -q --no-demangle --format=folded c.spool
	for m in $mangled; do
		assert_line --regexp "^_start;.*;main;$m [0-9]+$"
	done
	refute_line --partial '::'
}

@test "a stripped binary: its frames are module+0xOFFSET inside the right functions" {
	require_perf_events
	require_libc_debug
	cp "$T/ladder" ladder
	strip --strip-all ladder
	"$PROF" record -q -o s.spool -- ./ladder 0.5
	run -0 --separate-stderr "$PROF" report --format=folded s.spool
	total=$(total_samples <(echo "$output"))
	# the leaf: an offset inside ladder_d, as the unstripped file's symbols place it
	read -r dvaddr dsize < <(nm -S "$T/ladder" | awk '$4 == "ladder_d" { print $1, $2 }')
	read -r off vaddr < <(readelf -lW "$T/ladder" | awk '$1 == "LOAD" && $8 == "E" { print $2, $3 }')
	lo=$((0x$dvaddr - vaddr + off))
	hi=$((lo + 0x$dsize))
	inside=0
	while read -r stack n; do
		leaf=${stack##*;}
		[[ $leaf =~ ^ladder\+0x([0-9a-f]+)$ ]] || continue
		o=$((0x${BASH_REMATCH[1]}))
		if [ "$o" -ge "$lo" ] && [ "$o" -lt "$hi" ]; then inside=$((inside + n)); fi
	done <<<"$output"
	[ $((inside * 100)) -ge $((total * 90)) ] || fail "$inside of $total leaves inside ladder_d [$lo, $hi)"
	# libc still has its names
	assert_line --regexp '^ladder\+0x[0-9a-f]+;__libc_start_main;__libc_start_call_main;'
}

@test "a stripped shared library is named from its .dynsym" {
	require_perf_events
	cp "$T/dlopen_main" .
	cp "$T/libdltarget.so" .
	strip --strip-all libdltarget.so
	if readelf -SW libdltarget.so | grep -q '\.symtab'; then fail "strip left .symtab"; fi
	"$PROF" record -q -o d.spool -- ./dlopen_main 0.5
	run -0 --separate-stderr "$PROF" report -q --format=folded d.spool
	assert_line --regexp ';dltarget_entry;dltarget_work [0-9]+$'
}

@test "the header says where each module's names came from, and which package has a missing debug file" {
	require_perf_events
	cp "$T/ladder" ladder
	"$PROF" record -q -o l.spool -- ./ladder 0.5
	run -0 "$PROF" report l.spool
	assert_line --regexp '^names: +ladder: \.symtab \((9[0-9]|100)\.[0-9]% of the samples, 0\.0% of them unnamed\)$'
	refute_line --partial 'hint:'
	# stripped, its debug file beside it through .gnu_debuglink
	objcopy --only-keep-debug ladder ladder.debug
	objcopy --strip-all --add-gnu-debuglink=ladder.debug ladder
	"$PROF" record -q -o s.spool -- ./ladder 0.5
	run -0 "$PROF" report s.spool
	assert_line --regexp '^names: +ladder: debug file by debuglink \([0-9.]+% of the samples, 0\.0% of them unnamed\)$'
	# the debug file gone: no names, and a hint naming the file its link wants
	rm ladder.debug
	run -0 "$PROF" report s.spool
	assert_line --regexp '^names: +ladder: no names \([0-9.]+% of the samples, 100\.0% of them unnamed\)$'
	assert_line 'hint:         ladder has no debug info here: its .gnu_debuglink names ladder.debug, found in no debug directory'
	# a file dpkg lists (its /usr-merged twin counts alike): the package's -dbgsym
	mkdir dpkg
	echo "$PWD/ladder" >dpkg/fakepkg:amd64.list
	PROF_DPKG_INFO=$PWD/dpkg run -0 "$PROF" report s.spool
	assert_line "hint:         ladder has no debug info here: its .gnu_debuglink names ladder.debug, in Debian's fakepkg-dbgsym (the debian-debug archive)"
	PROF_DPKG_INFO=$PWD/dpkg run -0 "$PROF" report -q --format=json s.spool
	run -0 jq -c '.modules[0] | [.module, .names_from, .unnamed == .weight, .debug_missing, .package]' <<<"$output"
	assert_output '["ladder",[],true,"ladder.debug","fakepkg"]'
}

debuginfod_built() {
	grep -q '^#define HAVE_DEBUGINFOD 1' "$TOP/config.h"
}

@test "--debuginfod: an error without DEBUGINFOD_URLS, or without libdebuginfod" {
	s=$(spool a.spool --samples 10)
	if debuginfod_built; then
		run -1 --separate-stderr env -u DEBUGINFOD_URLS "$PROF" report --debuginfod "$s"
		assert_equal "$stderr" "prof: debuginfod was asked for, but DEBUGINFOD_URLS is not set"
	else
		run -1 --separate-stderr env DEBUGINFOD_URLS=http://127.0.0.1:1 "$PROF" report --debuginfod "$s"
		assert_equal "$stderr" "prof: debuginfod is not available: prof was built without libdebuginfod"
	fi
	assert_equal "$output" ""
}

@test "--debuginfod: a server that refuses is warned of once, and the report goes on" {
	debuginfod_built || skip "prof was built without libdebuginfod"
	require_perf_events
	split_debug "$T/inline" bin >/dev/null
	split_debug "$T/ladder" bin >/dev/null
	"$PROF" record -q -o s.spool -- bin/inline 0.2
	export DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache"
	# nothing listens on port 1: refused at once
	run -0 --separate-stderr env DEBUGINFOD_URLS=http://127.0.0.1:1 \
		"$PROF" report --debuginfod --format=folded s.spool
	assert_line --regexp ';main;churn [0-9]+$'
	assert_regex "$stderr" "^prof: warning: debuginfod lookup for '$PWD/bin/inline' failed: [^;]+; asking it no more$"
	# without --debuginfod no lookup is made, whatever the environment says
	run -0 --separate-stderr env DEBUGINFOD_URLS=http://127.0.0.1:1 \
		"$PROF" report --format=folded s.spool
	assert_equal "$stderr" ""
}

@test "--debuginfod: a server that never answers costs DEBUGINFOD_TIMEOUT, not a hang" {
	debuginfod_built || skip "prof was built without libdebuginfod"
	require_perf_events
	split_debug "$T/inline" bin >/dev/null
	"$PROF" record -q -o s.spool -- bin/inline 0.2
	# a listener that accepts and then says nothing, for 60 s at most
	perl -MIO::Socket::INET -e '
		$| = 1;
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0,
					      Listen => 8, ReuseAddr => 1) or die;
		print $s->sockport, "\n";
		my @c; my $end = time + 60;
		while (time < $end) { my $c = $s->accept; push @c, $c if $c }' >port 2>/dev/null &
	pid=$!
	for _ in $(seq 300); do [ -s port ] && break; sleep 0.1; done
	port=$(cat port)
	[ -n "$port" ] || fail "the listener did not start"
	export DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache"
	start=$SECONDS
	run -0 --separate-stderr env DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_TIMEOUT=2 \
		"$PROF" report --debuginfod --format=folded s.spool
	took=$((SECONDS - start))
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	assert_line --regexp ';main;churn [0-9]+$'
	# the 2 s of DEBUGINFOD_TIMEOUT and the report, however slowly a loaded
	# machine runs it: a hang would last as long as the listener, 60 s
	[ "$took" -le 30 ] || fail "the report took $took s"
	assert_regex "$stderr" "^prof: warning: debuginfod (did not answer for '$PWD/bin/inline' within 2 s|lookup for '$PWD/bin/inline' failed: [^;]+); asking it no more$"
}
