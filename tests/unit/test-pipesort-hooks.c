// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/pipesort.c: the observation hooks (struct blk_pipesort_hooks). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/pipesort.h"
#include "blk/reader.h"
#include "helpers.h"
#include "pipesort-helpers.h"

#define HMAX 64

/* What the hooks saw, in order: one letter per call and its arguments. */
struct hook_log {
	int n;
	char what[HMAX]; /* R read, E end, B batch, S sorted, X released, C cpu check, G gap, F filled */
	uint64_t tag[HMAX], a[HMAX], b[HMAX];
	int returned; /* records returned by blk_pipesort_next() when the hook was called */
};

/* Add a call to the log @ctx, the hooks' context (the assertions on the log check it came). */
static void hlog_add(void *ctx, char what, uint64_t tag, uint64_t a, uint64_t b)
{
	struct hook_log *l = ctx;

	assert_non_null(l);
	assert_true(l->n < HMAX);
	l->what[l->n] = what;
	l->tag[l->n] = tag;
	l->a[l->n] = a;
	l->b[l->n] = b;
	l->n++;
}

static uint64_t h_read(void *ctx, const struct blk_event *ev)
{
	hlog_add(ctx, 'R', 100 + ev->sequence, ev->time, 0);
	return 100 + ev->sequence;
}

static void h_end(void *ctx)
{
	hlog_add(ctx, 'E', 0, 0, 0);
}

static void h_batch(void *ctx)
{
	hlog_add(ctx, 'B', 0, 0, 0);
}

static void h_sorted(void *ctx, uint64_t tag, uint32_t device, uint32_t cpu, uint64_t time)
{
	assert_int_equal(device, DEV0);
	hlog_add(ctx, 'S', tag, cpu, time);
}

static void h_released(void *ctx, uint64_t tag)
{
	hlog_add(ctx, 'X', tag, (uint64_t)((struct hook_log *)ctx)->returned, 0);
}

static void h_cpu_check(void *ctx, uint64_t mask)
{
	hlog_add(ctx, 'C', 0, mask, 0);
}

static uint64_t h_gap(void *ctx, uint64_t start, uint64_t end)
{
	hlog_add(ctx, 'G', 700 + start, start, end);
	return 700 + start;
}

static void h_filled(void *ctx, uint64_t tag)
{
	hlog_add(ctx, 'F', tag, 0, 0);
}

static const struct blk_pipesort_hooks test_hooks = {
	h_read, h_end, h_batch, h_sorted, h_released, h_cpu_check, h_gap, h_filled, NULL,
};

/* Sort @in with the recording hooks; the sequence numbers returned go to @seqs. */
static void run_hooked(const struct prec *in, struct blk_pipesort_opts *o, struct hook_log *l,
		       uint32_t *seqs, int max, int *nout)
{
	struct blk_pipesort_hooks h = test_hooks;
	struct blk_pipesort *ps;
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];

	memset(l, 0, sizeof(*l));
	h.ctx = l;
	o->hooks = &h;
	write_stream(path, in, -1);
	r = blk_reader_open(path);
	assert_non_null(r);
	unlink(path);
	ps = blk_pipesort_new(r, o);
	assert_non_null(ps);
	*nout = 0;
	while (blk_pipesort_next(ps, &ev) == 1) {
		assert_true(*nout < max);
		seqs[(*nout)++] = ev.sequence;
		l->returned++;
	}
	blk_pipesort_free(ps);
}

static int hlog_count(const struct hook_log *l, char what)
{
	int n = 0;

	for (int i = 0; i < l->n; i++)
		n += l->what[i] == what;
	return n;
}

/*
 * Each record read gets the tag its hook returned; a batch is announced before its records
 * are sorted (with their rebased times); a record outside the stopwatch is released
 * without being returned, the others when the call after their return comes.
 */
