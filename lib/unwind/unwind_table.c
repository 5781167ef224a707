/* SPDX-License-Identifier: MIT */
/*
 * unwind_table.c - compiled unwind tables (see unwind_table.h).
 *
 * A table indexes its file's FDEs by start address (.eh_frame_hdr's sorted
 * table, or the FDEs of .debug_frame read once) and compiles a row the
 * first time a pc falls in it: dwarf_cfi_addrframe() runs the FDE's
 * program up to the pc and says which addresses the row covers, and the
 * row becomes a rule for all of them.  Only rows that samples reach are
 * compiled (libdw runs a program from its FDE's start for each, so
 * compiling every row of a function with hundreds of them would cost the
 * square of that), once per file, however many processes map it: a
 * `make -j` that runs cc1 seventy times compiles cc1's hot rows once.
 * Compiled rows are dropped, all at once, when they pass ts->max_bytes,
 * and compiled again as needed: memory stays bounded by it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi_program.h"
#include "internal.h"
#include "regs_x86_64.h"
#include "symbols/gopclntab.h"
#include "unwind_table.h"

#define DEFAULT_MAX_BYTES (64u << 20)
/*
 * A table no mapping uses any more is kept this long before it is freed:
 * make -j runs one cc1 after another, often with none alive in between.
 */
#define UNUSED_GRACE_NS 10000000000ull
/* What counts as _start without an FDE: its first bytes */
#define ENTRY_NO_FDE_BYTES 64

/* A row: the rule of [off, end) from the FDE's start. */
struct urow {
	uint32_t off, end;
	struct urule r;
};

struct ufde {
	struct urow *rows;	/* the rows compiled so far, by address */
	uint32_t nrows;
	uint32_t cap : 31;
	uint32_t libdw : 1;	/* its program is libdw's to run, row by row */
};

struct utable {
	unsigned refs;
	uint32_t id;
	uint64_t unused_since_ns;	/* when refs fell to 0 */
	/* the file's identity */
	uint8_t build_id[PROF_BUILD_ID_MAX];
	uint8_t build_id_len;
	uint32_t dev_major, dev_minor;
	uint64_t inode, size;
	int64_t mtime_ns;

	int fd;
	Elf *elf;
	Dwarf *dwarf;		/* .debug_frame's owner, or NULL */
	Dwarf_CFI *cfi;
	bool eh;		/* cfi is .eh_frame's (ours to end), else .debug_frame's */
	uint64_t *fde_lo;	/* sorted, distinct FDE start addresses */
	uint32_t *fde_off;	/* each one's FDE in the file (.eh_frame), or NULL: libdw's */
	struct cfi_image image;	/* the file, for cfi_fde_rows() */
	struct gopclntab go;	/* a Go program without CFI: its functions' SP tables */
	struct ufde *fdes;
	size_t nfde;
	/*
	 * By page of the FDEs' span (from the first's page): the last FDE
	 * starting at or before the page, so that a lookup searches the few
	 * FDEs of one page, not the whole table: a miss of the rule cache
	 * costs two or three cache misses, not twenty.  NULL: no index.
	 */
	uint32_t *fde_page;
	uint64_t page_lo;
	size_t npages;
	uint64_t text_hi;	/* end of the last executable segment */
	uint64_t entry;		/* e_entry of a program, else 0 */
	size_t entry_fde;	/* the FDE holding it, or nfde */
	uint64_t rows_bytes;
	uint64_t index_bytes;	/* counted in ts->bytes once the index is complete */
	/*
	 * The FDEs that have rows, so that dropping them reads those alone:
	 * cc1's fdes span 1.5 MB, mostly never touched.
	 */
	uint32_t *with_rows;
	size_t nwith_rows, with_rows_cap;
};

void utables_init(struct utables *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->max_bytes = DEFAULT_MAX_BYTES;
}

static void drop_rows(struct utables *ts, struct utable *t)
{
	size_t i;

	for (i = 0; i < t->nwith_rows; i++) {
		free(t->fdes[t->with_rows[i]].rows);
		t->fdes[t->with_rows[i]] = (struct ufde){ 0 };
	}
	t->nwith_rows = 0;
	ts->bytes -= t->rows_bytes;
	ts->rows_bytes -= t->rows_bytes;
	t->rows_bytes = 0;
}

