/* SPDX-License-Identifier: MIT */
/*
 * push_queue.c - prof_push_queue: a thread beside a recording that sends
 * each of its files once finished, oldest first.  Files are found by
 * listing the directory (a few times a second: a recording switches files
 * every few seconds at the most), named SPOOL_PATH.<YYYYmmddHHMMSSmmm>, so
 * that their names sort as they began; one is finished once no recorder
 * holds its lock (nor is it the newest, where locks are not kept).  The
 * thread remembers only the newest name it dealt with: every older file
 * was sent, skipped, refused or dropped, so its memory stays flat however
 * long the recording.  It owns its pusher; the caller's thread only starts
 * and stops it, and reads the counts under the lock.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "push_ledger.h"
#include "spool/spool_file.h"

#define LOOK_MS 250		/* how often the directory is listed */
#define RETRY_MIN_MS 1000
#define RETRY_MAX_MS 60000

struct prof_push_queue {
	struct prof_pusher *pusher;
	uint32_t max_files, retry_min_ms, retry_max_ms;
	char *spool_path;
	char *dir;			/* the spool path's directory, with its '/' ("" for .) */
	char *base;			/* its last component */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock */
	bool stopping;
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC, once stopping */
	struct prof_push_stats stats;
	/* the thread's own */
	char *last;			/* the newest file dealt with; NULL: none yet */
	uint32_t backoff_ms;		/* the next wait after a failure; 0: none failed */
	uint64_t retry_at_ns;		/* no POST before (CLOCK_MONOTONIC) */
};

/* The files of the recording in the directory, oldest first. */
struct listing {
	char **names;
	size_t n, cap;
};

static void listing_release(struct listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	*l = (struct listing){ 0 };
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_files(const struct prof_push_queue *q, struct listing *l)
{
	size_t blen = strlen(q->base);
	struct dirent *e;
	DIR *d = opendir(*q->dir ? q->dir : ".");
	void *v;
	int r = 0;

	if (!d)
		return error_set(-errno, "cannot list '%s'", *q->dir ? q->dir : ".");
	while (r == 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, q->base, blen) || !ledger_is_stamp(e->d_name + blen))
			continue;
		v = l->names;
		r = grow_array(&v, &l->cap, l->n + 1, sizeof(*l->names));
		l->names = v;
		if (r == 0 && !(l->names[l->n] = xstrdup(e->d_name)))
			r = -ENOMEM;
		if (r == 0)
			l->n++;
	}
	closedir(d);
	if (l->n)
		qsort(l->names, l->n, sizeof(*l->names), cmp_names);
	return r;
}

/* DIR/NAME, malloc'd. */
static char *path_of(const struct prof_push_queue *q, const char *name)
{
	char *p;

	return asprintf(&p, "%s%s", q->dir, name) < 0 ? NULL : p;
}

/* Whether a recorder still writes the file NAME: 1 yes, 0 no, -errno (gone). */
static int being_written(const struct prof_push_queue *q, const char *name)
{
	char *path = path_of(q, name);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1, r;

	r = fd < 0 ? -errno : spool_file_has_writer(fd);
	if (fd >= 0)
		close(fd);
	free(path);
	return r;
}

/* Remove the file NAME; -errno, warned, if it cannot be. */
static int remove_file(const struct prof_push_queue *q, const char *name)
{
	char *path = path_of(q, name);
	int r = !path ? -ENOMEM : unlink(path) < 0 && errno != ENOENT ? -errno : 0;

	if (r < 0)
		pr_warn("cannot remove '%s%s': %s", q->dir, name, strerror(-r));
	free(path);
	return r;
}

static void count(struct prof_push_queue *q, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(&q->lock);
	*counter += n;
	pthread_mutex_unlock(&q->lock);
}

static void remember_error(struct prof_push_queue *q)
{
	pthread_mutex_lock(&q->lock);
	snprintf(q->stats.last_error, sizeof(q->stats.last_error), "%s", prof_errmsg());
	pthread_mutex_unlock(&q->lock);
}

/* NAME is the newest file dealt with. */
static void remember_last(struct prof_push_queue *q, const char *name)
{
	char *last = xstrdup(name);

	if (last) {
		free(q->last);
		q->last = last;
	}
}

/*
 * Past max_files, the oldest files go, sent or not, never the one being
 * written (the newest, while the recording runs).  Counted as dropped
 * when they were not sent: every file older than q->last was dealt with.
 */
static void keep_bound(struct prof_push_queue *q, struct listing *l, bool stopping)
{
	size_t i, excess;

	if (!q->max_files || l->n <= q->max_files)
		return;
	excess = l->n - q->max_files;
	for (i = 0; excess && i + (stopping ? 0 : 1) < l->n; i++) {
		if (being_written(q, l->names[i]) == 1)
			continue;
		if (remove_file(q, l->names[i]) < 0)
			continue;
		excess--;
		if (q->last && strcmp(l->names[i], q->last) <= 0)
			continue;	/* a refused file, already counted as failed */
		pr_warn("dropped '%s%s' unsent: more than %u files of the recording (max_files)",
			q->dir, l->names[i], q->max_files);
		count(q, &q->stats.dropped, 1);
		remember_last(q, l->names[i]);
	}
}

