/* SPDX-License-Identifier: MIT */
/*
 * mutate.c - the fuzzer's structure-aware mutator.  Random bytes rarely
 * get past a spool's checksums and never past deflate, so most of what a
 * byte-level fuzzer tries dies at the block's check, before any record
 * decoder sees it.  This mutator takes the input apart (spool_image.c),
 * changes something inside a record at the level the decoders work at -
 * a varint set to a boundary value (0, 1, 2^32 - 1, 2^32, 2^55, 2^63,
 * 2^64 - 1), an id to 0, to the last one defined or to one past it, a tag
 * to another, unknown critical or optional one, a length, a whole record
 * or block moved, dropped, doubled, split or joined, a new record of any
 * kind - and puts the file back together with every length, compression
 * and checksum redone, so that the change reaches the decoders.  One time
 * in eight it leaves the input to libFuzzer's own byte-level mutation and
 * then (mostly) redoes the checksums the bytes broke.
 *
 * libFuzzer calls LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver;
 * replay.c calls them too (fuzz-replay --mutate), with a LLVMFuzzerMutate
 * of its own, so that make check runs the same mutations with any compiler.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spool_image.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
				 size_t size2, uint8_t *out, size_t max_out_size, unsigned int seed);

/* Blocks the mutator inflates: bigger ones go to the tail, as bytes. */
#define MAX_RAW (1u << 20)

/* splitmix64: a stream of numbers from libFuzzer's seed. */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A number below N (0 for N 0). */
static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* The values at which ranges end: where decoders' checks are, or should be. */
static const uint64_t boundaries[] = {
	0, 1, 2, 127, 128, 255, 256, 0x7fffffffull, 0x80000000ull, 0xffffffffull,
	0x100000000ull, 1ull << 55, 1ull << 63, UINT64_MAX - 1, UINT64_MAX,
};

static const int64_t signed_boundaries[] = {
	0, 1, -1, INT32_MIN, INT32_MAX, (int64_t)INT32_MIN - 1, (int64_t)INT32_MAX + 1,
	INT64_MIN, INT64_MAX, -(1ll << 55), 1ll << 55,
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t pick_boundary(struct rng *r)
{
	return boundaries[below(r, COUNT_OF(boundaries))];
}

/* A new value for a varint field of type TYPE that holds V. */
static uint64_t pick_value(struct rng *r, enum field_type type, uint64_t v)
{
	switch (below(r, 6)) {
	case 0:
		return v + 1;
	case 1:
		return v - 1;
	case 2:
		return below(r, 16);
	case 3:
		if (type == FIELD_SV)
			return spool_zigzag(signed_boundaries[below(r, COUNT_OF(signed_boundaries))]);
		/* fall through */
	case 4:
		return pick_boundary(r);
	default:
		return rnd(r) >> below(r, 64);
	}
}

/* A new id for a field of kind KIND, with LAST ids of that kind defined before it. */
static uint64_t pick_ref(struct rng *r, uint32_t last)
{
	switch (below(r, 6)) {
	case 0:
		return 0;
	case 1:
		return last;
	case 2:
		return (uint64_t)last + 1;	/* the first not yet defined */
	case 3:
		return last ? 1 + below(r, last) : 1;
	case 4:
		return UINT32_MAX;
	default:
		return (uint64_t)UINT32_MAX + 1;
	}
}

/* A tag: a known one, an unknown critical one, or an unknown optional one. */
static uint64_t pick_tag(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
	case 1:
		return 1 + below(r, SPOOL_TAG_OFFCPU);
	case 2:
		return SPOOL_TAG_OFFCPU + 1 + below(r, SPOOL_TAG_OPTIONAL - SPOOL_TAG_OFFCPU - 1);
	default:
		return below(r, 2) ? SPOOL_TAG_OPTIONAL + below(r, 64) : pick_boundary(r);
	}
}

