// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/reader.c: records in either byte order, versions 7 and 8, gzip, many and
 * large records, empty and missing inputs. Pipes: test-reader-pipe.c; damaged inputs:
 * test-reader-bad.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>

#include "blk/reader.h"
#include "helpers.h"
#include "reader-helpers.h"

/* Read every record of @path and compare with @want; return the reader for more checks. */
static struct blk_reader *expect_events(const char *path, const struct blk_event *want, size_t n,
					size_t hdr)
{
	struct blk_reader *r = blk_reader_open(path);
	struct blk_event ev;
	uint64_t off = 0;

	assert_non_null(r);
	assert_string_equal(blk_reader_name(r), path);
	for (size_t i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		assert_int_equal(blk_reader_next(r, &ev), 1);
		test_assert_event_eq(&ev, &want[i]);
		assert_int_equal(ev.version, want[i].version);
		assert_int_equal(ev.offset, off);
		off += hdr + want[i].pdu_len;
		assert_int_equal(blk_reader_offset(r), off);
		assert_int_equal(blk_reader_records(r), i + 1);
	}
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_string_equal(blk_reader_error(r), "");
	return r;
}

static void check_file(uint8_t version, int be, int gz)
{
	struct blk_event ev[4];
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	size_t n = sample_events(ev, version);
	size_t hdr = version == BLK_IO_TRACE2_VERSION ? 64 : 48;
	char path[64];

	for (size_t i = 0; i < n; i++)
		tbuf_add_event(&b, &ev[i], be);
	if (gz)
		test_write_temp_gz(path, b.p, b.len);
	else
		test_write_temp(path, b.p, b.len);
	r = expect_events(path, ev, n, hdr);
	assert_int_equal(blk_reader_swapped(r), be != test_host_be());
	assert_int_equal(blk_reader_compressed(r), gz);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
}

static void test_native_v1(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE_VERSION, test_host_be(), 0);
}

static void test_swapped_v1(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE_VERSION, test_foreign_order(), 0);
}

static void test_native_v2(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE2_VERSION, test_host_be(), 0);
}

static void test_swapped_v2(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE2_VERSION, test_foreign_order(), 0);
}

static void test_gzip_v1(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE_VERSION, test_host_be(), 1);
	check_file(BLK_IO_TRACE_VERSION, test_foreign_order(), 1);
}

static void test_gzip_v2(void **state)
{
	(void)state;
	check_file(BLK_IO_TRACE2_VERSION, test_host_be(), 1);
}

/* v1 and v2 records may follow each other in one input. */
static void test_mixed_versions(void **state)
{
	struct blk_event v1[4], v2[4], want[4];
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];

	(void)state;
	sample_events(v1, BLK_IO_TRACE_VERSION);
	sample_events(v2, BLK_IO_TRACE2_VERSION);
	want[0] = v1[0];
	want[1] = v2[1];
	want[2] = v1[2];
	want[3] = v2[3];
	for (int i = 0; i < 4; i++)
		tbuf_add_event(&b, &want[i], test_host_be());
	test_write_temp(path, b.p, b.len);
	r = blk_reader_open(path);
	assert_non_null(r);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(blk_reader_next(r, &ev), 1);
		test_assert_event_eq(&ev, &want[i]);
		assert_int_equal(ev.version, want[i].version);
	}
	assert_int_equal(blk_reader_next(r, &ev), 0);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
}

/* Many records: the reader's buffer is refilled and shifted many times (plain and gzip). */
/* the payload length of record @i: small ones, and now and then a very large one */
static unsigned int many_pdu_len(unsigned int i, int big)
{
	return big && i % 997 == 500 ? 60000 + i % 5000 : i % 41;
}

/*
 * Many records: the reader's buffer is refilled and shifted many times (plain and gzip),
 * with (@big) large payloads now and then. @cut: the file ends that many bytes into its
 * last record.
 */