static void table_free(struct utables *ts, struct utable *t)
{
	drop_rows(ts, t);
	free(t->with_rows);
	ts->bytes -= t->index_bytes;
	free(t->fde_page);
	free(t->fde_off);
	free(t->fde_lo);
	free(t->fdes);
	if (t->eh && t->cfi)
		dwarf_cfi_end(t->cfi);
	if (t->dwarf)
		dwarf_end(t->dwarf);
	if (t->elf)
		elf_end(t->elf);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

void utables_release(struct utables *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		table_free(ts, ts->v[i]);
	free(ts->v);
	cfi_rows_release(&ts->scratch);
	utables_init(ts);
}

/* ---- the FDE index ------------------------------------------------------- */


/* Read a value of encoding ENC (the formats .eh_frame_hdr uses) at *P, below END. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t base,
			 uint64_t *ret)
{
	uint64_t v = 0;
	size_t len;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		len = 4;
		break;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		len = 8;
		break;
	default:
		return false;
	}
	if ((size_t)(end - *p) < len)
		return false;
	memcpy(&v, *p, len);
	if ((enc & 0x0f) == DW_EH_PE_sdata4)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	*p += len;
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_datarel:
		v += base;
		break;
	default:
		return false;
	}
	*ret = v;
	return true;
}

/* The FDE starts from .eh_frame_hdr (PT_GNU_EH_FRAME): its binary-search table. */
static int index_eh_frame_hdr(struct utable *t, const GElf_Phdr *ph)
{
	size_t size, i, n;
	const uint8_t *file = (const uint8_t *)elf_rawfile(t->elf, &size), *p, *end;
	uint64_t skip, count;
	uint8_t ptr_enc, count_enc;

	if (!file || ph->p_offset > size || ph->p_filesz > size - ph->p_offset ||
	    ph->p_filesz < 4)
		return -EINVAL;
	p = file + ph->p_offset;
	end = p + ph->p_filesz;
	/* version 1; eh_frame_ptr, fde_count and table encodings */
	if (p[0] != 1 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -ENOTSUP;
	ptr_enc = p[1];
	count_enc = p[2];
	p += 4;
	if ((ptr_enc & 0x70) == DW_EH_PE_pcrel)
		ptr_enc &= 0x0f;	/* its value is not needed, only its size */
	if (!read_encoded(&p, end, ptr_enc, 0, &skip) || !read_encoded(&p, end, count_enc, 0, &count))
		return -EINVAL;
	if (count > (uint64_t)(end - p) / 8)
		return -EINVAL;
	t->fde_lo = malloc((count ? count : 1) * sizeof(*t->fde_lo));
	t->fde_off = t->image.data ? malloc((count ? count : 1) * sizeof(*t->fde_off)) : NULL;
	if (!t->fde_lo || (t->image.data && !t->fde_off))
		return -ENOMEM;
	for (i = 0, n = 0; i < count; i++) {
		uint64_t lo, fde;

		if (!read_encoded(&p, end, DW_EH_PE_datarel | DW_EH_PE_sdata4, ph->p_vaddr, &lo) ||
		    !read_encoded(&p, end, DW_EH_PE_datarel | DW_EH_PE_sdata4, ph->p_vaddr, &fde))
			return -EINVAL;
		/*
		 * The table is sorted (the binary search its readers do needs it):
		 * out of order, or an FDE outside the file's bytes, and every
		 * program is libdw's to run.
		 */
		if (t->fde_off && ((n && lo <= t->fde_lo[n - 1]) ||
				   fde - t->image.vaddr_delta >= size)) {
			free(t->fde_off);
			t->fde_off = NULL;
		}
		if (t->fde_off)
			t->fde_off[n] = (uint32_t)(fde - t->image.vaddr_delta);
		t->fde_lo[n++] = lo;
	}
	t->nfde = n;
	return 0;
}

/* The FDE starts of .debug_frame, read entry by entry (absolute addresses). */
static int index_debug_frame(struct utable *t, Elf_Data *data)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(t->elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	size_t cap = 0;
	void *v;
	int r;

	while (ident && (r = dwarf_next_cfi(ident, data, false, off, &next, &e)) == 0) {
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.end - e.fde.start < 8)
			continue;
		v = t->fde_lo;
		if (grow_array(&v, &cap, t->nfde + 1, sizeof(*t->fde_lo)) < 0)
			return -ENOMEM;
		t->fde_lo = v;
		memcpy(&t->fde_lo[t->nfde++], e.fde.start, 8);
	}
	return t->nfde ? 0 : -ENOENT;
}

#define FDE_PAGE_SHIFT 12
/* A file whose FDEs span more than this many pages is searched without the index. */
#define FDE_PAGES_MAX (1u << 20)

/* The page index of T's sorted FDE starts; without memory, none. */
static void page_index(struct utable *t)
{
	size_t p, i = 0, npages;

	t->fde_page = NULL;
	t->npages = 0;
	if (t->nfde < 2 || t->nfde > UINT32_MAX)
		return;
	t->page_lo = t->fde_lo[0] >> FDE_PAGE_SHIFT << FDE_PAGE_SHIFT;
	npages = (size_t)((t->fde_lo[t->nfde - 1] - t->page_lo) >> FDE_PAGE_SHIFT) + 1;
	if (npages > FDE_PAGES_MAX || !(t->fde_page = malloc(npages * sizeof(*t->fde_page))))
		return;
	for (p = 0; p < npages; p++) {
		uint64_t start = t->page_lo + ((uint64_t)p << FDE_PAGE_SHIFT);

		while (i + 1 < t->nfde && t->fde_lo[i + 1] <= start)
			i++;
		t->fde_page[p] = (uint32_t)i;
	}
	t->npages = npages;
}

/* Sort and dedupe the starts, and make room for the compiled FDEs. */
static int finish_index(struct utables *ts, struct utable *t)
{
	size_t i, n = 0;

	if (!t->fde_off)	/* else sorted and distinct already */
		qsort(t->fde_lo, t->nfde, sizeof(*t->fde_lo), cmp_u64);
	for (i = 0; i < t->nfde; i++)
		if (!n || t->fde_lo[i] != t->fde_lo[n - 1])
			t->fde_lo[n++] = t->fde_lo[i];
	t->nfde = n;
	t->fdes = calloc(n ? n : 1, sizeof(*t->fdes));
	if (!t->fdes)
		return -ENOMEM;
	t->index_bytes = n * (sizeof(*t->fde_lo) + sizeof(*t->fdes) +
			      (t->fde_off ? sizeof(*t->fde_off) : 0));
	page_index(t);
	t->index_bytes += t->npages * sizeof(*t->fde_page);
	ts->bytes += t->index_bytes;
	return 0;
}

/*
 * Fetch the cache lines of [P, P + BYTES) at once, at most a kilobyte's:
 * a binary search's probes each waited for a line of memory in turn (the
 * target runs over the caches between the recorder's batches), where now
 * they find the lines on their way.
 */
static inline void prefetch_span(const void *p, size_t bytes)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + (bytes < 1024 ? bytes : 1024);

	for (; a < end; a += 64)
		__builtin_prefetch((const void *)a);
}

