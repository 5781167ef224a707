/* SPDX-License-Identifier: MIT */
/*
 * jvm_frames.c - the Java methods a HotSpot JVM's interpreter was running,
 * named in place of its frames.
 *
 * HotSpot's template interpreter keeps a frame pointer chain on x86-64 and
 * the Method* it runs at rbp - 24 (frame_x86.hpp,
 * interpreter_frame_method_offset = -3 words), so the sample's stack copy
 * holds, for each interpreter frame the walk passed, the method it ran as
 * it was at sample time.  The JVM describes its own layouts for debuggers
 * in tables libjvm.so exports (gHotSpotVMStructs, gHotSpotVMTypes: each
 * field's type, name and offset, each type's size): read once, they give
 * the interpreter's code range (AbstractInterpreter::_code, a StubQueue)
 * and the path from a Method* to its name: Method::_constMethod,
 * ConstMethod::_constants and _name_index / _signature_index,
 * ConstantPool::_pool_holder (its slots follow the ConstantPool), Klass::_name,
 * Symbol::_length and _body.  Each method is read once and kept by
 * address; it is named as the JVM's perf map names compiled methods
 * ("long Hot.fib(int)"), so that its interpreted and compiled frames are
 * one function in a report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "jvm_frames.h"
#include "perf_sample.h"
#include "process.h"
#include "remote.h"
#include "strmap.h"
#include "unwind/regs_x86_64.h"
#include "unwind/unwind.h"

#define METHOD_FP_OFFSET 24		/* the Method* of an interpreter frame: at rbp - 24 */
#define RETRY_NS 100000000ull		/* the interpreter's range, while the JVM starts */
#define STRUCTS_MAX 20000		/* entries of gHotSpotVMStructs, at most */
#define SYMBOL_MAX 1024			/* bytes of a class, method or signature name */
#define JAVA_ADDR(id) (PROF_JAVA_FRAME_BASE | (uint64_t)(id) << 4)

enum field {
	F_METHOD_CONST,		/* Method::_constMethod */
	F_CONST_CONSTANTS,	/* ConstMethod::_constants */
	F_CONST_NAME,		/* ConstMethod::_name_index */
	F_CONST_SIGNATURE,	/* ConstMethod::_signature_index */
	F_CP_HOLDER,		/* ConstantPool::_pool_holder */
	F_KLASS_NAME,		/* Klass::_name */
	F_SYMBOL_LENGTH,	/* Symbol::_length */
	F_SYMBOL_BODY,		/* Symbol::_body */
	F_INTERP_CODE,		/* AbstractInterpreter::_code (static: an address) */
	F_STUB_BUFFER,		/* StubQueue::_stub_buffer */
	F_BUFFER_LIMIT,		/* StubQueue::_buffer_limit */
	F_COUNT
};

static const struct {
	const char *type, *field, *alt;
} fields[F_COUNT] = {
	[F_METHOD_CONST] = { "Method", "_constMethod", NULL },
	[F_CONST_CONSTANTS] = { "ConstMethod", "_constants", NULL },
	[F_CONST_NAME] = { "ConstMethod", "_name_index", NULL },
	[F_CONST_SIGNATURE] = { "ConstMethod", "_signature_index", NULL },
	[F_CP_HOLDER] = { "ConstantPool", "_pool_holder", NULL },
	[F_KLASS_NAME] = { "Klass", "_name", NULL },
	[F_SYMBOL_LENGTH] = { "Symbol", "_length", NULL },
	[F_SYMBOL_BODY] = { "Symbol", "_body", "_body[0]" },
	[F_INTERP_CODE] = { "AbstractInterpreter", "_code", NULL },
	[F_STUB_BUFFER] = { "StubQueue", "_stub_buffer", NULL },
	[F_BUFFER_LIMIT] = { "StubQueue", "_buffer_limit", NULL },
};

struct jvm_proc {
	pid_t pid;
	uint64_t start_time_ns;
	bool failed;			/* not a JVM these tables describe: not tried again */
	bool have_fields;
	uint64_t f[F_COUNT];		/* offsets, and F_INTERP_CODE's address */
	uint64_t cp_size;		/* sizeof(ConstantPool): its slots follow it */
	uint64_t interp_lo, interp_hi;	/* the interpreter's code; 0: not known yet */
	uint64_t next_try_ns;
	struct intern_map methods;	/* Method* -> 1 + name id */
	struct strmap name_ids;
	struct jit_sym *names;		/* at JAVA_ADDR(id), by address */
	size_t nnames, names_cap;
};

