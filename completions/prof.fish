# SPDX-License-Identifier: MIT
# fish completion for prof(1).  Static: it never runs prof.
#
# tests/cli/90-docs-sync.bats reads this file.  Keep its shape: one
# `complete` a line; prof's own options and the commands (`-a NAME`) under
# the condition `__prof_needs_command`, each command's options (`-l`, `-s`)
# under `__prof_using CMD`.  Helpers are named __prof_*.

# The command given on the command line so far (the first word that is not
# an option), if any.
function __prof_command
    for word in (commandline -opc)[2..-1]
        switch $word
            case '-*'
                continue
            case '*'
                echo $word
                return 0
        end
    end
    return 1
end

function __prof_needs_command
    not __prof_command >/dev/null
end

function __prof_using
    set -l cmd (__prof_command)
    and test "$cmd" = "$argv[1]"
end

# Whether the words so far include a `--` after the command.
function __prof_after_dashdash
    contains -- -- (commandline -opc)
end

# Complete the command line after `--` as a command of its own.
function __prof_complete_target
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words)
    or return
    set -l target $words[(math $i + 1)..-1] (commandline -ct)
    complete -C (string join -- ' ' (string escape -- $target))
end

complete -c prof -f

# prof's own options and the commands
complete -c prof -n __prof_needs_command -l help -d 'give this help list'
complete -c prof -n __prof_needs_command -l usage -d 'give a short usage message'
complete -c prof -n __prof_needs_command -l version -s V -d 'print program version'
complete -c prof -n __prof_needs_command -a record -d 'run a command and sample it into a spool'
complete -c prof -n __prof_needs_command -a report -d 'print the profile recorded in a spool'
complete -c prof -n __prof_needs_command -a tail -d 'follow a spool while it is written'
complete -c prof -n __prof_needs_command -a top -d 'show the hottest functions of the machine or of processes, live'
complete -c prof -n __prof_needs_command -a push -d 'send spool files to Pyroscope or Parca'
complete -c prof -n __prof_needs_command -a serve -d 'record the machine without end, and serve its profiles over HTTP'

# prof record [OPTION...] [-- COMMAND [ARG...]]
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l pid -s p -x -a '(__fish_complete_pids)' -d 'attach to running processes instead of running a command'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l children -d 'with -p, also attach the children the processes already have'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l all-cpus -s a -d 'record the whole machine: every task on every CPU'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l cpu -s C -x -d 'with -a, only the CPUs of LIST, e.g. 0-3,6'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l cgroup -x -a '(__fish_complete_directories /sys/fs/cgroup/)' -d 'with -a, only the tasks of cgroup PATH'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l output -s o -r -F -d 'write the spool to FILE (default prof.spool)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l freq -s F -x -a 'max' -d 'sample HZ times a second, or max (default 999)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l event -s e -x -a 'cpu-clock task-clock cycles' -d 'the event to sample'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l stack-size -s s -x -d "user stack copied per sample (default: 65528, the kernel's limit, which is the max; 32K above 4000 Hz)"
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l kernel -s k -d 'record kernel frames too, above the user stack'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l off-cpu -d 'also record where threads wait: a stack at each switch-out, timed until the thread runs again'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l switch-output -f -a 'signal 100M 1G 10m 1h 1d' -d 'a new file FILE.<timestamp> after SIZE or TIME, or on SIGUSR2'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l switch-max-files -x -d 'with --switch-output, keep the newest N files'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l push -x -d 'with --switch-output, send each finished file to a Pyroscope or Parca server at URL'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l push-protocol -x -a 'auto ingest push parca' -d 'how --push sends'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l push-timeout -x -d 'the most one POST may take (default 10)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l service -x -d 'the service_name label of the profiles pushed'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l label -x -d 'one more label of the profiles pushed (NAME=VALUE)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l no-inherit -d 'do not follow child processes (threads are still followed)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l duration -s d -x -d 'stop after SECONDS, sending the command SIGTERM'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l mmap-pages -s m -x -d 'data pages of each per-CPU ring (a power of two)'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l quiet -s q -d 'print nothing on stderr but errors'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l verbose -s v -d "after the summary, how the stacks were unwound and what the unwinder's tables cost (repeat for debug)"
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l live -d 'show the hottest functions on stderr while recording'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l help -d 'give this help list'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -l version -s V -d 'print program version'
complete -c prof -n '__prof_using record; and not __prof_after_dashdash' -a -- -d 'the command to run follows'
complete -c prof -n '__prof_using record; and __prof_after_dashdash' -a '(__prof_complete_target)'

