# test_helper.bash - loaded by every bats file: assertions, paths to the
# binary and the build, and helpers that skip (or fail, under
# PROF_TEST_STRICT=1) when the machine cannot run a test.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
PROF="${PROF:-$TOP/prof}"
BUILD="${BUILD:-$TOP/build}"
SPOOLGEN="$BUILD/spoolgen"

# skip_or_fail REASON: skip, unless strict mode makes it a failure
skip_or_fail() {
	if [ "${PROF_TEST_STRICT:-0}" = 1 ]; then
		fail "cannot run here (PROF_TEST_STRICT=1): $1"
	fi
	skip "$1"
}

# a synthetic spool written by libprof's writer: spool NAME [spoolgen options]
spool() {
	local out="$BATS_TEST_TMPDIR/$1"
	shift
	"$SPOOLGEN" "$@" "$out"
	echo "$out"
}

# perf events for our own children: root, or kernel.perf_event_paranoid <= 1
require_perf_events() {
	local paranoid
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
	if [ "$(id -u)" -ne 0 ] && [ "$paranoid" -gt 1 ]; then
		skip_or_fail "perf events unavailable (perf_event_paranoid=$paranoid, not root)"
	fi
}

# wait_for_line FILE REGEX [SECONDS]: until FILE has a line matching
# REGEX, for at most SECONDS (30)
wait_for_line() {
	local i
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_exec PID PROGRAM: until process PID runs PROGRAM (it was forked
# from the shell: until then it is the shell), for at most 30 s
wait_for_exec() {
	local i want
	want=$(readlink -f "$2")
	for ((i = 0; i < 300; i++)); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_spool_samples SPOOL N: until SPOOL, being written, holds N
# samples in its flushed blocks (a recorder flushes one at least once a
# second), for at most 60 s
wait_for_spool_samples() {
	local i n
	for ((i = 0; i < 600; i++)); do
		n=$("$PROF" report -q --format=json "$1" 2>/dev/null | jq .samples 2>/dev/null)
		[ "${n:-0}" -ge "$2" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The set-up of the files whose tests record: perf events, the targets in
# $T, and each test in a directory of its own (setup() { setup_recording; })
setup_recording() {
	require_perf_events
	T="$BUILD/targets"
	cd "$BATS_TEST_TMPDIR"
}

# lifetimes_agree LIFETIMES: the threads of the report on stdin (prof
# report --weight=wall --by-thread) against LIFETIMES, waiter's "thread
# NAME TID NS" lines: each thread's wall time, under whatever names its tid
# had, is the time it lived by its own clock, to 3% (the on-CPU part is
# counted in samples of a period the kernel adjusts as it goes, and the
# thread's clock misses its first and last instructions: on a loaded
# machine, 9 ms of a second seen); and there are no other threads.
# Prints a line per thread; fails naming those that do not agree.
lifetimes_agree() {
	awk '
		FNR == NR { name[$3] = $2; own[$3] = $4 / 1e6; next }
		/^thread / && match($0, /\(tid [0-9]+\)/) {
			tid = substr($0, RSTART + 5, RLENGTH - 6); ms[tid] += $(NF - 2)
		}
		END {
			bad = 0
			for (t in ms) if (!(t in own)) { print "tid " t ": not a thread of waiter"; bad = 1 }
			for (t in own) {
				d = ms[t] - own[t]; if (d < 0) d = -d
				printf "%-9s tid %s: %8.2f ms in the profile, %8.2f ms by its clock\n",
				       name[t], t, ms[t], own[t]
				if (d > 0.03 * own[t]) { print "  " name[t] ": not its lifetime"; bad = 1 }
			}
			exit bad
		}' "$1" -
}

# require_cmd COMMAND PACKAGE: a tool the test runs, from the Debian PACKAGE
# (.ci/deps check installs it; `make check NO_DEPS=1` may go without)
require_cmd() {
	command -v "$1" >/dev/null || skip_or_fail "$1 is not installed ($2)"
}

# the C++ target, which make builds only where there is a C++ compiler
require_cxx_target() {
	[ -x "$BUILD/targets/cxx_target" ] ||
		skip_or_fail "no $BUILD/targets/cxx_target: there was no C++ compiler (g++) to build it"
}

# libc's own names (start_thread, __libc_start_call_main, clone3): in its
# debug file, by build-id under /usr/lib/debug, which libc6-dbg installs
require_libc_debug() {
	local libc id
	libc=$(ldd "$BUILD/targets/ladder" | awk '$1 == "libc.so.6" { print $3 }')
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
		skip_or_fail "no debug file for ${libc:-libc.so.6} (libc6-dbg): libc's own functions go unnamed"
}

# node and the npm package $1, as .ci/deps check installs it in tests/npm
require_npm() {
	command -v node >/dev/null || skip_or_fail "node is not installed (nodejs)"
	[ -d "$TOP/tests/npm/node_modules/$1" ] ||
		skip_or_fail "npm package $1 is not installed (run .ci/deps check)"
}

# Processes a test started in the background (BG+=($!)): kill_background,
# called by a file's teardown, kills those still there if the test failed
# midway.
BG=()
kill_background() {
	local pid
	for pid in "${BG[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
}

# line_of FILE TEXT: the number of the one line of FILE that holds TEXT
line_of() {
	local n
	n=$(grep -nF -- "$2" "$1" | cut -d: -f1)
	[[ $n =~ ^[0-9]+$ ]] || fail "no single line with '$2' in $1: '$n'"
	echo "$n"
}
