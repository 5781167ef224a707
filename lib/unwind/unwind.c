/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - which engine unwinds a sample, and the check of one against
 * the other.  The compiled engine is the default; PROF_UNWIND=dwfl makes
 * libdwfl do it all, as prof did before the compiled engine (kept to
 * measure one against the other); PROF_UNWIND=check unwinds every sample
 * with both and counts the samples whose frames differ (and, with
 * PROF_UNWIND_CHECK_LOG=FILE, writes each difference there, module and
 * offset per frame, to be explained).  The spool gets the compiled
 * engine's frames in every mode but dwfl.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "unwind.h"

int unwinder_init(struct unwinder *uw)
{
	const char *engine = getenv("PROF_UNWIND"), *path;
	char *end;

	memset(uw, 0, sizeof(*uw));
	as_shared_init(&uw->spaces);
	if (engine && !strcmp(engine, "dwfl"))
		uw->engine = UNWIND_DWFL;
	else if (engine && !strcmp(engine, "check"))
		uw->engine = UNWIND_CHECK;
	else if (engine && *engine && strcmp(engine, "compiled"))
		pr_warn("PROF_UNWIND=%s is not an engine (compiled, dwfl or check): compiled",
			engine);
	path = getenv("PROF_UNWIND_TABLE_MAX");
	if (path && *path) {
		unsigned long long v = strtoull(path, &end, 10);

		if (!*end && v)
			uw->spaces.tables.max_bytes = v;
	}
	path = getenv("PROF_UNWIND_CHECK_LOG");
	if (uw->engine == UNWIND_CHECK && path && *path) {
		uw->check_log = fopen(path, "we");
		if (!uw->check_log)
			return error_set(-errno, "cannot create '%s' (PROF_UNWIND_CHECK_LOG)", path);
	}
	path = getenv("PROF_UNWIND_CAPTURE");
	if (path && *path) {
		uw->capture = fopen(path, "we");
		if (!uw->capture)
			return error_set(-errno, "cannot create '%s' (PROF_UNWIND_CAPTURE)", path);
	}
	return 0;
}

void unwinder_release(struct unwinder *uw)
{
	if (uw->check_log)
		fclose(uw->check_log);
	if (uw->capture)
		fclose(uw->capture);
	free(uw->cache);
	unwind_walk_release(uw);
	as_shared_release(&uw->spaces);
	memset(uw, 0, sizeof(*uw));
}

/*
 * The rule at PC, in *RULE, when a compiled table covers it; for the
 * check alone, which needs no table it cannot have.
 */
static bool rule_at(struct addr_space *as, uint64_t pc, struct urule *rule)
{
	struct as_module *m = as_find(as, pc);
	struct utable *t = NULL;

	if (!m || as_table(as, m, &t) < 0 || !t)
		return false;
	*rule = utable_rule(&as->shared->tables, t, pc - m->bias);
	return true;
}

/* The oracle's frames end at the program's entry too, as the compiled walk's do. */
static void cut_at_entry(struct addr_space *as, struct unwind_result *res)
{
	struct urule rule;
	size_t i;

	for (i = 0; i < res->n; i++) {
		if (rule_at(as, res->pc[i], &rule) && (rule.flags & URULE_ENTRY)) {
			res->n = i + 1;
			res->cause = 0;
			return;
		}
	}
}

static void log_frames(FILE *f, struct addr_space *as, const char *engine,
		       const struct unwind_result *res)
{
	size_t i;

	fprintf(f, "  %s (%s):", engine, res->cause ? prof_unwind_error_name((unsigned)res->cause)
						    : "complete");
	for (i = 0; i < res->n; i++) {
		struct as_module *m = as_find(as, res->pc[i]);
		const char *base = m ? strrchr(m->path, '/') : NULL;

		if (m)
			fprintf(f, " %s+%#" PRIx64, base ? base + 1 : m->path,
				res->pc[i] - m->start + m->pgoff);
		else
			fprintf(f, " %#" PRIx64, res->pc[i]);
	}
	fputc('\n', f);
}

/* Whether the instruction before return address RA of module M is a call. */
static bool follows_call(const struct as_module *m, uint64_t ra)
{
	uint8_t b[8];
	int fd, k;
	bool call = false;

	if (!m->open_path || ra - m->start < sizeof(b) || ra > m->end)
		return false;
	fd = open(m->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, b, sizeof(b), (off_t)(ra - m->start + m->pgoff - sizeof(b))) ==
	    (ssize_t)sizeof(b)) {
		call = b[3] == 0xe8;	/* call rel32 */
		for (k = 2; k <= 7 && !call; k++)	/* call r/m64: ff /2 */
			call = b[8 - k] == 0xff && ((b[9 - k] >> 3) & 7) == 2;
	}
	close(fd);
	return call;
}

