/* SPDX-License-Identifier: MIT */
/*
 * push.c - `prof push [OPTION...] URL FILE...`: send each spool FILE to a
 * Pyroscope or Parca server as a gzip'd pprof profile, one POST a file,
 * and say what became of each.  Also the options that say where profiles
 * go, which prof record --push shares.  Reading, encoding and sending are
 * lib/'s (prof_pusher_*).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

void push_options_init(struct push_options *po, const char *protocol_option,
		       const char *timeout_option)
{
	*po = (struct push_options){ .protocol_option = protocol_option,
				     .timeout_option = timeout_option };
	po->opts.sz = sizeof(po->opts);
	po->opts.labels = po->labels;
}

int push_options_parse(struct push_options *po, int key, char *arg, struct argp_state *state)
{
	char *end;
	double s;
	int r;

	switch (key) {
	case OPT_PUSH_URL:
		po->opts.url = arg;
		return 0;
	case OPT_PUSH_PROTOCOL:
		r = prof_push_protocol_parse(arg);
		if (r < 0)
			argp_error(state, "%s: %s", po->protocol_option, prof_errmsg());
		po->opts.protocol = (enum prof_push_protocol)r;
		break;
	case OPT_PUSH_SERVICE:
		po->opts.service = arg;
		break;
	case OPT_PUSH_LABEL:
		if (po->opts.nlabels == MAX_PUSH_LABELS)
			argp_error(state, "more than %d labels", MAX_PUSH_LABELS);
		po->labels[po->opts.nlabels++] = arg;
		break;
	case OPT_PUSH_TIMEOUT:
		errno = 0;
		s = strtod(arg, &end);
		if (errno || end == arg || *end || !(s >= 0.001) || s > 3600)
			argp_error(state, "invalid %s '%s': a number of seconds, from 0.001 to "
				   "3600", po->timeout_option, arg);
		po->opts.timeout_ms = (uint32_t)(s * 1000 + 0.5);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	po->given = true;
	return 0;
}

void push_options_check(struct push_options *po, struct argp_state *state)
{
	if (prof_push_check(&po->opts, NULL, NULL) < 0)
		argp_error(state, "%s", prof_errmsg());
}

struct push_args {
	struct push_options po;
	char **files;
	int nfiles;
	bool quiet;
	int verbosity;
};

static const struct argp_option push_options[] = {
	{ "protocol", OPT_PUSH_PROTOCOL, "PROTOCOL", 0,
	  "ingest (Pyroscope's /ingest), push (Pyroscope's push.v1 API) or parca (Parca's "
	  "WriteRaw); default: from the URL", 0 },
	{ "service", OPT_PUSH_SERVICE, "NAME", 0, "the service_name label (default: the recorded "
						  "command's name, else the host's)", 0 },
	{ "label", OPT_PUSH_LABEL, "NAME=VALUE", 0, "one more label of every profile (repeat for "
						    "more)", 0 },
	{ "timeout", OPT_PUSH_TIMEOUT, "SECONDS", 0, "the most one POST may take (default: 10)",
	  0 },
	{ "quiet", 'q', NULL, 0, "print nothing on stderr but errors", 0 },
	{ "verbose", 'v', NULL, 0, "say what became of each file, and what was sent", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp push_argp;

static error_t parse_push(int key, char *arg, struct argp_state *state)
{
	struct push_args *a = state->input;

	switch (key) {
	case 'q':
		a->quiet = true;
		break;
	case 'v':
		a->verbosity++;
		break;
	case OPT_LIST_OPTIONS:
		list_options(&push_argp);
		break;
	case ARGP_KEY_ARG:
		/* the URL, then the files (options may come between, as GNU's do) */
		if (!a->po.opts.url) {
			a->po.opts.url = arg;
			break;
		}
		if (!a->files && !(a->files = calloc((size_t)state->argc, sizeof(char *))))
			argp_failure(state, EXIT_FAIL, ENOMEM, "cannot parse the options");
		a->files[a->nfiles++] = arg;
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no URL to push to (prof push URL FILE...)");
		break;
	case ARGP_KEY_END:
		if (!a->nfiles)
			argp_error(state, "no file to push (prof push URL FILE...)");
		if (a->quiet && a->verbosity)
			argp_error(state, "--quiet and --verbose cannot be used together");
		push_options_check(&a->po, state);
		break;
	default:
		return push_options_parse(&a->po, key, arg, state);
	}
	return 0;
}

