#!/usr/bin/env bats
# prof report's filters, for every format, on a synthetic spool whose
# frames are real file offsets in the ladder target: 3000 samples of one
# process (pid 4242, comm "ladder", then "relaunched" from sample 2000 on)
# in three threads taking turns (tids 4242, 4243, 4244), one sample every
# 1.001 ms from the start of the recording; every third distinct stack ends
# in a kernel frame (do_syscall_64).
load test_helper

LADDER="$BUILD/targets/ladder"
NOMATCH="prof: no sample matches the filters"

setup() {
	s=$(spool filters.spool --elf "$LADDER" --kernel --exec-at 2000)
}

# the sum of the counts of the folded lines in $output
folded_sum() {
	awk '{ n += $NF } END { print n + 0 }' <<<"$output"
}

# the folded lines of $output with a frame matching the extended regex $1
with_frame() {
	awk -v re="$1" '{
		stack = $0
		sub(/ [0-9]+$/, "", stack)
		n = split(stack, f, ";")
		for (i = 1; i <= n; i++)
			if (f[i] ~ re) {
				print
				next
			}
	}' <<<"$output"
}

@test "folded without filters: every sample, some stacks through the kernel" {
	run -0 "$PROF" report -q --format=folded "$s"
	assert_equal "$(folded_sum)" 3000
	assert [ -n "$(with_frame '^do_syscall_64$')" ]
}

@test "--pid keeps the samples of the pids listed, and only those" {
	run -0 "$PROF" report -q --format=folded --pid=1,4242 "$s"
	assert_equal "$(folded_sum)" 3000
	run -1 --separate-stderr "$PROF" report -q --format=folded --pid=4243 "$s"
	assert_output ""
	assert_equal "$stderr" "$NOMATCH"
}

@test "--tid keeps the threads listed" {
	run -0 "$PROF" report -q --format=folded --tid=4243 "$s"
	assert_equal "$(folded_sum)" 1000
	run -0 "$PROF" report -q --format=folded --tid=4242,4244 "$s"
	assert_equal "$(folded_sum)" 2000
	run -0 "$PROF" report -q --format=folded --by-thread --tid=4244 "$s"
	assert_equal "$(awk -F';' '{ print $1 }' <<<"$output" | sort -u)" "worker-2-4244"
}

@test "--comm matches the thread name, or the process comm at the sample" {
	run -0 "$PROF" report -q --format=folded --comm=worker-2 "$s"
	assert_equal "$(folded_sum)" 1000
	# the process was "ladder" for its first 2000 samples, "relaunched" after
	run -0 "$PROF" report -q --format=folded --comm=relaunched "$s"
	assert_equal "$(folded_sum)" 1000
	run -0 "$PROF" report -q --format=folded --comm=relaunched,worker-one "$s"
	assert_equal "$(folded_sum)" 1667
	run -1 --separate-stderr "$PROF" report -q --format=folded --comm=nosuch "$s"
	assert_equal "$stderr" "$NOMATCH"
}

@test "--time keeps the samples of a window, either end open" {
	run -0 "$PROF" report -q --format=folded --time=,1 "$s"
	assert_equal "$(folded_sum)" 999
	run -0 "$PROF" report -q --format=folded --time=1, "$s"
	assert_equal "$(folded_sum)" 2001
	run -0 "$PROF" report -q --format=folded --time=0.5,1.5 "$s"
	assert_equal "$(folded_sum)" 999
	run -1 --separate-stderr "$PROF" report -q --format=folded --time=10, "$s"
	assert_equal "$stderr" "$NOMATCH"
}

@test "--no-kernel cuts the kernel frames and keeps every sample" {
	run -0 "$PROF" report -q --format=folded --no-kernel "$s"
	assert_equal "$(folded_sum)" 3000
	assert_equal "$(with_frame '^do_syscall_64$')" ""
	# what was under the kernel frame is still there
	assert [ -n "$(with_frame '^ladder_d$')" ]
}

@test "--focus keeps only the stacks through a matching function" {
	run -0 "$PROF" report -q --format=folded "$s"
	local want
	want=$(with_frame '^ladder_[cd]$')
	run -0 "$PROF" report -q --format=folded '--focus=^ladder_[cd]$' "$s"
	assert_equal "$output" "$want"
	assert [ "$(folded_sum)" -lt 3000 ]
	assert [ "$(folded_sum)" -gt 0 ]
}

