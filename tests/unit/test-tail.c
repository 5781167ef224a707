/* SPDX-License-Identifier: MIT */
/*
 * test-tail.c - following a spool file while a writer appends to it: the
 * states (waiting, running, cut, finished, corrupt, shrunk), batches and
 * their bound, --from-end, the thread's name at each sample, a recording's
 * file put in place when sampling starts and its writer's lock telling a
 * tail that it was killed, a file grown one byte at a time read as the
 * whole, discarding what was read, the files of a recording split by
 * --switch-output found in order, and the views' exact output.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "prof.h"
#include "spool_test.h"
#include "spool/spool_file.h"
#include "spool/spool_merge.h"
#include "spool/spool_writer.h"
#include "tail/tail_state.h"

/* A directory of its own for each test. */
static char dir[64];

static const char *mkdir_test(void)
{
	snprintf(dir, sizeof(dir), "/tmp/prof-tail-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	return dir;
}

static void rm_test(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static char *in_dir(const char *name)
{
	static char path[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

/*
 * A spool being written: a process "app" (pid 17) with threads "main" (18)
 * and "worker" (19), a module whose functions root_fn, mid_fn and leaf_fn
 * symbol records name, and the stacks root;mid;leaf and root;mid.
 */
struct gen {
	struct prof_spool_writer *w;
	uint32_t main, worker, leaf, mid;
	uint64_t t0;
	size_t n;
};

/*
 * Open the writer: at PATH, or when FILE is not NULL into the file a
 * recording makes (locked, PROF_META_LOCKED, not yet at PATH).
 */
static int gen_open_as(struct gen *g, const char *path, bool raw, struct spool_file *file)
{
	struct prof_spool_writer_opts o = { .sz = sizeof(o), .no_compress = raw };
	PROF_OPTS(prof_meta, meta);
	int64_t p, m, fr, fm, fl;
	static const char *const names[] = { "root_fn", "mid_fn", "leaf_fn" };
	int i;

	test_meta(&meta);
	memset(g, 0, sizeof(*g));
	g->t0 = meta.mono_start_ns;
	if (file) {
		if (spool_file_create(file, path) < 0)
			return -1;
		meta.flags |= file->locked ? PROF_META_LOCKED : 0;
		if (spool_writer_open_fd(file->fd, path, &meta, &o, &g->w) < 0)
			return -1;
	} else if (prof_spool_writer_open(path, &meta, &o, &g->w) < 0) {
		return -1;
	}
	p = prof_spool_writer_add_process(g->w, &PROF_INIT(prof_process, .pid = 17, .comm = "app"));
	g->main = (uint32_t)prof_spool_writer_add_thread(g->w, &PROF_INIT(prof_thread,
		.process = (uint32_t)p, .tid = 18, .name = "main"));
	g->worker = (uint32_t)prof_spool_writer_add_thread(g->w, &PROF_INIT(prof_thread,
		.process = (uint32_t)p, .tid = 19, .name = "worker"));
	m = prof_spool_writer_add_module(g->w, &PROF_INIT(prof_module,
		.process = (uint32_t)p, .start = 0x400000, .end = 0x401000,
		.flags = PROF_MODULE_EXEC, .path = "/nonexistent/app"));
	for (i = 0; i < 3; i++)
		prof_spool_writer_add_symbol(g->w, &PROF_INIT(prof_symbol,
			.scope = PROF_SYMBOL_MODULE, .scope_id = (uint32_t)m,
			.start = 0x100 * (uint64_t)i, .size = 0x100, .name = names[i]));
	fr = prof_spool_writer_intern_frame(g->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								 .ref = (uint32_t)m, .addr = 0x10));
	fm = prof_spool_writer_intern_frame(g->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								 .ref = (uint32_t)m, .addr = 0x110));
	fl = prof_spool_writer_intern_frame(g->w, &PROF_INIT(prof_frame, .kind = PROF_FRAME_USER,
								 .ref = (uint32_t)m, .addr = 0x210));
	g->leaf = (uint32_t)prof_spool_writer_intern_frames(g->w, (uint32_t[]){ (uint32_t)fl,
				(uint32_t)fm, (uint32_t)fr }, 3);
	g->mid = (uint32_t)prof_spool_writer_intern_frames(g->w, (uint32_t[]){ (uint32_t)fm,
				(uint32_t)fr }, 2);
	return p == 1 && g->main && g->worker && g->leaf && g->mid ? 0 : -1;
}

static int gen_open(struct gen *g, const char *path, bool raw)
{
	return gen_open_as(g, path, raw, NULL);
}

/* N samples, 1 ms apart: on main in the leaf, every 4th on worker in mid. */
static int gen_samples(struct gen *g, size_t n)
{
	size_t end = g->n + n;

	for (; g->n < end; g->n++) {
		bool w = g->n % 4 == 3;
		struct prof_sample s = { .sz = sizeof(s), .time_ns = g->t0 + 1000000 * (g->n + 1),
					 .thread = w ? g->worker : g->main,
					 .stack = w ? g->mid : g->leaf, .period = 1000000 };

		if (prof_spool_writer_add_sample(g->w, &s) < 0)
			return -1;
	}
	return 0;
}

static int gen_finish(struct gen *g)
{
	int r = prof_spool_writer_finish(g->w, &PROF_INIT(prof_counters, .samples = g->n));

	return r < 0 ? r : prof_spool_writer_close(g->w);
}

/* Poll until a poll reads no sample; the samples read in all, or -1. */
static long poll_all(struct prof_tail *t, struct prof_tail_batch *b)
{
	long n = 0;
	int r;

	do {
		r = prof_tail_poll(t, b);
		if (r < 0)
			return -1;
		n += r;
	} while (r > 0 || b->more);
	return n;
}

/* Touch NAME in the test's directory. */
static void touch(const char *name)
{
	int fd = open(in_dir(name), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		abort();
	close(fd);
}

TEST(series_files_are_named_by_17_digits_and_found_in_order)
{
	char *base, *next = NULL;

	CHECK_INT(spool_series_base_len("x.spool.20261201101010123"), ==, 7);
	CHECK_INT(spool_series_base_len("d/x.20261201101010123"), ==, 3);
	CHECK_INT(spool_series_base_len("x.spool"), ==, 0);
	CHECK_INT(spool_series_base_len("x.spool.2026120110101012"), ==, 0);	/* 16 digits */
	CHECK_INT(spool_series_base_len("x.spool.2026120110101012a"), ==, 0);
	CHECK_INT(spool_series_base_len("x.spool-20261201101010123"), ==, 0);
	CHECK_INT(spool_series_base_len("d/.20261201101010123"), ==, 0);	/* no base */

	mkdir_test();
	base = strdup(in_dir("x.spool"));
	CHECK_INT(spool_series_find(base, NULL, false, &next), ==, 0);
	touch("x.spool.20261201101012000");
	touch("x.spool.20261201101010999");
	touch("x.spool.20261201101011000");
	touch("x.spoolx.20261201101009000");	/* another recording's */
	touch("x.spool.2026120110100900");	/* not a file of the series */
	touch("x.spool.20261201101009000.tmp");
	CHECK_INT(spool_series_find(base, NULL, false, &next), ==, 1);
	CHECK_STR(next, in_dir("x.spool.20261201101010999"));
	free(next);
	CHECK_INT(spool_series_find(base, NULL, true, &next), ==, 1);
	CHECK_STR(next, in_dir("x.spool.20261201101012000"));
	free(next);
	CHECK_INT(spool_series_find(base, in_dir("x.spool.20261201101010999"), false, &next), ==, 1);
	CHECK_STR(next, in_dir("x.spool.20261201101011000"));
	free(next);
	/* after a file that is gone: the next one after its time */
	CHECK_INT(spool_series_find(base, in_dir("x.spool.20261201101011500"), false, &next), ==, 1);
	CHECK_STR(next, in_dir("x.spool.20261201101012000"));
	free(next);
	CHECK_INT(spool_series_find(base, in_dir("x.spool.20261201101012000"), false, &next), ==, 0);
	CHECK(next == NULL);
	free(base);
	rm_test();
}

TEST(tail_follows_a_file_as_it_grows_to_its_trailer)
{
	PROF_OPTS(prof_tail_batch, b);
	PROF_OPTS(prof_tail_stats, st);
	struct prof_tail *t;
	struct gen g;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("x.spool"), false), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("x.spool"), NULL, &t), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_RUNNING);
	CHECK(prof_tail_spool(t) != NULL);
	CHECK_INT(gen_samples(&g, 10), ==, 0);
	/* buffered by the writer, not flushed: nothing to see */
	CHECK_INT(poll_all(t, &b), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 10);
	CHECK(b.activity);
	CHECK_INT(b.samples[0]->pid, ==, 17);
	CHECK_INT(b.samples[0]->tid, ==, 18);
	CHECK_STR(b.samples[0]->comm, "main");
	CHECK_INT(b.samples[3]->tid, ==, 19);
	CHECK_STR(b.samples[3]->comm, "worker");
	CHECK_INT(b.samples[3]->stack, ==, g.mid);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK(!b.activity);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_RUNNING);
	CHECK_INT(gen_samples(&g, 5), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 5);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	CHECK(prof_tail_state_is_final(b.state));
	prof_tail_stats(t, &st);
	CHECK_INT(st.samples, ==, 15);
	CHECK_INT(st.processes_alive, ==, 1);
	CHECK_INT(st.threads_alive, ==, 2);
	CHECK_INT(st.first_ns, ==, g.t0 + 1000000);
	CHECK_INT(st.last_ns, ==, g.t0 + 15000000);
	CHECK_STR(st.path, in_dir("x.spool"));
	/* finished is final: nothing more, however often it is asked */
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	prof_tail_free(t);
	rm_test();
}