static struct argp push_argp = {
	.options = push_options,
	.parser = parse_push,
	.args_doc = "URL FILE...",
	.doc = "Send each spool FILE to a continuous-profiling server, Pyroscope or Parca, as "
	       "a gzip'd pprof profile: one POST a file, labelled with the service, the host, "
	       "and the pid and comm of a recording of one process."
	       "\vURL is an endpoint (a path ending in /ingest, /push.v1.PusherService/Push or "
	       "/profiles/writeraw, which also says the protocol) or a server "
	       "(http://host:4040, whose protocol --protocol gives, else Parca's on port 7070 and "
	       "Pyroscope's ingest on any other).\n\n"
	       "Each file sent is listed in the hidden file .NAME.pushed beside it, and not "
	       "sent to the same endpoint again (prof record --push reads that list too).  A "
	       "file still being written is left for prof record --push to send.\n\n"
	       "Exit status: 0 every file was sent (or had been, or holds no sample, or is "
	       "still being written), 1 a file could not be read or sent, 64 usage error.",
};

/* What became of PATH, R being prof_pusher_push_file()'s answer: whether it failed. */
static bool report_file(const struct push_args *a, const struct prof_pusher *p,
			const char *path, int r, const struct prof_push_result *res)
{
	char size[32];

	if (r == -EBUSY) {
		warn_msg("%s; skipping it (prof record --push sends it once finished)",
			 prof_errmsg());
		return false;
	}
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return true;
	}
	if (res->skipped) {
		if (a->verbosity)
			fprintf(stderr, "prof: '%s' was pushed to %s before, skipping\n", path,
				prof_pusher_endpoint(p));
	} else if (!res->sent) {
		warn_msg("'%s' holds no sample; nothing to push", path);
	} else if (a->verbosity) {
		human_bytes(size, sizeof(size), res->bytes);
		fprintf(stderr, "prof: pushed '%s' (%" PRIu64 " samples, %.3f s from its start, "
			"%s) to %s: HTTP %u in %.0f ms\n", path, res->samples,
			(double)(res->until_ns - res->from_ns) / 1e9, size, prof_pusher_endpoint(p),
			res->status, (double)res->elapsed_ns / 1e6);
	}
	return false;
}

static int run_push(int argc, char **argv)
{
	struct push_args a;
	struct prof_pusher *p;
	uint64_t sent = 0, samples = 0, bytes = 0;
	int i, r, failed = 0;
	char size[32];

	push_options_init(&a.po, "--protocol", "--timeout");
	a.files = NULL;
	a.nfiles = 0;
	a.quiet = false;
	a.verbosity = 0;
	argp_parse(&push_argp, argc, argv, 0, NULL, &a);
	set_verbosity(a.quiet ? 0 : 1 + a.verbosity);
	signal(SIGPIPE, SIG_IGN);	/* a server that hangs up is an error, not a death */
	r = prof_pusher_new(&a.po.opts, &p);
	if (r < 0) {
		err_msg("%s", prof_errmsg());
		return EXIT_FAIL;
	}
	for (i = 0; i < a.nfiles; i++) {
		PROF_OPTS(prof_push_result, res);

		r = prof_pusher_push_file(p, a.files[i], &res);
		failed += report_file(&a, p, a.files[i], r, &res);
		if (r == 0 && res.sent) {
			sent++;
			samples += res.samples;
			bytes += res.bytes;
		}
	}
	if (!a.quiet) {
		char fails[32] = "";

		if (failed)
			snprintf(fails, sizeof(fails), "; %d failed", failed);
		human_bytes(size, sizeof(size), bytes);
		fprintf(stderr, "prof: pushed %" PRIu64 " file%s (%" PRIu64 " samples, %s) to %s "
			"(%s)%s\n", sent, sent == 1 ? "" : "s", samples, size,
			prof_pusher_endpoint(p), prof_push_protocol_name(prof_pusher_protocol(p)),
			fails);
	}
	prof_pusher_free(p);
	free(a.files);
	return failed ? EXIT_FAIL : EXIT_OK;
}

const struct prof_cmd cmd_push = {
	.name = "push",
	.summary = "send spool files to Pyroscope or Parca",
	.main = run_push,
};
