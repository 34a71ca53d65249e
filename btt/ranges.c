// SPDX-License-Identifier: GPL-2.0
/*
 * Activity ranges (q and c activity per region) and live periods (the union of the
 * D..C intervals). Ranges are kept until the end, as they are printed then; there are at
 * most a few per second of trace, whatever the event rate. Live periods are folded into
 * running totals once no interval can reach them any more: intervals start at issue times
 * of requests in flight, which are kept (struct dset), so the periods kept are bounded by
 * those requests, however far back an interval reaches.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"

#define LIVE_KEEP 256

void *array_grow(void *v, size_t *alloc, size_t n, size_t size)
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
		rs->v = array_grow(rs->v, &rs->alloc, rs->n, sizeof(*rs->v));
		cur = &rs->v[rs->n++];
		cur->start = t;
	}
	cur->end = t;
}

void ranges_init(void)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	double delta = opts.range_delta;

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

/* ---- the issue times in flight ---- */

/* index of the last entry at or before @t, or head - 1 (as a signed index) */
static ptrdiff_t dset_at(const struct dset *s, uint64_t t)
{
	ptrdiff_t lo = (ptrdiff_t)s->head, hi = (ptrdiff_t)s->len - 1;

	/* a completion usually follows its issue closely: look at the newest first */
	for (int k = 0; k < 8 && hi >= lo; k++, hi--)
		if (s->v[hi].t <= t)
			return hi;
	while (lo <= hi) {
		ptrdiff_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return hi;
}

void dset_add(struct dset *s, uint64_t t)
{
	ptrdiff_t i;

	s->live++;
	if (s->len > s->head && s->v[s->len - 1].t == t) {
		s->v[s->len - 1].n++;
		return;
	}
	if (s->len == s->alloc && s->head) {
		/* slide down over the entries already gone */
		memmove(s->v, s->v + s->head, (s->len - s->head) * sizeof(*s->v));
		s->len -= s->head;
		s->head = 0;
	}
	s->v = array_grow(s->v, &s->alloc, s->len, sizeof(*s->v));
	i = s->len > s->head ? dset_at(s, t) : (ptrdiff_t)s->head - 1;
	if (i >= (ptrdiff_t)s->head && s->v[i].t == t) {
		s->v[i].n++;
		return;
	}
	/* after i: at the end unless the trace is out of order */
	memmove(&s->v[i + 2], &s->v[i + 1], (s->len - (size_t)(i + 1)) * sizeof(*s->v));
	s->v[i + 1].t = t;
	s->v[i + 1].n = 1;
	s->len++;
}

void dset_del(struct dset *s, uint64_t t)
{
	ptrdiff_t i = s->len > s->head ? dset_at(s, t) : -1;

	if (i < (ptrdiff_t)s->head || s->v[i].t != t || !s->v[i].n)
		return; /* not added (cannot happen in order) */
	s->v[i].n--;
	s->live--;
	while (s->head < s->len && !s->v[s->head].n)
		s->head++;
	if (s->head == s->len)
		s->head = s->len = 0;
	else if (s->len - s->head > 64 && (s->len - s->head) / 4 > s->live) {
		/* mostly gone entries in the middle: drop them */
		size_t k = 0;

		for (size_t j = s->head; j < s->len; j++)
			if (s->v[j].n)
				s->v[k++] = s->v[j];
		s->head = 0;
		s->len = k;
	}
}

void dset_release(struct dset *s)
{
	free(s->v);
	*s = (struct dset){0};
}

/* ---- live periods ---- */

/*
 * The recent spans stay single periods (a new interval may reach back into them when the
 * trace is slightly out of order). Before them, a span that ends before every issue time
 * in flight is folded into the totals (no interval can reach it any more), and spans with
 * no issue time in flight between them are grouped: an interval starting at such a time
 * merges all the periods of a group or none of them.
 */
static void live_compact(struct live *lp, const struct dset *s)
{
	size_t old = lp->n > LIVE_KEEP ? lp->n - LIVE_KEEP : 0, k = 0, j = s->head;
	/* the latest issue time in flight at or before the span's end, and the group of the
	 * span last kept (as indexes of s->v; -1: none) */
	ptrdiff_t grp = -1, kgrp = -1;

	if (!old)
		return;
	for (size_t i = 0; i < old; i++) {
		const struct live_span sp = lp->v[i];

		while (j < s->len && s->v[j].t <= sp.end) {
			if (s->v[j].n)
				grp = (ptrdiff_t)j;
			j++;
		}
		if (grp < 0) {
			lp->total += sp.total;
			lp->nfolded += sp.n;
		} else if (k && kgrp == grp) {
			struct live_span *a = &lp->v[k - 1];

			a->end = sp.end;
			a->total += sp.total;
			a->n += sp.n;
		} else {
			lp->v[k++] = sp;
			kgrp = grp;
		}
	}
	memmove(&lp->v[k], &lp->v[old], (lp->n - old) * sizeof(*lp->v));
	lp->n = k + (lp->n - old);
}

void live_add(struct live *lp, uint64_t dt, uint64_t ct, const struct dset *s)
{
	struct live_span *last;

	if (lp->n && dt <= lp->v[lp->n - 1].end) {
		last = &lp->v[lp->n - 1];
		if (ct > last->end)
			last->end = ct;
		if (dt < last->start)
			last->start = dt;
		/* a long interval may reach back over earlier periods */
		while (lp->n >= 2 && lp->v[lp->n - 2].end >= lp->v[lp->n - 1].start) {
			struct live_span *a = &lp->v[lp->n - 2], *b = &lp->v[lp->n - 1];

			if (b->start < a->start)
				a->start = b->start;
			if (b->end > a->end)
				a->end = b->end;
			lp->n--;
		}
		last = &lp->v[lp->n - 1];
		last->n = 1;
		last->total = last->end - last->start;
	} else {
		/* -Z prints every period: nothing is folded then */
		if (!opts.do_active && lp->n >= lp->compact_at) {
			live_compact(lp, s);
			/* a compaction walks the issue times too: at least as many appends until the
			 * next one (however few periods they leave) */
			lp->compact_at = 2 * lp->n + LIVE_KEEP + (s->len - s->head) / 16;
		}
		lp->v = array_grow(lp->v, &lp->alloc, lp->n, sizeof(*lp->v));
		lp->v[lp->n] = (struct live_span){.start = dt, .end = ct, .total = ct - dt, .n = 1};
		lp->n++;
	}
	if (ct > lp->end)
		lp->end = ct;
}

void live_totals(const struct live *lp, long *n, uint64_t *total)
{
	*n = lp->nfolded;
	*total = lp->total;
	for (size_t i = 0; i < lp->n; i++) {
		*n += lp->v[i].n;
		*total += lp->v[i].total;
	}
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
