/* SPDX-License-Identifier: MIT */
/*
 * serve_listen.c - the socket prof serve listens on: an address and port
 * ("127.0.0.1:6060", "[::1]:6060", "localhost:0"), or a unix socket
 * ("unix:/run/prof.sock").  prof binds it itself, before any HTTP starts,
 * so that an address in use is an error of its own naming the address, a
 * port 0 is known as the one the kernel chose, and a unix socket (which
 * libmicrohttpd cannot bind) is no different from the others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "serve_listen.h"

#define BACKLOG 64

static int bad_spec(const char *spec, const char *why)
{
	return error_setx(-EINVAL, "invalid listen address '%s': %s", spec, why);
}

/* The socket FD listening, non-blocking (the HTTP library accepts without waiting). */
static int start_listening(int fd, const char *spec)
{
	int fl;

	if (listen(fd, BACKLOG) < 0)
		return error_set(-errno, "cannot listen on %s", spec);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return error_set(-errno, "cannot listen on %s", spec);
	return 0;
}

/*
 * A socket file at PATH of a server that is gone (nothing accepts on it)
 * is removed; one that answers is in use; anything else is left alone.
 */
static int clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : error_set(-errno, "cannot listen on unix:%s", path);
	if (!S_ISSOCK(st.st_mode))
		return error_setx(-EEXIST, "cannot listen on unix:%s: it exists and is not a "
				  "socket", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(-errno, "cannot listen on unix:%s", path);
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0)
		return error_setx(-EADDRINUSE, "cannot listen on unix:%s: another server answers "
				  "there", path);
	if (errno != ECONNREFUSED)
		return error_set(-errno, "cannot listen on unix:%s", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return error_set(-errno, "cannot listen on unix:%s: cannot remove the old socket",
				 path);
	return 0;
}

static int open_unix(const char *spec, struct listen_sock *l)
{
	const char *path = spec + strlen("unix:");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int r;

	if (!*path)
		return bad_spec(spec, "no path after unix:");
	if (strlen(path) >= sizeof(sa.sun_path))
		return bad_spec(spec, "the path is too long for a unix socket");
	memcpy(sa.sun_path, path, strlen(path) + 1);
	r = clear_stale(path, &sa);
	if (r < 0)
		return r;
	l->unix_path = xstrdup(path);
	if (!l->unix_path)
		return -ENOMEM;
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return error_set(-errno, "cannot listen on %s", spec);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return error_set(-errno, "cannot listen on %s", spec);
	if (stat(path, &st) == 0) {
		l->unix_dev = st.st_dev;
		l->unix_ino = st.st_ino;
	}
	r = start_listening(l->fd, spec);
	if (r == 0 && asprintf(&l->url, "%s", spec) < 0)
		r = error_setx(-ENOMEM, "out of memory");
	return r;
}

/* "HOST:PORT" or "[HOST]:PORT" into HOST and PORT (both in BUF). */
static int split_host_port(const char *spec, char *buf, size_t len, char **host, char **port)
{
	char *colon;

	if (strlen(spec) >= len)
		return bad_spec(spec, "too long");
	strcpy(buf, spec);
	if (buf[0] == '[') {
		colon = strstr(buf, "]:");
		if (!colon)
			return bad_spec(spec, "expected [ADDRESS]:PORT");
		*colon = '\0';
		*host = buf + 1;
		*port = colon + 2;
	} else {
		colon = strrchr(buf, ':');
		if (!colon)
			return bad_spec(spec, "expected ADDRESS:PORT, [IPv6]:PORT or unix:PATH");
		*colon = '\0';
		*host = buf;
		*port = colon + 1;
		if (strchr(*host, ':'))
			return bad_spec(spec, "an IPv6 address goes in brackets, [ADDRESS]:PORT");
	}
	if (!**host)
		return bad_spec(spec, "no address before the port");
	if (!**port || strspn(*port, "0123456789") != strlen(*port) || strlen(*port) > 5 ||
	    atoi(*port) > 65535)
		return bad_spec(spec, "the port is not a number from 0 to 65535");
	return 0;
}

/* The first address of AI that binds: 0 with L->fd, or the error of the first that did not. */
static int bind_first(const struct addrinfo *ai, const char *spec, struct listen_sock *l)
{
	static const int one = 1;
	int r = error_setx(-EADDRNOTAVAIL, "cannot listen on %s: no address", spec);

	for (; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

		if (fd < 0) {
			r = error_set(-errno, "cannot listen on %s", spec);
			continue;
		}
		/* a restart binds at once, though the last run's connections linger */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			l->fd = fd;
			l->ipv6 = ai->ai_family == AF_INET6;
			return 0;
		}
		r = error_set(-errno, "cannot listen on %s", spec);
		close(fd);
	}
	return r;
}

/* "http://ADDRESS:PORT/debug/pprof/" of the socket bound. */
static int make_url(struct listen_sock *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	unsigned port;

	if (getsockname(l->fd, (struct sockaddr *)&ss, &len) < 0)
		return error_set(-errno, "cannot read the address listened on");
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
	}
	if (asprintf(&l->url, "http://%s%s%s:%u/debug/pprof/", l->ipv6 ? "[" : "", host,
		     l->ipv6 ? "]" : "", port) < 0)
		return error_setx(-ENOMEM, "out of memory");
	return 0;
}

static int open_inet(const char *spec, struct listen_sock *l)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char buf[512], *host = NULL, *port = NULL;
	int r, g;

	r = split_host_port(spec, buf, sizeof(buf), &host, &port);
	if (r < 0)
		return r;
	g = getaddrinfo(host, port, &hints, &ai);
	if (g == EAI_NONAME || g == EAI_ADDRFAMILY || g == EAI_NODATA)
		return error_setx(-EADDRNOTAVAIL, "cannot listen on %s: no such address", spec);
	if (g)
		return error_setx(-EADDRNOTAVAIL, "cannot listen on %s: %s", spec,
				  g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
	r = bind_first(ai, spec, l);
	freeaddrinfo(ai);
	if (r == 0)
		r = start_listening(l->fd, spec);
	return r < 0 ? r : make_url(l);
}

int listen_open(const char *spec, struct listen_sock *l)
{
	int r;

	*l = (struct listen_sock){ .fd = -1 };
	r = strncmp(spec, "unix:", 5) ? open_inet(spec, l) : open_unix(spec, l);
	if (r < 0)
		listen_release(l);
	return r;
}

void listen_release(struct listen_sock *l)
{
	struct stat st;

	if (l->fd >= 0)
		close(l->fd);
	/* only the socket bound here: another server's since is not ours to remove */
	if (l->unix_path && stat(l->unix_path, &st) == 0 && st.st_dev == l->unix_dev &&
	    st.st_ino == l->unix_ino)
		unlink(l->unix_path);
	free(l->unix_path);
	free(l->url);
	*l = (struct listen_sock){ .fd = -1 };
}