@test "--exclude drops the stacks through a matching function" {
	run -0 "$PROF" report -q --format=folded '--exclude=^ladder_[cd]$' "$s"
	assert_equal "$(with_frame '^ladder_[cd]$')" ""
	local kept
	kept=$(folded_sum)
	run -0 "$PROF" report -q --format=folded '--focus=^ladder_[cd]$' "$s"
	assert_equal $((kept + $(folded_sum))) 3000
}

@test "--focus matches kernel frames too, and --no-kernel comes first" {
	run -0 "$PROF" report -q --format=folded --focus=do_syscall "$s"
	assert [ "$(folded_sum)" -gt 0 ]
	assert_equal "$(with_frame '^do_syscall_64$')" "$output"
	run -1 --separate-stderr "$PROF" report -q --format=folded --no-kernel --focus=do_syscall "$s"
	assert_equal "$stderr" "$NOMATCH"
}

@test "filters apply to top and tree too, their percents of the samples kept" {
	run -0 --separate-stderr "$PROF" report -q --tid=4243 --limit=0 "$s"
	assert_line --regexp '^ +[0-9.]+% +[0-9.]+% +[0-9]+  main +ladder$'
	local self
	self=$(sed -n '/^  self%/,$p' <<<"$output" | awk 'NR > 1 { n += $3 } END { print n }')
	assert_equal "$self" 1000
	run -0 "$PROF" report -q --format=tree --exclude=ladder "$s"
	refute_output --partial "ladder_a"
	run -1 --separate-stderr "$PROF" report -q --format=tree --pid=7 "$s"
	assert_equal "$stderr" "$NOMATCH"
}

@test "filters combine: a sample must pass them all" {
	run -0 "$PROF" report -q --format=folded --tid=4243 --time=,1 "$s"
	assert_equal "$(folded_sum)" 333
}

@test "a bad filter is a usage error" {
	run -64 "$PROF" report --pid=abc "$s"
	assert_output --partial "invalid pid list 'abc'"
	run -64 "$PROF" report --time=5 "$s"
	assert_output --partial "--time: invalid time range '5'"
	run -64 "$PROF" report --time=2,1 "$s"
	run -64 "$PROF" report '--focus=(' "$s"
	assert_output --partial "--focus: invalid focus regular expression"
}

# ---- --format=json ------------------------------------------------------

# run python3 code $1 on the JSON document in $output (json.load of stdin as
# d), with the rest of the arguments in sys.argv[1:]
json() {
	local code=$1

	shift
	python3 -c "import json, sys; d = json.load(sys.stdin); $code" "$@" <<<"$output"
}

@test "json: one valid document with the documented keys" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 --separate-stderr "$PROF" report --format=json "$s"
	python3 -m json.tool <<<"$output" >/dev/null
	assert_equal "$(json 'print(sorted(d))')" \
		"['counters', 'first_ns', 'functions', 'functions_left_out', 'last_ns', 'metadata', 'modules', 'samples', 'schema', 'stacks', 'total', 'unit', 'warnings', 'weight']"
	assert_equal "$(json 'print(d["weight"], d["unit"], d["total"])')" "cpu samples 3000"
	assert_equal "$(json 'print(d["schema"], d["samples"], d["counters"]["samples"])')" \
		"prof-report/1 3000 3000"
	assert_equal "$(json 'print(d["metadata"]["argv"], d["metadata"]["event"])')" \
		"['./ladder', '--iterations', '3000'] cpu-clock"
	assert_equal "$(json 'print(d["counters"]["unwind_errors"])')" "{'stack-copy': 195}"
	# the warnings of stderr are in the document too
	assert_equal "$(json 'print(d["warnings"][0])')" "${stderr#prof: warning: }"
}

@test "json: functions with self and total, stacks root to leaf, both summing to the samples" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=json "$s"
	assert_equal "$(json 'print(sum(f["self"] for f in d["functions"]))')" 3000
	assert_equal "$(json 'print(sum(s["count"] for s in d["stacks"]))')" 3000
	assert_equal "$(json 'f = d["functions"][0]; print(f["name"], f["module"], f["self"] <= f["total"])')" \
		"do_syscall_64 [kernel] True"
	assert_equal "$(json 'print(next(f["total"] for f in d["functions"] if f["name"] == "_start") > 0)')" True
	# the same stacks as folded, root first
	local folded
	folded=$("$PROF" report -q --format=folded "$s")
	assert_equal "$(json 'print("\n".join(";".join(s["frames"]) + " " + str(s["count"]) for s in d["stacks"]))')" \
		"$folded"
}

