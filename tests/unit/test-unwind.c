/* SPDX-License-Identifier: MIT */
/*
 * test-unwind.c - the unwinder where perf events are refused: the target
 * selfsample (tests/targets, built -O2 without frame pointers) takes
 * samples of its own stack, as perf would (registers, a copy of the stack
 * above rsp, its mappings), and writes them in the unwind capture format;
 * here they are read back and unwound by both engines, offline.  Each
 * sample's stack must be complete, the same by the compiled engine and by
 * libdwfl, and hold the functions of the target that the target said it
 * was in, in order; and how an address space trusts a file named by
 * build-id.  Nothing here opens a perf event.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/elf_file.h"
#include "unwind/addr_space.h"
#include "unwind/unwind.h"
#include "unwind/walk_memo.h"

/* The selfsample target of this build. */
static const char *target_path(void)
{
	return t_target("selfsample");
}

#define MAX_SAMPLES 32

struct taken {
	char capture[32];
	char expect[MAX_SAMPLES][512];	/* what the target said each sample holds */
	size_t n;
};

/* Run the target: its capture, and what it said of each sample.  0 or -1. */
static int take(struct taken *t)
{
	const char *target = target_path();
	char cmd[2 * PATH_MAX];
	FILE *p;
	int fd;

	snprintf(t->capture, sizeof(t->capture), "/tmp/prof-capture-XXXXXX");
	fd = mkstemp(t->capture);
	if (!target || fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", target, t->capture);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	t->n = 0;
	while (t->n < MAX_SAMPLES && fgets(t->expect[t->n], sizeof(t->expect[0]), p)) {
		t->expect[t->n][strcspn(t->expect[t->n], "\n")] = '\0';
		t->n++;
	}
	return pclose(p) == 0 ? 0 : -1;
}

/* Run the target and read its samples back into CAP, for UW (initialised here): 0 or -1. */
static int load(struct taken *t, struct unwinder *uw, struct unwind_capture *cap)
{
	int r;

	if (!target_path() || take(t) < 0 || unwinder_init(uw) < 0)
		return -1;
	r = unwind_capture_read(t->capture, &uw->spaces, cap);
	unlink(t->capture);
	return r < 0 ? -1 : 0;
}

/*
 * The names of RES's frames in the target's module, innermost first, into
 * OUT; *LAST_IN_TARGET whether the outermost frame is the target's.
 */
static void target_frames(struct addr_space *as, const struct elf_file *f,
			  const struct unwind_result *res, char *out, size_t len,
			  bool *last_in_target)
{
	size_t i, k = 0;

	out[0] = '\0';
	*last_in_target = false;
	for (i = 0; i < res->n; i++) {
		struct as_module *m = as_find(as, res->pc[i]);
		const struct symtab_entry *e;
		uint64_t delta;

		*last_in_target = m && !strcmp(m->path, target_path());
		if (!*last_in_target)
			continue;
		e = elf_file_lookup(f, res->pc[i] - m->start + m->pgoff, &delta);
		k += (size_t)snprintf(out + k, len - k, "%s%s", k ? " " : "", e ? e->name : "?");
		if (k >= len)
			return;
	}
}

/* The harness refuses perf events (harness.c): the tests here ran without them. */
TEST(unit_tests_run_where_perf_events_are_refused)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK, .disabled = 1 };
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd >= 0)
		close((int)fd);
	CHECK_INT(fd, ==, -1);
	CHECK_INT(errno, ==, EACCES);
}

static bool same(const struct unwind_result *a, const struct unwind_result *b)
{
	return a->n == b->n && a->cause == b->cause && !memcmp(a->pc, b->pc, a->n * sizeof(*a->pc));
}

TEST(unwind_engines_agree_on_samples_a_program_took_of_itself)
{
	static struct unwind_result compiled, again, dwfl;
	static struct taken t;
	struct unwind_capture cap;
	struct unwinder uw;
	struct elf_file f;
	char got[512];
	uint32_t by_dwfl = 0;
	size_t i;

	if (!target_path())
		printf("  no %s/targets/selfsample: build the targets first (make tests)\n",
		       getenv("BUILD") ? getenv("BUILD") : "build");
	CHECK_INT(load(&t, &uw, &cap), ==, 0);
	CHECK_INT(t.n, ==, 12);
	CHECK_INT(elf_file_open(target_path(), &f), ==, 0);
	CHECK_INT(cap.nsamples, ==, t.n);
	CHECK_INT(cap.nspaces, ==, 1);
	for (i = 0; i < cap.nsamples; i++) {
		struct unwind_capture_sample *s = &cap.samples[i];
		struct addr_space *as = &cap.spaces[s->space]->as;
		bool last_in_target;

		uw.engine = UNWIND_COMPILED;
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&compiled), ==, 0);
		/* again, from the rule cache: the same */
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&again), ==, 0);
		uw.engine = UNWIND_DWFL;
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&dwfl), ==, 0);
		target_frames(as, &f, &compiled, got, sizeof(got), &last_in_target);
		if (strcmp(got, t.expect[i]))
			printf("  sample %zu: got \"%s\"\n", i, got);
		CHECK_STR(got, t.expect[i]);
		CHECK_INT(compiled.cause, ==, 0);
		CHECK(same(&compiled, &again));
		CHECK(same(&compiled, &dwfl));
		/* the main thread's stacks end at _start, nothing after it */
		CHECK(!strstr(t.expect[i], " main _start") || last_in_target);
		by_dwfl += compiled.fallback[PROF_FALLBACK_DWFL];
	}
	/* the realigned frame and the signal frame took every register, and the rest none */
	CHECK_INT(by_dwfl, >=, 2);
	CHECK(uw.cache_hits > 0);
	/* each sample unwound again took its frames from the thread's last walk */
	CHECK(uw.memo_frames > 0);
	unwind_capture_release(&cap);
	unwinder_release(&uw);
	elf_file_release(&f);
}

