// SPDX-License-Identifier: GPL-2.0
/*
 * The classic report: All Devices averages, per-device overhead, merges, seeks, plugs,
 * active requests and live periods, then the range data.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/active-periods.h"
#include "report/outfile.h"
#include "report/report.h"
#include "report/seek.h"
#include "report/statistics.h"

#define DEV_DASH "---------- | "

/* what the report reads, and where it writes */
struct rep {
	const struct btt_view *v;
	struct stats *s;
	const struct btt_live *live; /* the live periods (active-periods.c) */
	FILE *xvg; /* -X: the same numbers in an easy-to-parse file (name.xvg) */
};

static void banner(FILE *ofp, const char *title)
{
	fprintf(ofp, "==================== %s ====================\n\n", title);
}

static double secs(uint64_t t)
{
	return (double)t / 1.0e9;
}

/* seconds as the reference's tables compute them: whole seconds plus the fraction */
static double table_time(uint64_t t)
{
	return (double)(t / 1000000000u) + (double)(t % 1000000000u) / 1.0e9;
}

static double avg_of(const struct avg *ap)
{
	return ap->n ? table_time(ap->total) / (double)ap->n : 0.0;
}

static void avg_row(FILE *ofp, FILE *xvg, const char *name, const struct avg *ap)
{
	if (ap->n <= 0)
		return;
	if (xvg) {
		fprintf(xvg, "%s %.9f %.9f %.9f %ld\n", name, table_time(ap->min), avg_of(ap),
			table_time(ap->max), ap->n);
		return;
	}
	fprintf(ofp, "%-15s %13.9f %13.9f %13.9f %11ld\n", name, table_time(ap->min), avg_of(ap),
		table_time(ap->max), ap->n);
}

static const struct {
	const char *name;
	enum avg_kind k;
} dm[] = {{"Q2Qdm", AV_Q2Q_DM}, {"Q2Adm", AV_Q2A_DM}, {"Q2Cdm", AV_Q2C_DM}},
  rows[] = {{"Q2Q", AV_Q2Q}, {"Q2A", AV_Q2A}, {"Q2G", AV_Q2G}, {"S2G", AV_S2G}, {"G2I", AV_G2I},
	    {"Q2M", AV_Q2M}, {"I2D", AV_I2D}, {"M2D", AV_M2D}, {"D2C", AV_D2C}, {"Q2C", AV_Q2C}};

static void out_avgs(FILE *ofp, const struct avgs *av)
{
	for (size_t i = 0; i < sizeof(dm) / sizeof(dm[0]); i++)
		avg_row(ofp, NULL, dm[i].name, &av->a[dm[i].k]);
	fputc('\n', ofp);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		avg_row(ofp, NULL, rows[i].name, &av->a[rows[i].k]);
	fputc('\n', ofp);
}

static int exe_shown(const char *exes, const char *name);

/* -A: one table per metric, a row per process (by name) or per device */
static void metric_table(struct rep *r, FILE *ofp, const char *name, enum avg_kind k, int per_dev)
{
	const struct btt_devs *d = r->v->devs;
	char lab[64];

	fprintf(ofp, "%15s %13s %13s %13s %11s\n", name, "MIN", "AVG", "MAX", "N");
	fprintf(ofp, "--------------- ------------- ------------- ------------- -----------\n");
	if (per_dev) {
		for (size_t i = 0; i < d->nout; i++)
			avg_row(ofp, NULL, d->out[i]->label, &r->s->dev[d->out[i]->idx].avgs.a[k]);
	} else {
		for (size_t i = 0; i < d->nprocs; i++) {
			const struct proc_stats *ps = stats_proc(r->s, d->procs[i]);

			if (!exe_shown(r->v->opts->exes, d->procs[i]->name) || !ps)
				continue;
			snprintf(lab, sizeof(lab), "%.14s", d->procs[i]->name);
			avg_row(ofp, NULL, lab, &ps->avgs.a[k]);
		}
	}
	fputc('\n', ofp);
}

