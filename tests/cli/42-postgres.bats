#!/usr/bin/env bats
# Debian's PostgreSQL 15 under pgbench: backends forked without exec by a
# postmaster, after prof attached to it (-p) or as children of a launched
# one.  Their samples name postgres functions (its .dynsym: Debian strips
# .symtab, so a static function such as exec_simple_query is
# postgres+0xOFFSET without the debug package) and their stacks are
# complete; report --by-process shows each backend.  Skips without
# postgresql-15.  A cluster in a temp dir, as user nobody (postgres refuses
# root), on a unix socket there; stopped at the end of every test.
load test_helper

PG=/usr/lib/postgresql/15/bin

setup() {
	setup_recording
	[ -x "$PG/postgres" ] || skip_or_fail "PostgreSQL 15 is not installed (postgresql-15)"
	command -v setpriv >/dev/null || skip_or_fail "setpriv is not installed (util-linux)"
	require_cmd python3 python3
	PGDIR=$(mktemp -d /tmp/prof-pg.XXXXXX)
	chown nobody "$PGDIR"
	as_nobody "$PG/initdb" -D "$PGDIR/data" -A trust -U postgres --no-sync >"$PGDIR/initdb.log"
}

teardown() {
	kill_background
	if [ -n "${PGDIR:-}" ]; then
		as_nobody "$PG/pg_ctl" -D "$PGDIR/data" stop -m immediate >/dev/null 2>&1 || true
		rm -rf "$PGDIR"
	fi
}

