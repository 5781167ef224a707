/* SPDX-License-Identifier: MIT */
/*
 * tail.c - following a spool while it is written.  The reader already
 * hands out only complete, valid blocks and picks up blocks appended since
 * its last call; the tail adds what following needs on top of it: finding
 * the file (a recording in progress writes a temporary file and renames it
 * at the end), waiting for it, batches of bounded size, the thread's name at
 * each sample, and telling a cut, damaged or shrunk file from one that is
 * still being written.  It keeps no samples beyond one batch.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "spool/spool_merge.h"
#include "tail_state.h"

#define DEFAULT_BATCH 4096
#define WAIT_SLICE_MS 100	/* how often to look again without inotify */

static const char *const state_names[TAIL_STATE_COUNT] = {
	[PROF_TAIL_STATE_WAITING] = "waiting",
	[PROF_TAIL_STATE_RUNNING] = "running",
	[PROF_TAIL_STATE_CUT] = "cut",
	[PROF_TAIL_STATE_FINISHED] = "finished",
	[PROF_TAIL_STATE_CORRUPT] = "corrupt",
	[PROF_TAIL_STATE_SHRUNK] = "shrunk",
	[PROF_TAIL_STATE_ABANDONED] = "abandoned",
};

const char *prof_tail_state_name(unsigned state)
{
	return state < TAIL_STATE_COUNT ? state_names[state] : NULL;
}

bool prof_tail_state_is_final(enum prof_tail_state state)
{
	return state == PROF_TAIL_STATE_FINISHED || state == PROF_TAIL_STATE_CORRUPT ||
	       state == PROF_TAIL_STATE_SHRUNK || state == PROF_TAIL_STATE_ABANDONED;
}

