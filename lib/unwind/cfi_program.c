/* SPDX-License-Identifier: MIT */
/*
 * cfi_program.c - x86-64 .eh_frame CFI programs run into rows (see
 * cfi_program.h).
 *
 * Only three things of a row matter to the compiled walk: the CFA (rsp or
 * rbp plus an offset, or the PLT's expression), the return address (at
 * CFA - 8, or undefined in the outermost frame) and rbp.  The program's
 * rules for the other registers are read past.  Each row is encoded as
 * decode() in unwind_table.c encodes libdw's answer for it; the unit
 * tests hold the two against each other on every FDE of real files.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_program.h"
#include "internal.h"
#include "regs_x86_64.h"

/* DW_CFA_remember_state nesting kept; deeper is refused (compilers nest one) */
#define STATE_DEPTH 8

/* A register's rule, as far as decode() tells rules apart. */
enum reg_kind {
	REG_UNSPECIFIED = 0,	/* no rule given: the ABI's default */
	REG_UNDEFINED,
	REG_SAME,
	REG_OFFSET,		/* saved at CFA + off */
	REG_OTHER,		/* val_offset, register, expression: libdw's to run */
};

struct reg_rule {
	uint8_t kind;
	int64_t off;
};

enum cfa_kind {
	CFA_REG = 0,		/* register + offset */
	CFA_PLT,		/* the PLT's expression, with its threshold */
	CFA_OTHER,		/* another expression */
};

struct cfi_state {
	uint8_t cfa;		/* enum cfa_kind */
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_rule ra, bp;
};

struct cursor {
	const uint8_t *p, *end;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool signal;
	bool aug_z;
	struct cursor insns;
};

void cfi_rows_release(struct cfi_rows *rows)
{
	free(rows->v);
	memset(rows, 0, sizeof(*rows));
}

static bool get_u8(struct cursor *c, uint8_t *v)
{
	if (c->p >= c->end)
		return false;
	*v = *c->p++;
	return true;
}

static bool get_fixed(struct cursor *c, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	if ((size_t)(c->end - c->p) < len)
		return false;
	memcpy(&x, c->p, len);	/* little-endian: the only byte order here */
	c->p += len;
	*v = x;
	return true;
}

/* A LEB128 number's bits at C, and the width they took (for the sign of an SLEB128). */
static bool get_leb(struct cursor *c, uint64_t *v, unsigned *width, uint8_t *last)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (!get_u8(c, &b) || shift > 63)
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = x;
	*width = shift;
	*last = b;
	return true;
}

static bool get_uleb(struct cursor *c, uint64_t *v)
{
	unsigned width;
	uint8_t last;

	return get_leb(c, v, &width, &last);
}

static bool get_sleb(struct cursor *c, int64_t *v)
{
	unsigned width;
	uint64_t x;
	uint8_t last;

	if (!get_leb(c, &x, &width, &last))
		return false;
	if (width < 64 && (last & 0x40))
		x |= ~0ull << width;
	*v = (int64_t)x;
	return true;
}

/* A pointer of encoding ENC at C, its address taken from IMG for pcrel; false: not read here. */
static bool get_encoded(const struct cfi_image *img, struct cursor *c, uint8_t enc, uint64_t *v)
{
	uint64_t at = (uint64_t)(c->p - img->data) + img->vaddr_delta, x;
	int64_t s;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2: {
		unsigned bits = (enc & 0x07) == DW_EH_PE_udata2 ? 16 : (enc & 0x07) == DW_EH_PE_udata4 ? 32 : 64;

		if (!get_fixed(c, bits / 8, &x))
			return false;
		/* the signed forms: sign-extended from their width */
		if ((enc & 0x08) && bits < 64 && (x >> (bits - 1) & 1))
			x |= ~0ull << bits;
		break;
	}
	case DW_EH_PE_uleb128:
		if (!get_uleb(c, &x))
			return false;
		break;
	case DW_EH_PE_sleb128:
		if (!get_sleb(c, &s))
			return false;
		x = (uint64_t)s;
		break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		x += at;
		break;
	default:
		return false;	/* datarel, textrel, funcrel, aligned: not in x86-64 FDEs */
	}
	if (enc & DW_EH_PE_indirect)
		return false;
	*v = x;
	return true;
}

