/* SPDX-License-Identifier: MIT */
/*
 * test-symbolize.c - the symbolizer against real ELF files: the ladder
 * target (PIE), a program built here without PIE (file offsets differ from
 * virtual addresses) and a stripped shared library (.dynsym only).  The
 * expected offsets come from the files' symbol tables read here with
 * libelf, independently of lib/.  Also: fallbacks for missing and foreign
 * files, build-id checks, the spool's own symbols and truncation markers.
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

#include "harness.h"
#include "prof.h"
#include "spool_test.h"

/* ---- log capture ---- */

static struct {
	char line[8][512];
	int n;
} logs;

static void capture(enum prof_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PROF_LOG_WARN && logs.n < 8)
		snprintf(logs.line[logs.n++], sizeof(logs.line[0]), "%s", msg);
}

static void log_start(void)
{
	memset(&logs, 0, sizeof(logs));
	prof_set_log_fn(capture, PROF_LOG_WARN, NULL);
}

static void log_stop(void)
{
	prof_set_log_fn(NULL, PROF_LOG_WARN, NULL);
}

/* ---- ELF facts, read without lib/ ---- */

struct elf_fn {
	uint64_t off, vaddr, size;
};

/* Find function NAME in PATH (.symtab or .dynsym); false if absent. */
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

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; !found && gelf_getsym(d, (int)i, &s); i++) {
			const char *n = elf_strptr(elf, sh.sh_link, s.st_name);

			if (!n || strcmp(n, name) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			for (p = 0; p < nph; p++) {
				GElf_Phdr ph;

				if (gelf_getphdr(elf, (int)p, &ph) && ph.p_type == PT_LOAD &&
				    s.st_value >= ph.p_vaddr && s.st_value - ph.p_vaddr < ph.p_filesz) {
					ret->off = s.st_value - ph.p_vaddr + ph.p_offset;
					ret->vaddr = s.st_value;
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

static size_t build_id_of(const char *path, uint8_t *id)
{
	const void *p;
	ssize_t len = 0;
	Elf *elf;
	int fd = open(path, O_RDONLY);

	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		len = dwelf_elf_gnu_build_id(elf, &p);
	if (len > 0 && len <= PROF_BUILD_ID_MAX)
		memcpy(id, p, (size_t)len);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return len > 0 ? (size_t)len : 0;
}

/* The ladder target of this build. */
static const char *ladder_path(void)
{
	return t_target("ladder");
}

/* Programs built here once: a non-PIE executable and a stripped shared library. */
static char fixture_dir[] = "/tmp/prof-unit-XXXXXX";

static void remove_fixtures(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fixture_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", fixture_dir);
}

static const char *fixtures(void)
{
	static bool built, failed;
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char cmd[4 * PATH_MAX];
	FILE *f;

	if (built || failed)
		return built ? fixture_dir : NULL;
	failed = true;
	if (!mkdtemp(fixture_dir))
		return NULL;
	atexit(remove_fixtures);
	snprintf(cmd, sizeof(cmd), "%s/np.c", fixture_dir);
	f = fopen(cmd, "w");
	if (!f)
		return NULL;
	fputs("#define STEP __attribute__((noinline, noclone))\n"
	      "STEP static int hidden_helper(int x) { return x * 3 + (x >> 2); }\n"
	      "STEP int np_leaf(int x) { return hidden_helper(x) ^ 5; }\n"
	      "int main(int argc, char **argv) { (void)argv; return np_leaf(argc) & 1; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && %s -O2 -g -fno-pie -no-pie -o np np.c && "
		 "%s -O2 -g -fPIC -shared -o libx.so np.c && "
		 "%s -O2 -g -fPIC -shared -s -o libx-stripped.so np.c", fixture_dir, cc, cc, cc);
	if (system(cmd) != 0)
		return NULL;
	built = true;
	failed = false;
	return fixture_dir;
}

/* ---- spools ---- */

struct fx {
	struct membuf mb;
	struct prof_spool_writer *w;
	uint32_t proc;
	struct prof_spool *sp;
	struct prof_symbolizer *sym;
};

static void fx_begin(struct fx *fx)
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
}

static uint32_t fx_module(struct fx *fx, const char *path, const uint8_t *id, size_t idlen)
{
	struct prof_module m = { .sz = sizeof(m), .process = fx->proc, .start = 0x400000, .end = 0x500000,
				 .build_id_len = (uint8_t)idlen, .path = path };

	if (idlen)
		memcpy(m.build_id, id, idlen);
	return (uint32_t)prof_spool_writer_add_module(fx->w, &m);
}

static uint32_t fx_frame(struct fx *fx, enum prof_frame_kind kind, uint32_t ref, uint64_t addr)
{
	struct prof_frame f = { .sz = sizeof(f), .kind = (uint8_t)kind, .ref = ref, .addr = addr };

	return (uint32_t)prof_spool_writer_intern_frame(fx->w, &f);
}

static void fx_symbol(struct fx *fx, enum prof_symbol_scope scope, uint32_t id, uint64_t start,
		      uint64_t size, const char *name)
{
	struct prof_symbol s = { .sz = sizeof(s), .scope = (uint8_t)scope, .scope_id = id, .start = start,
				 .size = size, .name = name };

	if (prof_spool_writer_add_symbol(fx->w, &s) < 0)
		abort();
}

/* Finish the spool, read all of it and make a symbolizer over it. */
static void fx_open(struct fx *fx)
{
	PROF_OPTS(prof_record, ev);

	if (prof_spool_writer_close(fx->w) < 0 || open_bytes(fx->mb.p, fx->mb.len, &fx->sp) < 0)
		abort();
	while (prof_spool_next(fx->sp, &ev) > 0)
		;
	if (prof_symbolizer_new(fx->sp, NULL, &fx->sym) < 0)
		abort();
}

static void fx_end(struct fx *fx)
{
	prof_symbolizer_free(fx->sym);
	prof_spool_close(fx->sp);
	free(fx->mb.p);
	log_stop();
}

/* Resolve FRAME and check its names. */
static void check_frame(struct fx *fx, uint32_t frame, const char *function, const char *module,
			uint64_t offset, bool found)
{
	PROF_OPTS(prof_resolved_frame, r);

	CHECK_INT(prof_symbolizer_frame(fx->sym, frame, &r), ==, 0);
	CHECK_STR(r.function, function);
	CHECK_STR(r.module, module);
	CHECK_INT(r.offset, ==, offset);
	CHECK_INT(r.found, ==, found);
}

/* ---- tests ---- */

TEST(symbolize_names_the_ladder_functions_from_file_offsets)
{
	static const char *const names[] = { "_start", "main", "ladder_a", "ladder_b",
					     "ladder_c", "ladder_d" };
	const char *path = ladder_path();
	struct elf_fn fn[6];
	uint32_t mod, frames[6];
	uint8_t id[PROF_BUILD_ID_MAX];
	size_t idlen, i;
	struct fx fx;

	CHECK(path);
	idlen = build_id_of(path, id);
	CHECK_INT(idlen, ==, 20);
	for (i = 0; i < 6; i++)
		CHECK(find_fn(path, names[i], &fn[i]));
	log_start();
	fx_begin(&fx);
	mod = fx_module(&fx, path, id, idlen);
	for (i = 0; i < 6; i++)	/* inside each function, as a return address is */
		frames[i] = fx_frame(&fx, PROF_FRAME_USER, mod, fn[i].off + fn[i].size / 2);
	fx_open(&fx);
	for (i = 0; i < 6; i++)
		CHECK_CALL(check_frame(&fx, frames[i], names[i], "ladder", fn[i].size / 2, true));
	CHECK_INT(logs.n, ==, 0);
	fx_end(&fx);
}

TEST(symbolize_maps_offsets_through_the_load_segments)
{
	const char *dir = fixtures();
	char path[PATH_MAX];
	struct elf_fn leaf, helper;
	uint32_t mod, f1, f2;
	struct fx fx;

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/np", dir);
	CHECK(find_fn(path, "np_leaf", &leaf));
	CHECK(find_fn(path, "hidden_helper", &helper));
	/* without PIE, text is linked at 0x400000 and up: offsets are not addresses */
	CHECK(leaf.vaddr != leaf.off);
	log_start();
	fx_begin(&fx);
	mod = fx_module(&fx, path, NULL, 0);
	f1 = fx_frame(&fx, PROF_FRAME_USER, mod, leaf.off);
	f2 = fx_frame(&fx, PROF_FRAME_USER, mod, helper.off + helper.size - 1);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, f1, "np_leaf", "np", 0, true));
	CHECK_CALL(check_frame(&fx, f2, "hidden_helper", "np", helper.size - 1, true));
	CHECK_INT(logs.n, ==, 0);
	fx_end(&fx);
}

TEST(symbolize_uses_dynsym_of_a_stripped_library_and_guesses_nothing)
{
	const char *dir = fixtures();
	char full[PATH_MAX], stripped[PATH_MAX], want[64];
	struct elf_fn pub, pub_s, hidden;
	uint32_t mod, f1, f2;
	struct fx fx;

	CHECK(dir);
	snprintf(full, sizeof(full), "%s/libx.so", dir);
	snprintf(stripped, sizeof(stripped), "%s/libx-stripped.so", dir);
	CHECK(find_fn(full, "np_leaf", &pub));
	CHECK(find_fn(full, "hidden_helper", &hidden));
	CHECK(find_fn(stripped, "np_leaf", &pub_s));
	CHECK(!find_fn(stripped, "hidden_helper", &pub_s));
	CHECK_INT(pub_s.off, ==, pub.off);	/* the same code, without .symtab */
	log_start();
	fx_begin(&fx);
	mod = fx_module(&fx, stripped, NULL, 0);
	f1 = fx_frame(&fx, PROF_FRAME_USER, mod, pub.off + 1);
	f2 = fx_frame(&fx, PROF_FRAME_USER, mod, hidden.off + 1);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, f1, "np_leaf", "libx-stripped.so", 1, true));
	/* a local function is not in .dynsym: no neighbour's name for it */
	snprintf(want, sizeof(want), "libx-stripped.so+0x%llx",
		 (unsigned long long)hidden.off + 1);
	CHECK_CALL(check_frame(&fx, f2, want, "libx-stripped.so", 0, false));
	CHECK_INT(logs.n, ==, 0);
	fx_end(&fx);
}

