/* SPDX-License-Identifier: MIT */
/*
 * forker - ground truth for following a forked child.  main forks; the child
 * burns the CPU for SECONDS in child_busy -> child_spin and exits 0 (without
 * exec: same image, same name "forker", another pid); the parent burns the
 * CPU for SECONDS in parent_busy -> parent_spin, then waits for the child.
 *
 * Expected stacks, nearly every sample:
 *   parent pid: main -> parent_busy -> parent_spin
 *   child pid:  main -> child_busy -> child_spin
 * (Without following children, only the parent's chain.)
 *
 *   forker [SECONDS]   (default 1; exits 0 if the child exited 0, else 1)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* no_icf: the twin functions below must not be folded into one. */
#define STEP __attribute__((noinline, noclone, no_icf))

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define SPIN_BODY(K)							\
	volatile unsigned long acc = x;					\
	unsigned long i;						\
									\
	for (i = 0; i < 2000000; i++)					\
		acc = acc * 6364136223846793005ul + (K);		\
	return acc;

static STEP unsigned long child_spin(unsigned long x) { SPIN_BODY(1) }
static STEP unsigned long parent_spin(unsigned long x) { SPIN_BODY(3) }

#define BUSY_BODY(SPIN)							\
	double end = cpu_now() + seconds;					\
	unsigned long sum = 0, n = 0;					\
									\
	do {								\
		sum += SPIN(n++);					\
	} while (cpu_now() < end);						\
	return sum;

static STEP unsigned long child_busy(double seconds) { BUSY_BODY(child_spin) }
static STEP unsigned long parent_busy(double seconds) { BUSY_BODY(parent_spin) }

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long sum;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forker: fork");
		return 1;
	}
	if (pid == 0) {
		child_busy(seconds);
		_exit(0);
	}
	sum = parent_busy(seconds);
	if (waitpid(pid, &status, 0) != pid) {
		perror("forker: waitpid");
		return 1;
	}
	printf("forker: child exited %d, checksum %lx\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), sum & 0xfff);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