/* The oldest file not dealt with yet that is finished, or NULL; *RET_WAITING: those finished. */
static const char *next_file(struct prof_push_queue *q, const struct listing *l, bool stopping,
			     size_t *ret_waiting)
{
	const char *next = NULL;
	size_t i;

	*ret_waiting = 0;
	for (i = 0; i < l->n; i++) {
		if (q->last && strcmp(l->names[i], q->last) <= 0)
			continue;
		/* the newest is the recorder's, where it cannot lock */
		if ((!stopping && i == l->n - 1) || being_written(q, l->names[i]) != 0)
			break;
		if (!next)
			next = l->names[i];
		++*ret_waiting;
	}
	return next;
}

/* Whether the failure R of a POST is the server's absence, worth trying again. */
static bool worth_retrying(int r, const struct prof_push_result *res)
{
	if (r == -EREMOTEIO)
		return res->status >= 500 || res->status == 408 || res->status == 429;
	return r == -ECONNREFUSED || r == -ETIMEDOUT || r == -ECONNRESET || r == -EHOSTUNREACH ||
	       r == -EIO || r == -ENOMEM;
}

/* A file dealt with: sent, skipped or without samples (R 0), or refused. */
static void done_with(struct prof_push_queue *q, const char *name, int r,
		      const struct prof_push_result *res, const struct stat *st)
{
	remember_last(q, name);
	q->backoff_ms = 0;
	q->retry_at_ns = 0;
	if (r < 0) {
		pr_warn("%s; leaving it there, going on with the next", prof_errmsg());
		remember_error(q);
		count(q, &q->stats.failed, 1);
		return;
	}
	if (res->sent) {
		uint64_t now = clock_ns(CLOCK_REALTIME), end = (uint64_t)stat_mtime_ns(st);

		pr_info("pushed '%s%s' (%" PRIu64 " samples, %" PRIu64 " bytes) to %s: HTTP %u in "
			"%.0f ms", q->dir, name, res->samples, res->bytes,
			prof_pusher_endpoint(q->pusher), res->status,
			(double)res->elapsed_ns / 1e6);
		pthread_mutex_lock(&q->lock);
		q->stats.pushed++;
		q->stats.bytes += res->bytes;
		q->stats.samples += res->samples;
		if (end && now > end && now - end > q->stats.max_delay_ns)
			q->stats.max_delay_ns = now - end;
		pthread_mutex_unlock(&q->lock);
	} else if (res->skipped) {
		pr_info("'%s%s' was pushed to %s before, skipping", q->dir, name,
			prof_pusher_endpoint(q->pusher));
		count(q, &q->stats.skipped, 1);
	} else {
		pr_info("'%s%s' holds no sample: nothing to push", q->dir, name);
		count(q, &q->stats.empty, 1);
	}
	if (q->max_files)
		remove_file(q, name);
}

/*
 * Push the file NAME; a failure for want of the server is tried again
 * later.  Returns: false when it failed so, true otherwise.
 */
static bool push_one(struct prof_push_queue *q, const char *name)
{
	SIZED(prof_push_result, res);
	char *path = path_of(q, name);
	struct stat st = { 0 };
	int r;

	if (!path)
		return false;
	stat(path, &st);
	r = prof_pusher_push_file(q->pusher, path, &res);
	free(path);
	if (r == -EBUSY || r == -ENOENT)
		return true;	/* a recorder took it again, or it went: the next look says */
	if (r < 0 && worth_retrying(r, &res)) {
		if (!q->backoff_ms)
			pr_warn("%s; trying again in %.1f s, the recording going on", prof_errmsg(),
				q->retry_min_ms / 1e3);
		else
			pr_info("%s; trying again in %.1f s", prof_errmsg(), q->backoff_ms / 1e3);
		remember_error(q);
		count(q, &q->stats.retries, 1);
		q->backoff_ms = q->backoff_ms ? q->backoff_ms : q->retry_min_ms;
		q->retry_at_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)q->backoff_ms * 1000000u;
		q->backoff_ms = q->backoff_ms * 2 > q->retry_max_ms ? q->retry_max_ms
								   : q->backoff_ms * 2;
		return false;
	}
	done_with(q, name, r, &res, &st);
	return true;
}

/* Sleep until NS (CLOCK_MONOTONIC) at the most, or until stop() wakes the thread. */
static void sleep_until(struct prof_push_queue *q, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	pthread_mutex_lock(&q->lock);
	if (!q->stopping)
		pthread_cond_timedwait(&q->wake, &q->lock, &ts);
	pthread_mutex_unlock(&q->lock);
}

