// SPDX-License-Identifier: GPL-2.0
/*
 * Value counts and the classic tree's median and modes (see seekstat.h).
 *
 * The classic btt inserts every value into a red-black tree as it arrives: a cache miss
 * per level for every value, ~48 bytes per distinct value. The shape of that tree is fixed
 * by the order in which distinct values first occur, so here the stream is only stored
 * (buffer, then temporary file) and the tree is built once at the end: the values are
 * sorted together with their positions, each distinct value gets its rank, its count and
 * the position of its first occurrence; then the ranks are inserted in first-occurrence
 * order. A new node becomes the child of its in-order neighbour (found in a bitmap of the
 * ranks already in the tree), exactly where the top-down descent would put it, and is
 * rebalanced with the same recolourings and rotations. In arrays indexed by rank the
 * neighbours, parents and rotated nodes lie close together in memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/seekstat-int.h"

#define NIL UINT32_MAX

/* the tree over ranks, and the bitmaps of the ranks in it */
struct rnode {
	uint32_t l, r, p; /* children and parent, by rank */
};

struct rtree {
	struct rnode *n;
	uint64_t *red;
	uint64_t *b0, *b1; /* ranks inserted; words of b0 that are non-zero */
	size_t nw0, nw1;
	uint32_t root;
};

static int bit(const uint64_t *b, size_t i)
{
	return (int)(b[i >> 6] >> (i & 63) & 1);
}

/* the largest rank in the tree below @r, or NIL */
static uint32_t pred(const struct rtree *t, size_t r)
{
	size_t w = r >> 6, w1;
	uint64_t m = t->b0[w] & ((1ull << (r & 63)) - 1), m1;

	if (m)
		return (uint32_t)((w << 6) + 63 - (size_t)__builtin_clzll(m));
	w1 = w >> 6;
	m1 = t->b1[w1] & ((1ull << (w & 63)) - 1);
	while (!m1) {
		if (!w1)
			return NIL;
		m1 = t->b1[--w1];
	}
	w = (w1 << 6) + 63 - (size_t)__builtin_clzll(m1);
	return (uint32_t)((w << 6) + 63 - (size_t)__builtin_clzll(t->b0[w]));
}

/* the smallest rank in the tree above @r, or NIL */
static uint32_t succ(const struct rtree *t, size_t r)
{
	size_t w = r >> 6, w1;
	uint64_t m = (r & 63) == 63 ? 0 : t->b0[w] & ~((2ull << (r & 63)) - 1), m1;

	if (m)
		return (uint32_t)((w << 6) + (size_t)__builtin_ctzll(m));
	w1 = w >> 6;
	m1 = (w & 63) == 63 ? 0 : t->b1[w1] & ~((2ull << (w & 63)) - 1);
	while (!m1) {
		if (++w1 >= t->nw1)
			return NIL;
		m1 = t->b1[w1];
	}
	w = (w1 << 6) + (size_t)__builtin_ctzll(m1);
	return (uint32_t)((w << 6) + (size_t)__builtin_ctzll(t->b0[w]));
}

static void set_red(struct rtree *t, uint32_t n, int red)
{
	if (red)
		t->red[n >> 6] |= 1ull << (n & 63);
	else
		t->red[n >> 6] &= ~(1ull << (n & 63));
}

static int is_red(const struct rtree *t, uint32_t n)
{
	return n != NIL && bit(t->red, n);
}

static void change_child(struct rtree *t, uint32_t old, uint32_t new, uint32_t parent)
{
	if (parent == NIL)
		t->root = new;
	else if (t->n[parent].l == old)
		t->n[parent].l = new;
	else
		t->n[parent].r = new;
}

static void rotate_left(struct rtree *t, uint32_t x)
{
	uint32_t y = t->n[x].r;

	t->n[x].r = t->n[y].l;
	if (t->n[y].l != NIL)
		t->n[t->n[y].l].p = x;
	t->n[y].p = t->n[x].p;
	change_child(t, x, y, t->n[x].p);
	t->n[y].l = x;
	t->n[x].p = y;
}

