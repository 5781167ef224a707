/* SPDX-License-Identifier: MIT */
/*
 * spoolgen - write a synthetic spool with libprof's writer: a process with a
 * few named threads running a ladder of functions (main -> a -> b -> c -> d)
 * and N distinct deeper stacks, sampled at 999 Hz.  It feeds the demo, the
 * CLI tests, the fuzz seeds and the size test, so its output is deterministic
 * for a given seed.
 *
 * With --elf PATH (a build of tests/targets/ladder.c) the executable module
 * is that file, with its build-id, and the frames are real file offsets of
 * its functions, looked up with libelf: stack k runs _start -> main -> ...
 * down to one of main, ladder_a .. ladder_d (k % 5), at a pc that differs
 * with k; every 10th stack is truncated (its _start replaced by the marker)
 * and 1 sample in 40 has no stack.  Reports of it name real functions.
 *
 * Thread worker-1 is renamed worker-one before the first sample, or just
 * before sample N with --rename-at N; with --exec-at N the process execs
 * /usr/bin/relaunched (comm "relaunched") just before sample N.  Samples go
 * to the threads in turn: sample i to ladder, worker-1, worker-2 for i % 3
 * = 0, 1, 2.
 *
 *   spoolgen [--samples N] [--stacks N] [--seed N] [--jitter NS] [--raw]
 *            [--block BYTES] [--no-trailer] [--demo] [--elf PATH]
 *            [--rename-at N] [--exec-at N] [--kernel] [--offcpu N] OUT
 *
 * With --kernel (and --elf), every third stack (k % 3 = 0) ends in a
 * kernel frame, named do_syscall_64 by a kernel symbol record.
 *
 * With --offcpu N the spool is one of prof record --off-cpu (version 2)
 * and holds N off-CPU intervals besides the samples, written after every
 * third sample until N are out: interval j on thread j % 3, on stack k = j
 * % stacks with a state frame on top, [runnable] when j % 4 = 3, else
 * [blocked], and a duration of (1 + j % 7) ms.  With --kernel its
 * user_stack leaves the kernel frame out.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The functions of the ladder, outermost first, and where they are in the file. */
static struct ladder_fn {
	const char *name;
	uint64_t off, size, vaddr;
	uint64_t call;		/* the file offset of a caller frame: see find_calls() */
} ladder[] = { { .name = "_start" },   { .name = "main" },	  { .name = "ladder_a" },
	       { .name = "ladder_b" }, { .name = "ladder_c" }, { .name = "ladder_d" } };

#define LADDER_LEN (sizeof(ladder) / sizeof(ladder[0]))

/*
 * Where each function of the ladder calls the next, as an unwound caller
 * frame has it (the return address less one: the call's last byte), found
 * as an x86-64 direct call (e8 rel32) to the next one's address; where
 * there is none (_start hands main to libc), the middle of the function.
 * A real call site matters: the DWARF of the middle of main may say it is
 * code inlined there, which no real caller frame would be.
 */
static void find_calls(int fd)
{
	size_t k, p;

	for (k = 0; k < LADDER_LEN; k++) {
		const struct ladder_fn *f = &ladder[k];
		unsigned char *buf = malloc(f->size);

		ladder[k].call = f->off + f->size / 2;
		if (!buf || k + 1 == LADDER_LEN ||
		    pread(fd, buf, f->size, (off_t)f->off) != (ssize_t)f->size) {
			free(buf);
			continue;
		}
		for (p = 0; p + 5 <= f->size; p++) {
			int32_t rel;

			memcpy(&rel, buf + p + 1, sizeof(rel));
			if (buf[p] == 0xe8 &&
			    f->vaddr + p + 5 + (uint64_t)(int64_t)rel == ladder[k + 1].vaddr) {
				ladder[k].call = f->off + p + 4;
				break;
			}
		}
		free(buf);
	}
}