/* The index of the last FDE starting at or before SVMA, or nfde. */
static size_t fde_at(const struct utable *t, uint64_t svma)
{
	size_t lo = 0, hi = t->nfde;

	/* the answer lies from the page's first candidate to the next page's */
	if (t->fde_page && svma >= t->page_lo) {
		uint64_t p = (svma - t->page_lo) >> FDE_PAGE_SHIFT;

		if (p < t->npages) {
			lo = t->fde_page[p];
			hi = p + 1 < t->npages ? (size_t)t->fde_page[p + 1] + 1 : t->nfde;
			/*
			 * the starts to search, and the FDEs they index (with
			 * where each is in the file, for a first compile): the
			 * answer is among them
			 */
			prefetch_span(&t->fde_lo[lo], (hi - lo) * sizeof(*t->fde_lo));
			prefetch_span(&t->fdes[lo], (hi - lo) * sizeof(*t->fdes));
			if (t->fde_off)
				prefetch_span(&t->fde_off[lo], (hi - lo) * sizeof(*t->fde_off));
		} else {
			lo = t->nfde - 1;	/* past the last FDE's page: the last FDE's, or none */
		}
	}

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->fde_lo[mid] <= svma)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : t->nfde;
}

/*
 * A Go program built with -ldflags=-w has no CFI at all, but its function
 * table says how far each pc stands below its function's entry stack
 * pointer: each function is an FDE, its rows compiled from that table
 * (compile_go()), so that a frameless leaf keeps its caller, which frame
 * pointers lose.
 */
static int index_gopclntab(struct utables *ts, struct utable *t)
{
	uint64_t i, start, end;
	const char *name;
	int r;

	if (gopclntab_open(t->elf, &t->go) < 0 || t->go.nfunc > UINT32_MAX) {
		t->go.nfunc = 0;
		return -ENOENT;
	}
	t->fde_lo = malloc(t->go.nfunc * sizeof(*t->fde_lo));
	if (!t->fde_lo)
		return -ENOMEM;
	for (i = 0; i < t->go.nfunc; i++) {
		/* a table out of order or with a damaged entry: frame pointers as before */
		if (!gopclntab_func(&t->go, i, &start, &end, &name) ||
		    (i && start <= t->fde_lo[i - 1])) {
			t->go.nfunc = 0;
			return -ENOENT;
		}
		t->fde_lo[i] = start;
		if (end > t->text_hi)
			t->text_hi = end;
	}
	t->nfde = (size_t)t->go.nfunc;
	r = finish_index(ts, t);
	if (r == 0 && t->nfde != t->go.nfunc)
		r = -ENOENT;
	return r;
}

