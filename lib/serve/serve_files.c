/* SPDX-License-Identifier: MIT */
/*
 * serve_files.c - the files of the recording prof serve answers from:
 * where they are (a directory of their own unless given one), which the
 * recording wrote and when each began, by the recording loop's clock
 * (CLOCK_MONOTONIC, the samples' own), which of them a window of time
 * needs, and removing those older than any window served, so that the
 * disk a server uses stays bounded however long it runs.  A file's start
 * is known to within a poll of the loop: a window takes the files around
 * it with a margin, and the report's time filter cuts it exactly.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "serve_files.h"

/* More than a file's start is off by (a poll of the loop, and a switch's time). */
#define MARGIN_NS 2000000000ull

int files_init(struct serve_files *f, const char *dir)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	int r = 0;

	*f = (struct serve_files){ 0 };
	pthread_mutex_init(&f->lock, NULL);
	if (dir) {
		if (stat(dir, &st) < 0)
			r = error_set(-errno, "cannot use directory '%s'", dir);
		else if (!S_ISDIR(st.st_mode))
			r = error_setx(-ENOTDIR, "cannot use directory '%s': not a directory",
				       dir);
		else if (access(dir, W_OK | X_OK) < 0)
			r = error_set(-errno, "cannot use directory '%s'", dir);
		else if (!(f->dir = xstrdup(dir)))
			r = -ENOMEM;
	} else if (asprintf(&f->dir, "%s/prof-serve.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		f->dir = NULL;
		r = error_setx(-ENOMEM, "out of memory");
	} else if (!mkdtemp(f->dir)) {
		r = error_set(-errno, "cannot make a directory for the recording in '%s'",
			      tmp && *tmp ? tmp : "/tmp");
	} else {
		f->own_dir = true;
	}
	/* the pid: two servers given one directory keep to their own files */
	if (r == 0 && asprintf(&f->base, "%s/prof-serve-%d", f->dir, (int)getpid()) < 0) {
		f->base = NULL;
		r = error_setx(-ENOMEM, "out of memory");
	}
	if (r < 0)
		files_release(f);
	return r;
}

int files_note(struct serve_files *f, const char *path, uint64_t start_ns)
{
	void *v;
	int r = 0;

	pthread_mutex_lock(&f->lock);
	if (!f->n || strcmp(f->v[f->n - 1].path, path)) {
		v = f->v;
		r = grow_array(&v, &f->cap, f->n + 1, sizeof(*f->v));
		f->v = v;
		if (r == 0 && !(f->v[f->n].path = xstrdup(path)))
			r = -ENOMEM;
		if (r == 0)
			f->v[f->n++].start_ns = start_ns;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

void files_prune(struct serve_files *f, uint64_t before_ns, size_t max_files)
{
	size_t drop = 0, i;

	pthread_mutex_lock(&f->lock);
	while (drop + 1 < f->n &&
	       (f->v[drop + 1].start_ns + MARGIN_NS < before_ns || f->n - drop > max_files))
		drop++;
	for (i = 0; i < drop; i++) {
		/* the recorder may have removed it already, keeping its newest files */
		if (unlink(f->v[i].path) < 0 && errno != ENOENT)
			pr_warn("cannot remove '%s': %s", f->v[i].path, strerror(errno));
		free(f->v[i].path);
	}
	memmove(f->v, f->v + drop, (f->n - drop) * sizeof(*f->v));
	f->n -= drop;
	pthread_mutex_unlock(&f->lock);
}

int files_pick(struct serve_files *f, uint64_t from_ns, uint64_t to_ns, char ***ret,
	       size_t *ret_n)
{
	char **paths = NULL;
	size_t i, n = 0;
	int r = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->n && r == 0; i++) {
		/* it began before the window ended, and ended after the window began */
		if (f->v[i].start_ns > to_ns + MARGIN_NS)
			break;
		if (i + 1 < f->n && f->v[i + 1].start_ns + MARGIN_NS < from_ns)
			continue;
		if (!paths && !(paths = calloc(f->n - i, sizeof(*paths))))
			r = error_setx(-ENOMEM, "out of memory");
		else if (!(paths[n] = xstrdup(f->v[i].path)))
			r = -ENOMEM;
		else
			n++;
	}
	pthread_mutex_unlock(&f->lock);
	if (r < 0) {
		while (n)
			free(paths[--n]);
		free(paths);
		return r;
	}
	*ret = paths;
	*ret_n = n;
	return 0;
}

/* Remove the files of the recording in F's directory: BASE.<stamp>, whether noted or not. */
static void remove_files(struct serve_files *f)
{
	const char *name = strrchr(f->base, '/') + 1;
	size_t len = strlen(name);
	struct dirent *e;
	DIR *d = opendir(f->dir);
	char *path;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, name, len) || e->d_name[len] != '.')
			continue;
		if (asprintf(&path, "%s/%s", f->dir, e->d_name) < 0)
			break;
		if (unlink(path) < 0 && errno != ENOENT)
			pr_warn("cannot remove '%s': %s", path, strerror(errno));
		free(path);
	}
	if (d)
		closedir(d);
}

void files_release(struct serve_files *f)
{
	size_t i;

	if (f->base)
		remove_files(f);
	if (f->own_dir && rmdir(f->dir) < 0)
		pr_warn("cannot remove '%s': %s", f->dir, strerror(errno));
	for (i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	free(f->base);
	free(f->dir);
	pthread_mutex_destroy(&f->lock);
	*f = (struct serve_files){ 0 };
}