TEST(tail_waits_for_a_spool_that_does_not_exist_yet)
{
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	struct gen g;
	int fd;

	mkdir_test();
	CHECK_INT(prof_tail_open(in_dir("later.spool"), NULL, &t), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_WAITING);
	CHECK(prof_tail_spool(t) == NULL);
	CHECK_INT(prof_tail_wait(t, 10), ==, 0);
	/* an empty file, then half a header: still waiting, no error */
	fd = open(in_dir("later.spool"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_WAITING);
	CHECK_INT(write(fd, "\x89PRF", 4), ==, 4);
	close(fd);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_WAITING);
	CHECK_INT(gen_open(&g, in_dir("later.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 3), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 3);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	prof_tail_free(t);
	rm_test();
}

TEST(tail_of_a_file_that_is_no_spool_fails_at_once)
{
	struct prof_tail *t = NULL;
	FILE *f;

	mkdir_test();
	f = fopen(in_dir("text"), "w");
	CHECK(f != NULL);
	fputs("hello, world\n", f);
	fclose(f);
	CHECK_INT(prof_tail_open(in_dir("text"), NULL, &t), ==, -EBADMSG);
	CHECK(t == NULL);
	CHECK(strstr(prof_errmsg(), "is not a prof spool") != NULL);
	CHECK_INT(prof_tail_open(dir, NULL, &t), ==, -EISDIR);
	CHECK_INT(prof_tail_open("", NULL, &t), ==, -EINVAL);
	rm_test();
}

TEST(tail_batches_are_bounded)
{
	struct prof_tail_opts o = { .sz = sizeof(o), .max_batch = 7 };
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	struct gen g;
	size_t total = 0, polls = 0;
	int r;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("b.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 100), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("b.spool"), &o, &t), ==, 0);
	do {
		r = prof_tail_poll(t, &b);
		CHECK(r >= 0 && r <= 7);
		CHECK_INT(b.more, ==, r == 7);
		total += (size_t)r;
		polls++;
	} while (b.more);
	CHECK_INT(total, ==, 100);
	CHECK_INT(polls, ==, 15);	/* 14 full batches, then 2 and the trailer */
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	prof_tail_free(t);
	rm_test();
}

TEST(tail_from_end_skips_the_samples_there_but_reads_definitions)
{
	struct prof_tail_opts o = { .sz = sizeof(o), .from_end = true };
	PROF_OPTS(prof_tail_batch, b);
	PROF_OPTS(prof_tail_stats, st);
	struct prof_tail *t;
	struct gen g;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("e.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 40), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("e.spool"), &o, &t), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 0);
	prof_tail_stats(t, &st);
	CHECK_INT(st.skipped, ==, 40);
	CHECK_INT(st.threads_alive, ==, 2);
	CHECK_INT(gen_samples(&g, 4), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 4);
	CHECK_INT(b.samples[0]->time_ns, ==, g.t0 + 41000000);
	CHECK_STR(b.samples[0]->comm, "main");
	CHECK(prof_spool_stack(prof_tail_spool(t), b.samples[0]->stack) != NULL);
	prof_tail_free(t);
	rm_test();
}

TEST(tail_names_a_sample_after_its_thread_at_that_time)
{
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	struct gen g;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("n.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 1), ==, 0);
	CHECK_INT(prof_spool_writer_rename_thread(g.w, g.main, g.t0 + 1500000, "renamed"), ==, 0);
	CHECK_INT(gen_samples(&g, 1), ==, 0);
	CHECK_INT(prof_spool_writer_rename_thread(g.w, g.main, g.t0 + 2500000, ""), ==, 0);
	CHECK_INT(gen_samples(&g, 1), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("n.spool"), NULL, &t), ==, 0);
	/* one batch holds all three: each keeps the name of its time */
	CHECK_INT(prof_tail_poll(t, &b), ==, 3);
	CHECK_STR(b.samples[0]->comm, "main");
	CHECK_STR(b.samples[1]->comm, "renamed");
	CHECK_STR(b.samples[2]->comm, "app");	/* a thread without a name: its process's */
	prof_tail_free(t);
	rm_test();
}

TEST(tail_stops_when_the_file_shrinks)
{
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	struct gen g;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("s.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 20), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("s.spool"), NULL, &t), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 20);
	CHECK_INT(truncate(in_dir("s.spool"), 100), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_SHRUNK);
	CHECK(strstr(b.reason, "shrank") != NULL);
	CHECK(prof_tail_state_is_final(b.state));
	/* and it stays stopped, even when the file grows again */
	CHECK_INT(gen_samples(&g, 20), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_SHRUNK);
	prof_tail_free(t);
	rm_test();
}

TEST(tail_stops_before_a_corrupt_block)
{
	PROF_OPTS(prof_tail_batch, b);
	PROF_OPTS(prof_tail_stats, st);
	struct prof_tail *t;
	struct stat s1, s2;
	struct gen g;
	char byte;
	int fd;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("c.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 10), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(stat(in_dir("c.spool"), &s1), ==, 0);
	CHECK_INT(gen_samples(&g, 10), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(stat(in_dir("c.spool"), &s2), ==, 0);
	/* a byte of the payload of the block after the first ten samples */
	fd = open(in_dir("c.spool"), O_RDWR);
	CHECK(fd >= 0);
	CHECK_INT(pread(fd, &byte, 1, s1.st_size + 30), ==, 1);
	byte ^= 0x40;
	CHECK_INT(pwrite(fd, &byte, 1, s1.st_size + 30), ==, 1);
	close(fd);
	CHECK(s2.st_size > s1.st_size + 30);
	CHECK_INT(prof_tail_open(in_dir("c.spool"), NULL, &t), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 10);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_CORRUPT);
	CHECK(strstr(b.reason, "checksum mismatch") != NULL);
	prof_tail_stats(t, &st);
	CHECK_INT(st.offset, ==, s1.st_size);
	prof_tail_free(t);
	rm_test();
}

/* Poll T and write what it hands out to F, a line a sample; false on an error. */
static bool render(struct prof_tail *t, struct prof_tail_batch *b, FILE *f)
{
	size_t i;
	int r = prof_tail_poll(t, b);

	for (i = 0; r > 0 && i < (size_t)r; i++)
		fprintf(f, "%llu %u %u %d %d %s\n", (unsigned long long)b->samples[i]->time_ns,
			b->samples[i]->thread, b->samples[i]->stack, b->samples[i]->pid,
			b->samples[i]->tid, b->samples[i]->comm);
	return r >= 0;
}

TEST(tail_of_a_file_written_a_byte_at_a_time_reads_as_the_whole)
{
	struct prof_tail_opts o = { .sz = sizeof(o), .max_batch = 3 };
	char *whole = NULL, *trickled = NULL;
	size_t wlen = 0, tlen = 0, i;
	struct membuf mb = { 0 };
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	FILE *fw, *ft;
	bool waited = false, cut = false;
	int fd;

	mkdir_test();
	write_rich(&mb, 64, true);	/* small blocks: many of them */
	fd = open(in_dir("whole.spool"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, mb.p, mb.len), ==, mb.len);
	close(fd);
	fw = open_memstream(&whole, &wlen);
	CHECK_INT(prof_tail_open(in_dir("whole.spool"), &o, &t), ==, 0);
	do
		CHECK(render(t, &b, fw));
	while (b.more || !prof_tail_state_is_final(b.state));
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	prof_tail_free(t);
	fclose(fw);

	ft = open_memstream(&trickled, &tlen);
	CHECK_INT(prof_tail_open(in_dir("trickled.spool"), &o, &t), ==, 0);
	fd = open(in_dir("trickled.spool"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (i = 0; i < mb.len; i++) {
		CHECK_INT(write(fd, mb.p + i, 1), ==, 1);
		do
			CHECK(render(t, &b, ft));
		while (b.more);
		/* never a false alarm on a block that is still being written */
		CHECK(!prof_tail_state_is_final(b.state) || i + 1 == mb.len);
		waited |= b.state == PROF_TAIL_STATE_WAITING;
		cut |= b.state == PROF_TAIL_STATE_CUT;
	}
	close(fd);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	CHECK(waited && cut);
	prof_tail_free(t);
	fclose(ft);
	CHECK(wlen > 0);
	CHECK_STR(trickled, whole);
	free(whole);
	free(trickled);
	free(mb.p);
	rm_test();
}

/* The samples SP holds. */
static long count_samples(struct prof_spool *sp)
{
	PROF_OPTS(prof_record, ev);
	long n = 0;
	int r;

	while ((r = prof_spool_next(sp, &ev)) > 0)
		n += ev.type == PROF_RECORD_SAMPLE;
	return r < 0 ? -1 : n;
}

/* The names in the test's directory, sorted, joined by spaces. */
static const char *dir_names(void)
{
	static char out[512];
	struct dirent **list;
	int n, i;

	out[0] = '\0';
	n = scandir(dir, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, "..") &&
		    strlen(out) + strlen(list[i]->d_name) + 2 < sizeof(out))
			strcat(strcat(out, *out ? " " : ""), list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return out;
}

TEST(a_recording_s_file_is_at_its_path_only_once_published)
{
	struct spool_file f;
	struct prof_spool *sp;
	struct gen g, old;

	mkdir_test();
	CHECK_INT(gen_open(&old, in_dir("r.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&old, 50), ==, 0);
	CHECK_INT(gen_finish(&old), ==, 0);
	/* made and written, then dropped before sampling started: nothing changed */
	CHECK_INT(gen_open_as(&g, in_dir("r.spool"), false, &f), ==, 0);
	CHECK_INT(gen_samples(&g, 5), ==, 0);
	CHECK_INT(prof_spool_writer_close(g.w), ==, 0);
	spool_file_close(&f);
	CHECK_STR(dir_names(), "r.spool");
	/* published: the old spool becomes r.spool.old, the new one is at the path */
	CHECK_INT(gen_open_as(&g, in_dir("r.spool"), false, &f), ==, 0);
	CHECK(f.locked && !f.published && !f.in_place);
	CHECK_INT(spool_file_publish(&f), ==, 0);
	CHECK_INT(spool_file_publish(&f), ==, 0);	/* once only */
	CHECK_STR(dir_names(), "r.spool r.spool.old");
	CHECK_INT(gen_samples(&g, 7), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	spool_file_close(&f);
	CHECK_INT(prof_spool_open(in_dir("r.spool"), &sp), ==, 0);
	CHECK_INT(count_samples(sp), ==, 7);
	prof_spool_close(sp);
	CHECK_INT(prof_spool_open(in_dir("r.spool.old"), &sp), ==, 0);
	CHECK_INT(count_samples(sp), ==, 50);
	prof_spool_close(sp);
	/* a device is written as it is: nothing made beside it, nothing renamed */
	CHECK_INT(spool_file_create(&f, "/dev/null"), ==, 0);
	CHECK(f.in_place && f.published && !f.tmp);
	spool_file_close(&f);
	CHECK_INT(spool_file_create(&f, dir), ==, -EISDIR);
	CHECK(strstr(prof_errmsg(), "is a directory"));
	rm_test();
}

TEST(tail_ends_as_abandoned_when_the_writer_s_lock_is_gone)
{
	PROF_OPTS(prof_tail_batch, b);
	struct prof_spool *sp;
	struct spool_file f;
	struct prof_tail *t;
	struct gen g;

	mkdir_test();
	CHECK_INT(gen_open_as(&g, in_dir("k.spool"), false, &f), ==, 0);
	CHECK_INT(spool_file_publish(&f), ==, 0);
	CHECK_INT(gen_samples(&g, 5), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("k.spool"), NULL, &t), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 5);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_RUNNING);
	CHECK_INT(prof_spool_has_writer(prof_tail_spool(t)), ==, 1);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);	/* nothing new, but the writer lives */
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_RUNNING);
	/* the writer goes without a trailer, after a last block */
	CHECK_INT(gen_samples(&g, 3), ==, 0);
	CHECK_INT(prof_spool_writer_close(g.w), ==, 0);
	spool_file_close(&f);
	CHECK_INT(poll_all(t, &b), ==, 3);
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_ABANDONED);
	CHECK(prof_tail_state_is_final(b.state));
	CHECK_STR(prof_tail_state_name(b.state), "abandoned");
	CHECK(strstr(b.reason, "its writer is gone and it has no trailer after"));
	prof_tail_free(t);
	CHECK_INT(prof_spool_open(in_dir("k.spool"), &sp), ==, 0);
	CHECK_INT(prof_spool_has_writer(sp), ==, 0);
	prof_spool_close(sp);
	/* a spool whose writer did not lock it cannot tell */
	CHECK_INT(gen_open(&g, in_dir("u.spool"), false), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(prof_spool_open(in_dir("u.spool"), &sp), ==, 0);
	CHECK_INT(prof_spool_has_writer(sp), ==, -ENOTSUP);
	prof_spool_close(sp);
	rm_test();
}

TEST(tail_discard_punches_holes_only_for_a_recorder_s_tail)
{
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	struct stat before, after;
	struct gen g;
	size_t i;
	int fd;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("h.spool"), true), ==, 0);
	for (i = 0; i < 64; i++) {	/* a few hundred KiB in blocks */
		CHECK_INT(gen_samples(&g, 2000), ==, 0);
		CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	}
	CHECK_INT(prof_tail_open(in_dir("h.spool"), NULL, &t), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 128000);
	CHECK_INT(stat(in_dir("h.spool"), &before), ==, 0);
	/* standalone: not a tail that may discard, and nothing happens */
	CHECK_INT(prof_tail_discard_consumed(t), ==, -ENOTSUP);
	CHECK_STR(prof_errmsg(), "tail: only the tail of a recorder discards what it read");
	CHECK_INT(stat(in_dir("h.spool"), &after), ==, 0);
	CHECK_INT(after.st_blocks, ==, before.st_blocks);
	/* as a recorder's tail has it: a descriptor to write through */
	fd = open(in_dir("h.spool"), O_RDWR);
	CHECK(fd >= 0);
	t->wfd = fd;
	CHECK_INT(prof_tail_discard_consumed(t), ==, 0);
	CHECK_INT(stat(in_dir("h.spool"), &after), ==, 0);
	CHECK_INT(after.st_size, ==, before.st_size);
	CHECK_INT(after.st_blocks * 4, <, before.st_blocks);
	/* what was not read yet stays: the writer goes on, the tail reads it */
	CHECK_INT(gen_samples(&g, 3), ==, 0);
	CHECK_INT(gen_finish(&g), ==, 0);
	CHECK_INT(poll_all(t, &b), ==, 3);
	CHECK_INT(b.state, ==, PROF_TAIL_STATE_FINISHED);
	prof_tail_free(t);
	rm_test();
}

/* ---- views ---------------------------------------------------------------- */

/* The output of a view of format FORMAT over the spool at PATH, read whole. */
static char *view_of(const char *path, enum prof_tail_format format)
{
	struct prof_tail_view_opts vo = { .sz = sizeof(vo), .format = format, .title = "x.spool" };
	struct prof_tail_view *v;
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f || prof_tail_open(path, NULL, &t) < 0 || prof_tail_view_new(&vo, &v) < 0)
		abort();
	do {
		if (prof_tail_poll(t, &b) < 0 || prof_tail_view_add(v, t, &b, f) < 0)
			abort();
	} while (b.more || !prof_tail_state_is_final(b.state));
	if (prof_tail_view_print(v, t, f) < 0)
		abort();
	prof_tail_view_free(v);
	prof_tail_free(t);
	fclose(f);
	return out;
}

static int gen_view_spool(const char *path)
{
	struct gen g;

	if (gen_open(&g, path, false) < 0 || gen_samples(&g, 7) < 0)
		return -1;
	if (prof_spool_writer_add_sample(g.w, &PROF_INIT(prof_sample, .time_ns = g.t0 + 8000001,
					 .thread = g.main)) < 0)
		return -1;
	prof_spool_writer_add_lost(g.w, &PROF_INIT(prof_lost, .time_ns = g.t0 + 8000002,
						       .kind = PROF_LOST_SAMPLES, .count = 2));
	return gen_finish(&g);
}

TEST(tail_view_samples_prints_a_line_per_sample)
{
	char *out;

	mkdir_test();
	CHECK_INT(gen_view_spool(in_dir("v.spool")), ==, 0);
	out = view_of(in_dir("v.spool"), PROF_TAIL_FORMAT_SAMPLES);
	CHECK_STR(out, "0.001000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.002000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.003000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.004000 17 19 worker root_fn;mid_fn\n"
		       "0.005000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.006000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.007000 17 18 main root_fn;mid_fn;leaf_fn\n"
		       "0.008000 17 18 main [empty stack]\n");
	free(out);
	rm_test();
}

TEST(tail_view_json_prints_an_object_per_interval)
{
	char *out;

	mkdir_test();
	CHECK_INT(gen_view_spool(in_dir("v.spool")), ==, 0);
	out = view_of(in_dir("v.spool"), PROF_TAIL_FORMAT_JSON);
	CHECK_STR(out, "{\"time\":0.008000,\"state\":\"finished\",\"interval\":{\"seconds\":0.007000,"
		       "\"samples\":8,\"rate\":1142.9,\"lost\":2},\"all\":{\"samples\":8,\"lost\":2,"
		       "\"skipped\":0},\"weight\":\"cpu\",\"unit\":\"samples\",\"processes\":1,"
		       "\"threads\":2,\"functions\":["
		       "{\"function\":\"leaf_fn\",\"module\":\"app\",\"last\":6,\"all\":6},"
		       "{\"function\":\"[empty stack]\",\"module\":\"\",\"last\":1,\"all\":1},"
		       "{\"function\":\"mid_fn\",\"module\":\"app\",\"last\":1,\"all\":1}]}\n");
	free(out);
	rm_test();
}

TEST(tail_view_top_prints_a_block_per_interval)
{
	char *out;

	mkdir_test();
	CHECK_INT(gen_view_spool(in_dir("v.spool")), ==, 0);
	out = view_of(in_dir("v.spool"), PROF_TAIL_FORMAT_TOP);
	CHECK_STR(out, "prof tail: x.spool, finished, 0.0 s recorded, 1 process and 2 threads alive\n"
		       "last 0.0 s: 8 samples (1143/s), 2 lost; all: 8 samples, 2 lost\n"
		       "     last  self%       all  self%  function       module\n"
		       "        6  75.0%         6  75.0%  leaf_fn        app\n"
		       "        1  12.5%         1  12.5%  [empty stack]  \n"
		       "        1  12.5%         1  12.5%  mid_fn         app\n"
		       "\n");
	free(out);
	rm_test();
}

TEST(tail_view_counts_intervals_apart_and_drops_them_when_printed)
{
	struct prof_tail_view_opts vo = { .sz = sizeof(vo), .format = PROF_TAIL_FORMAT_JSON };
	struct prof_tail_view *v;
	PROF_OPTS(prof_tail_batch, b);
	struct prof_tail *t;
	char *out = NULL;
	size_t len = 0;
	struct gen g;
	FILE *f;

	mkdir_test();
	CHECK_INT(gen_open(&g, in_dir("i.spool"), false), ==, 0);
	CHECK_INT(gen_samples(&g, 4), ==, 0);
	CHECK_INT(prof_spool_writer_flush(g.w), ==, 0);
	CHECK_INT(prof_tail_open(in_dir("i.spool"), NULL, &t), ==, 0);
	CHECK_INT(prof_tail_view_new(&vo, &v), ==, 0);
	f = open_memstream(&out, &len);
	CHECK_INT(prof_tail_poll(t, &b), ==, 4);
	CHECK_INT(prof_tail_view_add(v, t, &b, f), ==, 0);
	CHECK_INT(prof_tail_view_print(v, t, f), ==, 0);
	/* an interval with nothing new: zero counts, the totals stay */
	CHECK_INT(prof_tail_poll(t, &b), ==, 0);
	CHECK_INT(prof_tail_view_add(v, t, &b, f), ==, 0);
	CHECK_INT(prof_tail_view_print(v, t, f), ==, 0);
	fclose(f);
	CHECK(strstr(out, "\"interval\":{\"seconds\":0.003000,\"samples\":4,") != NULL);
	CHECK(strstr(out, "{\"function\":\"leaf_fn\",\"module\":\"app\",\"last\":3,\"all\":3}") != NULL);
	CHECK(strstr(out, "\n{\"time\":0.004000,\"state\":\"running\",\"interval\":{\"seconds\":0.000000,"
			  "\"samples\":0,\"rate\":0.0,\"lost\":0},\"all\":{\"samples\":4,") != NULL);
	CHECK(strstr(out, "{\"function\":\"leaf_fn\",\"module\":\"app\",\"last\":0,\"all\":3}") != NULL);
	CHECK_INT(prof_tail_format_parse("json"), ==, PROF_TAIL_FORMAT_JSON);
	CHECK_INT(prof_tail_format_parse("folded"), ==, -EINVAL);
	CHECK_STR(prof_tail_format_name(PROF_TAIL_FORMAT_SAMPLES), "samples");
	free(out);
	prof_tail_view_free(v);
	prof_tail_free(t);
	prof_spool_writer_close(g.w);
	rm_test();
}