static void per_tables(struct rep *r, FILE *ofp, const char *title, int per_dev)
{
	banner(ofp, title);
	for (size_t i = 0; i < sizeof(dm) / sizeof(dm[0]); i++)
		metric_table(r, ofp, dm[i].name, dm[i].k, per_dev);
	fputc('\n', ofp);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].k != AV_M2D) /* the reference has no M2D table */
			metric_table(r, ofp, rows[i].name, rows[i].k, per_dev);
}

static void all_devices(struct rep *r, FILE *ofp)
{
	banner(ofp, "All Devices");
	fprintf(ofp, "%15s %13s %13s %13s %11s\n", "ALL", "MIN", "AVG", "MAX", "N");
	fprintf(ofp, "--------------- ------------- ------------- ------------- -----------\n");
	out_avgs(ofp, &r->s->all);
	if (r->xvg) {
		/* the dm rows are not in the .xvg file */
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			avg_row(NULL, r->xvg, rows[i].name, &r->s->all.a[rows[i].k]);
	}
}

static double pct(uint64_t part, uint64_t whole)
{
	return 100.0 * (double)part / (double)whole;
}

static void device_overhead(struct rep *r, FILE *ofp)
{
	static const enum avg_kind cols[] = {AV_Q2G, AV_G2I, AV_Q2M, AV_I2D, AV_D2C};
	uint64_t tot[5] = {0}, q2c = 0;
	char lab[64];
	long samples = 0; /* of the five columns, over the devices shown */

	banner(ofp, "Device Overhead");
	fprintf(ofp, "       DEV |       Q2G       G2I       Q2M       I2D       D2C\n");
	fprintf(ofp, DEV_DASH "--------- --------- --------- --------- ---------\n");
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];
		const struct avg *qc = &dip->avgs.a[AV_Q2C];

		if (qc->n <= 0 || qc->total == 0)
			continue;
		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s |", lab);
		for (int c = 0; c < 5; c++) {
			fprintf(ofp, " %8.4lf%%", pct(dip->avgs.a[cols[c]].total, qc->total));
			tot[c] += dip->avgs.a[cols[c]].total;
			samples += dip->avgs.a[cols[c]].n;
		}
		fputc('\n', ofp);
		q2c += qc->total;
	}
	/* no overall line when the shown devices had none of the five */
	if (samples) {
		fprintf(ofp, DEV_DASH "--------- --------- --------- --------- ---------\n");
		fprintf(ofp, "%10s |", "Overall");
		for (int c = 0; c < 5; c++)
			fprintf(ofp, " %8.4lf%%", pct(tot[c], q2c));
		fputc('\n', ofp);
	}
	fputc('\n', ofp);
}

static void merge_info(struct rep *r, FILE *ofp)
{
	static const char hdr[] =
		"       DEV |       #Q       #D   Ratio |   BLKmin   BLKavg   BLKmax    Total\n";
	static const char dash[] = DEV_DASH
		"-------- -------- ------- | -------- -------- -------- --------\n";
	unsigned long long nq = 0, nd = 0, bmin = 0, bmax = 0, btot = 0;
	char lab[64];
	int shown = 0;

	banner(ofp, "Device Merge Information");
	fputs(hdr, ofp);
	fputs(dash, ofp);
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];
		const struct avg *b = &dip->avgs.a[AV_BLKS];
		double q = (double)dip->n_qs, d = (double)dip->n_ds, ratio;

		if (dip->n_qs <= 0 || dip->n_ds <= 0)
			continue;
		/* #Q is at least #D; as in the reference, this is kept for the sections below
		 * (the average of requests active at Q divides by it) */
		if (q < d) {
			q = d;
			dip->n_qs = dip->n_ds;
		}
		ratio = q / d;
		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s | %8llu %8llu %7.1lf | %8llu %8llu %8llu %8llu\n", lab,
			(unsigned long long)q, (unsigned long long)d, ratio,
			(unsigned long long)b->min, (unsigned long long)((double)b->total / d),
			(unsigned long long)b->max, (unsigned long long)b->total);
		if (r->xvg) {
			snprintf(lab, sizeof(lab), "%s", dev->name);
			fprintf(r->xvg, "DMI %s %llu %llu %.9lf %llu %llu %llu %llu\n", lab,
				(unsigned long long)q, (unsigned long long)d, ratio,
				(unsigned long long)b->min,
				(unsigned long long)((double)b->total / d),
				(unsigned long long)b->max, (unsigned long long)b->total);
		}
		if (!shown || b->min < bmin)
			bmin = b->min;
		if (b->max > bmax)
			bmax = b->max;
		btot += b->total;
		nq += (unsigned long long)q;
		nd += (unsigned long long)d;
		shown++;
	}
	if (shown > 1) {
		fputs(dash, ofp);
		fputs(hdr, ofp);
		fprintf(ofp, "%10s | %8llu %8llu %7.1lf | %8llu %8llu %8llu %8llu\n", "TOTAL", nq,
			nd, (double)((float)nq / (float)nd), bmin, /* in float, as the reference */
			(unsigned long long)((double)btot / (double)nd), bmax, btot);
	}
	fputc('\n', ofp);
}

