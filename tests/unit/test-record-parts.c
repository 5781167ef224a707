/* SPDX-License-Identifier: MIT */
/*
 * test-record-parts.c - the recorder's pieces that need no perf events:
 * the ring reader on a synthetic buffer (records that wrap), the sorter's
 * ordering and watermark, /proc/PID/maps parsing, and the set of mapped
 * files the recorder holds for its tail's symbolizer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/capture.h"
#include "record/path_cache.h"
#include "harness.h"
#include "record/perf_ring.h"
#include "record/proc.h"
#include "record/sorter.h"

#define PAGE 4096
#define DATA 4096

/* A ring in plain memory: the metadata page, then DATA bytes of data. */
static uint8_t *fake_ring(struct perf_ring *r)
{
	uint8_t *mem = aligned_alloc(PAGE, PAGE + DATA);

	memset(mem, 0, PAGE + DATA);
	memset(r, 0, sizeof(*r));
	r->base = mem;
	r->page_size = PAGE;
	r->data_size = DATA;
	return mem;
}

/* Write a record of SIZE bytes, filled with BYTE, at absolute position POS. */
static void put_record(uint8_t *mem, uint64_t pos, uint16_t size, uint8_t byte)
{
	uint8_t rec[512];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };
	size_t i;

	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), byte, size - sizeof(h));
	for (i = 0; i < size; i++)
		mem[PAGE + (pos + i) % DATA] = rec[i];
}

TEST(ring_reads_records_that_wrap)
{
	struct perf_ring r;
	uint8_t *mem = fake_ring(&r);
	struct perf_event_mmap_page *meta = (void *)mem;
	const struct perf_event_header *h;
	uint64_t pos = DATA - 100;	/* the second record straddles the end */
	int i;

	put_record(mem, pos, 64, 0xa1);
	put_record(mem, pos + 64, 200, 0xb2);
	put_record(mem, pos + 264, 40, 0xc3);
	meta->data_tail = pos;
	meta->data_head = pos + 304;
	CHECK(perf_ring_begin(&r));
	h = perf_ring_next(&r);
	CHECK(h && h->size == 64 && ((const uint8_t *)h)[63] == 0xa1);
	h = perf_ring_next(&r);
	CHECK(h && h->size == 200);
	for (i = sizeof(*h); i < 200; i++)
		CHECK_INT(((const uint8_t *)h)[i], ==, 0xb2);
	h = perf_ring_next(&r);
	CHECK(h && h->size == 40 && ((const uint8_t *)h)[39] == 0xc3);
	CHECK(perf_ring_next(&r) == NULL);
	perf_ring_end(&r);
	CHECK_INT(meta->data_tail, ==, pos + 304);
	CHECK(!perf_ring_begin(&r));
	free(r.copy);
	free(mem);
}

TEST(ring_header_split_across_the_end)
{
	struct perf_ring r;
	uint8_t *mem = fake_ring(&r);
	struct perf_event_mmap_page *meta = (void *)mem;
	const struct perf_event_header *h;
	uint64_t pos = 3 * DATA - 4;	/* head and tail have lapped the ring */

	put_record(mem, pos, 48, 0x5a);
	meta->data_tail = pos;
	meta->data_head = pos + 48;
	CHECK(perf_ring_begin(&r));
	h = perf_ring_next(&r);
	CHECK(h && h->size == 48 && h->type == PERF_RECORD_SAMPLE);
	CHECK_INT(((const uint8_t *)h)[47], ==, 0x5a);
	free(r.copy);
	free(mem);
}

TEST(ring_keeps_a_held_record_until_it_is_done)
{
	struct perf_ring r;
	uint8_t *mem = fake_ring(&r);
	struct perf_event_mmap_page *meta = (void *)mem;
	const struct perf_event_header *h;
	int64_t first, second;

	r.held = calloc(PERF_RING_HOLD_MAX, sizeof(*r.held));
	put_record(mem, 0, 64, 0x11);
	put_record(mem, 64, 64, 0x22);
	put_record(mem, 128, 32, 0x33);
	meta->data_tail = 0;
	meta->data_head = 160;
	CHECK(perf_ring_begin(&r));
	h = perf_ring_next(&r);
	first = perf_ring_hold(&r, h);
	h = perf_ring_next(&r);
	second = perf_ring_hold(&r, h);
	CHECK(perf_ring_next(&r) != NULL);
	CHECK(perf_ring_next(&r) == NULL);
	CHECK(first >= 0);
	CHECK_INT(second, ==, first + 1);
	perf_ring_end(&r);
	CHECK_INT(meta->data_tail, ==, 0);	/* the first is held */
	/* the second done first: the space stays the kernel's to keep until the first is */
	perf_ring_done(&r, (uint64_t)second);
	perf_ring_end(&r);
	CHECK_INT(meta->data_tail, ==, 0);
	/* a new pass reads on from where the last ended, not from data_tail */
	meta->data_head = 160;
	CHECK(!perf_ring_begin(&r));
	perf_ring_done(&r, (uint64_t)first);
	perf_ring_end(&r);
	CHECK_INT(meta->data_tail, ==, 160);
	free(r.held);
	free(mem);
}

