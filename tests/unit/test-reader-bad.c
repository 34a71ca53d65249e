// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/reader.c: damaged inputs, each reported with its file, offset and cause. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/reader.h"
#include "helpers.h"
#include "reader-helpers.h"

/*
 * Damaged inputs. Each case is a function that builds the file contents; the reader must
 * return @good records, then a negative errno with a message containing every string in
 * @want (and the file name), then 0 for ever.
 */
struct bad_case {
	const char *name;
	void (*build)(struct tbuf *b);
	int gz;
	int good;
	int err; /* expected -errno, or 0 for "any negative" */
	const char *want[3];
};

static void add_good(struct tbuf *b, int n)
{
	for (int i = 0; i < n; i++) {
		struct blk_event e = test_event((uint32_t)i + 1, 100ull * i, 0,
						CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);

		tbuf_add_event(b, &e, test_host_be());
	}
}

static void build_bad_magic(struct tbuf *b)
{
	static const unsigned char zero[48];

	tbuf_add(b, zero, sizeof(zero));
}

static void build_text(struct tbuf *b)
{
	static const char text[] = "this is not a block trace, just some text\n";

	tbuf_add(b, text, sizeof(text) - 1);
}

static void build_bad_magic_later(struct tbuf *b)
{
	static const unsigned char zero[44];

	add_good(b, 2);
	tbuf_put(b, 0x12345678, 4, test_host_be());
	tbuf_add(b, zero, sizeof(zero));
}

static void build_trunc_header(struct tbuf *b)
{
	struct tbuf one = TBUF_INIT;

	add_good(b, 1);
	add_good(&one, 1);
	tbuf_add(b, one.p, 20); /* 20 of 48 header bytes of the record at offset 48 */
	tbuf_free(&one);
}

static void build_trunc_magic(struct tbuf *b)
{
	add_good(b, 1);
	tbuf_put(b, BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION, 2, test_host_be());
}

static void build_trunc_header_v2(struct tbuf *b)
{
	struct blk_event e = test_event(1, 0, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);
	struct tbuf one = TBUF_INIT;

	e.version = BLK_IO_TRACE2_VERSION;
	tbuf_add_event(&one, &e, test_host_be());
	tbuf_add(b, one.p, 50); /* 50 of 64 bytes */
	tbuf_free(&one);
}

static void build_trunc_pdu(struct tbuf *b)
{
	static const unsigned char pdu[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	struct blk_event e = test_event(3, 300, 0, CAT(BLK_TC_QUEUE) | BLK_TA_REMAP, 8, 4096);

	add_good(b, 2);
	e.pdu = pdu;
	e.pdu_len = sizeof(pdu);
	tbuf_add_event(b, &e, test_host_be());
	b->len -= 11; /* 5 of 16 payload bytes remain; the record is at offset 96 */
}

static void build_bad_version(struct tbuf *b)
{
	struct blk_event e = test_event(1, 0, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);
	size_t at;

	add_good(b, 1);
	at = b->len;
	tbuf_add_event(b, &e, test_host_be());
	/* rewrite the magic's version byte to 6 */
	b->len = at;
	tbuf_put(b, BLK_IO_TRACE_MAGIC | 6, 4, test_host_be());
	b->len = at + 48;
}

static void build_bad_version_first(struct tbuf *b)
{
	struct blk_event e = test_event(1, 0, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);

	tbuf_add_event(b, &e, test_host_be());
	b->len = 0;
	tbuf_put(b, BLK_IO_TRACE_MAGIC | 9, 4, test_host_be());
	b->len = 48;
}

static const struct bad_case bad_cases[] = {
	{"bad magic", build_bad_magic, 0, 0, -EINVAL, {"bad magic", "offset 0", NULL}},
	{"text file", build_text, 0, 0, -EINVAL, {"bad magic", "offset 0", NULL}},
	{"bad magic gz", build_bad_magic, 1, 0, -EINVAL, {"bad magic", "offset 0", "gzip"}},
	{"bad magic later", build_bad_magic_later, 0, 2, -EINVAL, {"bad magic", "offset 96", NULL}},
	{"truncated header", build_trunc_header, 0, 1, 0, {"truncated", "offset 48", NULL}},
	{"truncated header gz", build_trunc_header, 1, 1, 0, {"truncated", "offset 48", NULL}},
	{"truncated magic", build_trunc_magic, 0, 1, 0, {"truncated", "offset 48", NULL}},
	{"truncated v2 header", build_trunc_header_v2, 0, 0, 0, {"truncated", "offset 0", NULL}},
	{"truncated pdu", build_trunc_pdu, 0, 2, 0, {"truncated", "offset 96", "pdu_len 16"}},
	{"truncated pdu gz", build_trunc_pdu, 1, 2, 0, {"truncated", "offset 96", NULL}},
	{"bad version", build_bad_version, 0, 1, -EINVAL, {"version 6", "offset 48", NULL}},
	{"bad version first",
	 build_bad_version_first,
	 0,
	 0,
	 -EINVAL,
	 {"version 9", "offset 0", NULL}},
};

static void check_bad(const struct bad_case *c)
{
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];
	const char *msg;
	int ret;

	c->build(&b);
	if (c->gz)
		test_write_temp_gz(path, b.p, b.len);
	else
		test_write_temp(path, b.p, b.len);
	r = blk_reader_open(path);
	assert_non_null(r);
	for (int i = 0; i < c->good; i++) {
		ret = blk_reader_next(r, &ev);
		if (ret != 1)
			print_error("%s: record %d: %d %s\n", c->name, i, ret, blk_reader_error(r));
		assert_int_equal(ret, 1);
	}
	ret = blk_reader_next(r, &ev);
	msg = blk_reader_error(r);
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "%s: %d %s\n", c->name, ret, msg);
	if (ret >= 0 || (c->err && ret != c->err))
		print_error("%s: returned %d (%s)\n", c->name, ret, msg);
	assert_true(ret < 0);
	if (c->err)
		assert_int_equal(ret, c->err);
	if (!strstr(msg, path))
		print_error("%s: message lacks the file name: %s\n", c->name, msg);
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, "offset"));
	for (int i = 0; i < 3 && c->want[i]; i++) {
		if (!strstr(msg, c->want[i]))
			print_error("%s: message lacks '%s': %s\n", c->name, c->want[i], msg);
		assert_non_null(strstr(msg, c->want[i]));
	}
	/* after an error the reader stays at end of input */
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_records(r), c->good);
	blk_reader_close(r);
	unlink(path);
	tbuf_free(&b);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		check_bad(&bad_cases[i]);
}

