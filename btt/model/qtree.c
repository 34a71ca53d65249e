// SPDX-License-Identifier: GPL-2.0
/*
 * Red-black trees over 32-bit node indexes (see qtree.h). The algorithm is tests/unit/rbtree.c's:
 * bottom-up insertion with recolouring and rotations, erasure that splices in the
 * in-order successor.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/qtree.h"
#include "model/u64map.h"

#define N(i) (p->node[i])
#define A(i) (p->aux[i])
#define NSEC(i) (A(i).nsec_red >> 3)
#define RED(i) ((i) && (A(i).nsec_red & 1))
#define REACH(i) (A(i).nsec_red & 2)
#define SET_RED(i) (A(i).nsec_red |= 1)
#define SET_BLACK(i) (A(i).nsec_red &= ~1u)

/*
 * The arrays start small, on the heap (a short trace's, or a device's few I/Os, cost no
 * system call and no page fault), and move to anonymous memory once one would exceed
 * HEAP_MAX bytes; from there they grow by remapping (no copy, no second copy in RSS).
 */
enum { FIRST_CAP = 64, HEAP_MAX = 64 << 10 };

void qpool_init(struct qpool *p, size_t data_size)
{
	memset(p, 0, sizeof(*p));
	p->data_size = data_size;
}

/* whether arrays of @cap slots are mapped (else on the heap); the same for the three */
static int mapped(const struct qpool *p, uint32_t cap)
{
	size_t widest = p->data_size > sizeof(struct qnode) ? p->data_size : sizeof(struct qnode);

	return (size_t)cap * widest > HEAP_MAX;
}

/* the length of an array of @cap slots of @size bytes (mmap takes no empty one) */
static size_t len_of(uint32_t cap, size_t size)
{
	size_t n = (size_t)cap * size;

	return n ? n : 1;
}

void qpool_release(struct qpool *p)
{
	if (p->cap && mapped(p, p->cap)) {
		munmap(p->node, len_of(p->cap, sizeof(*p->node)));
		munmap(p->aux, len_of(p->cap, sizeof(*p->aux)));
		munmap(p->data, len_of(p->cap, p->data_size));
	} else {
		/* heap arrays (some may be larger, after a failed growth) */
		free(p->node);
		free(p->aux);
		free(p->data);
	}
	qpool_init(p, p->data_size);
}

static void *map(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (len >= (4u << 20))
		madvise(m, len, MADV_HUGEPAGE);
	return m;
}

static void *remap(void *old, size_t old_len, size_t len)
{
	void *m = mremap(old, old_len, len, MREMAP_MAYMOVE);

	if (m == MAP_FAILED)
		return NULL;
	if (len >= (4u << 20))
		madvise(m, len, MADV_HUGEPAGE);
	return m;
}

static void *shrink(void *m, size_t len, size_t new_len)
{
	void *r = mremap(m, len, new_len, 0);

	return r == MAP_FAILED ? m : r; /* in place, it cannot fail; if it did, more stays */
}

/* the three arrays with @cap slots, the new ones zero; 0, or -1 (then still p->cap slots) */
static int resize(struct qpool *p, uint32_t cap)
{
	void **arr[3] = {(void **)&p->node, (void **)&p->aux, (void **)&p->data};
	size_t size[3] = {sizeof(*p->node), sizeof(*p->aux), p->data_size};
	void *m[3];

	if (!mapped(p, cap)) {
		for (int k = 0; k < 3; k++) {
			/* one that grew before a failure keeps its room: free() needs no size */
			unsigned char *r = realloc(*arr[k], len_of(cap, size[k]));

			if (!r)
				return -1;
			memset(r + p->cap * size[k], 0, (cap - p->cap) * size[k]);
			*arr[k] = r;
		}
		return 0;
	}
	if (!p->cap || !mapped(p, p->cap)) {
		/* from the heap to anonymous memory (fresh, so zero) */
		for (int k = 0; k < 3; k++) {
			m[k] = map(len_of(cap, size[k]));
			if (!m[k]) {
				while (k-- > 0)
					munmap(m[k], len_of(cap, size[k]));
				return -1;
			}
		}
		for (int k = 0; k < 3; k++) {
			if (p->cap)
				memcpy(m[k], *arr[k], p->cap * size[k]);
			free(*arr[k]);
			*arr[k] = m[k];
		}
		return 0;
	}
	for (int k = 0; k < 3; k++) {
		m[k] = remap(*arr[k], len_of(p->cap, size[k]), len_of(cap, size[k]));
		if (!m[k]) {
			/* give back what grew: every array has p->cap slots */
			while (k-- > 0)
				*arr[k] = shrink(*arr[k], len_of(cap, size[k]),
						 len_of(p->cap, size[k]));
			return -1;
		}
		*arr[k] = m[k];
	}
	return 0;
}

