// SPDX-License-Identifier: GPL-2.0
/*
 * btt's compact trees of queued I/Os (btt/model/qtree.c) against a direct model: the same
 * operations on tests/unit/rbtree.c's pointer tree, searched the way the classic btt searches it.
 * After every operation both trees must have the same shape and colours, and every search
 * (the fast paths from the tables included) the same answer in the same order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/qtree.h"
#include "rbtree.h"

struct mnode {
	struct rb_node rb;
	uint64_t sector;
	uint32_t nsec;
	uint32_t qi; /* the same I/O's node in the qtree */
};

struct world {
	struct rb_root root;
	struct qpool pool;
	struct qtree t;
	struct mnode **live; /* nodes in the model, for erasure */
	size_t nlive, alive;
	uint64_t last_end; /* end of the last insertion */
	uint64_t rng;
	/* sequences compared */
	uint64_t *a, *b;
	size_t na, nb, cap, capb;
	/* the whole shape compared after every check_every-th step (UNIT_CHECK_EVERY, default
	 * 1; run-unit.sh sets it under valgrind, where the O(n) comparison after each of
	 * 13,000 steps of 20,000 nodes took 100 s: the same steps run, the model is compared
	 * less often) */
	unsigned long check_every, steps;
};

static uint64_t rnd(struct world *w)
{
	return test_xorshift(&w->rng);
}

static void push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*v = realloc(*v, *cap * sizeof(**v));
		assert_non_null(*v);
	}
	(*v)[(*n)++] = x;
}

/* ---- the model: the classic btt's code on the pointer tree ---- */

static struct mnode *m_insert(struct world *w, uint64_t sector, uint32_t nsec, int *replaced,
			      uint32_t *old_nsec)
{
	struct rb_node **p = &w->root.node, *parent = NULL;
	struct mnode *q = calloc(1, sizeof(*q));

	assert_non_null(q);
	q->sector = sector;
	q->nsec = nsec;
	*replaced = 0;
	while (*p) {
		struct mnode *o = rb_entry(*p, struct mnode, rb);

		parent = *p;
		if (sector < o->sector) {
			p = &parent->left;
		} else if (sector > o->sector) {
			p = &parent->right;
		} else {
			rb_replace_node(parent, &q->rb, &w->root);
			q->qi = o->qi;
			*old_nsec = o->nsec;
			for (size_t i = 0; i < w->nlive; i++)
				if (w->live[i] == o)
					w->live[i] = q;
			free(o);
			*replaced = 1;
			return q;
		}
	}
	rb_link_node(&q->rb, parent, p);
	rb_insert_color(&q->rb, &w->root);
	if (w->nlive == w->alive) {
		w->alive = w->alive ? w->alive * 2 : 256;
		w->live = realloc(w->live, w->alive * sizeof(*w->live));
		assert_non_null(w->live);
	}
	w->live[w->nlive++] = q;
	return q;
}

static struct mnode *m_find(struct world *w, uint64_t sector)
{
	struct rb_node *n = w->root.node;

	while (n) {
		struct mnode *q = rb_entry(n, struct mnode, rb);

		if (sector < q->sector)
			n = n->left;
		else if (sector >= q->sector + q->nsec)
			n = n->right;
		else
			return q;
	}
	return NULL;
}

static void m_collect(struct world *w, struct rb_node *n, uint64_t s, uint64_t e)
{
	struct mnode *q;
	uint64_t qe;

	if (!n)
		return;
	q = rb_entry(n, struct mnode, rb);
	qe = q->sector + q->nsec;
	if (s <= q->sector && qe <= e)
		push(&w->a, &w->na, &w->cap, q->sector);
	if (s < q->sector)
		m_collect(w, n->left, s, e);
	if (qe < e)
		m_collect(w, n->right, s, e);
}

/* ---- comparisons ---- */

static void shape_model(struct world *w, struct rb_node *n)
{
	struct mnode *q;

	if (!n) {
		push(&w->a, &w->na, &w->cap, UINT64_MAX);
		return;
	}
	q = rb_entry(n, struct mnode, rb);
	push(&w->a, &w->na, &w->cap, q->sector);
	push(&w->a, &w->na, &w->cap, (uint64_t)q->nsec << 1 | (uint64_t)n->red);
	shape_model(w, n->left);
	shape_model(w, n->right);
}

