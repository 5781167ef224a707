/* SPDX-License-Identifier: MIT */
/*
 * symbolize.c - frame ids to functions, modules and source lines.  A
 * frame's function is named by the spool's own symbol records first (what
 * the recording saw of perf maps, kallsyms and deleted images), else by
 * the ELF file at the module's path.  Where that file is the build the
 * recording saw and its debug info is found (debuginfo.c), its DWARF adds
 * the functions inlined at the address as frames of their own, and a
 * file:line to each.  Names are demangled unless asked not to.  Each frame
 * is resolved once; each file is opened, and its debug info looked for,
 * once per (path, build-id) (one that follows a recorder into its next
 * file keeps those the last one needed), and its problems are logged
 * once, at WARN, when a name is first taken from it.  Stand-in names keep unnamed frames
 * apart.  It reads the spool's tables, never its records.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "demangle.h"
#include "vdso.h"
#include "dwinfo.h"
#include "elf_file.h"
#include "internal.h"
#include "strmap.h"
#include "symbolize.h"
#include "symtab.h"

/* A source path under the compilation directory shorter than this is shown whole. */
#define SHORT_PATH_MAX 40

/*
 * Resolved frames, and the arrays of pointers to them that are lent, are
 * carved from blocks of this many bytes, which never move.
 */
#define FRAME_BLOCK (64u << 10)

/* One ELF file as a module record names it. */
struct sym_file {
	struct elf_file elf;
	struct dwinfo dw;	/* its DWARF, from wherever debuginfo_find() found it */
	char *problem;		/* why its names may be wrong or missing; NULL: none */
	bool unreadable;	/* the problem is that it cannot be read at all */
	bool ok;		/* opened and read */
	bool dwarf;		/* dw holds DWARF */
	bool warned;		/* problem was logged */
	const char *own_from;	/* where its own names are: as the recorder read them too */
	enum debuginfo_source debug_src;	/* where its DWARF came from */
	bool debug_symtab;	/* its names are its debug file's .symtab */
	char *debug_missing;	/* the debug file its .gnu_debuglink names, not found; or NULL */
	char *key;		/* its key in file_ids: path, '\0', recorded build-id */
	size_t key_len;
	uint32_t used;		/* the spool generation that last needed it */
};

struct sym_frame {
	const struct prof_resolved_frame *const *v;	/* outermost first, in a frame block */
	uint32_t n;
	bool done;
};

struct frame_block {
	struct frame_block *next;
	size_t used, cap;		/* bytes of data */
	max_align_t data[];
};

struct prof_symbolizer {
	const struct prof_spool *sp;
	struct sym_frame *frames;	/* by frame id */
	size_t frames_cap;
	struct frame_block *blocks;	/* the newest first */
	uint32_t *module_file;		/* by module id: index in files + 1; 0: not yet */
	size_t module_file_cap;
	struct sym_file *files;
	size_t nfiles, files_cap;
	struct strmap file_ids;		/* path + '\0' + recorded build-id -> index + 1 */
	struct symtab spool_syms;	/* the spool's symbol records, keyed by scope */
	uint32_t nsyms;			/* symbol records indexed */
	char **names;			/* stand-in and demangled names, owned */
	size_t nnames, names_cap;
	struct strmap demangled;	/* mangled name -> index in names + 1; NOT_MANGLED */
	bool demangle;
	bool no_dwarf;			/* debug files for their .symtab only */
	struct debuginfo debug;
	struct image_set *images;	/* the recorder's files, for its tail; NULL: none */
	uint32_t generation;		/* spools followed before this one */
};

/* In demangled: a name the demangler does not know, shown as it is. */
#define NOT_MANGLED UINT32_MAX

#define SCOPE_KEY(scope, id) ((uint64_t)(scope) << 32 | (id))

int prof_symbolizer_new(const struct prof_spool *sp, const struct prof_symbolizer_opts *opts,
			struct prof_symbolizer **ret)
{
	struct prof_symbolizer_opts o;
	struct prof_symbolizer *s;
	int r;