static void mode_more(FILE *ofp, int more)
{
	fprintf(ofp, "\n%63s...(%d more)", "", more);
}

struct omode {
	long long value;
	long count;
};

static void omode_add(struct omode **om, size_t *n, size_t *alloc, const struct mode *m)
{
	for (int k = 0; k < m->nmds; k++) {
		size_t i;

		for (i = 0; i < *n; i++)
			if ((*om)[i].value == m->modes[k])
				break;
		if (i < *n) {
			(*om)[i].count += m->most;
			continue;
		}
		if (*n == *alloc) {
			*alloc = *alloc ? *alloc * 2 : 8;
			*om = realloc(*om, *alloc * sizeof(**om));
			if (!*om)
				die("out of memory");
		}
		(*om)[*n].value = m->modes[k];
		(*om)[*n].count = m->most;
		(*n)++;
	}
}

static void seek_info(struct rep *r, FILE *ofp, const char *title, int d2d)
{
	static const char hdr[] =
		" |          NSEEKS            MEAN          MEDIAN | MODE           \n";
	static const char dash[] = DEV_DASH
		"--------------- --------------- --------------- | ---------------\n";
	struct omode *om = NULL;
	size_t nom = 0, aom = 0;
	long long tot = 0;
	double mean = 0;
	/* summed as the reference sums it, in long long (modulo 2^64 on a damaged trace's
	 * medians near 2^63; as a double, its mean may not fit a long long at all) */
	long long median = 0;
	char lab[64];

	banner(ofp, title);
	fprintf(ofp, "%10s%s", "DEV", hdr);
	fputs(dash, ofp);
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];
		struct seeki *sip = d2d ? dip->d2d_seek : dip->q2q_seek;
		long long n = seeki_nseeks(sip), med;
		struct mode m;
		double mn;

		if (n <= 0)
			continue;
		mn = seeki_mean(sip);
		med = seeki_median(sip);
		seeki_mode(sip, &m);
		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s | %15lld %15.1lf %15lld | %lld(%ld)", lab, n, mn, med,
			m.modes[0], m.most);
		if (m.nmds == 2)
			fprintf(ofp, " %lld", m.modes[1]);
		else if (m.nmds > 2)
			mode_more(ofp, m.nmds - 1);
		fputc('\n', ofp);
		if (r->xvg) {
			snprintf(lab, sizeof(lab), "%s", dev->name);
			fprintf(r->xvg, "%s %s %lld %.9lf %lld %lld %ld", d2d ? "DSK" : "QSK", lab,
				n, mn, med, m.modes[0], m.most);
			for (int k = 1; k < m.nmds; k++)
				fprintf(r->xvg, " %lld", m.modes[k]);
			fputc('\n', r->xvg);
		}
		tot += n;
		mean += mn * (double)n;
		median = (long long)((unsigned long long)median +
				     (unsigned long long)med * (unsigned long long)n);
		omode_add(&om, &nom, &aom, &m);
		free(m.modes);
	}
	if (tot > 0) {
		long most = 0;
		size_t first = 0;
		int nmost = 0;

		/* the overall modes: the most frequent of the devices' modes, summed by value */
		for (size_t k = 0; k < nom; k++) {
			if (om[k].count > most) {
				most = om[k].count;
				first = k;
				nmost = 0;
			}
			if (om[k].count == most)
				nmost++;
		}
		fputs(dash, ofp);
		fprintf(ofp, "%10s%s", "Overall", hdr);
		fprintf(ofp, "%10s | %15lld %15.1lf %15lld | %lld(%ld)", "Average", tot,
			mean / (double)tot, median / tot, om[first].value, most);
		if (nmost > 1) {
			mode_more(ofp, nmost - 1);
			fputc('\n', ofp);
		}
		fputc('\n', ofp);
	}
	free(om);
	fputc('\n', ofp);
}