static void test_hooks_record_life(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 1000, 0}, {DEV0, 0, 2, 2000, 0}, {DEV0, 0, 3, 3000, 0},
		{DEV0, 0, 4, 4000, 0}, {DEV0, 0, 5, 5000, 0}, END,
	};
	struct blk_pipesort_opts o = {0};
	struct hook_log l;
	uint32_t seqs[8];
	int n, batches = 0;

	(void)state;
	o.batch = 2;
	o.stop_end = 3500; /* after rebasing by 1000: seq 5 (4000) is dropped */
	run_hooked(in, &o, &l, seqs, 8, &n);
	assert_int_equal(n, 4);
	assert_int_equal(hlog_count(&l, 'R'), 5);
	assert_int_equal(hlog_count(&l, 'B'), 3);
	assert_int_equal(hlog_count(&l, 'S'), 5);
	assert_int_equal(hlog_count(&l, 'X'), 5);
	assert_true(hlog_count(&l, 'E') >= 1);
	assert_int_equal(hlog_count(&l, 'C') + hlog_count(&l, 'G') + hlog_count(&l, 'F'), 0);
	for (int i = 0; i < l.n; i++) {
		uint64_t seq = l.tag[i] - 100;

		switch (l.what[i]) {
		case 'B':
			batches++;
			break;
		case 'S':
			/* sorted after its batch was announced, read in that batch, rebased */
			assert_int_equal((seq + 1) / 2, batches);
			assert_int_equal(l.a[i], 0);
			assert_int_equal(l.b[i], seq * 1000 - 1000);
			break;
		case 'X':
			if (seq == 5) {
				/* dropped when its batch was sorted, after seq 4 was returned */
				assert_int_equal(l.a[i], 4);
			} else {
				/* returned as the seq-th record, released at the next call */
				assert_int_equal(l.a[i], seq);
			}
			break;
		}
	}
	/* each tag is released once, after it was sorted */
	for (uint64_t seq = 1; seq <= 5; seq++) {
		int sorted_at = -1, released = 0;

		for (int i = 0; i < l.n; i++) {
			if (l.tag[i] != 100 + seq)
				continue;
			if (l.what[i] == 'S')
				sorted_at = i;
			if (l.what[i] == 'X') {
				assert_true(sorted_at >= 0);
				released++;
			}
		}
		assert_int_equal(released, 1);
	}
}

/*
 * A gap recorded when a stalled window is released is announced with its range; the late
 * record that fills it makes the gap's tag come back as filled.
 */
static void test_hooks_gaps(void **state)
{
	static const struct prec in[] = {
		{DEV0, 0, 1, 100, 0}, {DEV0, 0, 3, 300, 0},
		{DEV0, 0, 4, 400, 0}, {DEV0, 0, 5, 500, 0},
		{DEV0, 0, 6, 600, 0}, {DEV0, 0, 7, 700, 0},
		{DEV0, 0, 8, 800, 0}, {DEV0, 0, 9, 900, 0},
		{DEV0, 0, 2, 950, 0}, END,
	};
	struct blk_pipesort_opts o = {0};
	struct hook_log l;
	uint32_t seqs[16];
	int n, g = -1, f = -1;

	(void)state;
	o.batch = 2;
	o.max_pending = 4;
	run_hooked(in, &o, &l, seqs, 16, &n);
	assert_int_equal(n, 9);
	assert_int_equal(hlog_count(&l, 'G'), 1);
	assert_int_equal(hlog_count(&l, 'F'), 1);
	for (int i = 0; i < l.n; i++) {
		if (l.what[i] == 'G')
			g = i;
		if (l.what[i] == 'F')
			f = i;
	}
	assert_int_equal(l.a[g], 2);
	assert_int_equal(l.b[g], 2);
	assert_true(f > g);
	assert_int_equal(l.tag[f], 702);
}

/*
 * A CPU whose first record returned is not sequence 0 or 1 makes the sorter look at the CPUs
 * in the window; one starting at 1 does not.
 */
static void test_hooks_cpu_check(void **state)
{
	static const struct prec in[] = {
		{DEV0, 3, 5, 100, 0},
		{DEV0, 3, 6, 200, 0},
		{DEV0, 1, 1, 300, 0},
		END,
	};
	struct blk_pipesort_opts o = {0};
	struct hook_log l;
	uint32_t seqs[8];
	int n;

	(void)state;
	run_hooked(in, &o, &l, seqs, 8, &n);
	assert_int_equal(n, 3);
	assert_int_equal(hlog_count(&l, 'C'), 1);
	for (int i = 0; i < l.n; i++)
		if (l.what[i] == 'C')
			assert_int_equal(l.a[i], (1ull << 3) | (1ull << 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hooks_record_life),
		cmocka_unit_test(test_hooks_gaps),
		cmocka_unit_test(test_hooks_cpu_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
