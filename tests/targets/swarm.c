/* SPDX-License-Identifier: MIT */
/*
 * swarm - many processes alive at once, for the recorder's memory per
 * process (bench/many-processes).  main forks N children; each burns
 * MS milliseconds of its CPU clock in child_spin, then sleeps until all
 * N have started and HOLD seconds more, and exits 0; main waits for them.
 *
 *   swarm [N [MS [HOLD]]]   (default 2000 5 2; exits 0 if every child did)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long child_spin(double ms)
{
	volatile unsigned long acc = 1;
	double end = cpu_now() + ms / 1000;

	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, started = 0, failed = 0, status;
	double ms = argc > 2 ? atof(argv[2]) : 5;
	int hold = argc > 3 ? atoi(argv[3]) : 2;
	int go[2];
	char c;

	/* the children wait on a pipe that closes once all are started */
	if (pipe(go) < 0) {
		perror("swarm: pipe");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("swarm: fork");
			break;
		}
		if (pid == 0) {
			close(go[1]);
			child_spin(ms);
			while (read(go[0], &c, 1) > 0)
				;
			sleep((unsigned)hold);
			_exit(0);
		}
		started++;
	}
	close(go[1]);
	fprintf(stderr, "swarm: %d children started\n", started);
	while (started-- > 0)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	return failed || started >= 0 ? 1 : 0;
}