/*
 * The realigned frame (its CFA through rbp and a load) and the signal
 * frame (its registers in the context on the stack) are the rows the
 * compiled rules do not encode: stepped with every register, by the
 * tables' own CFI, not by a libdwfl session of the process (which opens
 * every file it maps); the stacks still as the target said.
 */
TEST(frames_the_rules_cannot_encode_are_stepped_without_libdwfl)
{
	static struct unwind_result res;
	static struct taken t;
	struct unwind_capture cap;
	struct unwinder uw;
	struct elf_file f;
	uint32_t full = 0;
	char got[512];
	bool last;
	size_t i;

	CHECK_INT(load(&t, &uw, &cap), ==, 0);
	CHECK_INT(elf_file_open(target_path(), &f), ==, 0);
	for (i = 0; i < cap.nsamples; i++) {
		struct unwind_capture_sample *s = &cap.samples[i];
		struct addr_space *as = &cap.spaces[s->space]->as;

		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&res), ==, 0);
		target_frames(as, &f, &res, got, sizeof(got), &last);
		CHECK_STR(got, t.expect[i]);
		CHECK_INT(res.cause, ==, 0);
		CHECK(!as->dwfl);
		full += res.fallback[PROF_FALLBACK_DWFL];
	}
	CHECK_INT(full, >=, 2);
	unwind_capture_release(&cap);
	unwinder_release(&uw);
	elf_file_release(&f);
}

/*
 * A walk takes a frame from the thread's last walk only while the words
 * its steps read hold what they held: a return address changed in the
 * stack copy gives the walk a fresh unwinder gives, not the last one.
 */
TEST(a_thread_s_last_walk_is_taken_again_only_where_its_words_hold)
{
	static struct unwind_result first, changed, fresh, again;
	static struct taken t;
	static uint8_t copy[1 << 17];
	struct unwind_capture cap;
	const struct walk_memo *m;
	struct unwinder uw;
	size_t i, k, tried = 0;
	uint64_t memo_before;

	CHECK_INT(load(&t, &uw, &cap), ==, 0);
	for (i = 0; i < cap.nsamples; i++) {
		struct unwind_capture_sample *s = &cap.samples[i];
		struct addr_space *as = &cap.spaces[s->space]->as;

		if (s->stack_size > sizeof(copy))
			continue;
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&first), ==, 0);
		if (first.fallback[PROF_FALLBACK_DWFL] == first.n)
			continue;	/* a walk libdwfl took over whole is not kept */
		m = walk_memo_of(&uw, as);
		CHECK(m);
		/* a frame in the middle whose step read its return address */
		for (k = m->n / 2; k < m->n && !m->f[k].replay; k++)
			;
		if (k >= m->n || m->n < 4)
			continue;
		tried++;
		/* unchanged: the same walk, its frames from the memo */
		memo_before = uw.memo_frames;
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, s->stack, s->stack_size,
					&again), ==, 0);
		CHECK(same(&first, &again));
		CHECK(uw.memo_frames > memo_before);
		/* that frame's return address now points at the sampled pc */
		memcpy(copy, s->stack, s->stack_size);
		m = walk_memo_of(&uw, as);
		CHECK(m && k < m->n && m->f[k].replay);
		CHECK(m->f[k].ra_at >= s->regs[SAMPLE_REG_SP]);
		memcpy(copy + (m->f[k].ra_at - s->regs[SAMPLE_REG_SP]), &s->regs[SAMPLE_REG_IP], 8);
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, copy, s->stack_size,
					&changed), ==, 0);
		walk_memo_release(&uw);
		CHECK_INT(unwind_sample(&uw, as, (pid_t)s->tid, s->regs, copy, s->stack_size,
					&fresh), ==, 0);
		CHECK(same(&changed, &fresh));
		CHECK(!same(&changed, &first));
	}
	CHECK_INT(tried, >, 0);
	unwind_capture_release(&cap);
	unwinder_release(&uw);
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "we");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

