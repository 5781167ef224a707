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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "record/recorder.h"
#include "symbols/symbolize.h"
#include "tail_state.h"

/* T is freed: the recorder, if still there, has a tail no more. */
static void release(struct prof_tail *t)
{
	size_t i;

	if (t->rec)
		t->rec->tail = (struct recorder_tail_link){ 0 };
	t->rec = NULL;
	image_set_unref(t->images);
	t->images = NULL;
	for (i = 0; i < t->nnext; i++) {
		close(t->next[i].fd);
		image_set_unref(t->next[i].images);
	}
	free(t->next);
	t->next = NULL;
	t->nnext = 0;
}

static void orphan(struct prof_tail *t)
{
	t->rec = NULL;
}

/* A descriptor of our own for the recorder's file open at FD: read, write, lock apart. */
static int open_own(int fd, const char *what)
{
	char proc[64];
	int own;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	own = open(proc, O_RDWR | O_CLOEXEC);
	return own < 0 ? error_set(-errno, "cannot open spool '%s'", what) : own;
}

/* The recorder goes on in the file open at FD: read it after this one. */
static int next_file(struct prof_tail *t, int fd, struct image_set *images)
{
	void *v = t->next;
	int own, r;

	r = grow_array(&v, &t->next_cap, t->nnext + 1, sizeof(*t->next));
	t->next = v;
	if (r < 0)
		return r;
	own = open_own(fd, t->opened ? t->opened : "the recorder's next file");
	if (own < 0)
		return own;
	t->next[t->nnext++] = (struct tail_next){ own, image_set_ref(images) };
	return 0;
}

/* The file read is finished and the recorder went on in another: follow it. */
static int move_on(struct prof_tail *t)
{
	struct tail_next next;
	int wfd, r;
	char *name;

	if (!t->nnext || t->state != PROF_TAIL_STATE_FINISHED)
		return 0;
	next = t->next[0];
	wfd = fcntl(next.fd, F_DUPFD_CLOEXEC, 0);
	if (wfd < 0)
		return error_set(-errno, "cannot open spool '%s'", t->opened);
	name = xstrdup(t->opened);
	if (!name) {
		close(wfd);
		return -ENOMEM;
	}
	memmove(t->next, t->next + 1, --t->nnext * sizeof(*t->next));
	/* the file read goes: its descriptors, its reader, what was known of its ids */
	prof_spool_close(t->sp);
	t->sp = NULL;
	close(t->fd);
	close(t->wfd);
	if (t->ino >= 0)
		close(t->ino);
	t->fd = t->wfd = t->ino = -1;
	free(t->opened);
	t->opened = NULL;
	if (t->comm_of)
		memset(t->comm_of, 0, t->comm_of_cap * sizeof(*t->comm_of));
	t->discarded = 0;
	t->stats.processes_alive = t->stats.threads_alive = 0;
	t->stats.processes = t->stats.threads = 0;
	image_set_unref(t->images);
	t->images = next.images;
	r = tail_attach_fd(t, next.fd, name);
	free(name);
	if (r < 0) {
		close(wfd);
		return r;
	}
	t->wfd = wfd;
	return 1;
}

int tail_follow(struct prof_tail *t, uint32_t *seen, struct prof_symbolizer *s)
{
	if (t->stats.spools == *seen)
		return 0;
	*seen = t->stats.spools;
	if (!s)
		return 1;
	return t->sp ? symbolizer_follow(s, t->sp, t->images) ?: 1
		     : error_setx(-EINVAL, "tail: no spool to follow");
}

int prof_recorder_tail(struct prof_recorder *rec, struct prof_tail **ret)
{
	struct prof_tail *t;
	int fd, r;

	if (!rec || !ret)
		return error_setx(-EINVAL, "recorder tail: no recorder");
	if (rec->tail.tail)
		return error_setx(-EBUSY, "the recorder already has a tail");
	if (rec->file.fd < 0 || rec->file.in_place)
		return error_setx(-ENOTSUP, "the recorder writes to a caller-owned sink, a pipe or "
				  "a device: there is no spool file to follow");
	r = tail_new(NULL, NULL, &t);
	if (r < 0)
		return r;
	/* a description of our own: the writer's lock keeps it from looking abandoned */
	fd = open_own(rec->file.fd, rec->file.path);
	if (fd < 0) {
		r = fd;
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
	t->move_on = move_on;
	rec->tail = (struct recorder_tail_link){ t, next_file, orphan };
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
