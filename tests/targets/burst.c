/* SPDX-License-Identifier: MIT */
/*
 * burst - many short-lived processes, one after the other: N times fork
 * and exec CHILD (default: burst_child beside burst) with MS (default 3),
 * waiting for each.  Each child burns MS ms of its own CPU time in
 * main -> work_a -> work_b and exits.  At the end burst prints what the
 * children burned by their own clocks (getrusage RUSAGE_CHILDREN) and
 * exits 0 if every child exited 0, else 1.
 *
 *   burst [N [MS [CHILD]]]        (default 300 children of 3 ms)
 *   prints: burst: N children, T ms of CPU
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, i, bad = 0, status;
	const char *ms = argc > 2 ? argv[2] : "3";
	char child[PATH_MAX], *slash;
	struct rusage ru;
	pid_t pid;

	if (argc > 3) {
		snprintf(child, sizeof(child), "%s", argv[3]);
	} else {
		snprintf(child, sizeof(child), "%s", argv[0]);
		slash = strrchr(child, '/');
		snprintf(slash ? slash + 1 : child, sizeof(child) - (size_t)(slash ? slash + 1 - child : 0),
			 "burst_child");
	}
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0) {
			perror("burst: fork");
			return 1;
		}
		if (pid == 0) {
			execl(child, "burst_child", ms, (char *)NULL);
			perror("burst: exec");
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("burst: %d children, %.1f ms of CPU\n", n,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	return bad ? 1 : 0;
}
