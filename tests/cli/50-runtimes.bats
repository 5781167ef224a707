#!/usr/bin/env bats
# The languages people write: their frames named and whole, as the runtime
# itself would name them.  Go: a release build (-ldflags="-s -w": no
# .symtab, no DWARF, no CFI) named from .gopclntab, and unwound through its
# functions' SP tables, so that a frameless leaf keeps its caller.
load test_helper

setup() {
	require_perf_events
	cd "$BATS_TEST_TMPDIR" || exit 1
}

# go_build OUT SRC [FLAGS...]: Debian's go, with its caches in the test's directory
go_build() {
	local out=$1 src=$2
	shift 2
	require_cmd go golang-go
	HOME="$BATS_TEST_TMPDIR" GOCACHE="$BATS_TEST_TMPDIR/gocache" GOPATH="$BATS_TEST_TMPDIR/gopath" \
		GOFLAGS= GO111MODULE=off CGO_ENABLED=0 go build "$@" -o "$out" "$src" ||
		fail "go build of $src failed"
}

# share SPOOL AWK-CONDITION: the percentage of the folded profile's samples whose stack matches
share() {
	"$PROF" report -q --format=folded "$1" |
		awk -v cond="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
			k = split(s, f, ";"); leaf = f[k]
			if ((cond == "leaf" && leaf == "main.spin") ||
			    (cond == "work" && s ~ /(^|;)main\.work(;|$)/) ||
			    (cond == "side" && s ~ /(^|;)main\.side;main\.spin$/)) hit += n }
			END { print all ? int(100 * hit / all) : 0 }'
}

@test "go, stripped: names from .gopclntab, and a frameless leaf keeps its caller" {
	go_build spin "$TOP/tests/targets/go/spin.go" -ldflags="-s -w"
	# what makes it hard: no symbol table, no CFI of any kind
	run -0 readelf -SW spin
	refute_output --partial ' .symtab '
	refute_output --partial ' .eh_frame '
	refute_output --partial ' .debug_frame '
	assert_output --partial ' .gopclntab '
	run -0 --separate-stderr "$PROF" record -o s.spool -- ./spin 1 2
	assert_output --regexp '^spin: [0-9]+$'
	# main.work calls main.spin: its samples hold both, main.side's too
	leaf=$(share s.spool leaf)
	work=$(share s.spool work)
	side=$(share s.spool side)
	[ "$leaf" -ge 95 ] || fail "main.spin is the leaf of $leaf% of the samples"
	[ "$work" -ge 45 ] || fail "main.work;main.spin in $work% of the samples (half the CPU)"
	[ "$side" -ge 45 ] || fail "main.side;main.spin in $side% of the samples (half the CPU)"
	[ $((work + side)) -ge 95 ] || fail "main.spin under its caller in $((work + side))% only"
	run -0 "$PROF" report -q --format=folded s.spool
	assert_line --regexp '^runtime\.goexit;runtime\.main;main\.main;main\.work;main\.spin [0-9]+$'
	# (a sample now and then in the runtime's own stack switches, mcall or
	# nanotime1 on the system stack, stops there: not main.spin's)
	refute_line --regexp '0x[0-9a-f]+.*;main\.spin [0-9]+$'
	run -0 "$PROF" report -q s.spool
	assert_line --regexp '^stacks: +[0-9]+ complete \((99|100)\.[0-9]%\)'
	# the SP tables, not frame pointers, unwound them (the vDSO's odd frame aside)
	fp=$(sed -n 's/^unwound: .* fp-no-cfi \([0-9]*\) .*/\1/p' <<<"$output")
	[ -n "$fp" ]
	[ "$fp" -le 10 ] || fail "$fp frames unwound by frame pointers for want of CFI"
}

@test "go, stripped, attached: the same names and callers in -p mode" {
	go_build spin "$TOP/tests/targets/go/spin.go" -ldflags="-s -w"
	./spin 3 >out &
	pid=$!
	sleep 0.3
	run -0 "$PROF" record -q -o p.spool -p "$pid" -d 1
	wait "$pid"
	work=$(share p.spool work)
	[ "$work" -ge 95 ] || fail "main.work;main.spin in $work% of the attached samples"
}
