/* SPDX-License-Identifier: MIT */
/*
 * test-debuginfo.c - debug info as the report finds and reads it: every
 * lookup path (the file itself, build-id, debuglink beside the file, in
 * .debug/ and under a debug directory) and the checks that refuse a wrong
 * candidate (CRC, build-id); inline chains and source lines from DWARF,
 * checked against the markers in the fixture's source, not against
 * numbers; a debug file's .symtab naming a stripped file's functions; and
 * demangling, on and off.  Fixtures are built here with cc, g++ and
 * objcopy; offsets come from the files' symbol tables read with libelf.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "harness.h"
#include "prof.h"
#include "spool_test.h"

/* ---- fixtures ---- */

static const char inl_source[] =
	"#define INLINE static inline __attribute__((always_inline))\n"
	"INLINE unsigned long step(unsigned long x)\n"
	"{\n"
	"\treturn x * 6364136223846793005ul + (x >> 7) + 1; /* @step */\n"
	"}\n"
	"INLINE unsigned long mix(unsigned long x, unsigned long n)\n"
	"{\n"
	"\tfor (unsigned long i = 0; i < n; i++)\n"
	"\t\tx = step(x); /* @mix */\n"
	"\treturn x;\n"
	"}\n"
	"__attribute__((noinline, noclone)) unsigned long churn(unsigned long x)\n"
	"{\n"
	"\treturn mix(x, 1000) ^ x; /* @churn */\n"
	"}\n"
	"__attribute__((noinline, noclone)) static unsigned long hidden(unsigned long x)\n"
	"{\n"
	"\treturn churn(x) + 1;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\treturn (int)hidden((unsigned long)argc);\n"
	"}\n";

static const char cxx_source[] =
	"namespace outer { namespace inner {\n"
	"#define STEP __attribute__((noinline, noclone))\n"
	"template <typename T> struct Box { T v; STEP T get() const; };\n"
	"template <typename T> T Box<T>::get() const { return v * 3; }\n"
	"STEP int twice(int x) { return x * 2; }\n"
	"} }\n"
	"int main(int argc, char **) {\n"
	"\touter::inner::Box<long> b = { argc };\n"
	"\treturn (int)b.get() + outer::inner::twice(argc);\n"
	"}\n";

static char dir[] = "/tmp/prof-debuginfo-XXXXXX";
static bool have_cxx;