/* The entry (CIE or FDE) at OFF: its body after the length, and its id field's offset. */
static int entry_at(const struct cfi_image *img, uint64_t off, struct cursor *body)
{
	struct cursor c;
	uint64_t len;

	if (off >= img->size)
		return -EINVAL;
	c = (struct cursor){ img->data + off, img->data + img->size };
	if (!get_fixed(&c, 4, &len))
		return -EINVAL;
	if (len == 0xffffffff && !get_fixed(&c, 8, &len))
		return -EINVAL;
	if (len == 0 || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	*body = (struct cursor){ c.p, c.p + len };
	return 0;
}

static int read_cie(const struct cfi_image *img, uint64_t off, struct cie *cie)
{
	struct cursor c;
	uint64_t id, skip, ptr;
	const char *aug;
	uint8_t version, b;
	int r = entry_at(img, off, &c);

	if (r < 0)
		return r;
	if (!get_fixed(&c, 4, &id) || id != 0 || !get_u8(&c, &version))
		return -EINVAL;
	if (version != 1 && version != 3)
		return -ENOTSUP;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -EINVAL;
	c.p++;
	*cie = (struct cie){ .fde_enc = DW_EH_PE_absptr };
	if (!get_uleb(&c, &cie->code_align) || !get_sleb(&c, &cie->data_align))
		return -EINVAL;
	if (version == 1) {
		if (!get_u8(&c, &b))
			return -EINVAL;
		cie->ra_reg = b;
	} else if (!get_uleb(&c, &cie->ra_reg)) {
		return -EINVAL;
	}
	if (*aug == 'z') {
		struct cursor data;

		if (!get_uleb(&c, &skip) || skip > (uint64_t)(c.end - c.p))
			return -EINVAL;
		data = (struct cursor){ c.p, c.p + skip };
		c.p += skip;
		cie->aug_z = true;
		for (aug++; *aug; aug++) {
			switch (*aug) {
			case 'L':
				if (!get_u8(&data, &b))
					return -EINVAL;
				break;
			case 'R':
				if (!get_u8(&data, &cie->fde_enc))
					return -EINVAL;
				break;
			case 'P':
				/* the personality routine: read past, indirect or not */
				if (!get_u8(&data, &b))
					return -EINVAL;
				if (!get_encoded(img, &data, b & (uint8_t)~DW_EH_PE_indirect, &ptr))
					return -ENOTSUP;
				break;
			case 'S':
				cie->signal = true;
				break;
			default:
				return -ENOTSUP;
			}
		}
	} else if (*aug) {
		return -ENOTSUP;	/* "eh" and other pre-'z' forms */
	}
	cie->insns = c;
	return 0;
}

/*
 * The CFA expression of x86-64 PLT entries, as ld writes it (see
 * plt_threshold() in unwind_table.c): rsp + 8 + ((rip & 15) >= N) << 3.
 * N, or 0 for another expression.
 */
static int plt_expression(const uint8_t *p, uint64_t len)
{
	static const uint8_t head[] = { DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and };
	static const uint8_t tail[] = { DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };

	if (len != sizeof(head) + 1 + sizeof(tail) || memcmp(p, head, sizeof(head)) ||
	    p[sizeof(head)] < DW_OP_lit0 || p[sizeof(head)] > DW_OP_lit15 ||
	    memcmp(p + sizeof(head) + 1, tail, sizeof(tail)))
		return 0;
	return p[sizeof(head)] - DW_OP_lit0;
}

/* The row rule of state S, as decode() makes it. */
static struct urule encode(const struct cie *cie, const struct cfi_state *s)
{
	struct urule r = { .cfa = UCFA_FALLBACK };

	if (cie->signal) {
		r.flags = URULE_SIGNAL;
		return r;
	}
	/* an unspecified return address is undefined: x86-64 says nothing of it */
	if (s->ra.kind == REG_UNDEFINED || s->ra.kind == REG_UNSPECIFIED) {
		r.cfa = UCFA_END;
		return r;
	}
	if (s->ra.kind != REG_OFFSET || s->ra.off != -8)
		return r;
	if (s->cfa == CFA_PLT) {
		r.cfa = UCFA_PLT;
		r.cfa_off = (int32_t)s->cfa_off;
	} else if (s->cfa == CFA_REG && (s->cfa_reg == DWARF_REG_SP || s->cfa_reg == DWARF_REG_BP) &&
		   s->cfa_off >= INT32_MIN && s->cfa_off <= INT32_MAX) {
		r.cfa = s->cfa_reg == DWARF_REG_SP ? UCFA_RSP : UCFA_RBP;
		r.cfa_off = (int32_t)s->cfa_off;
	} else {
		return r;
	}
	switch (s->bp.kind) {
	case REG_UNSPECIFIED:	/* x86-64's CFI ABI: callee-saved, the same */
	case REG_SAME:
		r.bp = UBP_SAME;
		break;
	case REG_UNDEFINED:
		r.bp = UBP_UNDEF;
		break;
	case REG_OFFSET:
		if (s->bp.off >= INT16_MIN && s->bp.off <= INT16_MAX) {
			r.bp = UBP_AT;
			r.bp_off = (int16_t)s->bp.off;
			break;
		}
		/* fall through */
	default:
		r = (struct urule){ .cfa = UCFA_FALLBACK };
	}
	return r;
}

static bool same_rule(const struct urule *a, const struct urule *b)
{
	return a->cfa == b->cfa && a->bp == b->bp && a->flags == b->flags &&
	       a->bp_off == b->bp_off && a->cfa_off == b->cfa_off;
}

/* Append the rule of S for [lo, hi) to ROWS, merged with the row before if the same. */
static int emit(struct cfi_rows *rows, const struct cie *cie, const struct cfi_state *s,
		uint64_t lo, uint64_t hi)
{
	struct urule r;
	void *v;

	if (hi > rows->pc_end)
		hi = rows->pc_end;
	if (lo >= hi)
		return 0;
	r = encode(cie, s);
	if (rows->n && rows->v[rows->n - 1].hi == lo && same_rule(&rows->v[rows->n - 1].r, &r)) {
		rows->v[rows->n - 1].hi = hi;
		return 0;
	}
	v = rows->v;
	if (grow_array(&v, &rows->cap, rows->n + 1, sizeof(*rows->v)) < 0)
		return -ENOMEM;
	rows->v = v;
	rows->v[rows->n++] = (struct cfi_row){ .lo = lo, .hi = hi, .r = r };
	return 0;
}

static struct reg_rule *reg_of(struct cfi_state *s, uint64_t reg, const struct cie *cie)
{
	if (reg == cie->ra_reg)
		return &s->ra;
	return reg == DWARF_REG_BP ? &s->bp : NULL;
}

static void set_reg(struct cfi_state *s, const struct cie *cie, uint64_t reg, uint8_t kind,
		    int64_t off)
{
	struct reg_rule *rr = reg_of(s, reg, cie);

	if (rr)
		*rr = (struct reg_rule){ .kind = kind, .off = off };
}

/*
 * Run the instructions at C from state S.  With ROWS NULL (the CIE's
 * initial instructions) no location may advance.  INIT: the state after
 * the CIE's, for DW_CFA_restore.
 */
static int run(const struct cie *cie, struct cursor c,
	       struct cfi_state *s, const struct cfi_state *init, struct cfi_rows *rows)
{
	struct cfi_state stack[STATE_DEPTH];
	size_t depth = 0;
	uint64_t loc = rows ? rows->pc_begin : 0, reg, u, delta;
	int64_t off;
	uint8_t op;
	int r;

	while (get_u8(&c, &op)) {
		delta = 0;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = (op & 0x3f) * cie->code_align;
			goto advance;
		case DW_CFA_offset:
			if (!get_uleb(&c, &u))
				return -EINVAL;
			set_reg(s, cie, op & 0x3f, REG_OFFSET, (int64_t)u * cie->data_align);
			continue;
		case DW_CFA_restore:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (!get_fixed(&c, op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4,
				       &u))
				return -EINVAL;
			delta = u * cie->code_align;
			goto advance;
		case DW_CFA_offset_extended:
			if (!get_uleb(&c, &reg) || !get_uleb(&c, &u))
				return -EINVAL;
			set_reg(s, cie, reg, REG_OFFSET, (int64_t)u * cie->data_align);
			continue;
		case DW_CFA_offset_extended_sf:
			if (!get_uleb(&c, &reg) || !get_sleb(&c, &off))
				return -EINVAL;
			set_reg(s, cie, reg, REG_OFFSET, off * cie->data_align);
			continue;
		case DW_CFA_GNU_negative_offset_extended:
			if (!get_uleb(&c, &reg) || !get_uleb(&c, &u))
				return -EINVAL;
			set_reg(s, cie, reg, REG_OFFSET, -(int64_t)u * cie->data_align);
			continue;
		case DW_CFA_restore_extended:
			if (!get_uleb(&c, &reg))
				return -EINVAL;
			goto restore;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (!get_uleb(&c, &reg))
				return -EINVAL;
			set_reg(s, cie, reg, op == DW_CFA_undefined ? REG_UNDEFINED : REG_SAME, 0);
			continue;
		case DW_CFA_register:
		case DW_CFA_val_offset:
			/* another register's value, or CFA + N as the value: libdw's to run */
			if (!get_uleb(&c, &reg) || !get_uleb(&c, &u))
				return -EINVAL;
			set_reg(s, cie, reg, REG_OTHER, 0);
			continue;
		case DW_CFA_val_offset_sf:
			if (!get_uleb(&c, &reg) || !get_sleb(&c, &off))
				return -EINVAL;
			set_reg(s, cie, reg, REG_OTHER, 0);
			continue;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!get_uleb(&c, &reg) || !get_uleb(&c, &u) || u > (uint64_t)(c.end - c.p))
				return -EINVAL;
			c.p += u;
			set_reg(s, cie, reg, REG_OTHER, 0);
			continue;
		case DW_CFA_remember_state:
			if (depth == STATE_DEPTH)
				return -ENOTSUP;
			stack[depth++] = *s;
			continue;
		case DW_CFA_restore_state:
			if (!depth)
				return -EINVAL;
			/* the CFA is restored too, as libdw and GCC's unwinder do */
			*s = stack[--depth];
			continue;
		case DW_CFA_def_cfa:
			if (!get_uleb(&c, &reg) || !get_uleb(&c, &u))
				return -EINVAL;
			s->cfa = CFA_REG;
			s->cfa_reg = reg;
			s->cfa_off = (int64_t)u;
			continue;
		case DW_CFA_def_cfa_sf:
			if (!get_uleb(&c, &reg) || !get_sleb(&c, &off))
				return -EINVAL;
			s->cfa = CFA_REG;
			s->cfa_reg = reg;
			s->cfa_off = off * cie->data_align;
			continue;
		case DW_CFA_def_cfa_register:
			if (!get_uleb(&c, &reg))
				return -EINVAL;
			if (s->cfa != CFA_REG)
				s->cfa = CFA_OTHER;	/* a register for an expression: refused by libdw too */
			s->cfa_reg = reg;
			continue;
		case DW_CFA_def_cfa_offset:
			if (!get_uleb(&c, &u))
				return -EINVAL;
			if (s->cfa != CFA_REG)
				s->cfa = CFA_OTHER;
			s->cfa_off = (int64_t)u;
			continue;
		case DW_CFA_def_cfa_offset_sf:
			if (!get_sleb(&c, &off))
				return -EINVAL;
			if (s->cfa != CFA_REG)
				s->cfa = CFA_OTHER;
			s->cfa_off = off * cie->data_align;
			continue;
		case DW_CFA_def_cfa_expression: {
			int plt;

			if (!get_uleb(&c, &u) || u > (uint64_t)(c.end - c.p))
				return -EINVAL;
			plt = plt_expression(c.p, u);
			c.p += u;
			s->cfa = plt ? CFA_PLT : CFA_OTHER;
			s->cfa_off = plt;
			continue;
		}
		case DW_CFA_GNU_args_size:
			if (!get_uleb(&c, &u))
				return -EINVAL;
			continue;
		default:
			return -ENOTSUP;	/* set_loc, GNU_window_save, vendor ops */
		}
restore:
		if (!init)
			return -EINVAL;	/* a restore among the CIE's own */
		{
			struct cfi_state was = *init;
			struct reg_rule *dst = reg_of(s, reg, cie);

			if (dst)
				*dst = *reg_of(&was, reg, cie);
		}
		continue;
advance:
		if (!rows)
			return -ENOTSUP;
		if (delta > rows->pc_end - loc)
			delta = rows->pc_end - loc;	/* past the FDE's end: nothing more matters */
		r = emit(rows, cie, s, loc, loc + delta);
		if (r < 0)
			return r;
		loc += delta;
	}
	if (rows)
		return emit(rows, cie, s, loc, rows->pc_end);
	return 0;
}