# prof report [OPTION...] [FILE]
complete -c prof -n '__prof_using report' -l format -x -a 'top tree folded json perf-script pprof gecko speedscope svg html' -d 'the view to print'
complete -c prof -n '__prof_using report' -l output -s o -r -F -d 'write the report to FILE, not standard output'
complete -c prof -n '__prof_using report' -l weight -x -a 'cpu off-cpu wall' -d 'what the report weighs: samples, off-CPU time, or both in time'
complete -c prof -n '__prof_using report' -l limit -x -d 'list N functions in top (default 30) or json (default all); 0 all'
complete -c prof -n '__prof_using report' -l min-percent -x -d 'hide what has under PCT% of samples (top, tree: default 0.5; json, svg: 0)'
complete -c prof -n '__prof_using report' -l inverted -d 'tree, folded and svg: each stack from its leaf out, callers below'
complete -c prof -n '__prof_using report' -l by-thread -d 'one profile per thread (name at the sample, tid)'
complete -c prof -n '__prof_using report' -l by-process -d 'one profile per process (comm at the sample, pid)'
complete -c prof -n '__prof_using report' -l idle -d 'the idle task of a recording of the whole machine as a process'
complete -c prof -n '__prof_using report' -l lines -d 'top and tree: a row per source line, with (FILE:LINE)'
complete -c prof -n '__prof_using report' -l no-demangle -d 'show C++ and Rust names mangled'
complete -c prof -n '__prof_using report' -l debug-dir -x -a '(__fish_complete_directories)' -d 'look for debug files in DIR first'
complete -c prof -n '__prof_using report' -l debuginfod -d 'download missing debug info from DEBUGINFOD_URLS'
complete -c prof -n '__prof_using report' -l pid -x -d 'only the samples of these processes'
complete -c prof -n '__prof_using report' -l tid -x -d 'only the samples of these threads'
complete -c prof -n '__prof_using report' -l comm -x -d 'only the samples of threads, or processes, of these names'
complete -c prof -n '__prof_using report' -l time -x -d 'only the samples from START to END seconds into the recording'
complete -c prof -n '__prof_using report' -l no-kernel -d 'leave out kernel frames'
complete -c prof -n '__prof_using report' -l focus -x -d 'only the stacks through a function matching REGEX'
complete -c prof -n '__prof_using report' -l exclude -x -d 'leave out the stacks through a function matching REGEX'
complete -c prof -n '__prof_using report' -l diff -d 'compare two spools, BASE and NEW'
complete -c prof -n '__prof_using report' -l fail-above -x -d 'with --diff, exit 3 when a share grew by more than PCT points'
complete -c prof -n '__prof_using report' -l quiet -s q -d 'print no warnings'
complete -c prof -n '__prof_using report' -l verbose -s v -d 'print more detail on stderr (repeat for debug)'
complete -c prof -n '__prof_using report' -l help -d 'give this help list'
complete -c prof -n '__prof_using report' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using report' -l version -s V -d 'print program version'
complete -c prof -n '__prof_using report' -k -a '(__fish_complete_suffix .spool)'

# prof tail [OPTION...] [FILE]
complete -c prof -n '__prof_using tail' -l format -x -a 'top samples json' -d 'what to print'
complete -c prof -n '__prof_using tail' -l weight -x -a 'cpu off-cpu wall' -d 'what functions are ranked by: samples, off-CPU time, or both in time'
complete -c prof -n '__prof_using tail' -l from-end -d 'skip the samples already in the spool'
complete -c prof -n '__prof_using tail' -l interval -x -d 'print top or json every SECONDS (default 1)'
complete -c prof -n '__prof_using tail' -l idle -x -d 'give up when nothing new came for SECONDS (default 30)'
complete -c prof -n '__prof_using tail' -l help -d 'give this help list'
complete -c prof -n '__prof_using tail' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using tail' -l version -s V -d 'print program version'
complete -c prof -n '__prof_using tail' -k -a '(__fish_complete_suffix .spool)'

