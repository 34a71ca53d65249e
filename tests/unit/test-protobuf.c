// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/perfetto/protobuf.c: every case is checked byte by byte against an encoding
 * worked out by hand from the protobuf wire format (keys, varints at their 7-bit boundaries,
 * zigzag, little-endian fixed fields, lengths of nested messages that need one, two or three
 * bytes, packed fields), and the sticky errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk-perfetto/protobuf.h"

#define B(...) ((const unsigned char[]){__VA_ARGS__}), sizeof((const unsigned char[]){__VA_ARGS__})

static void expect_bytes(const struct blk_pb *pb, const unsigned char *want, size_t n)
{
	assert_int_equal(pb->err, 0);
	assert_int_equal(pb->depth, 0);
	if (pb->len != n || memcmp(pb->buf, want, n)) {
		print_message("got %zu bytes:", pb->len);
		for (size_t i = 0; i < pb->len; i++)
			print_message(" %02x", pb->buf[i]);
		print_message("\nwant %zu bytes:", n);
		for (size_t i = 0; i < n; i++)
			print_message(" %02x", want[i]);
		print_message("\n");
		fail();
	}
}

/* @n bytes at @got are @want */
static void bytes_at(const unsigned char *got, const unsigned char *want, size_t n)
{
	assert_memory_equal(got, want, n);
}

struct varint_case {
	uint32_t field;
	uint64_t v;
	unsigned char bytes[12];
	size_t n;
};

