/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable byte buffer with a small, fast integer formatter (no stdio on hot paths).
 */
#ifndef BLK_STRBUF_H
#define BLK_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct blk_strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};
#define BLK_STRBUF_INIT    \
	{                  \
		NULL, 0, 0 \
	}

enum blk_pad_flags {
	BLK_PAD_LEFT = 1 << 0, /* left-align (pad on the right) */
	BLK_PAD_ZERO = 1 << 1, /* pad with zeros instead of spaces */
};

/* Make room for @extra more bytes plus a NUL. Aborts on allocation failure. */
void blk_strbuf_grow(struct blk_strbuf *sb, size_t extra);

static inline void blk_strbuf_add(struct blk_strbuf *sb, const void *p, size_t n)
{
	if (sb->alloc - sb->len < n + 1)
		blk_strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
}

static inline void blk_strbuf_addch(struct blk_strbuf *sb, char c)
{
	if (sb->alloc - sb->len < 2)
		blk_strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
}

static inline void blk_strbuf_addstr(struct blk_strbuf *sb, const char *s)
{
	blk_strbuf_add(sb, s, strlen(s));
}

/* Make sure @n more bytes fit without further checks (for the raw writers below). */
static inline char *blk_strbuf_reserve(struct blk_strbuf *sb, size_t n)
{
	if (sb->alloc - sb->len < n + 1)
		blk_strbuf_grow(sb, n);
	return sb->buf + sb->len;
}

/* Write @v in decimal at @p, right-aligned in @width (space or zero padded). Return end. */
static inline char *blk_put_u64(char *p, uint64_t v, int width, char pad)
{
	char tmp[24], *t = tmp + sizeof(tmp);
	int n;

	do {
		*--t = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	n = (int)(tmp + sizeof(tmp) - t);
	for (; width > n; width--)
		*p++ = pad;
	while (t < tmp + sizeof(tmp))
		*p++ = *t++;
	return p;
}

/* Write @v left-aligned in @width. Return end. */
static inline char *blk_put_u64_left(char *p, uint64_t v, int width)
{
	char *start = p;

	p = blk_put_u64(p, v, 0, ' ');
	while (p - start < width)
		*p++ = ' ';
	return p;
}

/* Write signed @v right-aligned in @width. Return end. */
static inline char *blk_put_s64(char *p, int64_t v, int width)
{
	if (v >= 0)
		return blk_put_u64(p, (uint64_t)v, width, ' ');
	{
		char tmp[24], *t = tmp + sizeof(tmp);
		uint64_t u = (uint64_t)0 - (uint64_t)v;
		int n;

		do {
			*--t = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		*--t = '-';
		n = (int)(tmp + sizeof(tmp) - t);
		for (; width > n; width--)
			*p++ = ' ';
		while (t < tmp + sizeof(tmp))
			*p++ = *t++;
		return p;
	}
}

/* Write string @s right-aligned in @width. Return end. */
static inline char *blk_put_str(char *p, const char *s, int width)
{
	int n = 0;

	while (s[n])
		n++;
	for (; width > n; width--)
		*p++ = ' ';
	while (*s)
		*p++ = *s++;
	return p;
}

/* Append @s padded to @width as printf's %s / %-s would. */
void blk_strbuf_add_padded(struct blk_strbuf *sb, const char *s, size_t n, int width, int flags);

/* Append @v in decimal, padded to @width (printf %u, %-u, %0u). */
void blk_strbuf_add_u64(struct blk_strbuf *sb, uint64_t v, int width, int flags);

/* Append signed @v in decimal, padded to @width (printf %d, %-d). */
void blk_strbuf_add_s64(struct blk_strbuf *sb, int64_t v, int width, int flags);

/* printf-style append; for cold paths. */
void blk_strbuf_addf(struct blk_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void blk_strbuf_vaddf(struct blk_strbuf *sb, const char *fmt, va_list ap);

static inline void blk_strbuf_reset(struct blk_strbuf *sb)
{
	sb->len = 0;
}

/* Free the buffer and re-initialise @sb. */
void blk_strbuf_release(struct blk_strbuf *sb);

#endif /* BLK_STRBUF_H */
