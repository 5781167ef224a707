#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# prof serve: a recording served over HTTP as Go's net/http/pprof serves a
# profile.  Read by a real client, Debian's go tool pprof, against the
# ground truth of the targets (ladder burns its CPU in main -> ladder_a ->
# ladder_b -> ladder_c -> ladder_d; waiter's sleeper sleeps in
# sleep_phase); the answers that are not a profile; clients that misbehave
# (tests/tools/http-hostile), after which the server still answers and the
# recording goes on; unix sockets, ports in use, privileges, and the files
# on disk staying bounded.  No assertion is on wall-clock time: waits are
# bounded, generously.
load test_helper

setup() {
	setup_recording
	mkdir tmp
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	export HOME="$BATS_TEST_TMPDIR" PPROF_TMPDIR="$BATS_TEST_TMPDIR"
}

teardown() {
	kill_background
}

# start_serve ARG...: prof serve ARG... on a free port of 127.0.0.1, in the
# background, its stderr in serve.err; sets SERVE (its pid), URL and PORT.
start_serve() {
	"$PROF" serve --listen=127.0.0.1:0 "$@" 2>serve.err &
	SERVE=$!
	BG+=("$SERVE")
	wait_for_line serve.err '^prof: serving ' 60 || fail "prof serve did not start: $(cat serve.err)"
	URL=$(sed -n 's/^prof: serving //p' serve.err)
	PORT=$(sed -n 's|^prof: serving http://127\.0\.0\.1:\([0-9]*\)/debug/pprof/$|\1|p' serve.err)
	[ -n "$PORT" ] || fail "no port in: $(cat serve.err)"
}

# stop_serve: SIGTERM, and its exit status in $rc.
stop_serve() {
	kill -TERM "$SERVE"
	rc=0
	wait "$SERVE" || rc=$?
}

# start_target PROGRAM ARG...: in the background; TARGET is its pid, once it runs PROGRAM.
start_target() {
	"$@" >/dev/null &
	TARGET=$!
	BG+=("$TARGET")
	wait_for_exec "$TARGET" "$1" || fail "$1 did not start"
}

hostile() {
	python3 "$TOP/tests/tools/http-hostile" 127.0.0.1 "$PORT" "$@"
}

# pprof_raw URL|FILE: go tool pprof -raw of it, into raw.txt.
pprof_raw() {
	go tool pprof -raw "$1" >raw.txt 2>raw.err || fail "go tool pprof: $(cat raw.err)"
}

# leaf_shares RAW: "FUNCTION PERCENT" of each leaf function of the samples
# of go tool pprof -raw's output RAW (by the first value, samples), then
# "chain PERCENT", the samples whose stack is main's ladder chain, and
# "total N".
leaf_shares() {
	awk '
		/^Samples:/ { sec = "s"; next }
		/^Locations/ { sec = "l"; next }
		/^Mappings/ { sec = "m"; next }
		sec == "s" && /^ +[0-9]+ +[0-9]+: / {
			n[++ns] = $1; total += $1; s = ""
			for (i = 3; i <= NF; i++) s = s " " $i
			locs[ns] = s
		}
		sec == "l" && /^ +[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); fn[id] = $4 }
		END {
			for (i = 1; i <= ns; i++) {
				k = split(locs[i], l, " "); leaf[fn[l[1]]] += n[i]; c = ""
				for (j = 1; j <= k; j++) c = c fn[l[j]] " "
				if (c ~ /^ladder_d ladder_c ladder_b ladder_a main /) chain += n[i]
			}
			for (f in leaf) printf "%s %.1f\n", f, total ? 100 * leaf[f] / total : 0
			printf "chain %.1f\ntotal %d\n", total ? 100 * chain / total : 0, total
		}' "$1"
}

# share NAME: NAME's value in shares.txt (leaf_shares' lines), 0 if none.
share() {
	awk -v f="$1" '$1 == f { v = $2 } END { print v + 0 }' shares.txt
}

at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "$3: $1, less than $2"
}

