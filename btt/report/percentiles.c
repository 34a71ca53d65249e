// SPDX-License-Identifier: GPL-2.0
/*
 * Percentiles of Q2C, D2C and Q2D (see percentiles.h), a subscriber of the model of every
 * bio.
 */
#include <stdlib.h>

#include "blk/hist.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "output.h"
#include "report/percentiles.h"
#include "report/statistics.h"

/*
 * The histograms of a device (and in total): over every bio (model/bios.h), a split one
 * counted once from its first D to its last C, those whose Q is not in the trace (a trace
 * recorded with "-a issue -a complete") in D2C only. Devices by their index in the
 * registry, grown as bios name them.
 */
enum { HIST_Q2C, HIST_D2C, HIST_Q2D, HIST_NR };

struct pct {
	const struct btt_view *v;
	struct blk_hist **dev; /* by device index, NULL for a device with no bio */
	size_t adev;
	struct blk_hist total[HIST_NR];
	uint64_t unfinished; /* bios given up before their last C: not measured */
};

static const double pcts[] = {50, 90, 99, 99.9, 99.99, 100};
static const char *const pct_names[] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static void add(struct blk_hist *h, struct pct *p, int which, uint64_t from, uint64_t to)
{
	if (from == NO_TIME || to == NO_TIME)
		return;
	blk_hist_add(&h[which], tdelta(from, to));
	blk_hist_add(&p->total[which], tdelta(from, to));
}

static void on_bio(void *ctx, const struct btt_bio *b)
{
	struct pct *p = ctx;
	const struct btt_dev *dip = devs_find(p->v->devs, b->device);
	struct blk_hist *h;

	if (!dip || !dip->shown)
		return;
	if (b->flags & BTT_BIO_UNFINISHED) {
		p->unfinished++;
		return;
	}
	if (dip->idx >= p->adev || !p->dev[dip->idx]) {
		p->dev = array_grow_zero(p->dev, &p->adev, dip->idx, sizeof(*p->dev));
		p->dev[dip->idx] = xcalloc(HIST_NR, sizeof(struct blk_hist));
	}
	h = p->dev[dip->idx];
	add(h, p, HIST_Q2C, b->t_q, b->t_last_c);
	add(h, p, HIST_D2C, b->t_first_d, b->t_last_c);
	add(h, p, HIST_Q2D, b->t_q, b->t_first_d);
}

static int pct_wanted(const struct btt_opts *o)
{
	return o->percentiles;
}

static void *pct_new(const struct btt_view *v, void *opened)
{
	struct pct *p;

	(void)opened;
	p = xcalloc(1, sizeof(*p));
	p->v = v;
	if (bios_subscribe(v->bios, on_bio, p) < 0)
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

/* the table, on @ofp (not with --iowait-only) */
static void pct_print(void *state, FILE *ofp)
{
	const struct pct *p = state;
	const struct btt_devs *devs = p->v->devs;
	static const char *const names[] = {"Q2C", "D2C", "Q2D"};
	static const struct blk_hist none[HIST_NR];

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
		const struct blk_hist *h = dip->idx < p->adev && p->dev[dip->idx] ? p->dev[dip->idx]
										  : none;

		for (int k = 0; k < HIST_NR; k++)
			pct_row(ofp, dip->label, names[k], &h[k]);
	}
	dashes(ofp);
	for (int k = 0; k < HIST_NR; k++)
		pct_row(ofp, "Total", names[k], &p->total[k]);
	fprintf(ofp, "N: bios, a split one once (from its first D to its last C)");
	if (p->unfinished)
		fprintf(ofp, "; %llu not completed in the trace left out",
			(unsigned long long)p->unfinished);
	fprintf(ofp, "\n\n");
}

static void pct_free(void *state)
{
	struct pct *p = state;

	for (size_t i = 0; i < p->adev; i++)
		free(p->dev[i]);
	free(p->dev);
	free(p);
}

const struct btt_output_ops percentiles_output = {
	.name = "percentiles",
	.flags = BTT_OUTPUT_BIOS,
	.wanted = pct_wanted,
	.new = pct_new,
	.report = pct_print,
	.free = pct_free,
};