static void remove_fixtures(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static bool write_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

static size_t build_id_hex(const char *path, char *hex)
{
	const void *p;
	ssize_t len = 0, i;
	Elf *elf;
	int fd = open(path, O_RDONLY);

	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		len = dwelf_elf_gnu_build_id(elf, &p);
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", ((const uint8_t *)p)[i]);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return len > 0 ? (size_t)len : 0;
}

/*
 * The fixture directory:
 *   inl                 -O2 -g, the DWARF in the file
 *   plain/inl           inl without debug info and no link (build-id only)
 *   dbg/.build-id/xx/yyyy.debug       its debug file, by build-id
 *   beside/inl, beside/inl.debug      debuglink to a file beside it
 *   sub/inl, sub/.debug/inl.debug     debuglink into .debug/
 *   far/inl, linkdbg/DIR/far/inl.debug  debuglink under a debug directory
 *   crc/inl, crc/inl.debug            debuglink to a file whose CRC differs
 *   wrongid/inl, wrongid-dbg/.build-id/... a debug file of another build
 *   bare/inl            stripped to .dynsym (--strip-all), debug by build-id
 *   symdbg/.build-id/...  a debug file of inl with a .symtab and no DWARF
 *   cxx                 a C++ program, when g++ is there
 */
static const char *fixtures(void)
{
	static bool built, failed;
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char cmd[8 * PATH_MAX], hex[2 * PROF_BUILD_ID_MAX + 1], other[2 * PROF_BUILD_ID_MAX + 1];

	if (built || failed)
		return built ? dir : NULL;
	failed = true;
	if (!mkdtemp(dir))
		return NULL;
	atexit(remove_fixtures);
	if (!write_file("inl.c", inl_source) || !write_file("cxx.cpp", cxx_source) ||
	    !write_file("other.c", "int main(void) { return 3; }\n"))
		return NULL;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && %s -O2 -g -o inl inl.c && %s -O2 -g -o other other.c && "
		 "objcopy --only-keep-debug inl inl.debug && "
		 "objcopy --only-keep-debug other other.debug && "
		 "mkdir -p plain beside sub/.debug far crc wrongid bare && "
		 "objcopy --strip-debug inl plain/inl && "
		 "objcopy --strip-debug --add-gnu-debuglink=inl.debug inl beside/inl && "
		 "cp inl.debug beside/ && "
		 "objcopy --strip-debug --add-gnu-debuglink=inl.debug inl sub/inl && "
		 "cp inl.debug sub/.debug/ && "
		 "objcopy --strip-debug --add-gnu-debuglink=inl.debug inl far/inl && "
		 "mkdir -p 'linkdbg%s/far' && cp inl.debug 'linkdbg%s/far/' && "
		 "objcopy --strip-debug --add-gnu-debuglink=inl.debug inl crc/inl && "
		 "objcopy --remove-section=.comment inl.debug crc/inl.debug && "
		 "objcopy --strip-all inl bare/inl && cp plain/inl wrongid/inl",
		 dir, cc, cc, dir, dir);
	if (system(cmd) != 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s/inl", dir);
	if (build_id_hex(cmd, hex) != 20)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s/other", dir);
	if (build_id_hex(cmd, other) != 20)
		return NULL;
	/* other's debug file where inl's would be: a build-id path that lies */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p dbg/.build-id/%.2s wrongid-dbg/.build-id/%.2s "
		 "symdbg/.build-id/%.2s && "
		 "cp inl.debug dbg/.build-id/%.2s/%s.debug && "
		 "cp other.debug wrongid-dbg/.build-id/%.2s/%s.debug && "
		 "objcopy --strip-debug inl.debug symdbg/.build-id/%.2s/%s.debug",
		 dir, hex, hex, hex, hex, hex + 2, hex, hex + 2, hex, hex + 2);
	if (system(cmd) != 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "cd '%s' && g++ -O2 -g -o cxx cxx.cpp 2>/dev/null", dir);
	have_cxx = system(cmd) == 0;
	built = true;
	failed = false;
	return dir;
}

