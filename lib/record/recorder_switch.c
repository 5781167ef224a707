/* SPDX-License-Identifier: MIT */
/*
 * recorder_switch.c - a recording in several files (--switch-output, as
 * perf names it): past a size or a time, or when asked, the current spool
 * is finished (its names captured, its trailer written) and the recording
 * goes on in a new one, FILE.<YYYYmmddHHMMSSmmm>, the local time it began.
 * Each file reads on its own: it defines again the processes and threads
 * still alive, the modules and frames its samples use, from ids of its own;
 * an off-CPU interval that spans the switch is cut there (the old file's
 * part ends "with the recording") and goes on in the new file with its
 * stack, so that each file holds the time it covers.  Every intern table of
 * the old writer goes with it, so memory does not grow from file to file;
 * the unwinder's tables stay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "recorder.h"
#include "spool/spool_writer.h"

/* FILE.<local time, to the millisecond> for BASE, different from LAST. */
static char *switch_name(const char *base, const char *last)
{
	char stamp[32], *name = NULL;
	struct timespec ts;
	struct tm tm;
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
		free(name);
		if (asprintf(&name, "%s.%s%03ld", base, stamp, ts.tv_nsec / 1000000) < 0)
			return NULL;
		if (!last || strcmp(name, last))
			return name;
		usleep(1000);	/* two switches in one millisecond: the next one */
	}
	return name;
}

