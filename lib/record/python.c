/* SPDX-License-Identifier: MIT */
/*
 * python.c - Python frames in the stacks of CPython 3.11, read without
 * pausing the process and without BPF.
 *
 * 3.11 makes no C call for a Python-to-Python call: one C frame of
 * _PyEval_EvalFrameDefault runs a chain of _PyInterpreterFrames (heap
 * memory, not in the sample), from its _PyCFrame's current_frame back to
 * the frame marked is_entry.  That _PyCFrame is a local of the eval loop,
 * so it is in the sample's stack copy, as it was when the sample was taken:
 * the loops' cframes are linked (previous) from the innermost out to the
 * thread state's root_cframe.  So the copy says which frame each loop ran
 * at sample time; the frames and code objects are then read from the
 * process (process_vm_readv) when the sample is processed, a few
 * milliseconds later.  Reading back through the thread state instead is
 * wrong in 40-50% of samples for short calls (measured), at the frame
 * address known at sample time only when a returned frame's slot was
 * reused by another call in the meantime.
 *
 * Every frame read is validated (its code object's type is PyCode_Type,
 * its instruction pointer lies in that code's bytecode); one that is not
 * is counted stale and not shown, and the eval-loop frame stays in its
 * place: nothing is guessed.  Layouts: CPython 3.11's Include/internal
 * headers, as py-spy's and the OpenTelemetry profiler's tables have them,
 * checked against Debian's 3.11.2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "perf_sample.h"
#include "process.h"
#include "python.h"
#include "remote.h"
#include "strmap.h"
#include "unwind/regs_x86_64.h"
#include "unwind/unwind.h"

/* CPython 3.11, x86-64 */
#define RUNTIME_INTERPRETERS_HEAD 40	/* _PyRuntimeState.interpreters.head */
#define INTERP_NEXT 0
#define INTERP_THREADS_HEAD 16
#define TSTATE_NEXT 8
#define TSTATE_NATIVE_THREAD_ID 160
#define TSTATE_ROOT_CFRAME 336
#define CFRAME_CURRENT_FRAME 8
#define CFRAME_PREVIOUS 16
#define FRAME_CODE 32
#define FRAME_PREVIOUS 48
#define FRAME_PREV_INSTR 56
#define FRAME_IS_ENTRY 68
#define FRAME_SIZE 72
#define CODE_TYPE 8
#define CODE_UNITS 16		/* ob_size: the bytecode's 2-byte code units */
#define CODE_FIRSTLINENO 72
#define CODE_FILENAME 112
#define CODE_QUALNAME 128
#define CODE_BYTECODE 184
#define CODE_HEAD 192
#define STR_LENGTH 16
#define STR_STATE 32
#define STR_ASCII_DATA 48
#define STR_UTF8 56
#define STR_LATIN1_DATA 72

#define NAME_MAX_CHARS 512
#define DEPTH_MAX 256		/* Python frames of one eval loop read at most */
#define LOOPS_MAX 64		/* eval loops of one stack */
#define THREADS_MAX 4096
#define REREAD_THREADS_NS 1000000ull	/* a thread not found: the list again, not sooner */

/* Where a Python frame's address is: no mapping holds it, each one name. */
#define PY_ADDR(id) (PROF_PYTHON_FRAME_BASE | (uint64_t)(id) << 4)

struct py_code {
	uint32_t name;		/* its frame name's id */
	uint32_t units;		/* the bytecode's code units */
};

struct py_proc {
	pid_t pid;
	uint64_t start_time_ns;
	uint64_t eval_lo, eval_hi;	/* _PyEval_EvalFrameDefault, absolute */
	uint64_t runtime, code_type;	/* &_PyRuntime, &PyCode_Type */
	struct intern_map tstates;	/* tid -> 1 + index in tstate */
	uint64_t *tstate;
	size_t ntstate, tstate_cap;
	uint64_t threads_read_ns;
	struct intern_map codes;	/* code object address -> 1 + index in code */
	struct py_code *code;
	size_t ncode, code_cap;
	struct strmap by_name;		/* frame name -> its id */
	struct jit_sym *names;		/* by id - 1 */
	size_t nnames, names_cap;
};

void py_set_init(struct py_set *s)
{
	memset(s, 0, sizeof(*s));
}

static void py_proc_free(struct py_proc *pp)
{
	size_t i;

	if (!pp)
		return;
	intern_release(&pp->tstates);
	intern_release(&pp->codes);
	strmap_release(&pp->by_name);
	for (i = 0; i < pp->nnames; i++)
		free(pp->names[i].name);
	free(pp->names);
	free(pp->tstate);
	free(pp->code);
	free(pp);
}

