/* SPDX-License-Identifier: MIT */
/*
 * spool_file.c - the file a recording writes (see spool_file.h).  Putting
 * it in place is a rename of what was there to PATH.old, then a link of
 * the unnamed file (or a rename of the hidden one) to PATH: the two steps
 * are perf's, and a reader that opened the old file keeps reading it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "spool_file.h"

/* The directory of PATH ("." for a bare name) and its last component. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	*dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	return *dir ? 0 : error_setx(-ENOMEM, "out of memory");
}

/*
 * F's new file is open at f->fd, or creating it failed (errno says why):
 * lock it, or close F with a message naming NAME (IN_DIR: the directory
 * it was to be made in).  0 or -errno.
 */
static int created(struct spool_file *f, const char *name, bool in_dir)
{
	int r;

	if (f->fd < 0) {
		r = in_dir ? error_set(-errno, "cannot create a spool in '%s'", name)
			   : error_set(-errno, "cannot create spool '%s'", name);
		spool_file_close(f);
		return r;
	}
	/* where flock is not supported, the spool says so (no PROF_META_LOCKED) */
	f->locked = flock(f->fd, LOCK_EX | LOCK_NB) == 0;
	return 0;
}

int spool_file_create(struct spool_file *f, const char *path)
{
	const char *base;
	struct stat st;
	char *dir;
	int r;

	*f = (struct spool_file){ .fd = -1 };
	if (!path || !*path)
		return error_setx(-EINVAL, "no spool path");
	f->path = xstrdup(path);
	if (!f->path)
		return -ENOMEM;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		r = error_setx(-EISDIR, "cannot create spool '%s': it is a directory", path);
		goto fail;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a pipe, a terminal, /dev/null: nothing to rename, nothing to lock */
		f->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (f->fd < 0) {
			r = error_set(-errno, "cannot open spool '%s'", path);
			goto fail;
		}
		f->in_place = f->published = true;
		return 0;
	}
	r = split_path(path, &dir, &base);
	if (r < 0)
		goto fail;
	if (!*base) {
		free(dir);
		r = error_setx(-EISDIR, "cannot create spool '%s': it names a directory", path);
		goto fail;
	}
	f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (f->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* no unnamed files on this file system: a hidden name beside PATH */
		if (asprintf(&f->tmp, "%s/.%s.tmp.%d", dir, base, (int)getpid()) < 0) {
			f->tmp = NULL;
			free(dir);
			r = error_setx(-ENOMEM, "out of memory");
			goto fail;
		}
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	free(dir);
	return created(f, path, false);
fail:
	spool_file_close(f);
	return r;
}

int spool_file_create_unnamed(struct spool_file *f, const char *dir)
{
	char *tmp = NULL;
	int r;

	*f = (struct spool_file){ .fd = -1, .published = true };
	if (!dir || !*dir)
		return error_setx(-EINVAL, "no directory for an unnamed spool");
	if (asprintf(&f->path, "an unnamed file in %s", dir) < 0) {
		f->path = NULL;
		return error_setx(-ENOMEM, "out of memory");
	}
	f->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		if (asprintf(&tmp, "%s/.prof-spool.XXXXXX", dir) < 0) {
			tmp = NULL;
			r = error_setx(-ENOMEM, "out of memory");
			goto fail;
		}
		f->fd = mkostemp(tmp, O_CLOEXEC);
		if (f->fd >= 0)
			unlink(tmp);
		free(tmp);
	}
	return created(f, dir, true);
fail:
	spool_file_close(f);
	return r;
}

int spool_file_publish(struct spool_file *f)
{
	char proc[64], *old = NULL;
	struct stat st;
	int r;

	if (f->published)
		return 0;
	if (lstat(f->path, &st) == 0) {
		if (asprintf(&old, "%s.old", f->path) < 0)
			return error_setx(-ENOMEM, "out of memory");
		r = rename(f->path, old) < 0 ? -errno : 0;
		free(old);
		if (r < 0)
			return error_set(r, "cannot rename '%s' to '%s.old'", f->path, f->path);
	}
	if (f->tmp) {
		if (rename(f->tmp, f->path) < 0)
			return error_set(-errno, "cannot rename '%s' to '%s'", f->tmp, f->path);
		free(f->tmp);
		f->tmp = NULL;
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
		r = linkat(AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW);
		if (r < 0 && errno == ENOENT)	/* no /proc: this needs CAP_DAC_READ_SEARCH */
			r = linkat(f->fd, "", AT_FDCWD, f->path, AT_EMPTY_PATH);
		if (r < 0)
			return error_set(-errno, "cannot create spool '%s'", f->path);
	}
	f->published = true;
	return 0;
}

void spool_file_close(struct spool_file *f)
{
	if (f->tmp && !f->published)
		unlink(f->tmp);
	if (f->fd >= 0)
		close(f->fd);
	free(f->tmp);
	free(f->path);
	*f = (struct spool_file){ .fd = -1 };
}

int spool_file_has_writer(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -errno;
}