static void shape_qtree(struct world *w, uint32_t i, uint32_t parent)
{
	const struct qnode *n;

	if (!i) {
		push(&w->b, &w->nb, &w->capb, UINT64_MAX);
		return;
	}
	n = &w->pool.node[i];
	assert_int_equal(w->pool.aux[i].parent, parent);
	/* the payload follows the node */
	assert_int_equal(*(uint64_t *)qpool_data(&w->pool, i), n->sector);
	push(&w->b, &w->nb, &w->capb, n->sector);
	push(&w->b, &w->nb, &w->capb,
	     (uint64_t)qtree_nsec(&w->pool, i) << 1 | (w->pool.aux[i].nsec_red & 1));
	shape_qtree(w, n->left, i);
	shape_qtree(w, n->right, i);
}

static void check_shape(struct world *w)
{
	w->na = w->nb = 0;
	shape_model(w, w->root.node);
	shape_qtree(w, w->t.root, 0);
	assert_int_equal(w->na, w->nb);
	assert_memory_equal(w->a, w->b, w->na * sizeof(*w->a));
	assert_int_equal(w->t.n, w->nlive);
	/* the in-order walk (qtree_first, qtree_next) meets the nodes in sector order */
	{
		struct rb_node *n = rb_first(&w->root);
		uint32_t i = qtree_first(&w->pool, &w->t);

		for (; n; n = rb_next(n), i = qtree_next(&w->pool, i)) {
			assert_int_not_equal(i, 0);
			assert_int_equal(w->pool.node[i].sector, rb_entry(n, struct mnode, rb)->sector);
		}
		assert_int_equal(i, 0);
	}
}

/* after a step: the shape, or every check_every-th time */
static void step_check(struct world *w)
{
	if (++w->steps % w->check_every == 0)
		check_shape(w);
}

/* every slot handed out is in the tree or on the free list, once */
static void check_pool(struct world *w)
{
	uint32_t nfree = 0;

	for (uint32_t i = w->pool.free; i; i = w->pool.aux[i].parent) {
		assert_true(i < w->pool.used);
		assert_true(++nfree < w->pool.used);
	}
	assert_int_equal(w->pool.live, w->nlive);
	assert_int_equal(nfree + w->nlive + 1, w->pool.used);
	/* the recent-lookup cache names only nodes in the tree */
	for (size_t h = 0; h < QTREE_RECENT; h++) {
		uint32_t i = w->t.recent[h];
		size_t k;

		if (!i)
			continue;
		for (k = 0; k < w->nlive && w->live[k]->qi != i; k++)
			;
		assert_true(k < w->nlive);
		assert_int_equal(w->pool.node[i].sector, w->live[k]->sector);
	}
}

static void check_find(struct world *w, uint64_t sector)
{
	struct mnode *m = m_find(w, sector);
	uint32_t i = qtree_find(&w->pool, &w->t, sector);

	if (!m) {
		assert_int_equal(i, 0);
		return;
	}
	assert_int_equal(i, m->qi);
}

static void check_collect(struct world *w, uint64_t s, uint64_t e)
{
	struct qmatch qm = {0};

	w->na = 0;
	m_collect(w, w->root.node, s, e);
	assert_int_equal(qtree_collect(&w->pool, &w->t, s, e, &qm), 0);
	assert_int_equal(qm.n, w->na);
	for (size_t k = 0; k < qm.n; k++)
		assert_int_equal(w->pool.node[qm.idx[k]].sector, w->a[k]);
	free(qm.idx);
}

static void world_init(struct world *w, uint64_t seed)
{
	const char *every = getenv("UNIT_CHECK_EVERY");

	memset(w, 0, sizeof(*w));
	w->rng = seed;
	w->check_every = every && strtoul(every, NULL, 10) ? strtoul(every, NULL, 10) : 1;
	qpool_init(&w->pool, sizeof(uint64_t));
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->nlive; i++)
		free(w->live[i]);
	free(w->live);
	qtree_reset(&w->t);
	qpool_release(&w->pool);
	free(w->a);
	free(w->b);
}

