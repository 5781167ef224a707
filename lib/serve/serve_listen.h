/* SPDX-License-Identifier: MIT */
/*
 * serve_listen.h - the socket prof serve listens on, bound by prof itself
 * (libmicrohttpd is handed it): private to lib/serve/.
 */
#ifndef PROF_SERVE_LISTEN_H
#define PROF_SERVE_LISTEN_H

#include <stdbool.h>
#include <sys/types.h>

struct listen_sock {
	int fd;			/* listening, non-blocking; -1 once handed over */
	bool ipv6;
	char *url;		/* where it answers, for people */
	char *unix_path;	/* a unix socket's path, removed by listen_release(); or NULL */
	dev_t unix_dev;		/* what was bound there, so that only that is removed */
	ino_t unix_ino;
};

/*
 * Bind and listen on SPEC: "ADDR:PORT", "[IPv6]:PORT" or "unix:PATH".
 * 0, or -errno with the message naming the address (L is then released).
 */
int listen_open(const char *spec, struct listen_sock *l);

/* Close L's socket if it is still L's, and remove its unix socket. */
void listen_release(struct listen_sock *l);

#endif /* PROF_SERVE_LISTEN_H */
