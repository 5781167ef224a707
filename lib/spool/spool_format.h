/* SPDX-License-Identifier: MIT */
/*
 * spool_format.h - the byte layout of the spool format (versions 1 to 4):
 * the file header, the block header, the record tags and trailer keys, and
 * the varint codec, all that the writer and the reader share.  Only this
 * header knows the layout; man/prof-spool.5 is its specification and must
 * change with it.
 */
#ifndef PROF_SPOOL_FORMAT_H
#define PROF_SPOOL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* File header: magic, u16 major, u16 minor, u32 flags (all little-endian). */
#define SPOOL_MAGIC "\x89PRF\r\n\x1a\n"
#define SPOOL_MAGIC_LEN 8
#define SPOOL_HEADER_LEN 16
#define SPOOL_VERSION_MAJOR 4	/* the version this writer writes */
/*
 * Minor version 1 (trailer keys 17 and 18, meta flag SYSTEM) only where
 * they are used, a recording of the whole machine: every other spool stays
 * byte for byte what it was.
 */
#define SPOOL_VERSION_MINOR 0
#define SPOOL_VERSION_MINOR_SYSTEM 1
/*
 * A spool that may hold off-CPU records is version 2.0: a reader of 1.x
 * would not know the record, and says so at once rather than stop midway.
 */
#define SPOOL_VERSION_MAJOR_OFFCPU 2
#define SPOOL_VERSION_MAJOR_V1 1
/*
 * Version 3 (the off-CPU records of 2 allowed) stores references as
 * distances: a STACK's parent and frame, a SAMPLE's stack counted back
 * from the newest definition, a FRAME's address and a SYMBOL's start as
 * the difference from the record of its kind before, and a SYMBOL's name
 * as a reference to an earlier one.  New stack nodes mostly extend the
 * newest one with the newest frame: their fields become one byte each.
 */
#define SPOOL_VERSION_MAJOR_DELTA 3
/*
 * Version 4 is version 3 with one block encoding more, its records split
 * into columns before deflate (spool_columns.h): a reader of 3 could not
 * inflate such a block, and says so at once from the header.
 */
#define SPOOL_VERSION_MAJOR_COLUMNS 4

/*
 * Block header: u32 magic "PBLK", u32 stored_len, u32 raw_len, u8 encoding,
 * 3 zero bytes, u32 crc32 of those 16 bytes, u32 crc32 of the payload.  The
 * header has its own checksum so that a damaged length is told apart from
 * a block still being written, at once.
 */
#define SPOOL_BLOCK_MAGIC 0x4b4c4250u	/* "PBLK" read as little-endian */
#define SPOOL_BLOCK_HEADER_LEN 24
#define SPOOL_BLOCK_MAX (16u << 20)	/* raw or stored payload */
#define SPOOL_DEFLATE_MAX_RATIO 1032u	/* deflate cannot expand data more */

/*
 * The level prof's writer deflates at (libdeflate's): on a make -j2's
 * blocks two thirds of level 6's time, for a spool 0.5% bigger; level 1
 * halves the time again, for 6% more bytes.  Readers need not know it.
 */
#define SPOOL_DEFLATE_LEVEL 4

enum spool_encoding {
	SPOOL_ENC_RAW = 0,
	SPOOL_ENC_DEFLATE = 1,	/* zlib stream (RFC 1950) */
	SPOOL_ENC_COLUMNS = 2,	/* zlib stream of a column image: version 4 */
};

/*
 * Records: uvarint tag, uvarint body length, body.  Tags below
 * SPOOL_TAG_OPTIONAL are critical (an unknown one stops a reader); tags from
 * it up may be skipped.  A body longer than the fields a reader knows is
 * fine: the rest is ignored (fields are only ever appended).
 */
enum spool_tag {
	SPOOL_TAG_META = 1,
	SPOOL_TAG_PROCESS = 2,
	SPOOL_TAG_THREAD = 3,
	SPOOL_TAG_THREAD_NAME = 4,
	SPOOL_TAG_EXEC = 5,
	SPOOL_TAG_PROCESS_EXIT = 6,
	SPOOL_TAG_THREAD_EXIT = 7,
	SPOOL_TAG_MODULE = 8,
	SPOOL_TAG_MODULE_RETIRE = 9,
	SPOOL_TAG_FRAME = 10,
	SPOOL_TAG_STACK = 11,
	SPOOL_TAG_SAMPLE = 12,
	SPOOL_TAG_LOST = 13,
	SPOOL_TAG_SYMBOL = 14,
	SPOOL_TAG_TRAILER = 15,
	SPOOL_TAG_OFFCPU = 16,	/* version 2 */
	SPOOL_TAG_OPTIONAL = 64,
};

