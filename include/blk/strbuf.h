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
#define BLK_STRBUF_INIT { NULL, 0, 0 }

enum blk_pad_flags {
	BLK_PAD_LEFT = 1 << 0,	/* left-align (pad on the right) */
	BLK_PAD_ZERO = 1 << 1,	/* pad with zeros instead of spaces */
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
