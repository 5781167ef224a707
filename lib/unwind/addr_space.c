/* SPDX-License-Identifier: MIT */
/*
 * addr_space.c - the executable mappings of a process, and its libdwfl
 * session.
 *
 * A module is described once, when it is mapped: where its file can be
 * read (through /proc/PID/root or map_files when the path does not name
 * it), its load bias and build-id.  Its compiled unwind table is looked up
 * when a sample first lands in it, and shared with every process that maps
 * the same file.  The libdwfl session is made only when libdwfl unwinds
 * (the libdwfl engine, or a frame the tables cannot encode), then kept
 * across samples and extended when a mapping appears, so the CFI of a
 * module is parsed once, not per sample.  libdwfl reads the sampled
 * registers through set_initial_registers and stack memory through
 * memory_read, which serves [sp, sp + size) from the sample's stack copy;
 * reads past the copy are remembered: they are how a stack copy that was
 * too small shows.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "addr_space.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "symbols/vdso.h"

/* What a file's ELF headers say, for the mappings of it. */
struct elf_facts {
	uint32_t dev_major, dev_minor;
	uint64_t inode, size;
	int64_t mtime_ns;
	uint32_t nload;
	struct {
		uint64_t offset, vaddr, filesz;
	} load[8];		/* PT_LOAD segments, the first 8 */
	uint8_t build_id_len;
	uint8_t build_id[PROF_BUILD_ID_MAX];
};

#define ELF_FACTS_MAX 256
#define AS_HELD_MAX 256

static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	/*
	 * Local build-id paths only: the standard lookup would ask debuginfod
	 * whenever DEBUGINFOD_URLS is set, a network wait in the poll loop.
	 * Unwinding needs .eh_frame, which the mapped file has.
	 */
	.find_debuginfo = dwfl_build_id_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

void as_shared_init(struct as_shared *s)
{
	memset(s, 0, sizeof(*s));
	utables_init(&s->tables);
}

void as_shared_release(struct as_shared *s)
{
	size_t i;

	for (i = 0; i < s->nheld; i++)
		close(s->held[i].fd);
	free(s->held);
	free(s->facts);
	utables_release(&s->tables);
	memset(s, 0, sizeof(*s));
}

/*
 * A new generation, which no address space sharing AS's facts has had:
 * what was kept of its modules by generation (a thread's last stack) is
 * stale.
 */
static void new_gen(struct addr_space *as)
{
	as->gen = as->shared ? ++as->shared->gens : 0;
}

void as_init(struct addr_space *as, pid_t pid, struct as_shared *shared)
{
	memset(as, 0, sizeof(*as));
	as->pid = pid;
	as->shared = shared;
	new_gen(as);
}

static void module_release(struct addr_space *as, struct as_module *m)
{
	if (m->open_path != m->path)
		free(m->open_path);
	free(m->path);
	m->path = m->open_path = NULL;
	if (as->shared)
		utables_put(&as->shared->tables, m->table);
	m->table = NULL;
}

void as_release(struct addr_space *as)
{
	size_t i;

	for (i = 0; i < as->nmods; i++)
		module_release(as, &as->mods[i]);
	free(as->mods);
	free(as->anon);
	jit_rules_release(&as->jit);
	if (as->dwfl)
		dwfl_end(as->dwfl);
	as_init(as, as->pid, as->shared);
}

/* A stat memo's life: a file replaced since is seen again at most this late. */
#define STAT_MEMO_NS 200000000ull

