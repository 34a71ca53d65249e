// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/frame.c: records of both versions and byte orders, partial, damaged. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/frame.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

static void frames_each_version_and_order(void **state)
{
	(void)state;
	for (int v = 7; v <= 8; v++) {
		for (int be = 0; be <= 1; be++) {
			struct tbuf b = TBUF_INIT;
			struct blk_event e = test_event(5, 123456789, 1,
							CAT(BLK_TC_READ | BLK_TC_QUEUE) | BLK_TA_QUEUE,
							77, 4096), got;
			unsigned char pdu[3] = {1, 2, 3};
			int swapped = -1;
			long n;

			e.version = (uint8_t)v;
			e.pdu = pdu;
			e.pdu_len = sizeof(pdu);
			tbuf_add_event(&b, &e, be);
			n = blk_frame(b.p, b.len, &swapped, &got);
			assert_int_equal(n, (long)b.len);
			assert_int_equal(n, (v == 7 ? 48 : 64) + 3);
			assert_int_equal(swapped, be != test_host_be());
			assert_int_equal(got.version, v);
			assert_true(got.time == 123456789);
			assert_true(got.sector == 77);
			assert_int_equal(got.bytes, 4096);
			assert_int_equal(got.sequence, 5);
			assert_int_equal(got.pdu_len, 3);
			assert_ptr_equal(got.pdu, b.p + n - 3);
			assert_true(got.action == e.action);
			/* every prefix is a partial record */
			for (size_t l = 0; l < b.len; l++)
				assert_int_equal(blk_frame(b.p, l, &swapped, &got), 0);
			tbuf_free(&b);
		}
	}
}

static void rejects_what_is_not_a_record(void **state)
{
	unsigned char junk[64];
	struct blk_event ev;
	struct tbuf b = TBUF_INIT;
	struct blk_event e = test_event(1, 1, 0, BLK_TA_QUEUE, 0, 0);
	int swapped = -1;
	uint32_t m;

	(void)state;
	memset(junk, 0xab, sizeof(junk));
	assert_int_equal(blk_frame(junk, sizeof(junk), &swapped, &ev), -EINVAL);
	assert_int_equal(swapped, -1);
	/* a record of the other byte order when the order is known */
	tbuf_add_event(&b, &e, !test_host_be());
	swapped = 0;
	assert_int_equal(blk_frame(b.p, b.len, &swapped, &ev), -EINVAL);
	/* a version the format does not know */
	swapped = 1;
	memcpy(&m, b.p, 4);
	m = __builtin_bswap32((BLK_IO_TRACE_MAGIC | 9));
	memcpy(b.p, &m, 4);
	assert_int_equal(blk_frame(b.p, b.len, &swapped, &ev), -EPROTONOSUPPORT);
	tbuf_free(&b);
}

static void counts_whole_records_and_events(void **state)
{
	struct tbuf b = TBUF_INIT;
	unsigned long events = 99;
	size_t whole;
	int swapped = -1;

	(void)state;
	for (int i = 0; i < 5; i++) {
		struct blk_event e = test_event((uint32_t)i, (uint64_t)i, 0,
						i == 2 ? BLK_TN_ACTION(BLK_TN_PROCESS)
						       : CAT(BLK_TC_QUEUE) | BLK_TA_QUEUE,
						0, 512);

		tbuf_add_event(&b, &e, test_host_be());
	}
	whole = b.len;
	tbuf_add(&b, b.p, 20); /* the start of another record */
	assert_int_equal(blk_frame_count(b.p, b.len, &swapped, &events), (long)whole);
	assert_int_equal(events, 4);
	assert_int_equal(blk_frame_count(b.p, 10, &swapped, &events), 0);
	assert_int_equal(events, 0);
	/* damage after whole records: they are counted, the walk stops before it */
	memset(b.p + whole, 0xcd, 20);
	assert_int_equal(blk_frame_count(b.p, b.len, &swapped, &events), (long)whole);
	assert_int_equal(blk_frame_count(b.p + whole, 20, &swapped, NULL), -EINVAL);
	tbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_each_version_and_order),
		cmocka_unit_test(rejects_what_is_not_a_record),
		cmocka_unit_test(counts_whole_records_and_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
