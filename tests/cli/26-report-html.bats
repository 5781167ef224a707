#!/usr/bin/env bats
# prof report --format=html: the viewer, one page that needs nothing else.
# Its data on its own (the JSON embedded, its tables consistent, its counts
# the report's), its model under node (the totals of a selection are those
# of the filters), its script linted, and the page in a real browser:
# Debian's chromium, headless, driven by playwright-core (tests/npm), from
# file://, on real recordings of tests/targets.  Screenshots of each view
# go to $BUILD/html-screens/ for people to look at.
load test_helper

LADDER="$BUILD/targets/ladder"
SCREENS="$BUILD/html-screens"

setup() {
	s=$(spool html.spool --elf "$LADDER" --kernel --exec-at 2000 --offcpu 600)
	cd "$BATS_TEST_TMPDIR"
}

# the browser and its driver: chromium (CHROMIUM names another) and
# playwright-core from tests/npm
require_browser() {
	require_npm playwright-core
	local c=${CHROMIUM:-/usr/bin/chromium}
	[ -x "$c" ] || skip_or_fail "no browser at $c: apt-get install chromium (.ci/deps check does), or set CHROMIUM"
}

# viewer PAGE ACTION...: what the page shows (tests/npm/viewer-check.js)
viewer() {
	node "$TOP/tests/npm/viewer-check.js" "$@"
}

# html_json PAGE: the data the page embeds, as JSON on stdout
html_json() {
	"$TOP/tests/tools/viewer-data" json "$1"
}

@test "html: one page that needs nothing else, its tables consistent, every sample and interval" {
	command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
	run -0 "$PROF" report -q --format=html -o h.html "$s"
	assert_output ""
	run -0 head -c 15 h.html
	assert_output "<!DOCTYPE html>"
	# nothing to fetch: no link, no external script or style; the policy forbids any
	run -0 grep -c "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';" h.html
	run -1 grep -Eic '<link|src=|href=|@import|url\(|https?://' h.html
	run -0 "$TOP/tests/tools/viewer-data" check h.html
	assert_line "samples 3000 intervals 600 threads 3 stacks $(awk '/^samples/ { print $NF }' <<<"$output")"
	assert_line "thread 4242 1200"
	assert_line "thread 4243 1200"
	assert_line "thread 4244 1200"
	# the same stacks as folded, sample by sample
	run -0 "$TOP/tests/tools/viewer-data" folded h.html
	assert_equal "$output" "$("$PROF" report -q --format=folded "$s" | LC_ALL=C sort)"
	# the filters apply
	"$PROF" report -q --format=html --tid=4243 -o t.html "$s"
	run -0 "$TOP/tests/tools/viewer-data" check t.html
	assert_line --regexp '^samples 1000 intervals 200 threads 1 '
}

@test "html: the header's facts, warnings and weights are the report's" {
	command -v jq >/dev/null || skip_or_fail "jq is not installed"
	"$PROF" report -q --format=html --weight=wall -o h.html "$s"
	html_json h.html >h.json
	run -0 jq -c '.profiles[0] | [.weights, .weight, .kept, .facts.samples, .facts.trailer, .facts.offcpu]' h.json
	assert_output '[["cpu","off-cpu","wall"],"wall",3600,3000,true,true]'
	run -0 jq -r '.profiles[0].header' h.json
	assert_equal "$output" "$("$PROF" report -q --weight=wall "$s" | sed -n '1,/^$/p' | sed '$d')"
	# a spool cut short says so where it is looked at
	"$SPOOLGEN" --elf "$LADDER" --block 512 --raw whole.spool
	head -c 3000 whole.spool >cut.spool
	run -0 --separate-stderr "$PROF" report --format=html -o c.html cut.spool
	assert_equal "$stderr" "prof: warning: $(html_json c.html | jq -r '.profiles[0].warnings[0]')"
	html_json c.html >c.json
	run -0 jq -r '.profiles[0].warnings[0], .profiles[0].facts.trailer, .profiles[0].kept' c.json
	assert_line --index 0 --partial "spool 'cut.spool' is cut short"
	assert_line --index 1 false
	assert_line --index 2 "$("$PROF" report -q --format=json cut.spool | jq .samples)"
}