static void do_insert(struct world *w, uint64_t sector, uint32_t nsec)
{
	int rm, rq;
	uint32_t om = 0, oq = 0;
	struct mnode *m = m_insert(w, sector, nsec, &rm, &om);
	uint32_t i = qtree_insert(&w->pool, &w->t, sector, nsec, &rq, &oq);

	assert_int_not_equal(i, 0);
	assert_int_equal(rm, rq);
	if (rm) {
		assert_int_equal(i, m->qi);
		/* the replaced I/O's length is given back */
		assert_int_equal(om, oq);
	}
	m->qi = i;
	*(uint64_t *)qpool_data(&w->pool, i) = sector;
	w->last_end = sector + nsec;
}

static void do_erase(struct world *w, size_t k)
{
	struct mnode *m = w->live[k];

	qtree_erase(&w->pool, &w->t, m->qi);
	rb_erase(&m->rb, &w->root);
	w->live[k] = w->live[--w->nlive];
	free(m);
}

/*
 * A random mix of queue (insert), completion (collect, then erase what it found) and
 * lookups, over a sector space of @space: a small space gives overlaps, replacements and
 * nodes of no sectors, a large one mostly disjoint ranges.
 */
static void run(uint64_t seed, uint64_t space, int ops, int target, uint64_t *fast,
		uint64_t *hinted)
{
	struct world w;

	world_init(&w, seed);
	for (int op = 0; op < ops; op++) {
		uint64_t r = rnd(&w) % 100;

		if (r < 45 || w.nlive < (size_t)target / 2) {
			uint64_t s = rnd(&w) % space;
			uint32_t n = rnd(&w) % 50 == 0 ? 0 : (uint32_t)(1 + rnd(&w) % 64);

			/* sequential runs: the next I/O starts where one ends, often the last */
			if (w.nlive && rnd(&w) % 3 == 0) {
				struct mnode *m = w.live[rnd(&w) % w.nlive];

				s = m->sector + m->nsec;
			} else if (rnd(&w) % 3 == 0) {
				s = w.last_end;
			}
			do_insert(&w, s, n);
		} else if (r < 75 && w.nlive) {
			struct mnode *m = w.live[rnd(&w) % w.nlive];
			uint64_t s = m->sector, e = m->sector + m->nsec;
			struct qmatch qm = {0};

			switch (rnd(&w) % 4) {
			case 0:
				e += rnd(&w) % 128; /* a request of several */
				break;
			case 1:
				if (e > s)
					e -= 1 + rnd(&w) % (e - s);
				break;
			default:
				break;
			}
			check_collect(&w, s, e);
			/* complete what the walk found */
			assert_int_equal(qtree_collect(&w.pool, &w.t, s, e, &qm), 0);
			for (size_t k = 0; k < qm.n; k++)
				for (size_t j = 0; j < w.nlive; j++)
					if (w.live[j]->qi == qm.idx[k]) {
						do_erase(&w, j);
						break;
					}
			free(qm.idx);
		} else if (r < 85 && w.nlive) {
			do_erase(&w, rnd(&w) % w.nlive);
		} else if (w.nlive) {
			struct mnode *m = w.live[rnd(&w) % w.nlive];

			check_find(&w, m->sector);
			check_find(&w, m->sector + rnd(&w) % 80);
			check_find(&w, rnd(&w) % space);
			check_collect(&w, rnd(&w) % space, rnd(&w) % space);
		}
		step_check(&w);
	}
	check_shape(&w);
	check_pool(&w);
	*fast += w.t.fast;
	*hinted += w.t.hinted;
	world_free(&w);
}

static void test_overlapping(void **state)
{
	uint64_t fast = 0, hinted = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++)
		run(seed * 7919, 2000, 3000, 200, &fast, &hinted);
	assert_true(fast > 0);
	/* insertions placed from the last one's neighbours, shape checked after each */
	assert_true(hinted > 1000);
}

