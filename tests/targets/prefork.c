/* SPDX-License-Identifier: MIT */
/*
 * prefork - ground truth for children that run without exec (a preforking
 * server, PostgreSQL's backends): the parent forks K workers, which share
 * its image, and each burns SECONDS of its own CPU time in
 * worker_main -> worker_a -> worker_b, then exits 0.  It prints
 * "worker PID" for each (before it runs), and exits 0 when every worker
 * exited 0.
 *
 * With -w the parent first waits for SIGUSR1, burning the CPU meanwhile in
 * main -> parent_wait -> parent_spin (so that a recorder attached to it
 * sees samples, and a test knows it is attached), then forks.
 *
 * Expected stacks:
 *   each worker: main -> worker_main -> worker_a -> worker_b
 *   the parent (-w, before the signal): main -> parent_wait -> parent_spin
 *
 *   prefork [-w] [K [SECONDS]]     (default 3 workers of 0.5 s)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone, no_icf))

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

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
	for (i = 0; i < 100000; i++)					\
		acc = acc * 6364136223846793005ul + (K);		\
	return acc;

static STEP unsigned long worker_b(unsigned long x) { SPIN_BODY(1) }
static STEP unsigned long parent_spin(unsigned long x) { SPIN_BODY(3) }

static STEP unsigned long worker_a(double seconds)
{
	double end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += worker_b(n++);
	} while (cpu_now() < end);
	return sum;
}

static STEP int worker_main(double seconds)
{
	return worker_a(seconds) == 42;
}

static STEP unsigned long parent_wait(void)
{
	unsigned long sum = 0, n = 0;

	while (!go)
		sum += parent_spin(n++);
	return sum;
}

int main(int argc, char **argv)
{
	int wait_signal = argc > 1 && !strcmp(argv[1], "-w");
	int k = argc > 1 + wait_signal ? atoi(argv[1 + wait_signal]) : 3, i, bad = 0, status;
	double seconds = argc > 2 + wait_signal ? atof(argv[2 + wait_signal]) : 0.5;
	pid_t pid;

	if (wait_signal) {
		signal(SIGUSR1, on_usr1);
		if (parent_wait() == 42)
			bad++;
	}
	for (i = 0; i < k; i++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("prefork: fork");
			return 1;
		}
		if (pid == 0)
			_exit(worker_main(seconds));
		printf("worker %d\n", (int)pid);
	}
	fflush(stdout);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	return bad ? 1 : 0;
}
