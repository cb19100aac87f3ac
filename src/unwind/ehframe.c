// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * .eh_frame → struct uw_row table (see ehframe.h and bpf/unwind/uwtable.h).
 *
 * One pass over the section collects the CIEs (each one's initial rules
 * interpreted once) and the FDEs (address range and where their program
 * is).  The FDEs are then sorted by address and each program is run once,
 * in address order, appending a row whenever the rule the walker would
 * use changes.  Rows are merged as they are appended, so the table never
 * holds two adjacent rows with the same rule.
 *
 * Bounds: the section is at most CAP_SECTION_BYTES; every instruction
 * consumes at least one byte of it and each program runs once, so the
 * time is linear in the section (plus the sort).  CIEs are capped at
 * MAX_CIES, FDEs and rows at UW_MAX_ROWS (-EFBIG past them).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/caps.h"
#include "unwind/ehframe.h"
#include "symbols/elf_file.h"
#include "lib/util.h"

/* x86-64 DWARF register numbers. */
#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16

/* Pointer encodings (DW_EH_PE_*): the format, low 4 bits... */
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
/* ...what it is relative to, bits 4-6, and "the value is a pointer to it". */
#define PE_PCREL	0x10
#define PE_DATAREL	0x30
#define PE_ALIGNED	0x50
#define PE_APPL_MASK	0x70
#define PE_INDIRECT	0x80
#define PE_OMIT		0xff

/* Call frame instructions (DW_CFA_*), with the high two bits clear. */
enum {
	CFA_nop = 0x00, CFA_set_loc, CFA_advance_loc1, CFA_advance_loc2,
	CFA_advance_loc4, CFA_offset_extended, CFA_restore_extended,
	CFA_undefined, CFA_same_value, CFA_register, CFA_remember_state,
	CFA_restore_state, CFA_def_cfa, CFA_def_cfa_register,
	CFA_def_cfa_offset, CFA_def_cfa_expression, CFA_expression,
	CFA_offset_extended_sf, CFA_def_cfa_sf, CFA_def_cfa_offset_sf,
	CFA_val_offset, CFA_val_offset_sf, CFA_val_expression,
	CFA_GNU_args_size = 0x2e, CFA_GNU_negative_offset_extended = 0x2f,
};
/* ...and the three that carry an operand in their low six bits. */
#define CFA_advance_loc	0x40
#define CFA_offset	0x80
#define CFA_restore	0xc0

/* DW_CFA_remember_state nesting we follow (the walker's contract). */
#define STATE_STACK	16
/* Far above the few CIEs a linked object has; bounds a crafted one. */
#define MAX_CIES	(1u << 16)
/* Longest augmentation string accepted ("zPLRS" and a few more). */
#define AUG_MAX		8
/* Padding after a function that still counts as "no gap". */
#define GAP_SLACK	16

/* Rows that say no more than their op. */
#define RULE_GAP	uw_rule(UW_OP_GAP, UW_BP_SAME, 0)
#define RULE_STOP	uw_rule(UW_OP_STOP, UW_BP_SAME, 0)
#define RULE_UNSUP	uw_rule(UW_OP_UNSUPPORTED, UW_BP_SAME, 0)
#define RULE_SIGRET	uw_rule(UW_OP_SIGRETURN, UW_BP_SAME, 0)
/* A PLT stub: entered by a call, it only jumps. */
#define RULE_PLT_STUB	uw_rule(UW_OP_CFA_SP, UW_BP_SAME, 8)

/* A bounded little-endian reader; reading past end sets bad and gives 0. */
struct rd {
	const __u8 *buf;
	size_t end, pos;
	bool bad;
};

/* How a register is recovered; only the kinds the table can tell apart. */
enum reg_kind { R_UNSET, R_UNDEF, R_SAME, R_OFFSET, R_OTHER };

struct reg_rule {
	__s64 off;		/* R_OFFSET: saved at CFA + off */
	__u8 kind;		/* enum reg_kind */
};

enum cfa_kind { CFA_REG, CFA_EXPR, CFA_PLT };

struct cfi_state {
	__u64 cfa_reg;
	__s64 cfa_off;
	struct reg_rule bp, ra;
	__u8 cfa_kind;		/* enum cfa_kind */
	__u8 plt_thr;		/* CFA_PLT: the (pc & 15) threshold */
};

enum cie_status {
	CIE_OK,
	CIE_UNSUPPORTED,	/* FDEs readable, their rules not */
	CIE_BAD,		/* FDEs using it cannot even be read */
};

struct cie {
	__u32 off;		/* of the entry, in the section */
	__u8 status;		/* enum cie_status */
	__u8 fde_enc;		/* 'R' */
	bool has_z, signal;	/* 'z', 'S' */
	__u64 code_align;
	__s64 data_align;
	struct cfi_state init;	/* after the initial instructions */
};

enum fde_flags {
	FDE_PLT_STUBS = 1 << 0,	/* a PLT section no FDE covers */
	FDE_ENTRY = 1 << 1,	/* holds the ELF entry point */
	FDE_ENTRY_STUB = 1 << 2,	/* ... and no FDE did (add_entry_stub()) */
};

struct fde {
	__u64 start, end;
	__u32 insn_off, insn_len;	/* its program, in the section */
	__u32 cie;			/* index in the CIEs */
	__u32 flags;			/* enum fde_flags */
};

/* A PLT section's address range. */
struct range {
	__u64 start, end;
};

#define MAX_PLT_SECTIONS 3

/* What the ELF file gives the compiler. */
struct eh_input {
	const __u8 *sec;
	size_t len;
	__u64 vaddr;		/* of sec[0] */
	__u64 entry;		/* e_entry, 0 if none */
	struct range plt[MAX_PLT_SECTIONS];
	size_t n_plt;
};