TEST(path_cache_keys_a_stack_by_its_whole_path)
{
	struct path_cache c;
	struct path_key root = path_key_seed(0, 0), ab, ba, a;

	path_cache_init(&c);
	a = path_key_step(root, 0x1000);
	ab = path_key_step(a, 0x2000);
	ba = path_key_step(path_key_step(root, 0x2000), 0x1000);
	CHECK(ab.a != ba.a || ab.b != ba.b);
	CHECK_INT(path_cache_find(&c, ab), ==, 0);	/* nothing made yet */
	path_cache_put(&c, ab, 7);
	path_cache_put(&c, a, 3);
	CHECK_INT(path_cache_find(&c, ab), ==, 7);
	CHECK_INT(path_cache_find(&c, a), ==, 3);
	CHECK_INT(path_cache_find(&c, ba), ==, 0);
	/* a truncated stack's path is another */
	CHECK_INT(path_cache_find(&c, path_key_step(path_key_step(path_key_seed(0, 2), 0x1000),
						     0x2000)), ==, 0);
	path_cache_clear(&c);
	CHECK_INT(path_cache_find(&c, ab), ==, 0);
	path_cache_release(&c);
}

TEST(ring_drops_a_torn_record)
{
	struct perf_ring r;
	uint8_t *mem = fake_ring(&r);
	struct perf_event_mmap_page *meta = (void *)mem;

	put_record(mem, 0, 64, 1);
	meta->data_tail = 0;
	meta->data_head = 32;	/* the record claims more than is there */
	CHECK(perf_ring_begin(&r));
	CHECK(perf_ring_next(&r) == NULL);
	perf_ring_end(&r);
	CHECK_INT(meta->data_tail, ==, 32);
	free(mem);
}

TEST(sorter_orders_by_time_then_arrival_and_honours_the_watermark)
{
	static const uint64_t times[] = { 50, 10, 30, 10, 70, 20, 30 };
	struct sorter s;
	const struct sorted_rec *r;
	uint64_t last = 0, seq_at_10 = 0;
	size_t i, n = 0;

	sorter_init(&s);
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		CHECK_INT(sorter_push(&s, times[i], (int)i, &i, sizeof(i)), ==, 0);
	while ((r = sorter_pop(&s, 30))) {
		size_t idx;

		memcpy(&idx, r->data, sizeof(idx));
		CHECK(r->time >= last);
		if (r->time == 10 && n == 1)
			CHECK(idx > seq_at_10);	/* equal times keep arrival order */
		if (r->time == 10 && n == 0)
			seq_at_10 = idx;
		CHECK_INT(r->cpu, ==, idx);
		last = r->time;
		n++;
	}
	CHECK_INT(n, ==, 5);	/* 10 10 20 30 30; 50 and 70 wait */
	CHECK_INT(sorter_len(&s), ==, 2);
	CHECK(sorter_pop(&s, UINT64_MAX)->time == 50);
	CHECK(sorter_pop(&s, UINT64_MAX)->time == 70);
	CHECK(sorter_pop(&s, UINT64_MAX) == NULL);
	sorter_release(&s);
}

TEST(maps_lines_parse_with_spaces_and_without_paths)
{
	char l1[] = "55d0c0a00000-55d0c0a21000 r-xp 00001000 08:01 1234567    /usr/bin/my prog\n";
	char l2[] = "7ffd1c3f0000-7ffd1c411000 rw-p 00000000 00:00 0          [stack]\n";
	char l3[] = "7f00-7f10 rw-p 0 00:00 0\n";
	char bad[] = "not a maps line\n";
	struct map_entry e;

	CHECK(maps_parse_line(l1, &e));
	CHECK_INT(e.start, ==, 0x55d0c0a00000ull);
	CHECK_INT(e.end, ==, 0x55d0c0a21000ull);
	CHECK_INT(e.pgoff, ==, 0x1000);
	CHECK_INT(e.dev_major, ==, 8);
	CHECK_INT(e.dev_minor, ==, 1);
	CHECK_INT(e.inode, ==, 1234567);
	CHECK(e.exec);
	CHECK_STR(e.path, "/usr/bin/my prog");
	CHECK(maps_parse_line(l2, &e));
	CHECK(!e.exec);
	CHECK_STR(e.path, "[stack]");
	CHECK(maps_parse_line(l3, &e));
	CHECK_STR(e.path, "");
	CHECK(!maps_parse_line(bad, &e));
}

