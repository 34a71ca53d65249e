// SPDX-License-Identifier: GPL-2.0
/*
 * btt --perfetto's queue of records waiting to be drawn in time order (btt/perfetto/pforder.c):
 * single records (in order, into the FIFO; out of order, into the heap) and runs (an I/O's
 * records, in order among themselves; in order, into the FIFO of runs until their first
 * record is taken; out of order, or once taken, in the heap by their next record) must come out
 * smallest (ts, order) first, whatever mix of them waits, as pfsort.c takes them (a run
 * taken is settled at once: its next record, or dropped). Checked against the records
 * waiting: each one taken must be the smallest of them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto/pforder.h"

#define MAX_RUN 8

struct key {
	uint64_t ts, order;
};

struct world {
	struct pforder q;
	uint64_t rng;
	struct key *want; /* the records waiting, a binary min-heap by (ts, order) */
	size_t nwant, awant;
	size_t pushed, taken;
	uint64_t (*runs)[MAX_RUN]; /* run id -> its records' times */
	uint32_t *rlen, *rk;
	uint64_t *rorder;
	size_t nruns, aruns;
	uint64_t seq;
};

static uint64_t rnd(struct world *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The records waiting are kept in a heap of the test's own, so that finding the smallest
 * costs log n: with a scan of all of them at each take (some 10,000 wait at a time) this test
 * took 27 CPU seconds under valgrind, 0.9 with the heap
 */
static void want(struct world *w, uint64_t ts, uint64_t order)
{
	size_t i;

	if (w->nwant == w->awant) {
		w->awant = w->awant ? w->awant * 2 : 1024;
		w->want = realloc(w->want, w->awant * sizeof(*w->want));
		assert_non_null(w->want);
	}
	i = w->nwant++;
	w->want[i] = (struct key){ts, order};
	while (i > 0 && key_cmp(&w->want[i], &w->want[(i - 1) / 2]) < 0) {
		struct key t = w->want[i];

		w->want[i] = w->want[(i - 1) / 2];
		w->want[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	w->pushed++;
}

/* @ts, @order was taken: it must be the smallest of the records waiting */
static void got(struct world *w, uint64_t ts, uint64_t order)
{
	size_t i = 0;

	assert_true(w->nwant > 0);
	assert_int_equal(w->want[0].ts, ts);
	assert_int_equal(w->want[0].order, order);
	w->want[0] = w->want[--w->nwant];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct key t;

		if (l < w->nwant && key_cmp(&w->want[l], &w->want[m]) < 0)
			m = l;
		if (l + 1 < w->nwant && key_cmp(&w->want[l + 1], &w->want[m]) < 0)
			m = l + 1;
		if (m == i)
			break;
		t = w->want[i];
		w->want[i] = w->want[m];
		w->want[m] = t;
		i = m;
	}
	w->taken++;
}

static void push_rec(struct world *w, uint64_t ts, uint64_t now)
{
	struct pf_rec r = {.ts = ts, .order = w->seq++};

	want(w, r.ts, r.order);
	pfo_push(&w->q, &r, now);
}

/* a run of @n records from @ts on, @gap apart (0: some at one time) */
static void push_run(struct world *w, uint64_t ts, unsigned int n, uint64_t gap)
{
	uint32_t id = (uint32_t)w->nruns;

	if (w->nruns == w->aruns) {
		w->aruns = w->aruns ? w->aruns * 2 : 1024;
		w->runs = realloc(w->runs, w->aruns * sizeof(*w->runs));
		w->rlen = realloc(w->rlen, w->aruns * sizeof(*w->rlen));
		w->rk = realloc(w->rk, w->aruns * sizeof(*w->rk));
		w->rorder = realloc(w->rorder, w->aruns * sizeof(*w->rorder));
		assert_true(w->runs && w->rlen && w->rk && w->rorder);
	}
	w->nruns++;
	w->rlen[id] = n;
	w->rk[id] = 0;
	w->rorder[id] = 1ull << 63 | w->seq;
	for (unsigned int k = 0; k < n; k++) {
		w->runs[id][k] = ts + k * gap;
		want(w, w->runs[id][k], w->rorder[id] + k);
	}
	w->seq += n;
	pfo_push_run(&w->q, ts, w->rorder[id], id, n);
}

/* take the smallest, as pfsort.c's take() does */
static void take(struct world *w)
{
	struct pf_rec r;

	if (pfo_pop(&w->q, &r)) {
		uint32_t id = r.slot, k = w->rk[id]++;

		assert_true(id < w->nruns);
		assert_int_equal(r.ts, w->runs[id][k]);
		assert_int_equal(r.order, w->rorder[id] + k);
		got(w, r.ts, r.order);
		if (w->rk[id] < w->rlen[id])
			pfo_run_next(&w->q, w->runs[id][w->rk[id]], w->rorder[id] + w->rk[id]);
		else
			pfo_run_drop(&w->q, 0);
		return;
	}
	got(w, r.ts, r.order);
}

static void world_free(struct world *w)
{
	pfo_free(&w->q);
	free(w->want);
	free(w->runs);
	free(w->rlen);
	free(w->rk);
	free(w->rorder);
}

/*
 * @steps events at a time moving on: a record now (or, one in @late, earlier), the run of an
 * I/O that began up to @span before now; a third of the time, what lies before now - @hold
 * is taken. Every record taken must be the smallest of those waiting.
 */
static void run_world(uint64_t seed, int steps, uint64_t span, unsigned int late, uint64_t hold)
{
	struct world w = {.rng = seed};
	uint64_t now = 1000000, ts, order;

	for (int i = 0; i < steps; i++) {
		now += rnd(&w) % 50;
		switch (rnd(&w) % 3) {
		case 0:
			ts = late && rnd(&w) % late == 0 ? now - rnd(&w) % (span + 1) : now;
			push_rec(&w, ts, now);
			break;
		case 1:
			push_run(&w, now - rnd(&w) % (span + 1), 1 + (unsigned int)(rnd(&w) % MAX_RUN),
				 rnd(&w) % 4 == 0 ? 0 : rnd(&w) % 30);
			break;
		default:
			while (pfo_min(&w.q, &ts, &order) && ts + hold < now)
				take(&w);
		}
	}
	while (pfo_min(&w.q, &ts, &order))
		take(&w);
	assert_int_equal(w.q.n, 0);
	assert_int_equal(w.nwant, 0);
	assert_int_equal(w.taken, w.pushed);
	world_free(&w);
}

/* runs nearly in order (short I/Os) */
static void test_short_runs(void **state)
{
	(void)state;
	run_world(1, 20000, 200, 0, 5000);
}

/* runs far out of order (long I/Os), records late */
static void test_long_runs(void **state)
{
	(void)state;
	run_world(2, 20000, 200000, 0, 300000);
	run_world(3, 20000, 200000, 5, 300000);
}

/* nothing held back: every record taken as soon as it is before now */
static void test_no_hold(void **state)
{
	(void)state;
	run_world(4, 20000, 1000, 7, 0);
}

/* runs one behind the other, each later than the last, and one before all of them */
static void test_run_before_all(void **state)
{
	struct world w = {.rng = 9};
	uint64_t ts, order;

	(void)state;
	for (int i = 0; i < 100; i++)
		push_run(&w, 1000 + 10 * (uint64_t)i, 2, 1);
	push_run(&w, 1000 + 10 * 2 - 5, 3, 2);
	push_run(&w, 1000 - 5, 2, 1);
	push_rec(&w, 990, 2000);
	while (pfo_min(&w.q, &ts, &order))
		take(&w);
	assert_int_equal(w.taken, w.pushed);
	world_free(&w);
}

/*
 * The FIFO of runs: runs in order, many more than its first size, taken while more come
 * (its ring wraps, then grows with its head not at 0); each run's next record either still
 * before the next run's first (it stays at the head) or after it (it moves to the heap);
 * runs at one time (the order decides), and now and then one out of order.
 */
static void test_runs_fifo(void **state)
{
	struct world w = {.rng = 11};
	uint64_t ts, order, t = 1000;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		t += rnd(&w) % 3; /* 0: at the time of the run before */
		push_run(&w, t, 1 + (unsigned int)(rnd(&w) % MAX_RUN), rnd(&w) % 2 ? 1 : 7);
		if (rnd(&w) % 16 == 0)
			push_run(&w, t - 1 - rnd(&w) % 20, 3, 2);
		/* behind the newest by 40: the FIFO holds some, wrapped */
		while (pfo_min(&w.q, &ts, &order) && ts + 40 < t && (i < 500 || i > 1500))
			take(&w);
	}
	while (pfo_min(&w.q, &ts, &order))
		take(&w);
	assert_int_equal(w.q.n, 0);
	assert_int_equal(w.taken, w.pushed);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_runs),
		cmocka_unit_test(test_long_runs),
		cmocka_unit_test(test_no_hold),
		cmocka_unit_test(test_run_before_all),
		cmocka_unit_test(test_runs_fifo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