int cfi_fde_rows(const struct cfi_image *img, uint64_t off, struct cfi_rows *rows)
{
	struct cfi_state init = { .cfa = CFA_OTHER }, s;
	struct cursor c;
	struct cie cie;
	uint64_t cie_ptr, range, skip;
	const uint8_t *id_at;
	int r;

	rows->n = 0;
	r = entry_at(img, off, &c);
	if (r < 0)
		return r;
	id_at = c.p;
	if (!get_fixed(&c, 4, &cie_ptr) || cie_ptr == 0 || cie_ptr > (uint64_t)(id_at - img->data))
		return -EINVAL;	/* a CIE, or a pointer out of the file */
	r = read_cie(img, (uint64_t)(id_at - img->data) - cie_ptr, &cie);
	if (r < 0)
		return r;
	if (!get_encoded(img, &c, cie.fde_enc, &rows->pc_begin) ||
	    !get_encoded(img, &c, cie.fde_enc & 0x0f, &range))
		return -ENOTSUP;
	if (range > UINT64_MAX - rows->pc_begin)
		return -EINVAL;
	rows->pc_end = rows->pc_begin + range;
	if (cie.aug_z) {
		if (!get_uleb(&c, &skip) || skip > (uint64_t)(c.end - c.p))
			return -EINVAL;
		c.p += skip;
	}
	r = run(&cie, cie.insns, &init, NULL, NULL);
	if (r < 0)
		return r;
	s = init;
	return run(&cie, c, &s, &init, rows);
}
