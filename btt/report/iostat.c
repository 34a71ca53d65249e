// SPDX-License-Identifier: GPL-2.0
/*
 * -I: iostat-like statistics, one block of rows per -S seconds of trace time and a
 * cumulative block at the end, computed the way btt 2.09 computes them.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/iostat.h"
#include "report/outfile.h"
#include "report/statistics.h"

struct io_stats {
	uint64_t rqm[2], ios[2], sec[2];
	uint64_t wait, svctm;
	double tot_qusz, idle_time, last_qu_change, last_dev_change;
	long cur_qusz, cur_dev;
};

struct dev_iostat {
	struct io_stats cur, all;
};

struct iostat {
	const struct btt_devs *devs;
	int interval; /* -S */
	FILE *ofp;
	char *ofn;
	uint64_t last_stamp;
	int started;
	struct dev_iostat **dev; /* by device index, allocated on first use */
	size_t ndev, adev;
};

static double secs(uint64_t t)
{
	return (double)t / 1.0e9;
}

static struct dev_iostat *st(struct iostat *is, const struct btt_dev *dip)
{
	if (!is->dev[dip->idx])
		is->dev[dip->idx] = xcalloc(1, sizeof(struct dev_iostat));
	return is->dev[dip->idx];
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

static void header(FILE *ofp)
{
	fprintf(ofp, "Device:       rrqm/s   wrqm/s     r/s     w/s    rsec/s    wsec/s     rkB/s"
		     "     wkB/s avgrq-sz avgqu-sz   await   svctm  %%util   Stamp\n");
}

struct totals {
	double rate[8], avgrq, qusz, await, svctm, util;
	int n;
};

static void row(FILE *ofp, const char *lab, double r[8], double avgrq, double qu, double await,
		double svctm, double util)
{
	fprintf(ofp,
		"%-11s %8.2lf %8.2lf %7.2lf %7.2lf %9.2lf %9.2lf %9.2lf %9.2lf %8.2lf %8.2lf"
		" %7.2lf %7.2lf %6.2lf",
		lab, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], avgrq, qu, await, svctm, util);
}