TEST(symbolize_falls_back_to_offsets_for_a_missing_file_and_warns_once)
{
	uint32_t m1, m2, f1, f2, f3;
	struct fx fx;

	log_start();
	fx_begin(&fx);
	m1 = fx_module(&fx, "/nonexistent/dir/app", (const uint8_t *)"\x01\x02", 2);
	m2 = fx_module(&fx, "/nonexistent/dir/app", (const uint8_t *)"\x01\x02", 2);
	f1 = fx_frame(&fx, PROF_FRAME_USER, m1, 0x1234);
	f2 = fx_frame(&fx, PROF_FRAME_USER, m1, 0x10);
	f3 = fx_frame(&fx, PROF_FRAME_USER, m2, 0xabc);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, f1, "app+0x1234", "app", 0, false));
	CHECK_CALL(check_frame(&fx, f2, "app+0x10", "app", 0, false));
	CHECK_CALL(check_frame(&fx, f3, "app+0xabc", "app", 0, false));
	CHECK_INT(logs.n, ==, 1);
	CHECK_STR(logs.line[0], "cannot open '/nonexistent/dir/app': No such file or directory; "
				"its frames are shown as file offsets");
	CHECK_STR(prof_errmsg(), "");	/* recovered: no error left behind */
	fx_end(&fx);
}

