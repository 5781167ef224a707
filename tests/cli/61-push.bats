#!/usr/bin/env bats
# prof push and prof record --push, against tests/tools/push-receiver on
# 127.0.0.1: each protocol's request as its server's contract asks (path,
# query, labels, the body decoded to the recorded stacks), failures said per
# file, and a recording's files delivered exactly once through an outage of
# the server, a server that never comes back (only the files past
# --switch-max-files dropped) and a recorder killed mid-way.
load test_helper

RECEIVER="$TOP/tests/tools/push-receiver"

setup() {
	require_cmd python3 python3
	require_cmd jq jq
	cd "$BATS_TEST_TMPDIR"
	# the receiver is local: no proxy of the environment in between
	export no_proxy='*' NO_PROXY='*'
}

teardown() {
	stop_receiver
	kill_background
}

# start_receiver [PORT]: push-receiver on 127.0.0.1 (PORT, else one the
# kernel picks), logging to ./log, its port in $PORT, its pid in $RPID
start_receiver() {
	local i
	rm -f port
	"$RECEIVER" --port "${1:-0}" --port-file port --log log --dir saved --control control &
	RPID=$!
	BG+=($!)
	for ((i = 0; i < 300; i++)); do
		[ -s port ] && break
		sleep 0.1
	done
	[ -s port ] || fail "the receiver did not start"
	PORT=$(cat port)
}

stop_receiver() {
	[ -n "${RPID:-}" ] || return 0
	kill "$RPID" 2>/dev/null || true
	wait "$RPID" 2>/dev/null || true
	RPID=
}

# accepted: the requests the receiver answered 200, one JSON object a line
accepted() {
	jq -c 'select(.status == 200)' log
}

# a spool of ladder's functions, without perf events
synthetic() {
	"$SPOOLGEN" --elf "$BUILD/targets/ladder" --samples 300 "$@"
}

# wait_accepted N: until the receiver accepted N requests, for at most 60 s
wait_accepted() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(accepted 2>/dev/null | wc -l)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "prof push: each protocol's request is what its server reads, the recorded stacks in it" {
	require_perf_events
	local host pid want proto url path
	"$PROF" record -q -o ladder.spool -- "$BUILD/targets/ladder" 1
	start_receiver
	host=$(hostname)
	pid=$("$PROF" report -q --by-process --format=folded ladder.spool | sed -n '1s/^ladder-\([0-9]*\);.*/\1/p')
	want=$("$PROF" report -q --format=json ladder.spool | jq .samples)
	for proto in ingest push parca; do
		case $proto in
		ingest) url=http://127.0.0.1:$PORT path=/ingest ;;
		push) url="http://127.0.0.1:$PORT/ --protocol=push" path=/push.v1.PusherService/Push ;;
		parca) url=http://127.0.0.1:$PORT/api/profiles/writeraw path=/api/profiles/writeraw ;;
		esac
		# shellcheck disable=SC2086 # the URL and its option
		run -0 --separate-stderr "$PROF" push --label=env=test $url ladder.spool
		assert_equal "$stderr" "prof: pushed 1 file ($want samples, $(tail -1 log | jq .len) B) to http://127.0.0.1:$PORT$path ($proto)"
		run -0 jq -c 'del(.time, .headers, .query, .len, .n, .sha256, .saved, .pprof)' <(tail -1 log)
		assert_output "{\"method\":\"POST\",\"path\":\"$path\",\"protocol\":\"$proto\",\"fault\":null,\"errors\":[],\"labels\":{$(
			case $proto in
			ingest) echo "\"comm\":\"ladder\",\"env\":\"test\",\"host\":\"$host\",\"pid\":\"$pid\",\"service_name\":\"ladder\",\"__name__\":\"process_cpu\"" ;;
			*) echo "\"__name__\":\"process_cpu\",\"comm\":\"ladder\",\"env\":\"test\",\"host\":\"$host\",\"pid\":\"$pid\",\"service_name\":\"ladder\"" ;;
			esac)},\"status\":200}"
		# the profile: every sample, ladder's stack on most, CPU time
		assert_equal "$(tail -1 log | jq .pprof.samples)" "$want"
		assert_equal "$(tail -1 log | jq -c .pprof.sample_types)" '["samples/count","cpu/nanoseconds"]'
		run -0 jq -r '.pprof.folded | to_entries[] | "\(.key) \(.value)"' <(tail -1 log)
		assert_line --regexp '^_start;__libc_start_main;__libc_start_call_main;main;ladder_a;ladder_b;ladder_c;ladder_d [0-9]+$'
	done
	# ingest: the file's time in whole seconds (from its start to its end,
	# the end by the wall clock, within a second of the start's plus the
	# duration), its rate, in the query
	run -0 jq -r 'select(.protocol == "ingest") | .query | "\(.from) \(.until) \(.format) \(.sampleRate) \(.spyName)"' log
	read -r start end < <("$PROF" report -q --format=json ladder.spool |
		jq -r '.metadata.wall_start_ns as $s | "\($s / 1e9 | floor) \(($s + .counters.duration_ns) / 1e9 | ceil)"')
	assert_output --regexp "^$start ($((end - 1))|$end|$((end + 1))) pprof 999 prof\$"
	# pushed once to each endpoint: again, nothing is sent
	run -0 --separate-stderr "$PROF" push -v "http://127.0.0.1:$PORT" ladder.spool
	assert_equal "${stderr_lines[0]}" "prof: 'ladder.spool' was pushed to http://127.0.0.1:$PORT/ingest before, skipping"
	assert_equal "$(wc -l <log)" 3
	assert_equal "$(wc -l <.ladder.spool.pushed)" 3
}