int rec_switch_init(struct prof_recorder *rec, const char *base)
{
	struct stat st;

	if (rec->opts.unnamed) {
		if (stat(base, &st) < 0 || !S_ISDIR(st.st_mode))
			return error_setx(-ENOTDIR, "an unnamed spool needs a directory: '%s' is "
					  "none", base);
	} else if (stat(base, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* FILE names the files: FILE itself, if it is there, must be a file like them */
		return error_setx(-EINVAL, "a recording that switches files needs a regular file: "
				  "'%s' is a pipe, a device or a directory", base);
	}
	rec->switch_base = xstrdup(base);
	rec->switch_next_ns = rec->opts.switch_ns ? rec->start_ns + rec->opts.switch_ns : 0;
	return rec->switch_base ? 0 : error_setx(-ENOMEM, "out of memory");
}

char *rec_switch_first_name(struct prof_recorder *rec)
{
	return switch_name(rec->switch_base, NULL);
}

/* Keep the newest --switch-max-files files: the oldest beyond them go. */
static int keep_newest(struct prof_recorder *rec, const char *path)
{
	size_t max = rec->opts.switch_max_files;
	void *v = rec->switch_files;
	int r = grow_array(&v, &rec->switch_files_cap, rec->nswitch_files + 1, sizeof(char *));

	rec->switch_files = v;
	if (r < 0)
		return r;
	if (!(rec->switch_files[rec->nswitch_files] = xstrdup(path)))
		return error_setx(-ENOMEM, "out of memory");
	rec->nswitch_files++;
	while (max && rec->nswitch_files > max) {
		if (unlink(rec->switch_files[0]) < 0 && errno != ENOENT)
			pr_warn("cannot remove '%s': %s", rec->switch_files[0], strerror(errno));
		free(rec->switch_files[0]);
		memmove(rec->switch_files, rec->switch_files + 1,
			(rec->nswitch_files - 1) * sizeof(char *));
		rec->nswitch_files--;
	}
	return 0;
}

int rec_switch_published(struct prof_recorder *rec)
{
	/* unnamed files have no name to remove: each goes with its last reader */
	return rec->switch_base && !rec->opts.unnamed ? keep_newest(rec, rec->file.path) : 0;
}

/* The frames and stack nodes of the old writer, by id, to carry stacks over. */
struct old_tables {
	struct prof_frame *frames;	/* [id] */
	struct prof_stack_node *nodes;	/* [id] */
	size_t nframes, nnodes;
	struct as_module **modules;	/* [old module id] */
	uint32_t *procs;		/* [old process id]: the new one */
	size_t nmodules, nprocs;
};

static int keep_frame(const struct prof_frame *f, void *ctx)
{
	struct old_tables *o = ctx;
	void *v = o->frames;
	int r = grow_array_zeroed(&v, &o->nframes, (size_t)f->id + 1, sizeof(*o->frames));

	o->frames = v;
	if (r == 0)
		o->frames[f->id] = *f;
	return r;
}

static int keep_node(uint32_t id, const struct prof_stack_node *n, void *ctx)
{
	struct old_tables *o = ctx;
	void *v = o->nodes;
	int r = grow_array_zeroed(&v, &o->nnodes, (size_t)id + 1, sizeof(*o->nodes));

	o->nodes = v;
	if (r == 0)
		o->nodes[id] = *n;
	return r;
}

/* The stack OLD of the old writer, interned again into the new one: its id, or -errno. */
static int64_t carry_stack(struct prof_recorder *rec, const struct old_tables *o, uint32_t old)
{
	struct prof_frame f;
	int64_t parent, frame;

	if (!old || old >= o->nnodes)
		return 0;
	/* the parents first: stacks are at most a few hundred frames deep */
	parent = carry_stack(rec, o, o->nodes[old].parent);
	if (parent < 0 || o->nodes[old].frame >= o->nframes)
		return parent < 0 ? parent : 0;
	f = o->frames[o->nodes[old].frame];
	if (f.kind == PROF_FRAME_USER) {
		struct as_module *m = f.ref < o->nmodules ? o->modules[f.ref] : NULL;
		struct proc *p = NULL;
		size_t i;

		for (i = 0; m && !p && i < rec->pt.nprocs; i++)
			if (!rec->pt.procs[i]->exited && rec->pt.procs[i]->spool_id &&
			    m >= rec->pt.procs[i]->as.mods &&
			    m < rec->pt.procs[i]->as.mods + rec->pt.procs[i]->as.nmods)
				p = rec->pt.procs[i];
		frame = p ? rec_frame_module(rec, p, m) : 0;
		if (frame <= 0)
			return frame < 0 ? frame : parent;	/* its module is gone: drop it */
		f.ref = (uint32_t)frame;
	} else if (f.kind == PROF_FRAME_ANON) {
		f.ref = f.ref < o->nprocs ? o->procs[f.ref] : 0;
		if (!f.ref)
			return parent;
	}
	frame = prof_spool_writer_intern_frame(rec->w, &f);
	return frame < 0 ? frame : prof_spool_writer_intern_stack(rec->w, (uint32_t)parent, (uint32_t)frame);
}

/*
 * The processes and threads alive, written into the new writer under new
 * ids (their modules follow when a sample needs them); those gone are
 * forgotten.  The off-CPU intervals open, re-keyed by the new thread ids,
 * their stacks interned again.  0 or -errno.
 */
static int carry_over(struct prof_recorder *rec, struct old_tables *o, struct offcpu *oc_new,
		      const struct offcpu_open *open_before, size_t nopen, uint64_t now)
{
	struct proc_table *pt = &rec->pt;
	size_t i, k;
	int64_t id;
	int r = 0;

	for (i = 0; i < pt->nprocs && r >= 0; i++) {
		struct proc *p = pt->procs[i];
		uint32_t old = p->spool_id;

		for (k = 0; k < p->as.nmods; k++) {
			struct as_module *m = &p->as.mods[k];

			if (m->frame_module_id && m->frame_module_id < o->nmodules && !p->exited)
				o->modules[m->frame_module_id] = m;
			m->spool_id = m->frame_module_id = 0;
		}
		p->spool_id = 0;
		if (p->exited)
			continue;
		id = pt_write_process(pt, p, clock_ns(CLOCK_MONOTONIC));
		if (id < 0)
			return (int)id;
		if (old < o->nprocs)
			o->procs[old] = (uint32_t)id;
	}
	for (i = 0; i < pt->nthrs && r >= 0; i++) {
		struct thr *t = &pt->thrs[i];
		uint32_t old = t->spool_id;

		t->spool_id = 0;
		if (t->exited || t->proc->exited)
			continue;
		id = pt_write_thread(pt, t, clock_ns(CLOCK_MONOTONIC));
		if (id < 0)
			return (int)id;
		if (old < nopen && open_before[old].start && open_before[old].state) {
			struct offcpu_open open = open_before[old];
			int64_t s = carry_stack(rec, o, open.stack);
			int64_t u = s < 0 || open.user_stack == open.stack
					    ? s : carry_stack(rec, o, open.user_stack);

			if (u < 0)
				return (int)u;
			open.stack = (uint32_t)s;
			open.user_stack = (uint32_t)u;
			open.start = now;	/* the old file has its time up to now */
			r = offcpu_carry(oc_new, (uint32_t)id, &open);
		}
	}
	return r;
}

/* The trailer of the file that ends: what it holds, not what the recording does. */
static void file_counters(struct prof_recorder *rec, struct prof_counters *c)
{
	SIZED(prof_recording_summary, now);

	rec_summary(rec, &now);
	rec_counters(&now, c);
	rec_file_counters(rec, c);
}

int prof_recorder_switch_output(struct prof_recorder *rec)
{
	struct old_tables o = { 0 };
	struct prof_spool_writer *old_w = rec->w;
	struct spool_file old_file = rec->file;
	struct offcpu oc_new;
	struct prof_counters c = { .sz = sizeof(c) };
	struct offcpu_open *open = NULL;
	size_t i, nopen = rec->offcpu.cap;
	uint64_t now;
	char *name;
	int r;

	if (!rec->switch_base)
		return error_setx(-EINVAL, "the recording was not started to switch files "
				  "(switch_bytes, switch_ns, switch_signal)");
	if (rec->error)
		return rec->error;
	/* everything that happened before now goes to the file that ends */
	r = prof_recorder_flush(rec);
	if (r < 0)
		return r;
	r = spool_writer_each_frame(old_w, keep_frame, &o) ?:
	    spool_writer_each_stack(old_w, keep_node, &o);
	o.nmodules = spool_writer_count(old_w, SPOOL_COUNT_MODULES) + 1;
	o.nprocs = spool_writer_count(old_w, SPOOL_COUNT_PROCESSES) + 1;
	o.modules = calloc(o.nmodules, sizeof(*o.modules));
	o.procs = calloc(o.nprocs, sizeof(*o.procs));
	name = rec->opts.unnamed ? NULL : switch_name(rec->switch_base, old_file.path);
	if (r == 0 && (!o.modules || !o.procs || (!name && !rec->opts.unnamed)))
		r = error_setx(-ENOMEM, "out of memory");
	/* the off-CPU intervals open: cut at the switch, to go on in the new file */
	now = clock_ns(CLOCK_MONOTONIC);
	if (r == 0 && nopen && !(open = malloc(nopen * sizeof(*open))))
		r = error_setx(-ENOMEM, "out of memory");
	if (r == 0 && nopen) {
		memcpy(open, rec->offcpu.threads, nopen * sizeof(*open));
		r = offcpu_end_all(&rec->offcpu, now);
	}
	/* the names the file's frames need, while its ids still mean something */
	if (r == 0)
		r = rec_capture_names(rec, old_w);
	if (r == 0) {
		file_counters(rec, &c);
		c.jit_map_names = rec->capture.map_names;
		c.jitdump_names = rec->capture.jitdump_names;
	}
	if (r == 0)
		r = rec->opts.unnamed ? spool_file_create_unnamed(&rec->file, rec->switch_base)
				      : spool_file_create(&rec->file, name);
	if (r < 0) {
		rec->file = old_file;	/* the recording goes on in the file it has */
		goto out;
	}
	rec->file_start_ns = now;
	r = rec_new_writer(rec, NULL);
	if (r == 0)
		r = spool_file_publish(&rec->file);
	if (r == 0)
		r = rec_switch_published(rec);
	if (r < 0) {
		prof_spool_writer_close(rec->w);
		spool_file_close(&rec->file);
		rec->w = old_w;
		rec->file = old_file;
		goto out;
	}
	/* from here on the new file is the recording's: the old one is finished */
	pt_set_writer(&rec->pt, rec->w);
	capture_release(&rec->capture);
	r = capture_init(&rec->capture);
	offcpu_init(&oc_new, rec->w);
	if (r == 0)
		r = carry_over(rec, &o, &oc_new, open, nopen, now);
	/*
	 * The tail reads the old file to its end, then this one: what is
	 * alive is in its first block at once, not when the block fills.
	 */
	if (r == 0 && rec->tail.tail)
		r = prof_spool_writer_flush(rec->w);
	if (r == 0 && rec->tail.tail)
		r = rec->tail.next_file(rec->tail.tail, rec->file.fd, rec->capture.images);
	offcpu_release(&rec->offcpu);
	oc_new.stats = rec->offcpu.stats;	/* the recording's, summed over its files */
	rec->offcpu = oc_new;
	for (i = 0; i < STACK_MEMOS; i++)
		if (rec->memo[i])
			rec->memo[i]->thread = 0;
	path_cache_clear(&rec->paths);
	c.mono_end_ns = rec->file_start_ns;
	c.wall_end_ns = clock_ns(CLOCK_REALTIME);
	if (prof_spool_writer_finish(old_w, &c) < 0 && r == 0)
		r = -EIO;	/* the old file is finished or not: the new one goes on */
	rec->spool_bytes_before += prof_spool_writer_bytes(old_w);
	rec->samples_written_before += spool_writer_samples_written(old_w);
	prof_spool_writer_close(old_w);
	spool_file_close(&old_file);
	rec_summary(rec, &rec->file_base);
	rec->files++;
	if (rec->opts.switch_ns)
		rec->switch_next_ns = rec->file_start_ns + rec->opts.switch_ns;
	if (r < 0 && !rec->error)
		rec->error = r;
out:
	free(open);
	free(name);
	free(o.frames);
	free(o.nodes);
	free(o.modules);
	free(o.procs);
	return r;
}

bool rec_switch_due(const struct prof_recorder *rec, uint64_t now)
{
	if (!rec->switch_base || !rec->file.published)
		return false;
	if (rec->opts.switch_bytes && prof_spool_writer_bytes(rec->w) >= rec->opts.switch_bytes)
		return true;
	return rec->switch_next_ns && now >= rec->switch_next_ns;
}

void rec_switch_release(struct prof_recorder *rec)
{
	size_t i;

	for (i = 0; i < rec->nswitch_files; i++)
		free(rec->switch_files[i]);
	free(rec->switch_files);
	free(rec->switch_base);
}