static void rotate_right(struct rtree *t, uint32_t x)
{
	uint32_t y = t->n[x].l;

	t->n[x].l = t->n[y].r;
	if (t->n[y].r != NIL)
		t->n[t->n[y].r].p = x;
	t->n[y].p = t->n[x].p;
	change_child(t, x, y, t->n[x].p);
	t->n[y].r = x;
	t->n[x].p = y;
}

/* the same recolourings and rotations as tests/unit/rbtree.c (and the classic tree) */
static void insert_fixup(struct rtree *t, uint32_t z)
{
	uint32_t p, g, u;

	while ((p = t->n[z].p) != NIL && is_red(t, p)) {
		g = t->n[p].p;
		if (p == t->n[g].l) {
			u = t->n[g].r;
			if (is_red(t, u)) {
				set_red(t, p, 0);
				set_red(t, u, 0);
				set_red(t, g, 1);
				z = g;
				continue;
			}
			if (z == t->n[p].r) {
				rotate_left(t, p);
				z = p;
				p = t->n[z].p;
			}
			set_red(t, p, 0);
			set_red(t, g, 1);
			rotate_right(t, g);
		} else {
			u = t->n[g].l;
			if (is_red(t, u)) {
				set_red(t, p, 0);
				set_red(t, u, 0);
				set_red(t, g, 1);
				z = g;
				continue;
			}
			if (z == t->n[p].l) {
				rotate_right(t, p);
				z = p;
				p = t->n[z].p;
			}
			set_red(t, p, 0);
			set_red(t, g, 1);
			rotate_left(t, g);
		}
	}
	set_red(t, t->root, 0);
}

/* Insert rank @r (not yet in the tree) where a top-down descent would end. */
static void insert(struct rtree *t, uint32_t r)
{
	uint32_t pr = pred(t, r), sc;

	t->n[r].l = t->n[r].r = NIL;
	set_red(t, r, 1);
	if (t->root == NIL) {
		t->root = r;
		t->n[r].p = NIL;
	} else if (pr != NIL && t->n[pr].r == NIL) {
		/* the successor, if any, is an ancestor of the predecessor */
		t->n[pr].r = r;
		t->n[r].p = pr;
	} else {
		/* the predecessor, if any, is an ancestor of the successor, whose left is free */
		sc = succ(t, r);
		t->n[sc].l = r;
		t->n[r].p = sc;
	}
	t->b0[r >> 6] |= 1ull << (r & 63);
	t->b1[r >> 12] |= 1ull << ((r >> 6) & 63);
	insert_fixup(t, r);
}

static int tree_alloc(struct rtree *t, size_t d)
{
	memset(t, 0, sizeof(*t));
	t->root = NIL;
	t->nw0 = (d + 63) / 64;
	t->nw1 = (t->nw0 + 63) / 64;
	t->n = seek_big_alloc(d * sizeof(*t->n));
	t->red = seek_big_alloc(t->nw0 * 8);
	t->b0 = seek_big_alloc(t->nw0 * 8);
	t->b1 = seek_big_alloc(t->nw1 * 8);
	return t->n && t->red && t->b0 && t->b1 ? 0 : -1;
}

static void tree_free(struct rtree *t, size_t d)
{
	seek_big_free(t->n, d * sizeof(*t->n));
	seek_big_free(t->red, t->nw0 * 8);
	seek_big_free(t->b0, t->nw0 * 8);
	seek_big_free(t->b1, t->nw1 * 8);
	memset(t, 0, sizeof(*t));
}

/* the values of rank 0..d-1: in memory, or in the temporary file */
struct keys {
	uint64_t *mem;
	int fd;
	uint64_t wbuf[512];
	size_t nw, n;
};

