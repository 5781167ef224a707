/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.c - a Go program's function table (see gopclntab.h).
 *
 * The section starts with a header: a magic, two pad bytes, the
 * instruction quantum, the pointer size, then pointer-sized words: the
 * number of functions, of files, (1.18 on) the text start, and the
 * offsets of the function name table, the compilation unit table, the file
 * table, the pc-value tables and the function table.  The function table
 * holds nfunc + 1 pairs (entry, offset of the function's _func record), the
 * last entry the end of the text; the pairs are 32-bit offsets from the
 * text start from 1.18 on, pointer-sized addresses before.  A _func record
 * begins with the entry again and the offset of the name in the name table.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "gopclntab.h"

#define GO_1_16_MAGIC 0xfffffffau
#define GO_1_18_MAGIC 0xfffffff0u
#define GO_1_20_MAGIC 0xfffffff1u

static uint64_t get_word(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The section named NAME of ELF, its header into *SH: NULL if none. */
static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int gopclntab_open(Elf *elf, struct gopclntab *ret)
{
	GElf_Shdr sh, text_sh;
	Elf_Scn *scn = section_named(elf, ".gopclntab", &sh);
	Elf_Data *data;
	const uint8_t *p;
	uint32_t magic;
	unsigned w, nwords;
	uint64_t words[8], entry_size, need;
	size_t i;

	memset(ret, 0, sizeof(*ret));
	if (!scn || sh.sh_type == SHT_NOBITS)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 8)
		return -EBADMSG;
	p = data->d_buf;
	magic = (uint32_t)get_word(p, 4);
	if (magic != GO_1_16_MAGIC && magic != GO_1_18_MAGIC && magic != GO_1_20_MAGIC)
		return -ENOTSUP;
	w = p[7];
	if (p[4] || p[5] || (w != 4 && w != 8))
		return -EBADMSG;
	ret->entry_off = magic != GO_1_16_MAGIC;
	nwords = ret->entry_off ? 8 : 7;
	if (data->d_size < 8 + (size_t)nwords * w)
		return -EBADMSG;
	for (i = 0; i < nwords; i++)
		words[i] = get_word(p + 8 + i * w, w);
	ret->p = p;
	ret->size = data->d_size;
	ret->ptrsize = (uint8_t)w;
	ret->nfunc = words[0];
	if (ret->entry_off) {
		/* a position-independent build leaves it to a relocation: .text's address then */
		ret->text = words[2];
		if (!ret->text && section_named(elf, ".text", &text_sh))
			ret->text = text_sh.sh_addr;
		ret->funcnames = (size_t)words[3];
		ret->cutab = (size_t)words[4];
		ret->filetab = (size_t)words[5];
		ret->pctab = (size_t)words[6];
		ret->pcln = (size_t)words[7];
	} else {
		ret->funcnames = (size_t)words[2];
		ret->cutab = (size_t)words[3];
		ret->filetab = (size_t)words[4];
		ret->pctab = (size_t)words[5];
		ret->pcln = (size_t)words[6];
	}
	ret->quantum = p[6] ? p[6] : 1;
	ret->functab = ret->pcln;
	entry_size = ret->entry_off ? 8 : 2 * (uint64_t)w;
	if (ret->funcnames >= ret->size || ret->pcln >= ret->size || ret->pctab >= ret->size ||
	    ret->nfunc == 0 ||
	    ret->nfunc > (ret->size - ret->pcln) / entry_size)
		return -EBADMSG;
	need = (ret->nfunc + 1) * entry_size;
	if (need > ret->size - ret->functab)
		return -EBADMSG;
	return 0;
}

/* Entry I of the function table: its entry address and the offset of its _func. */
static bool functab_entry(const struct gopclntab *g, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	if (g->entry_off) {
		const uint8_t *e = g->p + g->functab + i * 8;

		*entry = g->text + get_word(e, 4);
		*funcoff = get_word(e + 4, 4);
	} else {
		const uint8_t *e = g->p + g->functab + i * 2 * g->ptrsize;

		*entry = get_word(e, g->ptrsize);
		*funcoff = get_word(e + g->ptrsize, g->ptrsize);
	}
	return true;
}

bool gopclntab_func(const struct gopclntab *g, uint64_t i, uint64_t *start, uint64_t *end,
		    const char **name)
{
	uint64_t funcoff, next_off, nameoff, rec;
	const char *s;
	size_t left;

	if (i >= g->nfunc || !functab_entry(g, i, start, &funcoff) ||
	    !functab_entry(g, i + 1, end, &next_off) || *end <= *start)
		return false;
	/* the _func record: its entry (4 bytes from 1.18 on, else a pointer), then nameoff */
	rec = g->pcln + funcoff;
	if (funcoff >= g->size || rec > g->size - (g->entry_off ? 8 : g->ptrsize + 4u))
		return false;
	nameoff = get_word(g->p + rec + (g->entry_off ? 4 : g->ptrsize), 4);
	if (nameoff & 0x80000000u || g->funcnames + nameoff >= g->size)
		return false;
	s = (const char *)g->p + g->funcnames + nameoff;
	left = g->size - g->funcnames - nameoff;
	if (!*s || !memchr(s, '\0', left))
		return false;
	*name = s;
	return true;
}

/* The uvarint at *P (before END): false when it runs past END or past 32 bits. */
static bool get_uvarint32(const uint8_t **p, const uint8_t *end, uint32_t *ret)
{
	uint64_t v = 0;
	unsigned shift;

	for (shift = 0; *p < end && shift < 35; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (v > UINT32_MAX)
				return false;
			*ret = (uint32_t)v;
			return true;
		}
	}
	return false;
}

