// SPDX-License-Identifier: GPL-2.0
/*
 * Percentiles of Q2C, D2C and Q2D (see percentiles.h), a subscriber of the I/O model.
 */
#include <stdlib.h>

#include "blk/hist.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/u64map.h"
#include "output.h"
#include "report/percentiles.h"
#include "report/statistics.h"

/*
 * The histograms of a device (and in total), and of the D2C times seen before the device's
 * first Q, which the classic model ignores: a trace recorded with "-a issue -a complete"
 * has no Q, and then they are its D2C (allocated at the first: most traces have none, and
 * 32 KiB less per device keeps it within the allocators' small sizes).
 */
enum { HIST_Q2C, HIST_D2C, HIST_Q2D, HIST_NR };

struct pct_dev {
	struct blk_hist hist[HIST_NR];
	struct blk_hist *no_q; /* NULL while empty */
	struct u64map d_no_q; /* issues before the first Q: start sector + 1 -> issue time */
};

struct pct {
	const struct btt_view *v;
	struct pct_dev **dev; /* by device index */
	size_t ndev, adev;
	struct blk_hist total[HIST_NR];
};

static const double pcts[] = {50, 90, 99, 99.9, 99.99, 100};
static const char *const pct_names[] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static void add(struct pct *p, const struct btt_dev *dip, int which, uint64_t v)
{
	blk_hist_add(&p->dev[dip->idx]->hist[which], v);
	blk_hist_add(&p->total[which], v);
}

static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	(void)st;
	add(ctx, io->dev, HIST_Q2D, tdelta(io->t[BTT_STAGE_Q], t));
}

static void on_done(void *ctx, const struct btt_io *io)
{
	uint64_t c = io->t[BTT_STAGE_C];

	add(ctx, io->dev, HIST_Q2C, tdelta(io->t[BTT_STAGE_Q], c));
	if (io->t[BTT_STAGE_D] != NO_TIME)
		add(ctx, io->dev, HIST_D2C, tdelta(io->t[BTT_STAGE_D], c));
}

/* a second issue at the same start replaces the first */
static void no_q_issue(struct pct_dev *d, const struct btt_dev_event *e)
{
	uint64_t *t;

	if (e->ev->sector == UINT64_MAX)
		return;
	t = u64map_get(&d->d_no_q, e->ev->sector + 1);
	if (t)
		*t = e->ev->time;
	else if (u64map_put(&d->d_no_q, e->ev->sector + 1, e->ev->time) < 0)
		die("out of memory");
}

static void no_q_complete(struct pct_dev *d, const struct btt_dev_event *e)
{
	uint64_t *t;

	if (!d->d_no_q.n || e->ev->sector == UINT64_MAX)
		return;
	t = u64map_get(&d->d_no_q, e->ev->sector + 1);
	if (!t)
		return;
	if (!d->no_q) {
		d->no_q = xmalloc(sizeof(*d->no_q));
		blk_hist_clear(d->no_q);
	}
	blk_hist_add(d->no_q, tdelta(*t, e->ev->time));
	u64map_del(&d->d_no_q, e->ev->sector + 1);
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct pct *p = ctx;
	struct pct_dev *d;

	if (e->kind == BTT_EV_NEW) {
		p->dev = array_grow(p->dev, &p->adev, e->dev->idx, sizeof(*p->dev));
		p->dev[p->ndev++] = xcalloc(1, sizeof(struct pct_dev));
		return;
	}
	d = p->dev[e->dev->idx];
	switch (e->kind) {
	case BTT_EV_FIRST_Q:
		/* the device has queued I/O: its D2C is the classic one */
		u64map_free(&d->d_no_q);
		free(d->no_q);
		d->no_q = NULL;
		break;
	case BTT_EV_ISSUE_BEFORE_Q:
		no_q_issue(d, e);
		break;
	case BTT_EV_COMPLETE_BEFORE_Q:
		no_q_complete(d, e);
		break;
	default:
		break;
	}
}

static int pct_wanted(const struct btt_opts *o)
{
	return o->percentiles;
}