static int keys_put(struct keys *k, uint64_t v)
{
	if (k->mem) {
		k->mem[k->n++] = v;
		return 0;
	}
	k->wbuf[k->nw++] = v;
	if (k->nw == sizeof(k->wbuf) / sizeof(k->wbuf[0])) {
		if (seek_write_all(k->fd, k->wbuf, sizeof(k->wbuf), (off_t)(k->n * 8)))
			return -1;
		k->n += k->nw;
		k->nw = 0;
	}
	return 0;
}

static int keys_flush(struct keys *k)
{
	if (k->mem || !k->nw)
		return 0;
	if (seek_write_all(k->fd, k->wbuf, k->nw * 8, (off_t)(k->n * 8)))
		return -1;
	k->n += k->nw;
	k->nw = 0;
	return 0;
}

static int keys_get(const struct keys *k, uint32_t r, uint64_t *v)
{
	if (k->mem) {
		*v = k->mem[r];
		return 0;
	}
	return seek_read_all(k->fd, v, sizeof(*v), (off_t)r * 8);
}

/*
 * The first of @n entries of @size bytes, sorted by rank (their first member, a uint32_t),
 * whose rank is not below @rank
 */
static size_t by_rank(const void *v, size_t n, size_t size, uint32_t rank)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t r;

		memcpy(&r, (const char *)v + mid * size, sizeof(r));
		if (r < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * How often each rank occurred: one byte each, and the exact count of the few that occurred
 * 255 times or more in a list sorted by rank (the counts are made in rank order).
 */
struct counts {
	uint8_t *c8;
	size_t n8; /* bytes mapped */
	struct big_count {
		uint32_t rank, count;
	} * big;
	size_t nbig, abig;
	uint32_t rank, count; /* the run being counted */
	int open;
};

static int counts_flush(struct counts *cs)
{
	if (!cs->open)
		return 0;
	cs->open = 0;
	cs->c8[cs->rank] = cs->count < 255 ? (uint8_t)cs->count : 255;
	if (cs->count < 255)
		return 0;
	if (cs->nbig == cs->abig) {
		size_t na = cs->abig ? cs->abig * 2 : 64;
		struct big_count *b = realloc(cs->big, na * sizeof(*b));

		if (!b)
			return -1;
		cs->big = b;
		cs->abig = na;
	}
	cs->big[cs->nbig].rank = cs->rank;
	cs->big[cs->nbig++].count = cs->count;
	return 0;
}

/* a new distinct value, of rank @rank (ranks come in increasing order) */
static int counts_new(struct counts *cs, uint32_t rank)
{
	if (counts_flush(cs))
		return -1;
	cs->rank = rank;
	cs->count = 1;
	cs->open = 1;
	return 0;
}

static uint32_t counts_get(const struct counts *cs, uint32_t rank)
{
	if (cs->c8[rank] < 255)
		return cs->c8[rank];
	return cs->big[by_rank(cs->big, cs->nbig, sizeof(*cs->big), rank)].count;
}

/* -- the walks of the classic tree -- */

struct walk {
	const struct rtree *t;
	const struct counts *cnt;
	uint64_t target;
	uint32_t median;
	uint32_t *modes;
	size_t nmds, alloc;
	uint32_t most;
	int nomem;
};

static int median_walk(struct walk *w, uint32_t n)
{
	if (counts_get(w->cnt, n) >= w->target) {
		w->median = n;
		return 1;
	}
	if (w->t->n[n].l != NIL && median_walk(w, w->t->n[n].l))
		return 1;
	return w->t->n[n].r != NIL && median_walk(w, w->t->n[n].r);
}

static void mode_walk(struct walk *w, uint32_t n)
{
	uint32_t c;

	if (w->t->n[n].l != NIL)
		mode_walk(w, w->t->n[n].l);
	if (w->t->n[n].r != NIL)
		mode_walk(w, w->t->n[n].r);
	c = counts_get(w->cnt, n);
	if (c < w->most)
		return;
	if (c > w->most)
		w->nmds = 0;
	if (w->nmds == w->alloc) {
		size_t na = w->alloc ? w->alloc * 2 : 16;
		uint32_t *m = realloc(w->modes, na * sizeof(*m));

		if (!m) {
			w->nomem = 1;
			return;
		}
		w->modes = m;
		w->alloc = na;
	}
	w->modes[w->nmds++] = n;
	w->most = c;
}

/*
 * Values and positions packed in one word (value << pb | position), sorted in two halves
 * (the scratch array is half the size); positions are already in order, so sorting on the
 * value bits keeps them so. The array, or NULL with the error set.
 */
static uint64_t *sort_packed(struct seekstat *ss, uint64_t n, unsigned int pb, size_t *radix)
{
	uint64_t *s = seek_big_alloc(n * 8), *tmp, h = n / 2;
	unsigned int bits = pb + bits_for(ss->max);

	if (!s) {
		seekstat_oom(ss);
		return NULL;
	}
	if (seekstat_load(ss, s))
		goto fail;
	for (uint64_t i = 0; i < n; i++)
		s[i] = s[i] << pb | i;
	tmp = seek_big_alloc((n - h) * 8);
	if (!tmp) {
		seekstat_oom(ss);
		goto fail;
	}
	seek_radix_sort(s, tmp, h, pb, bits, radix);
	seek_radix_sort(s + h, tmp, n - h, pb, bits, radix);
	seek_big_free(tmp, (n - h) * 8);
	return s;
fail:
	seek_big_free(s, n * 8);
	return NULL;
}

/* the next word of the two sorted halves s[*i, h) and s[*j, n), merged */
static inline uint64_t merge_next(const uint64_t *s, uint64_t *i, uint64_t *j, uint64_t h,
				  uint64_t n)
{
	return *j >= n || (*i < h && s[*i] < s[*j]) ? s[(*i)++] : s[(*j)++];
}

/* what decides whether the tree is needed: a pass over the sorted values alone */
static void packed_stats(const uint64_t *s, uint64_t n, unsigned int pb, struct stats *st)
{
	uint64_t h = n / 2, i = 0, j = h, prev = 0, c = 0;

	memset(st, 0, sizeof(*st));
	while (i < h || j < n) {
		uint64_t v = merge_next(s, &i, &j, h, n) >> pb;

		if (c && v == prev) {
			c++;
			continue;
		}
		if (c)
			seek_stats_add(st, prev, c, n / 2);
		prev = v;
		c = 1;
	}
	if (c)
		seek_stats_add(st, prev, c, n / 2);
}

/*
 * The values the result can name (the modes, and the candidates for the median: the
 * ranks with the highest count or at least half of them), by rank: kept instead of every
 * distinct value when they are few.
 */
#define KEPT_MAX 4096

struct kept {
	struct kept_value {
		uint32_t rank, count;
		uint64_t v;
	} * v;
	size_t n;
};

static void kept_put(struct kept *kp, const struct stats *st, uint64_t target, uint32_t rank,
		     uint64_t count, uint64_t v)
{
	if (kp->v && (count == st->most || count >= target))
		kp->v[kp->n++] = (struct kept_value){rank, (uint32_t)count, v};
}

static uint64_t kept_value(const struct kept *kp, uint32_t rank)
{
	return kp->v[by_rank(kp->v, kp->n, sizeof(*kp->v), rank)].v;
}

/*
 * A second pass: each distinct value its rank and count, its first position marked with
 * the rank (rat: rank at position, NIL elsewhere), and its value kept (@kp when it has an
 * array, else every one in @k).
 */
static int packed_ranks(struct seekstat *ss, const uint64_t *s, uint64_t n, unsigned int pb,
			const struct stats *st, struct kept *kp, struct keys *k, struct counts *cnt,
			uint32_t *rat, uint32_t *d)
{
	uint64_t pm = (1ull << pb) - 1, h = n / 2, i = 0, j = h, prev = 0;

	memset(rat, 0xff, n * sizeof(*rat));
	*d = 0;
	while (i < h || j < n) {
		uint64_t x = merge_next(s, &i, &j, h, n), v = x >> pb;

		if (*d && v == prev) {
			cnt->count++;
			continue;
		}
		if (*d)
			kept_put(kp, st, n / 2, *d - 1, cnt->count, prev);
		if (!kp->v && keys_put(k, v))
			return seekstat_fail(ss, "cannot write the temporary file", errno);
		if (counts_new(cnt, *d))
			return seekstat_oom(ss);
		rat[x & pm] = (*d)++;
		prev = v;
	}
	if (*d)
		kept_put(kp, st, n / 2, *d - 1, cnt->count, prev);
	if (keys_flush(k))
		return seekstat_fail(ss, "cannot write the temporary file", errno);
	if (counts_flush(cnt))
		return seekstat_oom(ss);
	return 0;
}

/*
 * Values too wide to share a word with their position: sort the values alone, keep the
 * distinct ones (in @s, returned as the keys), then find each value's rank by binary
 * search, in stream order.
 */
static int ranks_search(struct seekstat *ss, uint64_t n, uint64_t *s, struct counts *cnt,
			uint32_t *d, size_t *radix, struct rtree *t)
{
	uint64_t *tmp = seek_big_alloc(n * 8), chunk[512];
	uint64_t i, done = 0;

	if (!tmp)
		return seekstat_oom(ss);
	if (seekstat_load(ss, s)) {
		seek_big_free(tmp, n * 8);
		return -1;
	}
	seek_radix_sort(s, tmp, n, 0, 64, radix);
	seek_big_free(tmp, n * 8);
	*d = 0;
	for (i = 0; i < n; i++) {
		if (*d && s[*d - 1] == s[i]) {
			cnt->count++;
			continue;
		}
		s[*d] = s[i];
		if (counts_new(cnt, (*d)++))
			return seekstat_oom(ss);
	}
	if (counts_flush(cnt))
		return seekstat_oom(ss);
	if (tree_alloc(t, *d))
		return seekstat_oom(ss);
	while (done < n) {
		uint64_t m = n - done < 512 ? n - done : 512, *v = chunk;

		if (done >= ss->nfile)
			v = ss->buf + (done - ss->nfile);
		else if (m > ss->nfile - done)
			m = ss->nfile - done;
		if (v == chunk && seek_read_all(ss->fd, chunk, m * 8, (off_t)(done * 8)))
			return seekstat_fail(ss, "cannot read back the temporary file", errno);
		for (i = 0; i < m; i++) {
			uint32_t lo = 0, hi = *d;

			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (s[mid] < v[i])
					lo = mid + 1;
				else
					hi = mid;
			}
			if (!bit(t->b0, lo))
				insert(t, lo);
		}
		done += m;
	}
	return 0;
}

