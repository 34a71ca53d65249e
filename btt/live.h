/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live periods: the union of the D..C intervals of a device and of the system (the
 * report's I/O Active Period table, and the -Z files), fed by the I/O model. Periods are
 * folded into running totals once no interval can reach them any more: intervals start
 * at issue times of requests in flight, which are kept, so the periods kept are bounded by
 * those requests, however far back an interval reaches.
 */
#ifndef BTT_LIVE_H
#define BTT_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct btt;

/*
 * The issue times of the requests issued and not yet completed (a sorted multiset): a
 * completion's live interval starts at one of them, so only they can be where a new
 * interval reaches back into the live periods.
 */
struct dset_entry {
	uint64_t t;
	uint32_t n; /* 0: gone, dropped lazily */
};

struct dset {
	struct dset_entry *v; /* ascending times */
	size_t head, len, alloc; /* entries v[head, len) */
	size_t live; /* sum of n */
};

void dset_add(struct dset *s, uint64_t t);
void dset_del(struct dset *s, uint64_t t);
void dset_release(struct dset *s);

/* a live period, or several in a row that a new interval can only merge all together */
struct live_span {
	uint64_t start, end; /* of the first and the last period */
	uint64_t total; /* live ns of its periods */
	long n; /* periods */
};

/* union of D..C intervals */
struct live {
	uint64_t end; /* end of the latest interval seen */
	uint64_t total; /* live time of the folded periods */
	long nfolded;
	struct live_span *v; /* periods still open to merging, oldest first */
	size_t n, alloc;
	size_t compact_at; /* span count at which they are grouped again */
	int keep_all; /* -Z: every period is printed, none is folded */
};

/*
 * The interval [@dt, @ct] of a completion; @s holds the issue times of the requests
 * still in flight, @dt among them.
 */
void live_add(struct live *lp, uint64_t dt, uint64_t ct, const struct dset *s);
/* number of periods, total live ns */
void live_totals(const struct live *lp, long *n, uint64_t *total);
void live_release(struct live *lp);

/* the subscriber: the live periods of each device (by index) and of the system */
struct btt_live {
	struct live all;
	struct live *dev;
	size_t ndev, adev;
	struct dset issued; /* issue times of the requests in flight */
	uint64_t *done; /* the issue times of the I/Os of the completion being delivered */
	size_t ndone, adone;
	uint64_t first_d; /* the earliest of them */
	int keep_all;
};

/* a subscriber to @b->model; -Z keeps every period */
struct btt_live *live_new(struct btt *b);
/*
 * At the end of the trace, before the periods are read: with a single device the
 * system's periods are only the device's until then (kept once, copied here).
 */
void live_finish(struct btt_live *l);
/* -Z: sys_live.dat and <dev>_live.dat of the shown devices, in report order */
void live_write(const struct btt_live *l, const struct btt *b);
void live_free(struct btt_live *l);

#endif /* BTT_LIVE_H */
