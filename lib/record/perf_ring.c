/* SPDX-License-Identifier: MIT */
/*
 * perf_ring.c - the reader side of a perf mmap ring, following the
 * kernel's protocol: load data_head with acquire ordering, read records up
 * to it, then store data_tail with release ordering so the kernel may
 * reuse the space.  A record that wraps around the end of the data area is
 * copied into a buffer so callers always see it contiguous (a sample's
 * stack copy only as far as the kernel wrote it).  A sample
 * held in place (its stack copy is most of it: copying it out costs more
 * than unwinding it) keeps data_tail behind it until it is done with.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "perf_ring.h"

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
	      unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int perf_ring_map(struct perf_ring *r, int fd, int cpu, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *base;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cpu = cpu;
	base = mmap(NULL, (data_pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	r->held = calloc(PERF_RING_HOLD_MAX, sizeof(*r->held));
	if (!r->held) {
		munmap(base, (data_pages + 1) * page);
		return -ENOMEM;
	}
	r->base = base;
	r->page_size = page;
	r->data_size = data_pages * page;
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->data_size + r->page_size);
	free(r->copy);
	free(r->held);
	r->held = NULL;
	r->held_n = 0;
	r->base = NULL;
	r->copy = NULL;
	r->copy_cap = 0;
}

bool perf_ring_begin(struct perf_ring *r)
{
	struct perf_event_mmap_page *meta = r->base;

	r->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	/* while records are held, data_tail lags behind what was read */
	if (!r->held_n)
		r->tail = meta->data_tail;
	return r->head != r->tail;
}

/* Bytes [FROM, FROM + N) of the record at data offset OFF, into the copy at FROM. */
static void copy_part(struct perf_ring *r, size_t off, size_t from, size_t n)
{
	const uint8_t *data = (const uint8_t *)r->base + r->page_size;
	size_t at = (off + from) & (r->data_size - 1), first = r->data_size - at;

	if (first >= n) {
		memcpy(r->copy + from, data + at, n);
	} else {
		memcpy(r->copy + from, data + at, first);
		memcpy(r->copy + from + first, data, n - first);
	}
}

/* Enough for every field before a sample's stack copy. */
#define WRAP_HEAD 1024

/*
 * The record of SIZE bytes at data offset OFF, which wraps, into the copy
 * but for the part of its stack copy the kernel did not write (a sample's
 * is mostly that: 64 KiB asked, a few KiB of stack): false when its owner
 * cannot say where that is, and it is to be copied whole.
 */
static bool copy_sparse(struct perf_ring *r, size_t off, size_t size)
{
	size_t head = size < WRAP_HEAD ? size : WRAP_HEAD, at;
	uint64_t stack, used;

	copy_part(r, off, 0, head);
	if (head == size)
		return true;
	if (!r->stack_of(r->stack_arg, (const struct perf_event_header *)r->copy, head, &at,
			 &stack) ||
	    stack > size || at > size - stack || size - stack - at < sizeof(used))
		return false;
	copy_part(r, off, at + stack, sizeof(used));
	memcpy(&used, r->copy + at + stack, sizeof(used));
	if (used > stack)
		return false;
	if (at + used > head)
		copy_part(r, off, head, at + used - head);
	/* from the written size on: the fields after the copy */
	copy_part(r, off, at + stack, size - at - stack);
	return true;
}

const struct perf_event_header *perf_ring_next(struct perf_ring *r)
{
	uint8_t *data = (uint8_t *)r->base + r->page_size;
	size_t mask = r->data_size - 1, off, size, first;
	struct perf_event_header h;

	if (r->head - r->tail < sizeof(h))
		return NULL;
	off = (size_t)(r->tail & mask);
	/* the header itself may wrap: copy it out byte-safe */
	first = r->data_size - off;
	if (first >= sizeof(h)) {
		memcpy(&h, data + off, sizeof(h));
	} else {
		memcpy(&h, data + off, first);
		memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
	}
	size = h.size;
	if (size < sizeof(h) || size > r->head - r->tail) {
		/* a torn or bogus record: drop the rest of this pass */
		r->tail = r->head;
		return NULL;
	}
	r->tail += size;
	if (first >= size)
		return (const struct perf_event_header *)(data + off);
	if (size > r->copy_cap) {
		void *p = realloc(r->copy, size);

		if (!p) {
			r->tail = r->head;
			return NULL;
		}
		r->copy = p;
		r->copy_cap = size;
	}
	if (!r->stack_of || h.type != PERF_RECORD_SAMPLE || !copy_sparse(r, off, size)) {
		memcpy(r->copy, data + off, first);
		memcpy(r->copy + first, data, size - first);
	}
	return (const struct perf_event_header *)r->copy;
}

/* Where the space not given back to the kernel starts: the first held record, or what is read. */
static uint64_t kept_from(const struct perf_ring *r)
{
	return r->held_n ? r->held[r->held_first].start : r->tail;
}

int64_t perf_ring_hold(struct perf_ring *r, const struct perf_event_header *h)
{
	const uint8_t *data = (const uint8_t *)r->base + r->page_size, *p = (const void *)h;
	uint64_t start = r->tail - h->size, first = r->held_n ? r->held[r->held_first].start : start;

	if (p < data || p >= data + r->data_size || !r->held)
		return -1;	/* the copy of one that wrapped */
	/*
	 * What one wakeup drains at most (the watermark, a quarter of the ring
	 * unless told), so that it is held until the next poll, not copied,
	 * and the kernel keeps the rest of the ring to write in.
	 */
	if (r->held_n >= PERF_RING_HOLD_MAX ||
	    r->tail - first > (r->wakeup ? r->wakeup : r->data_size / 4))
		return -1;
	r->held[(r->held_first + r->held_n) % PERF_RING_HOLD_MAX] =
		(struct perf_ring_hold){ .start = start };
	r->held_n++;
	return (int64_t)(r->held_seq + r->held_n - 1);
}

void perf_ring_done(struct perf_ring *r, uint64_t ticket)
{
	uint64_t k = ticket - r->held_seq;

	if (!r->held || k >= r->held_n)
		return;
	r->held[(r->held_first + k) % PERF_RING_HOLD_MAX].done = true;
	while (r->held_n && r->held[r->held_first].done) {
		r->held_first = (r->held_first + 1) % PERF_RING_HOLD_MAX;
		r->held_n--;
		r->held_seq++;
	}
}

uint64_t perf_ring_wait_ns(const struct perf_ring *r)
{
	const struct perf_event_mmap_page *meta = r->base;
	uint64_t used;

	if (!r->base || !r->fill_rate)
		return UINT64_MAX;
	used = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) - kept_from(r);
	if (used >= r->wakeup)
		return 0;
	/* at most 32 MiB of room: no overflow */
	return (r->wakeup - used) * 1000000000ull / r->fill_rate;
}

uint64_t perf_ring_used(const struct perf_ring *r)
{
	return r->head - kept_from(r);
}

void perf_ring_unhold(struct perf_ring *r)
{
	r->held_seq += r->held_n;
	r->held_first = 0;
	r->held_n = 0;
}

void perf_ring_end(struct perf_ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	__atomic_store_n(&meta->data_tail, kept_from(r), __ATOMIC_RELEASE);
}
