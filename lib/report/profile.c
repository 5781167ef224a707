/* SPDX-License-Identifier: MIT */
/*
 * profile.c - count samples (or weigh them, and off-CPU intervals, in
 * time) per leaf stack node while a spool is read.  A count per node id
 * is all a report needs: names and the call tree come later, once per
 * distinct stack rather than once per sample.  A profile grouped by
 * thread or process counts per (group, stack) cell instead, a group being
 * a name and an id as they were at the sample: it grows with the distinct
 * cells, never with the samples.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

int prof_profile_new(struct prof_profile **ret)
{
	struct prof_profile *p;

	if (!ret)
		return error_setx(-EINVAL, "no profile to return");
	p = calloc(1, sizeof(*p));
	if (!p)
		return error_setx(-ENOMEM, "out of memory");
	*ret = p;
	return 0;
}

int prof_profile_group_by(struct prof_profile *p, enum prof_group_by by)
{
	if (!p || (unsigned)by >= GROUP_COUNT)
		return error_setx(-EINVAL, "invalid grouping of a profile");
	if (p->samples)
		return error_setx(-EBUSY, "cannot group a profile that has counted samples");
	p->by = by;
	return 0;
}

int prof_profile_weigh(struct prof_profile *p, enum prof_weight w)
{
	if (!p || (unsigned)w >= WEIGHT_COUNT)
		return error_setx(-EINVAL, "invalid weight of a profile");
	if (p->samples && w != p->weight)
		return error_setx(-EBUSY, "cannot weigh a profile that has counted samples "
				  "otherwise");
	p->weight = w;
	return 0;
}

enum prof_weight prof_profile_weight(const struct prof_profile *p)
{
	return p->weight;
}

/* What a spool can be weighed by is the report's question, answered by the data model. */
int prof_spool_check_weight(const struct prof_spool *sp, enum prof_weight w)
{
	return meta_check_weight(prof_spool_meta(sp), w);
}

static void count_time(struct prof_profile *p, const struct prof_sample *s, uint64_t weight)
{
	if (!p->samples++ || s->time_ns < p->first_ns)
		p->first_ns = s->time_ns;
	if (s->time_ns > p->last_ns)
		p->last_ns = s->time_ns;
	p->total += weight;
}

static int add_ungrouped(struct prof_profile *p, const struct prof_sample *s, uint64_t weight)
{
	size_t old = p->cap;
	void *v = p->counts;
	int r;

	if (s->stack >= p->cap) {
		r = grow_array(&v, &p->cap, (size_t)s->stack + 1, sizeof(*p->counts));
		p->counts = v;
		if (r < 0)
			return r;
		memset(p->counts + old, 0, (p->cap - old) * sizeof(*p->counts));
	}
	p->counts[s->stack] += weight;
	count_time(p, s, weight);
	return 0;
}

/* The group (NAME, ID), added on first sight. */
static int group_id(struct prof_profile *p, const char *name, int32_t id, uint32_t *ret)
{
	size_t len = strlen(name), klen = len + 1 + sizeof(id);
	size_t next = p->ngroups ? p->ngroups : 1;	/* [0] unused */
	char *key = malloc(klen), *copy = NULL;
	uint32_t g;
	void *v;
	int r = 0;

	if (!key)
		return error_setx(-ENOMEM, "out of memory");
	memcpy(key, name, len + 1);
	memcpy(key + len + 1, &id, sizeof(id));
	g = strmap_find(&p->group_ids, key, klen);
	if (!g) {
		copy = xstrdup(name);
		v = p->groups;
		r = copy ? grow_array(&v, &p->groups_cap, next + 1, sizeof(*p->groups)) : -ENOMEM;
		p->groups = v;
		if (r == 0)
			r = strmap_insert(&p->group_ids, key, klen, (uint32_t)next);
		if (r == 0) {
			g = (uint32_t)next;
			p->groups[g] = (struct profile_group){ .name = copy, .id = id };
			p->ngroups = next + 1;
		} else {
			free(copy);
		}
	}
	free(key);
	if (r == 0)
		*ret = g;
	return r;
}

/*
 * The group of sample S: its thread's name and tid, or its process's comm
 * and pid, as SP has them now.  The group of each thread (or process) at
 * its last sample is kept, so that a lookup by name is only needed when
 * the name changed.
 */