static uint32_t alloc_node(struct qpool *p)
{
	uint32_t i = p->free;

	p->live++;
	if (i) {
		p->free = A(i).parent;
		memset(qpool_data(p, i), 0, p->data_size);
		return i;
	}
	if (p->used == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : FIRST_CAP;

		if (p->cap >= (1u << 31) || resize(p, cap) < 0) {
			p->live--;
			return 0;
		}
		p->cap = cap;
		if (!p->used)
			p->used = 1; /* index 0 is none */
	}
	/* new slots are zero */
	return p->used++;
}

/* ---- the table: start sector -> node, linear probing ---- */

static inline uint32_t *recent(struct qtree *t, uint64_t sector)
{
	return &t->recent[(sector ^ sector >> 10) % QTREE_RECENT];
}

/* hash_get() past the recent nodes */
static __attribute__((noinline)) uint32_t hash_probe(const struct qpool *p, struct qtree *t,
						     uint64_t sector, uint32_t *r)
{
	uint32_t mask, h, i;

	if (!t->bits)
		return 0;
	mask = (1u << t->bits) - 1;
	for (h = u64_home(sector, t->bits); (i = t->slot[h]); h = (h + 1) & mask)
		if (N(i).sector == sector) {
			*r = i;
			return i;
		}
	return 0;
}

/* the node starting at @sector, or 0 */
static inline uint32_t hash_get(const struct qpool *p, struct qtree *t, uint64_t sector)
{
	uint32_t *r = recent(t, sector);

#ifndef QTREE_NO_RECENT
	if (*r && N(*r).sector == sector)
		return *r;
#endif
	return hash_probe(p, t, sector, r);
}

static void hash_put(const struct qpool *p, struct qtree *t, uint32_t i)
{
	uint32_t mask = (1u << t->bits) - 1, h;

	*recent(t, N(i).sector) = i;
	for (h = u64_home(N(i).sector, t->bits); t->slot[h]; h = (h + 1) & mask)
		;
	t->slot[h] = i;
}

/* room for one more node (at most 3/4 full); -1 when out of memory */
static int hash_reserve(const struct qpool *p, struct qtree *t)
{
	uint32_t *old = t->slot;
	unsigned int bits = t->bits ? t->bits : 10, old_bits = t->bits;

	while ((uint64_t)(t->n + 1) * 4 > (3ull << bits))
		bits++;
	if (bits == t->bits)
		return 0;
	if (bits > 32)
		return -1;
	t->slot = calloc((size_t)1 << bits, sizeof(*t->slot));
	if (!t->slot) {
		t->slot = old;
		return -1;
	}
	t->bits = bits;
	for (size_t k = 0; old_bits && k < ((size_t)1 << old_bits); k++)
		if (old[k])
			hash_put(p, t, old[k]);
	free(old);
	return 0;
}

