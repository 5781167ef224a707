/* SPDX-License-Identifier: MIT */
/*
 * tail.c - `prof tail`: follow a spool while it is written.  Following lands
 * with the live reader (issue 7); until then the command says so
 * rather than pretend.
 */
#include "cmd.h"
#include "prof.h"

static struct argp tail_argp;

static error_t parse_tail(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case ARGP_KEY_ARG:	/* accepted, so that the message below is the one seen */
		break;
	case OPT_LIST_OPTIONS:
		list_options(&tail_argp);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option tail_options[] = {
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static struct argp tail_argp = {
	.options = tail_options,
	.parser = parse_tail,
	.args_doc = "[FILE]",
	.doc = "Follow a spool that prof record is still writing."
	       "\vNot available in this version: following a spool is under construction.\n\n"
	       "Exit status: 1 not available, 64 usage error.",
};

static int run_tail(int argc, char **argv)
{
	argp_parse(&tail_argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	err_msg("tail: not available in this version (following a spool is under construction)");
	return EXIT_FAIL;
}

const struct prof_cmd cmd_tail = {
	.name = "tail",
	.summary = "follow a spool while it is written (under construction)",
	.main = run_tail,
};
