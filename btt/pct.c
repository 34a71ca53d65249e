// SPDX-License-Identifier: GPL-2.0
/*
 * Percentiles of Q2C, D2C and Q2D per device and in total (an addition to the classic
 * report, only with --percentiles or --percentiles-only), from bounded-error histograms:
 * each value is within 1/64 of a recorded latency.
 */
#include <stdlib.h>

#include "btt.h"
#include "common.h"

static const double pcts[] = {50, 90, 99, 99.9, 99.99, 100};
static const char *const pct_names[] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static void pct_row(FILE *ofp, const char *dev, const char *what, const struct blk_hist *h)
{
	fprintf(ofp, "%10s | %-3s %11llu", dev, what, (unsigned long long)h->n);
	/* nothing measured (a trace without Q events has no Q2C): say so, not zeros */
	if (!h->n) {
		fprintf(ofp, " %13s\n", "no data");
		return;
	}
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13.9f", bit_time(blk_hist_percentile(h, pcts[i])));
	fputc('\n', ofp);
}

static void dashes(FILE *ofp)
{
	fprintf(ofp, "---------- | --- -----------");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " -------------");
	fputc('\n', ofp);
}

void pct_print(FILE *ofp)
{
	static const char *const names[] = {"Q2C", "D2C", "Q2D"};
	/* D2C with the times before a device's first Q (a trace without Q events) */
	struct blk_hist *d2c = malloc(sizeof(*d2c)), *total = malloc(sizeof(*total));
	char lab[64];

	if (!d2c || !total)
		die("out of memory");

	fprintf(ofp, "==================== Latency Percentiles (seconds) ====================\n\n");
	fprintf(ofp, "%10s | %-3s %11s", "DEV", "LAT", "N");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13s", pct_names[i]);
	fputc('\n', ofp);
	dashes(ofp);
	for (size_t i = 0; i < bs.nout; i++) {
		const struct blk_hist *h = bs.out[i]->hist;

		if (!dev_shown(bs.out[i]) || !h)
			continue;
		dev_label(bs.out[i], lab, sizeof(lab), 1);
		*d2c = h[HIST_D2C];
		blk_hist_merge(d2c, &h[HIST_D2C_NO_Q]);
		pct_row(ofp, lab, names[HIST_Q2C], &h[HIST_Q2C]);
		pct_row(ofp, lab, names[HIST_D2C], d2c);
		pct_row(ofp, lab, names[HIST_Q2D], &h[HIST_Q2D]);
	}
	dashes(ofp);
	*total = bs.hist[HIST_D2C];
	for (size_t i = 0; i < bs.ndevs; i++)
		if (bs.devs[i]->hist)
			blk_hist_merge(total, &bs.devs[i]->hist[HIST_D2C_NO_Q]);
	pct_row(ofp, "Total", names[HIST_Q2C], &bs.hist[HIST_Q2C]);
	pct_row(ofp, "Total", names[HIST_D2C], total);
	pct_row(ofp, "Total", names[HIST_Q2D], &bs.hist[HIST_Q2D]);
	fputc('\n', ofp);
	free(d2c);
	free(total);
}
