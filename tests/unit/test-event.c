// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/event.c: RWBS, payload decoding, record encoding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/event.h"
#include "blk/reader.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

static const struct rwbs_case {
	uint64_t action;
	uint32_t bytes;
	const char *want;
} rwbs_cases[] = {
	{ 0, 4096, "R" },
	{ CAT(BLK_TC_READ), 4096, "R" },
	{ 0, 0, "N" },
	{ CAT(BLK_TC_READ), 0, "N" },
	{ CAT(BLK_TC_WRITE), 4096, "W" },
	{ CAT(BLK_TC_WRITE), 0, "W" },
	{ CAT(BLK_TC_FLUSH), 0, "FN" },
	{ CAT(BLK_TC_FLUSH), 512, "FR" },
	{ CAT(BLK_TC_FLUSH | BLK_TC_WRITE), 4096, "FW" },
	{ CAT(BLK_TC_DISCARD), 4096, "D" },
	{ CAT(BLK_TC_DISCARD | BLK_TC_WRITE), 4096, "D" },
	{ CAT(BLK_TC_DISCARD), 0, "D" },
	{ CAT(BLK_TC_FLUSH | BLK_TC_DISCARD), 0, "FD" },
	{ CAT(BLK_TC_WRITE | BLK_TC_FUA), 4096, "WF" },
	{ CAT(BLK_TC_WRITE | BLK_TC_SYNC), 4096, "WS" },
	{ CAT(BLK_TC_AHEAD), 4096, "RA" },
	{ CAT(BLK_TC_WRITE | BLK_TC_SYNC | BLK_TC_META), 4096, "WSM" },
	{ CAT(BLK_TC_META), 4096, "RM" },
	{ CAT(BLK_TC_FLUSH | BLK_TC_WRITE | BLK_TC_FUA | BLK_TC_SYNC), 4096, "FWFS" },
	{ CAT(BLK_TC_FUA | BLK_TC_AHEAD | BLK_TC_SYNC | BLK_TC_META), 512, "RFASM" },
	{ CAT(BLK_TC_FLUSH | BLK_TC_FUA | BLK_TC_AHEAD | BLK_TC_SYNC | BLK_TC_META), 512,
	  "FRFASM" },
	{ CAT(BLK_TC_FLUSH | BLK_TC_FUA | BLK_TC_AHEAD | BLK_TC_SYNC | BLK_TC_META), 0, "FNFASM" },
	/* categories that have no letter */
	{ CAT(BLK_TC_QUEUE | BLK_TC_FS | BLK_TC_COMPLETE | BLK_TC_ISSUE), 4096, "R" },
	{ CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE, 4096, "W" },
	/* v2 zone categories take the data letter's place */
	{ BLK_TC2_ZONE_APPEND | CAT(BLK_TC_WRITE), 4096, "ZA" },
	{ BLK_TC2_ZONE_RESET, 0, "ZR" },
	{ BLK_TC2_ZONE_RESET_ALL | BLK_TC2_ZONE_RESET, 0, "ZRA" },
	{ BLK_TC2_ZONE_FINISH, 0, "ZF" },
	{ BLK_TC2_ZONE_OPEN, 0, "ZO" },
	{ BLK_TC2_ZONE_CLOSE, 0, "ZC" },
	{ BLK_TC2_ZONE_APPEND | CAT(BLK_TC_FLUSH | BLK_TC_FUA), 4096, "FZAF" },
	{ BLK_TC2_ZONE_APPEND | CAT(BLK_TC_DISCARD), 4096, "D" },
};

static void test_rwbs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rwbs_cases) / sizeof(rwbs_cases[0]); i++) {
		const struct rwbs_case *c = &rwbs_cases[i];
		struct blk_event ev = test_event(1, 0, 0, c->action, 0, c->bytes);
		char buf[BLK_RWBS_LEN];
		int n;

		memset(buf, 'x', sizeof(buf));
		n = blk_event_rwbs(&ev, buf);
		if (strcmp(buf, c->want))
			print_error("case %zu: action 0x%llx bytes %u: got '%s', want '%s'\n", i,
				    (unsigned long long)c->action, c->bytes, buf, c->want);
		assert_string_equal(buf, c->want);
		assert_int_equal(n, strlen(c->want));
	}
}

