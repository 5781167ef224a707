/* SPDX-License-Identifier: MIT */
/*
 * spool_columns.c - a block's records split into columns, one per field
 * of the records that make up most of a spool (FRAME, STACK, SAMPLE,
 * SYMBOL, OFFCPU), and joined back.  Fields move as the uvarints they are, byte
 * for byte: the split never decodes a value it does not need to find the
 * next field, and the join rebuilds exactly the records it was given.
 *
 * The image: a uvarint length per column, in enum spool_column's order,
 * then the columns one after the other.  The framing column holds, per
 * record, the uvarint token tag << 1 | split; a record kept whole has its
 * body length next and its body in the bodies column; a split FRAME or
 * STACK record has the number of frames or nodes next; a split SAMPLE,
 * SYMBOL or OFFCPU has nothing more there.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spool_columns.h"
#include "spool_format.h"

void spool_columns_release(struct spool_columns *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < SPOOL_COLUMNS; i++)
		free(c->col[i].p);
	free(c->image.p);
	memset(c, 0, sizeof(*c));
}

static int col_put(struct spool_column_buf *b, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	if (b->len + n > b->cap) {
		void *q = b->p;
		int r = grow_array(&q, &b->cap, b->len + n, 1);

		b->p = q;
		if (r < 0)
			return r;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static int col_uvarint(struct spool_column_buf *b, uint64_t v)
{
	uint8_t tmp[SPOOL_VARINT_MAX];

	if (b->cap - b->len >= SPOOL_VARINT_MAX) {
		b->len += spool_put_uvarint(b->p + b->len, v);
		return 0;
	}
	return col_put(b, tmp, spool_put_uvarint(tmp, v));
}

/* The bytes of the uvarint at *P (before END), its value in *V: 0 when there is none. */
static size_t uvarint_len(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = p;

	return spool_get_uvarint(&q, end, v) ? (size_t)(q - p) : 0;
}

static bool shortest(size_t n, uint64_t v)
{
	uint8_t tmp[SPOOL_VARINT_MAX];

	return spool_put_uvarint(tmp, v) == n;
}

/*
 * The split of one body: its fields moved to their columns.  False when the
 * body is not of the tag's layout; the columns then hold what they held.
 */
struct body {
	const uint8_t *p, *end;
	const uint8_t *block_end;	/* the bytes that may be read past END */
	struct spool_columns *c;
	int err;
};

/*
 * Whole words at a time: a field is moved by copying this many bytes, its
 * own and what follows, then counting only its own, where the bytes are
 * there and the column has the room (a call of memcpy, and one to decode
 * through uvarint_len(), for each field of a byte or two were most of the
 * split).
 */
#define MOVE_WORD 16
_Static_assert(MOVE_WORD >= SPOOL_VARINT_MAX, "a word holds any uvarint");

static bool move(struct body *b, enum spool_column col, uint64_t *v)
{
	struct spool_column_buf *to = &b->c->col[col];
	const uint8_t *q = b->p;
	uint64_t x;
	size_t n;

	if (!spool_get_uvarint(&q, b->end, &x))
		return false;
	n = (size_t)(q - b->p);
	if (v)
		*v = x;
	if (b->block_end - b->p >= MOVE_WORD && to->cap - to->len >= MOVE_WORD) {
		memcpy(to->p + to->len, b->p, MOVE_WORD);
		to->len += n;
	} else {
		b->err = col_put(to, b->p, n);
	}
	b->p = q;
	return !b->err;
}

static bool split_frames(struct body *b, uint64_t *count)
{
	for (*count = 0; b->p < b->end; ++*count)
		if (!move(b, SPOOL_COL_FRAME_KIND, NULL) || !move(b, SPOOL_COL_FRAME_REF, NULL) ||
		    !move(b, SPOOL_COL_FRAME_ADDR, NULL))
			return false;
	return *count > 0;
}

