#!/usr/bin/env bats
# prof report --format=svg (the flame graph) and --inverted, on the
# synthetic spool of 24-report-exports.bats (3000 samples in three threads
# over real offsets of the ladder target) and on real recordings; and -o.
load test_helper

LADDER="$BUILD/targets/ladder"

setup() {
	s=$(spool svg.spool --elf "$LADDER" --kernel --exec-at 2000)
}

# Every frame of the SVG file $1, in document order (depth first), as
# "DEPTH START SAMPLES X WIDTH Y PATH": PATH the names from the root down,
# joined by ';' (without "all").  Parsing it checks that it is XML.
svg_frames() {
	python3 - "$1" <<-'EOF'
	import re, sys, xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	root = ET.parse(sys.argv[1]).getroot()
	path = []
	for g in root.find(ns + "g[@id='frames']").findall(ns + "g"):
	    d = int(g.get("data-d"))
	    name = g.find(ns + "title").text.split("\n")[0]
	    name = re.sub(r" \([0-9,]+ samples?, [0-9.]+%(; base [0-9.]+%, [-+][0-9.]+ points)?\)$",
	                  "", name)
	    r = g.find(ns + "rect")
	    path[d:] = [name]
	    print(d, g.get("data-s"), g.get("data-n"), r.get("x"), r.get("width"), r.get("y"),
	          ";".join(path[1:]))
	EOF
}

# Check the geometry of the frames svg_frames printed in $output: each as
# wide as its samples (1180 px for all of them), placed by its start; the
# children of a frame side by side from its left edge, inside it.  Then
# compare each path's samples with the folded stacks in file $1: the
# samples of the folded lines that begin with the path.
svg_geometry_matches_folded() {
	python3 /dev/fd/3 "$1" <<<"$output" 3<<-'EOF'
	import sys
	frames = [l.split(" ", 6) for l in sys.stdin.read().splitlines()]
	total = int(frames[0][2])
	assert frames[0][6] == "" and frames[0][1] == "0", frames[0]
	scale = 1180 / total
	for d, s, n, x, w, y, path in frames:
	    s, n = int(s), int(n)
	    assert abs(float(w) - n * scale) < 0.006, (path, w, n)
	    assert abs(float(x) - (10 + s * scale)) < 0.006, (path, x, s)
	# children: contiguous from the parent's start, summing to at most its samples
	for i, (d, s, n, *_ ) in enumerate(frames):
	    d, s, n = int(d), int(s), int(n)
	    at = s
	    for c in frames[i + 1:]:
	        if int(c[0]) <= d:
	            break
	        if int(c[0]) == d + 1:
	            assert int(c[1]) == at, (frames[i], c)
	            at += int(c[2])
	    assert at <= s + n, frames[i]
	want = {}
	for line in open(sys.argv[1]):
	    stack, count = line.rsplit(" ", 1)
	    parts = stack.split(";")
	    for k in range(1, len(parts) + 1):
	        key = ";".join(parts[:k])
	        want[key] = want.get(key, 0) + int(count)
	got = {f[6]: int(f[2]) for f in frames[1:]}
	assert got == want, sorted(set(got.items()) ^ set(want.items()))[:10]
	assert sum(int(f[2]) for f in frames if f[0] == "1") == total
	print("ok", total, len(frames))
	EOF
}

@test "svg: well-formed XML that needs no other file" {
	command -v xmllint >/dev/null || skip_or_fail "xmllint is not installed (libxml2-utils)"
	"$PROF" report -q --format=svg "$s" >"$BATS_TEST_TMPDIR/f.svg"
	run -0 xmllint --noout "$BATS_TEST_TMPDIR/f.svg"
	run -0 head -c 200 "$BATS_TEST_TMPDIR/f.svg"
	assert_output --partial '<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="1200" '
	# nothing to fetch: no links, no external script or style, no other URL
	run -1 grep -Eic 'href=|src=|@import|url\(|https?://' <(grep -v '^<svg ' "$BATS_TEST_TMPDIR/f.svg")
	run -0 grep -c '<script type="text/ecmascript"><!\[CDATA\[' "$BATS_TEST_TMPDIR/f.svg"
	assert_output 1
}