@test "html --diff: both spools in one page, the base first" {
	command -v jq >/dev/null || skip_or_fail "jq is not installed"
	local o
	o=$(spool other.spool --elf "$LADDER" --seed 7)
	run -0 "$PROF" report -q --diff --format=html -o d.html "$s" "$o"
	html_json d.html >d.json
	run -0 jq -c '[.diff, (.profiles | length), .profiles[0].title, .profiles[1].title, .profiles[1].kept]' d.json
	assert_output "[true,2,\"$s\",\"$o\",3000]"
	run -64 --separate-stderr "$PROF" report --format=html --inverted "$s"
	assert_equal "${stderr_lines[0]}" "prof report: --inverted applies to tree, folded and svg, not html"
}

@test "html: the viewer's model under node gives the totals and functions of the filters" {
	command -v node >/dev/null || skip_or_fail "node is not installed (nodejs)"
	"$PROF" report -q --format=html --weight=wall -o h.html "$s"
	html_json h.html >h.json
	# totals and functions of a selection, as the page aggregates them
	cat >model.js <<-EOF
	const M = require("$TOP/lib/report/viewer_model.js");
	const d = require("./h.json");
	const p = M.decode(d.profiles[0]);
	const [weight, from, to, tid] = process.argv.slice(2);
	const range = from === "" ? null : [Number(from), Number(to)];
	const threads = tid ? new Set(p.threads.filter((t) => t.tid === Number(tid)).map((t) => t.index)) : null;
	const w = M.weigh(p, { weight: weight, range: range, threads: threads });
	const a = M.aggregate(p, w.stack);
	console.log("total", w.total, w.events);
	const rows = [];
	for (let f = 0; f < p.nfuncs; f++)
		if (a.funcTotal[f])
			rows.push([p.funcNames[f] + (p.funcInlined[f] ? " [inlined]" : ""), a.funcSelf[f], a.funcTotal[f]].join(" "));
	rows.sort().forEach((r) => console.log(r));
	EOF
	# jq: the json report's total, samples, and each function's "name self total"
	want() {
		"$PROF" report -q --format=json "$@" "$s" |
			jq -r '"total \(.total) \(.samples)", (.functions | map("\(.name)\(if .inlined then " [inlined]" else "" end) \(.self) \(.total)") | sort | .[])'
	}
	local w args
	for w in cpu off-cpu wall; do
		for args in "" "1.0 2.5" "0.5 1.5 4243"; do
			set -- $args
			run -0 node model.js "$w" "${1:-}" "${2:-}" "${3:-}"
			local got=$output
			run -0 want --weight="$w" ${1:+--time=$1,$2} ${3:+--tid=$3}
			assert_equal "$got" "$output"
		done
	done
}

@test "html: the viewer's script is linted" {
	command -v node >/dev/null || skip_or_fail "node is not installed (nodejs)"
	run -0 node --check "$TOP/lib/report/viewer_model.js"
	run -0 node --check "$TOP/lib/report/viewer.js"
	require_npm eslint
	require_npm @eslint/js
	# from the top: eslint leaves out what is outside its working directory
	lint() {
		cd "$TOP" || return
		tests/npm/node_modules/.bin/eslint --no-config-lookup -c tests/npm/eslint.config.js \
			lib/report/viewer_model.js lib/report/viewer.js
	}
	run -0 lint
	assert_output ""
}

# ---- in the browser -------------------------------------------------------

@test "html in chromium: the ladder from file://, no console error, ladder_d at its true share" {
	require_perf_events
	require_browser
	"$PROF" record -q -o l.spool -- "$LADDER" 1 >/dev/null
	"$PROF" report -q --format=html -o l.html l.spool
	mkdir -p "$SCREENS"
	run -0 viewer l.html flame-share:ladder_d totals shot:"$SCREENS/ladder-flame.png"
	assert_line --index 0 "errors 0"
	# the share of the samples whose stacks hold ladder_d, as folded counts them
	local want got
	want=$("$PROF" report -q --format=folded l.spool |
		awk '{ c = $NF; n += c } /(^|;)ladder_d(;| )/ { d += c } END { printf "%.4f", 100 * d / n }')
	got=$(awk '/^flame-share ladder_d / { print $3 }' <<<"$output")
	awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.5 && d > -0.5) }' ||
		fail "ladder_d is drawn $got% wide, its share is $want%"
	assert_line "totals cpu $(jq -r .samples <("$PROF" report -q --format=json l.spool)) $(jq -r .samples <("$PROF" report -q --format=json l.spool)) $(jq -r .samples <("$PROF" report -q --format=json l.spool))"
}

# a recording of four threads on two CPUs (busy4), its page b.html
record_busy4() {
	require_perf_events
	"$PROF" record -q -o b.spool -- "$BUILD/targets/busy4" 1 >/dev/null
	"$PROF" report -q --format=html -o b.html b.spool
}

