/* SPDX-License-Identifier: MIT */
/*
 * top.c - `prof top [OPTION...] [-p PID... | -- COMMAND...]`: record the
 * whole machine (or processes, or a command) as prof record does, and show
 * the hottest functions live: a full screen redrawn each interval on a
 * terminal, with keys read raw from it, or a block (or a JSON object) per
 * interval on a pipe.  The recording lives in a file nobody sees, removed
 * at the end, unless -o keeps it.  The recording is recording.c's; the
 * view is lib/'s (prof_top_*); this file holds the terminal and the clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

enum {
	OPT_BY_PROCESS = OPT_RECORDING_END,
	OPT_WEIGHT,
	OPT_FORMAT,
};

struct top_args {
	struct recording rc;
	struct prof_top_opts vo;
	bool weight_given, limit_given;
	double interval;
	bool hidden;			/* without -o: an unnamed file, switched to stay small */
	bool tty;			/* stdout is a terminal: the full-screen view */
	/* while recording */
	struct prof_tail *tail;
	struct prof_top *view;
	double next_print;
	uint64_t added;			/* samples counted since the last print */
	uint64_t events, idle;		/* the machine: sample events and idle ones at the last
					 * print */
	char note[160];			/* the view's last line: help, or what a key did */
};

static const struct argp_option top_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "show running processes instead of the whole machine",
	  0 },
	{ "cpu", 'C', "LIST", 0, "the whole machine: only these CPUs (\"0-3,6\")", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "the whole machine: only the tasks of this cgroup (v2, "
					   "absolute or under /sys/fs/cgroup)", 0 },
	{ "freq", 'F', "HZ", 0, "sample HZ times a second, or 'max' (default: 999)", 0 },
	{ "event", 'e', "EVENT", 0, "cpu-clock, task-clock or cycles (default: cycles, "
				    "else cpu-clock)", 0 },
	{ "kernel", 'k', NULL, 0, "record kernel frames too, above the user stack", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0, "also record where threads wait (for --weight "
					   "off-cpu and wall)", 0 },
	{ "duration", 'd', "SECONDS", 0, "stop after SECONDS (a command gets SIGTERM)", 0 },
	{ "output", 'o', "FILE", 0, "keep the recording in FILE (default: a hidden file, "
				    "removed at the end)", 0 },
	{ "limit", 'n', "N", 0, "rows shown (default: 20; on a terminal, as many as fit)", 0 },
	{ "interval", 'i', "SECONDS", 0, "refresh every SECONDS (default: 1)", 0 },
	{ "by-process", OPT_BY_PROCESS, NULL, 0, "rows are processes, with the hottest function "
						 "of each", 0 },
	{ "weight", OPT_WEIGHT, "WEIGHT", 0, "cpu (samples, the default), off-cpu or wall "
					     "(both by time; need --off-cpu)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "top (the default) or json (an object per "
					     "interval)", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp top_argp;

static double parse_seconds(struct argp_state *state, const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0.1) || v > 1e6)
		argp_error(state, "invalid %s '%s': expected a number of seconds, at least 0.1",
			   opt, arg);
	return v;
}

static error_t parse_top(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;
	char *end;
	long n;
	int r;

	switch (key) {
	case 'o':
		a->rc.output = arg;
		break;
	case 'n':
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n <= 0 || n > 100000)
			argp_error(state, "invalid --limit '%s': a number of rows above 0", arg);
		a->vo.limit = n;
		a->limit_given = true;
		break;
	case 'i':
		a->interval = parse_seconds(state, "--interval", arg);
		break;
	case OPT_BY_PROCESS:
		a->vo.by_process = true;
		break;
	case OPT_WEIGHT:
		r = prof_weight_parse(arg);
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		a->vo.weight = (enum prof_weight)r;
		a->weight_given = true;
		break;
	case OPT_FORMAT:
		r = prof_tail_format_parse(arg);
		if (r < 0 || r == PROF_TAIL_FORMAT_SAMPLES)
			argp_error(state, "unknown format '%s' (top or json)", arg);
		a->vo.format = (enum prof_tail_format)r;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&top_argp);
		break;
	case ARGP_KEY_ARG:
		if (a->rc.npids)
			argp_error(state, "give either -p PID or a command, not both");
		recording_take_command(&a->rc, state);
		break;
	case ARGP_KEY_END:
		if (a->vo.weight != PROF_WEIGHT_CPU && !a->rc.opts.off_cpu)
			argp_error(state, "--weight %s needs --off-cpu", prof_weight_name(a->vo.weight));
		if ((a->rc.opts.cpus || a->rc.opts.cgroup) && a->rc.npids)
			argp_error(state, "-C and --cgroup are for the whole machine, not -p PID");
		if ((a->rc.opts.cpus || a->rc.opts.cgroup) && a->rc.argv)
			argp_error(state, "-C and --cgroup are for the whole machine, not a command");
		break;
	default:
		return recording_parse(&a->rc, key, arg, state);
	}
	return 0;
}

