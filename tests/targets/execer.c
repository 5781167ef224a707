/* SPDX-License-Identifier: MIT */
/*
 * execer - ground truth for exec in a forked child.  main forks; the child
 * at once execs the ladder program found in the directory of its own
 * executable (/proc/self/exe) with argument SECONDS, so the child pid becomes
 * "ladder" and runs ladder's chain; the parent burns the CPU for SECONDS in
 * parent_busy -> parent_spin, waits for the child, and exits.
 *
 * Expected stacks, nearly every sample:
 *   parent pid ("execer"): main -> parent_busy -> parent_spin
 *   child pid  ("ladder"): main -> ladder_a -> ladder_b -> ladder_c -> ladder_d
 * No function of execer is ever seen in the child after the exec.
 *
 *   execer [SECONDS]   (default 0.5; exits 0 if the child exited 0, else 1;
 *                       the child exits 127 if ladder cannot be executed)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone))

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static STEP unsigned long parent_spin(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

static STEP unsigned long parent_busy(double seconds)
{
	double end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += parent_spin(n++);
	} while (cpu_now() < end);
	return sum;
}

int main(int argc, char **argv)
{
	const char *arg = argc > 1 ? argv[1] : "0.5";
	char path[PATH_MAX + 32];
	unsigned long sum;
	ssize_t len;
	char *slash;
	int status;
	pid_t pid;

	len = readlink("/proc/self/exe", path, PATH_MAX);
	if (len < 0 || !(slash = memrchr(path, '/', (size_t)len))) {
		perror("execer: /proc/self/exe");
		return 1;
	}
	strcpy(slash + 1, "ladder");
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("execer: fork");
		return 1;
	}
	if (pid == 0) {
		execl(path, "ladder", arg, (char *)NULL);
		perror(path);
		_exit(127);
	}
	sum = parent_busy(atof(arg));
	if (waitpid(pid, &status, 0) != pid) {
		perror("execer: waitpid");
		return 1;
	}
	printf("execer: child exited %d, checksum %lx\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), sum & 0xfff);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
