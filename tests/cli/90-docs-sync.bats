#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# 90-docs-sync: the man pages and the three completion files against the
# binary, in both directions, for prof itself and every command:
#   - the commands are those of `prof --list-commands` (hidden);
#   - the options of a command are those of `prof CMD --list-options`
#     (hidden, it walks the argp table), plus the ones argp adds itself
#     (--help -? --usage --version -V), taken from `prof CMD --help`;
#   - every option is documented in a .TP tag of man/prof-CMD.1's OPTIONS
#     (man/prof.1 for prof's own) and completed in the command's section of
#     completions/prof.bash, completions/_prof and completions/prof.fish
#     (the short forms of argp's own options, -? and -V, may be left out);
#   - nothing those places name is missing from the binary.
# Deliberate exceptions are lines `CMD OPTION FILE` in docs-sync-allow.txt,
# kept sorted; CMD is `prof` for prof's own options.  How each completion
# file is laid out (and so read here) is described at its top.

bats_require_minimum_version 1.5.0
load test_helper

ALLOW="$BATS_TEST_DIRNAME/docs-sync-allow.txt"
export LC_ALL=C		# one sort order for sort, comm and the allow-list

COMPLETIONS=(completions/prof.bash completions/_prof completions/prof.fish)
ARGP_LONG=(--help --usage --version)
ARGP_SHORT=('-?' -V)

# ---- the binary ---------------------------------------------------------

commands() {
	"$PROF" --list-commands
}

# Run prof's (CMD=prof) or a command's own ARGS.
prof_cmd() {
	local cmd=$1

	shift
	if [[ $cmd == prof ]]; then
		"$PROF" "$@"
	else
		"$PROF" "$cmd" "$@"
	fi
}

# The options that `--help` shows, one per line (argp's own included).
help_options() {
	prof_cmd "$1" --help | awk '
		/^ +-/ {
			sub(/^ +/, "")
			sub(/  .*/, "")
			n = split($0, opt, ", ")
			for (i = 1; i <= n; i++) {
				o = opt[i]
				sub(/[=[ ].*/, "", o)
				print o
			}
		}' | sort -u
}

# The options of CMD that argp adds itself and --help shows.
argp_options() {
	local o a

	help_options "$1" | while read -r o; do
		for a in "${ARGP_LONG[@]}" "${ARGP_SHORT[@]}"; do
			if [[ $o == "$a" ]]; then echo "$o"; fi
		done
	done
}

# Every option that must be documented and completed.
required_options() {
	{
		prof_cmd "$1" --list-options
		argp_options "$1" | grep -e '^--'
	} | sort -u
}

# Every option that docs and completions may name.
known_options() {
	{
		prof_cmd "$1" --list-options
		argp_options "$1"
	} | sort -u
}

# ---- the docs -----------------------------------------------------------

man_page() {
	if [[ $1 == prof ]]; then
		echo man/prof.1
	else
		echo "man/prof-$1.1"
	fi
}

# The lines of section NAME (.SH NAME) of a man page.
man_section() {
	awk -v name="$2" '
		/^\.SH/ {
			s = $0
			sub(/^\.SH[ \t]+/, "", s)
			gsub(/"/, "", s)
			on = (s == name)
			next
		}
		on' "$TOP/$1"
}

# Roff to plain text, as far as option names go: \- is -, fonts go.
roff_plain() {
	sed -e 's/\\-/-/g' -e 's/\\f\[[^]]*\]//g' -e 's/\\f(..//g' -e 's/\\f.//g' \
	    -e 's/\\[&%:]//g' -e 's/\\(../ /g' -e 's/\\\[[^]]*\]/ /g'
}

# The option names in text: --long, -s (a - inside a word is no option).
option_words() {
	grep -oE -e '(^|[^A-Za-z0-9_.-])--?[A-Za-z0-9?][-A-Za-z0-9]*' |
		sed -E 's/^[^-]*//' | sort -u
}

# The tag lines (the line after .TP or .TQ) of a section.
tag_lines() {
	awk '/^\.T[PQ]/ { tag = 1; next } tag { print; tag = 0 }'
}

# The lines of shell function FN, from `FN()` to the first `}` in column 1.
shell_function() {
	awk -v fn="$2" '
		!on && index($0, fn "()") == 1 { on = 1; next }
		on && /^}/ { exit }
		on' "$TOP/$1"
}

# The options a completion file completes for CMD (prof: prof's own).
completion_options() {
	local file=$1 cmd=$2 fn=_prof

	[[ $cmd == prof ]] || fn="_prof_$cmd"
	case $file in
	*.bash)
		# the opts='...' lines, and the patterns of `case $prev in`
		shell_function "$file" "$fn" | {
			sed -n -E -e "s/.*\<opts=['\"]([^'\"]*)['\"].*/ \1 /p" \
			       -e 's/^[[:space:]]*(-[^)]*)\).*/ \1 /p'
		} | tr '|' ' ' | option_words
		;;
	*/_prof)
		# the _arguments specs: a line starting with ' or {, up to its
		# description [...] or its first :
		shell_function "$file" "$fn" |
			grep -E "^[[:space:]]*['\"{]" |
			sed -E -e 's/\[.*//' -e 's/:.*//' -e 's/\\\?/?/g' -e "s/[{},'\"()*+=]/ /g" |
			option_words
		;;
	*.fish)
		fish_lines "$file" "$cmd" | awk '{
			for (i = 1; i < NF; i++) {
				if ($i == "-l" || $i == "--long-option")
					print "--" $(i + 1)
				else if ($i == "-s" || $i == "--short-option" ||
					 $i == "-o" || $i == "--old-option")
					print "-" $(i + 1)
			}
		}' | tr -d "'\"" | sort -u
		;;
	esac
}

