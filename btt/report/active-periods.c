// SPDX-License-Identifier: GPL-2.0
/*
 * Live periods (see active-periods.h).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/active-periods.h"
#include "report/outfile.h"

#define LIVE_KEEP 256

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
	/* mostly: later than every time held, and room after them */
	if (s->len < s->alloc && (s->len == s->head || s->v[s->len - 1].t < t)) {
		s->v[s->len++] = (struct dset_entry){.t = t, .n = 1};
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
		if (!lp->keep_all && lp->n >= lp->compact_at) {
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

/* @to becomes a copy of @from (the same periods, folded the same) */
static void live_copy(struct live *to, const struct live *from)
{
	live_release(to);
	*to = *from;
	to->v = NULL;
	to->alloc = 0;
	if (from->n) {
		to->v = array_grow(NULL, &to->alloc, from->n - 1, sizeof(*to->v));
		memcpy(to->v, from->v, from->n * sizeof(*to->v));
	}
}

/*
 * The end of the trace, before the report reads the periods: with a single device the
 * system's periods were only the device's (kept once), copied here.
 */
static void live_input_end(void *state, uint64_t t_last)
{
	struct btt_live *l = state;

	(void)t_last;
	/* one device: the system's periods are the device's (they were not kept twice) */
	if (l->ndev == 1)
		live_copy(&l->all, &l->dev[0]);
}

/* ---- the subscriber ---- */

/* an issue: its time is in flight (a second issue replaces the first) */
static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	struct btt_live *l = ctx;

	(void)st;
	if (io->t[BTT_STAGE_D] != NO_TIME)
		dset_del(&l->issued, io->t[BTT_STAGE_D]);
	dset_add(&l->issued, t);
}

static void on_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	struct btt_live *l = ctx;

	(void)why;
	if (io->t[BTT_STAGE_D] != NO_TIME)
		dset_del(&l->issued, io->t[BTT_STAGE_D]);
}

static void on_done(void *ctx, const struct btt_io *io)
{
	struct btt_live *l = ctx;
	uint64_t d = io->t[BTT_STAGE_D];

	if (d == NO_TIME)
		return;
	/* the live period starts at the earliest issue, as the reference's */
	if (l->first_d == NO_TIME || d < l->first_d)
		l->first_d = d;
	l->done = array_grow(l->done, &l->adone, l->ndone, sizeof(*l->done));
	l->done[l->ndone++] = d;
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct btt_live *l = ctx;

	if (e->kind == BTT_EV_NEW) {
		l->dev = array_grow(l->dev, &l->adev, e->dev->idx, sizeof(*l->dev));
		l->dev[l->ndev++] = (struct live){.keep_all = l->keep_all};
		/* a second device: the system's periods are its own from now on */
		if (l->ndev == 2)
			live_copy(&l->all, &l->dev[0]);
		return;
	}
	/* a completion: the interval from the earliest issue of the I/Os it took */
	if (l->first_d != NO_TIME) {
		live_add(&l->dev[e->dev->idx], l->first_d, e->ev->time, &l->issued);
		if (l->ndev > 1)
			live_add(&l->all, l->first_d, e->ev->time, &l->issued);
	}
	/* no longer in flight: only now, so that the interval above found its start */
	while (l->ndone)
		dset_del(&l->issued, l->done[--l->ndone]);
	l->first_d = NO_TIME;
}

static void *live_new(const struct btt_view *v, void *opened)
{
	struct btt_live *l = xcalloc(1, sizeof(*l));
	struct btt_io_sub sub = {
		.ctx = l,
		.stages = 1u << BTT_STAGE_D,
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_COMPLETE,
		.stage = on_stage,
		.done = on_done,
		.lost = on_lost,
		.dev_event = on_event,
	};

	(void)opened;
	l->v = v;
	l->keep_all = v->opts->do_active;
	l->all.keep_all = l->keep_all;
	l->first_d = NO_TIME;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return l;
}

/* -Z: the live periods as a step plot between @base and @base + 0.9 */
static void live_dump(const struct live *lp, const char *name, float base)
{
	char *fn = NULL;
	FILE *fp = file_create(name, &fn);
	double lo = base, hi = base + 0.9f;
	uint64_t last = 0;

	for (size_t i = 0; i < lp->n; i++) {
		fprintf(fp, "%.9lf %.1lf\n", (double)last / 1.0e9, lo);
		fprintf(fp, "%.9lf %.1lf\n", (double)lp->v[i].start / 1.0e9, lo);
		fprintf(fp, "%.9lf %.1lf\n", (double)lp->v[i].start / 1.0e9, hi);
		fprintf(fp, "%.9lf %.1lf\n", (double)lp->v[i].end / 1.0e9, hi);
		fprintf(fp, "%.9lf %.1lf\n", (double)lp->v[i].end / 1.0e9, lo);
		last = lp->v[i].end;
	}
	file_close(&fp, &fn);
}

/* -Z: sys_live.dat and <dev>_live.dat of the shown devices, in report order */
static int live_write(void *state, uint64_t t_last)
{
	const struct btt_live *l = state;
	const struct btt_devs *devs = l->v->devs;
	float base = 1.0f;

	(void)t_last;
	if (!l->keep_all)
		return 0;

	live_dump(&l->all, "sys_live.dat", 0.0f);
	/* the shown devices in report order; each with live periods takes a row */
	for (size_t i = 0; i < devs->nout; i++) {
		const struct live *lp = &l->dev[devs->out[i]->idx];
		char fn[128];

		snprintf(fn, sizeof(fn), "%s_live.dat", devs->out[i]->name);
		live_dump(lp, fn, base);
		if (lp->n)
			base += 1.0f;
	}
	return 0;
}

static void live_free(void *state)
{
	struct btt_live *l = state;

	live_release(&l->all);
	for (size_t i = 0; i < l->ndev; i++)
		live_release(&l->dev[i]);
	free(l->dev);
	dset_release(&l->issued);
	free(l->done);
	free(l);
}

const struct btt_output_ops active_periods_output = {
	.name = "active-periods",
	.new = live_new,
	.input_end = live_input_end,
	.finish = live_write,
	.free = live_free,
};