@test "prof push: the profile pushed is one go tool pprof reads, with ladder's functions" {
	require_cmd go golang-go
	synthetic a.spool
	start_receiver
	run -0 "$PROF" push -q "http://127.0.0.1:$PORT/push.v1.PusherService/Push" a.spool
	run -0 go tool pprof -raw "$(jq -r .saved log)"
	assert_line 'PeriodType: cpu nanoseconds'
	assert_line --regexp '^samples/count cpu/nanoseconds'
	assert_line --regexp '^ +[0-9]+: 0x[0-9a-f]+ M=1 ladder_d '
	# the same numbers as the receiver's own decoding (go's leaves out the
	# samples without a stack: spoolgen has 1 in 40 so)
	total=$(go tool pprof -raw "$(jq -r .saved log)" | awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { n += $1 } END { print n }')
	assert_equal "$total" "$(jq '.pprof.folded | to_entries | map(select(.key != "") | .value) | add' log)"
	assert_equal "$(jq '.pprof.folded[""]' log)" 7
}

@test "prof push: a file refused, hung up on or stalled fails alone, a line naming it, exit 1" {
	synthetic a.spool
	synthetic --seed 2 b.spool
	synthetic --seed 3 c.spool
	start_receiver
	url=http://127.0.0.1:$PORT
	echo '503 1' >control
	run -1 --separate-stderr "$PROF" push "$url" a.spool b.spool
	assert_equal "${stderr_lines[0]}" "prof: cannot push 'a.spool' to $url/ingest: the server answered HTTP 503: fault 503"
	assert_regex "${stderr_lines[1]}" "^prof: pushed 1 file \\(300 samples, [0-9]+ B\\) to $url/ingest \\(ingest\\); 1 failed\$"
	echo 'close 1' >control
	run -1 --separate-stderr "$PROF" push --protocol=parca "$url" a.spool
	assert_equal "${stderr_lines[0]}" "prof: cannot push 'a.spool' to $url/api/profiles/writeraw: the server closed the connection without an answer"
	echo 'stall 1 5' >control
	run -1 --separate-stderr "$PROF" push --timeout=0.5 "$url" c.spool
	assert_equal "${stderr_lines[0]}" "prof: cannot push 'c.spool' to $url/ingest: no answer within 500 ms"
	# a file that is no spool
	echo nonsense >d.spool
	run -1 --separate-stderr "$PROF" push "$url" d.spool
	assert_regex "${stderr_lines[0]}" "^prof: .*'d.spool'.*"
	stop_receiver
	run -1 --separate-stderr "$PROF" push "$url" a.spool
	assert_regex "${stderr_lines[0]}" "^prof: cannot push 'a.spool' to $url/ingest: cannot connect: "
	# the requests the receiver took in the end: b.spool's only
	assert_equal "$(accepted | jq -r .protocol)" ingest
}

@test "prof push and record --push: what cannot be sent is a usage error" {
	run -64 --separate-stderr "$PROF" push
	assert_equal "${stderr_lines[0]}" "prof push: no URL to push to (prof push URL FILE...)"
	run -64 --separate-stderr "$PROF" push http://127.0.0.1:1
	assert_equal "${stderr_lines[0]}" "prof push: no file to push (prof push URL FILE...)"
	run -64 --separate-stderr "$PROF" push ftp://h/ingest x.spool
	assert_equal "${stderr_lines[0]}" "prof push: push URL 'ftp://h/ingest' does not begin with http:// or https://"
	run -64 --separate-stderr "$PROF" push --protocol=parca http://h:4040/ingest x.spool
	assert_equal "${stderr_lines[0]}" "prof push: push URL 'http://h:4040/ingest' is an endpoint of the ingest protocol, not of parca"
	run -64 --separate-stderr "$PROF" push --protocol=otlp http://h x.spool
	assert_equal "${stderr_lines[0]}" "prof push: --protocol: 'otlp' is not a push protocol; the protocols are: auto, ingest, push, parca"
	run -64 --separate-stderr "$PROF" push --label=host http://h x.spool
	assert_equal "${stderr_lines[0]}" "prof push: label 'host' is not NAME=VALUE"
	run -64 --separate-stderr "$PROF" push --label=__name__=x http://h x.spool
	assert_equal "${stderr_lines[0]}" "prof push: label '__name__=x': names beginning with __ are the server's"
	run -64 --separate-stderr "$PROF" push --service='my app' http://h x.spool
	assert_equal "${stderr_lines[0]}" "prof push: service name 'my app': only letters, digits and _ . - / (Pyroscope's application names)"
	run -64 --separate-stderr "$PROF" push --timeout=0 http://h x.spool
	assert_equal "${stderr_lines[0]}" "prof push: invalid --timeout '0': a number of seconds, from 0.001 to 3600"
	run -64 --separate-stderr "$PROF" record --push=http://h -- true
	assert_equal "${stderr_lines[0]}" "prof record: --push needs --switch-output: each file is pushed once finished"
	run -64 --separate-stderr "$PROF" record --switch-output=1s --label=a=b -- true
	assert_equal "${stderr_lines[0]}" "prof record: --push-protocol, --push-timeout, --service and --label need --push=URL"
	run -64 --separate-stderr "$PROF" record --switch-output=1s --push=http://h --push-protocol=x -- true
	assert_equal "${stderr_lines[0]}" "prof record: --push-protocol: 'x' is not a push protocol; the protocols are: auto, ingest, push, parca"
}

@test "record --push through an outage of the server: every file delivered exactly once, none left" {
	require_perf_events
	start_receiver
	"$PROF" record -v --switch-output=1s --switch-max-files=20 --push="http://127.0.0.1:$PORT" \
		-o r.spool -- "$BUILD/targets/ladder" 9 2>rec.err &
	BG+=($!)
	rec=$!
	wait_accepted 1 || fail "no file pushed while the server was up"
	# down for 3 s: connections refused, then up again on the same port
	stop_receiver
	sleep 3
	start_receiver "$PORT"
	wait "$rec"
	files=$(sed -n 's/^prof: [0-9]* samples, .* (\([0-9]*\) files)$/\1/p' rec.err)
	[ -n "$files" ] || fail "no summary: $(cat rec.err)"
	# every file once: as many accepted as files, no two alike, none left
	assert_equal "$(accepted | wc -l)" "$files"
	assert_equal "$(accepted | jq -r '.sha256[0]' | sort -u | wc -l)" "$files"
	assert_equal "$(ls r.spool.* 2>/dev/null | wc -l)" 0
	run -0 grep -E "^prof: pushed $files files to http://127.0.0.1:$PORT/ingest \\(ingest\\): [1-9][0-9]* retr(y|ies), 0 dropped\$" rec.err
	# the outage said once as a warning, the retries after it at -v
	assert_equal "$(grep -c '^prof: warning: cannot push .*; trying again in 1.0 s, the recording going on$' rec.err)" 1
	# all samples arrived: the files' sum is the recording's
	assert_equal "$(accepted | jq -s 'map(.pprof.samples) | add')" \
		"$(sed -n 's/^prof: \([0-9]*\) samples, .*/\1/p' rec.err)"
	# figures for the report: files, retries, the longest a file waited
	echo "# outage: $files files, $(sed -n 's/.*: \([0-9]*\) retr.*/\1/p' rec.err) retries, $(sed -n 's/.*a file waited \([0-9.]*\) s.*/\1/p' rec.err) s at the most from a file's end to its delivery" >&3
}

@test "record --push to a server that never comes back: only past --switch-max-files dropped, the rest left for prof push" {
	require_perf_events
	start_receiver
	stop_receiver
	url=http://127.0.0.1:$PORT
	run -0 --separate-stderr "$PROF" record --switch-output=1s --switch-max-files=3 --push="$url" \
		-o n.spool -- "$BUILD/targets/ladder" 5
	files=$(sed -n 's/^prof: [0-9]* samples, .* (\([0-9]*\) files)$/\1/p' <<<"$stderr")
	((files >= 5)) || fail "$files files: $stderr"
	# the newest three stay, unsent; the others were dropped, each said
	assert_equal "$(ls n.spool.* | wc -l)" 3
	assert_equal "$(grep -c "^prof: warning: dropped 'n.spool.[0-9]*' unsent: more than 3 files of the recording (max_files)\$" <<<"$stderr")" $((files - 3))
	assert_regex "$stderr" "prof: warning: 3 files of the recording left unsent in '\\.': cannot push 'n\\.spool\\.[0-9]+' to $url/ingest: cannot connect: [^
]*; prof push or the next prof record --push sends them"
	assert_regex "$stderr" "prof: pushed 0 files to $url/ingest \\(ingest\\): [1-9][0-9]* retr(y|ies), $((files - 3)) dropped, 3 left unsent"
	# the server back: prof push sends the three left, once
	start_receiver "$PORT"
	run -0 --separate-stderr "$PROF" push "$url" n.spool.*
	assert_regex "$stderr" "^prof: pushed 3 files \\([0-9]+ samples, [0-9.]+ [KiB ]*B\\) to $url/ingest \\(ingest\\)\$"
	run -0 --separate-stderr "$PROF" push "$url" n.spool.*
	assert_regex "$stderr" "^prof: pushed 0 files "
	assert_equal "$(accepted | wc -l)" 3
	assert_equal "$(accepted | jq -r '.sha256[0]' | sort -u | wc -l)" 3
}

