/* SPDX-License-Identifier: MIT */
/*
 * manyproc - N processes alive at once, for the benchmarks of memory and
 * of /proc synthesis: it forks N children that sleep, prints "ready" when
 * all are up, and ends when its stdin closes or on SIGTERM, killing them
 * (each dies with its parent too: PR_SET_PDEATHSIG).
 *
 *   manyproc [N]     (default 100)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i, up = 0;
	pid_t *kids = calloc(n > 0 ? (size_t)n : 1, sizeof(*kids));
	pid_t self = getpid();
	struct sigaction sa = { .sa_handler = on_term };
	char buf[256];

	if (!kids)
		return 1;
	sigaction(SIGTERM, &sa, NULL);	/* no SA_RESTART: read returns */
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("manyproc: fork");
			break;
		}
		if (kids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != self)
				_exit(0);
			for (;;)
				pause();
		}
		up++;
	}
	printf("ready\n");
	fflush(stdout);
	while (!done && read(0, buf, sizeof(buf)) > 0)
		;
	for (i = 0; i < up; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return up == n ? 0 : 1;
}