void jvm_frames_init(struct jvm_frames *s)
{
	memset(s, 0, sizeof(*s));
}

static void proc_free(struct jvm_proc *j)
{
	size_t i;

	for (i = 0; i < j->nnames; i++)
		free(j->names[i].name);
	free(j->names);
	intern_release(&j->methods);
	strmap_release(&j->name_ids);
	free(j);
}

void jvm_frames_release(struct jvm_frames *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		proc_free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct jit_sym *jvm_frames_names(const struct jvm_frames *s, pid_t pid, size_t *n)
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

/* ---- the JVM's tables of itself ------------------------------------------ */

/* The C string at ADDR of PID into BUF (LEN bytes with its NUL): false if unreadable. */
static bool read_cstr(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	/* strings may end close to a page's end: a piece at a time */
	while (got + 1 < len) {
		size_t want = 32 < len - 1 - got ? 32 : len - 1 - got;

		if (!remote_read(pid, addr + got, buf + got, want)) {
			if (want == 1)
				return false;
			/* the page may end sooner: byte by byte up to it */
			if (!remote_read(pid, addr + got, buf + got, 1))
				return false;
			want = 1;
		}
		if (memchr(buf + got, '\0', want))
			return true;
		got += want;
	}
	buf[len - 1] = '\0';
	return true;
}

/* The exported variable NAME's 64-bit value (libjvm at BIAS, its ELF values V). */
static bool exported(pid_t pid, uint64_t bias, uint64_t value, uint64_t *ret)
{
	return value && remote_word(pid, bias + value, ret);
}

/*
 * Read J's field offsets and ConstantPool's size from the libjvm.so at
 * PATH (loaded at BIAS).  False: these are not tables this reads.
 */
static bool read_tables(struct jvm_proc *j, const char *path, uint64_t bias)
{
	static const char *const names[] = {
		"gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride",
		"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
		"gHotSpotVMStructEntryIsStaticOffset", "gHotSpotVMStructEntryOffsetOffset",
		"gHotSpotVMStructEntryAddressOffset", "gHotSpotVMTypes",
		"gHotSpotVMTypeEntryArrayStride", "gHotSpotVMTypeEntryTypeNameOffset",
		"gHotSpotVMTypeEntrySizeOffset",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	uint64_t sym[N], v[N], last_type = 0, found = 0, i, k;
	bool last_match = false;
	char type[64], field[64];

	if (remote_symbols(path, names, N, sym, NULL) != N)
		return false;
	for (i = 0; i < N; i++)
		if (!exported(j->pid, bias, sym[i], &v[i]))
			return false;
	/* stride and offsets within an entry: small, or not what this reads */
	for (i = 1; i < N; i++)
		if (i != 7 && v[i] > 256)
			return false;
	for (i = 0; i < STRUCTS_MAX && found != (1u << F_COUNT) - 1; i++) {
		uint64_t e = v[0] + i * v[1], tn, fn, off, addr;
		int32_t is_static;

		if (!remote_word(j->pid, e + v[2], &tn))
			return false;
		if (!tn)
			break;	/* the end of the table */
		/* an entry's type name is one string for all its fields: compared once */
		if (tn != last_type) {
			last_type = tn;
			last_match = false;
			if (read_cstr(j->pid, tn, type, sizeof(type)))
				for (k = 0; k < F_COUNT && !last_match; k++)
					last_match = !strcmp(type, fields[k].type);
		}
		if (!last_match || !remote_word(j->pid, e + v[3], &fn) ||
		    !read_cstr(j->pid, fn, field, sizeof(field)))
			continue;
		for (k = 0; k < F_COUNT; k++) {
			if (strcmp(type, fields[k].type) ||
			    (strcmp(field, fields[k].field) &&
			     (!fields[k].alt || strcmp(field, fields[k].alt))))
				continue;
			if (!remote_read(j->pid, e + v[4], &is_static, sizeof(is_static)) ||
			    !remote_word(j->pid, e + v[5], &off) || !remote_word(j->pid, e + v[6], &addr))
				return false;
			j->f[k] = is_static ? addr : off;
			found |= 1u << k;
		}
	}
	if (found != (1u << F_COUNT) - 1)
		return false;
	for (i = 0; i < STRUCTS_MAX; i++) {
		uint64_t e = v[7] + i * v[8], tn, size;

		if (!remote_word(j->pid, e + v[9], &tn) || !tn)
			break;
		if (read_cstr(j->pid, tn, type, sizeof(type)) && !strcmp(type, "ConstantPool") &&
		    remote_word(j->pid, e + v[10], &size)) {
			j->cp_size = size;
			break;
		}
	}
	return j->cp_size >= 8 && j->cp_size < 4096;
}

/* The interpreter's code range, once the JVM made it. */
static void read_interpreter(struct jvm_proc *j)
{
	uint64_t queue, buffer;
	int32_t limit;

	if (remote_word(j->pid, j->f[F_INTERP_CODE], &queue) && queue &&
	    remote_word(j->pid, queue + j->f[F_STUB_BUFFER], &buffer) && buffer &&
	    remote_read(j->pid, queue + j->f[F_BUFFER_LIMIT], &limit, sizeof(limit)) && limit > 0) {
		j->interp_lo = buffer;
		j->interp_hi = buffer + (uint64_t)limit;
	}
}

/* ---- methods ------------------------------------------------------------- */

/* Symbol SYM's text into BUF (LEN bytes with the NUL): false if it does not look like one. */
static bool read_symbol(struct jvm_proc *j, uint64_t sym, char *buf, size_t len)
{
	uint16_t n;
	size_t i;

	if (!sym || !remote_read(j->pid, sym + j->f[F_SYMBOL_LENGTH], &n, sizeof(n)) || !n ||
	    n >= len || !remote_read(j->pid, sym + j->f[F_SYMBOL_BODY], buf, n))
		return false;
	buf[n] = '\0';
	for (i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			return false;	/* modified UTF-8 has no control bytes in names */
	return true;
}

/* One type of descriptor D (at *P) as Java writes it, appended to OUT (*O of LEN). */
static bool put_type(const char **p, char *out, size_t len, size_t *o)
{
	static const char *const prim[] = { ['B'] = "byte", ['C'] = "char", ['D'] = "double",
					    ['F'] = "float", ['I'] = "int", ['J'] = "long",
					    ['S'] = "short", ['Z'] = "boolean", ['V'] = "void" };
	unsigned dims = 0;
	const char *s = *p;
	int w;

	while (*s == '[')
		dims++, s++;
	if (*s == 'L') {
		const char *end = strchr(s, ';');

		if (!end)
			return false;
		for (s++; s < end && *o + 1 < len; s++)
			out[(*o)++] = *s == '/' ? '.' : *s;
		s = end + 1;
	} else if ((unsigned char)*s < sizeof(prim) / sizeof(prim[0]) && prim[(unsigned char)*s]) {
		w = snprintf(out + *o, len - *o, "%s", prim[(unsigned char)*s]);
		if (w < 0 || (size_t)w >= len - *o)
			return false;
		*o += (size_t)w;
		s++;
	} else {
		return false;
	}
	while (dims-- && *o + 2 < len) {
		out[(*o)++] = '[';
		out[(*o)++] = ']';
	}
	out[*o < len ? *o : len - 1] = '\0';
	*p = s;
	return *o + 1 < len;
}

/* "long Hot.fib(int)" from class CLS ("Hot", '/'-separated), NAME and signature SIG. */
static bool external_name(const char *cls, const char *name, const char *sig, char *out,
			  size_t len)
{
	const char *ret = strchr(sig, ')'), *p;
	size_t o = 0;
	int w;

	if (sig[0] != '(' || !ret)
		return false;
	p = ret + 1;
	if (!put_type(&p, out, len, &o) || *p)
		return false;
	w = snprintf(out + o, len - o, " %s.%s(", cls, name);
	if (w < 0 || (size_t)w >= len - o)
		return false;
	for (; out[o]; o++)
		if (out[o] == '/')
			out[o] = '.';
	for (p = sig + 1; p < ret;) {
		if (p > sig + 1 && o + 1 < len)
			out[o++] = ',';
		if (!put_type(&p, out, len, &o))
			return false;
	}
	w = snprintf(out + o, len - o, ")");
	return w > 0 && (size_t)w < len - o;
}

/* The name id of METHOD (a Method*), read once; 0 when it cannot be read. */
static int64_t method_id(struct jvm_proc *j, uint64_t method)
{
	char cls[SYMBOL_MAX], name[SYMBOL_MAX], sig[SYMBOL_MAX], full[3 * SYMBOL_MAX + 64];
	uint64_t cm, cp, holder, klass_name, name_sym, sig_sym;
	uint16_t ni, si;
	uint32_t id = intern_find(&j->methods, method, 0);
	size_t flen;
	void *v;

	if (id)
		return id;
	if ((method & 7) || !remote_word(j->pid, method + j->f[F_METHOD_CONST], &cm) || !cm ||
	    !remote_word(j->pid, cm + j->f[F_CONST_CONSTANTS], &cp) || !cp ||
	    !remote_read(j->pid, cm + j->f[F_CONST_NAME], &ni, sizeof(ni)) ||
	    !remote_read(j->pid, cm + j->f[F_CONST_SIGNATURE], &si, sizeof(si)) ||
	    !remote_word(j->pid, cp + j->f[F_CP_HOLDER], &holder) || !holder ||
	    !remote_word(j->pid, holder + j->f[F_KLASS_NAME], &klass_name) ||
	    !remote_word(j->pid, cp + j->cp_size + 8 * (uint64_t)ni, &name_sym) ||
	    !remote_word(j->pid, cp + j->cp_size + 8 * (uint64_t)si, &sig_sym) ||
	    !read_symbol(j, klass_name, cls, sizeof(cls)) ||
	    !read_symbol(j, name_sym, name, sizeof(name)) ||
	    !read_symbol(j, sig_sym, sig, sizeof(sig)) ||
	    !external_name(cls, name, sig, full, sizeof(full)))
		return 0;
	flen = strlen(full);
	id = strmap_find(&j->name_ids, full, flen);
	if (!id) {
		v = j->names;
		if (grow_array(&v, &j->names_cap, j->nnames + 1, sizeof(*j->names)) < 0)
			return -ENOMEM;
		j->names = v;
		id = (uint32_t)j->nnames + 1;
		j->names[j->nnames].name = strdup(full);
		if (!j->names[j->nnames].name || strmap_insert(&j->name_ids, full, flen, id) < 0) {
			free(j->names[j->nnames].name);
			return error_setx(-ENOMEM, "out of memory");
		}
		j->names[j->nnames].start = JAVA_ADDR(id);
		j->names[j->nnames].size = 16;
		j->nnames++;
	}
	if (intern_insert(&j->methods, method, 0, id) < 0)
		return -ENOMEM;
	return id;
}

/* ---- the samples --------------------------------------------------------- */

static struct jvm_proc *jvm_of(struct jvm_frames *s, struct proc *p)
{
	struct jvm_proc *j;
	size_t i;
	void *v;

	for (i = s->n; i-- > 0;)
		if (s->v[i]->pid == p->pid && s->v[i]->start_time_ns == p->start_time_ns)
			return s->v[i];
	j = calloc(1, sizeof(*j));
	v = s->v;
	if (!j || grow_array(&v, &s->cap, s->n + 1, sizeof(*s->v)) < 0) {
		free(j);
		return NULL;
	}
	s->v = v;
	j->pid = p->pid;
	j->start_time_ns = p->start_time_ns;
	intern_init(&j->methods);
	for (i = 0; i < p->as.nmods; i++) {
		const struct as_module *m = &p->as.mods[i];
		const char *base = m->path ? strrchr(m->path, '/') : NULL;

		if (base && !strcmp(base + 1, "libjvm.so") && m->open_path) {
			j->have_fields = read_tables(j, m->open_path, m->bias);
			break;
		}
	}
	j->failed = !j->have_fields;
	s->v[s->n++] = j;
	return j;
}

int jvm_frames_expand(struct jvm_frames *s, struct proc *p, const struct perf_sample *smp,
		      struct unwind_result *u)
{
	uint64_t sp, now;
	struct jvm_proc *j;
	size_t i;

	if (!p->jvm || !u->have_fp || !smp->stack || !smp->regs)
		return 0;
	j = jvm_of(s, p);
	if (!j)
		return error_setx(-ENOMEM, "out of memory");
	if (j->failed)
		return 0;
	if (!j->interp_lo) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (now < j->next_try_ns)
			return 0;
		j->next_try_ns = now + RETRY_NS;
		read_interpreter(j);
		if (!j->interp_lo)
			return 0;
	}
	sp = smp->regs[SAMPLE_REG_SP];
	for (i = 0; i < u->n; i++) {
		uint64_t fp = u->fp[i], at, method;
		int64_t id;

		if (u->pc[i] < j->interp_lo || u->pc[i] >= j->interp_hi)
			continue;
		/* the frame's Method*, as the stack copy holds it */
		at = fp - METHOD_FP_OFFSET;
		if (!fp || at < sp || smp->stack_dyn < 8 || at - sp > smp->stack_dyn - 8) {
			s->unnamed++;
			continue;
		}
		memcpy(&method, smp->stack + (at - sp), sizeof(method));
		id = method_id(j, method);
		if (id < 0)
			return (int)id;
		if (!id) {
			s->unnamed++;
			continue;
		}
		u->pc[i] = JAVA_ADDR(id);
		s->named++;
	}
	return 0;
}
