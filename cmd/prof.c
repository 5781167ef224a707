/* SPDX-License-Identifier: MIT */
/*
 * prof.c - main: global options, the command table, message helpers.  Each
 * command parses its own options; this file only picks the command.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "prof.h"

const char *argp_program_version = "prof " PROF_VERSION;
const char *argp_program_bug_address = "<https://github.com/prof-profiler/prof/issues>";

static const struct prof_cmd *const commands[] = { &cmd_record, &cmd_report, &cmd_tail, &cmd_top,
						    &cmd_push, &cmd_serve, NULL };

static int verbosity = 1;

void set_verbosity(int level)
{
	verbosity = level;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	/* one line, though other threads (prof serve's) say theirs at once */
	flockfile(stderr);
	fprintf(stderr, "prof: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

int check_weight(const struct prof_spool *sp, enum prof_weight w)
{
	int r = prof_spool_check_weight(sp, w);

	if (r < 0)
		err_msg("--weight=%s: %s; record with %s", prof_weight_name(w) ?: "?",
			prof_errmsg(), prof_spool_meta(sp)->flags & PROF_META_OFFCPU
					       ? "-e cpu-clock" : "prof record --off-cpu");
	return r;
}

void print_log(enum prof_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PROF_LOG_WARN)
		warn_msg("%s", msg);
	else if ((int)level + 1 <= verbosity)
		fprintf(stderr, "prof: %s\n", msg);
}

static void list_argp(const struct argp *argp)
{
	const struct argp_option *o;
	const struct argp_child *c;

	for (o = argp->options; o && (o->name || o->key || o->doc); o++) {
		if (o->flags & (OPTION_HIDDEN | OPTION_DOC))
			continue;
		if (o->name)
			printf("--%s\n", o->name);
		if (o->key > 0 && o->key < 0x100 && (o->key != ' ') && !(o->flags & OPTION_ALIAS))
			printf("-%c\n", o->key);
	}
	for (c = argp->children; c && c->argp; c++)
		list_argp(c->argp);
}

void list_options(const struct argp *argp)
{
	list_argp(argp);
	exit(EXIT_OK);
}

static const struct prof_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

struct main_args {
	const struct prof_cmd *cmd;
	int argc;
	char **argv;
};

static const struct argp_option main_options[] = {
	{ "list-commands", OPT_LIST_OPTIONS + 1, NULL, OPTION_HIDDEN, "list commands and exit", 0 },
	LIST_OPTIONS_ENTRY,
	{ 0 }
};

static char *command_names(void)
{
	static char buf[256];
	size_t i;

	buf[0] = '\0';
	for (i = 0; commands[i]; i++) {
		if (i)
			strcat(buf, ", ");
		strcat(buf, commands[i]->name);
	}
	return buf;
}

static struct argp main_argp;

static error_t parse_main(int key, char *arg, struct argp_state *state)
{
	struct main_args *args = state->input;
	size_t i;

	switch (key) {
	case OPT_LIST_OPTIONS + 1:
		for (i = 0; commands[i]; i++)
			printf("%s\n", commands[i]->name);
		exit(EXIT_OK);
	case OPT_LIST_OPTIONS:
		list_options(&main_argp);
		break;
	case ARGP_KEY_ARG:
		args->cmd = find_cmd(arg);
		if (!args->cmd)
			argp_error(state, "'%s' is not a prof command; the commands are: %s", arg,
				   command_names());
		/* the rest of the command line belongs to the command */
		args->argc = state->argc - state->next + 1;
		args->argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no command given; the commands are: %s", command_names());
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *main_help_filter(int key, const char *text, void *input)
{
	char *buf;
	size_t len, i;
	FILE *f;

	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC)
		return (char *)text;
	f = open_memstream(&buf, &len);
	if (!f)
		return (char *)text;
	fprintf(f, "Commands:\n");
	for (i = 0; commands[i]; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n%s", text);
	fclose(f);
	return buf;
}

static struct argp main_argp = {
	.options = main_options,
	.parser = parse_main,
	.args_doc = "COMMAND [ARG...]",
	.doc = "A sampling CPU profiler with DWARF unwinding and a compact, crash-safe spool."
	       "\v`prof COMMAND --help` describes a command.\n\n"
	       "Exit status: 0 success, 1 failure, 64 usage error; prof record passes on "
	       "the target's own status.",
	.help_filter = main_help_filter,
};

int main(int argc, char **argv)
{
	struct main_args args = { 0 };
	char name[64];

	argp_err_exit_status = EXIT_USAGE;	/* glibc's default, made explicit */
	prof_set_log_fn(print_log, PROF_LOG_DEBUG, NULL);
	argv[0] = (char *)"prof";	/* messages say "prof:", whatever the path */
	argp_parse(&main_argp, argc, argv, ARGP_IN_ORDER, NULL, &args);
	/* argp prints "prof report: ..." in the command's usage and errors */
	snprintf(name, sizeof(name), "prof %s", args.cmd->name);
	args.argv[0] = name;
	return args.cmd->main(args.argc, args.argv);
}
