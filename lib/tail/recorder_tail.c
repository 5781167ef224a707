/* SPDX-License-Identifier: MIT */
/*
 * recorder_tail.c - the tail of a recorder: a tail over the file the
 * recorder writes (opened through the recorder's own descriptor, so before
 * the file is at its path too), one per recorder, which may outlive it,
 * and which may give the disk space of what it read back to the file
 * system.  It never touches the recorder's
 * writer: it reads the file as any reader would.  Its symbolizer reads the
 * ELF files the recorder holds open, shared with it (image_set.c).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "record/recorder.h"
#include "symbols/symbolize.h"
#include "tail.h"

/* T is freed: the recorder, if still there, has a tail no more. */
static void release(struct prof_tail *t)
{
	if (t->rec)
		t->rec->tail_link = NULL;
	t->rec = NULL;
	image_set_unref(t->images);
	t->images = NULL;
}

int prof_recorder_tail(struct prof_recorder *rec, struct prof_tail **ret)
{
	struct prof_tail *t;
	char proc[64];
	int fd, r;

	if (!rec || !ret)
		return error_setx(-EINVAL, "recorder tail: no recorder");
	if (rec->tail_link)
		return error_setx(-EBUSY, "the recorder already has a tail");
	if (rec->file.fd < 0 || rec->file.in_place)
		return error_setx(-ENOTSUP, "the recorder writes to a caller-owned sink, a pipe or "
				  "a device: there is no spool file to follow");
	r = tail_new(NULL, NULL, &t);
	if (r < 0)
		return r;
	/* a description of our own: the writer's lock keeps it from looking abandoned */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rec->file.fd);
	fd = open(proc, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		r = error_set(-errno, "cannot open spool '%s'", rec->file.path);
		goto out_free;
	}
	t->wfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (t->wfd < 0) {
		r = error_set(-errno, "cannot open spool '%s'", rec->file.path);
		close(fd);
		goto out_free;
	}
	/* the writer flushes its metadata when it opens: it is there already */
	r = tail_attach_fd(t, fd, rec->file.path);
	if (r < 0)
		goto out_free;
	t->rec = rec;
	t->images = image_set_ref(rec->capture.images);
	t->release = release;
	rec->tail_link = &t->rec;
	*ret = t;
	return 0;
out_free:
	prof_tail_free(t);
	return r;
}

int prof_tail_symbolizer(struct prof_tail *t, const struct prof_symbolizer_opts *opts,
			 struct prof_symbolizer **ret)
{
	int r;

	if (!t || !ret)
		return error_setx(-EINVAL, "tail symbolizer: no tail");
	if (!t->sp)
		return error_setx(-EAGAIN, "tail symbolizer: the spool has no metadata yet");
	r = prof_symbolizer_new(t->sp, opts, ret);
	if (r == 0 && t->images)
		symbolizer_read_images(*ret, t->images);
	return r;
}

int prof_tail_discard_consumed(struct prof_tail *t)
{
	uint64_t blk = 4096, start, end;
	struct stat st;

	if (!t)
		return error_setx(-EINVAL, "tail: no tail");
	if (t->wfd < 0)
		return error_setx(-ENOTSUP,
				  "tail: only the tail of a recorder discards what it read");
	if (fstat(t->wfd, &st) == 0 && st.st_blksize > 0)
		blk = (uint64_t)st.st_blksize;
	start = (t->meta_end + blk - 1) / blk * blk;
	if (start < t->discarded)
		start = t->discarded;
	end = t->consumed / blk * blk;
	if (end <= start)
		return 0;
	if (fallocate(t->wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)start,
		      (off_t)(end - start)) < 0)
		return error_set(-errno, "cannot discard what was read of spool '%s'", t->opened);
	t->discarded = end;
	return 0;
}