/* backward-shift deletion: no tombstones */
static void hash_del(const struct qpool *p, struct qtree *t, uint32_t i)
{
	uint32_t mask = (1u << t->bits) - 1, h, j, *r = recent(t, N(i).sector);

	if (*r == i)
		*r = 0;
	for (h = u64_home(N(i).sector, t->bits); t->slot[h] != i; h = (h + 1) & mask)
		;
	for (j = (h + 1) & mask; t->slot[j]; j = (j + 1) & mask) {
		uint32_t hj = u64_home(N(t->slot[j]).sector, t->bits);

		if (((j - hj) & mask) >= ((j - h) & mask)) {
			t->slot[h] = t->slot[j];
			h = j;
		}
	}
	t->slot[h] = 0;
}

void qtree_reset(struct qtree *t)
{
	free(t->slot);
	u64map_free(&t->regions);
	for (size_t k = 0; t->pages.bits && k < ((size_t)1 << t->pages.bits); k++)
		if (t->pages.key[k])
			free((void *)(uintptr_t)t->pages.val[k]);
	u64map_free(&t->pages);
	memset(t, 0, sizeof(*t));
}

/* ---- per-region counts of the nodes that reach past their successor's start ---- */

enum {
	REGION_SHIFT = 11, /* 2048 sectors: 1 MiB */
	MAX_REGIONS = 16, /* a longer node counts in t->wide */
};

enum { PAGE_WORDS = QTREE_PAGE_REGIONS / 64 };

/* the bitmap page of region @r (its last word counts the bits set), or NULL */
static uint64_t *region_page(const struct qtree *t, uint64_t r)
{
	uint64_t *v = u64map_get(&t->pages, r / QTREE_PAGE_REGIONS + 1);

	return v ? (uint64_t *)(uintptr_t)*v : NULL;
}

/* the region of @sector holds no part of a reaching node */
static int region_clear(const struct qtree *t, uint64_t sector)
{
	uint64_t r = sector >> REGION_SHIFT, *pg;

	if (t->wide)
		return 0;
	if (!t->regions.n)
		return 1;
#ifdef QTREE_NO_PAGES
	return !u64map_get(&t->regions, r + 1);
#endif
	pg = region_page(t, r);
	r %= QTREE_PAGE_REGIONS;
	return !pg || !(pg[r / 64] >> (r % 64) & 1);
}

/* a page left without a bit set goes */
static void page_free(struct qtree *t, uint64_t r, uint64_t *pg)
{
	u64map_del(&t->pages, r / QTREE_PAGE_REGIONS + 1);
	free(pg);
}

static void region_uncount(struct qtree *t, uint64_t r)
{
	uint64_t *c = u64map_get(&t->regions, r + 1), *pg;

	if (--*c)
		return;
	u64map_del(&t->regions, r + 1);
#ifdef QTREE_NO_PAGES
	return;
#endif
	pg = region_page(t, r);
	pg[r % QTREE_PAGE_REGIONS / 64] &= ~(1ull << (r % 64));
	if (!--pg[PAGE_WORDS])
		page_free(t, r, pg);
}

/* a region's first reaching node: its count and its bit; -1 when out of memory */
static int region_first(struct qtree *t, uint64_t r)
{
	uint64_t *pg = region_page(t, r);

#ifdef QTREE_NO_PAGES
	return u64map_put(&t->regions, r + 1, 1);
#endif
	if (!pg) {
		pg = calloc(PAGE_WORDS + 1, sizeof(*pg));
		if (!pg || u64map_put(&t->pages, r / QTREE_PAGE_REGIONS + 1, (uintptr_t)pg) < 0) {
			free(pg);
			return -1;
		}
	}
	if (u64map_put(&t->regions, r + 1, 1) < 0) {
		if (!pg[PAGE_WORDS])
			page_free(t, r, pg);
		return -1;
	}
	pg[r % QTREE_PAGE_REGIONS / 64] |= 1ull << (r % 64);
	pg[PAGE_WORDS]++;
	return 0;
}

/*
 * Count the regions [start, end) touches; 1 when counted as wide instead (too many
 * regions, or the table could not grow: the fast paths stop, the answers stay right).
 */
