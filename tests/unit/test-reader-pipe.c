// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/reader.c: input from a pipe, in pieces, with bounded memory, and waiting. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <time.h>

#include "blk/reader.h"
#include "helpers.h"
#include "reader-helpers.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_pipe_pieces_bounded),
		cmocka_unit_test(test_ready_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