/* The path of fixture NAME (static storage, one of four at a time). */
static const char *fx_path(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned k;
	char *p = paths[k++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* The 1-based line of SOURCE holding MARKER; 0 if none. */
static uint32_t line_of(const char *source, const char *marker)
{
	const char *at = strstr(source, marker), *p;
	uint32_t line = 1;

	if (!at)
		return 0;
	for (p = source; p < at; p++)
		line += *p == '\n';
	return line;
}

struct elf_fn {
	uint64_t off, size;
};

/* Function NAME in PATH's .symtab: its file offset and size. */
static bool find_fn(const char *path, const char *name, struct elf_fn *ret)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t nph, p, i;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &nph) < 0)
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Sym s;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; !found && gelf_getsym(d, (int)i, &s); i++) {
			const char *n = elf_strptr(elf, sh.sh_link, s.st_name);

			if (!n || strcmp(n, name) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			for (p = 0; p < nph; p++) {
				GElf_Phdr ph;

				if (gelf_getphdr(elf, (int)p, &ph) && ph.p_type == PT_LOAD &&
				    s.st_value >= ph.p_vaddr &&
				    s.st_value - ph.p_vaddr < ph.p_filesz) {
					ret->off = s.st_value - ph.p_vaddr + ph.p_offset;
					ret->size = s.st_size;
					found = true;
				}
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* ---- debuginfo_find() ---- */

/* Look up the debug info of fixture NAME with DIRS; its source and path. */
static int find(const char *name, const char *dirs, enum debuginfo_source *src, char **path)
{
	const char *file = fx_path(name);
	char hex[2 * PROF_BUILD_ID_MAX + 1];
	uint8_t id[PROF_BUILD_ID_MAX];
	struct debuginfo d;
	size_t len, i;
	Elf *elf;
	int fd, r;

	len = build_id_hex(file, hex);
	for (i = 0; i < len; i++)
		sscanf(hex + 2 * i, "%2hhx", &id[i]);
	fd = open(file, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	*path = NULL;
	*src = DEBUGINFO_NONE;
	r = debuginfo_init(&d, dirs, false, 0);
	if (r == 0 && elf)
		r = debuginfo_find(&d, file, elf, id, len, path, src);
	debuginfo_release(&d);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return r;
}

/* Fixture NAME's debug info is found, by SRC, at fixture WHERE. */
static void check_found(const char *name, const char *dirs, enum debuginfo_source want_src,
			const char *where)
{
	enum debuginfo_source src;
	char *path;

	CHECK_INT(find(name, dirs, &src, &path), ==, 1);
	CHECK_INT(src, ==, want_src);
	if (*where)	/* "": anywhere */
		CHECK_STR(path, fx_path(where));
	free(path);
}

static void check_not_found(const char *name, const char *dirs)
{
	enum debuginfo_source src;
	char *path;

	CHECK_INT(find(name, dirs, &src, &path), ==, 0);
	CHECK(!path);
}

TEST(debuginfo_is_the_file_itself_when_it_has_dwarf)
{
	CHECK(fixtures());
	CHECK_CALL(check_found("inl", fx_path("dbg"), DEBUGINFO_SELF, "inl"));
}

TEST(debuginfo_is_found_by_build_id_under_a_debug_dir)
{
	char hex[2 * PROF_BUILD_ID_MAX + 1], where[PATH_MAX];

	CHECK(fixtures());
	CHECK_INT(build_id_hex(fx_path("inl"), hex), ==, 20);
	snprintf(where, sizeof(where), "dbg/.build-id/%.2s/%s.debug", hex, hex + 2);
	CHECK_CALL(check_found("plain/inl", fx_path("dbg"), DEBUGINFO_BUILD_ID, where));
	/* a list: the first directory without it is passed over */
	snprintf(hex, sizeof(hex), "%s:%s/", fx_path("nonexistent"), fx_path("dbg"));
	CHECK_CALL(check_found("plain/inl", hex, DEBUGINFO_BUILD_ID, where));
	/* without the directory there is nothing: no link, and not in /usr/lib/debug */
	CHECK_CALL(check_not_found("plain/inl", NULL));
}

TEST(debuginfo_is_found_through_the_debuglink_beside_in_dot_debug_and_under_a_dir)
{
	char far[PATH_MAX];

	CHECK(fixtures());
	CHECK_CALL(check_found("beside/inl", NULL, DEBUGINFO_DEBUGLINK, "beside/inl.debug"));
	CHECK_CALL(check_found("sub/inl", NULL, DEBUGINFO_DEBUGLINK, "sub/.debug/inl.debug"));
	CHECK_CALL(check_not_found("far/inl", NULL));
	snprintf(far, sizeof(far), "linkdbg%s/far/inl.debug", dir);
	CHECK_CALL(check_found("far/inl", fx_path("linkdbg"), DEBUGINFO_DEBUGLINK, far));
	/* the build-id comes first: every copy of inl has the same */
	snprintf(far, sizeof(far), "%s:%s", fx_path("linkdbg"), fx_path("dbg"));
	CHECK_CALL(check_found("far/inl", far, DEBUGINFO_BUILD_ID, ""));
}

TEST(debuginfo_refuses_a_debuglink_target_whose_crc_differs)
{
	CHECK(fixtures());
	CHECK_CALL(check_not_found("crc/inl", NULL));
}

TEST(debuginfo_refuses_a_build_id_path_holding_another_build)
{
	CHECK(fixtures());
	CHECK_CALL(check_not_found("wrongid/inl", fx_path("wrongid-dbg")));
}

TEST(debuginfo_debuginfod_needs_urls_and_the_library)
{
	struct debuginfo d;
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *saved = urls ? strdup(urls) : NULL;
	int r;

	unsetenv("DEBUGINFOD_URLS");
	r = debuginfo_init(&d, NULL, true, 1);
	debuginfo_release(&d);
#ifdef HAVE_DEBUGINFOD
	CHECK_INT(r, ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "debuginfod was asked for, but DEBUGINFOD_URLS is not set");
#else
	CHECK_INT(r, ==, -ENOTSUP);
	CHECK_STR(prof_errmsg(),
		  "debuginfod is not available: prof was built without libdebuginfod");
#endif
	if (saved)
		setenv("DEBUGINFOD_URLS", saved, 1);
	free(saved);
}

/* ---- the symbolizer over DWARF ---- */

struct fx {
	struct membuf mb;
	struct prof_spool_writer *w;
	uint32_t proc, mod;
	struct prof_spool *sp;
	struct prof_symbolizer *sym;
};

static void fx_begin(struct fx *fx, const char *path)
{
	PROF_OPTS(prof_sink, sink);
	PROF_OPTS(prof_meta, meta);

	memset(fx, 0, sizeof(*fx));
	sink = membuf_sink(&fx->mb);
	test_meta(&meta);
	if (prof_spool_writer_open_sink(&sink, &meta, NULL, &fx->w) < 0)
		abort();
	fx->proc = (uint32_t)prof_spool_writer_add_process(
		fx->w, &PROF_INIT(prof_process, .pid = 7, .comm = "t", .exe = "/t"));
	fx->mod = (uint32_t)prof_spool_writer_add_module(
		fx->w, &PROF_INIT(prof_module, .process = fx->proc, .start = 0x400000,
					      .end = 0x500000, .path = path));
}

static uint32_t fx_frame(struct fx *fx, uint64_t off)
{
	struct prof_frame f = { .sz = sizeof(f), .kind = PROF_FRAME_USER, .ref = fx->mod, .addr = off };

	return (uint32_t)prof_spool_writer_intern_frame(fx->w, &f);
}

static int fx_open(struct fx *fx, const struct prof_symbolizer_opts *opts)
{
	PROF_OPTS(prof_record, ev);

	if (prof_spool_writer_close(fx->w) < 0 || open_bytes(fx->mb.p, fx->mb.len, &fx->sp) < 0)
		abort();
	while (prof_spool_next(fx->sp, &ev) > 0)
		;
	return prof_symbolizer_new(fx->sp, opts, &fx->sym);
}

static void fx_end(struct fx *fx)
{
	prof_symbolizer_free(fx->sym);
	prof_spool_close(fx->sp);
	free(fx->mb.p);
}

/*
 * Resolve every offset of churn in fixture NAME (with OPTS): every chain
 * is churn, then mix, then step, each inlined into the one before; the
 * lines are those of the markers; and the full chain is seen.
 */
static void check_churn(const char *name, const struct prof_symbolizer_opts *opts)
{
	uint32_t churn_line = line_of(inl_source, "@churn"), mix_line = line_of(inl_source, "@mix");
	uint32_t step_line = line_of(inl_source, "@step"), frames[512];
	static const char *const names[] = { "churn", "mix", "step" };
	const struct prof_resolved_frame *const *v;
	struct elf_fn fn;
	size_t n, i, k, full = 0;
	struct fx fx;

	CHECK(fixtures());
	CHECK(find_fn(fx_path("inl"), "churn", &fn));
	CHECK(fn.size > 0 && fn.size < 512);
	fx_begin(&fx, fx_path(name));
	for (i = 0; i < fn.size; i++)
		frames[i] = fx_frame(&fx, fn.off + i);
	CHECK_INT(fx_open(&fx, opts), ==, 0);
	for (i = 0; i < fn.size; i++) {
		CHECK_INT(prof_symbolizer_frame_inlines(fx.sym, frames[i], &v, &n), ==, 0);
		CHECK(n >= 1 && n <= 3);
		for (k = 0; k < n; k++) {
			CHECK_STR(v[k]->function, names[k]);
			CHECK_STR(v[k]->module, "inl");
			CHECK_INT(v[k]->inlined, ==, k > 0);
			CHECK(v[k]->found);
		}
		CHECK_INT(v[0]->offset, ==, i);
		if (n < 3)
			continue;
		full++;
		CHECK_INT(v[0]->line, ==, churn_line);
		CHECK_INT(v[1]->line, ==, mix_line);
		CHECK_INT(v[2]->line, ==, step_line);
		for (k = 0; k < 3; k++) {
			CHECK_STR(v[k]->file, "inl.c");
			CHECK(strstr(v[k]->file_path, "inl.c"));
		}
	}
	CHECK(full > 0);
	fx_end(&fx);
}

TEST(symbolize_expands_inline_chains_with_lines_from_the_file_itself)
{
	CHECK_CALL(check_churn("inl", NULL));
}

TEST(symbolize_expands_inline_chains_from_a_debug_file_found_by_build_id)
{
	struct prof_symbolizer_opts o = { .sz = sizeof(o), .debug_dirs = fx_path("dbg") };

	CHECK_CALL(check_churn("plain/inl", &o));
}

TEST(symbolize_expands_inline_chains_from_a_debug_file_found_by_debuglink)
{
	CHECK_CALL(check_churn("beside/inl", NULL));
}

TEST(symbolize_shows_no_inline_frames_without_debug_info)
{
	const struct prof_resolved_frame *const *v;
	struct elf_fn fn;
	uint32_t f;
	size_t n;
	struct fx fx;

	CHECK(fixtures());
	CHECK(find_fn(fx_path("inl"), "churn", &fn));
	fx_begin(&fx, fx_path("plain/inl"));
	f = fx_frame(&fx, fn.off + fn.size / 2);
	CHECK_INT(fx_open(&fx, NULL), ==, 0);
	CHECK_INT(prof_symbolizer_frame_inlines(fx.sym, f, &v, &n), ==, 0);
	CHECK_INT(n, ==, 1);
	CHECK_STR(v[0]->function, "churn");
	CHECK_INT(v[0]->line, ==, 0);
	CHECK(!v[0]->file && !v[0]->file_path && !v[0]->inlined);
	fx_end(&fx);
}

static int warnings;

static void count_warnings(enum prof_log_level level, const char *msg, void *ctx)
{
	(void)msg;
	(void)ctx;
	warnings += level == PROF_LOG_WARN;
}

TEST(symbolize_names_a_stripped_file_from_its_debug_files_symtab)
{
	struct prof_symbolizer_opts o = { .sz = sizeof(o), .debug_dirs = fx_path("dbg") };
	PROF_OPTS(prof_resolved_frame, r);
	struct elf_fn fn;
	uint32_t f;
	struct fx fx;

	CHECK(fixtures());
	/* hidden is static: only .symtab knows it, and --strip-all removed that */
	CHECK(find_fn(fx_path("inl"), "hidden", &fn));
	fx_begin(&fx, fx_path("bare/inl"));
	f = fx_frame(&fx, fn.off + 1);
	CHECK_INT(fx_open(&fx, NULL), ==, 0);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &r), ==, 0);
	CHECK(!r.found);
	CHECK(!strncmp(r.function, "inl+0x", 6));
	fx_end(&fx);

	fx_begin(&fx, fx_path("bare/inl"));
	f = fx_frame(&fx, fn.off + 1);
	CHECK_INT(fx_open(&fx, &o), ==, 0);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &r), ==, 0);
	CHECK(r.found);
	CHECK_STR(r.function, "hidden");
	CHECK_INT(r.offset, ==, 1);
	CHECK(r.line > 0);
	fx_end(&fx);

	/* a debug file with symbols and no DWARF: names, no lines, no complaint */
	o.debug_dirs = fx_path("symdbg");
	warnings = 0;
	prof_set_log_fn(count_warnings, PROF_LOG_WARN, NULL);
	fx_begin(&fx, fx_path("bare/inl"));
	f = fx_frame(&fx, fn.off + 1);
	CHECK_INT(fx_open(&fx, &o), ==, 0);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &r), ==, 0);
	prof_set_log_fn(NULL, PROF_LOG_WARN, NULL);
	CHECK_STR(r.function, "hidden");
	CHECK_INT(r.line, ==, 0);
	CHECK_INT(warnings, ==, 0);
	fx_end(&fx);
}

