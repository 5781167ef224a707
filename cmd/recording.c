/* SPDX-License-Identifier: MIT */
/*
 * recording.c - a recording as prof record and prof top run it (declared
 * in cmd.h): the shared options, starting it (a launched command, running
 * processes, the whole machine), polling it until it is done or stopped
 * (signals, -d, a command's own reason), and ending it with its summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

void recording_init(struct recording *rc, const char *output)
{
	*rc = (struct recording){ .output = output, .summary = true };
	rc->opts.sz = sizeof(rc->opts);
}

unsigned long long parse_size(struct argp_state *state, const char *what, const char *arg)
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

static void parse_pids(struct argp_state *state, struct recording *a, char *arg)
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

int recording_parse(struct recording *a, int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
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
	case 'k':
		a->opts.include_kernel = true;
		break;
	case 'p':
		parse_pids(state, a, arg);
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
	case 'C':
		a->opts.cpus = arg;
		break;
	case OPT_CGROUP:
		a->opts.cgroup = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void recording_take_command(struct recording *a, struct argp_state *state)
{
	a->argv = &state->argv[state->next - 1];
	a->argc = state->argc - state->next + 1;
	state->next = state->argc;
}

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_from_process;
static volatile sig_atomic_t switch_requested;

int recording_stop_signal(void)
{
	return stop_signal;
}

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

void recording_install_signals(const struct recording *rc)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* -o to a pipe whose reader went away: a write error (EPIPE), said once */
	signal(SIGPIPE, SIG_IGN);
	/* --switch-output: SIGUSR2 asks for a new file, whatever else switches */
	if (rc->opts.switch_bytes || rc->opts.switch_ns || rc->opts.switch_signal) {
		struct sigaction su = { .sa_handler = on_switch_signal };

		sigemptyset(&su.sa_mask);
		sigaction(SIGUSR2, &su, NULL);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void human_bytes(char *buf, size_t len, uint64_t n)
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
	if (s->python_frames || s->python_stale || s->python_unread)
		fprintf(stderr, "prof: python: %" PRIu64 " frames read, %" PRIu64 " stale (not "
			"shown), %" PRIu64 " eval loops unread\n", s->python_frames, s->python_stale,
			s->python_unread);
	if (s->java_frames || s->java_unnamed)
		fprintf(stderr, "prof: java: %" PRIu64 " interpreter frames named, %" PRIu64
			" unnamed (a frame being set up)\n", s->java_frames, s->java_unnamed);
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

	/*
	 * The sum is the scheduler's own count of the process's run time, to
	 * the microsecond: a 3 s recording costs ~10 ms, and milliseconds
	 * would make its cost per sample move in steps of a tenth.  The
	 * kernel's share is an estimate from the ticks that fell there.
	 */
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

		fprintf(stderr, "prof: the recorder's own CPU time: %.6f s (%.3f s in the kernel), "
			"%.2f us per sample%s\n", cpu,
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
		" flushes; rule cache %.1f%% hits of %" PRIu64 " lookups; %" PRIu64 " frames as "
		"the thread's last walk had them\n", s->unwind_tables, bytes, peak,
		s->unwind_table_flushes,
		lookups ? 100.0 * (double)s->unwind_cache_hits / (double)lookups : 0.0, lookups,
		s->unwind_memo_frames);
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
 * One poll of the recorder, and a new file when SIGUSR2 asked for one;
 * the command hears of a new file, and then of the poll.
 */
static int poll_recorder(struct recording *rc, struct prof_recorder *rec)
{
	int r;

	r = prof_recorder_poll(rec, 100, NULL);
	if (r >= 0 && switch_requested) {
		switch_requested = 0;
		r = prof_recorder_switch_output(rec);
	}
	if (r >= 0 && rc->hooks.tick)
		r = rc->hooks.tick(rc, rec);
	return r;
}

/* The progress line on a terminal twice a second. */
static void show_progress(const struct recording *rc, const struct prof_recorder *rec,
			  double start, double *last)
{
	if (rc->progress && now_s() - *last >= 0.5) {
		progress(rec, start);
		*last = now_s();
	}
}

/*
 * Poll until the command (and, unless the whole machine is recorded, its
 * followed descendants) is done, or a stop.  *QUIT: the command asked.
 */
static int command_loop(struct recording *rc, struct prof_recorder *rec,
			struct prof_launched *child, int *status, bool *reaped, bool *quit)
{
	double start = now_s(), stop_at = 0, last_progress = 0;
	bool killed = false, forwarded = false;
	size_t active;
	int r;

	for (;;) {
		r = poll_recorder(rc, rec);
		if (r < 0)
			return r;
		if (r == 1 && !*quit) {
			*quit = true;
			if (!*reaped)
				prof_launched_kill(child, SIGTERM);
			stop_at = now_s() + 2.0;
		}
		if (!*reaped && prof_launched_wait(child, false, status) == 1)
			*reaped = true;
		if (*reaped && rc->system)
			return 0;
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
		if (rc->duration > 0 && !killed && now_s() - start >= rc->duration) {
			killed = true;
			if (!*reaped)
				prof_launched_kill(child, SIGTERM);
			stop_at = now_s() + 2.0;
		}
		if (stop_at > 0 && now_s() >= stop_at)
			return 0;
		show_progress(rc, rec, start, &last_progress);
	}
}

/*
 * Poll until every attached process and its followed descendants are gone
 * (never, for the whole machine), or a stop.
 */
static int attach_loop(struct recording *rc, struct prof_recorder *rec)
{
	double start = now_s(), last_progress = 0;
	size_t active = 1;
	int r;

	for (;;) {
		r = poll_recorder(rc, rec);
		if (r < 0)
			return r;
		if (r == 1)
			return 0;
		if (!rc->system) {
			r = prof_recorder_active_process_count(rec, &active);
			if (r < 0)
				return r;
		}
		if (active == 0 || stop_signal ||
		    (rc->duration > 0 && now_s() - start >= rc->duration))
			return 0;
		show_progress(rc, rec, start, &last_progress);
	}
}

/*
 * Clear the progress line, report the loop's error R, finish the spool
 * (its error reported too), tell the command, print the summary.  Returns
 * R, or the finish error when R was fine.
 */
static int end_recording(struct recording *rc, struct prof_recorder *rec, int r)
{
	PROF_OPTS(prof_recording_summary, sum);
	char first[1024] = "";

	if (rc->progress)
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
	if (rc->hooks.closed)
		rc->hooks.closed(rc);
	if (rc->summary && !rc->quiet && sum.files > 1) {
		char files[1024];

		snprintf(files, sizeof(files), "%s.* (%u files)", rc->output, sum.files);
		print_summary(&sum, files);
	} else if (rc->summary && !rc->quiet) {
		print_summary(&sum, rc->output);
	}
	if (rc->summary && !rc->quiet)
		print_system(&sum, rc->verbosity);
	if (rc->summary && !rc->quiet && rc->verbosity)
		print_unwinding(&sum);
	return r;
}

static void started(struct recording *rc, struct prof_recorder *rec)
{
	if (rc->hooks.started)
		rc->hooks.started(rc, rec);
}

static int run_attach(struct recording *a)
{
	enum prof_attach_outcome outcome;
	struct prof_recorder *rec;
	size_t i;
	int r;

	a->opts.npids = a->npids;
	a->opts.pids = a->pids;
	if (a->system)
		r = prof_recorder_open_system(a->output, &a->opts, &rec);
	else
		r = prof_recorder_attach(a->pids[0], a->output, PROF_ATTACH_MODE_STOP,
					 &a->opts, &rec);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	for (i = 1; !a->system && i < a->npids && r >= 0; i++) {
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
	started(a, rec);
	r = prof_recorder_enable(rec);
	if (r >= 0)
		r = attach_loop(a, rec);
	return end_recording(a, rec, r) < 0 ? EXIT_FAIL : EXIT_OK;
}

static int run_command(struct recording *a)
{
	struct prof_launched *child;
	struct prof_recorder *rec;
	bool reaped = false, quit = false;
	int r, status = 0;

	r = prof_launch_suspended(a->argv, &child);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	if (a->system)
		r = prof_recorder_open_system(a->output, &a->opts, &rec);
	else
		r = prof_recorder_attach(prof_launched_pid(child), a->output,
					 PROF_ATTACH_MODE_ON_EXEC, &a->opts, &rec);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_launched_free(child);
		return EXIT_FAIL;
	}
	if (a->system) {
		started(a, rec);
		r = prof_recorder_enable(rec);
		if (r < 0) {
			err_msg("%s", prof_errmsg());
			prof_recorder_free(rec);
			prof_launched_free(child);
			return EXIT_FAIL;
		}
	}
	r = prof_launched_release(child);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_recorder_free(rec);
		prof_launched_free(child);
		return r == -ENOENT ? 127 : 126;
	}
	if (!a->system)
		started(a, rec);
	r = command_loop(a, rec, child, &status, &reaped, &quit);
	r = end_recording(a, rec, r);
	if (!reaped && !stop_signal)
		reaped = prof_launched_wait(child, true, &status) == 1;
	prof_launched_free(child);
	if (r < 0)
		return EXIT_FAIL;
	if (quit)	/* the user is done looking: not the command's failure */
		return EXIT_OK;
	if (!reaped)
		return stop_signal ? 128 + stop_signal : EXIT_FAIL;
	return exit_status(status);
}

/*
 * The recorder's malloc: its tables double as a recording grows (the
 * spool's intern maps, the unwind tables' index and rows, the names'
 * capture), and each block above 128 KiB was a mapping of its own, its
 * pages faulted in one at a time (~1.5 us each in a VM) and unmapped when
 * freed.  Below 4 MiB a block comes from the heap and its memory serves
 * again once freed, and up to 16 MiB free at the heap's top stays: a make
 * -j2 recorded attached faulted 500-600 pages fewer of ~3,300, ~5% of the
 * recorder's CPU.  Bigger blocks still go back when freed, and what is
 * kept is bounded: memory follows the recording's peak, not its length.
 * The process is prof's to tune; the library leaves its host's alone.
 */
static void recorder_malloc(void)
{
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
	mallopt(M_TOP_PAD, 1 << 20);
}

int recording_run(struct recording *rc)
{
	recorder_malloc();
	rc->opts.argc = (size_t)rc->argc;
	rc->opts.argv = (const char *const *)rc->argv;
	return rc->argv ? run_command(rc) : run_attach(rc);
}
