/* SPDX-License-Identifier: MIT */
/*
 * jitcfi - a JIT whose code keeps no frame: it copies a trampoline into an
 * anonymous executable mapping and announces it in a jitdump, as V8,
 * CPython 3.13's -X perf_jit and .NET do: the file jit-PID.dump in the
 * cwd, mapped executable as a marker, with an unwinding record (.eh_frame
 * then .eh_frame_hdr, the FDE's pointers relative to the .eh_frame placed
 * just after the code) before the code's load record.
 *
 * The trampoline saves rbp, puts a value in it that is no frame, and
 * calls the C function it is given, work(), which burns the CPU:
 * main -> jit_trampoline -> work.  A sample in work reaches main
 * only through the trampoline's CFI: frame pointers stop at its garbage
 * rbp, and its return address is not at rsp.
 *
 *   jitcfi [--no-cfi | --reuse] [SECONDS]   (default 1; x86-64 only; exits 0)
 *
 * --no-cfi writes the load without the unwinding record: the stacks then
 * stop in the trampoline.  --reuse loads two functions at the one address
 * in turns of 20 ms, as a JIT reuses freed code: jit_a, which calls
 * work_a, and jit_b, which calls work_b; a sample must be named by the load
 * that was there when it was taken.  SECONDS is the thread's CPU time.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* push rbp; movabs rbp, 0xdeadf00d; call *rdi; pop rbp; ret */