# The `complete` lines of prof.fish for CMD (prof: before any command).
fish_lines() {
	if [[ $2 == prof ]]; then
		grep -E '^complete .*-n +__prof_needs_command([[:space:]]|$)' "$TOP/$1"
	else
		grep -E "^complete .*-n +['\"]?__prof_using +$2([;'\"[:space:]]|$)" "$TOP/$1"
	fi
}

# The commands a completion file offers, and those it has a section for.
completion_commands() {
	case $1 in
	*.bash)
		shell_function "$1" _prof |
			sed -n -E "s/.*\<commands=['\"]([^'\"]*)['\"].*/\1/p" | tr ' ' '\n'
		;;
	*/_prof)
		shell_function "$1" _prof |
			awk '/prof_commands=\(/ { on = 1; next }
			     on && /^[[:space:]]*\)[[:space:]]*$/ { exit }
			     on { print }' |
			sed -n -E "s/^[[:space:]]*['\"]([^:'\"]+):.*/\1/p"
		;;
	*.fish)
		fish_lines "$1" prof | sed -n -E 's/.* -a +([A-Za-z0-9_-]+)( .*|$)/\1/p'
		;;
	esac | grep . | sort -u
}

completion_sections() {
	case $1 in
	*.bash | */_prof)
		sed -n -E 's/^_prof_([A-Za-z0-9_-]+)\(\).*/\1/p' "$TOP/$1"
		;;
	*.fish)
		grep -E '^complete ' "$TOP/$1" | grep -oE "__prof_using +[A-Za-z0-9_-]+" |
			awk '{ print $2 }'
		;;
	esac | sort -u
}

# ---- the allow-list -----------------------------------------------------

allowed() {
	grep -qxF -- "$1 $2 $3" "$ALLOW" 2>/dev/null
}

# Lines of A missing from B (both sorted).
missing() {
	comm -23 <(printf '%s\n' "$1" | grep .) <(printf '%s\n' "$2" | grep .)
}

