/* SPDX-License-Identifier: MIT */
/*
 * output_pprof.c - the profile as `go tool pprof` reads it: a profile.proto
 * message (github.com/google/pprof, proto/profile.proto), encoded here by
 * hand (varints and length-delimited fields are all it takes) and gzip'd
 * with zlib.  Samples are counted per (thread, stack) as the spool is read,
 * with the sum of their periods; a location is a spool frame, its lines the
 * frame's inline chain, callee first; a function is a (name, file) pair; a
 * mapping is a module of the spool.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"
#include "report.h"

/* A growing buffer of protobuf bytes. */
struct pb {
	uint8_t *p;
	size_t n, cap;
	int err;		/* the first error: -ENOMEM */
};

static void pb_put(struct pb *b, const void *data, size_t len)
{
	void *v = b->p;

	if (b->err)
		return;
	if (grow_array(&v, &b->cap, b->n + len, 1) < 0) {
		b->err = -ENOMEM;
		return;
	}
	b->p = v;
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, buf, n);
}

/* A varint field (wire type 0); zero values are left out, as proto3 does. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static void pb_bool(struct pb *b, unsigned field, bool v)
{
	pb_uint(b, field, v ? 1 : 0);
}

/* A length-delimited field (wire type 2). */
static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* The message in SUB as field FIELD of B; SUB is emptied for the next one. */
static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

/* The samples of one thread on one leaf stack. */
struct cell {
	uint32_t thread;
	uint32_t stack;
	uint64_t count;
	uint64_t nanos;
};

struct pprof {
	const struct prof_spool *sp;
	enum prof_weight weight;
	struct prof_symbolizer *sym;
	struct cell *cells;		/* [0] unused */
	size_t ncells, cells_cap;
	struct intern_map cell_ids;	/* (thread, stack) -> cell */
	struct strmap strings;		/* string -> index + 1 */
	struct pb table;		/* the string table, as fields 6 */
	uint32_t nstrings;
	struct strmap func_ids;		/* name '\0' file -> function id */
	uint32_t nfuncs;
	uint8_t *frame_done, *module_done;	/* by frame id, by module id */
	size_t frames_cap, modules_cap;
	struct pb out, sub, line;
};

/* The index of S in the string table, added if new. */
static int64_t str_index(struct pprof *x, const char *s)
{
	size_t len = strlen(s);
	uint32_t id = strmap_find(&x->strings, s, len);

	if (id)
		return id - 1;
	if (strmap_insert(&x->strings, s, len, x->nstrings + 1) < 0)
		return x->out.err = -ENOMEM;
	pb_bytes(&x->table, 6, s, len);
	return x->nstrings++;
}

static int count_sample(struct pprof *x, const struct prof_sample *s, uint32_t stack,
			uint64_t ns)
{
	uint32_t c = intern_find(&x->cell_ids, s->thread, stack);
	void *v;
	int r;

	if (!c) {
		size_t next = x->ncells ? x->ncells : 1;

		v = x->cells;
		r = grow_array(&v, &x->cells_cap, next + 1, sizeof(*x->cells));
		x->cells = v;
		if (r == 0)
			r = intern_insert(&x->cell_ids, s->thread, stack, (uint32_t)next);
		if (r < 0)
			return error_setx(-ENOMEM, "out of memory");
		c = (uint32_t)next;
		x->cells[c] = (struct cell){ .thread = s->thread, .stack = stack };
		x->ncells = next + 1;
	}
	x->cells[c].count++;
	x->cells[c].nanos += ns;
	return 0;
}

/* Whether ID was marked in *MEMO before; marks it.  -ENOMEM. */
static int seen(uint8_t **memo, size_t *cap, uint32_t id)
{
	size_t old = *cap;
	void *v = *memo;

	if (id >= *cap) {
		if (grow_array(&v, cap, (size_t)id + 1, 1) < 0)
			return -ENOMEM;
		*memo = v;
		memset(*memo + old, 0, *cap - old);
	}
	if ((*memo)[id])
		return 1;
	(*memo)[id] = 1;
	return 0;
}