static void test_pdu_u64(void **state)
{
	static const unsigned char pdu[16] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char one[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
	struct blk_event ev = test_event(1, 0, 0, 0, 0, 0);

	(void)state;
	ev.pdu = pdu;
	ev.pdu_len = 8;
	assert_int_equal(blk_event_pdu_u64(&ev), 0x0102030405060708ull);
	ev.pdu_len = 16;
	assert_int_equal(blk_event_pdu_u64(&ev), 0x0102030405060708ull);
	ev.pdu_len = 7;
	assert_int_equal(blk_event_pdu_u64(&ev), 0);
	ev.pdu_len = 0;
	assert_int_equal(blk_event_pdu_u64(&ev), 0);
	ev.pdu = one;
	ev.pdu_len = 8;
	assert_int_equal(blk_event_pdu_u64(&ev), 1);
}

static void test_remap(void **state)
{
	struct tbuf b = TBUF_INIT;
	struct blk_event ev = test_event(1, 0, 0, CAT(BLK_TC_QUEUE) | BLK_TA_REMAP, 4096, 65536);
	struct blk_io_trace_remap r;

	(void)state;
	/* the payload is big-endian whatever the trace's byte order */
	tbuf_put(&b, BLK_MKDEV(8, 1), 4, TEST_BE);
	tbuf_put(&b, BLK_MKDEV(253, 7), 4, TEST_BE);
	tbuf_put(&b, 0x123456789aull, 8, TEST_BE);
	ev.pdu = b.p;
	ev.pdu_len = 16;
	assert_int_equal(blk_event_remap(&ev, &r), 0);
	assert_int_equal(r.device_from, BLK_MKDEV(8, 1));
	assert_int_equal(r.device_to, BLK_MKDEV(253, 7));
	assert_int_equal(BLK_MAJOR(r.device_to), 253);
	assert_int_equal(BLK_MINOR(r.device_to), 7);
	assert_int_equal(r.sector_from, 0x123456789aull);

	/* too short: -EINVAL and a zeroed result */
	ev.pdu_len = 15;
	memset(&r, 0xaa, sizeof(r));
	assert_int_equal(blk_event_remap(&ev, &r), -EINVAL);
	assert_int_equal(r.device_from, 0);
	assert_int_equal(r.device_to, 0);
	assert_int_equal(r.sector_from, 0);
	tbuf_free(&b);
}

/* Encode @ev, compare with the helper's independent host-order encoding, read it back. */
static void roundtrip(const struct blk_event *ev, size_t hdr, uint64_t want_action)
{
	unsigned char buf[64 + 256];
	struct tbuf ref = TBUF_INIT;
	struct blk_event expect = *ev, got;
	struct blk_reader *r;
	char path[64];
	size_t n;

	memset(buf, 0xee, sizeof(buf));
	n = blk_event_encode(ev, buf);
	assert_int_equal(n, hdr + ev->pdu_len);
	expect.action = want_action;
	tbuf_add_event(&ref, &expect, test_host_be());
	assert_int_equal(ref.len, n);
	assert_memory_equal(buf, ref.p, n);

	test_write_temp(path, buf, n);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_reader_next(r, &got), 1);
	test_assert_event_eq(&got, &expect);
	assert_int_equal(got.version, ev->version);
	assert_int_equal(got.offset, 0);
	assert_int_equal(blk_reader_next(r, &got), 0);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&ref);
}

static void test_encode_v1(void **state)
{
	static const unsigned char pdu[5] = { 1, 2, 3, 4, 5 };
	struct blk_event ev = test_event(0xdeadbeef, 0x0123456789abcdefull, 3,
					 CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE,
					 0xfedcba9876543210ull, 0x80000);

	(void)state;
	ev.pid = 4242;
	ev.device = BLK_MKDEV(259, 65537);
	ev.error = 0xfffb;
	roundtrip(&ev, sizeof(struct blk_io_trace), ev.action);

	ev.pdu = pdu;
	ev.pdu_len = sizeof(pdu);
	roundtrip(&ev, sizeof(struct blk_io_trace), ev.action);

	/* v1 keeps only the low 32 bits of the action */
	ev.action |= BLK_TC2_ZONE_APPEND;
	roundtrip(&ev, sizeof(struct blk_io_trace), (uint32_t)ev.action);
}

static void test_encode_v2(void **state)
{
	static const unsigned char pdu[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };
	struct blk_event ev = test_event(77, 123456789, 1,
					 BLK_TC2_ZONE_APPEND | CAT(BLK_TC_WRITE) | BLK_TA_COMPLETE,
					 2048, 4096);
	unsigned char buf[64 + 16];

	(void)state;
	ev.version = BLK_IO_TRACE2_VERSION;
	ev.pid = 99;
	ev.error = 5;
	roundtrip(&ev, sizeof(struct blk_io_trace2), ev.action);

	ev.pdu = pdu;
	ev.pdu_len = sizeof(pdu);
	roundtrip(&ev, sizeof(struct blk_io_trace2), ev.action);

	/* the padding is zeroed and the magic carries version 8 */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(blk_event_encode(&ev, buf), 64 + 16);
	for (int i = 52; i < 64; i++)
		assert_int_equal(buf[i], 0);
	{
		uint32_t magic;

		memcpy(&magic, buf, 4);
		assert_int_equal(magic, BLK_IO_TRACE_MAGIC | BLK_IO_TRACE2_VERSION);
	}
}

static void test_inline_helpers(void **state)
{
	struct blk_event ev = test_event(1, 0, 0, CAT(BLK_TC_WRITE | BLK_TC_NOTIFY) | 0x12 |
						  BLK_TC2_WRITE_ZEROES,
					 0, 4096 + 511);

	(void)state;
	assert_int_equal(blk_event_action32(&ev), (uint32_t)ev.action);
	assert_int_equal(blk_event_code(&ev), 0x12);
	assert_true(blk_event_is_write(&ev));
	assert_true(blk_event_is_notify(&ev));
	assert_false(blk_event_has_cat(&ev, BLK_TC_READ));
	assert_int_equal(blk_event_sectors(&ev), 8);
	assert_int_equal(BLK_MAJOR(BLK_MKDEV(8, 16)), 8);
	assert_int_equal(BLK_MINOR(BLK_MKDEV(8, 16)), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rwbs),
		cmocka_unit_test(test_pdu_u64),
		cmocka_unit_test(test_remap),
		cmocka_unit_test(test_encode_v1),
		cmocka_unit_test(test_encode_v2),
		cmocka_unit_test(test_inline_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