static void test_disjoint(void **state)
{
	uint64_t fast = 0, hinted = 0;

	(void)state;
	/* mostly disjoint ranges: the table answers most searches */
	for (uint64_t seed = 1; seed <= 10; seed++)
		run(seed * 104729, 1ull << 40, 4000, 300, &fast, &hinted);
	assert_true(fast > 10000);
	assert_true(hinted > 1000);
}

static void test_pool_growth(void **state)
{
	uint64_t fast = 0, hinted = 0;

	(void)state;
	/* 10,000 nodes live: the arrays move from the heap to anonymous memory
	 * (past 64 KiB) and grow by remapping there, the tree checked after every step */
	run(31337, 1ull << 40, 13000, 20000, &fast, &hinted);
	assert_true(hinted > 1000);
}

static void test_regions(void **state)
{
	(void)state;
	/* ranges long enough to span several 1 MiB regions, and wide ones */
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct world w;

		world_init(&w, seed);
		for (int op = 0; op < 2000; op++) {
			uint64_t s = rnd(&w) % (1ull << 22);
			uint32_t n = (uint32_t)(rnd(&w) % 3 == 0 ? rnd(&w) % (40u << 11)
								 : 1 + rnd(&w) % 4096);

			if (rnd(&w) % 3 == 0 && w.nlive) {
				do_erase(&w, rnd(&w) % w.nlive);
			} else {
				do_insert(&w, s, n);
				check_find(&w, s);
				check_collect(&w, s, s + n);
			}
			step_check(&w);
		}
		while (w.nlive)
			do_erase(&w, rnd(&w) % w.nlive);
		check_shape(&w);
		assert_int_equal(w.t.regions.n, 0);
		assert_int_equal(w.t.wide, 0);
		world_free(&w);
	}
}

/*
 * Starts that all hash to one slot of the table (its first size, 1024 slots; the hash is
 * recomputed here only to find them and check the table): runs of several hundred entries,
 * and deletions that shift them back. The table stays a linear probing table (each entry
 * after its home with no hole between); every node stays findable, an erased one is gone.
 */
static void check_table(struct world *w, uint64_t mul)
{
	uint32_t mask = (1u << w->t.bits) - 1, full = 0;

	for (uint32_t h = 0; h <= mask; h++) {
		uint32_t i = w->t.slot[h], home;

		if (!i)
			continue;
		full++;
		home = (uint32_t)((w->pool.node[i].sector * mul) >> (64 - w->t.bits));
		/* linear probing: no hole between a key's home and its slot */
		for (uint32_t k = home; k != h; k = (k + 1) & mask)
			assert_int_not_equal(w->t.slot[k], 0);
	}
	assert_int_equal(full, w->nlive);
}

static void test_collisions(void **state)
{
	const uint64_t mul = 0x9E3779B97F4A7C15ull;
	uint64_t keys[400];
	size_t nk = 0;
	struct world w;

	(void)state;
	for (uint64_t s = 8; nk < 400; s += 8)
		if ((s * mul) >> 54 == (8 * mul) >> 54)
			keys[nk++] = s;
	world_init(&w, 7);
	for (int round = 0; round < 3; round++) {
		for (size_t k = 0; k < nk; k++)
			if (!m_find(&w, keys[k]) && (round == 0 || rnd(&w) % 2))
				do_insert(&w, keys[k], 1);
		assert_int_equal(w.t.bits, 10);
		while (w.nlive > (round == 2 ? 0 : 50)) {
			uint64_t gone = w.live[0]->sector;

			do_erase(&w, rnd(&w) % w.nlive);
			gone = m_find(&w, gone) ? 0 : gone;
			if (gone)
				assert_int_equal(qtree_find(&w.pool, &w.t, gone), 0);
			for (size_t k = 0; k < w.nlive; k++)
				check_find(&w, w.live[k]->sector);
			check_table(&w, mul);
		}
		check_shape(&w);
		check_pool(&w);
	}
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlapping),
		cmocka_unit_test(test_disjoint),
		cmocka_unit_test(test_pool_growth),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