@test "svg: every frame as wide as its samples, the same stacks as folded" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	"$PROF" report -q --format=folded "$s" >"$BATS_TEST_TMPDIR/f.folded"
	"$PROF" report -q --format=svg "$s" >"$BATS_TEST_TMPDIR/f.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/f.svg"
	assert_line --index 0 --regexp '^0 0 3000 10.00 1180.00 [0-9.]+ $'
	assert_line --regexp '^6 [0-9]+ [0-9]+ [0-9.]+ [0-9.]+ [0-9.]+ _start;main;ladder_a;ladder_b;ladder_c;ladder_d$'
	run -0 svg_geometry_matches_folded "$BATS_TEST_TMPDIR/f.folded"
	assert_output --regexp '^ok 3000 [0-9]+$'
}

@test "svg of a recording of the ladder: every ladder function, ladder_d as wide as its share" {
	require_perf_events
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	cd "$BATS_TEST_TMPDIR"
	"$PROF" record -q -o l.spool -- "$LADDER" 1 >/dev/null
	"$PROF" report -q --format=svg -o l.svg l.spool
	"$PROF" report -q --format=folded l.spool >l.folded
	run -0 svg_frames l.svg
	local frames=$output f
	for f in _start main ladder_a ladder_b ladder_c ladder_d; do
		assert_line --regexp "^[0-9]+ [0-9]+ [0-9]+ [0-9.]+ [0-9.]+ [0-9.]+ (.*;)?$f\$"
	done
	# the widest ladder_d frame holds most of the samples, as in folded
	local d_svg d_folded
	d_svg=$(awk '$7 ~ /;ladder_d$/ && $3 > n { n = $3 } END { print n + 0 }' <<<"$frames")
	d_folded=$(awk '{ c = $NF; sub(/ [0-9]+$/, "") } /;ladder_d(;|$)/ { n += c }
		END { print n + 0 }' l.folded)
	assert [ "$d_svg" -gt 0 ]
	assert_equal "$d_svg" "$d_folded"
	run -0 svg_geometry_matches_folded l.folded
}

@test "folded --inverted: each stack from its leaf out" {
	run -0 "$PROF" report -q --format=folded "$s"
	local plain=$output
	run -0 "$PROF" report -q --format=folded --inverted "$s"
	assert_equal "$(awk '{ n += $NF } END { print n }' <<<"$output")" 3000
	# the same stacks, reversed
	assert_equal "$(awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s = f[n];
			       for (i = n - 1; i >= 1; i--) s = s ";" f[i]; print s, c }' <<<"$output" |
			sort)" "$(sort <<<"$plain")"
	assert_line --regexp '^ladder_d;ladder_c;ladder_b;ladder_a;main;_start [0-9]+$'
}

@test "tree --inverted: the functions that ran at the top, their callers under them" {
	run -0 "$PROF" report -q --format=tree --inverted --min-percent=0 "$s"
	# do_syscall_64 ran in a third of the stacks: a root, called from every rung
	assert_line --regexp '^ +[0-9.]+%  do_syscall_64 \[kernel\]$'
	assert_line --regexp '^ +[0-9.]+%    ladder_d \['
	# no self column: it would only repeat the roots' totals
	assert_line ' total%  callers tree'
	local first
	first=$(awk '/callers tree/ { getline; print; exit }' <<<"$output")
	# roots by most samples: the top function of the top view comes first
	run -0 "$PROF" report -q --format=top --limit=1 "$s"
	assert_equal "$(awk '{ print $2 }' <<<"$first")" "$(awk '/samples +function/ { getline; print $4; exit }' <<<"$output")"
}