@test "html in chromium: a brush over half the recording gives the totals of --time on it" {
	require_browser
	record_busy4
	local half
	half=$(html_json b.html | jq -r '.profiles[0].facts.duration_ns / 2e9 | tostring')
	run -0 viewer b.html range:0,"$half" totals functions
	assert_line --index 0 "errors 0"
	local got=$output
	run -0 "$PROF" report -q --format=json --time=0,"$half" b.spool
	local json=$output n
	n=$(jq -r .samples <<<"$json")
	assert_equal "$(grep '^totals ' <<<"$got" | cut -d' ' -f2-4)" "cpu $n $n"
	# the functions too: self and total of each, as the report counts them
	assert_equal "$(grep '^func ' <<<"$got" | awk -F'\t' '{ split($1, a, " "); print $0 }' |
			sed -E 's/^func ([0-9]+) ([0-9]+) (.*)\t.*/\3 \1 \2/' | LC_ALL=C sort)" \
		"$(jq -r '.functions[] | "\(.name)\(if .inlined then " [inlined]" else "" end) \(.self) \(.total)"' <<<"$json" |
			LC_ALL=C sort)"
	# the second half, brushed with the mouse, is the rest
	run -0 viewer b.html drag:0.5,1.0 totals
	assert_line --index 0 "errors 0"
	local from to
	from=$(awk '/^range / { print $2 }' <<<"$output")
	to=$(awk '/^range / { print $3 }' <<<"$output")
	n=$(jq -r .samples <("$PROF" report -q --format=json --time="$from,$to" b.spool))
	assert_line "totals cpu $n $n $(jq -r .samples <("$PROF" report -q --format=json b.spool))"
}

@test "html in chromium: a search's share is --focus's; of a zoom, of the frame zoomed" {
	require_browser
	record_busy4
	run -0 viewer b.html search:busy_thread_1 key-search:busy_spin zoom:busy_thread_2 search:busy_spin
	assert_line --index 0 "errors 0"
	assert_line "focused search"
	local all focus
	all=$(jq -r .samples <("$PROF" report -q --format=json b.spool))
	focus=$(jq -r .samples <("$PROF" report -q --format=json --focus=busy_thread_1 b.spool))
	# matched and all, then the shares of all and of the zoom (none: all)
	assert_line --index 1 --regexp "^search $focus $all [0-9.]+ [0-9.]+$"
	awk -v a="$focus" -v b="$all" '/^search / { exit !($4 - 100 * a / b < 0.001 && 100 * a / b - $4 < 0.001 && $4 == $5) }' <<<"${lines[1]}" ||
		fail "${lines[1]}: not the share of --focus, $focus of $all"
	# zoomed on busy_thread_2, busy_spin is nearly all of the zoom, a quarter of all
	local last
	last=$(grep '^search ' <<<"$output" | tail -n 1)
	focus=$(jq -r .samples <("$PROF" report -q --format=json --focus=busy_spin b.spool))
	assert_equal "$(cut -d' ' -f2,3 <<<"$last")" "$focus $all"
	awk '{ exit !($5 > 95) }' <<<"$last" || fail "busy_spin is $last of the zoom"
}

