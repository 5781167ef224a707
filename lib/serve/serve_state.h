/* SPDX-License-Identifier: MIT */
/*
 * serve_state.h - a server of prof serve as its parts share it: the
 * options, the files, what the threads tell each other, the HTTP side and
 * the counts.  Private to lib/serve/.
 */
#ifndef PROF_SERVE_STATE_H
#define PROF_SERVE_STATE_H

#include "prof.h"
#include "serve_files.h"
#include "serve_listen.h"
#include "serve_sync.h"

/* A connection the server holds to its deadline. */
struct serve_conn {
	void *conn;		/* struct MHD_Connection; NULL: a free slot */
	int fd;
	uint64_t deadline_ns;	/* cut past this (CLOCK_MONOTONIC), unless busy */
	bool busy;		/* its request is being answered: the server's own time */
	bool cut;
};

struct prof_serve {
	struct prof_serve_opts opts;	/* with the defaults in place */
	struct listen_sock sock;
	struct serve_files files;
	struct serve_sync sync;
	void *daemon;			/* struct MHD_Daemon */
	pthread_mutex_t conns_lock;
	struct serve_conn *conns;
	size_t nconns;
	uint64_t last_tick_ns;
	/* the counts, as prof_serve_stats() gives them (atomic: every thread adds) */
	struct prof_serve_stats stats;
};

/* Add N to the count *C of S's stats, from any thread. */
static inline void serve_count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

#endif /* PROF_SERVE_STATE_H */
