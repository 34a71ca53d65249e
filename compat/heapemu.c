// SPDX-License-Identifier: GPL-2.0
/*
 * A model of glibc 2.36's allocator (malloc/malloc.c), main arena, single thread, written
 * from the allocator's documented algorithm: per-thread cache (7 blocks per size up to
 * 1032 bytes), fast bins (chunks up to 128 bytes, LIFO), the unsorted bin, 62 small bins
 * and 63 sorted large bins with a bitmap, the top chunk grown with brk (128 KiB pad) and
 * trimmed at 128 KiB, malloc_consolidate on large requests, mmap for 128 KiB and above
 * (with the dynamic threshold). Chunk headers, free-list links and the program's data
 * share one byte image, as in the real heap, so a reused block shows what it held.
 *
 * Links are stored as heap offsets; the arena's bin headers live at ARENA (so a header's
 * "next size" fields overlap the next bin, as in glibc). Pointer values are meaningless
 * as data (the real ones depend on address randomisation); everything else is exact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heapemu.h"

#define SZ 8u
#define MINSIZE 32u
#define PREV_INUSE 1u
#define SIZE_BITS 7u
#define NBINS 128u
#define NFASTBINS 10u
#define MAX_FAST 128u
#define TCACHE_BINS 64u
#define TCACHE_COUNT 7u
#define MIN_LARGE 1024u
#define PAGE 4096u
#define TOP_PAD (128u * 1024u)
#define CONSOLIDATE_AT 65536u
#define MMAP_MAX_DYN (32u * 1024u * 1024u)
#define ARENA (1ULL << 44)
#define MMAPPED (1ULL << 45)
#define NONE UINT64_MAX
#define TCACHE_KEY 0x5eed5eed5eed5eedULL

struct blk_heapemu {
	/*
	 * The heap image, [0, brk), in pages of IMG_PAGE bytes made on the first write to
	 * them (a page never written reads as zero): the model writes to few of the pages
	 * its break covers, and a run of blkparse -t on a short input costs only those.
	 */
	unsigned char **pages;
	uint64_t cap, brk; /* cap: bytes the page table covers */
	uint64_t top; /* NONE before the first allocation */
	uint64_t bins[NBINS * 2 + 2]; /* fd/bk of bins 1..127, then slack */
	uint32_t binmap[4];
	uint64_t fast[NFASTBINS];
	uint64_t last_remainder;
	int have_fast;
	uint64_t tc[TCACHE_BINS];
	unsigned int tcn[TCACHE_BINS];
	int tc_init;
	uint64_t mmap_threshold, trim_threshold;
	uint64_t *msize; /* sizes of mmapped blocks, by id */
	size_t nm, mcap;
	int failed;
};

/* ---- the image ---- */

#define IMG_SHIFT 12
#define IMG_PAGE (1u << IMG_SHIFT)

/* The page holding @a (< cap), made if @make and not there yet; NULL if not there. */
static unsigned char *img_page(struct blk_heapemu *h, uint64_t a, int make)
{
	unsigned char **pg = &h->pages[a >> IMG_SHIFT];

	if (!*pg && make) {
		*pg = calloc(1, IMG_PAGE);
		if (!*pg)
			h->failed = 1;
	}
	return *pg;
}

/* Copy @n bytes at @a (a + n <= cap) out of the image. */
/*
 * The model's copies are mostly a few words (a block's links, a record's 48 bytes): copied
 * by words, not by a memcpy() of a length the compiler cannot know, which it inlines as
 * "rep movsq" (its start-up cost was 45% of blkparse -t on an Intel Xeon).
 */
#define SHORT_COPY 64

static inline void copy_short(unsigned char *d, const unsigned char *s, size_t n)
{
	for (; n >= 8; n -= 8, d += 8, s += 8)
		memcpy(d, s, 8);
	for (; n; n--)
		*d++ = *s++;
}