/* The functions where a goroutine's or a thread's stack begins: nothing calls them. */
static bool go_outermost(const char *name)
{
	static const char *const names[] = {
		"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "runtime.clone",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/*
 * Open file PATH and index its CFI: .eh_frame through .eh_frame_hdr, else
 * .debug_frame, else a Go program's .gopclntab.  0, -ENOENT (no CFI at
 * all), -ENOMEM, or another -errno (CFI that cannot be indexed here:
 * libdwfl reads it).
 */
static int table_open(struct utables *ts, struct utable *t, const char *path)
{
	size_t phnum, i, shstrndx;
	bool interp = false, have_hdr = false;
	GElf_Phdr hdr_ph = { 0 }, load_ph[16];
	size_t nload = 0;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	int r;

	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
	if (!t->elf || elf_kind(t->elf) != ELF_K_ELF || !gelf_getehdr(t->elf, &eh) ||
	    elf_getphdrnum(t->elf, &phnum) < 0)
		return -EINVAL;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(t->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			hdr_ph = ph;
			have_hdr = true;
		}
		if (ph.p_type == PT_INTERP)
			interp = true;
		if (ph.p_type == PT_LOAD && nload < sizeof(load_ph) / sizeof(load_ph[0]))
			load_ph[nload++] = ph;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr + ph.p_memsz > t->text_hi)
			t->text_hi = ph.p_vaddr + ph.p_memsz;
	}
	if (eh.e_type == ET_EXEC || interp)
		t->entry = eh.e_entry;
	if (have_hdr) {
		/* .eh_frame lies in the segment of its index: where its bytes are */
		for (i = 0; i < nload; i++)
			if (hdr_ph.p_vaddr >= load_ph[i].p_vaddr &&
			    hdr_ph.p_vaddr - load_ph[i].p_vaddr < load_ph[i].p_filesz) {
				t->image.data = (const uint8_t *)elf_rawfile(t->elf, &t->image.size);
				t->image.vaddr_delta = load_ph[i].p_vaddr - load_ph[i].p_offset;
			}
		t->cfi = dwarf_getcfi_elf(t->elf);
		t->eh = true;
		r = t->cfi ? index_eh_frame_hdr(t, &hdr_ph) : -EINVAL;
		if (r == 0)
			return finish_index(ts, t);
		return r;
	}
	/* no .eh_frame_hdr: .debug_frame (Go programs, some hand-written code) */
	if (elf_getshdrstrndx(t->elf, &shstrndx) < 0)
		return -ENOENT;
	while ((scn = elf_nextscn(t->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(t->elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame") && sh.sh_size)
			return -ENOTSUP;	/* .eh_frame without its index: libdwfl */
		if (!name || strcmp(name, ".debug_frame") || sh.sh_type == SHT_NOBITS)
			continue;
		/* Go compresses its DWARF: read it inflated, as libdw does */
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return -ENOTSUP;
		t->dwarf = dwarf_begin_elf(t->elf, DWARF_C_READ, NULL);
		t->cfi = t->dwarf ? dwarf_getcfi(t->dwarf) : NULL;
		if (!t->cfi)
			return -ENOTSUP;
		r = index_debug_frame(t, elf_getdata(scn, NULL));
		return r == 0 ? finish_index(ts, t) : r;
	}
	return index_gopclntab(ts, t);
}

/* ---- finding a table ----------------------------------------------------- */

/* Free the tables no mapping has used for the grace period (all of them: ALL). */
static void sweep(struct utables *ts, bool all)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	size_t i = 0;

	while (i < ts->n) {
		struct utable *t = ts->v[i];

		if (!t->refs && (all || now - t->unused_since_ns >= UNUSED_GRACE_NS)) {
			ts->v[i] = ts->v[--ts->n];
			table_free(ts, t);
		} else {
			i++;
		}
	}
}

static bool same_file(const struct utable *t, const struct utable_file *f)
{
	if (t->build_id_len || f->build_id_len)
		return t->build_id_len == f->build_id_len &&
		       !memcmp(t->build_id, f->build_id, f->build_id_len);
	return t->dev_major == f->dev_major && t->dev_minor == f->dev_minor &&
	       t->inode == f->inode && t->size == f->size && t->mtime_ns == f->mtime_ns;
}

int utables_get(struct utables *ts, const struct utable_file *f, struct utable **ret)
{
	struct utable *t;
	size_t i;
	void *v;
	int r;

	if (f->build_id_len > sizeof(t->build_id))
		return -EINVAL;
	sweep(ts, false);
	for (i = 0; i < ts->n; i++)
		if (same_file(ts->v[i], f)) {
			ts->v[i]->refs++;
			*ret = ts->v[i];
			return 0;
		}
	v = ts->v;
	if (grow_array(&v, &ts->cap, ts->n + 1, sizeof(*ts->v)) < 0)
		return -ENOMEM;
	ts->v = v;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fd = -1;
	t->refs = 1;
	if (f->build_id_len)
		memcpy(t->build_id, f->build_id, f->build_id_len);
	t->build_id_len = f->build_id_len;
	t->dev_major = f->dev_major;
	t->dev_minor = f->dev_minor;
	t->inode = f->inode;
	t->size = f->size;
	t->mtime_ns = f->mtime_ns;
	r = table_open(ts, t, f->path);
	if (r < 0) {
		pr_debug("unwind table for '%s': %s", f->name,
			 r == -ENOENT	? "no CFI"
			 : r == -ENOMEM ? "out of memory"
					: "CFI left to libdwfl");
		table_free(ts, t);
		return r;
	}
	t->entry_fde = t->entry ? fde_at(t, t->entry) : t->nfde;
	ts->v[ts->n++] = t;
	t->id = (uint32_t)++ts->files;
	if (ts->bytes > ts->peak_bytes)
		ts->peak_bytes = ts->bytes;
	*ret = t;
	return 0;
}

uint32_t utable_id(const struct utable *t)
{
	return t->id;
}

struct Dwarf_CFI_s *utable_cfi(const struct utable *t)
{
	return t->cfi;
}

void utables_put(struct utables *ts, struct utable *t)
{
	if (!t || --t->refs)
		return;
	t->unused_since_ns = clock_ns(CLOCK_MONOTONIC);
	/* past the memory bound, what no one uses goes at once */
	sweep(ts, ts->bytes > ts->max_bytes);
}

/* ---- compiling an FDE ---------------------------------------------------- */

/* Whether OPS are "CFA + K" (a register saved there), and K. */
static bool cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *k)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*k = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*k = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The CFA expression of x86-64 PLT entries, as ld writes it:
 * rsp + 8 + ((rip & 15) >= N) << 3.  N, or 0 when OPS are something else.
 */
