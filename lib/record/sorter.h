/* SPDX-License-Identifier: MIT */
/*
 * sorter.h - merges perf records from several rings into timestamp order.
 * Records are copied in; a record leaves only once the watermark passes
 * its time, so an mmap seen on one CPU is applied before a sample taken
 * after it on another.  Equal times keep their insertion order.  A record
 * may instead be referred to where it lies (a sample held in its ring).
 */
#ifndef PROF_SORTER_H
#define PROF_SORTER_H

#include <stddef.h>
#include <stdint.h>

struct sorted_rec {
	uint64_t time;
	uint64_t seq;
	uint32_t len;
	uint32_t cap;		/* bytes data can hold */
	int cpu;		/* the ring it came from (its index) */
	const uint8_t *ref;	/* the record where it lies, or NULL: in data */
	uint64_t ticket;	/* with ref: the ring's, to say when it is done */
	_Alignas(8) uint8_t data[];	/* the perf record, 8-byte aligned as in its ring */
};

#define SORTER_SPARE 64

struct sorter {
	struct sorted_rec **heap;
	size_t len, cap;
	uint64_t seq;
	struct sorted_rec *last;	/* returned by the last pop, recycled by the next */
	/*
	 * Records popped, kept for the next ones: the last freed is the first
	 * taken, still in the CPU's cache, and malloc never gives the memory
	 * back to the system only to fault it in again.
	 */
	struct sorted_rec *spare[SORTER_SPARE];
	size_t nspare;
};

void sorter_init(struct sorter *s);
void sorter_release(struct sorter *s);

/* Copy a record in.  0 or -ENOMEM. */
int sorter_push(struct sorter *s, uint64_t time, int cpu, const void *rec, size_t len);

/* The same, the caller writing the LEN bytes of the record at the pointer it gets; NULL: ENOMEM. */
void *sorter_add(struct sorter *s, uint64_t time, int cpu, size_t len);

/*
 * A record referred to in place, at REC, which must stay there until it is
 * popped and handled (rings are unmapped only with the sorter released).
 * TICKET goes with it.  0 or -ENOMEM.
 */
int sorter_add_ref(struct sorter *s, uint64_t time, int cpu, const void *rec, size_t len,
		   uint64_t ticket);

/*
 * Copy the records of CPU referred to in place into the sorter, each as
 * COPY writes it, in SIZE(record, ARG) bytes.  0 or -ENOMEM.
 */
int sorter_own(struct sorter *s, int cpu, size_t (*size)(const void *rec, void *arg),
	       void (*copy)(void *out, const void *rec, void *arg), void *arg);

/* The bytes of record R. */
static inline const uint8_t *sorted_data(const struct sorted_rec *r)
{
	return r->ref ? r->ref : r->data;
}

/* The oldest record with time <= WATERMARK, or NULL; valid until the next pop. */
const struct sorted_rec *sorter_pop(struct sorter *s, uint64_t watermark);

/* The record the next pop may return, or NULL. */
static inline const struct sorted_rec *sorter_peek(const struct sorter *s)
{
	return s->len ? s->heap[0] : NULL;
}

static inline size_t sorter_len(const struct sorter *s)
{
	return s->len;
}

#endif /* PROF_SORTER_H */
