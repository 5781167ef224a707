/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - what the subcommands of prof share: the command table entry, exit
 * codes, message helpers and the hidden --list-options printer.
 */
#ifndef PROF_CMD_H
#define PROF_CMD_H

#include <argp.h>
#include <stdbool.h>
#include <sys/types.h>

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

extern const struct prof_cmd cmd_push;
extern const struct prof_cmd cmd_record;
extern const struct prof_cmd cmd_report;
extern const struct prof_cmd cmd_tail;
extern const struct prof_cmd cmd_top;
extern const struct prof_cmd cmd_serve;

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

/* The library's log line MSG, as the verbosity says (a prof_log_fn; CTX unused). */
void print_log(enum prof_log_level level, const char *msg, void *ctx);

/* Print the long (and short) options of ARGP, one per line, for the docs sync. */
void list_options(const struct argp *argp);

/* The argp option every command carries for --list-options. */
#define LIST_OPTIONS_ENTRY \
	{ "list-options", OPT_LIST_OPTIONS, NULL, OPTION_HIDDEN, "list options and exit", 0 }

/*
 * A recording as prof record and prof top run it (recording.c): the
 * options that shape it, starting it (a command, running processes or the
 * whole machine), the poll loop and its signals, and ending it.
 */
#define MAX_PIDS 64

/* The keys of the options recording_parse() handles (and short ones: F e s k p d m C). */
enum {
	OPT_NO_INHERIT = 0x100,
	OPT_OFF_CPU,
	OPT_CGROUP,
	OPT_RECORDING_END,	/* a command's own keys start here */
};

struct recording;

/* What a command does at points of the loop; any may be NULL. */
struct recording_hooks {
	/* the recorder exists, sampling not enabled yet */
	void (*started)(struct recording *rc, struct prof_recorder *rec);
	/* after each poll (about ten a second): 1 asks to stop, as -d does; < 0 fails */
	int (*tick)(struct recording *rc, struct prof_recorder *rec);
	/* the recorder was closed, before the summary */
	void (*closed)(struct recording *rc);
};

struct recording {
	struct prof_recorder_opts opts;
	const char *output;
	double duration;
	bool quiet;
	int verbosity;
	bool system;		/* the whole machine (prof_recorder_open_system()) */
	bool progress;		/* the progress line on stderr, twice a second */
	bool summary;		/* the summary at the end */
	char **argv;
	int argc;
	pid_t pids[MAX_PIDS];
	size_t npids;
	struct recording_hooks hooks;
	void *ctx;		/* the command's */
};

/* A recording with defaults: OUTPUT as its file. */
void recording_init(struct recording *rc, const char *output);

/* Parse one of the shared options (KEY); ARGP_ERR_UNKNOWN for another. */
int recording_parse(struct recording *rc, int key, char *arg, struct argp_state *state);

/* A count with an optional K suffix; a bad one is a usage error naming WHAT. */
unsigned long long parse_size(struct argp_state *state, const char *what, const char *arg);

/* A command and its arguments from here on (ARGP_KEY_ARG). */
void recording_take_command(struct recording *rc, struct argp_state *state);

/* SIGINT, SIGTERM, SIGHUP end the loop; SIGUSR2 switches files when asked for. */
void recording_install_signals(const struct recording *rc);

/* The signal that stopped the recording, or 0. */
int recording_stop_signal(void);

/*
 * Record: start, run the loop, end.  Returns the exit code: the command's
 * status (128+N for signal N), 0 for processes or the machine, 1 when
 * recording failed, 126/127 for a command that could not run.
 */
int recording_run(struct recording *rc);

/*
 * Where profiles go (push.c): the options prof push and prof record --push
 * share.  Their keys; prof push spells OPT_PUSH_PROTOCOL --protocol and
 * OPT_PUSH_TIMEOUT --timeout.
 */
enum {
	OPT_PUSH_URL = 0x200,
	OPT_PUSH_PROTOCOL,
	OPT_PUSH_SERVICE,
	OPT_PUSH_LABEL,
	OPT_PUSH_TIMEOUT,
};

#define MAX_PUSH_LABELS 64

struct push_options {
	struct prof_push_opts opts;
	const char *labels[MAX_PUSH_LABELS];
	const char *protocol_option;	/* how the command spells it, for messages */
	const char *timeout_option;
	bool given;			/* an option of these was given */
};

void push_options_init(struct push_options *po, const char *protocol_option,
		       const char *timeout_option);

/* Parse one of the push options (KEY); ARGP_ERR_UNKNOWN for another. */
int push_options_parse(struct push_options *po, int key, char *arg, struct argp_state *state);

/* The options, with a URL, make a pusher: else a usage error saying why. */
void push_options_check(struct push_options *po, struct argp_state *state);

/* "1.5 KiB": N bytes for a person. */
void human_bytes(char *buf, size_t len, uint64_t n);

#endif /* PROF_CMD_H */