@test "svg --inverted: an icicle of the callers, the same stacks as folded --inverted" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	"$PROF" report -q --format=folded --inverted "$s" >"$BATS_TEST_TMPDIR/i.folded"
	"$PROF" report -q --format=svg --inverted "$s" >"$BATS_TEST_TMPDIR/i.svg"
	run -0 grep -c '>Icicle graph (callers) of ' "$BATS_TEST_TMPDIR/i.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/i.svg"
	# roots at the top: y grows with the depth
	assert_equal "$(awk '{ if (y[$1] == "") y[$1] = $6 } END { for (d = 1; d in y; d++)
		if (y[d] <= y[d - 1]) { print "not an icicle at depth " d; exit } print "icicle" }' <<<"$output")" icicle
	assert_line --regexp '^1 [0-9]+ [0-9]+ [0-9.]+ [0-9.]+ [0-9.]+ do_syscall_64$'
	run -0 svg_geometry_matches_folded "$BATS_TEST_TMPDIR/i.folded"
}

@test "svg --by-thread: a frame per thread above its stacks" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	"$PROF" report -q --format=folded --by-thread "$s" >"$BATS_TEST_TMPDIR/t.folded"
	"$PROF" report -q --format=svg --by-thread "$s" >"$BATS_TEST_TMPDIR/t.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/t.svg"
	assert_equal "$(awk '$1 == 1 { print $3, $7 }' <<<"$output")" \
		"$(printf '%s\n' '1000 ladder-4242' '1000 worker-2-4244' '1000 worker-one-4243')"
	run -0 svg_geometry_matches_folded "$BATS_TEST_TMPDIR/t.folded"
}

@test "svg takes the filters, and --min-percent leaves out the narrow frames" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	"$PROF" report -q --format=svg --tid=4243 --no-kernel "$s" >"$BATS_TEST_TMPDIR/f.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/f.svg"
	assert_line --index 0 --regexp '^0 0 1000 10.00 1180.00 [0-9.]+ $'
	refute_line --partial do_syscall_64
	# by default nothing wider than a tenth of a pixel is left out
	"$PROF" report -q --format=svg "$s" >"$BATS_TEST_TMPDIR/all.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/all.svg"
	assert_equal "$(awk '$3 < 300 { n++ } END { print n + 0 }' <<<"$output")" \
		"$(awk '$3 < 300 { n++ } END { print n + 0 }' <<<"$output")"
	local narrow
	narrow=$(awk '$3 < 300 { n++ } END { print n + 0 }' <<<"$output")
	assert [ "$narrow" -gt 0 ]
	"$PROF" report -q --format=svg --min-percent=10 "$s" >"$BATS_TEST_TMPDIR/wide.svg"
	run -0 svg_frames "$BATS_TEST_TMPDIR/wide.svg"
	assert_equal "$(awk '$3 < 300 { n++ } END { print n + 0 }' <<<"$output")" 0
	assert_line --index 0 --regexp '^0 0 3000 10.00 1180.00 [0-9.]+ $'
	run -1 --separate-stderr "$PROF" report -q --format=svg --comm=nosuch "$s"
	assert_equal "$stderr" "prof: no sample matches the filters"
}

