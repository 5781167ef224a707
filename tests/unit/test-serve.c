/* SPDX-License-Identifier: MIT */
/*
 * test-serve.c - prof serve's parts that need no HTTP: which of the
 * recording's files a window takes and which go (serve/serve_files.c),
 * the socket's address (serve/serve_listen.c), the requests' waits for the
 * recording loop (serve/serve_sync.c), and a window's profile from files
 * of known samples (serve/serve_build.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h"
#include "report/report.h"
#include "serve/serve_build.h"
#include "serve/serve_files.h"
#include "serve/serve_listen.h"
#include "serve/serve_sync.h"

#define S 1000000000ull

/* A file of F at PATH, made empty, noted as begun at START. */
static int touch_note(struct serve_files *f, const char *path, uint64_t start)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -1;
	fclose(fp);
	return files_note(f, path, start);
}

/* "N,N,..." of the indexes (the stamps 0..9 the paths end with) of PATHS. */
static void picked(char **paths, size_t n, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++) {
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
				       strrchr(paths[i], '.') + 1);
		free(paths[i]);
	}
	free(paths);
}

TEST(serve_files_pick_and_prune)
{
	struct serve_files f;
	char path[4200], got[64], **paths;
	struct stat st;
	size_t n;
	int i;

	CHECK_INT(files_init(&f, NULL), ==, 0);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s.%d", f.base, i);
		CHECK_INT(touch_note(&f, path, (uint64_t)i * 10 * S), ==, 0);
	}
	/* the same file again is no new one */
	CHECK_INT(files_note(&f, path, 31 * S), ==, 0);
	CHECK_INT(f.n, ==, 4);
	/* a window takes the files around it, a margin of 2 s aside */
	CHECK_INT(files_pick(&f, 13 * S, 15 * S, &paths, &n), ==, 0);
	picked(paths, n, got, sizeof(got));
	CHECK_STR(got, "1");
	CHECK_INT(files_pick(&f, 25 * S, 100 * S, &paths, &n), ==, 0);
	picked(paths, n, got, sizeof(got));
	CHECK_STR(got, "2,3");
	CHECK_INT(files_pick(&f, 0, 1 * S, &paths, &n), ==, 0);
	picked(paths, n, got, sizeof(got));
	CHECK_STR(got, "0");
	CHECK_INT(files_pick(&f, 9 * S, 21 * S, &paths, &n), ==, 0);
	picked(paths, n, got, sizeof(got));
	CHECK_STR(got, "0,1,2");
	/* those that ended before 25 s (and 2 s more) go, from the disk too */
	files_prune(&f, 25 * S, 100);
	CHECK_INT(f.n, ==, 2);
	snprintf(path, sizeof(path), "%s.1", f.base);
	CHECK_INT(stat(path, &st), ==, -1);
	snprintf(path, sizeof(path), "%s.2", f.base);
	CHECK_INT(stat(path, &st), ==, 0);
	/* and beyond the most files; the newest, being written, stays */
	files_prune(&f, 0, 1);
	CHECK_INT(f.n, ==, 1);
	files_prune(&f, 1000 * S, 1);
	CHECK_INT(f.n, ==, 1);
	snprintf(path, sizeof(path), "%s.3", f.base);
	CHECK_INT(stat(path, &st), ==, 0);
	/* the end removes the files and the directory it made */
	snprintf(path, sizeof(path), "%s", f.dir);
	files_release(&f);
	CHECK_INT(stat(path, &st), ==, -1);
}

TEST(serve_files_dir_given)
{
	struct serve_files f;

	CHECK_INT(files_init(&f, "/nonexistent/dir"), ==, -ENOENT);
	CHECK_STR(prof_errmsg(), "cannot use directory '/nonexistent/dir': No such file or directory");
	CHECK_INT(files_init(&f, "/dev/null"), ==, -ENOTDIR);
}

