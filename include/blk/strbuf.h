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

/* "00" "01" ... "99": two digits per division (strbuf.c) */
extern const char blk_digits2[200];

/* Number of decimal digits of @v (1 for 0). */
static inline int blk_ndigits(uint64_t v)
{
	int n = 0;
	uint32_t w;

	while (v >> 32) {
		v /= 100000000;
		n += 8;
	}
	w = (uint32_t)v;
	if (w < 10000)
		return n + (w < 100 ? (w < 10 ? 1 : 2) : (w < 1000 ? 3 : 4));
	if (w < 100000000)
		return n + (w < 1000000 ? (w < 100000 ? 5 : 6) : (w < 10000000 ? 7 : 8));
	return n + (w < 1000000000 ? 9 : 10);
}

/* The four digits of @x (< 10000) at @p. */
static inline void blk_put_4digits(char *p, uint32_t x)
{
	uint32_t hi = x / 100;

	memcpy(p, &blk_digits2[2 * hi], 2);
	memcpy(p + 2, &blk_digits2[2 * (x - hi * 100)], 2);
}

/*
 * Write the @n last digits of @v (n == blk_ndigits(v), or more for leading zeros) ending at
 * @end, four at a time.
 */
static inline void blk_put_digits(char *end, uint64_t v, int n)
{
	uint32_t w;

	for (; n > 4 && (v >> 32); n -= 4) {
		uint64_t q = v / 10000;

		end -= 4;
		blk_put_4digits(end, (uint32_t)(v - q * 10000));
		v = q;
	}
	w = (uint32_t)v;
	for (; n > 4; n -= 4) {
		uint32_t q = w / 10000;

		end -= 4;
		blk_put_4digits(end, w - q * 10000);
		w = q;
	}
	switch (n) {
	case 4:
		blk_put_4digits(end - 4, w);
		break;
	case 3:
		end[-3] = (char)('0' + w / 100);
		memcpy(end - 2, &blk_digits2[2 * (w % 100)], 2);
		break;
	case 2:
		memcpy(end - 2, &blk_digits2[2 * w], 2);
		break;
	case 1:
		end[-1] = (char)('0' + w);
		break;
	default:
		break;
	}
}

/* Write @v in decimal at @p, right-aligned in @width (space or zero padded). Return end. */
static inline char *blk_put_u64(char *p, uint64_t v, int width, char pad)
{
	int n = blk_ndigits(v);

	for (; width > n; width--)
		*p++ = pad;
	blk_put_digits(p + n, v, n);
	return p + n;
}

/* Write @v left-aligned in @width. Return end. */
static inline char *blk_put_u64_left(char *p, uint64_t v, int width)
{
	int n = blk_ndigits(v);

	blk_put_digits(p + n, v, n);
	p += n;
	for (; width > n; width--)
		*p++ = ' ';
	return p;
}

/* Write signed @v right-aligned in @width. Return end. */
static inline char *blk_put_s64(char *p, int64_t v, int width)
{
	uint64_t u;
	int n;

	if (v >= 0)
		return blk_put_u64(p, (uint64_t)v, width, ' ');
	u = (uint64_t)0 - (uint64_t)v;
	n = blk_ndigits(u) + 1;
	for (; width > n; width--)
		*p++ = ' ';
	*p = '-';
	blk_put_digits(p + n, u, n - 1);
	return p + n;
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