/* A .gz file cut short is reported as such, after the records that were complete. */
static void test_gzip_truncated(void **state)
{
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct blk_event ev;
	unsigned char *gz;
	size_t n;
	char path[64];
	int ret, got = 0;

	(void)state;
	add_good(&b, 2000);
	test_write_temp_gz(path, b.p, b.len);
	gz = test_read_file(path, &n);
	unlink(path);
	test_write_temp(path, gz, n - 20); /* cut inside the deflate stream / trailer */
	r = blk_reader_open(path);
	assert_non_null(r);
	while ((ret = blk_reader_next(r, &ev)) == 1)
		got++;
	assert_true(ret < 0);
	assert_true(got < 2000);
	assert_non_null(strstr(blk_reader_error(r), path));
	assert_non_null(strstr(blk_reader_error(r), "offset"));
	assert_int_equal(blk_reader_next(r, &ev), 0);
	blk_reader_close(r);
	unlink(path);
	free(gz);
	tbuf_free(&b);
}

/*
 * A long input name (a real path of 500 to 1000 bytes, as "blkparse -i <path>" may get:
 * "/tmp///...///blk-unit-XXXXXX") must not overflow the error buffer: the message stays
 * a NUL-terminated string inside it, quotes (part of) the name and still says what and
 * where.
 *
 * Regression test for a library bug found by this test (fixed in 5eee03f): set_error()
 * in lib/reader.c built the message with
 *	n = snprintf(r->err, sizeof(r->err), "'%s': ", r->name);
 *	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
 * and with a name longer than 508 bytes n exceeded sizeof(r->err) = 512: r->err + n
 * pointed past the buffer and sizeof(r->err) - n wrapped to a huge size_t, so vsnprintf()
 * wrote past the end of the heap block (AddressSanitizer: heap-buffer-overflow; valgrind:
 * "Invalid write"; a plain run aborted in free() with "invalid next size").
 */
static int long_name_checks(void *arg)
{
	static const size_t lengths[] = {500, 509, 510, 511, 512, 515, 520, 530, 600, 1000};
	const char *path = arg;
	char longpath[1100];
	struct blk_reader *r;
	struct blk_event ev;
	const char *msg;

	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		size_t tail = strlen(path + 4), len = lengths[i];

		/* "/tmp" + slashes + "/blk-unit-XXXXXX": the same file, @len bytes of name */
		memcpy(longpath, "/tmp", 4);
		memset(longpath + 4, '/', len - 4 - tail);
		memcpy(longpath + len - tail, path + 4, tail + 1);
		CHILD_CHECK(strlen(longpath) == len);
		r = blk_reader_open(longpath);
		CHILD_CHECK(r != NULL);
		CHILD_CHECK(blk_reader_next(r, &ev) < 0);
		msg = blk_reader_error(r);
		CHILD_CHECK(strnlen(msg, 512) < 512);
		CHILD_CHECK(msg[0] == '\'');
		/* the head or the tail of the name, whichever a shortened name keeps */
		CHILD_CHECK(!strncmp(msg + 1, "/tmp//", 6) || strstr(msg, path + 5));
		CHILD_CHECK(strstr(msg, "bad magic") != NULL);
		CHILD_CHECK(strstr(msg, "offset 0") != NULL);
		CHILD_CHECK(blk_reader_next(r, &ev) == 0);
		blk_reader_close(r);
	}
	return 0;
}

/* Run in a child process: heap corruption fails this test, not the whole group. */
static void test_long_name_error(void **state)
{
	static const unsigned char zero[48];
	char path[64];
	int ret;

	(void)state;
	test_write_temp(path, zero, sizeof(zero));
	ret = test_in_child(long_name_checks, path);
	unlink(path);
	assert_int_equal(ret, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_gzip_truncated),
		cmocka_unit_test(test_long_name_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