static int sample_group(struct prof_profile *p, const struct prof_spool *sp,
			const struct prof_sample *s, uint32_t *ret)
{
	const struct prof_thread *t = prof_spool_thread(sp, s->thread);
	const struct prof_process *proc = NULL;
	const char *name;
	uint32_t key, g;
	size_t old = p->last_group_cap;
	int32_t id;
	void *v;
	int r;

	if (t && p->by == PROF_GROUP_PROCESS)
		proc = prof_spool_process(sp, t->process);
	if (!t || (p->by == PROF_GROUP_PROCESS && !proc))
		return error_setx(-EINVAL, "sample of thread %u, which the spool does not define",
				  s->thread);
	name = proc ? proc->comm : t->name;
	id = proc ? proc->pid : t->tid;
	key = proc ? t->process : s->thread;
	if (!name)
		name = "";
	if (key >= p->last_group_cap) {
		v = p->last_group;
		r = grow_array(&v, &p->last_group_cap, (size_t)key + 1, sizeof(*p->last_group));
		p->last_group = v;
		if (r < 0)
			return r;
		memset(p->last_group + old, 0, (p->last_group_cap - old) * sizeof(*p->last_group));
	}
	g = p->last_group[key];
	if (!g || p->groups[g].id != id || strcmp(p->groups[g].name, name)) {
		r = group_id(p, name, id, &g);
		if (r < 0)
			return r;
		p->last_group[key] = g;
	}
	*ret = g;
	return 0;
}

int profile_add_event(struct prof_profile *p, const struct prof_spool *sp,
		      const struct report_event *e)
{
	const struct prof_sample *s = &e->s;
	uint32_t g = 0, c;
	void *v;
	int r;

	if (!e->weight)
		return 0;	/* what this weight leaves out, or an interval of no time */
	if (p->by == PROF_GROUP_NONE)
		return add_ungrouped(p, s, e->weight);
	if (!sp)
		return error_setx(-EINVAL, "a grouped profile needs the spool of its samples");
	r = sample_group(p, sp, s, &g);
	if (r < 0)
		return r;
	c = intern_find(&p->cell_ids, g, s->stack);
	if (!c) {
		size_t next = p->ncells ? p->ncells : 1;	/* [0] unused */

		v = p->cells;
		r = grow_array(&v, &p->cells_cap, next + 1, sizeof(*p->cells));
		p->cells = v;
		if (r == 0)
			r = intern_insert(&p->cell_ids, g, s->stack, (uint32_t)next);
		if (r < 0)
			return r;
		c = (uint32_t)next;
		p->cells[c] = (struct profile_cell){ .group = g, .stack = s->stack };
		p->ncells = next + 1;
	}
	p->cells[c].count += e->weight;
	p->groups[g].weight += e->weight;
	count_time(p, s, e->weight);
	return 0;
}

int prof_profile_add_sample(struct prof_profile *p, const struct prof_spool *sp,
			    const struct prof_sample *s)
{
	struct report_event e = { 0 };
	int r = sized_in(&e.s, sizeof(e.s), s, "sample");

	if (r < 0)
		return r;
	e.weight = report_weight(p->weight, false, e.s.period);
	return profile_add_event(p, sp, &e);
}

int prof_profile_add_offcpu(struct prof_profile *p, const struct prof_spool *sp,
			    const struct prof_offcpu *o, uint32_t stack)
{
	struct prof_offcpu copy;
	struct report_event e = { .offcpu = &copy };
	int r = sized_in(&copy, sizeof(copy), o, "off-CPU interval");

	if (r < 0)
		return r;
	e.s = (struct prof_sample){ .sz = sizeof(e.s), .time_ns = copy.time_ns,
				    .thread = copy.thread, .stack = stack,
				    .period = copy.duration_ns, .cpu = copy.cpu };
	e.weight = report_weight(p->weight, true, copy.duration_ns);
	return profile_add_event(p, sp, &e);
}

uint64_t prof_profile_samples(const struct prof_profile *p)
{
	return p->samples;
}

uint64_t prof_profile_total(const struct prof_profile *p)
{
	return p->total;
}

uint64_t prof_profile_first_ns(const struct prof_profile *p)
{
	return p->first_ns;
}

uint64_t prof_profile_last_ns(const struct prof_profile *p)
{
	return p->last_ns;
}

void prof_profile_free(struct prof_profile *p)
{
	size_t i;

	if (!p)
		return;
	free(p->counts);
	for (i = 1; i < p->ngroups; i++)
		free(p->groups[i].name);
	free(p->groups);
	strmap_release(&p->group_ids);
	free(p->cells);
	intern_release(&p->cell_ids);
	free(p->last_group);
	free(p);
}
