/* SPDX-License-Identifier: MIT */
/*
 * perf_sample.c - parsing perf's records by the layout their attributes
 * chose (see perf_sample.h).  The kernel writes a sample's fields in the
 * order of the PERF_SAMPLE_* bits (include/uapi/linux/perf_event.h, "struct
 * {...} PERF_RECORD_SAMPLE"), and a record's sample_id trailer in the order
 * of its own subset of them, at the record's end.  Every read is bounded by
 * the record's size before it is made.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "perf_sample.h"

/* The fields read here, in the order the kernel writes them. */
#define PARSED_SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |         \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |          \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)

int perf_sample_layout_of(const struct perf_event_attr *a, struct perf_sample_layout *ret)
{
	if (a->sample_type & ~(uint64_t)PARSED_SAMPLE_TYPE)
		return -ENOTSUP;
	if ((a->sample_type & PERF_SAMPLE_REGS_USER) && a->sample_regs_user != SAMPLE_REGS_MASK)
		return -ENOTSUP;
	*ret = (struct perf_sample_layout){ .sample_type = a->sample_type,
					    .sample_id_all = a->sample_id_all };
	return 0;
}

/* A cursor over a record's bytes: every take checks what is left first. */
struct cursor {
	const uint8_t *p, *end;
};

static bool take(struct cursor *c, void *v, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(v, c->p, n);
	c->p += n;
	return true;
}

static bool take_u64(struct cursor *c, uint64_t *v)
{
	return take(c, v, sizeof(*v));
}

/* Two u32 in one u64 slot (pid and tid, cpu and its reserved word). */
static bool take_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2];

	if (!take(c, v, sizeof(v)))
		return false;
	*a = v[0];
	if (b)
		*b = v[1];
	return true;
}

static bool skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return false;
	c->p += n;
	return true;
}

/*
 * The fields of sample H up to its stack copy, into S (zeroed), from its
 * first HAVE bytes: false for a malformed one; *C then at the copy's size.
 */
static inline bool parse_head(const struct perf_sample_layout *l, const struct perf_event_header *h,
			      size_t have, struct cursor *c, struct perf_sample *s)
{
	const uint8_t *rec = (const uint8_t *)h;
	uint64_t t = l->sample_type;
	uint32_t raw;

	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h) || ((uintptr_t)h & 7))
		return false;
	*c = (struct cursor){ rec + sizeof(*h), rec + (have < h->size ? have : h->size) };
	memset(s, 0, sizeof(*s));
	if ((t & PERF_SAMPLE_IDENTIFIER) && !take_u64(c, &s->id))
		return false;
	if ((t & PERF_SAMPLE_IP) && !take_u64(c, &s->ip))
		return false;
	if ((t & PERF_SAMPLE_TID) && !take_u32_pair(c, &s->pid, &s->tid))
		return false;
	if ((t & PERF_SAMPLE_TIME) && !take_u64(c, &s->time))
		return false;
	if ((t & PERF_SAMPLE_ADDR) && !take_u64(c, &s->addr))
		return false;
	if ((t & PERF_SAMPLE_ID) && !take_u64(c, &s->id))
		return false;
	if ((t & PERF_SAMPLE_STREAM_ID) && !take_u64(c, &s->stream_id))
		return false;
	if ((t & PERF_SAMPLE_CPU) && !take_u32_pair(c, &s->cpu, NULL))
		return false;
	if ((t & PERF_SAMPLE_PERIOD) && !take_u64(c, &s->period))
		return false;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (!take_u64(c, &s->nchain) || s->nchain > (uint64_t)(c->end - c->p) / 8)
			return false;
		s->chain = c->p;
		c->p += s->nchain * 8;
	}
	/* u32 size, then that many bytes, padded by the kernel so that the next field is aligned */
	if ((t & PERF_SAMPLE_RAW) && (!take(c, &raw, sizeof(raw)) || !skip(c, raw)))
		return false;
	if (t & PERF_SAMPLE_REGS_USER) {
		if (!take_u64(c, &s->regs_abi) || s->regs_abi > PERF_SAMPLE_REGS_ABI_64)
			return false;
		/* read in place: the record is aligned, and so is every field the kernel pads */
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			s->regs = (const uint64_t *)c->p;
			if (((uintptr_t)c->p & 7) || !skip(c, SAMPLE_REGS_COUNT * sizeof(*s->regs)))
				return false;
		}
	}
	return true;
}

int perf_sample_stack_span(const struct perf_sample_layout *l, const struct perf_event_header *h,
			   size_t have, size_t *data_off, uint64_t *size)
{
	struct perf_sample s;
	struct cursor c;

	if (!(l->sample_type & PERF_SAMPLE_STACK_USER) || !parse_head(l, h, have, &c, &s) ||
	    !take_u64(&c, size))
		return -EBADMSG;
	*data_off = (size_t)(c.p - (const uint8_t *)h);
	return 0;
}