/* Counter keys of the TRAILER record: (uvarint key, uvarint value) pairs. */
enum spool_counter_key {
	SPOOL_CNT_SAMPLES = 1,
	SPOOL_CNT_SAMPLE_EVENTS = 2,
	SPOOL_CNT_EMPTY_STACKS = 3,
	SPOOL_CNT_TRUNCATED_STACKS = 4,
	SPOOL_CNT_PROCESSES = 5,
	SPOOL_CNT_THREADS = 6,
	SPOOL_CNT_LIFECYCLE_GAPS = 7,
	SPOOL_CNT_RECONCILIATIONS = 8,
	SPOOL_CNT_MONO_END = 9,
	SPOOL_CNT_WALL_END = 10,
	SPOOL_CNT_FRAMES = 11,
	SPOOL_CNT_OFFCPU_INTERVALS = 12,	/* these five in version 2 spools only */
	SPOOL_CNT_OFFCPU_NS = 13,
	SPOOL_CNT_OFFCPU_UNSAMPLED = 14,
	SPOOL_CNT_SWITCH_EVENTS = 15,
	SPOOL_CNT_OFFCPU_TRUNCATED = 16,
	SPOOL_CNT_IDLE_SAMPLES = 17,	/* minor version 1: the whole machine */
	SPOOL_CNT_CPUS = 18,
	SPOOL_CNT_PYTHON_FRAMES = 19,	/* written only when not 0, as 17 and 18 */
	SPOOL_CNT_PYTHON_STALE = 20,
	SPOOL_CNT_PYTHON_UNREAD = 21,
	SPOOL_CNT_JIT_MAP_NAMES = 22,	/* written only when not 0, as 19 to 21 */
	SPOOL_CNT_JITDUMP_NAMES = 23,
	SPOOL_CNT_LOST_BASE = 32,	/* + enum prof_lost_kind */
	SPOOL_CNT_UNWIND_BASE = 64,	/* + enum prof_unwind_error */
	SPOOL_CNT_FALLBACK_BASE = 96,	/* + enum prof_unwind_fallback */
};

#define SPOOL_VARINT_MAX 10

static inline size_t spool_put_uvarint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t spool_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t spool_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * Decode a uvarint from [*p, end).  False when it runs past END, is longer
 * than 10 bytes, or overflows 64 bits; *p is then unspecified.
 */
static inline bool spool_get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift == 63 && b > 1)
			return false;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return true;
		}
		shift += 7;
		if (shift > 63)
			return false;
	}
	return false;
}

static inline void spool_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t spool_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void spool_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline uint16_t spool_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* The fields of the file header after its magic. */
struct spool_file_header {
	uint16_t major, minor;
	uint32_t flags;		/* none defined: a writer writes 0 */
};

/* The SPOOL_HEADER_LEN bytes of a file header, its magic first, into H. */
static inline void spool_file_header_pack(uint8_t *h, const struct spool_file_header *f)
{
	memcpy(h, SPOOL_MAGIC, SPOOL_MAGIC_LEN);
	spool_put_le16(h + 8, f->major);
	spool_put_le16(h + 10, f->minor);
	spool_put_le32(h + 12, f->flags);
}

/* The file header at H into *RET: false (*RET unset) when its magic is not a spool's. */
static inline bool spool_file_header_unpack(const uint8_t *h, struct spool_file_header *ret)
{
	if (memcmp(h, SPOOL_MAGIC, SPOOL_MAGIC_LEN))
		return false;
	ret->major = spool_get_le16(h + 8);
	ret->minor = spool_get_le16(h + 10);
	ret->flags = spool_get_le32(h + 12);
	return true;
}

/* The fields of a block header. */
struct spool_block_header {
	uint32_t magic;		/* SPOOL_BLOCK_MAGIC; packing writes it always */
	uint32_t stored_len;	/* payload bytes in the file */
	uint32_t raw_len;	/* bytes of records it decodes to */
	uint8_t encoding;	/* enum spool_encoding */
	uint8_t reserved[3];	/* zero */
	uint32_t payload_crc;	/* crc32 of the stored payload */
};

#define SPOOL_BLOCK_HEADER_CRC_LEN 16	/* the bytes the header's own checksum covers */

/* The SPOOL_BLOCK_HEADER_LEN bytes of block header B into H, its own checksum computed. */
static inline void spool_block_header_pack(uint8_t *h, const struct spool_block_header *b)
{
	spool_put_le32(h, SPOOL_BLOCK_MAGIC);
	spool_put_le32(h + 4, b->stored_len);
	spool_put_le32(h + 8, b->raw_len);
	h[12] = b->encoding;
	memcpy(h + 13, b->reserved, sizeof(b->reserved));
	spool_put_le32(h + 16, (uint32_t)crc32(0, h, SPOOL_BLOCK_HEADER_CRC_LEN));
	spool_put_le32(h + 20, b->payload_crc);
}

/*
 * The block header at H into *RET: true when its own checksum matches.
 * Whether its fields make sense is the caller's to check.
 */
static inline bool spool_block_header_unpack(const uint8_t *h, struct spool_block_header *ret)
{
	ret->magic = spool_get_le32(h);
	ret->stored_len = spool_get_le32(h + 4);
	ret->raw_len = spool_get_le32(h + 8);
	ret->encoding = h[12];
	memcpy(ret->reserved, h + 13, sizeof(ret->reserved));
	ret->payload_crc = spool_get_le32(h + 20);
	return spool_get_le32(h + 16) == (uint32_t)crc32(0, h, SPOOL_BLOCK_HEADER_CRC_LEN);
}

#endif /* PROF_SPOOL_FORMAT_H */