# prof top [OPTION...] [-p PID... | -- COMMAND [ARG...]]
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l pid -s p -x -a '(__fish_complete_pids)' -d 'show running processes instead of the whole machine'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l cpu -s C -x -d 'the whole machine: only these CPUs'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l cgroup -x -a '(__fish_complete_directories)' -d 'the whole machine: only the tasks of this cgroup'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l freq -s F -x -a max -d 'sample HZ times a second, or max (default 999)'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l event -s e -x -a 'cpu-clock task-clock cycles' -d 'the event to sample'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l kernel -s k -d 'record kernel frames too, above the user stack'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l off-cpu -d 'also record where threads wait (for --weight off-cpu and wall)'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l duration -s d -x -d 'stop after SECONDS'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l output -s o -r -F -d 'keep the recording in FILE'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l limit -s n -x -d 'rows shown'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l interval -s i -x -d 'refresh every SECONDS (default 1)'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l by-process -d 'rows are processes, with the hottest function of each'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l weight -x -a 'cpu off-cpu wall' -d 'what rows are ranked by'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l format -x -a 'top json' -d 'what to print'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l help -d 'give this help list'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -l version -s V -d 'print program version'
complete -c prof -n '__prof_using top; and not __prof_after_dashdash' -a -- -d 'the command to run follows'
complete -c prof -n '__prof_using top; and __prof_after_dashdash' -a '(__prof_complete_target)'

# prof push [OPTION...] URL FILE...
complete -c prof -n '__prof_using push' -l protocol -x -a 'auto ingest push parca' -d "how to send: Pyroscope's ingest or push API, or Parca's WriteRaw"
complete -c prof -n '__prof_using push' -l service -x -d 'the service_name label'
complete -c prof -n '__prof_using push' -l label -x -d 'one more label of every profile (NAME=VALUE)'
complete -c prof -n '__prof_using push' -l timeout -x -d 'the most one POST may take (default 10)'
complete -c prof -n '__prof_using push' -l quiet -s q -d 'print nothing on stderr but errors'
complete -c prof -n '__prof_using push' -l verbose -s v -d 'say what became of each file'
complete -c prof -n '__prof_using push' -l help -d 'give this help list'
complete -c prof -n '__prof_using push' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using push' -l version -s V -d 'print program version'
complete -c prof -n '__prof_using push' -k -a '(__fish_complete_suffix .spool)'
# prof serve [OPTION...] [-p PID...]
complete -c prof -n '__prof_using serve' -l listen -x -a '127.0.0.1:6060 127.0.0.1:0 unix:' -d 'answer on ADDR:PORT, [IPv6]:PORT or unix:PATH'
complete -c prof -n '__prof_using serve' -l pid -s p -x -a '(__fish_complete_pids)' -d 'record running processes instead of the whole machine'
complete -c prof -n '__prof_using serve' -l cpu -s C -x -d 'the whole machine: only these CPUs'
complete -c prof -n '__prof_using serve' -l cgroup -x -a '(__fish_complete_directories)' -d 'the whole machine: only the tasks of this cgroup'
complete -c prof -n '__prof_using serve' -l freq -s F -x -a 'max 19 99' -d 'sample HZ times a second, or max (default 999)'
complete -c prof -n '__prof_using serve' -l event -s e -x -a 'cpu-clock task-clock cycles' -d 'the event to sample'
complete -c prof -n '__prof_using serve' -l kernel -s k -d 'record kernel frames too, above the user stack'
complete -c prof -n '__prof_using serve' -l off-cpu -d 'also record where threads wait (for weight=off-cpu and wall)'
complete -c prof -n '__prof_using serve' -l duration -s d -x -d 'stop after SECONDS'
complete -c prof -n '__prof_using serve' -l dir -x -a '(__fish_complete_directories)' -d 'keep the recording\'s files in DIR'
complete -c prof -n '__prof_using serve' -l keep -x -d 'how far back /debug/pprof/last reaches (default 300)'
complete -c prof -n '__prof_using serve' -l max-seconds -x -d 'the most seconds a request for the next seconds may ask for (default 300)'
complete -c prof -n '__prof_using serve' -l max-connections -x -d 'clients served at once (default 16)'
complete -c prof -n '__prof_using serve' -l debuginfo -d 'profiles with inline frames and source lines, from DWARF'
complete -c prof -n '__prof_using serve' -l verbose -s v -d 'log each answer (repeat for libmicrohttpd\'s messages)'
complete -c prof -n '__prof_using serve' -l help -d 'give this help list'
complete -c prof -n '__prof_using serve' -l usage -d 'give a short usage message'
complete -c prof -n '__prof_using serve' -l version -s V -d 'print program version'