static int regions_count(struct qtree *t, uint64_t start, uint64_t end)
{
	uint64_t r0 = start >> REGION_SHIFT, r1 = (end - 1) >> REGION_SHIFT;

	if (r1 - r0 >= MAX_REGIONS)
		goto wide;
	for (uint64_t r = r0; r <= r1; r++) {
		uint64_t *c = u64map_get(&t->regions, r + 1);

		if (c) {
			++*c;
		} else if (region_first(t, r) < 0) {
			for (uint64_t u = r0; u < r; u++)
				region_uncount(t, u);
			goto wide;
		}
	}
	return 0;
wide:
	t->wide++;
	return 1;
}

static void regions_uncount(struct qtree *t, uint64_t start, uint64_t end, int wide)
{
	if (wide) {
		t->wide--;
		return;
	}
	for (uint64_t r = start >> REGION_SHIFT; r <= (end - 1) >> REGION_SHIFT; r++)
		region_uncount(t, r);
}

/* ---- in-order neighbours, and whether ranges overlap ---- */

static uint32_t next(const struct qpool *p, uint32_t i)
{
	uint32_t par;

	if (N(i).right) {
		for (i = N(i).right; N(i).left; i = N(i).left)
			;
		return i;
	}
	while ((par = A(i).parent) && i == N(par).right)
		i = par;
	return par;
}

uint32_t qtree_next(const struct qpool *p, uint32_t i)
{
	return next(p, i);
}

uint32_t qtree_first(const struct qpool *p, const struct qtree *t)
{
	uint32_t i = t->root;

	while (i && N(i).left)
		i = N(i).left;
	return i;
}

static uint32_t prev(const struct qpool *p, uint32_t i)
{
	uint32_t par;

	if (N(i).left) {
		for (i = N(i).left; N(i).right; i = N(i).right)
			;
		return i;
	}
	while ((par = A(i).parent) && i == N(par).left)
		i = par;
	return par;
}

/* 1 when @a reaches past the start of its in-order successor @b */
static inline uint32_t ov(const struct qpool *p, uint32_t a, uint32_t b)
{
	return a && b && N(a).sector + NSEC(a) > N(b).sector;
}

static inline uint32_t empty(const struct qpool *p, uint32_t a)
{
	return NSEC(a) == 0;
}

/* set_reach() when the flag changes */
static __attribute__((noinline)) void reach_change(struct qpool *p, struct qtree *t, uint32_t x,
						   uint32_t on)
{
	uint64_t start, end;

	start = N(x).sector;
	end = start + NSEC(x);
	if (on) {
		A(x).nsec_red |= 2 | (regions_count(t, start, end) ? 4 : 0);
	} else {
		regions_uncount(t, start, end, A(x).nsec_red & 4);
		A(x).nsec_red &= ~6u;
	}
}

/* node @x reaches past the start of its successor (@on) or not (mostly, as it did) */
static inline void set_reach(struct qpool *p, struct qtree *t, uint32_t x, uint32_t on)
{
	if (x && !REACH(x) != !on)
		reach_change(p, t, x, on);
}

/* ---- searches ---- */

uint32_t qtree_find(const struct qpool *p, struct qtree *t, uint64_t sector)
{
	uint32_t i = t->root;

	/*
	 * The node starting at @sector holds it; another could only if it reached past its
	 * successor's start, and none touches this region: the descent would find it.
	 */
	i = hash_get(p, t, sector);
	if (i && NSEC(i) && region_clear(t, sector)) {
		t->fast++;
		return i;
	}
	t->slow++;
	/* the child is picked without a branch: the direction is a coin toss at each level */
	for (i = t->root; i;) {
		const struct qnode *n = &N(i);
		int right = sector >= n->sector;

		if (right && sector < n->sector + NSEC(i))
			return i;
		i = (&n->left)[right];
	}
	return 0;
}

static void change_child(struct qpool *p, uint32_t old, uint32_t new, uint32_t parent,
			 uint32_t *root)
{
	if (!parent)
		*root = new;
	else if (N(parent).left == old)
		N(parent).left = new;
	else
		N(parent).right = new;
}

