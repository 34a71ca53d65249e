// SPDX-License-Identifier: GPL-2.0
/*
 * The stored stream of a struct seekstat (see seekstat.h): a buffer, then an unlinked
 * temporary file, and what can be learnt from it in bounded memory before the classic
 * tree is built (seekstat.c): its frequent values (Misra-Gries) or, failing that, the
 * exact counts of an external sort (sorted runs written after the stream, then merged).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/seekstat-int.h"

#define DEFAULT_MEMBUF 4096
/* the buffer's first size, in values: it doubles up to the membuf as values arrive */
#define FIRST_BUF 128

/*
 * Large arrays come straight from mmap, so freeing them really returns the memory; small
 * ones (a short stream's) from calloc, without two system calls and a page fault each.
 * Both are zeroed. seek_big_free() gets the same size and tells them apart by it.
 */
#define SEEK_SMALL_ALLOC (64u << 10)

void *seek_big_alloc(size_t size)
{
	void *p;

	if (!size)
		size = 1;
	if (size < SEEK_SMALL_ALLOC)
		return calloc(1, size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (size >= (2u << 20))
		madvise(p, size, MADV_HUGEPAGE);
	return p;
}

void seek_big_free(void *p, size_t size)
{
	if (size < SEEK_SMALL_ALLOC)
		free(p);
	else if (p)
		munmap(p, size);
}

int seekstat_fail(struct seekstat *ss, const char *what, int err)
{
	snprintf(ss->err, sizeof(ss->err),
		 "%s in %s: %s (set TMPDIR to a writable directory with space)", what, ss->tmpdir,
		 strerror(err));
	return -1;
}

int seekstat_oom(struct seekstat *ss)
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
	ss->alloc = ss->cap < FIRST_BUF ? ss->cap : FIRST_BUF;
	ss->buf = malloc(ss->alloc * sizeof(*ss->buf));
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

int seek_write_all(int fd, const void *p, size_t len, off_t off)
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

int seek_read_all(int fd, void *p, size_t len, off_t off)
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
			return seekstat_fail(ss, "cannot create a temporary file", errno);
		unlink(path);
	}
	if (seek_write_all(ss->fd, ss->buf, ss->nbuf * sizeof(*ss->buf),
			   (off_t)(ss->nfile * sizeof(*ss->buf))))
		return seekstat_fail(ss, "cannot write the temporary file", errno);
	ss->nfile += ss->nbuf;
	ss->nbuf = 0;
	return 0;
}

/* the buffer is full but smaller than the membuf: twice the size (0), or -1 */
static int grow(struct seekstat *ss)
{
	size_t na = ss->alloc * 2 < ss->cap ? ss->alloc * 2 : ss->cap;
	uint64_t *nb = realloc(ss->buf, na * sizeof(*nb));

	if (!nb)
		return seekstat_oom(ss);
	ss->buf = nb;
	ss->alloc = na;
	return 0;
}

int seekstat_add(struct seekstat *ss, uint64_t v)
{
	if (ss->nbuf == ss->alloc && (ss->alloc < ss->cap ? grow(ss) : spill(ss)))
		return -1;
	ss->buf[ss->nbuf++] = v;
	if (v > ss->max)
		ss->max = v;
	return 0;
}