@test "json: the filters apply, and names are escaped" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=json --tid=4243 "$s"
	assert_equal "$(json 'print(d["samples"], sum(s["count"] for s in d["stacks"]))')" "1000 1000"
	# quotes, a backslash and a tab, in the spool's name
	local odd="$BATS_TEST_TMPDIR/a \"b\" \\ c"$'\t'"d.spool"
	cp "$s" "$odd"
	run -0 "$PROF" report -q --format=json "$odd"
	assert_equal "$(json 'print(d["metadata"]["spool"] == sys.argv[1])' "$odd")" True
}

@test "json: --limit and --min-percent trim the functions, never the stacks" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=json "$s"
	local all
	all=$(json 'print(len(d["functions"]))')
	assert_equal "$(json 'print(d["functions_left_out"], sum(f["self"] for f in d["functions"]))')" "0 3000"
	run -0 "$PROF" report -q --format=json --limit=2 "$s"
	assert_equal "$(json 'print(len(d["functions"]), d["functions_left_out"] + 2)')" "2 $all"
	assert_equal "$(json 'print(sum(s["count"] for s in d["stacks"]))')" 3000
	run -0 "$PROF" report -q --format=json --min-percent=50 "$s"
	assert_equal "$(json 'print(all(f["total"] >= 1500 for f in d["functions"]), d["functions_left_out"] > 0, len(d["functions"]) > 0)')" "True True True"
}

@test "json cannot split by thread" {
	run -1 --separate-stderr "$PROF" report -q --format=json --by-thread "$s"
	assert_equal "$stderr" "prof: the json format does not split by thread or process"
}

# ---- --format=perf-script -----------------------------------------------

# fold perf script text on stdin as stackcollapse-perf.pl does (functions
# without their +0xOFF, root first; a sample without frames "[empty stack]")
collapse() {
	awk '
		/^[^\t]/ { n = 0; in_sample = 1; next }
		/^\t/ {
			line = $0
			sub(/^\t *[0-9a-f]+ /, "", line)
			sub(/ \([^()]*\)$/, "", line)
			sub(/\+0x[0-9a-f]+$/, "", line)
			f[++n] = line
			next
		}
		/^$/ && in_sample { fold() }
		function fold(   s, i) {
			s = n ? f[n] : "[empty stack]"
			for (i = n - 1; i >= 1; i--)
				s = s ";" f[i]
			count[s]++
			in_sample = 0
		}
		# $(...) took the last empty line away
		END {
			if (in_sample)
				fold()
			for (s in count)
				print s, count[s]
		}' | LC_ALL=C sort
}

@test "perf-script: a sample a header line, frames leaf first, an empty line after" {
	run -0 --separate-stderr "$PROF" report --format=perf-script "$s"
	assert_equal "$(grep -c '^[^[:space:]]' <<<"$output")" 3000
	assert_equal "$("$PROF" report -q --format=perf-script "$s" | grep -c '^$')" 3000
	assert_line --index 0 --regexp '^ladder +4242/4242 +1000\.001001: +1001001 cpu-clock: $'
	assert_line --regexp $'^\t +[0-9a-f]+ ladder_d\\+0x[0-9a-f]+ \\(.*/targets/ladder\\)$'
	assert_line --regexp $'^\tffffffff81000100 do_syscall_64\\+0x100 \\(\\[kernel\\.kallsyms\\]\\)$'
	assert_line --regexp '^worker-one +4242/4243 '
	# the first frame of the first sample is its leaf, _start its last
	assert_equal "$(sed -n '2p' <<<"$output" | grep -c '_start')" 0
	assert_equal "$(awk 'NR > 1 && /^$/ { print prev; exit } { prev = $0 }' <<<"$output" | grep -c '_start+')" 1
	assert_equal "$stderr" "prof: warning: 9.0% of stacks are incomplete: callers may be missing"
}

@test "perf-script folds (as stackcollapse-perf.pl does) into the folded view" {
	run -0 "$PROF" report -q --format=folded "$s"
	local folded=$output
	run -0 "$PROF" report -q --format=perf-script "$s"
	assert_equal "$(collapse <<<"$output")" "$(LC_ALL=C sort <<<"$folded")"
}

