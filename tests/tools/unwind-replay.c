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

struct sample {
	size_t space;		/* index into spaces */
	uint32_t tid;
	uint64_t regs[SAMPLE_REGS_COUNT];
	uint64_t size;
	uint8_t *stack;
};

/* An address space as it was when some samples were taken: a version of a pid's. */
struct space {
	uint32_t pid;
	struct addr_space as;
};

static struct sample *samples;
static size_t nsamples, samples_cap;
static struct space *spaces;
static size_t nspaces, spaces_cap;

static void die(const char *what)
{
	fprintf(stderr, "unwind-replay: %s\n", what);
	exit(1);
}

static void get(FILE *f, void *p, size_t n)
{
	if (fread(p, 1, n, f) != n)
		die("the capture ends inside a record");
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p)
		die("out of memory");
	return p;
}

/* The latest version of PID's space, or nspaces. */
static size_t space_of(uint32_t pid)
{
	size_t i;

	for (i = nspaces; i-- > 0;)
		if (spaces[i].pid == pid)
			return i;
	return nspaces;
}

static void load(const char *path, struct unwinder *uw)
{
	FILE *f = fopen(path, "re");
	char magic[8];
	int c;

	if (!f)
		die("cannot open the capture");
	get(f, magic, sizeof(magic));
	if (memcmp(magic, "PROFUNW1", 8))
		die("not a capture (PROF_UNWIND_CAPTURE) file");
	while ((c = fgetc(f)) != EOF) {
		uint32_t head[2];

		get(f, head, sizeof(head));
		if (c == 'M') {
			struct space *s;
			uint32_t i;

			spaces = grow(spaces, &spaces_cap, nspaces, sizeof(*spaces));
			s = &spaces[nspaces++];
			s->pid = head[0];
			as_init(&s->as, (pid_t)head[0], &uw->spaces);
			for (i = 0; i < head[1]; i++) {
				uint64_t v[3], ino;
				uint32_t dev[2];
				uint16_t len;
				char name[65536];
				struct as_module m;
				uint32_t retired[16];
				size_t nr = 16;

				get(f, v, sizeof(v));
				get(f, dev, sizeof(dev));
				get(f, &ino, sizeof(ino));
				get(f, &len, sizeof(len));
				get(f, name, len);
				name[len] = '\0';
				/* the process is gone: its files are read by their paths */
				if (as_describe(&s->as, v[0], v[1], v[2], dev[0], dev[1], ino, name, &m) < 0 ||
				    as_add(&s->as, &m, retired, &nr) < 0)
					die("out of memory");
			}
			get(f, &head[1], sizeof(head[1]));
			for (i = 0; i < head[1]; i++) {
				uint64_t r[2];

				get(f, r, sizeof(r));
				if (as_add_anon(&s->as, r[0], r[1]) < 0)
					die("out of memory");
			}
		} else if (c == 'S') {
			struct sample *s;

			samples = grow(samples, &samples_cap, nsamples, sizeof(*samples));
			s = &samples[nsamples];
			s->space = space_of(head[0]);
			if (s->space == nspaces)
				die("a sample before its modules");
			s->tid = head[1];
			get(f, s->regs, sizeof(s->regs));
			get(f, &s->size, sizeof(s->size));
			if (s->size > (1u << 20))
				die("a stack copy above 1 MiB");
			s->stack = malloc(s->size ? s->size : 1);
			if (!s->stack)
				die("out of memory");
			get(f, s->stack, s->size);
			nsamples++;
		} else {
			die("an unknown record");
		}
	}
	fclose(f);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print(const struct sample *s, const struct unwind_result *r)
{
	size_t i;

	printf("%u %u %s:", spaces[s->space].pid, s->tid,
	       r->cause ? prof_unwind_error_name((unsigned)r->cause) : "complete");
	for (i = 0; i < r->n; i++) {
		struct as_module *m = as_find(&spaces[s->space].as, r->pc[i]);
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
	load(argv[optind], &uw);
	printf("# %zu samples in %zu address spaces\n", nsamples, nspaces);
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

			for (i = 0; i < nsamples; i++) {
				struct sample *s = &samples[i];

				if (unwind_sample(&uw, &spaces[s->space].as, (pid_t)s->tid, s->regs,
						  s->stack, s->size, res) < 0)
					die("out of memory");
				frames += res->n;
				complete += !res->cause;
				if (print_frames)
					print(s, res);
			}
			dt = cpu_now() - t0;
			printf("%-9s %5u %10.2f %12.0f %14.0f %12lu %8.2f%%\n", e ? "libdwfl" : "compiled",
			       pass, dt * 1e6 / (double)nsamples, (double)nsamples / dt,
			       (double)frames / dt, (unsigned long)frames,
			       100.0 * (double)complete / (double)nsamples);
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

		for (i = 0; i < nsamples; i++) {
			struct sample *s = &samples[i];
			bool frames;

			uw.engine = UNWIND_COMPILED;
			if (unwind_sample(&uw, &spaces[s->space].as, (pid_t)s->tid, s->regs, s->stack,
					  s->size, res) < 0)
				die("out of memory");
			uw.engine = UNWIND_DWFL;
			if (unwind_sample(&uw, &spaces[s->space].as, (pid_t)s->tid, s->regs, s->stack,
					  s->size, other) < 0)
				die("out of memory");
			frames = res->n == other->n && !memcmp(res->pc, other->pc, res->n * 8);
			same += frames && !res->cause == !other->cause;
			same_frames += frames;
		}
		printf("# the same frames in %zu of %zu samples (%.3f%%), and the same completeness "
		       "too in %zu\n", same_frames, nsamples,
		       100.0 * (double)same_frames / (double)nsamples, same);
	}
	return 0;
}