static void *pct_new(const struct btt_view *v, void *opened)
{
	struct pct *p;
	struct btt_io_sub sub = {
		.stages = 1u << BTT_STAGE_D,
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_FIRST_Q | 1u << BTT_EV_ISSUE_BEFORE_Q |
			  1u << BTT_EV_COMPLETE_BEFORE_Q,
		.stage = on_stage,
		.done = on_done,
		.dev_event = on_event,
	};

	(void)opened;
	p = xcalloc(1, sizeof(*p));
	p->v = v;
	sub.ctx = p;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return p;
}

static void pct_row(FILE *ofp, const char *dev, const char *what, const struct blk_hist *h)
{
	fprintf(ofp, "%10s | %-3s %11llu", dev, what, (unsigned long long)h->n);
	/* nothing measured (a trace without Q events has no Q2C): say so, not zeros */
	if (!h->n) {
		fprintf(ofp, " %13s\n", "no data");
		return;
	}
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13.9f", (double)blk_hist_percentile(h, pcts[i]) / 1.0e9);
	fputc('\n', ofp);
}

static void dashes(FILE *ofp)
{
	fprintf(ofp, "---------- | --- -----------");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " -------------");
	fputc('\n', ofp);
}

/*
 * @a with the D2C times of @no_q (a trace without Q events), in @tmp when there are any
 * (allocated then)
 */
static const struct blk_hist *with_no_q(const struct blk_hist *a, const struct blk_hist *no_q,
					struct blk_hist **tmp)
{
	if (!no_q || !no_q->n)
		return a;
	if (!*tmp)
		*tmp = xmalloc(sizeof(**tmp));
	**tmp = *a;
	blk_hist_merge(*tmp, no_q);
	return *tmp;
}

/* the table, on @ofp (not with --iowait-only) */
static void pct_print(void *state, FILE *ofp)
{
	const struct pct *p = state;
	const struct btt_devs *devs = p->v->devs;
	static const char *const names[] = {"Q2C", "D2C", "Q2D"};
	struct blk_hist *d2c = NULL, *total = NULL;
	const struct blk_hist *t;

	if (p->v->opts->iowait_only)
		return;
	fprintf(ofp, "==================== Latency Percentiles (seconds) ====================\n\n");
	fprintf(ofp, "%10s | %-3s %11s", "DEV", "LAT", "N");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13s", pct_names[i]);
	fputc('\n', ofp);
	dashes(ofp);
	for (size_t i = 0; i < devs->nout; i++) {
		const struct btt_dev *dip = devs->out[i];
		const struct blk_hist *h = p->dev[dip->idx]->hist;

		pct_row(ofp, dip->label, names[HIST_Q2C], &h[HIST_Q2C]);
		pct_row(ofp, dip->label, names[HIST_D2C],
			with_no_q(&h[HIST_D2C], p->dev[dip->idx]->no_q, &d2c));
		pct_row(ofp, dip->label, names[HIST_Q2D], &h[HIST_Q2D]);
	}
	dashes(ofp);
	t = &p->total[HIST_D2C];
	for (size_t i = 0; i < p->ndev; i++) {
		const struct blk_hist *no_q = p->dev[i]->no_q;

		if (!no_q)
			continue;
		if (t == total)
			blk_hist_merge(total, no_q);
		else
			t = with_no_q(t, no_q, &total);
	}
	pct_row(ofp, "Total", names[HIST_Q2C], &p->total[HIST_Q2C]);
	pct_row(ofp, "Total", names[HIST_D2C], t);
	pct_row(ofp, "Total", names[HIST_Q2D], &p->total[HIST_Q2D]);
	fputc('\n', ofp);
	free(d2c);
	free(total);
}

static void pct_free(void *state)
{
	struct pct *p = state;

	for (size_t i = 0; i < p->ndev; i++) {
		u64map_free(&p->dev[i]->d_no_q);
		free(p->dev[i]->no_q);
		free(p->dev[i]);
	}
	free(p->dev);
	free(p);
}

const struct btt_output_ops percentiles_output = {
	.name = "percentiles",
	.wanted = pct_wanted,
	.new = pct_new,
	.report = pct_print,
	.free = pct_free,
};