static void img_get(const struct blk_heapemu *h, uint64_t a, void *dst, size_t n)
{
	unsigned char *d = dst;
	size_t at = a & (IMG_PAGE - 1);
	const unsigned char *s;

	if (n <= SHORT_COPY && at + n <= IMG_PAGE && (s = h->pages[a >> IMG_SHIFT])) {
		copy_short(d, s + at, n);
		return;
	}
	while (n) {
		size_t off = a & (IMG_PAGE - 1), k = n < IMG_PAGE - off ? n : IMG_PAGE - off;
		const unsigned char *pg = h->pages[a >> IMG_SHIFT];

		if (pg)
			memcpy(d, pg + off, k);
		else
			memset(d, 0, k);
		d += k;
		a += k;
		n -= k;
	}
}

/* Copy @n bytes into the image at @a (a + n <= cap); @src NULL: zeros. */
static void img_put(struct blk_heapemu *h, uint64_t a, const void *src, size_t n)
{
	const unsigned char *s = src;
	size_t at = a & (IMG_PAGE - 1);
	unsigned char *d;

	if (s && n <= SHORT_COPY && at + n <= IMG_PAGE && (d = h->pages[a >> IMG_SHIFT])) {
		copy_short(d + at, s, n);
		return;
	}
	while (n) {
		size_t off = a & (IMG_PAGE - 1), k = n < IMG_PAGE - off ? n : IMG_PAGE - off;
		unsigned char *pg = img_page(h, a, s != NULL);

		if (pg) {
			if (s)
				memcpy(pg + off, s, k);
			else
				memset(pg + off, 0, k);
		} else if (s) {
			return; /* out of memory: failed is set */
		}
		if (s)
			s += k;
		a += k;
		n -= k;
	}
}

/* memmove() inside the image, through a bounce buffer, from the end when @dst is after @src. */
static void img_move(struct blk_heapemu *h, uint64_t dst, uint64_t src, size_t n)
{
	unsigned char buf[IMG_PAGE];
	int back = dst > src;

	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		uint64_t from = back ? src + n - k : src, to = back ? dst + n - k : dst;

		img_get(h, from, buf, k);
		img_put(h, to, buf, k);
		if (!back) {
			src += k;
			dst += k;
		}
		n -= k;
	}
}

/* ---- memory words ---- */

static uint64_t rd(const struct blk_heapemu *h, uint64_t a)
{
	uint64_t v = 0;

	if (a >= ARENA && a < ARENA + sizeof(h->bins))
		return h->bins[(a - ARENA) / 8];
	if (a + 8 <= h->brk) {
		const unsigned char *pg = h->pages[a >> IMG_SHIFT];

		if ((a & (IMG_PAGE - 1)) <= IMG_PAGE - 8) {
			if (pg)
				memcpy(&v, pg + (a & (IMG_PAGE - 1)), 8);
		} else {
			img_get(h, a, &v, 8);
		}
	}
	return v;
}

static void wr(struct blk_heapemu *h, uint64_t a, uint64_t v)
{
	if (a >= ARENA && a < ARENA + sizeof(h->bins)) {
		h->bins[(a - ARENA) / 8] = v;
		return;
	}
	if (a + 8 <= h->brk) {
		unsigned char *pg = h->pages[a >> IMG_SHIFT];

		if (pg && (a & (IMG_PAGE - 1)) <= IMG_PAGE - 8)
			memcpy(pg + (a & (IMG_PAGE - 1)), &v, 8);
		else
			img_put(h, a, &v, 8);
	} else
		h->failed = 1; /* the model wrote outside its heap: it is wrong, stop trusting it */
}

#define FD(p) ((p) + 16)
#define BK(p) ((p) + 24)
#define FDN(p) ((p) + 32)
#define BKN(p) ((p) + 40)

static uint64_t bin_at(unsigned int i)
{
	return ARENA + (uint64_t)(i - 1) * 16 - 16;
}