static const unsigned char trampoline[] = {
	0x55,
	0x48, 0xbd, 0x0d, 0xf0, 0xad, 0xde, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xd7,
	0x5d,
	0xc3,
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void work(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 200000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* --reuse: what jit_a and jit_b call */
__attribute__((noinline)) static void work_a(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 100000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

__attribute__((noinline)) static void work_b(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 100000; i++)
		x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul;
	sink = x;
}

/* Little-endian appends into a buffer. */
struct buf {
	unsigned char b[512];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b))
		abort();
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void set32(struct buf *b, size_t at, uint32_t v)
{
	memcpy(b->b + at, &v, 4);
}

static void pad(struct buf *b, size_t from, size_t to)
{
	while ((b->n - from) % to)
		put8(b, 0);	/* DW_CFA_nop */
}

/*
 * The trampoline's .eh_frame (a CIE and its FDE) and .eh_frame_hdr, as if
 * the .eh_frame were at EH_AT and the code at CODE.
 */
static void eh_frame(struct buf *b, uint64_t code, uint64_t eh_at, size_t *eh_size)
{
	size_t cie = b->n, fde, hdr;

	put32(b, 0);			/* length, set below */
	put32(b, 0);			/* CIE id */
	put8(b, 1);			/* version */
	put(b, "zR", 3);
	put8(b, 1);			/* code alignment */
	put8(b, 0x78);			/* data alignment -8 */
	put8(b, 16);			/* return address: rip */
	put8(b, 1);			/* augmentation data: */
	put8(b, 0x1b);			/* FDE pointers pcrel sdata4 */
	put8(b, 0x0c), put8(b, 7), put8(b, 8);	/* DW_CFA_def_cfa rsp+8 */
	put8(b, 0x90), put8(b, 1);	/* DW_CFA_offset rip at cfa-8 */
	pad(b, cie, 8);
	set32(b, cie, (uint32_t)(b->n - cie - 4));
	fde = b->n;
	put32(b, 0);				/* length */
	put32(b, (uint32_t)(b->n - cie));	/* back to the CIE */
	put32(b, (uint32_t)(int32_t)(code - (eh_at + (b->n - cie))));	/* pc_begin */
	put32(b, sizeof(trampoline));		/* pc_range */
	put8(b, 0);				/* augmentation data length */
	put8(b, 0x41);				/* advance 1: after push rbp */
	put8(b, 0x0e), put8(b, 16);		/* DW_CFA_def_cfa_offset 16 */
	put8(b, 0x86), put8(b, 2);		/* DW_CFA_offset rbp at cfa-16 */
	put8(b, 0x4d);				/* advance 13: after pop rbp */
	put8(b, 0x0e), put8(b, 8);		/* DW_CFA_def_cfa_offset 8 */
	put8(b, 0xc6);				/* DW_CFA_restore rbp */
	pad(b, fde, 8);
	set32(b, fde, (uint32_t)(b->n - fde - 4));
	*eh_size = b->n - cie;
	/* .eh_frame_hdr: version, encodings, the .eh_frame, one FDE */
	hdr = b->n;
	put8(b, 1);
	put8(b, 0x1b);		/* eh_frame_ptr pcrel sdata4 */
	put8(b, 0x03);		/* fde_count udata4 */
	put8(b, 0x3b);		/* table datarel sdata4 */
	put32(b, (uint32_t)(int32_t)(eh_at - (eh_at + (b->n - cie))));
	put32(b, 1);
	put32(b, (uint32_t)(int32_t)(code - (eh_at + (hdr - cie))));
	put32(b, (uint32_t)(int32_t)(fde - hdr));
}

/* Announce the trampoline at CODE as NAME: its unwinding record (with CFI) and its load. */
static void announce(FILE *f, uint64_t code, const char *name, int cfi, uint64_t index)
{
	struct buf rec = { .n = 0 }, eh = { .n = 0 };
	size_t eh_size;

	if (cfi) {
		uint64_t eh_at = code + ((sizeof(trampoline) + 7) & ~(size_t)7);

		eh_frame(&eh, code, eh_at, &eh_size);
		put32(&rec, 4);			/* JIT_CODE_UNWINDING_INFO */
		put32(&rec, (uint32_t)(40 + ((eh.n + 7) & ~(size_t)7)));
		put64(&rec, mono_ns());
		put64(&rec, eh.n);		/* unwinding_size */
		put64(&rec, eh.n - eh_size);	/* eh_frame_hdr_size */
		put64(&rec, 0);			/* mapped_size: not mapped in the process */
		put(&rec, eh.b, eh.n);
		pad(&rec, 0, 8);
		fwrite(rec.b, 1, rec.n, f);
	}
	rec.n = 0;
	put32(&rec, 0);				/* JIT_CODE_LOAD */
	put32(&rec, (uint32_t)(56 + strlen(name) + 1 + sizeof(trampoline)));
	put64(&rec, mono_ns());
	put32(&rec, (uint32_t)getpid()), put32(&rec, (uint32_t)syscall(SYS_gettid));
	put64(&rec, code), put64(&rec, code);	/* vma, code_addr */
	put64(&rec, sizeof(trampoline)), put64(&rec, index);	/* code_size, code_index */
	put(&rec, name, strlen(name) + 1);
	put(&rec, trampoline, sizeof(trampoline));
	fwrite(rec.b, 1, rec.n, f);
	fflush(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 && argv[1][0] == '-' ? argv[1] : "";
	int cfi = strcmp(mode, "--no-cfi") != 0, reuse = !strcmp(mode, "--reuse");
	double seconds = argc > 1 + (*mode != 0) ? atof(argv[1 + (*mode != 0)]) : 1.0, end;
	unsigned long calls = 0, phases = 0;
	struct buf rec = { .n = 0 };
	unsigned char *mem;
	char path[64];
	void *marker;
	uint64_t code;
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem + 64, trampoline, sizeof(trampoline));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	code = (uint64_t)(uintptr_t)(mem + 64);

	snprintf(path, sizeof(path), "jit-%d.dump", (int)getpid());
	f = fopen(path, "w+");
	if (!f)
		return 1;
	/* the header: magic, version, its size, EM_X86_64, pad, pid, time, flags */
	put32(&rec, 0x4A695444), put32(&rec, 1), put32(&rec, 40), put32(&rec, 62);
	put32(&rec, 0), put32(&rec, (uint32_t)getpid()), put64(&rec, mono_ns()), put64(&rec, 0);
	fwrite(rec.b, 1, rec.n, f);
	fflush(f);
	/* the marker: prof (and perf) learn of the file from this mapping */
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	if (marker == MAP_FAILED)
		return 1;

	end = cpu_now() + seconds;
	if (!reuse) {
		announce(f, code, "jit_trampoline", cfi, 1);
		do {
			((void (*)(void (*)(void)))(uintptr_t)code)(work);
			calls++;
		} while (cpu_now() < end);
	} else {
		/*
		 * Two functions at one address, in turns of 20 ms of CPU, each
		 * loaded anew as a JIT reloads freed code: jit_a calls work_a,
		 * jit_b work_b.
		 */
		do {
			int b = phases++ & 1;
			double turn = cpu_now() + 0.02;

			if (mprotect(mem, 4096, PROT_READ | PROT_WRITE) < 0)
				return 1;
			memcpy(mem + 64, trampoline, sizeof(trampoline));
			if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0)
				return 1;
			announce(f, code, b ? "jit_b" : "jit_a", 1, phases);
			do {
				((void (*)(void (*)(void)))(uintptr_t)code)(b ? work_b : work_a);
				calls++;
			} while (cpu_now() < turn);
		} while (cpu_now() < end);
	}
	if (reuse)
		printf("jitcfi: %lu calls, %lu loads\n", calls, phases);
	else
		printf("jitcfi: %lu calls\n", calls);
	munmap(marker, 4096);
	fclose(f);
	return 0;
}
