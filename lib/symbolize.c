/* SPDX-License-Identifier: MIT */
/*
 * symbolize.c - frame ids to function and module names: the spool's own
 * symbol records first (what the recording saw of perf maps, kallsyms and
 * deleted images), then the ELF file at the module's path.  Each frame is
 * resolved once; each file is opened once per (path, build-id) and its
 * problems are logged once, at WARN.  Stand-in names keep unnamed frames
 * apart.  It reads the spool's tables, never its records.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_file.h"
#include "internal.h"
#include "strmap.h"
#include "symtab.h"

/* One ELF file as a module record names it. */
struct sym_file {
	struct elf_file elf;
	bool ok;		/* opened and read */
};

struct sym_frame {
	struct prof_resolved_frame r;
	bool done;
};

struct prof_symbolizer {
	const struct prof_spool *sp;
	struct sym_frame *frames;	/* by frame id */
	size_t frames_cap;
	uint32_t *module_file;		/* by module id: index in files + 1; 0: not yet */
	size_t module_file_cap;
	struct sym_file *files;
	size_t nfiles, files_cap;
	struct strmap file_ids;		/* path + '\0' + recorded build-id -> index + 1 */
	struct symtab spool_syms;	/* the spool's symbol records, keyed by scope */
	uint32_t nsyms;			/* symbol records indexed */
	char **names;			/* stand-in names, freed with the symbolizer */
	size_t nnames, names_cap;
};

#define SCOPE_KEY(scope, id) ((uint64_t)(scope) << 32 | (id))

int prof_symbolizer_new(const struct prof_spool *sp, struct prof_symbolizer **ret)
{
	struct prof_symbolizer *s;

	if (!sp || !ret)
		return error_setx(-EINVAL, "no spool to symbolize");
	s = calloc(1, sizeof(*s));
	if (!s)
		return error_setx(-ENOMEM, "out of memory");
	s->sp = sp;
	*ret = s;
	return 0;
}

void prof_symbolizer_free(struct prof_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++)
		elf_file_release(&s->files[i].elf);
	for (i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->files);
	free(s->frames);
	free(s->module_file);
	strmap_release(&s->file_ids);
	symtab_release(&s->spool_syms);
	free(s);
}

/* Grow a zeroed array indexed by id so that ID is a valid index. */
static int reserve_ids(void **arr, size_t *cap, uint32_t id, size_t size)
{
	size_t old = *cap;
	int r = grow_array(arr, cap, (size_t)id + 1, size);

	if (r == 0 && *cap > old)
		memset((char *)*arr + old * size, 0, (*cap - old) * size);
	return r;
}

/* Index the spool's symbol records again when more were read. */
static int index_spool_symbols(struct prof_symbolizer *s)
{
	struct prof_spool_counts n;
	uint32_t i;
	int r;

	prof_spool_counts(s->sp, &n);
	if (n.symbols == s->nsyms)
		return 0;
	s->spool_syms.n = 0;
	for (i = 1; i <= n.symbols; i++) {
		const struct prof_symbol *sym = prof_spool_symbol(s->sp, i);

		/* the later record wins at one start: a perf map rewritten by a JIT */
		r = symtab_add(&s->spool_syms, SCOPE_KEY(sym->scope, sym->scope_id), sym->start,
			       sym->size, UINT64_MAX, sym->name, i);
		if (r < 0)
			return r;
	}
	symtab_finish(&s->spool_syms);
	s->nsyms = n.symbols;
	/* frames resolved before may now have a name */
	for (i = 0; i < s->frames_cap; i++)
		s->frames[i].done = false;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!*path)
		return "[unknown]";
	return slash && slash[1] ? slash + 1 : path;
}

static void hex_id(char *buf, size_t size, const uint8_t *id, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
}

static void open_file(struct sym_file *f, const struct prof_module *m)
{
	char want[2 * PROF_BUILD_ID_MAX + 1], have[2 * PROF_BUILD_ID_MAX + 1];

	if (elf_file_open(m->path, &f->elf) < 0) {
		pr_warn("%s; its frames are shown as file offsets", prof_errmsg());
		prof_errmsg_clear();
		return;
	}
	f->ok = true;
	if (!m->build_id_len || !f->elf.build_id_len ||
	    (f->elf.build_id_len == m->build_id_len &&
	     !memcmp(f->elf.build_id, m->build_id, m->build_id_len)))
		return;
	hex_id(want, sizeof(want), m->build_id, m->build_id_len);
	hex_id(have, sizeof(have), f->elf.build_id, f->elf.build_id_len);
	pr_warn("'%s' has build-id %s, not the recorded %s: its function names may be wrong",
		m->path, have, want);
}

/* The file of module M, opened on first need; NULL when it has none to read. */
static int module_file(struct prof_symbolizer *s, const struct prof_module *m,
		       struct sym_file **ret)
{
	size_t plen = strlen(m->path);
	char *key;
	uint32_t idx;
	void *v;
	int r;

