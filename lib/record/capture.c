/* SPDX-License-Identifier: MIT */
/*
 * capture.c - the names a spool carries, captured at the end of a
 * recording for every frame it holds, so that a report works later and
 * elsewhere: the function symbols of each module (also of files deleted or
 * replaced while recorded, read through a descriptor kept since they were
 * mapped), kernel symbols from /proc/kallsyms, and JIT names from
 * /tmp/perf-PID.map and the jitdump a process announced.  Only the symbols that some frame falls in are
 * written: the cost follows distinct frames, not the size of the tables.
 * The perf map and the jitdump are written by the target: they are read
 * as hostile input.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "jitdump.h"
#include "perf_map.h"
#include "proc.h"
#include "radix.h"
#include "symbols/elf_file.h"
#include "internal.h"
#include "spool/spool_writer.h"

int capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	intern_init(&c->written);
	return image_set_new(&c->images);
}

void capture_release(struct capture *c)
{
	image_set_unref(c->images);
	intern_release(&c->written);
	memset(c, 0, sizeof(*c));
}

int capture_module(struct capture *c, uint32_t id, const struct as_module *m)
{
	struct image_file f = { .path = m->open_path, .dev_major = m->dev_major,
				.dev_minor = m->dev_minor, .inode = m->inode };

	/* the vDSO too: its image is a copy of prof's own, identical on this kernel */
	if (!m->open_path || !m->elf_ok)
		return 0;
	return image_set_add(c->images, id, &f);
}

/* A frame the names are wanted for: scope, scope id, address. */
struct want {
	uint8_t scope;
	uint32_t id;
	uint64_t addr;
	const char *file;	/* MODULE: where its file is read (one string per file) */
	pid_t pid;		/* PROCESS: whose perf map names it; 0 unknown */
};

struct wants {
	struct want *v;
	size_t n, cap;
	bool kernel;
	struct image_set *images;
	const struct capture_process *procs;	/* sorted by id */
	size_t nprocs;
};