/* Fill ladder[] with file offsets, and M's build-id, from the ELF file PATH. */
static void load_elf(const char *path, struct prof_module *m)
{
	Elf_Scn *scn = NULL;
	const void *id;
	size_t i, k, nph;
	ssize_t len;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &nph) < 0) {
		fprintf(stderr, "spoolgen: cannot read ELF file '%s'\n", path);
		exit(1);
	}
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len > 0 && len <= PROF_BUILD_ID_MAX) {
		memcpy(m->build_id, id, (size_t)len);
		m->build_id_len = (uint8_t)len;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; gelf_getsym(d, (int)i, &sym); i++) {
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);

			for (k = 0; name && k < LADDER_LEN; k++) {
				size_t p;

				if (strcmp(name, ladder[k].name) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				for (p = 0; p < nph; p++) {
					GElf_Phdr ph;

					if (gelf_getphdr(elf, (int)p, &ph) && ph.p_type == PT_LOAD &&
					    sym.st_value >= ph.p_vaddr &&
					    sym.st_value - ph.p_vaddr < ph.p_filesz)
						ladder[k].off = sym.st_value - ph.p_vaddr + ph.p_offset;
				}
				ladder[k].size = sym.st_size;
				ladder[k].vaddr = sym.st_value;
			}
		}
	}
	for (k = 0; k < LADDER_LEN; k++)
		if (!ladder[k].off || ladder[k].size < 8) {
			fprintf(stderr, "spoolgen: no function '%s' in '%s'\n", ladder[k].name, path);
			exit(1);
		}
	find_calls(fd);
	elf_end(elf);
	close(fd);
}

