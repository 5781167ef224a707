/* SPDX-License-Identifier: MIT */
/*
 * trickle - copy a file into another a few bytes at a time, as a slow
 * writer would: the spool tests use it to check that a reader following
 * the copy sees exactly what it sees in the whole file, wherever the
 * writes happen to cut blocks.
 *
 *   trickle [--chunk BYTES] [--delay-us N] IN OUT
 *
 * OUT is created (truncated) first; then CHUNK bytes (default 1) are
 * written at a time, with a pause of N microseconds (default 0) after each.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const char *name)
{
	fprintf(stderr, "trickle: %s '%s': %s\n", what, name, strerror(errno));
	exit(1);
}

static void pause_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	while (us > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chunk", required_argument, NULL, 'c' },
		{ "delay-us", required_argument, NULL, 'd' },
		{ 0 }
	};
	long chunk = 1, delay = 0;
	char buf[65536];
	int in, out, c;
	ssize_t n;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'c')
			chunk = strtol(optarg, NULL, 10);
		else if (c == 'd')
			delay = strtol(optarg, NULL, 10);
		else
			return 64;
	}
	if (argc - optind != 2 || chunk < 1 || chunk > (long)sizeof(buf) || delay < 0) {
		fprintf(stderr, "usage: trickle [--chunk BYTES] [--delay-us N] IN OUT\n");
		return 64;
	}
	in = open(argv[optind], O_RDONLY);
	if (in < 0)
		die("cannot open", argv[optind]);
	out = open(argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		die("cannot create", argv[optind + 1]);
	while ((n = read(in, buf, (size_t)chunk)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			die("cannot write", argv[optind + 1]);
		pause_us(delay);
	}
	if (n < 0)
		die("cannot read", argv[optind]);
	close(in);
	return close(out) < 0 ? 1 : 0;
}