static uint64_t csize(const struct blk_heapemu *h, uint64_t p)
{
	return rd(h, p + 8) & ~(uint64_t)SIZE_BITS;
}

static uint64_t csize_raw(const struct blk_heapemu *h, uint64_t p)
{
	return rd(h, p + 8);
}

static void set_head(struct blk_heapemu *h, uint64_t p, uint64_t v)
{
	wr(h, p + 8, v);
}

static void set_foot(struct blk_heapemu *h, uint64_t p, uint64_t s)
{
	wr(h, p + s, s);
}

static int prev_inuse(const struct blk_heapemu *h, uint64_t p)
{
	return rd(h, p + 8) & PREV_INUSE;
}

static int inuse_at(const struct blk_heapemu *h, uint64_t p, uint64_t s)
{
	return rd(h, p + s + 8) & PREV_INUSE;
}

static void set_inuse_at(struct blk_heapemu *h, uint64_t p, uint64_t s)
{
	wr(h, p + s + 8, rd(h, p + s + 8) | PREV_INUSE);
}

static void clear_inuse_at(struct blk_heapemu *h, uint64_t p, uint64_t s)
{
	wr(h, p + s + 8, rd(h, p + s + 8) & ~(uint64_t)PREV_INUSE);
}

static int small(uint64_t s)
{
	return s < MIN_LARGE;
}

static unsigned int smallbin_index(uint64_t s)
{
	return (unsigned int)(s >> 4);
}

static unsigned int largebin_index(uint64_t s)
{
	if ((s >> 6) <= 48)
		return 48 + (unsigned int)(s >> 6);
	if ((s >> 9) <= 20)
		return 91 + (unsigned int)(s >> 9);
	if ((s >> 12) <= 10)
		return 110 + (unsigned int)(s >> 12);
	if ((s >> 15) <= 4)
		return 119 + (unsigned int)(s >> 15);
	if ((s >> 18) <= 2)
		return 124 + (unsigned int)(s >> 18);
	return 126;
}

static uint64_t req2size(size_t n)
{
	return n + SZ + 15 < MINSIZE ? MINSIZE : ((uint64_t)n + SZ + 15) & ~(uint64_t)15;
}

static unsigned int tidx(uint64_t nb)
{
	return (unsigned int)((nb - 17) / 16);
}

/* ---- the break ---- */

static int grow(struct blk_heapemu *h, uint64_t nbrk)
{
	if (nbrk > h->cap) {
		/* the break grows by pages, rarely: the page table follows it in 64 KiB steps */
		uint64_t nc = (nbrk + 0xffff) & ~(uint64_t)0xffff;
		unsigned char **n = realloc(h->pages, nc / IMG_PAGE * sizeof(*n));

		if (!n) {
			h->failed = 1;
			return -ENOMEM;
		}
		memset(n + h->cap / IMG_PAGE, 0, (nc - h->cap) / IMG_PAGE * sizeof(*n));
		h->pages = n;
		h->cap = nc;
	}
	img_put(h, h->brk, NULL, nbrk - h->brk); /* fresh pages are zero */
	h->brk = nbrk;
	return 0;
}

/* ---- bins ---- */

static void unlink_chunk(struct blk_heapemu *h, uint64_t p)
{
	uint64_t fd = rd(h, FD(p)), bk = rd(h, BK(p));

	wr(h, BK(fd), bk);
	wr(h, FD(bk), fd);
	if (!small(csize_raw(h, p)) && rd(h, FDN(p))) {
		if (!rd(h, FDN(fd))) {
			if (rd(h, FDN(p)) == p) {
				wr(h, FDN(fd), fd);
				wr(h, BKN(fd), fd);
			} else {
				wr(h, FDN(fd), rd(h, FDN(p)));
				wr(h, BKN(fd), rd(h, BKN(p)));
				wr(h, BKN(rd(h, FDN(p))), fd);
				wr(h, FDN(rd(h, BKN(p))), fd);
			}
		} else {
			wr(h, BKN(rd(h, FDN(p))), rd(h, BKN(p)));
			wr(h, FDN(rd(h, BKN(p))), rd(h, FDN(p)));
		}
	}
}

