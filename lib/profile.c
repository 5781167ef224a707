/* SPDX-License-Identifier: MIT */
/*
 * profile.c - count samples per leaf stack node while a spool is read.  A
 * count per node id is all a report needs: names and the call tree come
 * later, once per distinct stack rather than once per sample.
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

int prof_profile_add_sample(struct prof_profile *p, const struct prof_sample *s)
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
	p->counts[s->stack]++;
	if (!p->samples++)
		p->first_ns = s->time_ns;
	p->last_ns = s->time_ns;
	return 0;
}

int prof_profile_read(struct prof_profile *p, struct prof_spool *sp)
{
	struct prof_event ev;
	int r;

	while ((r = prof_spool_next(sp, &ev)) > 0) {
		if (ev.type != PROF_EV_SAMPLE)
			continue;
		r = prof_profile_add_sample(p, ev.sample);
		if (r < 0)
			return r;
	}
	return r;
}

uint64_t prof_profile_samples(const struct prof_profile *p)
{
	return p->samples;
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
	if (!p)
		return;
	free(p->counts);
	free(p);
}