static int translate(struct seekstat *ss, const struct keys *k, uint32_t d, const struct walk *w,
		     int have_median, struct seekstat_result *res)
{
	uint64_t v, *all = NULL;

	res->modes = malloc((w->nmds ? w->nmds : 1) * sizeof(*res->modes));
	if (!res->modes)
		return seekstat_oom(ss);
	if (!k->mem && w->nmds > 64) {
		all = seek_big_alloc((size_t)d * 8);
		if (!all)
			return seekstat_oom(ss);
		if (seek_read_all(k->fd, all, (size_t)d * 8, 0)) {
			seek_big_free(all, (size_t)d * 8);
			return seekstat_fail(ss, "cannot read back the temporary file", errno);
		}
	}
	for (size_t i = 0; i < w->nmds; i++) {
		if (all)
			v = all[w->modes[i]];
		else if (keys_get(k, w->modes[i], &v))
			return seekstat_fail(ss, "cannot read back the temporary file", errno);
		res->modes[i] = (long long)v;
	}
	seek_big_free(all, (size_t)d * 8);
	res->nmds = (int)w->nmds;
	res->most = (long)w->most;
	if (have_median) {
		if (keys_get(k, w->median, &v))
			return seekstat_fail(ss, "cannot read back the temporary file", errno);
		res->median = (long long)v;
	}
	return 0;
}