static void rotate_left(struct qpool *p, uint32_t x, uint32_t *root)
{
	uint32_t y = N(x).right;

	N(x).right = N(y).left;
	if (N(y).left)
		A(N(y).left).parent = x;
	A(y).parent = A(x).parent;
	change_child(p, x, y, A(x).parent, root);
	N(y).left = x;
	A(x).parent = y;
}

static void rotate_right(struct qpool *p, uint32_t x, uint32_t *root)
{
	uint32_t y = N(x).left;

	N(x).left = N(y).right;
	if (N(y).right)
		A(N(y).right).parent = x;
	A(y).parent = A(x).parent;
	change_child(p, x, y, A(x).parent, root);
	N(y).right = x;
	A(x).parent = y;
}

static void insert_color(struct qpool *p, uint32_t z, uint32_t *root)
{
	uint32_t par, g, u;

	while ((par = A(z).parent) && RED(par)) {
		g = A(par).parent;
		if (par == N(g).left) {
			u = N(g).right;
			if (RED(u)) {
				SET_BLACK(par);
				SET_BLACK(u);
				SET_RED(g);
				z = g;
				continue;
			}
			if (z == N(par).right) {
				rotate_left(p, par, root);
				z = par;
				par = A(z).parent;
			}
			SET_BLACK(par);
			SET_RED(g);
			rotate_right(p, g, root);
		} else {
			u = N(g).left;
			if (RED(u)) {
				SET_BLACK(par);
				SET_BLACK(u);
				SET_RED(g);
				z = g;
				continue;
			}
			if (z == N(par).left) {
				rotate_right(p, par, root);
				z = par;
				par = A(z).parent;
			}
			SET_BLACK(par);
			SET_RED(g);
			rotate_left(p, g, root);
		}
	}
	SET_BLACK(*root);
}

/* a new node at @sector (not in the tree) between @pred and @succ, child of @parent */
static uint32_t link_new(struct qpool *p, struct qtree *t, uint64_t sector, uint32_t nsec,
			 uint32_t parent, uint32_t pred, uint32_t succ)
{
	uint32_t i;

	if (hash_reserve(p, t) < 0)
		return 0;
	i = alloc_node(p);
	if (!i)
		return 0;
	N(i).sector = sector;
	N(i).left = N(i).right = 0;
	A(i).parent = parent;
	A(i).nsec_red = (nsec << 3) | 1;
	if (!parent)
		t->root = i;
	else if (sector < N(parent).sector)
		N(parent).left = i;
	else
		N(parent).right = i;
	set_reach(p, t, pred, ov(p, pred, i));
	set_reach(p, t, i, ov(p, i, succ));
	t->zero += empty(p, i);
	t->n++;
	hash_put(p, t, i);
	insert_color(p, i, &t->root);
	t->hint_pred = i;
	t->hint_succ = succ;
	t->hint_ok = 1;
	return i;
}

/* an I/O queued again at a node's start: same place, links and colour, a new length */
static uint32_t replace(struct qpool *p, struct qtree *t, uint32_t i, uint32_t nsec)
{
	uint32_t s = next(p, i);

	set_reach(p, t, i, 0);
	t->zero -= empty(p, i);
	A(i).nsec_red = (nsec << 3) | (A(i).nsec_red & 1);
	t->zero += empty(p, i);
	set_reach(p, t, i, ov(p, i, s));
	return i;
}

