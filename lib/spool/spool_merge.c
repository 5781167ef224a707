/* SPDX-License-Identifier: MIT */
/*
 * spool_merge.c - several spools read as one recording: the files of a
 * recording split by prof record --switch-output, each of which reads on
 * its own and so defines again what its samples need.  The files are read
 * one after the other in the order they were recorded, and what each
 * defines is matched with what the files before defined: a process by pid
 * and start time, a thread by its process and tid, a module by its
 * process, range and file, a frame by kind, reference and address, a stack
 * node by parent and frame.  A definition already known is not handed out
 * again; its ids are translated to the first file's, so that every
 * consumer (profiles, filters, the symbolizer) sees one set of ids and the
 * same stack counts as one across the files.  Memory grows with the
 * distinct definitions of the whole recording, not with the number of
 * files: a file is closed once read.
 *
 * A follower (prof tail) may ask for the files recorded after the last
 * one: when its trailer is read, the next file of its series, if there is
 * one, is opened and read on.  A recorder publishes the next file before
 * it writes the trailer of the one before, so a trailer with no next file
 * after it ends the recording.  A next file that is no readable spool
 * (damaged in its first block, foreign, of a newer version) is damage to
 * the recording, as a bad block is to a file: reading stops there, as
 * corrupt, with the reason, and is no error.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "intern.h"
#include "internal.h"
#include "spool_merge.h"
#include "spool_reader.h"

struct merge_part {
	char *path;
	struct prof_spool *sp;		/* NULL once read and closed */
	uint64_t start_ns;		/* its metadata's wall clock start */
};

/* A part's ids, translated: by the part's id, the merged one (0: not yet). */
struct id_map {
	uint32_t *to;
	size_t cap;
};

