/* SPDX-License-Identifier: MIT */
/*
 * sigtarget - ground truth for "the target must not notice being recorded".
 * Counts SIGINT, SIGCHLD and SIGCONT in handlers (SA_RESTART, SA_NOCLDSTOP:
 * only a child's exit counts as SIGCHLD); forks one child that sleeps half of
 * SECONDS and exits 0, so exactly one SIGCHLD arrives midway through the run;
 * burns the CPU for SECONDS in main -> sig_busy -> sig_spin; reaps the child;
 * prints one deterministic line of counts and exits 3.  SIGINT does not stop
 * it (the handler only counts); SIGSTOP/SIGCONT pause it and count one
 * SIGCONT.  Run undisturbed, the line is always
 *   sigtarget: sigint=0 sigchld=1 sigcont=0
 *
 * Expected stack, nearly every sample:
 *   main -> sig_busy -> sig_spin         (the child only sleeps)
 *
 *   sigtarget [SECONDS]   (default 1; exits 3)
 *
 * SECONDS is CPU time (the thread's CPU clock), not wall time, so that a
 * recording holds about 999 samples a second of it however loaded the
 * machine is; a loaded machine only takes longer.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noinline, noclone))

static volatile sig_atomic_t sigint_count, sigchld_count, sigcont_count;

static void on_signal(int sig)
{
	if (sig == SIGINT)
		sigint_count++;
	else if (sig == SIGCHLD)
		sigchld_count++;
	else if (sig == SIGCONT)
		sigcont_count++;
}

/* The thread's CPU time: what SECONDS counts. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static STEP unsigned long sig_spin(unsigned long x)
{
	volatile unsigned long acc = x;
	unsigned long i;

	for (i = 0; i < 2000000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

static STEP unsigned long sig_busy(double seconds)
{
	double end = cpu_now() + seconds;
	unsigned long sum = 0, n = 0;

	do {
		sum += sig_spin(n++);
	} while (cpu_now() < end);
	return sum;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
	unsigned long sum;
	pid_t pid;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGCONT, &sa, NULL);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("sigtarget: fork");
		return 1;
	}
	if (pid == 0) {
		sleep_for(seconds / 2);
		_exit(0);
	}
	sum = sig_busy(seconds);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	printf("sigtarget: sigint=%d sigchld=%d sigcont=%d\n", (int)sigint_count,
	       (int)sigchld_count, (int)sigcont_count);
	(void)sum;
	return 3;
}