static int plt_threshold(const Dwarf_Op *ops, size_t nops)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg0 + DWARF_REG_SP || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg0 + DWARF_REG_RA || ops[1].number != 0 ||
	    ops[2].atom != DW_OP_lit15 ||
	    ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return 0;
	return ops[4].atom - DW_OP_lit0;
}

static struct urule decode(Dwarf_Frame *f, bool signal)
{
	struct urule r = { .cfa = UCFA_FALLBACK };
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t k;
	int plt;

	if (signal) {
		r.flags = URULE_SIGNAL;
		return r;
	}
	/* the return address: at CFA - 8, or undefined in the outermost frame */
	if (dwarf_frame_register(f, DWARF_REG_RA, mem, &ops, &nops) != 0)
		return r;
	if (nops == 0 && ops) {
		r.cfa = UCFA_END;
		return r;
	}
	if (!cfa_plus(ops, nops, &k) || k != -8)
		return r;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return r;
	if (nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == DWARF_REG_SP || ops[0].number == DWARF_REG_BP) &&
	    (int64_t)ops[0].number2 >= INT32_MIN && (int64_t)ops[0].number2 <= INT32_MAX) {
		r.cfa = ops[0].number == DWARF_REG_SP ? UCFA_RSP : UCFA_RBP;
		r.cfa_off = (int32_t)ops[0].number2;
	} else if ((plt = plt_threshold(ops, nops))) {
		r.cfa = UCFA_PLT;
		r.cfa_off = plt;
	} else {
		return r;
	}
	/* rbp: the one register besides sp and ip that a walk through frames needs */
	if (dwarf_frame_register(f, DWARF_REG_BP, mem, &ops, &nops) != 0) {
		r.cfa = UCFA_FALLBACK;
	} else if (nops == 0) {
		r.bp = ops ? UBP_UNDEF : UBP_SAME;
	} else if (cfa_plus(ops, nops, &k) && k >= INT16_MIN && k <= INT16_MAX) {
		r.bp = UBP_AT;
		r.bp_off = (int16_t)k;
	} else {
		r.cfa = UCFA_FALLBACK;
	}
	return r;
}

/*
 * The rule libdw gives for SVMA, and in *END where its row ends (SVMA + 1
 * where no FDE covers it: a gap, or a hole in one).
 */
