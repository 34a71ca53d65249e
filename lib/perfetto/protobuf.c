// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk-perfetto/protobuf.h"

void blk_pb_init(struct blk_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void blk_pb_release(struct blk_pb *pb)
{
	free(pb->buf);
	blk_pb_init(pb);
}

static int fail(struct blk_pb *pb, int e)
{
	if (!pb->err)
		pb->err = -e;
	return pb->err;
}

/* Make room for @n more bytes. */
static int room(struct blk_pb *pb, size_t n)
{
	size_t want;
	unsigned char *p;

	if (pb->err)
		return pb->err;
	if (pb->alloc - pb->len >= n)
		return 0;
	if (n > SIZE_MAX / 2 - pb->len)
		return fail(pb, ENOMEM);
	want = pb->alloc ? pb->alloc : 256;
	while (want - pb->len < n)
		want *= 2;
	p = realloc(pb->buf, want);
	if (!p)
		return fail(pb, ENOMEM);
	pb->buf = p;
	pb->alloc = want;
	return 0;
}

/* Append the key of @field with wire type @wire; room for @extra more bytes is made too. */
static int key(struct blk_pb *pb, uint32_t field, enum blk_pb_wire wire, size_t extra)
{
	if (pb->err)
		return pb->err;
	if (field == 0 || field > BLK_PB_MAX_FIELD)
		return fail(pb, EINVAL);
	if (room(pb, 5 + extra))
		return pb->err;
	pb->len += blk_pb_put_varint(pb->buf + pb->len, (uint64_t)field << 3 | wire);
	return 0;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int blk_pb_varint_slow(struct blk_pb *pb, uint32_t field, uint64_t v)
{
	if (key(pb, field, BLK_PB_VARINT, BLK_PB_VARINT_MAX))
		return pb->err;
	pb->len += blk_pb_put_varint(pb->buf + pb->len, v);
	return 0;
}

int blk_pb_fixed64(struct blk_pb *pb, uint32_t field, uint64_t v)
{
	if (key(pb, field, BLK_PB_I64, 8))
		return pb->err;
	put_le(pb->buf + pb->len, v, 8);
	pb->len += 8;
	return 0;
}

int blk_pb_fixed32(struct blk_pb *pb, uint32_t field, uint32_t v)
{
	if (key(pb, field, BLK_PB_I32, 4))
		return pb->err;
	put_le(pb->buf + pb->len, v, 4);
	pb->len += 4;
	return 0;
}

int blk_pb_double(struct blk_pb *pb, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return blk_pb_fixed64(pb, field, bits);
}

int blk_pb_bytes(struct blk_pb *pb, uint32_t field, const void *p, size_t n)
{
	if (n > SIZE_MAX / 2)
		return fail(pb, ENOMEM);
	if (key(pb, field, BLK_PB_LEN, BLK_PB_VARINT_MAX + n))
		return pb->err;
	pb->len += blk_pb_put_varint(pb->buf + pb->len, n);
	if (n)
		memcpy(pb->buf + pb->len, p, n);
	pb->len += n;
	return 0;
}

int blk_pb_string(struct blk_pb *pb, uint32_t field, const char *s)
{
	return blk_pb_bytes(pb, field, s ? s : "", s ? strlen(s) : 0);
}

int blk_pb_packed_varint(struct blk_pb *pb, uint32_t field, const uint64_t *v, size_t n)
{
	size_t body = 0;

	if (!n)
		return pb->err;
	for (size_t i = 0; i < n; i++)
		body += blk_pb_varint_size(v[i]);
	if (key(pb, field, BLK_PB_LEN, BLK_PB_VARINT_MAX + body))
		return pb->err;
	pb->len += blk_pb_put_varint(pb->buf + pb->len, body);
	for (size_t i = 0; i < n; i++)
		pb->len += blk_pb_put_varint(pb->buf + pb->len, v[i]);
	return 0;
}

int blk_pb_packed_fixed64(struct blk_pb *pb, uint32_t field, const uint64_t *v, size_t n)
{
	if (!n)
		return pb->err;
	if (n > SIZE_MAX / 16)
		return fail(pb, ENOMEM);
	if (key(pb, field, BLK_PB_LEN, BLK_PB_VARINT_MAX + 8 * n))
		return pb->err;
	pb->len += blk_pb_put_varint(pb->buf + pb->len, 8 * n);
	for (size_t i = 0; i < n; i++) {
		put_le(pb->buf + pb->len, v[i], 8);
		pb->len += 8;
	}
	return 0;
}

int blk_pb_begin_slow(struct blk_pb *pb, uint32_t field)
{
	if (pb->err)
		return pb->err;
	if (pb->depth >= BLK_PB_MAX_DEPTH)
		return fail(pb, EINVAL);
	if (key(pb, field, BLK_PB_LEN, 1))
		return pb->err;
	pb->open[pb->depth++] = pb->len;
	pb->buf[pb->len++] = 0;
	return 0;
}

int blk_pb_end_slow(struct blk_pb *pb)
{
	size_t at, body, n;

	if (pb->err)
		return pb->err;
	if (pb->depth <= 0)
		return fail(pb, EINVAL);
	at = pb->open[--pb->depth];
	body = pb->len - at - 1;
	n = blk_pb_varint_size(body);
	if (n > 1) {
		/* the one byte reserved is too short: move the body up */
		if (room(pb, n - 1))
			return pb->err;
		memmove(pb->buf + at + n, pb->buf + at + 1, body);
		pb->len += n - 1;
	}
	blk_pb_put_varint(pb->buf + at, body);
	return 0;
}

int blk_pb_raw(struct blk_pb *pb, const void *p, size_t n)
{
	if (room(pb, n))
		return pb->err;
	if (n)
		memcpy(pb->buf + pb->len, p, n);
	pb->len += n;
	return 0;
}