/* A record of IMG at random, with its place: NULL if there is none. */
static struct image_record *pick_record(struct rng *r, struct spool_image *img, size_t *block,
					size_t *at)
{
	size_t total = 0, k, b;

	for (b = 0; b < img->nblocks; b++)
		total += img->blocks[b].nrecs;
	if (!total)
		return NULL;
	k = below(r, total);
	for (b = 0; k >= img->blocks[b].nrecs; b++)
		k -= img->blocks[b].nrecs;
	*block = b;
	*at = k;
	return &img->blocks[b].recs[k];
}

/* Set a field of REC (a reference, if REFS_ONLY and it has one). */
static int mutate_field(struct rng *r, struct spool_image *img, size_t block, size_t at,
			bool refs_only)
{
	struct image_record *rec = &img->blocks[block].recs[at];
	struct record_field f[64];
	uint32_t counts[REF__COUNT];
	size_t n = record_fields(rec->tag, rec->body, rec->len, f, 64), i, k = 0, nrefs = 0;

	for (i = 0; i < n; i++)
		nrefs += f[i].type == FIELD_REF;
	if (!n)
		return 0;
	if (refs_only && nrefs) {
		k = below(r, nrefs);
		for (i = 0; f[i].type != FIELD_REF || k--; i++)
			;
		spool_image_count(img, block, at, counts);
		return image_record_set(rec, &f[i], pick_ref(r, counts[f[i].ref]));
	}
	i = below(r, n);
	if (f[i].type == FIELD_REF && below(r, 2)) {
		spool_image_count(img, block, at, counts);
		return image_record_set(rec, &f[i], pick_ref(r, counts[f[i].ref]));
	}
	return image_record_set(rec, &f[i], pick_value(r, f[i].type, f[i].value));
}

/*
 * Put a varint that is not in its shortest form in place of a field of
 * REC: the same value padded to up to 10 bytes, or no valid varint at all
 * (a tenth byte above 1, an eleventh byte, a last byte that says more).
 */
static int mutate_encoding(struct rng *r, struct image_record *rec)
{
	struct record_field f[64];
	size_t n = record_fields(rec->tag, rec->body, rec->len, f, 64), len, i;
	uint8_t b[12];

	if (!n)
		return 0;
	i = below(r, n);
	len = spool_put_uvarint(b, f[i].value);
	switch (below(r, 3)) {
	case 0:
		while (len < SPOOL_VARINT_MAX) {
			b[len - 1] |= 0x80;
			b[len++] = 0;
		}
		break;
	case 1:
		memset(b, 0xff, 9);
		b[9] = (uint8_t)(2 + below(r, 126));
		len = 10;
		break;
	default:
		memset(b, 0x80, 11);
		len = 10 + below(r, 2);
		break;
	}
	return image_record_splice(rec, &f[i], b, len);
}

/* A new record of tag TAG whose fields are plausible: ids that exist, small values. */
static int synth_record(struct rng *r, struct spool_image *img, size_t block, size_t at,
			uint64_t tag)
{
	struct record_field f[32];
	uint32_t counts[REF__COUNT];
	size_t n = record_schema(tag, f, 32), i, len = 0;
	uint8_t body[32 * (SPOOL_VARINT_MAX + 8)];
	struct image_record *rec;

	spool_image_count(img, block, at, counts);
	for (i = 0; i < n; i++) {
		uint64_t v = f[i].type == FIELD_REF ? (below(r, 4) ? counts[f[i].ref]
						      : pick_ref(r, counts[f[i].ref]))
			     : below(r, 4) ? below(r, 4) : pick_value(r, f[i].type, 1);

		if (f[i].type == FIELD_STR || f[i].type == FIELD_COUNT)
			v = below(r, 4);
		len += spool_put_uvarint(body + len, v);
		if (f[i].type == FIELD_STR) {	/* its bytes: letters */
			memset(body + len, 'a' + (int)below(r, 26), v);
			len += v;
		}
		if (f[i].type == FIELD_COUNT) {	/* its list: empty strings, pid 0 */
			memset(body + len, 0, v);
			len += v;
		}
	}
	rec = image_block_insert(&img->blocks[block], at);
	if (!rec || !(rec->body = malloc(len ? len : 1)))
		return -1;
	memcpy(rec->body, body, len);
	rec->len = len;
	rec->tag = tag;
	return 0;
}

