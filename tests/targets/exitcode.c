/* SPDX-License-Identifier: MIT */
/*
 * exitcode - ground truth for exit status pass-through.  Burns about 0.1 s
 * of CPU in main -> exit_spin, prints one line, then exits with status N, or
 * with --signal SIG kills itself with signal SIG (disposition reset to the
 * default and unblocked first), so a parent sees 128+SIG from a shell.
 *
 * Expected stack, nearly every sample:
 *   main -> exit_spin
 *
 *   exitcode [N]              (default 0; exits N & 255)
 *   exitcode --signal SIG     (dies of SIG; exits 1 if SIG did not kill it)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long exit_spin(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

int main(int argc, char **argv)
{
	int sig = 0, code = 0;
	double end = now() + 0.1;
	unsigned long sum = 0, n = 0;
	sigset_t set;

	if (argc > 2 && !strcmp(argv[1], "--signal"))
		sig = atoi(argv[2]);
	else if (argc > 1)
		code = atoi(argv[1]);
	do {
		sum += exit_spin(n++);
	} while (now() < end);
	if (sig) {
		printf("exitcode: killing myself with signal %d (checksum %lx)\n", sig, sum & 0xfff);
		fflush(stdout);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		kill(getpid(), sig);
		fprintf(stderr, "exitcode: signal %d did not kill me\n", sig);
		return 1;
	}
	printf("exitcode: exiting with status %d (checksum %lx)\n", code, sum & 0xfff);
	return code;
}
