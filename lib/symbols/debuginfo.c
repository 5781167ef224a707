/* SPDX-License-Identifier: MIT */
/*
 * debuginfo.c - where an ELF file's debug info is, found the way gdb finds
 * it: in the file itself; as DIR/.build-id/xx/yyyy.debug in the caller's
 * directories and then /usr/lib/debug; through .gnu_debuglink beside the
 * file, in a .debug/ directory beside it, and as DIR/<the file's
 * directory>/NAME; and last, only when asked, from the debuginfod servers
 * of DEBUGINFOD_URLS, under a deadline so that a silent server cannot hang
 * a report.  Every candidate is checked (build-id, CRC) before it is
 * trusted: a stale debug file would name the wrong lines.  It opens files
 * only to check them; the caller opens the one it gets.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"
#ifdef HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#endif

#include "debuginfo.h"
#include "internal.h"

#define DEBUGINFOD_TIMEOUT_DEFAULT 30

static const char *const source_names[] = {
	[DEBUGINFO_NONE] = "none",
	[DEBUGINFO_SELF] = "the file itself",
	[DEBUGINFO_BUILD_ID] = "build-id",
	[DEBUGINFO_DEBUGLINK] = "debuglink",
	[DEBUGINFO_DEBUGINFOD] = "debuginfod",
};

const char *debuginfo_source_name(enum debuginfo_source source)
{
	return (unsigned)source < ARRAY_SIZE(source_names) ? source_names[source] : "?";
}

static int add_dir(struct debuginfo *d, const char *dir, size_t len)
{
	char **v;

	/* trailing slashes would double in the paths built from DIR */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!len)
		return 0;
	v = realloc(d->dirs, (d->ndirs + 1) * sizeof(*d->dirs));
	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	d->dirs = v;
	d->dirs[d->ndirs] = strndup(dir, len);
	if (!d->dirs[d->ndirs])
		return error_setx(-ENOMEM, "out of memory");
	d->ndirs++;
	return 0;
}

#ifdef HAVE_DEBUGINFOD
/*
 * libdebuginfod is loaded only when --debuginfod asks for it, not linked:
 * it pulls in libcurl, gnutls, krb5 and ldap (~30 libraries), whose loading
 * and constructors cost every run ~8 ms of CPU, the recorder's included.
 */
static struct {
	bool tried;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void *(*get_user_data)(debuginfod_client *);
	void (*set_user_data)(debuginfod_client *, void *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} dfd;

static int debuginfod_load(void)
{
	void *h;

	if (dfd.begin)
		return 0;
	if (dfd.tried)
		return error_setx(-ENOTSUP, "debuginfod is not available: cannot load "
				  "libdebuginfod.so.1");
	dfd.tried = true;
	h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return error_setx(-ENOTSUP, "debuginfod is not available: %s", dlerror());
	*(void **)&dfd.end = dlsym(h, "debuginfod_end");
	*(void **)&dfd.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dfd.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&dfd.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dfd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	if (dfd.end && dfd.set_progressfn && dfd.get_user_data && dfd.set_user_data &&
	    dfd.find_debuginfo)
		*(void **)&dfd.begin = dlsym(h, "debuginfod_begin");
	if (!dfd.begin)
		return error_setx(-ENOTSUP, "debuginfod is not available: libdebuginfod.so.1 "
				  "lacks its functions");
	return 0;
}

/* The client calls this at least once a second while it waits: past the deadline, give up. */
static int debuginfod_progress(debuginfod_client *c, long a, long b)
{
	const uint64_t *deadline = dfd.get_user_data(c);

	(void)a;
	(void)b;
	return clock_ns(CLOCK_MONOTONIC) > *deadline;
}

static int debuginfod_start(struct debuginfo *d)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	debuginfod_client *c;
	int r;

	if (!urls || !urls[strspn(urls, " \t")])
		return error_setx(-EINVAL,
				  "debuginfod was asked for, but DEBUGINFOD_URLS is not set");
	r = debuginfod_load();
	if (r < 0)
		return r;
	c = dfd.begin();
	if (!c)
		return error_setx(-ENOMEM, "cannot start a debuginfod client");
	dfd.set_progressfn(c, debuginfod_progress);
	d->client = c;
	return 0;
}
#else
static int debuginfod_start(struct debuginfo *d)
{
	(void)d;
	return error_setx(-ENOTSUP, "debuginfod is not available: prof was built without "
			  "libdebuginfod");
}
#endif