/*
 * The 32-bit field K of function I's _func record after its entry (0
 * nameoff, 1 args, 2 deferreturn, 3 pcsp, 4 pcfile, 5 pcln, 6 npcdata, 7
 * cuOffset), and the function's entry: false where it is out of the section.
 */
static bool func_field(const struct gopclntab *g, uint64_t i, unsigned k, uint64_t *start,
		       uint32_t *v)
{
	uint64_t funcoff, rec, at = (g->entry_off ? 4 : g->ptrsize) + 4u * k;

	if (i >= g->nfunc || !functab_entry(g, i, start, &funcoff) || funcoff >= g->size)
		return false;
	rec = g->pcln + funcoff;
	if (rec >= g->size || at + 4 > g->size - rec)
		return false;
	*v = (uint32_t)get_word(g->p + rec + at, 4);
	return true;
}

/* Start reading pc-value table OFF (of function I, entry START): false if it has none. */
static bool pcvalue_at(const struct gopclntab *g, uint64_t start, uint32_t off,
		       struct gopclntab_pcvalue *it)
{
	if (!off || off >= g->size - g->pctab)
		return false;
	*it = (struct gopclntab_pcvalue){ .p = g->p + g->pctab + off, .end = g->p + g->size,
					  .pc = start, .val = -1, .quantum = g->quantum,
					  .first = true };
	return true;
}

bool gopclntab_sp_table(const struct gopclntab *g, uint64_t i, struct gopclntab_pcvalue *it)
{
	uint64_t start;
	uint32_t pcsp;

	return func_field(g, i, 3, &start, &pcsp) && pcvalue_at(g, start, pcsp, it);
}

bool gopclntab_find(const struct gopclntab *g, uint64_t pc, uint64_t *i)
{
	uint64_t lo = 0, hi = g->nfunc, entry, off;

	/* the entries are sorted: the last one at or below pc */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		functab_entry(g, mid, &entry, &off);
		if (entry <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	functab_entry(g, g->nfunc, &entry, &off);	/* the end of the text */
	*i = lo - 1;
	return pc < entry;
}

/* The value of the pc-value table IT at PC: false where it does not cover PC. */
static bool value_at(struct gopclntab_pcvalue *it, uint64_t pc, int64_t *val)
{
	uint64_t lo, hi;
	unsigned steps;

	for (steps = 0; steps < (1u << 20) && gopclntab_pcvalue_next(it, &lo, &hi, val); steps++)
		if (pc >= lo && pc < hi)
			return true;
	return false;
}

bool gopclntab_line(const struct gopclntab *g, uint64_t i, uint64_t pc, const char **file,
		    uint32_t *line)
{
	struct gopclntab_pcvalue it;
	uint32_t pcfile, pcln, cu, name;
	uint64_t start, at;
	int64_t fileno, ln;
	const char *s;

	if (!func_field(g, i, 4, &start, &pcfile) || !func_field(g, i, 5, &start, &pcln) ||
	    !func_field(g, i, 7, &start, &cu))
		return false;
	if (!pcvalue_at(g, start, pcln, &it) || !value_at(&it, pc, &ln) || ln <= 0 ||
	    ln > INT32_MAX)
		return false;
	if (!pcvalue_at(g, start, pcfile, &it) || !value_at(&it, pc, &fileno) || fileno < 0)
		return false;
	/* the unit's file table: 32-bit offsets into the file names (~0: none) */
	at = g->cutab + 4 * ((uint64_t)cu + (uint64_t)fileno);
	if (g->cutab >= g->size || at < g->cutab || at > g->size - 4)
		return false;
	name = (uint32_t)get_word(g->p + at, 4);
	if (name == UINT32_MAX || g->filetab >= g->size || name >= g->size - g->filetab)
		return false;
	s = (const char *)g->p + g->filetab + name;
	if (!*s || !memchr(s, '\0', g->size - g->filetab - name))
		return false;
	*file = s;
	*line = (uint32_t)ln;
	return true;
}

bool gopclntab_pcvalue_next(struct gopclntab_pcvalue *it, uint64_t *lo, uint64_t *hi,
			    int64_t *val)
{
	uint32_t uv, pcdelta;
	int32_t delta;

	if (!get_uvarint32(&it->p, it->end, &uv) || (uv == 0 && !it->first))
		return false;
	/* as Go's runtime.step: a zigzag value delta, then the pc delta in quanta */
	delta = (uv & 1) ? (int32_t)~(uv >> 1) : (int32_t)(uv >> 1);
	if (!get_uvarint32(&it->p, it->end, &pcdelta))
		return false;
	it->first = false;
	it->val += delta;
	*lo = it->pc;
	it->pc += (uint64_t)pcdelta * it->quantum;
	*hi = it->pc;
	*val = it->val;
	return true;
}
