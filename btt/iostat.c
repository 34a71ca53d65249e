// SPDX-License-Identifier: GPL-2.0
/*
 * -I: iostat-like statistics, one block of rows per -S seconds of trace time and a
 * cumulative block at the end, computed the way btt 2.09 computes them.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "iostat.h"

struct io_stats {
	uint64_t rqm[2], ios[2], sec[2];
	uint64_t wait, svctm;
	double tot_qusz, idle_time, last_qu_change, last_dev_change;
	long cur_qusz, cur_dev;
};

struct dev_iostat {
	struct io_stats cur, all;
};

static FILE *ofp;
static char *ofn;
static uint64_t last_stamp;
static int started;

static struct dev_iostat *st(struct dev *dip)
{
	if (!dip->iostat) {
		dip->iostat = calloc(1, sizeof(struct dev_iostat));
		if (!dip->iostat)
			die("out of memory");
	}
	return dip->iostat;
}

static void qusz(struct io_stats *s, double now)
{
	s->tot_qusz += (double)s->cur_qusz * (now - s->last_qu_change);
	s->last_qu_change = now;
}

static void idle(struct io_stats *s, double now, int force)
{
	/* merged requests are completed once per queued request, so the count of
	 * requests on the device drifts below zero, and a dump counts the time since the
	 * last change as idle whatever the count: both as the reference does */
	if (s->cur_dev == 0 || force)
		s->idle_time += now - s->last_dev_change;
	s->last_dev_change = now;
}

static void header(void)
{
	fprintf(ofp, "Device:       rrqm/s   wrqm/s     r/s     w/s    rsec/s    wsec/s     rkB/s"
		     "     wkB/s avgrq-sz avgqu-sz   await   svctm  %%util   Stamp\n");
}

void iostat_init(void)
{
	if (opts.iostat_name) {
		ofp = file_create(opts.iostat_name, &ofn);
		header();
	}
}

struct totals {
	double rate[8], avgrq, qusz, await, svctm, util;
	int n;
};

static void row(const char *lab, double r[8], double avgrq, double qu, double await, double svctm,
		double util)
{
	fprintf(ofp,
		"%-11s %8.2lf %8.2lf %7.2lf %7.2lf %9.2lf %9.2lf %9.2lf %9.2lf %8.2lf %8.2lf"
		" %7.2lf %7.2lf %6.2lf",
		lab, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], avgrq, qu, await, svctm, util);
}

static void dump_dev(struct dev *dip, uint64_t stamp, int all, struct totals *t)
{
	struct dev_iostat *d = st(dip);
	struct io_stats *s = all ? &d->all : &d->cur;
	double now = bit_time(stamp);
	double dt = all ? bit_time(stamp) : bit_time(stamp - last_stamp);
	double nios = (double)(s->ios[0] + s->ios[1]), nrqm = (double)(s->rqm[0] + s->rqm[1]);
	double avgrq = 0, svctm = 0, await, util, r[8];
	char lab[64];

	idle(&d->cur, now, 1);
	idle(&d->all, now, 1);
	qusz(&d->cur, now);
	qusz(&d->all, now);
	if (nios > 0) {
		avgrq = (double)(s->sec[0] + s->sec[1]) / nios;
		svctm = ((double)s->svctm / 1.0e6) / nios;
	}
	await = nios + nrqm > 0 ? ((double)s->wait / 1.0e6) / (nios + nrqm) : 0.0;
	util = s->idle_time <= dt ? 100.0 * (1.0 - s->idle_time / dt) : 0.0;
	/* index 1 is reads */
	r[0] = (double)s->rqm[1] / dt;
	r[1] = (double)s->rqm[0] / dt;
	r[2] = (double)s->ios[1] / dt;
	r[3] = (double)s->ios[0] / dt;
	r[4] = (double)s->sec[1] / dt;
	r[5] = (double)s->sec[0] / dt;
	r[6] = (double)(s->sec[1] / 2) / dt;
	r[7] = (double)(s->sec[0] / 2) / dt;
	dev_label(dip, lab, sizeof(lab), 1);
	row(lab, r, avgrq, s->tot_qusz / dt, await, svctm, util);
	if (all) {
		fprintf(ofp, "%8s\n", "TOTAL");
		/* the cumulative TOTAL row sums the rates with reads and writes swapped */
		for (int i = 0; i < 8; i++)
			t->rate[i ^ 1] += r[i];
		t->qusz += s->tot_qusz / dt;
	} else {
		fprintf(ofp, "%8.2lf\n", now);
		memset(s->rqm, 0, sizeof(s->rqm));
		memset(s->ios, 0, sizeof(s->ios));
		memset(s->sec, 0, sizeof(s->sec));
		s->wait = s->svctm = 0;
		s->tot_qusz = s->idle_time = 0;
	}
	t->avgrq += avgrq;
	t->await += await;
	t->svctm += svctm;
	t->util += util;
	t->n++;
}