struct spool_merge {
	struct merge_part *parts;
	size_t nparts, cur;
	struct id_map processes, threads, modules, frames, stacks;
	/* the merged definitions by what identifies them: the latest of each */
	struct intern_map process_ids;	/* (pid, start time) */
	struct intern_map thread_ids;	/* (process, tid) */
	struct intern_map module_ids;	/* (process, hash of range and file) */
	struct intern_map frame_ids;	/* (kind << 32 | ref, addr) */
	struct intern_map stack_ids;	/* (parent, frame) */
	struct intern_map symbol_ids;	/* (scope << 32 | scope id, hash of the rest) */
	uint64_t blocks_before;		/* of the parts read */
	uint64_t bytes_before;		/* their sizes */
	bool problem;			/* a part before the last stopped short */
	bool follow;			/* at the last part's trailer, look for the next file */
	struct prof_counters sum;	/* the trailers so far */
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

static int map_set(struct id_map *m, uint32_t id, uint32_t to)
{
	void *v = m->to;
	int r = grow_array_zeroed(&v, &m->cap, (size_t)id + 1, sizeof(*m->to));

	m->to = v;
	if (r < 0)
		return r;
	m->to[id] = to;
	return 0;
}

/* The merged id of a part's ID (0 stays 0); reads are checked by the part's reader. */
static uint32_t map_get(const struct id_map *m, uint32_t id)
{
	return id < m->cap ? m->to[id] : 0;
}

static void map_reset(struct id_map *m)
{
	if (m->to)
		memset(m->to, 0, m->cap * sizeof(*m->to));
}

static int copy_meta(struct prof_spool *sp, const struct prof_meta *m)
{
	size_t i;

	sp->meta = *m;
	sp->meta.event = xstrdup(m->event);
	sp->meta.hostname = xstrdup(m->hostname);
	sp->meta.kernel_release = xstrdup(m->kernel_release);
	sp->meta.arch = xstrdup(m->arch);
	sp->meta.prof_version = xstrdup(m->prof_version);
	sp->argv = calloc(m->argc + 1, sizeof(*sp->argv));
	sp->pids = calloc(m->npids ? m->npids : 1, sizeof(*sp->pids));
	if (!sp->meta.event || !sp->meta.hostname || !sp->meta.kernel_release ||
	    !sp->meta.arch || !sp->meta.prof_version || !sp->argv || !sp->pids)
		return -ENOMEM;
	for (i = 0; i < m->argc; i++)
		if (!(sp->argv[i] = xstrdup(m->argv[i])))
			return -ENOMEM;
	memcpy(sp->pids, m->pids, m->npids * sizeof(*sp->pids));
	sp->meta.argv = (const char *const *)sp->argv;
	sp->meta.pids = sp->pids;
	return 0;
}

static int add_process(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	const struct prof_process *p = ev->process;
	struct prof_process *q;
	uint32_t id = p->start_time_ns ? intern_find(&g->process_ids, (uint32_t)p->pid,
						      p->start_time_ns) : 0;

	if (id && !sp->processes[id - 1].exited)
		return map_set(&g->processes, p->id, id) ?: 0;
	if (TABLE_RESERVE(sp, processes, sp->n.processes + 1) < 0)
		return -ENOMEM;
	q = &sp->processes[sp->n.processes];
	*q = *p;
	q->id = ++sp->n.processes;
	q->comm = xstrdup(p->comm);
	q->exe = xstrdup(p->exe);
	if (!q->comm || !q->exe || map_set(&g->processes, p->id, q->id) < 0 ||
	    (p->start_time_ns &&
	     intern_set(&g->process_ids, (uint32_t)p->pid, p->start_time_ns, q->id) < 0))
		return -ENOMEM;
	ev->process = q;
	ev->id = q->id;
	return 1;
}

static int add_thread(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	const struct prof_thread *t = ev->thread;
	uint32_t proc = map_get(&g->processes, t->process);
	uint32_t id = intern_find(&g->thread_ids, proc, (uint32_t)t->tid);
	struct prof_thread *q;

	if (id && !sp->threads[id - 1].exited)
		return map_set(&g->threads, t->id, id) ?: 0;
	if (TABLE_RESERVE(sp, threads, sp->n.threads + 1) < 0)
		return -ENOMEM;
	q = &sp->threads[sp->n.threads];
	*q = *t;
	q->id = ++sp->n.threads;
	q->process = proc;
	q->name = xstrdup(t->name);
	if (!q->name || map_set(&g->threads, t->id, q->id) < 0 ||
	    intern_set(&g->thread_ids, proc, (uint32_t)t->tid, q->id) < 0)
		return -ENOMEM;
	ev->thread = q;
	ev->id = q->id;
	return 1;
}

static uint64_t module_hash(const struct prof_module *m)
{
	uint64_t h = 14695981039346656037ull;

	h = hash_bytes(h, &m->start, sizeof(m->start));
	h = hash_bytes(h, &m->end, sizeof(m->end));
	h = hash_bytes(h, &m->pgoff, sizeof(m->pgoff));
	h = hash_bytes(h, &m->inode, sizeof(m->inode));
	h = hash_bytes(h, &m->dev_major, sizeof(m->dev_major));
	h = hash_bytes(h, &m->dev_minor, sizeof(m->dev_minor));
	return hash_bytes(h, m->path, strlen(m->path));
}

static bool same_module(const struct prof_module *a, const struct prof_module *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && !strcmp(a->path, b->path);
}

static int add_module(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	const struct prof_module *m = ev->module;
	uint32_t proc = map_get(&g->processes, m->process);
	uint64_t h = module_hash(m);
	uint32_t id = intern_find(&g->module_ids, proc, h);
	struct prof_module *q;
	void *v;
	int r;

	if (id && !sp->modules[id - 1].retired && same_module(&sp->modules[id - 1], m))
		return map_set(&g->modules, m->id, id) ?: 0;
	if (TABLE_RESERVE(sp, modules, sp->n.modules + 1) < 0)
		return -ENOMEM;
	v = sp->live_prev;
	r = grow_array_zeroed(&v, &sp->live_prev_cap, (size_t)sp->n.modules + 2, sizeof(uint32_t));
	sp->live_prev = v;
	v = sp->live_last;
	if (r == 0)
		r = grow_array_zeroed(&v, &sp->live_last_cap, (size_t)proc + 1, sizeof(uint32_t));
	sp->live_last = v;
	if (r < 0)
		return r;
	q = &sp->modules[sp->n.modules];
	*q = *m;
	q->id = ++sp->n.modules;
	q->process = proc;
	q->retired = false;
	q->path = xstrdup(m->path);
	sp->live_prev[q->id] = sp->live_last[proc];
	sp->live_last[proc] = q->id;
	if (!q->path || map_set(&g->modules, m->id, q->id) < 0 ||
	    intern_set(&g->module_ids, proc, h, q->id) < 0)
		return -ENOMEM;
	ev->module = q;
	ev->id = q->id;
	return 1;
}

static int add_frame(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	struct prof_frame f = *ev->frame;
	uint32_t id;

	f.ref = f.kind == PROF_FRAME_USER ? map_get(&g->modules, f.ref)
		: f.kind == PROF_FRAME_ANON ? map_get(&g->processes, f.ref) : f.ref;
	id = intern_find(&g->frame_ids, (uint64_t)f.kind << 32 | f.ref, f.addr);
	if (id)
		return map_set(&g->frames, ev->frame->id, id) ?: 0;
	if (TABLE_RESERVE(sp, frames, sp->n.frames + 1) < 0)
		return -ENOMEM;
	f.id = ++sp->n.frames;
	sp->frames[f.id - 1] = f;
	if (map_set(&g->frames, ev->frame->id, f.id) < 0 ||
	    intern_insert(&g->frame_ids, (uint64_t)f.kind << 32 | f.ref, f.addr, f.id) < 0)
		return -ENOMEM;
	ev->frame = &sp->frames[f.id - 1];
	ev->id = f.id;
	return 1;
}

static int add_stack(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	struct prof_stack_node s = { .parent = map_get(&g->stacks, ev->stack->parent),
				     .frame = map_get(&g->frames, ev->stack->frame) };
	uint32_t id = intern_find(&g->stack_ids, s.parent, s.frame);

	if (id)
		return map_set(&g->stacks, ev->id, id) ?: 0;
	if (TABLE_RESERVE(sp, stacks, sp->n.stacks + 1) < 0)
		return -ENOMEM;
	sp->stacks[sp->n.stacks++] = s;
	if (map_set(&g->stacks, ev->id, sp->n.stacks) < 0 ||
	    intern_insert(&g->stack_ids, s.parent, s.frame, sp->n.stacks) < 0)
		return -ENOMEM;
	ev->stack = &sp->stacks[sp->n.stacks - 1];
	ev->id = sp->n.stacks;
	return 1;
}

static int add_symbol(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	struct prof_symbol s = *ev->symbol;
	uint64_t h = 14695981039346656037ull;
	const struct prof_symbol *have;
	uint32_t id;

	s.scope_id = s.scope == PROF_SYMBOL_MODULE ? map_get(&g->modules, s.scope_id)
		     : s.scope == PROF_SYMBOL_PROCESS ? map_get(&g->processes, s.scope_id) : 0;
	h = hash_bytes(h, &s.start, sizeof(s.start));
	h = hash_bytes(h, &s.size, sizeof(s.size));
	h = hash_bytes(h, s.name, strlen(s.name));
	id = intern_find(&g->symbol_ids, (uint64_t)s.scope << 32 | s.scope_id, h);
	have = id ? &sp->symbols[id - 1] : NULL;
	if (have && have->start == s.start && have->size == s.size && !strcmp(have->name, s.name))
		return 0;	/* every file captures the names of what it sampled */
	if (TABLE_RESERVE(sp, symbols, sp->n.symbols + 1) < 0)
		return -ENOMEM;
	s.name = xstrdup(s.name);
	sp->symbols[sp->n.symbols++] = s;
	if (!s.name ||
	    intern_set(&g->symbol_ids, (uint64_t)s.scope << 32 | s.scope_id, h, sp->n.symbols) < 0)
		return -ENOMEM;
	ev->symbol = &sp->symbols[sp->n.symbols - 1];
	ev->id = sp->n.symbols;
	return 1;
}

static void add_counters(struct prof_counters *sum, const struct prof_counters *c)
{
	counters_add(sum, c, 1);
	/* every file counts the processes and threads it tracked: the most is the least wrong */
	sum->processes = c->processes > sum->processes ? c->processes : sum->processes;
	sum->threads = c->threads > sum->threads ? c->threads : sum->threads;
	sum->mono_end_ns = c->mono_end_ns;
	sum->wall_end_ns = c->wall_end_ns;
}

/* ---- the files of a recording split by --switch-output ---------------- */

#define STAMP_DIGITS 17		/* FILE.<YYYYmmddHHMMSSmmm> */

size_t spool_series_base_len(const char *path)
{
	size_t n = strlen(path), i;

	if (n < STAMP_DIGITS + 2 || path[n - STAMP_DIGITS - 1] != '.' ||
	    path[n - STAMP_DIGITS - 2] == '/')
		return 0;
	for (i = n - STAMP_DIGITS; i < n; i++)
		if (path[i] < '0' || path[i] > '9')
			return 0;
	return n - STAMP_DIGITS - 1;
}

int spool_series_find(const char *base, const char *after, bool newest, char **ret)
{
	const char *slash = strrchr(base, '/'), *name = slash ? slash + 1 : base;
	size_t dir_len = slash ? (size_t)(slash - base) + 1 : 0, name_len = strlen(name);
	const char *after_stamp = after ? after + strlen(after) - STAMP_DIGITS : NULL;
	char *dir, best[STAMP_DIGITS + 1] = "";
	struct dirent *e;
	DIR *d;

	*ret = NULL;
	if (!name_len || (after && spool_series_base_len(after) == 0))
		return 0;
	dir = dir_len ? strndup(base, dir_len) : strdup(".");
	if (!dir)
		return error_setx(-ENOMEM, "out of memory");
	d = opendir(dir);
	free(dir);
	if (!d)
		return errno == ENOENT ? 0 : error_set(-errno, "cannot list the directory of '%s'",
						       base);
	while ((e = readdir(d))) {
		const char *stamp = e->d_name + name_len + 1;

		if (strncmp(e->d_name, name, name_len) || e->d_name[name_len] != '.' ||
		    spool_series_base_len(e->d_name) != name_len)
			continue;
		if (after_stamp && strcmp(stamp, after_stamp) <= 0)
			continue;
		if (!best[0] || (newest ? strcmp(stamp, best) > 0 : strcmp(stamp, best) < 0))
			memcpy(best, stamp, sizeof(best));
	}
	closedir(d);
	if (!best[0])
		return 0;
	if (asprintf(ret, "%.*s.%s", (int)strlen(base), base, best) < 0) {
		*ret = NULL;
		return error_setx(-ENOMEM, "out of memory");
	}
	return 1;
}

/*
 * The next file of the series of G's last part, opened and added as its
 * last part: 1, 0 if there is none (yet: the recording ended), or -errno.
 */
static int append_next(struct prof_spool *sp, struct spool_merge *g)
{
	const char *last = g->parts[g->nparts - 1].path;
	size_t base_len = spool_series_base_len(last);
	struct merge_part *part;
	char *base, *after = NULL, *next = NULL;
	void *v = g->parts;
	size_t cap = g->nparts;
	int r;

	if (!base_len)
		return 0;
	base = strndup(last, base_len);
	if (!base || grow_array(&v, &cap, g->nparts + 1, sizeof(*g->parts)) < 0) {
		free(base);
		return error_setx(-ENOMEM, "out of memory");
	}
	g->parts = v;
	part = &g->parts[g->nparts];
	memset(part, 0, sizeof(*part));
	/* --switch-max-files may remove a file between the look and the open */
	do {
		free(after);
		after = next;
		r = spool_series_find(base, after ? after : last, false, &next);
		if (r > 0)
			r = prof_spool_open(next, &part->sp) ?: 1;
	} while (r == -ENOENT);
	free(base);
	free(after);
	if (r == -EBADMSG || r == -ENOTSUP || r == -ENODATA || r == -EISDIR) {
		/* its content, not the system: the recording is damaged there */
		g->problem = true;
		sp->state = PROF_SPOOL_STATE_CORRUPT;
		snprintf(sp->reason, sizeof(sp->reason), "%.250s", prof_errmsg());
		prof_errmsg_clear();
		r = 0;
	}
	if (r <= 0) {
		free(next);
		return r;
	}
	part->path = next;
	part->start_ns = prof_spool_meta(part->sp)->wall_start_ns;
	sp->meta.flags |= prof_spool_meta(part->sp)->flags;
	g->nparts++;
	return 1;
}

/*
 * Translate EV, read from the current part, into the merged ids: 1 to hand
 * it out, 0 for what the merged spool already has (or keeps to itself), or
 * -errno.
 */
static int translate(struct prof_spool *sp, struct spool_merge *g, struct prof_record *ev)
{
	uint32_t id;

	switch (ev->type) {
	case PROF_RECORD_PROCESS:
		return add_process(sp, g, ev);
	case PROF_RECORD_THREAD:
		return add_thread(sp, g, ev);
	case PROF_RECORD_MODULE:
		return add_module(sp, g, ev);
	case PROF_RECORD_FRAME:
		return add_frame(sp, g, ev);
	case PROF_RECORD_STACK:
		return add_stack(sp, g, ev);
	case PROF_RECORD_SYMBOL:
		return add_symbol(sp, g, ev);
	case PROF_RECORD_THREAD_NAME:
	case PROF_RECORD_THREAD_EXIT: {
		struct prof_thread *t = &sp->threads[(id = map_get(&g->threads, ev->id)) - 1];
		char *name;

		if (ev->type == PROF_RECORD_THREAD_EXIT) {
			t->exited = true;
		} else {
			if (!(name = xstrdup(ev->thread->name)))
				return -ENOMEM;
			free((char *)t->name);
			t->name = name;
		}
		ev->thread = t;
		ev->id = id;
		return 1;
	}
	case PROF_RECORD_EXEC:
	case PROF_RECORD_PROCESS_EXIT: {
		struct prof_process *p = &sp->processes[(id = map_get(&g->processes, ev->id)) - 1];
		char *comm, *exe;

		if (ev->type == PROF_RECORD_PROCESS_EXIT) {
			p->exited = true;
		} else {
			comm = xstrdup(ev->process->comm);
			exe = xstrdup(ev->process->exe);
			if (!comm || !exe) {
				free(comm);
				free(exe);
				return -ENOMEM;
			}
			free((char *)p->comm);
			free((char *)p->exe);
			p->comm = comm;
			p->exe = exe;
		}
		spool_retire_modules_of(sp, id);
		ev->process = p;
		ev->id = id;
		return 1;
	}
	case PROF_RECORD_MODULE_RETIRE:
		id = map_get(&g->modules, ev->id);
		sp->modules[id - 1].retired = true;
		ev->module = &sp->modules[id - 1];
		ev->id = id;
		return 1;
	case PROF_RECORD_SAMPLE:
		sp->sample = *ev->sample;
		sp->sample.thread = map_get(&g->threads, sp->sample.thread);
		sp->sample.stack = map_get(&g->stacks, sp->sample.stack);
		sp->nsamples++;
		ev->sample = &sp->sample;
		ev->id = sp->sample.stack;
		return 1;
	case PROF_RECORD_OFFCPU:
		sp->offcpu = *ev->offcpu;
		sp->offcpu.thread = map_get(&g->threads, sp->offcpu.thread);
		sp->offcpu.stack = map_get(&g->stacks, sp->offcpu.stack);
		sp->offcpu.user_stack = map_get(&g->stacks, sp->offcpu.user_stack);
		sp->noffcpu++;
		ev->offcpu = &sp->offcpu;
		ev->id = sp->offcpu.stack;
		return 1;
	case PROF_RECORD_LOST:
		sp->lost = *ev->lost;
		ev->lost = &sp->lost;
		return 1;
	case PROF_RECORD_TRAILER: {
		int r = g->follow && g->cur + 1 == g->nparts ? append_next(sp, g) : 0;

		if (r < 0)
			return r;
		add_counters(&g->sum, ev->counters);
		if (g->cur + 1 < g->nparts || sp->state == PROF_SPOOL_STATE_CORRUPT)
			return 0;	/* the recording goes on in the next file (if it can) */
		sp->counters = g->sum;
		sp->counters.sz = sizeof(sp->counters);
		sp->n.trailer = true;
		ev->counters = &sp->counters;
		return 1;
	}
	default:
		return 0;
	}
}

/* Mirror the current part's reading state, and where it stopped, in SP. */
static void follow_part(struct prof_spool *sp, struct spool_merge *g, struct prof_spool *part)
{
	sp->blocks = g->blocks_before + part->blocks;
	sp->offset = g->bytes_before + part->offset;	/* as if the files were one */
	sp->file_size = g->bytes_before + part->file_size;
	if (g->problem)
		return;
	sp->state = part->state;
	if (part->state == PROF_SPOOL_STATE_CUT || part->state == PROF_SPOOL_STATE_CORRUPT)
		snprintf(sp->reason, sizeof(sp->reason), "%.96s: %.150s", g->parts[g->cur].path,
			 part->reason);
	else
		sp->reason[0] = '\0';
}

static int merge_next(struct prof_spool *sp, struct prof_record *ret)
{
	struct spool_merge *g = sp->merge;
	int r;

	while (g->cur < g->nparts) {
		struct prof_spool *part = g->parts[g->cur].sp;

		r = prof_spool_next(part, ret);
		if (r < 0)
			return r;
		if (r > 0) {
			r = translate(sp, g, ret);
			follow_part(sp, g, part);
			if (r == -ENOMEM)
				return error_setx(-ENOMEM, "out of memory");
			if (r < 0)
				return r;	/* the next file cannot be read: said */
			if (r > 0)
				return 1;
			continue;
		}
		follow_part(sp, g, part);
		if (g->cur + 1 == g->nparts)
			return 0;	/* the last file: it may still grow */
		if (part->state != PROF_SPOOL_STATE_FINISHED && !g->problem) {
			/* a file cut short before the next began: say so, read on */
			g->problem = true;
			sp->state = part->state == PROF_SPOOL_STATE_READING ? PROF_SPOOL_STATE_CUT : part->state;
			if (part->state == PROF_SPOOL_STATE_READING)
				snprintf(sp->reason, sizeof(sp->reason), "%.96s: ends without its "
					 "trailer, before the next file", g->parts[g->cur].path);
		}
		/* done with it: its ids map no more, its memory goes */
		g->blocks_before += part->blocks;
		g->bytes_before += part->file_size;
		prof_spool_close(part);
		g->parts[g->cur].sp = NULL;
		g->cur++;
		map_reset(&g->processes);
		map_reset(&g->threads);
		map_reset(&g->modules);
		map_reset(&g->frames);
		map_reset(&g->stacks);
	}
	return 0;
}

const char *spool_merge_last_path(const struct prof_spool *sp)
{
	const struct spool_merge *g = sp->merge;

	return g->parts[g->nparts - 1].path;
}

static const struct prof_spool *merge_current(const struct prof_spool *sp)
{
	const struct spool_merge *g = sp->merge;

	return g->cur < g->nparts ? g->parts[g->cur].sp : NULL;
}

static void merge_free(struct spool_merge *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nparts; i++) {
		prof_spool_close(g->parts[i].sp);
		free(g->parts[i].path);
	}
	free(g->parts);
	free(g->processes.to);
	free(g->threads.to);
	free(g->modules.to);
	free(g->frames.to);
	free(g->stacks.to);
	intern_release(&g->process_ids);
	intern_release(&g->thread_ids);
	intern_release(&g->module_ids);
	intern_release(&g->frame_ids);
	intern_release(&g->stack_ids);
	intern_release(&g->symbol_ids);
	free(g);
}