static void check_many(int gz, int be, int big, unsigned int n, size_t cut)
{
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct blk_event ev;
	unsigned char *pdu = malloc(65536);
	char path[64];
	uint64_t off = 0;
	size_t len;

	assert_non_null(pdu);
	for (unsigned int i = 0; i < n; i++) {
		struct blk_event e = test_event(i, 1000ull * i, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE,
						i * 8ull, 4096);

		e.version = (i % 3 == 0) ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION;
		memset(pdu, (int)(i & 0xff), 65536);
		e.pdu = pdu;
		e.pdu_len = (uint16_t)many_pdu_len(i, big);
		tbuf_add_event(&b, &e, be);
	}
	len = cut ? b.len - (48 + many_pdu_len(n - 1, big) + ((n - 1) % 3 == 0 ? 16 : 0)) + cut
		  : b.len;
	if (gz)
		test_write_temp_gz(path, b.p, len);
	else
		test_write_temp(path, b.p, len);
	r = blk_reader_open(path);
	assert_non_null(r);
	for (unsigned int i = 0; i < n - (cut ? 1 : 0); i++) {
		assert_int_equal(blk_reader_next(r, &ev), 1);
		assert_int_equal(ev.sequence, i);
		assert_int_equal(ev.time, 1000ull * i);
		assert_int_equal(ev.sector, i * 8ull);
		assert_int_equal(ev.pdu_len, many_pdu_len(i, big));
		assert_int_equal(ev.offset, off);
		for (unsigned int k = 0; k < ev.pdu_len; k++)
			assert_int_equal(ev.pdu[k], i & 0xff);
		off += (i % 3 == 0 ? 64 : 48) + many_pdu_len(i, big);
	}
	if (cut) {
		char want[64];

		assert_true(blk_reader_next(r, &ev) < 0);
		snprintf(want, sizeof(want), "offset %llu", (unsigned long long)off);
		assert_non_null(strstr(blk_reader_error(r), want));
		assert_non_null(strstr(blk_reader_error(r), "truncated"));
	} else {
		assert_int_equal(blk_reader_next(r, &ev), 0);
		assert_string_equal(blk_reader_error(r), "");
		assert_int_equal(blk_reader_offset(r), b.len);
	}
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
	free(pdu);
}

static void test_many_records(void **state)
{
	(void)state;
	check_many(0, test_host_be(), 0, 20000, 0);
	check_many(0, test_foreign_order(), 0, 20000, 0);
	check_many(1, test_host_be(), 0, 20000, 0);
}

/* large payloads among them: the same records, offsets and errors, whole or cut short */
static void test_many_large_records(void **state)
{
	(void)state;
	check_many(0, test_host_be(), 1, 70000, 0);
	check_many(0, test_foreign_order(), 1, 70000, 0);
	check_many(0, test_host_be(), 1, 70000, 30);
	check_many(0, test_host_be(), 1, 70000, 5);
	check_many(1, test_host_be(), 1, 30000, 0); /* gzip: read as before */
	check_many(0, test_host_be(), 1, 10, 0); /* smaller than one buffer */
	check_many(0, test_host_be(), 1, 10, 20);
}

/* A large payload (beyond the initial buffer growth step) is returned whole. */
static void test_large_pdu(void **state)
{
	struct tbuf b = TBUF_INIT;
	struct blk_event e = test_event(1, 5, 0, CAT(BLK_TC_PC) | BLK_TA_ISSUE, 0, 0), ev;
	unsigned char *pdu = malloc(65535);
	struct blk_reader *r;
	char path[64];

	(void)state;
	assert_non_null(pdu);
	for (int i = 0; i < 65535; i++)
		pdu[i] = (unsigned char)(i * 7);
	e.pdu = pdu;
	e.pdu_len = 65535;
	tbuf_add_event(&b, &e, test_host_be());
	e.pdu_len = 1;
	e.sequence = 2;
	tbuf_add_event(&b, &e, test_host_be());
	test_write_temp(path, b.p, b.len);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_reader_next(r, &ev), 1);
	assert_int_equal(ev.pdu_len, 65535);
	assert_memory_equal(ev.pdu, pdu, 65535);
	assert_int_equal(blk_reader_next(r, &ev), 1);
	assert_int_equal(ev.sequence, 2);
	assert_int_equal(ev.offset, 48 + 65535);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
	free(pdu);
}