TEST(symbolize_options_a_newer_caller_set_are_refused)
{
	/* a caller built against a prof.h with one more field, which it set */
	struct {
		struct prof_symbolizer_opts o;
		uint64_t newer;
	} big = { .o.sz = sizeof(big), .newer = 1 };
	struct fx fx;

	CHECK(fixtures());
	fx_begin(&fx, fx_path("inl"));
	CHECK_INT(fx_open(&fx, &big.o), ==, -EINVAL);
	CHECK(!fx.sym);
	fx_end(&fx);
	/* left unset, it asks nothing this prof cannot do */
	big.newer = 0;
	fx_begin(&fx, fx_path("inl"));
	CHECK_INT(fx_open(&fx, &big.o), ==, 0);
	CHECK(fx.sym);
	fx_end(&fx);
}

/* ---- demangling ---- */

TEST(demangle_knows_cxx_and_both_rust_schemes)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN2ns3fooEv", "ns::foo()" },
		{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const" },
		{ "_ZNKSt6vectorIiSaIiEE4sizeEv",
		  "std::vector<int, std::allocator<int> >::size() const" },
		{ "_Z3foov.cold", "foo() [clone .cold]" },
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
		{ "_RNvNtCs1234_7mycrate4main3bar", "mycrate::main::bar" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = demangle(cases[i].in);

		CHECK_STR(d, cases[i].out);
		free(d);
	}
	/* not mangled, or not a name the demangler takes */
	CHECK(!demangle("main"));
	CHECK(!demangle("_start"));
	CHECK(!demangle("_Rlowercase"));
	CHECK(!demangle("_Z"));
	CHECK(!demangle("_ZN3foo"));
	CHECK(!demangle(""));
}