@test "go tool pprof -raw reads the next 2 seconds of -p ladder: ladder_d at the share ladder gives it" {
	require_cmd go golang-go
	start_target "$T/ladder" 120
	start_serve -p "$TARGET"
	pprof_raw "${URL}profile?seconds=2"
	grep -qx 'Duration: 2s' raw.txt || fail "not a 2 s profile: $(head -5 raw.txt)"
	grep -qx 'samples/count cpu/nanoseconds\[dflt\]' raw.txt
	leaf_shares raw.txt >shares.txt
	cat shares.txt
	# 2 s of a CPU-bound thread at 999 Hz, on a machine that may be busy
	[ "$(share total)" -ge 300 ] || fail "only $(share total) samples"
	# ladder_d burns ladder's CPU, called through the whole chain (11-record-truth.bats)
	at_least "$(share ladder_d)" 95 "ladder_d's share"
	at_least "$(share chain)" 95 "main>a>b>c>d's share"
	grep -q "pid:\[$TARGET\]" raw.txt
	# named by the symbol tables: no source line without --debuginfo
	grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ ladder_d :0 ' raw.txt
	stop_serve
	assert_equal "$rc" 0
}

@test "--debuginfo: inline frames and source lines from DWARF; without it, functions alone" {
	require_cmd go golang-go
	# inline burns its CPU in step, inlined in mix, inlined in churn (23-symbols.bats)
	start_target "$T/inline" 120
	start_serve -p "$TARGET"
	pprof_raw "${URL}profile?seconds=2"
	sed -n '/^Locations/,/^Mappings/p' raw.txt >locs.txt
	cat locs.txt
	grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ churn :0 ' locs.txt
	run grep -E '(^| )(step|mix) |inline\.c:' locs.txt
	assert_failure
	stop_serve
	assert_equal "$rc" 0

	start_serve --debuginfo -p "$TARGET"
	pprof_raw "${URL}profile?seconds=2"
	sed -n '/^Locations/,/^Mappings/p' raw.txt >locs.txt
	cat locs.txt
	step=$(line_of "$TOP/tests/targets/inline.c" 'line: step */')
	mix=$(line_of "$TOP/tests/targets/inline.c" 'line: mix calls step')
	churn=$(line_of "$TOP/tests/targets/inline.c" 'line: churn calls mix')
	# a location of step: step, then mix and churn it is inlined in, each at its line
	grep -A2 -E "^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ step tests/targets/inline\.c:$step " locs.txt >chain.txt
	grep -qE "^ +mix tests/targets/inline\.c:$mix " chain.txt
	grep -qE "^ +churn tests/targets/inline\.c:$churn " chain.txt
	stop_serve
	assert_equal "$rc" 0
}

@test "/debug/pprof/last answers with the last seconds, ladder_d at its share" {
	require_cmd go golang-go
	start_target "$T/ladder" 120
	start_serve -p "$TARGET"
	# what a few seconds of recording hold
	sleep 3
	pprof_raw "${URL}last?seconds=2"
	grep -qx 'Duration: 2s' raw.txt
	leaf_shares raw.txt >shares.txt
	cat shares.txt
	[ "$(share total)" -ge 300 ] || fail "only $(share total) samples"
	at_least "$(share ladder_d)" 95 "ladder_d's share"
	# more than was recorded: what there is
	run -0 hostile get "/debug/pprof/last?seconds=250"
	assert_regex "$output" '^status 200, [0-9]+ bytes$'
}

@test "weight=off-cpu and weight=wall of an --off-cpu recording of waiter: where its threads wait" {
	require_cmd go golang-go
	start_target "$BUILD/targets/waiter" 60
	start_serve --off-cpu -p "$TARGET"
	pprof_raw "${URL}profile?seconds=2&weight=off-cpu"
	grep -qx 'samples/count off-cpu/nanoseconds\[dflt\]' raw.txt
	# the sleeper and the reader wait the whole time
	grep -qE ' sleep_phase( |$)' raw.txt || fail "no sleep_phase in: $(cat raw.txt)"
	grep -qE ' pipe_phase( |$)' raw.txt
	grep -qE ' \[blocked\]( |$)' raw.txt
	pprof_raw "${URL}last?seconds=2&weight=wall"
	grep -qx 'samples/count wall/nanoseconds\[dflt\]' raw.txt
	grep -qE ' compute_phase( |$)' raw.txt
	grep -qE ' sleep_phase( |$)' raw.txt
}

@test "weight=off-cpu counts a wait for its part in the span: a sleep begun before it waits all of it" {
	require_cmd go golang-go
	start_target "$(command -v sleep)" 120
	start_serve --off-cpu -p "$TARGET"
	sleep 1
	pprof_raw "${URL}profile?seconds=2&weight=off-cpu"
	# the values of the samples: count, then off-CPU ns
	awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	     on && /^ +[0-9]+ +[0-9]+: / { ns += $2 } END { print ns + 0 }' raw.txt >ns
	awk '{ exit !($1 >= 1.98e9 && $1 <= 2.0e9) }' ns || fail "$(cat ns) ns off-CPU in 2 s of sleep"
}