TEST(serve_listen_addresses)
{
	struct listen_sock a, b;
	char spec[64], want[160];
	unsigned port;

	CHECK_INT(listen_open("127.0.0.1:0", &a), ==, 0);
	CHECK(a.fd >= 0);
	CHECK_INT(sscanf(a.url, "http://127.0.0.1:%u/debug/pprof/", &port), ==, 1);
	CHECK(port > 0);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	CHECK_INT(listen_open(spec, &b), ==, -EADDRINUSE);
	snprintf(want, sizeof(want), "cannot listen on %s: Address already in use", spec);
	CHECK_STR(prof_errmsg(), want);
	CHECK_INT(b.fd, ==, -1);
	listen_release(&a);
	CHECK_INT(listen_open("6060", &a), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "invalid listen address '6060': expected ADDRESS:PORT, [IPv6]:PORT "
		  "or unix:PATH");
	CHECK_INT(listen_open(":6060", &a), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "invalid listen address ':6060': no address before the port");
	CHECK_INT(listen_open("[::1", &a), ==, -EINVAL);
	CHECK_INT(listen_open("127.0.0.1:x", &a), ==, -EINVAL);
	CHECK_INT(listen_open("127.0.0.1:", &a), ==, -EINVAL);
	CHECK_INT(listen_open("unix:", &a), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "invalid listen address 'unix:': no path after unix:");
}

TEST(serve_listen_unix)
{
	char dir[] = "/tmp/prof-test-serve.XXXXXX", spec[160], path[128];
	struct listen_sock a, b;
	struct stat st;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(spec, sizeof(spec), "unix:%s", path);
	CHECK_INT(listen_open(spec, &a), ==, 0);
	CHECK_STR(a.url, spec);
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK(S_ISSOCK(st.st_mode));
	/* in use: refused, and left there */
	CHECK_INT(listen_open(spec, &b), ==, -EADDRINUSE);
	CHECK_INT(stat(path, &st), ==, 0);
	listen_release(&a);
	CHECK_INT(stat(path, &st), ==, -1);
	rmdir(dir);
}

struct waiter {
	struct serve_sync *s;
	uint64_t at;
	int r;
};

static void *wait_published(void *arg)
{
	struct waiter *w = arg;

	w->r = sync_wait_published(w->s, w->at, clock_ns(CLOCK_MONOTONIC) + 30 * S);
	return NULL;
}

TEST(serve_sync_publish)
{
	struct serve_sync s;
	struct waiter w = { .s = &s, .r = 1 };
	uint64_t now;
	pthread_t t;
	int i;

	sync_init(&s);
	now = clock_ns(CLOCK_MONOTONIC);
	CHECK(!sync_due(&s, now, 0));
	/* nobody publishes: the wait has its deadline */
	CHECK_INT(sync_wait_published(&s, now, now + S / 100), ==, SYNC_TIMEOUT);
	/* a request waits for what was recorded until now; the loop sees it, publishes */
	w.at = clock_ns(CLOCK_MONOTONIC);
	CHECK_INT(pthread_create(&t, NULL, wait_published, &w), ==, 0);
	for (i = 0; i < 3000 && !sync_due(&s, clock_ns(CLOCK_MONOTONIC), 0); i++)
		usleep(1000);
	CHECK(sync_due(&s, clock_ns(CLOCK_MONOTONIC), 0));
	sync_publish(&s, clock_ns(CLOCK_MONOTONIC));
	pthread_join(t, NULL);
	CHECK_INT(w.r, ==, 0);
	/* answered; and a second within the gap waits its turn */
	CHECK(!sync_due(&s, clock_ns(CLOCK_MONOTONIC), 0));
	w.at = clock_ns(CLOCK_MONOTONIC);
	CHECK_INT(pthread_create(&t, NULL, wait_published, &w), ==, 0);
	for (i = 0; i < 3000 && !sync_due(&s, clock_ns(CLOCK_MONOTONIC), 0); i++)
		usleep(1000);
	CHECK(!sync_due(&s, clock_ns(CLOCK_MONOTONIC), 1000 * S));
	/* stopping ends every wait */
	sync_stop(&s);
	pthread_join(t, NULL);
	CHECK_INT(w.r, ==, SYNC_STOPPING);
	CHECK_INT(sync_build_begin(&s, clock_ns(CLOCK_MONOTONIC) + S), ==, SYNC_STOPPING);
	sync_release(&s);
}

TEST(serve_sync_build_turns)
{
	struct serve_sync s;

	sync_init(&s);
	CHECK_INT(sync_build_begin(&s, clock_ns(CLOCK_MONOTONIC) + S), ==, 0);
	CHECK_INT(sync_build_begin(&s, clock_ns(CLOCK_MONOTONIC) + S / 100), ==, SYNC_TIMEOUT);
	sync_build_end(&s);
	CHECK_INT(sync_build_begin(&s, clock_ns(CLOCK_MONOTONIC) + S), ==, 0);
	sync_build_end(&s);
	sync_release(&s);
}