static struct urule libdw_rule(Dwarf_CFI *cfi, uint64_t svma, uint64_t *end)
{
	struct urule r = { .cfa = UCFA_NONE };
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start = svma, e = svma + 1;
	bool signal = false;

	if (dwarf_cfi_addrframe(cfi, svma, &frame) == 0 &&
	    dwarf_frame_info(frame, &start, &e, &signal) >= 0)
		r = decode(frame, signal);
	else
		e = svma + 1;
	free(frame);
	*end = e;
	return r;
}

/* BYTES more (or fewer) of T's compiled rows, in every count of them. */
static void count_rows_bytes(struct utables *ts, struct utable *t, int64_t bytes)
{
	ts->bytes += (uint64_t)bytes;
	ts->rows_bytes += (uint64_t)bytes;
	t->rows_bytes += (uint64_t)bytes;
	if (ts->bytes > ts->peak_bytes)
		ts->peak_bytes = ts->bytes;
}

/* Drop every table's compiled rows: they passed ts->max_bytes. */
static void flush_rows(struct utables *ts)
{
	size_t n;

	for (n = 0; n < ts->n; n++)
		drop_rows(ts, ts->v[n]);
	ts->flushes++;
}

/* F of T, about to get rows, among those drop_rows() frees (once).  0 or -ENOMEM. */
static int list_rows(struct utable *t, const struct ufde *f)
{
	void *p = t->with_rows;

	if (f->rows)
		return 0;
	if (grow_array(&p, &t->with_rows_cap, t->nwith_rows + 1, sizeof(*t->with_rows)) < 0)
		return -ENOMEM;
	t->with_rows = p;
	t->with_rows[t->nwith_rows++] = (uint32_t)(f - t->fdes);
	return 0;
}

/* Room for one more row in F, counted in the tables' bytes.  0 or -ENOMEM. */
static int grow_rows(struct utables *ts, struct utable *t, struct ufde *f)
{
	void *v = f->rows;
	size_t cap = f->cap, more;

	if (grow_array(&v, &cap, f->nrows + 1, sizeof(*f->rows)) < 0)
		return -ENOMEM;
	if (list_rows(t, f) < 0) {
		free(v);	/* new: F had none */
		return -ENOMEM;
	}
	f->rows = v;
	more = (cap - f->cap) * sizeof(*f->rows);
	count_rows_bytes(ts, t, (int64_t)more);
	f->cap = (uint32_t)cap;
	return 0;
}

/* Compile the row of FDE I that holds SVMA, as the K-th of its compiled rows. */
static int compile_row(struct utables *ts, struct utable *t, size_t i, uint64_t svma, size_t k)
{
	uint64_t lo = t->fde_lo[i], hi = i + 1 < t->nfde ? t->fde_lo[i + 1] : t->text_hi;
	struct ufde *f = &t->fdes[i];
	uint64_t start, end;
	struct urule r;

	if (ts->rows_bytes > ts->max_bytes) {
		flush_rows(ts);
		k = 0;
	}
	r = libdw_rule(t->cfi, svma, &end);
	/*
	 * The row holds from SVMA to END.  Not from the start libdw gives: after
	 * DW_CFA_restore_state that is where the remembered state began (libc's
	 * epilogues), rows that differ lie between.  Nor past the next row
	 * compiled before.
	 */
	start = svma;
	if (end > hi || end <= svma)
		end = hi > svma ? hi : svma + 1;
	if (k < f->nrows && lo + f->rows[k].off < end)
		end = lo + f->rows[k].off;
	if (end - lo > UINT32_MAX)
		return -ERANGE;
	if (i == t->entry_fde && t->entry)
		r.flags |= URULE_ENTRY;
	if (grow_rows(ts, t, f) < 0)
		return -ENOMEM;
	memmove(&f->rows[k + 1], &f->rows[k], (f->nrows - k) * sizeof(*f->rows));
	f->rows[k] = (struct urow){ .off = (uint32_t)(start - lo), .end = (uint32_t)(end - lo),
				    .r = r };
	f->nrows++;
	if (f->nrows == 1)
		ts->fdes_compiled++;
	ts->rows_compiled++;
	return 0;
}

/*
 * F's rows, compiled whole: V, N of them in room for CAP, taken (freed
 * here on failure), in place of any it had, counted in the tables' bytes
 * (the oldest rows dropped first if they would pass the limit).  0 or
 * -ENOMEM.
 */
