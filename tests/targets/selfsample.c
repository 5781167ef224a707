/* SPDX-License-Identifier: MIT */
/*
 * selfsample - samples of its own stack, taken without perf events, for
 * the unwinder's unit test (tests/unit/test-unwind.c).  At known points
 * take_sample() reads every general-purpose register and rip where a
 * sample would have them, copies the stack above rsp as perf's
 * PERF_SAMPLE_STACK_USER would, and writes both, with its executable
 * mappings, in the unwind capture format (lib/unwind/unwind_capture.c).
 * For each sample it prints the functions of this program the stack
 * holds, innermost first: what an unwind must find.
 *
 * The points: depth 1 to 4, a recursion 41 deep, a frame with a
 * variable-length array (CFA by rbp), one realigning its stack (a CFA
 * expression, not in the compiled rules), a return address kept in a
 * register (its CFI says so, as vfork's), a qsort() comparator (libc
 * frames between), a signal handler (a signal frame, not in them either),
 * an IFUNC resolver run by ld.so's lazy binding (libifunc.so beside this
 * program: _dl_runtime_resolve keeps its CFA in rbx, which _dl_fixup
 * saved), and a second thread (its stack ends in clone3).  Built -O2 without frame
 * pointers, as the other targets; noinline/noclone keep every function a
 * frame, and each call's result is used after it, so none is a tail call.
 *
 *   selfsample CAPTURE   (exits 0, or 1 when it cannot write CAPTURE)
 */
#define _GNU_SOURCE	/* pthread_getattr_np */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone))
#define STACK_COPY 65528	/* the most perf copies */

static int out = -1;
static uint64_t regs[17];	/* a sample's order: ax bx cx dx si di bp sp ip r8..r15 */
static uint8_t stack[STACK_COPY];
static volatile unsigned long sink;

static void put(const void *p, size_t n)
{
	if (write(out, p, n) != (ssize_t)n) {
		perror("selfsample: write");
		exit(1);
	}
}

/* 'M': the executable mappings backed by a file (and the vDSO), as the recorder keeps them. */
static void put_modules(void)
{
	struct { uint64_t v[3]; uint32_t dev[2]; uint64_t ino; char path[4096]; } m[64];
	uint32_t n = 0, head[2], i;
	char line[4352], perms[8];
	FILE *f = fopen("/proc/self/maps", "re");
	int len;

	if (!f) {
		perror("selfsample: /proc/self/maps");
		exit(1);
	}
	while (n < 64 && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;

		m[n].path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &min,
			   &ino, &len) < 7 || !strchr(perms, 'x'))
			continue;
		snprintf(m[n].path, sizeof(m[n].path), "%s", line + len);
		m[n].path[strcspn(m[n].path, "\n")] = '\0';
		if (m[n].path[0] != '/' && strcmp(m[n].path, "[vdso]"))
			continue;
		m[n].v[0] = s;
		m[n].v[1] = e;
		m[n].v[2] = off;
		m[n].dev[0] = maj;
		m[n].dev[1] = min;
		m[n].ino = ino;
		n++;
	}
	fclose(f);
	head[0] = (uint32_t)getpid();
	head[1] = n;
	put("M", 1);
	put(head, sizeof(head));
	for (i = 0; i < n; i++) {
		uint16_t plen = (uint16_t)strlen(m[i].path);

		put(m[i].v, sizeof(m[i].v));
		put(m[i].dev, sizeof(m[i].dev));
		put(&m[i].ino, 8);
		put(&plen, sizeof(plen));
		put(m[i].path, plen);
	}
	head[0] = 0;	/* no anonymous code */
	put(head, 4);
}

/* The top of the calling thread's stack. */
static uintptr_t stack_top(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &addr, &size))
		return 0;
	pthread_attr_destroy(&a);
	return (uintptr_t)addr + size;
}

/*
 * The sample: the registers as they are at the label, then the stack from
 * that rsp up.  Nothing above rsp that an unwind reads (return addresses,
 * saved registers) changes between the two; what take_sample's own calls
 * do happens below it.  EXPECT: the frames of this program, innermost
 * first.
 */
STEP unsigned long take_sample(const char *expect)
{
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid) };
	uintptr_t sp, top = stack_top();
	uint64_t size;

	__asm__ volatile("mov %%rax, 0(%0)\n\t"
			 "mov %%rbx, 8(%0)\n\t"
			 "mov %%rcx, 16(%0)\n\t"
			 "mov %%rdx, 24(%0)\n\t"
			 "mov %%rsi, 32(%0)\n\t"
			 "mov %%rdi, 40(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "1: lea 1b(%%rip), %%rax\n\t"
			 "mov %%rax, 64(%0)\n\t"
			 "mov %%r8, 72(%0)\n\t"
			 "mov %%r9, 80(%0)\n\t"
			 "mov %%r10, 88(%0)\n\t"
			 "mov %%r11, 96(%0)\n\t"
			 "mov %%r12, 104(%0)\n\t"
			 "mov %%r13, 112(%0)\n\t"
			 "mov %%r14, 120(%0)\n\t"
			 "mov %%r15, 128(%0)\n\t"
			 :
			 : "r"(regs)
			 : "rax", "memory");
	sp = (uintptr_t)regs[7];
	size = top > sp ? top - sp : 0;
	if (size > STACK_COPY)
		size = STACK_COPY;
	size &= ~(uint64_t)7;
	memcpy(stack, (const void *)sp, size);
	put("S", 1);
	put(ids, sizeof(ids));
	put(regs, sizeof(regs));
	put(&size, sizeof(size));
	put(stack, size);
	printf("%s\n", expect);
	fflush(stdout);
	return size;
}

