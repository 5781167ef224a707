/* SPDX-License-Identifier: MIT */
/*
 * perf_sample.h - the fields of perf's records, read as the event's
 * attributes laid them out: a sample's (PERF_RECORD_SAMPLE, by its
 * sample_type, sample_regs_user and the stack it asked for) and the
 * sample_id trailer every other record carries with sample_id_all, as
 * perf's evsel__parse_sample() and perf_evsel__parse_id_sample() do.  The
 * one place that knows where a field is; the kernel's record is trusted
 * for nothing: a record too short for its fields is malformed.  A record
 * is 8-byte aligned, as the kernel writes them into its ring (and the
 * ring reader and the sorter keep them), so a sample's registers are read
 * where they are, not copied: they are on every sample's path.
 */
#ifndef PROF_PERF_SAMPLE_H
#define PROF_PERF_SAMPLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/regs_x86_64.h"

/* What the attributes chose, for the records of their events. */
struct perf_sample_layout {
	uint64_t sample_type;		/* PERF_SAMPLE_* */
	bool sample_id_all;		/* the other records carry a sample_id trailer */
};

/*
 * The layout of the records of events with attributes A: 0, or -ENOTSUP
 * when A asks for a field this parser does not read (PERF_SAMPLE_READ,
 * BRANCH_STACK and those after STACK_USER), or for user registers other
 * than SAMPLE_REGS_MASK.
 */
int perf_sample_layout_of(const struct perf_event_attr *a, struct perf_sample_layout *ret);

/* A sample, its pointers into the record it was parsed from.  A field not asked for is 0. */
struct perf_sample {
	uint64_t id;			/* IDENTIFIER, else ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	uint64_t nchain;		/* CALLCHAIN: so many u64 entries at chain */
	const uint8_t *chain;
	uint64_t regs_abi;		/* PERF_SAMPLE_REGS_ABI_*; NONE: no registers */
	const uint64_t *regs;		/* SAMPLE_REGS_COUNT, by enum sample_reg; NULL: none */
	/*
	 * STACK_USER: the copy the attributes asked for (stack_size bytes at
	 * stack, NULL when 0), of which the first stack_dyn hold the stack;
	 * stack_off is where the copy's size field is in the record.
	 */
	const uint8_t *stack;
	uint64_t stack_size, stack_dyn;
	size_t stack_off;
};

/*
 * Parse sample record H (of H->size bytes) laid out as L into *RET.  0,
 * or -EBADMSG when H is not a sample, is not 8-byte aligned, or is too
 * short or malformed for its fields (a callchain longer than the record,
 * a register ABI the kernel does not write, a stack that holds more than
 * was copied).  *RET is not to be used after a failure.
 */
int perf_sample_parse(const struct perf_sample_layout *l, const struct perf_event_header *h,
		      struct perf_sample *ret);

/*
 * Where the stack copy of sample H lies, from its first HAVE bytes (its
 * header says its whole size): 0, *DATA_OFF the offset of the copy's first
 * byte and *SIZE the copy's size, the u64 after it saying how much of it
 * holds stack; -EBADMSG when H has no copy, or HAVE bytes do not reach it.
 * For a record that wraps the ring's end (perf_ring.c): only what the
 * kernel wrote of the copy is copied out with it.
 */
int perf_sample_stack_span(const struct perf_sample_layout *l, const struct perf_event_header *h,
			   size_t have, size_t *data_off, uint64_t *size);

/*
 * The time of sample H alone, from where L puts it (the fields before it
 * have fixed sizes): 0, or -EBADMSG when L has no time or H is too short
 * for it.  The ring's drain orders a sample by it and parses the rest when
 * it unwinds it: perf_sample_parse() reads the copy's size at the end of
 * the record, a page (and in a VM a costly TLB miss) away from its head.
 */
int perf_sample_time(const struct perf_sample_layout *l, const struct perf_event_header *h,
		     uint64_t *ret);

/*
 * The record S was parsed from (H), its stack copy cut to what it holds:
 * its size, or H->size when there is nothing to cut.  A sample carries the
 * whole copy it asked for (PROF_DEFAULT_STACK bytes by default), however
 * little of it is stack.
 */
static inline size_t perf_sample_trimmed_size(const struct perf_event_header *h,
					      const struct perf_sample *s)
{
	return h->size - (size_t)(s->stack_size - s->stack_dyn);
}

/* Write that record (perf_sample_trimmed_size() bytes) to OUT: the copy's size now stack_dyn. */
void perf_sample_trim(const struct perf_event_header *h, const struct perf_sample *s, void *out);

/* The sample_id trailer of a record other than a sample; a field not asked for is 0. */
struct perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

/*
 * Parse the trailer of record H laid out as L into *RET.  0, or -EBADMSG
 * when H is a sample, or is too short for a body and the trailer, or L has
 * no trailers.
 */
int perf_sample_id_parse(const struct perf_sample_layout *l, const struct perf_event_header *h,
			 struct perf_sample_id *ret);

/*
 * The body of record H (not a sample): what lies between its header and
 * its sample_id trailer, *RET_LEN bytes of it.  NULL when H is too short
 * for the trailer L says it has.
 */
const uint8_t *perf_record_body(const struct perf_sample_layout *l,
				const struct perf_event_header *h, size_t *ret_len);

/*
 * The bodies of the side-band records the recorder reads, as
 * include/uapi/linux/perf_event.h lays them out (it names no structs).
 */
struct perf_mmap2_body {	/* PERF_RECORD_MMAP2, then the file's name, NUL-padded */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

/* The same with PERF_RECORD_MISC_MMAP_BUILD_ID: the file's build-id for device and inode. */
struct perf_mmap2_build_id_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint8_t build_id_size, reserved1;
	uint16_t reserved2;
	uint8_t build_id[20];
	uint32_t prot, flags;
};

struct perf_comm_body {		/* PERF_RECORD_COMM, then the name, NUL-padded */
	uint32_t pid, tid;
};

struct perf_task_body {		/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct perf_lost_body {		/* PERF_RECORD_LOST */
	uint64_t id, lost;
};

struct perf_lost_samples_body {	/* PERF_RECORD_LOST_SAMPLES */
	uint64_t lost;
};

_Static_assert(sizeof(struct perf_mmap2_body) == 64, "the kernel's PERF_RECORD_MMAP2 layout");
_Static_assert(sizeof(struct perf_mmap2_build_id_body) == 64, "PERF_RECORD_MMAP2 with a build-id");
_Static_assert(sizeof(struct perf_task_body) == 24, "the kernel's PERF_RECORD_FORK layout");

#endif /* PROF_PERF_SAMPLE_H */
