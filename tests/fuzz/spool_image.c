/* SPDX-License-Identifier: MIT */
/*
 * spool_image.c - a spool taken apart into blocks and records, and put
 * back together with its lengths, compression and checksums redone (see
 * spool_image.h).  It trusts nothing it parses: what does not hold
 * together is kept as bytes, as it was.
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "prof.h"
#include "spool/spool_columns.h"
#include "spool_image.h"

/* A growable array of elements of SIZE bytes, to hold NEED: 0 or -ENOMEM. */
static int reserve(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t len)
{
	uint8_t *q = malloc(len ? len : 1);

	if (q && len)
		memcpy(q, p, len);
	return q;
}

struct image_record *image_block_insert(struct image_block *b, size_t at)
{
	void *v = b->recs;

	if (reserve(&v, &b->recs_cap, b->nrecs + 1, sizeof(*b->recs)) < 0)
		return NULL;
	b->recs = v;
	memmove(&b->recs[at + 1], &b->recs[at], (b->nrecs - at) * sizeof(*b->recs));
	b->nrecs++;
	memset(&b->recs[at], 0, sizeof(*b->recs));
	return &b->recs[at];
}

void image_block_remove(struct image_block *b, size_t at)
{
	free(b->recs[at].body);
	memmove(&b->recs[at], &b->recs[at + 1], (b->nrecs - at - 1) * sizeof(*b->recs));
	b->nrecs--;
}

struct image_block *spool_image_insert(struct spool_image *img, size_t at)
{
	void *v = img->blocks;

	if (reserve(&v, &img->blocks_cap, img->nblocks + 1, sizeof(*img->blocks)) < 0)
		return NULL;
	img->blocks = v;
	memmove(&img->blocks[at + 1], &img->blocks[at],
		(img->nblocks - at) * sizeof(*img->blocks));
	img->nblocks++;
	memset(&img->blocks[at], 0, sizeof(*img->blocks));
	return &img->blocks[at];
}

static void block_release(struct image_block *b)
{
	size_t i;

	for (i = 0; i < b->nrecs; i++)
		free(b->recs[i].body);
	free(b->recs);
	free(b->rest);
}

void spool_image_remove(struct spool_image *img, size_t at)
{
	block_release(&img->blocks[at]);
	memmove(&img->blocks[at], &img->blocks[at + 1],
		(img->nblocks - at - 1) * sizeof(*img->blocks));
	img->nblocks--;
}

int image_record_copy(struct image_record *to, const struct image_record *from)
{
	*to = *from;
	to->body = dup_bytes(from->body, from->len);
	return to->body ? 0 : -ENOMEM;
}

void spool_image_release(struct spool_image *img)
{
	size_t i;

	for (i = 0; i < img->nblocks; i++)
		block_release(&img->blocks[i]);
	free(img->blocks);
	free(img->tail);
	memset(img, 0, sizeof(*img));
}

