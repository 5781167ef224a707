/* SPDX-License-Identifier: MIT */
/*
 * serve_http.h - prof serve's HTTP side, libmicrohttpd's daemon and the
 * answers to each request: private to lib/serve/.
 */
#ifndef PROF_SERVE_HTTP_H
#define PROF_SERVE_HTTP_H

#include <stdint.h>

struct prof_serve;

/*
 * Load libmicrohttpd and start answering on S's socket, which the daemon
 * takes (S->sock.fd is -1 after).  0; -ENOTSUP when the library cannot be
 * loaded; -EIO when the daemon does not start.
 */
int http_start(struct prof_serve *s);

/* Stop answering (NULL daemon: nothing): every connection is closed, every thread joined. */
void http_stop(struct prof_serve *s);

/*
 * Cut the connections past their deadline at NOW_NS: a request that takes
 * too long to come, or a response too long to be taken.  Never blocks.
 * Returns how many were cut.
 */
uint64_t http_sweep(struct prof_serve *s, uint64_t now_ns);

#endif /* PROF_SERVE_HTTP_H */