STEP unsigned long level_c(unsigned long x)
{
	return take_sample("take_sample level_c level_b level_a main _start") ^ x;
}

STEP unsigned long level_b(unsigned long x)
{
	unsigned long r = take_sample("take_sample level_b level_a main _start");

	return (r + level_c(x + 1)) ^ x;
}

STEP unsigned long level_a(unsigned long x)
{
	unsigned long r = take_sample("take_sample level_a main _start");

	return (r + level_b(x + 1)) ^ x;
}

static char recursion_expect[64 + 41 * 8];

/* A volatile local read after the call: no accumulator turns the recursion into a loop. */
STEP unsigned long recurse(unsigned long n)
{
	volatile unsigned long here = n;
	unsigned long r = n ? recurse(n - 1) : take_sample(recursion_expect);

	return r + here;
}

/* A variable-length array: GCC keeps a frame pointer here, the CFA by rbp. */
STEP unsigned long vla_level(unsigned long n)
{
	volatile char buf[n];

	buf[0] = (char)n;
	buf[n - 1] = 1;
	return take_sample("take_sample vla_level main _start") + buf[0] + buf[n - 1];
}

/*
 * A local aligned beyond the ABI's 16, and an array of variable length:
 * GCC realigns the stack through a register (DRAP), the CFA an expression
 * the compiled rules do not encode.
 */
STEP unsigned long aligned_level(unsigned long x)
{
	volatile char buf[64] __attribute__((aligned(64)));
	volatile char vla[x % 64 + 1];

	buf[0] = (char)x;
	vla[0] = 1;
	return take_sample("take_sample aligned_level main _start") + buf[0] + vla[0];
}

/*
 * ra_in_register(FN, ARG) calls FN(ARG) with its own return address in
 * rbx, and its CFI says so (DW_CFA_register), as glibc's vfork keeps it in
 * rdi around its system call: a rule the compiled tables do not encode,
 * and one whose value is a register's, not a word of the stack.
 */
unsigned long ra_in_register(unsigned long (*fn)(const char *), const char *arg);
__asm__(".text\n"
	".globl ra_in_register\n"
	".type ra_in_register, @function\n"
	"ra_in_register:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbx, -16\n"
	"mov 8(%rsp), %rbx\n"
	".cfi_register %rip, %rbx\n"
	"mov %rdi, %rax\n"
	"mov %rsi, %rdi\n"
	"call *%rax\n"
	".cfi_offset %rip, -8\n"
	"pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbx\n"
	"ret\n"
	".cfi_endproc\n"
	".size ra_in_register, .-ra_in_register\n");

/*
 * It saves rbx and says where (the clobber makes GCC do so): libdw 0.188
 * takes a callee-saved register no rule names for undefined, not for the
 * same (its x86-64 ABI rules name register 0 where they mean rbx, 3), and
 * the caller's return address is in rbx.
 */
STEP static unsigned long ra_callee(const char *expect)
{
	__asm__ volatile("" ::: "rbx");
	return take_sample(expect) + 1;
}

STEP unsigned long ra_level(void)
{
	return ra_in_register(ra_callee, "take_sample ra_callee ra_in_register ra_level main _start") + sink;
}

static int sampled_in_compare;

STEP static int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!sampled_in_compare++)
		sink += take_sample("take_sample compare sort_level main _start");
	return (x > y) - (x < y);
}

STEP unsigned long sort_level(void)
{
	int v[] = { 5, 3, 9, 1, 7, 2, 8 };

	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), compare);
	return (unsigned long)v[0];
}

STEP static void on_signal(int sig)
{
	sink += take_sample("take_sample on_signal signal_level main _start") + (unsigned)sig;
}

STEP unsigned long signal_level(void)
{
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	return sink;
}

static unsigned long (*ifunc_entry)(unsigned long);

STEP static void on_resolve(void)
{
	sink += take_sample("take_sample on_resolve ifunc_level main _start");
}

STEP unsigned long ifunc_level(void)
{
	return ifunc_entry(sink) + sink;
}

/* libifunc.so beside this program, bound lazily; its hook is on_resolve(). */
static void open_ifunc(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	void (**hook)(void);
	void *h;

	if (n <= 0) {
		perror("selfsample: /proc/self/exe");
		exit(1);
	}
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libifunc.so");
	h = dlopen(path, RTLD_LAZY);
	hook = h ? dlsym(h, "ifunc_hook") : NULL;
	ifunc_entry = h ? (unsigned long (*)(unsigned long))dlsym(h, "ifunc_entry") : NULL;
	if (!hook || !ifunc_entry) {
		fprintf(stderr, "selfsample: %s\n", dlerror());
		exit(1);
	}
	*hook = on_resolve;
}

STEP static void *thread_main(void *arg)
{
	sink += take_sample("take_sample thread_main") + (uintptr_t)arg;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	unsigned long r;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: selfsample CAPTURE\n");
		return 64;
	}
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		perror("selfsample: open");
		return 1;
	}
	put("PROFUNW1", 8);
	open_ifunc();	/* before the modules are written: it is one of them */
	put_modules();
	strcpy(recursion_expect, "take_sample");
	for (i = 0; i < 41; i++)
		strcat(recursion_expect, " recurse");
	strcat(recursion_expect, " main _start");
	r = take_sample("take_sample main _start");
	r += level_a(r);
	r += recurse(40);
	r += vla_level(100 + (r & 1));
	r += aligned_level(r);
	r += ra_level();
	r += sort_level();
	r += signal_level();
	r += ifunc_level();
	if (pthread_create(&t, NULL, thread_main, NULL) == 0)
		pthread_join(t, NULL);
	sink += r;
	return close(out) == 0 ? 0 : 1;
}