TEST(symbolize_warns_about_files_that_are_not_elf)
{
	char text[] = "/tmp/prof-unit-text-XXXXXX", want[128], warn[256];
	const char *base = strrchr(text, '/') + 1;
	uint32_t m1, m2, m3, f1, f2, f3;
	struct fx fx;
	int fd = mkstemp(text);

	CHECK(fd >= 0);
	CHECK(write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	log_start();
	fx_begin(&fx);
	m1 = fx_module(&fx, text, NULL, 0);
	m2 = fx_module(&fx, "/tmp", NULL, 0);
	m3 = fx_module(&fx, "[vdso]", NULL, 0);	/* no file to read, nothing to say */
	f1 = fx_frame(&fx, PROF_FRAME_USER, m1, 0x40);
	f2 = fx_frame(&fx, PROF_FRAME_USER, m2, 0x50);
	f3 = fx_frame(&fx, PROF_FRAME_USER, m3, 0x60);
	fx_open(&fx);
	snprintf(want, sizeof(want), "%s+0x40", base);
	CHECK_CALL(check_frame(&fx, f1, want, base, 0, false));
	unlink(text);
	CHECK_CALL(check_frame(&fx, f2, "tmp+0x50", "tmp", 0, false));
	CHECK_CALL(check_frame(&fx, f3, "[vdso]+0x60", "[vdso]", 0, false));
	CHECK_INT(logs.n, ==, 2);
	snprintf(warn, sizeof(warn), "'%s' is not an ELF file; its frames are shown as file offsets",
		 text);
	CHECK_STR(logs.line[0], warn);
	CHECK_STR(logs.line[1], "'/tmp' is not a regular file; its frames are shown as file offsets");
	fx_end(&fx);
}

TEST(symbolize_warns_once_about_a_build_id_mismatch_and_still_names)
{
	const char *path = ladder_path();
	uint8_t id[PROF_BUILD_ID_MAX], wrong[20];
	char have[41] = "", warn[512];
	struct elf_fn d, c;
	uint32_t mod, mod2, f1, f2, f3;
	size_t i, idlen;
	struct fx fx;

	CHECK(path);
	idlen = build_id_of(path, id);
	CHECK_INT(idlen, ==, 20);
	for (i = 0; i < 20; i++) {
		wrong[i] = (uint8_t)(0xa0 + i);
		snprintf(have + 2 * i, 3, "%02x", id[i]);
	}
	CHECK(find_fn(path, "ladder_d", &d));
	CHECK(find_fn(path, "ladder_c", &c));
	log_start();
	fx_begin(&fx);
	mod = fx_module(&fx, path, wrong, 20);
	mod2 = fx_module(&fx, path, wrong, 20);	/* the same file mapped again */
	f1 = fx_frame(&fx, PROF_FRAME_USER, mod, d.off + 3);
	f2 = fx_frame(&fx, PROF_FRAME_USER, mod, c.off + 2);
	f3 = fx_frame(&fx, PROF_FRAME_USER, mod2, c.off + 1);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, f1, "ladder_d", "ladder", 3, true));
	CHECK_CALL(check_frame(&fx, f2, "ladder_c", "ladder", 2, true));
	CHECK_CALL(check_frame(&fx, f3, "ladder_c", "ladder", 1, true));
	CHECK_INT(logs.n, ==, 1);
	snprintf(warn, sizeof(warn), "'%s' has build-id %s, not the recorded "
		 "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3: its function names may be wrong",
		 path, have);
	CHECK_STR(logs.line[0], warn);
	fx_end(&fx);
}