uint32_t qtree_insert(struct qpool *p, struct qtree *t, uint64_t sector, uint32_t nsec,
		      int *replaced, uint32_t *old_nsec)
{
	uint32_t parent = 0, pred = t->hint_pred, succ = t->hint_succ, i;

	*replaced = 0;
	if (t->hint_ok && (!pred || N(pred).sector < sector) &&
	    (!succ || sector < N(succ).sector)) {
		/*
		 * Strictly between two adjacent nodes (so no node starts there), and one of them
		 * has a free link on the side of the other (pred's right, or else succ's left):
		 * the end of the descent. An empty tree has neither.
		 */
		t->hinted++;
		parent = pred && !N(pred).right ? pred : succ;
		return link_new(p, t, sector, nsec, parent, pred, succ);
	}
	pred = succ = 0;
	for (i = t->root; i;) {
		const struct qnode *o = &N(i);
		int right = sector > o->sector;

		if (sector == o->sector) {
			*replaced = 1;
			*old_nsec = NSEC(i);
			return replace(p, t, i, nsec);
		}
		parent = i;
		/* no branch on the direction */
		pred = right ? parent : pred;
		succ = right ? succ : parent;
		i = (&o->left)[right];
	}
	return link_new(p, t, sector, nsec, parent, pred, succ);
}

static void erase_fixup(struct qpool *p, uint32_t x, uint32_t parent, uint32_t *root)
{
	uint32_t w;

	while (x != *root && !RED(x)) {
		if (x == N(parent).left) {
			w = N(parent).right;
			if (RED(w)) {
				SET_BLACK(w);
				SET_RED(parent);
				rotate_left(p, parent, root);
				w = N(parent).right;
			}
			if (!RED(N(w).left) && !RED(N(w).right)) {
				SET_RED(w);
				x = parent;
				parent = A(x).parent;
			} else {
				if (!RED(N(w).right)) {
					SET_BLACK(N(w).left);
					SET_RED(w);
					rotate_right(p, w, root);
					w = N(parent).right;
				}
				if (RED(parent))
					SET_RED(w);
				else
					SET_BLACK(w);
				SET_BLACK(parent);
				if (N(w).right)
					SET_BLACK(N(w).right);
				rotate_left(p, parent, root);
				x = *root;
				break;
			}
		} else {
			w = N(parent).left;
			if (RED(w)) {
				SET_BLACK(w);
				SET_RED(parent);
				rotate_right(p, parent, root);
				w = N(parent).left;
			}
			if (!RED(N(w).left) && !RED(N(w).right)) {
				SET_RED(w);
				x = parent;
				parent = A(x).parent;
			} else {
				if (!RED(N(w).left)) {
					SET_BLACK(N(w).right);
					SET_RED(w);
					rotate_left(p, w, root);
					w = N(parent).left;
				}
				if (RED(parent))
					SET_RED(w);
				else
					SET_BLACK(w);
				SET_BLACK(parent);
				if (N(w).left)
					SET_BLACK(N(w).left);
				rotate_right(p, parent, root);
				x = *root;
				break;
			}
		}
	}
	if (x)
		SET_BLACK(x);
}

static void erase(struct qpool *p, uint32_t *root, uint32_t z)
{
	uint32_t x, parent, y;
	int removed_red;

	if (!N(z).left || !N(z).right) {
		x = N(z).left ? N(z).left : N(z).right;
		parent = A(z).parent;
		removed_red = RED(z);
		if (x)
			A(x).parent = parent;
		change_child(p, z, x, parent, root);
	} else {
		y = N(z).right;
		while (N(y).left)
			y = N(y).left;
		removed_red = RED(y);
		x = N(y).right;
		if (A(y).parent == z) {
			parent = y;
		} else {
			parent = A(y).parent;
			N(parent).left = x;
			if (x)
				A(x).parent = parent;
			N(y).right = N(z).right;
			A(N(z).right).parent = y;
		}
		N(y).left = N(z).left;
		A(N(z).left).parent = y;
		A(y).parent = A(z).parent;
		change_child(p, z, y, A(z).parent, root);
		if (RED(z))
			SET_RED(y);
		else
			SET_BLACK(y);
	}
	if (!removed_red && *root)
		erase_fixup(p, x, parent, root);
	A(z).parent = p->free;
	p->free = z;
	p->live--;
}