/* Put @p of @size at the head of the unsorted bin. */
static void to_unsorted(struct blk_heapemu *h, uint64_t p, uint64_t size)
{
	uint64_t bck = bin_at(1), fwd = rd(h, FD(bck));

	wr(h, FD(p), fwd);
	wr(h, BK(p), bck);
	if (!small(size)) {
		wr(h, FDN(p), 0);
		wr(h, BKN(p), 0);
	}
	wr(h, FD(bck), p);
	wr(h, BK(fwd), p);
	set_head(h, p, size | PREV_INUSE);
	set_foot(h, p, size);
}

static void tcache_put(struct blk_heapemu *h, uint64_t p, unsigned int i)
{
	uint64_t e = p + 16;

	wr(h, e + 8, TCACHE_KEY);
	wr(h, e, h->tc[i]);
	h->tc[i] = e;
	h->tcn[i]++;
}

static uint64_t tcache_get(struct blk_heapemu *h, unsigned int i)
{
	uint64_t e = h->tc[i];

	h->tc[i] = rd(h, e);
	h->tcn[i]--;
	wr(h, e + 8, 0);
	return e;
}

/*
 * Free chunk @p of @size: merge it with free neighbours, into the top chunk or else the
 * unsorted bin (as free() and malloc_consolidate() both do). Return the merged size.
 */
static uint64_t coalesce(struct blk_heapemu *h, uint64_t p, uint64_t size)
{
	uint64_t next = p + size, nsize = csize(h, next);

	if (!prev_inuse(h, p)) {
		uint64_t ps = rd(h, p);

		size += ps;
		p -= ps;
		unlink_chunk(h, p);
	}
	if (next != h->top) {
		if (!inuse_at(h, next, nsize)) {
			unlink_chunk(h, next);
			size += nsize;
		} else {
			clear_inuse_at(h, next, 0);
		}
		to_unsorted(h, p, size);
	} else {
		size += nsize;
		set_head(h, p, size | PREV_INUSE);
		h->top = p;
	}
	return size;
}

static void consolidate(struct blk_heapemu *h)
{
	h->have_fast = 0;
	for (unsigned int i = 0; i < NFASTBINS; i++) {
		uint64_t p = h->fast[i], nextp;

		h->fast[i] = 0;
		for (; p; p = nextp) {
			nextp = rd(h, FD(p));
			coalesce(h, p, csize(h, p));
		}
	}
}

static void systrim(struct blk_heapemu *h)
{
	uint64_t tsize = csize(h, h->top), area = tsize - MINSIZE - 1, extra;

	if (area <= TOP_PAD)
		return;
	extra = (area - TOP_PAD) & ~(uint64_t)(PAGE - 1);
	if (!extra)
		return;
	/* released pages come back zero when the break grows again */
	img_put(h, h->brk - extra, NULL, extra);
	h->brk -= extra;
	set_head(h, h->top, (tsize - extra) | PREV_INUSE);
}

static uint64_t mmap_block(struct blk_heapemu *h, uint64_t nb)
{
	uint64_t size = (nb + SZ + PAGE - 1) & ~(uint64_t)(PAGE - 1);

	if (h->nm == h->mcap) {
		size_t nc = h->mcap ? h->mcap * 2 : 16;
		uint64_t *n = realloc(h->msize, nc * sizeof(*n));

		if (!n) {
			h->failed = 1;
			return 0;
		}
		h->msize = n;
		h->mcap = nc;
	}
	h->msize[h->nm] = size;
	return MMAPPED | ((uint64_t)h->nm++ << 4);
}