TEST(symbolize_prefers_the_spools_symbols_in_every_scope)
{
	const char *path = ladder_path();
	struct elf_fn d, c;
	uint32_t mod, fm1, fm2, fk1, fk2, fk3, fa1, fa2, fa3;
	struct fx fx;

	CHECK(path);
	CHECK(find_fn(path, "ladder_d", &d));
	CHECK(find_fn(path, "ladder_c", &c));
	log_start();
	fx_begin(&fx);
	mod = fx_module(&fx, path, NULL, 0);
	fm1 = fx_frame(&fx, PROF_FRAME_USER, mod, d.off + 4);
	fm2 = fx_frame(&fx, PROF_FRAME_USER, mod, c.off + 4);
	fk1 = fx_frame(&fx, PROF_FRAME_KERNEL, 0, 0xffffffff81000123ull);
	fk2 = fx_frame(&fx, PROF_FRAME_KERNEL, 0, 0xffffffff810001ffull);
	fk3 = fx_frame(&fx, PROF_FRAME_KERNEL, 0, 0xffffffff80000000ull);
	fa1 = fx_frame(&fx, PROF_FRAME_ANON, fx.proc, 0x7f0000001010ull);
	fa2 = fx_frame(&fx, PROF_FRAME_ANON, fx.proc, 0x7f0000002000ull);
	fx_symbol(&fx, PROF_SYMBOL_MODULE, mod, d.off, d.size, "rewritten_d");
	/* kallsyms has no sizes: a symbol reaches to the next one */
	fx_symbol(&fx, PROF_SYMBOL_KERNEL, 0, 0xffffffff81000100ull, 0, "do_syscall_64");
	fx_symbol(&fx, PROF_SYMBOL_KERNEL, 0, 0xffffffff81000200ull, 0, "entry_SYSCALL_64");
	fx_symbol(&fx, PROF_SYMBOL_PROCESS, fx.proc, 0x7f0000001000ull, 0x20, "jit_old");
	/* a perf map rewritten by the JIT: the later record wins */
	fx_symbol(&fx, PROF_SYMBOL_PROCESS, fx.proc, 0x7f0000001000ull, 0x20, "jit_new");
	/* another process's symbol is not this one's */
	fx_symbol(&fx, PROF_SYMBOL_PROCESS,
		  (uint32_t)prof_spool_writer_add_process(fx.w, &PROF_INIT(prof_process, .pid = 8)),
		  0x7f0000002000ull, 0x10, "other_process");
	fa3 = fx_frame(&fx, PROF_FRAME_ANON, fx.proc + 1, 0x7f0000002004ull);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, fm1, "rewritten_d", "ladder", 4, true));
	CHECK_CALL(check_frame(&fx, fm2, "ladder_c", "ladder", 4, true));
	CHECK_CALL(check_frame(&fx, fk1, "do_syscall_64", "[kernel]", 0x23, true));
	CHECK_CALL(check_frame(&fx, fk2, "do_syscall_64", "[kernel]", 0xff, true));
	CHECK_CALL(check_frame(&fx, fk3, "0xffffffff80000000", "[kernel]", 0, false));
	CHECK_CALL(check_frame(&fx, fa1, "jit_new", "[anon]", 0x10, true));
	CHECK_CALL(check_frame(&fx, fa2, "0x7f0000002000", "[anon]", 0, false));
	CHECK_CALL(check_frame(&fx, fa3, "other_process", "[anon]", 4, true));
	CHECK_INT(logs.n, ==, 0);
	fx_end(&fx);
}