/*
 * A spool at PATH begun at START (CLOCK_MONOTONIC) with a sample at
 * START + 0.5 s, 1.5 s ... (N of them), finished if TRAILER.
 */
static int write_file(const char *path, uint64_t start, int n, bool trailer)
{
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta, .mono_start_ns = start, .wall_start_ns = 1700000000ull * S,
		  .event = "cpu-clock", .freq_hz = 99, .hostname = "host", .kernel_release = "6.1",
		  .arch = "x86_64", .page_size = 4096, .prof_version = PROF_VERSION);
	int64_t p, t, m, fr, st;
	int i, r;

	r = prof_spool_writer_open(path, &meta, NULL, &w);
	if (r < 0)
		return r;
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 7, .start_time_ns = 1,
							.time_ns = start, .comm = "app",
							.exe = "/nonexistent/app"));
	t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = 7,
						      .time_ns = start, .name = "app"));
	m = prof_spool_writer_add_module(w, &PROF_INIT(prof_module, .process = (uint32_t)p,
						      .time_ns = start, .start = 0x400000,
						      .end = 0x401000,
						      .flags = PROF_MODULE_EXEC,
						      .path = "/nonexistent/app"));
	fr = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
							  .ref = (uint32_t)m, .addr = 0x10));
	st = prof_spool_writer_intern_stack(w, 0, (uint32_t)fr);
	for (i = 0; i < n && st > 0; i++)
		r = prof_spool_writer_add_sample(w, &PROF_INIT(prof_sample,
			.time_ns = start + (uint64_t)i * S + S / 2, .thread = (uint32_t)t,
			.stack = (uint32_t)st, .period = S / 99));
	if (r == 0 && trailer)
		r = prof_spool_writer_finish(w, &PROF_INIT(prof_counters, .samples = (uint64_t)n,
							   .mono_end_ns = start + 10 * S));
	return prof_spool_writer_close(w) ?: r;
}

/*
 * A spool at PATH begun at START with one off-CPU interval, from START + 1 s
 * to START + 7 s (the thread blocked: its stack a state frame).
 */
static int write_waits(const char *path, uint64_t start)
{
	struct prof_spool_writer *w;
	PROF_OPTS(prof_meta, meta, .mono_start_ns = start, .wall_start_ns = 1700000000ull * S,
		  .event = "cpu-clock", .freq_hz = 99, .hostname = "host", .kernel_release = "6.1",
		  .arch = "x86_64", .page_size = 4096, .prof_version = PROF_VERSION,
		  .flags = PROF_META_OFFCPU);
	int64_t p, t, fr, st;
	int r;

	r = prof_spool_writer_open(path, &meta, NULL, &w);
	if (r < 0)
		return r;
	p = prof_spool_writer_add_process(w, &PROF_INIT(prof_process, .pid = 7, .time_ns = start,
							.comm = "app", .exe = ""));
	t = prof_spool_writer_add_thread(w, &PROF_INIT(prof_thread, .process = (uint32_t)p, .tid = 7,
						      .time_ns = start, .name = "app"));
	fr = prof_spool_writer_intern_frame(w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_STATE,
							  .addr = PROF_OFFCPU_STATE_BLOCKED));
	st = prof_spool_writer_intern_stack(w, 0, (uint32_t)fr);
	r = st > 0 ? prof_spool_writer_add_offcpu(w, &PROF_INIT(prof_offcpu, .time_ns = start + S,
				.duration_ns = 6 * S, .thread = (uint32_t)t, .stack = (uint32_t)st,
				.user_stack = (uint32_t)st, .state = PROF_OFFCPU_STATE_BLOCKED,
				.end = PROF_OFFCPU_END_SWITCH_IN)) : -EINVAL;
	return prof_spool_writer_close(w) ?: r;
}

