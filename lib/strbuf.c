// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "blk/strbuf.h"

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

static size_t fmt_u64(char *end, uint64_t v)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return (size_t)(end - p);
}

void blk_strbuf_add_u64(struct blk_strbuf *sb, uint64_t v, int width, int flags)
{
	char tmp[24];
	size_t n = fmt_u64(tmp + sizeof(tmp), v);

	blk_strbuf_add_padded(sb, tmp + sizeof(tmp) - n, n, width, flags);
}

void blk_strbuf_add_s64(struct blk_strbuf *sb, int64_t v, int width, int flags)
{
	char tmp[24];
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t n = fmt_u64(tmp + sizeof(tmp), u);

	if (v < 0) {
		if (flags & BLK_PAD_ZERO) {
			/* printf puts the sign before the zeros */
			blk_strbuf_addch(sb, '-');
			blk_strbuf_add_padded(sb, tmp + sizeof(tmp) - n, n, width - 1, flags);
			return;
		}
		tmp[sizeof(tmp) - n - 1] = '-';
		n++;
	}
	blk_strbuf_add_padded(sb, tmp + sizeof(tmp) - n, n, width, flags);
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
