// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/output.c: buffered writes, sticky errors, gzip, binary records. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>

#include "blk/merge.h"
#include "blk/output.h"
#include "blk/reader.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

static char *temp_name(char *path)
{
	int fd;

	strcpy(path, "/tmp/blk-unit-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

/* Deterministic text of @n bytes. */
static char *make_text(size_t n)
{
	char *p = malloc(n);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (i % 61 == 60) ? '\n' : (char)('a' + (i * 7 + i / 61) % 26);
	return p;
}

static unsigned char *gunzip_file(const char *path, size_t *n)
{
	gzFile gz = gzopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int got;

	assert_non_null(gz);
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 17;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = gzread(gz, buf + len, (unsigned int)(cap - len));
		assert_true(got >= 0);
		len += (size_t)got;
	} while (got > 0);
	gzclose(gz);
	*n = len;
	return buf;
}

static void test_roundtrip(void **state)
{
	static const unsigned char pdu[3] = {'d', 'd', 0};
	struct blk_event ev = test_event(5, 123, 1, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);
	struct tbuf want = TBUF_INIT;
	struct blk_output *o;
	struct blk_strbuf *sb;
	char path[64];

	(void)state;
	ev.pdu = pdu;
	ev.pdu_len = sizeof(pdu);
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "hello ", 6), 0);
	sb = blk_output_sb(o);
	assert_non_null(sb);
	blk_strbuf_addstr(sb, "world ");
	blk_strbuf_add_u64(sb, 42, 4, 0);
	blk_strbuf_addch(sb, '\n');
	assert_int_equal(blk_output_check(o), 0);
	assert_int_equal(blk_output_event(o, &ev), 0);
	ev.version = BLK_IO_TRACE2_VERSION;
	assert_int_equal(blk_output_event(o, &ev), 0);
	assert_int_equal(blk_output_write(o, "", 0), 0);
	assert_int_equal(blk_output_flush(o), 0);
	assert_int_equal(blk_output_write(o, "tail", 4), 0);
	assert_int_equal(blk_output_finish(o), 0);
	assert_string_equal(blk_output_error(o), "");
	/* finishing twice is harmless */
	assert_int_equal(blk_output_finish(o), 0);
	blk_output_free(o);

	tbuf_add(&want, "hello world   42\n", 17);
	ev.version = BLK_IO_TRACE_VERSION;
	tbuf_add_event(&want, &ev, test_host_be());
	ev.version = BLK_IO_TRACE2_VERSION;
	tbuf_add_event(&want, &ev, test_host_be());
	tbuf_add(&want, "tail", 4);
	test_expect_file(path, want.p, want.len);
	tbuf_free(&want);
	unlink(path);
}

/*
 * Much more than the flush threshold, in odd-sized pieces, through both entry points;
 * @async: through the write-behind thread
 */
static void check_large(int async)
{
	enum { SIZE = 1000003 };
	char *text = make_text(SIZE);
	struct blk_output *o;
	size_t off = 0, step = 1;
	char path[64];

	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	if (async)
		assert_int_equal(blk_output_set_async(o), 0);
	while (off < SIZE) {
		size_t k = step < SIZE - off ? step : SIZE - off;

		if (step % 2) {
			assert_int_equal(blk_output_write(o, text + off, k), 0);
		} else {
			blk_strbuf_add(blk_output_sb(o), text + off, k);
			assert_int_equal(blk_output_check(o), 0);
		}
		off += k;
		step = step * 3 + 1;
		if (step > 300000)
			step = 7;
	}
	assert_int_equal(blk_output_close(o), 0);
	test_expect_file(path, text, SIZE);
	free(text);
	unlink(path);
}

static void test_large(void **state)
{
	(void)state;
	check_large(0);
}

/* The same through the write-behind thread: every byte, in order. */
static void test_async_large(void **state)
{
	(void)state;
	check_large(1);
}

