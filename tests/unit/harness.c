/* SPDX-License-Identifier: MIT */
/*
 * harness.c - runs every registered test (or those named on the command
 * line), prints "ok NAME" or "FAIL NAME: file:line expr" for each, and ends
 * with "N passed, N failed".  Exit status 1 when any test failed.
 *
 * The tests run as in a container that refuses perf events: a seccomp
 * filter makes perf_event_open(2) fail with EACCES for the whole run (and
 * the programs it starts), so that no unit test can come to need them.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TESTS 512

static const struct unit_test *tests[MAX_TESTS];
static size_t ntests;
static bool failed;

const char *t_target(const char *name)
{
	static struct {
		const char *name;
		char path[PATH_MAX];
	} found[8];
	char buf[PATH_MAX], self[PATH_MAX];
	const char *build = getenv("BUILD");
	size_t i;
	ssize_t n;

	for (i = 0; i < sizeof(found) / sizeof(found[0]) && found[i].name; i++)
		if (!strcmp(found[i].name, name))
			return found[i].path;
	if (i == sizeof(found) / sizeof(found[0]))
		return NULL;
	if (!build) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			return NULL;
		self[n] = '\0';
		build = dirname(self);
	}
	snprintf(buf, sizeof(buf), "%s/targets/%s", build, name);
	if (!realpath(buf, found[i].path))
		return NULL;
	found[i].name = name;
	return found[i].path;
}

void t_register(const struct unit_test *t)
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "harness: more than %d tests\n", MAX_TESTS);
		exit(2);
	}
	tests[ntests++] = t;
}

bool t_failed(void)
{
	return failed;
}

void t_fail(const char *file, int line, const char *expr)
{
	if (!failed)
		printf("  %s:%d: %s\n", file, line, expr);
	failed = true;
}

void t_fail_int(const char *file, int line, const char *expr, long long a, long long b)
{
	if (!failed)
		printf("  %s:%d: %s (%lld vs %lld)\n", file, line, expr, a, b);
	failed = true;
}

void t_fail_str(const char *file, int line, const char *expr, const char *a, const char *b)
{
	if (!failed)
		printf("  %s:%d: %s (\"%s\" vs \"%s\")\n", file, line, expr, a ? a : "(null)",
		       b ? b : "(null)");
	failed = true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct unit_test *const *)a)->name,
		      (*(const struct unit_test *const *)b)->name);
}

/* perf_event_open(2) fails with EACCES from now on, here and in what this process starts. */
static void refuse_perf_events(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		printf("# cannot refuse perf events here (%s): the tests run as they are\n",
		       strerror(errno));
}

int main(int argc, char **argv)
{
	unsigned passed = 0, nfailed = 0;
	size_t i;
	int k;

	refuse_perf_events();

	qsort(tests, ntests, sizeof(tests[0]), by_name);
	for (i = 0; i < ntests; i++) {
		bool wanted = argc < 2;

		for (k = 1; k < argc; k++)
			wanted |= !strcmp(argv[k], tests[i]->name);
		if (!wanted)
			continue;
		failed = false;
		tests[i]->fn();
		printf("%s %s\n", failed ? "FAIL" : "ok  ", tests[i]->name);
		fflush(stdout);
		if (failed)
			nfailed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, nfailed);
	return nfailed ? 1 : 0;
}
