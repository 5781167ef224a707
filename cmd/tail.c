/* SPDX-License-Identifier: MIT */
/*
 * tail.c - `prof tail [FILE]`: follow a spool while it is written, and print
 * a top view or JSON per interval, or a line per sample, until its trailer
 * comes (exit 0), it is damaged (1), or its recorder is gone without
 * finishing it or nothing new comes for --idle seconds (2).  Options, the clock and messages only; finding, reading and
 * printing are lib/'s.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "prof.h"

enum {
	OPT_FROM_END = 0x100,
	OPT_IDLE,
	OPT_INTERVAL,
	OPT_FORMAT,
	OPT_WEIGHT,
};

/* The recorder is gone without a trailer, or nothing new for --idle seconds. */
#define EXIT_IDLE 2

struct tail_args {
	const char *path;
	const char **paths;		/* every spool given: the files of one recording */
	size_t npaths;
	bool from_end;
	double idle;
	double interval;
	enum prof_tail_format format;
	enum prof_weight weight;
};

static const struct argp_option tail_options[] = {
	{ "format", OPT_FORMAT, "FORMAT", 0, "top (the default), samples (a line per sample) or "
					     "json (an object per interval)", 0 },
	{ "weight", OPT_WEIGHT, "WEIGHT", 0, "cpu (samples, the default), off-cpu (where threads "
					     "waited, by time) or wall (both, by time): what "
					     "functions are ranked by, and what samples lists", 0 },
	{ "from-end", OPT_FROM_END, NULL, 0, "skip the samples already in the spool", 0 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0, "print top or json every SECONDS (default 1)", 0 },
	{ "idle", OPT_IDLE, "SECONDS", 0, "give up when nothing new came for SECONDS "
					  "(default 30)", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp tail_argp;

static double parse_seconds(struct argp_state *state, const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e6)
		argp_error(state, "invalid %s '%s': expected a number of seconds above 0", opt, arg);
	return v;
}

static error_t parse_tail(int key, char *arg, struct argp_state *state)
{
	struct tail_args *a = state->input;
	int r;

	switch (key) {
	case OPT_FORMAT:
		r = prof_tail_format_parse(arg);
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		a->format = (enum prof_tail_format)r;
		break;
	case OPT_WEIGHT:
		r = prof_weight_parse(arg);
		if (r < 0)
			argp_error(state, "%s", prof_errmsg());
		a->weight = (enum prof_weight)r;
		break;
	case OPT_FROM_END:
		a->from_end = true;
		break;
	case OPT_INTERVAL:
		a->interval = parse_seconds(state, "--interval", arg);
		break;
	case OPT_IDLE:
		a->idle = parse_seconds(state, "--idle", arg);
		break;
	case OPT_LIST_OPTIONS:
		list_options(&tail_argp);
		break;
	case ARGP_KEY_ARG:
		if (!a->paths && !(a->paths = calloc((size_t)state->argc, sizeof(char *))))
			argp_failure(state, EXIT_FAIL, ENOMEM, "cannot parse the options");
		a->paths[a->npaths++] = arg;
		a->path = a->paths[0];
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp tail_argp = {
	.options = tail_options,
	.parser = parse_tail,
	.args_doc = "[FILE...]",
	.doc = "Follow the spool FILE (default: prof.spool) while prof record writes it (a "
	       "recording split by --switch-output across its files FILE.STAMP, read as one; "
	       "several FILEs: those files of one recording, and the ones after them), and "
	       "print the hottest functions of each interval and overall (top), a line per "
	       "sample (samples: TIME PID TID COMM STACK), or a JSON object per interval."
	       "\vA recording made with --off-cpu is shown with its off-CPU time by state "
	       "(blocked, runnable); --weight=off-cpu ranks the functions that waited by "
	       "their time instead (an interval shows once it ends), and the samples format "
	       "then lists intervals, TIME PID TID COMM MICROSECONDS STACK.\n\n"
	       "A recording writes FILE from the moment sampling starts; a FILE that does not "
	       "exist yet is waited for.  Samples show about a second after they were taken.  On a terminal the "
	       "top view redraws in place; otherwise it prints a block per interval.\n\n"
	       "Exit status: 0 the recording finished (its trailer was read), 1 FILE is no "
	       "spool, is damaged or shrank, 2 the recorder is gone without finishing the "
	       "spool (killed), or nothing new came for --idle seconds, 64 usage error.",
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Say why following stopped, and return the exit status for it. */
static int report_end(const struct tail_args *a, struct prof_tail *t,
		      const struct prof_tail_batch *b)
{
	PROF_OPTS(prof_tail_stats, st);
	const char *file;

	prof_tail_stats(t, &st);
	file = st.path ? st.path : a->path;
	switch (b->state) {
	case PROF_TAIL_STATE_FINISHED:
		return EXIT_OK;
	case PROF_TAIL_STATE_CORRUPT:
		err_msg("spool '%s' is damaged (%s): stopped after %" PRIu64 " valid blocks", file,
			b->reason, st.blocks);
		return EXIT_FAIL;
	case PROF_TAIL_STATE_SHRUNK:
		err_msg("spool '%s' shrank while being followed (%s): stopped after %" PRIu64
			" blocks", file, b->reason, st.blocks);
		return EXIT_FAIL;
	case PROF_TAIL_STATE_WAITING:
		err_msg("no spool '%s' appeared in %g s", a->path, a->idle);
		return EXIT_IDLE;
	case PROF_TAIL_STATE_ABANDONED:
		err_msg("spool '%s' ends here: %s (the recorder was killed?)", file, b->reason);
		return EXIT_IDLE;
	case PROF_TAIL_STATE_CUT:
		err_msg("spool '%s' is cut short (%s) and nothing new came for %g s: the recording "
			"seems to have died", file, b->reason, a->idle);
		return EXIT_IDLE;
	default:
		err_msg("spool '%s' has no trailer after %" PRIu64 " blocks and nothing new came "
			"for %g s: the recording seems to have died", file, st.blocks, a->idle);
		return EXIT_IDLE;
	}
}

static int follow(const struct tail_args *a, struct prof_tail *t, struct prof_tail_view *v)
{
	double now = now_s(), last_new = now, next_print = now + a->interval, until;
	PROF_OPTS(prof_tail_batch, b);
	bool weighed = false;
	int r;

	for (;;) {
		r = prof_tail_poll(t, &b);
		/* once there is a spool: whether it can be weighed so, said as --weight's */
		if (r >= 0 && !weighed && prof_tail_spool(t)) {
			if (check_weight(prof_tail_spool(t), a->weight) < 0)
				return EXIT_FAIL;
			weighed = true;
		}
		if (r >= 0)
			r = prof_tail_view_add(v, t, &b, stdout);
		if (r < 0)
			goto out_err;
		now = now_s();
		if (b.activity)
			last_new = now;
		if (b.more)
			continue;
		if (prof_tail_state_is_final(b.state) || now - last_new >= a->idle)
			break;
		if (now >= next_print) {
			r = prof_tail_view_print(v, t, stdout);
			if (r < 0)
				goto out_err;
			next_print += a->interval;
			if (next_print <= now)
				next_print = now + a->interval;
		}
		until = next_print < last_new + a->idle ? next_print : last_new + a->idle;
		prof_tail_wait(t, (int)((until - now) * 1000) + 1);
	}
	r = prof_tail_view_print(v, t, stdout);
	if (r < 0)
		goto out_err;
	return report_end(a, t, &b);
out_err:
	err_msg("%s", prof_errmsg());
	return EXIT_FAIL;
}

static int run_tail(int argc, char **argv)
{
	struct tail_args a = { .idle = 30, .interval = 1, .format = PROF_TAIL_FORMAT_TOP };
	PROF_OPTS(prof_tail_opts, opts);
	PROF_OPTS(prof_tail_view_opts, vopts);
	struct prof_tail_view *v = NULL;
	struct prof_tail *t;
	int r;

	argp_parse(&tail_argp, argc, argv, 0, NULL, &a);
	if (!a.path)
		a.path = "prof.spool";
	opts.from_end = a.from_end;
	r = a.npaths > 1 ? prof_tail_open_many(a.paths, a.npaths, &opts, &t)
			 : prof_tail_open(a.path, &opts, &t);
	free(a.paths);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	vopts.format = a.format;
	vopts.weight = a.weight;
	vopts.refresh = a.format == PROF_TAIL_FORMAT_TOP && isatty(STDOUT_FILENO);
	vopts.title = a.path;
	r = prof_tail_view_new(&vopts, &v);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		prof_tail_free(t);
		return EXIT_FAIL;
	}
	r = follow(&a, t, v);
	prof_tail_view_free(v);
	prof_tail_free(t);
	return r;
}

const struct prof_cmd cmd_tail = {
	.name = "tail",
	.summary = "follow a spool while it is written",
	.main = run_tail,
};