# (from the temp dir: nobody cannot enter the test's own)
as_nobody() {
	(cd "$PGDIR" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@")
}

# the server's options: its socket in the temp dir, no TCP, each backend
# logged with its pid when it connects (the ground truth of who they are)
PGOPTS="-c listen_addresses= -c log_connections=on -c log_line_prefix=%p@"

wait_ready() {
	local i
	for ((i = 0; i < 300; i++)); do
		"$PG/pg_isready" -q -h "$PGDIR" && return 0
		sleep 0.1
	done
	return 1
}

pgbench() {
	"$PG/pgbench" -h "$PGDIR" -U postgres "$@" postgres
}

# the pids of the backends that connected (their "connection authorized"
# lines in the server's log) since line $1 of it
backends_since() {
	awk -v from="$1" -F@ 'NR > from && /connection authorized/ { print $1 }' "$PGDIR/log"
}

# backend_truth FOLDED PIDS...: the samples of these backends in FOLDED
# (report --by-process --format=folded): the two busiest have >= 50 each;
# >= $COMPLETE% complete (from _start; 99 unless set), >= 60% with their leaf named and >= 60%
# of all their frames (a quarter of the samples land in static functions,
# which .dynsym does not name: 75% of both measured, in either mode), >= 90%
# through PostgresMain and, among those, >= $EXEC% through ExecutorRun or
# the parser (20 unless set; 35% measured).  Prints the figures.
backend_truth() {
	local folded=$1
	shift
	echo "$@" | tr ' ' '\n' | awk -v want_complete="${COMPLETE:-99}" -v want_exec="${EXEC:-20}" '
		FNR == NR { want[$1] = 1; next }
		{
			split($1, a, /[-;]/); pid = a[2]
			if (!(pid in want)) next
			n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
			nf = split(s, f, ";")
			per[pid] += n; total += n
			if (f[2] == "_start") complete += n
			if (f[nf] !~ /\+0x|\[unknown/) leaf += n
			for (i = 2; i <= nf; i++) { frames += n; if (f[i] !~ /\+0x|\[unknown/) named += n }
			if (s ~ /;PostgresMain;/) { main += n
				if (s ~ /;(standard_)?ExecutorRun;|;raw_parser;/) exec += n }
		}
		END {
			m1 = m2 = 0
			for (p in per) { if (per[p] > m1) { m2 = m1; m1 = per[p] } else if (per[p] > m2) m2 = per[p] }
			printf "backends %d, samples %d, complete %.1f%%, leaf named %.1f%%, frames named %.1f%%, PostgresMain %.1f%%, ExecutorRun/parser %.1f%%\n",
			       length(per), total, 100 * complete / total, 100 * leaf / total,
			       100 * named / frames, 100 * main / total, 100 * exec / (main ? main : 1)
			if (m2 < 50) { print "the two busiest backends: " m1 " and " m2 " samples"; exit 1 }
			if (complete * 100 < total * want_complete || leaf * 100 < total * 60 ||
			    named * 100 < frames * 60 || main * 100 < total * 90 ||
			    exec * 100 < main * want_exec) exit 1
		}' - "$folded"
}

# none_missed FOLDED: every postgres frame left unnamed (postgres+0xOFF)
# lies outside every function of postgres's .dynsym: none was missed
none_missed() {
	readelf --dyn-syms -W "$PG/postgres" | awk '$4 == "FUNC" && $3 > 0 { print $2, $3 }' >dyn.txt
	grep -o 'postgres+0x[0-9a-f]*' "$1" | sort -u | sed 's/^postgres+//' >unnamed.txt
	python3 - <<-'PY'
		import sys
		funcs = [(int(a, 16), int(b)) for a, b in (l.split() for l in open("dyn.txt"))]
		offs = [int(l, 16) for l in open("unnamed.txt")]
		missed = [hex(o) for o in offs if any(s <= o < s + n for s, n in funcs)]
		print(f"{len(offs)} unnamed addresses, {len(missed)} in a .dynsym function", missed[:5])
		sys.exit(1 if missed or not funcs else 0)
	PY
}

# assert_each_shown FOLDED PIDS... (after a run of report --by-process): a
# section for each backend with samples in FOLDED, and for the last two, the
# clients, which ran for seconds.  The one pgbench opens first to look at
# the tables lives for a millisecond or two: at 999 Hz it may have none.
assert_each_shown() {
	local folded=$1 p
	shift
	for p in "${@: -2}"; do
		assert_line --regexp "^process postgres \\(pid $p\\): [0-9]+ samples?"
	done
	for p in "$@"; do
		if grep -q "^[^;]*-$p;" "$folded"; then
			assert_line --regexp "^process postgres \\(pid $p\\): [0-9]+ samples?"
		fi
	done
}

@test "-p POSTMASTER: the backends forked after the attach, named, complete, each shown" {
	as_nobody "$PG/pg_ctl" -D "$PGDIR/data" -o "-k $PGDIR $PGOPTS" -l "$PGDIR/log" -w start
	pgbench -i -q >/dev/null 2>&1
	pm=$(head -1 "$PGDIR/data/postmaster.pid")
	from=$(wc -l <"$PGDIR/log")
	"$PROF" record -q -p "$pm" -o pg.spool &
	BG+=($!)
	rec=$!
	wait_for_file pg.spool || fail "the recording did not start"
	pgbench -T 3 -c 2 >pgbench.out 2>&1
	kill -INT "$rec"
	wait "$rec"
	pids=$(backends_since "$from")
	"$PROF" report -q --by-process --format=folded pg.spool >pg.folded
	run backend_truth pg.folded $pids
	echo "# -p: $output" >&3
	assert_success
	run -0 none_missed pg.folded
	run -0 "$PROF" report -q --by-process pg.spool
	assert_each_shown pg.folded $pids
}

@test "launched postmaster: its backends as complete, each shown" {
	(cd "$PGDIR" && "$PROF" record -q -o "$BATS_TEST_TMPDIR/l.spool" -- setpriv --reuid=nobody \
		--regid=nogroup --clear-groups "$PG/postgres" -D "$PGDIR/data" -k "$PGDIR" $PGOPTS \
		>"$PGDIR/log" 2>&1) &
	BG+=($!)
	rec=$!
	wait_ready || fail "postgres did not start"
	pgbench -i -q >/dev/null 2>&1
	from=$(wc -l <"$PGDIR/log")
	pgbench -T 3 -c 2 >pgbench.out 2>&1
	as_nobody "$PG/pg_ctl" -D "$PGDIR/data" stop -m fast
	wait "$rec"
	pids=$(backends_since "$from")
	"$PROF" report -q --by-process --format=folded l.spool >l.folded
	run backend_truth l.folded $pids
	echo "# launch: $output" >&3
	assert_success
	run -0 none_missed l.folded
	run -0 "$PROF" report -q --by-process l.spool
	assert_each_shown l.folded $pids
}

@test "-a: the backends among the whole machine's processes, named, complete, each shown" {
	as_nobody "$PG/pg_ctl" -D "$PGDIR/data" -o "-k $PGDIR $PGOPTS" -l "$PGDIR/log" -w start
	pgbench -i -q >/dev/null 2>&1
	from=$(wc -l <"$PGDIR/log")
	run -0 --separate-stderr "$PROF" record -q -a -o a.spool -- "$PG/pgbench" -h "$PGDIR" \
		-U postgres -T 3 -c 2 postgres
	pids=$(backends_since "$from")
	"$PROF" report -q --by-process --format=folded a.spool >a.folded
	# the kernel is sampled too, on the user stack: where that cannot be
	# copied (a page not present, as the kernel copies it in an NMI) the
	# stack is cut short: 98.5-100% complete measured.  And the time in
	# the kernel counts (with -p, time in a system call is not sampled):
	# the backends' recv/send/fsync take a larger share, so ExecutorRun and
	# the parser a smaller one (19-29% measured)
	COMPLETE=97 EXEC=10 run backend_truth a.folded $pids
	echo "# -a: $output" >&3
	assert_success
	run -0 none_missed a.folded
	run -0 "$PROF" report -q --by-process a.spool
	assert_each_shown a.folded $pids
}

# wait_for_file FILE: until it exists (a recorder's spool appears when
# sampling starts), for at most 30 s
wait_for_file() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