# Check CMD against FILE, whose options for it are DOCUMENTED (must hold
# every required option) and MENTIONED (must hold only known options).
check_against() {
	local cmd=$1 file=$2 documented=$3 mentioned=$4 o

	for o in $(missing "$(required_options "$cmd")" "$documented"); do
		allowed "$cmd" "$o" "$file" || echo "$file: $cmd $o is not documented or completed"
	done
	for o in $(missing "$mentioned" "$(known_options "$cmd")"); do
		allowed "$cmd" "$o" "$file" || echo "$file: $cmd $o does not exist in the binary"
	done
}

man_options() {	# CMD MODE: MODE tags (the .TP tags) or all (the section)
	if [[ $2 == tags ]]; then
		man_section "$(man_page "$1")" OPTIONS | tag_lines | roff_plain | option_words
	else
		man_section "$(man_page "$1")" OPTIONS | roff_plain | option_words
	fi
}

check_man() {
	local cmd=$1 page

	page=$(man_page "$cmd")
	[[ -f $TOP/$page ]] || return 0	# the commands test says so
	check_against "$cmd" "$page" "$(man_options "$cmd" tags)" "$(man_options "$cmd" all)"
}

check_completion() {
	local file=$1 cmd=$2 opts

	opts=$(completion_options "$file" "$cmd")
	check_against "$cmd" "$file" "$opts" "$opts"
}

# Fail with the lines of $1, if any.
fail_if_any() {
	[[ -z $1 ]] || fail "$(printf '%s\n' "$1" "(a deliberate exception goes in tests/cli/docs-sync-allow.txt)")"
}

# ---- tests ---------------------------------------------------------------

@test "--list-commands and --list-options list what --help shows" {
	local cmd errors=""

	run -0 "$PROF" --list-commands
	[[ -n $output ]] || fail "prof --list-commands lists no command"
	for cmd in prof $(commands); do
		run -0 --separate-stderr prof_cmd "$cmd" --list-options
		assert_equal "$stderr" ""
		if grep . <<<"$output" | grep -vxE -e '--[A-Za-z0-9][-A-Za-z0-9]*' -e '-[A-Za-z0-9]'; then
			errors+="$cmd --list-options printed a line that is no option"$'\n'
		fi
		[[ -n $(argp_options "$cmd") ]] ||
			errors+="$cmd --help shows none of argp's own options: cannot read it"$'\n'
		# what --help shows, less argp's own, is what --list-options lists
		local want got
		want=$(comm -23 <(help_options "$cmd") <(argp_options "$cmd" | sort))
		got=$(printf '%s\n' "$output" | grep . | sort -u)
		[[ $want == "$got" ]] ||
			errors+="$cmd: --help shows [${want//$'\n'/ }] but --list-options [${got//$'\n'/ }]"$'\n'
	done
	fail_if_any "$errors"
}

@test "every command has a man page and is in prof.1, and nothing else is" {
	local cmds pages listed errors="" c p

	cmds=$(commands | sort -u)
	for c in $cmds; do
		[[ -f $TOP/man/prof-$c.1 ]] || errors+="man/prof-$c.1 is missing"$'\n'
	done
	pages=$(for p in "$TOP"/man/prof-*.1; do
		[[ -f $p ]] && basename "$p" .1 | sed 's/^prof-//'
	done | sort -u)
	for c in $(missing "$pages" "$cmds"); do
		errors+="man/prof-$c.1 documents '$c', which is not a prof command"$'\n'
	done
	listed=$(man_section man/prof.1 COMMANDS | tag_lines | roff_plain |
		 sed -E 's/^\.[A-Z]+ +//' | awk '{ print $1 }' | tr -d '"' | sort -u)
	for c in $(missing "$cmds" "$listed"); do
		errors+="man/prof.1: command '$c' is not in COMMANDS"$'\n'
	done
	for c in $(missing "$listed" "$cmds"); do
		errors+="man/prof.1: COMMANDS lists '$c', which is not a prof command"$'\n'
	done
	for c in $cmds; do
		man_section man/prof.1 "SEE ALSO" | roff_plain | grep -qF "prof-$c" ||
			errors+="man/prof.1: SEE ALSO does not name prof-$c(1)"$'\n'
	done
	fail_if_any "$errors"
}