@test "a window without a sample is an empty profile that go tool pprof reads" {
	require_cmd go golang-go
	start_target "$(command -v sleep)" 120
	start_serve -p "$TARGET"
	pprof_raw "${URL}profile?seconds=1"
	grep -qx 'Duration: 1s' raw.txt
	leaf_shares raw.txt >shares.txt
	assert_equal "$(share total)" 0
}

@test "400, 404, 405: a line of text/plain each, X-Go-Pprof set, before any wait; HEAD and the index" {
	require_cmd curl curl
	start_target "$T/ladder" 120
	start_serve -p "$TARGET" --max-seconds=60 --keep=50
	# code URL [CURL ARGS]: the status, body in body.txt, headers in headers.txt
	code() {
		curl -s -o body.txt -D headers.txt -w '%{http_code}' "${@:2}" "$1"
	}
	bad() {	# STATUS LINE URL [CURL ARGS]
		run -0 code "${@:3}"
		assert_equal "$output" "$1"
		assert_equal "$(cat body.txt)" "$2"
		assert_equal "$(wc -l <body.txt)" 1
		grep -qi '^content-type: text/plain; charset=utf-8' headers.txt
		grep -qi '^x-go-pprof: 1' headers.txt
	}
	bad 400 "seconds: not a number: abc" "${URL}profile?seconds=abc"
	bad 400 "seconds: not a whole number: 1.5" "${URL}profile?seconds=1.5"
	bad 400 "seconds: must be at least 1: 0" "${URL}profile?seconds=0"
	bad 400 "seconds: must be at least 1: -3" "${URL}last?seconds=-3"
	bad 400 "seconds: 61 is more than this server's most, 60" "${URL}profile?seconds=61"
	bad 400 "seconds: 51 is more than this server keeps, 50" "${URL}last?seconds=51"
	bad 400 "seconds: 99999999999999999999999 is more than this server's most, 60" \
		"${URL}profile?seconds=99999999999999999999999"
	bad 400 "seconds: not a number: ?????" "${URL}profile?seconds=%01%02%0a%0d%7f"
	bad 400 "weight: 'cycles' is not a weight; the weights are: cpu, off-cpu, wall" \
		"${URL}profile?seconds=30&weight=cycles"
	bad 400 "weight=off-cpu: a report by off-CPU time needs off-CPU intervals, and this spool has none" \
		"${URL}profile?seconds=30&weight=off-cpu"
	bad 404 "not found: prof serve answers /debug/pprof/, /debug/pprof/profile and /debug/pprof/last" \
		"${URL}heap"
	bad 404 "not found: prof serve answers /debug/pprof/, /debug/pprof/profile and /debug/pprof/last" \
		"http://127.0.0.1:$PORT/"
	bad 405 "method not allowed: prof serve answers GET and HEAD" "${URL}profile" -X POST -d x=1
	grep -qi '^allow: GET, HEAD' headers.txt
	bad 405 "method not allowed: prof serve answers GET and HEAD" "${URL}profile" -X DELETE
	bad 400 "a GET or HEAD request has no body" "${URL}last" -X GET -d x=1
	# HEAD: the headers of a profile, at once
	run -0 code "${URL}profile?seconds=60" -I
	assert_equal "$output" 200
	grep -qi '^content-type: application/octet-stream' headers.txt
	# the index lists both
	run -0 code "$URL"
	assert_equal "$output" 200
	grep -q 'href="profile?seconds=30"' body.txt
	grep -q 'href="last?seconds=30"' body.txt
	# and the recording went on: a profile of the last second
	run -0 code "${URL}last?seconds=1"
	assert_equal "$output" 200
	grep -qi '^content-disposition: attachment; filename="profile"' headers.txt
	[ "$(head -c 2 body.txt | od -An -tx1 | tr -d ' ')" = 1f8b ]
	stop_serve
	assert_equal "$rc" 0
	run cat serve.err
	assert_line --regexp '^prof: served 1 profile \([0-9.]+ KiB\) in 18 requests: 15 refused, 0 failed, 0 connections cut for taking too long$'
}

