/* SPDX-License-Identifier: MIT */
/*
 * launch.c - start a program suspended before exec.  The child blocks on a
 * pipe until the recorder has opened its events, then execs; a failed exec
 * sends its errno back through a close-on-exec pipe, so "not found" and
 * "not executable" come back as errors instead of a mysterious exit.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

struct prof_launched {
	pid_t pid;
	int go_fd;	/* write end: one byte lets the child exec */
	int err_fd;	/* read end: the child's exec errno, or EOF on success */
	char *argv0;
	bool reaped;
};

int prof_launch_suspended(char *const argv[], struct prof_launched **ret)
{
	struct prof_launched *l;
	int go[2], err[2];
	sigset_t all;

	if (!argv || !argv[0])
		return error_setx(-EINVAL, "no command to run");
	l = calloc(1, sizeof(*l));
	if (!l || !(l->argv0 = strdup(argv[0]))) {
		free(l);
		return error_setx(-ENOMEM, "out of memory");
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		free(l->argv0);
		free(l);
		return error_set(-errno, "cannot create a pipe");
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		free(l->argv0);
		free(l);
		return error_set(e, "cannot create a pipe");
	}
	l->pid = fork();
	if (l->pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		free(l->argv0);
		free(l);
		return error_set(e, "cannot fork");
	}
	if (l->pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(err[0]);
		/* the target starts with the signal state a shell would give it */
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the recorder gave up before release */
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(err[1]);
	l->go_fd = go[1];
	l->err_fd = err[0];
	*ret = l;
	return 0;
}

pid_t prof_launched_pid(const struct prof_launched *l)
{
	return l->pid;
}

int prof_launched_release(struct prof_launched *l)
{
	ssize_t n;
	int e = 0, status;

	if (l->go_fd < 0)
		return error_setx(-EINVAL, "'%s' was already released", l->argv0);
	n = write(l->go_fd, "x", 1);
	close(l->go_fd);
	l->go_fd = -1;
	if (n != 1)
		return error_set(-errno, "cannot start '%s'", l->argv0);
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n != sizeof(e))
		return 0;	/* EOF: the exec happened */
	while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
		;
	l->reaped = true;
	if (e == ENOENT)
		return error_setx(-ENOENT, "'%s': command not found", l->argv0);
	return error_set(-e, "cannot execute '%s'", l->argv0);
}

int prof_launched_wait(struct prof_launched *l, bool block, int *ret_status)
{
	int status;
	pid_t r;

	if (l->reaped)
		return error_setx(-ECHILD, "'%s' was already reaped", l->argv0);
	do
		r = waitpid(l->pid, &status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR && block);
	if (r < 0)
		return errno == EINTR ? 0 : error_set(-errno, "cannot wait for '%s'", l->argv0);
	if (r == 0)
		return 0;
	l->reaped = true;
	*ret_status = status;
	return 1;
}

int prof_launched_kill(struct prof_launched *l, int sig)
{
	if (l->reaped)
		return error_setx(-ESRCH, "'%s' has ended", l->argv0);
	if (kill(l->pid, sig) < 0)
		return error_set(-errno, "cannot signal '%s'", l->argv0);
	return 0;
}

void prof_launched_free(struct prof_launched *l)
{
	int status;

	if (!l)
		return;
	if (l->go_fd >= 0) {
		close(l->go_fd);	/* the child reads EOF and exits 127 */
		while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (l->err_fd >= 0)
		close(l->err_fd);
	free(l->argv0);
	free(l);
}