@test "perf-script takes the filters" {
	run -0 "$PROF" report -q --format=perf-script --tid=4244 --no-kernel "$s"
	assert_equal "$(grep -c '^[^[:space:]]' <<<"$output")" 1000
	assert_equal "$(grep -c '^worker-2 ' <<<"$output")" 1000
	refute_output --partial "do_syscall_64"
	run -0 "$PROF" report -q --format=folded --tid=4244 --no-kernel "$s"
	local folded=$output
	run -0 "$PROF" report -q --format=perf-script --tid=4244 --no-kernel "$s"
	assert_equal "$(collapse <<<"$output")" "$(LC_ALL=C sort <<<"$folded")"
	run -1 --separate-stderr "$PROF" report -q --format=perf-script --comm=nosuch "$s"
	assert_output ""
	assert_equal "$stderr" "$NOMATCH"
}

# ---- --format=pprof -----------------------------------------------------

# go tool pprof, with a home and a build cache of the test's own
require_go() {
	command -v go >/dev/null || skip_or_fail "go is not installed (golang-go)"
	export HOME="$BATS_TEST_TMPDIR/home" GOCACHE="$BATS_TEST_TMPDIR/gocache"
	mkdir -p "$HOME"
}

@test "pprof: gzip'd, and go tool pprof -top reads it with every sample" {
	require_go
	"$PROF" report -q --format=pprof "$s" >"$BATS_TEST_TMPDIR/p.pb.gz"
	run -0 gzip -t "$BATS_TEST_TMPDIR/p.pb.gz"
	run -0 go tool pprof -top -nodecount=5 "$BATS_TEST_TMPDIR/p.pb.gz"
	assert_line "Type: cpu"
	# 3000 samples of 1001001 ns
	assert_line --regexp '^Duration: .*Total samples = 3003ms \( *100%\)$'
	assert_line --regexp '^ +[0-9.]+ms +[0-9.]+% +[0-9.]+% +[0-9.]+ms +[0-9.]+% +do_syscall_64$'
	assert_line --regexp '^ +[0-9.]+ms +[0-9.]+% +[0-9.]+% +[0-9.]+ms +[0-9.]+% +main$'
	# sample counts too
	run -0 go tool pprof -top -sample_index=samples "$BATS_TEST_TMPDIR/p.pb.gz"
	assert_line --regexp '^Duration: .*Total samples = 3000 *$'
}

@test "pprof: -traces shows stacks leaf first, with thread, tid and pid labels" {
	require_go
	"$PROF" report -q --format=pprof --tid=4244 "$s" >"$BATS_TEST_TMPDIR/p.pb.gz"
	run -0 go tool pprof -traces "$BATS_TEST_TMPDIR/p.pb.gz"
	assert_line --regexp '^ +thread: +worker-2$'
	assert_line --regexp '^ +tid: +4244$'
	assert_line --regexp '^ +pid: +4242$'
	refute_line --regexp '^ +tid: +4243$'
	# a trace of the full ladder: leaf first, _start last
	assert_equal "$(awk '/ladder_d$/ { getline c; getline b; getline a; getline m; getline s;
		print $NF, c, b, a, m, s; exit }' <<<"$output" | tr -s ' ')" \
		"ladder_d ladder_c ladder_b ladder_a main _start"
}

@test "pprof of a recording of the ladder: its leaf is the top function" {
	require_go
	require_perf_events
	cd "$BATS_TEST_TMPDIR"
	"$PROF" record -q -o l.spool -- "$BUILD/targets/ladder" 1
	"$PROF" report -q --format=pprof l.spool >l.pb.gz
	run -0 go tool pprof -top -nodecount=5 l.pb.gz
	assert_equal "$(awk '/ flat%/ { getline; print $NF; exit }' <<<"$output")" ladder_d
	assert_line --regexp '^Build ID: [0-9a-f]{40}$'
}

@test "pprof takes the filters, and says when none matches" {
	require_go
	"$PROF" report -q --format=pprof --no-kernel --focus=ladder_d "$s" >"$BATS_TEST_TMPDIR/p.pb.gz"
	run -0 go tool pprof -top -sample_index=samples "$BATS_TEST_TMPDIR/p.pb.gz"
	refute_output --partial do_syscall_64
	assert_line --regexp ' ladder_d$'
	refute_line --regexp '^Showing nodes accounting for 3000, '
	run -1 --separate-stderr "$PROF" report -q --format=pprof --pid=1 "$s"
	assert_output ""
	assert_equal "$stderr" "$NOMATCH"
}