static void plug_info(struct rep *r, FILE *ofp)
{
	long np = 0, npt = 0, ndev = 0;
	uint64_t up = 0, upt = 0;
	double pctsum = 0;
	char lab[64];

	banner(ofp, "Plug Information");
	fprintf(ofp, "       DEV |    # Plugs # Timer Us  | %% Time Q Plugged\n");
	fprintf(ofp, DEV_DASH "---------- ----------  | ----------------\n");
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];
		double p;

		if (dip->nplugs + dip->nplugs_t <= 0)
			continue;
		p = 100.0 * (dip->plugged_time / (dip->end_time - dip->start_time));
		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s | %10ld(%10ld) | %13.9lf%%\n", lab, dip->nplugs, dip->nplugs_t,
			p);
		if (r->xvg) {
			snprintf(lab, sizeof(lab), "%s", dev->name);
			fprintf(r->xvg, "PLG %s %ld %ld %.9lf\n", lab, dip->nplugs, dip->nplugs_t,
				p);
		}
		np += dip->nplugs;
		npt += dip->nplugs_t;
		pctsum += p;
		ndev++;
	}
	if (ndev > 1) {
		fprintf(ofp, DEV_DASH "---------- ----------  | ----------------\n");
		fprintf(ofp, "   Overall |    # Plugs # Timer Us  | %% Time Q Plugged\n");
		fprintf(ofp, "%10s | %10ld(%10ld) | %13.9lf%%\n", "Average", np / ndev, npt / ndev,
			pctsum / (double)ndev);
	}
	fputc('\n', ofp);

	fprintf(ofp, "       DEV |    IOs/Unp   IOs/Unp(to)\n");
	fprintf(ofp, DEV_DASH "----------   ----------\n");
	np = npt = 0;
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];

		double u = dip->nplugs ? (double)dip->nios_up / (double)dip->nplugs : 0.0;
		double ut = dip->nplugs_t ? (double)dip->nios_upt / (double)dip->nplugs_t : 0.0;

		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s | %10.1lf   %10.1lf\n", lab, u, ut);
		if (r->xvg) {
			snprintf(lab, sizeof(lab), "%s", dev->name);
			fprintf(r->xvg, "UPG %s %.9lf %.9lf\n", lab, u, ut);
		}
		/* the overall average counts the devices whose unplugs carried I/Os */
		if (dip->nios_up && dip->nplugs) {
			np += dip->nplugs;
			up += dip->nios_up;
		}
		if (dip->nios_upt && dip->nplugs_t) {
			npt += dip->nplugs_t;
			upt += dip->nios_upt;
		}
	}
	if (np || npt) {
		fprintf(ofp, DEV_DASH "----------   ----------\n");
		fprintf(ofp, "%10s |    IOs/Unp   IOs/Unp(to)\n", "Overall");
		fprintf(ofp, "%10s | %10.1lf   %10.1lf\n", "Average",
			np ? (double)up / (double)np : 0.0, npt ? (double)upt / (double)npt : 0.0);
	}
	fputc('\n', ofp);
}