/* Records through the thread, and a flush that waits until they are in the file. */
static void test_async_events_flush(void **state)
{
	struct blk_output *o;
	struct blk_event ev = test_event(0, 0, 1, CAT(BLK_TC_READ) | BLK_TA_ISSUE, 8, 4096);
	struct tbuf want = TBUF_INIT;
	unsigned char pdu[3] = {1, 2, 3};
	char path[64];

	(void)state;
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	assert_int_equal(blk_output_set_async(o), 0); /* a second call changes nothing */
	ev.version = BLK_IO_TRACE_VERSION;
	for (unsigned int i = 0; i < 20000; i++) {
		ev.sequence = i;
		ev.time = 1000ull * i;
		ev.sector = i * 8ull;
		ev.pdu = pdu;
		ev.pdu_len = i % 4 ? 0 : 3;
		assert_int_equal(blk_output_event(o, &ev), 0);
		tbuf_add_event(&want, &ev, test_host_be());
	}
	assert_int_equal(blk_output_flush(o), 0);
	test_expect_file(path, want.p, want.len);
	assert_int_equal(blk_output_close(o), 0);
	tbuf_free(&want);
	unlink(path);
}

/*
 * blk_output_record(): a record's encoded bytes with another time are what
 * blk_output_event() writes for the record with that time, in both versions.
 */
static void test_record_time_replaced(void **state)
{
	struct blk_output *o;
	struct blk_event ev = test_event(0, 0, 1, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);
	struct tbuf want = TBUF_INIT;
	unsigned char rec[sizeof(struct blk_io_trace2) + 3], pdu[3] = {7, 8, 9};
	size_t len;
	char path[64];

	(void)state;
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	for (unsigned int i = 0; i < 30000; i++) {
		ev.version = i % 3 ? BLK_IO_TRACE_VERSION : BLK_IO_TRACE2_VERSION;
		ev.sequence = i;
		ev.time = 0x0102030405060708ull + i;
		ev.pdu = pdu;
		ev.pdu_len = i % 2 ? 0 : 3;
		len = blk_event_encode(&ev, rec);
		ev.time = 1000ull * i;
		assert_int_equal(blk_output_record(o, rec, len, ev.time), 0);
		tbuf_add_event(&want, &ev, test_host_be());
	}
	assert_int_equal(blk_output_close(o), 0);
	test_expect_file(path, want.p, want.len);
	tbuf_free(&want);
	unlink(path);
}

/* The messages of a SOCK_SEQPACKET socket, one per write() of the output: their bytes and ends. */
struct msgs {
	int fd;
	unsigned char *buf;
	size_t len, cap;
	size_t *end;
	size_t n, ncap;
};

static void *collect_msgs(void *arg)
{
	struct msgs *m = arg;

	for (;;) {
		ssize_t got;

		if (m->cap - m->len < 512 * 1024) {
			m->cap = m->cap ? m->cap * 2 : 4 << 20;
			m->buf = realloc(m->buf, m->cap);
			assert_non_null(m->buf);
		}
		got = recv(m->fd, m->buf + m->len, m->cap - m->len, 0);
		if (got <= 0)
			break;
		m->len += (size_t)got;
		if (m->n == m->ncap) {
			m->ncap = m->ncap ? m->ncap * 2 : 256;
			m->end = realloc(m->end, m->ncap * sizeof(*m->end));
			assert_non_null(m->end);
		}
		m->end[m->n++] = m->len;
	}
	return NULL;
}

#define ALIGN_AT (64 * 1024)

/*
 * @async: through the write-behind thread. Records of 48 to 3,048 bytes given to
 * blk_output_raw_bytes() in spans of 1 to 2,500 records, some longer than the flush size
 * (128 KiB): the bytes come out in order, each time rebased; a write that is not the last
 * never goes past a multiple of 64 KiB in the stream without ending at one (the rest waits
 * for the next), and none is longer than the flush size, the record that reached it and the
 * bytes kept from the write before.
 */