# ---- gecko ---------------------------------------------------------------

# gecko_check FILE: the Gecko profile at FILE (gzip'd or not) holds
# together as the Firefox Profiler reads it; prints, a line each, the
# samples of each thread "pid tid name count", then each sample's stack
# root first, function names only, as folded counts them
gecko_check() {
	python3 - "$1" <<-'PY'
	import collections, gzip, json, sys
	raw = open(sys.argv[1], "rb").read()
	d = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
	m = d["meta"]
	assert m["version"] == 24 and m["interval"] > 0 and m["startTime"] > 0, m
	assert d["libs"] == [] and d["processes"] == [] and d["pausedRanges"] == []
	ncat = len(m["categories"])
	pids, stacks = [], collections.Counter()
	for t in d["threads"]:
	    assert isinstance(t["pid"], int) and isinstance(t["tid"], int) and t["name"]
	    pids.append(t["pid"])
	    ss, fs, st, strs = (t["samples"], t["frameTable"], t["stackTable"], t["stringTable"])
	    assert ss["schema"] == {"stack": 0, "time": 1, "eventDelay": 2, "threadCPUDelta": 3}
	    assert fs["schema"]["location"] == 0 and fs["schema"]["category"] == 7
	    assert st["schema"] == {"prefix": 0, "frame": 1}
	    for f in fs["data"]:
	        assert 0 <= f[0] < len(strs) and 0 <= f[7] < ncat, f
	    for i, (prefix, frame) in enumerate(st["data"]):
	        assert prefix is None or 0 <= prefix < i, (i, prefix)	# a prefix before its use
	        assert 0 <= frame < len(fs["data"])
	    last = -1
	    for stack, time, delay, cpu in ss["data"]:
	        assert time >= last, (time, last)	# sorted by time
	        last = time
	        assert stack is None or 0 <= stack < len(st["data"])
	        assert cpu >= 0
	        names = []
	        while stack is not None:
	            prefix, frame = st["data"][stack]
	            names.append(strs[fs["data"][frame][0]].split(" (in ")[0])
	            stack = prefix
	        stacks[";".join(reversed(names))] += 1
	    print(t["pid"], t["tid"], t["name"], len(ss["data"]))
	# threads grouped by process: a pid's threads side by side
	assert all(p not in pids[:i] or pids[i - 1] == p for i, p in enumerate(pids)), pids
	for k, n in sorted(stacks.items()):
	    print(k, n)
	PY
}

@test "gecko: a thread object per thread, tables that hold together, every sample" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	"$PROF" report -q --format=gecko -o "$BATS_TEST_TMPDIR/g.json" "$s"
	run -0 gecko_check "$BATS_TEST_TMPDIR/g.json"
	# three threads of pid 4242, their samples summing to the spool's
	assert_equal "$(grep -cE '^4242 424[234] ' <<<"$output")" 3
	assert_equal "$(awk '/^4242 424[234] / { n += $NF } END { print n }' <<<"$output")" 3000
	# the same stacks as folded, root first
	run -0 "$PROF" report -q --format=folded "$s"
	local folded=$output
	run -0 gecko_check "$BATS_TEST_TMPDIR/g.json"
	assert_equal "$(grep -vE '^4242 ' <<<"$output" | sort)" "$(sort <<<"$folded")"
	# gzip'd when -o names a .gz file; filters apply
	"$PROF" report -q --format=gecko --tid=4243 -o "$BATS_TEST_TMPDIR/g.json.gz" "$s"
	run -0 gecko_check "$BATS_TEST_TMPDIR/g.json.gz"
	assert_line --regexp '^4242 4243 [^ ]+ 1000$'
	refute_line --regexp '^4242 4244 '
}

@test "gecko of an off-CPU recording: the waits as samples of the stacks that waited" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	require_perf_events
	cd "$BATS_TEST_TMPDIR"
	"$PROF" record -q --off-cpu -o w.spool -- "$BUILD/targets/waiter" 0.3 >/dev/null
	"$PROF" report -q --format=gecko --weight=wall -o w.json w.spool
	run -0 gecko_check w.json
	# a sleep of 0.3 s: about 300 samples of the stack that slept, ending in [blocked]
	local blocked
	blocked=$(awk '/;\[blocked\] [0-9]+$/ { n += $NF } END { print n + 0 }' <<<"$output")
	[ "$blocked" -ge 250 ] || fail "$blocked samples of blocked stacks"
	run -0 python3 -c 'import json, sys; d = json.load(open("w.json")); print(sorted(c["name"] for c in d["meta"]["categories"]))'
	assert_output "['Kernel', 'Off-CPU', 'Other', 'User']"
}