/* stat(2) of PATH, or what SH saw of it in the last STAT_MEMO_NS.  0 or -1 (errno set). */
static int memo_stat(struct as_shared *sh, const char *path, struct as_stat_memo *ret)
{
	uint64_t h = 14695981039346656037ull, now;
	struct as_stat_memo *m;
	struct timespec ts;
	struct stat st;
	const char *c;

	for (c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h |= 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	m = sh ? &sh->stats[h % AS_STAT_MEMO] : ret;
	if (sh && m->path_hash == h && now - m->when_ns < STAT_MEMO_NS) {
		*ret = *m;
		errno = m->err;
		return m->err ? -1 : 0;
	}
	memset(m, 0, sizeof(*m));
	m->path_hash = h;
	m->when_ns = now;
	if (stat(path, &st) < 0) {
		m->err = errno;
	} else {
		m->ino = st.st_ino;
		m->size = (uint64_t)st.st_size;
		m->mtime_ns = stat_mtime_ns(&st);
		m->dev_major = major(st.st_dev);
		m->dev_minor = minor(st.st_dev);
	}
	*ret = *m;
	errno = m->err;
	return m->err ? -1 : 0;
}

/* SH: the memo may answer (a path of the host's; not one under /proc/PID, another's each time) */
static bool same_file(struct as_shared *sh, const char *path, uint32_t maj, uint32_t min,
		      uint64_t inode)
{
	struct as_stat_memo st;

	return memo_stat(sh, path, &st) == 0 && st.dev_major == maj && st.dev_minor == min &&
	       st.ino == inode;
}

/* What the ELF file at PATH says: its PT_LOAD segments and build-id.  False: no ELF file. */
static bool read_facts(const char *path, struct elf_facts *f)
{
	const void *bid;
	size_t i, phnum;
	ssize_t len;
	bool ok = false;
	Elf *elf;
	int fd;

	/* (non-blocking: the path of a mapped file may name a FIFO now) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) < 0)
		goto out;
	for (i = 0; i < phnum && f->nload < ARRAY_SIZE(f->load); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->load[f->nload].offset = ph.p_offset;
		f->load[f->nload].vaddr = ph.p_vaddr;
		f->load[f->nload++].filesz = ph.p_filesz;
	}
	len = dwelf_elf_gnu_build_id(elf, &bid);
	if (len > 0 && len <= (ssize_t)sizeof(f->build_id)) {
		memcpy(f->build_id, bid, (size_t)len);
		f->build_id_len = (uint8_t)len;
	}
	ok = true;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

/*
 * What the ELF file at PATH (ST its stat) says, from the cache shared by
 * the address spaces (a make -j maps the same few files in every process:
 * their headers are read once, while the file is the same: device, inode,
 * size and mtime), else read into ONE.  NULL: no ELF file.
 */
static const struct elf_facts *facts_of(struct addr_space *as, const char *path,
					const struct as_stat_memo *st, struct elf_facts *one)
{
	struct as_shared *sh = as->shared;
	struct elf_facts *f;
	size_t i;

	for (i = 0; sh && sh->facts && i < sh->nfacts; i++) {
		struct elf_facts *c = &sh->facts[i];

		if (c->inode == st->ino && c->dev_major == st->dev_major &&
		    c->dev_minor == st->dev_minor && c->size == st->size &&
		    c->mtime_ns == st->mtime_ns)
			return c;
	}
	memset(one, 0, sizeof(*one));
	if (!read_facts(path, one))
		return NULL;
	one->dev_major = st->dev_major;
	one->dev_minor = st->dev_minor;
	one->inode = st->ino;
	one->size = st->size;
	one->mtime_ns = st->mtime_ns;
	/* without room for the cache, each mapping reads its file's headers */
	if (sh && !sh->facts)
		sh->facts = calloc(ELF_FACTS_MAX, sizeof(*sh->facts));
	if (!sh || !sh->facts)
		return one;
	f = &sh->facts[sh->nfacts < ELF_FACTS_MAX ? sh->nfacts++ : sh->next_fact++];
	sh->next_fact %= ELF_FACTS_MAX;
	*f = *one;
	return f;
}

/* Load bias and build-id of M, from the ELF file at M->open_path. */
static void read_elf(struct addr_space *as, struct as_module *m)
{
	const struct elf_facts *f;
	struct as_stat_memo st;
	struct elf_facts one;
	size_t i;

	/* (a /proc/self/fd path is the same file as long as it is held) */
	if (memo_stat(as->shared, m->open_path, &st) < 0 ||
	    !(f = facts_of(as, m->open_path, &st, &one)))
		return;
	for (i = 0; i < f->nload; i++)
		/* the segment this mapping's file offset falls in */
		if (m->pgoff + 1 > (f->load[i].offset & ~(uint64_t)0xfff) &&
		    m->pgoff < f->load[i].offset + f->load[i].filesz) {
			m->bias = m->start - m->pgoff - (f->load[i].vaddr - f->load[i].offset);
			m->elf_ok = true;
			break;
		}
	memcpy(m->build_id, f->build_id, f->build_id_len);
	m->build_id_len = f->build_id_len;
}

/* What a mapped file is known by: its device and inode, or its build-id. */
struct file_id {
	uint32_t maj, min;
	uint64_t inode;
	const uint8_t *build_id;
	uint8_t build_id_len;	/* > 0: by build-id; the device and inode are the file's found */
};

/*
 * Whether PATH is the file ID names (by build-id: ID gets its device and
 * inode).  MEMO: a stat of it from a moment ago will do (see same_file).
 */
static bool is_file(struct addr_space *as, const char *path, struct file_id *id, bool memo)
{
	struct as_shared *sh = memo ? as->shared : NULL;
	const struct elf_facts *f;
	struct as_stat_memo st;
	struct elf_facts one;

	if (!id->build_id_len)
		return same_file(sh, path, id->maj, id->min, id->inode);
	if (memo_stat(sh, path, &st) < 0 || !(f = facts_of(as, path, &st, &one)) ||
	    f->build_id_len != id->build_id_len || memcmp(f->build_id, id->build_id, f->build_id_len))
		return false;
	id->maj = st.dev_major;
	id->min = st.dev_minor;
	id->inode = st.ino;
	return true;
}

/*
 * The /proc/self/fd path of a file held open that is ID, or NULL (by
 * build-id: ID gets its device and inode, which tell files apart later).
 */
static char *held_path(struct as_shared *sh, struct file_id *id)
{
	const struct as_held *h;
	char *path;
	size_t i;

	for (i = 0; sh && i < sh->nheld; i++) {
		h = &sh->held[i];
		if (id->build_id_len ? h->build_id_len == id->build_id_len &&
					       !memcmp(h->build_id, id->build_id, h->build_id_len)
				     : h->inode == id->inode && h->dev_major == id->maj &&
					       h->dev_minor == id->min) {
			id->maj = h->dev_major;
			id->min = h->dev_minor;
			id->inode = h->inode;
			return asprintf(&path, "/proc/self/fd/%d", h->fd) < 0 ? NULL : path;
		}
	}
	return NULL;
}

/*
 * PATH, the file ID, which only a process's /proc entries name: held
 * open, and its /proc/self/fd path returned in its place (freeing PATH),
 * so that later processes of the file find it after this one is gone.
 * Without room, PATH itself.
 */
static char *hold(struct as_shared *sh, char *path, const struct file_id *id)
{
	struct as_held *h;
	struct stat st;
	char *fd_path;
	int fd;

	if (!sh || sh->nheld >= AS_HELD_MAX)
		return path;
	if (!sh->held && !(sh->held = calloc(AS_HELD_MAX, sizeof(*sh->held))))
		return path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return path;
	/* what was opened must be the mapped file: the path may have changed since */
	if (fstat(fd, &st) < 0 || st.st_ino != id->inode || major(st.st_dev) != id->maj ||
	    minor(st.st_dev) != id->min || asprintf(&fd_path, "/proc/self/fd/%d", fd) < 0) {
		close(fd);
		return path;
	}
	h = &sh->held[sh->nheld++];
	*h = (struct as_held){ id->maj, id->min, id->inode, fd, id->build_id_len, { 0 } };
	if (id->build_id_len)	/* else build_id is NULL, which memcpy may not take */
		memcpy(h->build_id, id->build_id, id->build_id_len);
	free(path);
	return fd_path;
}

/*
 * Where the file ID mapped at START-END (at PATH in the process's own
 * view) can be read by prof: at PATH; held open since an earlier process
 * mapped it; through the root of the process, or of an ancestor while the
 * process itself is gone (a mount namespace of their own, a short-lived
 * process); through map_files (deleted, replaced).  NULL: nowhere
 * (*REPLACED: the file at PATH is not the one mapped).
 */
static char *find_file(struct addr_space *as, uint64_t start, uint64_t end, struct file_id *id,
		       const char *path, bool *replaced)
{
	char *alt;
	size_t i;

	*replaced = false;
	if (is_file(as, path, id, true))
		return xstrdup(path);
	alt = held_path(as->shared, id);
	if (alt)
		return alt;
	for (i = 0; i <= AS_ANCESTORS; i++) {
		pid_t pid = i ? as->ancestors[i - 1] : as->pid;

		if (!pid)
			break;
		if (asprintf(&alt, "/proc/%d/root%s", (int)pid, path) < 0)
			return NULL;
		if (is_file(as, alt, id, false))
			return hold(as->shared, alt, id);
		free(alt);
	}
	/* a replaced or deleted file: read what is mapped */
	*replaced = true;
	if (asprintf(&alt, "/proc/%d/map_files/%lx-%lx", (int)as->pid, (unsigned long)start,
		     (unsigned long)end) < 0)
		return NULL;
	if (access(alt, R_OK) == 0 && (!id->build_id_len || is_file(as, alt, id, false)))
		return hold(as->shared, alt, id);
	free(alt);
	return NULL;
}

static int describe(struct addr_space *as, uint64_t start, uint64_t end, uint64_t pgoff,
		    struct file_id *id, const char *path, struct as_module *m)
{
	static bool elf_ready;

	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = true;
	}
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->path = xstrdup(path);
	if (!m->path)
		return -ENOMEM;
	if (!strcmp(path, "[vdso]")) {
		m->vdso = true;
		m->open_path = (char *)vdso_image_path();
		if (m->open_path && !(m->open_path = xstrdup(m->open_path)))
			return -ENOMEM;
	} else if (path[0] == '/') {
		size_t len = strlen(m->path), dl = strlen(" (deleted)");

		/* the kernel marks a deleted file's path: the name is without it */
		if (len > dl && !strcmp(m->path + len - dl, " (deleted)"))
			m->path[len - dl] = '\0';
		m->open_path = find_file(as, start, end, id, m->path, &m->replaced);
		if (m->open_path && !strcmp(m->open_path, m->path)) {
			free(m->open_path);
			m->open_path = m->path;
		}
	}
	m->dev_major = id->maj;
	m->dev_minor = id->min;
	m->inode = id->inode;
	if (id->build_id_len) {
		/* found nowhere, the build-id still names it (for debug files) */
		memcpy(m->build_id, id->build_id, id->build_id_len);
		m->build_id_len = id->build_id_len;
	}
	if (m->open_path)
		read_elf(as, m);
	return 0;
}

int as_describe(struct addr_space *as, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t maj,
		uint32_t min, uint64_t inode, const char *path, struct as_module *m)
{
	struct file_id id = { .maj = maj, .min = min, .inode = inode };

	return describe(as, start, end, pgoff, &id, path, m);
}

int as_describe_build_id(struct addr_space *as, uint64_t start, uint64_t end, uint64_t pgoff,
			 const uint8_t *build_id, uint8_t len, const char *path,
			 struct as_module *m)
{
	struct file_id id = { .build_id = build_id,
			      .build_id_len = len > PROF_BUILD_ID_MAX ? PROF_BUILD_ID_MAX : len };

	return describe(as, start, end, pgoff, &id, path, m);
}

void as_set_parent(struct addr_space *as, const struct addr_space *parent)
{
	/* its parent's mount namespace is its own until it unshares */
	as->ancestors[0] = parent->pid;
	memcpy(&as->ancestors[1], parent->ancestors, sizeof(as->ancestors) - sizeof(pid_t));
}

void as_find_files(struct addr_space *as)
{
	bool found = false;
	size_t i;

	for (i = 0; i < as->nmods; i++) {
		struct as_module *m = &as->mods[i];
		struct file_id id = { .maj = m->dev_major, .min = m->dev_minor, .inode = m->inode };

		if (m->open_path || m->vdso || m->path[0] != '/')
			continue;
		if (!m->inode && m->build_id_len) {
			id.build_id = m->build_id;
			id.build_id_len = m->build_id_len;
		}
		m->open_path = find_file(as, m->start, m->end, &id, m->path, &m->replaced);
		if (!m->open_path)
			continue;
		if (!strcmp(m->open_path, m->path)) {
			free(m->open_path);
			m->open_path = m->path;
		}
		m->dev_major = id.maj;
		m->dev_minor = id.min;
		m->inode = id.inode;
		read_elf(as, m);
		found = true;
	}
	if (found) {
		as->dwfl_stale = true;
		new_gen(as);
	}
}

static void retire_into(struct addr_space *as, struct as_module *m, uint32_t *retired, size_t *n,
			size_t max)
{
	if (m->spool_id && *n < max)
		retired[(*n)++] = m->spool_id;
	module_release(as, m);
}

/*
 * Tell libdwfl of M's file, once: a file mapped in several executable
 * segments (node's text, init and a page of its own) is one module to
 * libdwfl, which covers every segment at once.  Reporting it again is an
 * "overlap" that makes libdwfl 0.188 drop the module it had: the frames in
 * that file then went unwound, by frame pointers.  SAME: a mapping of the
 * same file with the same bias was reported already.
 */
static void report_module(Dwfl *dwfl, struct as_module *m, bool same)
{
	const char *name;

	if (!m->elf_ok || !m->open_path || same)
		return;
	name = strrchr(m->path, '/');
	name = name ? name + 1 : m->path;
	if (!dwfl_report_elf(dwfl, name, m->open_path, -1, m->bias, true))
		pr_debug("libdwfl cannot use '%s': %s, skipping", m->path, dwfl_errmsg(-1));
}

/*
 * Whether another mapping of the file of module AT, with its bias, was
 * reported to libdwfl: one before it (LIVE: any, the session has them all).
 */
static bool reported_before(const struct addr_space *as, size_t at, bool live)
{
	const struct as_module *m = &as->mods[at];
	size_t i;

	for (i = 0; i < (live ? as->nmods : at); i++)
		if (i != at && as->mods[i].elf_ok && as->mods[i].bias == m->bias &&
		    as->mods[i].inode == m->inode && as->mods[i].dev_major == m->dev_major &&
		    as->mods[i].dev_minor == m->dev_minor && !strcmp(as->mods[i].path, m->path))
			return true;
	return false;
}

int as_add(struct addr_space *as, struct as_module *m, uint32_t *retired, size_t *nretired)
{
	size_t max = *nretired, i, at, k;
	void *p = as->mods;
	int r;

	*nretired = 0;
	/* drop what the new mapping covers (mmap over an old mapping replaces it) */
	for (i = 0, k = 0; i < as->nmods; i++) {
		struct as_module *o = &as->mods[i];

		if (o->start < m->end && m->start < o->end) {
			retire_into(as, o, retired, nretired, max);
			as->dwfl_stale = true;
		} else {
			as->mods[k++] = *o;
		}
	}
	as->nmods = k;
	r = grow_array(&p, &as->cap, as->nmods + 1, sizeof(*as->mods));
	as->mods = p;
	if (r < 0)
		return r;
	for (at = 0; at < as->nmods && as->mods[at].start < m->start; at++)
		;
	memmove(&as->mods[at + 1], &as->mods[at], (as->nmods - at) * sizeof(*as->mods));
	as->mods[at] = *m;
	as->nmods++;
	memset(m, 0, sizeof(*m));
	new_gen(as);
	/*
	 * A live Dwfl learns a new module in place, keeping the CFI it parsed
	 * (a program that dlopens a hundred libraries must not rebuild it a
	 * hundred times); only a replaced mapping makes it start over.
	 */
	if (as->dwfl && !as->dwfl_stale) {
		dwfl_report_begin_add(as->dwfl);
		report_module(as->dwfl, &as->mods[at], reported_before(as, at, true));
		dwfl_report_end(as->dwfl, NULL, NULL);
	}
	return 0;
}

int as_add_anon(struct addr_space *as, uint64_t start, uint64_t end)
{
	size_t i, k;
	void *p;

	if (start >= end)
		return 0;
	for (i = 0; i < as->nanon; i++)
		if (as->anon[i].start <= end && start <= as->anon[i].end) {
			/* overlapping or touching: one range, grown */
			if (start < as->anon[i].start)
				as->anon[i].start = start;
			if (end > as->anon[i].end)
				as->anon[i].end = end;
			/* it may now reach the ranges after it */
			for (k = i + 1; k < as->nanon && as->anon[k].start <= as->anon[i].end; k++)
				if (as->anon[k].end > as->anon[i].end)
					as->anon[i].end = as->anon[k].end;
			memmove(&as->anon[i + 1], &as->anon[k], (as->nanon - k) * sizeof(*as->anon));
			as->nanon -= k - i - 1;
			as->anon_gen++;
			return 0;
		}
	p = as->anon;
	if (grow_array(&p, &as->anon_cap, as->nanon + 1, sizeof(*as->anon)) < 0)
		return -ENOMEM;
	as->anon = p;
	for (i = 0; i < as->nanon && as->anon[i].start < start; i++)
		;
	memmove(&as->anon[i + 1], &as->anon[i], (as->nanon - i) * sizeof(*as->anon));
	as->anon[i] = (struct as_range){ start, end };
	as->nanon++;
	as->anon_gen++;
	return 0;
}

bool as_is_code(struct addr_space *as, uint64_t addr)
{
	size_t lo = 0, hi = as->nanon;

	if (as_find(as, addr))
		return true;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < as->anon[mid].start)
			hi = mid;
		else if (addr >= as->anon[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

int as_find_table(struct addr_space *as, struct as_module *m)
{
	struct utable_file f = {
		.path = m->open_path, .name = m->path, .build_id = m->build_id,
		.build_id_len = m->build_id_len, .dev_major = m->dev_major,
		.dev_minor = m->dev_minor, .inode = m->inode,
	};
	struct stat st;
	int r;

	if (m->table_tried || !as->shared || !m->open_path || !m->elf_ok)
		return 0;
	/* without a build-id, the file's size and mtime tell it from another */
	if (!m->build_id_len) {
		if (stat(m->open_path, &st) < 0) {
			m->table_tried = true;
			return 0;
		}
		f.size = (uint64_t)st.st_size;
		f.mtime_ns = stat_mtime_ns(&st);
	}
	r = utables_get(&as->shared->tables, &f, &m->table);
	if (r == -ENOMEM)
		return r;
	m->table_tried = true;
	m->no_cfi = r == -ENOENT;
	return 0;
}

struct as_module *as_find(struct addr_space *as, uint64_t addr)
{
	size_t lo = 0, hi = as->nmods;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < as->mods[mid].start)
			hi = mid;
		else if (addr >= as->mods[mid].end)
			lo = mid + 1;
		else
			return &as->mods[mid];
	}
	return NULL;
}

int as_clone(struct addr_space *dst, const struct addr_space *src)
{
	size_t i;

	dst->mods = calloc(src->nmods ? src->nmods : 1, sizeof(*dst->mods));
	if (!dst->mods)
		return error_setx(-ENOMEM, "out of memory");
	dst->cap = src->nmods ? src->nmods : 1;
	as_set_parent(dst, src);
	for (i = 0; i < src->nmods; i++) {
		struct as_module *m = &dst->mods[i];

		*m = src->mods[i];
		m->spool_id = 0;	/* the child's modules are its own records */
		m->table = NULL;	/* looked up again, in the same shared tables */
		m->table_tried = false;
		m->path = strdup(src->mods[i].path);
		m->open_path = src->mods[i].open_path == src->mods[i].path
				       ? m->path
				       : src->mods[i].open_path ? strdup(src->mods[i].open_path)
								: NULL;
		dst->nmods = i + 1;
		if (!m->path || (src->mods[i].open_path && !m->open_path))
			return error_setx(-ENOMEM, "out of memory");
	}
	if (src->nanon) {
		dst->anon = malloc(src->nanon * sizeof(*dst->anon));
		if (!dst->anon)
			return error_setx(-ENOMEM, "out of memory");
		memcpy(dst->anon, src->anon, src->nanon * sizeof(*dst->anon));
		dst->nanon = dst->anon_cap = src->nanon;
	}
	if (jit_rules_copy(&dst->jit, &src->jit) < 0)
		return -ENOMEM;
	new_gen(dst);
	return 0;
}

void as_clear(struct addr_space *as, uint32_t *retired, size_t *nretired)
{
	size_t max = *nretired, i;

	*nretired = 0;
	for (i = 0; i < as->nmods; i++)
		retire_into(as, &as->mods[i], retired, nretired, max);
	as->nmods = 0;
	as->nanon = 0;
	jit_rules_release(&as->jit);
	new_gen(as);
	if (as->dwfl) {
		dwfl_end(as->dwfl);
		as->dwfl = NULL;
	}
	as->dwfl_stale = false;
}

/* ---- libdwfl thread callbacks ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct addr_space *as = arg;

	(void)dwfl;
	if (as->thread_given)
		return 0;
	as->thread_given = true;
	*thread_argp = as;
	return as->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct addr_space *as = arg;

	(void)dwfl;
	if (addr >= as->sp && addr - as->sp + sizeof(*result) <= as->stack_size) {
		memcpy(result, as->stack + (addr - as->sp), sizeof(*result));
		return true;
	}
	/*
	 * Below sp lies the red zone, where leaf functions may save registers
	 * the unwind does not need; the copy starts at sp.  Above it and near
	 * it: the stack, beyond what the sample copied.
	 */
	if (addr >= as->sp) {
		as->read_failed = true;
		if (addr - as->sp < (64u << 20))
			as->read_past_copy = true;
	}
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct addr_space *as = arg;
	uint64_t dwarf[DWARF_REGS_COUNT];

	if (as->step) {
		/* a frame inside the walk: only sp, bp and the pc are known there */
		Dwarf_Word sp = as->step_sp, bp = as->step_bp;

		if (!dwfl_thread_state_registers(thread, DWARF_REG_SP, 1, &sp) ||
		    (as->step_bp_ok && !dwfl_thread_state_registers(thread, DWARF_REG_BP, 1, &bp)))
			return false;
		dwfl_thread_state_register_pc(thread, as->step_pc);
		return true;
	}
	regs_to_dwarf(as->regs, dwarf);
	return dwfl_thread_state_registers(thread, 0, DWARF_REGS_COUNT, dwarf);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

bool as_dwfl(struct addr_space *as)
{
	size_t i;

	if (as->dwfl && !as->dwfl_stale)
		return true;
	if (as->dwfl)
		dwfl_end(as->dwfl);
	as->dwfl_stale = false;
	as->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!as->dwfl)
		return false;
	dwfl_report_begin(as->dwfl);
	for (i = 0; i < as->nmods; i++)
		report_module(as->dwfl, &as->mods[i], reported_before(as, i, false));
	dwfl_report_end(as->dwfl, NULL, NULL);
	if (!dwfl_attach_state(as->dwfl, NULL, as->pid, &thread_callbacks, as)) {
		dwfl_end(as->dwfl);
		as->dwfl = NULL;
		return false;
	}
	return true;
}