static bool split_stacks(struct body *b, uint64_t *count)
{
	uint64_t node;

	for (*count = 0; b->p < b->end; ++*count)
		if (!move(b, SPOOL_COL_STACK_NODE, &node) ||
		    ((node & 1) && !move(b, SPOOL_COL_STACK_PARENT, NULL)))
			return false;
	return *count > 0;
}

/* The columns of a SAMPLE's fields and an OFFCPU's, in their order: times, threads and CPUs shared. */
static const uint8_t sample_fields[] = {
	SPOOL_COL_SAMPLE_TIME, SPOOL_COL_SAMPLE_THREAD, SPOOL_COL_SAMPLE_STACK,
	SPOOL_COL_SAMPLE_PERIOD, SPOOL_COL_SAMPLE_CPU,
};
static const uint8_t offcpu_fields[] = {
	SPOOL_COL_SAMPLE_TIME, SPOOL_COL_SAMPLE_THREAD, SPOOL_COL_OFFCPU_STACK,
	SPOOL_COL_OFFCPU_USER_STACK, SPOOL_COL_OFFCPU_DURATION, SPOOL_COL_SAMPLE_CPU,
	SPOOL_COL_OFFCPU_STATE, SPOOL_COL_OFFCPU_END,
};

static bool split_fixed(struct body *b, const uint8_t *fields, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!move(b, fields[i], NULL))
			return false;
	return b->p == b->end;
}

static bool split_symbol(struct body *b)
{
	enum spool_column f;
	uint64_t name = 0, len;

	for (f = SPOOL_COL_SYMBOL_SCOPE; f <= SPOOL_COL_SYMBOL_NAME; f++)
		if (!move(b, f, f == SPOOL_COL_SYMBOL_NAME ? &name : NULL))
			return false;
	if (name == 0) {
		if (!move(b, SPOOL_COL_SYMBOL_NAME_LEN, &len) || len > (uint64_t)(b->end - b->p))
			return false;
		b->err = col_put(&b->c->col[SPOOL_COL_SYMBOL_NAME_BYTES], b->p, (size_t)len);
		b->p += len;
	}
	return !b->err && b->p == b->end;
}

/* The columns each split tag's fields go to, [lo, end): kept, for a body not of its layout. */
static const struct {
	uint8_t lo, end;
} tag_columns[] = {
	[SPOOL_TAG_FRAME] = { SPOOL_COL_FRAME_KIND, SPOOL_COL_FRAME_ADDR + 1 },
	[SPOOL_TAG_STACK] = { SPOOL_COL_STACK_NODE, SPOOL_COL_STACK_PARENT + 1 },
	[SPOOL_TAG_SAMPLE] = { SPOOL_COL_SAMPLE_TIME, SPOOL_COL_SAMPLE_CPU + 1 },
	[SPOOL_TAG_SYMBOL] = { SPOOL_COL_SYMBOL_SCOPE, SPOOL_COL_SYMBOL_NAME_BYTES + 1 },
	[SPOOL_TAG_OFFCPU] = { SPOOL_COL_SAMPLE_TIME, SPOOL_COL_OFFCPU_END + 1 },
};

/* One record, split or kept whole: 0 or -ENOMEM. */
static int split_record(struct spool_columns *c, uint64_t tag, const uint8_t *body, size_t len,
			const uint8_t *block_end)
{
	struct body b = { .p = body, .end = body + len, .block_end = block_end, .c = c };
	size_t saved[SPOOL_COLUMNS], i, lo = 0, end = 0;
	uint64_t count = 0;
	bool split = false;

	if (tag < sizeof(tag_columns) / sizeof(tag_columns[0])) {
		lo = tag_columns[tag].lo;
		end = tag_columns[tag].end;
	}
	for (i = lo; i < end; i++)
		saved[i] = c->col[i].len;
	switch (tag) {
	case SPOOL_TAG_FRAME:
		split = split_frames(&b, &count);
		break;
	case SPOOL_TAG_STACK:
		split = split_stacks(&b, &count);
		break;
	case SPOOL_TAG_SAMPLE:
		split = split_fixed(&b, sample_fields, sizeof(sample_fields));
		break;
	case SPOOL_TAG_OFFCPU:
		split = split_fixed(&b, offcpu_fields, sizeof(offcpu_fields));
		break;
	case SPOOL_TAG_SYMBOL:
		split = split_symbol(&b);
		break;
	}
	if (b.err)
		return b.err;
	if (split)
		return col_uvarint(&c->col[SPOOL_COL_FRAMING], tag << 1 | 1) ?:
		       (count ? col_uvarint(&c->col[SPOOL_COL_FRAMING], count) : 0);
	for (i = lo; i < end; i++)
		c->col[i].len = saved[i];
	return col_uvarint(&c->col[SPOOL_COL_FRAMING], tag << 1) ?:
	       col_uvarint(&c->col[SPOOL_COL_FRAMING], len) ?:
	       col_put(&c->col[SPOOL_COL_BODIES], body, len);
}