# ---- --diff -------------------------------------------------------------

# the ladder spool without kernel frames, of another seed: its own shares
other() {
	spool other.spool --elf "$LADDER" --seed 7
}

@test "diff of a spool against itself: every change is zero" {
	run -0 --separate-stderr "$PROF" report -q --diff --fail-above=0.1 "$s" "$s"
	assert_line --index 0 --regexp '^ +base% +new% +change +function +module$'
	assert_equal "$(awk 'NR > 1 && $3 != "+0.00%"' <<<"$output")" ""
	assert_line --regexp '^ +[0-9.]+% +[0-9.]+% +\+0\.00% +do_syscall_64 +\[kernel\]$'
	assert_equal "$(awk 'NR > 1 && $1 != $2' <<<"$output")" ""
	run -0 "$PROF" report -q --diff --format=folded "$s" "$s"
	assert_equal "$(awk '$(NF - 1) != $NF' <<<"$output")" ""
	assert_equal "$(awk '{ n += $NF } END { print n }' <<<"$output")" 3000
}

@test "diff of two spools: the functions that changed, biggest change first" {
	local o
	o=$(other)
	# the base has do_syscall_64, the new one none: it changes most, down
	run -0 "$PROF" report -q --diff "$s" "$o"
	assert_line --index 1 --regexp '^ +[1-9][0-9.]*% +0\.00% +-[1-9][0-9.]*% +do_syscall_64 +\[kernel\]$'
	local f
	for f in main ladder_a ladder_b ladder_c ladder_d; do
		assert_line --regexp " $f +ladder\$"
	done
	# sorted by the size of the change
	assert_equal "$(awk 'NR > 1 { c = $3; sub(/%/, "", c); c += 0; if (c < 0) c = -c; print c }' <<<"$output" |
		sort -g -r -c && echo sorted)" sorted
	# the other way round, it grew: --fail-above catches it
	run -3 "$PROF" report -q --diff --fail-above=5 "$o" "$s"
	assert_line --index 1 --regexp '^ +0\.00% +[1-9][0-9.]*% +\+[1-9][0-9.]*% +do_syscall_64 +\[kernel\]$'
	run -0 "$PROF" report -q --diff --fail-above=50 "$o" "$s"
}

@test "diff --format=folded: each stack with its two counts, each side summing to its samples" {
	local o
	o=$(other)
	run -0 "$PROF" report -q --diff --format=folded "$s" "$o"
	assert_equal "$(awk '{ a += $(NF - 1); b += $NF } END { print a, b }' <<<"$output")" "3000 3000"
	assert_line --regexp '^_start;main;do_syscall_64 [1-9][0-9]* 0$'
	# the base's counts are its folded view
	assert_equal "$(awk '$(NF - 1) > 0 { $NF = ""; sub(/ $/, ""); print }' <<<"$output")" \
		"$("$PROF" report -q --format=folded "$s" | LC_ALL=C sort)"
}

@test "diff --format=json: shares and changes as an object" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	local o
	o=$(other)
	run -0 "$PROF" report -q --diff --format=json "$s" "$o"
	assert_equal "$(json 'print(d["schema"], d["base"]["samples"], d["new"]["samples"])')" \
		"prof-report-diff/1 3000 3000"
	assert_equal "$(json 'f = d["functions"][0]; print(f["name"], f["new_self"], f["change"] < 0)')" \
		"do_syscall_64 0 True"
	assert_equal "$(json 'print(sum(f["base_self"] for f in d["functions"]), sum(f["new_self"] for f in d["functions"]))')" \
		"3000 3000"
}

@test "diff takes the filters, on both sides" {
	run -0 "$PROF" report -q --diff --format=folded --tid=4243 "$s" "$s"
	assert_equal "$(awk '{ a += $(NF - 1); b += $NF } END { print a, b }' <<<"$output")" "1000 1000"
	run -1 --separate-stderr "$PROF" report -q --diff --focus=do_syscall "$s" "$(other)"
	assert_equal "$stderr" "prof: no sample of '$BATS_TEST_TMPDIR/other.spool' matches the filters"
}

