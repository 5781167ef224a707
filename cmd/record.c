/* SPDX-License-Identifier: MIT */
/*
 * record.c - `prof record [OPTION...] -- COMMAND [ARG...]`: launch COMMAND
 * suspended, record it with libprof's recorder until it and its followed
 * descendants exit (or a signal, or -d), and pass its exit status on.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "prof.h"

enum {
	OPT_NO_INHERIT = 0x100,
	OPT_CHILDREN,
	OPT_LIVE,
	OPT_OFF_CPU,
	OPT_SWITCH_OUTPUT,
	OPT_SWITCH_MAX_FILES,
	OPT_CGROUP,
};

#define MAX_PIDS 64

struct record_args {
	struct prof_recorder_opts opts;
	const char *output;
	double duration;
	bool quiet;
	int verbosity;
	bool live;
	char **argv;
	int argc;
	pid_t pids[MAX_PIDS];
	size_t npids;
	bool all;
};

static const struct argp_option record_options[] = {
	{ "output", 'o', "FILE", 0, "write the spool to FILE (default: prof.spool)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "attach to running processes instead of running a "
					 "command", 0 },
	{ "all-cpus", 'a', NULL, 0, "record the whole machine: every task on every CPU (with a "
				    "command, while it runs; needs root, CAP_PERFMON or "
				    "kernel.perf_event_paranoid <= 0)", 0 },
	{ "cpu", 'C', "LIST", 0, "with -a, only the CPUs of LIST, e.g. 0-3,6", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "with -a, only the tasks of cgroup PATH (a cgroup v2 "
					   "directory, or a path under /sys/fs/cgroup)", 0 },
	{ "children", OPT_CHILDREN, NULL, 0, "with -p, also attach the children the processes "
					   "already have", 0 },
	{ "freq", 'F', "HZ", 0, "sample HZ times a second, or 'max' (default: 999)", 0 },
	{ "event", 'e', "EVENT", 0, "cpu-clock, task-clock or cycles (default: cycles, "
				    "else cpu-clock)", 0 },
	{ "stack-size", 's', "BYTES", 0, "user stack copied per sample; K suffix allowed "
					 "(default: 65528, the kernel's limit, which is the max; 32K above "
					 "4000 Hz)", 0 },
	{ "kernel", 'k', NULL, 0, "record kernel frames too, above the user stack", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0, "also record where threads wait: a stack at each "
					   "switch-out, timed until the thread runs again "
					   "(needs root or CAP_PERFMON)", 0 },
	{ "no-inherit", OPT_NO_INHERIT, NULL, 0, "do not follow child processes (threads are "
						 "still followed)", 0 },
	{ "duration", 'd', "SECONDS", 0, "stop after SECONDS, sending the command SIGTERM", 0 },
	{ "mmap-pages", 'm', "PAGES", 0, "data pages of each per-CPU ring (a power of two)", 0 },
	{ "switch-output", OPT_SWITCH_OUTPUT, "signal|SIZE|TIME", OPTION_ARG_OPTIONAL,
	  "a new file FILE.<timestamp> once the current one holds SIZE (B, K, M, G), after "
	  "TIME (s, m, h, d), or on SIGUSR2 (signal, the default); each reads on its own", 0 },
	{ "switch-max-files", OPT_SWITCH_MAX_FILES, "N", 0,
	  "with --switch-output, keep the newest N files, removing older ones", 0 },
	{ "quiet", 'q', NULL, 0, "print nothing on stderr but errors", 0 },
	{ "verbose", 'v', NULL, 0, "after the summary, how the stacks were unwound and what "
				   "the unwinder's tables cost (repeat for debug)", 0 },
	{ "live", OPT_LIVE, NULL, 0, "show the hottest functions on stderr while recording, as "
				     "prof tail does", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp record_argp;

static unsigned long long parse_size(struct argp_state *state, const char *what,
				     const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k') {
		v *= 1024;
		end++;
	}
	if (errno || end == arg || *end || arg[0] == '-')
		argp_error(state, "invalid %s '%s'", what, arg);
	return v;
}

/* --switch-output's argument: signal, SIZE (B, K, M, G) or TIME (s, m, h, d). */
static void parse_switch(struct argp_state *state, struct record_args *a, const char *arg)
{
	static const struct {
		char unit;
		uint64_t bytes, ns;
	} units[] = {
		{ 'B', 1, 0 }, { 'K', 1ull << 10, 0 }, { 'M', 1ull << 20, 0 }, { 'G', 1ull << 30, 0 },
		{ 's', 0, 1000000000ull }, { 'm', 0, 60000000000ull },
		{ 'h', 0, 3600000000000ull }, { 'd', 0, 86400000000000ull },
	};
	unsigned long long v;
	char *end;
	size_t i;

	if (!arg || !strcmp(arg, "signal")) {
		a->opts.switch_signal = true;
		return;
	}
	errno = 0;
	v = strtoull(arg, &end, 10);
	for (i = 0; !errno && end != arg && arg[0] != '-' && v && i < 8; i++) {
		if (end[0] != units[i].unit && !(units[i].bytes > 1 && end[0] == units[i].unit + 32))
			continue;
		if (end[1] && !(units[i].bytes > 1 && (end[1] == 'B' || end[1] == 'b') && !end[2]))
			break;
		if (units[i].bytes)
			a->opts.switch_bytes = v * units[i].bytes;
		else
			a->opts.switch_ns = v * units[i].ns;
		return;
	}
	argp_error(state, "invalid --switch-output '%s': signal, a size (with B, K, M or G) or a "
		   "time (with s, m, h or d)", arg);
}

