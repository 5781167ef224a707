/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - what the subcommands of prof share: the command table entry, exit
 * codes, message helpers and the hidden --list-options printer.
 */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#include <argp.h>
#include <stdbool.h>

#include "prof.h"

#define PROF_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Exit codes, documented in every man page and in --help. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 64,
};

/* Hidden option key shared by every command. */
#define OPT_LIST_OPTIONS 0x1000

struct prof_cmd {
	const char *name;
	const char *summary;			/* listed by `prof --help` */
	int (*main)(int argc, char **argv);	/* returns an exit code */
};

extern const struct prof_cmd cmd_record;
extern const struct prof_cmd cmd_report;
extern const struct prof_cmd cmd_tail;
extern const struct prof_cmd cmd_top;

/* "prof: <msg>" on stderr. */
void err_msg(const char *fmt, ...) PROF_PRINTF(1, 2);
/* "prof: warning: <msg>" on stderr, unless quiet. */
void warn_msg(const char *fmt, ...) PROF_PRINTF(1, 2);

/*
 * Whether SP can be weighed by W: 0, or -EINVAL with the error printed as
 * a user of --weight reads it, with how to record what it needs.
 */
int check_weight(const struct prof_spool *sp, enum prof_weight w);

/* 0 quiet (errors only), 1 normal (warnings), 2 info, 3 debug. */
void set_verbosity(int level);

/* Print the long (and short) options of ARGP, one per line, for the docs sync. */
void list_options(const struct argp *argp);

/* The argp option every command carries for --list-options. */
#define LIST_OPTIONS_ENTRY \
	{ "list-options", OPT_LIST_OPTIONS, NULL, OPTION_HIDDEN, "list options and exit", 0 }

#endif /* PROF_CMD_H */