static struct argp top_argp = {
	.options = top_options,
	.parser = parse_top,
	.args_doc = "\n-p PID[,PID...]\n[--] COMMAND [ARG...]",
	.doc = "Show where the whole machine (or running processes, or COMMAND) spends its CPU "
	       "time, live: the hottest functions with full call stacks, refreshed every "
	       "second."
	       "\vOn a terminal the view fills the screen; keys: q quits, p switches between "
	       "functions and processes, w cycles the weight (cpu, off-cpu, wall; with "
	       "--off-cpu), h or ? shows them.  On a pipe a block is printed each interval, "
	       "its first line starting \"prof top:\" (or a JSON object a line with "
	       "--format=json).  Shares decay as perf top's do: each refresh keeps 7/8 of "
	       "what was counted.\n\n"
	       "Exit status: COMMAND's own (0 when q ended it), 128+N when signal N "
	       "killed it; 0 for the machine or -p PID; 1 recording failed; 64 usage error.",
};

/* ---- the terminal ------------------------------------------------------- */

static struct termios saved_termios;
static bool termios_saved, screen_on;

static void terminal_restore(void)
{
	if (screen_on) {
		/* the cursor back, and the screen as it was before */
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		screen_on = false;
	}
	if (termios_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
		termios_saved = false;
	}
}

/*
 * Keys one at a time, without echo, and ^C as a key too: prof top ends
 * every way through its own exit path, which restores the terminal.
 */
static void terminal_raw(void)
{
	struct termios t;

	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_termios) == 0) {
		termios_saved = true;
		atexit(terminal_restore);
		t = saved_termios;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	fputs("\033[?1049h\033[?25l", stdout);
	screen_on = true;
}