/* The records of RAW (LEN bytes) into B, as far as they hold together. */
static int parse_records(struct image_block *b, const uint8_t *raw, size_t len)
{
	const uint8_t *p = raw, *end = raw + len;

	while (p < end) {
		const uint8_t *q = p;
		struct image_record *r;
		uint64_t tag, n;

		if (!spool_get_uvarint(&q, end, &tag) || !spool_get_uvarint(&q, end, &n) ||
		    n > (uint64_t)(end - q))
			break;
		r = image_block_insert(b, b->nrecs);
		if (!r || !(r->body = dup_bytes(q, (size_t)n)))
			return -ENOMEM;
		r->tag = tag;
		r->len = (size_t)n;
		p = q + n;
	}
	if (p < end) {
		b->rest_len = (size_t)(end - p);
		b->rest = dup_bytes(p, b->rest_len);
		if (!b->rest)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The block at P (LEN bytes left in the file) into a new last block of
 * IMG: its size in the file, 0 if it does not hold together, or -ENOMEM.
 */
static long parse_block(struct spool_image *img, const uint8_t *p, size_t len, size_t max_raw)
{
	uint32_t stored, raw;
	struct image_block *b;
	uint8_t *buf, *cols = NULL;
	uLongf out;
	int r;

	if (len < SPOOL_BLOCK_HEADER_LEN || spool_get_le32(p) != SPOOL_BLOCK_MAGIC)
		return 0;
	stored = spool_get_le32(p + 4);
	raw = spool_get_le32(p + 8);
	if (stored > len - SPOOL_BLOCK_HEADER_LEN || raw > max_raw || p[12] > SPOOL_ENC_COLUMNS ||
	    (p[12] == SPOOL_ENC_RAW && raw != stored))
		return 0;
	buf = malloc(raw ? raw : 1);
	if (p[12] == SPOOL_ENC_COLUMNS)
		cols = malloc((size_t)raw + SPOOL_COLUMNS_SLACK);
	if (!buf || (p[12] == SPOOL_ENC_COLUMNS && !cols)) {
		free(buf);
		free(cols);
		return -ENOMEM;
	}
	out = raw;
	if (p[12] == SPOOL_ENC_RAW) {
		memcpy(buf, p + SPOOL_BLOCK_HEADER_LEN, raw);
	} else if (p[12] == SPOOL_ENC_DEFLATE) {
		if (uncompress(buf, &out, p + SPOOL_BLOCK_HEADER_LEN, stored) != Z_OK || out != raw)
			raw = UINT32_MAX;
	} else {
		out = (uLongf)raw + SPOOL_COLUMNS_SLACK;
		if (uncompress(cols, &out, p + SPOOL_BLOCK_HEADER_LEN, stored) != Z_OK ||
		    spool_columns_join(cols, out, buf, raw))
			raw = UINT32_MAX;
	}
	free(cols);
	if (raw == UINT32_MAX) {
		free(buf);
		return 0;
	}
	b = spool_image_insert(img, img->nblocks);
	r = b ? parse_records(b, buf, raw) : -ENOMEM;
	free(buf);
	if (r < 0)
		return r;
	b->encoding = p[12];
	return (long)(SPOOL_BLOCK_HEADER_LEN + stored);
}

int spool_image_parse(struct spool_image *img, const uint8_t *p, size_t len, size_t max_raw)
{
	size_t off = SPOOL_HEADER_LEN;

	memset(img, 0, sizeof(*img));
	if (len < SPOOL_HEADER_LEN)
		return -EINVAL;
	memcpy(img->header, p, SPOOL_HEADER_LEN);
	if (!max_raw || max_raw > SPOOL_BLOCK_MAX)
		max_raw = SPOOL_BLOCK_MAX;
	while (off < len) {
		long n = parse_block(img, p + off, len - off, max_raw);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	if (off < len) {
		img->tail_len = len - off;
		img->tail = dup_bytes(p + off, img->tail_len);
		if (!img->tail)
			return -ENOMEM;
	}
	return 0;
}

struct out {
	uint8_t *p;
	size_t len, cap;
};

static int out_put(struct out *o, const void *p, size_t len)
{
	void *v = o->p;

	if (reserve(&v, &o->cap, o->len + len, 1) < 0)
		return -ENOMEM;
	o->p = v;
	if (len)
		memcpy(o->p + o->len, p, len);
	o->len += len;
	return 0;
}

static int out_uvarint(struct out *o, uint64_t v)
{
	uint8_t b[SPOOL_VARINT_MAX];

	return out_put(o, b, spool_put_uvarint(b, v));
}

/* Block B, its header and payload, onto O. */
static int build_block(struct out *o, const struct image_block *b)
{
	struct out raw = { 0 };
	uint8_t h[SPOOL_BLOCK_HEADER_LEN];
	const uint8_t *payload;
	uint8_t *packed = NULL, enc = b->encoding;
	size_t stored;
	size_t i;
	int r = 0;

	for (i = 0; i < b->nrecs && r == 0; i++) {
		const struct image_record *rec = &b->recs[i];

		r = out_uvarint(&raw, rec->tag) ?:
		    out_uvarint(&raw, rec->len_lie ? rec->len_field : rec->len) ?:
		    out_put(&raw, rec->body, rec->len);
	}
	if (r == 0)
		r = out_put(&raw, b->rest, b->rest_len);
	if (r < 0)
		goto out;
	payload = raw.p;
	stored = raw.len;
	if (enc == SPOOL_ENC_DEFLATE || enc == SPOOL_ENC_COLUMNS) {
		/* as the writer compresses: libdeflate at its default level */
		struct libdeflate_compressor *c = libdeflate_alloc_compressor(SPOOL_DEFLATE_LEVEL);
		struct spool_columns cols = { 0 };
		const uint8_t *in = raw.p;
		size_t in_len = raw.len, bound;

		/* records the columns cannot hold (a length that lies) deflate as they are */
		if (enc == SPOOL_ENC_COLUMNS) {
			r = spool_columns_split(&cols, raw.p, raw.len);
			if (r > 0) {
				in = cols.image.p;
				in_len = cols.image.len;
			} else {
				enc = SPOOL_ENC_DEFLATE;
			}
		}
		bound = c && r >= 0 ? libdeflate_zlib_compress_bound(c, in_len) : 0;
		packed = bound ? malloc(bound) : NULL;
		stored = packed ? libdeflate_zlib_compress(c, in, in_len, packed, bound) : 0;
		libdeflate_free_compressor(c);
		spool_columns_release(&cols);
		if (!stored) {
			r = -ENOMEM;
			goto out;
		}
		payload = packed;
	}
	spool_block_header_pack(h, &(struct spool_block_header){ .stored_len = (uint32_t)stored,
		.raw_len = (uint32_t)raw.len, .encoding = enc,
		.payload_crc = (uint32_t)crc32(0, payload, (uInt)stored) });
	r = out_put(o, h, sizeof(h)) ?: out_put(o, payload, stored);
out:
	free(packed);
	free(raw.p);
	return r;
}

int spool_image_build(const struct spool_image *img, uint8_t **ret, size_t *ret_len)
{
	struct out o = { 0 };
	size_t i;
	int r = out_put(&o, img->header, SPOOL_HEADER_LEN);

	for (i = 0; i < img->nblocks && r == 0; i++)
		r = build_block(&o, &img->blocks[i]);
	if (r == 0)
		r = out_put(&o, img->tail, img->tail_len);
	if (r < 0) {
		free(o.p);
		return r;
	}
	*ret = o.p;
	*ret_len = o.len;
	return 0;
}

void spool_reseal(uint8_t *p, size_t len)
{
	size_t off = SPOOL_HEADER_LEN;

	while (off < len && len - off >= SPOOL_BLOCK_HEADER_LEN) {
		struct spool_block_header h;
		uint8_t *b = p + off;

		spool_block_header_unpack(b, &h);
		if (h.magic != SPOOL_BLOCK_MAGIC ||
		    h.stored_len > len - off - SPOOL_BLOCK_HEADER_LEN)
			return;
		h.payload_crc = (uint32_t)crc32(0, b + SPOOL_BLOCK_HEADER_LEN, h.stored_len);
		spool_block_header_pack(b, &h);
		off += SPOOL_BLOCK_HEADER_LEN + h.stored_len;
	}
}

/* ---- fields ---------------------------------------------------------- */

/*
 * Each tag's fields as prof-spool(5) lists them: u a uv, v an sv (or a
 * time), s a str or bytes, P T M F S an id of a process, thread, module,
 * frame or stack, R the id a FRAME's kind says (a module's, a process's or
 * none), Y the one a SYMBOL's scope says, a argc and its strs, p npids and
 * its svs, * (key, value) uv pairs to the end.
 */
struct field_spec {
	char type;
	const char *name;
};

#define FIELDS(...) ((const struct field_spec[]){ __VA_ARGS__, { 0, NULL } })

static const struct {
	uint64_t tag;
	const char *name;
	const struct field_spec *fields;
} schemas[] = {
	{ SPOOL_TAG_META, "META", FIELDS({ 'u', "flags" }, { 'a', "argc" }, { 'p', "npids" },
		{ 'u', "wall_start_ns" }, { 'u', "mono_start_ns" }, { 'u', "time_unit_ns" },
		{ 's', "event" }, { 'u', "freq_hz" }, { 'u', "period" }, { 'u', "stack_bytes" },
		{ 's', "hostname" }, { 's', "kernel_release" }, { 's', "arch" },
		{ 'u', "page_size" }, { 's', "prof_version" }) },
	{ SPOOL_TAG_PROCESS, "PROCESS", FIELDS({ 'v', "time" }, { 'v', "pid" }, { 'v', "ppid" },
		{ 'u', "start_time_ns" }, { 's', "comm" }, { 's', "exe" }) },
	{ SPOOL_TAG_THREAD, "THREAD", FIELDS({ 'v', "time" }, { 'P', "process" }, { 'v', "tid" },
		{ 's', "name" }) },
	{ SPOOL_TAG_THREAD_NAME, "THREAD_NAME", FIELDS({ 'v', "time" }, { 'T', "thread" },
		{ 's', "name" }) },
	{ SPOOL_TAG_EXEC, "EXEC", FIELDS({ 'v', "time" }, { 'P', "process" }, { 's', "comm" },
		{ 's', "exe" }) },
	{ SPOOL_TAG_PROCESS_EXIT, "PROCESS_EXIT", FIELDS({ 'v', "time" }, { 'P', "process" }) },
	{ SPOOL_TAG_THREAD_EXIT, "THREAD_EXIT", FIELDS({ 'v', "time" }, { 'T', "thread" }) },
	{ SPOOL_TAG_MODULE, "MODULE", FIELDS({ 'v', "time" }, { 'P', "process" },
		{ 'u', "start" }, { 'u', "size" }, { 'u', "pgoff" }, { 'u', "flags" },
		{ 'u', "dev_major" }, { 'u', "dev_minor" }, { 'u', "inode" }, { 's', "build_id" },
		{ 's', "path" }) },
	{ SPOOL_TAG_MODULE_RETIRE, "MODULE_RETIRE", FIELDS({ 'v', "time" }, { 'M', "module" }) },
	{ SPOOL_TAG_FRAME, "FRAME", FIELDS({ 'u', "kind" }, { 'R', "ref" }, { 'u', "addr" }) },
	{ SPOOL_TAG_STACK, "STACK", FIELDS({ 'S', "parent" }, { 'F', "frame" }) },
	{ SPOOL_TAG_SAMPLE, "SAMPLE", FIELDS({ 'v', "time" }, { 'T', "thread" }, { 'S', "stack" },
		{ 'v', "period" }, { 'u', "cpu" }) },
	{ SPOOL_TAG_LOST, "LOST", FIELDS({ 'v', "time" }, { 'u', "kind" }, { 'u', "count" }) },
	{ SPOOL_TAG_SYMBOL, "SYMBOL", FIELDS({ 'u', "scope" }, { 'Y', "scope_id" },
		{ 'u', "start" }, { 'u', "size" }, { 's', "name" }) },
	{ SPOOL_TAG_TRAILER, "TRAILER", FIELDS({ '*', "key" }) },
	{ SPOOL_TAG_OFFCPU, "OFFCPU", FIELDS({ 'v', "time" }, { 'T', "thread" }, { 'S', "stack" },
		{ 'S', "user_stack" }, { 'u', "duration" }, { 'u', "cpu" }, { 'u', "state" },
		{ 'u', "end" }) },
};

static const struct field_spec *schema_of(uint64_t tag)
{
	size_t i;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (schemas[i].tag == tag)
			return schemas[i].fields;
	return NULL;
}

uint64_t record_tag_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (!strcmp(schemas[i].name, name))
			return schemas[i].tag;
	return 0;
}

enum ref_kind record_defines(uint64_t tag)
{
	switch (tag) {
	case SPOOL_TAG_PROCESS: return REF_PROCESS;
	case SPOOL_TAG_THREAD: return REF_THREAD;
	case SPOOL_TAG_MODULE: return REF_MODULE;
	case SPOOL_TAG_FRAME: return REF_FRAME;
	case SPOOL_TAG_STACK: return REF_STACK;
	default: return REF__COUNT;
	}
}

static enum ref_kind ref_of(char type)
{
	switch (type) {
	case 'P': return REF_PROCESS;
	case 'T': return REF_THREAD;
	case 'M': return REF_MODULE;
	case 'F': return REF_FRAME;
	default: return REF_STACK;
	}
}

struct walk {
	const uint8_t *body, *p, *end;
	struct record_field *fields;
	size_t n, max;
	uint64_t last;		/* the value of the last varint read */
};

/* One field; false where the body ends or breaks. */
static bool walk_field(struct walk *w, enum field_type type, enum ref_kind ref, const char *name)
{
	const uint8_t *at = w->p;

	if (!spool_get_uvarint(&w->p, w->end, &w->last))
		return false;
	if (w->n < w->max)
		w->fields[w->n++] = (struct record_field){ .name = name, .type = type, .ref = ref,
			.off = (size_t)(at - w->body), .len = (size_t)(w->p - at), .value = w->last };
	if (type == FIELD_STR) {
		if (w->last > (uint64_t)(w->end - w->p))
			return false;
		w->p += w->last;
	}
	return true;
}

/* A count and the LIST fields it counts. */
static bool walk_list(struct walk *w, const char *name, enum field_type list, const char *item)
{
	uint64_t n, i;

	if (!walk_field(w, FIELD_COUNT, REF__COUNT, name))
		return false;
	/* each item costs a byte at least: the body bounds the loop */
	for (n = w->last, i = 0; i < n; i++)
		if (!walk_field(w, list, REF__COUNT, item))
			return false;
	return true;
}

size_t record_fields(uint64_t tag, const uint8_t *body, size_t len, struct record_field *fields,
		     size_t max)
{
	struct walk w = { .body = body, .p = body, .end = body + len, .fields = fields, .max = max };
	const struct field_spec *spec = schema_of(tag), *f;
	uint64_t first = 0;	/* a FRAME's kind, a SYMBOL's scope */
	bool ok = true;

	for (f = spec; f && f->type && ok; f++) {
		switch (f->type) {
		case 'u':
			ok = walk_field(&w, FIELD_UV, REF__COUNT, f->name);
			break;
		case 'v':
			ok = walk_field(&w, FIELD_SV, REF__COUNT, f->name);
			break;
		case 's':
			ok = walk_field(&w, FIELD_STR, REF__COUNT, f->name);
			break;
		case 'P':
		case 'T':
		case 'M':
		case 'F':
		case 'S':
			ok = walk_field(&w, FIELD_REF, ref_of(f->type), f->name);
			break;
		case 'R':
			ok = first == PROF_FRAME_USER || first == PROF_FRAME_ANON
				     ? walk_field(&w, FIELD_REF, first == PROF_FRAME_USER ? REF_MODULE
						  : REF_PROCESS, f->name)
				     : walk_field(&w, FIELD_UV, REF__COUNT, f->name);
			break;
		case 'Y':
			ok = first == PROF_SYMBOL_PROCESS || first == PROF_SYMBOL_MODULE
				     ? walk_field(&w, FIELD_REF, first == PROF_SYMBOL_MODULE
						  ? REF_MODULE : REF_PROCESS, f->name)
				     : walk_field(&w, FIELD_UV, REF__COUNT, f->name);
			break;
		case 'a':
			ok = walk_list(&w, f->name, FIELD_STR, "argv");
			break;
		case 'p':
			ok = walk_list(&w, f->name, FIELD_SV, "pids");
			break;
		case '*':
			while (ok && w.p < w.end)
				ok = walk_field(&w, FIELD_UV, REF__COUNT, "key") &&
				     walk_field(&w, FIELD_UV, REF__COUNT, "value");
			break;
		}
		if (f == spec)
			first = w.last;
	}
	return w.n;
}

size_t record_schema(uint64_t tag, struct record_field *fields, size_t max)
{
	const struct field_spec *f = schema_of(tag);
	size_t n = 0;

	for (; f && f->type && n < max; f++) {
		enum field_type type = FIELD_UV;
		enum ref_kind ref = REF__COUNT;

		switch (f->type) {
		case 'v':
			type = FIELD_SV;
			break;
		case 's':
			type = FIELD_STR;
			break;
		case 'a':
		case 'p':
			type = FIELD_COUNT;
			break;
		case 'P':
		case 'T':
		case 'M':
		case 'F':
		case 'S':
			type = FIELD_REF;
			ref = ref_of(f->type);
			break;
		}
		fields[n++] = (struct record_field){ .name = f->name, .type = type, .ref = ref };
		if (f->type == '*' && n < max)
			fields[n++] = (struct record_field){ .name = "value", .type = FIELD_UV,
							     .ref = REF__COUNT };
	}
	return n;
}

bool image_record_field(const struct image_record *r, const char *name, struct record_field *ret)
{
	struct record_field f[64];
	size_t n = record_fields(r->tag, r->body, r->len, f, 64), i;

	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name)) {
			*ret = f[i];
			return true;
		}
	return false;
}

int image_record_splice(struct image_record *r, const struct record_field *f, const uint8_t *p,
			size_t len)
{
	size_t n = r->len - f->len + len;
	uint8_t *body = malloc(n ? n : 1);

	if (!body)
		return -ENOMEM;
	memcpy(body, r->body, f->off);
	memcpy(body + f->off, p, len);
	memcpy(body + f->off + len, r->body + f->off + f->len, r->len - f->off - f->len);
	free(r->body);
	r->body = body;
	r->len = n;
	return 0;
}

int image_record_set(struct image_record *r, const struct record_field *f, uint64_t v)
{
	uint8_t b[SPOOL_VARINT_MAX];

	return image_record_splice(r, f, b, spool_put_uvarint(b, v));
}

void spool_image_count(const struct spool_image *img, size_t block, size_t rec,
		       uint32_t counts[REF__COUNT])
{
	size_t b, i;

	memset(counts, 0, REF__COUNT * sizeof(*counts));
	for (b = 0; b <= block && b < img->nblocks; b++)
		for (i = 0; i < img->blocks[b].nrecs && (b < block || i < rec); i++) {
			enum ref_kind k = record_defines(img->blocks[b].recs[i].tag);

			if (k != REF__COUNT)
				counts[k]++;
		}
}
