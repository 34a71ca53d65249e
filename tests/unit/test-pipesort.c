// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/pipesort.c: pipe-mode batch ordering and rebasing. Its sequence gaps,
 * callback, stopwatch, damaged input and hooks: test-pipesort-*.c; their shared helpers:
 * pipesort-helpers.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/pipesort.h"
#include "blk/reader.h"
#include "helpers.h"
#include "pipesort-helpers.h"

/* Two CPUs' records, one CPU after the other in the stream, come out in time order. */
static void test_two_cpus_one_batch(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 1000, 0},
		{DEV0, 0, 2, 3000, 8},
		{DEV0, 0, 3, 5000, 0},
		{DEV0, 1, 1, 2000, 0},
		{DEV0, 1, 2, 4000, 100},
		{DEV0, 1, 3, 6000, 0},
		END,
	};
	static const struct got want[] = {
		{DEV0, 0, 1, 0},    {DEV0, 1, 1, 1000}, {DEV0, 0, 2, 2000},
		{DEV0, 1, 2, 3000}, {DEV0, 0, 3, 4000}, {DEV0, 1, 3, 5000},
	};
	struct blk_pipesort_opts o = {0};
	struct note_count nc = {0};
	struct blk_pipesort *ps;
	struct got out[16];
	int n;

	(void)state;
	o.fn = note_fn;
	o.arg = &nc;
	ps = run_sort(in, &o, out, 16, &n, -1);
	expect(out, n, want, 6);
	assert_int_equal(nc.records, 6);
	expect_no_skips(ps, DEV0);
	assert_null(blk_pipesort_error(ps));
	assert_int_equal(blk_pipesort_forced(ps), 0);
	blk_pipesort_free(ps);
}

/* Small batches: each batch is sorted; times are rebased to the first batch's minimum. */
static void test_batches_rebased(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 5000, 0},
		{DEV0, 1, 1, 5100, 0},
		{DEV0, 0, 2, 6000, 0},
		{DEV0, 1, 2, 5900, 0},
		{DEV0, 1, 3, 7000, 0},
		{DEV0, 0, 3, 6500, 0},
		END,
	};
	static const struct got want[] = {
		{DEV0, 0, 1, 0},    {DEV0, 1, 1, 100},	{DEV0, 1, 2, 900},
		{DEV0, 0, 2, 1000}, {DEV0, 0, 3, 1500}, {DEV0, 1, 3, 2000},
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct got out[16];
	int n;

	(void)state;
	o.batch = 2;
	ps = run_sort(in, &o, out, 16, &n, -1);
	expect(out, n, want, 6);
	expect_no_skips(ps, DEV0);
	blk_pipesort_free(ps);
}

/*
 * A merged file (times already rebased, the first at 0): as in the classic tool the genesis
 * of 0 is found again in the next batch, whose times then lose a second one;
 * blk_pipesort_rebase() says what each record lost.
 */
static void test_rebase_of_each_record(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 0, 0},   {DEV0, 0, 2, 10, 0},  {DEV0, 0, 3, 500, 0},
		{DEV0, 0, 4, 600, 0}, {DEV0, 0, 5, 700, 0}, END,
	};
	static const uint64_t want_time[] = {0, 10, 0, 100, 200};
	static const uint64_t want_rebase[] = {0, 0, 500, 500, 500};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];
	int n = 0;

	(void)state;
	o.batch = 2;
	write_stream(path, in, -1);
	r = blk_reader_open(path);
	assert_non_null(r);
	unlink(path);
	ps = blk_pipesort_new(r, &o);
	assert_non_null(ps);
	while (blk_pipesort_next(ps, &ev) == 1) {
		assert_true(n < 5);
		assert_int_equal(ev.sequence, n + 1);
		assert_int_equal(ev.time, want_time[n]);
		assert_int_equal(blk_pipesort_rebase(ps), want_rebase[n]);
		n++;
	}
	assert_int_equal(n, 5);
	blk_pipesort_free(ps);
}

/* Equal times are ordered by device, then sequence. */
static void test_tie_order(void **state)
{
	static const struct prec in[] = {
		{DEV1, 0, 1, 100, 0}, {DEV0, 1, 1, 100, 0}, {DEV0, 0, 2, 200, 0},
		{DEV0, 0, 1, 100, 0}, {DEV1, 0, 2, 200, 0}, END,
	};
	static const struct got want[] = {
		{DEV0, 1, 1, 0},   {DEV0, 0, 1, 0},   {DEV1, 0, 1, 0},
		{DEV0, 0, 2, 100}, {DEV1, 0, 2, 100},
	};
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	struct got out[16];
	int n;

	(void)state;
	ps = run_sort(in, &o, out, 16, &n, -1);
	/* the two seq-1 records of DEV0 (cpus 0 and 1) tie on (time, dev, seq) */
	assert_int_equal(n, 5);
	assert_int_equal(out[0].dev, DEV0);
	assert_int_equal(out[1].dev, DEV0);
	assert_int_equal(out[0].seq, 1);
	assert_int_equal(out[1].seq, 1);
	for (int i = 2; i < 5; i++) {
		assert_int_equal(out[i].dev, want[i].dev);
		assert_int_equal(out[i].seq, want[i].seq);
		assert_int_equal(out[i].time, want[i].time);
	}
	expect_no_skips(ps, DEV0);
	expect_no_skips(ps, DEV1);
	blk_pipesort_free(ps);
}

