/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small protocol buffers encoder (the wire format only, no schema, no libprotobuf), in the
 * manner of Perfetto's protozero: fields are appended to one growable buffer, in the order the
 * caller writes them.
 *
 * Wire format: a field is a key, varint(field << 3 | wire type), then its value: a varint
 * (wire type 0), 8 little-endian bytes (1), a varint length and that many bytes (2: strings,
 * bytes, nested messages, packed repeated fields), or 4 little-endian bytes (5).
 *
 * Nested messages: blk_pb_begin() writes the key and reserves one byte for the length;
 * blk_pb_end() writes the length there and, when the body turned out to be 128 bytes or more,
 * moves the body up by the extra length bytes. The length is then always the shortest varint
 * (protozero reserves four bytes and pads the varint instead, which costs three bytes per
 * small message); the move is rare for the small messages of a trace. Packed fields have their
 * length computed before the values are written.
 *
 * Errors are sticky: after the first failure (ENOMEM, or EINVAL for a bad field number, an
 * unbalanced blk_pb_end() or nesting deeper than BLK_PB_MAX_DEPTH), every call returns that
 * error and appends nothing, so a caller may check only once, after the last field.
 */
#ifndef BLK_PROTOBUF_H
#define BLK_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum blk_pb_wire {
	BLK_PB_VARINT = 0,
	BLK_PB_I64 = 1,
	BLK_PB_LEN = 2,
	BLK_PB_I32 = 5,
};

/* Largest field number protobuf allows. */
#define BLK_PB_MAX_FIELD ((1u << 29) - 1)
/* Deepest nesting of blk_pb_begin() calls. */
#define BLK_PB_MAX_DEPTH 16
/* Longest encoded varint. */
#define BLK_PB_VARINT_MAX 10

/* An encoding buffer. A value type: keep it on the stack or in a struct; BLK_PB_INIT. */
struct blk_pb {
	unsigned char *buf;
	size_t len, alloc;
	int depth;
	int err; /* 0 or the first -errno */
	size_t open[BLK_PB_MAX_DEPTH]; /* offset of each open message's length byte */
};
#define BLK_PB_INIT         \
	{                   \
		.buf = NULL \
	}

/* Initialise @pb empty (the same as BLK_PB_INIT). */
void blk_pb_init(struct blk_pb *pb);

/* Free the buffer of @pb and re-initialise it. */
void blk_pb_release(struct blk_pb *pb);

/* Empty @pb (no open message, no error), keeping its buffer for reuse. */
static inline void blk_pb_reset(struct blk_pb *pb)
{
	pb->len = 0;
	pb->depth = 0;
	pb->err = 0;
}

/* 0, or the -errno of the first failure since the last reset. */
static inline int blk_pb_error(const struct blk_pb *pb)
{
	return pb->err;
}

/* Number of bytes of the varint encoding of @v (1..10). */
static inline size_t blk_pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Write @v as a varint at @p (room for BLK_PB_VARINT_MAX bytes). Return its length. */
static inline size_t blk_pb_put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* The zigzag mapping of sint32/sint64: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... */
static inline uint64_t blk_pb_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/*
 * Append a field. Each returns 0 or the sticky -errno.
 * blk_pb_varint(): uint32, uint64, bool and enum values, and int32/int64 values known to be
 * >= 0. blk_pb_int(): int32/int64 (a negative value takes ten bytes, as protobuf has it).
 * blk_pb_sint(): sint32/sint64 (zigzag). blk_pb_fixed64()/_fixed32(): fixed64, sfixed64,
 * fixed32, sfixed32. blk_pb_double(): double. blk_pb_bytes(): bytes or a pre-encoded message.
 * blk_pb_string(): @s without its NUL (NULL is written as "").
 */
