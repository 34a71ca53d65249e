// SPDX-License-Identifier: GPL-2.0
/*
 * btt's seek statistics (btt/report/seekstat.c) against a direct model: every value inserted into
 * a pointer red-black tree (tests/unit/rbtree.c) as it arrives, as the classic btt does, then the
 * pre-order "median" and post-order modes read off that tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbtree.h"
#include "report/seekstat.h"

struct bkt {
	struct rb_node rb;
	uint64_t v;
	long n;
};

struct model {
	struct rb_root root;
	struct bkt *pool;
	size_t np;
	uint64_t total;
	/* results */
	long long median;
	int have_median;
	long long *modes;
	int nmds;
	long most;
};

static void model_add(struct model *m, uint64_t v)
{
	struct rb_node **p = &m->root.node, *parent = NULL;
	struct bkt *b;

	m->total++;
	while (*p) {
		parent = *p;
		b = rb_entry(parent, struct bkt, rb);
		if (v < b->v) {
			p = &parent->left;
		} else if (v > b->v) {
			p = &parent->right;
		} else {
			b->n++;
			return;
		}
	}
	b = &m->pool[m->np++];
	b->v = v;
	b->n = 1;
	rb_link_node(&b->rb, parent, p);
	rb_insert_color(&b->rb, &m->root);
}

static int model_median(struct model *m, struct rb_node *n)
{
	struct bkt *b = rb_entry(n, struct bkt, rb);

	if ((uint64_t)b->n >= m->total / 2) {
		m->median = (long long)b->v;
		return 1;
	}
	if (n->left && model_median(m, n->left))
		return 1;
	return n->right && model_median(m, n->right);
}

