// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/pipesort.c: sequence gaps, counted as skips or filled by late records. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/pipesort.h"
#include "blk/reader.h"
#include "helpers.h"
#include "pipesort-helpers.h"

struct skip_log {
	int n;
	int cpu[4];
	uint64_t first[4], last[4];
};

static void skip_fn(void *arg, uint32_t dev, int cpu, uint64_t first, uint64_t last)
{
	struct skip_log *l = arg;

	assert_int_equal(dev, DEV0);
	assert_true(l->n < 4);
	l->cpu[l->n] = cpu;
	l->first[l->n] = first;
	l->last[l->n] = last;
	l->n++;
}

/* A sequence gap is counted as a skip once the input ends; the records after it still come. */
static void test_sequence_gap(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 1000, 0}, {DEV0, 0, 2, 2000, 0},
		{DEV0, 0, 4, 4000, 0}, {DEV0, 0, 5, 5000, 0},
		{DEV0, 1, 1, 1500, 0}, {DEV0, 1, 2, 3000, 0},
		{DEV0, 1, 3, 6000, 0}, END,
	};
	static const struct got want[] = {
		{DEV0, 0, 1, 0},    {DEV0, 1, 1, 500},	{DEV0, 0, 2, 1000}, {DEV0, 1, 2, 2000},
		{DEV0, 0, 4, 3000}, {DEV0, 0, 5, 4000}, {DEV0, 1, 3, 5000},
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct skip_log sl = {0};
	struct got out[16];
	uint64_t ranges, missing;
	int n;

	(void)state;
	ps = run_sort(in, &o, out, 16, &n, -1);
	expect(out, n, want, 7);
	blk_pipesort_skips(ps, DEV0, &ranges, &missing);
	assert_int_equal(ranges, 1);
	assert_int_equal(missing, 1);
	blk_pipesort_each_skip(ps, DEV0, skip_fn, &sl);
	assert_int_equal(sl.n, 1);
	assert_int_equal(sl.cpu[0], 0);
	assert_int_equal(sl.first[0], 3);
	assert_int_equal(sl.last[0], 3);
	/* another device has none */
	expect_no_skips(ps, DEV1);
	blk_pipesort_free(ps);
}

/* Gaps on two CPUs are summed per device. */
static void test_gaps_two_cpus(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 100, 0}, {DEV0, 0, 2, 200, 0}, {DEV0, 0, 5, 500, 0},
		{DEV0, 1, 1, 150, 0}, {DEV0, 1, 3, 350, 0}, END,
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct skip_log sl = {0};
	struct got out[16];
	uint64_t ranges, missing;
	int n;

	(void)state;
	ps = run_sort(in, &o, out, 16, &n, -1);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(out[i].time >= out[i - 1].time);
	blk_pipesort_skips(ps, DEV0, &ranges, &missing);
	assert_int_equal(ranges, 2);
	assert_int_equal(missing, 3);
	blk_pipesort_each_skip(ps, DEV0, skip_fn, &sl);
	assert_int_equal(sl.n, 2);
	assert_int_equal(sl.cpu[0], 0);
	assert_int_equal(sl.first[0], 3);
	assert_int_equal(sl.last[0], 4);
	assert_int_equal(sl.cpu[1], 1);
	assert_int_equal(sl.first[1], 2);
	assert_int_equal(sl.last[1], 2);
	blk_pipesort_free(ps);
}

/* A record that arrives in a later batch fills the hole: no skip is counted. */
static void test_late_record_fills_gap(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 100, 0},
		{DEV0, 0, 3, 300, 0},
		{DEV0, 0, 2, 200, 0},
		{DEV0, 0, 4, 400, 0},
		END,
	};
	static const struct got want[] = {
		{DEV0, 0, 1, 0},
		{DEV0, 0, 2, 100},
		{DEV0, 0, 3, 200},
		{DEV0, 0, 4, 300},
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct got out[16];
	int n;

	(void)state;
	o.batch = 2;
	ps = run_sort(in, &o, out, 16, &n, -1);
	expect(out, n, want, 4);
	expect_no_skips(ps, DEV0);
	blk_pipesort_free(ps);
}

/* A gap that never fills is released once the window exceeds max_pending. */
static void test_stalled_window(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 100, 0}, {DEV0, 0, 3, 300, 0}, {DEV0, 0, 4, 400, 0},
		{DEV0, 0, 5, 500, 0}, {DEV0, 0, 6, 600, 0}, {DEV0, 0, 7, 700, 0},
		{DEV0, 0, 8, 800, 0}, {DEV0, 0, 9, 900, 0}, END,
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct got out[16];
	uint64_t ranges, missing;
	int n;

	(void)state;
	o.batch = 2;
	o.max_pending = 4;
	ps = run_sort(in, &o, out, 16, &n, -1);
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++)
		assert_int_equal(out[i].time, (uint64_t)(i == 0 ? 0 : (i + 1) * 100));
	assert_true(blk_pipesort_forced(ps) >= 1);
	blk_pipesort_skips(ps, DEV0, &ranges, &missing);
	assert_int_equal(ranges, 1);
	assert_int_equal(missing, 1);
	blk_pipesort_free(ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequence_gap),
		cmocka_unit_test(test_gaps_two_cpus),
		cmocka_unit_test(test_late_record_fills_gap),
		cmocka_unit_test(test_stalled_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