static inline int blk_pb_varint(struct blk_pb *pb, uint32_t field, uint64_t v);
static inline int blk_pb_int(struct blk_pb *pb, uint32_t field, int64_t v);
static inline int blk_pb_sint(struct blk_pb *pb, uint32_t field, int64_t v);
int blk_pb_fixed64(struct blk_pb *pb, uint32_t field, uint64_t v);
int blk_pb_fixed32(struct blk_pb *pb, uint32_t field, uint32_t v);
int blk_pb_double(struct blk_pb *pb, uint32_t field, double v);
int blk_pb_bytes(struct blk_pb *pb, uint32_t field, const void *p, size_t n);
int blk_pb_string(struct blk_pb *pb, uint32_t field, const char *s);

/*
 * Packed repeated fields (the [packed = true] encoding: one key, the length, the values back to
 * back). Only for fields the schema declares packed: a reader of an unpacked field sees one
 * length-delimited field instead of @n values. @n == 0 writes nothing.
 */
int blk_pb_packed_varint(struct blk_pb *pb, uint32_t field, const uint64_t *v, size_t n);
int blk_pb_packed_fixed64(struct blk_pb *pb, uint32_t field, const uint64_t *v, size_t n);

/* Start a nested message in field @field; close it with blk_pb_end(). */
static inline int blk_pb_begin(struct blk_pb *pb, uint32_t field);

/* Close the innermost open message: its length is known now and written before it. */
static inline int blk_pb_end(struct blk_pb *pb);

/* Append @n bytes already encoded (fields of the message now open). */
int blk_pb_raw(struct blk_pb *pb, const void *p, size_t n);

/*
 * The calls a trace makes most, inline: the common case (no error, room in the buffer, a
 * valid field, a short message) here, the rest in the out-of-line _slow() versions, which
 * do everything the whole call does (they are not for callers).
 */
int blk_pb_varint_slow(struct blk_pb *pb, uint32_t field, uint64_t v);
int blk_pb_begin_slow(struct blk_pb *pb, uint32_t field);
int blk_pb_end_slow(struct blk_pb *pb);

static inline int blk_pb_fast(const struct blk_pb *pb, uint32_t field, size_t n)
{
	return !pb->err && pb->alloc - pb->len >= n && field - 1 < BLK_PB_MAX_FIELD;
}

static inline int blk_pb_varint(struct blk_pb *pb, uint32_t field, uint64_t v)
{
	if (__builtin_expect(!blk_pb_fast(pb, field, 5 + BLK_PB_VARINT_MAX), 0))
		return blk_pb_varint_slow(pb, field, v);
	pb->len += blk_pb_put_varint(pb->buf + pb->len, (uint64_t)field << 3 | BLK_PB_VARINT);
	pb->len += blk_pb_put_varint(pb->buf + pb->len, v);
	return 0;
}

static inline int blk_pb_int(struct blk_pb *pb, uint32_t field, int64_t v)
{
	return blk_pb_varint(pb, field, (uint64_t)v);
}

static inline int blk_pb_sint(struct blk_pb *pb, uint32_t field, int64_t v)
{
	return blk_pb_varint(pb, field, blk_pb_zigzag(v));
}

static inline int blk_pb_begin(struct blk_pb *pb, uint32_t field)
{
	if (__builtin_expect(!blk_pb_fast(pb, field, 6) || pb->depth >= BLK_PB_MAX_DEPTH, 0))
		return blk_pb_begin_slow(pb, field);
	pb->len += blk_pb_put_varint(pb->buf + pb->len, (uint64_t)field << 3 | BLK_PB_LEN);
	pb->open[pb->depth++] = pb->len;
	pb->buf[pb->len++] = 0;
	return 0;
}

static inline int blk_pb_end(struct blk_pb *pb)
{
	size_t at, body;

	if (__builtin_expect(pb->err || pb->depth <= 0, 0))
		return blk_pb_end_slow(pb);
	at = pb->open[pb->depth - 1];
	body = pb->len - at - 1;
	if (__builtin_expect(body >= 0x80, 0))
		return blk_pb_end_slow(pb);
	pb->depth--;
	pb->buf[at] = (unsigned char)body;
	return 0;
}

#endif /* BLK_PROTOBUF_H */