static int by_id(const void *a, const void *b)
{
	const struct capture_process *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct capture_process *proc_of(const struct wants *w, uint32_t id)
{
	const struct capture_process key = { .id = id };

	return w->nprocs ? bsearch(&key, w->procs, w->nprocs, sizeof(key), by_id) : NULL;
}

static pid_t pid_of(const struct wants *w, uint32_t id)
{
	const struct capture_process *p = proc_of(w, id);

	return p ? p->pid : 0;
}

static int collect(const struct prof_frame *f, void *ctx)
{
	struct wants *w = ctx;
	struct want x;
	void *p = w->v;
	int r;

	switch (f->kind) {
	case PROF_FRAME_USER:
		x = (struct want){ PROF_SYMBOL_MODULE, f->ref, f->addr,
				   image_set_path(w->images, f->ref), 0 };
		break;
	case PROF_FRAME_KERNEL:
		x = (struct want){ PROF_SYMBOL_KERNEL, 0, f->addr, NULL, 0 };
		w->kernel = true;
		break;
	case PROF_FRAME_ANON:
		x = (struct want){ PROF_SYMBOL_PROCESS, f->ref, f->addr, NULL,
				   pid_of(w, f->ref) };
		break;
	default:
		return 0;
	}
	r = grow_array(&p, &w->cap, w->n + 1, sizeof(*w->v));
	w->v = p;
	if (r < 0)
		return r;
	w->v[w->n++] = x;
	return 0;
}

/*
 * Sort W's frames by scope, then file (the modules of one file together:
 * it is read once for all), then id, then address, with a radix sort: a
 * make -j's frames number tens of thousands, and qsort() took a third of
 * the capture.  0 or -ENOMEM.
 */
static int sort_wants(struct wants *w)
{
	uint64_t *group = malloc(w->n * sizeof(*group)), *addr = malloc(w->n * sizeof(*addr));
	uint32_t *idx = malloc(w->n * sizeof(*idx)), *tmp = malloc(w->n * sizeof(*tmp));
	struct want *out = malloc(w->n * sizeof(*out));
	struct intern_map files;
	uint32_t rank;
	size_t i;
	int r = 0;

	intern_init(&files);
	if (!group || !addr || !idx || !tmp || !out || w->n > UINT32_MAX) {
		r = error_setx(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < w->n && r >= 0; i++) {
		/* a file's rank, by its first frame: what matters is that its frames meet */
		rank = w->v[i].file ? intern_find(&files, (uintptr_t)w->v[i].file, 0) : 0;
		if (w->v[i].file && !rank) {
			rank = (uint32_t)files.used + 1;
			r = rank < (1u << 24) ? intern_insert(&files, (uintptr_t)w->v[i].file, 0, rank)
					      : error_setx(-ENOMEM, "too many files");
		}
		group[i] = (uint64_t)w->v[i].scope << 56 | (uint64_t)rank << 32 | w->v[i].id;
		addr[i] = w->v[i].addr;
		idx[i] = (uint32_t)i;
	}
	if (r < 0)
		goto out;
	radix_order(addr, w->n, idx, tmp);
	radix_order(group, w->n, idx, tmp);
	for (i = 0; i < w->n; i++)
		out[i] = w->v[idx[i]];
	free(w->v);
	w->v = out;
	w->cap = w->n;
	out = NULL;
out:
	intern_release(&files);
	free(group);
	free(addr);
	free(idx);
	free(tmp);
	free(out);
	return r;
}

/* Write the symbol once per (scope, id, start). */
static int emit(struct capture *c, struct prof_spool_writer *w, uint8_t scope, uint32_t id,
		uint64_t start, uint64_t size, const char *name)
{
	uint64_t key = (uint64_t)scope << 32 | id;
	int r;

	if (intern_find(&c->written, key, start))
		return 0;
	r = intern_insert(&c->written, key, start, 1);
	if (r < 0)
		return r;
	r = prof_spool_writer_add_symbol(w, &PROF_INIT(prof_symbol, .scope = scope, .scope_id = id,
							    .start = start, .size = size ? size : 1,
							    .name = name));
	if (r >= 0)
		c->symbols++;
	return r;
}

/*
 * The user frames of module V[0].id, V[0..n) by address, in its file F:
 * their function symbols.  The frames of one function follow each other:
 * the symbol is looked up, and its record written, once for them all.
 */
static int capture_user(struct capture *c, struct prof_spool_writer *w, struct elf_file *f,
			const struct want *v, size_t n)
{
	uint64_t from = 0, until = 0, vaddr;
	size_t i;
	int r = 0;

	for (i = 0; i < n && r >= 0; i++) {
		const struct symtab_entry *e;

		if (!elf_file_vaddr(f, v[i].addr, &vaddr) || (vaddr >= from && vaddr < until))
			continue;
		e = symtab_lookup_until(&f->syms, 0, vaddr, &until);
		from = vaddr;
		if (e)
			r = emit(c, w, PROF_SYMBOL_MODULE, v[i].id, v[i].addr - (vaddr - e->start),
				 e->end - e->start, e->name);
	}
	return r;
}

struct ksym {
	uint64_t addr;
	char *name;
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms, sorted; "name [module]" for modules. */
static int read_kallsyms(struct ksym **ret, size_t *ret_n, bool *hidden)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct ksym *v = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	bool any_nonzero = false;
	int r = 0;

	if (!f)
		return error_set(-errno, "cannot read /proc/kallsyms");
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long addr;
		char type, name[256], mod[128] = "";
		void *p = v;

		if (sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod) < 3)
			continue;
		if (addr)
			any_nonzero = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		r = grow_array(&p, &cap, n + 1, sizeof(*v));
		v = p;
		if (r < 0)
			break;
		if (mod[0] ? asprintf(&v[n].name, "%s [%s]", name, mod) < 0
			   : !(v[n].name = strdup(name))) {
			r = error_setx(-ENOMEM, "out of memory");
			break;
		}
		v[n++].addr = addr;
	}
	free(line);
	fclose(f);
	*hidden = !any_nonzero;
	if (r >= 0)
		if (n)
			qsort(v, n, sizeof(*v), by_addr);
	*ret = v;
	*ret_n = n;
	return r;
}