@test "svg in a DOM: hover names a frame, a click zooms on it, search highlights" {
	require_npm jsdom
	local check="$TOP/tests/npm/flamegraph-check.js" f="$BATS_TEST_TMPDIR/f.svg"
	"$PROF" report -q --format=svg --tid=4242 --no-kernel "$s" >"$f"
	run -0 node "$check" "$f" hover:ladder_c
	assert_output --regexp '^details ladder_c \([0-9]+ samples, [0-9.]+%\)$'
	# zoom on the first ladder_b: its subtree spans the width, what it is in
	# dimmed at full width, the rest hidden
	run -0 node "$check" "$f" click:ladder_b frames
	assert_line --regexp '^0 all 10.00 1180.00 parent$'
	assert_line --regexp '^4 ladder_b 10.00 1180.00$'
	assert_line --regexp '^5 ladder_c 10.00 1180.00$'
	refute_line --partial '[empty stack]'
	refute_line --regexp '^1 _start '
	# Reset Zoom brings every frame back
	run -0 node "$check" "$f" frames
	local before=$output
	run -0 node "$check" "$f" click:ladder_b unzoom frames
	assert_equal "$output" "$before"
	# search: the matching frames turn magenta, the share they cover is shown
	run -0 node "$check" "$f" search:'^ladder_[cd]$' frames
	assert_line --regexp '^matched Matched: [0-9.]+% \([0-9]+ samples\)$'
	assert_line 'button Reset Search'
	assert_equal "$(grep -c ' hit$' <<<"$output")" "$(grep -Ec '^[0-9]+ ladder_[cd] ' <<<"$output")"
	refute_line --regexp '^[0-9]+ ladder_[ab] .* hit$'
	# the share is that of the samples under ladder_c (ladder_d is always under it)
	local c_samples
	c_samples=$("$PROF" report -q --format=folded --tid=4242 --no-kernel "$s" |
		awk '{ c = $NF; sub(/ [0-9]+$/, "") } /;ladder_c(;|$)/ { n += c } END { print n }')
	assert_line --regexp "^matched Matched: [0-9.]+% \\($c_samples samples\\)\$"
	# Escape clears the search; Ctrl-F asks again; an invalid one says so
	run -0 node "$check" "$f" search:ladder_d key:Escape frames
	refute_line --regexp ' hit$'
	run -0 node "$check" "$f" search:'('
	assert_line --regexp '^details Invalid search: '
	assert_line --regexp '^matched *$'
}

@test "svg --diff: NEW's frames, each coloured by how its path's share changed since BASE" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	local t=$BATS_TEST_TMPDIR
	b=$(spool base.spool --elf "$LADDER" --seed 7 --samples 2000)
	"$PROF" report -q --format=svg "$s" >"$t/new.svg"
	"$PROF" report -q --format=folded "$b" >"$t/base.folded"
	"$PROF" report -q --format=folded "$s" >"$t/new.folded"
	run -0 "$PROF" report -q --diff --format=svg -o "$t/diff.svg" "$b" "$s"
	# the geometry is NEW's, frame for frame
	run -0 svg_frames "$t/new.svg"
	local plain=$output
	run -0 svg_frames "$t/diff.svg"
	assert_equal "$output" "$plain"
	grep -q '>Differential flame graph of ' "$t/diff.svg"
	# each frame: its share in BASE (the base's samples on the same path), the
	# change in points, and red where it grew, blue where it shrank
	run -0 python3 - "$t/diff.svg" "$t/base.folded" "$t/new.folded" <<-'EOF'
	import re, sys, xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	def prefixes(f):
	    want, total = {}, 0
	    for line in open(f):
	        stack, count = line.rsplit(" ", 1)
	        parts, total = stack.split(";"), total + int(count)
	        for k in range(1, len(parts) + 1):
	            key = ";".join(parts[:k])
	            want[key] = want.get(key, 0) + int(count)
	    return want, total
	base, btotal = prefixes(sys.argv[2])
	new, ntotal = prefixes(sys.argv[3])
	root = ET.parse(sys.argv[1]).getroot()
	path, grew, shrank, most = [], 0, 0, (0, None)
	for g in root.find(ns + "g[@id='frames']").findall(ns + "g"):
	    d = int(g.get("data-d"))
	    title = g.find(ns + "title").text.split("\n")[0]
	    m = re.match(r"(.*) \(([0-9]+) samples?, ([0-9.]+)%; base ([0-9.]+)%, ([-+][0-9.]+) points\)$", title)
	    assert m, title
	    path[d:] = [m.group(1)]
	    key = ";".join(path[1:])
	    bpct = 100 * base.get(key, 0) / btotal if key else 100.0
	    npct = 100 * new[key] / ntotal if key else 100.0
	    assert abs(float(m.group(4)) - bpct) < 0.006, (key, m.group(4), bpct)
	    change = npct - bpct
	    assert abs(float(m.group(5)) - change) < 0.011, (key, m.group(5), change)
	    r, gr, b = map(int, re.findall(r"[0-9]+", g.find(ns + "rect").get("fill")))
	    if change > 0.005:
	        assert r == 255 and gr == b < 255, (key, change, r, gr, b)
	        grew += 1
	    elif change < -0.005:
	        assert b == 255 and r == gr < 255, (key, change, r, gr, b)
	        shrank += 1
	    if abs(change) > most[0]:
	        most = (abs(change), (r, gr, b))
	# the biggest change is drawn the strongest
	assert most[1] in ((255, 35, 35), (35, 35, 255)), most
	assert grew and shrank, (grew, shrank)
	print("ok", grew, shrank)
	EOF
	assert_output --regexp '^ok [1-9][0-9]* [1-9][0-9]*$'
}

