// SPDX-License-Identifier: GPL-2.0
/*
 * Activity ranges (q and c activity per region) and live periods (the union of the
 * D..C intervals). Ranges are kept until the end, as they are printed then; there are at
 * most a few per second of trace, whatever the event rate. Live periods are folded into
 * running totals once they are too old to merge with a new interval.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"

#define LIVE_KEEP 256

static void *grow(void *v, size_t *alloc, size_t n, size_t size)
{
	if (n < *alloc)
		return v;
	*alloc = *alloc ? *alloc * 2 : 16;
	v = realloc(v, *alloc * size);
	if (!v) {
		fputs("btt: out of memory\n", stderr);
		exit(1);
	}
	return v;
}

void region_add(struct ranges *rs, uint64_t t)
{
	struct range *cur = rs->n ? &rs->v[rs->n - 1] : NULL;

	/* an event earlier than the current range (the input is not sorted) changes nothing */
	if (cur && t < cur->end)
		return;
	if (!cur || (!opts.range_never && t - cur->end >= opts.range_gap)) {
		rs->v = grow(rs->v, &rs->alloc, rs->n, sizeof(*rs->v));
		cur = &rs->v[rs->n++];
		cur->start = t;
	}
	cur->end = t;
}

void ranges_set_delta(double delta)
{
	uint64_t lo = 0, hi = UINT64_MAX;

	opts.range_delta = delta;
	opts.range_never = !(bit_time(UINT64_MAX) > delta);
	/* bit_time() never decreases: the first gap past delta, by bisection */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (bit_time(mid) > delta)
			hi = mid;
		else
			lo = mid + 1;
	}
	opts.range_gap = lo;
}

void region_release(struct region *reg)
{
	free(reg->q.v);
	free(reg->c.v);
	*reg = (struct region){{NULL, 0, 0}, {NULL, 0, 0}};
}

void live_add(struct live *lp, uint64_t dt, uint64_t ct)
{
	struct range *last;

	if (lp->n && dt <= lp->v[lp->n - 1].end) {
		last = &lp->v[lp->n - 1];
		if (ct > last->end)
			last->end = ct;
		if (dt < last->start)
			last->start = dt;
		/* a long interval may reach back over earlier periods */
		while (lp->n >= 2 && lp->v[lp->n - 2].end >= lp->v[lp->n - 1].start) {
			struct range *a = &lp->v[lp->n - 2], *b = &lp->v[lp->n - 1];

			if (b->start < a->start)
				a->start = b->start;
			if (b->end > a->end)
				a->end = b->end;
			lp->n--;
		}
	} else {
		/* fold the oldest periods in batches: at least LIVE_KEEP stay open to merging */
		if (lp->n == 2 * LIVE_KEEP && !opts.do_active) {
			size_t k = lp->n - LIVE_KEEP;

			for (size_t i = 0; i < k; i++)
				lp->total += lp->v[i].end - lp->v[i].start;
			lp->nfolded += (long)k;
			memmove(lp->v, lp->v + k, LIVE_KEEP * sizeof(*lp->v));
			lp->n = LIVE_KEEP;
		}
		lp->v = grow(lp->v, &lp->alloc, lp->n, sizeof(*lp->v));
		lp->v[lp->n].start = dt;
		lp->v[lp->n].end = ct;
		lp->n++;
	}
	if (ct > lp->end)
		lp->end = ct;
}

void live_totals(const struct live *lp, long *n, uint64_t *total)
{
	*n = lp->nfolded + (long)lp->n;
	*total = lp->total;
	for (size_t i = 0; i < lp->n; i++)
		*total += lp->v[i].end - lp->v[i].start;
}

void live_release(struct live *lp)
{
	free(lp->v);
	*lp = (struct live){0};
}

/* -Z: the live periods as a step plot between @base and @base + 0.9 */
void live_dump(const struct live *lp, const char *name, float base)
{
	char *fn = NULL;
	FILE *fp = file_create(name, &fn);
	double lo = base, hi = base + 0.9f;
	uint64_t last = 0;

	for (size_t i = 0; i < lp->n; i++) {
		fprintf(fp, "%.9lf %.1lf\n", bit_time(last), lo);
		fprintf(fp, "%.9lf %.1lf\n", bit_time(lp->v[i].start), lo);
		fprintf(fp, "%.9lf %.1lf\n", bit_time(lp->v[i].start), hi);
		fprintf(fp, "%.9lf %.1lf\n", bit_time(lp->v[i].end), hi);
		fprintf(fp, "%.9lf %.1lf\n", bit_time(lp->v[i].end), lo);
		last = lp->v[i].end;
	}
	file_close(&fp, &fn);
}