/* a record of the order model below: its place in the stream and its batch */
struct mrec {
	struct prec p;
	int pos, batch, idx;
};

/* the classic order: time, device, sequence, batch, then the later read first */
static int model_cmp(const void *a, const void *b)
{
	const struct mrec *x = a, *y = b;

	if (x->p.time != y->p.time)
		return x->p.time < y->p.time ? -1 : 1;
	if (x->p.dev != y->p.dev)
		return x->p.dev < y->p.dev ? -1 : 1;
	if (x->p.seq != y->p.seq)
		return x->p.seq < y->p.seq ? -1 : 1;
	if (x->batch != y->batch)
		return x->batch < y->batch ? -1 : 1;
	return y->idx - x->idx;
}

/*
 * Two CPUs' records, in time order with every time shared by both (so that each batch is
 * nearly sorted: the sorter takes it as a run) or, in one batch, reversed (so that it goes
 * through the heap): both come out in the model's order.
 */
static void check_run(int reversed, unsigned int batch)
{
	enum { N = 800 };
	struct prec *in = calloc(N + 1, sizeof(*in));
	struct mrec *m = calloc(N, sizeof(*m));
	struct got *out = calloc(N, sizeof(*out));
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	int n;

	assert_non_null(in);
	assert_non_null(m);
	assert_non_null(out);
	for (int i = 0; i < N; i++) {
		/* CPU 1 first at each time: a swap from the sorted order for the ties */
		struct prec p = {DEV0, (uint32_t)(1 - i % 2), (uint32_t)(i / 2 + 1),
				 1000 + 10 * (uint64_t)(i / 2), (uint16_t)(i % 3)};
		int pos = i;

		if (reversed) /* the stream read back to front (one batch) */
			pos = N - 1 - i;
		in[pos] = p;
	}
	for (int i = 0; i < N; i++) {
		m[i].p = in[i];
		m[i].pos = i;
		m[i].batch = i / (int)batch;
		m[i].idx = i % (int)batch;
	}
	qsort(m, N, sizeof(*m), model_cmp);
	o.batch = batch;
	ps = run_sort(in, &o, out, N, &n, -1);
	assert_int_equal(n, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(out[i].cpu, m[i].p.cpu);
		assert_int_equal(out[i].seq, m[i].p.seq);
		assert_int_equal(out[i].time, m[i].p.time - 1000);
	}
	expect_no_skips(ps, DEV0);
	assert_int_equal(blk_pipesort_forced(ps), 0);
	blk_pipesort_free(ps);
	free(in);
	free(m);
	free(out);
}

static void test_nearly_sorted_runs(void **state)
{
	(void)state;
	check_run(0, 1024);
	check_run(0, 512);
	check_run(0, 7);
	check_run(0, 1);
}

static void test_reversed_batch(void **state)
{
	(void)state;
	check_run(1, 1024);
}

/* Many records from 4 CPUs in small batches: time order holds, nothing is lost or skipped. */
static void test_many_cpus(void **state)
{
	enum { NCPU = 4, PER = 500 };
	struct prec *in = calloc(NCPU * PER + 1, sizeof(*in));
	struct got *out = calloc(NCPU * PER, sizeof(*out));
	struct blk_pipesort_opts o = {0};
	struct blk_pipesort *ps;
	uint32_t next[NCPU] = {0};
	int n, k = 0;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	/* round-robin over CPUs in the stream; per-CPU times increase, cross-CPU times mix */
	for (int i = 0; i < PER; i++)
		for (int c = 0; c < NCPU; c++) {
			in[k].dev = DEV0;
			in[k].cpu = (uint32_t)c;
			in[k].seq = (uint32_t)i + 1;
			in[k].time = 1000 + 10ull * i + (uint64_t)((c * 7) % 10);
			in[k].pdu_len = (uint16_t)(i % 3 == 0 ? 80 : i % 3);
			k++;
		}
	o.batch = 16;
	ps = run_sort(in, &o, out, NCPU * PER, &n, -1);
	assert_int_equal(n, NCPU * PER);
	for (int i = 0; i < n; i++) {
		if (i)
			assert_true(out[i].time >= out[i - 1].time);
		assert_int_equal(out[i].seq, ++next[out[i].cpu]);
	}
	expect_no_skips(ps, DEV0);
	blk_pipesort_free(ps);
	free(in);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_cpus_one_batch),
		cmocka_unit_test(test_batches_rebased),
		cmocka_unit_test(test_rebase_of_each_record),
		cmocka_unit_test(test_tie_order),
		cmocka_unit_test(test_nearly_sorted_runs),
		cmocka_unit_test(test_reversed_batch),
		cmocka_unit_test(test_many_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