static uint64_t sysmalloc(struct blk_heapemu *h, uint64_t nb)
{
	uint64_t p, size;

	if (nb >= h->mmap_threshold)
		return mmap_block(h, nb);
	if (h->top == NONE) {
		size = (nb + TOP_PAD + MINSIZE + PAGE - 1) & ~(uint64_t)(PAGE - 1);
		if (grow(h, size))
			return 0;
		h->top = 0;
		set_head(h, 0, size | PREV_INUSE);
	} else {
		uint64_t old = csize(h, h->top);

		size = (nb + TOP_PAD + MINSIZE - old + PAGE - 1) & ~(uint64_t)(PAGE - 1);
		if (grow(h, h->brk + size))
			return 0;
		set_head(h, h->top, (old + size) | PREV_INUSE);
	}
	p = h->top;
	size = csize(h, p);
	if (size < nb + MINSIZE) {
		h->failed = 1;
		return 0;
	}
	h->top = p + nb;
	set_head(h, p, nb | PREV_INUSE);
	set_head(h, h->top, (size - nb) | PREV_INUSE);
	return p + 16;
}

/* Split @victim (unlinked, @size bytes) for @nb; the rest goes to the unsorted bin. */
static uint64_t take(struct blk_heapemu *h, uint64_t victim, uint64_t size, uint64_t nb,
		     int advertise)
{
	uint64_t rs = size - nb;

	if (rs < MINSIZE) {
		set_inuse_at(h, victim, size);
	} else {
		uint64_t rem = victim + nb, bck = bin_at(1), fwd = rd(h, FD(bck));

		wr(h, BK(rem), bck);
		wr(h, FD(rem), fwd);
		wr(h, FD(bck), rem);
		wr(h, BK(fwd), rem);
		if (advertise && small(nb))
			h->last_remainder = rem;
		if (!small(rs)) {
			wr(h, FDN(rem), 0);
			wr(h, BKN(rem), 0);
		}
		set_head(h, victim, nb | PREV_INUSE);
		set_head(h, rem, rs | PREV_INUSE);
		set_foot(h, rem, rs);
	}
	return victim + 16;
}

/* Sort unsorted chunk @v of @size into its bin. */
static void bin_chunk(struct blk_heapemu *h, uint64_t v, uint64_t size)
{
	unsigned int vi;
	uint64_t bck, fwd;

	if (small(size)) {
		vi = smallbin_index(size);
		bck = bin_at(vi);
		fwd = rd(h, FD(bck));
	} else {
		vi = largebin_index(size);
		bck = bin_at(vi);
		fwd = rd(h, FD(bck));
		if (fwd != bck) {
			size |= PREV_INUSE;
			if (size < csize_raw(h, rd(h, BK(bck)))) {
				fwd = bck;
				bck = rd(h, BK(bck));
				wr(h, FDN(v), rd(h, FD(fwd)));
				wr(h, BKN(v), rd(h, BKN(rd(h, FD(fwd)))));
				wr(h, BKN(rd(h, FD(fwd))), v);
				wr(h, FDN(rd(h, BKN(v))), v);
			} else {
				while (size < csize_raw(h, fwd))
					fwd = rd(h, FDN(fwd));
				if (size == csize_raw(h, fwd)) {
					fwd = rd(h, FD(fwd));
				} else {
					wr(h, FDN(v), fwd);
					wr(h, BKN(v), rd(h, BKN(fwd)));
					wr(h, BKN(fwd), v);
					wr(h, FDN(rd(h, BKN(v))), v);
				}
				bck = rd(h, BK(fwd));
			}
		} else {
			wr(h, FDN(v), v);
			wr(h, BKN(v), v);
		}
	}
	h->binmap[vi >> 5] |= 1u << (vi & 31);
	wr(h, BK(v), bck);
	wr(h, FD(v), fwd);
	wr(h, BK(fwd), v);
	wr(h, FD(bck), v);
}