static int set_rows(struct utables *ts, struct utable *t, struct ufde *f, struct urow *v,
		    size_t n, size_t cap)
{
	if (ts->rows_bytes + n * sizeof(*v) > ts->max_bytes)
		flush_rows(ts);
	if (list_rows(t, f) < 0) {
		free(v);
		return -ENOMEM;
	}
	if (!f->nrows)
		ts->fdes_compiled++;
	count_rows_bytes(ts, t, -(int64_t)(f->cap * sizeof(*f->rows)));
	free(f->rows);
	f->rows = v;
	f->nrows = (uint32_t)n;
	f->cap = (uint32_t)cap;
	count_rows_bytes(ts, t, (int64_t)(cap * sizeof(*v)));
	ts->rows_compiled += n;
	return 0;
}

/*
 * Compile every row of FDE I from its program, run once (cfi_program.c),
 * in place of the rows compiled before: from its start to the next FDE's,
 * with no gaps, so that no pc in it misses again.  0; -ENOTSUP and the
 * other errors of cfi_fde_rows() (the FDE is then libdw's, row by row);
 * -ENOMEM.
 */
static int compile_fde(struct utables *ts, struct utable *t, size_t i)
{
	uint64_t lo = t->fde_lo[i], hi = i + 1 < t->nfde ? t->fde_lo[i + 1] : t->text_hi;
	uint8_t entry = i == t->entry_fde && t->entry ? URULE_ENTRY : 0;
	struct cfi_rows *rows = &ts->scratch;
	struct ufde *f = &t->fdes[i];
	struct urow *v;
	size_t n = 0, k;
	uint64_t at = lo;
	int r;

	if (hi <= lo || hi - lo > UINT32_MAX)
		return -ERANGE;
	r = cfi_fde_rows(&t->image, t->fde_off[i], rows);
	if (r == 0 && rows->pc_begin != lo)
		r = -EINVAL;	/* not the FDE the index says */
	if (r < 0)
		return r;
	/* a row for each of the program's, and for the gap before the next FDE */
	v = malloc((rows->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < rows->n && at < hi; k++) {
		uint64_t end = rows->v[k].hi < hi ? rows->v[k].hi : hi;

		v[n] = (struct urow){ .off = (uint32_t)(at - lo), .end = (uint32_t)(end - lo),
				      .r = rows->v[k].r };
		v[n++].r.flags |= entry;
		at = end;
	}
	if (at < hi)
		v[n++] = (struct urow){ .off = (uint32_t)(at - lo), .end = (uint32_t)(hi - lo),
					.r = { .cfa = UCFA_NONE, .flags = entry } };
	return set_rows(ts, t, f, v, n, rows->n + 1);
}

/*
 * Compile Go function I's rows from its SP table: at a pc SP bytes below
 * the entry's stack pointer, the CFA is rsp + SP + 8, the return address
 * just below it, and rbp, once the frame is made, saved below that (Go
 * saves the caller's rbp at the top of every frame it makes; a frameless
 * leaf leaves it alone).  0, -EINVAL for a damaged table, -ENOMEM.
 */
static int compile_go(struct utables *ts, struct utable *t, size_t i)
{
	uint64_t lo = t->fde_lo[i], hi = i + 1 < t->nfde ? t->fde_lo[i + 1] : t->text_hi, a, b, s, e;
	struct gopclntab_pcvalue it;
	struct ufde *f = &t->fdes[i];
	struct urow *v = NULL;
	size_t n = 0, cap = 0;
	const char *name;
	uint8_t flags;
	int64_t sp;

	if (hi <= lo || hi - lo > UINT32_MAX || !gopclntab_func(&t->go, i, &s, &e, &name) ||
	    !gopclntab_sp_table(&t->go, i, &it))
		return -EINVAL;
	flags = go_outermost(name) ? URULE_ENTRY : 0;
	while (gopclntab_pcvalue_next(&it, &a, &b, &sp) && a < hi) {
		struct urule r = { .cfa = UCFA_RSP, .cfa_off = (int32_t)sp + 8,
				   .bp = sp > 0 ? UBP_AT : UBP_SAME, .bp_off = -16, .flags = flags };
		void *p = v;

		if (b > hi)
			b = hi;
		if (b <= a || a < lo)
			continue;
		if (sp < 0 || sp > INT32_MAX - 8)
			r = (struct urule){ .cfa = UCFA_NONE, .flags = flags };
		if (grow_array(&p, &cap, n + 1, sizeof(*v)) < 0) {
			free(v);
			return -ENOMEM;
		}
		v = p;
		v[n++] = (struct urow){ .off = (uint32_t)(a - lo), .end = (uint32_t)(b - lo), .r = r };
	}
	if (!n) {
		free(v);
		return -EINVAL;
	}
	return set_rows(ts, t, f, v, n, cap);
}

/* The index of the first compiled row of F starting after OFF. */
static size_t row_after(const struct ufde *f, uint32_t off)
{
	size_t lo = 0, hi = f->nrows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->rows[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct urule utable_rule(struct utables *ts, struct utable *t, uint64_t svma)
{
	struct urule none = { .cfa = UCFA_NONE };
	size_t i = fde_at(t, svma), k;
	struct ufde *f;
	uint32_t off;

	if (t->entry && svma >= t->entry && svma - t->entry < ENTRY_NO_FDE_BYTES &&
	    (i == t->nfde || i != t->entry_fde))
		none.flags = URULE_ENTRY;	/* _start without CFI */
	if (i == t->nfde || svma >= t->text_hi || svma - t->fde_lo[i] > UINT32_MAX)
		return none;
	f = &t->fdes[i];
	off = (uint32_t)(svma - t->fde_lo[i]);
	prefetch_span(f->rows, f->nrows * sizeof(*f->rows));
	k = row_after(f, off);
	if (k && off < f->rows[k - 1].end)
		return f->rows[k - 1].r;
	if (t->go.nfunc) {
		/* compiled whole: a pc its rows do not cover has no rule */
		int r = f->nrows ? -EINVAL : compile_go(ts, t, i);

		if (r == -ENOMEM)
			return (struct urule){ .cfa = UCFA_FALLBACK };
		k = r == 0 ? row_after(f, off) : 0;
		return k && off < f->rows[k - 1].end ? f->rows[k - 1].r : none;
	}
	if (t->fde_off && !f->libdw) {
		int r = compile_fde(ts, t, i);

		if (r == -ENOMEM)
			return (struct urule){ .cfa = UCFA_FALLBACK };
		if (r == 0) {
			k = row_after(f, off);
			return f->rows[k - 1].r;
		}
		f->libdw = 1;
		k = row_after(f, off);
	}
	if (compile_row(ts, t, i, svma, k) < 0)
		return (struct urule){ .cfa = UCFA_FALLBACK };
	k = row_after(f, off);
	return f->rows[k - 1].r;
}

/* ---- checking the programs run here against libdw's ------------------------ */

/* R with what the walk does not read of it zeroed: rules compare by what they do. */
static struct urule canonical(struct urule r)
{
	if (r.cfa == UCFA_FALLBACK || r.cfa == UCFA_END || r.cfa == UCFA_NONE)
		return (struct urule){ .cfa = r.cfa, .flags = r.flags };
	if (r.bp != UBP_AT)
		r.bp_off = 0;
	return r;
}

int utable_cross_check(const char *path, bool every, struct utable_cross *c)
{
	struct utables ts;
	struct utable *t = NULL;
	struct utable_file f = { .path = path, .name = path };
	size_t i, k;
	int r;

	memset(c, 0, sizeof(*c));
	utables_init(&ts);
	r = utables_get(&ts, &f, &t);
	if (r < 0)
		goto out;
	if (!t->fde_off) {
		r = -ENOTSUP;
		goto out;
	}
	for (i = 0; i < t->nfde; i++) {
		struct cfi_rows rows = { 0 };

		c->fdes++;
		r = cfi_fde_rows(&t->image, t->fde_off[i], &rows);
		if (r < 0 || rows.pc_begin != t->fde_lo[i]) {
			c->refused++;
			cfi_rows_release(&rows);
			continue;
		}
		for (k = 0; k < rows.n; k++) {
			uint64_t at[3] = { rows.v[k].lo, rows.v[k].lo + (rows.v[k].hi - rows.v[k].lo) / 2,
					   rows.v[k].hi - 1 };
			uint64_t a, end, n = every ? rows.v[k].hi - rows.v[k].lo : 3;

			c->rows++;
			for (a = 0; a < n; a++) {
				struct urule ours = canonical(rows.v[k].r),
					     theirs = canonical(libdw_rule(t->cfi, every ? rows.v[k].lo + a
										       : at[a], &end));

				c->addrs++;
				if (ours.cfa == theirs.cfa && ours.bp == theirs.bp &&
				    ours.flags == theirs.flags && ours.bp_off == theirs.bp_off &&
				    ours.cfa_off == theirs.cfa_off)
					continue;
				if (!c->differ++) {
					c->first_svma = every ? rows.v[k].lo + a : at[a];
					c->ours = ours;
					c->theirs = theirs;
				}
			}
		}
		cfi_rows_release(&rows);
	}
	r = 0;
out:
	utables_put(&ts, t);
	utables_release(&ts);
	return r;
}