#define FLUSH_AT (128 * 1024)
static void check_raw_bytes(int async)
{
	enum { NREC = 40000 };
	const uint64_t rebase = 5000;
	struct {
		const unsigned char *data;
		uint32_t len;
		uint64_t time;
	} *recs = calloc(NREC, sizeof(*recs));
	unsigned char *bytes = malloc((size_t)NREC * 3200), *want = malloc((size_t)NREC * 3100);
	static unsigned char pdu[3000];
	struct blk_event ev = test_event(0, 0, 1, CAT(BLK_TC_WRITE) | BLK_TA_QUEUE, 8, 4096);
	struct msgs m = {0};
	struct blk_output *o;
	pthread_t th;
	size_t total = 0, start = 0, at = 0;
	int sv[2], sz = 1 << 20;

	assert_non_null(recs);
	assert_non_null(bytes);
	assert_non_null(want);
	for (unsigned int i = 0; i < NREC; i++) {
		uint64_t t;

		ev.sequence = i;
		ev.time = 100000ull + 10ull * i;
		ev.pdu = pdu;
		ev.pdu_len = i % 101 == 0 ? 3000 : i % 7 == 0 ? 200 : 0;
		recs[i].len = (uint32_t)blk_event_encode(&ev, bytes + at);
		recs[i].data = bytes + at;
		recs[i].time = ev.time;
		memcpy(want + total, bytes + at, recs[i].len);
		at += recs[i].len;
		t = ev.time - rebase;
		memcpy(want + total + 8, &t, sizeof(t));
		total += recs[i].len;
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	m.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, collect_msgs, &m), 0);
	o = blk_output_fdopen(sv[0], "(socket)", 0);
	assert_non_null(o);
	if (async)
		assert_int_equal(blk_output_set_async(o), 0);
	for (unsigned int i = 0, k = 0; i < NREC; k++) {
		unsigned int n = k % 5 == 4 ? 2500 : 1 + (k * 37) % 60;
		const unsigned char *end;

		if (n > NREC - i)
			n = NREC - i;
		end = recs[i + n - 1].data + recs[i + n - 1].len;
		assert_int_equal(blk_output_raw_bytes(o, recs[i].data, (size_t)(end - recs[i].data),
						      rebase),
				 0);
		i += n;
	}
	assert_int_equal(blk_output_close(o), 0);
	pthread_join(th, NULL);
	close(sv[1]);
	assert_int_equal(m.len, total);
	assert_memory_equal(m.buf, want, total);
	assert_true(m.n > total / (FLUSH_AT + ALIGN_AT + 3100));
	for (size_t i = 0; i + 1 < m.n; start = m.end[i++]) {
		size_t e = m.end[i];

		if (e / ALIGN_AT > start / ALIGN_AT)
			assert_int_equal(e % ALIGN_AT, 0);
		assert_true(e - start < FLUSH_AT + 3100 + ALIGN_AT);
	}
	free(m.buf);
	free(m.end);
	free(recs);
	free(bytes);
	free(want);
}

static void test_raw_bytes_aligned(void **state)
{
	(void)state;
	check_raw_bytes(0);
	check_raw_bytes(1);
}