int tail_new(const char *path, const struct prof_tail_opts *opts, struct prof_tail **ret)
{
	struct prof_tail *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return error_setx(-ENOMEM, "out of memory");
	r = opts_copy(&t->opts, sizeof(t->opts), opts, "tail");
	if (r < 0) {
		free(t);
		return r;
	}
	if (!t->opts.max_batch)
		t->opts.max_batch = DEFAULT_BATCH;
	t->fd = t->wfd = t->ino = -1;
	t->path = path ? xstrdup(path) : NULL;
	if (path && !t->path) {
		free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

/* ---- finding the file --------------------------------------------------- */

static void watch(struct prof_tail *t)
{
	char proc[64];

	t->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->ino < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->fd);
	if (inotify_add_watch(t->ino, proc, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
						  IN_MOVE_SELF | IN_DELETE_SELF) < 0) {
		close(t->ino);
		t->ino = -1;
	}
}

/* T reads another spool: the first one's start is the recording's. */
static void count_spool(struct prof_tail *t)
{
	if (!t->stats.spools++)
		t->stats.start_ns = prof_spool_meta(t->sp)->mono_start_ns;
}

int tail_attach_fd(struct prof_tail *t, int fd, const char *name)
{
	SIZED(prof_spool_status, st);
	int r;

	r = prof_spool_open_fd(fd, name, &t->sp);
	if (r < 0) {
		close(fd);
		return r;
	}
	t->opened = xstrdup(name);
	if (!t->opened) {
		prof_spool_close(t->sp);
		t->sp = NULL;
		close(fd);
		return -ENOMEM;
	}
	t->fd = fd;
	prof_spool_status(t->sp, &st);
	t->meta_end = t->block_end = t->consumed = st.offset;
	t->seen_blocks = st.blocks;
	t->max_size = t->polled_size = st.file_size;
	t->state = PROF_TAIL_STATE_RUNNING;
	count_spool(t);
	watch(t);
	return 0;
}

/*
 * T's spool is several files read as one (or one that may be followed by
 * more): watch the last, the one that may still grow, with the sizes of
 * those before it as the base of its offsets.  0 or -errno.
 */
static int watch_last(struct prof_tail *t)
{
	const char *last = spool_merge_last_path(t->sp);
	char *opened = xstrdup(last);
	struct stat st;
	int fd;

	if (!opened)
		return error_setx(-ENOMEM, "out of memory");
	/*
	 * --switch-max-files may have removed it already: the reader has it
	 * open and reads it to its end all the same, unwatched (fd -1: no size
	 * to check, a wait is a sleep).
	 */
	st.st_size = 0;
	fd = open(last, O_RDONLY | O_CLOEXEC);
	if ((fd < 0 && errno != ENOENT) || (fd >= 0 && fstat(fd, &st) < 0)) {
		int r = error_set(-errno, "cannot open spool '%s'", last);

		if (fd >= 0)
			close(fd);
		free(opened);
		return r;
	}
	if (t->fd >= 0)
		close(t->fd);
	if (t->ino >= 0)
		close(t->ino);
	t->ino = -1;
	free(t->opened);
	t->opened = opened;
	t->fd = fd;
	t->size_base = spool_merge_size_before_last(t->sp);
	t->max_size = t->size_base + (uint64_t)st.st_size;
	if (t->polled_size < t->size_base)
		t->polled_size = t->size_base;
	if (fd >= 0)
		watch(t);
	return 0;
}

/* T follows the files PATHS, the last of which may be followed by more. */
static int follow_files(struct prof_tail *t, const char *const *paths, size_t n)
{
	SIZED(prof_spool_status, st);
	int r;

	r = spool_merge_open(paths, n, spool_series_base_len(paths[n - 1]) > 0, &t->sp);
	t->several = r == 0;
	if (r == 0)
		r = watch_last(t);
	if (r < 0)
		return r;
	prof_spool_status(t->sp, &st);
	t->meta_end = t->block_end = t->consumed = st.offset;
	t->seen_blocks = st.blocks;
	t->polled_size = t->max_size;
	t->state = PROF_TAIL_STATE_RUNNING;
	count_spool(t);
	return 0;
}

/*
 * No file at T's path: a recording split by --switch-output writes
 * PATH.<stamp> files instead.  The first of them (the newest with
 * --from-end) is followed, and the files recorded after it.
 */
static int find_series(struct prof_tail *t)
{
	char *first;
	int r;

	r = spool_series_find(t->path, NULL, t->opts.from_end, &first);
	if (r <= 0)
		return r;
	r = follow_files(t, (const char *const *)&first, 1);
	free(first);
	return r;
}

/*
 * Open the file if it is there: 0 (t->sp set, or still waiting) or -errno.
 * A recording puts its spool at its path when sampling starts; before
 * that there is nothing to follow.  A file of a recording split by
 * --switch-output is followed by the files recorded after it.
 */
static int tail_find(struct prof_tail *t)
{
	int fd, r;

	if (!t->path)
		return 0;
	if (spool_series_base_len(t->path))
		r = access(t->path, F_OK) < 0 && errno == ENOENT
			    ? 0 : follow_files(t, (const char *const *)&t->path, 1);
	else if ((fd = open(t->path, O_RDONLY | O_CLOEXEC)) >= 0)
		r = tail_attach_fd(t, fd, t->path);
	else
		r = errno == ENOENT ? find_series(t)
				    : error_set(-errno, "cannot open spool '%s'", t->path);
	/* empty, or its metadata still being written (no spool was kept): wait */
	if (r == -ENODATA) {
		prof_errmsg_clear();
		return 0;
	}
	return r;
}

int prof_tail_open(const char *path, const struct prof_tail_opts *opts, struct prof_tail **ret)
{
	struct prof_tail *t;
	int r;

	if (!path || !*path || !ret)
		return error_setx(-EINVAL, "tail: no spool path");
	r = tail_new(path, opts, &t);
	if (r < 0)
		return r;
	r = tail_find(t);
	if (r < 0) {
		prof_tail_free(t);
		return r;
	}
	if (t->sp && t->opts.from_end)
		t->skip_until = t->max_size;
	*ret = t;
	return 0;
}

int prof_tail_open_many(const char *const *paths, size_t n, const struct prof_tail_opts *opts,
			struct prof_tail **ret)
{
	struct prof_tail *t;
	int r;

	if (n == 1)
		return prof_tail_open(paths[0], opts, ret);
	if (!paths || !n || !ret)
		return error_setx(-EINVAL, "tail: no spool paths");
	r = tail_new(NULL, opts, &t);
	if (r < 0)
		return r;
	r = follow_files(t, paths, n);
	if (r < 0) {
		prof_tail_free(t);
		return r;
	}
	t->path = xstrdup(t->opened);
	if (!t->path) {
		prof_tail_free(t);
		return error_setx(-ENOMEM, "out of memory");
	}
	if (t->opts.from_end)
		t->skip_until = t->max_size;
	*ret = t;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

/* NAME, interned for the tail's lifetime; NULL on ENOMEM. */
static const char *intern_name(struct prof_tail *t, const char *name)
{
	size_t len = strlen(name);
	uint32_t id = strmap_find(&t->name_ids, name, len);
	void *v = t->names;
	char *copy;

	if (id)
		return t->names[id - 1];
	if (grow_array(&v, &t->names_cap, t->nnames + 1, sizeof(*t->names)) < 0)
		return NULL;
	t->names = v;
	copy = xstrdup(name);
	if (!copy)
		return NULL;
	if (strmap_insert(&t->name_ids, name, len, (uint32_t)t->nnames + 1) < 0) {
		free(copy);
		return NULL;
	}
	t->names[t->nnames++] = copy;
	return copy;
}

/* The comm of thread ID now: its name, else its process's comm. */
static int comm_of(struct prof_tail *t, const struct prof_thread *th, const char **ret)
{
	const struct prof_process *p;
	const char *name;
	void *v = t->comm_of;
	size_t old = t->comm_of_cap;

	if (th->id < t->comm_of_cap && t->comm_of[th->id]) {
		*ret = t->comm_of[th->id];
		return 0;
	}
	if (grow_array(&v, &t->comm_of_cap, (size_t)th->id + 1, sizeof(*t->comm_of)) < 0)
		return -ENOMEM;
	t->comm_of = v;
	if (t->comm_of_cap > old)
		memset(t->comm_of + old, 0, (t->comm_of_cap - old) * sizeof(*t->comm_of));
	name = th->name;
	if (!name || !*name) {
		p = prof_spool_process(t->sp, th->process);
		name = p && p->comm ? p->comm : "";
	}
	name = intern_name(t, name);
	if (!name)
		return -ENOMEM;
	t->comm_of[th->id] = name;
	*ret = name;
	return 0;
}

static void forget_comm(struct prof_tail *t, uint32_t thread)
{
	if (thread < t->comm_of_cap)
		t->comm_of[thread] = NULL;
}

/* Hand out S, a CPU sample, or with STATE an off-CPU interval as a sample. */
static int add_sample(struct prof_tail *t, const struct prof_sample *s, uint8_t state, size_t *n)
{
	const struct prof_thread *th = prof_spool_thread(t->sp, s->thread);
	const struct prof_process *p = th ? prof_spool_process(t->sp, th->process) : NULL;
	struct prof_tail_sample *ts;
	const char *comm = "";
	SIZED(prof_spool_status, st);
	void *v = t->batch;

	if (t->skip_until) {
		prof_spool_status(t->sp, &st);
		if (st.offset <= t->skip_until) {
			t->stats.skipped++;
			return 0;
		}
		t->skip_until = 0;	/* blocks come in order: nothing more to skip */
	}
	if (grow_array(&v, &t->batch_cap, *n + 1, sizeof(*t->batch)) < 0)
		return -ENOMEM;
	t->batch = v;
	if (th && comm_of(t, th, &comm) < 0)
		return -ENOMEM;
	ts = &t->batch[(*n)++];
	*ts = (struct prof_tail_sample){ .time_ns = s->time_ns, .thread = s->thread,
					 .stack = s->stack, .period = s->period, .cpu = s->cpu,
					 .pid = p ? p->pid : 0, .tid = th ? th->tid : 0,
					 .comm = comm, .offcpu = state };
	if (state) {
		t->stats.offcpu_intervals++;
		t->stats.offcpu_ns += s->period;
		return 0;
	}
	if (!t->stats.samples++)
		t->stats.first_ns = s->time_ns;
	t->stats.last_ns = s->time_ns;
	return 0;
}

static int on_event(struct prof_tail *t, const struct prof_record *ev, struct prof_tail_batch *b,
		    size_t *n)
{
	struct prof_tail_stats *s = &t->stats;

	switch (ev->type) {
	case PROF_RECORD_SAMPLE:
		return add_sample(t, ev->sample, 0, n);
	case PROF_RECORD_OFFCPU: {
		const struct prof_offcpu *o = ev->offcpu;

		return add_sample(t, &PROF_INIT(prof_sample, .time_ns = o->time_ns,
			.thread = o->thread, .stack = o->stack, .period = o->duration_ns,
			.cpu = o->cpu), o->state, n);
	}
	case PROF_RECORD_PROCESS:
		s->processes_alive++;
		s->processes++;
		break;
	case PROF_RECORD_PROCESS_EXIT:
		s->processes_alive -= s->processes_alive > 0;
		break;
	case PROF_RECORD_THREAD:
		s->threads_alive++;
		s->threads++;
		forget_comm(t, ev->id);
		break;
	case PROF_RECORD_THREAD_EXIT:
		s->threads_alive -= s->threads_alive > 0;
		break;
	case PROF_RECORD_THREAD_NAME:
		forget_comm(t, ev->id);
		break;
	case PROF_RECORD_EXEC:	/* the threads named after the process may change */
		if (t->comm_of)
			memset(t->comm_of, 0, t->comm_of_cap * sizeof(*t->comm_of));
		break;
	case PROF_RECORD_MODULE_RETIRE:
		b->modules_retired++;
		break;
	case PROF_RECORD_SYMBOL:
		b->symbols_added = true;
		break;
	case PROF_RECORD_LOST:
		b->lost += ev->lost->count;
		s->lost += ev->lost->count;
		break;
	default:
		break;
	}
	return 0;
}

static void stop(struct prof_tail *t, enum prof_tail_state state, const char *reason)
{
	t->state = state;
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
}

/* Whether the file grew or shrank since the last poll; a shrink stops T. */
static bool check_size(struct prof_tail *t)
{
	struct stat st;
	uint64_t size;
	bool changed;
	char why[128];

	if (fstat(t->fd, &st) < 0)
		return false;
	size = t->size_base + (uint64_t)st.st_size;
	changed = size != t->polled_size;
	t->polled_size = size;
	if (size < t->max_size) {
		snprintf(why, sizeof(why), "the file shrank from %llu to %llu bytes",
			 (unsigned long long)t->max_size, (unsigned long long)size);
		stop(t, PROF_TAIL_STATE_SHRUNK, why);
	}
	if (size > t->max_size)
		t->max_size = size;
	return changed;
}

/* The state after a read that reached what the file holds now. */
static void settle(struct prof_tail *t)
{
	SIZED(prof_spool_status, st);

	prof_spool_status(t->sp, &st);
	t->consumed = st.offset;
	switch (st.state) {
	case PROF_SPOOL_STATE_READING:
		stop(t, PROF_TAIL_STATE_RUNNING, "");
		break;
	case PROF_SPOOL_STATE_FINISHED:
		stop(t, PROF_TAIL_STATE_FINISHED, "");
		break;
	case PROF_SPOOL_STATE_CUT:
		stop(t, PROF_TAIL_STATE_CUT, st.reason);
		break;
	case PROF_SPOOL_STATE_CORRUPT:
		/* the reader stops at a file shorter than its offset: that is a shrink */
		stop(t, st.file_size < st.offset ? PROF_TAIL_STATE_SHRUNK : PROF_TAIL_STATE_CORRUPT, st.reason);
		break;
	}
}

/* Note a block change: the blocks before the one now loaded were read whole. */
static void track_blocks(struct prof_tail *t)
{
	SIZED(prof_spool_status, st);

	prof_spool_status(t->sp, &st);
	if (st.blocks == t->seen_blocks)
		return;
	t->consumed = t->block_end;
	t->block_end = st.offset;
	t->seen_blocks = st.blocks;
}

static int read_batch(struct prof_tail *t, struct prof_tail_batch *b)
{
	SIZED(prof_record, ev);
	size_t n = 0;
	int r;

	while (n < t->opts.max_batch) {
		r = prof_spool_next(t->sp, &ev);
		if (r == -ENODATA) {	/* the file shrank under a read */
			stop(t, PROF_TAIL_STATE_SHRUNK, prof_errmsg());
			prof_errmsg_clear();
			break;
		}
		if (r < 0)
			return r;
		if (r == 0) {
			settle(t);
			break;
		}
		b->activity = true;
		track_blocks(t);
		r = on_event(t, &ev, b, &n);
		if (r < 0)
			return r;
		if (ev.type == PROF_RECORD_TRAILER) {
			settle(t);
			break;
		}
	}
	if (n == t->opts.max_batch && !prof_tail_state_is_final(t->state)) {
		b->more = true;
		stop(t, PROF_TAIL_STATE_RUNNING, "");
	}
	if (t->nnext && t->state == PROF_TAIL_STATE_FINISHED)
		b->more = true;	/* the recorder went on in another file: read it now */
	b->nsamples = n;
	/* the recording went on in a file after the one watched: watch that one */
	if (t->several && strcmp(spool_merge_last_path(t->sp), t->opened))
		return watch_last(t);
	return 0;
}

/*
 * Nothing new came: if the writer said it holds a lock while it writes
 * (PROF_META_LOCKED) and no one holds it now, the writer is gone.  What it
 * wrote before it went is read first; a spool still without its trailer
 * then is abandoned.
 */
static int check_writer(struct prof_tail *t, struct prof_tail_batch *b)
{
	SIZED(prof_spool_status, st);
	char why[sizeof(t->reason)];
	int r;

	if (prof_spool_has_writer(t->sp) != 0)
		return 0;
	check_size(t);
	if (!prof_tail_state_is_final(t->state)) {
		r = read_batch(t, b);
		if (r < 0)
			return r;
	}
	if (prof_tail_state_is_final(t->state) || b->more)
		return 0;
	prof_spool_status(t->sp, &st);
	if (t->state == PROF_TAIL_STATE_CUT)
		snprintf(why, sizeof(why), "its writer is gone and it is cut short: %.200s",
			 t->reason);
	else
		snprintf(why, sizeof(why), "its writer is gone and it has no trailer after %llu "
			 "blocks", (unsigned long long)st.blocks);
	stop(t, PROF_TAIL_STATE_ABANDONED, why);
	return 0;
}

int prof_tail_poll(struct prof_tail *t, struct prof_tail_batch *ret)
{
	struct prof_tail_batch b = { .sz = sizeof(b) };
	int r;

	if (!t || !ret || ret->sz < sizeof(ret->sz))
		return error_setx(-EINVAL, "tail: no tail, or a batch whose sz is not set");
	if (!t->sp) {
		r = tail_find(t);
		if (r < 0)
			return r;
		b.activity = t->sp != NULL;
	}
	if (t->sp && t->move_on) {
		r = t->move_on(t);
		if (r < 0)
			return r;
		b.activity |= r > 0;
	}
	if (t->sp && !prof_tail_state_is_final(t->state)) {
		b.activity |= check_size(t);
		if (!prof_tail_state_is_final(t->state)) {
			r = read_batch(t, &b);
			if (r < 0)
				return r;
		}
		if (!b.activity && !prof_tail_state_is_final(t->state)) {
			r = check_writer(t, &b);
			if (r < 0)
				return r;
		}
	}
	/* lent as pointers, so that the struct may grow */
	if (b.nsamples) {
		void *v = t->batch_ptrs;
		size_t i;

		if (grow_array(&v, &t->batch_ptrs_cap, b.nsamples, sizeof(*t->batch_ptrs)) < 0)
			return -ENOMEM;
		t->batch_ptrs = v;
		for (i = 0; i < b.nsamples; i++)
			t->batch_ptrs[i] = &t->batch[i];
	}
	b.state = t->state;
	b.reason = t->reason;
	b.samples = t->batch_ptrs;
	r = sized_out(ret, &b, sizeof(b), "tail batch");
	return r < 0 ? r : (int)b.nsamples;
}

int prof_tail_wait(struct prof_tail *t, int timeout_ms)
{
	struct pollfd pfd;
	char buf[4096];

	if (!t || timeout_ms < 0)
		return error_setx(-EINVAL, "tail: invalid wait");
	if (timeout_ms > 1000)
		timeout_ms = 1000;
	if (t->ino < 0 || prof_tail_state_is_final(t->state)) {
		int ms = timeout_ms < WAIT_SLICE_MS ? timeout_ms : WAIT_SLICE_MS;
		struct timespec ts = { .tv_sec = ms / 1000,
				       .tv_nsec = (long)(ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		return 0;
	}
	pfd = (struct pollfd){ .fd = t->ino, .events = POLLIN };
	if (poll(&pfd, 1, timeout_ms) > 0)
		while (read(t->ino, buf, sizeof(buf)) > 0)
			;
	return 0;
}

const struct prof_spool *prof_tail_spool(const struct prof_tail *t)
{
	return t ? t->sp : NULL;
}

int prof_tail_stats(const struct prof_tail *t, struct prof_tail_stats *ret)
{
	SIZED(prof_spool_status, st);
	struct prof_tail_stats s = t->stats;

	s.sz = sizeof(s);
	s.state = t->state;
	s.path = t->opened;
	if (t->sp) {
		prof_spool_status(t->sp, &st);
		s.blocks = st.blocks;
		s.offset = st.offset;
	}
	return sized_out(ret, &s, sizeof(s), "tail stats");
}

void prof_tail_free(struct prof_tail *t)
{
	size_t i;

	if (!t)
		return;
	if (t->release)
		t->release(t);
	prof_spool_close(t->sp);
	if (t->fd >= 0)
		close(t->fd);
	if (t->wfd >= 0)
		close(t->wfd);
	if (t->ino >= 0)
		close(t->ino);
	for (i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	strmap_release(&t->name_ids);
	free(t->comm_of);
	free(t->batch);
	free(t->batch_ptrs);
	free(t->opened);
	free(t->path);
	free(t);
}