@test "diff usage errors" {
	run -64 "$PROF" report --diff "$s"
	assert_output --partial "--diff needs two spools, BASE and NEW"
	run -64 "$PROF" report --fail-above=1 "$s"
	assert_output --partial "--fail-above needs --diff"
	run -64 "$PROF" report --diff --by-thread "$s" "$s"
	run -64 "$PROF" report --diff --format=tree "$s" "$s"
	run -64 "$PROF" report --diff --fail-above=x "$s" "$s"
	# without --diff, two spools are one recording's files: the same one twice is not
	run -1 --separate-stderr "$PROF" report "$s" "$s"
	assert_regex "$stderr" "is given twice"
}

# ---- --format=speedscope ------------------------------------------------

# check $output against the shape of speedscope's file format schema (the
# sampled-profile subset prof writes) and print "PROFILE SAMPLES WEIGHT" lines
speedscope_check() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
frames = d["shared"]["frames"]
for f in frames:
    assert isinstance(f["name"], str) and set(f) <= {"name", "file", "line", "col"}
    assert "line" not in f or isinstance(f["line"], int)
assert isinstance(d["name"], str) and isinstance(d["exporter"], str)
assert 0 <= d["activeProfileIndex"] < len(d["profiles"])
for p in d["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "nanoseconds"
    assert len(p["samples"]) == len(p["weights"])
    assert all(0 <= i < len(frames) for s in p["samples"] for i in s)
    assert p["startValue"] == 0 and p["endValue"] == sum(p["weights"])
    print(p["name"], sum(w // 1001001 for w in p["weights"]), sum(p["weights"]))
' <<<"$output"
}

@test "speedscope: a sampled profile per thread, weights in ns summing to the samples" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=speedscope "$s"
	run -0 speedscope_check
	assert_output - <<-'EOF'
	ladder (tid 4242) 1000 1001001000
	worker-one (tid 4243) 1000 1001001000
	worker-2 (tid 4244) 1000 1001001000
	EOF
}

@test "speedscope: frames root first, with file and line; --by-process and filters" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=speedscope --by-process --tid=4243,4244 "$s"
	local out=$output
	run -0 speedscope_check
	# the process exec'd before sample 2000: a profile under each comm
	assert_output - <<-'EOF'
	ladder (pid 4242) 1333 1334334333
	relaunched (pid 4242) 667 667667667
	EOF
	output=$out
	# the deepest stack reads _start, main, ladder_a .. ladder_d, do_syscall_64
	assert_equal "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
f = d["shared"]["frames"]
s = max((x for x in d["profiles"][0]["samples"] if x and f[x[0]]["name"] == "_start"), key=len)
print(" ".join(f[i]["name"] for i in s))
print(next(x["file"] for x in f if x["name"] == "ladder_d"))' <<<"$output")" \
		"$(printf '%s\n' '_start main ladder_a ladder_b ladder_c ladder_d do_syscall_64' 'tests/targets/ladder.c')"
}

@test "speedscope: valid against the schema the speedscope package ships" {
	require_npm speedscope
	require_npm ajv
	local check="$TOP/tests/npm/speedscope-check.js" f="$BATS_TEST_TMPDIR/s.json"
	"$PROF" report -q --format=speedscope -o "$f" "$s"
	run -0 node "$check" "$f"
	assert_output ""
	"$PROF" report -q --format=speedscope --by-process --no-kernel "$s" >"$f"
	run -0 node "$check" "$f"
	# the check can fail: a frame without a name is not speedscope's
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); del d["shared"]["frames"][0]["name"]
json.dump(d, open(sys.argv[1], "w"))' "$f"
	run -1 node "$check" "$f"
	assert_output --partial "/shared/frames/0: must have required property 'name'"
}

@test "speedscope of a recording of the ladder: valid, ladder_d on the stacks" {
	require_npm speedscope
	require_perf_events
	cd "$BATS_TEST_TMPDIR"
	"$PROF" record -q -o l.spool -- "$BUILD/targets/ladder" 1 >/dev/null
	"$PROF" report -q --format=speedscope -o l.json l.spool
	run -0 node "$TOP/tests/npm/speedscope-check.js" l.json
	run -0 grep -c '"name": *"ladder_d"' l.json
}
