/* SPDX-License-Identifier: MIT */
/*
 * record.c - `prof record [OPTION...] -- COMMAND [ARG...]`: launch COMMAND
 * suspended, record it with libprof's recorder until it and its followed
 * descendants exit (or a signal, or -d), and pass its exit status on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

enum {
	OPT_CHILDREN = OPT_RECORDING_END,
	OPT_LIVE,
	OPT_SWITCH_OUTPUT,
	OPT_SWITCH_MAX_FILES,
};

struct record_args {
	struct recording rc;
	bool live;
	struct push_options push;	/* --push: each finished file sent */
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
	  "with --switch-output, keep the newest N files, removing older ones (with --push, "
	  "those sent; past N, the oldest unsent)", 0 },
	{ "push", OPT_PUSH_URL, "URL", 0, "with --switch-output, send each finished file to a "
					  "Pyroscope or Parca server at URL (see prof push)", 0 },
	{ "push-protocol", OPT_PUSH_PROTOCOL, "PROTOCOL", 0, "ingest, push or parca (default: "
							     "from the URL)", 0 },
	{ "push-timeout", OPT_PUSH_TIMEOUT, "SECONDS", 0, "the most one POST may take "
							  "(default: 10)", 0 },
	{ "service", OPT_PUSH_SERVICE, "NAME", 0, "the service_name label of the profiles "
						  "pushed (default: the command's name)", 0 },
	{ "label", OPT_PUSH_LABEL, "NAME=VALUE", 0, "one more label of the profiles pushed "
						    "(repeat for more)", 0 },
	{ "quiet", 'q', NULL, 0, "print nothing on stderr but errors", 0 },
	{ "verbose", 'v', NULL, 0, "after the summary, how the stacks were unwound and what "
				   "the unwinder's tables cost (repeat for debug)", 0 },
	{ "live", OPT_LIVE, NULL, 0, "show the hottest functions on stderr while recording, as "
				     "prof tail does", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp record_argp;

/* --switch-output's argument: signal, SIZE (B, K, M, G) or TIME (s, m, h, d). */
static void parse_switch(struct argp_state *state, struct recording *a, const char *arg)
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

/*
 * --push: a recording in files, each sent once finished by a push queue,
 * which keeps --switch-max-files itself (the recorder would remove a file
 * before it was sent).
 */
static void check_push(struct record_args *ra, struct argp_state *state)
{
	struct recording *a = &ra->rc;

	if (!ra->push.opts.url) {
		if (ra->push.given)
			argp_error(state, "--push-protocol, --push-timeout, --service and --label "
				   "need --push=URL");
		return;
	}
	if (!a->opts.switch_bytes && !a->opts.switch_ns && !a->opts.switch_signal)
		argp_error(state, "--push needs --switch-output: each file is pushed once "
			   "finished");
	push_options_check(&ra->push, state);
	ra->push.opts.max_files = a->opts.switch_max_files;
	a->opts.switch_max_files = 0;
}

static error_t parse_record(int key, char *arg, struct argp_state *state)
{
	struct record_args *ra = state->input;
	struct recording *a = &ra->rc;
	int r;

	switch (key) {
	case 'v':
		a->verbosity++;
		break;
	case 'o':
		a->output = arg;
		break;
	case OPT_SWITCH_OUTPUT:
		parse_switch(state, a, arg);
		break;
	case OPT_SWITCH_MAX_FILES:
		a->opts.switch_max_files = (uint32_t)parse_size(state, "--switch-max-files", arg);
		if (!a->opts.switch_max_files)
			argp_error(state, "invalid --switch-max-files '%s': at least 1", arg);
		break;
	case OPT_CHILDREN:
		a->opts.children = true;
		break;
	case 'q':
		a->quiet = true;
		break;
	case OPT_LIVE:
		ra->live = true;
		break;
	case 'a':
		a->system = true;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&record_argp);
		break;
	case ARGP_KEY_ARG:
		if (a->npids)
			argp_error(state, "give either -p PID or a command, not both");
		/* the command and its arguments: everything from here on */
		recording_take_command(a, state);
		break;
	case ARGP_KEY_NO_ARGS:
		if (!a->npids && !a->system)
			argp_error(state, "no command to record (prof record -- COMMAND [ARG...], "
				   "or -p PID)");
		break;
	case ARGP_KEY_END:
		if (a->opts.children && !a->npids)
			argp_error(state, "--children needs -p PID");
		if (a->system && a->npids)
			argp_error(state, "give either -a or -p PID, not both");
		if (a->opts.cpus && !a->system)
			argp_error(state, "-C/--cpu needs -a");
		if (a->opts.cgroup && !a->system)
			argp_error(state, "--cgroup needs -a");
		if (a->system && (a->opts.children || a->opts.no_inherit))
			argp_error(state, "-a follows every task: --children and --no-inherit do "
				   "not apply");
		if (ra->live && a->quiet)
			argp_error(state, "--live and --quiet cannot be used together");
		if (a->opts.switch_max_files && !a->opts.switch_bytes && !a->opts.switch_ns &&
		    !a->opts.switch_signal)
			argp_error(state, "--switch-max-files needs --switch-output");
		check_push(ra, state);
		break;
	default:
		r = push_options_parse(&ra->push, key, arg, state);
		return r == ARGP_ERR_UNKNOWN ? recording_parse(a, key, arg, state) : r;
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double live_last;

/* Before sampling: --live's tail; the progress line only without it. */
static void on_started(struct recording *rc, struct prof_recorder *rec)
{
	struct record_args *ra = rc->ctx;

	if (ra->live)
		live_start(rec, rc->output);
	rc->progress = !rc->quiet && isatty(2) && !live_tail;
}

/* The live view each second. */
static int on_tick(struct recording *rc, struct prof_recorder *rec)
{
	(void)rc;
	(void)rec;
	if (live_tail && now_s() - live_last >= 1.0) {
		live_update();
		live_last = now_s();
	}
	return 0;
}

/* The last blocks and the trailer. */
static void on_closed(struct recording *rc)
{
	(void)rc;
	live_update();
	live_stop();
}

/* ", N WHAT" after BUF, when N is not 0. */
static void more_count(char *buf, size_t len, uint64_t n, const char *what)
{
	size_t at = strlen(buf);

	if (n && at < len)
		snprintf(buf + at, len - at, ", %" PRIu64 " %s", n, what);
}

/* --push at the end: the files left sent, and what became of them all. */
static void push_end(struct record_args *a, struct prof_push_queue *q, char *endpoint)
{
	PROF_OPTS(prof_push_stats, s);
	char more[128] = "", size[32];
	int r;

	r = prof_push_queue_close(q, a->push.opts.timeout_ms ?: PROF_PUSH_TIMEOUT_MS, &s);
	if (r < 0)
		warn_msg("%s; prof push or the next prof record --push sends them", prof_errmsg());
	if (a->rc.quiet)
		return;
	more_count(more, sizeof(more), s.failed, "refused");
	more_count(more, sizeof(more), s.empty, "empty");
	more_count(more, sizeof(more), s.skipped, "pushed before");
	more_count(more, sizeof(more), s.unsent, "left unsent");
	fprintf(stderr, "prof: pushed %" PRIu64 " file%s to %s (%s): %" PRIu64 " retr%s, %"
		PRIu64 " dropped%s\n", s.pushed, s.pushed == 1 ? "" : "s", endpoint,
		prof_push_protocol_name(a->push.opts.protocol), s.retries,
		s.retries == 1 ? "y" : "ies", s.dropped, more);
	if (a->rc.verbosity) {
		human_bytes(size, sizeof(size), s.bytes);
		fprintf(stderr, "prof: push: %" PRIu64 " samples, %s sent; a file waited %.1f s "
			"at the most, from its end until a server took it\n", s.samples, size,
			(double)s.max_delay_ns / 1e9);
	}
}

static int run_record(int argc, char **argv)
{
	struct record_args a = { .live = false };
	struct prof_push_queue *q = NULL;
	char *endpoint = NULL;
	int status;

	recording_init(&a.rc, "prof.spool");
	push_options_init(&a.push, "--push-protocol", "--push-timeout");
	a.rc.ctx = &a;
	a.rc.hooks = (struct recording_hooks){ .started = on_started, .tick = on_tick,
					       .closed = on_closed };
	argp_parse(&record_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	set_verbosity(a.rc.quiet ? 0 : 1 + a.rc.verbosity);
	/* before the recording: what a recording before it left is sent first */
	if (a.push.opts.url &&
	    (prof_push_check(&a.push.opts, &endpoint, &a.push.opts.protocol) < 0 ||
	     prof_push_queue_open(&a.push.opts, a.rc.output, &q) < 0)) {
		err_msg("%s", prof_errmsg());
		free(endpoint);
		return EXIT_FAIL;
	}
	recording_install_signals(&a.rc);
	status = recording_run(&a.rc);
	if (q)
		push_end(&a, q, endpoint);
	free(endpoint);
	return status;
}

const struct prof_cmd cmd_record = {
	.name = "record",
	.summary = "run a command and sample it into a spool",
	.main = run_record,
};