@test "hostile clients: truncated requests, a 100 KiB header, garbage, 50 connections at once; answered after each, alive" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	start_target "$T/ladder" 120
	start_serve -p "$TARGET"
	run -0 hostile truncated
	assert_line --regexp '^truncated: [0-9]+ answers, [0-9]+ closes$'
	assert_line 'normal request: status 200, a profile with samples'
	run -0 hostile huge-header
	assert_line --regexp '^huge header: (HTTP/1\.1 431 .*|closed)$'
	assert_line 'normal request: status 200, a profile with samples'
	run -0 hostile garbage
	assert_line --regexp '^garbage: (HTTP/1\.1 400 .*|closed)$'
	assert_line 'normal request: status 200, a profile with samples'
	# 16 connections at most, 8 from one address: the others are closed at
	# once, and another address is still answered while they are held
	run -0 hostile many
	assert_line --regexp '^50 connections: (4[2-9]|50) closed at once$'
	assert_equal "$(grep -c '^normal request: status 200, a profile with samples$' <<<"$output")" 2
	kill -0 "$SERVE"
	stop_serve
	assert_equal "$rc" 0
}

@test "a client that trickles a byte a second is cut at its deadline, and others are answered meanwhile" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	start_target "$T/ladder" 120
	start_serve -v -p "$TARGET"
	run -0 hostile slow
	assert_line 'normal request: status 200, a profile with samples'
	assert_line --regexp '^slow client cut after [0-9]+ bytes$'
	grep -q '^prof: cut a connection past its deadline' serve.err
	stop_serve
	assert_regex "$(tail -n 1 serve.err)" ', 1 connection cut for taking too long$'
}

@test "a client that leaves before its seconds are over is let go" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	start_target "$T/ladder" 120
	start_serve -v -p "$TARGET"
	run -0 hostile leave
	wait_for_line serve.err '^prof: a client that asked for 30 seconds left before they were over$' 10 ||
		fail "the request went on waiting: $(cat serve.err)"
}

@test "--listen=unix:PATH answers curl --unix-socket, and the socket goes at the end" {
	require_cmd curl curl
	start_target "$T/ladder" 120
	"$PROF" serve --listen="unix:$BATS_TEST_TMPDIR/prof.sock" -p "$TARGET" 2>serve.err &
	SERVE=$!
	BG+=("$SERVE")
	wait_for_line serve.err '^prof: serving ' 60 || fail "$(cat serve.err)"
	assert_equal "$(cat serve.err)" "prof: serving unix:$BATS_TEST_TMPDIR/prof.sock"
	[ -S prof.sock ]
	run -0 curl -s -o last.pb.gz -w '%{http_code}' --unix-socket prof.sock \
		'http://localhost/debug/pprof/last?seconds=1'
	assert_equal "$output" 200
	gzip -t last.pb.gz
	stop_serve
	assert_equal "$rc" 0
	[ ! -e prof.sock ]
	# a socket left by a server that is gone is replaced
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' stale.sock
	run -0 --separate-stderr "$PROF" serve --listen="unix:$BATS_TEST_TMPDIR/stale.sock" -d 1 \
		-p "$TARGET"
	assert_equal "${stderr_lines[0]}" "prof: serving unix:$BATS_TEST_TMPDIR/stale.sock"
	# and a file that is no socket is not
	touch plain
	run -1 --separate-stderr "$PROF" serve --listen="unix:$BATS_TEST_TMPDIR/plain" -p "$TARGET"
	assert_equal "$stderr" "prof: cannot listen on unix:$BATS_TEST_TMPDIR/plain: it exists and is not a socket"
	[ -f plain ]
}

@test "a second prof serve on a port in use fails in one line, exit 1; so does an address that does not parse" {
	start_target "$T/ladder" 120
	start_serve -p "$TARGET"
	run -1 --separate-stderr "$PROF" serve --listen="127.0.0.1:$PORT" -p "$TARGET"
	assert_equal "$stderr" "prof: cannot listen on 127.0.0.1:$PORT: Address already in use"
	run -1 --separate-stderr "$PROF" serve --listen=127.0.0.1 -p "$TARGET"
	assert_equal "$stderr" "prof: invalid listen address '127.0.0.1': expected ADDRESS:PORT, [IPv6]:PORT or unix:PATH"
	run -1 --separate-stderr "$PROF" serve --listen=127.0.0.1:65536 -p "$TARGET"
	assert_equal "$stderr" "prof: invalid listen address '127.0.0.1:65536': the port is not a number from 0 to 65535"
	run -1 --separate-stderr "$PROF" serve --listen=::1:80 -p "$TARGET"
	assert_equal "$stderr" "prof: invalid listen address '::1:80': an IPv6 address goes in brackets, [ADDRESS]:PORT"
	run -1 --separate-stderr "$PROF" serve --listen=127.0.0.1:0 --dir=no-such-dir -p "$TARGET"
	assert_equal "$stderr" "prof: cannot use directory 'no-such-dir': No such file or directory"
	# none of them left a directory behind: the one there is the first's
	assert_equal "$(ls tmp | wc -l)" 1
	kill -0 "$SERVE"
}