/* A timestamp note's two 32-bit words are in the tracing host's order: swapped input fixes them. */
static void test_swapped_timestamp_note(void **state)
{
	struct tbuf b = TBUF_INIT, pdu = TBUF_INIT;
	struct blk_event e = test_event(0, 0, 0, BLK_TN_ACTION(BLK_TN_TIMESTAMP), 0, 0), ev;
	struct blk_reader *r;
	uint32_t w[2];
	char path[64];
	int be = test_foreign_order();

	(void)state;
	tbuf_put(&pdu, 1700000000u, 4, be);
	tbuf_put(&pdu, 123456789u, 4, be);
	e.pdu = pdu.p;
	e.pdu_len = 8;
	tbuf_add_event(&b, &e, be);
	test_write_temp(path, b.p, b.len);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_reader_next(r, &ev), 1);
	assert_int_equal(blk_reader_swapped(r), 1);
	memcpy(w, ev.pdu, 8);
	assert_int_equal(w[0], 1700000000u);
	assert_int_equal(w[1], 123456789u);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
	tbuf_free(&pdu);
}

static void test_empty(void **state)
{
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];

	(void)state;
	test_write_temp(path, "", 0);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_string_equal(blk_reader_error(r), "");
	assert_int_equal(blk_reader_records(r), 0);
	blk_reader_close(r);
	unlink(path);

	/* an empty gzip stream is an empty trace too */
	test_write_temp_gz(path, "", 0);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_string_equal(blk_reader_error(r), "");
	blk_reader_close(r);
	unlink(path);
}

static void test_open_missing(void **state)
{
	(void)state;
	errno = 0;
	assert_null(blk_reader_open("/tmp/blk-unit-does-not-exist/x"));
	assert_int_equal(errno, ENOENT);
	blk_reader_close(NULL);
}

static void test_fdopen(void **state)
{
	struct blk_event e = test_event(9, 10, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 512), ev;
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	char path[64];
	int fd;

	(void)state;
	tbuf_add_event(&b, &e, test_host_be());
	test_write_temp(path, b.p, b.len);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	r = blk_reader_fdopen(fd, "my-input");
	assert_non_null(r);
	assert_string_equal(blk_reader_name(r), "my-input");
	assert_int_equal(blk_reader_ready(r), 1);
	assert_int_equal(blk_reader_next(r, &ev), 1);
	test_assert_event_eq(&ev, &e);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
}

/* Concatenated gzip members (as "cat a.gz b.gz" makes) are one input, as gzip reads them. */
static void test_gzip_members(void **state)
{
	struct blk_event ev[4], got;
	struct tbuf b1 = TBUF_INIT, b2 = TBUF_INIT, all = TBUF_INIT;
	struct blk_reader *r;
	unsigned char *z1, *z2;
	size_t n1, n2;
	char path[64];

	(void)state;
	sample_events(ev, BLK_IO_TRACE_VERSION);
	tbuf_add_event(&b1, &ev[0], test_host_be());
	tbuf_add_event(&b1, &ev[1], test_host_be());
	tbuf_add_event(&b2, &ev[2], test_host_be());
	tbuf_add_event(&b2, &ev[3], test_host_be());
	test_write_temp_gz(path, b1.p, b1.len);
	z1 = test_read_file(path, &n1);
	unlink(path);
	test_write_temp_gz(path, b2.p, b2.len);
	z2 = test_read_file(path, &n2);
	unlink(path);
	tbuf_add(&all, z1, n1);
	tbuf_add(&all, z2, n2);
	test_write_temp(path, all.p, all.len);
	r = blk_reader_open(path);
	assert_non_null(r);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(blk_reader_next(r, &got), 1);
		test_assert_event_eq(&got, &ev[i]);
	}
	assert_int_equal(blk_reader_next(r, &got), 0);
	assert_string_equal(blk_reader_error(r), "");
	blk_reader_close(r);
	unlink(path);
	free(z1);
	free(z2);
	tbuf_free(&b1);
	tbuf_free(&b2);
	tbuf_free(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_v1),
		cmocka_unit_test(test_swapped_v1),
		cmocka_unit_test(test_native_v2),
		cmocka_unit_test(test_swapped_v2),
		cmocka_unit_test(test_gzip_v1),
		cmocka_unit_test(test_gzip_v2),
		cmocka_unit_test(test_mixed_versions),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_many_large_records),
		cmocka_unit_test(test_large_pdu),
		cmocka_unit_test(test_swapped_timestamp_note),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_open_missing),
		cmocka_unit_test(test_fdopen),
		cmocka_unit_test(test_gzip_members),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