int spool_columns_split(struct spool_columns *c, const uint8_t *raw, size_t len)
{
	const uint8_t *p = raw, *end;
	size_t i, n1, n2, total;
	uint64_t tag, blen;
	int r;

	if (!len)
		return 0;	/* no records: nothing to split */
	end = raw + len;
	for (i = 0; i < SPOOL_COLUMNS; i++)
		c->col[i].len = 0;
	c->image.len = 0;
	while (p < end) {
		n1 = uvarint_len(p, end, &tag);
		n2 = n1 ? uvarint_len(p + n1, end, &blen) : 0;
		/* records as the writer writes them, or the block as it is */
		if (!n2 || !shortest(n1, tag) || !shortest(n2, blen) || tag >> 63 ||
		    blen > (uint64_t)(end - p - n1 - n2))
			return 0;
		p += n1 + n2;
		r = split_record(c, tag, p, (size_t)blen, end);
		if (r < 0)
			return r;
		p += blen;
	}
	for (i = 0, total = 0; i < SPOOL_COLUMNS; i++)
		total += c->col[i].len;
	if (total > len)	/* kept-whole records of tags above 63: not worth it */
		return 0;
	for (i = 0; i < SPOOL_COLUMNS; i++) {
		r = col_uvarint(&c->image, c->col[i].len);
		if (r < 0)
			return r;
	}
	for (i = 0; i < SPOOL_COLUMNS; i++) {
		r = col_put(&c->image, c->col[i].p, c->col[i].len);
		if (r < 0)
			return r;
	}
	return 1;
}

/* The join's read position in each column. */
struct cols {
	const uint8_t *p[SPOOL_COLUMNS], *end[SPOOL_COLUMNS];
};

/* The uvarint at the head of column COL, copied to OUT unless NULL: its bytes, 0 if none. */
static size_t take(struct cols *c, enum spool_column col, uint8_t *out, uint64_t *v)
{
	uint64_t dummy;
	size_t n = uvarint_len(c->p[col], c->end[col], v ? v : &dummy);

	if (out)
		memcpy(out, c->p[col], n);
	c->p[col] += n;
	return n;
}

/*
 * The body of a split record of TAG (COUNT frames or nodes) from the
 * columns, into OUT unless NULL: its length, or 0 when the columns run out.
 */