void qtree_erase(struct qpool *p, struct qtree *t, uint32_t z)
{
	int hint = t->hint_ok && (t->hint_pred == z || t->hint_succ == z);

	/*
	 * The neighbours matter when one of them is a hint, or when the predecessor may reach
	 * past z's start (and so perhaps past the successor's): then z's region is not clear.
	 * Otherwise the predecessor ends at or before z's start, so before the successor's.
	 */
	if (hint || REACH(z) || !region_clear(t, N(z).sector)) {
		uint32_t a = prev(p, z), b = next(p, z);

		if (t->hint_ok && t->hint_pred == z)
			t->hint_pred = a;
		if (t->hint_ok && t->hint_succ == z)
			t->hint_succ = b;
		set_reach(p, t, z, 0);
		set_reach(p, t, a, ov(p, a, b));
	}
	t->zero -= empty(p, z);
	t->n--;
	hash_del(p, t, z);
	erase(p, &t->root, z);
}

/* add() to a full list: it doubles first */
static __attribute__((noinline)) int add_slow(struct qmatch *m, uint32_t i)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint32_t *idx = realloc(m->idx, cap * sizeof(*idx));

	if (!idx)
		return -1;
	m->idx = idx;
	m->cap = cap;
	m->idx[m->n++] = i;
	return 0;
}

static inline int add(struct qmatch *m, uint32_t i)
{
	if (m->n == m->cap)
		return add_slow(m, i);
	m->idx[m->n++] = i;
	return 0;
}

/* pre-order, pruned as the classic walk prunes it */
static int walk(const struct qpool *p, uint32_t i, uint64_t s, uint64_t e, struct qmatch *m)
{
	while (i) {
		const struct qnode *n = &N(i);
		uint64_t qe = n->sector + NSEC(i);

		if (s <= n->sector && qe <= e && add(m, i) < 0)
			return -1;
		if (s < n->sector) {
			if (qe >= e) {
				i = n->left;
				continue;
			}
			if (walk(p, n->left, s, e, m) < 0)
				return -1;
		}
		i = qe < e ? n->right : 0;
	}
	return 0;
}

int qtree_collect(const struct qpool *p, struct qtree *t, uint64_t s, uint64_t e, struct qmatch *m)
{
	uint32_t i;

	m->n = 0;
	/*
	 * A node c starting at s that does not reach past its successor's start: any other
	 * node inside [s, e] would start in c's range, so there is none but c (and a node of
	 * no sectors at e, if c ends there). If c ends past e, the walk finds nothing; if it
	 * ends at e, the walk finds c unless an ancestor holding s (a reaching node, so its
	 * region would be counted) stops the descent.
	 */
	i = hash_get(p, t, s);
	if (i && !REACH(i) && NSEC(i)) {
		uint64_t qe = s + NSEC(i);
		uint32_t z;

		if (qe > e) {
			t->fast++;
			return 0;
		}
		if (qe == e && region_clear(t, s) &&
		    !(t->zero && (z = hash_get(p, t, e)) && !NSEC(z))) {
			t->fast++;
			return add(m, i);
		}
	}
	t->slow++;
	return walk(p, t->root, s, e, m);
}

void qtree_prefetch(const struct qpool *p, struct qtree *const *t, const uint64_t *sector, size_t n)
{
	uint32_t cur[QTREE_PREFETCH_MAX];
	size_t live = 0;

	for (size_t i = 0; i < n; i++) {
		cur[i] = t[i]->root;
		live += cur[i] != 0;
		if (t[i]->bits)
			__builtin_prefetch(&t[i]->slot[u64_home(sector[i], t[i]->bits)]);
	}
	while (live) {
		live = 0;
		for (size_t i = 0; i < n; i++) {
			const struct qnode *nd;
			uint32_t next;

			if (!cur[i])
				continue;
			nd = &N(cur[i]);
			next = sector[i] == nd->sector ? 0 : (&nd->left)[sector[i] > nd->sector];
			if (next) {
				__builtin_prefetch(&N(next));
				live++;
			}
			cur[i] = next;
		}
	}
}