static void model_modes(struct model *m, struct rb_node *n)
{
	struct bkt *b = rb_entry(n, struct bkt, rb);

	if (n->left)
		model_modes(m, n->left);
	if (n->right)
		model_modes(m, n->right);
	if (b->n < m->most)
		return;
	if (b->n > m->most)
		m->nmds = 0;
	m->modes[m->nmds++] = (long long)b->v;
	m->most = b->n;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* the model's answers for @v */
static void model_run(struct model *m, const uint64_t *v, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->pool = calloc(n ? n : 1, sizeof(*m->pool));
	m->modes = calloc(n ? n : 1, sizeof(*m->modes));
	assert_non_null(m->pool);
	assert_non_null(m->modes);
	for (size_t i = 0; i < n; i++)
		model_add(m, v[i]);
	if (m->root.node) {
		model_median(m, m->root.node);
		model_modes(m, m->root.node);
	}
}

static void model_free(struct model *m)
{
	free(m->pool);
	free(m->modes);
}

static struct seekstat *fed(const uint64_t *v, size_t n, size_t membuf)
{
	struct seekstat *ss = seekstat_new(membuf);

	assert_non_null(ss);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(seekstat_add(ss, v[i]), 0);
	return ss;
}

static void compare(struct seekstat *ss, const struct model *m)
{
	struct seekstat_result res;

	assert_int_equal(seekstat_finish(ss, &res), 0);
	assert_int_equal(res.median, m->median);
	assert_int_equal(res.nmds, m->nmds);
	assert_int_equal(res.most, m->most);
	for (int i = 0; i < m->nmds; i++)
		assert_int_equal(res.modes[i], m->modes[i]);
	free(res.modes);
	seekstat_free(ss);
}

/*
 * Feed @v to both, compare median, modes (order included) and their count; a long
 * stream also through seekstat_prepare() with runs a half and a third as long.
 */
static void check(const uint64_t *v, size_t n, size_t membuf)
{
	struct model m;
	struct seekstat *ss = fed(v, n, membuf);

	model_run(&m, v, n);
	if (seekstat_long(ss)) {
		for (unsigned int share = 2; share <= 3; share++) {
			struct seekstat *ps = fed(v, n, membuf);

			assert_int_equal(seekstat_prepare(ps, share), 0);
			compare(ps, &m);
		}
	}
	compare(ss, &m);
	model_free(&m);
}

static void test_small(void **state)
{
	static const uint64_t a[] = {5, 3, 9, 3, 7, 1, 9, 9, 0, 2, 8, 4};

	(void)state;
	check(a, 0, 0);
	for (size_t n = 1; n <= sizeof(a) / sizeof(a[0]); n++)
		check(a, n, 0);
}

static void test_sorted_and_reversed(void **state)
{
	uint64_t v[3000];

	(void)state;
	for (size_t i = 0; i < 3000; i++)
		v[i] = i;
	check(v, 3000, 0);
	for (size_t i = 0; i < 3000; i++)
		v[i] = 3000 - i;
	check(v, 3000, 0);
}

/* many ties: the order of equal modes is the tree's post-order */
static void test_ties(void **state)
{
	static uint64_t v[20000];
	uint64_t s = 88172645463325252ull;

	(void)state;
	for (uint64_t range = 2; range <= 20000; range *= 7) {
		for (size_t i = 0; i < 20000; i++)
			v[i] = rnd(&s) % range * 8;
		check(v, 20000, 0);
		check(v, 20000, 100); /* through the temporary file */
	}
}

/* one value holding half of the stream, or exactly half in a two-value stream */
static void test_median(void **state)
{
	static uint64_t v[1001];
	uint64_t s = 42;

	(void)state;
	for (size_t i = 0; i < 1001; i++)
		v[i] = i % 2 ? 4096 : rnd(&s) % 100000;
	check(v, 1001, 64);
	for (size_t i = 0; i < 1000; i++)
		v[i] = i % 2 ? 8 : 16;
	check(v, 1000, 64);
}

/*
 * A few values tied for the most (2 to 80 of them, ordered by their ancestors in the tree
 * when few, by a walk when more), among values seen fewer times, in short random streams
 */
static void test_few_modes(void **state)
{
	static uint64_t v[2000];
	uint64_t s = 99;

	(void)state;
	for (int round = 0; round < 400; round++) {
		size_t k = 2 + (size_t)(rnd(&s) % 79), n = 0, most = 2 + (size_t)(rnd(&s) % 4);

		for (size_t i = 0; i < k; i++) {
			uint64_t x = (rnd(&s) % 5000 * 128 + i) * 8 + 1;

			for (size_t c = 0; c < most; c++)
				v[n++] = x;
		}
		/* ... among values seen once or twice (never equal to the tied ones) */
		for (size_t left = (size_t)(rnd(&s) % 1400); left; left--)
			v[n++] = rnd(&s) % 100000 * 8 + 2;
		for (size_t i = n; i > 1; i--) {
			size_t j = (size_t)(rnd(&s) % i);
			uint64_t x = v[i - 1];

			v[i - 1] = v[j];
			v[j] = x;
		}
		check(v, n, round % 2 ? 0 : 64);
	}
}

/* values too wide to share a word with their position: the binary-search path */
static void test_wide_values(void **state)
{
	static uint64_t v[5000];
	uint64_t s = 7;

	(void)state;
	for (size_t i = 0; i < 5000; i++)
		v[i] = i % 3 ? (rnd(&s) >> 1) : (uint64_t)(i % 50);
	check(v, 5000, 0);
	check(v, 5000, 333);
}

static void test_large_random(void **state)
{
	size_t n = 300000;
	uint64_t *v = malloc(n * sizeof(*v)), s = 12345;

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = rnd(&s) % 4000000 * 8;
	check(v, n, 0);
	free(v);
}

/* many sorted runs merged from the temporary file: one mode, two, many; a half-value median */
static void test_runs(void **state)
{
	static uint64_t v[30000];
	uint64_t s = 99;

	(void)state;
	for (size_t i = 0; i < 30000; i++)
		v[i] = i % 7 == 0 ? 512 : rnd(&s) % 50000;
	check(v, 30000, 16);
	for (size_t i = 0; i < 30000; i++)
		v[i] = i % 2 ? 8 : rnd(&s) % 3000;
	check(v, 30000, 16);
	for (size_t i = 0; i < 30000; i++)
		v[i] = i % 1000;
	check(v, 30000, 16);
	for (size_t i = 0; i < 30000; i++)
		v[i] = rnd(&s) % 6;
	check(v, 30000, 16);
}

/*
 * Long streams decided by their frequent values (or not): none frequent enough (sorted
 * after all), two as frequent as each other (the tree decides), one that only appears in
 * the second half among many rare ones, one held by exactly half the stream, one just
 * frequent enough among values that each once fill the table.
 */
static void test_frequent(void **state)
{
	static uint64_t v[40000];
	uint64_t s = 777;

	(void)state;
	for (size_t i = 0; i < 40000; i++)
		v[i] = rnd(&s) % 1000000;
	check(v, 40000, 16);
	for (size_t i = 0; i < 40000; i++)
		v[i] = i % 4 == 0 ? 24 : i % 4 == 1 ? 8 : rnd(&s) % 100000;
	check(v, 40000, 16);
	for (size_t i = 0; i < 40000; i++)
		v[i] = i >= 20000 && i % 10 == 0 ? 4096 : rnd(&s) % 100000;
	check(v, 40000, 16);
	for (size_t i = 0; i < 40000; i++)
		v[i] = i % 2 ? 5 : 6 + rnd(&s) % 100000;
	check(v, 40000, 16);
	for (size_t i = 0; i < 40000; i++)
		v[i] = i % 1000 == 0 ? 7 : 100 + i;
	check(v, 40000, 16);
	for (size_t i = 0; i < 40000; i++)
		v[i] = i % 39 == 0 ? 7 : 100 + i;
	check(v, 40000, 16);
}

struct job {
	struct seekstat *ss;
	int rc;
};

static void *prepare_job(void *arg)
{
	struct job *j = arg;

	j->rc = seekstat_prepare(j->ss, 2);
	return NULL;
}

/* long streams prepared two at a time on two threads, as btt does before its report */
static void test_prepare_threads(void **state)
{
	enum { N = 40000, STREAMS = 4 };
	static uint64_t v[STREAMS][N];
	struct model m[STREAMS];
	struct job j[STREAMS];
	uint64_t s = 4242;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		v[0][i] = rnd(&s) % 100000;
		v[1][i] = i % 3 ? 16u : rnd(&s) % 9000;
		v[2][i] = i % 500;
		v[3][i] = rnd(&s) % 4;
	}
	for (int k = 0; k < STREAMS; k++) {
		model_run(&m[k], v[k], N);
		j[k].ss = fed(v[k], N, 16);
		assert_true(seekstat_long(j[k].ss));
	}
	for (int k = 0; k < STREAMS; k += 2) {
		pthread_t th;

		assert_int_equal(pthread_create(&th, NULL, prepare_job, &j[k]), 0);
		prepare_job(&j[k + 1]);
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_int_equal(j[k].rc, 0);
		assert_int_equal(j[k + 1].rc, 0);
	}
	for (int k = 0; k < STREAMS; k++) {
		compare(j[k].ss, &m[k]);
		model_free(&m[k]);
	}
}

static void test_unwritable_tmpdir(void **state)
{
	struct seekstat *ss;
	int rc = 0;

	(void)state;
	setenv("TMPDIR", "/nonexistent/dir", 1);
	ss = seekstat_new(4);
	unsetenv("TMPDIR");
	assert_non_null(ss);
	for (int i = 0; i < 10 && !rc; i++)
		rc = seekstat_add(ss, (uint64_t)i);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(seekstat_error(ss), "/nonexistent/dir"));
	assert_non_null(strstr(seekstat_error(ss), "TMPDIR"));
	seekstat_free(ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_sorted_and_reversed),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_few_modes),
		cmocka_unit_test(test_wide_values),
		cmocka_unit_test(test_large_random),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_frequent),
		cmocka_unit_test(test_prepare_threads),
		cmocka_unit_test(test_unwritable_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