TEST(symbolize_names_truncation_markers_by_cause)
{
	uint32_t f1, f2, f3;
	struct fx fx;

	fx_begin(&fx);
	f1 = fx_frame(&fx, PROF_FRAME_TRUNCATED, 0, PROF_UNWIND_STACK_COPY);
	f2 = fx_frame(&fx, PROF_FRAME_TRUNCATED, 0, PROF_UNWIND_NO_CFI);
	f3 = fx_frame(&fx, PROF_FRAME_TRUNCATED, 0, 99);
	fx_open(&fx);
	CHECK_CALL(check_frame(&fx, f1, "[truncated: stack-copy]", "", 0, false));
	CHECK_CALL(check_frame(&fx, f2, "[truncated: no-cfi]", "", 0, false));
	CHECK_CALL(check_frame(&fx, f3, "[truncated: unknown]", "", 0, false));
	fx_end(&fx);
}

TEST(symbolize_rejects_frames_that_are_not_defined)
{
	PROF_OPTS(prof_resolved_frame, r);
	struct fx fx;

	fx_begin(&fx);
	fx_frame(&fx, PROF_FRAME_KERNEL, 0, 0x1000);
	fx_open(&fx);
	CHECK_INT(prof_symbolizer_frame(fx.sym, 0, &r), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "frame 0 is not defined");
	CHECK_INT(prof_symbolizer_frame(fx.sym, 2, &r), ==, -EINVAL);
	CHECK_INT(prof_symbolizer_frame(fx.sym, UINT32_MAX, &r), ==, -EINVAL);
	CHECK_INT(prof_symbolizer_new(NULL, NULL, &fx.sym), ==, -EINVAL);
	fx_end(&fx);
}

TEST(symbolize_resolves_each_frame_once)
{
	PROF_OPTS(prof_resolved_frame, a);
	PROF_OPTS(prof_resolved_frame, b);
	uint32_t m, f;
	struct fx fx;

	log_start();
	fx_begin(&fx);
	m = fx_module(&fx, "/nonexistent/lib.so", NULL, 0);
	f = fx_frame(&fx, PROF_FRAME_USER, m, 0x99);
	fx_open(&fx);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &a), ==, 0);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &b), ==, 0);
	CHECK(a.function == b.function);	/* the same string: served from the cache */
	CHECK_INT(logs.n, ==, 1);
	fx_end(&fx);
}

TEST(symbolize_sees_symbols_read_after_a_frame_was_named)
{
	PROF_OPTS(prof_resolved_frame, r);
	PROF_OPTS(prof_record, ev);
	const char *before;
	uint32_t f;
	struct fx fx;

	fx_begin(&fx);
	f = fx_frame(&fx, PROF_FRAME_KERNEL, 0, 0xffffffff81000010ull);
	CHECK_INT(prof_spool_writer_flush(fx.w), ==, 0);
	fx_symbol(&fx, PROF_SYMBOL_KERNEL, 0, 0xffffffff81000000ull, 0x100, "late_name");
	CHECK_INT(prof_spool_writer_close(fx.w), ==, 0);
	CHECK_INT(open_bytes(fx.mb.p, fx.mb.len, &fx.sp), ==, 0);
	CHECK_INT(prof_symbolizer_new(fx.sp, NULL, &fx.sym), ==, 0);
	do	/* read up to the frame, as tail would */
		CHECK_INT(prof_spool_next(fx.sp, &ev), ==, 1);
	while (ev.type != PROF_RECORD_FRAME);
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &r), ==, 0);
	CHECK_STR(r.function, "0xffffffff81000010");
	before = r.function;
	while (prof_spool_next(fx.sp, &ev) > 0)
		;
	CHECK_INT(prof_symbolizer_frame(fx.sym, f, &r), ==, 0);
	CHECK_STR(r.function, "late_name");
	CHECK_STR(before, "0xffffffff81000010");	/* what was lent stays valid */
	fx_end(&fx);
}
