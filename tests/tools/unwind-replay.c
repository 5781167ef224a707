/* SPDX-License-Identifier: MIT */
/*
 * unwind-replay - replay the raw samples of a capture (PROF_UNWIND_CAPTURE,
 * see lib/unwind/unwind_capture.c) through the unwinding engines, and say
 * what each costs: microseconds per unwind, unwinds per second on one core,
 * frames per second.  bench/unwind runs it; the files the samples ran in
 * must still be there (same paths, same inodes).
 *
 *   unwind-replay [--engine compiled|dwfl|both] [--passes N] [--print] CAPTURE
 *
 * Pass 1 opens the files and compiles the tables it needs (for libdwfl: its
 * sessions, its parsed CFI); later passes show the steady state.  With both
 * engines it also counts the samples whose frames differ.  --print writes
 * each sample's frames of the first engine.
 */
#include <errno.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "unwind/addr_space.h"
#include "unwind/regs_x86_64.h"
#include "unwind/unwind.h"

static struct unwind_capture cap;

static void die(const char *what)
{
	fprintf(stderr, "unwind-replay: %s\n", what);
	exit(1);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print(const struct unwind_capture_sample *s, const struct unwind_result *r)
{
	size_t i;

	printf("%u %u %s:", cap.spaces[s->space]->pid, s->tid,
	       r->cause ? prof_unwind_error_name((unsigned)r->cause) : "complete");
	for (i = 0; i < r->n; i++) {
		struct as_module *m = as_find(&cap.spaces[s->space]->as, r->pc[i]);
		const char *base = m ? strrchr(m->path, '/') : NULL;

		if (m)
			printf(" %s+%#lx", base ? base + 1 : m->path,
			       (unsigned long)(r->pc[i] - m->start + m->pgoff));
		else
			printf(" %#lx", (unsigned long)r->pc[i]);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "passes", required_argument, NULL, 'p' },
		{ "print", no_argument, NULL, 'P' },
		{ 0 }
	};
	const char *engine = "both";
	struct unwinder uw;
	struct unwind_result *res = malloc(sizeof(*res)), *other = malloc(sizeof(*other));
	unsigned passes = 3, pass, e;
	bool print_frames = false;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': engine = optarg; break;
		case 'p': passes = (unsigned)atoi(optarg); break;
		case 'P': print_frames = true; break;
		default: return 64;
		}
	}
	if (optind + 1 != argc || !passes || !res || !other ||
	    (strcmp(engine, "both") && strcmp(engine, "compiled") && strcmp(engine, "dwfl"))) {
		fprintf(stderr, "usage: unwind-replay [--engine compiled|dwfl|both] [--passes N] "
				"[--print] CAPTURE\n");
		return 64;
	}
	elf_version(EV_CURRENT);
	setenv("PROF_UNWIND", "compiled", 1);
	if (unwinder_init(&uw) < 0)
		die("cannot set up the unwinder");
	if (unwind_capture_read(argv[optind], &uw.spaces, &cap) < 0)
		die(prof_errmsg());
	printf("# %zu samples in %zu address spaces\n", cap.nsamples, cap.nspaces);
	printf("%-9s %5s %10s %12s %14s %12s %9s\n", "engine", "pass", "us/unwind", "unwinds/s",
	       "frames/s", "frames", "complete");
	for (e = 0; e < 2; e++) {
		enum unwind_engine which = e ? UNWIND_DWFL : UNWIND_COMPILED;

		if (strcmp(engine, "both") && strcmp(engine, e ? "dwfl" : "compiled"))
			continue;
		uw.engine = which;
		for (pass = 1; pass <= passes; pass++) {
			uint64_t frames = 0, complete = 0;
			double t0 = cpu_now(), dt;
			size_t i;

			for (i = 0; i < cap.nsamples; i++) {
				struct unwind_capture_sample *s = &cap.samples[i];

				if (unwind_sample(&uw, &cap.spaces[s->space]->as, (pid_t)s->tid,
						  s->regs, s->stack, s->stack_size, res) < 0)
					die("out of memory");
				frames += res->n;
				complete += !res->cause;
				if (print_frames)
					print(s, res);
			}
			dt = cpu_now() - t0;
			printf("%-9s %5u %10.2f %12.0f %14.0f %12lu %8.2f%%\n", e ? "libdwfl" : "compiled",
			       pass, dt * 1e6 / (double)cap.nsamples,
			       (double)cap.nsamples / dt,
			       (double)frames / dt, (unsigned long)frames,
			       100.0 * (double)complete / (double)cap.nsamples);
			if (!e && pass == 1)
				printf("# tables: %lu files, %lu FDEs and %lu rows compiled, %lu KiB\n",
				       (unsigned long)uw.spaces.tables.files,
				       (unsigned long)uw.spaces.tables.fdes_compiled,
				       (unsigned long)uw.spaces.tables.rows_compiled,
				       (unsigned long)(uw.spaces.tables.peak_bytes >> 10));
		}
		print_frames = false;
	}
	if (!strcmp(engine, "both")) {
		size_t i, same = 0, same_frames = 0;

		for (i = 0; i < cap.nsamples; i++) {
			struct unwind_capture_sample *s = &cap.samples[i];
			struct addr_space *as = &cap.spaces[s->space]->as;
			bool frames;

			uw.engine = UNWIND_COMPILED;
			if (unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					  res) < 0)
				die("out of memory");
			uw.engine = UNWIND_DWFL;
			if (unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					  other) < 0)
				die("out of memory");
			frames = res->n == other->n && !memcmp(res->pc, other->pc, res->n * 8);
			same += frames && !res->cause == !other->cause;
			same_frames += frames;
		}
		printf("# the same frames in %zu of %zu samples (%.3f%%), and the same completeness "
		       "too in %zu\n", same_frames, cap.nsamples,
		       100.0 * (double)same_frames / (double)cap.nsamples, same);
	}
	return 0;
}
