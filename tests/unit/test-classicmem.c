// SPDX-License-Identifier: GPL-2.0
/*
 * The classic blkparse memory model (classicmem.c): a freed tracking entry's times come
 * back in the next one, records and their sort nodes are reused through their caches,
 * a NULL or failed model does nothing. (Its agreement with blkparse 1.2.0 itself is
 * checked end to end against the reference, in t0100/t0400/t0500.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "compat/classicmem.h"
#include "blk/trace.h"
#include "helpers.h"

static struct blk_cmem *new_model(int pipe)
{
	static const struct blk_cmem_arg file_arg = { 'i', "sda" }, pipe_arg = { 'p', "-" };
	struct blk_cmem_opts o = { 0 };

	o.args = pipe ? &pipe_arg : &file_arg;
	o.nargs = 1;
	o.batch = 4;
	o.stdout_bufsize = 4096;
	return blk_cmem_new(&o);
}

/* A record of sequence @seq at @time (helpers.h's event, version 7). */
static struct blk_event event(uint64_t time, uint32_t seq, uint32_t action)
{
	return test_event(seq, time, 0, action, 100 * (uint64_t)seq, 4096);
}

static void test_track_reuse(void **state)
{
	struct blk_cmem *c = new_model(0);
	struct blk_cmem_track a, b, fresh;
	const uint64_t times[4] = { 111, 222, 333, 444 };

	(void)state;
	assert_non_null(c);
	assert_int_equal(blk_cmem_file(c, 0, 0, "sda.blktrace.0", BLK_CMEM_OPENED), 0);
	assert_int_equal(blk_cmem_file(c, 0, 1, "sda.blktrace.1", BLK_CMEM_MISSING), -1);
	blk_cmem_track_new(c, &fresh);
	assert_true(fresh.addr != 0);
	blk_cmem_track_new(c, &a);
	assert_true(a.addr != fresh.addr);
	blk_cmem_track_free(c, a.addr, 8, times);
	/* the same 80-byte chunk comes back from the allocator's cache, its times intact */
	blk_cmem_track_new(c, &b);
	assert_int_equal(b.addr, a.addr);
	assert_int_equal(b.allocation_time, 111);
	assert_int_equal(b.queue_time, 222);
	assert_int_equal(b.dispatch_time, 333);
	assert_false(blk_cmem_failed(c));
	blk_cmem_free(c);
}

static void test_records_and_retire(void **state)
{
	struct blk_cmem *c = new_model(0);
	struct blk_event ev;
	int s;

	(void)state;
	assert_non_null(c);
	s = blk_cmem_file(c, 0, 0, "sda.blktrace.0", BLK_CMEM_OPENED);
	assert_int_equal(s, 0);
	/* a batch of 4, a notify record (freed), then the rest and the end */
	for (uint32_t i = 1; i <= 10; i++) {
		ev = event(1000 * i, i, 1 | (1u << 16));
		blk_cmem_record(c, s, &ev, BLK_CMEM_QUEUED);
		if (i == 2) {
			ev = event(0, 0, 1u << 26);
			blk_cmem_record(c, s, &ev, BLK_CMEM_NOTE);
			blk_cmem_ppm_new(c, 7, "fio");
			blk_cmem_note_done(c);
		}
	}
	blk_cmem_eof(c, s);
	/* each record handled, then held; the fifth one makes the first go */
	for (uint32_t i = 1; i <= 10; i++) {
		blk_cmem_handle(c, s, 1000 * i);
		blk_cmem_retire(c, s, 1000 * i, 8 << 20, i);
	}
	assert_false(blk_cmem_failed(c));
	/* one more than was read: the model lost step, and says so */
	blk_cmem_handle(c, s, 99999);
	assert_true(blk_cmem_failed(c));
	blk_cmem_free(c);
}

static void test_pipe_mode(void **state)
{
	struct blk_cmem *c = new_model(1);
	struct blk_event ev;
	uint64_t tag[3], skip;

	(void)state;
	assert_non_null(c);
	for (int i = 0; i < 3; i++) {
		ev = event(1000 * (uint64_t)(i + 1), (uint32_t)i + 1, 1 | (1u << 16));
		tag[i] = blk_cmem_pipe_record(c, &ev);
		assert_true(tag[i] != 0);
	}
	blk_cmem_pipe_eof(c);
	blk_cmem_pipe_batch(c);
	for (int i = 2; i >= 0; i--)
		blk_cmem_pipe_sorted(c, tag[i], 8 << 20, 0, 1000 * (uint64_t)i);
	skip = blk_cmem_skip_new(c, 5, 9);
	assert_true(skip != 0);
	blk_cmem_pipe_cpu_check(c, 1);
	for (int i = 0; i < 3; i++)
		blk_cmem_pipe_release(c, tag[i]);
	blk_cmem_skip_free(c, skip);
	/* tags are reused once released */
	ev = event(5000, 4, 1 | (1u << 16));
	assert_int_equal(blk_cmem_pipe_record(c, &ev), tag[2]);
	assert_false(blk_cmem_failed(c));
	blk_cmem_free(c);
}

static void test_null_model(void **state)
{
	struct blk_cmem_track t;
	struct blk_event ev = event(1, 1, 1);
	const uint64_t times[4] = { 1, 2, 3, 4 };

	(void)state;
	assert_true(blk_cmem_failed(NULL));
	assert_int_equal(blk_cmem_file(NULL, 0, 0, "x", BLK_CMEM_OPENED), -1);
	blk_cmem_record(NULL, 0, &ev, BLK_CMEM_QUEUED);
	blk_cmem_note_done(NULL);
	blk_cmem_eof(NULL, 0);
	blk_cmem_handle(NULL, 0, 1);
	blk_cmem_retire(NULL, 0, 1, 0, 1);
	assert_int_equal(blk_cmem_pipe_record(NULL, &ev), 0);
	blk_cmem_pipe_eof(NULL);
	blk_cmem_pipe_batch(NULL);
	blk_cmem_pipe_sorted(NULL, 1, 0, 0, 1);
	blk_cmem_pipe_release(NULL, 1);
	blk_cmem_pipe_cpu_check(NULL, 1);
	assert_int_equal(blk_cmem_skip_new(NULL, 1, 2), 0);
	blk_cmem_skip_free(NULL, 0);
	blk_cmem_ppm_new(NULL, 1, "x");
	blk_cmem_ppi_new(NULL);
	blk_cmem_track_new(NULL, &t);
	assert_int_equal(t.addr, 0);
	assert_int_equal(t.queue_time, 0);
	blk_cmem_track_free(NULL, 0, 0, times);
	blk_cmem_free(NULL);
}

static void test_unreadable_version(void **state)
{
	struct blk_cmem *c = new_model(0);
	struct blk_event ev = event(1, 1, 1);
	struct blk_cmem_track t;
	int s;

	(void)state;
	s = blk_cmem_file(c, 0, 0, "sda.blktrace.0", BLK_CMEM_OPENED);
	/* the classic tool cannot read version-8 records: the model stops, values read 0 */
	ev.version = BLK_IO_TRACE2_VERSION;
	blk_cmem_record(c, s, &ev, BLK_CMEM_QUEUED);
	assert_true(blk_cmem_failed(c));
	blk_cmem_track_new(c, &t);
	assert_int_equal(t.addr, 0);
	blk_cmem_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_track_reuse),
		cmocka_unit_test(test_records_and_retire),
		cmocka_unit_test(test_pipe_mode),
		cmocka_unit_test(test_null_model),
		cmocka_unit_test(test_unreadable_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