static void dump_dev(struct iostat *is, const struct btt_dev *dip, uint64_t stamp, int all,
		     struct totals *t)
{
	struct dev_iostat *d = st(is, dip);
	struct io_stats *s = all ? &d->all : &d->cur;
	double now = secs(stamp);
	double dt = all ? secs(stamp) : secs(stamp - is->last_stamp);
	FILE *ofp = is->ofp;
	double nios = (double)(s->ios[0] + s->ios[1]), nrqm = (double)(s->rqm[0] + s->rqm[1]);
	double avgrq = 0, svctm = 0, await, util, r[8];

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
	row(ofp, dip->label, r, avgrq, s->tot_qusz / dt, await, svctm, util);
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

static void dump(struct iostat *is, uint64_t stamp, int all)
{
	struct totals t = {{0}, 0, 0, 0, 0, 0, 0};
	FILE *ofp = is->ofp;

	if (all)
		header(ofp);
	/* the devices shown so far, in report order */
	for (size_t i = 0; i < is->devs->nout; i++)
		dump_dev(is, is->devs->out[i], stamp, all, &t);
	if (t.n > 1) {
		/* the total's kB/s are its sectors/s halved (a device's: its sectors halved) */
		t.rate[6] = t.rate[4] / 2.0;
		t.rate[7] = t.rate[5] / 2.0;
		row(ofp, "TOTAL", t.rate, t.avgrq / t.n, t.qusz / t.n, t.await / t.n, t.svctm / t.n,
		    t.util / t.n);
		if (all)
			fprintf(ofp, "%8s\n", "TOTAL");
		else
			fprintf(ofp, "%8.2lf\n", secs(stamp));
	}
	if (!all)
		fputc('\n', ofp);
}

static void on_tick(void *ctx, uint64_t stamp)
{
	struct iostat *is = ctx;

	if (!is->started) {
		is->started = 1;
		is->last_stamp = stamp;
		return;
	}
	if (secs(stamp - is->last_stamp) >= (double)is->interval) {
		dump(is, stamp, 0);
		is->last_stamp = stamp;
	}
}

static void getrq(struct iostat *is, const struct btt_dev *dip, uint64_t time)
{
	struct dev_iostat *d = st(is, dip);

	qusz(&d->cur, secs(time));
	qusz(&d->all, secs(time));
	d->cur.cur_qusz++;
	d->all.cur_qusz++;
}

static void issue(struct iostat *is, const struct btt_dev *dip, uint64_t time, int rd,
		  uint32_t sectors)
{
	struct dev_iostat *d = st(is, dip);
	struct io_stats *s[2] = {&d->cur, &d->all};

	for (int i = 0; i < 2; i++) {
		idle(s[i], secs(time), 0);
		s[i]->cur_dev++;
		s[i]->ios[rd]++;
		s[i]->sec[rd] += sectors;
	}
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct iostat *is = ctx;
	int rd = !(e->ev->action & BLK_TC_ACT(BLK_TC_WRITE));

	switch (e->kind) {
	case BTT_EV_NEW:
		is->dev = array_grow(is->dev, &is->adev, e->dev->idx, sizeof(*is->dev));
		is->dev[is->ndev++] = NULL;
		break;
	case BTT_EV_GETRQ:
		getrq(is, e->dev, e->ev->time);
		break;
	case BTT_EV_MERGE:
		st(is, e->dev)->cur.rqm[rd]++;
		st(is, e->dev)->all.rqm[rd]++;
		break;
	case BTT_EV_ISSUE:
		issue(is, e->dev, e->ev->time, rd, blk_event_sectors(e->ev));
		break;
	default:
		break;
	}
}

/* a completed I/O that was issued */
static void on_done(void *ctx, const struct btt_io *io)
{
	struct iostat *is = ctx;
	struct dev_iostat *d;
	struct io_stats *s[2];
	uint64_t time = io->t[BTT_STAGE_C];
	uint64_t from = io->t[BTT_STAGE_I] != NO_TIME ? io->t[BTT_STAGE_I] : io->t[BTT_STAGE_M];

	if (io->t[BTT_STAGE_D] == NO_TIME)
		return;
	d = st(is, io->dev);
	s[0] = &d->cur;
	s[1] = &d->all;
	for (int i = 0; i < 2; i++) {
		idle(s[i], secs(time), 0);
		qusz(s[i], secs(time));
		s[i]->cur_qusz--;
		s[i]->cur_dev--;
		if (from != NO_TIME)
			s[i]->wait += tdelta(from, time);
		s[i]->svctm += tdelta(io->t[BTT_STAGE_Q], time);
	}
}

static int iostat_wanted(const struct btt_opts *o)
{
	return o->iostat_name != NULL;
}

static void *iostat_new(const struct btt_view *v, void *opened)
{
	struct iostat *is;
	struct btt_io_sub sub = {
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_GETRQ | 1u << BTT_EV_MERGE |
			  1u << BTT_EV_ISSUE,
		.tick = on_tick,
		.done = on_done,
		.dev_event = on_event,
	};

	(void)opened;
	is = xcalloc(1, sizeof(*is));
	is->devs = v->devs;
	is->interval = v->opts->iostat_interval;
	is->ofp = file_create(v->opts->iostat_name, &is->ofn);
	header(is->ofp);
	sub.ctx = is;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return is;
}

static int iostat_finish(void *state, uint64_t last_time)
{
	struct iostat *is = state;

	if (!is->ofp)
		return 0;
	fputc('\n', is->ofp);
	dump(is, last_time, 1);
	file_close(&is->ofp, &is->ofn);
	return 0;
}

static void iostat_free(void *state)
{
	struct iostat *is = state;

	file_close(&is->ofp, &is->ofn);
	for (size_t i = 0; i < is->ndev; i++)
		free(is->dev[i]);
	free(is->dev);
	free(is);
}

const struct btt_output_ops iostat_output = {
	.name = "iostat",
	.wanted = iostat_wanted,
	.new = iostat_new,
	.finish = iostat_finish,
	.free = iostat_free,
};