static void active_requests(struct rep *r, FILE *ofp)
{
	uint64_t tq = 0;
	long nq = 0;
	int shown = 0;
	char lab[64];

	banner(ofp, "Active Requests At Q Information");
	fprintf(ofp, "       DEV |  Avg Reqs @ Q\n");
	fprintf(ofp, DEV_DASH "-------------\n");
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		struct dev_stats *dip = &r->s->dev[dev->idx];

		if (dev->remapper || dip->n_qs <= 0)
			continue;
		snprintf(lab, sizeof(lab), "%s", dev->label);
		fprintf(ofp, "%10s | %13.1lf\n", lab, (double)dip->t_act_q / (double)dip->n_qs);
		if (r->xvg) {
			snprintf(lab, sizeof(lab), "%s", dev->name);
			fprintf(r->xvg, "ARQ %s %.9lf\n", lab,
				(double)dip->t_act_q / (double)dip->n_qs);
		}
		tq += dip->t_act_q;
		nq += dip->n_qs;
		shown++;
	}
	if (shown > 1) {
		fprintf(ofp, DEV_DASH "-------------\n");
		fprintf(ofp, "%10s | Avgs Reqs @ Q\n", "Overall");
		fprintf(ofp, "%10s | %13.1lf\n", "Average", (double)tq / (double)nq);
	}
	fputc('\n', ofp);
}

static void live_row(FILE *ofp, const char *lab, const struct live *lp)
{
	double act = 0, lull = 0, p = 0;
	uint64_t total;
	long n;

	live_totals(lp, &n, &total);
	if (n == 1) {
		/* the reference reports a single period as 0 s long and 100% live */
		p = 100.0;
	} else if (n > 1) {
		/* in seconds first, as the reference rounds them */
		act = table_time(total) / (double)n;
		lull = (table_time(lp->end) - table_time(total)) / (double)(n - 1);
		p = lp->end ? 100.0 * (table_time(total) / table_time(lp->end)) : 0.0;
	}
	fprintf(ofp, "%10s | %10ld %13.9lf %13.9lf %6.2lf\n", lab, n, act, lull, p);
}

static void active_periods(struct rep *r, FILE *ofp)
{
	char lab[64];

	banner(ofp, "I/O Active Period Information");
	fprintf(ofp, "       DEV |     # Live      Avg. Act     Avg. !Act %% Live\n");
	fprintf(ofp, DEV_DASH "---------- ------------- ------------- ------\n");
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];

		snprintf(lab, sizeof(lab), "%s", dev->label);
		live_row(ofp, lab, &r->live->dev[dev->idx]);
	}
	fprintf(ofp, DEV_DASH "---------- ------------- ------------- ------\n");
	live_row(ofp, "Total Sys", &r->live->all);
	fputc('\n', ofp);
}

static void q2d_row(FILE *ofp, const char *lab, const uint64_t *h)
{
	uint64_t n = 0;

	for (int i = 0; i < Q2D_BUCKETS; i++)
		n += h[i];
	fprintf(ofp, "%10s | ", lab);
	for (int i = 0; i < Q2D_BUCKETS; i++)
		fprintf(ofp, "%5.1lf ", n ? 100.0 * (double)h[i] / (double)n : 0.0);
	fputc('\n', ofp);
}

static void q2d_histogram(struct rep *r, FILE *ofp)
{
	static const char bar[] = "===== ===== ===== ===== ===== ===== ===== ===== ===== ===== \n";
	uint64_t tot[Q2D_BUCKETS] = {0};
	int shown = 0;

	banner(ofp, "Q2D Histogram");
	fprintf(ofp, "       DEV | <.005 <.010 <.025 <.050 <.075 <.100 <.250 <.500 < 1.0 >=1.0\n");
	fprintf(ofp, " --------- | %s", bar);
	for (size_t i = 0; i < r->v->devs->nout; i++) {
		const struct btt_dev *dev = r->v->devs->out[i];
		const uint64_t *h = r->s->dev[dev->idx].q2d_hist;
		uint64_t n = 0;

		for (int k = 0; k < Q2D_BUCKETS; k++)
			n += h[k];
		if (!n)
			continue;
		q2d_row(ofp, dev->label, h);
		for (int k = 0; k < Q2D_BUCKETS; k++)
			tot[k] += h[k];
		shown++;
	}
	if (shown) {
		fprintf(ofp, "========== | %s", bar);
		q2d_row(ofp, "AVG", tot);
		fputc('\n', ofp);
	}
}