/* Move, drop, double or make up a record. */
static int mutate_records(struct rng *r, struct spool_image *img, size_t block, size_t at)
{
	struct image_block *b = &img->blocks[block];
	struct image_record copy;
	size_t to_block, to;

	switch (below(r, 4)) {
	case 0:
		image_block_remove(b, at);
		return 0;
	case 1:
	case 2:
		if (image_record_copy(&copy, &b->recs[at]) < 0)
			return -1;
		if (below(r, 2))
			image_block_remove(b, at);	/* a move, not a copy */
		to_block = below(r, img->nblocks);
		to = below(r, img->blocks[to_block].nrecs + 1);
		if (!image_block_insert(&img->blocks[to_block], to)) {
			free(copy.body);
			return -1;
		}
		img->blocks[to_block].recs[to] = copy;
		return 0;
	default:
		return synth_record(r, img, block, at + below(r, 2), pick_tag(r) & 0x1f ?: 1);
	}
}

/* Split, join, drop, double or re-encode a block, or damage its header. */
static int mutate_blocks(struct rng *r, struct spool_image *img, size_t block)
{
	struct image_block *b = &img->blocks[block], *nb;
	size_t i, k;

	switch (below(r, 5)) {
	case 0:	/* split at a record: the records after it in a block of their own */
		k = below(r, b->nrecs + 1);
		if (!(nb = spool_image_insert(img, block + 1)))
			return -1;
		b = &img->blocks[block];
		nb->encoding = b->encoding;
		for (i = k; i < b->nrecs; i++) {
			if (!image_block_insert(nb, nb->nrecs))
				return -1;
			nb->recs[nb->nrecs - 1] = b->recs[i];
		}
		b->nrecs = k;
		nb->rest = b->rest;	/* what followed the records still follows them */
		nb->rest_len = b->rest_len;
		b->rest = NULL;
		b->rest_len = 0;
		return 0;
	case 1:	/* join it with the next: a block that holds META and more */
		if (block + 1 >= img->nblocks)
			return 0;
		nb = &img->blocks[block + 1];
		for (i = 0; i < nb->nrecs; i++) {
			if (!image_block_insert(b, b->nrecs))
				return -1;
			b->recs[b->nrecs - 1] = nb->recs[i];
		}
		nb->nrecs = 0;
		spool_image_remove(img, block + 1);
		return 0;
	case 2:
		spool_image_remove(img, block);
		return 0;
	case 3:	/* doubled */
		if (!(nb = spool_image_insert(img, block + 1)))
			return -1;
		b = &img->blocks[block];
		nb->encoding = b->encoding;
		for (i = 0; i < b->nrecs; i++) {
			if (!image_block_insert(nb, nb->nrecs) ||
			    image_record_copy(&nb->recs[nb->nrecs - 1], &b->recs[i]) < 0)
				return -1;
		}
		return 0;
	default:
		/* raw, deflated, deflated by column (invalid below version 4), in turn */
		b->encoding = b->encoding >= SPOOL_ENC_COLUMNS ? SPOOL_ENC_RAW
							       : (uint8_t)(b->encoding + 1);
		return 0;
	}
}

/* One change somewhere in IMG.  0, or -1 when memory ran out. */
static int mutate_once(struct rng *r, struct spool_image *img)
{
	struct image_record *rec;
	size_t block, at;

	if (!img->nblocks)
		return 0;
	rec = pick_record(r, img, &block, &at);
	if (!rec)
		return mutate_blocks(r, img, below(r, img->nblocks));
	switch (below(r, 16)) {
	case 0:
	case 1:
	case 2:
	case 3:
		return mutate_field(r, img, block, at, false);
	case 4:
	case 5:
		return mutate_field(r, img, block, at, true);
	case 6:
		rec->tag = pick_tag(r);
		return 0;
	case 7:
		rec->len_lie = true;
		rec->len_field = below(r, 2) ? rec->len + 1 - 2 * below(r, 2) : pick_boundary(r);
		return 0;
	case 8:
		return mutate_encoding(r, rec);
	case 9:	/* a body cut short: its last fields missing */
		rec->len = below(r, rec->len + 1);
		return 0;
	case 10: {	/* a body longer than its fields: fine, a reader skips the rest */
		size_t more = 1 + below(r, 8), i;
		uint8_t *p = realloc(rec->body, rec->len + more);

		if (!p)
			return -1;
		for (i = 0; i < more; i++)
			p[rec->len + i] = (uint8_t)rnd(r);
		rec->body = p;
		rec->len += more;
		return 0;
	}
	case 11:
		if (rec->len)
			rec->body[below(r, rec->len)] ^= (uint8_t)(1u << below(r, 8));
		return 0;
	case 12:
	case 13:
		return mutate_records(r, img, block, at);
	case 14:
		return mutate_blocks(r, img, block);
	default:	/* the file header: a version, the flags */
		img->header[8 + below(r, 8)] = (uint8_t)(below(r, 2) ? below(r, 4) : rnd(r));
		return 0;
	}
}

