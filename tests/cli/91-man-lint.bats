#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# 91-man-lint: the man pages are clean roff (groff -ww) with the sections the
# style asks for, and each command's EXIT STATUS is what its --help says;
# `prof --help` lists every command; prof-spool(5) describes every record tag
# and TRAILER key of lib/spool/spool_format.h with its number, states its layout
# constants, and its hex example is what spoolgen writes; the completion
# files parse.

bats_require_minimum_version 1.5.0
load test_helper

FORMAT_H="$TOP/lib/spool/spool_format.h"

man_pages() {
	(cd "$TOP" && ls man/*.[1-9])
}

# The section titles (.SH) of a page, one a line.
sections() {
	sed -n -E -e 's/^\.SH[[:space:]]+//' -e 's/"//g' -e '/./p' "$TOP/$1"
}

# The tags (.TP) of section NAME of a page, as plain words.
section_tags() {
	awk -v name="$2" '
		/^\.SH/ { s = $0; sub(/^\.SH[ \t]+/, "", s); gsub(/"/, "", s); on = (s == name); next }
		on && /^\.TP/ { tag = 1; next }
		on && tag { sub(/^\.[A-Z]+[ \t]+/, ""); print $1; tag = 0 }' "$TOP/$1"
}

# A page as plain text, one line.
rendered() {
	MANWIDTH=200 groff -man -Tutf8 -P-c -P-b -P-u "$TOP/$1" 2>/dev/null | tr -s ' \n' '  '
}

# Value of SPOOL_<NAME> as the header #defines or enumerates it.
format_value() {
	sed -n -E "s/^[[:space:]]*(#define[[:space:]]+)?SPOOL_$1[[:space:]=]+([^,/]*[^,/[:space:]]).*/\2/p" \
		"$FORMAT_H" | head -n 1
}

@test "every man page passes groff -ww with no warning" {
	local page errors=""
	require_cmd groff groff-base

	for page in $(man_pages); do
		run --separate-stderr groff -ww -z -man "$TOP/$page"
		[[ $status -eq 0 && -z $stderr ]] || errors+="$page: $stderr"$'\n'
	done
	[[ -z $errors ]] || fail "$errors"
}

@test "every man page has the sections of the style, in order" {
	local page want got errors=""
	local -a wanted

	for page in $(man_pages); do
		case $page in
		*.1) wanted=(NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO") ;;
		*) wanted=(NAME SYNOPSIS DESCRIPTION EXAMPLES "SEE ALSO") ;;
		esac
		want=$(printf '%s\n' "${wanted[@]}")
		# the wanted sections in the order they come; others may sit between
		got=$(sections "$page" | grep -xF -e "$want")
		[[ $got == "$want" ]] ||
			errors+="$page: sections [${got//$'\n'/, }], want [${want//$'\n'/, }]"$'\n'
	done
	[[ -z $errors ]] || fail "$errors"
}

@test "EXIT STATUS of each command's page lists the statuses of its --help" {
	local cmd page want got errors=""

	for cmd in prof $("$PROF" --list-commands); do
		if [[ $cmd == prof ]]; then
			page=man/prof.1
			want=$("$PROF" --help)
		else
			page=man/prof-$cmd.1
			want=$("$PROF" "$cmd" --help)
		fi
		want=$(sed -n '/^Exit status:/,/^$/p' <<<"$want" | tr '\n' ' ' |
		       grep -oE '[:;,] [0-9]+ ' | tr -dc '0-9\n' | sort -n | xargs)
		got=$(section_tags "$page" "EXIT STATUS" | grep -xE '[0-9]+' | sort -n | xargs)
		[[ -n $want && $want == "$got" ]] ||
			errors+="$page: EXIT STATUS has [$got], --help says [$want]"$'\n'
	done
	[[ -z $errors ]] || fail "$errors"
}

@test "prof --help lists every command" {
	local cmd

	run -0 "$PROF" --help
	for cmd in $("$PROF" --list-commands); do
		grep -qE "^ +$cmd +[^ ]" <<<"$output" || fail "prof --help does not list '$cmd'"
	done
}

@test "prof-spool.5 names every record tag of spool_format.h, with its number" {
	local text name value errors="" n=0
	require_cmd groff groff-base

	text=$(rendered man/prof-spool.5)
	while read -r name value; do
		n=$((n + 1))
		if [[ $name == OPTIONAL ]]; then
			grep -qE "tag of $value or more is optional" <<<"$text" ||
				errors+="does not say tags from $value up are optional"$'\n'
		elif ! grep -qF "$name (tag $value)" <<<"$text"; then
			errors+="does not describe $name (tag $value)"$'\n'
		fi
	done < <(sed -n -E 's/^[[:space:]]*SPOOL_TAG_([A-Z_]+)[[:space:]]*=[[:space:]]*([0-9]+).*/\1 \2/p' \
		 "$FORMAT_H")
	((n >= 15)) || fail "found only $n SPOOL_TAG_ values in lib/spool/spool_format.h"
	[[ -z $errors ]] || fail "man/prof-spool.5 $errors"
}

