/* SPDX-License-Identifier: MIT */
/*
 * spool_image.h - a spool taken apart in memory: its file header, its
 * blocks (inflated) and each block's records, which can be edited (a field,
 * a tag, a length, whole records and blocks) and put back together with
 * every length, compression and checksum redone, so that the reader gets
 * past its checksums to what was changed.  For the fuzzer's mutator
 * (mutate.c), the replay driver, the unit tests and tests/tools/spooledit.
 * The layout is lib/spool/spool_format.h's; man/prof-spool.5 specifies it.
 */
#ifndef PROF_SPOOL_IMAGE_H
#define PROF_SPOOL_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool/spool_format.h"

struct image_record {
	uint64_t tag;
	uint8_t *body;
	size_t len;
	bool len_lie;		/* write len_field as its length, not len */
	uint64_t len_field;
};

struct image_block {
	uint8_t encoding;	/* as found, and written back so: 1 deflates, 2 deflates columns, any other stores */
	struct image_record *recs;
	size_t nrecs, recs_cap;
	uint8_t *rest;		/* bytes after the last whole record, kept as they were */
	size_t rest_len;
};

struct spool_image {
	uint8_t header[SPOOL_HEADER_LEN];
	struct image_block *blocks;
	size_t nblocks, blocks_cap;
	uint8_t *tail;		/* what follows the last block that could be taken apart */
	size_t tail_len;
};

/*
 * Redo, in place, the checksums of every block of the LEN bytes at P whose
 * header has the block magic and a payload that fits: what a change of a
 * few bytes broke, mended, so that the reader looks further.
 */
void spool_reseal(uint8_t *p, size_t len);

/*
 * Take the LEN bytes at P apart into IMG (which the caller releases, also
 * on error).  Checksums are not checked: they are redone on build.  Blocks
 * are taken while their header's lengths hold and their payload inflates
 * to at most max_raw bytes (0: SPOOL_BLOCK_MAX); the rest is the tail.
 * 0, -EINVAL for fewer bytes than a file header, or -ENOMEM.
 */
int spool_image_parse(struct spool_image *img, const uint8_t *p, size_t len, size_t max_raw);

/* The bytes of IMG, in *RET (the caller frees it), their count in *RET_LEN.  0 or -ENOMEM. */
int spool_image_build(const struct spool_image *img, uint8_t **ret, size_t *ret_len);

void spool_image_release(struct spool_image *img);

/* Room for one more record at index AT of B (moved up): the record, or NULL on ENOMEM. */
struct image_record *image_block_insert(struct image_block *b, size_t at);

/* Remove record AT of B. */
void image_block_remove(struct image_block *b, size_t at);

/* Room for one more block at index AT of IMG, empty: the block, or NULL on ENOMEM. */
struct image_block *spool_image_insert(struct spool_image *img, size_t at);

/* Remove block AT of IMG. */
void spool_image_remove(struct spool_image *img, size_t at);

/* A copy of record FROM into TO (its body a new allocation).  0 or -ENOMEM. */
int image_record_copy(struct image_record *to, const struct image_record *from);

/* What a record field holds, as prof-spool(5) lists the fields of its tag. */
enum field_type {
	FIELD_UV,	/* uv, uv32 */
	FIELD_SV,	/* sv, sv32, time */
	FIELD_COUNT,	/* the count of the list after it (argc, npids) */
	FIELD_STR,	/* the byte count of a str or bytes: the bytes follow */
	FIELD_REF,	/* an id of kind .ref */
};

/* What an id refers to: the kinds of definition records refer to. */
enum ref_kind {
	REF_PROCESS,
	REF_THREAD,
	REF_MODULE,
	REF_FRAME,
	REF_STACK,
	REF__COUNT
};

struct record_field {
	const char *name;	/* prof-spool(5)'s, such as "duration" */
	enum field_type type;
	enum ref_kind ref;	/* for FIELD_REF */
	size_t off, len;	/* its varint in the body */
	uint64_t value;		/* as stored (zigzagged, for FIELD_SV) */
};

/*
 * The fields of a body of tag TAG, in order, into FIELDS (at most MAX):
 * how many there are, up to the first one the body cuts short.  A tag
 * prof-spool(5) does not define has none.
 */
size_t record_fields(uint64_t tag, const uint8_t *body, size_t len, struct record_field *fields,
		     size_t max);

/*
 * The fields a body of tag TAG has, without a body: their names and types
 * into FIELDS (at most MAX), a list's count standing for the list, the
 * TRAILER's pairs for one pair.  How many there are.
 */
size_t record_schema(uint64_t tag, struct record_field *fields, size_t max);

/* The field named NAME of R into *RET: true if R's body has it. */
bool image_record_field(const struct image_record *r, const char *name, struct record_field *ret);

/* Put the LEN bytes at P in place of the varint of field F of R.  0 or -ENOMEM. */
int image_record_splice(struct image_record *r, const struct record_field *f, const uint8_t *p,
			size_t len);

/* Set field F of R to V, shortest form (V as stored: zigzag a FIELD_SV first).  0 or -ENOMEM. */
int image_record_set(struct image_record *r, const struct record_field *f, uint64_t v);

/* The tag of the record kind named NAME ("OFFCPU"), or 0. */
uint64_t record_tag_of(const char *name);

/* The kind of definition a record of tag TAG makes, or REF__COUNT for none. */
enum ref_kind record_defines(uint64_t tag);

/*
 * How many definitions of each kind the records before record REC of
 * block BLOCK make, in COUNTS (REF__COUNT of them): the last id defined.
 */
void spool_image_count(const struct spool_image *img, size_t block, size_t rec,
		       uint32_t counts[REF__COUNT]);

#endif /* PROF_SPOOL_IMAGE_H */