int perf_sample_parse(const struct perf_sample_layout *l, const struct perf_event_header *h,
		      struct perf_sample *ret)
{
	const uint8_t *rec = (const uint8_t *)h;
	uint64_t t = l->sample_type, v;
	struct perf_sample *s = ret;	/* written in place: this is on every sample's path */
	struct cursor c;

	if (!parse_head(l, h, h->size, &c, s))
		return -EBADMSG;
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_off = (size_t)(c.p - rec);
		if (!take_u64(&c, &s->stack_size))
			return -EBADMSG;
		/* the copy, then how much of it is stack: absent when nothing was copied */
		if (s->stack_size) {
			s->stack = c.p;
			if (!skip(&c, s->stack_size) || !take_u64(&c, &v) || v > s->stack_size)
				return -EBADMSG;
			s->stack_dyn = v;
		}
	}
	return 0;
}

int perf_sample_time(const struct perf_sample_layout *l, const struct perf_event_header *h,
		     uint64_t *ret)
{
	uint64_t t = l->sample_type;
	size_t off = sizeof(*h) + 8 * (size_t)(!!(t & PERF_SAMPLE_IDENTIFIER) +
					       !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));

	if (h->type != PERF_RECORD_SAMPLE || !(t & PERF_SAMPLE_TIME) || h->size < off + 8 ||
	    ((uintptr_t)h & 7))
		return -EBADMSG;
	memcpy(ret, (const uint8_t *)h + off, sizeof(*ret));
	return 0;
}

void perf_sample_trim(const struct perf_event_header *h, const struct perf_sample *s, void *out)
{
	const uint8_t *rec = (const uint8_t *)h;
	size_t dyn = (size_t)s->stack_dyn, after = s->stack_off + 8 + (size_t)s->stack_size + 8;
	struct perf_event_header th = *h;
	uint8_t *o = out;

	if (s->stack_dyn == s->stack_size) {
		memcpy(out, h, h->size);	/* all stack, or no copy: nothing to cut */
		return;
	}
	/*
	 * The fields up to the copy and what it holds, in one piece; then the
	 * copy's size said again (now dyn), dyn itself, and the fields after.
	 */
	memcpy(o, rec, s->stack_off + 8 + dyn);
	th.size = (uint16_t)perf_sample_trimmed_size(h, s);
	memcpy(o, &th, sizeof(th));
	memcpy(o + s->stack_off, &s->stack_dyn, 8);
	memcpy(o + s->stack_off + 8 + dyn, &s->stack_dyn, 8);
	if (h->size > after)
		memcpy(o + s->stack_off + 16 + dyn, rec + after, h->size - after);
}

/* The size of a sample_id trailer laid out as L. */
static size_t id_size(const struct perf_sample_layout *l)
{
	uint64_t t = l->sample_type;

	if (!l->sample_id_all)
		return 0;
	return 8 * (size_t)(!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
			    !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
			    !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER));
}

const uint8_t *perf_record_body(const struct perf_sample_layout *l,
				const struct perf_event_header *h, size_t *ret_len)
{
	size_t n = id_size(l);

	if (h->type == PERF_RECORD_SAMPLE || h->size < sizeof(*h) + n)
		return NULL;
	*ret_len = h->size - sizeof(*h) - n;
	return (const uint8_t *)h + sizeof(*h);
}

int perf_sample_id_parse(const struct perf_sample_layout *l, const struct perf_event_header *h,
			 struct perf_sample_id *ret)
{
	uint64_t t = l->sample_type, ident;
	struct perf_sample_id id = { 0 };
	size_t n = id_size(l);
	struct cursor c;

	if (h->type == PERF_RECORD_SAMPLE || !l->sample_id_all || h->size < sizeof(*h) + n)
		return -EBADMSG;
	c = (struct cursor){ (const uint8_t *)h + h->size - n, (const uint8_t *)h + h->size };
	/* the fields are in the sample's order, but IDENTIFIER comes last */
	if (t & PERF_SAMPLE_TID)
		take_u32_pair(&c, &id.pid, &id.tid);
	if (t & PERF_SAMPLE_TIME)
		take_u64(&c, &id.time);
	if (t & PERF_SAMPLE_ID)
		take_u64(&c, &id.id);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c, &id.stream_id);
	if (t & PERF_SAMPLE_CPU)
		take_u32_pair(&c, &id.cpu, NULL);
	if ((t & PERF_SAMPLE_IDENTIFIER) && take_u64(&c, &ident))
		id.id = ident;
	*ret = id;
	return 0;
}