/*
 * Whether O, libdwfl's frames, are RES's without its second, where the
 * sampled frame's CFI row says the return address is at rsp (a leaf, or
 * a function's first instruction) and the compiled engine's second frame
 * follows a call instruction.  libdwfl 0.188 unwinds some such frames in
 * node (OpenSSL's, V8's) by frame pointer instead, losing that caller.
 */
static bool lost_leaf_caller(struct addr_space *as, const struct unwind_result *res,
			     const struct unwind_result *o)
{
	struct as_module *caller;
	struct urule r;

	if (res->n != o->n + 1 || res->n < 2 || res->pc[0] != o->pc[0] ||
	    memcmp(&res->pc[2], &o->pc[1], (o->n - 1) * sizeof(*o->pc)))
		return false;
	if (!rule_at(as, res->pc[0], &r))
		return false;
	caller = as_find(as, res->pc[1]);
	return r.cfa == UCFA_RSP && r.cfa_off == 8 && caller && follows_call(caller, res->pc[1] + 1);
}

/*
 * Whether the sampled frame of RES is in an epilogue that popped rbp: its
 * row names rbp's slot below sp.  libdwfl takes rbp as lost there and ends
 * the walk ("complete") at the first frame that needs it; the compiled
 * walk goes on with the value the pop restored.
 */
static bool popped_bp(struct addr_space *as, const struct unwind_result *res)
{
	struct urule r;

	return res->n && rule_at(as, res->pc[0], &r) && urule_bp_popped(&r);
}

static int check(struct unwinder *uw, struct addr_space *as, const struct unwind_result *res)
{
	struct unwind_result *o = malloc(sizeof(*o));

	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	unwind_dwfl(as, o);
	cut_at_entry(as, o);
	uw->check_samples++;
	if (o->n == res->n && !memcmp(o->pc, res->pc, res->n * sizeof(*res->pc)) &&
	    (o->cause == 0) == (res->cause == 0)) {
		uw->check_same++;
	} else {
		bool frames = o->n == res->n && !memcmp(o->pc, res->pc, res->n * sizeof(*res->pc));

		bool entry = !frames && lost_leaf_caller(as, res, o);
		/* a frame without CFI: frame pointers, or a leaf's return address */
		bool further = !frames && !entry && !res->cause && o->n < res->n &&
			       !memcmp(o->pc, res->pc, o->n * sizeof(*o->pc)) &&
			       (o->cause || popped_bp(as, res));

		if (frames)
			uw->check_same_frames++;
		else if (entry)
			uw->check_entry++;
		else if (further)
			uw->check_further++;
		else
			uw->check_diff[res->cause]++;
		if (uw->check_log) {
			fprintf(uw->check_log, "pid %d tid %d: %s\n", (int)as->pid, (int)as->tid,
				entry	     ? "libdwfl lost the caller of a leaf frame"
				: further    ? "libdwfl stopped, the compiled walk went on to the end"
				: !frames    ? "other frames"
				: res->cause ? "the same frames, complete by libdwfl only"
					     : "the same frames, complete by the compiled engine only");
			log_frames(uw->check_log, as, "compiled", res);
			log_frames(uw->check_log, as, "libdwfl", o);
		}
	}
	free(o);
	return 0;
}

int unwind_sample(struct unwinder *uw, struct addr_space *as, pid_t tid, const uint64_t *regs,
		  const uint8_t *stack, uint64_t stack_size, struct unwind_result *res)
{
	int r;

	res->n = 0;
	res->cause = 0;
	res->have_fp = false;
	memset(res->fallback, 0, sizeof(res->fallback));
	if (!regs) {
		res->cause = PROF_UNWIND_NO_REGS;
		return 0;
	}
	if (!stack || !stack_size) {
		res->pc[res->n++] = regs[SAMPLE_REG_IP];
		res->cause = PROF_UNWIND_NO_STACK;
		return 0;
	}
	as->tid = tid;
	as->regs = regs;
	as->stack = stack;
	as->stack_size = stack_size;
	as->sp = regs[SAMPLE_REG_SP];
	if (uw->capture)
		unwind_capture_sample(uw, as, tid, regs, stack, stack_size);
	if (uw->engine == UNWIND_DWFL) {
		unwind_dwfl(as, res);
		return 0;
	}
	if (!uw->cache) {
		uw->cache = calloc(RULE_CACHE_SIZE, sizeof(*uw->cache));
		if (!uw->cache) {
			res->pc[res->n++] = regs[SAMPLE_REG_IP];
			res->cause = PROF_UNWIND_OTHER;
			return -ENOMEM;
		}
	}
	r = unwind_walk(uw, as, res);
	if (r == 0 && uw->engine == UNWIND_CHECK)
		r = check(uw, as, res);
	return r;
}
