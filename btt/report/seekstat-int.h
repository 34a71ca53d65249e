/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside struct seekstat: shared by seekspill.c (the stored stream, and its value counts in
 * bounded memory) and seekstat.c (the classic tree built from it at the end).
 */
#ifndef BTT_SEEKSTAT_INT_H
#define BTT_SEEKSTAT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/seekstat.h"

#define RADIX_BITS 13
/* a stream longer than RUN_FACTOR x 2 x membuf values is "long" (seekstat_long) */
#define RUN_FACTOR 128

/* what a pass over the sorted values finds: whether the tree's shape shows at all */
struct stats {
	uint64_t distinct, most, nmost, mode, ncand, cand;
};

struct seekstat {
	uint64_t *buf; /* values not yet in the file */
	size_t nbuf, cap; /* cap: the most the buffer holds before the file is used */
	size_t alloc; /* the buffer's size so far: it grows up to cap (a short stream's is small) */
	int fd; /* temporary file, -1 until the buffer first fills */
	uint64_t nfile; /* values in the file */
	uint64_t max;
	/* seekstat_prepare() ran: the value statistics of a long stream */
	int prepared;
	struct stats pre;
	char tmpdir[256];
	char err[512];
};

static inline unsigned int bits_for(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/* anonymous memory straight from mmap (freeing it really returns it); NULL on failure */
void *seek_big_alloc(size_t size);
void seek_big_free(void *p, size_t size);
/* set the error of @ss (a file operation in its temporary directory failed with @err) */
int seekstat_fail(struct seekstat *ss, const char *what, int err);
int seekstat_oom(struct seekstat *ss);
/* 0, or -1 with errno set */
int seek_write_all(int fd, const void *p, size_t len, off_t off);
int seek_read_all(int fd, void *p, size_t len, off_t off);
/*
 * The widest digit seek_radix_sort() takes for @n values (at most RADIX_BITS): a pass
 * clears and scans 1 << digit counters, so a short array gets narrow digits.
 */
static inline unsigned int seek_radix_bits(uint64_t n)
{
	unsigned int b = bits_for(n);

	return b < 4 ? 4 : b > RADIX_BITS ? RADIX_BITS : b;
}

/*
 * LSD radix sort of a[0..n) on bits [@lo, @hi), stable; @tmp holds n values, @cnt
 * 1 << seek_radix_bits(n) counters (or more).
 */
void seek_radix_sort(uint64_t *a, uint64_t *tmp, size_t n, unsigned int lo, unsigned int hi,
		     size_t *cnt);
/* the whole stream into @s (nfile + nbuf values); 0 or -1 with the error set */
int seekstat_load(struct seekstat *ss, uint64_t *s);
/* one distinct value @v seen @c times, in increasing order of value */
void seek_stats_add(struct stats *st, uint64_t v, uint64_t c, uint64_t target);
/*
 * The counts that decide whether the tree is needed, for a stream longer than a run of
 * @runlen values; 0 or -1 with the error set.
 */
int seekstat_value_stats(struct seekstat *ss, uint64_t n, size_t *radix, struct stats *st,
			 uint64_t runlen);

#endif /* BTT_SEEKSTAT_INT_H */