struct eh_ctx {
	const struct eh_input *in;
	struct cie *cies;
	size_t n_cies, cap_cies;
	struct fde *fdes;
	size_t n_fdes, cap_fdes;
	struct uw_row *rows;
	size_t n_rows, cap_rows;
	__u64 base;
	struct uw_table *out;	/* for the stats */
};

/* One program being run: a CIE's initial instructions or an FDE's. */
struct cfi_run {
	struct eh_ctx *c;		/* NULL for a CIE: nothing emitted */
	const struct cie *cie;
	const struct cfi_state *init;	/* DW_CFA_restore's rules */
	struct cfi_state st;
	struct cfi_state stack[STATE_STACK];
	unsigned int depth;
	__u64 loc, end;
	bool cfa_changed, fp_seen, plt_seen;	/* for the classifier */
};

static bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || n > r->end - r->pos) {
		r->bad = true;
		return false;
	}
	return true;
}

static __u64 rd_uint(struct rd *r, size_t n)
{
	__u64 v = 0;
	size_t i;

	if (!rd_need(r, n))
		return 0;
	for (i = 0; i < n; i++)
		v |= (__u64)r->buf[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

static __s64 sign_extend(__u64 v, unsigned int bits)
{
	__u64 m;

	if (bits >= 64)
		return (__s64)v;
	m = 1ull << (bits - 1);
	v &= (m << 1) - 1;
	return (__s64)((v ^ m) - m);
}

/*
 * LEB128, at most 10 bytes (64 bits): a longer one is an error, so that a
 * run of 0x80 bytes costs nothing.  *bits is how many bits were read.
 */
static __u64 rd_leb(struct rd *r, unsigned int *bits)
{
	__u64 v = 0;
	unsigned int shift = 0;
	__u8 b;

	do {
		if (shift >= 70 || !rd_need(r, 1)) {
			r->bad = true;
			return 0;
		}
		b = r->buf[r->pos++];
		if (shift < 64)
			v |= (__u64)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*bits = shift;
	return v;
}

static __u64 rd_uleb(struct rd *r)
{
	unsigned int bits;

	return rd_leb(r, &bits);
}

static __s64 rd_sleb(struct rd *r)
{
	unsigned int bits = 0;
	__u64 v = rd_leb(r, &bits);

	return r->bad ? 0 : sign_extend(v, bits);
}

/* The value of a pointer's format (enc & 0x0f); bad for an unknown one. */
static __u64 rd_format(struct rd *r, __u8 fmt)
{
	switch (fmt) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return rd_uint(r, 8);
	case PE_ULEB128:
		return rd_uleb(r);
	case PE_SLEB128:
		return (__u64)rd_sleb(r);
	case PE_UDATA2:
		return rd_uint(r, 2);
	case PE_UDATA4:
		return rd_uint(r, 4);
	case PE_SDATA2:
		return (__u64)sign_extend(rd_uint(r, 2), 16);
	case PE_SDATA4:
		return (__u64)sign_extend(rd_uint(r, 4), 32);
	default:
		r->bad = true;
		return 0;
	}
}

/*
 * An encoded pointer at r (vaddr: the ELF address of r->buf[0]).  0 with
 * the address in *val; -EINVAL when it is read but cannot be resolved
 * here (relative to the text, data or function start, or indirect: fine
 * to skip a personality routine, not for an FDE's start); r->bad when it
 * cannot even be read.
 */
static int rd_pointer(struct rd *r, __u8 enc, __u64 vaddr, __u64 *val)
{
	__u64 at = vaddr + r->pos, v;

	if (enc == PE_OMIT) {
		r->bad = true;
		return -EINVAL;
	}
	if ((enc & PE_APPL_MASK) == PE_ALIGNED) {
		size_t pad = (size_t)((8 - (at & 7)) & 7);

		if (!rd_need(r, pad))
			return -EINVAL;
		r->pos += pad;
		*val = rd_uint(r, 8);
		return r->bad ? -EINVAL : 0;
	}
	v = rd_format(r, enc & 0x0f);
	if (r->bad)
		return -EINVAL;
	if (enc & PE_INDIRECT)
		return -EINVAL;
	switch (enc & PE_APPL_MASK) {
	case 0:
		*val = v;
		return 0;
	case PE_PCREL:
		*val = at + v;
		return 0;
	default:
		return -EINVAL;
	}
}

/* --- Rules --- */

/*
 * rbp's rule as the walker's slot: saved at CFA + 8 * slot.  Slot 0 and
 * UW_BP_UNKNOWN's value cannot be told from the special values, and no
 * compiler saves rbp there: they are UNKNOWN too.
 */
static int bp_slot(const struct reg_rule *bp)
{
	if (bp->kind == R_UNSET || bp->kind == R_SAME)
		return UW_BP_SAME;
	if (bp->kind != R_OFFSET || bp->off % 8 || bp->off < -128 * 8 ||
	    bp->off >= UW_BP_UNKNOWN * 8 || bp->off == 0)
		return UW_BP_UNKNOWN;
	return (int)(bp->off / 8);
}

/* The row for a state: see bpf/unwind/uwtable.h for what the walker does. */
static __u32 state_rule(const struct cfi_state *s)
{
	unsigned int op;
	int bp;

	if (s->ra.kind == R_UNSET || s->ra.kind == R_UNDEF)
		return RULE_STOP;
	if (s->ra.kind != R_OFFSET || s->ra.off != -8)
		return RULE_UNSUP;
	bp = bp_slot(&s->bp);
	if (s->cfa_kind == CFA_PLT)
		return uw_rule(UW_OP_PLT, bp, s->plt_thr);
	if (s->cfa_kind != CFA_REG || s->cfa_off < 0 ||
	    s->cfa_off > (__s64)UW_CFA_OFF_MAX)
		return RULE_UNSUP;
	if (s->cfa_reg == REG_RSP)
		op = UW_OP_CFA_SP;
	else if (s->cfa_reg == REG_RBP)
		op = UW_OP_CFA_BP;
	else
		return RULE_UNSUP;
	return uw_rule(op, bp, (unsigned int)s->cfa_off);
}

/*
 * Append a row at an ELF address.  A row at the address of the last one
 * replaces it (the last instruction at a location wins), and a row with
 * the rule of the one before it is not added (merged).
 */
static int push_row(struct eh_ctx *c, __u64 addr, __u32 rule)
{
	__u32 a = (__u32)(addr - c->base);

	if (c->n_rows && c->rows[c->n_rows - 1].addr == a)
		c->n_rows--;
	if (c->n_rows && c->rows[c->n_rows - 1].rule == rule)
		return 0;
	if (c->n_rows >= UW_MAX_ROWS)
		return -EFBIG;
	if (util__grow_array((void **)&c->rows, &c->cap_rows, c->n_rows + 1,
			     sizeof(*c->rows)))
		return -ENOMEM;
	c->rows[c->n_rows].addr = a;
	c->rows[c->n_rows].rule = rule;
	c->n_rows++;
	return 0;
}

/* --- The CFA program interpreter --- */

static bool is_fp_frame(const struct cfi_state *s)
{
	return s->cfa_kind == CFA_REG && s->cfa_reg == REG_RBP &&
	       s->cfa_off == 16 && s->bp.kind == R_OFFSET && s->bp.off == -16;
}

static bool same_cfa(const struct cfi_state *a, const struct cfi_state *b)
{
	return a->cfa_kind == b->cfa_kind && a->cfa_reg == b->cfa_reg &&
	       a->cfa_off == b->cfa_off && a->plt_thr == b->plt_thr;
}

/* After an instruction: the row for the state at the current location. */
static int note_state(struct cfi_run *x)
{
	if (!x->c)
		return 0;
	if (!same_cfa(&x->st, x->init))
		x->cfa_changed = true;
	if (is_fp_frame(&x->st))
		x->fp_seen = true;
	if (x->st.cfa_kind == CFA_PLT)
		x->plt_seen = true;
	return push_row(x->c, x->loc, state_rule(&x->st));
}

/* The rule of a register we track, or NULL for one we do not. */
static struct reg_rule *tracked(struct cfi_state *s, __u64 reg)
{
	if (reg == REG_RBP)
		return &s->bp;
	if (reg == REG_RA)
		return &s->ra;
	return NULL;
}

static void set_reg(struct cfi_run *x, __u64 reg, enum reg_kind kind,
		    __s64 off)
{
	struct reg_rule *rr = tracked(&x->st, reg);

	if (rr) {
		rr->kind = kind;
		rr->off = off;
	}
}

/* DW_CFA_restore: back to the rule after the CIE's instructions. */
static void restore_reg(struct cfi_run *x, __u64 reg)
{
	if (reg == REG_RBP)
		x->st.bp = x->init->bp;
	else if (reg == REG_RA)
		x->st.ra = x->init->ra;
}

/* A factored offset; -ERANGE if it overflows (only a crafted file). */
static int factor(__s64 v, __s64 f, __s64 *out)
{
	return __builtin_mul_overflow(v, f, out) ? -ERANGE : 0;
}

/* An unsigned operand as a signed offset: huge ones stay huge. */
static __s64 clamp_u(__u64 v)
{
	return v > (__u64)INT64_MAX ? INT64_MAX : (__s64)v;
}

/* 1 when the location passed the end: the rest does not apply. */
static int advance(struct cfi_run *x, __u64 delta)
{
	__u64 d;

	if (__builtin_mul_overflow(delta, x->cie->code_align, &d) ||
	    d >= x->end - x->loc) {
		x->loc = x->end;
		return 1;
	}
	x->loc += d;
	return 0;
}

/*
 * GCC's CFA expression for PLT entries: rsp + 8, plus 8 once the entry
 * has pushed (pc & 15 >= 11, or 10 for some linkers).  Its threshold, or
 * 0 if the expression is anything else.
 */
static unsigned int plt_threshold(const __u8 *e, __u64 len)
{
	static const __u8 pat[] = {
		0x77, 0x08,	/* DW_OP_breg7 (rsp) 8 */
		0x80, 0x00,	/* DW_OP_breg16 (rip) 0 */
		0x3f,		/* DW_OP_lit15 */
		0x1a,		/* DW_OP_and */
		0x00,		/* DW_OP_lit11 or DW_OP_lit10 */
		0x2a,		/* DW_OP_ge */
		0x33,		/* DW_OP_lit3 */
		0x24,		/* DW_OP_shl */
		0x22,		/* DW_OP_plus */
	};
	const size_t lit = 6;

	if (len != sizeof(pat) || memcmp(e, pat, lit) ||
	    memcmp(e + lit + 1, pat + lit + 1, sizeof(pat) - lit - 1))
		return 0;
	if (e[lit] == 0x3b)
		return 11;
	if (e[lit] == 0x3a)
		return 10;
	return 0;
}

static int def_cfa_expression(struct cfi_run *x, struct rd *r)
{
	__u64 len = rd_uleb(r);
	unsigned int thr;

	if (!rd_need(r, len))
		return -EINVAL;
	thr = plt_threshold(r->buf + r->pos, len);
	r->pos += len;
	x->st.cfa_kind = thr ? CFA_PLT : CFA_EXPR;
	x->st.plt_thr = (__u8)thr;
	return 0;
}

/* DW_CFA_expression and val_expression: the register's rule is lost. */
static int reg_expression(struct cfi_run *x, struct rd *r)
{
	__u64 reg = rd_uleb(r), len = rd_uleb(r);

	if (!rd_need(r, len))
		return -EINVAL;
	r->pos += len;
	set_reg(x, reg, R_OTHER, 0);
	return 0;
}

/* DW_CFA_offset and its kin: reg saved at CFA + v * data_align. */
static int offset_rule(struct cfi_run *x, __u64 reg, __s64 v,
		       enum reg_kind kind)
{
	__s64 off;

	if (factor(v, x->cie->data_align, &off))
		return -ERANGE;
	set_reg(x, reg, kind, off);
	return 0;
}

static int remember(struct cfi_run *x)
{
	if (x->depth >= STATE_STACK)
		return -E2BIG;
	x->stack[x->depth++] = x->st;
	return 0;
}

/* DW_CFA_restore_state: every rule, the CFA's included. */
static int restore_state(struct cfi_run *x)
{
	if (!x->depth)
		return -EINVAL;
	x->st = x->stack[--x->depth];
	return 0;
}

static int def_cfa(struct cfi_run *x, __u64 reg, __s64 off)
{
	x->st.cfa_kind = CFA_REG;
	x->st.cfa_reg = reg;
	x->st.cfa_off = off;
	return 0;
}

static int def_cfa_sf(struct cfi_run *x, __u64 reg, __s64 v)
{
	__s64 off;

	if (factor(v, x->cie->data_align, &off))
		return -ERANGE;
	return def_cfa(x, reg, off);
}

/*
 * DW_CFA_def_cfa_register keeps the offset and makes the CFA a register
 * rule again; DW_CFA_def_cfa_offset changes only the offset (on an
 * expression it is meaningless, and readelf keeps the expression too).
 */
static int def_cfa_register(struct cfi_run *x, __u64 reg)
{
	x->st.cfa_kind = CFA_REG;
	x->st.cfa_reg = reg;
	return 0;
}

static int def_cfa_offset(struct cfi_run *x, __s64 off)
{
	x->st.cfa_off = off;
	return 0;
}

static int set_loc(struct cfi_run *x, struct rd *r)
{
	const struct eh_input *in = x->c ? x->c->in : NULL;
	__u64 to;

	if (!in || rd_pointer(r, x->cie->fde_enc, in->vaddr, &to))
		return -EINVAL;
	if (to < x->loc)
		return -EINVAL;	/* rows must go up */
	if (to >= x->end) {
		x->loc = x->end;
		return 1;
	}
	x->loc = to;
	return 0;
}

/* The extended opcodes (high two bits clear). */
static int step_ext(struct cfi_run *x, struct rd *r, __u8 op)
{
	__u64 reg;

	switch (op) {
	case CFA_nop:
		return 0;
	case CFA_set_loc:
		return set_loc(x, r);
	case CFA_advance_loc1:
		return advance(x, rd_uint(r, 1));
	case CFA_advance_loc2:
		return advance(x, rd_uint(r, 2));
	case CFA_advance_loc4:
		return advance(x, rd_uint(r, 4));
	case CFA_offset_extended:
		reg = rd_uleb(r);
		return offset_rule(x, reg, clamp_u(rd_uleb(r)), R_OFFSET);
	case CFA_offset_extended_sf:
		reg = rd_uleb(r);
		return offset_rule(x, reg, rd_sleb(r), R_OFFSET);
	case CFA_GNU_negative_offset_extended:
		reg = rd_uleb(r);
		return offset_rule(x, reg, -clamp_u(rd_uleb(r)), R_OFFSET);
	case CFA_val_offset:
		reg = rd_uleb(r);
		return offset_rule(x, reg, clamp_u(rd_uleb(r)), R_OTHER);
	case CFA_val_offset_sf:
		reg = rd_uleb(r);
		return offset_rule(x, reg, rd_sleb(r), R_OTHER);
	case CFA_restore_extended:
		restore_reg(x, rd_uleb(r));
		return 0;
	case CFA_undefined:
		set_reg(x, rd_uleb(r), R_UNDEF, 0);
		return 0;
	case CFA_same_value:
		set_reg(x, rd_uleb(r), R_SAME, 0);
		return 0;
	case CFA_register:
		reg = rd_uleb(r);
		rd_uleb(r);
		set_reg(x, reg, R_OTHER, 0);
		return 0;
	case CFA_remember_state:
		return remember(x);
	case CFA_restore_state:
		return restore_state(x);
	case CFA_def_cfa:
		reg = rd_uleb(r);
		return def_cfa(x, reg, clamp_u(rd_uleb(r)));
	case CFA_def_cfa_sf:
		reg = rd_uleb(r);
		return def_cfa_sf(x, reg, rd_sleb(r));
	case CFA_def_cfa_register:
		return def_cfa_register(x, rd_uleb(r));
	case CFA_def_cfa_offset:
		return def_cfa_offset(x, clamp_u(rd_uleb(r)));
	case CFA_def_cfa_offset_sf: {
		__s64 off;

		if (factor(rd_sleb(r), x->cie->data_align, &off))
			return -ERANGE;
		return def_cfa_offset(x, off);
	}
	case CFA_def_cfa_expression:
		return def_cfa_expression(x, r);
	case CFA_expression:
	case CFA_val_expression:
		return reg_expression(x, r);
	case CFA_GNU_args_size:
		rd_uleb(r);
		return 0;
	default:
		return -EINVAL;	/* unknown: its operands cannot be skipped */
	}
}

/* One instruction: 0, 1 when the end is reached, negative on error. */
static int step(struct cfi_run *x, struct rd *r)
{
	__u8 b = (__u8)rd_uint(r, 1);
	int err;

	switch (b & 0xc0) {
	case CFA_advance_loc:
		err = advance(x, b & 0x3f);
		break;
	case CFA_offset:
		err = offset_rule(x, b & 0x3f, clamp_u(rd_uleb(r)), R_OFFSET);
		break;
	case CFA_restore:
		restore_reg(x, b & 0x3f);
		err = 0;
		break;
	default:
		err = step_ext(x, r, b);
		break;
	}
	if (r->bad)
		return -EINVAL;
	return err;
}

/*
 * Run a program over [x->loc, x->end).  For an FDE, a program that breaks
 * (a crafted one, or an opcode we do not know) leaves its remaining
 * addresses UNSUPPORTED: the walker must not trust what was before.
 */
static int run_program(struct cfi_run *x, struct rd *r)
{
	int err = note_state(x);

	while (!err && r->pos < r->end) {
		err = step(x, r);
		if (!err)
			err = note_state(x);
	}
	if (err == 1)
		return 0;
	if (err == -ENOMEM || err == -EFBIG || !x->c)
		return err;
	if (err)
		return push_row(x->c, x->loc, RULE_UNSUP);
	return 0;
}

/* --- Reading the entries --- */

/* One augmentation letter's data; false for a letter we do not know. */
static bool parse_aug_letter(struct cie *cie, struct rd *r, char letter,
			     __u64 vaddr)
{
	__u64 ignored;
	__u8 enc;

	switch (letter) {
	case 'R':
		cie->fde_enc = (__u8)rd_uint(r, 1);
		return true;
	case 'P':	/* the personality routine: read past it */
		enc = (__u8)rd_uint(r, 1);
		rd_pointer(r, enc, vaddr, &ignored);
		return true;
	case 'L':	/* the LSDA's encoding: the FDE's 'z' data skips it */
		rd_uint(r, 1);
		return true;
	case 'S':
		cie->signal = true;
		return true;
	default:
		return false;
	}
}

static int parse_augmentation(struct cie *cie, struct rd *r, const char *aug,
			      __u64 vaddr)
{
	size_t end, i;
	__u64 len;

	if (aug[0] != 'z')
		return aug[0] ? -EINVAL : 0;	/* "eh" and others: unknown data */
	cie->has_z = true;
	len = rd_uleb(r);
	if (!rd_need(r, len))
		return -EINVAL;
	end = r->pos + len;
	/* After an unknown letter, 'z''s length still says where data ends. */
	for (i = 1; aug[i] && parse_aug_letter(cie, r, aug[i], vaddr); i++)
		;
	if (r->bad || r->pos > end)
		return -EINVAL;
	r->pos = end;
	return 0;
}

/* The augmentation string, NUL-terminated inside the entry. */
static int read_aug(struct rd *r, char *aug)
{
	size_t i;

	for (i = 0; i < AUG_MAX; i++) {
		aug[i] = (char)rd_uint(r, 1);
		if (r->bad)
			return -EINVAL;
		if (!aug[i])
			return 0;
	}
	return -EINVAL;
}

/* Header fields; CIE_BAD if FDEs using the CIE cannot be read. */
static enum cie_status read_cie_header(struct cie *cie, struct rd *r,
				       __u64 vaddr)
{
	char aug[AUG_MAX];
	__u64 ra;
	__u8 version;

	version = (__u8)rd_uint(r, 1);
	if (r->bad || (version != 1 && version != 3) || read_aug(r, aug))
		return CIE_BAD;
	cie->code_align = rd_uleb(r);
	cie->data_align = rd_sleb(r);
	ra = version == 1 ? rd_uint(r, 1) : rd_uleb(r);
	if (r->bad || parse_augmentation(cie, r, aug, vaddr))
		return CIE_BAD;
	return ra == REG_RA ? CIE_OK : CIE_UNSUPPORTED;
}

static int add_cie(struct eh_ctx *c, struct rd *r, size_t off)
{
	static const struct cfi_state unset = { .cfa_reg = UINT64_MAX };
	struct cfi_run x = { .init = &unset, .st = unset, .end = UINT64_MAX };
	struct cie cie = { .off = (__u32)off };

	if (c->n_cies >= MAX_CIES)
		return -EFBIG;
	cie.status = read_cie_header(&cie, r, c->in->vaddr);
	x.cie = &cie;
	if (cie.status == CIE_OK && run_program(&x, r))
		cie.status = CIE_UNSUPPORTED;
	cie.init = x.st;
	if (util__grow_array((void **)&c->cies, &c->cap_cies, c->n_cies + 1,
			     sizeof(*c->cies)))
		return -ENOMEM;
	c->cies[c->n_cies++] = cie;
	c->out->n_cies++;
	return 0;
}

/* The CIE that starts at off, by binary search (CIEs come in order). */
static const struct cie *find_cie(const struct eh_ctx *c, size_t off,
				  __u32 *idx)
{
	size_t lo = 0, hi = c->n_cies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->cies[mid].off == off) {
			*idx = (__u32)mid;
			return &c->cies[mid];
		}
		if (c->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * An FDE whose CIE pointer (the distance back from the pointer's own
 * offset, id_pos) was id.  It must name a CIE seen before: an FDE, a
 * place inside an entry or past this one is refused.
 */
static int add_fde(struct eh_ctx *c, struct rd *r, size_t id_pos, __u64 id)
{
	const struct eh_input *in = c->in;
	struct fde f = {};
	const struct cie *cie;
	__u64 range;

	cie = id <= id_pos ? find_cie(c, id_pos - id, &f.cie) : NULL;
	if (!cie || cie->status == CIE_BAD ||
	    rd_pointer(r, cie->fde_enc, in->vaddr, &f.start) ||
	    rd_pointer(r, cie->fde_enc & 0x0f, in->vaddr, &range))
		goto bad;
	if (cie->has_z) {
		__u64 len = rd_uleb(r);

		if (rd_need(r, len))
			r->pos += len;
	}
	if (r->bad || __builtin_add_overflow(f.start, range, &f.end))
		goto bad;
	c->out->n_fdes++;
	if (!range)
		return 0;	/* covers nothing */
	if (c->n_fdes >= UW_MAX_ROWS)
		return -EFBIG;
	f.insn_off = (__u32)r->pos;
	f.insn_len = (__u32)(r->end - r->pos);
	if (util__grow_array((void **)&c->fdes, &c->cap_fdes, c->n_fdes + 1,
			     sizeof(*c->fdes)))
		return -ENOMEM;
	c->fdes[c->n_fdes++] = f;
	return 0;
bad:
	c->out->n_bad_fdes++;
	return 0;
}

/*
 * Walk the entries until the end, a zero terminator, or one that does not
 * fit (a partial table then: what came before is sound).
 */
static int read_entries(struct eh_ctx *c)
{
	const struct eh_input *in = c->in;
	size_t pos = 0;
	int err = 0;

	while (!err && in->len - pos >= 4) {
		struct rd r = { .buf = in->sec, .end = in->len, .pos = pos };
		__u64 len = rd_uint(&r, 4), id;
		size_t id_pos, id_len = 4;

		if (len == 0xffffffff) {	/* 64-bit DWARF */
			len = rd_uint(&r, 8);
			id_len = 8;
		} else if (len >= 0xfffffff0) {
			break;			/* reserved */
		}
		if (!len || r.bad || len > r.end - r.pos || len < id_len)
			break;
		r.end = r.pos + (size_t)len;	/* confine reads to it */
		pos = r.end;
		id_pos = r.pos;
		id = rd_uint(&r, id_len);
		if (!id)
			err = add_cie(c, &r, id_pos - (id_len == 8 ? 12 : 4));
		else
			err = add_fde(c, &r, id_pos, id);
	}
	return err;
}

/* --- Building the table --- */

static int cmp_fde(const void *pa, const void *pb)
{
	const struct fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* Same start: the later in the section is later, and wins. */
	return (a->insn_off > b->insn_off) - (a->insn_off < b->insn_off);
}

static bool covered(const struct eh_ctx *c, const struct range *rg)
{
	size_t i;

	for (i = 0; i < c->n_fdes; i++) {
		if (c->fdes[i].start < rg->end && c->fdes[i].end > rg->start)
			return true;
	}
	return false;
}

/* PLT sections no FDE covers: one synthetic FDE each. */
static int add_plt_stubs(struct eh_ctx *c)
{
	const struct eh_input *in = c->in;
	size_t i;

	for (i = 0; i < in->n_plt; i++) {
		struct fde f = { .start = in->plt[i].start,
				 .end = in->plt[i].end,
				 .insn_off = UINT32_MAX,
				 .flags = FDE_PLT_STUBS };

		if (f.start >= f.end || covered(c, &in->plt[i]))
			continue;
		if (util__grow_array((void **)&c->fdes, &c->cap_fdes,
				     c->n_fdes + 1, sizeof(*c->fdes)))
			return -ENOMEM;
		c->fdes[c->n_fdes++] = f;
	}
	return 0;
}

/*
 * On sorted FDEs: mark the entry point's, and start each signal frame one
 * byte early when no other FDE holds that byte (the walker looks return
 * addresses up at pc - 1, and the kernel "returns" to __restore_rt's first
 * byte).  Starts stay sorted: the byte was below every later start.
 */
static void mark_fdes(struct eh_ctx *c)
{
	__u64 max_end = 0;
	size_t i;

	for (i = 0; i < c->n_fdes; i++) {
		struct fde *f = &c->fdes[i];
		bool sig = !(f->flags & (FDE_PLT_STUBS | FDE_ENTRY_STUB)) &&
			   c->cies[f->cie].signal;

		if (c->in->entry && f->start <= c->in->entry &&
		    c->in->entry < f->end)
			f->flags |= FDE_ENTRY;
		if (sig && f->start && max_end < f->start)
			f->start--;
		if (f->end > max_end)
			max_end = f->end;
	}
}

/* Row addresses are 32 bits from base (bpf/unwind/uwtable.h). */
static int choose_base(struct eh_ctx *c)
{
	__u64 max_end = 0;
	size_t i;

	for (i = 0; i < c->n_fdes; i++) {
		if (c->fdes[i].end > max_end)
			max_end = c->fdes[i].end;
	}
	c->base = 0;
	if (max_end <= UINT32_MAX)
		return 0;
	c->base = c->fdes[0].start;
	return max_end - c->base <= UINT32_MAX ? 0 : -EFBIG;
}

/* The rows of one FDE over [f->start, end). */
static int emit_fde(struct eh_ctx *c, const struct fde *f, __u64 end)
{
	const struct cie *cie;
	struct cfi_run x = { .c = c, .loc = f->start, .end = end };
	struct rd r;
	int err;

	if (f->flags & FDE_PLT_STUBS)
		return push_row(c, f->start, RULE_PLT_STUB);
	/* The entry point (_start): the outermost frame, whatever its CFI. */
	if (f->flags & FDE_ENTRY)
		return push_row(c, f->start, RULE_STOP);
	cie = &c->cies[f->cie];
	if (cie->signal)
		return push_row(c, f->start, RULE_SIGRET);
	if (cie->status != CIE_OK)
		return push_row(c, f->start, RULE_UNSUP);
	x.cie = cie;
	x.init = &cie->init;
	x.st = cie->init;
	r = (struct rd){ .buf = c->in->sec, .pos = f->insn_off,
			 .end = (size_t)f->insn_off + f->insn_len };
	err = run_program(&x, &r);
	/* The linker's PLT FDEs say nothing of how the code was compiled. */
	if (x.cfa_changed && !x.plt_seen)
		c->out->n_nontrivial_fdes++;
	if (x.fp_seen && !x.plt_seen)
		c->out->n_fp_fdes++;
	return err;
}

/*
 * glibc's clone and clone3 end their FDE before the syscall and start
 * another, whose return address is undefined, where the child goes on:
 * between the two, the parent's frame is that of the FDE before, the
 * child's the outermost.  A row of UW_OP_CLONE, with the rule in force,
 * lets the walker tell them apart (by rax); first is the index of the
 * next FDE's first row, gap the address the previous one ended at.
 */
static int mark_clone_gap(struct eh_ctx *c, size_t first, __u64 gap)
{
	__u32 before;

	if (!first || first >= c->n_rows || c->rows[first].rule != RULE_STOP ||
	    c->rows[first - 1].addr >= (__u32)(gap - c->base))
		return 0;
	before = c->rows[first - 1].rule;
	if (uw_rule_op(before) != UW_OP_CFA_SP)
		return 0;
	if (util__grow_array((void **)&c->rows, &c->cap_rows, c->n_rows + 1,
			     sizeof(*c->rows)))
		return -ENOMEM;
	memmove(&c->rows[first + 1], &c->rows[first], (c->n_rows - first) * sizeof(*c->rows));
	c->rows[first].addr = (__u32)(gap - c->base);
	c->rows[first].rule = (before & ~0xfu) | UW_OP_CLONE;
	c->n_rows++;
	return 0;
}

/*
 * Each FDE in address order, cut where the next one starts (the later
 * start wins), then a GAP row at its end unless the next one starts
 * within GAP_SLACK bytes (alignment padding between functions, or
 * mark_clone_gap()'s few bytes).
 */
static int emit_rows(struct eh_ctx *c)
{
	__u64 prev_end = 0;
	size_t i;
	int err;

	for (i = 0; i < c->n_fdes; i++) {
		const struct fde *f = &c->fdes[i];
		__u64 end = f->end, next = UINT64_MAX;
		size_t first = c->n_rows;

		if (i + 1 < c->n_fdes)
			next = c->fdes[i + 1].start;
		if (next < end) {
			end = next;
			c->out->n_overlaps++;
		}
		if (end <= f->start)
			continue;	/* hidden by one at the same start */
		err = emit_fde(c, f, end);
		if (!err && prev_end && prev_end < f->start && !(f->flags & FDE_ENTRY))
			err = mark_clone_gap(c, first, prev_end);
		prev_end = next - end > GAP_SLACK ? 0 : end;
		if (!err && !prev_end)
			err = push_row(c, end, RULE_GAP);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The classifier: FP-built when every non-trivial FDE is an FP frame.
 * Only then may the whole object be walked by frame pointer (auto): one
 * function that uses rbp for something else breaks every walk through it.
 */
static void classify(struct uw_table *t)
{
	/*
	 * Measured on Debian 12 (tests/unit/unwind/test_ehframe.c prints them):
	 * the workloads built with -fno-omit-frame-pointer have 100% of
	 * their non-trivial FDEs FP-style (burn 5/5, cxxburn 4/4), the
	 * -fomit-frame-pointer build 0% (burn-nofp 0/2); Debian's libc
	 * 4.2% (94/2253), ld.so 9.0% (18/201), libstdc++ 3.8% (126/3346),
	 * an interpreter binary 0.01% (1/8451): the hand-written assembly and
	 * the few functions that need a frame pointer (alloca, VLAs).  A Rust
	 * release build mixes both in one object: its standard library has
	 * frame pointers and its own code not (rustburn 417/445, 94%).  Such
	 * an object gets its table, whose rows walk each function by its own
	 * rule: FP frames by rbp, the others by rsp.
	 */
	t->fp_built = t->n_nontrivial_fdes && t->n_fp_fdes == t->n_nontrivial_fdes;
}

static void count_unsupported(struct uw_table *t)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++) {
		if (uw_rule_op(t->rows[i].rule) == UW_OP_UNSUPPORTED)
			t->n_unsupported++;
	}
}

/*
 * The entry point when no FDE holds it (ld.so's _start, hand-written, has
 * none): the outermost frame all the same, the kernel jumped there with
 * nothing above.  From the entry to the next FDE, ENTRY_STUB_MAX bytes
 * at most: ld.so's startup code is 61.
 */
#define ENTRY_STUB_MAX 256

static int add_entry_stub(struct eh_ctx *c)
{
	__u64 entry = c->in->entry;
	struct fde f = { .start = entry, .end = entry + ENTRY_STUB_MAX,
			 .insn_off = UINT32_MAX, .flags = FDE_ENTRY | FDE_ENTRY_STUB };
	size_t i;

	if (!entry)
		return 0;
	for (i = 0; i < c->n_fdes; i++) {
		if (c->fdes[i].start <= entry && entry < c->fdes[i].end)
			return 0;
		if (c->fdes[i].start > entry && c->fdes[i].start < f.end)
			f.end = c->fdes[i].start;
	}
	if (util__grow_array((void **)&c->fdes, &c->cap_fdes, c->n_fdes + 1, sizeof(*c->fdes)))
		return -ENOMEM;
	c->fdes[c->n_fdes++] = f;
	return 0;
}

static int compile(const struct eh_input *in, struct uw_table *out)
{
	struct eh_ctx c = { .in = in, .out = out };
	struct uw_row *shrunk;
	int err;

	err = read_entries(&c);
	if (!err)
		err = add_plt_stubs(&c);
	if (!err && c.n_fdes)
		err = add_entry_stub(&c);
	if (err)
		goto out;
	if (c.n_fdes) {
		qsort(c.fdes, c.n_fdes, sizeof(*c.fdes), cmp_fde);
		mark_fdes(&c);
		err = choose_base(&c);
	}
	if (!err)
		err = emit_rows(&c);
	if (err)
		goto out;
	shrunk = c.n_rows ? realloc(c.rows, c.n_rows * sizeof(*c.rows)) : NULL;
	if (shrunk)
		c.rows = shrunk;
	out->rows = c.rows;
	out->n_rows = c.n_rows;
	out->base = c.base;
	c.rows = NULL;
	count_unsupported(out);
	classify(out);
out:
	free(c.rows);
	free(c.cies);
	free(c.fdes);
	return err;
}

/* --- The ELF file --- */

/* [start, end) of the PLT sections, for the stubs no FDE covers. */
static void find_plt_sections(Elf *elf, struct eh_input *in)
{
	static const char *const names[MAX_PLT_SECTIONS] = {
		".plt", ".plt.got", ".plt.sec",
	};
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t i;

	for (i = 0; i < MAX_PLT_SECTIONS; i++) {
		if (elf_file__section_by_name(elf, names[i], &scn, &sh) ||
		    sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		in->plt[in->n_plt].start = sh.sh_addr;
		in->plt[in->n_plt].end = sh.sh_addr + sh.sh_size;
		in->n_plt++;
	}
}

/* .eh_frame by its section header. */
static int from_section(Elf *elf, struct eh_input *in)
{
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	int err;

	err = elf_file__section_by_name(elf, ".eh_frame", &scn, &sh);
	if (err)
		return err;
	if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
		return -ENOENT;	/* a debug file's: no table */
	if (sh.sh_size > CAP_SECTION_BYTES)
		return -EFBIG;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size != sh.sh_size)
		return -EIO;	/* outside the file, or truncated under us */
	in->sec = data->d_buf;
	in->len = data->d_size;
	in->vaddr = sh.sh_addr;
	return 0;
}

/* The PT_LOAD segment's bytes from vaddr on, up to the section cap. */
static int from_load(Elf *elf, size_t n_ph, __u64 vaddr, struct eh_input *in)
{
	Elf_Data *data;
	GElf_Phdr ph;
	__u64 len;
	size_t i;

	for (i = 0; i < n_ph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		len = ph.p_filesz - (vaddr - ph.p_vaddr);
		if (len > CAP_SECTION_BYTES)
			len = CAP_SECTION_BYTES;	/* the terminator is before */
		if (ph.p_offset + (vaddr - ph.p_vaddr) > INT64_MAX)
			return -ENOENT;
		data = elf_getdata_rawchunk(elf,
				(int64_t)(ph.p_offset + (vaddr - ph.p_vaddr)),
				len, ELF_T_BYTE);
		if (!data || !data->d_buf)
			return -EIO;
		in->sec = data->d_buf;
		in->len = data->d_size;
		in->vaddr = vaddr;
		return 0;
	}
	return -ENOENT;
}

/*
 * No section headers: .eh_frame_hdr (PT_GNU_EH_FRAME) points at
 * .eh_frame, which runs to its zero terminator, inside a PT_LOAD.
 */
static int from_eh_frame_hdr(Elf *elf, struct eh_input *in)
{
	Elf_Data *data = NULL;
	struct rd r;
	GElf_Phdr ph;
	size_t i, n;
	__u64 ptr;
	__u8 enc;

	if (elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (i = 0; i < n && !data; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) ||
		    ph.p_type != PT_GNU_EH_FRAME || ph.p_offset > INT64_MAX)
			continue;
		/* version, 3 encodings, then eh_frame_ptr: 12 bytes at most */
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					    ph.p_filesz < 12 ? ph.p_filesz : 12,
					    ELF_T_BYTE);
	}
	if (!data || !data->d_buf)
		return -ENOENT;
	r = (struct rd){ .buf = data->d_buf, .end = data->d_size };
	if (rd_uint(&r, 1) != 1)
		return -ENOENT;
	enc = (__u8)rd_uint(&r, 1);	/* eh_frame_ptr's */
	r.pos = 4;
	if (r.bad || rd_pointer(&r, enc, ph.p_vaddr, &ptr))
		return -ENOENT;
	return from_load(elf, n, ptr, in);
}

static int check_header(Elf *elf, GElf_Ehdr *eh)
{
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, eh) || eh->e_machine != EM_X86_64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -ENOEXEC;
	return 0;
}