static void report_print(struct stats *s, FILE *ofp)
{
	const struct btt_opts *o = s->v->opts;
	struct rep r = {.v = s->v, .s = s, .live = btt_view_output(s->v, "active-periods")};
	char fn[4096], *xname = NULL;

	if (o->easy_parse && o->output) {
		snprintf(fn, sizeof(fn), "%s.xvg", o->output);
		r.xvg = file_create(fn, &xname);
	}
	if (o->all_data) {
		per_tables(&r, ofp, "Per Process", 0);
		per_tables(&r, ofp, "Per Device", 1);
	}
	all_devices(&r, ofp);
	device_overhead(&r, ofp);
	merge_info(&r, ofp);
	seek_info(&r, ofp, "Device Q2Q Seek Information", 0);
	seek_info(&r, ofp, "Device D2D Seek Information", 1);
	plug_info(&r, ofp);
	active_requests(&r, ofp);
	active_periods(&r, ofp);
	if (o->all_data)
		q2d_histogram(&r, ofp);
	if (r.xvg) {
		free(xname);
		file_close(&r.xvg, NULL);
	}
}

static void ranges_out(FILE *ofp, const struct ranges *rs, float base)
{
	float limit = base + 0.4f;

	for (size_t i = 0; i < rs->n; i++) {
		fprintf(ofp, "%13.9lf %5.1lf\n", secs(rs->v[i].start), (double)base);
		fprintf(ofp, "%13.9lf %5.1lf\n", secs(rs->v[i].start), (double)limit);
		fprintf(ofp, "%13.9lf %5.1lf\n", secs(rs->v[i].end), (double)limit);
		fprintf(ofp, "%13.9lf %5.1lf\n", secs(rs->v[i].end), (double)base);
	}
}

static int region_out(FILE *ofp, const char *name, const struct region *reg, float base)
{
	if (!reg->q.n && !reg->c.n)
		return 0;
	fprintf(ofp, "# %16s : q activity\n", name);
	ranges_out(ofp, &reg->q, base);
	fputc('\n', ofp);
	fprintf(ofp, "# %16s : c activity\n", name);
	ranges_out(ofp, &reg->c, base + 0.5f);
	fputc('\n', ofp);
	return 1;
}

/* -e "exe,exe": whether @name is in the list (always, without -e) */
static int exe_shown(const char *exes, const char *name)
{
	const char *p = exes;
	size_t len = strlen(name);

	if (!p)
		return 1;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, name, n) == 0)
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static void ranges_print(const struct btt_view *v, const struct stats *s, FILE *ofp)
{
	const struct btt_devs *d = v->devs;
	float base = 0.0f;
	char lab[64];

	fprintf(ofp, "# Total System\n");
	/* the system and each device take a slot when they had activity; every process
	 * takes one */
	if (region_out(ofp, "Total System", &s->all_regions, base))
		base += 1.0f;
	if (d->n > 1) {
		fprintf(ofp, "# Per device\n");
		for (size_t i = 0; i < d->nout; i++) {
			/* numbers, not -M names */
			snprintf(lab, sizeof(lab), "%u,%u", BLK_MAJOR(d->out[i]->device),
				 BLK_MINOR(d->out[i]->device));
			if (region_out(ofp, lab, &s->dev[d->out[i]->idx].regions, base))
				base += 1.0f;
		}
	}
	fprintf(ofp, "# Per process\n");
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct proc_stats *ps = stats_proc(s, d->procs[i]);

		if (!exe_shown(v->opts->exes, d->procs[i]->name))
			continue;
		if (ps)
			region_out(ofp, d->procs[i]->name, &ps->regions, base);
		base += 1.0f;
	}
}