static void put_mapping(struct pprof *x, const struct prof_module *m)
{
	char hex[2 * PROF_BUILD_ID_MAX + 1];
	size_t i;

	for (i = 0; i < m->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	hex[2 * m->build_id_len] = '\0';
	pb_uint(&x->sub, 1, m->id);
	pb_uint(&x->sub, 2, m->start);
	pb_uint(&x->sub, 3, m->end);
	pb_uint(&x->sub, 4, m->pgoff);
	pb_uint(&x->sub, 5, (uint64_t)str_index(x, m->path ? m->path : ""));
	pb_uint(&x->sub, 6, (uint64_t)str_index(x, hex));
	pb_bool(&x->sub, 7, true);
	pb_msg(&x->out, 3, &x->sub);
}

/* The id of the function F, its message added to the profile if new. */
static uint32_t function_id(struct pprof *x, const struct prof_resolved_frame *f)
{
	const char *file = f->file_path ? f->file_path : "";
	size_t nlen = strlen(f->function), flen = strlen(file);
	char *key = malloc(nlen + flen + 2);
	uint32_t id;

	if (!key) {
		x->out.err = -ENOMEM;
		return 0;
	}
	memcpy(key, f->function, nlen + 1);
	memcpy(key + nlen + 1, file, flen + 1);
	id = strmap_find(&x->func_ids, key, nlen + flen + 1);
	if (!id) {
		id = ++x->nfuncs;
		if (strmap_insert(&x->func_ids, key, nlen + flen + 1, id) < 0)
			x->out.err = -ENOMEM;
		pb_uint(&x->sub, 1, id);
		pb_uint(&x->sub, 2, (uint64_t)str_index(x, f->function));
		pb_uint(&x->sub, 3, (uint64_t)str_index(x, f->function));
		pb_uint(&x->sub, 4, (uint64_t)str_index(x, file));
		pb_msg(&x->out, 5, &x->sub);
	}
	free(key);
	return id;
}

/* The location of spool frame ID (its id is ID), with its mapping. */
static int put_location(struct pprof *x, uint32_t id)
{
	const struct prof_frame *fr = prof_spool_frame(x->sp, id);
	const struct prof_module *m = NULL;
	const struct prof_resolved_frame *const *rf;
	uint64_t addr;
	uint32_t fid[64];
	size_t n, i;
	int r;

	r = seen(&x->frame_done, &x->frames_cap, id);
	if (r)
		return r < 0 ? error_setx(-ENOMEM, "out of memory") : 0;
	if (!fr)
		return error_setx(-EINVAL, "frame %" PRIu32 " is not defined", id);
	r = prof_symbolizer_frame_inlines(x->sym, id, &rf, &n);
	if (r < 0)
		return r;
	if (n > 64)
		n = 64;
	addr = fr->addr;
	if (fr->kind == PROF_FRAME_USER && (m = prof_spool_module(x->sp, fr->ref))) {
		addr = m->start + fr->addr - m->pgoff;
		r = seen(&x->module_done, &x->modules_cap, m->id);
		if (r < 0)
			return error_setx(-ENOMEM, "out of memory");
		if (!r)
			put_mapping(x, m);
	}
	if (fr->kind == PROF_FRAME_TRUNCATED || fr->kind == PROF_FRAME_STATE)
		addr = 0;
	/* the functions first: their messages go out before this one is built */
	for (i = 0; i < n; i++)
		fid[i] = function_id(x, rf[i]);
	pb_uint(&x->sub, 1, id);
	pb_uint(&x->sub, 2, m ? m->id : 0);
	pb_uint(&x->sub, 3, addr);
	for (i = n; i-- > 0;) {		/* callee first */
		pb_uint(&x->line, 1, fid[i]);
		pb_uint(&x->line, 2, rf[i]->line);
		pb_msg(&x->sub, 4, &x->line);
	}
	pb_msg(&x->out, 4, &x->sub);
	return x->out.err;
}

static void put_label(struct pprof *x, const char *key, const char *str, int64_t num)
{
	pb_uint(&x->line, 1, (uint64_t)str_index(x, key));
	if (str)
		pb_uint(&x->line, 2, (uint64_t)str_index(x, str));
	else
		pb_uint(&x->line, 3, (uint64_t)num);
	pb_msg(&x->sub, 3, &x->line);
}

static int put_sample(struct pprof *x, const struct cell *c)
{
	const struct prof_thread *t = prof_spool_thread(x->sp, c->thread);
	const struct prof_process *proc = t ? prof_spool_process(x->sp, t->process) : NULL;
	const struct prof_stack_node *node;
	struct pb ids = { 0 }, values = { 0 };
	uint32_t s;
	int r = 0;

	for (s = c->stack; s && r == 0; s = node->parent) {	/* leaf first */
		node = prof_spool_stack(x->sp, s);
		if (!node)
			return error_setx(-EINVAL, "stack %" PRIu32 " is not defined", s);
		r = put_location(x, node->frame);
		pb_varint(&ids, node->frame);
	}
	pb_varint(&values, c->count);
	pb_varint(&values, c->nanos);
	if (r == 0 && !ids.err && !values.err) {
		if (ids.n)
			pb_bytes(&x->sub, 1, ids.p, ids.n);	/* packed */
		pb_bytes(&x->sub, 2, values.p, values.n);
		if (t) {
			put_label(x, "thread", t->name ? t->name : "", 0);
			put_label(x, "tid", NULL, t->tid);
		}
		if (proc)
			put_label(x, "pid", NULL, proc->pid);
		pb_msg(&x->out, 2, &x->sub);
	}
	if (!r && (ids.err || values.err))
		r = error_setx(-ENOMEM, "out of memory");
	free(ids.p);
	free(values.p);
	return r;
}

static void put_value_type(struct pprof *x, unsigned field, const char *type, const char *unit)
{
	pb_uint(&x->line, 1, (uint64_t)str_index(x, type));
	pb_uint(&x->line, 2, (uint64_t)str_index(x, unit));
	pb_msg(&x->out, field, &x->line);
}

static int write_profile(FILE *out, struct pprof *x, const struct pprof_opts *o)
{
	const struct prof_meta *meta = prof_spool_meta(x->sp);
	const struct prof_counters *cnt = prof_spool_counters(x->sp);
	uint64_t period = meta->freq_hz ? 1000000000u / meta->freq_hz : meta->period;
	/* the second value: CPU time, off-CPU time or both */
	const char *what = x->weight == PROF_WEIGHT_OFFCPU ? "off-cpu"
			   : x->weight == PROF_WEIGHT_WALL ? "wall" : "cpu";
	size_t i;
	int r = 0;

	str_index(x, "");		/* the string table begins with "" */
	put_value_type(x, 1, "samples", "count");
	put_value_type(x, 1, what, "nanoseconds");
	for (i = 1; i < x->ncells && r == 0; i++)
		r = put_sample(x, &x->cells[i]);
	if (r < 0)
		return r;
	pb_uint(&x->out, 9, o->time_ns ? o->time_ns : meta->wall_start_ns);
	if (o->duration_ns)
		pb_uint(&x->out, 10, o->duration_ns);
	else if (cnt && cnt->mono_end_ns > meta->mono_start_ns)
		pb_uint(&x->out, 10, cnt->mono_end_ns - meta->mono_start_ns);
	put_value_type(x, 11, what, "nanoseconds");
	if (x->weight == PROF_WEIGHT_CPU)
		pb_uint(&x->out, 12, period);
	pb_uint(&x->out, 14, (uint64_t)str_index(x, what));
	/* the string table last: every string is known by now */
	pb_put(&x->out, x->table.p, x->table.n);
	if (x->out.err || x->table.err)
		return error_setx(-ENOMEM, "out of memory");
	return report_write_gzip(out, x->out.p, x->out.n);
}

static int pprof_event(const struct report_event *e, void *ctx)
{
	struct pprof *x = ctx;
	/* the value in ns: a CPU sample's period, or its time as weighed */
	uint64_t ns = x->weight == PROF_WEIGHT_CPU ? e->s.period : e->weight;

	return count_sample(x, &e->s, e->s.stack, ns);
}

int report_pprof(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		 struct prof_filter *f, const struct pprof_opts *o, uint64_t *ret_samples)
{
	static const struct pprof_opts defaults;
	struct pprof x = { .sp = sp, .sym = sym, .weight = prof_filter_weight(f) };
	uint64_t n = 0;
	int r;

	if (!out || !sp || !sym)
		return error_setx(-EINVAL, "nothing to report");
	if (!o)
		o = &defaults;
	r = filter_each_event(sp, sym, f, pprof_event, &x, &n);
	if (r == 0 && (n || o->empty))
		r = write_profile(out, &x, o);
	if (r == 0 && ret_samples)
		*ret_samples = n;
	errno = 0;
	if (r == 0 && (fflush(out) == EOF || ferror(out)))
		r = error_set(errno ? -errno : -EIO, "cannot write the report");
	free(x.cells);
	intern_release(&x.cell_ids);
	strmap_release(&x.strings);
	strmap_release(&x.func_ids);
	free(x.table.p);
	free(x.frame_done);
	free(x.module_done);
	free(x.out.p);
	free(x.sub.p);
	free(x.line.p);
	return r;
}

int prof_report_pprof(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		      struct prof_filter *f, uint64_t *ret_samples)
{
	return report_pprof(out, sp, sym, f, NULL, ret_samples);
}
