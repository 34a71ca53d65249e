/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A latency histogram with bounded relative error, for percentiles in bounded memory:
 * values below 64 are exact; above, each power of two is split into 64 buckets, so a
 * reported percentile is within 1/64 (1.6%) of a recorded value. 4096 counters.
 */
#ifndef BLK_HIST_H
#define BLK_HIST_H

#include <stdint.h>

#define BLK_HIST_SUB 64
#define BLK_HIST_BUCKETS (64 * BLK_HIST_SUB)

struct blk_hist {
	uint64_t n;
	uint64_t min, max;
	uint64_t count[BLK_HIST_BUCKETS];
};

/* Empty @h. */
void blk_hist_clear(struct blk_hist *h);

/* Record one value. */
void blk_hist_add(struct blk_hist *h, uint64_t v);

/* Add the counts of @from to @h. */
void blk_hist_merge(struct blk_hist *h, const struct blk_hist *from);

/**
 * blk_hist_percentile() - the value at percentile @p (0 < p <= 100)
 * Return: the upper edge of the bucket holding it (clamped to the recorded maximum;
 * exact below 64), or 0 if @h is empty.
 */
uint64_t blk_hist_percentile(const struct blk_hist *h, double p);

#endif /* BLK_HIST_H */