@test "the files stay bounded: with --keep=1 --max-seconds=1 old files go as requests make new ones; none left at the end" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	start_target "$T/ladder" 120
	mkdir files
	start_serve -p "$TARGET" --keep=1 --max-seconds=1 --dir="$BATS_TEST_TMPDIR/files"
	local i most=0 n
	# each answer makes the recording go on in a new file (at most once a second)
	for ((i = 0; i < 30; i++)); do
		hostile get "/debug/pprof/last?seconds=1" >/dev/null
		ls files >>seen
		n=$(ls files | wc -l)
		if ((n > most)); then
			most=$n
		fi
		sleep 0.3
	done
	echo "files at once: $most at most, $(sort -u seen | wc -l) in all"
	# a file lasts while the span served and a margin of 2 s may need it
	[ "$most" -le 6 ] || fail "$most files at once: $(ls files)"
	[ "$(sort -u seen | wc -l)" -ge 10 ] || fail "only $(sort -u seen | wc -l) files in all"
	run grep -vE "^prof-serve-$SERVE\.[0-9]{17}$" seen
	assert_output ""
	stop_serve
	assert_equal "$rc" 0
	assert_equal "$(ls files)" ""
	# its own directory: gone with it
	assert_equal "$(ls tmp)" ""
}

@test "without -p it records the whole machine: a ladder run apart is in its profile" {
	require_cmd go golang-go
	[ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
		skip_or_fail "recording every task needs root or kernel.perf_event_paranoid <= 0"
	start_target "$T/ladder" 120
	start_serve -F 99
	pprof_raw "${URL}profile?seconds=2"
	grep -q "pid:\[$TARGET\]" raw.txt || fail "ladder (pid $TARGET) is not in the profile"
	grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ ladder_d ' raw.txt
	stop_serve
	assert_equal "$rc" 0
	assert_equal "$(ls tmp)" ""
}

@test "as nobody at paranoid 2, prof serve of the machine fails as prof record -a does, leaving nothing" {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "dropping to user nobody needs root"
	require_cmd setpriv util-linux
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] ||
		skip_or_fail "kernel.perf_event_paranoid allows CPU-wide events to everyone"
	W=$(mktemp -d /tmp/prof-serve-nobody.XXXXXX)
	chmod 755 "$W"
	cp "$PROF" "$W/prof"
	mkdir "$W/out"
	chown nobody "$W/out"
	run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all env TMPDIR="$W/out" "$W/prof" serve --listen=127.0.0.1:0 -d 1
	local out
	out=$(ls -A "$W/out")
	rm -rf "$W"
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^prof: recording every task needs kernel.perf_event_paranoid <= 0 \\(it is [0-9]\\), CAP_PERFMON or root: .*'setcap cap_perfmon,cap_sys_ptrace\\+ep prof'"
	assert_equal "$out" ""
}

@test "it ends with its processes (exit 0), and says what it served" {
	start_target "$T/ladder" 1
	"$PROF" serve --listen=127.0.0.1:0 -p "$TARGET" 2>serve.err &
	SERVE=$!
	BG+=("$SERVE")
	rc=0
	wait "$SERVE" || rc=$?
	assert_equal "$rc" 0
	run cat serve.err
	assert_line --index 0 --regexp '^prof: serving http://127\.0\.0\.1:[0-9]+/debug/pprof/$'
	assert_line 'prof: served 0 profiles (0.0 KiB) in 0 requests: 0 refused, 0 failed, 0 connections cut for taking too long'
	assert_equal "$(ls tmp)" ""
}

@test "usage errors: a command, -C or --cgroup with -p, bad --keep, --max-seconds, --max-connections" {
	run -64 --separate-stderr "$PROF" serve -- true
	assert_regex "${stderr_lines[0]}" 'prof serve takes no command'
	run -64 --separate-stderr "$PROF" serve -C 0 -p 1
	assert_regex "${stderr_lines[0]}" '-C and --cgroup are for the whole machine, not -p PID'
	run -64 --separate-stderr "$PROF" serve --keep=0
	assert_regex "${stderr_lines[0]}" "invalid --keep '0': a whole number from 1 to 86400"
	run -64 --separate-stderr "$PROF" serve --max-seconds=86401
	assert_regex "${stderr_lines[0]}" "invalid --max-seconds '86401': a whole number from 1 to 86400"
	run -64 --separate-stderr "$PROF" serve --max-connections=x
	assert_regex "${stderr_lines[0]}" "invalid --max-connections 'x': a whole number from 1 to 1024"
}