static int by_start(const void *a, const void *b)
{
	const struct merge_part *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

uint64_t spool_merge_size_before_last(const struct prof_spool *sp)
{
	const struct spool_merge *g = sp->merge;
	uint64_t n = g->bytes_before;
	size_t i;

	for (i = g->cur; i + 1 < g->nparts; i++)
		n += g->parts[i].sp->file_size;
	return n;
}

int spool_merge_open(const char *const *paths, size_t n, bool follow, struct prof_spool **ret)
{
	struct prof_spool *sp = NULL;
	struct spool_merge *g;
	struct stat st[2];
	size_t i, k;
	int r = 0;

	if (!n)
		return error_setx(-EINVAL, "no spool to open");
	g = calloc(1, sizeof(*g));
	if (!g || !(g->parts = calloc(n, sizeof(*g->parts))))
		r = error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < n && r == 0; i++) {
		g->nparts++;
		g->parts[i].path = xstrdup(paths[i]);
		r = g->parts[i].path ? prof_spool_open(paths[i], &g->parts[i].sp) : -ENOMEM;
		if (r == 0)
			g->parts[i].start_ns = prof_spool_meta(g->parts[i].sp)->wall_start_ns;
		/* the same file twice would count its samples twice */
		for (k = 0; r == 0 && k < i; k++)
			if (stat(paths[i], &st[0]) == 0 && stat(paths[k], &st[1]) == 0 &&
			    st[0].st_dev == st[1].st_dev && st[0].st_ino == st[1].st_ino)
				r = error_setx(-EINVAL, "spool '%s' is given twice (as '%s')",
					       paths[i], paths[k]);
	}
	if (r == 0) {
		qsort(g->parts, n, sizeof(*g->parts), by_start);
		sp = spool_reader_alloc();
		if (!sp)
			r = error_setx(-ENOMEM, "out of memory");
	}
	if (r == 0) {
		sp->merge = g;
		sp->merge_next = merge_next;
		sp->merge_current = merge_current;
		sp->merge_free = merge_free;
		sp->major = g->parts[0].sp->major;
		g->follow = follow;
		r = (n > 1 ? asprintf(&sp->name, "%s (and %zu more)", g->parts[0].path, n - 1)
			   : asprintf(&sp->name, "%s", g->parts[0].path)) < 0
			    ? -ENOMEM : copy_meta(sp, prof_spool_meta(g->parts[0].sp));
		for (i = 1; r == 0 && i < n; i++)
			sp->meta.flags |= prof_spool_meta(g->parts[i].sp)->flags;
		if (r == -ENOMEM)
			r = error_setx(-ENOMEM, "out of memory");
		g = NULL;
	}
	if (r < 0) {
		prof_spool_close(sp);
		merge_free(g);
		return r;
	}
	sp->state = PROF_SPOOL_STATE_READING;
	*ret = sp;
	return 0;
}

int prof_spool_open_many(const char *const *paths, size_t n, struct prof_spool **ret)
{
	if (n == 1)
		return prof_spool_open(paths[0], ret);
	return spool_merge_open(paths, n, false, ret);
}