/* The off-CPU time of the spool at PATH in RANGE, with intervals clipped to it; -errno. */
static long long waited_ms(const char *path, const char *range)
{
	struct prof_filter *f = NULL;
	struct prof_profile *p = NULL;
	struct prof_spool *sp = NULL;
	long long ms = -1;
	int r;

	r = prof_spool_open(path, &sp);
	if (r == 0)
		r = prof_filter_new(&PROF_INIT(prof_filter_opts, .time = range,
					       .weight = PROF_WEIGHT_OFFCPU), &f);
	if (r == 0) {
		filter_clip_intervals(f);
		r = prof_profile_new(&p);
	}
	if (r == 0)
		r = prof_profile_read(p, sp, f, NULL);
	if (r == 0)
		ms = (long long)(prof_profile_total(p) / 1000000);
	prof_profile_free(p);
	prof_filter_free(f);
	prof_spool_close(sp);
	return r < 0 ? r : ms;
}

TEST(serve_window_clips_intervals)
{
	char path[] = "/tmp/prof-test-waits.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(write_waits(path, 100 * S), ==, 0);
	/* the wait, 1 s to 7 s: the part of it inside each window */
	CHECK_INT(waited_ms(path, "2,5"), ==, 3000);
	CHECK_INT(waited_ms(path, "6,10"), ==, 1000);
	CHECK_INT(waited_ms(path, "0,10"), ==, 6000);
	CHECK_INT(waited_ms(path, ",3"), ==, 2000);
	CHECK_INT(waited_ms(path, "8,9"), ==, 0);
	unlink(path);
}

/* The samples build_profile() finds from FROM to TO (in s after BASE); -errno. */
static long long window_samples(struct serve_files *f, uint64_t base, double from, double to,
				enum prof_weight weight)
{
	struct build_window w = { .from_ns = base + (uint64_t)(from * S),
				  .to_ns = base + (uint64_t)(to * S), .weight = weight };
	uint64_t samples = 0;
	char *buf;
	size_t len;
	int r;

	r = build_profile(f, &w, &buf, &len, &samples);
	if (r < 0)
		return r;
	/* a profile, samples or none: gzip'd */
	r = len > 20 && (uint8_t)buf[0] == 0x1f && (uint8_t)buf[1] == 0x8b;
	free(buf);
	return r ? (long long)samples : -EBADMSG;
}

TEST(serve_build_window)
{
	uint64_t base = clock_ns(CLOCK_MONOTONIC) - 100 * S;
	struct serve_files f;
	char a[4200], b[4200];

	CHECK_INT(files_init(&f, NULL), ==, 0);
	CHECK_INT(window_samples(&f, base, 0, 5, PROF_WEIGHT_CPU), ==, -ENOENT);
	/* a finished file of 10 s, and the one being written after it */
	snprintf(a, sizeof(a), "%s.a", f.base);
	snprintf(b, sizeof(b), "%s.b", f.base);
	CHECK_INT(write_file(a, base, 10, true), ==, 0);
	CHECK_INT(write_file(b, base + 10 * S, 10, false), ==, 0);
	CHECK_INT(files_note(&f, a, 0), ==, 0);
	CHECK_INT(files_note(&f, b, base + 10 * S), ==, 0);
	/* 2.5, 3.5 and 4.5 s */
	CHECK_INT(window_samples(&f, base, 2, 5, PROF_WEIGHT_CPU), ==, 3);
	/* across the two files: 8.5, 9.5, 10.5, 11.5 s */
	CHECK_INT(window_samples(&f, base, 8, 12, PROF_WEIGHT_CPU), ==, 4);
	CHECK_INT(window_samples(&f, base, 0, 100, PROF_WEIGHT_CPU), ==, 20);
	/* nothing there: an empty profile all the same */
	CHECK_INT(window_samples(&f, base, 30, 40, PROF_WEIGHT_CPU), ==, 0);
	/* a weight the files cannot give */
	CHECK_INT(window_samples(&f, base, 2, 5, PROF_WEIGHT_OFFCPU), ==, -EINVAL);
	CHECK_INT(build_check_weight(&f, PROF_WEIGHT_OFFCPU), ==, -EINVAL);
	CHECK_INT(build_check_weight(&f, PROF_WEIGHT_CPU), ==, 0);
	/* a file the loop removed meanwhile is passed over */
	CHECK_INT(unlink(a), ==, 0);
	CHECK_INT(window_samples(&f, base, 8, 12, PROF_WEIGHT_CPU), ==, 2);
	files_release(&f);
}
