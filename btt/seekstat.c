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
#include <sys/mman.h>
#include <unistd.h>

#include "seekstat.h"

#define NIL UINT32_MAX
#define DEFAULT_MEMBUF 4096
#define RADIX_BITS 13

/* what a pass over the sorted values finds: whether the tree's shape shows at all */
struct stats {
	uint64_t distinct, most, nmost, mode, ncand, cand;
};

struct seekstat {
	uint64_t *buf; /* values not yet in the file */
	size_t nbuf, cap;
	int fd; /* temporary file, -1 until the buffer first fills */
	uint64_t nfile; /* values in the file */
	uint64_t max;
	/* seekstat_prepare() ran: the value statistics of a long stream */
	int prepared;
	struct stats pre;
	char tmpdir[256];
	char err[512];
};

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

/* Large arrays come straight from mmap, so freeing them really returns the memory. */
static void *big_alloc(size_t size)
{
	void *p;

	if (!size)
		size = 1;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (size >= (2u << 20))
		madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static void big_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

static int fail(struct seekstat *ss, const char *what, int err)
{
	snprintf(ss->err, sizeof(ss->err),
		 "%s in %s: %s (set TMPDIR to a writable directory with space)", what, ss->tmpdir,
		 strerror(err));
	return -1;
}

static int oom(struct seekstat *ss)
{
	snprintf(ss->err, sizeof(ss->err), "out of memory for the seek statistics");
	return -1;
}

struct seekstat *seekstat_new(size_t membuf)
{
	struct seekstat *ss = calloc(1, sizeof(*ss));
	const char *dir = getenv("TMPDIR");

	if (!ss)
		return NULL;
	ss->cap = membuf ? membuf : DEFAULT_MEMBUF;
	ss->buf = malloc(ss->cap * sizeof(*ss->buf));
	if (!ss->buf) {
		free(ss);
		return NULL;
	}
	ss->fd = -1;
	snprintf(ss->tmpdir, sizeof(ss->tmpdir), "%s", dir && *dir ? dir : "/tmp");
	return ss;
}

const char *seekstat_error(const struct seekstat *ss)
{
	return ss->err;
}

static int write_all(int fd, const void *p, size_t len, off_t off)
{
	const char *c = p;

	while (len) {
		ssize_t w = pwrite(fd, c, len, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		c += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t len, off_t off)
{
	char *c = p;

	while (len) {
		ssize_t r = pread(fd, c, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		c += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

static int spill(struct seekstat *ss)
{
	if (ss->fd < 0) {
		char path[300];

		snprintf(path, sizeof(path), "%s/btt-seeks.XXXXXX", ss->tmpdir);
		ss->fd = mkstemp(path);
		if (ss->fd < 0)
			return fail(ss, "cannot create a temporary file", errno);
		unlink(path);
	}
	if (write_all(ss->fd, ss->buf, ss->nbuf * sizeof(*ss->buf),
		      (off_t)(ss->nfile * sizeof(*ss->buf))))
		return fail(ss, "cannot write the temporary file", errno);
	ss->nfile += ss->nbuf;
	ss->nbuf = 0;
	return 0;
}

int seekstat_add(struct seekstat *ss, uint64_t v)
{
	if (ss->nbuf == ss->cap && spill(ss))
		return -1;
	ss->buf[ss->nbuf++] = v;
	if (v > ss->max)
		ss->max = v;
	return 0;
}

static unsigned int bits_for(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/*
 * LSD radix sort of a[0..n) on bits [@lo, @hi); being stable, it keeps the input order
 * among equal keys. @tmp holds n values. Digits of at most RADIX_BITS bits, as few passes
 * as that allows: the counters stay in the first cache.
 */
static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n, unsigned int lo, unsigned int hi,
		       size_t *cnt)
{
	unsigned int bits = hi - lo, passes = (bits + RADIX_BITS - 1) / RADIX_BITS, digit;
	uint64_t *src = a, *dst = tmp, mask;

	if (!passes)
		return;
	digit = (bits + passes - 1) / passes;
	mask = (1ull << digit) - 1;
	for (unsigned int sh = lo; sh < hi; sh += digit) {
		size_t sum = 0;

		memset(cnt, 0, sizeof(*cnt) << digit);
		for (size_t i = 0; i < n; i++)
			cnt[(src[i] >> sh) & mask]++;
		for (size_t d = 0; d <= mask; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> sh) & mask]++] = src[i];
		uint64_t *t = src;

		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

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
	t->n = big_alloc(d * sizeof(*t->n));
	t->red = big_alloc(t->nw0 * 8);
	t->b0 = big_alloc(t->nw0 * 8);
	t->b1 = big_alloc(t->nw1 * 8);
	return t->n && t->red && t->b0 && t->b1 ? 0 : -1;
}

static void tree_free(struct rtree *t, size_t d)
{
	big_free(t->n, d * sizeof(*t->n));
	big_free(t->red, t->nw0 * 8);
	big_free(t->b0, t->nw0 * 8);
	big_free(t->b1, t->nw1 * 8);
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
		if (write_all(k->fd, k->wbuf, sizeof(k->wbuf), (off_t)(k->n * 8)))
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
	if (write_all(k->fd, k->wbuf, k->nw * 8, (off_t)(k->n * 8)))
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
	return read_all(k->fd, v, sizeof(*v), (off_t)r * 8);
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
	size_t lo = 0, hi = cs->nbig;

	if (cs->c8[rank] < 255)
		return cs->c8[rank];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->big[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return cs->big[lo].count;
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

static int load(struct seekstat *ss, uint64_t *s)
{
	if (ss->nfile && read_all(ss->fd, s, ss->nfile * 8, 0))
		return fail(ss, "cannot read back the temporary file", errno);
	memcpy(s + ss->nfile, ss->buf, ss->nbuf * 8);
	return 0;
}

/* what decides whether the tree is needed (see value_stats) */
static void stats_add(struct stats *st, uint64_t v, uint64_t c, uint64_t target)
{
	st->distinct++;
	if (c > st->most) {
		st->most = c;
		st->nmost = 1;
		st->mode = v;
	} else if (c == st->most) {
		st->nmost++;
	}
	if (c >= target && !st->ncand++)
		st->cand = v;
}

/*
 * Values and positions packed in one word (value << pb | position): after sorting, one
 * pass gives each distinct value its rank and count, and marks its first position with
 * the rank (rat: rank at position, NIL elsewhere).
 */
static int ranks_packed(struct seekstat *ss, uint64_t n, unsigned int pb, struct keys *k,
			struct counts *cnt, uint32_t *rat, uint32_t *d, size_t *radix,
			struct stats *st)
{
	uint64_t *s = big_alloc(n * 8), *tmp;
	uint64_t pm = (1ull << pb) - 1, h = n / 2, i, j, prev = 0;
	unsigned int bits = pb + bits_for(ss->max);
	int rc = -1;

	if (!s)
		return oom(ss);
	if (load(ss, s))
		goto out;
	for (i = 0; i < n; i++)
		s[i] = s[i] << pb | i;
	/* two sorted halves, merged below: the scratch array is half the size */
	tmp = big_alloc((n - h) * 8);
	if (!tmp) {
		oom(ss);
		goto out;
	}
	/* positions are already in order: sorting on the value bits keeps them so */
	radix_sort(s, tmp, h, pb, bits, radix);
	radix_sort(s + h, tmp, n - h, pb, bits, radix);
	big_free(tmp, (n - h) * 8);
	memset(rat, 0xff, n * sizeof(*rat));
	*d = 0;
	for (i = 0, j = h; i < h || j < n;) {
		uint64_t x = j >= n || (i < h && s[i] < s[j]) ? s[i++] : s[j++];
		uint64_t v = x >> pb;

		if (*d && v == prev) {
			cnt->count++;
			continue;
		}
		if (*d)
			stats_add(st, prev, cnt->count, n / 2);
		if (keys_put(k, v)) {
			fail(ss, "cannot write the temporary file", errno);
			goto out;
		}
		if (counts_new(cnt, *d)) {
			oom(ss);
			goto out;
		}
		rat[x & pm] = (*d)++;
		prev = v;
	}
	if (*d)
		stats_add(st, prev, cnt->count, n / 2);
	if (keys_flush(k)) {
		fail(ss, "cannot write the temporary file", errno);
		goto out;
	}
	if (counts_flush(cnt)) {
		oom(ss);
		goto out;
	}
	rc = 0;
out:
	big_free(s, n * 8);
	return rc;
}

/*
 * Values too wide to share a word with their position: sort the values alone, keep the
 * distinct ones (in @s, returned as the keys), then find each value's rank by binary
 * search, in stream order.
 */
static int ranks_search(struct seekstat *ss, uint64_t n, uint64_t *s, struct counts *cnt,
			uint32_t *d, size_t *radix, struct rtree *t)
{
	uint64_t *tmp = big_alloc(n * 8), chunk[512];
	uint64_t i, done = 0;

	if (!tmp)
		return oom(ss);
	if (load(ss, s)) {
		big_free(tmp, n * 8);
		return -1;
	}
	radix_sort(s, tmp, n, 0, 64, radix);
	big_free(tmp, n * 8);
	*d = 0;
	for (i = 0; i < n; i++) {
		if (*d && s[*d - 1] == s[i]) {
			cnt->count++;
			continue;
		}
		s[*d] = s[i];
		if (counts_new(cnt, (*d)++))
			return oom(ss);
	}
	if (counts_flush(cnt))
		return oom(ss);
	if (tree_alloc(t, *d))
		return oom(ss);
	while (done < n) {
		uint64_t m = n - done < 512 ? n - done : 512, *v = chunk;

		if (done >= ss->nfile)
			v = ss->buf + (done - ss->nfile);
		else if (m > ss->nfile - done)
			m = ss->nfile - done;
		if (v == chunk && read_all(ss->fd, chunk, m * 8, (off_t)(done * 8)))
			return fail(ss, "cannot read back the temporary file", errno);
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
		return oom(ss);
	if (!k->mem && w->nmds > 64) {
		all = big_alloc((size_t)d * 8);
		if (!all)
			return oom(ss);
		if (read_all(k->fd, all, (size_t)d * 8, 0)) {
			big_free(all, (size_t)d * 8);
			return fail(ss, "cannot read back the temporary file", errno);
		}
	}
	for (size_t i = 0; i < w->nmds; i++) {
		if (all)
			v = all[w->modes[i]];
		else if (keys_get(k, w->modes[i], &v))
			return fail(ss, "cannot read back the temporary file", errno);
		res->modes[i] = (long long)v;
	}
	big_free(all, (size_t)d * 8);
	res->nmds = (int)w->nmds;
	res->most = (long)w->most;
	if (have_median) {
		if (keys_get(k, w->median, &v))
			return fail(ss, "cannot read back the temporary file", errno);
		res->median = (long long)v;
	}
	return 0;
}

/*
 * -- whether the tree is needed at all --
 * The "median" is the first node in pre-order with at least half of the values: when one
 * value or none qualifies, the tree's shape does not matter. The modes are the nodes with
 * the highest count in post-order: when one value has it, the order does not matter
 * either. Both are known from the counts alone, which an external sort of the values gives
 * in bounded memory: runs of RUN_FACTOR x membuf values are sorted and written after the
 * spilled stream, then merged.
 */
#define RUN_FACTOR 128
#define MERGE_BUF 4096

/* values [from, from + cnt) of the stream: in the file, then in the buffer */
static int read_values(struct seekstat *ss, uint64_t from, uint64_t cnt, uint64_t *dst)
{
	if (from < ss->nfile) {
		uint64_t m = ss->nfile - from < cnt ? ss->nfile - from : cnt;

		if (read_all(ss->fd, dst, m * 8, (off_t)(from * 8)))
			return fail(ss, "cannot read back the temporary file", errno);
		dst += m;
		from += m;
		cnt -= m;
	}
	memcpy(dst, ss->buf + (from - ss->nfile), cnt * 8);
	return 0;
}

struct run {
	uint64_t next, end; /* file positions (in values) still to read */
	uint64_t buf[MERGE_BUF];
	size_t pos, len;
};

static int run_fill(struct seekstat *ss, struct run *r)
{
	uint64_t m = r->end - r->next < MERGE_BUF ? r->end - r->next : MERGE_BUF;

	if (read_all(ss->fd, r->buf, m * 8, (off_t)(r->next * 8)))
		return fail(ss, "cannot read back the temporary file", errno);
	r->next += m;
	r->pos = 0;
	r->len = (size_t)m;
	return 0;
}

/* a run's current value and the run: the heap compares keys without following runs */
struct head {
	uint64_t v;
	size_t run;
};

/* min-heap of the runs' current values */
static void heap_down(struct head *h, size_t nh, size_t i)
{
	struct head x = h[i];

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= nh)
			break;
		m = l + 1 < nh && h[l + 1].v < h[l].v ? l + 1 : l;
		if (!(h[m].v < x.v))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

/*
 * Before sorting: the frequent values, in two passes over the stream with a table of HH_K
 * counters (Misra-Gries). After the first, every value seen more than n / (HH_K + 1) times
 * is still in the table; the second counts those exactly. When the most frequent of them is
 * that frequent, so is every value as frequent as it, and every value held by half the
 * stream: the counts stats_add() would see for them are all known, in one pass each and a
 * table in the first cache instead of an external sort. Seek streams usually have such a
 * value (0: the next I/O starts where the last ended).
 */
#define HH_K 1023
#define HH_BITS 11 /* 2048 slots: at most half full */
#define HH_CHUNK 8192

struct hh {
	uint64_t key[1u << HH_BITS]; /* value + 1; 0 is an empty slot */
	uint64_t cnt[1u << HH_BITS];
	size_t n;
};

static size_t hh_slot(const struct hh *t, uint64_t key)
{
	size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - HH_BITS));

	while (t->key[h] && t->key[h] != key)
		h = (h + 1) & ((1u << HH_BITS) - 1);
	return h;
}

/* every counter one down; those at zero leave (a pass does this at most n / (HH_K + 1) times) */
static void hh_decrement(struct hh *t)
{
	uint64_t key[HH_K], cnt[HH_K];
	size_t m = 0;

	for (size_t h = 0; h < (1u << HH_BITS); h++)
		if (t->key[h] && t->cnt[h] > 1) {
			key[m] = t->key[h];
			cnt[m++] = t->cnt[h] - 1;
		}
	memset(t->key, 0, sizeof(t->key));
	for (size_t i = 0; i < m; i++) {
		size_t h = hh_slot(t, key[i]);

		t->key[h] = key[i];
		t->cnt[h] = cnt[i];
	}
	t->n = m;
}

/*
 * 1 with @st set (all but distinct) when the frequent values decide it, 0 when the most
 * frequent value is rarer than n / (HH_K + 1) (the caller sorts), -1 on an error.
 */
static int heavy_stats(struct seekstat *ss, uint64_t n, struct stats *st)
{
	uint64_t *a = malloc(HH_CHUNK * sizeof(*a)), target = n / 2, drops = 0, most = 0;
	struct hh *t = calloc(1, sizeof(*t));
	int rc = -1;

	if (!a || !t) {
		oom(ss);
		goto out;
	}
	/* a value counted as half the stream must be frequent enough to stay in the table */
	if (n < 2 || target * (HH_K + 1) <= n) {
		rc = 0;
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t from = 0; from < n; from += HH_CHUNK) {
			uint64_t m = n - from < HH_CHUNK ? n - from : HH_CHUNK;

			if (read_values(ss, from, m, a))
				goto out;
			for (uint64_t i = 0; i < m; i++) {
				size_t h = hh_slot(t, a[i] + 1);

				if (t->key[h]) {
					t->cnt[h]++;
				} else if (pass) {
					continue; /* not a candidate */
				} else if (t->n < HH_K) {
					t->key[h] = a[i] + 1;
					t->cnt[h] = 1;
					t->n++;
				} else {
					/* this value and one of each kept cancel out */
					hh_decrement(t);
					drops++;
				}
			}
		}
		if (pass)
			break;
		/* a counter is short of its value's count by at most the decrements */
		for (size_t h = 0; h < (1u << HH_BITS); h++)
			if (t->key[h] && t->cnt[h] + drops > most)
				most = t->cnt[h] + drops;
		if (most * (HH_K + 1) <= n) {
			rc = 0; /* no value can be frequent enough */
			goto out;
		}
		memset(t->cnt, 0, sizeof(t->cnt));
	}
	memset(st, 0, sizeof(*st));
	for (size_t h = 0; h < (1u << HH_BITS); h++)
		if (t->key[h] && t->cnt[h] > st->most)
			st->most = t->cnt[h];
	if (st->most * (HH_K + 1) <= n) {
		rc = 0;
		goto out;
	}
	/* in increasing order of value, as stats_add() meets them: the first of each wins */
	for (size_t h = 0; h < (1u << HH_BITS); h++) {
		uint64_t v, c = t->cnt[h];

		if (!t->key[h])
			continue;
		v = t->key[h] - 1;
		if (c == st->most && (!st->nmost++ || v < st->mode))
			st->mode = v;
		if (c >= target && (!st->ncand++ || v < st->cand))
			st->cand = v;
	}
	rc = 1;
out:
	free(a);
	free(t);
	return rc;
}

/* the same by an external sort: runs sorted and written to the file, then merged */
static int sorted_stats(struct seekstat *ss, uint64_t n, size_t *radix, struct stats *st,
			uint64_t runlen)
{
	uint64_t nruns = (n + runlen - 1) / runlen;
	uint64_t chunk = runlen, prev = 0, c = 0;
	uint64_t *a = big_alloc(chunk * 8), *tmp = big_alloc(chunk * 8);
	unsigned int kb = bits_for(ss->max);
	struct run *runs = NULL;
	struct head *h = NULL;
	size_t nh = 0;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!a || !tmp) {
		oom(ss);
		goto out;
	}
	/* sorted runs go after the stream in the temporary file */
	for (uint64_t r = 0; r < nruns; r++) {
		uint64_t from = r * runlen, m = n - from < runlen ? n - from : runlen;

		if (read_values(ss, from, m, a))
			goto out;
		radix_sort(a, tmp, m, 0, kb, radix);
		if (write_all(ss->fd, a, m * 8, (off_t)((n + from) * 8))) {
			fail(ss, "cannot write the temporary file", errno);
			goto out;
		}
	}
	big_free(a, chunk * 8);
	big_free(tmp, chunk * 8);
	a = tmp = NULL;
	runs = malloc(nruns * sizeof(*runs));
	h = malloc(nruns * sizeof(*h));
	if (!runs || !h) {
		oom(ss);
		goto out;
	}
	for (uint64_t r = 0; r < nruns; r++) {
		runs[r].next = n + r * runlen;
		runs[r].end = n + (n - r * runlen < runlen ? n : (r + 1) * runlen);
		if (run_fill(ss, &runs[r]))
			goto out;
		h[nh].v = runs[r].buf[0];
		h[nh++].run = (size_t)r;
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(h, nh, i);
	for (uint64_t i = 0; nh; i++) {
		struct run *r = &runs[h[0].run];
		uint64_t v = h[0].v;

		r->pos++;
		if (i && v != prev) {
			stats_add(st, prev, c, n / 2);
			c = 0;
		}
		prev = v;
		c++;
		if (r->pos == r->len) {
			if (r->next < r->end) {
				if (run_fill(ss, r))
					goto out;
			} else {
				h[0] = h[--nh];
				heap_down(h, nh, 0);
				continue;
			}
		}
		h[0].v = r->buf[r->pos];
		heap_down(h, nh, 0);
	}
	stats_add(st, prev, c, n / 2);
	rc = 0;
out:
	big_free(a, chunk * 8);
	big_free(tmp, chunk * 8);
	free(runs);
	free(h);
	return rc;
}

/* Only for a stream longer than a run (shorter ones are sorted in memory, see the caller). */
static int value_stats(struct seekstat *ss, uint64_t n, size_t *radix, struct stats *st,
		       uint64_t runlen)
{
	int rc = heavy_stats(ss, n, st);

	if (rc)
		return rc < 0 ? -1 : 0;
	return sorted_stats(ss, n, radix, st, runlen);
}

int seekstat_long(const struct seekstat *ss)
{
	return ss->nfile + ss->nbuf > (uint64_t)ss->cap * RUN_FACTOR * 2;
}

int seekstat_prepare(struct seekstat *ss, unsigned int share)
{
	uint64_t n = ss->nfile + ss->nbuf;
	size_t *radix;
	struct stats st;
	int rc;

	if (!seekstat_long(ss) || ss->prepared || n >= UINT32_MAX)
		return 0;
	radix = malloc(sizeof(*radix) << RADIX_BITS);
	if (!radix)
		return oom(ss);
	rc = value_stats(ss, n, radix, &st, (uint64_t)ss->cap * RUN_FACTOR / (share ? share : 1));
	free(radix);
	if (rc)
		return -1;
	ss->pre = st;
	ss->prepared = 1;
	return 0;
}

int seekstat_finish(struct seekstat *ss, struct seekstat_result *res)
{
	uint64_t n = ss->nfile + ss->nbuf;
	unsigned int pb = bits_for(n - 1);
	struct keys k = {.fd = ss->fd};
	struct rtree t = {.root = NIL};
	struct walk w = {.t = &t, .target = n / 2};
	struct counts cnt = {0};
	struct stats st;
	uint32_t *rat = NULL, d = 0;
	uint64_t *s = NULL;
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
	radix = malloc(sizeof(*radix) << RADIX_BITS);
	if (!radix)
		return oom(ss);
	/* a stream too long to sort in memory: first see, in bounded memory, whether the tree is needed */
	if (seekstat_long(ss)) {
		if (ss->prepared) {
			st = ss->pre;
		} else if (value_stats(ss, n, radix, &st, (uint64_t)ss->cap * RUN_FACTOR)) {
			free(radix);
			return -1;
		}
		if (st.nmost == 1 && st.ncand <= 1) {
			/* the tree's shape does not show: no need to build it */
			free(radix);
			res->modes = malloc(sizeof(*res->modes));
			if (!res->modes)
				return oom(ss);
			res->modes[0] = (long long)st.mode;
			res->nmds = 1;
			res->most = (long)st.most;
			res->median = st.ncand ? (long long)st.cand : 0;
			return 0;
		}
	}
	cnt.n8 = n;
	cnt.c8 = big_alloc(n); /* pages beyond the distinct values stay untouched */
	if (!radix || !cnt.c8) {
		oom(ss);
		goto out;
	}
	if (pb + bits_for(ss->max) <= 64) {
		if (ss->fd < 0 && !(k.mem = malloc(n * 8))) {
			oom(ss);
			goto out;
		}
		rat = big_alloc(n * sizeof(*rat));
		if (!rat) {
			oom(ss);
			goto out;
		}
		memset(&st, 0, sizeof(st));
		if (ranks_packed(ss, n, pb, &k, &cnt, rat, &d, radix, &st))
			goto out;
		if (st.nmost == 1 && st.ncand <= 1) {
			/* the tree's shape does not show: no need to build it */
			res->modes = malloc(sizeof(*res->modes));
			if (!res->modes) {
				oom(ss);
				goto out;
			}
			res->modes[0] = (long long)st.mode;
			res->nmds = 1;
			res->most = (long)st.most;
			res->median = st.ncand ? (long long)st.cand : 0;
			rc = 0;
			goto out;
		}
		if (tree_alloc(&t, d)) {
			oom(ss);
			goto out;
		}
		for (uint64_t i = 0; i < n; i++) {
			/* the insertions ahead touch random ranks: start loading them now */
			if (i + 32 < n && rat[i + 32] != NIL) {
				__builtin_prefetch(&t.n[rat[i + 32]], 1);
				__builtin_prefetch(&t.b0[rat[i + 32] >> 6], 0);
			}
			if (rat[i] != NIL)
				insert(&t, rat[i]);
		}
		big_free(rat, n * sizeof(*rat));
		rat = NULL;
	} else {
		s = big_alloc(n * 8);
		if (!s) {
			oom(ss);
			goto out;
		}
		k.mem = s;
		if (ranks_search(ss, n, s, &cnt, &d, radix, &t))
			goto out;
	}
	w.cnt = &cnt;
	have_median = median_walk(&w, t.root);
	mode_walk(&w, t.root);
	if (w.nomem) {
		oom(ss);
		goto out;
	}
	tree_free(&t, d);
	big_free(cnt.c8, cnt.n8);
	cnt.c8 = NULL;
	rc = translate(ss, &k, d, &w, have_median, res);
out:
	if (rc) {
		free(res->modes);
		memset(res, 0, sizeof(*res));
	}
	tree_free(&t, d);
	big_free(rat, n * sizeof(*rat));
	big_free(cnt.c8, cnt.n8);
	free(cnt.big);
	if (s)
		big_free(s, n * 8);
	else
		free(k.mem);
	free(w.modes);
	free(radix);
	return rc;
}

void seekstat_free(struct seekstat *ss)
{
	if (!ss)
		return;
	if (ss->fd >= 0)
		close(ss->fd);
	free(ss->buf);
	free(ss);
}
