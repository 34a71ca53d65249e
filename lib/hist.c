// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "blk/hist.h"

void blk_hist_clear(struct blk_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < BLK_HIST_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* v in [2^e, 2^(e+1)), e >= 6 */
	return (e - 5) * BLK_HIST_SUB + (unsigned int)((v >> (e - 6)) - BLK_HIST_SUB);
}

/* The largest value that falls into bucket @b. */
static uint64_t bucket_top(unsigned int b)
{
	unsigned int e, sub;

	if (b < BLK_HIST_SUB)
		return b;
	e = b / BLK_HIST_SUB + 5;
	sub = b % BLK_HIST_SUB;
	return (((uint64_t)(BLK_HIST_SUB + sub) + 1) << (e - 6)) - 1;
}

void blk_hist_add(struct blk_hist *h, uint64_t v)
{
	h->count[bucket_of(v)]++;
	h->n++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/*
 * min and max bound every recorded value (min is 0 in a histogram zeroed rather than
 * cleared): buckets outside [bucket_of(min), bucket_of(max)] are empty, and so are all of an
 * empty histogram's.
 */
void blk_hist_merge(struct blk_hist *h, const struct blk_hist *from)
{
	if (from->n)
		for (unsigned int i = bucket_of(from->min), e = bucket_of(from->max); i <= e; i++)
			h->count[i] += from->count[i];
	h->n += from->n;
	if (from->n && from->min < h->min)
		h->min = from->min;
	if (from->n && from->max > h->max)
		h->max = from->max;
}

uint64_t blk_hist_percentile(const struct blk_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	/* the smallest value with at least p% of the values at or below it */
	rank = (uint64_t)((p / 100.0) * (double)h->n + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (unsigned int b = bucket_of(h->min); b < BLK_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank) {
			uint64_t top = bucket_top(b);

			return top > h->max ? h->max : top;
		}
	}
	return h->max;
}