@test "a recorder killed mid-way: the next record --push at its path sends what it left, once" {
	require_perf_events
	start_receiver
	url=http://127.0.0.1:$PORT
	"$PROF" record -q --switch-output=1s --switch-max-files=10 --push="$url" -o k.spool -- \
		"$BUILD/targets/ladder" 4 &
	BG+=($!)
	wait_accepted 2 || fail "no files pushed"
	# half-way between two files' pushes (one a second): none in flight
	sleep 0.5
	kill -9 "${BG[-1]}"
	wait "${BG[-1]}" 2>/dev/null || true
	left=$(ls k.spool.* | wc -l)
	before=$(accepted | wc -l)
	((left >= 1)) || fail "the killed recorder left no file"
	# the file it was writing has no trailer: cut short, sent as it is
	run -0 --separate-stderr "$PROF" record --switch-output=1s --switch-max-files=10 --push="$url" \
		-o k.spool -- "$BUILD/targets/ladder" 1.5
	files=$(sed -n 's/^prof: [0-9]* samples, .* (\([0-9]*\) files)$/\1/p' <<<"$stderr")
	# each file left and each of its own pushed (or found without a sample:
	# killed before its first block, the cut file may have none)
	summary=$(grep '^prof: pushed ' <<<"$stderr")
	[[ $summary =~ ^prof:\ pushed\ ([0-9]+)\ files?\ to\ $url/ingest\ \(ingest\):\ 0\ retries,\ 0\ dropped(,\ ([0-9]+)\ empty)?$ ]] ||
		fail "summary: $summary"
	pushed=${BASH_REMATCH[1]}
	assert_equal $((pushed + ${BASH_REMATCH[3]:-0})) $((files + left))
	assert_equal "$(ls k.spool.* 2>/dev/null | wc -l)" 0
	assert_equal "$(accepted | wc -l)" $((before + pushed))
	assert_equal "$(accepted | jq -r '.sha256[0]' | sort -u | wc -l)" $((before + pushed))
}