/* ---- the classic report as outputs (output.h) ---- */

static void *report_new(const struct btt_view *v, void *opened)
{
	(void)opened;
	return stats_new(v);
}

static void report_input_end(void *state, uint64_t t_last)
{
	struct stats *s = state;

	(void)t_last;
	stats_finish(s, s->v->devs);
}

/* the seek streams' first pass, two at a time */
static void prepare_seeks(const struct stats *s)
{
	struct seeki **v = xmalloc((s->ndev ? s->ndev : 1) * 2 * sizeof(*v));

	for (size_t i = 0; i < s->ndev; i++) {
		v[2 * i] = s->dev[i].q2q_seek;
		v[2 * i + 1] = s->dev[i].d2d_seek;
	}
	seeki_prepare(v, 2 * s->ndev);
	free(v);
}

static int report_shown(const struct btt_opts *o)
{
	return o->percentiles != 2 && !o->iowait_only;
}

static void report_report(void *state, FILE *avg)
{
	struct stats *s = state;

	prepare_seeks(s);
	if (report_shown(s->v->opts))
		report_print(s, avg);
}

/*
 * Where the classic report leaves I/Os out (btt 2.09's pairing), say so once, with why and
 * which outputs count every bio: a user comparing numbers knows which to trust.
 */
static void left_out(const struct stats *s)
{
	const struct iomodel_counts *c = iomodel_counts(s->v->model);
	uint64_t left = c->queued - c->completed;

	if (!left || !report_shown(s->v->opts))
		return;
	char why[96] = "";

	if (c->splits)
		snprintf(why, sizeof(why), "; the trace has %llu split (X) events",
			 (unsigned long long)c->splits);
	fprintf(stderr,
		"%s: note: the report's latencies leave out %llu of %llu queued I/Os (btt 2.09 completes an I/O only by a C over its whole range%s): %llu replaced by a later Q at their sector, %llu queued at the end; --percentiles, --export and --perfetto count every bio\n",
		progname(), (unsigned long long)left, (unsigned long long)c->queued, why,
		(unsigned long long)c->replaced, (unsigned long long)(left - c->replaced));
}

/* -m: the seeks per second of each device */
static int report_finish(void *state, uint64_t t_last)
{
	struct stats *s = state;

	(void)t_last;
	left_out(s);
	for (size_t i = 0; i < s->ndev; i++)
		seeki_sps_write(s->dev[i].q2q_seek, s->dev[i].d2d_seek, s->v->devs->v[i]->name,
				s->v->opts->sps_name);
	return 0;
}

static void report_free(void *state)
{
	stats_free(state);
}

const struct btt_output_ops report_output = {
	.name = "report",
	.new = report_new,
	.input_end = report_input_end,
	.report = report_report,
	.finish = report_finish,
	.free = report_free,
};

/* the range data: after every section of the report, on stdout or in NAME.dat */
struct ranges_state {
	const struct btt_view *v;
};

static void *ranges_new(const struct btt_view *v, void *opened)
{
	struct ranges_state *rs = xmalloc(sizeof(*rs));

	(void)opened;
	rs->v = v;
	return rs;
}

static void ranges_report(void *state, FILE *avg)
{
	const struct btt_view *v = ((struct ranges_state *)state)->v;
	const struct stats *s = btt_view_output(v, "report");
	char fn[4096], *name = NULL;
	FILE *fp = avg;

	if (!s || !report_shown(v->opts))
		return;
	if (v->opts->output) {
		snprintf(fn, sizeof(fn), "%s.dat", v->opts->output);
		fp = file_create(fn, &name);
	}
	ranges_print(v, s, fp);
	if (fp != avg)
		file_close(&fp, &name);
}

const struct btt_output_ops ranges_output = {
	.name = "ranges",
	.new = ranges_new,
	.report = ranges_report,
	.free = free,
};
