/* SPDX-License-Identifier: MIT */
/*
 * serve_sync.h - what the threads that answer requests and the recording
 * loop tell each other: private to lib/serve/.
 */
#ifndef PROF_SERVE_SYNC_H
#define PROF_SERVE_SYNC_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct serve_sync {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC: any change below */
	uint64_t want_ns;		/* requests wait for what was recorded until this */
	uint64_t published_ns;		/* the finished files hold what was recorded before */
	uint64_t last_switch_ns;	/* when the loop last went on in a new file for them */
	bool building;			/* a profile is being built */
	bool stopping;			/* the server stops: every wait ends */
};

void sync_init(struct serve_sync *s);
void sync_release(struct serve_sync *s);

/* Why a wait ended early. */
enum {
	SYNC_STOPPING = -ESHUTDOWN,	/* the server stops */
	SYNC_TIMEOUT = -ETIMEDOUT,	/* the deadline passed */
	SYNC_GONE = -ECONNRESET,	/* GONE said the client left */
};

/*
 * Wait until UNTIL_NS (CLOCK_MONOTONIC), asking GONE(CTX) every second
 * whether the client is still there.  0, SYNC_STOPPING or SYNC_GONE.
 */
int sync_sleep_until(struct serve_sync *s, uint64_t until_ns, bool (*gone)(void *ctx),
		     void *ctx);

/*
 * Ask the recording loop to finish the files holding what was recorded
 * until AT_NS (a time that has passed), and wait until it did, at most
 * until DEADLINE_NS.  0, SYNC_STOPPING or SYNC_TIMEOUT.
 */
int sync_wait_published(struct serve_sync *s, uint64_t at_ns, uint64_t deadline_ns);

/*
 * The loop's side: whether requests wait for files to be finished, and the
 * last time the loop finished them for requests is at least MIN_GAP_NS
 * before NOW_NS.
 */
bool sync_due(struct serve_sync *s, uint64_t now_ns, uint64_t min_gap_ns);

/*
 * The finished files hold what was recorded before AT_NS (a time taken
 * after sync_due() said so): the requests for until then are answered.
 */
void sync_publish(struct serve_sync *s, uint64_t at_ns);

/* Take the right to build a profile, waiting at most until DEADLINE_NS.  0, SYNC_STOPPING or SYNC_TIMEOUT. */
int sync_build_begin(struct serve_sync *s, uint64_t deadline_ns);
void sync_build_end(struct serve_sync *s);

/* End every wait, and every one to come. */
void sync_stop(struct serve_sync *s);

#endif /* PROF_SERVE_SYNC_H */