static int capture_kernel(struct capture *c, struct prof_spool_writer *w, const struct want *v,
			  size_t n)
{
	struct ksym *k = NULL;
	size_t nk = 0, i;
	bool hidden = false;
	int r = read_kallsyms(&k, &nk, &hidden);	/* on failure, k and nk stay empty */

	if (r >= 0 && hidden)
		pr_warn("kernel addresses are hidden (kernel.kptr_restrict): kernel frames stay "
			"unnamed");
	for (i = 0; r >= 0 && !hidden && i < n; i++) {
		size_t lo = 0, hi = nk;

		/* the last symbol starting at or below the address */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (k[mid].addr <= v[i].addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			continue;
		lo--;
		r = emit(c, w, PROF_SYMBOL_KERNEL, 0, k[lo].addr,
			 lo + 1 < nk && k[lo + 1].addr > k[lo].addr ? k[lo + 1].addr - k[lo].addr
								     : 4096,
			 k[lo].name);
	}
	for (i = 0; i < nk; i++)
		free(k[i].name);
	free(k);
	return r;
}

/*
 * The jitdump process PID announced at PATH (as it named it: through its
 * root while it lives), its loads after the perf map's entries.
 */
static int read_jitdump(pid_t pid, const char *path, struct jit_sym **v, size_t *n)
{
	size_t cap = *n;
	char *alive;
	int r;

	if (asprintf(&alive, "/proc/%d/root%s", (int)pid, path) < 0)
		return error_setx(-ENOMEM, "out of memory");
	if (access(alive, R_OK) == 0)
		path = alive;
	r = jitdump_read(path, v, n, &cap);
	free(alive);
	return r;
}

/*
 * The frames of V at the recorder's own addresses [LO, HI) (Python's, or
 * the JIT loads'), named from NAMES (N, sorted by address); *COUNT counts
 * the names written.
 */
static int capture_synthetic(struct capture *c, struct prof_spool_writer *w, const struct want *v,
			     size_t nv, uint64_t lo, uint64_t hi, const struct jit_sym *names,
			     size_t n, uint64_t *count)
{
	const struct jit_sym *s;
	size_t i;
	int r = 0;

	for (i = 0; r >= 0 && i < nv; i++) {
		if (v[i].addr < lo || v[i].addr >= hi)
			continue;
		s = jit_sym_find(names, n, v[i].addr);
		if (s) {
			r = emit(c, w, PROF_SYMBOL_PROCESS, v[i].id, s->start, s->size, s->name);
			if (count)
				(*count)++;
		}
	}
	return r;
}

static int capture_jit(struct capture *c, struct prof_spool_writer *w,
		       const struct capture_process *proc, const struct want *v, size_t n)
{
	struct jit_sym *syms;
	size_t ns, nmap, i, k;
	int r;

	if (!v[0].pid)
		return 0;
	if (proc) {
		r = capture_synthetic(c, w, v, n, PROF_PYTHON_FRAME_BASE, UINT64_MAX, proc->py,
				      proc->npy, NULL);
		if (r >= 0)
			r = capture_synthetic(c, w, v, n, PROF_JIT_FRAME_BASE, PROF_JAVA_FRAME_BASE,
					      proc->jit, proc->njit, &c->jitdump_names);
		if (r >= 0)
			r = capture_synthetic(c, w, v, n, PROF_JAVA_FRAME_BASE, PROF_PYTHON_FRAME_BASE,
					      proc->java, proc->njava, NULL);
		if (r < 0)
			return r;
	}
	r = perf_map_read(v[0].pid, true, &syms, &ns);
	nmap = ns;
	if (r >= 0 && proc && proc->jitdump)
		r = read_jitdump(v[0].pid, proc->jitdump, &syms, &ns);
	for (i = 0; r >= 0 && i < n; i++) {
		if (v[i].addr >= PROF_JIT_FRAME_BASE)
			continue;	/* named above */
		/* entries may overlap (code regenerated): the last one that holds it wins */
		for (k = ns; k-- > 0;)
			if (syms[k].start <= v[i].addr && v[i].addr - syms[k].start < syms[k].size)
				break;
		if (k < ns) {
			r = emit(c, w, PROF_SYMBOL_PROCESS, v[i].id, syms[k].start, syms[k].size,
				 syms[k].name);
			/* the jitdump's loads come after the map's entries */
			if (k < nmap)
				c->map_names++;
			else
				c->jitdump_names++;
		}
	}
	for (i = 0; i < ns; i++)
		free(syms[i].name);
	free(syms);
	return r;
}

/*
 * The file of W->v[AT], for the lookups of its frames alone: those of
 * every module of it, which follow V[AT] (sorted by file).  Its symbols
 * that no frame falls in are not read: cc1 has 26,000 of them, a make
 * -j2 of two dozen files samples 1,700.
 */
static int open_for(const struct wants *w, size_t at, struct elf_file *f)
{
	size_t n, i;
	uint64_t *offs;
	int r;

	for (n = at; n < w->n && w->v[n].scope == PROF_SYMBOL_MODULE && w->v[n].file == w->v[at].file;
	     n++)
		;
	n -= at;
	offs = malloc(n * sizeof(*offs));
	if (!offs)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		offs[i] = w->v[at + i].addr;
	r = elf_file_open_for(w->v[at].file, offs, n, f);
	free(offs);
	return r;
}

int capture_names(struct capture *c, struct prof_spool_writer *w, struct capture_process *procs,
		  size_t n)
{
	struct wants want = { .images = c->images, .procs = procs, .nprocs = n };
	const char *open_file = NULL;
	struct elf_file f;
	bool have_file = false;
	size_t i, j;
	int r;

	if (n)
		qsort(procs, n, sizeof(*procs), by_id);
	r = spool_writer_each_frame(w, collect, &want);

	if (r >= 0 && want.n)
		r = sort_wants(&want);
	for (i = 0; r >= 0 && i < want.n; i = j) {
		for (j = i; j < want.n && want.v[j].scope == want.v[i].scope &&
			    want.v[j].id == want.v[i].id; j++)
			;
		if (want.v[i].scope == PROF_SYMBOL_MODULE) {
			/* a make -j maps cc1 in seventy processes: read it once */
			if (want.v[i].file != open_file) {
				if (have_file)
					elf_file_release(&f);
				open_file = want.v[i].file;
				have_file = open_file && open_for(&want, i, &f) == 0;
				if (!have_file)
					prof_errmsg_clear();
			}
			if (have_file)
				r = capture_user(c, w, &f, want.v + i, j - i);
		} else if (want.v[i].scope == PROF_SYMBOL_KERNEL)
			r = capture_kernel(c, w, want.v + i, j - i);
		else
			r = capture_jit(c, w, proc_of(&want, want.v[i].id), want.v + i, j - i);
	}
	if (have_file)
		elf_file_release(&f);
	free(want.v);
	return r;
}