void py_set_release(struct py_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		py_proc_free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct jit_sym *py_names(const struct py_set *s, pid_t pid, size_t *n)
{
	size_t i;

	for (i = s->n; i-- > 0;)
		if (s->v[i]->pid == pid) {
			*n = s->v[i]->nnames;
			return s->v[i]->names;
		}
	*n = 0;
	return NULL;
}

/* ---- finding the interpreter --------------------------------------------- */

/* "python3.11", "libpython3.11.so.1.0": the minor version, or -1. */
static int python_minor(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned minor;
	char end;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python3.%u%c", &minor, &end) == 2 && (end == '.' || end == 'd' ||
								end == 'm'))
		return (int)minor;
	if (sscanf(base, "python3.%u%c", &minor, &end) == 1)
		return (int)minor;
	return -1;
}

/* The file-relative addresses of the three symbols the reader needs, from .dynsym. */
/* The interpreter's eval loop (and its size), _PyRuntime and PyCode_Type, from PATH's .dynsym. */
static bool read_symbols(const char *path, uint64_t *eval, uint64_t *eval_size,
			 uint64_t *runtime, uint64_t *code_type)
{
	static const char *const names[] = { "_PyEval_EvalFrameDefault", "_PyRuntime",
					     "PyCode_Type" };
	uint64_t v[3], sz[3];

	if (remote_symbols(path, names, 3, v, sz) != 3 || !sz[0])
		return false;
	*eval = v[0];
	*eval_size = sz[0];
	*runtime = v[1];
	*code_type = v[2];
	return true;
}

static struct py_proc *find_proc(struct py_set *s, const struct proc *p)
{
	size_t i;

	for (i = s->n; i-- > 0;)
		if (s->v[i]->pid == p->pid && s->v[i]->start_time_ns == p->start_time_ns)
			return s->v[i];
	return NULL;
}

/*
 * Look at P's modules again (they changed): a CPython 3.11 interpreter
 * gets its state (new, or anew after an exec); another version is said
 * once.  The state, or NULL.
 */
static struct py_proc *check_proc(struct py_set *s, struct proc *p)
{
	struct py_proc *pp = find_proc(s, p);
	uint64_t eval, size = 0, runtime, code_type;
	size_t i;

	p->py_gen = p->as.gen;
	for (i = 0; i < p->as.nmods; i++) {
		const struct as_module *m = &p->as.mods[i];
		int minor = m->path ? python_minor(m->path) : -1;
		void *v = s->v;

		if (minor < 0 || !m->open_path)
			continue;
		if (minor != 11) {
			if (!p->py_said)
				pr_info("%s (pid %d) is Python 3.%d: its Python frames are not read "
					"(3.11 only; 3.12 and later name them in a perf map with "
					"-X perf)", p->comm, (int)p->pid, minor);
			p->py_said = true;
			return NULL;
		}
		if (!read_symbols(m->open_path, &eval, &size, &runtime, &code_type))
			continue;	/* the launcher, not the interpreter: the library has them */
		eval += m->bias;
		if (pp && pp->eval_lo == eval)
			return pp;
		if (pp) {
			/* an exec into another interpreter: what was read is of another process */
			pp->pid = 0;
		}
		pp = calloc(1, sizeof(*pp));
		if (!pp || grow_array(&v, &s->cap, s->n + 1, sizeof(*s->v)) < 0) {
			free(pp);
			prof_errmsg_clear();
			return NULL;
		}
		s->v = v;
		intern_init(&pp->tstates);
		intern_init(&pp->codes);
		pp->pid = p->pid;
		pp->start_time_ns = p->start_time_ns;
		pp->eval_lo = eval;
		pp->eval_hi = eval + size;
		pp->runtime = runtime + m->bias;
		pp->code_type = code_type + m->bias;
		s->v[s->n++] = pp;
		/* its frames are anonymous ones: their names are captured at the end */
		p->ran_anon = true;
		return pp;
	}
	return pp && pp->pid ? pp : NULL;
}

/* ---- reading the process ------------------------------------------------- */