/* Rows and columns of the view: what fits the terminal, unless -n said. */
static void fit_terminal(struct top_args *a)
{
	struct winsize ws;

	if (!a->tty || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_row)
		return;
	a->vo.columns = ws.ws_col;
	if (!a->limit_given)
		a->vo.limit = ws.ws_row > 5 ? ws.ws_row - 4 : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define HELP "keys: q quit, p functions/processes, w weight (cpu, off-cpu, wall), h help"

/* The next weight the recording has. */
static void next_weight(struct top_args *a)
{
	if (!a->rc.opts.off_cpu) {
		snprintf(a->note, sizeof(a->note), "w: only cpu was recorded (off-cpu and wall "
			 "need --off-cpu)");
		return;
	}
	a->vo.weight = (enum prof_weight)((a->vo.weight + 1) % (PROF_WEIGHT_WALL + 1));
	snprintf(a->note, sizeof(a->note), "weight: %s", prof_weight_name(a->vo.weight));
}

/* Read the keys typed since the last tick: 1 to quit, 2 to redraw now, 0. */
static int read_keys(struct top_args *a)
{
	struct prof_top_opts before = a->vo;
	int redraw = 0;
	char c;

	if (!termios_saved)
		return 0;
	while (read(STDIN_FILENO, &c, 1) == 1) {
		switch (c) {
		case 'q':
		case 'Q':
		case 3:		/* ^C, read as a key */
			return 1;
		case 'p':
			a->vo.by_process = !a->vo.by_process;
			a->note[0] = '\0';
			break;
		case 'w':
			next_weight(a);
			break;
		case 'h':
		case '?':
			snprintf(a->note, sizeof(a->note), "%s", HELP);
			break;
		case '\f':	/* ^L */
			break;
		default:
			snprintf(a->note, sizeof(a->note), "unknown key; %s", HELP);
			break;
		}
		redraw = 2;
	}
	if (redraw && prof_top_set(a->view, &a->vo) < 0) {
		snprintf(a->note, sizeof(a->note), "%s", prof_errmsg());
		a->vo = before;
	}
	return redraw;
}

/* ---- the view ----------------------------------------------------------- */

/* Everything the spool got since the last look. */
static int read_tail(struct top_args *a)
{
	PROF_OPTS(prof_tail_batch, b);
	int r;

	do {
		r = prof_tail_poll(a->tail, &b);
		if (r >= 0)
			r = prof_top_add(a->view, a->tail, &b);
		if (r >= 0)
			a->added += b.nsamples;
	} while (r >= 0 && b.more);
	/* a hidden recording need not keep what was read: disk use stays flat */
	if (r >= 0 && a->hidden)
		prof_tail_discard_consumed(a->tail);
	return r < 0 ? r : 0;
}

/*
 * Processes and threads gone that the file being read may define before
 * the hidden recording goes on in a new one.  A reader keeps all a file
 * defines; a machine that starts a thousand processes a second would
 * otherwise grow the recorder and the view by each of them, forever.  The
 * new file defines again only those alive, and the view keeps its counts.
 */
#define SWITCH_GONE 4096

static int keep_small(struct top_args *a, struct prof_recorder *rec)
{
	PROF_OPTS(prof_tail_stats, st);

	if (!a->hidden || prof_tail_stats(a->tail, &st) < 0)
		return 0;
	if ((uint64_t)st.processes - st.processes_alive + st.threads - st.threads_alive <
	    SWITCH_GONE)
		return 0;
	return prof_recorder_switch_output(rec);
}

/*
 * The machine's busy share since the last print: the samples of the idle
 * task, which the recorder counts and does not write, of all it took.
 */
static void busy_share(struct top_args *a, struct prof_recorder *rec)
{
	PROF_OPTS(prof_recording_summary, s);
	uint64_t events, idle;

	if (!a->rc.system || prof_recorder_summary(rec, &s) < 0 || !s.cpus)
		return;
	events = s.sample_events - a->events;
	idle = s.idle_samples - a->idle;
	if (!events)
		return;
	a->vo.busy_known = true;
	a->vo.busy = (double)(events - (idle < events ? idle : events)) / (double)events;
	a->events = s.sample_events;
	a->idle = s.idle_samples;
}

static int show(struct top_args *a)
{
	fit_terminal(a);
	if (prof_top_set(a->view, &a->vo) < 0)
		return -1;
	a->added = 0;
	return prof_top_print(a->view, a->tail, a->tty ? a->note : NULL, stdout);
}

static void on_started(struct recording *rc, struct prof_recorder *rec)
{
	struct top_args *a = rc->ctx;

	if (prof_recorder_tail(rec, &a->tail) < 0 || prof_top_new(&a->vo, &a->view) < 0) {
		err_msg("%s", prof_errmsg());
		prof_tail_free(a->tail);
		a->tail = NULL;
		return;
	}
	if (a->tty)
		terminal_raw();
	/* on a terminal the first view comes at once; on a pipe each interval */
	a->next_print = now_s() + (a->tty ? 0 : a->interval);
}

static int on_tick(struct recording *rc, struct prof_recorder *rec)
{
	struct top_args *a = rc->ctx;
	int k, r;

	if (!a->view)
		return -1;
	k = read_keys(a);
	if (k == 1)
		return 1;
	r = read_tail(a);
	if (r >= 0)
		r = keep_small(a, rec);
	if (r >= 0 && now_s() >= a->next_print) {
		busy_share(a, rec);
		r = show(a);
		if (r >= 0)
			r = prof_top_next(a->view);
		while (a->next_print <= now_s())
			a->next_print += a->interval;
	} else if (r >= 0 && k == 2) {
		r = show(a);	/* a redraw: the same counts, another view of them */
	}
	return r < 0 ? r : 0;
}

/* The last blocks: on a pipe, a last view of what came since the last one. */
static void on_closed(struct recording *rc)
{
	struct top_args *a = rc->ctx;

	if (a->view && read_tail(a) >= 0 && !a->tty && a->added && show(a) < 0)
		err_msg("%s", prof_errmsg());
	terminal_restore();
	prof_top_free(a->view);
	prof_tail_free(a->tail);
	a->view = NULL;
	a->tail = NULL;
}

/*
 * Without -o: files without a name in $TMPDIR (or /tmp), which nothing
 * sees and nothing leaves behind, however prof top ends; it switches to a
 * new one when it asks (keep_small()).
 */
static void make_hidden(struct top_args *a)
{
	const char *tmp = getenv("TMPDIR");

	a->rc.output = tmp && *tmp ? tmp : "/tmp";
	a->rc.opts.unnamed = true;
	a->rc.opts.switch_signal = true;
	a->hidden = true;
}

static int run_top(int argc, char **argv)
{
	struct top_args a = { .interval = 1.0 };
	int code;

	recording_init(&a.rc, NULL);
	a.vo.sz = sizeof(a.vo);
	a.rc.ctx = &a;
	a.rc.hooks = (struct recording_hooks){ .started = on_started, .tick = on_tick,
					       .closed = on_closed };
	argp_parse(&top_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	set_verbosity(1);
	a.rc.system = !a.rc.npids && !a.rc.argv;
	a.tty = a.vo.format == PROF_TAIL_FORMAT_TOP && isatty(STDOUT_FILENO);
	a.vo.refresh = a.tty;
	/* the recording's summary when it is kept */
	a.rc.summary = a.rc.output != NULL;
	if (!a.rc.output)
		make_hidden(&a);
	recording_install_signals(&a.rc);
	code = recording_run(&a.rc);
	terminal_restore();
	return code;
}

const struct prof_cmd cmd_top = {
	.name = "top",
	.summary = "show the hottest functions of the machine or of processes, live",
	.main = run_top,
};