/* IMG's bytes into DATA (at most MAX_SIZE): their count, or 0 if they do not fit. */
static size_t put(const struct spool_image *img, uint8_t *data, size_t max_size)
{
	uint8_t *out;
	size_t len;

	if (spool_image_build(img, &out, &len) < 0)
		return 0;
	if (len > max_size) {
		free(out);
		return 0;
	}
	memcpy(data, out, len);
	free(out);
	return len;
}

/* libFuzzer's byte-level mutation, and mostly the checksums redone after it. */
static size_t plain(struct rng *r, uint8_t *data, size_t size, size_t max_size)
{
	size = LLVMFuzzerMutate(data, size, max_size);
	if (below(r, 8))
		spool_reseal(data, size);
	return size;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	struct rng r = { seed };
	struct spool_image img = { 0 };
	size_t n, len = 0;
	int ok;

	if (!below(&r, 8) || spool_image_parse(&img, data, size, MAX_RAW) < 0 || !img.nblocks) {
		spool_image_release(&img);
		return plain(&r, data, size, max_size);
	}
	ok = 1;
	for (n = 1 + below(&r, 3); n-- && ok;)
		ok = mutate_once(&r, &img) == 0;
	if (ok)
		len = put(&img, data, max_size);
	/* now and then a checksum or a length the reader must catch itself */
	if (len > SPOOL_HEADER_LEN && !below(&r, 32))
		data[SPOOL_HEADER_LEN + below(&r, len - SPOOL_HEADER_LEN)] ^=
			(uint8_t)(1u << below(&r, 8));
	spool_image_release(&img);
	return len ? len : plain(&r, data, size, max_size);
}

/* DATA1 with a block of DATA2 put among its blocks, or records of DATA2 among its records. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
				 size_t size2, uint8_t *out, size_t max_out_size, unsigned int seed)
{
	struct rng r = { seed };
	struct spool_image a, b;
	struct image_block *to, *from;
	size_t len = 0, i, k, at;
	int ok = 0;

	memset(&b, 0, sizeof(b));
	if (spool_image_parse(&a, data1, size1, MAX_RAW) < 0 ||
	    spool_image_parse(&b, data2, size2, MAX_RAW) < 0 || !a.nblocks || !b.nblocks)
		goto out;
	from = &b.blocks[below(&r, b.nblocks)];
	if (below(&r, 2)) {
		at = below(&r, a.nblocks + 1);
		to = spool_image_insert(&a, at);
		if (!to)
			goto out;
		*to = *from;	/* taken over: b no longer owns it */
		memset(from, 0, sizeof(*from));
		ok = 1;
	} else {
		to = &a.blocks[below(&r, a.nblocks)];
		k = from->nrecs ? below(&r, from->nrecs) : 0;
		at = below(&r, to->nrecs + 1);
		ok = 1;
		for (i = k; i < from->nrecs && i < k + 8 && ok; i++)
			ok = image_block_insert(to, at) &&
			     image_record_copy(&to->recs[at++], &from->recs[i]) == 0;
	}
	if (ok)
		len = put(&a, out, max_out_size);
out:
	spool_image_release(&a);
	spool_image_release(&b);
	return len;
}