# prof's tree of b.spool (ARGS: --inverted for the callers tree) as lines
# "TOTAL SELF DEPTH TEXT", SELF - in a callers tree
prof_tree() {
	"$PROF" report -q --format=tree --min-percent=0 "$@" b.spool | python3 -c '
import re, sys
on = False
for line in sys.stdin:
    line = line.rstrip("\n")
    if not on:
        on = line.endswith("call tree") or line.endswith("callers tree")
        continue
    m = re.match(r"^ *([0-9.]+)% +([0-9.]+)%  ( *)(.*)$", line) or re.match(r"^ *([0-9.]+)%()  ( *)(.*)$", line)
    total, self, ind, text = m.groups()
    print(total, self or "-", len(ind) // 2 + 1, text)
'
}

# the page's tree lines of kind $1 (tree, tree-inverted) in $2 the same way
page_tree() {
	grep "^$1 " <<<"$2" | python3 -c '
import sys
for line in sys.stdin:
    head, module = line.rstrip("\n").split("\t")
    _, total, self, depth, name = head.split(" ", 4)
    mod = "" if not module else " " + module if module.startswith("[") else " [" + module + "]"
    print(total, self, depth, name + mod)
'
}

# the same lines in files $1 and $2, their percents to within 0.01 (C's
# printf and JavaScript's toFixed() round a tie apart)
same_tree() {
	python3 - "$1" "$2" <<-'PY'
	import sys
	a, b = (open(f).read().splitlines() for f in sys.argv[1:])
	assert len(a) == len(b), (len(a), len(b))
	for x, y in zip(a, b):
	    xs, ys = x.split(" ", 3), y.split(" ", 3)
	    assert xs[2:] == ys[2:], (x, y)
	    for u, v in zip(xs[:2], ys[:2]):
	        assert u == v or abs(float(u) - float(v)) < 0.0101, (x, y)
	print(len(a), "lines")
	PY
}

@test "html in chromium: the call tree, top-down and bottom-up, has the numbers of --format=tree" {
	require_browser
	record_busy4
	run -0 viewer b.html tree tree-inverted
	assert_line --index 0 "errors 0"
	page_tree tree "$output" >page.tree
	page_tree tree-inverted "$output" >page.callers
	prof_tree >prof.tree
	prof_tree --inverted >prof.callers
	run -0 same_tree page.tree prof.tree
	assert [ "$(wc -l <prof.tree)" -gt 5 ]
	run -0 same_tree page.callers prof.callers
	assert [ "$(wc -l <prof.callers)" -gt 5 ]
}

@test "html in chromium: a thread clicked, a process focused, a transform and its undo" {
	require_browser
	record_busy4
	local tid all
	tid=$(html_json b.html | jq -r '.profiles[0] as $p | $p.threads.tid[$p.tracks[0].thread]')
	all=$(jq -r .samples <("$PROF" report -q --format=json b.spool))
	run -0 viewer b.html click-thread:"$tid" totals bar
	assert_line --index 0 "errors 0"
	assert_line "clicked true"
	local n
	n=$(jq -r .samples <("$PROF" report -q --format=json --tid="$tid" b.spool))
	assert_line "totals cpu $n $n $all"
	assert_line --regexp "^bar thread .* \\(tid $tid\\)"
	run -0 viewer b.html transform:exclude:busy_thread_0 totals undo totals transform:focus:busy_thread_3 totals
	assert_line --index 0 "errors 0"
	n=$(jq -r .samples <("$PROF" report -q --format=json --exclude='^busy_thread_0$' b.spool))
	assert_line --index 2 "totals cpu $n $n $all"
	assert_line --index 3 "totals cpu $all $all $all"
	n=$(jq -r .samples <("$PROF" report -q --format=json --focus='^busy_thread_3$' b.spool))
	assert_line --index 5 "totals cpu $n $n $all"
}

@test "html in chromium: an off-CPU recording, by every weight, and a screenshot of each view" {
	require_browser
	require_perf_events
	"$PROF" record -q --off-cpu -k -o w.spool -- "$BUILD/targets/waiter" 1 >/dev/null
	"$PROF" report -q --format=html -o w.html w.spool
	mkdir -p "$SCREENS"
	run -0 viewer w.html totals weight:off-cpu totals weight:wall totals \
		shot:"$SCREENS/offcpu-flame.png" show:tree shot:"$SCREENS/offcpu-tree.png" \
		show:functions sandwich:burn shot:"$SCREENS/offcpu-functions.png" \
		show:flame inverted:on shot:"$SCREENS/offcpu-inverted.png"
	assert_line --index 0 "errors 0"
	local w
	for w in cpu off-cpu wall; do
		assert_line "totals $w $(jq -r '"\(.total) \(.samples)"' <("$PROF" report -q --format=json --weight=$w w.spool)) $(jq -r .total <("$PROF" report -q --format=json --weight=$w w.spool))"
	done
	assert_line "sandwich true"
	local f
	for f in offcpu-flame offcpu-tree offcpu-functions offcpu-inverted; do
		[ -s "$SCREENS/$f.png" ] || fail "no screenshot $SCREENS/$f.png"
	done
}

@test "html in chromium: a diff page loads, and a synthetic spool's every view" {
	require_browser
	local o
	o=$(spool other.spool --elf "$LADDER" --seed 7)
	"$PROF" report -q --diff --format=html -o d.html "$s" "$o"
	mkdir -p "$SCREENS"
	run -0 viewer d.html totals shot:"$SCREENS/diff-flame.png" show:functions shot:"$SCREENS/diff-functions.png"
	assert_line --index 0 "errors 0"
	assert_line "totals cpu 3000 3000 3000"
	"$PROF" report -q --format=html -o h.html "$s"
	run -0 viewer h.html show:tree shot:"$SCREENS/synthetic-tree.png" show:functions sandwich:ladder_c \
		shot:"$SCREENS/synthetic-functions.png"
	assert_line --index 0 "errors 0"
}