@test "svg --diff in a DOM: hover shows both shares and the change" {
	require_npm jsdom
	local f="$BATS_TEST_TMPDIR/diff.svg"
	b=$(spool base.spool --elf "$LADDER" --seed 7 --samples 2000)
	"$PROF" report -q --diff --format=svg "$b" "$s" >"$f"
	run -0 node "$TOP/tests/npm/flamegraph-check.js" "$f" hover:ladder_c
	assert_output --regexp '^details ladder_c \([0-9]+ samples, [0-9.]+%; base [0-9.]+%, [-+][0-9.]+ points\)$'
	run -0 node "$TOP/tests/npm/flamegraph-check.js" "$f" search:'^ladder_d$'
	assert_line --regexp '^matched Matched: [0-9.]+% \([0-9]+ samples\)$'
}

@test "-o FILE: the report is put in place once complete, else FILE stays as it was" {
	mkdir "$BATS_TEST_TMPDIR/o"
	cd "$BATS_TEST_TMPDIR/o"
	run -0 "$PROF" report -q --format=folded -o out.folded "$s"
	assert_output ""
	assert_equal "$(awk '{ n += $NF } END { print n }' out.folded)" 3000
	echo previous >keep.txt
	run -1 "$PROF" report -q -o keep.txt nosuch.spool
	assert_equal "$(cat keep.txt)" previous
	run -1 "$PROF" report -q --format=svg --comm=nosuch -o keep.txt "$s"
	assert_equal "$(cat keep.txt)" previous
	run -1 "$PROF" report -q -o nodir/x.txt "$s"
	assert_output "prof: cannot write 'nodir/x.txt': No such file or directory"
	# nothing left behind
	assert_equal "$(ls)" "$(printf '%s\n' keep.txt out.folded)"
	# a pipe or a device is written as it is
	run -0 "$PROF" report -q --format=folded -o /dev/stdout --tid=4243 "$s"
	assert_equal "$(awk '{ n += $NF } END { print n }' <<<"$output")" 1000
}

@test "--inverted is for tree, folded and svg" {
	run -64 "$PROF" report --inverted "$s"
	assert_output --partial "--inverted applies to tree, folded and svg, not top"
	run -64 "$PROF" report --inverted --format=json "$s"
	run -64 "$PROF" report --diff --inverted --format=folded "$s" "$s"
	assert_output --partial "--diff and --inverted cannot be used together"
}

@test "svg of a recording with inline frames: each inlined function a frame of its own" {
	require_perf_events
	require_libc_debug
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	cd "$BATS_TEST_TMPDIR"
	"$PROF" record -q -o i.spool -- "$BUILD/targets/inline" >/dev/null
	"$PROF" report -q --format=svg -o i.svg i.spool
	run -0 svg_frames i.svg
	assert_line --regexp ' _start;__libc_start_main;__libc_start_call_main;main;churn;mix;step$'
	# told apart (and coloured apart) as inlined
	run -0 grep -c '^<g [^>]*><title>step ([0-9]* samples\?, [0-9.]*%)$' i.svg
	run -0 grep -A2 '^<g [^>]*><title>step (' i.svg
	assert_line --partial 'inlined into its caller</title>'
}
