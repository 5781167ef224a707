/* SPDX-License-Identifier: MIT */
/*
 * test-spool-columns.c - block encoding 2: records split into columns join
 * back byte for byte (a real recording's blocks, the writer's own, and
 * records that do not fit the columns), and an image that breaks a rule of
 * prof-spool(5) is refused, each with its reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prof.h"
#include "spool/spool_columns.h"
#include "tests/fuzz/spool_image.h"
#include "spool_test.h"

/* The records of block B as the block holds them. */
static size_t block_records(const struct image_block *b, uint8_t *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i < b->nrecs; i++) {
		const struct image_record *r = &b->recs[i];

		if (n + 2 * SPOOL_VARINT_MAX + r->len > cap)
			abort();
		n += spool_put_uvarint(out + n, r->tag);
		n += spool_put_uvarint(out + n, r->len);
		memcpy(out + n, r->body, r->len);
		n += r->len;
	}
	return n;
}

/* Split RAW, join the image: the same bytes.  The image's length into *IMG_LEN. */
static void round_trip(struct spool_columns *c, const uint8_t *raw, size_t len, size_t *img_len)
{
	uint8_t *back = malloc(len + 1);

	CHECK(back);
	CHECK_INT(spool_columns_split(c, raw, len), ==, 1);
	CHECK(c->image.len <= len + SPOOL_COLUMNS_SLACK);
	*img_len = c->image.len;
	back[len] = 0x5a;
	CHECK(!spool_columns_join(c->image.p, c->image.len, back, len));
	CHECK(!memcmp(back, raw, len));
	CHECK_INT(back[len], ==, 0x5a);
	free(back);
}

/* Every block of the spool P split and joined; the bytes of each column in all into COLS. */
static void round_trip_spool(const uint8_t *p, size_t len, size_t *nblocks, size_t *raw_total,
			     size_t *img_total, size_t cols[SPOOL_COLUMNS])
{
	static uint8_t raw[1 << 20];
	struct spool_columns c = { 0 };
	struct spool_image img;
	size_t i, j, n, k;

	CHECK_INT(spool_image_parse(&img, p, len, 0), ==, 0);
	CHECK_INT(img.tail_len, ==, 0);
	for (i = 0; i < img.nblocks; i++) {
		n = block_records(&img.blocks[i], raw, sizeof(raw));
		CHECK_CALL(round_trip(&c, raw, n, &k));
		for (j = 0; j < SPOOL_COLUMNS; j++)
			cols[j] += c.col[j].len;
		*raw_total += n;
		*img_total += k;
	}
	*nblocks = img.nblocks;
	spool_columns_release(&c);
	spool_image_release(&img);
}

static size_t read_corpus(const char *name, uint8_t *buf, size_t cap)
{
	char path[256];
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s", name);
	f = fopen(path, "rb");
	if (!f)
		return 0;
	len = fread(buf, 1, cap, f);
	fclose(f);
	return len;
}

TEST(spool_columns_join_back_a_recordings_blocks_byte_for_byte)
{
	struct membuf mb = { 0 };
	size_t nblocks = 0, raw = 0, img = 0, cols[SPOOL_COLUMNS] = { 0 }, len, i;
	static uint8_t buf[1 << 16];

	/* a recording of tests/targets/forker by prof, every kind of record in it */
	len = read_corpus("v3-real.spool", buf, sizeof(buf));
	CHECK_INT(len, >, 0);
	CHECK_CALL(round_trip_spool(buf, len, &nblocks, &raw, &img, cols));
	CHECK_INT(nblocks, >=, 2);
	/* frames, stacks and samples lose their lengths */
	CHECK_INT(img, <, raw);
	for (i = SPOOL_COL_FRAMING; i <= SPOOL_COL_SYMBOL_NAME_BYTES; i++)
		CHECK_INT(cols[i], >, 0);
	/* off-CPU intervals */
	len = read_corpus("v3-offcpu.spool", buf, sizeof(buf));
	CHECK_INT(len, >, 0);
	memset(cols, 0, sizeof(cols));
	CHECK_CALL(round_trip_spool(buf, len, &nblocks, &raw, &img, cols));
	for (i = SPOOL_COL_OFFCPU_STACK; i <= SPOOL_COL_OFFCPU_END; i++)
		CHECK_INT(cols[i], >, 0);
	/* and the writer's own, of records of every kind */
	write_rich(&mb, 300, true);
	nblocks = raw = img = 0;
	CHECK_CALL(round_trip_spool(mb.p, mb.len, &nblocks, &raw, &img, cols));
	CHECK_INT(nblocks, >=, 3);
	free(mb.p);
}

TEST(spool_columns_keep_records_whole_that_do_not_fit_them)
{
	/*
	 * A SAMPLE with a field appended, a FRAME cut inside its last frame,
	 * an empty STACK, a SYMBOL whose name runs past its body, an optional
	 * tag, an empty body: each kept whole, the block the same.
	 */
	static const uint8_t raw[] = {
		12, 6, 1, 2, 3, 4, 5, 6,
		10, 5, 1, 1, 0x10, 1, 1,
		11, 0,
		14, 7, 2, 1, 0x20, 4, 0, 9, 'x',
		70, 3, 'a', 'b', 'c',
		13, 0,
		12, 5, 1, 2, 3, 4, 5,
		10, 3, 1, 1, 0x7f,
		11, 3, 2, 3, 6,
		14, 8, 2, 1, 0x20, 4, 0, 2, 'h', 'i',
	};
	struct spool_columns c = { 0 };
	uint8_t back[sizeof(raw)];
	size_t k;

	CHECK_CALL(round_trip(&c, raw, sizeof(raw), &k));
	/* the seven kept whole: their bodies in that column, 26 bytes */
	CHECK_INT(c.col[SPOOL_COL_BODIES].len, ==, 6 + 5 + 0 + 7 + 3 + 0);
	/* a byte fewer is not what the columns hold */
	CHECK_STR(spool_columns_join(c.image.p, c.image.len, back, sizeof(back) - 1),
		  "columns hold more than the block's records");
	spool_columns_release(&c);
}