static void *queue_main(void *arg)
{
	struct prof_push_queue *q = arg;
	struct listing l = { 0 };
	const char *next;
	size_t waiting = 0;
	uint64_t now, deadline;
	bool stopping = false, was_stopping, listed_once = false;

	for (;;) {
		was_stopping = stopping;
		pthread_mutex_lock(&q->lock);
		stopping = q->stopping;
		deadline = q->deadline_ns;
		pthread_mutex_unlock(&q->lock);
		/*
		 * The end: one more try at once, whatever the wait had grown to,
		 * and none after a failure: what is left waits on disk, the
		 * recorder's end not held up by a server that is away.
		 */
		if (stopping && !was_stopping)
			q->retry_at_ns = 0;
		now = clock_ns(CLOCK_MONOTONIC);
		if (stopping && now >= deadline)
			break;
		listing_release(&l);
		if (list_files(q, &l) < 0) {
			if (!listed_once)
				pr_warn("%s; looking again", prof_errmsg());
			listed_once = true;
			sleep_until(q, now + LOOK_MS * 1000000ull);
			continue;
		}
		keep_bound(q, &l, stopping);
		next = next_file(q, &l, stopping, &waiting);
		if (!next && stopping)
			break;
		if (next && now >= q->retry_at_ns) {
			if (!push_one(q, next) && stopping)
				break;
			continue;
		}
		now += LOOK_MS * 1000000ull;
		if (next && q->retry_at_ns < now)
			now = q->retry_at_ns;
		if (stopping && deadline < now)
			now = deadline;
		sleep_until(q, now);
	}
	/* what stays, finished and unsent, for a later queue or pusher */
	listing_release(&l);
	if (stopping && list_files(q, &l) == 0)
		next_file(q, &l, true, &waiting);
	if (q->max_files)
		ledger_prune(q->spool_path);
	pthread_mutex_lock(&q->lock);
	q->stats.unsent = waiting;
	pthread_mutex_unlock(&q->lock);
	listing_release(&l);
	return NULL;
}

static void queue_free(struct prof_push_queue *q)
{
	prof_pusher_free(q->pusher);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->wake);
	free(q->spool_path);
	free(q->dir);
	free(q->base);
	free(q->last);
	free(q);
}

/* Q's directory and file name, from SPOOL_PATH. */
static int split_spool_path(struct prof_push_queue *q, const char *spool_path)
{
	const char *slash = strrchr(spool_path, '/');
	size_t dlen = slash ? (size_t)(slash - spool_path) + 1 : 0;
	struct stat st;

	if (!*spool_path || (slash && !slash[1]))
		return error_setx(-EINVAL, "push queue: '%s' names no file", spool_path);
	q->spool_path = strdup(spool_path);
	q->dir = strndup(spool_path, dlen);
	q->base = strdup(spool_path + dlen);
	if (!q->spool_path || !q->dir || !q->base)
		return error_setx(-ENOMEM, "out of memory");
	if (stat(*q->dir ? q->dir : ".", &st) < 0)
		return error_set(-errno, "push queue: cannot reach the directory of '%s'",
				 spool_path);
	return 0;
}

int prof_push_queue_open(const struct prof_push_opts *opts, const char *spool_path,
			  struct prof_push_queue **ret)
{
	struct prof_push_queue *q;
	struct prof_push_opts o;
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (!spool_path)
		return error_setx(-EINVAL, "push queue: no spool path");
	q = calloc(1, sizeof(*q));
	if (!q)
		return error_setx(-ENOMEM, "out of memory");
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->wake, &ca);
	pthread_condattr_destroy(&ca);
	q->stats.sz = sizeof(q->stats);
	r = split_spool_path(q, spool_path);
	if (r == 0)
		r = prof_pusher_new(opts, &q->pusher);
	if (r < 0) {
		queue_free(q);
		return r;
	}
	/* the options were checked by prof_pusher_new(): only their numbers are read */
	opts_copy(&o, sizeof(o), opts, "push");
	q->max_files = o.max_files;
	q->retry_min_ms = o.retry_min_ms ? o.retry_min_ms : RETRY_MIN_MS;
	q->retry_max_ms = o.retry_max_ms ? o.retry_max_ms : RETRY_MAX_MS;
	if (q->retry_max_ms < q->retry_min_ms)
		q->retry_max_ms = q->retry_min_ms;
	ledger_prune(spool_path);
	/* signals are for the caller's thread: its poll loop, not a POST, hears them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&q->thread, NULL, queue_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		queue_free(q);
		return error_set(r, "cannot start the push queue's thread");
	}
	*ret = q;
	return 0;
}

int prof_push_queue_close(struct prof_push_queue *q, uint32_t timeout_ms,
			 struct prof_push_stats *ret)
{
	struct prof_push_stats s;
	int r = 0;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	q->deadline_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000u;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	s = q->stats;
	if (s.unsent)
		r = error_setx(-ETIMEDOUT, "%" PRIu64 " file%s of the recording left unsent in '%s'"
			       "%s%s", s.unsent, s.unsent == 1 ? "" : "s", *q->dir ? q->dir : ".",
			       s.last_error[0] ? ": " : "", s.last_error);
	queue_free(q);
	if (ret && sized_out(ret, &s, sizeof(s), "push stats") < 0 && r == 0)
		r = -EINVAL;
	return r;
}