/* Off-CPU interval J of THREAD at TIME (see --offcpu above). */
static void add_offcpu(struct prof_spool_writer *w, uint64_t j, uint32_t thread, uint64_t time,
		       uint64_t stack, uint64_t user_stack, struct prof_counters *cnt)
{
	uint8_t state = j % 4 == 3 ? PROF_OFFCPU_STATE_RUNNABLE : PROF_OFFCPU_STATE_BLOCKED;
	struct prof_frame sf = { .sz = sizeof(sf), .kind = PROF_FRAME_STATE, .addr = state };
	uint32_t frame = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &sf));
	struct prof_offcpu o = {
		.sz = sizeof(o),
		.time_ns = time, .duration_ns = (1 + j % 7) * 1000000, .thread = thread,
		.stack = (uint32_t)CHECK(prof_spool_writer_intern_stack(w, (uint32_t)stack, frame)),
		.user_stack = (uint32_t)CHECK(prof_spool_writer_intern_stack(w, (uint32_t)user_stack,
									     frame)),
		.cpu = (uint32_t)(j & 1), .state = state, .end = PROF_OFFCPU_END_SWITCH_IN,
	};

	CHECK(prof_spool_writer_add_offcpu(w, &o));
	cnt->offcpu_intervals++;
	cnt->offcpu_ns += o.duration_ns;
	cnt->switch_events++;
}

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
		{ "elf", required_argument, NULL, 'e' },
		{ "rename-at", required_argument, NULL, 'R' },
		{ "exec-at", required_argument, NULL, 'X' },
		{ "kernel", no_argument, NULL, 'K' },
		{ "offcpu", required_argument, NULL, 'O' },
		{ 0 }
	};
	struct prof_spool_writer_opts opts = { .sz = sizeof(opts) };
	uint64_t nsamples = 3000, nstacks = 50, jitter = 0, i;
	uint64_t rename_at = UINT64_MAX, exec_at = UINT64_MAX;	/* MAX: at start, never */
	uint64_t noffcpu = 0, joff = 0;
	bool trailer = true, demo = false, kernel = false;
	char *elf_path = NULL;
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
		case 'R': rename_at = strtoull(optarg, NULL, 0); break;
		case 'X': exec_at = strtoull(optarg, NULL, 0); break;
		case 'K': kernel = true; break;
		case 'O': noffcpu = strtoull(optarg, NULL, 0); break;
		case 'e':
			elf_path = realpath(optarg, NULL);	/* as in /proc/PID/maps */
			if (!elf_path)
				die(optarg, -errno);
			break;
		default: die("usage", 1);
		}
	}
	if (optind + 1 != argc || nstacks < 1)
		die("usage: spoolgen [options] OUT", 1);

	const uint64_t start = 1000000000000ull, period = 1001001;
	struct prof_meta meta = {
		.sz = sizeof(meta),
		.argc = 3, .argv = argv_meta,
		.wall_start_ns = 1764540000ull * 1000000000ull,
		.mono_start_ns = start,
		.event = "cpu-clock", .freq_hz = 999, .stack_bytes = 32768,
		.hostname = "spoolgen", .kernel_release = "6.1.0-synthetic", .arch = "x86_64",
		.page_size = 4096, .prof_version = PROF_VERSION,
		.flags = PROF_META_INHERIT | (noffcpu ? PROF_META_OFFCPU : 0),
	};
	struct prof_spool_writer *w;
	struct prof_counters cnt = { .sz = sizeof(cnt) };

	CHECK(prof_spool_writer_open(argv[optind], &meta, &opts, &w));

	struct prof_process proc = { .sz = sizeof(proc), .pid = 4242, .ppid = 1, .start_time_ns = start - 5000,
				     .time_ns = start, .comm = "ladder", .exe = "/usr/bin/ladder" };
	uint32_t pid = (uint32_t)CHECK(prof_spool_writer_add_process(w, &proc));
	static const char *const tnames[] = { "ladder", "worker-1", "worker-2" };
	uint32_t tids[3];

	for (i = 0; i < 3; i++) {
		struct prof_thread t = { .sz = sizeof(t), .process = pid, .tid = 4242 + (int32_t)i,
					 .time_ns = start + i, .name = tnames[i] };

		tids[i] = (uint32_t)CHECK(prof_spool_writer_add_thread(w, &t));
	}
	struct prof_module exe = { .sz = sizeof(exe), .process = pid, .time_ns = start, .start = 0x400000,
				   .end = 0x401000 + 0x10000, .pgoff = 0x1000,
				   .flags = PROF_MODULE_EXEC, .dev_major = 8, .dev_minor = 1,
				   .inode = 1234, .build_id_len = 20, .path = "/usr/bin/ladder" };
	struct prof_module libc = { .sz = sizeof(libc), .process = pid, .time_ns = start, .start = 0x7f0000000000,
				    .end = 0x7f0000180000, .pgoff = 0x26000, .dev_major = 8,
				    .dev_minor = 1, .inode = 5678, .build_id_len = 20,
				    .path = "/usr/lib/x86_64-linux-gnu/libc.so.6" };

	for (i = 0; i < 20; i++) {
		exe.build_id[i] = (uint8_t)(0xa0 + i);
		libc.build_id[i] = (uint8_t)(0x10 + i);
	}
	if (elf_path) {
		exe.path = elf_path;
		exe.start = 0x555555554000;
		exe.end = exe.start + 0x5000;
		exe.pgoff = 0;
		exe.build_id_len = 0;
		load_elf(elf_path, &exe);
	}
	uint32_t mexe = (uint32_t)CHECK(prof_spool_writer_add_module(w, &exe));
	uint32_t mlibc = (uint32_t)CHECK(prof_spool_writer_add_module(w, &libc));
	struct prof_symbol sym = { .sz = sizeof(sym), .scope = PROF_SYMBOL_MODULE, .scope_id = mexe,
				   .start = 0x1100, .size = 0x40, .name = "ladder_d" };

	if (!elf_path)
		CHECK(prof_spool_writer_add_symbol(w, &sym));
	if (kernel) {
		struct prof_symbol ks = { .sz = sizeof(ks), .scope = PROF_SYMBOL_KERNEL, .start = 0xffffffff81000000ull,
					  .size = 0x1000, .name = "do_syscall_64" };

		CHECK(prof_spool_writer_add_symbol(w, &ks));
	}
	if (rename_at == UINT64_MAX)
		CHECK(prof_spool_writer_rename_thread(w, tids[1], start + 10, "worker-one"));

	/* stack k: _start, __libc_start_main, main, a, b, c, d, then k's own leaf chain */
	uint64_t *leaf = calloc(nstacks, sizeof(*leaf));
	uint64_t *user_leaf = calloc(nstacks, sizeof(*user_leaf));
	uint32_t frames[64];

	if (!leaf || !user_leaf)
		die("calloc", -ENOMEM);
	for (i = 0; elf_path && i < nstacks; i++) {
		/* leaf first: ladder[depth - 1] down to ladder[0] */
		size_t n = 0, depth = 2 + i % 5, k;
		struct prof_frame f = { .sz = sizeof(f), .kind = PROF_FRAME_USER, .ref = mexe };

		for (k = depth; k-- > 0;) {
			/* the leaf's pc moves with i; callers sit at their call site */
			f.addr = k == depth - 1 ? ladder[k].off + 1 + (i / 5) % (ladder[k].size - 1)
						: ladder[k].call;
			if (k == 0 && i % 10 == 9)
				f = PROF_INIT(prof_frame, .kind = PROF_FRAME_TRUNCATED,
							 .addr = PROF_UNWIND_STACK_COPY);
			frames[n++] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &f));
		}
		user_leaf[i] = (uint64_t)CHECK(prof_spool_writer_intern_frames(w, frames, n));
		if (kernel && i % 3 == 0) {	/* leaf first: the kernel frame goes in front */
			struct prof_frame kf = { .sz = sizeof(kf), .kind = PROF_FRAME_KERNEL,
						 .addr = 0xffffffff81000100ull };

			memmove(frames + 1, frames, n * sizeof(*frames));
			frames[0] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &kf));
			n++;
		}
		leaf[i] = (uint64_t)CHECK(prof_spool_writer_intern_frames(w, frames, n));
	}
	for (i = 0; !elf_path && i < nstacks; i++) {
		size_t n = 0, depth = 1 + i % 8, k;
		struct prof_frame f = { .sz = sizeof(f), .kind = PROF_FRAME_USER, .ref = mexe };

		for (k = 0; k < depth; k++) {
			f.addr = 0x2000 + (i * 131 + k * 17) % 0x8000;
			frames[n++] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &f));
		}
		static const uint64_t chain[] = { 0x1100, 0x1140, 0x1180, 0x11c0, 0x1200 };
		for (k = 0; k < 5; k++) {
			f.addr = chain[k];
			frames[n++] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &f));
		}
		f.ref = mlibc;
		f.addr = 0x27000;
		frames[n++] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &f));
		f.ref = mexe;
		f.addr = 0x1020;
		frames[n++] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &f));
		if (i % 10 == 9) {	/* an occasional truncated unwind */
			memmove(frames + 1, frames, n * sizeof(*frames));
			struct prof_frame t = { .sz = sizeof(t), .kind = PROF_FRAME_TRUNCATED,
						.addr = PROF_UNWIND_STACK_COPY };
			frames[n] = (uint32_t)CHECK(prof_spool_writer_intern_frame(w, &t));
			memmove(frames, frames + 1, n * sizeof(*frames));
		}
		leaf[i] = user_leaf[i] = (uint64_t)CHECK(prof_spool_writer_intern_frames(w, frames, n));
	}

	uint64_t t = start;
	for (i = 0; i < nsamples; i++) {
		/* a skewed choice: low stacks are hot, as in real profiles */
		uint64_t r = rng();
		uint64_t k = (r % nstacks) * ((r >> 32) % nstacks) / nstacks;
		struct prof_sample s = { .sz = sizeof(s), .thread = tids[i % 3], .stack = (uint32_t)leaf[k],
					 .period = period, .cpu = (uint32_t)(i & 1) };
		bool empty = elf_path && (r >> 16) % 40 == 0;

		t += period + (jitter ? rng() % jitter : 0);
		s.time_ns = t;
		if (i == rename_at)
			CHECK(prof_spool_writer_rename_thread(w, tids[1], t - 1, "worker-one"));
		if (i == exec_at)
			CHECK(prof_spool_writer_add_exec(w, pid, t - 1, "relaunched", "/usr/bin/relaunched"));
		if (empty)
			s.stack = 0;
		CHECK(prof_spool_writer_add_sample(w, &s));
		cnt.samples++;
		if (empty)
			cnt.empty_stacks++;
		else if (k % 10 == 9)
			cnt.truncated_stacks++, cnt.unwind_errors[PROF_UNWIND_STACK_COPY]++;
		if (i % 3 == 2 && joff < noffcpu) {
			add_offcpu(w, joff, tids[joff % 3], t - period / 2,
				   leaf[joff % nstacks], user_leaf[joff % nstacks], &cnt);
			joff++;
		}
	}
	for (; joff < noffcpu; joff++)
		add_offcpu(w, joff, tids[joff % 3], t, leaf[joff % nstacks],
			   user_leaf[joff % nstacks], &cnt);
	free(leaf);
	free(user_leaf);
	free(elf_path);
	if (demo) {
		struct prof_lost l = { .sz = sizeof(l), .time_ns = t, .kind = PROF_LOST_SAMPLES, .count = 0 };

		CHECK(prof_spool_writer_add_lost(w, &l));
	}
	CHECK(prof_spool_writer_add_thread_exit(w, tids[2], t + 1));
	CHECK(prof_spool_writer_add_process_exit(w, pid, t + 2));
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