TEST(maps_of_this_process_hold_its_code)
{
	struct map_entry *maps;
	char comm[16];
	pid_t ppid;
	int n, i, exec = 0;

	n = maps_read(getpid(), &maps);
	CHECK(n > 0);
	for (i = 0; i < n; i++)
		exec += maps[i].exec && maps[i].path[0] == '/';
	maps_free(maps, n);
	CHECK(exec >= 2);	/* the test binary and libc at least */
	CHECK_INT(proc_stat(getpid(), comm, &ppid, NULL), ==, 0);
	CHECK_STR(comm, "unit-tests");
	CHECK_INT(ppid, ==, getppid());
	CHECK_INT(maps_read(999999999, &maps), ==, -ESRCH);
}

TEST(proc_tells_a_live_process_from_a_zombie_and_one_reaped)
{
	char name[16], path[] = "/tmp/prof-proc-XXXXXX", want[64];
	pid_t *tids, child = fork();
	uint64_t v = 0;
	int n, i, fd, status, mine = 0;

	if (child == 0)
		_exit(0);
	CHECK(child > 0);
	CHECK(!proc_gone(getpid()));
	/* exited, not yet reaped: a zombie is gone all the same */
	for (i = 0; i < 1000 && !proc_gone(child); i++)
		usleep(1000);
	CHECK(proc_gone(child));
	CHECK_INT(waitpid(child, &status, 0), ==, child);
	CHECK(proc_gone(child));
	n = proc_tasks(getpid(), &tids);
	CHECK(n >= 1);
	for (i = 0; i < n; i++)
		mine += tids[i] == getpid();
	free(tids);
	CHECK_INT(mine, ==, 1);
	CHECK_INT(proc_tasks(child, &tids), ==, -ESRCH);
	proc_thread_name(getpid(), getpid(), name, "fallback");
	CHECK_STR(name, "unit-tests");
	proc_thread_name(child, child, name, "fallback");
	CHECK_STR(name, "fallback");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "4096\n", 5), ==, 5);
	close(fd);
	CHECK_INT(proc_read_u64(path, &v), ==, 0);
	CHECK_INT(v, ==, 4096);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK_INT(write(fd, "x\n", 2), ==, 2);
	close(fd);
	CHECK_INT(proc_read_u64(path, &v), ==, -EIO);
	snprintf(want, sizeof(want), "cannot parse '%s'", path);
	CHECK_STR(prof_errmsg(), want);
	unlink(path);
	CHECK_INT(proc_read_u64(path, &v), ==, -ENOENT);
}

/* The file at PATH, as the recorder's capture hands it over. */
static struct image_file file_of(const char *path)
{
	struct image_file f = { .path = path };
	struct stat st;

	if (stat(path, &st) == 0) {
		f.dev_major = major(st.st_dev);
		f.dev_minor = minor(st.st_dev);
		f.inode = st.st_ino;
	}
	return f;
}

TEST(image_set_holds_each_file_once_and_past_its_deletion)
{
	char path[] = "/tmp/prof-image-XXXXXX", other[] = "/tmp/prof-image-XXXXXX", buf[8] = { 0 };
	struct as_module unread = { .path = "x", .open_path = "x" };
	struct image_file m, o;
	struct capture c;
	struct image_set *s;
	const char *held, *held2;
	int fd = mkstemp(path), ofd = mkstemp(other), rfd;

	CHECK(fd >= 0 && ofd >= 0);
	CHECK_INT(write(fd, "image 1", 7), ==, 7);
	close(fd);
	close(ofd);
	m = file_of(path);
	o = file_of(other);
	CHECK_INT(capture_init(&c), ==, 0);
	s = c.images;
	CHECK_INT(image_set_add(s, 1, &m), ==, 0);
	CHECK_INT(image_set_add(s, 3, &m), ==, 0);	/* another process maps it */
	CHECK_INT(image_set_add(s, 4, &o), ==, 0);
	CHECK_INT(capture_module(&c, 5, &unread), ==, 0);	/* no ELF read: not held */
	image_set_ref(s);
	capture_release(&c);
	held = image_set_path(s, 1);
	held2 = image_set_path(s, 3);
	CHECK(held && held2 && !strcmp(held, held2) && !strncmp(held, "/proc/self/fd/", 14));
	CHECK(image_set_path(s, 4) && strcmp(image_set_path(s, 4), held));
	CHECK(!image_set_path(s, 2) && !image_set_path(s, 5) && !image_set_path(s, 99));
	/* the path now names nothing: the held file still reads as it was */
	CHECK_INT(unlink(path), ==, 0);
	image_set_ref(s);
	image_set_unref(s);
	rfd = open(image_set_path(s, 1), O_RDONLY);
	CHECK(rfd >= 0);
	CHECK_INT(read(rfd, buf, sizeof(buf) - 1), ==, 7);
	CHECK_STR(buf, "image 1");
	close(rfd);
	image_set_unref(s);
	unlink(other);
}