/* bits [@lo, @lo + @bits) of @v (0 < @bits, @lo + @bits <= 64) */
static inline uint64_t sort_key(uint64_t v, unsigned int lo, unsigned int bits)
{
	v >>= lo;
	return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

/*
 * LSD radix sort of a[0..n) on bits [@lo, @hi); being stable, it keeps the input order
 * among equal keys. @tmp holds n values. Digits of at most seek_radix_bits(n) bits (13
 * for 4,096 values or more), as few passes as that allows: the counters stay in the first
 * cache, and a pass over them costs no more than one over the values. A short array (a
 * short stream's) is insertion sorted instead, stable too.
 */
#define SEEK_SHORT_SORT 32

void seek_radix_sort(uint64_t *a, uint64_t *tmp, size_t n, unsigned int lo, unsigned int hi,
		     size_t *cnt)
{
	unsigned int bits = hi - lo, passes, digit;
	uint64_t *src = a, *dst = tmp, mask;

	if (!bits)
		return;
	if (n < SEEK_SHORT_SORT) {
		for (size_t i = 1; i < n; i++) {
			uint64_t v = a[i], k = sort_key(v, lo, bits);
			size_t j = i;

			for (; j > 0 && sort_key(a[j - 1], lo, bits) > k; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	passes = (bits + seek_radix_bits(n) - 1) / seek_radix_bits(n);
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

int seekstat_load(struct seekstat *ss, uint64_t *s)
{
	if (ss->nfile && seek_read_all(ss->fd, s, ss->nfile * 8, 0))
		return seekstat_fail(ss, "cannot read back the temporary file", errno);
	memcpy(s + ss->nfile, ss->buf, ss->nbuf * 8);
	return 0;
}

/* what decides whether the tree is needed (see seekstat_value_stats) */
void seek_stats_add(struct stats *st, uint64_t v, uint64_t c, uint64_t target)
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
 * -- whether the tree is needed at all --
 * The "median" is the first node in pre-order with at least half of the values: when one
 * value or none qualifies, the tree's shape does not matter. The modes are the nodes with
 * the highest count in post-order: when one value has it, the order does not matter
 * either. Both are known from the counts alone, which an external sort of the values gives
 * in bounded memory: runs of RUN_FACTOR x membuf values are sorted and written after the
 * spilled stream, then merged.
 */
#define MERGE_BUF 4096

/* values [from, from + cnt) of the stream: in the file, then in the buffer */
static int read_values(struct seekstat *ss, uint64_t from, uint64_t cnt, uint64_t *dst)
{
	if (from < ss->nfile) {
		uint64_t m = ss->nfile - from < cnt ? ss->nfile - from : cnt;

		if (seek_read_all(ss->fd, dst, m * 8, (off_t)(from * 8)))
			return seekstat_fail(ss, "cannot read back the temporary file", errno);
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

	if (seek_read_all(ss->fd, r->buf, m * 8, (off_t)(r->next * 8)))
		return seekstat_fail(ss, "cannot read back the temporary file", errno);
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
 * stream: the counts seek_stats_add() would see for them are all known, in one pass each and a
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
		seekstat_oom(ss);
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
	/* in increasing order of value, as seek_stats_add() meets them: the first of each wins */
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
	uint64_t *a = seek_big_alloc(chunk * 8), *tmp = seek_big_alloc(chunk * 8);
	unsigned int kb = bits_for(ss->max);
	struct run *runs = NULL;
	struct head *h = NULL;
	size_t nh = 0;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!a || !tmp) {
		seekstat_oom(ss);
		goto out;
	}
	/* sorted runs go after the stream in the temporary file */
	for (uint64_t r = 0; r < nruns; r++) {
		uint64_t from = r * runlen, m = n - from < runlen ? n - from : runlen;

		if (read_values(ss, from, m, a))
			goto out;
		seek_radix_sort(a, tmp, m, 0, kb, radix);
		if (seek_write_all(ss->fd, a, m * 8, (off_t)((n + from) * 8))) {
			seekstat_fail(ss, "cannot write the temporary file", errno);
			goto out;
		}
	}
	seek_big_free(a, chunk * 8);
	seek_big_free(tmp, chunk * 8);
	a = tmp = NULL;
	runs = malloc(nruns * sizeof(*runs));
	h = malloc(nruns * sizeof(*h));
	if (!runs || !h) {
		seekstat_oom(ss);
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
			seek_stats_add(st, prev, c, n / 2);
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
	seek_stats_add(st, prev, c, n / 2);
	rc = 0;
out:
	seek_big_free(a, chunk * 8);
	seek_big_free(tmp, chunk * 8);
	free(runs);
	free(h);
	return rc;
}

/* Only for a stream longer than a run (shorter ones are sorted in memory, see the caller). */
int seekstat_value_stats(struct seekstat *ss, uint64_t n, size_t *radix, struct stats *st,
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
	radix = malloc(sizeof(*radix) << seek_radix_bits(n));
	if (!radix)
		return seekstat_oom(ss);
	rc = seekstat_value_stats(ss, n, radix, &st,
				  (uint64_t)ss->cap * RUN_FACTOR / (share ? share : 1));
	free(radix);
	if (rc)
		return -1;
	ss->pre = st;
	ss->prepared = 1;
	return 0;
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
