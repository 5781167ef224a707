/* SPDX-License-Identifier: MIT */
/*
 * serve_sync.c - the requests' side and the recording loop's side of prof
 * serve, meeting under one lock: a request for what was recorded until a
 * time waits until the loop has finished the files that hold it (the loop
 * only looks, between polls, and never waits for a request); one profile
 * is built at a time; and every wait has a deadline, and ends at once when
 * the server stops, so that no client can hold a thread for longer than
 * its request asked for.
 */
#include <time.h>

#include "internal.h"
#include "serve_sync.h"

/* How often a sleeping request looks whether its client left. */
#define GONE_CHECK_NS 1000000000ull

void sync_init(struct serve_sync *s)
{
	pthread_condattr_t ca;

	*s = (struct serve_sync){ 0 };
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
}

void sync_release(struct serve_sync *s)
{
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

/* Wait on S's condition until NS at the latest; S's lock is held. */
static void wait_until(struct serve_sync *s, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

int sync_sleep_until(struct serve_sync *s, uint64_t until_ns, bool (*gone)(void *ctx),
		     void *ctx)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), check = now + GONE_CHECK_NS;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	while (r == 0 && !s->stopping && now < until_ns) {
		wait_until(s, check < until_ns ? check : until_ns);
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= check && now < until_ns) {
			check = now + GONE_CHECK_NS;
			/* not under the lock: it reads a socket */
			pthread_mutex_unlock(&s->lock);
			if (gone && gone(ctx))
				r = SYNC_GONE;
			pthread_mutex_lock(&s->lock);
		}
	}
	if (r == 0 && s->stopping)
		r = SYNC_STOPPING;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * Wait once more for a change on S (its lock held): 0 to look again,
 * SYNC_STOPPING, or SYNC_TIMEOUT once DEADLINE_NS has passed.
 */
static int wait_turn(struct serve_sync *s, uint64_t deadline_ns)
{
	if (s->stopping)
		return SYNC_STOPPING;
	if (clock_ns(CLOCK_MONOTONIC) >= deadline_ns)
		return SYNC_TIMEOUT;
	wait_until(s, deadline_ns);
	return 0;
}

int sync_wait_published(struct serve_sync *s, uint64_t at_ns, uint64_t deadline_ns)
{
	int r = 0;

	pthread_mutex_lock(&s->lock);
	if (at_ns > s->want_ns)
		s->want_ns = at_ns;
	while (r == 0 && s->published_ns < at_ns)
		r = wait_turn(s, deadline_ns);
	if (r == 0 && s->stopping)
		r = SYNC_STOPPING;
	pthread_mutex_unlock(&s->lock);
	return r;
}

bool sync_due(struct serve_sync *s, uint64_t now_ns, uint64_t min_gap_ns)
{
	bool due;

	pthread_mutex_lock(&s->lock);
	due = s->want_ns > s->published_ns && now_ns >= s->last_switch_ns + min_gap_ns;
	pthread_mutex_unlock(&s->lock);
	return due;
}

void sync_publish(struct serve_sync *s, uint64_t at_ns)
{
	pthread_mutex_lock(&s->lock);
	if (at_ns > s->published_ns)
		s->published_ns = at_ns;
	s->last_switch_ns = at_ns;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int sync_build_begin(struct serve_sync *s, uint64_t deadline_ns)
{
	int r = 0;

	pthread_mutex_lock(&s->lock);
	while (r == 0 && s->building)
		r = wait_turn(s, deadline_ns);
	if (r == 0 && s->stopping)
		r = SYNC_STOPPING;
	if (r == 0)
		s->building = true;
	pthread_mutex_unlock(&s->lock);
	return r;
}

void sync_build_end(struct serve_sync *s)
{
	pthread_mutex_lock(&s->lock);
	s->building = false;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void sync_stop(struct serve_sync *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}