static size_t join_body(struct cols *c, uint64_t tag, uint64_t count, uint8_t *out)
{
	enum spool_column f;
	uint64_t v = 0, len = 0;
	size_t n = 0, k, i;

#define TAKE(col, val)								\
	do {									\
		k = take(c, (col), out ? out + n : NULL, (val));		\
		if (!k)								\
			return 0;						\
		n += k;								\
	} while (0)

	switch (tag) {
	case SPOOL_TAG_FRAME:
		while (count--)
			for (f = SPOOL_COL_FRAME_KIND; f <= SPOOL_COL_FRAME_ADDR; f++)
				TAKE(f, NULL);
		return n;
	case SPOOL_TAG_STACK:
		while (count--) {
			TAKE(SPOOL_COL_STACK_NODE, &v);
			if (v & 1)
				TAKE(SPOOL_COL_STACK_PARENT, NULL);
		}
		return n;
	case SPOOL_TAG_SAMPLE:
		for (i = 0; i < sizeof(sample_fields); i++)
			TAKE(sample_fields[i], NULL);
		return n;
	case SPOOL_TAG_OFFCPU:
		for (i = 0; i < sizeof(offcpu_fields); i++)
			TAKE(offcpu_fields[i], NULL);
		return n;
	case SPOOL_TAG_SYMBOL:
		for (f = SPOOL_COL_SYMBOL_SCOPE; f <= SPOOL_COL_SYMBOL_NAME; f++)
			TAKE(f, f == SPOOL_COL_SYMBOL_NAME ? &v : NULL);
		if (v)
			return n;
		TAKE(SPOOL_COL_SYMBOL_NAME_LEN, &len);
		f = SPOOL_COL_SYMBOL_NAME_BYTES;
		if (len > (uint64_t)(c->end[f] - c->p[f]))
			return 0;
		if (out)
			memcpy(out + n, c->p[f], (size_t)len);
		c->p[f] += len;
		return n + (size_t)len;
	}
#undef TAKE
	return 0;
}

const char *spool_columns_join(const uint8_t *img, size_t len, uint8_t *raw, size_t raw_len)
{
	const uint8_t *p = img, *end = img + len;
	uint8_t head[2 * SPOOL_VARINT_MAX];
	uint64_t lens[SPOOL_COLUMNS], token, count, tag;
	struct cols c, dry;
	size_t i, k, pos = 0, h, body;

	for (i = 0; i < SPOOL_COLUMNS; i++) {
		k = uvarint_len(p, end, &lens[i]);
		if (!k)
			return "column image cut short in its table";
		p += k;
	}
	for (i = 0; i < SPOOL_COLUMNS; i++) {
		if (lens[i] > (uint64_t)(end - p))
			return "column longer than the image";
		c.p[i] = p;
		c.end[i] = p += lens[i];
	}
	if (p != end)
		return "column image longer than its columns";
	while (c.p[SPOOL_COL_FRAMING] < c.end[SPOOL_COL_FRAMING]) {
		if (!take(&c, SPOOL_COL_FRAMING, NULL, &token))
			return "column framing cut short";
		tag = token >> 1;
		count = 0;
		if (!(token & 1) || tag == SPOOL_TAG_FRAME || tag == SPOOL_TAG_STACK) {
			if (!take(&c, SPOOL_COL_FRAMING, NULL, &count))
				return "column framing cut short";
			if (token & 1 && !count)
				return "split record of no frames or nodes";
		}
		if (!(token & 1)) {
			if (count > (uint64_t)(c.end[SPOOL_COL_BODIES] - c.p[SPOOL_COL_BODIES]))
				return "record body past its column";
			body = (size_t)count;
		} else if (tag != SPOOL_TAG_FRAME && tag != SPOOL_TAG_STACK &&
			   tag != SPOOL_TAG_SAMPLE && tag != SPOOL_TAG_SYMBOL &&
			   tag != SPOOL_TAG_OFFCPU) {
			return "split record of a tag without columns";
		} else {
			dry = c;
			body = join_body(&dry, tag, count, NULL);
			if (!body)
				return "split record past the end of a column";
		}
		h = spool_put_uvarint(head, tag);
		h += spool_put_uvarint(head + h, body);
		if (h + body > raw_len - pos)
			return "columns hold more than the block's records";
		memcpy(raw + pos, head, h);
		pos += h;
		if (!(token & 1)) {
			memcpy(raw + pos, c.p[SPOOL_COL_BODIES], body);
			c.p[SPOOL_COL_BODIES] += body;
		} else {
			join_body(&c, tag, count, raw + pos);
		}
		pos += body;
	}
	for (i = 0; i < SPOOL_COLUMNS; i++)
		if (c.p[i] != c.end[i])
			return "column holds more than its records take";
	return pos == raw_len ? NULL : "columns hold fewer than the block's records";
}
