// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk/format.h"

enum op_kind { OP_LIT, OP_FIELD };

struct fmt_op {
	enum op_kind kind;
	char field;
	int width; /* -1: none */
	int left;
	size_t off, len; /* literal text in f->text */
};

struct blk_format {
	struct fmt_op *ops;
	size_t nops;
	char *text;
	int needs_elapsed;
	int needs_wall;
};

#define NS_PER_SEC 1000000000ull

static int add_op(struct blk_format *f, size_t *cap, const struct fmt_op *op)
{
	if (f->nops == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct fmt_op *n = realloc(f->ops, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->ops = n;
		*cap = nc;
	}
	f->ops[f->nops++] = *op;
	return 0;
}

struct blk_format *blk_format_compile(const char *spec, char *err, size_t errlen)
{
	struct blk_format *f = calloc(1, sizeof(*f));
	size_t cap = 0, tl = 0;
	const char *p = spec;
	struct fmt_op lit = {.kind = OP_LIT};

	if (!f || !(f->text = malloc(strlen(spec) + 1))) {
		free(f);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	lit.off = 0;
#define FLUSH_LIT()                                \
	do {                                       \
		if (tl > lit.off) {                \
			lit.len = tl - lit.off;    \
			if (add_op(f, &cap, &lit)) \
				goto nomem;        \
		}                                  \
		lit.off = tl;                      \
	} while (0)
	while (*p) {
		if (*p == '%') {
			struct fmt_op op = {.kind = OP_FIELD, .width = -1};

			p++;
			if (*p == '%') {
				f->text[tl++] = '%';
				p++;
				continue;
			}
			if (!*p) {
				f->text[tl++] = '%';
				continue;
			}
			if (*p == '-') {
				op.left = 1;
				p++;
			}
			if (*p >= '0' && *p <= '9') {
				op.width = 0;
				while (*p >= '0' && *p <= '9') {
					if (op.width < 100000)
						op.width = op.width * 10 + (*p - '0');
					p++;
				}
			}
			if (!*p)
				break;
			op.field = *p++;
			if (op.field == 'u')
				f->needs_elapsed = 1;
			if (op.field == 'z')
				f->needs_wall = 1;
			FLUSH_LIT();
			if (add_op(f, &cap, &op))
				goto nomem;
			continue;
		}
		if (*p == '\\') {
			switch (p[1]) {
			case 'b':
				f->text[tl++] = '\b';
				break;
			case 'n':
				f->text[tl++] = '\n';
				break;
			case 'r':
				f->text[tl++] = '\r';
				break;
			case 't':
				f->text[tl++] = '\t';
				break;
			default:
				snprintf(
					err, errlen,
					"invalid escape char in format: '\\%c' (known: \\b \\n \\r \\t)",
					p[1] ? p[1] : ' ');
				blk_format_free(f);
				return NULL;
			}
			p += 2;
			continue;
		}
		f->text[tl++] = *p++;
	}
	FLUSH_LIT();
#undef FLUSH_LIT
	return f;
nomem:
	blk_format_free(f);
	snprintf(err, errlen, "out of memory");
	return NULL;
}

void blk_format_free(struct blk_format *f)
{
	if (!f)
		return;
	free(f->ops);
	free(f->text);
	free(f);
}

int blk_format_needs_elapsed(const struct blk_format *f)
{
	return f->needs_elapsed;
}

int blk_format_needs_wall(const struct blk_format *f)
{
	return f->needs_wall;
}

void blk_format_pdu_hex(struct blk_strbuf *sb, const unsigned char *p, unsigned int len)
{
	static const char hex[] = "0123456789abcdef";

	for (unsigned int i = 0; i < len; i++) {
		if (i)
			blk_strbuf_addch(sb, ' ');
		blk_strbuf_addch(sb, hex[p[i] >> 4]);
		blk_strbuf_addch(sb, hex[p[i] & 15]);
		if (!p[i]) {
			unsigned int j = i;

			while (j < len && !p[j])
				j++;
			if (j == len) {
				blk_strbuf_add(sb, " ..", 3);
				break;
			}
		}
	}
}

void blk_format_wall(struct blk_strbuf *sb, const struct blk_fmt_ctx *c, uint64_t t)
{
	time_t sec = (time_t)(c->wall_sec + (int64_t)(t / NS_PER_SEC));
	unsigned long nsec = (unsigned long)c->wall_nsec + (unsigned long)(t % NS_PER_SEC);
	struct tm tm;

	if (nsec >= NS_PER_SEC) {
		nsec -= NS_PER_SEC;
		sec++;
	}
	if (!localtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));
	blk_strbuf_addf(sb, "%02u:%02u:%02u.%06lu", tm.tm_hour, tm.tm_min, tm.tm_sec, nsec / 1000);
}

static inline int pad_flags(const struct fmt_op *op)
{
	return op->left ? BLK_PAD_LEFT : 0;
}

static void put_str(struct blk_strbuf *sb, const char *s, const struct fmt_op *op)
{
	if (!s)
		s = "(null)";
	blk_strbuf_add_padded(sb, s, strlen(s), op->width, pad_flags(op));
}

/* "%3d,%-3d" */
static void put_devno(struct blk_strbuf *sb, uint32_t dev)
{
	blk_strbuf_add_s64(sb, (int)BLK_MAJOR(dev), 3, 0);
	blk_strbuf_addch(sb, ',');
	blk_strbuf_add_s64(sb, (int)BLK_MINOR(dev), 3, BLK_PAD_LEFT);
}

/* %o, %O (the origin's pid, name), %f, %F (the file, the offset into it): "-" when not known */
static void put_origin(struct blk_strbuf *sb, const struct blk_fmt_origin *o,
		       const struct fmt_op *op)
{
	char tmp[32];
	int n;

	if (!o || (op->field == 'o' || op->field == 'O' ? !o->name : !o->has_file)) {
		put_str(sb, "-", op);
		return;
	}
	switch (op->field) {
	case 'o':
		blk_strbuf_add_u64(sb, o->pid, op->width, pad_flags(op));
		return;
	case 'O':
		put_str(sb, o->name, op);
		return;
	case 'F':
		blk_strbuf_add_u64(sb, o->offset, op->width, pad_flags(op));
		return;
	}
	if (o->path) {
		put_str(sb, o->path, op);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "ino %llu", (unsigned long long)o->ino);
	blk_strbuf_add_padded(sb, tmp, (size_t)n, op->width, pad_flags(op));
}

int blk_format_render(const struct blk_format *f, const struct blk_event *ev,
		      const struct blk_fmt_ctx *c, struct blk_strbuf *sb)
{
	for (size_t i = 0; i < f->nops; i++) {
		const struct fmt_op *op = &f->ops[i];
		int fl = pad_flags(op);

		if (op->kind == OP_LIT) {
			blk_strbuf_add(sb, f->text + op->off, op->len);
			continue;
		}
		switch (op->field) {
		case 'a':
			put_str(sb, c->act, op);
			break;
		case 'c':
			blk_strbuf_add_s64(sb, c->cpu, op->width, fl);
			break;
		case 'C':
			put_str(sb, c->comm, op);
			break;
		case 'd': {
			char rwbs[BLK_RWBS_LEN];

			blk_event_rwbs(ev, rwbs);
			put_str(sb, rwbs, op);
			break;
		}
		case 'D':
			put_devno(sb, ev->device);
			break;
		case 'e':
			blk_strbuf_add_s64(sb, ev->error, op->width, fl);
			break;
		case 'g': {
			char tmp[24];
			int n = snprintf(tmp, sizeof(tmp), "%x,%x", c->cg_ino, c->cg_gen);

			blk_strbuf_add_padded(sb, tmp, (size_t)n, op->width, fl);
			break;
		}
		case 'G': {
			/* the cgroup's path, else its id in decimal, else "-" (no cgroup) */
			uint64_t id = (uint64_t)c->cg_gen << 32 | c->cg_ino;

			if (c->cg_path)
				put_str(sb, c->cg_path, op);
			else if (id)
				blk_strbuf_add_u64(sb, id, op->width, fl);
			else
				put_str(sb, "-", op);
			break;
		}
		case 'o':
		case 'O':
		case 'f':
		case 'F':
			put_origin(sb, c->origin, op);
			break;
		case 'M':
			blk_strbuf_add_s64(sb, (int)BLK_MAJOR(ev->device), op->width, fl);
			break;
		case 'm':
			blk_strbuf_add_s64(sb, (int)BLK_MINOR(ev->device), op->width, fl);
			break;
		case 'n':
			blk_strbuf_add_u64(sb, blk_event_sectors(ev), op->width, fl);
			break;
		case 'N':
			blk_strbuf_add_u64(sb, ev->bytes, op->width, fl);
			break;
		case 'p':
			blk_strbuf_add_u64(sb, ev->pid, op->width, fl);
			break;
		case 'P':
			if (c->pc_pdu && c->pc_pdu_len)
				blk_format_pdu_hex(sb, c->pc_pdu, c->pc_pdu_len);
			break;
		case 's':
			blk_strbuf_add_s64(sb, ev->sequence, op->width, fl);
			break;
		case 'S':
			blk_strbuf_add_u64(sb, ev->sector, op->width, fl);
			break;
		case 't':
			/* always zero-padded; the width defaults to 9 and '-' is ignored */
			blk_strbuf_add_u64(sb, ev->time % NS_PER_SEC,
					   op->width >= 0 ? op->width : 9, BLK_PAD_ZERO);
			break;
		case 'T':
			blk_strbuf_add_s64(sb, (int)(uint32_t)(ev->time / NS_PER_SEC), op->width,
					   fl);
			break;
		case 'u':
			if (c->elapsed == BLK_NO_ELAPSED)
				return -EINVAL;
			blk_strbuf_add_u64(sb, c->elapsed / 1000, op->width, fl);
			break;
		case 'U':
			blk_strbuf_add_u64(sb, (uint32_t)blk_event_pdu_u64(ev), op->width, fl);
			break;
		case 'z': {
			struct blk_strbuf tmp = BLK_STRBUF_INIT;

			blk_format_wall(&tmp, c, ev->time);
			blk_strbuf_add_padded(sb, tmp.buf, tmp.len, op->width, fl);
			blk_strbuf_release(&tmp);
			break;
		}
		default: {
			char ch = op->field;

			blk_strbuf_add_padded(sb, &ch, 1, op->width, fl);
			break;
		}
		}
	}
	return 0;
}

static const char spaces8[8] = "        ";

/*
 * @v right-aligned in @width; the padding is written eight bytes at a time, so up to eight
 * bytes from @p may be written (a line's reservation has room for them).
 */
static inline char *put_right(char *p, uint64_t v, int width)
{
	int n = blk_ndigits(v);

	if (width > n) {
		if (width - n <= 8)
			memcpy(p, spaces8, 8);
		else
			memset(p, ' ', (size_t)(width - n));
		p += width - n;
	}
	blk_put_digits(p + n, v, n);
	return p + n;
}

/* signed @v right-aligned in @width (the same eight bytes of room) */
static inline char *put_right_s(char *p, int64_t v, int width)
{
	return v >= 0 ? put_right(p, (uint64_t)v, width) : blk_put_s64(p, v, width);
}

/* "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s ": the default header, at @p */
static char *put_header(char *p, const struct blk_event *ev, const struct blk_fmt_ctx *c,
			size_t alen, const char *rwbs, size_t rlen)
{
	uint64_t sec = ev->time / NS_PER_SEC;
	int n;

	p = put_right(p, BLK_MAJOR(ev->device), 3);
	*p++ = ',';
	n = blk_ndigits(BLK_MINOR(ev->device));
	blk_put_digits(p + n, BLK_MINOR(ev->device), n);
	p += n;
	memcpy(p, spaces8, 4);
	p += n < 3 ? 4 - n : 1;
	p = put_right_s(p, c->cpu, 2);
	*p++ = ' ';
	p = put_right_s(p, (int)ev->sequence, 8);
	*p++ = ' ';
	p = put_right_s(p, (int)(uint32_t)sec, 5);
	*p++ = '.';
	blk_put_digits(p + 9, ev->time - sec * NS_PER_SEC, 9);
	p += 9;
	*p++ = ' ';
	p = put_right(p, ev->pid, 5);
	*p++ = ' ';
	for (size_t i = alen; i < 2; i++)
		*p++ = ' ';
	memcpy(p, c->act, alen);
	p += alen;
	*p++ = ' ';
	for (size_t i = rlen; i < 3; i++)
		*p++ = ' ';
	memcpy(p, rwbs, rlen);
	p += rlen;
	*p++ = ' ';
	return p;
}

/* the longest default line without a PC payload, besides the action and process names */
#define LINE_MAX_FIXED 256

void blk_format_header(const struct blk_event *ev, const struct blk_fmt_ctx *c, const char *rwbs,
		       struct blk_strbuf *sb)
{
	size_t alen = strlen(c->act), rlen = strlen(rwbs);
	char *p = blk_strbuf_reserve(sb, LINE_MAX_FIXED + alen + rlen);

	sb->len += (size_t)(put_header(p, ev, c, alen, rwbs, rlen) - p);
}

static char *put_comm(char *p, const char *comm, size_t clen)
{
	*p++ = '[';
	memcpy(p, comm, clen);
	p += clen;
	*p++ = ']';
	return p;
}

/* "%llu + %u" */
static char *put_sector_n(char *p, const struct blk_event *ev)
{
	int n = blk_ndigits(ev->sector);

	blk_put_digits(p + n, ev->sector, n);
	p += n;
	memcpy(p, " + ", 3);
	p += 3;
	n = blk_ndigits(blk_event_sectors(ev));
	blk_put_digits(p + n, blk_event_sectors(ev), n);
	return p + n;
}

/* "(%8llu) " */
static char *put_elapsed(char *p, uint64_t e)
{
	*p++ = '(';
	p = put_right(p, e, 8);
	*p++ = ')';
	*p++ = ' ';
	return p;
}

/* The R, C, D, I, Q and B lines of a PC (SCSI pass-through) request: a payload in hex. */
static void default_pc(const struct blk_event *ev, const struct blk_fmt_ctx *c,
		       struct blk_strbuf *sb, const char *comm, size_t clen)
{
	char *p;

	if (c->act[0] != 'R' && c->act[0] != 'C') {
		blk_strbuf_add_u64(sb, ev->bytes, 0, 0);
		blk_strbuf_addch(sb, ' ');
	}
	if (c->pc_pdu && c->pc_pdu_len) {
		blk_strbuf_addch(sb, '(');
		blk_format_pdu_hex(sb, c->pc_pdu, c->pc_pdu_len);
		blk_strbuf_add(sb, ") ", 2);
	}
	p = blk_strbuf_reserve(sb, 32 + clen);
	if (c->act[0] == 'R' || c->act[0] == 'C') {
		*p++ = '[';
		p = blk_put_s64(p, ev->error, 0);
		*p++ = ']';
	} else {
		p = put_comm(p, comm, clen);
	}
	*p++ = '\n';
	sb->len = (size_t)(p - sb->buf);
}

/* the length of an action ("Q", "UT"): no call for one or two bytes */
static inline size_t act_len(const char *s)
{
	return !s[0] ? 0 : !s[1] ? 1 : !s[2] ? 2 : 2 + strlen(s + 2);
}

void blk_format_default(const struct blk_event *ev, const struct blk_fmt_ctx *c,
			struct blk_strbuf *sb)
{
	char rwbs[BLK_RWBS_LEN], *p;
	const char *comm = c->comm ? c->comm : "(null)";
	size_t alen = act_len(c->act), clen = strlen(comm);
	size_t rlen = (size_t)blk_event_rwbs(ev, rwbs);
	unsigned int n = blk_event_sectors(ev);

	p = blk_strbuf_reserve(sb, LINE_MAX_FIXED + alen + rlen + clen);
	p = put_header(p, ev, c, alen, rwbs, rlen);
	if (blk_event_has_cat(ev, BLK_TC_PC)) {
		switch (c->act[0]) {
		case 'R':
		case 'C':
		case 'D':
		case 'I':
		case 'Q':
		case 'B':
			sb->len = (size_t)(p - sb->buf);
			default_pc(ev, c, sb, comm, clen);
			return;
		default:
			break;
		}
	}
	switch (c->act[0]) {
	case 'R':
	case 'C':
		if (n)
			p = put_sector_n(p, ev);
		else
			p = blk_put_u64(p, ev->sector, 0, ' ');
		*p++ = ' ';
		if (c->elapsed != BLK_NO_ELAPSED)
			p = put_elapsed(p, c->elapsed);
		*p++ = '[';
		p = blk_put_s64(p, ev->error, 0);
		*p++ = ']';
		break;
	case 'D':
	case 'I':
	case 'Q':
	case 'B':
		if (n) {
			p = put_sector_n(p, ev);
			*p++ = ' ';
		}
		if (c->elapsed != BLK_NO_ELAPSED)
			p = put_elapsed(p, c->elapsed);
		p = put_comm(p, comm, clen);
		break;
	case 'M':
	case 'F':
	case 'G':
	case 'S':
		if (n) {
			p = put_sector_n(p, ev);
			*p++ = ' ';
		}
		p = put_comm(p, comm, clen);
		break;
	case 'P':
		p = put_comm(p, comm, clen);
		break;
	case 'U':
		p = put_comm(p, comm, clen);
		*p++ = ' ';
		p = blk_put_u64(p, (uint32_t)blk_event_pdu_u64(ev), 0, ' ');
		break;
	case 'A': {
		struct blk_io_trace_remap r;

		blk_event_remap(ev, &r);
		p = put_sector_n(p, ev);
		memcpy(p, " <- (", 5);
		p += 5;
		p = blk_put_s64(p, (int)BLK_MAJOR(r.device_from), 0);
		*p++ = ',';
		p = blk_put_s64(p, (int)BLK_MINOR(r.device_from), 0);
		*p++ = ')';
		*p++ = ' ';
		p = blk_put_u64(p, r.sector_from, 0, ' ');
		break;
	}
	case 'X':
		p = blk_put_u64(p, ev->sector, 0, ' ');
		memcpy(p, " / ", 3);
		p += 3;
		p = blk_put_u64(p, (uint32_t)blk_event_pdu_u64(ev), 0, ' ');
		*p++ = ' ';
		p = put_comm(p, comm, clen);
		break;
	case 'Z':
		/* v2 zone plug/unplug: like P and U */
		p = put_comm(p, comm, clen);
		if (c->act[1] == 'U') {
			*p++ = ' ';
			p = blk_put_u64(p, (uint32_t)blk_event_pdu_u64(ev), 0, ' ');
		}
		break;
	default:
		break;
	}
	*p++ = '\n';
	sb->len = (size_t)(p - sb->buf);
}