/* the result when the tree's shape does not show (one mode, at most one candidate) */
static int shapeless(struct seekstat *ss, const struct stats *st, struct seekstat_result *res)
{
	res->modes = malloc(sizeof(*res->modes));
	if (!res->modes)
		return seekstat_oom(ss);
	res->modes[0] = (long long)st->mode;
	res->nmds = 1;
	res->most = (long)st->most;
	res->median = st->ncand ? (long long)st->cand : 0;
	return 0;
}

/* 1 when @a is a proper ancestor of @b */
static int ancestor(const struct rtree *t, uint32_t a, uint32_t b)
{
	for (uint32_t x = t->n[b].p; x != NIL; x = t->n[x].p)
		if (x == a)
			return 1;
	return 0;
}

/* post-order: a descendant before its ancestor, else the smaller rank (left) first */
static int post_before(const struct rtree *t, uint32_t u, uint32_t v)
{
	if (ancestor(t, v, u))
		return 1;
	return !ancestor(t, u, v) && u < v;
}

/* modes this many or fewer are put in post-order by their ancestors, without a walk */
#define FEW_MODES 64

/*
 * The result from the values kept: the median read off the tree only when two candidates
 * or more have half the values, the modes ordered without a walk of the whole tree when
 * they are few.
 */
static int kept_result(struct seekstat *ss, struct walk *w, const struct stats *st,
		       const struct kept *kp, struct seekstat_result *res)
{
	size_t nm = 0;

	res->modes = malloc((st->nmost ? st->nmost : 1) * sizeof(*res->modes));
	if (!res->modes)
		return seekstat_oom(ss);
	res->most = (long)st->most;
	if (st->ncand == 1)
		res->median = (long long)st->cand;
	else if (st->ncand > 1 && median_walk(w, w->t->root))
		res->median = (long long)kept_value(kp, w->median);
	if (st->nmost > FEW_MODES) {
		mode_walk(w, w->t->root);
		if (w->nomem)
			return seekstat_oom(ss);
		for (size_t i = 0; i < w->nmds; i++)
			res->modes[i] = (long long)kept_value(kp, w->modes[i]);
		res->nmds = (int)w->nmds;
		return 0;
	}
	/* insertion sort of the few modes (ascending rank) into post-order */
	for (size_t i = 0; i < kp->n; i++) {
		uint32_t r = kp->v[i].rank;
		size_t j = nm;

		if (kp->v[i].count != st->most)
			continue;
		w->modes[nm] = r;
		for (; j > 0 && post_before(w->t, r, w->modes[j - 1]); j--)
			w->modes[j] = w->modes[j - 1];
		w->modes[j] = r;
		nm++;
	}
	for (size_t i = 0; i < nm; i++)
		res->modes[i] = (long long)kept_value(kp, w->modes[i]);
	res->nmds = (int)nm;
	return 0;
}

