/* SPDX-License-Identifier: MIT */
/*
 * spoolgen - write a synthetic spool with libprof's writer: a process with a
 * few named threads running a ladder of functions (main -> a -> b -> c -> d)
 * and N distinct deeper stacks, sampled at 999 Hz.  It feeds the demo, the
 * CLI tests, the fuzz seeds and the size test, so its output is deterministic
 * for a given seed.
 *
 *   spoolgen [--samples N] [--stacks N] [--seed N] [--jitter NS] [--raw]
 *            [--block BYTES] [--no-trailer] [--demo] OUT
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "spoolgen: %s: %s\n", what, r < 0 ? prof_errmsg() : "bad argument");
	exit(1);
}

#define CHECK(expr)                                                                        \
	({                                                                                 \
		int64_t r_ = (expr);                                                       \
		if (r_ < 0)                                                                \
			die(#expr, (int)r_);                                               \
		r_;                                                                        \
	})

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "stacks", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "jitter", required_argument, NULL, 'j' },
		{ "block", required_argument, NULL, 'b' },
		{ "raw", no_argument, NULL, 'r' },
		{ "no-trailer", no_argument, NULL, 't' },
		{ "demo", no_argument, NULL, 'd' },
		{ 0 }
	};
	struct prof_spool_writer_opts opts = { .sz = sizeof(opts) };
	uint64_t nsamples = 3000, nstacks = 50, jitter = 0, i;
	bool trailer = true, demo = false;
	const char *argv_meta[] = { "./ladder", "--iterations", "3000" };
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': nsamples = strtoull(optarg, NULL, 0); break;
		case 's': nstacks = strtoull(optarg, NULL, 0); break;
		case 'S': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		case 'j': jitter = strtoull(optarg, NULL, 0); break;
		case 'b': opts.block_bytes = strtoull(optarg, NULL, 0); break;
		case 'r': opts.no_compress = true; break;
		case 't': trailer = false; break;
		case 'd': demo = true; break;
		default: die("usage", 1);
		}
	}
	if (optind + 1 != argc || nstacks < 1)
		die("usage: spoolgen [options] OUT", 1);

	const uint64_t start = 1000000000000ull, period = 1001001;
	struct prof_meta meta = {
		.argc = 3, .argv = argv_meta,
		.wall_start_ns = 1764540000ull * 1000000000ull,
		.mono_start_ns = start,
		.event = "cpu-clock", .freq_hz = 999, .stack_bytes = 32768,
		.hostname = "spoolgen", .kernel_release = "6.1.0-synthetic", .arch = "x86_64",
		.page_size = 4096, .prof_version = PROF_VERSION, .flags = PROF_META_INHERIT,
	};
	struct prof_spool_writer *w;
	struct prof_counters cnt = { 0 };

	CHECK(prof_spool_writer_open(argv[optind], &meta, &opts, &w));

	struct prof_process proc = { .pid = 4242, .ppid = 1, .start_time_ns = start - 5000,
				     .time_ns = start, .comm = "ladder", .exe = "/usr/bin/ladder" };
	uint32_t pid = (uint32_t)CHECK(prof_spool_add_process(w, &proc));
	static const char *const tnames[] = { "ladder", "worker-1", "worker-2" };
	uint32_t tids[3];

	for (i = 0; i < 3; i++) {
		struct prof_thread t = { .process = pid, .tid = 4242 + (int32_t)i,
					 .time_ns = start + i, .name = tnames[i] };

		tids[i] = (uint32_t)CHECK(prof_spool_add_thread(w, &t));
	}
	struct prof_module exe = { .process = pid, .time_ns = start, .start = 0x400000,
				   .end = 0x401000 + 0x10000, .pgoff = 0x1000,
				   .flags = PROF_MODULE_EXEC, .dev_major = 8, .dev_minor = 1,
				   .inode = 1234, .build_id_len = 20, .path = "/usr/bin/ladder" };
	struct prof_module libc = { .process = pid, .time_ns = start, .start = 0x7f0000000000,
				    .end = 0x7f0000180000, .pgoff = 0x26000, .dev_major = 8,
				    .dev_minor = 1, .inode = 5678, .build_id_len = 20,
				    .path = "/usr/lib/x86_64-linux-gnu/libc.so.6" };

	for (i = 0; i < 20; i++) {
		exe.build_id[i] = (uint8_t)(0xa0 + i);
		libc.build_id[i] = (uint8_t)(0x10 + i);
	}
	uint32_t mexe = (uint32_t)CHECK(prof_spool_add_module(w, &exe));
	uint32_t mlibc = (uint32_t)CHECK(prof_spool_add_module(w, &libc));
	struct prof_symbol sym = { .scope = PROF_SYMBOL_MODULE, .scope_id = mexe,
				   .start = 0x1100, .size = 0x40, .name = "ladder_d" };

	CHECK(prof_spool_add_symbol(w, &sym));
	CHECK(prof_spool_rename_thread(w, tids[1], start + 10, "worker-one"));

	/* stack k: _start, __libc_start_main, main, a, b, c, d, then k's own leaf chain */
	uint64_t *leaf = calloc(nstacks, sizeof(*leaf));
	uint32_t frames[64];

	if (!leaf)
		die("calloc", -ENOMEM);
	for (i = 0; i < nstacks; i++) {
		size_t n = 0, depth = 1 + i % 8, k;
		struct prof_frame f = { .kind = PROF_FRAME_USER, .ref = mexe };

		for (k = 0; k < depth; k++) {
			f.addr = 0x2000 + (i * 131 + k * 17) % 0x8000;
			frames[n++] = (uint32_t)CHECK(prof_spool_intern_frame(w, &f));
		}
		static const uint64_t chain[] = { 0x1100, 0x1140, 0x1180, 0x11c0, 0x1200 };
		for (k = 0; k < 5; k++) {
			f.addr = chain[k];
			frames[n++] = (uint32_t)CHECK(prof_spool_intern_frame(w, &f));
		}
		f.ref = mlibc;
		f.addr = 0x27000;
		frames[n++] = (uint32_t)CHECK(prof_spool_intern_frame(w, &f));
		f.ref = mexe;
		f.addr = 0x1020;
		frames[n++] = (uint32_t)CHECK(prof_spool_intern_frame(w, &f));
		if (i % 10 == 9) {	/* an occasional truncated unwind */
			memmove(frames + 1, frames, n * sizeof(*frames));
			struct prof_frame t = { .kind = PROF_FRAME_TRUNCATED,
						.addr = PROF_UNWIND_STACK_COPY };
			frames[n] = (uint32_t)CHECK(prof_spool_intern_frame(w, &t));
			memmove(frames, frames + 1, n * sizeof(*frames));
		}
		leaf[i] = (uint64_t)CHECK(prof_spool_intern_frames(w, frames, n));
	}

	uint64_t t = start;
	for (i = 0; i < nsamples; i++) {
		/* a skewed choice: low stacks are hot, as in real profiles */
		uint64_t r = rng();
		uint64_t k = (r % nstacks) * ((r >> 32) % nstacks) / nstacks;
		struct prof_sample s = { .thread = tids[i % 3], .stack = (uint32_t)leaf[k],
					 .period = period, .cpu = (uint32_t)(i & 1) };

		t += period + (jitter ? rng() % jitter : 0);
		s.time_ns = t;
		CHECK(prof_spool_add_sample(w, &s));
		cnt.samples++;
		if (k % 10 == 9)
			cnt.truncated_stacks++, cnt.unwind_errors[PROF_UNWIND_STACK_COPY]++;
	}
	free(leaf);
	if (demo) {
		struct prof_lost l = { .time_ns = t, .kind = PROF_LOST_SAMPLES, .count = 0 };

		CHECK(prof_spool_add_lost(w, &l));
	}
	CHECK(prof_spool_add_thread_exit(w, tids[2], t + 1));
	CHECK(prof_spool_add_process_exit(w, pid, t + 2));
	cnt.sample_events = cnt.samples;
	cnt.processes = 1;
	cnt.threads = 3;
	cnt.mono_end_ns = t + 3;
	cnt.wall_end_ns = meta.wall_start_ns + (t + 3 - start);
	if (trailer)
		CHECK(prof_spool_writer_finish(w, &cnt));
	CHECK(prof_spool_writer_close(w));
	return 0;
}
