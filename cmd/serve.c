/* SPDX-License-Identifier: MIT */
/*
 * serve.c - `prof serve [OPTION...] [-p PID...]`: record the whole machine
 * (or running processes) without end, into files of ten seconds that a
 * directory of its own holds for as long as the longest window served,
 * and answer Go's net/http/pprof contract over HTTP: the profile of the
 * next N seconds, or of the last N at once.  The recording is
 * recording.c's; the server and its files are lib/'s (prof_serve_*); this
 * file only ties them together and says where it serves.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

enum {
	OPT_LISTEN = OPT_RECORDING_END,
	OPT_DIR,
	OPT_KEEP,
	OPT_MAX_SECONDS,
	OPT_MAX_CONNECTIONS,
	OPT_DEBUGINFO,
};

struct serve_args {
	struct recording rc;
	struct prof_serve_opts so;
	struct prof_serve *srv;
	bool started;			/* recording, and said where it serves */
};

static const struct argp_option serve_options[] = {
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0, "answer on ADDR:PORT, [IPv6]:PORT or unix:PATH "
					       "(default: 127.0.0.1:6060; port 0: a free one)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "record running processes instead of the whole machine "
					 "(prof serve ends when they have)", 0 },
	{ "cpu", 'C', "LIST", 0, "the whole machine: only the CPUs of LIST, e.g. 0-3,6", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "the whole machine: only the tasks of cgroup PATH (v2, "
					   "absolute or under /sys/fs/cgroup)", 0 },
	{ "freq", 'F', "HZ", 0, "sample HZ times a second, or 'max' (default: 999)", 0 },
	{ "event", 'e', "EVENT", 0, "cpu-clock, task-clock or cycles (default: cycles, "
				    "else cpu-clock)", 0 },
	{ "kernel", 'k', NULL, 0, "record kernel frames too, above the user stack", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0, "also record where threads wait, for weight=off-cpu "
					   "and weight=wall (needs root or CAP_PERFMON)", 0 },
	{ "duration", 'd', "SECONDS", 0, "stop after SECONDS (default: when signalled)", 0 },
	{ "dir", OPT_DIR, "DIR", 0, "keep the recording's files in DIR (default: "
				    "$RUNTIME_DIRECTORY, else a new directory in $TMPDIR or /tmp)",
	  0 },
	{ "keep", OPT_KEEP, "SECONDS", 0, "how far back /debug/pprof/last reaches; older files "
					  "are removed (default: 300)", 0 },
	{ "max-seconds", OPT_MAX_SECONDS, "SECONDS", 0, "the most seconds= a request for the "
							"next seconds may ask for (default: 300)",
	  0 },
	{ "max-connections", OPT_MAX_CONNECTIONS, "N", 0, "clients served at once, at most half "
							  "of them from one address (default: 16)",
	  0 },
	{ "debuginfo", OPT_DEBUGINFO, NULL, 0, "profiles with inline frames and source lines, from "
					       "the modules' DWARF (about twice each profile's CPU "
					       "and memory)", 0 },
	{ "verbose", 'v', NULL, 0, "log each answer (repeat for libmicrohttpd's messages)", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp serve_argp;

/* A whole number from 1 to MAX for option OPT. */
static uint32_t parse_count(struct argp_state *state, const char *opt, const char *arg,
			    unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > max)
		argp_error(state, "invalid %s '%s': a whole number from 1 to %lu", opt, arg, max);
	return (uint32_t)v;
}

static error_t parse_serve(int key, char *arg, struct argp_state *state)
{
	struct serve_args *a = state->input;

	switch (key) {
	case OPT_LISTEN:
		a->so.listen = arg;
		break;
	case OPT_DIR:
		a->so.dir = arg;
		break;
	case OPT_KEEP:
		a->so.keep_seconds = parse_count(state, "--keep", arg, 86400);
		break;
	case OPT_MAX_SECONDS:
		a->so.max_seconds = parse_count(state, "--max-seconds", arg, 86400);
		break;
	case OPT_MAX_CONNECTIONS:
		a->so.max_connections = parse_count(state, "--max-connections", arg, 1024);
		break;
	case OPT_DEBUGINFO:
		a->so.debuginfo = true;
		break;
	case 'v':
		a->rc.verbosity++;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&serve_argp);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "prof serve takes no command: it records the whole machine, "
			   "or running processes with -p PID");
		break;
	case ARGP_KEY_END:
		if ((a->rc.opts.cpus || a->rc.opts.cgroup) && a->rc.npids)
			argp_error(state, "-C and --cgroup are for the whole machine, not -p PID");
		break;
	default:
		return recording_parse(&a->rc, key, arg, state);
	}
	return 0;
}

