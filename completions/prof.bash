# SPDX-License-Identifier: MIT
# bash completion for prof(1).  Static: it never runs prof.
#
# tests/cli/90-docs-sync.bats reads this file.  Keep its shape:
#   - the commands in the `commands=` line of _prof;
#   - prof's own options in the `opts=` line of _prof, and each command's in
#     the `opts=` line of its function _prof_CMD;
#   - an option that takes an argument also in a `case $prev in` of that
#     function, as a pattern line that starts with it: `--output | -o)`.
# Helpers are named __prof_*.

# Complete the names of files matching the glob $1, and of directories.
__prof_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -X "!$1" -- "$cur"; compgen -d -- "$cur")
}

# Complete the words of $1 that start with $cur.
__prof_words()
{
	mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

# After --: complete the command to run and its arguments (true when
# the words are past --, nothing else to complete).
__prof_command()
{
	local i

	for ((i = 2; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((skip + i + 1))
			elif ((cword == i + 1)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return 0
		fi
	done
	return 1
}

_prof_record()
{
	local opts='--pid -p --children --all-cpus -a --cpu -C --cgroup --output -o --freq -F --event -e --stack-size -s --kernel -k --off-cpu --no-inherit --duration -d --mmap-pages -m --switch-output --switch-max-files --push --push-protocol --push-timeout --service --label --quiet -q --verbose -v --live --help --usage --version'

	# after --, or after the first word that is not an option or its
	# argument, the words are the command to run and its arguments
	__prof_command && return
	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--output | -o)
		__prof_files '*.spool'
		return
		;;
	--event | -e)
		__prof_words 'cpu-clock task-clock cycles'
		return
		;;
	--freq | -F)
		__prof_words 'max'
		return
		;;
	--pid | -p)
		mapfile -t COMPREPLY < <(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")
		return
		;;
	--stack-size | -s | --duration | -d | --mmap-pages | -m | --switch-max-files | --cpu | -C)
		return
		;;
	--cgroup)
		mapfile -t COMPREPLY < <(cd /sys/fs/cgroup 2>/dev/null && compgen -d -- "$cur")
		return
		;;
	--switch-output)
		__prof_words 'signal 100M 1G 10m 1h 1d'
		return
		;;
	--push-protocol)
		__prof_words 'auto ingest push parca'
		return
		;;
	--push | --push-timeout | --service | --label)
		return
		;;
	esac
	__prof_words "$opts --"
}

_prof_report()
{
	local opts='--format --output -o --weight --limit --min-percent --inverted --by-thread --by-process --idle --lines --no-demangle --debug-dir --debuginfod --pid --tid --comm --time --no-kernel --focus --exclude --diff --fail-above --quiet -q --verbose -v --help --usage --version'

	# bash splits --format=VALUE at the =, which becomes a word of its own
	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--format)
		__prof_words 'top tree folded json perf-script pprof gecko speedscope svg html'
		return
		;;
	--weight)
		__prof_words 'cpu off-cpu wall'
		return
		;;
	--output | -o)
		__prof_files '*'
		return
		;;
	--debug-dir)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--limit | --min-percent | --pid | --tid | --comm | --time | --focus | --exclude | --fail-above)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		__prof_words "$opts"
	else
		__prof_files '*.spool'
	fi
}

_prof_tail()
{
	local opts='--format --weight --from-end --interval --idle --help --usage --version'

	# bash splits --format=VALUE at the =, which becomes a word of its own
	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--format)
		__prof_words 'top samples json'
		return
		;;
	--weight)
		__prof_words 'cpu off-cpu wall'
		return
		;;
	--interval | --idle)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		__prof_words "$opts"
	else
		__prof_files '*.spool'
	fi
}

_prof_top()
{
	local opts='--pid -p --cpu -C --cgroup --freq -F --event -e --kernel -k --off-cpu --duration -d --output -o --limit -n --interval -i --by-process --weight --format --help --usage --version'

	# after --, the words are the command to run and its arguments
	__prof_command && return
	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--output | -o)
		__prof_files '*.spool'
		return
		;;
	--event | -e)
		__prof_words 'cpu-clock task-clock cycles'
		return
		;;
	--freq | -F)
		__prof_words 'max'
		return
		;;
	--pid | -p)
		mapfile -t COMPREPLY < <(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")
		return
		;;
	--weight)
		__prof_words 'cpu off-cpu wall'
		return
		;;
	--format)
		__prof_words 'top json'
		return
		;;
	--cgroup)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--cpu | -C | --duration | -d | --limit | -n | --interval | -i)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		__prof_words "$opts"
	else
		mapfile -t COMPREPLY < <(compgen -c -- "$cur")
	fi
}

_prof_push()
{
	local opts='--protocol --service --label --timeout --quiet -q --verbose -v --help --usage --version'

	# bash splits --protocol=VALUE at the =, which becomes a word of its own
	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--protocol)
		__prof_words 'auto ingest push parca'
		return
		;;
	--service | --label | --timeout)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		__prof_words "$opts"
	else
		__prof_files '*.spool*'
	fi
}

_prof_serve()
{
	local opts='--listen --pid -p --cpu -C --cgroup --freq -F --event -e --kernel -k --off-cpu --duration -d --dir --keep --max-seconds --max-connections --debuginfo --verbose -v --help --usage --version'

	[[ $prev == = ]] && prev=${words[cword - 2]}
	case $prev in
	--listen)
		__prof_words '127.0.0.1:6060 127.0.0.1:0 [::1]:6060 unix:'
		return
		;;
	--event | -e)
		__prof_words 'cpu-clock task-clock cycles'
		return
		;;
	--freq | -F)
		__prof_words 'max 19 99'
		return
		;;
	--pid | -p)
		mapfile -t COMPREPLY < <(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")
		return
		;;
	--cgroup)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--dir)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--cpu | -C | --duration | -d | --keep | --max-seconds | --max-connections)
		return
		;;
	esac
	__prof_words "$opts"
}

_prof()
{
	local commands='record report tail top push serve'
	local opts='--help --usage --version'
	local cur prev words cword skip=0 i

	cur=${COMP_WORDS[COMP_CWORD]}
	# shellcheck disable=SC2034 # for the `case $prev in` of options with arguments
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	words=("${COMP_WORDS[@]}")
	cword=$COMP_CWORD

	# the first word that is not an option is the command
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*)
			if declare -F "_prof_${words[i]}" >/dev/null; then
				# make words[1] the command for _prof_CMD; skip is
				# what it takes to get back to an index of COMP_WORDS
				skip=$((i - 1))
				words=(prof "${words[@]:i}")
				cword=$((cword - skip))
				"_prof_${words[1]}"
			fi
			return
			;;
		esac
	done
	if [[ $cur == -* ]]; then
		__prof_words "$opts"
	else
		__prof_words "$commands"
	fi
}

complete -F _prof prof