/* Text to a file that already holds bytes: the alignment counts from the file's offset. */
static void test_aligned_after_offset(void **state)
{
	char *text = make_text(700001);
	struct blk_output *o;
	unsigned char *got;
	size_t n;
	char path[64];
	int fd;

	(void)state;
	fd = open(temp_name(path), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	o = blk_output_fdopen(fd, path, 0);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	for (size_t off = 0; off < 700001; off += 9973)
		assert_int_equal(blk_output_write(o, text + off,
						  off + 9973 > 700001 ? 700001 - off : 9973),
				 0);
	assert_int_equal(blk_output_close(o), 0);
	got = test_read_file(path, &n);
	assert_int_equal(n, 700011);
	assert_memory_equal(got, "0123456789", 10);
	assert_memory_equal(got + 10, text, 700001);
	free(got);
	free(text);
	unlink(path);
}

/* Write @text (300,000 bytes) up to ten times until a call fails, then flush: its result. */
static int write_until_error(struct blk_output *o, const char *text)
{
	int ret = 0;

	for (int i = 0; i < 10 && !ret; i++)
		ret = blk_output_write(o, text, 300000);
	return ret ? ret : blk_output_flush(o);
}

/* A write error on the thread is reported by a later call, sticky, with the file's name. */
static void test_async_dev_full(void **state)
{
	char *text = make_text(300000);
	struct blk_output *o;

	(void)state;
	o = blk_output_open("/dev/full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	/* the first hand-over cannot know yet; a later one, or the finish, does */
	assert_int_equal(write_until_error(o, text), -ENOSPC);
	assert_int_equal(blk_output_check(o), -ENOSPC);
	assert_int_equal(blk_output_finish(o), -ENOSPC);
	assert_non_null(strstr(blk_output_error(o), "'/dev/full'"));
	assert_non_null(strstr(blk_output_error(o), strerror(ENOSPC)));
	blk_output_free(o);

	/* a small write: the error shows at finish */
	o = blk_output_open("/dev/full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	assert_int_equal(blk_output_write(o, "x\n", 2), 0);
	assert_int_equal(blk_output_close(o), -ENOSPC);

	/* freed without a finish: the thread is stopped, nothing leaks (valgrind/ASan) */
	o = blk_output_open("/dev/full", BLK_OUTPUT_GZIP);
	assert_non_null(o);
	assert_int_equal(blk_output_set_async(o), 0);
	assert_int_equal(blk_output_write(o, text, 300000), 0);
	blk_output_free(o);
	free(text);
}

static void test_dev_full(void **state)
{
	struct blk_output *o;
	char *text = make_text(300000);
	const char *msg;

	(void)state;
	/* a small write is buffered: the error shows at finish */
	o = blk_output_open("/dev/full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "x\n", 2), 0);
	assert_true(blk_output_finish(o) < 0);
	msg = blk_output_error(o);
	assert_non_null(strstr(msg, "/dev/full"));
	assert_non_null(strstr(msg, strerror(ENOSPC)));
	blk_output_free(o);

	/* a large write fails at once, and the error is sticky */
	o = blk_output_open("/dev/full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, text, 300000), -ENOSPC);
	assert_int_equal(blk_output_write(o, "y", 1), -ENOSPC);
	assert_int_equal(blk_output_check(o), -ENOSPC);
	assert_int_equal(blk_output_flush(o), -ENOSPC);
	assert_int_equal(blk_output_finish(o), -ENOSPC);
	assert_non_null(strstr(blk_output_error(o), "'/dev/full'"));
	blk_output_free(o);

	/* blk_output_close() reports it too */
	o = blk_output_open("/dev/full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "z", 1), 0);
	assert_int_equal(blk_output_close(o), -ENOSPC);

	/* and so does a gzip stream */
	o = blk_output_open("/dev/full", BLK_OUTPUT_GZIP);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "z", 1), 0);
	assert_true(blk_output_finish(o) < 0);
	assert_non_null(strstr(blk_output_error(o), "/dev/full"));
	blk_output_free(o);
	free(text);
}

/* @how: 1 async, 2 BLK_OUTPUT_GZIP_FAST */
static void check_gzip(size_t size, int how)
{
	int async = how & 1, fast = how & 2;
	char *text = make_text(size ? size : 1);
	struct blk_output *o;
	unsigned char *raw, *got;
	size_t n, rn;
	char path[64];

	o = blk_output_open(temp_name(path), BLK_OUTPUT_GZIP | (fast ? BLK_OUTPUT_GZIP_FAST : 0));
	assert_non_null(o);
	if (async)
		assert_int_equal(blk_output_set_async(o), 0);
	for (size_t off = 0; off < size; off += 10007) {
		size_t k = size - off < 10007 ? size - off : 10007;

		assert_int_equal(blk_output_write(o, text + off, k), 0);
	}
	assert_int_equal(blk_output_close(o), 0);
	raw = test_read_file(path, &rn);
	assert_true(rn >= 18);
	assert_int_equal(raw[0], 0x1f);
	assert_int_equal(raw[1], 0x8b);
	/* the header's XFL byte: 4 for the fastest level, 0 for level 6 */
	assert_int_equal(raw[8], fast ? 4 : 0);
	if (size > 100000)
		assert_true(rn < size);
	got = gunzip_file(path, &n);
	assert_int_equal(n, size);
	if (size)
		assert_memory_equal(got, text, size);
	free(got);
	free(raw);
	free(text);
	unlink(path);
}

static void test_gzip(void **state)
{
	(void)state;
	check_gzip(0, 0);
	check_gzip(100, 0);
	check_gzip(128 * 1024, 0);
	check_gzip(700001, 0);
}

/* gzip compressed on the thread: one stream, the trailer after the last buffer */
static void test_async_gzip(void **state)
{
	(void)state;
	check_gzip(0, 1);
	check_gzip(100, 1);
	check_gzip(128 * 1024, 1);
	check_gzip(700001, 1);
}

/* the fastest level (btt --perfetto=FILE.gz): the same text back, synchronous or not */
static void test_gzip_fast(void **state)
{
	(void)state;
	check_gzip(0, 2);
	check_gzip(700001, 2);
	check_gzip(100, 3);
	check_gzip(700001, 3);
}

/* Binary records written gzip-compressed read back through the reader. */
static void test_gzip_events_read_back(void **state)
{
	enum { N = 5000 };
	struct blk_output *o;
	struct blk_reader *r;
	struct blk_event ev, got;
	unsigned char pdu[24];
	char path[64];

	(void)state;
	o = blk_output_open(temp_name(path), BLK_OUTPUT_GZIP);
	assert_non_null(o);
	for (uint32_t i = 0; i < N; i++) {
		ev = test_event(i, 1000ull * i, i % 4, CAT(BLK_TC_READ) | BLK_TA_COMPLETE, i, 512);
		ev.version = (i % 2) ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION;
		memset(pdu, (int)i, sizeof(pdu));
		ev.pdu = pdu;
		ev.pdu_len = (uint16_t)(i % 25);
		assert_int_equal(blk_output_event(o, &ev), 0);
	}
	assert_int_equal(blk_output_close(o), 0);
	r = blk_reader_open(path);
	assert_non_null(r);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(blk_reader_next(r, &got), 1);
		assert_int_equal(got.sequence, i);
		assert_int_equal(got.time, 1000ull * i);
		assert_int_equal(got.cpu, i % 4);
		assert_int_equal(got.version,
				 (i % 2) ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION);
		assert_int_equal(got.pdu_len, i % 25);
		for (unsigned int k = 0; k < got.pdu_len; k++)
			assert_int_equal(got.pdu[k], i & 0xff);
	}
	assert_int_equal(blk_reader_next(r, &got), 0);
	assert_int_equal(blk_reader_compressed(r), 1);
	blk_reader_close(r);
	unlink(path);
}

/* BLK_OUTPUT_NOCLOSE leaves the descriptor open; without it the output closes it. */
static void test_fdopen_noclose(void **state)
{
	struct blk_output *o;
	char path[64];
	int fd;

	(void)state;
	fd = open(temp_name(path), O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	o = blk_output_fdopen(fd, "my-out", BLK_OUTPUT_NOCLOSE);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "abc", 3), 0);
	assert_int_equal(blk_output_close(o), 0);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	assert_int_equal(write(fd, "def", 3), 3);
	assert_int_equal(close(fd), 0);
	test_expect_file(path, "abcdef", 6);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	o = blk_output_fdopen(fd, "my-out", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_close(o), 0);
	assert_true(fcntl(fd, F_GETFD) < 0);
	unlink(path);

	/* a write error names the name given to fdopen */
	fd = open("/dev/full", O_WRONLY);
	assert_true(fd >= 0);
	o = blk_output_fdopen(fd, "my-full", 0);
	assert_non_null(o);
	assert_int_equal(blk_output_write(o, "x", 1), 0);
	assert_true(blk_output_finish(o) < 0);
	assert_non_null(strstr(blk_output_error(o), "'my-full'"));
	blk_output_free(o);
}

static void test_open_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_null(blk_output_open("/tmp/blk-unit-no-such-dir/out", 0));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(blk_output_close(NULL), 0);
	blk_output_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_async_large),
		cmocka_unit_test(test_async_events_flush),
		cmocka_unit_test(test_record_time_replaced),
		cmocka_unit_test(test_async_dev_full),
		cmocka_unit_test(test_async_gzip),
		cmocka_unit_test(test_dev_full),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_gzip_fast),
		cmocka_unit_test(test_gzip_events_read_back),
		cmocka_unit_test(test_fdopen_noclose),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_raw_bytes_aligned),
		cmocka_unit_test(test_aligned_after_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
