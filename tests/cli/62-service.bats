#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# prof as a service: the systemd units make install puts in place
# (examples/prof-serve.service.in, examples/prof-push.service.in) name
# prof where it is installed, pass systemd-analyze verify, give only options
# prof takes, and run as they say: not root, with the capabilities the
# units give (CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
# CAP_IPC_LOCK), prof serve records the whole machine and serves it.
load test_helper

UNIT_CAPS=+perfmon,+sys_ptrace,+dac_read_search,+ipc_lock

setup() {
	cd "$BATS_TEST_TMPDIR"
	BG=()
}

teardown() {
	kill_background
	[ -z "${W:-}" ] || rm -rf "$W"
}

# The command line of UNIT's ExecStart= (its first one that is not a comment).
exec_start() {
	sed -n 's/^ExecStart=//p' "$TOP/examples/$1.in" | head -n 1
}

@test "make install puts the units in place, naming the prof it installs, and systemd-analyze verifies them" {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$TOP" install DESTDIR="$PWD/root" \
		prefix=/usr/local exec_prefix=/usr/local bindir=/usr/local/bin libdir=/usr/local/lib \
		includedir=/usr/local/include datarootdir=/usr/local/share mandir=/usr/local/share/man \
		SANITIZE="${SANITIZE:-}" >/dev/null
	local d=root/usr/local/lib/systemd/system u
	for u in prof-serve prof-push; do
		[ -f "$d/$u.service" ] || fail "not installed: $u.service"
		run -0 grep -c '^ExecStart=/usr/local/bin/prof ' "$d/$u.service"
		assert_output 1
		run grep '@bindir@' "$d/$u.service"
		assert_failure 1
	done
	command -v systemd-analyze >/dev/null || skip_or_fail "systemd-analyze is not installed (systemd)"
	# verify wants the command to exist: the one built here stands for the installed one
	for u in prof-serve prof-push; do
		sed "s|/usr/local/bin/prof |$PROF |" "$d/$u.service" >"$u.service"
	done
	run -0 --separate-stderr systemd-analyze verify --man=no ./prof-serve.service ./prof-push.service
	[ -z "$stderr" ] || fail "$stderr"
	# and make uninstall takes them away
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$TOP" uninstall DESTDIR="$PWD/root" \
		prefix=/usr/local exec_prefix=/usr/local bindir=/usr/local/bin libdir=/usr/local/lib \
		includedir=/usr/local/include datarootdir=/usr/local/share mandir=/usr/local/share/man \
		>/dev/null
	[ ! -e "$d/prof-serve.service" ]
	[ ! -e "$d/prof-push.service" ]
}

@test "every option the units give is one prof takes" {
	local u line cmd opt
	for u in prof-serve.service prof-push.service; do
		line=$(exec_start "$u")
		cmd=$(awk '{ print $2 }' <<<"$line")
		"$PROF" "$cmd" --list-options >opts || fail "$u: prof $cmd --list-options failed"
		for opt in $(grep -oE '(^| )--[a-z-]+' <<<"$line"); do
			grep -qx -- "$opt" opts || fail "$u: prof $cmd has no option $opt"
		done
		for opt in $(grep -oE '(^| )-[a-zA-Z]( |$)' <<<"$line"); do
			grep -qx -- "$opt" opts || fail "$u: prof $cmd has no option $opt"
		done
	done
}

# serve_ladder CAPS: as nobody with CAPS, prof serve records the machine (into
# a directory of its own) for 2 s while a ladder of root's runs from a
# directory only root may enter; the profile's go tool pprof -top in top.txt.
serve_ladder() {
	local run
	run=$(mktemp -d "$W/run.XXXXXX")
	chown nobody "$run"
	"$P/ladder" 30 >/dev/null &
	BG+=($!)
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps="$1" --ambient-caps="$1" \
		"$W/prof" serve -F 99 --listen=127.0.0.1:0 --dir="$run" 2>serve.err &
	BG+=($!)
	wait_for_line serve.err '^prof: serving ' 60 || fail "prof serve did not start: $(cat serve.err)"
	url=$(sed -n 's/^prof: serving //p' serve.err)
	curl -sS -f -o p.pb.gz "${url}profile?seconds=2" || fail "no profile from $url"
	HOME=$PWD PPROF_TMPDIR=$PWD go tool pprof -top p.pb.gz >top.txt 2>&1 || fail "$(cat top.txt)"
	kill_background
	BG=()
}

@test "as the unit runs it: not root, with the unit's capabilities, prof serve records the machine and serves it" {
	require_perf_events
	[ "$(id -u)" -eq 0 ] || skip_or_fail "dropping to user nobody needs root"
	command -v setpriv >/dev/null || skip_or_fail "setpriv is not installed (util-linux)"
	id nobody >/dev/null 2>&1 || skip_or_fail "there is no user nobody"
	command -v go >/dev/null || skip_or_fail "go is not installed (golang-go)"
	# the capabilities the unit gives are the ones this test gives
	run -0 grep -c "^AmbientCapabilities=CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_IPC_LOCK$" \
		"$TOP/examples/prof-serve.service.in"
	W=$(mktemp -d /tmp/prof-unit.XXXXXX)
	chmod 755 "$W"
	cp "$PROF" "$W/prof"
	mkdir "$W/root-only"
	chmod 700 "$W/root-only"
	P=$W/root-only
	cp "$BUILD/targets/ladder" "$P/ladder"
	serve_ladder "$UNIT_CAPS"
	grep -qE ' ladder_d$' top.txt || fail "ladder_d not named: $(cat top.txt)"
	# with CAP_PERFMON alone it records, but cannot read the ladder's file
	serve_ladder +perfmon
	run grep -E ' ladder_d$' top.txt
	assert_failure 1
}