/* uint64 values at each 7-bit boundary, and keys at field numbers 15/16, 2047/2048, max */
static const struct varint_case varints[] = {
	{1, 0, {0x08, 0x00}, 2},
	{1, 1, {0x08, 0x01}, 2},
	{1, 127, {0x08, 0x7f}, 2},
	{1, 128, {0x08, 0x80, 0x01}, 3},
	{1, 150, {0x08, 0x96, 0x01}, 3},
	{1, 300, {0x08, 0xac, 0x02}, 3},
	{1, 16383, {0x08, 0xff, 0x7f}, 3},
	{1, 16384, {0x08, 0x80, 0x80, 0x01}, 4},
	{1, 2097151, {0x08, 0xff, 0xff, 0x7f}, 4},
	{1, 2097152, {0x08, 0x80, 0x80, 0x80, 0x01}, 5},
	{1, 0xffffffffu, {0x08, 0xff, 0xff, 0xff, 0xff, 0x0f}, 6},
	{1, 0x100000000ull, {0x08, 0x80, 0x80, 0x80, 0x80, 0x10}, 6},
	{1, (1ull << 63) - 1, {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 10},
	{1, 1ull << 63, {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 11},
	{1, UINT64_MAX, {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 11},
	{15, 1, {0x78, 0x01}, 2},
	{16, 1, {0x80, 0x01, 0x01}, 3},
	{2047, 1, {0xf8, 0x7f, 0x01}, 3},
	{2048, 1, {0x80, 0x80, 0x01, 0x01}, 4},
	{BLK_PB_MAX_FIELD, 1, {0xf8, 0xff, 0xff, 0xff, 0x0f, 0x01}, 6},
};

static void test_varints(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(varints) / sizeof(varints[0]); i++) {
		blk_pb_reset(&pb);
		assert_int_equal(blk_pb_varint(&pb, varints[i].field, varints[i].v), 0);
		expect_bytes(&pb, varints[i].bytes, varints[i].n);
		if (varints[i].field == 1)
			assert_int_equal(blk_pb_varint_size(varints[i].v), varints[i].n - 1);
	}
	blk_pb_release(&pb);
	assert_null(pb.buf);
}

static void test_signed(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* int64: a negative value is its two's complement, ten bytes */
	assert_int_equal(blk_pb_int(&pb, 2, -1), 0);
	expect_bytes(&pb, B(0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
	blk_pb_reset(&pb);
	blk_pb_int(&pb, 2, -4);
	expect_bytes(&pb, B(0x10, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
	blk_pb_reset(&pb);
	blk_pb_int(&pb, 2, 5);
	expect_bytes(&pb, B(0x10, 0x05));
	/* sint64: zigzag 0 -1 1 -2 ... -> 0 1 2 3 ... */
	blk_pb_reset(&pb);
	blk_pb_sint(&pb, 3, 0);
	blk_pb_sint(&pb, 3, -1);
	blk_pb_sint(&pb, 3, 1);
	blk_pb_sint(&pb, 3, -2);
	blk_pb_sint(&pb, 3, 2147483647);
	blk_pb_sint(&pb, 3, -2147483648ll);
	expect_bytes(&pb, B(0x18, 0x00, 0x18, 0x01, 0x18, 0x02, 0x18, 0x03, 0x18, 0xfe, 0xff, 0xff,
			    0xff, 0x0f, 0x18, 0xff, 0xff, 0xff, 0xff, 0x0f));
	blk_pb_reset(&pb);
	blk_pb_sint(&pb, 3, INT64_MAX);
	blk_pb_sint(&pb, 3, INT64_MIN);
	expect_bytes(&pb, B(0x18, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x18,
			    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
	assert_int_equal(blk_pb_zigzag(-64), 127);
	assert_int_equal(blk_pb_zigzag(64), 128);
	blk_pb_release(&pb);
}

static void test_fixed(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* field 47 (a flow id): key 47 << 3 | 1 = 377 = f9 02, then eight bytes, low first */
	blk_pb_fixed64(&pb, 47, 0x0102030405060708ull);
	expect_bytes(&pb, B(0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01));
	blk_pb_reset(&pb);
	blk_pb_fixed32(&pb, 1, 0xdeadbeef);
	expect_bytes(&pb, B(0x0d, 0xef, 0xbe, 0xad, 0xde));
	blk_pb_reset(&pb);
	/* 1.0 = 0x3ff0000000000000; -2.5 = 0xc004000000000000 */
	blk_pb_double(&pb, 5, 1.0);
	blk_pb_double(&pb, 44, -2.5);
	expect_bytes(&pb, B(0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xe1, 0x02, 0, 0, 0, 0, 0, 0, 0x04,
			    0xc0));
	blk_pb_release(&pb);
}

static void test_strings(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;
	unsigned char big[300];

	(void)state;
	blk_pb_string(&pb, 2, "testing");
	blk_pb_string(&pb, 2, "");
	blk_pb_string(&pb, 2, NULL);
	blk_pb_bytes(&pb, 3, "\0\1", 2);
	expect_bytes(&pb, B(0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', 0x12, 0x00, 0x12, 0x00,
			    0x1a, 0x02, 0x00, 0x01));
	/* a length of 300 takes two bytes: ac 02 */
	memset(big, 'a', sizeof(big));
	blk_pb_reset(&pb);
	blk_pb_bytes(&pb, 2, big, sizeof(big));
	assert_int_equal(pb.len, 3 + 300);
	bytes_at(pb.buf, B(0x12, 0xac, 0x02));
	assert_memory_equal(pb.buf + 3, big, 300);
	blk_pb_release(&pb);
}

static void test_nested(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* the protobuf guide's Test3 { c: Test1 { a: 150 } } */
	blk_pb_begin(&pb, 3);
	blk_pb_varint(&pb, 1, 150);
	blk_pb_end(&pb);
	expect_bytes(&pb, B(0x1a, 0x03, 0x08, 0x96, 0x01));
	/* two levels, an empty message, and a field after them */
	blk_pb_reset(&pb);
	blk_pb_begin(&pb, 1);
	blk_pb_begin(&pb, 2);
	blk_pb_varint(&pb, 3, 1);
	blk_pb_end(&pb);
	blk_pb_begin(&pb, 4);
	blk_pb_end(&pb);
	blk_pb_end(&pb);
	blk_pb_varint(&pb, 5, 2);
	expect_bytes(&pb, B(0x0a, 0x06, 0x12, 0x02, 0x18, 0x01, 0x22, 0x00, 0x28, 0x02));
	blk_pb_release(&pb);
}

/* A message of field 1 holding bytes field 2 of @n bytes: the inner length and the outer. */
static void check_long_nested(size_t n, const unsigned char *outer_len, size_t outer_n,
			      const unsigned char *inner_len, size_t inner_n)
{
	struct blk_pb pb = BLK_PB_INIT;
	unsigned char *body = malloc(n);
	size_t at;

	assert_non_null(body);
	for (size_t i = 0; i < n; i++)
		body[i] = (unsigned char)(i * 7 + 1);
	blk_pb_begin(&pb, 1);
	blk_pb_bytes(&pb, 2, body, n);
	blk_pb_varint(&pb, 3, 1);
	blk_pb_end(&pb);
	assert_int_equal(pb.err, 0);
	assert_int_equal(pb.len, 1 + outer_n + 1 + inner_n + n + 2);
	assert_int_equal(pb.buf[0], 0x0a);
	assert_memory_equal(pb.buf + 1, outer_len, outer_n);
	at = 1 + outer_n;
	assert_int_equal(pb.buf[at], 0x12);
	assert_memory_equal(pb.buf + at + 1, inner_len, inner_n);
	at += 1 + inner_n;
	assert_memory_equal(pb.buf + at, body, n);
	bytes_at(pb.buf + at + n, B(0x18, 0x01));
	free(body);
	blk_pb_release(&pb);
}

static void test_nested_lengths(void **state)
{
	(void)state;
	/* body 1 + 1 + 121 + 2 = 125: one length byte, nothing moves */
	check_long_nested(121, B(0x7d), B(0x79));
	/* 1 + 1 + 123 + 2 = 127 is the last one-byte length */
	check_long_nested(123, B(0x7f), B(0x7b));
	/* 1 + 1 + 124 + 2 = 128: two bytes (80 01), the body moves up by one */
	check_long_nested(124, B(0x80, 0x01), B(0x7c));
	/* 1 + 2 + 200 + 2 = 205 = cd 01 */
	check_long_nested(200, B(0xcd, 0x01), B(0xc8, 0x01));
	/* 1 + 3 + 16384 + 2 = 16390 = 86 80 01: three bytes */
	check_long_nested(16384, B(0x86, 0x80, 0x01), B(0x80, 0x80, 0x01));
}

static void test_nested_inner_grows(void **state)
{
	static const unsigned char head[] = {0x0a, 0x87, 0x02, 0x12, 0x84, 0x02};
	struct blk_pb pb = BLK_PB_INIT;
	unsigned char want[3 + 3 + 130 * 2];

	(void)state;
	/* inner message of 130 varints "08 01" (260 bytes: 84 02) inside an outer one of 263 */
	blk_pb_begin(&pb, 1);
	blk_pb_begin(&pb, 2);
	for (int i = 0; i < 130; i++)
		blk_pb_varint(&pb, 1, 1);
	blk_pb_end(&pb);
	blk_pb_end(&pb);
	memcpy(want, head, sizeof(head));
	for (int i = 0; i < 130; i++) {
		want[6 + 2 * i] = 0x08;
		want[7 + 2 * i] = 0x01;
	}
	expect_bytes(&pb, want, sizeof(want));
	blk_pb_release(&pb);
}

static void test_packed(void **state)
{
	static const uint64_t v[] = {3, 270, 86942};
	static const uint64_t f[] = {1, 2};
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* the protobuf guide's packed example: 22 06 03 8e 02 9e a7 05 */
	blk_pb_packed_varint(&pb, 4, v, 3);
	blk_pb_packed_varint(&pb, 4, v, 0);
	expect_bytes(&pb, B(0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05));
	blk_pb_reset(&pb);
	blk_pb_packed_fixed64(&pb, 5, f, 2);
	blk_pb_packed_fixed64(&pb, 5, f, 0);
	expect_bytes(&pb, B(0x2a, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0));
	blk_pb_release(&pb);
}

static void test_raw(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	blk_pb_begin(&pb, 12);
	blk_pb_raw(&pb, "\x08\x01", 2);
	blk_pb_raw(&pb, NULL, 0);
	blk_pb_end(&pb);
	expect_bytes(&pb, B(0x62, 0x02, 0x08, 0x01));
	blk_pb_release(&pb);
}

static void test_errors(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* field 0 and fields past 2^29 - 1 do not exist; the error sticks, nothing is added */
	blk_pb_varint(&pb, 1, 1);
	assert_int_equal(blk_pb_varint(&pb, 0, 1), -EINVAL);
	assert_int_equal(blk_pb_string(&pb, 2, "x"), -EINVAL);
	assert_int_equal(blk_pb_error(&pb), -EINVAL);
	assert_int_equal(pb.len, 2);
	blk_pb_reset(&pb);
	assert_int_equal(blk_pb_fixed64(&pb, BLK_PB_MAX_FIELD + 1, 1), -EINVAL);
	assert_int_equal(pb.len, 0);
	/* an end without a begin */
	blk_pb_reset(&pb);
	assert_int_equal(blk_pb_end(&pb), -EINVAL);
	/* nesting deeper than BLK_PB_MAX_DEPTH */
	blk_pb_reset(&pb);
	for (int i = 0; i < BLK_PB_MAX_DEPTH; i++)
		assert_int_equal(blk_pb_begin(&pb, 1), 0);
	assert_int_equal(blk_pb_begin(&pb, 1), -EINVAL);
	assert_int_equal(blk_pb_end(&pb), -EINVAL);
	/* a reset clears the error and keeps the buffer */
	blk_pb_reset(&pb);
	assert_int_equal(blk_pb_error(&pb), 0);
	assert_non_null(pb.buf);
	blk_pb_varint(&pb, 1, 1);
	expect_bytes(&pb, B(0x08, 0x01));
	blk_pb_release(&pb);
	assert_int_equal(pb.len, 0);
	assert_int_equal(pb.alloc, 0);
}

static void test_grows(void **state)
{
	struct blk_pb pb = BLK_PB_INIT;

	(void)state;
	/* many small fields: the buffer grows and keeps every byte */
	for (int i = 0; i < 100000; i++)
		blk_pb_varint(&pb, 1, (uint64_t)i & 0x7f);
	assert_int_equal(pb.err, 0);
	assert_int_equal(pb.len, 200000);
	for (int i = 0; i < 100000; i++) {
		assert_int_equal(pb.buf[2 * i], 0x08);
		assert_int_equal(pb.buf[2 * i + 1], i & 0x7f);
	}
	blk_pb_release(&pb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_signed),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_nested_lengths),
		cmocka_unit_test(test_nested_inner_grows),
		cmocka_unit_test(test_packed),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