@test "every completion file completes exactly the commands" {
	local cmds file errors="" c

	cmds=$(commands | sort -u)
	for file in "${COMPLETIONS[@]}"; do
		[[ -f $TOP/$file ]] || { errors+="$file is missing"$'\n'; continue; }
		for c in $(missing "$cmds" "$(completion_commands "$file")"); do
			errors+="$file: does not complete the command '$c'"$'\n'
		done
		for c in $(missing "$(completion_commands "$file")" "$cmds"); do
			errors+="$file: completes '$c', which is not a prof command"$'\n'
		done
		for c in $(missing "$cmds" "$(completion_sections "$file")"); do
			errors+="$file: has no section for the options of '$c'"$'\n'
		done
		for c in $(missing "$(completion_sections "$file")" "$cmds"); do
			errors+="$file: has a section for '$c', which is not a prof command"$'\n'
		done
	done
	fail_if_any "$errors"
}

@test "every option is in a .TP tag of its man page's OPTIONS, and only those" {
	local cmd errors=""

	for cmd in prof $(commands); do
		errors+=$(check_man "$cmd")
		errors+=$'\n'
	done
	fail_if_any "$(grep . <<<"$errors")"
}

@test "completions/prof.bash completes every option, and only those" {
	local cmd errors=""

	for cmd in prof $(commands); do
		errors+=$(check_completion completions/prof.bash "$cmd")$'\n'
	done
	fail_if_any "$(grep . <<<"$errors")"
}

@test "completions/_prof completes every option, and only those" {
	local cmd errors=""

	for cmd in prof $(commands); do
		errors+=$(check_completion completions/_prof "$cmd")$'\n'
	done
	fail_if_any "$(grep . <<<"$errors")"
}

@test "completions/prof.fish completes every option, and only those" {
	local cmd errors=""

	for cmd in prof $(commands); do
		errors+=$(check_completion completions/prof.fish "$cmd")$'\n'
	done
	fail_if_any "$(grep . <<<"$errors")"
}

@test "docs-sync-allow.txt is sorted, well-formed and has no stale line" {
	local cmd opt file extra errors="" n=0 documented mentioned

	[[ -f $ALLOW ]] || fail "tests/cli/docs-sync-allow.txt is missing (it may be empty)"
	LC_ALL=C sort -c "$ALLOW" 2>/dev/null ||
		fail "tests/cli/docs-sync-allow.txt is not sorted (LC_ALL=C sort)"
	while read -r cmd opt file extra; do
		n=$((n + 1))
		if [[ -z $file || -n $extra || ! -f $TOP/$file ]]; then
			errors+="line $n: want 'CMD OPTION FILE' with an existing FILE"$'\n'
			continue
		fi
		case $file in
		man/*)
			documented=$(man_options "$cmd" tags)
			mentioned=$(man_options "$cmd" all)
			;;
		*)
			documented=$(completion_options "$file" "$cmd")
			mentioned=$documented
			;;
		esac
		# needed when the binary has the option and FILE lacks it, or
		# the other way round
		if grep -qxF -- "$opt" <<<"$(required_options "$cmd")"; then
			grep -qxF -- "$opt" <<<"$documented" || continue
		elif grep -qxF -- "$opt" <<<"$mentioned" &&
		     ! grep -qxF -- "$opt" <<<"$(known_options "$cmd")"; then
			continue
		fi
		errors+="line $n: '$cmd $opt $file' is in sync: remove it"$'\n'
	done <"$ALLOW"
	fail_if_any "$errors"
}
