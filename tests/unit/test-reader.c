// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/reader.c: record validation, byte order, versions, gzip, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <time.h>

#include "blk/reader.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

static const unsigned char pdu8[8] = {0, 0, 0, 0, 0, 0, 0, 3};
static const unsigned char pdu16[16] = {0, 0x80, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0};

/* A small, varied set of records (payloads of 0, 8 and 16 bytes). */
static size_t sample_events(struct blk_event *ev, uint8_t version)
{
	ev[0] = test_event(1, 1000, 2, CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE, 2048, 4096);
	ev[1] = test_event(2, 2500, 2, CAT(BLK_TC_QUEUE) | BLK_TA_UNPLUG_IO, 0, 0);
	ev[1].pdu = pdu8;
	ev[1].pdu_len = sizeof(pdu8);
	ev[2] = test_event(3, 0x100000000ull, 2, CAT(BLK_TC_QUEUE) | BLK_TA_REMAP, 4096, 65536);
	ev[2].pdu = pdu16;
	ev[2].pdu_len = sizeof(pdu16);
	ev[2].pid = 0x01020304;
	ev[2].error = 0x0a0b;
	ev[2].device = BLK_MKDEV(253, 0x12345);
	ev[3] = test_event(0xfffffffe, 0xfedcba9876543210ull, 2,
			   CAT(BLK_TC_READ | BLK_TC_COMPLETE) | BLK_TA_COMPLETE, 1ull << 40, 512);
	for (int i = 0; i < 4; i++)
		ev[i].version = version;
	if (version == BLK_IO_TRACE2_VERSION)
		ev[3].action |= BLK_TC2_ZONE_RESET;
	return 4;
}

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

struct feeder {
	const unsigned char *p;
	size_t n;
	int fd;
	int ok;
};

/* Write the input one byte per write(), so that the reader sees it in small pieces. */
static void *feed_thread(void *arg)
{
	struct feeder *f = arg;

	f->ok = 1;
	for (size_t i = 0; i < f->n; i++) {
		if (write(f->fd, f->p + i, 1) != 1) {
			f->ok = 0;
			break;
		}
		if (i % 16 == 0)
			sched_yield();
	}
	close(f->fd);
	return NULL;
}

static void check_pipe(int gz)
{
	struct blk_event want[4], ev;
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	unsigned char *data;
	size_t n;
	struct feeder feeder;
	pthread_t th;
	int fds[2];
	char path[64];

	sample_events(want, BLK_IO_TRACE_VERSION);
	for (int i = 0; i < 4; i++)
		tbuf_add_event(&b, &want[i], test_host_be());
	if (gz) {
		test_write_temp_gz(path, b.p, b.len);
		data = test_read_file(path, &n);
		unlink(path);
	} else {
		data = b.p;
		n = b.len;
	}
	assert_int_equal(pipe(fds), 0);
	feeder.p = data;
	feeder.n = n;
	feeder.fd = fds[1];
	assert_int_equal(pthread_create(&th, NULL, feed_thread, &feeder), 0);
	r = blk_reader_fdopen(fds[0], "(pipe)");
	assert_non_null(r);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(blk_reader_next(r, &ev), 1);
		test_assert_event_eq(&ev, &want[i]);
	}
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_ready(r), 1);
	assert_string_equal(blk_reader_error(r), "");
	assert_int_equal(blk_reader_compressed(r), gz);
	blk_reader_close(r);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(feeder.ok);
	if (gz)
		free(data);
	tbuf_free(&b);
}

/* A pipe delivers the input in arbitrary pieces (here: single bytes), plain or gzip. */
static void test_pipe(void **state)
{
	(void)state;
	check_pipe(0);
	check_pipe(1);
}

/*
 * A pipe whose reads return pieces of every size: the buffer stays bounded. Each piece is
 * written only once the reader has taken the one before (FIONREAD 0), so that each read()
 * returns one piece, sizes drawn from a fixed seed: the same reads every run. A buffer
 * that grew while it had room before its unread bytes (the room was not made by moving
 * them to the front) doubled at each such read: blkparse -i - held 930 MB reading the
 * 981 MB merged file of a 20M-event trace from a pipe.
 */
static void *piece_thread(void *arg)
{
	struct feeder *f = arg;
	uint64_t x = 88172645463325252ull;

	f->ok = 1;
	for (size_t at = 0; at < f->n && f->ok;) {
		size_t len;
		int left;

		len = 1 + (size_t)(test_xorshift(&x) % 300);
		if (len > f->n - at)
			len = f->n - at;
		if (write(f->fd, f->p + at, len) != (ssize_t)len)
			f->ok = 0;
		at += len;
		/* the reader takes the piece whole (its reads ask for 4 KiB or more) */
		while (f->ok && ioctl(f->fd, FIONREAD, &left) == 0 && left > 0)
			sched_yield();
	}
	close(f->fd);
	return NULL;
}

static void test_pipe_pieces_bounded(void **state)
{
	struct blk_event want[4], ev;
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct feeder f;
	struct mallinfo2 before, after;
	pthread_t th;
	int fds[2];
	size_t n = sample_events(want, BLK_IO_TRACE_VERSION), count = 0;

	(void)state;
	for (int k = 0; k < 12000; k++)
		for (size_t i = 0; i < n; i++)
			tbuf_add_event(&b, &want[i], test_host_be());
	assert_int_equal(pipe(fds), 0);
	f = (struct feeder){.p = b.p, .n = b.len, .fd = fds[1]};
	before = mallinfo2();
	r = blk_reader_fdopen(fds[0], "(pipe)");
	assert_non_null(r);
	assert_int_equal(pthread_create(&th, NULL, piece_thread, &f), 0);
	while (blk_reader_next(r, &ev) == 1) {
		test_assert_event_eq(&ev, &want[count % n]);
		count++;
	}
	/* the buffer as large as it ever got (it never shrinks): the 128 KiB of a long input,
	 * not a multiple of it */
	after = mallinfo2();
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(f.ok);
	assert_string_equal(blk_reader_error(r), "");
	assert_int_equal(count, 12000 * n);
	assert_true(after.uordblks + after.hblkhd < before.uordblks + before.hblkhd + 192 * 1024);
	blk_reader_close(r);
	tbuf_free(&b);
}

/* blk_reader_ready() on a pipe: 0 while nothing is there (waiting up to the set time). */
static void test_ready_wait(void **state)
{
	struct blk_event e = test_event(1, 10, 0, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 512), ev;
	struct tbuf b = TBUF_INIT;
	struct blk_reader *r;
	struct timespec t0, t1;
	int fds[2];
	long ms;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	r = blk_reader_fdopen(fds[0], "(pipe)");
	assert_non_null(r);
	assert_int_equal(blk_reader_ready(r), 0);
	blk_reader_set_wait(r, 50);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(blk_reader_ready(r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 40);
	tbuf_add_event(&b, &e, test_host_be());
	assert_int_equal(write(fds[1], b.p, b.len), (ssize_t)b.len);
	assert_int_equal(blk_reader_ready(r), 1);
	assert_int_equal(blk_reader_next(r, &ev), 1);
	test_assert_event_eq(&ev, &e);
	close(fds[1]);
	assert_int_equal(blk_reader_ready(r), 1);
	assert_int_equal(blk_reader_next(r, &ev), 0);
	assert_int_equal(blk_reader_ready(r), 1);
	blk_reader_close(r);
	tbuf_free(&b);
}

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
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_pipe_pieces_bounded),
		cmocka_unit_test(test_ready_wait),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_gzip_truncated),
		cmocka_unit_test(test_gzip_members),
		cmocka_unit_test(test_long_name_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
