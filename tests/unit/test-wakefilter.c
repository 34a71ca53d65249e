// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/wakefilter.c: which tasks are left out of the sched source's
 * wakings (woken often, never seen in state D, a name that fits in the filter), the
 * filter's text, a task taken back when it sleeps in state D and its blind sleeps (only
 * those with an I/O in flight count), the bounds, a filter the kernel refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/wakefilter.h"
#include "helpers.h"

#define S 1000000000ull

static char comm16[16];

static const char *c16(const char *s)
{
	memset(comm16, 0, sizeof(comm16));
	memcpy(comm16, s, strnlen(s, sizeof(comm16)));
	return comm16;
}

static void wake_n(struct blk_wf *f, int32_t tid, const char *comm, int n, uint64_t ts)
{
	for (int i = 0; i < n; i++)
		blk_wf_waking(f, tid, c16(comm), ts + (uint64_t)i);
}

static void filter_is(const struct blk_wf *f, const char *want)
{
	char buf[4096];

	assert_true(blk_wf_filter(f, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, want);
}

static void often_woken_never_in_d_are_left_out(void **state)
{
	struct blk_wf *f = blk_wf_new();

	(void)state;
	assert_non_null(f);
	filter_is(f, "0");
	assert_int_equal(blk_wf_tick(f, 10 * S), 0); /* the first interval starts */
	wake_n(f, 22, "ksoftirqd/1", 300, 10 * S);
	wake_n(f, 500, "kworker/u8:0", 250, 10 * S);
	wake_n(f, 600, "rare", BLK_WF_MIN_WAKINGS - 1, 10 * S);
	/* the reader: in state D once, woken as often */
	blk_wf_switch_d(f, 700, 10 * S, 1);
	wake_n(f, 700, "dd", 400, 10 * S);
	/* a name that cannot stand in the filter */
	wake_n(f, 800, "a\"b", 400, 10 * S);
	assert_int_equal(blk_wf_tick(f, 10 * S + S / 2), 0); /* not a whole interval */
	assert_int_equal(blk_wf_tick(f, 11 * S), 1);
	filter_is(f, "(pid != 22 || comm != \"ksoftirqd/1\") && (pid != 500 || comm != \"kworker/u8:0\")");
	blk_wf_written(f, 11 * S, 1);
	assert_int_equal(blk_wf_excluded(f), 2);
	/* the counts start again: nothing new next interval */
	wake_n(f, 600, "rare", BLK_WF_MIN_WAKINGS - 1, 11 * S);
	assert_int_equal(blk_wf_tick(f, 12 * S), 0);
	assert_int_equal(blk_wf_blind(f), 0);
	blk_wf_free(f);
}

static void taken_back_when_in_d_and_blind_sleeps_counted(void **state)
{
	struct blk_wf *f = blk_wf_new();

	(void)state;
	blk_wf_tick(f, 1 * S);
	wake_n(f, 500, "kworker/u8:0", 300, 1 * S);
	wake_n(f, 501, "kworker/u8:1", 300, 1 * S);
	wake_n(f, 502, "kworker/u8:2", 300, 1 * S);
	assert_int_equal(blk_wf_tick(f, 2 * S), 1);
	blk_wf_written(f, 2 * S, 1);
	assert_int_equal(blk_wf_excluded(f), 3);
	/* 500 sleeps in D: taken back at once; its sleep is blind until a waking comes */
	assert_int_equal(blk_wf_switch_d(f, 500, 3 * S, 1), 1);
	assert_int_equal(blk_wf_excluded(f), 2);
	filter_is(f, "(pid != 502 || comm != \"kworker/u8:2\") && (pid != 501 || comm != \"kworker/u8:1\")");
	assert_int_equal(blk_wf_blind(f), 1);
	blk_wf_written(f, 3 * S + 100, 1);
	blk_wf_waking(f, 500, c16("kworker/u8:0"), 3 * S + 200); /* it came through */
	assert_int_equal(blk_wf_blind(f), 0);
	/* never left out again, however often woken */
	wake_n(f, 500, "kworker/u8:0", 1000, 3 * S);
	assert_int_equal(blk_wf_tick(f, 4 * S), 0);
	/* 501 sleeps in D twice before the filter is written: the first sleep's end is lost */
	assert_int_equal(blk_wf_switch_d(f, 501, 5 * S, 1), 1);
	assert_int_equal(blk_wf_switch_d(f, 501, 5 * S + 10, 1), 0);
	assert_int_equal(blk_wf_blind(f), 2); /* one lost, one still blind */
	blk_wf_written(f, 5 * S + 20, 1);
	/* switched out again after the write: the second one's end is lost too, the third
	 * one's waking will be seen */
	assert_int_equal(blk_wf_switch_d(f, 501, 5 * S + 30, 1), 0);
	assert_int_equal(blk_wf_blind(f), 2);
	blk_wf_waking(f, 501, c16("kworker/u8:1"), 5 * S + 40);
	assert_int_equal(blk_wf_blind(f), 2);
	/* 502 in D without an I/O of its own in flight, no waking seen: a sleep not kept
	 * anyway, not counted */
	assert_int_equal(blk_wf_switch_d(f, 502, 6 * S, 0), 1);
	filter_is(f, "0");
	assert_int_equal(blk_wf_blind(f), 2);
	/* again, now with an I/O in flight: the first one is not counted, this one is */
	assert_int_equal(blk_wf_switch_d(f, 502, 6 * S + 10, 1), 0);
	assert_int_equal(blk_wf_blind(f), 3);
	blk_wf_free(f);
}

static void bounded_and_refused(void **state)
{
	struct blk_wf *f = blk_wf_new();
	char buf[64];

	(void)state;
	blk_wf_tick(f, 1 * S);
	for (int32_t t = 1000; t < 1000 + 2 * BLK_WF_MAX; t++)
		wake_n(f, t, "kworker/u99:99", BLK_WF_MIN_WAKINGS + t, 1 * S);
	assert_int_equal(blk_wf_tick(f, 2 * S), 1);
	assert_int_equal(blk_wf_excluded(f), BLK_WF_MAX);
	/* the most woken first */
	{
		char all[8192];

		assert_true(blk_wf_filter(f, all, sizeof(all)) > 0);
		assert_non_null(strstr(all, "(pid != 1031 || "));
		assert_null(strstr(all, "(pid != 1015 || "));
	}
	assert_int_equal(blk_wf_filter(f, buf, sizeof(buf)), -ENOSPC);
	/* full: no more */
	wake_n(f, 5000, "x", 1000, 2 * S);
	assert_int_equal(blk_wf_tick(f, 3 * S), 0);
	/* the kernel refuses it: nothing is left out from now on */
	blk_wf_written(f, 3 * S, 0);
	assert_int_equal(blk_wf_excluded(f), 0);
	filter_is(f, "0");
	wake_n(f, 6000, "y", 1000, 3 * S);
	assert_int_equal(blk_wf_tick(f, 4 * S), 0);
	blk_wf_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(often_woken_never_in_d_are_left_out),
		cmocka_unit_test(taken_back_when_in_d_and_blind_sleeps_counted),
		cmocka_unit_test(bounded_and_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