TEST(spool_columns_leave_a_block_whose_lengths_are_not_shortest_to_deflate)
{
	static const uint8_t padded_len[] = { 12, 0x85, 0x00, 1, 2, 3, 4, 5 };
	static const uint8_t padded_tag[] = { 0x8c, 0x00, 5, 1, 2, 3, 4, 5 };
	static const uint8_t past_end[] = { 12, 9, 1, 2, 3 };
	static const uint8_t huge_tag[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x01, 0 };
	struct spool_columns c = { 0 };

	CHECK_INT(spool_columns_split(&c, padded_len, sizeof(padded_len)), ==, 0);
	CHECK_INT(spool_columns_split(&c, padded_tag, sizeof(padded_tag)), ==, 0);
	CHECK_INT(spool_columns_split(&c, past_end, sizeof(past_end)), ==, 0);
	CHECK_INT(spool_columns_split(&c, huge_tag, sizeof(huge_tag)), ==, 0);
	spool_columns_release(&c);
}

/* An image of COLS (lengths from the strings' sizes) into OUT: its length. */
static size_t image(uint8_t *out, const char *const cols[SPOOL_COLUMNS],
		    const size_t lens[SPOOL_COLUMNS])
{
	size_t n = 0, i;

	for (i = 0; i < SPOOL_COLUMNS; i++)
		n += spool_put_uvarint(out + n, lens[i]);
	for (i = 0; i < SPOOL_COLUMNS; i++) {
		memcpy(out + n, cols[i], lens[i]);
		n += lens[i];
	}
	return n;
}

TEST(spool_columns_refuse_an_image_that_breaks_a_rule)
{
	const char *cols[SPOOL_COLUMNS] = { 0 };
	size_t lens[SPOOL_COLUMNS] = { 0 }, n, i;
	uint8_t img[256], raw[64];

	for (i = 0; i < SPOOL_COLUMNS; i++)
		cols[i] = "";
	/* one split SAMPLE: 12 << 1 | 1 = 25; its five fields, one byte each */
	cols[SPOOL_COL_FRAMING] = "\x19";
	lens[SPOOL_COL_FRAMING] = 1;
	for (i = SPOOL_COL_SAMPLE_TIME; i <= SPOOL_COL_SAMPLE_CPU; i++) {
		cols[i] = "\x07";
		lens[i] = 1;
	}
	n = image(img, cols, lens);
	CHECK(!spool_columns_join(img, n, raw, 7));
	CHECK(!memcmp(raw, "\x0c\x05\x07\x07\x07\x07\x07", 7));
	CHECK_STR(spool_columns_join(img, n, raw, 8), "columns hold fewer than the block's records");
	CHECK_STR(spool_columns_join(img, n, raw, 6), "columns hold more than the block's records");
	CHECK_STR(spool_columns_join(img, n - 1, raw, 7), "column longer than the image");
	CHECK_STR(spool_columns_join(img, 10, raw, 7), "column image cut short in its table");
	img[n] = 0;
	CHECK_STR(spool_columns_join(img, n + 1, raw, 7), "column image longer than its columns");
	/* the sample's cpu column empty: the record runs past it */
	lens[SPOOL_COL_SAMPLE_CPU] = 0;
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "split record past the end of a column");
	/* a byte more in the cpu column than the one sample takes */
	cols[SPOOL_COL_SAMPLE_CPU] = "\x07\x07";
	lens[SPOOL_COL_SAMPLE_CPU] = 2;
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "column holds more than its records take");
	/* a split token of a tag that has no columns (META, 1 << 1 | 1) */
	cols[SPOOL_COL_FRAMING] = "\x03";
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "split record of a tag without columns");
	/* a split FRAME of no frames */
	cols[SPOOL_COL_FRAMING] = "\x15\x00";
	lens[SPOOL_COL_FRAMING] = 2;
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "split record of no frames or nodes");
	/* a FRAME token with its count missing, a whole record with its length missing */
	lens[SPOOL_COL_FRAMING] = 1;
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "column framing cut short");
	cols[SPOOL_COL_FRAMING] = "\x18";
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "column framing cut short");
	/* a whole record longer than the bodies column */
	cols[SPOOL_COL_FRAMING] = "\x18\x05";
	lens[SPOOL_COL_FRAMING] = 2;
	for (i = SPOOL_COL_SAMPLE_TIME; i <= SPOOL_COL_SAMPLE_CPU; i++)
		lens[i] = 0;
	cols[SPOOL_COL_BODIES] = "\x01\x02";
	lens[SPOOL_COL_BODIES] = 2;
	n = image(img, cols, lens);
	CHECK_STR(spool_columns_join(img, n, raw, 7), "record body past its column");
}