static uint64_t int_malloc(struct blk_heapemu *h, size_t bytes)
{
	uint64_t nb = req2size(bytes), victim, size, bin, bck;
	unsigned int idx, ti = tidx(nb);
	uint64_t tcache_nb = ti < TCACHE_BINS ? nb : 0;
	int return_cached = 0;

	if (h->failed)
		return 0;
	if (nb <= MAX_FAST) {
		idx = (unsigned int)(nb >> 4) - 2;
		victim = h->fast[idx];
		if (victim) {
			uint64_t t;

			h->fast[idx] = rd(h, FD(victim));
			while (ti < TCACHE_BINS && h->tcn[ti] < TCACHE_COUNT &&
			       (t = h->fast[idx])) {
				h->fast[idx] = rd(h, FD(t));
				tcache_put(h, t, ti);
			}
			return victim + 16;
		}
	}
	if (small(nb)) {
		idx = smallbin_index(nb);
		bin = bin_at(idx);
		victim = rd(h, BK(bin));
		if (victim != bin) {
			uint64_t t;

			bck = rd(h, BK(victim));
			set_inuse_at(h, victim, nb);
			wr(h, BK(bin), bck);
			wr(h, FD(bck), bin);
			while (ti < TCACHE_BINS && h->tcn[ti] < TCACHE_COUNT &&
			       (t = rd(h, BK(bin))) != bin) {
				bck = rd(h, BK(t));
				set_inuse_at(h, t, nb);
				wr(h, BK(bin), bck);
				wr(h, FD(bck), bin);
				tcache_put(h, t, ti);
			}
			return victim + 16;
		}
	} else {
		idx = largebin_index(nb);
		if (h->have_fast)
			consolidate(h);
	}
	for (;;) {
		uint64_t unsorted = bin_at(1);
		unsigned int block, bit, map, iters = 0;

		while ((victim = rd(h, BK(unsorted))) != unsorted) {
			if (h->failed)
				return 0;
			bck = rd(h, BK(victim));
			size = csize(h, victim);
			wr(h, BK(unsorted), bck);
			wr(h, FD(bck), unsorted);
			/* the last remainder, alone in the bin, is split again for a small request */
			if (small(nb) && bck == unsorted && victim == h->last_remainder &&
			    size > nb + MINSIZE)
				return take(h, victim, size, nb, 1);
			if (size == nb) {
				set_inuse_at(h, victim, size);
				if (tcache_nb && h->tcn[ti] < TCACHE_COUNT) {
					tcache_put(h, victim, ti);
					return_cached = 1;
					continue;
				}
				return victim + 16;
			}
			bin_chunk(h, victim, size);
			if (++iters >= 10000)
				break;
		}
		if (return_cached)
			return tcache_get(h, ti);
		if (!small(nb)) {
			bin = bin_at(idx);
			victim = rd(h, FD(bin));
			if (victim != bin && csize_raw(h, victim) >= nb) {
				victim = rd(h, BKN(victim));
				while ((size = csize(h, victim)) < nb)
					victim = rd(h, BKN(victim));
				if (victim != rd(h, BK(bin)) &&
				    csize_raw(h, victim) == csize_raw(h, rd(h, FD(victim))))
					victim = rd(h, FD(victim));
				unlink_chunk(h, victim);
				return take(h, victim, size, nb, 0);
			}
		}
		idx++;
		block = idx >> 5;
		map = block < 4 ? h->binmap[block] : 0;
		bit = 1u << (idx & 31);
		for (;;) {
			if (block >= 4)
				goto use_top;
			if (bit > map || bit == 0) {
				do {
					if (++block >= 4)
						goto use_top;
				} while ((map = h->binmap[block]) == 0);
				idx = block << 5;
				bit = 1;
			}
			while ((bit & map) == 0) {
				idx++;
				bit <<= 1;
			}
			bin = bin_at(idx);
			victim = rd(h, BK(bin));
			if (victim == bin) {
				h->binmap[block] = map &= ~bit;
				idx++;
				bit <<= 1;
			} else {
				size = csize(h, victim);
				unlink_chunk(h, victim);
				return take(h, victim, size, nb, 1);
			}
		}
use_top:
		victim = h->top;
		if (victim != NONE && (size = csize(h, victim)) >= nb + MINSIZE) {
			h->top = victim + nb;
			set_head(h, victim, nb | PREV_INUSE);
			set_head(h, h->top, (size - nb) | PREV_INUSE);
			return victim + 16;
		}
		if (h->have_fast) {
			consolidate(h);
			idx = small(nb) ? smallbin_index(nb) : largebin_index(nb);
			continue;
		}
		return sysmalloc(h, nb);
	}
}