static uint64_t word(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The frames of one sample, read a page at a time: a thread's frames lie in
 * its data stack chunks (16 KiB and more), each caller just below its
 * callee, so one read mostly holds every frame a sample names where one
 * read a frame would take a system call each.  The page a frame starts in
 * is mapped if the frame is.
 */
#define WINDOW_PAGE 4096

struct frame_window {
	pid_t pid;
	uint64_t base;		/* 0: nothing read */
	size_t len;
	uint8_t buf[WINDOW_PAGE + FRAME_SIZE];
};

/* The FRAME_SIZE bytes at FRAME, or NULL if they cannot be read. */
static const uint8_t *window_frame(struct frame_window *w, uint64_t frame)
{
	uint64_t lo, hi;

	if (!frame || (frame & 7) || frame > UINT64_MAX - WINDOW_PAGE - FRAME_SIZE)
		return NULL;
	if (w->base && frame >= w->base && frame + FRAME_SIZE <= w->base + w->len)
		return w->buf + (frame - w->base);
	lo = frame & ~(uint64_t)(WINDOW_PAGE - 1);
	hi = lo + WINDOW_PAGE;
	if (frame + FRAME_SIZE > hi)
		hi = frame + FRAME_SIZE;
	w->base = 0;
	if (!remote_read(w->pid, lo, w->buf, hi - lo)) {
		/* the frame alone, as a last resort */
		if (!remote_read(w->pid, frame, w->buf, FRAME_SIZE))
			return NULL;
		lo = frame;
		hi = frame + FRAME_SIZE;
	}
	w->base = lo;
	w->len = hi - lo;
	return w->buf + (frame - lo);
}

/* The thread state list, read again: every thread's tid -> tstate. */
static void read_threads(struct py_proc *pp, uint64_t now)
{
	uint64_t interp, ts, tid;
	size_t n = 0, k;

	pp->threads_read_ns = now;
	if (!remote_read(pp->pid, pp->runtime + RUNTIME_INTERPRETERS_HEAD, &interp, 8))
		return;
	for (k = 0; interp && k < 64; k++) {
		if (!remote_read(pp->pid, interp + INTERP_THREADS_HEAD, &ts, 8))
			return;
		for (; ts && n < THREADS_MAX; n++) {
			uint32_t have;
			void *v = pp->tstate;

			if (!remote_read(pp->pid, ts + TSTATE_NATIVE_THREAD_ID, &tid, 8))
				return;
			have = intern_find(&pp->tstates, tid, 0);
			if (have) {
				pp->tstate[have - 1] = ts;
			} else if (grow_array(&v, &pp->tstate_cap, pp->ntstate + 1, 8) == 0) {
				pp->tstate = v;
				pp->tstate[pp->ntstate++] = ts;
				if (intern_insert(&pp->tstates, tid, 0, (uint32_t)pp->ntstate) < 0)
					pp->ntstate--;
			}
			prof_errmsg_clear();
			if (!remote_read(pp->pid, ts + TSTATE_NEXT, &ts, 8))
				return;
		}
		if (!remote_read(pp->pid, interp + INTERP_NEXT, &interp, 8))
			return;
	}
}

static uint64_t tstate_of(struct py_proc *pp, pid_t tid, uint64_t now)
{
	uint32_t i = intern_find(&pp->tstates, (uint64_t)tid, 0);

	if (!i && now - pp->threads_read_ns >= REREAD_THREADS_NS) {
		read_threads(pp, now);
		i = intern_find(&pp->tstates, (uint64_t)tid, 0);
	}
	return i ? pp->tstate[i - 1] : 0;
}

/* A str object's text into BUF (at most LEN - 1 bytes); false if it is not one we read. */
static bool read_str(pid_t pid, uint64_t obj, char *buf, size_t len)
{
	uint8_t head[STR_LATIN1_DATA];
	uint64_t n, from;
	uint8_t state;

	if (!remote_read(pid, obj, head, sizeof(head)))
		return false;
	n = word(head + STR_LENGTH);
	state = head[STR_STATE];
	if (!(state & 0x20))		/* not compact: a legacy string */
		return false;
	if (state & 0x40) {		/* ASCII: the text follows the header */
		from = obj + STR_ASCII_DATA;
	} else if (word(head + STR_UTF8)) {	/* its UTF-8 copy, where one was made */
		from = word(head + STR_UTF8);
		n = word(head + STR_ASCII_DATA);	/* utf8_length */
	} else if (((state >> 2) & 7) == 1) {	/* Latin-1: shown byte for byte */
		from = obj + STR_LATIN1_DATA;
	} else {
		return false;
	}
	if (n >= len)
		n = len - 1;
	if (n && !remote_read(pid, from, buf, n))
		return false;
	buf[n] = '\0';
	return true;
}

static int64_t name_id(struct py_proc *pp, const char *name)
{
	size_t len = strlen(name);
	uint32_t id = strmap_find(&pp->by_name, name, len);
	void *v = pp->names;
	char *copy;

	if (id)
		return id;
	if (grow_array(&v, &pp->names_cap, pp->nnames + 1, sizeof(*pp->names)) < 0)
		return -ENOMEM;
	pp->names = v;
	copy = strdup(name);
	if (!copy)
		return error_setx(-ENOMEM, "out of memory");
	id = (uint32_t)pp->nnames + 1;
	if (strmap_insert(&pp->by_name, name, len, id) < 0) {
		free(copy);
		return -ENOMEM;
	}
	pp->names[pp->nnames++] = (struct jit_sym){ .start = PY_ADDR(id), .size = 16,
						    .name = copy };
	return id;
}

/*
 * The code object at CODE, read once and kept by address: its frame name
 * "qualname (file:first line)".  NULL if it is not a code object: the
 * frame that named it was stale.  *ERR is set on -ENOMEM.
 */
static const struct py_code *code_of(struct py_proc *pp, uint64_t code, int *err)
{
	uint32_t i = intern_find(&pp->codes, code, 0);
	char qualname[NAME_MAX_CHARS], file[NAME_MAX_CHARS * 2], name[NAME_MAX_CHARS * 4];
	uint8_t head[CODE_HEAD];
	int32_t line;
	uint64_t units;
	int64_t id;
	void *v = pp->code;

	if (i)
		return &pp->code[i - 1];
	if (!remote_read(pp->pid, code, head, sizeof(head)) || word(head + CODE_TYPE) != pp->code_type)
		return NULL;
	units = word(head + CODE_UNITS);
	memcpy(&line, head + CODE_FIRSTLINENO, sizeof(line));
	if (!units || units > UINT32_MAX ||
	    !read_str(pp->pid, word(head + CODE_QUALNAME), qualname, sizeof(qualname)) ||
	    !read_str(pp->pid, word(head + CODE_FILENAME), file, sizeof(file)))
		return NULL;
	snprintf(name, sizeof(name), "%s (%s:%" PRId32 ")", qualname, file, line);
	id = name_id(pp, name);
	if (id < 0 || grow_array(&v, &pp->code_cap, pp->ncode + 1, sizeof(*pp->code)) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	pp->code = v;
	pp->code[pp->ncode] = (struct py_code){ (uint32_t)id, (uint32_t)units };
	if (intern_insert(&pp->codes, code, 0, (uint32_t)pp->ncode + 1) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	return &pp->code[pp->ncode++];
}

/*
 * The Python frames one eval loop ran, from FRAME (its cframe's
 * current_frame) to the loop's entry frame, into OUT (leaf first, at most
 * MAX): how many; *WHOLE whether the walk reached the entry frame.
 */
static size_t read_loop(struct py_set *s, struct py_proc *pp, struct frame_window *w,
			uint64_t frame, uint64_t *out, size_t max, bool *whole, int *err)
{
	size_t n = 0, depth;

	*whole = false;
	for (depth = 0; depth < DEPTH_MAX && n < max; depth++) {
		const uint8_t *f = window_frame(w, frame);
		const struct py_code *c;
		uint64_t code, instr;

		if (!f)
			break;
		code = word(f + FRAME_CODE);
		instr = word(f + FRAME_PREV_INSTR);
		c = code_of(pp, code, err);
		/* prev_instr is one unit before the first before the frame runs */
		if (!c || instr + 2 < code + CODE_BYTECODE ||
		    instr >= code + CODE_BYTECODE + 2 * (uint64_t)c->units)
			break;
		out[n++] = PY_ADDR(c->name);
		if (f[FRAME_IS_ENTRY]) {
			*whole = true;
			return n;
		}
		frame = word(f + FRAME_PREVIOUS);
	}
	if (n < max)
		s->stale++;	/* the frame that stopped the walk */
	return n;
}

/* ---- the stack copy ------------------------------------------------------ */

/* Whether FRAME is a frame that runs: its code object's, its instruction in its bytecode. */
static bool frame_valid(struct py_proc *pp, struct frame_window *w, uint64_t frame, int *err)
{
	const uint8_t *f = window_frame(w, frame);
	const struct py_code *c;
	uint64_t code, instr;

	if (!f)
		return false;
	code = word(f + FRAME_CODE);
	instr = word(f + FRAME_PREV_INSTR);
	c = code_of(pp, code, err);
	return c && instr + 2 >= code + CODE_BYTECODE &&
	       instr < code + CODE_BYTECODE + 2 * (uint64_t)c->units;
}

/*
 * The cframes in the copy (STACK, LEN bytes from SP), outermost first,
 * into CF: from the one whose previous is the thread state's root_cframe,
 * each next the one whose previous is the last.  The value can be in the
 * copy for other reasons (a register holding &cframe saved by a callee,
 * a dead loop's cframe in a callee's unused slot): a candidate must look
 * like a cframe (use_tracing 0 or 255) and name a frame that validates;
 * the closest one below the last wins.  How many.
 */
static size_t find_cframes(struct py_proc *pp, struct frame_window *w, const uint8_t *stack,
			   uint64_t len, uint64_t sp, uint64_t root, uint64_t *cf, size_t max,
			   int *err)
{
	uint64_t want = root, top, i;
	size_t n = 0;

	len &= ~7ull;
	top = len;
	while (n < max && !*err) {
		uint64_t found = UINT64_MAX;
		unsigned tries = 0;

		for (i = top; i >= CFRAME_PREVIOUS + 8 && tries < 8; i -= 8) {
			uint64_t at = i - 8, b = at - CFRAME_PREVIOUS;

			if (word(stack + at) != want || (stack[b] != 0 && stack[b] != 255))
				continue;
			tries++;
			if (frame_valid(pp, w, word(stack + b + CFRAME_CURRENT_FRAME), err)) {
				found = b;
				break;
			}
		}
		if (found == UINT64_MAX)
			break;
		cf[n++] = word(stack + found + CFRAME_CURRENT_FRAME);
		want = sp + found;
		top = found;
	}
	return n;
}

int py_expand(struct py_set *s, struct proc *p, const struct perf_sample *smp,
	      struct unwind_result *u)
{
	uint64_t cf[LOOPS_MAX], py[DEPTH_MAX], out[UNWIND_MAX_FRAMES], ts, now;
	size_t nloops = 0, ncf, i, n = 0, loop, skip;
	struct frame_window w;
	struct py_proc *pp;
	int err = 0;

	if (p->py_gen != p->as.gen || !p->py_checked) {
		p->py_checked = true;
		p->py = check_proc(s, p) != NULL;
	}
	if (!p->py || !smp->stack || smp->stack_dyn < 64 || !smp->regs)
		return 0;
	pp = find_proc(s, p);
	if (!pp)
		return 0;
	for (i = 0; i < u->n; i++)
		nloops += u->pc[i] >= pp->eval_lo && u->pc[i] < pp->eval_hi;
	if (!nloops)
		return 0;
	now = clock_ns(CLOCK_MONOTONIC);
	ts = tstate_of(pp, (pid_t)smp->tid, now);
	w.pid = pp->pid;
	w.base = 0;
	ncf = ts ? find_cframes(pp, &w, smp->stack, smp->stack_dyn, smp->regs[SAMPLE_REG_SP],
				ts + TSTATE_ROOT_CFRAME, cf, LOOPS_MAX, &err) : 0;
	if (err)
		return err;
	/*
	 * Loops and cframes paired from the innermost out, when there are as
	 * many cframes as loops or more (a stack cut short holds only inner
	 * loops); with fewer, from the outermost in (a loop entered but not
	 * yet linked, in its prologue, is the innermost: it keeps its frame).
	 */
	skip = ncf > nloops ? ncf - nloops : 0;
	loop = nloops;
	for (i = 0; i < u->n; i++) {
		uint64_t pc = u->pc[i];
		size_t got, j;
		bool whole;

		if (pc < pp->eval_lo || pc >= pp->eval_hi) {
			if (n < UNWIND_MAX_FRAMES)
				out[n++] = pc;
			continue;
		}
		loop--;		/* this loop's index from the outermost: nloops - 1 innermost */
		if (loop + skip >= ncf) {
			/* its cframe is not in the copy: the loop stays as it is */
			s->unread++;
			if (n < UNWIND_MAX_FRAMES)
				out[n++] = pc;
			continue;
		}
		got = read_loop(s, pp, &w, cf[loop + skip], py, DEPTH_MAX, &whole, &err);
		if (err)
			return err;
		for (j = 0; j < got && n < UNWIND_MAX_FRAMES; j++)
			out[n++] = py[j];
		s->frames += got;
		if (!whole && n < UNWIND_MAX_FRAMES)
			out[n++] = pc;	/* what could not be read shows as the interpreter */
	}
	memcpy(u->pc, out, n * sizeof(*out));
	u->n = n;
	return 0;
}