TEST(unwind_capture_read_says_what_is_wrong_with_a_file)
{
	char path[] = "/tmp/prof-capture-XXXXXX", want[128];
	uint8_t sample[1 + 8 + 17 * 8 + 8] = { 'S', 1, 0, 0, 0, 1, 0, 0, 0 };
	uint8_t buf[256];
	struct unwind_capture cap;
	struct unwinder uw;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(unwinder_init(&uw), ==, 0);
	CHECK_INT(write_file(path, "PROFUNW0", 8), ==, 0);
	CHECK_INT(unwind_capture_read(path, &uw.spaces, &cap), ==, -EBADMSG);
	snprintf(want, sizeof(want), "'%s' is not an unwind capture (PROF_UNWIND_CAPTURE)", path);
	CHECK_STR(prof_errmsg(), want);
	/* a sample of a pid whose mappings never came */
	memcpy(buf, "PROFUNW1", 8);
	memcpy(buf + 8, sample, sizeof(sample));
	CHECK_INT(write_file(path, buf, 8 + sizeof(sample)), ==, 0);
	CHECK_INT(unwind_capture_read(path, &uw.spaces, &cap), ==, -EBADMSG);
	snprintf(want, sizeof(want), "'%s': a sample of pid 1 before its mappings", path);
	CHECK_STR(prof_errmsg(), want);
	/* mappings cut short */
	memcpy(buf + 8, "M\1\0\0\0\5\0\0\0", 9);
	CHECK_INT(write_file(path, buf, 8 + 9 + 10), ==, 0);
	CHECK_INT(unwind_capture_read(path, &uw.spaces, &cap), ==, -EBADMSG);
	snprintf(want, sizeof(want), "'%s' ends inside a record", path);
	CHECK_STR(prof_errmsg(), want);
	memcpy(buf + 8, "X\1\0\0\0\5\0\0\0", 9);
	CHECK_INT(write_file(path, buf, 8 + 9), ==, 0);
	CHECK_INT(unwind_capture_read(path, &uw.spaces, &cap), ==, -EBADMSG);
	snprintf(want, sizeof(want), "'%s': an unknown record 'X' at byte 8", path);
	CHECK_STR(prof_errmsg(), want);
	unlink(path);
	CHECK_INT(unwind_capture_read(path, &uw.spaces, &cap), ==, -ENOENT);
	unwinder_release(&uw);
}

static void module_free(struct as_module *m)
{
	if (m->open_path != m->path)
		free(m->open_path);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

/*
 * A mapping an mmap2 record names by build-id (a process gone before it
 * is read): the file at its path is taken only with that build-id, and
 * lends the module its device and inode; another build at the path is
 * not used, and the module keeps the recorded build-id.
 */
TEST(a_mapping_known_by_build_id_trusts_only_a_file_of_that_build)
{
	const char *path = t_target("ladder");
	uint8_t wrong[PROF_BUILD_ID_MAX];
	struct as_module m, b;
	struct addr_space as;
	struct as_shared sh;
	struct stat st;

	CHECK(path);
	CHECK_INT(stat(path, &st), ==, 0);
	as_shared_init(&sh);
	as_init(&as, getpid(), &sh);
	CHECK_INT(as_describe(&as, 0x400000, 0x401000, 0, major(st.st_dev), minor(st.st_dev),
			      st.st_ino, path, &m), ==, 0);
	CHECK(m.elf_ok);
	CHECK(m.build_id_len > 0);
	CHECK_INT(as_describe_build_id(&as, 0x400000, 0x401000, 0, m.build_id, m.build_id_len,
				       path, &b), ==, 0);
	CHECK(b.elf_ok);
	CHECK_STR(b.open_path, path);
	CHECK_INT(b.inode, ==, st.st_ino);
	CHECK_INT(b.dev_major, ==, major(st.st_dev));
	CHECK_INT(b.dev_minor, ==, minor(st.st_dev));
	CHECK_INT(b.bias, ==, m.bias);
	module_free(&b);
	memcpy(wrong, m.build_id, m.build_id_len);
	wrong[0] ^= 0xff;
	CHECK_INT(as_describe_build_id(&as, 0x400000, 0x401000, 0, wrong, m.build_id_len, path,
				       &b), ==, 0);
	CHECK(!b.elf_ok);
	CHECK(!b.open_path);
	CHECK_INT(b.inode, ==, 0);
	CHECK_INT(b.build_id_len, ==, m.build_id_len);
	CHECK(!memcmp(b.build_id, wrong, m.build_id_len));
	module_free(&b);
	module_free(&m);
	as_release(&as);
	as_shared_release(&sh);
}