int debuginfo_init(struct debuginfo *d, const char *dirs, bool debuginfod, unsigned timeout_s)
{
	const char *p = dirs ? dirs : "", *colon;
	const char *env;
	int r;

	memset(d, 0, sizeof(*d));
	for (; *p; p = *colon ? colon + 1 : colon) {
		colon = strchrnul(p, ':');
		r = add_dir(d, p, (size_t)(colon - p));
		if (r < 0)
			return r;
	}
	r = add_dir(d, DEBUGINFO_SYSTEM_DIR, strlen(DEBUGINFO_SYSTEM_DIR));
	if (r < 0 || !debuginfod)
		return r;
	env = getenv("DEBUGINFOD_TIMEOUT");
	d->timeout_s = timeout_s ? timeout_s : DEBUGINFOD_TIMEOUT_DEFAULT;
	if (!timeout_s && env && atoi(env) > 0)
		d->timeout_s = (unsigned)atoi(env);
	d->debuginfod = true;
	return debuginfod_start(d);
}

void debuginfo_release(struct debuginfo *d)
{
	size_t i;

	for (i = 0; i < d->ndirs; i++)
		free(d->dirs[i]);
	free(d->dirs);
#ifdef HAVE_DEBUGINFOD
	if (d->client)
		dfd.end(d->client);
#endif
	memset(d, 0, sizeof(*d));
}

/* The section of ELF named NAME that has contents, or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool debuginfo_has_dwarf(Elf *elf)
{
	return section_named(elf, ".debug_info") || section_named(elf, ".zdebug_info");
}

/* CRC-32 of the whole file FD, as .gnu_debuglink has it (zlib's crc32). */
static bool file_crc(int fd, uint64_t size, uint32_t *ret)
{
	uint64_t off;
	uLong crc = crc32(0, NULL, 0);
	void *map;

	if (!size) {
		*ret = (uint32_t)crc;
		return true;
	}
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return false;
	for (off = 0; off < size;) {
		uInt n = size - off > (1u << 30) ? (1u << 30) : (uInt)(size - off);

		crc = crc32(crc, (const Bytef *)map + off, n);
		off += n;
	}
	munmap(map, size);
	*ret = (uint32_t)crc;
	return true;
}

struct want {
	const char *path;	/* the file whose debug info is sought */
	dev_t dev;
	ino_t ino;
	const uint8_t *build_id;
	size_t build_id_len;
	bool check_crc;
	uint32_t crc;
};

/* Whether CAND is a debug file for what W describes (see debuginfo_find()). */
static bool candidate_ok(const char *cand, const struct want *w)
{
	bool ok = false;
	struct stat st;
	const void *id;
	ssize_t len;
	uint32_t crc;
	Elf *elf;
	int fd;

	fd = open(cand, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_dev == w->dev && st.st_ino == w->ino))
		goto out_close;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out_end;
	len = dwelf_elf_gnu_build_id(elf, &id);
	/* a build-id on both sides settles it; without, only the CRC can */
	if (w->build_id_len && len > 0 &&
	    ((size_t)len != w->build_id_len || memcmp(id, w->build_id, w->build_id_len))) {
		pr_debug("'%s' is not the debug file of '%s': its build-id differs", cand,
			 w->path);
		goto out_end;
	}
	if (!w->check_crc && !(w->build_id_len && len > 0))
		goto out_end;
	if (w->check_crc && (!file_crc(fd, (uint64_t)st.st_size, &crc) || crc != w->crc)) {
		pr_debug("'%s' is not the debug file of '%s': its CRC differs from the debuglink's",
			 cand, w->path);
		goto out_end;
	}
	ok = debuginfo_has_dwarf(elf) || section_named(elf, ".symtab");
out_end:
	if (elf)
		elf_end(elf);
out_close:
	close(fd);
	return ok;
}

/* Whether the path that fmt makes passes candidate_ok(); *RET then holds it. */
static int try_path(const struct want *w, char **ret, const char *fmt, ...) PROF_PRINTF(3, 4);

static int try_path(const struct want *w, char **ret, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		return error_setx(-ENOMEM, "out of memory");
	if (candidate_ok(p, w)) {
		*ret = p;
		return 1;
	}
	free(p);
	return 0;
}