@test "prof-spool.5 lists every TRAILER counter key of spool_format.h" {
	local text name value errors="" n=0
	require_cmd groff groff-base

	text=$(rendered man/prof-spool.5)
	while read -r name value; do
		n=$((n + 1))
		case $name in
		LOST_BASE) grep -qF "$value+k events lost" <<<"$text" ;;
		UNWIND_BASE) grep -qF "$value+c unwinds stopped" <<<"$text" ;;
		FALLBACK_BASE) grep -qF "$value+f frames unwound by fallback" <<<"$text" ;;
		*) grep -qiE " $value +${name,,}(_ns)?: " <<<"$text" ;;
		esac || errors+="does not list counter key $value ($name)"$'\n'
	done < <(sed -n -E 's/^[[:space:]]*SPOOL_CNT_([A-Z_]+)[[:space:]]*=[[:space:]]*([0-9]+).*/\1 \2/p' \
		 "$FORMAT_H")
	((n >= 12)) || fail "found only $n SPOOL_CNT_ values in lib/spool/spool_format.h"
	[[ -z $errors ]] || fail "man/prof-spool.5 $errors"
}

@test "prof-spool.5 states the layout constants of spool_format.h" {
	local text header block max ratio major varint errors=""
	require_cmd groff groff-base

	text=$(rendered man/prof-spool.5)
	header=$(format_value HEADER_LEN)
	block=$(format_value BLOCK_HEADER_LEN)
	max=$(format_value BLOCK_MAX | sed -n -E 's/^\(([0-9]+)u? << 20\)$/\1/p')
	ratio=$(format_value DEFLATE_MAX_RATIO | tr -d u)
	major=$(format_value VERSION_MAJOR)
	varint=$(format_value VARINT_MAX)
	[[ -n $header && -n $block && -n $max && -n $ratio && -n $major && -n $varint ]] ||
		fail "cannot read the constants of lib/spool/spool_format.h"
	grep -qF "starts with $header bytes" <<<"$text" || errors+="file header of $header bytes"$'\n'
	grep -qF "A block is a $block-byte header" <<<"$text" || errors+="block header of $block bytes"$'\n'
	grep -qF "$max MiB" <<<"$text" || errors+="block limit of $max MiB"$'\n'
	grep -qF "× $ratio + 64" <<<"$text" || errors+="deflate ratio bound $ratio"$'\n'
	grep -qF "major version: $major" <<<"$text" || errors+="major version $major"$'\n'
	grep -qF "at most $varint bytes long" <<<"$text" || errors+="uvarints of at most $varint bytes"$'\n'
	[[ -z $errors ]] || fail "man/prof-spool.5 does not state: $errors"
}

@test "the hex example of prof-spool.5 is what spoolgen writes" {
	local want got out

	[[ -x $SPOOLGEN ]] || skip_or_fail "no $SPOOLGEN: make tests builds it"
	want=$(grep -E '^[0-9a-f]{8}: ' "$TOP/man/prof-spool.5" | cut -d' ' -f2- | xargs)
	[[ -n $want ]] || fail "man/prof-spool.5 has no hex example"
	out=$(spool example.spool --samples 1 --stacks 1 --raw)
	got=$(od -An -tx1 -v "$out" | xargs | cut -c1-${#want})
	[[ $got == "$want" ]] ||
		fail "man/prof-spool.5: the example differs from what spoolgen writes now; redo it with
	$SPOOLGEN --samples 1 --stacks 1 --raw x.spool && xxd -g1 x.spool | head
and check its decoded table"
}

@test "the completion files parse (zsh and fish only where installed)" {
	run -0 --separate-stderr bash -n "$TOP/completions/prof.bash"
	assert_equal "$stderr" ""
	# not required: a machine without zsh or fish checks what it can
	if command -v zsh >/dev/null; then
		run -0 --separate-stderr zsh -n "$TOP/completions/_prof"
		assert_equal "$stderr" ""
	fi
	if command -v fish >/dev/null; then
		run -0 --separate-stderr fish -n "$TOP/completions/prof.fish"
		assert_equal "$stderr" ""
	fi
}
