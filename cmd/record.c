/* SPDX-License-Identifier: MIT */
/*
 * record.c - `prof record`: sample a program into a spool.  Recording lands
 * with the recorder in lib/ (issue 3); until then the command says so
 * rather than pretend.
 */
#include "cmd.h"
#include "prof.h"

static struct argp record_argp;

static error_t parse_record(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case ARGP_KEY_ARG:	/* accepted, so that the message below is the one seen */
		break;
	case OPT_LIST_OPTIONS:
		list_options(&record_argp);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option record_options[] = {
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp record_argp = {
	.options = record_options,
	.parser = parse_record,
	.args_doc = "[-- COMMAND [ARG...]]",
	.doc = "Sample a program's CPU time with full call stacks into a spool."
	       "\vNot available in this version: recording is under construction.\n\n"
	       "Exit status: 1 not available, 64 usage error.",
};

static int run_record(int argc, char **argv)
{
	argp_parse(&record_argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	err_msg("record: not available in this version (recording is under construction)");
	return EXIT_FAIL;
}

const struct prof_cmd cmd_record = {
	.name = "record",
	.summary = "sample a program into a spool (under construction)",
	.main = run_record,
};
