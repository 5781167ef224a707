/* SPDX-License-Identifier: MIT */
/*
 * perf_ring.h - perf_event_open and the mmap ring protocol: open an event,
 * map its ring, and read records out of it (copying those that wrap).
 * A record may be held in place, read later where the kernel wrote it:
 * the kernel gets its space back only once the holder is done with it.
 * Nothing here knows what a record means; where a record's stack copy
 * lies, its owner may say (stack_of), so that a wrapped one is copied
 * without the part the kernel did not write.
 */
#ifndef PROF_PERF_RING_H
#define PROF_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
	      unsigned long flags);

struct perf_ring {
	int fd;
	int cpu;
	void *base;			/* metadata page, then the data area */
	size_t data_size;		/* a power of two */
	size_t wakeup;			/* the recorder drains it at this much data */
	/*
	 * The most bytes a second the kernel writes into it, for a ring the
	 * recorder comes to by itself as it may reach wakeup
	 * (perf_ring_wait_ns); 0: the kernel wakes it (its fd is polled).
	 */
	uint64_t fill_rate;
	size_t page_size;
	uint8_t *copy;			/* a record that wrapped, made contiguous */
	size_t copy_cap;
	/*
	 * Where record H's stack copy lies, from its first HAVE bytes: true
	 * and its first byte's offset and its size, the u64 after it what
	 * the kernel wrote of it (PERF_SAMPLE_STACK_USER's layout).  NULL:
	 * wrapped records are copied whole.
	 */
	bool (*stack_of)(void *arg, const struct perf_event_header *h, size_t have,
			 size_t *data_off, uint64_t *size);
	void *stack_arg;
	uint64_t head, tail;		/* read window of the current pass */
	/*
	 * Records held in place, in ring order (a queue of held_n from
	 * held_first, the first's ticket held_seq): the kernel's data_tail
	 * stays at the first not yet done.
	 */
	struct perf_ring_hold *held;
	uint32_t held_first, held_n;
	uint64_t held_seq;
};

struct perf_ring_hold {
	uint64_t start;			/* the record's ring position */
	bool done;
};

/* At most this many records of a ring are held at once; more are copied. */
#define PERF_RING_HOLD_MAX 1024

/* Map DATA_PAGES (a power of two) pages of FD's ring.  0 or -errno. */
int perf_ring_map(struct perf_ring *r, int fd, int cpu, size_t data_pages);
void perf_ring_unmap(struct perf_ring *r);

/* Start a read pass: snapshot the kernel's head.  True if data is there. */
bool perf_ring_begin(struct perf_ring *r);

/*
 * The next record of the pass, or NULL at its end.  The pointer is valid
 * until the next call on this ring.
 */
const struct perf_event_header *perf_ring_next(struct perf_ring *r);

/*
 * Hold record H, just returned by perf_ring_next and lying in the ring
 * (not a wrapped one's copy), in place: a ticket for perf_ring_done, or -1
 * when it cannot be held (it wrapped, too much of the ring is held, or the
 * queue is full): the caller copies it then.
 */
int64_t perf_ring_hold(struct perf_ring *r, const struct perf_event_header *h);

/* The holder of TICKET is done with its record; perf_ring_end gives the space back. */
void perf_ring_done(struct perf_ring *r, uint64_t ticket);

/*
 * How long until the kernel, writing at fill_rate, may have filled the
 * ring up to wakeup: 0 when it may be there already, UINT64_MAX for a ring
 * without fill_rate.
 */
uint64_t perf_ring_wait_ns(const struct perf_ring *r);

/* Bytes written and not given back yet (after perf_ring_begin). */
uint64_t perf_ring_used(const struct perf_ring *r);

/* Hold nothing any more: the holders copied their records out. */
void perf_ring_unhold(struct perf_ring *r);

/* Give everything read and not held back to the kernel. */
void perf_ring_end(struct perf_ring *r);

#endif /* PROF_PERF_RING_H */
