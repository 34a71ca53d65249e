// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>

#include "blk/hist.h"
#include "helpers.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Exact percentile of sorted samples: the smallest value with >= p% at or below it. */
static uint64_t exact(const uint64_t *v, size_t n, double p)
{
	size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999999);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static void test_small_values_exact(void **state)
{
	static struct blk_hist h;

	(void)state;
	blk_hist_clear(&h);
	for (uint64_t v = 1; v <= 50; v++)
		blk_hist_add(&h, v);
	assert_int_equal(blk_hist_percentile(&h, 50), 25);
	assert_int_equal(blk_hist_percentile(&h, 100), 50);
	assert_int_equal(blk_hist_percentile(&h, 1), 1);
	assert_int_equal(h.n, 50);
}

static void test_relative_error_bound(void **state)
{
	static struct blk_hist h;
	const double ps[] = { 50, 90, 99, 99.9, 99.99, 100 };
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	uint64_t x = 88172645463325252ull;

	(void)state;
	assert_non_null(v);
	blk_hist_clear(&h);
	for (size_t i = 0; i < n; i++) {
		/* latencies spread over many orders of magnitude */
		test_xorshift(&x);
		v[i] = (x % 1000000) * ((x >> 40) % 1000 + 1);
		blk_hist_add(&h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		uint64_t e = exact(v, n, ps[k]), got = blk_hist_percentile(&h, ps[k]);

		/* never below the exact value, and at most 1/64 above it */
		assert_true(got >= e);
		assert_true((double)(got - e) <= (double)e / 64.0 + 1.0);
	}
	assert_int_equal(blk_hist_percentile(&h, 100), v[n - 1]);
	free(v);
}

static void test_merge_and_empty(void **state)
{
	static struct blk_hist a, b;

	(void)state;
	blk_hist_clear(&a);
	blk_hist_clear(&b);
	assert_int_equal(blk_hist_percentile(&a, 99), 0);
	blk_hist_add(&a, 10);
	blk_hist_add(&b, 1000000);
	blk_hist_merge(&a, &b);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.min, 10);
	assert_int_equal(a.max, 1000000);
	assert_int_equal(blk_hist_percentile(&a, 50), 10);
	assert_int_equal(blk_hist_percentile(&a, 100), 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_relative_error_bound),
		cmocka_unit_test(test_merge_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