static int build_elf(Elf *elf, struct uw_table *out)
{
	struct eh_input in = {};
	GElf_Ehdr eh;
	size_t n_sh;
	int err;

	err = check_header(elf, &eh);
	if (err)
		return err;
	in.entry = eh.e_entry;
	if (elf_getshdrnum(elf, &n_sh))
		return -ENOEXEC;
	if (n_sh) {
		err = from_section(elf, &in);
		find_plt_sections(elf, &in);
	} else {
		err = from_eh_frame_hdr(elf, &in);
	}
	if (err)
		return err;
	return compile(&in, out);
}

static int build(int fd, void *image, size_t size, struct uw_table *out)
{
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	elf = elf_file__begin(fd, image, size);
	if (!elf)
		return -errno;
	err = build_elf(elf, out);
	elf_end(elf);
	if (err)
		ehframe__free(out);
	return err;
}

int ehframe__build_fd(int fd, struct uw_table *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return build(fd, NULL, 0, out);
}

int ehframe__build_mem(const void *image, size_t size, struct uw_table *out)
{
	const unsigned char *e = image;

	memset(out, 0, sizeof(*out));
	/*
	 * libelf converts a foreign-endian file's data in place; checked
	 * first, a native one is only read, so the cast is safe.
	 */
	if (size < EI_NIDENT || memcmp(e, ELFMAG, SELFMAG) ||
	    e[EI_CLASS] != ELFCLASS64 || e[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	return build(-1, (void *)image, size, out);
}

void ehframe__free(struct uw_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct uw_row *ehframe__find(const struct uw_table *t, __u32 addr)
{
	size_t lo = 0, hi = t->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
