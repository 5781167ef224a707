/* SPDX-License-Identifier: MIT */
/*
 * perf_ring.h - perf_event_open and the mmap ring protocol: open an event,
 * map its ring, and read records out of it (copying those that wrap).
 * Nothing here knows what a record means.
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
	size_t page_size;
	uint8_t *copy;			/* a record that wrapped, made contiguous */
	size_t copy_cap;
	uint64_t head, tail;		/* read window of the current pass */
};

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

/* Give everything read in this pass back to the kernel. */
void perf_ring_end(struct perf_ring *r);

#endif /* PROF_PERF_RING_H */