/* the tree over the ranks in the order of their first occurrence (rat) */
static void build_tree(struct rtree *t, const uint32_t *rat, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		/* the insertions ahead touch random ranks: start loading them now */
		if (i + 32 < n && rat[i + 32] != NIL) {
			__builtin_prefetch(&t->n[rat[i + 32]], 1);
			__builtin_prefetch(&t->b0[rat[i + 32] >> 6], 0);
		}
		if (rat[i] != NIL)
			insert(t, rat[i]);
	}
}

int seekstat_finish(struct seekstat *ss, struct seekstat_result *res)
{
	uint64_t n = ss->nfile + ss->nbuf;
	unsigned int pb = bits_for(n - 1);
	struct keys k = {.fd = ss->fd};
	struct rtree t = {.root = NIL};
	struct walk w = {.t = &t, .target = n / 2};
	struct counts cnt = {0};
	struct kept kp = {0};
	struct stats st;
	uint32_t *rat = NULL, d = 0;
	uint64_t *s = NULL, *sp = NULL;
	size_t *radix = NULL;
	int rc = -1, have_median = 0;

	memset(res, 0, sizeof(*res));
	if (!n)
		return 0;
	if (n >= UINT32_MAX) {
		snprintf(ss->err, sizeof(ss->err), "more than %u seeks in one stream",
			 UINT32_MAX - 1);
		return -1;
	}
	radix = malloc(sizeof(*radix) << seek_radix_bits(n));
	if (!radix)
		return seekstat_oom(ss);
	/* a stream too long to sort in memory: first see, in bounded memory, whether the tree is needed */
	if (seekstat_long(ss)) {
		if (ss->prepared) {
			st = ss->pre;
		} else if (seekstat_value_stats(ss, n, radix, &st,
						(uint64_t)ss->cap * RUN_FACTOR)) {
			free(radix);
			return -1;
		}
		if (st.nmost == 1 && st.ncand <= 1) {
			/* the tree's shape does not show: no need to build it */
			free(radix);
			return shapeless(ss, &st, res);
		}
	}
	if (pb + bits_for(ss->max) <= 64) {
		sp = sort_packed(ss, n, pb, radix);
		if (!sp)
			goto out;
		packed_stats(sp, n, pb, &st);
		if (st.nmost == 1 && st.ncand <= 1) {
			/* the tree's shape does not show: no need to build it */
			rc = shapeless(ss, &st, res);
			goto out;
		}
		if (st.nmost + st.ncand <= KEPT_MAX) {
			kp.v = malloc((st.nmost + st.ncand) * sizeof(*kp.v));
			w.modes = malloc((st.nmost < FEW_MODES ? st.nmost : FEW_MODES) *
					 sizeof(*w.modes));
			w.alloc = st.nmost < FEW_MODES ? st.nmost : FEW_MODES;
			if (!kp.v || !w.modes) {
				seekstat_oom(ss);
				goto out;
			}
		} else if (ss->fd < 0 && !(k.mem = malloc(n * 8))) {
			seekstat_oom(ss);
			goto out;
		}
		cnt.n8 = n;
		cnt.c8 = seek_big_alloc(n); /* pages beyond the distinct values stay untouched */
		rat = seek_big_alloc(n * sizeof(*rat));
		if (!cnt.c8 || !rat) {
			seekstat_oom(ss);
			goto out;
		}
		if (packed_ranks(ss, sp, n, pb, &st, &kp, &k, &cnt, rat, &d))
			goto out;
		seek_big_free(sp, n * 8);
		sp = NULL;
		if (tree_alloc(&t, d)) {
			seekstat_oom(ss);
			goto out;
		}
		build_tree(&t, rat, n);
		seek_big_free(rat, n * sizeof(*rat));
		rat = NULL;
	} else {
		cnt.n8 = n;
		cnt.c8 = seek_big_alloc(n); /* pages beyond the distinct values stay untouched */
		s = seek_big_alloc(n * 8);
		if (!cnt.c8 || !s) {
			seekstat_oom(ss);
			goto out;
		}
		k.mem = s;
		if (ranks_search(ss, n, s, &cnt, &d, radix, &t))
			goto out;
	}
	w.cnt = &cnt;
	if (kp.v) {
		rc = kept_result(ss, &w, &st, &kp, res);
		goto out;
	}
	have_median = median_walk(&w, t.root);
	mode_walk(&w, t.root);
	if (w.nomem) {
		seekstat_oom(ss);
		goto out;
	}
	tree_free(&t, d);
	seek_big_free(cnt.c8, cnt.n8);
	cnt.c8 = NULL;
	rc = translate(ss, &k, d, &w, have_median, res);
out:
	if (rc) {
		free(res->modes);
		memset(res, 0, sizeof(*res));
	}
	tree_free(&t, d);
	seek_big_free(rat, n * sizeof(*rat));
	seek_big_free(cnt.c8, cnt.n8);
	seek_big_free(sp, n * 8);
	free(cnt.big);
	free(kp.v);
	if (s)
		seek_big_free(s, n * 8);
	else
		free(k.mem);
	free(w.modes);
	free(radix);
	return rc;
}