static void dump(uint64_t stamp, int all)
{
	struct totals t = {{0}, 0, 0, 0, 0, 0, 0};

	if (all)
		header();
	for (size_t i = 0; i < bs.nout; i++)
		dump_dev(bs.out[i], stamp, all, &t);
	if (t.n > 1) {
		/* the total's kB/s are its sectors/s halved (a device's: its sectors halved) */
		t.rate[6] = t.rate[4] / 2.0;
		t.rate[7] = t.rate[5] / 2.0;
		row("TOTAL", t.rate, t.avgrq / t.n, t.qusz / t.n, t.await / t.n, t.svctm / t.n,
		    t.util / t.n);
		if (all)
			fprintf(ofp, "%8s\n", "TOTAL");
		else
			fprintf(ofp, "%8.2lf\n", bit_time(stamp));
	}
	if (!all)
		fputc('\n', ofp);
}

void iostat_check_time(uint64_t stamp)
{
	if (!ofp)
		return;
	if (!started) {
		started = 1;
		last_stamp = stamp;
		return;
	}
	if (bit_time(stamp - last_stamp) >= (double)opts.iostat_interval) {
		devs_order();
		dump(stamp, 0);
		last_stamp = stamp;
	}
}

void iostat_getrq(struct dev *dip, uint64_t time)
{
	struct dev_iostat *d;

	if (!ofp)
		return;
	d = st(dip);
	qusz(&d->cur, bit_time(time));
	qusz(&d->all, bit_time(time));
	d->cur.cur_qusz++;
	d->all.cur_qusz++;
}

void iostat_merge(struct dev *dip, int rd)
{
	if (!ofp)
		return;
	st(dip)->cur.rqm[rd]++;
	st(dip)->all.rqm[rd]++;
}

void iostat_issue(struct dev *dip, uint64_t time, int rd, uint32_t sectors)
{
	struct dev_iostat *d;
	struct io_stats *s[2];

	if (!ofp)
		return;
	d = st(dip);
	s[0] = &d->cur;
	s[1] = &d->all;
	for (int i = 0; i < 2; i++) {
		idle(s[i], bit_time(time), 0);
		s[i]->cur_dev++;
		s[i]->ios[rd]++;
		s[i]->sec[rd] += sectors;
	}
}

void iostat_complete(struct dev *dip, const struct qio *q, uint64_t time)
{
	struct dev_iostat *d;
	struct io_stats *s[2];
	uint64_t from = qio_time(q, QT_I) != NO_TIME ? qio_time(q, QT_I) : qio_time(q, QT_M);

	if (!ofp)
		return;
	d = st(dip);
	s[0] = &d->cur;
	s[1] = &d->all;
	for (int i = 0; i < 2; i++) {
		idle(s[i], bit_time(time), 0);
		qusz(s[i], bit_time(time));
		s[i]->cur_qusz--;
		s[i]->cur_dev--;
		if (from != NO_TIME)
			s[i]->wait += tdelta(from, time);
		s[i]->svctm += tdelta(q->time, time);
	}
}

void iostat_finish(uint64_t last_time)
{
	if (!ofp)
		return;
	fputc('\n', ofp);
	dump(last_time, 1);
	for (size_t i = 0; i < bs.ndevs; i++) {
		free(bs.devs[i]->iostat);
		bs.devs[i]->iostat = NULL;
	}
	file_close(&ofp, &ofn);
}
