// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/window.c: time order across streams, marks, the memory limit, late records. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/frame.h"
#include "blk/window.h"
#include "helpers.h"

#define OUTCAP (64 + 65535 + 4096)

static void push_times(struct blk_window *w, int stream, const uint64_t *t, int n)
{
	struct tbuf b = TBUF_INIT;

	for (int i = 0; i < n; i++) {
		struct blk_event e = test_event((uint32_t)i, t[i], (uint32_t)stream, BLK_TA_QUEUE,
						(uint64_t)stream, 512);

		tbuf_add_event(&b, &e, test_host_be());
	}
	assert_int_equal(blk_window_push(w, stream, b.p, b.len), 0);
	tbuf_free(&b);
}

/* take what is ready; return the times, in order, in @t (count returned) */
static int take_times(struct blk_window *w, int flush, uint64_t *t, int max)
{
	static unsigned char out[OUTCAP];
	size_t n = blk_window_take(w, out, sizeof(out), flush), off = 0;
	int k = 0, swapped = 0;

	while (off < n) {
		struct blk_event ev;
		long l = blk_frame(out + off, n - off, &swapped, &ev);

		assert_true(l > 0);
		assert_true(k < max);
		t[k++] = ev.time;
		off += (size_t)l;
	}
	return k;
}

static void waits_for_every_stream(void **state)
{
	struct blk_window *w = blk_window_new(3, 1 << 20);
	uint64_t a[] = {10, 40, 70}, b[] = {20, 30}, got[16];
	int n;

	(void)state;
	push_times(w, 0, a, 3);
	push_times(w, 1, b, 2);
	/* stream 2 has said nothing: nothing may go out yet */
	assert_int_equal(take_times(w, 0, got, 16), 0);
	blk_window_mark(w, 2, 25);
	n = take_times(w, 0, got, 16);
	assert_int_equal(n, 2);
	assert_true(got[0] == 10 && got[1] == 20);
	/* stream 1 holds 30 and stream 2 is marked at 25: 30 must wait */
	blk_window_mark(w, 2, 35);
	n = take_times(w, 0, got, 16);
	/* 30 goes; then stream 1 is empty, marked at its last record (30): 40 waits */
	assert_int_equal(n, 1);
	assert_true(got[0] == 30);
	blk_window_mark(w, 1, 1000);
	blk_window_mark(w, 2, 1000);
	n = take_times(w, 0, got, 16);
	assert_int_equal(n, 2);
	assert_true(got[0] == 40 && got[1] == 70);
	assert_int_equal(blk_window_bytes(w), 0);
	assert_int_equal(blk_window_late(w), 0);
	blk_window_free(w);
}

static void flush_takes_everything_in_order(void **state)
{
	struct blk_window *w = blk_window_new(2, 1 << 20);
	uint64_t a[] = {5, 15, 25}, b[] = {10, 20}, got[16];
	int n;

	(void)state;
	push_times(w, 0, a, 3);
	push_times(w, 1, b, 2);
	n = take_times(w, 1, got, 16);
	assert_int_equal(n, 5);
	for (int i = 0; i < 5; i++)
		assert_true(got[i] == (uint64_t)(5 * (i + 1)));
	blk_window_free(w);
}

static void limit_refuses_and_late_is_counted(void **state)
{
	struct blk_window *w = blk_window_new(2, 100);
	uint64_t a[] = {100, 200, 300}, late[] = {150}, got[16];
	struct tbuf b = TBUF_INIT;
	struct blk_event e = test_event(1, 400, 0, BLK_TA_QUEUE, 0, 512);

	(void)state;
	push_times(w, 0, a, 3); /* 144 bytes: over the limit now */
	tbuf_add_event(&b, &e, test_host_be());
	assert_int_equal(blk_window_push(w, 0, b.p, b.len), -ENOBUFS);
	/* stream 1 lags and the window is full: a flush take lets the records go */
	assert_int_equal(take_times(w, 0, got, 16), 0);
	assert_int_equal(take_times(w, 1, got, 16), 3);
	/* stream 1 now brings a record older than one already out */
	push_times(w, 1, late, 1);
	assert_int_equal(blk_window_late(w), 1);
	assert_int_equal(blk_window_push(w, 0, b.p, b.len), 0);
	tbuf_free(&b);
	blk_window_free(w);
}

static void rejects_partial_records(void **state)
{
	struct blk_window *w = blk_window_new(1, 1 << 20);
	struct tbuf b = TBUF_INIT;
	struct blk_event e = test_event(1, 1, 0, BLK_TA_QUEUE, 0, 512);

	(void)state;
	tbuf_add_event(&b, &e, test_host_be());
	assert_int_equal(blk_window_push(w, 0, b.p, b.len - 1), -EINVAL);
	assert_int_equal(blk_window_bytes(w), 0);
	tbuf_free(&b);
	blk_window_free(w);
}

/* many records through a small buffer: the stream buffers are reused and regrown */
static void long_streams_come_out_merged(void **state)
{
	struct blk_window *w = blk_window_new(3, 1 << 24);
	static unsigned char out[OUTCAP];
	uint64_t last = 0, next[3] = {0, 0, 0}, total = 0;

	(void)state;
	for (int round = 0; round < 200; round++) {
		for (int s = 0; s < 3; s++) {
			uint64_t t[50];

			for (int i = 0; i < 50; i++) {
				next[s] += (uint64_t)(1 + (round * 7 + s * 13 + i * 3) % 11);
				t[i] = next[s];
			}
			push_times(w, s, t, 50);
		}
		for (;;) {
			size_t n = blk_window_take(w, out, 4096, round == 199), off = 0;
			int swapped = 0;

			if (!n)
				break;
			while (off < n) {
				struct blk_event ev;
				long l = blk_frame(out + off, n - off, &swapped, &ev);

				assert_true(l > 0);
				assert_true(ev.time >= last);
				last = ev.time;
				off += (size_t)l;
				total++;
			}
		}
	}
	assert_true(total == 200 * 150);
	assert_int_equal(blk_window_late(w), 0);
	blk_window_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(waits_for_every_stream),
		cmocka_unit_test(flush_takes_everything_in_order),
		cmocka_unit_test(limit_refuses_and_late_is_counted),
		cmocka_unit_test(rejects_partial_records),
		cmocka_unit_test(long_streams_come_out_merged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
