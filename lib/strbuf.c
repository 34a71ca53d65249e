// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "blk/strbuf.h"

const char blk_digits2[200] = "00010203040506070809"
			      "10111213141516171819"
			      "20212223242526272829"
			      "30313233343536373839"
			      "40414243444546474849"
			      "50515253545556575859"
			      "60616263646566676869"
			      "70717273747576777879"
			      "80818283848586878889"
			      "90919293949596979899";

void blk_strbuf_grow(struct blk_strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;
	size_t n = sb->alloc ? sb->alloc : 256;
	char *p;

	while (n < want)
		n *= 2;
	p = realloc(sb->buf, n);
	if (!p)
		abort();
	sb->buf = p;
	sb->alloc = n;
}

void blk_strbuf_add_padded(struct blk_strbuf *sb, const char *s, size_t n, int width, int flags)
{
	size_t pad = (width > 0 && (size_t)width > n) ? (size_t)width - n : 0;

	if (sb->alloc - sb->len < n + pad + 1)
		blk_strbuf_grow(sb, n + pad);
	if (!(flags & BLK_PAD_LEFT)) {
		memset(sb->buf + sb->len, (flags & BLK_PAD_ZERO) ? '0' : ' ', pad);
		sb->len += pad;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	if (flags & BLK_PAD_LEFT) {
		memset(sb->buf + sb->len, ' ', pad);
		sb->len += pad;
	}
}

/* @v's @n digits (after @sign, if any) padded to @width as printf's %d/%-d/%0d would */
static void add_num(struct blk_strbuf *sb, uint64_t v, int n, int sign, int width, int flags)
{
	int len = n + sign, pad = width > len ? width - len : 0;
	char *p = blk_strbuf_reserve(sb, (size_t)(len + pad));

	if (flags & BLK_PAD_LEFT) {
		if (sign)
			*p++ = '-';
		blk_put_digits(p + n, v, n);
		memset(p + n, ' ', (size_t)pad);
	} else if (flags & BLK_PAD_ZERO) {
		/* printf puts the sign before the zeros */
		if (sign)
			*p++ = '-';
		blk_put_digits(p + n + pad, v, n + pad);
	} else {
		memset(p, ' ', (size_t)pad);
		p += pad;
		if (sign)
			*p++ = '-';
		blk_put_digits(p + n, v, n);
	}
	sb->len += (size_t)(len + pad);
}

void blk_strbuf_add_u64(struct blk_strbuf *sb, uint64_t v, int width, int flags)
{
	add_num(sb, v, blk_ndigits(v), 0, width, flags);
}

void blk_strbuf_add_s64(struct blk_strbuf *sb, int64_t v, int width, int flags)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	add_num(sb, u, blk_ndigits(u), v < 0, width, flags);
}

void blk_strbuf_vaddf(struct blk_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, sb->buf ? sb->alloc - sb->len : 0, fmt,
		      cp);
	va_end(cp);
	if (n < 0)
		return;
	if (!sb->buf || (size_t)n >= sb->alloc - sb->len) {
		blk_strbuf_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void blk_strbuf_addf(struct blk_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	blk_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void blk_strbuf_release(struct blk_strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}