static struct argp serve_argp = {
	.options = serve_options,
	.parser = parse_serve,
	.args_doc = "\n-p PID[,PID...]",
	.doc = "Record the whole machine (or running processes) without end, and serve its "
	       "profiles over HTTP as Go's net/http/pprof does: the endpoint Parca's scrape "
	       "configs and Grafana Alloy's pyroscope.scrape read."
	       "\vEndpoints: GET /debug/pprof/profile?seconds=N waits N seconds (default 30) "
	       "and answers with the profile of those seconds, as Go does; GET "
	       "/debug/pprof/last?seconds=N answers at once with the profile of the last N "
	       "seconds; both take weight=cpu (the default), off-cpu or wall (with --off-cpu). "
	       "A profile is a gzip'd profile.proto, for go tool pprof.  GET /debug/pprof/ "
	       "lists them.  Another path is answered 404, a bad parameter 400, another method "
	       "405, each with a one-line reason.\n\n"
	       "prof serve runs until SIGINT, SIGTERM or SIGHUP, -d SECONDS, or with -p until "
	       "the processes have exited; it then removes the recording's files.\n\n"
	       "Exit status: 0 success, 1 it could not listen or record, 64 usage error.",
};

/*
 * The library's warnings, each said once: every profile reads the
 * recording's files anew, and would say the same of them (a file mapped
 * that cannot be read) at every scrape, for as long as prof serve runs.
 */
#define WARNED_MAX 1024

static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static char *warned[WARNED_MAX];
static size_t nwarned;

static void serve_log(enum prof_log_level level, const char *msg, void *ctx)
{
	bool seen = false;
	size_t i;

	if (level == PROF_LOG_WARN) {
		pthread_mutex_lock(&warned_lock);
		for (i = 0; i < nwarned && !seen; i++)
			seen = !strcmp(warned[i], msg);
		if (!seen && nwarned < WARNED_MAX && (warned[nwarned] = strdup(msg)))
			nwarned++;
		pthread_mutex_unlock(&warned_lock);
	}
	if (!seen)
		print_log(level, msg, ctx);
}

static void on_started(struct recording *rc, struct prof_recorder *rec)
{
	struct serve_args *a = rc->ctx;

	(void)rec;
	fprintf(stderr, "prof: serving %s\n", prof_serve_url(a->srv));
	a->started = true;
}

static int on_tick(struct recording *rc, struct prof_recorder *rec)
{
	struct serve_args *a = rc->ctx;

	return prof_serve_tick(a->srv, rec);
}

static void print_stats(const struct prof_serve *srv)
{
	PROF_OPTS(prof_serve_stats, st);

	if (prof_serve_stats(srv, &st) < 0)
		return;
	fprintf(stderr, "prof: served %" PRIu64 " profile%s (%.1f KiB) in %" PRIu64
		" request%s: %" PRIu64 " refused, %" PRIu64 " failed, %" PRIu64
		" connection%s cut for taking too long\n", st.profiles, st.profiles == 1 ? "" : "s",
		(double)st.profile_bytes / 1024, st.requests, st.requests == 1 ? "" : "s",
		st.refused, st.failed, st.cut, st.cut == 1 ? "" : "s");
}

static int run_serve(int argc, char **argv)
{
	struct serve_args a = { .so = { .sz = sizeof(a.so) } };
	const char *runtime_dir = getenv("RUNTIME_DIRECTORY");
	int code;

	recording_init(&a.rc, NULL);
	a.rc.ctx = &a;
	a.rc.hooks = (struct recording_hooks){ .started = on_started, .tick = on_tick };
	argp_parse(&serve_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	set_verbosity(1 + a.rc.verbosity);
	prof_set_log_fn(serve_log, PROF_LOG_DEBUG, NULL);
	/* systemd's RuntimeDirectory=: private to the service, and removed with it */
	if (!a.so.dir && runtime_dir && *runtime_dir && !strchr(runtime_dir, ':'))
		a.so.dir = runtime_dir;
	if (prof_serve_new(&a.so, &a.srv) < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	a.rc.system = !a.rc.npids;
	a.rc.output = prof_serve_spool_path(a.srv);
	a.rc.summary = false;	/* of files that go with it */
	a.rc.verbosity = 0;
	prof_serve_recorder_opts(a.srv, &a.rc.opts);
	recording_install_signals(&a.rc);
	code = recording_run(&a.rc);
	/* a recording that could not start served nothing: its error says it all */
	if (a.started)
		print_stats(a.srv);
	prof_serve_free(a.srv);
	while (nwarned)
		free(warned[--nwarned]);
	return code;
}

const struct prof_cmd cmd_serve = {
	.name = "serve",
	.summary = "record the machine without end, and serve its profiles as Go's "
		   "net/http/pprof does",
	.main = run_serve,
};