static void parse_pids(struct argp_state *state, struct record_args *a, char *arg)
{
	char *tok, *save = NULL, *end;
	size_t i;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || end == tok || *end || v <= 0 || v > 0x7fffffff)
			argp_error(state, "invalid pid '%s'", tok);
		for (i = 0; i < a->npids && a->pids[i] != (pid_t)v; i++)
			;
		if (i < a->npids) {
			warn_msg("pid %ld given twice; attaching to it once", v);
			continue;
		}
		if (a->npids == MAX_PIDS)
			argp_error(state, "more than %d pids", MAX_PIDS);
		a->pids[a->npids++] = (pid_t)v;
	}
}

static error_t parse_record(int key, char *arg, struct argp_state *state)
{
	struct record_args *a = state->input;
	char *end;

	switch (key) {
	case 'v':
		a->verbosity++;
		break;
	case 'o':
		a->output = arg;
		break;
	case 'F':
		if (!strcmp(arg, "max")) {
			a->opts.freq_max = true;
			break;
		}
		a->opts.freq_hz = parse_size(state, "frequency", arg);
		if (a->opts.freq_hz == 0)
			argp_error(state, "invalid frequency '%s'", arg);
		break;
	case 'e':
		if (!strcmp(arg, "cpu-clock"))
			a->opts.event = PROF_EVENT_CPU_CLOCK;
		else if (!strcmp(arg, "task-clock"))
			a->opts.event = PROF_EVENT_TASK_CLOCK;
		else if (!strcmp(arg, "cycles"))
			a->opts.event = PROF_EVENT_CYCLES;
		else
			argp_error(state, "unknown event '%s' (cpu-clock, task-clock or cycles)", arg);
		break;
	case 's': {
		unsigned long long v = parse_size(state, "stack size", arg);

		if (v == 0 || v > PROF_MAX_STACK)
			argp_error(state, "stack size '%s' is outside 1..%u bytes", arg,
				   PROF_MAX_STACK);
		a->opts.stack_bytes = (uint32_t)v;
		break;
	}
	case OPT_NO_INHERIT:
		a->opts.no_inherit = true;
		break;
	case OPT_OFF_CPU:
		a->opts.off_cpu = true;
		break;
	case OPT_SWITCH_OUTPUT:
		parse_switch(state, a, arg);
		break;
	case OPT_SWITCH_MAX_FILES:
		a->opts.switch_max_files = (uint32_t)parse_size(state, "--switch-max-files", arg);
		if (!a->opts.switch_max_files)
			argp_error(state, "invalid --switch-max-files '%s': at least 1", arg);
		break;
	case 'k':
		a->opts.include_kernel = true;
		break;
	case OPT_CHILDREN:
		a->opts.children = true;
		break;
	case 'p':
		parse_pids(state, a, arg);
		break;
	case 'a':
		a->all = true;
		break;
	case 'C':
		a->opts.cpus = arg;
		break;
	case OPT_CGROUP:
		a->opts.cgroup = arg;
		break;
	case 'd':
		errno = 0;
		a->duration = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->duration > 0))
			argp_error(state, "invalid duration '%s'", arg);
		break;
	case 'm': {
		unsigned long long v = parse_size(state, "page count", arg);

		if (v == 0 || v > (1u << 20) || (v & (v - 1)))
			argp_error(state, "mmap pages '%s' must be a power of two", arg);
		a->opts.mmap_pages = (uint32_t)v;
		break;
	}
	case 'q':
		a->quiet = true;
		break;
	case OPT_LIVE:
		a->live = true;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&record_argp);
		break;
	case ARGP_KEY_ARG:
		if (a->npids)
			argp_error(state, "give either -p PID or a command, not both");
		/* the command and its arguments: everything from here on */
		a->argv = &state->argv[state->next - 1];
		a->argc = state->argc - state->next + 1;
		state->next = state->argc;
		break;
	case ARGP_KEY_NO_ARGS:
		if (!a->npids && !a->all)
			argp_error(state, "no command to record (prof record -- COMMAND [ARG...], "
				   "or -p PID)");
		break;
	case ARGP_KEY_END:
		if (a->opts.children && !a->npids)
			argp_error(state, "--children needs -p PID");
		if (a->all && a->npids)
			argp_error(state, "give either -a or -p PID, not both");
		if (a->opts.cpus && !a->all)
			argp_error(state, "-C/--cpu needs -a");
		if (a->opts.cgroup && !a->all)
			argp_error(state, "--cgroup needs -a");
		if (a->all && (a->opts.children || a->opts.no_inherit))
			argp_error(state, "-a follows every task: --children and --no-inherit do "
				   "not apply");
		if (a->live && a->quiet)
			argp_error(state, "--live and --quiet cannot be used together");
		if (a->opts.switch_max_files && !a->opts.switch_bytes && !a->opts.switch_ns &&
		    !a->opts.switch_signal)
			argp_error(state, "--switch-max-files needs --switch-output");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp record_argp = {
	.options = record_options,
	.parser = parse_record,
	.args_doc = "[--] COMMAND [ARG...]\n-p PID[,PID...]\n-a [-C LIST] [--cgroup=PATH] [[--] "
		    "COMMAND [ARG...]]",
	.doc = "Run COMMAND, or attach to running processes, and sample their CPU time with "
	       "full call stacks into a spool."
	       "\vRecording ends when COMMAND (or every attached process) and every followed "
	       "descendant have exited, on SIGINT, SIGTERM or SIGHUP (a signal sent to prof "
	       "alone is passed on to COMMAND; attached processes are left alone), or after "
	       "-d SECONDS.  With -a it records every task until COMMAND exits (its exit "
	       "status passed on), or without one until -d SECONDS or a signal.\n\n"
	       "FILE is written from the moment sampling starts (an existing FILE becomes "
	       "FILE.old then), so a killed recorder leaves what it wrote there.\n\n"
	       "Exit status: COMMAND's own, 128+N when signal N killed it; 127 COMMAND not "
	       "found, 126 not executable; 0 a recording of -p PID finished; 1 recording failed "
	       "(also when the spool could not be written: COMMAND ran on); "
	       "64 usage error.",
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_from_process;
static volatile sig_atomic_t switch_requested;

static void on_switch_signal(int sig)
{
	(void)sig;
	switch_requested = 1;
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	stop_signal = sig;
	/* a terminal's ^C reaches the command too; kill(2) reached only us */
	stop_from_process = si->si_code == SI_USER || si->si_code == SI_QUEUE;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* -o to a pipe whose reader went away: a write error (EPIPE), said once */
	signal(SIGPIPE, SIG_IGN);
}

/* --switch-output: SIGUSR2 asks for a new file, whatever else switches. */
static void install_switch_signal(void)
{
	struct sigaction sa = { .sa_handler = on_switch_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void human_bytes(char *buf, size_t len, uint64_t n)
{
	if (n < 10240)
		snprintf(buf, len, "%" PRIu64 " B", n);
	else if (n < 10u << 20)
		snprintf(buf, len, "%.1f KiB", (double)n / 1024);
	else
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
}

static void progress(const struct prof_recorder *rec, double start)
{
	PROF_OPTS(prof_recording_summary, s);
	char size[32];

	prof_recorder_summary(rec, &s);
	human_bytes(size, sizeof(size), s.spool_bytes);
	fprintf(stderr, "\rprof: %.1f s, %" PRIu64 " samples, %" PRIu64 " lost, %s\033[K",
		now_s() - start, s.samples, s.lost_events, size);
}

/* --live: the recorder's own tail, shown as prof tail's top view on stderr. */
static struct prof_tail *live_tail;
static struct prof_tail_view *live_view;

static void live_stop(void)
{
	prof_tail_view_free(live_view);
	prof_tail_free(live_tail);
	live_view = NULL;
	live_tail = NULL;
}

static void live_start(struct prof_recorder *rec, const char *output)
{
	PROF_OPTS(prof_tail_view_opts, vo, .format = PROF_TAIL_FORMAT_TOP, .refresh = isatty(2),
		  .title = output);

	if (prof_recorder_tail(rec, &live_tail) < 0 || prof_tail_view_new(&vo, &live_view) < 0) {
		warn_msg("%s; recording without --live", prof_errmsg());
		live_stop();
	}
}

/* Read what the spool got since the last update, and show it. */
static void live_update(void)
{
	PROF_OPTS(prof_tail_batch, b);
	int r;

	if (!live_tail)
		return;
	do {
		r = prof_tail_poll(live_tail, &b);
		if (r >= 0)
			r = prof_tail_view_add(live_view, live_tail, &b, stderr);
	} while (r >= 0 && b.more);
	if (r >= 0)
		r = prof_tail_view_print(live_view, live_tail, stderr);
	if (r < 0) {
		warn_msg("%s; stopping --live", prof_errmsg());
		live_stop();
	}
}

static void print_summary(const struct prof_recording_summary *s, const char *path)
{
	uint64_t complete = s->samples - s->truncated_stacks - s->empty_stacks;
	char size[32];

	char gaps[96] = "";

	human_bytes(size, sizeof(size), s->spool_bytes);
	if (s->lifecycle_gaps)
		snprintf(gaps, sizeof(gaps), " (%" PRIu64 " gaps, %" PRIu64 " reconciliations)",
			 s->lifecycle_gaps, s->reconciliations);
	fprintf(stderr, "prof: %" PRIu64 " samples, %" PRIu64 " lost%s, %" PRIu64 " process%s, %"
		PRIu64 " thread%s, %s%s, %.1f%% complete stacks, %s spool (%.1f B/sample): %s\n",
		s->samples, s->lost_events, gaps, s->processes, s->processes == 1 ? "" : "es",
		s->threads, s->threads == 1 ? "" : "s", s->event,
		s->event_fell_back ? " (no cycles event here)" : "",
		s->samples ? 100.0 * (double)complete / (double)s->samples : 100.0, size,
		s->samples ? (double)s->spool_bytes / (double)s->samples : 0.0, path);
	if (s->switch_events || s->offcpu_intervals) {
		uint64_t blocked = s->offcpu_ns[PROF_OFFCPU_STATE_BLOCKED];
		uint64_t runnable = s->offcpu_ns[PROF_OFFCPU_STATE_RUNNABLE];
		uint64_t whole = s->offcpu_intervals - s->offcpu_unsampled - s->offcpu_truncated;

		fprintf(stderr, "prof: off-CPU: %" PRIu64 " intervals, %.3f s (blocked %.3f s, "
			"runnable %.3f s), %.1f%% complete stacks; lost: %" PRIu64 " switch "
			"samples, %" PRIu64 " switch records\n", s->offcpu_intervals,
			(double)(blocked + runnable) / 1e9, (double)blocked / 1e9,
			(double)runnable / 1e9,
			s->offcpu_intervals ? 100.0 * (double)whole / (double)s->offcpu_intervals
					    : 100.0,
			s->lost_switch_samples, s->lost_switch_records);
	}
}

/* -a: the machine's share of busy CPU time, the processes seen. */
static void print_system(const struct prof_recording_summary *s, int verbosity)
{
	uint64_t busy = s->sample_events - s->idle_samples;

	if (!s->cpus)
		return;
	fprintf(stderr, "prof: the whole machine: busy %.1f%% of %u CPU%s (%" PRIu64 " idle "
		"samples, %" PRIu64 " of the recorder left out), %" PRIu64 " processes seen\n",
		s->sample_events ? 100.0 * (double)busy / (double)s->sample_events : 0.0, s->cpus,
		s->cpus == 1 ? "" : "s", s->idle_samples, s->self_samples, s->processes);
	if (verbosity)
		fprintf(stderr, "prof: the %" PRIu64 " processes running were read from /proc in "
			"%.1f ms (%.1f ms of CPU)\n", s->synthesis_processes,
			(double)s->synthesis_ns / 1e6, (double)s->synthesis_cpu_ns / 1e6);
}

/* -v: how the stacks were unwound, and what it cost. */
static void print_unwinding(const struct prof_recording_summary *s)
{
	uint64_t lookups = s->unwind_cache_hits + s->unwind_cache_misses;
	char bytes[32], peak[32];
	unsigned i;

	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

		fprintf(stderr, "prof: the recorder's own CPU time: %.3f s (%.3f s in the kernel), "
			"%.1f us per sample%s\n", cpu,
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
			s->samples + s->switch_events
				? cpu * 1e6 / (double)(s->samples + s->switch_events) : 0.0,
			s->switch_events ? " (switch-out samples included)" : "");
	}
	fprintf(stderr, "prof: unwound %" PRIu64 " user frames:", s->frames);
	for (i = 1; prof_unwind_fallback_name(i); i++)
		fprintf(stderr, " %s %" PRIu64, prof_unwind_fallback_name(i), s->fallback_frames[i]);
	fprintf(stderr, ", the rest by the CFI tables\n");
	human_bytes(bytes, sizeof(bytes), s->unwind_table_bytes);
	human_bytes(peak, sizeof(peak), s->unwind_table_peak_bytes);
	fprintf(stderr, "prof: unwind tables: %" PRIu64 " files, %s (peak %s), %" PRIu64
		" flushes; rule cache %.1f%% hits of %" PRIu64 " lookups\n", s->unwind_tables, bytes,
		peak, s->unwind_table_flushes,
		lookups ? 100.0 * (double)s->unwind_cache_hits / (double)lookups : 0.0, lookups);
	if (s->unwind_check_samples)
		fprintf(stderr, "prof: unwind check: %" PRIu64 " samples, %" PRIu64 " identical "
			"(%.3f%%), %" PRIu64 " with the same frames but another completeness, %"
			PRIu64 " where libdwfl lost the caller of a leaf frame, %" PRIu64 " where "
			"libdwfl stopped and the compiled walk went on to the end, %" PRIu64
			" with other frames\n", s->unwind_check_samples, s->unwind_check_same,
			100.0 * (double)s->unwind_check_same / (double)s->unwind_check_samples,
			s->unwind_check_same_frames, s->unwind_check_entry, s->unwind_check_further,
			s->unwind_check_samples - s->unwind_check_same - s->unwind_check_same_frames -
				s->unwind_check_entry - s->unwind_check_further);
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAIL;
}

/*
 * One poll of the recorder, and a new file when SIGUSR2 asked for one.
 * When the recording went on in a new file, --live follows it there.
 */
static int poll_recorder(struct prof_recorder *rec, const struct record_args *a)
{
	PROF_OPTS(prof_recording_summary, s);
	uint32_t files;
	int r;

	prof_recorder_summary(rec, &s);
	files = s.files;
	r = prof_recorder_poll(rec, 100, NULL);
	if (r >= 0 && switch_requested) {
		switch_requested = 0;
		r = prof_recorder_switch_output(rec);
	}
	prof_recorder_summary(rec, &s);
	if (live_tail && s.files != files) {
		live_update();	/* the file that ended, to its trailer */
		live_stop();
		live_start(rec, a->output);
	}
	return r;
}

/* The live view each second, else the progress line on a terminal twice a second. */
static void show_progress(const struct prof_recorder *rec, double start, bool tty, double *last)
{
	if (live_tail && now_s() - *last >= 1.0) {
		live_update();
		*last = now_s();
	}
	if (tty && now_s() - *last >= 0.5) {
		progress(rec, start);
		*last = now_s();
	}
}

/* Poll until the command and its followed descendants are done, or a stop. */
static int record_loop(struct prof_recorder *rec, struct prof_launched *child,
		       const struct record_args *a, int *status, bool *reaped)
{
	double start = now_s(), stop_at = 0, last_progress = 0;
	bool tty = !a->quiet && isatty(2) && !live_tail, killed = false, forwarded = false;
	size_t active;
	int r;

	for (;;) {
		r = poll_recorder(rec, a);
		if (r < 0)
			return r;
		if (!*reaped && prof_launched_wait(child, false, status) == 1)
			*reaped = true;
		if (*reaped) {
			r = prof_recorder_active_process_count(rec, &active);
			if (r < 0)
				return r;
			if (active == 0)
				return 0;
		}
		if (stop_signal && !forwarded) {
			forwarded = true;
			if (stop_from_process && stop_signal != SIGHUP && !*reaped)
				prof_launched_kill(child, stop_signal);
			/* give the command a moment to react, then stop regardless */
			stop_at = now_s() + 2.0;
		}
		if (a->duration > 0 && !killed && now_s() - start >= a->duration) {
			killed = true;
			if (!*reaped)
				prof_launched_kill(child, SIGTERM);
			stop_at = now_s() + 2.0;
		}
		if (stop_at > 0 && now_s() >= stop_at)
			return 0;
		show_progress(rec, start, tty, &last_progress);
	}
}

/* Poll until every attached process and its followed descendants are gone, or a stop. */
static int attach_loop(struct prof_recorder *rec, const struct record_args *a)
{
	double start = now_s(), last_progress = 0;
	bool tty = !a->quiet && isatty(2) && !live_tail;
	size_t active;
	int r;

	for (;;) {
		r = poll_recorder(rec, a);
		if (r < 0)
			return r;
		r = prof_recorder_active_process_count(rec, &active);
		if (r < 0)
			return r;
		if (active == 0 || stop_signal || (a->duration > 0 && now_s() - start >= a->duration))
			return 0;
		show_progress(rec, start, tty, &last_progress);
	}
}

/*
 * Clear the progress line, report the loop's error R, finish the spool
 * (its error reported too), end the live view, print the summary.  Returns
 * R, or the finish error when R was fine.
 */
static int end_recording(struct prof_recorder *rec, const struct record_args *a, int r)
{
	PROF_OPTS(prof_recording_summary, sum);
	char first[1024] = "";

	if (isatty(2) && !a->quiet && !live_tail)
		fprintf(stderr, "\r\033[K");
	if (r < 0) {
		snprintf(first, sizeof(first), "%s", prof_errmsg());
		err_msg("%s", first);
	}
	if (prof_recorder_close(rec, &sum) < 0) {
		/* a spool that cannot be written fails the same way again: said once */
		if (!*first || !strstr(prof_errmsg(), first))
			err_msg("%s", prof_errmsg());
		if (r >= 0)
			r = -1;
	}
	live_update();	/* the last blocks and the trailer */
	live_stop();
	if (!a->quiet && sum.files > 1) {
		char files[1024];

		snprintf(files, sizeof(files), "%s.* (%u files)", a->output, sum.files);
		print_summary(&sum, files);
	} else if (!a->quiet) {
		print_summary(&sum, a->output);
	}
	if (!a->quiet)
		print_system(&sum, a->verbosity);
	if (!a->quiet && a->verbosity)
		print_unwinding(&sum);
	return r;
}

static int run_attach(struct record_args *a)
{
	enum prof_attach_outcome outcome;
	struct prof_recorder *rec;
	size_t i;
	int r;

	a->opts.npids = a->npids;
	a->opts.pids = a->pids;
	r = prof_recorder_attach(a->pids[0], a->output, PROF_ATTACH_MODE_STOP,
				 &a->opts, &rec);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	for (i = 1; i < a->npids && r >= 0; i++) {
		r = prof_recorder_attach_process(rec, a->pids[i], PROF_ATTACH_MODE_STOP,
						 &outcome);
		if (r >= 0 && outcome == PROF_ATTACH_OUTCOME_EXITED)
			r = -ESRCH;
		if (r == -ESRCH)
			err_msg("pid %d exited while prof was attaching", (int)a->pids[i]);
		else if (r < 0)
			err_msg("%s", prof_errmsg());
	}
	if (r < 0) {
		prof_recorder_free(rec);
		return EXIT_FAIL;
	}
	if (a->live)
		live_start(rec, a->output);
	r = prof_recorder_enable(rec);
	if (r >= 0)
		r = attach_loop(rec, a);
	return end_recording(rec, a, r) < 0 ? EXIT_FAIL : EXIT_OK;
}

/*
 * -a: the whole machine, while COMMAND runs (CHILD, its exit status in
 * *STATUS), or until -d or a signal.
 */
static int system_loop(struct prof_recorder *rec, struct prof_launched *child,
		       const struct record_args *a, int *status, bool *reaped)
{
	double start = now_s(), stop_at = 0, last_progress = 0;
	bool tty = !a->quiet && isatty(2) && !live_tail, killed = false, forwarded = false;
	int r;

	for (;;) {
		r = poll_recorder(rec, a);
		if (r < 0)
			return r;
		if (child && !*reaped && prof_launched_wait(child, false, status) == 1)
			*reaped = true;
		if (*reaped)
			return 0;
		if (stop_signal && !forwarded) {
			forwarded = true;
			if (!child)
				return 0;
			if (stop_from_process && stop_signal != SIGHUP)
				prof_launched_kill(child, stop_signal);
			stop_at = now_s() + 2.0;
		}
		if (a->duration > 0 && !killed && now_s() - start >= a->duration) {
			killed = true;
			if (!child)
				return 0;
			prof_launched_kill(child, SIGTERM);
			stop_at = now_s() + 2.0;
		}
		if (stop_at > 0 && now_s() >= stop_at)
			return 0;
		show_progress(rec, start, tty, &last_progress);
	}
}

static int run_system(struct record_args *a)
{
	struct prof_launched *child = NULL;
	struct prof_recorder *rec;
	bool reaped = false;
	int r, status = 0;

	/* the command exists (held before its exec) when the machine's processes are read */
	if (a->argc && prof_launch_suspended(a->argv, &child) < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	r = prof_recorder_open_system(a->output, &a->opts, &rec);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_launched_free(child);
		return EXIT_FAIL;
	}
	r = prof_recorder_enable(rec);
	if (r >= 0 && child && (r = prof_launched_release(child)) < 0) {
		err_msg("%s", prof_errmsg());
		prof_recorder_free(rec);
		prof_launched_free(child);
		return r == -ENOENT ? 127 : 126;
	}
	if (r >= 0 && a->live)
		live_start(rec, a->output);
	if (r >= 0)
		r = system_loop(rec, child, a, &status, &reaped);
	r = end_recording(rec, a, r);
	if (child && !reaped && !stop_signal)
		reaped = prof_launched_wait(child, true, &status) == 1;
	prof_launched_free(child);
	if (r < 0)
		return EXIT_FAIL;
	if (!child)
		return EXIT_OK;
	if (!reaped)
		return stop_signal ? 128 + stop_signal : EXIT_FAIL;
	return exit_status(status);
}

static int run_record(int argc, char **argv)
{
	struct record_args a = { .output = "prof.spool" };
	struct prof_launched *child;
	struct prof_recorder *rec;
	bool reaped = false;
	int r, status = 0;

	a.opts.sz = sizeof(a.opts);
	argp_parse(&record_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	set_verbosity(a.quiet ? 0 : 1 + a.verbosity);
	a.opts.argc = (size_t)a.argc;
	a.opts.argv = (const char *const *)a.argv;
	install_signals();
	if (a.opts.switch_bytes || a.opts.switch_ns || a.opts.switch_signal)
		install_switch_signal();
	if (a.npids)
		return run_attach(&a);
	if (a.all)
		return run_system(&a);

	r = prof_launch_suspended(a.argv, &child);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	r = prof_recorder_attach(prof_launched_pid(child), a.output, PROF_ATTACH_MODE_ON_EXEC, &a.opts,
				 &rec);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_launched_free(child);
		return EXIT_FAIL;
	}
	r = prof_launched_release(child);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_recorder_free(rec);
		prof_launched_free(child);
		return r == -ENOENT ? 127 : 126;
	}
	if (a.live)
		live_start(rec, a.output);
	r = record_loop(rec, child, &a, &status, &reaped);
	r = end_recording(rec, &a, r);
	if (!reaped && !stop_signal)
		reaped = prof_launched_wait(child, true, &status) == 1;
	prof_launched_free(child);
	if (r < 0)
		return EXIT_FAIL;
	if (!reaped)
		return stop_signal ? 128 + stop_signal : EXIT_FAIL;
	return exit_status(status);
}

const struct prof_cmd cmd_record = {
	.name = "record",
	.summary = "run a command and sample it into a spool",
	.main = run_record,
};
