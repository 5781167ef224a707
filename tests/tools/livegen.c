/* SPDX-License-Identifier: MIT */
/*
 * livegen - write a synthetic spool as a long live recording would, with
 * libprof's writer: one process, a few threads, STACKS distinct stacks
 * over a pool of named functions (symbol records name them), RATE samples
 * per second of simulated time, a block closed each simulated second (as
 * prof record closes one at least once a second), for SECONDS of simulated
 * time, SPEED times faster than real time (0: as fast as it can).  It ends
 * with the trailer.  bench/tail-memory follows its output with prof tail.
 *
 *   livegen [--rate HZ] [--seconds N] [--speed X] [--stacks N] [--threads N] OUT
 *
 * It writes OUT from the start, as prof record does.  Deterministic for
 * given options.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"

#define NFUNCS 256
#define FUNC_SIZE 0x100
#define MAX_DEPTH 16

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void die(const char *what)
{
	fprintf(stderr, "livegen: %s: %s\n", what, prof_errmsg());
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Define the module, its functions' names and STACKS stacks; their leaf ids go to LEAVES. */
static void define(struct prof_spool_writer *w, uint32_t process, size_t nstacks, uint32_t *leaves)
{
	struct prof_module m = { .sz = sizeof(m), .process = process, .start = 0x400000,
				 .end = 0x400000 + NFUNCS * FUNC_SIZE, .flags = PROF_MODULE_EXEC,
				 .path = "/nonexistent/livegen-app" };
	uint32_t frames[MAX_DEPTH];
	int64_t mod, id;
	char name[32];
	size_t i, k, depth;

	mod = prof_spool_writer_add_module(w, &m);
	if (mod < 0)
		die("module");
	for (i = 0; i < NFUNCS; i++) {
		snprintf(name, sizeof(name), "fn_%03zu", i);
		if (prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = PROF_SYMBOL_MODULE,
				.scope_id = (uint32_t)mod, .start = i * FUNC_SIZE,
				.size = FUNC_SIZE, .name = name)) < 0)
			die("symbol");
	}
	for (i = 0; i < nstacks; i++) {
		depth = 4 + rng() % (MAX_DEPTH - 4);
		for (k = 0; k < depth; k++) {
			/* outer frames come from few functions, as main and its callees do */
			uint64_t fn = k + 1 == depth ? rng() % NFUNCS : rng() % (8 + 8 * (depth - k));

			id = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame,
				.kind = PROF_FRAME_USER, .ref = (uint32_t)mod,
				.addr = fn * FUNC_SIZE + 0x10 + rng() % 0x40));
			if (id < 0)
				die("frame");
			frames[depth - 1 - k] = (uint32_t)id;	/* leaf first */
		}
		id = prof_spool_writer_intern_frames(w, frames, depth);
		if (id < 0)
			die("stack");
		leaves[i] = (uint32_t)id;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate", required_argument, NULL, 'r' },   { "seconds", required_argument, NULL, 's' },
		{ "speed", required_argument, NULL, 'x' },  { "stacks", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ 0 }
	};
	uint64_t rate = 10000, secs = 60, i, sec, period;
	size_t nstacks = 1000, nthreads = 4, k;
	double speed = 1.0, start;
	char *out;
	uint32_t *leaves, threads[64];
	struct prof_spool_writer *w;
	struct timespec ts;
	struct prof_meta meta = { .sz = sizeof(meta), .event = "cpu-clock", .freq_hz = 10000, .stack_bytes = 32768,
				  .hostname = "livegen", .kernel_release = "6.1.0", .arch = "x86_64",
				  .page_size = 4096, .prof_version = PROF_VERSION };
	int64_t p;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': rate = strtoull(optarg, NULL, 10); break;
		case 's': secs = strtoull(optarg, NULL, 10); break;
		case 'x': speed = strtod(optarg, NULL); break;
		case 'k': nstacks = strtoul(optarg, NULL, 10); break;
		case 't': nthreads = strtoul(optarg, NULL, 10); break;
		default: return 64;
		}
	}
	if (argc - optind != 1 || !rate || !nstacks || !nthreads || nthreads > 64 || speed < 0) {
		fprintf(stderr, "usage: livegen [--rate HZ] [--seconds N] [--speed X] "
				"[--stacks N] [--threads N] OUT\n");
		return 64;
	}
	out = argv[optind];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	meta.mono_start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	meta.freq_hz = rate;
	if (prof_spool_writer_open(out, &meta, NULL, &w) < 0)
		die("open");
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 4242, .ppid = 1,
					  .time_ns = meta.mono_start_ns, .comm = "livegen-app",
					  .exe = "/nonexistent/livegen-app"));
	if (p < 0)
		die("process");
	for (k = 0; k < nthreads; k++) {
		char name[16];
		int64_t t;

		snprintf(name, sizeof(name), "worker-%zu", k);
		t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p,
						 .tid = 4242 + (int32_t)k, .time_ns = meta.mono_start_ns,
						 .name = k ? name : "livegen-app"));
		if (t < 0)
			die("thread");
		threads[k] = (uint32_t)t;
	}
	leaves = calloc(nstacks, sizeof(*leaves));
	if (!leaves)
		return 1;
	define(w, (uint32_t)p, nstacks, leaves);
	period = 1000000000u / rate;
	start = now_s();
	for (sec = 0, i = 0; sec < secs; sec++) {
		for (; i < (sec + 1) * rate; i++) {
			/* a skewed choice: low stack indices are hot */
			uint64_t r = rng(), pick = (r % nstacks) * ((r >> 32) % nstacks) / nstacks;
			struct prof_sample s = { .sz = sizeof(s), .time_ns = meta.mono_start_ns + i * period,
						 .thread = threads[i % nthreads],
						 .stack = leaves[pick], .period = period,
						 .cpu = (uint32_t)(i % nthreads) };

			if (prof_spool_writer_add_sample(w, &s) < 0)
				die("sample");
		}
		if (prof_spool_writer_flush(w) < 0)
			die("flush");
		if (speed > 0) {
			double due = start + (double)(sec + 1) / speed, left = due - now_s();

			if (left > 0) {
				ts.tv_sec = (time_t)left;
				ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
				nanosleep(&ts, NULL);
			}
		}
	}
	struct prof_counters cnt = { .sz = sizeof(cnt), .samples = i, .sample_events = i, .processes = 1,
				     .threads = nthreads,
				     .mono_end_ns = meta.mono_start_ns + secs * 1000000000u };
	if (prof_spool_writer_finish(w, &cnt) < 0 || prof_spool_writer_close(w) < 0)
		die("finish");
	fprintf(stderr, "livegen: %llu samples over %llu simulated seconds in %.1f s: %s\n",
		(unsigned long long)i, (unsigned long long)secs, now_s() - start, out);
	free(leaves);
	return 0;
}