static int by_build_id(struct debuginfo *d, const struct want *w, char **ret)
{
	char hex[2 * 64 + 1];
	size_t i;
	int r = 0;

	if (w->build_id_len < 2 || w->build_id_len > 64)
		return 0;
	for (i = 0; i < w->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", w->build_id[i]);
	for (i = 0; i < d->ndirs && r == 0; i++)
		r = try_path(w, ret, "%s/.build-id/%.2s/%s.debug", d->dirs[i], hex, hex + 2);
	return r;
}

const char *debuginfo_link_name(Elf *elf)
{
	GElf_Word crc;
	const char *name = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;

	return name && *name && !strchr(name, '/') ? name : NULL;
}

static int by_debuglink(struct debuginfo *d, Elf *elf, struct want *w, char **ret)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	const char *slash = strrchr(w->path, '/');
	int dlen = slash ? (int)(slash - w->path) : 0;
	size_t i;
	int r;

	if (!name || !*name || strchr(name, '/'))
		return 0;
	w->check_crc = true;
	w->crc = crc;
	r = try_path(w, ret, "%.*s/%s", dlen, w->path, name);
	if (r == 0)
		r = try_path(w, ret, "%.*s/.debug/%s", dlen, w->path, name);
	for (i = 0; i < d->ndirs && r == 0; i++)
		r = try_path(w, ret, "%s%.*s/%s", d->dirs[i], dlen, w->path, name);
	w->check_crc = false;
	return r;
}

#ifdef HAVE_DEBUGINFOD
static int by_debuginfod(struct debuginfo *d, const struct want *w, char **ret)
{
	uint64_t deadline;
	char *path = NULL;
	int fd;

	if (!d->client || d->debuginfod_off || !w->build_id_len)
		return 0;
	deadline = clock_ns(CLOCK_MONOTONIC) + (uint64_t)d->timeout_s * 1000000000u;
	dfd.set_user_data(d->client, &deadline);
	fd = dfd.find_debuginfo(d->client, w->build_id, (int)w->build_id_len, &path);
	dfd.set_user_data(d->client, NULL);
	if (fd >= 0) {
		close(fd);
		if (path && candidate_ok(path, w)) {
			*ret = path;
			return 1;
		}
		free(path);
		return 0;
	}
	free(path);
	/* the client reports a lookup that debuginfod_progress() cut short as -ENOENT */
	if (fd == -ENOENT && clock_ns(CLOCK_MONOTONIC) <= deadline)
		return 0;
	d->debuginfod_off = true;
	if (fd == -ENOENT || fd == -ETIME || clock_ns(CLOCK_MONOTONIC) > deadline)
		pr_warn("debuginfod did not answer for '%s' within %u s; asking it no more",
			w->path, d->timeout_s);
	else
		pr_warn("debuginfod lookup for '%s' failed: %s; asking it no more", w->path,
			strerror(-fd));
	return 0;
}
#else
static int by_debuginfod(struct debuginfo *d, const struct want *w, char **ret)
{
	(void)d;
	(void)w;
	(void)ret;
	return 0;
}
#endif

int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf, const uint8_t *build_id,
		   size_t len, char **ret_path, enum debuginfo_source *ret_source)
{
	struct want w = { .path = path, .build_id = build_id, .build_id_len = len };
	enum debuginfo_source src;
	struct stat st;
	char *found = NULL;
	int r;

	if (debuginfo_has_dwarf(elf)) {
		found = xstrdup(path);
		if (!found)
			return -ENOMEM;
		*ret_path = found;
		*ret_source = DEBUGINFO_SELF;
		return 1;
	}
	if (stat(path, &st) == 0) {
		w.dev = st.st_dev;
		w.ino = st.st_ino;
	}
	src = DEBUGINFO_BUILD_ID;
	r = by_build_id(d, &w, &found);
	if (r == 0) {
		src = DEBUGINFO_DEBUGLINK;
		r = by_debuglink(d, elf, &w, &found);
	}
	if (r == 0 && d->debuginfod) {
		src = DEBUGINFO_DEBUGINFOD;
		r = by_debuginfod(d, &w, &found);
	}
	if (r <= 0)
		return r;
	*ret_path = found;
	*ret_source = src;
	return 1;
}