	if (!sp || !ret)
		return error_setx(-EINVAL, "no spool to symbolize");
	r = opts_copy(&o, sizeof(o), opts, "symbolizer");
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return error_setx(-ENOMEM, "out of memory");
	s->sp = sp;
	s->demangle = !o.no_demangle;
	s->no_dwarf = o.no_dwarf;
	r = debuginfo_init(&s->debug, o.debug_dirs, o.debuginfod, o.debuginfod_timeout_s);
	if (r < 0) {
		prof_symbolizer_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

static void release_file(struct sym_file *f)
{
	elf_file_release(&f->elf);
	dwinfo_release(&f->dw);
	free(f->problem);
	free(f->debug_missing);
	free(f->key);
}

/* Forget what S knew by the ids of its spool: frames, modules, symbols, names. */
static void forget_spool(struct prof_symbolizer *s)
{
	struct frame_block *b;
	size_t i;

	while ((b = s->blocks)) {
		s->blocks = b->next;
		free(b);
	}
	free(s->frames);
	s->frames = NULL;
	s->frames_cap = 0;
	free(s->module_file);
	s->module_file = NULL;
	s->module_file_cap = 0;
	symtab_release(&s->spool_syms);
	s->nsyms = 0;
	for (i = 0; i < s->nnames; i++)
		free(s->names[i]);
	s->nnames = 0;
	strmap_release(&s->demangled);
}

void prof_symbolizer_free(struct prof_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	forget_spool(s);
	for (i = 0; i < s->nfiles; i++)
		release_file(&s->files[i]);
	free(s->names);
	free(s->files);
	strmap_release(&s->file_ids);
	debuginfo_release(&s->debug);
	image_set_unref(s->images);
	free(s);
}

void symbolizer_read_images(struct prof_symbolizer *s, struct image_set *set)
{
	image_set_unref(s->images);
	s->images = set ? image_set_ref(set) : NULL;
}

int symbolizer_follow(struct prof_symbolizer *s, const struct prof_spool *sp,
		      struct image_set *set)
{
	size_t i, n = 0;
	int r = 0;

	forget_spool(s);
	/*
	 * The files the old spool needed stay open, their DWARF read: the
	 * new one maps mostly the same.  The others go, or a machine that
	 * runs ever new binaries (a build's) would keep each.
	 */
	strmap_release(&s->file_ids);
	for (i = 0; i < s->nfiles; i++) {
		if (s->files[i].used != s->generation) {
			release_file(&s->files[i]);
			continue;
		}
		s->files[n] = s->files[i];
		if (r == 0)
			r = strmap_insert(&s->file_ids, s->files[n].key, s->files[n].key_len,
					  (uint32_t)n + 1);
		n++;
	}
	s->nfiles = n;
	s->generation++;
	s->sp = sp;
	symbolizer_read_images(s, set);
	return r;
}

/* Index the spool's symbol records again when more were read. */
static int index_spool_symbols(struct prof_symbolizer *s)
{
	SIZED(prof_spool_counts, n);
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

/*
 * The debug info of F, the file of module M: its DWARF, and its .symtab
 * when F has only .dynsym (or nothing).  Not finding any is normal (most
 * system libraries ship without); a debug file that cannot be read is
 * worth a warning.
 */
static int open_debuginfo(struct prof_symbolizer *s, struct sym_file *f,
			  const struct prof_module *m)
{
	/* the file's own build-id: its offsets are what the debug file must describe */
	const uint8_t *id = f->elf.build_id_len ? f->elf.build_id : m->build_id;
	size_t len = f->elf.build_id_len ? f->elf.build_id_len : m->build_id_len;
	bool had_symtab = !f->elf.dynsym && f->elf.syms.n;
	enum debuginfo_source src;
	const char *link;
	char *path;
	int r;

	r = debuginfo_find(&s->debug, m->path, f->elf.elf, id, len, &path, &src);
	if (r <= 0) {
		if (r < 0)
			return r;
		pr_debug("no debug info for '%s'", m->path);
		/* a file that says where its debug file is: a hint can name it */
		link = debuginfo_link_name(f->elf.elf);
		if (link && !(f->debug_missing = xstrdup(link)))
			return -ENOMEM;
		return 0;
	}
	r = dwinfo_open(path, !s->no_dwarf, &f->dw);
	if (r == -ENOMEM) {
		free(path);
		return r;
	}
	if (r < 0) {
		pr_warn("%s; frames of '%s' are shown without inline frames and lines",
			prof_errmsg(), m->path);
		prof_errmsg_clear();
		dwinfo_release(&f->dw);
		free(path);
		return 0;
	}
	f->dwarf = f->dw.dw != NULL;
	pr_debug("debug info for '%s': '%s' (%s)", m->path, path, debuginfo_source_name(src));
	free(path);
	f->debug_src = src;
	if (src == DEBUGINFO_SELF || had_symtab)
		return 0;
	r = elf_file_read_symtab(&f->elf, f->dw.elf);
	if (r == -ENOMEM)
		return r;
	f->debug_symtab = !f->elf.dynsym && f->elf.syms.n;
	return 0;
}

/* Where the symbols of ELF's own tables come from; NULL: it has none. */
static const char *own_names_from(const struct elf_file *elf)
{
	if (elf->gopclntab)
		return ".gopclntab";
	if (elf->syms.n)
		return elf->dynsym ? ".dynsym only" : ".symtab";
	return NULL;
}

/* Where the symbols of F come from, as the report says it; NULL: it has none. */
static const char *file_names_from(const struct sym_file *f)
{
	if (!f || !f->ok)
		return NULL;
	if (f->debug_symtab)
		return f->debug_src == DEBUGINFO_BUILD_ID	? "debug file by build-id"
		       : f->debug_src == DEBUGINFO_DEBUGLINK ? "debug file by debuglink"
							     : "debug file from debuginfod";
	return own_names_from(&f->elf);
}

/*
 * Where a name the spool carries for a frame of F came from: the recorder
 * read the tables of the file that is F (the same build) as F's own are
 * read here; else the recording's word is all there is.
 */
static const char *recorded_names_from(const struct sym_file *f)
{
	return f && f->ok && !f->problem && f->own_from ? f->own_from : "recorded";
}

/*
 * Open the file of module M.  What makes its names untrustworthy (it
 * cannot be read, or it is not the build recorded) is kept for a warning
 * when a frame first needs a name from it: frames that the spool's own
 * symbols name do not.  A file of another build gets no DWARF: its inline
 * frames and lines would describe other code.
 */
static int open_file(struct prof_symbolizer *s, struct sym_file *f, const struct prof_module *m)
{
	char want[2 * PROF_BUILD_ID_MAX + 1], have[2 * PROF_BUILD_ID_MAX + 1];
	const char *held;
	int r;

	if (m->flags & PROF_MODULE_VDSO) {
		/* this kernel's vDSO, if it is the one recorded; never worth a warning */
		const char *path = vdso_image_path();

		if (!path || elf_file_open(path, &f->elf) < 0) {
			prof_errmsg_clear();
			return 0;
		}
		if (m->build_id_len != f->elf.build_id_len ||
		    memcmp(m->build_id, f->elf.build_id, m->build_id_len)) {
			elf_file_release(&f->elf);
			return 0;
		}
		f->ok = true;
		f->own_from = own_names_from(&f->elf);
		return 0;
	}
	/* the recorder's descriptor of the very file mapped, else the path */
	held = s->images ? image_set_path(s->images, m->id) : NULL;
	if (held && elf_file_open(held, &f->elf) < 0) {
		pr_debug("cannot read the file the recorder held for '%s': %s", m->path,
			 prof_errmsg());
		prof_errmsg_clear();
		held = NULL;
	}
	if (!held && elf_file_open(m->path, &f->elf) < 0) {
		f->unreadable = true;
		r = asprintf(&f->problem, "%s", prof_errmsg());
		prof_errmsg_clear();
		return r < 0 ? error_setx(-ENOMEM, "out of memory") : 0;
	}
	f->ok = true;
	f->own_from = own_names_from(&f->elf);
	if (m->build_id_len && f->elf.build_id_len &&
	    (f->elf.build_id_len != m->build_id_len ||
	     memcmp(f->elf.build_id, m->build_id, m->build_id_len))) {
		hex_id(want, sizeof(want), m->build_id, m->build_id_len);
		hex_id(have, sizeof(have), f->elf.build_id, f->elf.build_id_len);
		r = asprintf(&f->problem, "'%s' has build-id %s, not the recorded %s", m->path,
			     have, want);
		return r < 0 ? error_setx(-ENOMEM, "out of memory") : 0;
	}
	return open_debuginfo(s, f, m);
}

/*
 * Warn, once, of what is wrong with F.  NAMED: the spool carries the names
 * of its frames, so they stay right; what is lost is the file's check, and
 * its inline frames and lines.
 */
static void warn_file(struct sym_file *f, bool named)
{
	if (!f || !f->problem || f->warned)
		return;
	if (named)
		pr_warn("%s: using the names the spool carries (no inline frames or lines)",
			f->problem);
	else if (f->unreadable)
		pr_warn("%s; its frames are shown as file offsets", f->problem);
	else
		pr_warn("%s: its function names may be wrong", f->problem);
	f->warned = true;
}

/* The file of module M, opened on first need; NULL when it has none (anonymous, vdso). */
static int module_file(struct prof_symbolizer *s, const struct prof_module *m,
		       struct sym_file **ret)
{
	size_t plen = strlen(m->path);
	char *key;
	uint32_t idx;
	void *v;
	int r;

	*ret = NULL;
	if ((m->path[0] != '/' && !(m->flags & PROF_MODULE_VDSO)) || (m->flags & PROF_MODULE_ANON))
		return 0;
	v = s->module_file;
	r = grow_array_zeroed(&v, &s->module_file_cap, (size_t)m->id + 1, sizeof(*s->module_file));
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
			s->files[s->nfiles].key = key;
			s->files[s->nfiles].key_len = plen + 1 + m->build_id_len;
			key = NULL;
			idx = (uint32_t)++s->nfiles;
			r = open_file(s, &s->files[idx - 1], m);
		}
		free(key);
		if (r < 0)
			return r;
		s->module_file[m->id] = idx;
	}
	s->files[idx - 1].used = s->generation;
	*ret = &s->files[idx - 1];
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

/*
 * NAME as the report shows it: without an ELF symbol version ("@@GLIBC_2.34",
 * which a debug file's .symtab has and .dynsym and the spool's names do not),
 * and demangled unless asked not to; worked out once per name.
 */
static const char *shown_name(struct prof_symbolizer *s, const char *name)
{
	size_t len = strlen(name);
	const char *at = len ? memchr(name + 1, '@', len - 1) : NULL;
	char *base = NULL;
	uint32_t id;
	char *d;

	if (!at && (!s->demangle || !demangle_candidate(name)))
		return name;
	id = strmap_find(&s->demangled, name, len);
	if (id)
		return id == NOT_MANGLED ? name : s->names[id - 1];
	if (at && !(base = strndup(name, (size_t)(at - name))))
		return NULL;
	d = s->demangle && demangle_candidate(base ? base : name) ? demangle(base ? base : name)
								    : NULL;
	if (d)
		free(base);
	else
		d = base;
	if (d) {
		void *v = s->names;

		if (grow_array(&v, &s->names_cap, s->nnames + 1, sizeof(*s->names)) < 0) {
			s->names = v;
			free(d);
			return NULL;
		}
		s->names = v;
		s->names[s->nnames++] = d;
		id = (uint32_t)s->nnames;
	}
	if (strmap_insert(&s->demangled, name, len, d ? id : NOT_MANGLED) < 0)
		return NULL;
	return d ? d : name;
}

/* BYTES of zeroes that stay where they are until prof_symbolizer_free(). */
static void *block_alloc(struct prof_symbolizer *s, size_t bytes)
{
	struct frame_block *b = s->blocks;
	size_t cap;
	uint8_t *p;

	bytes = (bytes + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	cap = bytes > FRAME_BLOCK ? bytes : FRAME_BLOCK;
	if (!b || b->cap - b->used < bytes) {
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			error_setx(-ENOMEM, "out of memory");
			return NULL;
		}
		b->cap = cap;
		b->used = 0;
		b->next = s->blocks;
		s->blocks = b;
	}
	p = (uint8_t *)b->data + b->used;
	b->used += bytes;
	return memset(p, 0, bytes);
}

/* N resolved frames, their sz set. */
static struct prof_resolved_frame *new_frames(struct prof_symbolizer *s, size_t n)
{
	struct prof_resolved_frame *v = block_alloc(s, n * sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++)
		v[i].sz = sizeof(v[i]);
	return v;
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

/*
 * The source file PATH as shown: relative to the compilation directory
 * COMP_DIR when it is under it (or already relative) and short; else its
 * basename.
 */
static const char *short_path(const char *path, const char *comp_dir)
{
	size_t len = comp_dir ? strlen(comp_dir) : 0;
	const char *rel = NULL;

	if (path[0] != '/')
		rel = path;
	else if (len && !strncmp(path, comp_dir, len) && path[len] == '/')
		rel = path + len + 1;
	if (rel && *rel && strlen(rel) <= SHORT_PATH_MAX && strncmp(rel, "../", 3) &&
	    !strstr(rel, "/../"))
		return rel;
	return basename_of(path);
}

static void set_line(struct prof_resolved_frame *r, const struct dwinfo_frame *d)
{
	if (!d->line || !d->file)
		return;
	r->line = d->line;
	r->file_path = d->file;
	r->file = short_path(d->file, d->comp_dir);
}

/*
 * The frames of the user frame F: the function that SYM names (the spool's
 * symbol record), else the symbol table of FILE, else its DWARF; then
 * those the DWARF says are inlined there.  FILE may be NULL or unreadable.
 * *RET and *RET_N as resolve().
 */
static int resolve_elf(struct prof_symbolizer *s, const struct prof_frame *f, const char *module,
		       const struct prof_resolved_frame *sym, struct sym_file *file,
		       const struct prof_resolved_frame **ret, uint32_t *ret_n)
{
	const struct dwinfo_frame *chain = NULL;
	const struct symtab_entry *e = NULL;
	struct prof_resolved_frame *v;
	uint64_t vaddr = 0, delta = 0;
	bool mapped = false;
	int n = 0, i;

	if (file && file->ok && elf_file_vaddr(&file->elf, f->addr, &vaddr)) {
		mapped = true;
		if (!sym)
			e = elf_file_lookup(&file->elf, f->addr, &delta);
		if (file->dwarf)
			n = dwinfo_lookup(&file->dw, vaddr, &chain);
		if (n < 0)
			return n;
	}
	v = new_frames(s, n ? (size_t)n : 1);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < (n ? n : 1); i++) {
		v[i].module = module;
		if (n)
			set_line(&v[i], &chain[i]);
	}
	/* a Go program without DWARF: its pc-line tables */
	if (!n && mapped && file->elf.gopclntab &&
	    elf_file_go_line(&file->elf, vaddr, &v[0].file_path, &v[0].line))
		v[0].file = short_path(v[0].file_path, NULL);
	if (sym) {
		v[0].function = sym->function;
		v[0].offset = sym->offset;
		v[0].names_from = recorded_names_from(file);
	} else if (e) {
		v[0].function = e->name;
		v[0].offset = delta;
		v[0].names_from = file_names_from(file);
	} else if (n && chain[0].name) {
		v[0].function = chain[0].name;
		v[0].names_from = "DWARF";
	}
	v[0].debug_missing = file ? file->debug_missing : NULL;
	v[0].found = v[0].function != NULL;
	if (v[0].found)
		v[0].function = shown_name(s, v[0].function);
	else
		v[0].function = keep_name(s, "%s+0x%" PRIx64, module, f->addr);
	for (i = 1; i < n; i++) {
		v[i].function = chain[i].name ? shown_name(s, chain[i].name) : "[unnamed]";
		v[i].found = chain[i].name != NULL;
		v[i].inlined = true;
	}
	for (i = 0; i < (n ? n : 1); i++)
		if (!v[i].function)
			return -ENOMEM;
	*ret = v;
	*ret_n = n ? (uint32_t)n : 1;
	return 0;
}

static int resolve_user(struct prof_symbolizer *s, const struct prof_frame *f,
			const struct prof_resolved_frame **ret, uint32_t *ret_n)
{
	const struct prof_module *m = prof_spool_module(s->sp, f->ref);
	struct prof_resolved_frame sym = { .sz = sizeof(sym) };
	struct sym_file *file;
	bool named;
	int err;

	if (!m)		/* the reader checks references: not reached */
		return error_setx(-EINVAL, "frame %" PRIu32 " of an undefined module", f->id);
	named = spool_symbol(s, SCOPE_KEY(PROF_SYMBOL_MODULE, f->ref), f->addr, &sym);
	err = module_file(s, m, &file);
	if (err < 0)
		return err;
	warn_file(file, named);
	return resolve_elf(s, f, basename_of(m->path), named ? &sym : NULL, file, ret, ret_n);
}

/* Where the spool's names of JIT code came from, as its trailer counts them. */
static const char *jit_names_from(const struct prof_symbolizer *s)
{
	const struct prof_counters *c = prof_spool_counters(s->sp);

	if (c && c->jit_map_names && !c->jitdump_names)
		return "perf map";
	if (c && c->jitdump_names && !c->jit_map_names)
		return "jitdump";
	return "perf map or jitdump";
}

/* Resolve F into *RET_N frames at *RET, outermost first. */
static int resolve(struct prof_symbolizer *s, const struct prof_frame *f,
		   const struct prof_resolved_frame **ret, uint32_t *ret_n)
{
	struct prof_resolved_frame *r;
	uint64_t key;

	if (f->kind == PROF_FRAME_USER)
		return resolve_user(s, f, ret, ret_n);
	r = new_frames(s, 1);
	if (!r)
		return -ENOMEM;
	r->function = "";
	r->module = "";
	*ret = r;
	*ret_n = 1;
	switch (f->kind) {
	case PROF_FRAME_KERNEL:
		r->module = "[kernel]";
		key = SCOPE_KEY(PROF_SYMBOL_KERNEL, 0);
		break;
	case PROF_FRAME_ANON:
		r->module = f->addr >= PROF_PYTHON_FRAME_BASE ? "[python]" : "[anon]";
		key = SCOPE_KEY(PROF_SYMBOL_PROCESS, f->ref);
		break;
	case PROF_FRAME_TRUNCATED:
		r->function = keep_name(s, "[truncated: %s]",
					name_or_unknown(prof_unwind_error_name((unsigned)f->addr)));
		return r->function ? 0 : -ENOMEM;
	case PROF_FRAME_STATE:
		r->function = keep_name(s, "[%s]",
					name_or_unknown(prof_offcpu_state_name((unsigned)f->addr)));
		return r->function ? 0 : -ENOMEM;
	default:	/* the reader checks kinds: not reached */
		return error_setx(-EINVAL, "frame %" PRIu32 " of unknown kind %u", f->id,
				  f->kind);
	}
	if (spool_symbol(s, key, f->addr, r)) {
		r->names_from = f->kind == PROF_FRAME_KERNEL		 ? "kallsyms"
				: f->addr >= PROF_PYTHON_FRAME_BASE ? "python"
				: f->addr >= PROF_JAVA_FRAME_BASE   ? "JVM interpreter"
								    : jit_names_from(s);
		r->function = shown_name(s, r->function);
		return r->function ? 0 : -ENOMEM;
	}
	r->function = keep_name(s, "0x%" PRIx64, f->addr);
	return r->function ? 0 : -ENOMEM;
}

int prof_symbolizer_frame_inlines(struct prof_symbolizer *s, uint32_t frame,
				  const struct prof_resolved_frame *const **ret, size_t *ret_n)
{
	const struct prof_resolved_frame *chain = NULL, **ptrs;
	const struct prof_frame *f;
	struct sym_frame *c;
	uint32_t i, n = 0;
	void *v;
	int r;

	if (!s || !ret || !ret_n)
		return error_setx(-EINVAL, "no symbolizer");
	f = prof_spool_frame(s->sp, frame);
	if (!f)
		return error_setx(-EINVAL, "frame %" PRIu32 " is not defined", frame);
	r = index_spool_symbols(s);
	if (r < 0)
		return r;
	v = s->frames;
	r = grow_array_zeroed(&v, &s->frames_cap, (size_t)frame + 1, sizeof(*s->frames));
	s->frames = v;
	if (r < 0)
		return r;
	c = &s->frames[frame];
	if (!c->done) {
		r = resolve(s, f, &chain, &n);
		if (r < 0)
			return r;
		/* lent as pointers, so that the struct may grow */
		ptrs = block_alloc(s, n * sizeof(*ptrs));
		if (!ptrs)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			ptrs[i] = &chain[i];
		c->v = ptrs;
		c->n = n;
		c->done = true;
	}
	*ret = c->v;
	*ret_n = c->n;
	return 0;
}

int prof_symbolizer_frame(struct prof_symbolizer *s, uint32_t frame,
			  struct prof_resolved_frame *ret)
{
	const struct prof_resolved_frame *const *v;
	size_t n;
	int r;

	if (!ret || ret->sz < sizeof(ret->sz))
		return error_setx(-EINVAL, "resolved frame: sz not set");
	r = prof_symbolizer_frame_inlines(s, frame, &v, &n);
	if (r == 0)
		r = sized_out(ret, v[0], sizeof(*v[0]), "resolved frame");
	return r;
}
