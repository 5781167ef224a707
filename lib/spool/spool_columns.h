/* SPDX-License-Identifier: MIT */
/*
 * spool_columns.h - block encoding 2 (spool version 4): a block's records
 * laid out by field before deflate, every frame's address after the one
 * before it, every sample's time after the one before it, every symbol's
 * name after the one before it, so that deflate's codes fit each field
 * rather than the mix of all.  On a make -j2's spool the blocks deflate
 * to 18% fewer bytes than the same records in their order.
 *
 * The transform is exact: joining the columns gives back the records byte
 * for byte, so that a reader decodes a block the same whatever its
 * encoding.  man/prof-spool.5 specifies the layout.
 */
#ifndef PROF_SPOOL_COLUMNS_H
#define PROF_SPOOL_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

enum spool_column {
	SPOOL_COL_FRAMING,	/* per record: token (tag << 1 | split), then a count or a length */
	SPOOL_COL_BODIES,	/* the bodies of records kept whole */
	SPOOL_COL_FRAME_KIND,
	SPOOL_COL_FRAME_REF,
	SPOOL_COL_FRAME_ADDR,
	SPOOL_COL_STACK_NODE,
	SPOOL_COL_STACK_PARENT,
	SPOOL_COL_SAMPLE_TIME,
	SPOOL_COL_SAMPLE_THREAD,
	SPOOL_COL_SAMPLE_STACK,
	SPOOL_COL_SAMPLE_PERIOD,
	SPOOL_COL_SAMPLE_CPU,
	SPOOL_COL_SYMBOL_SCOPE,
	SPOOL_COL_SYMBOL_SCOPE_ID,
	SPOOL_COL_SYMBOL_START,
	SPOOL_COL_SYMBOL_SIZE,
	SPOOL_COL_SYMBOL_NAME,
	SPOOL_COL_SYMBOL_NAME_LEN,
	SPOOL_COL_SYMBOL_NAME_BYTES,
	/* an OFFCPU's time, thread and cpu share the SAMPLE's columns */
	SPOOL_COL_OFFCPU_STACK,
	SPOOL_COL_OFFCPU_USER_STACK,
	SPOOL_COL_OFFCPU_DURATION,
	SPOOL_COL_OFFCPU_STATE,
	SPOOL_COL_OFFCPU_END,
	SPOOL_COLUMNS
};

/*
 * What an image may hold beyond the bytes of the records it stands for:
 * its table of column lengths (each below 16 MiB, four bytes at most).
 */
#define SPOOL_COLUMNS_SLACK (SPOOL_COLUMNS * 4)

struct spool_column_buf {
	uint8_t *p;
	size_t len, cap;
};

/* The writer's scratch, reused block after block. */
struct spool_columns {
	struct spool_column_buf col[SPOOL_COLUMNS];
	struct spool_column_buf image;
};

void spool_columns_release(struct spool_columns *c);

/*
 * The records RAW[0, LEN) as a column image, in c->image: 1, or 0 when
 * there are none or they are not records in their shortest form (the block
 * is then deflated as it is), or -ENOMEM.
 */
int spool_columns_split(struct spool_columns *c, const uint8_t *raw, size_t len);

/*
 * The records of the image IMG[0, LEN) into RAW, which they must fill
 * exactly RAW_LEN bytes: NULL, or why the image is invalid.
 */
const char *spool_columns_join(const uint8_t *img, size_t len, uint8_t *raw, size_t raw_len);

#endif /* PROF_SPOOL_COLUMNS_H */
