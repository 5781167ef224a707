/* SPDX-License-Identifier: MIT */
/*
 * libdltarget.so - the shared library that dlopen_main loads at run time
 * (built -shared -fPIC as $(O)/targets/libdltarget.so, never as a program).
 * dltarget_entry -> dltarget_work, where dltarget_work burns the CPU.  Both
 * are exported (in .dynsym as well as .symtab), noinline and followed by work,
 * so each is a real frame.  See dlopen_main.c for the whole chain.
 */
#include <time.h>

#define STEP __attribute__((noinline, noclone, visibility("default")))

unsigned long dltarget_work(unsigned long x);
unsigned long dltarget_entry(double seconds);

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

STEP unsigned long dltarget_work(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

/* Burns SECONDS of its thread's CPU time; returns a checksum. */
STEP unsigned long dltarget_entry(double seconds)
{
	double end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += dltarget_work(n++);
	} while (cpu_now() < end);
	return sum;
}