static void int_free(struct blk_heapemu *h, uint64_t p)
{
	uint64_t size = csize(h, p);
	unsigned int ti = tidx(size);

	if (ti < TCACHE_BINS && h->tcn[ti] < TCACHE_COUNT) {
		tcache_put(h, p, ti);
		return;
	}
	if (size <= MAX_FAST) {
		unsigned int idx = (unsigned int)(size >> 4) - 2;

		h->have_fast = 1;
		wr(h, FD(p), h->fast[idx]);
		h->fast[idx] = p;
		return;
	}
	size = coalesce(h, p, size);
	if (size >= CONSOLIDATE_AT) {
		if (h->have_fast)
			consolidate(h);
		if (csize(h, h->top) >= h->trim_threshold)
			systrim(h);
	}
}

static void tcache_init(struct blk_heapemu *h)
{
	if (!h->tc_init) {
		h->tc_init = 1;
		int_malloc(h, 640); /* the cache's own table, the first chunk of the heap */
	}
}

/* ---- the interface ---- */

struct blk_heapemu *blk_heapemu_new(void)
{
	struct blk_heapemu *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	for (unsigned int i = 1; i < NBINS; i++) {
		h->bins[(i - 1) * 2] = bin_at(i);
		h->bins[(i - 1) * 2 + 1] = bin_at(i);
	}
	h->top = NONE;
	h->last_remainder = NONE;
	h->mmap_threshold = 128 * 1024;
	h->trim_threshold = 128 * 1024;
	return h;
}

void blk_heapemu_free(struct blk_heapemu *h)
{
	if (!h)
		return;
	for (uint64_t i = 0; i < h->cap / IMG_PAGE; i++)
		free(h->pages[i]);
	free(h->pages);
	free(h->msize);
	free(h);
}

int blk_heapemu_failed(const struct blk_heapemu *h)
{
	return h->failed;
}

uint64_t blk_heapemu_size(const struct blk_heapemu *h)
{
	return h->brk;
}

uint64_t blk_heapemu_malloc(struct blk_heapemu *h, size_t n)
{
	uint64_t nb = req2size(n), p;
	unsigned int ti = tidx(nb);

	if (h->failed)
		return 0;
	tcache_init(h);
	if (ti < TCACHE_BINS && h->tcn[ti])
		return tcache_get(h, ti);
	p = int_malloc(h, n);
	if (!p)
		h->failed = 1;
	return h->failed ? 0 : p;
}

uint64_t blk_heapemu_calloc(struct blk_heapemu *h, size_t n)
{
	uint64_t p;

	if (h->failed)
		return 0;
	tcache_init(h);
	p = int_malloc(h, n);
	if (!p) {
		h->failed = 1;
		return 0;
	}
	if (!(p & MMAPPED))
		img_put(h, p, NULL, csize(h, p - 16) - SZ);
	return h->failed ? 0 : p;
}

void blk_heapemu_release(struct blk_heapemu *h, uint64_t p)
{
	if (!p || h->failed)
		return;
	if (p & MMAPPED) {
		uint64_t size = h->msize[(p & ~MMAPPED) >> 4];

		if (size > h->mmap_threshold && size <= MMAP_MAX_DYN) {
			h->mmap_threshold = size;
			h->trim_threshold = 2 * size;
		}
		return;
	}
	int_free(h, p - 16);
}