TEST(symbolize_demangles_cxx_names_unless_asked_not_to)
{
	static const struct {
		const char *mangled, *shown;
	} fns[] = {
		{ "_ZN5outer5inner5twiceEi", "outer::inner::twice(int)" },
		{ "_ZNK5outer5inner3BoxIlE3getEv", "outer::inner::Box<long>::get() const" },
	};
	struct prof_symbolizer_opts o = { .sz = sizeof(o), .no_demangle = true };
	PROF_OPTS(prof_resolved_frame, r);
	uint32_t f[2];
	struct elf_fn fn;
	size_t i, pass;
	struct fx fx;

	CHECK(fixtures());
	if (!have_cxx)
		return;		/* no g++ here: the CLI tests say so */
	for (pass = 0; pass < 2; pass++) {
		fx_begin(&fx, fx_path("cxx"));
		for (i = 0; i < 2; i++) {
			CHECK(find_fn(fx_path("cxx"), fns[i].mangled, &fn));
			f[i] = fx_frame(&fx, fn.off + fn.size / 2);
		}
		CHECK_INT(fx_open(&fx, pass ? &o : NULL), ==, 0);
		for (i = 0; i < 2; i++) {
			CHECK_INT(prof_symbolizer_frame(fx.sym, f[i], &r), ==, 0);
			CHECK_STR(r.function, pass ? fns[i].mangled : fns[i].shown);
			CHECK(r.line > 0);
		}
		fx_end(&fx);
	}
}
