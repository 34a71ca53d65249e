// SPDX-License-Identifier: GPL-2.0
/*
 * Percentiles of Q2C, D2C and Q2D per device and in total (an addition to the classic
 * report, only with --percentiles or --percentiles-only), from bounded-error histograms:
 * each value is within 1/64 of a recorded latency.
 */
#include "btt.h"

static const double pcts[] = {50, 90, 99, 99.9, 99.99, 100};
static const char *const pct_names[] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static void pct_row(FILE *ofp, const char *dev, const char *what, const struct blk_hist *h)
{
	fprintf(ofp, "%10s | %-3s %11llu", dev, what, (unsigned long long)h->n);
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13.9f", bit_time(h->n ? blk_hist_percentile(h, pcts[i]) : 0));
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
	char lab[64];

	fprintf(ofp, "==================== Latency Percentiles ====================\n\n");
	fprintf(ofp, "%10s | %-3s %11s", "DEV", "LAT", "N");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(ofp, " %13s", pct_names[i]);
	fputc('\n', ofp);
	dashes(ofp);
	for (size_t i = 0; i < bs.nout; i++) {
		if (!dev_shown(bs.out[i]) || !bs.out[i]->hist)
			continue;
		dev_label(bs.out[i], lab, sizeof(lab), 1);
		for (int k = 0; k < 3; k++)
			pct_row(ofp, lab, names[k], &bs.out[i]->hist[k]);
	}
	dashes(ofp);
	for (int k = 0; k < 3; k++)
		pct_row(ofp, "Total", names[k], &bs.hist[k]);
	fputc('\n', ofp);
}