uint64_t blk_heapemu_realloc(struct blk_heapemu *h, uint64_t mem, size_t n)
{
	uint64_t nb = req2size(n), oldp, oldsize, next, nsize, newp, newsize;

	if (h->failed)
		return 0;
	if (!mem)
		return blk_heapemu_malloc(h, n);
	if (!n) {
		blk_heapemu_release(h, mem);
		return 0;
	}
	if (mem & MMAPPED) {
		/* mremap() keeps it outside the heap, whatever its new size */
		h->msize[(mem & ~MMAPPED) >> 4] = (nb + SZ + PAGE - 1) & ~(uint64_t)(PAGE - 1);
		return mem;
	}
	oldp = mem - 16;
	oldsize = csize(h, oldp);
	next = oldp + oldsize;
	nsize = csize(h, next);
	if (oldsize >= nb) {
		newp = oldp;
		newsize = oldsize;
	} else if (next == h->top && oldsize + nsize >= nb + MINSIZE) {
		newsize = oldsize + nsize;
		set_head(h, oldp, nb | (rd(h, oldp + 8) & PREV_INUSE));
		h->top = oldp + nb;
		set_head(h, h->top, (newsize - nb) | PREV_INUSE);
		return mem;
	} else if (next != h->top && !inuse_at(h, next, nsize) && oldsize + nsize >= nb) {
		newp = oldp;
		newsize = oldsize + nsize;
		unlink_chunk(h, next);
	} else {
		uint64_t nm = int_malloc(h, nb - 15);

		if (!nm) {
			h->failed = 1;
			return 0;
		}
		if (nm & MMAPPED) {
			int_free(h, oldp);
			return nm;
		}
		newp = nm - 16;
		newsize = csize(h, newp);
		if (newp == next) {
			newsize += oldsize;
			newp = oldp;
		} else {
			img_move(h, nm, mem, oldsize - SZ);
			int_free(h, oldp);
			return h->failed ? 0 : nm;
		}
	}
	if (newsize - nb < MINSIZE) {
		set_head(h, newp, newsize | (rd(h, newp + 8) & PREV_INUSE));
		set_inuse_at(h, newp, newsize);
	} else {
		uint64_t rem = newp + nb;

		set_head(h, newp, nb | (rd(h, newp + 8) & PREV_INUSE));
		set_head(h, rem, (newsize - nb) | PREV_INUSE);
		set_inuse_at(h, rem, newsize - nb);
		int_free(h, rem);
	}
	return h->failed ? 0 : newp + 16;
}

void blk_heapemu_write(struct blk_heapemu *h, uint64_t p, const void *src, size_t n)
{
	if (p & MMAPPED || h->failed)
		return;
	if (p + n > h->brk) {
		h->failed = 1;
		return;
	}
	img_put(h, p, src, n);
}

void blk_heapemu_read(const struct blk_heapemu *h, uint64_t p, void *dst, size_t n)
{
	if (p & MMAPPED || p + n > h->brk) {
		memset(dst, 0, n);
		return;
	}
	img_get(h, p, dst, n);
}

/*
 * The words, most of the traffic, through the model's own word access (rd(), wr()), with
 * blk_heapemu_write()'s and _read()'s bounds: never the arena's bins, beyond the break.
 */
void blk_heapemu_put64(struct blk_heapemu *h, uint64_t p, uint64_t v)
{
	if (p & MMAPPED || h->failed)
		return;
	if (p + 8 > h->brk)
		h->failed = 1;
	else
		wr(h, p, v);
}

uint64_t blk_heapemu_get64(const struct blk_heapemu *h, uint64_t p)
{
	return p & MMAPPED || p + 8 > h->brk ? 0 : rd(h, p);
}