	*ret = NULL;
	if (m->path[0] != '/' || (m->flags & (PROF_MODULE_ANON | PROF_MODULE_VDSO)))
		return 0;
	v = s->module_file;
	r = reserve_ids(&v, &s->module_file_cap, m->id, sizeof(*s->module_file));
	s->module_file = v;
	if (r < 0)
		return r;
	idx = s->module_file[m->id];
	if (!idx) {
		key = malloc(plen + 1 + m->build_id_len);
		if (!key)
			return error_setx(-ENOMEM, "out of memory");
		memcpy(key, m->path, plen + 1);
		memcpy(key + plen + 1, m->build_id, m->build_id_len);
		idx = strmap_find(&s->file_ids, key, plen + 1 + m->build_id_len);
		if (!idx) {
			v = s->files;
			r = grow_array(&v, &s->files_cap, s->nfiles + 1, sizeof(*s->files));
			s->files = v;
			if (r == 0)
				r = strmap_insert(&s->file_ids, key, plen + 1 + m->build_id_len,
						  (uint32_t)s->nfiles + 1);
			if (r < 0) {
				free(key);
				return r;
			}
			memset(&s->files[s->nfiles], 0, sizeof(*s->files));
			open_file(&s->files[s->nfiles], m);
			idx = (uint32_t)++s->nfiles;
		}
		free(key);
		s->module_file[m->id] = idx;
	}
	*ret = s->files[idx - 1].ok ? &s->files[idx - 1] : NULL;
	return 0;
}

static const char *keep_name(struct prof_symbolizer *s, const char *fmt, ...)
	PROF_PRINTF(2, 3);

/* A formatted stand-in name that lives as long as the symbolizer. */
static const char *keep_name(struct prof_symbolizer *s, const char *fmt, ...)
{
	char *name;
	void *v = s->names;
	va_list ap;
	int r;

	r = grow_array(&v, &s->names_cap, s->nnames + 1, sizeof(*s->names));
	s->names = v;
	if (r < 0)
		return NULL;
	va_start(ap, fmt);
	r = vasprintf(&name, fmt, ap);
	va_end(ap);
	if (r < 0) {
		error_setx(-ENOMEM, "out of memory");
		return NULL;
	}
	s->names[s->nnames++] = name;
	return name;
}

static bool spool_symbol(struct prof_symbolizer *s, uint64_t key, uint64_t addr,
			 struct prof_resolved_frame *r)
{
	const struct symtab_entry *e = symtab_lookup(&s->spool_syms, key, addr);

	if (!e)
		return false;
	r->function = e->name;
	r->offset = addr - e->start;
	r->found = true;
	return true;
}

static int resolve_user(struct prof_symbolizer *s, const struct prof_frame *f,
			struct prof_resolved_frame *r)
{
	const struct prof_module *m = prof_spool_module(s->sp, f->ref);
	const struct symtab_entry *e;
	struct sym_file *file;
	uint64_t delta;
	int err;

	if (!m)		/* the reader checks references: not reached */
		return error_setx(-EINVAL, "frame %" PRIu32 " of an undefined module", f->id);
	r->module = basename_of(m->path);
	if (spool_symbol(s, SCOPE_KEY(PROF_SYMBOL_MODULE, f->ref), f->addr, r))
		return 0;
	err = module_file(s, m, &file);
	if (err < 0)
		return err;
	e = file ? elf_file_lookup(&file->elf, f->addr, &delta) : NULL;
	if (e) {
		r->function = e->name;
		r->offset = delta;
		r->found = true;
		return 0;
	}
	r->function = keep_name(s, "%s+0x%" PRIx64, r->module, f->addr);
	return r->function ? 0 : -ENOMEM;
}

static int resolve(struct prof_symbolizer *s, const struct prof_frame *f,
		   struct prof_resolved_frame *r)
{
	*r = (struct prof_resolved_frame){ .function = "", .module = "" };
	switch (f->kind) {
	case PROF_FRAME_USER:
		return resolve_user(s, f, r);
	case PROF_FRAME_KERNEL:
		r->module = "[kernel]";
		if (spool_symbol(s, SCOPE_KEY(PROF_SYMBOL_KERNEL, 0), f->addr, r))
			return 0;
		break;
	case PROF_FRAME_ANON:
		r->module = "[anon]";
		if (spool_symbol(s, SCOPE_KEY(PROF_SYMBOL_PROCESS, f->ref), f->addr, r))
			return 0;
		break;
	case PROF_FRAME_TRUNCATED:
		r->function = keep_name(s, "[truncated: %s]",
					prof_unwind_error_name((unsigned)f->addr));
		return r->function ? 0 : -ENOMEM;
	default:	/* the reader checks kinds: not reached */
		return error_setx(-EINVAL, "frame %" PRIu32 " of unknown kind %u", f->id,
				  f->kind);
	}
	r->function = keep_name(s, "0x%" PRIx64, f->addr);
	return r->function ? 0 : -ENOMEM;
}

int prof_symbolizer_frame(struct prof_symbolizer *s, uint32_t frame,
			  struct prof_resolved_frame *ret)
{
	const struct prof_frame *f;
	struct sym_frame *c;
	void *v;
	int r;

	if (!s || !ret)
		return error_setx(-EINVAL, "no symbolizer");
	f = prof_spool_frame(s->sp, frame);
	if (!f)
		return error_setx(-EINVAL, "frame %" PRIu32 " is not defined", frame);
	r = index_spool_symbols(s);
	if (r < 0)
		return r;
	v = s->frames;
	r = reserve_ids(&v, &s->frames_cap, frame, sizeof(*s->frames));
	s->frames = v;
	if (r < 0)
		return r;
	c = &s->frames[frame];
	if (!c->done) {
		r = resolve(s, f, &c->r);
		if (r < 0)
			return r;
		c->done = true;
	}
	*ret = c->r;
	return 0;
}
