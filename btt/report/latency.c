// SPDX-License-Identifier: GPL-2.0
/*
 * Per-IO latency files and windowed averages (see latency.h), a subscriber of the I/O
 * model: Q2D at each issue, Q2C and D2C at each completion.
 */
#include <stdlib.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/latency.h"
#include "report/outfile.h"
#include "report/statistics.h"

enum { K_Q2C, K_D2C, K_Q2D, K_NR };

static const char *const kinds[K_NR] = {"q2c", "d2c", "q2d"};
static const int order[K_NR] = {K_D2C, K_Q2C, K_Q2D};

struct plat {
	FILE *fp;
	char *name;
	double start, last, total;
	long n;
};

struct lat_dev {
	FILE *fp[K_NR];
	char *fn[K_NR];
	struct plat *plat[K_NR];
};

struct latency {
	const char *names[K_NR]; /* -q, -l, -z */
	double plat_freq; /* -L */
	struct lat_dev *dev;
	size_t ndev, adev;
};

static double secs(uint64_t t)
{
	return (double)t / 1.0e9;
}

static void latency_write(FILE *fp, uint64_t when, uint64_t lat)
{
	if (fp)
		fprintf(fp, "%lf %lf\n", secs(when), secs(lat));
}

/* the middle of a window as btt 2.09 computes it (the halved sum rounds differently) */
static double plat_mid(const struct plat *p)
{
	return p->start + (p->last - p->start) / 2;
}

static void plat_add(struct latency *l, const struct btt_dev *dip, int kind, uint64_t when,
		     uint64_t lat)
{
	struct plat *p = l->dev[dip->idx].plat[kind];
	double t = secs(when);
	char fn[4096];

	if (l->plat_freq <= 0)
		return;
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		snprintf(fn, sizeof(fn), "%s_%s_plat.dat", dip->name, kinds[kind]);
		p->fp = file_create(fn, &p->name);
		l->dev[dip->idx].plat[kind] = p;
	}
	if (p->n == 0) {
		p->start = t;
	} else if (t - p->start >= l->plat_freq) {
		fprintf(p->fp, "%lf %lf\n", plat_mid(p), p->total / (double)p->n);
		p->start = t;
		p->total = 0;
		p->n = 0;
	}
	p->total += secs(lat);
	p->n++;
	p->last = t;
}

static void one(struct latency *l, const struct btt_dev *dip, int kind, uint64_t when, uint64_t lat)
{
	latency_write(l->dev[dip->idx].fp[kind], when, lat);
	plat_add(l, dip, kind, when, lat);
}

/* an issue: Q2D (not clamped, as the reference: an issue before its queue wraps) */
static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	(void)st;
	one(ctx, io->dev, K_Q2D, t, t - io->t[BTT_STAGE_Q]);
}

static void on_done(void *ctx, const struct btt_io *io)
{
	uint64_t q = io->t[BTT_STAGE_Q], d = io->t[BTT_STAGE_D], c = io->t[BTT_STAGE_C];

	one(ctx, io->dev, K_Q2C, q, tdelta(q, c));
	if (d != NO_TIME)
		one(ctx, io->dev, K_D2C, c, tdelta(d, c));
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct latency *l = ctx;
	struct lat_dev *ld;
	char fn[4096];

	l->dev = array_grow(l->dev, &l->adev, e->dev->idx, sizeof(*l->dev));
	ld = &l->dev[l->ndev++];
	*ld = (struct lat_dev){0};
	/* created in the reference's order: d2c, q2c, q2d */
	for (int n = 0; n < K_NR; n++) {
		int k = order[n];

		if (!l->names[k])
			continue;
		snprintf(fn, sizeof(fn), "%s_%s_%s.dat", l->names[k], e->dev->name, kinds[k]);
		ld->fp[k] = file_create(fn, &ld->fn[k]);
	}
}

static int latency_wanted(const struct btt_opts *o)
{
	return o->q2c_name || o->d2c_name || o->q2d_name || o->plat_freq > 0;
}

static void *latency_new(const struct btt_view *v, void *opened)
{
	const struct btt_opts *o = v->opts;
	struct latency *l;
	struct btt_io_sub sub = {
		.stages = 1u << BTT_STAGE_D,
		.events = 1u << BTT_EV_NEW,
		.stage = on_stage,
		.done = on_done,
		.dev_event = on_event,
	};

	(void)opened;
	l = xcalloc(1, sizeof(*l));
	l->names[K_Q2C] = o->q2c_name;
	l->names[K_D2C] = o->d2c_name;
	l->names[K_Q2D] = o->q2d_name;
	l->plat_freq = o->plat_freq;
	sub.ctx = l;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return l;
}

static int latency_finish(void *state, uint64_t t_last)
{
	struct latency *l = state;

	(void)t_last;
	for (size_t i = 0; i < l->ndev; i++) {
		struct lat_dev *ld = &l->dev[i];

		for (int k = 0; k < K_NR; k++) {
			struct plat *p = ld->plat[k];

			if (p) {
				if (p->n)
					fprintf(p->fp, "%lf %lf\n", plat_mid(p),
						p->total / (double)p->n);
				file_close(&p->fp, &p->name);
				free(p);
				ld->plat[k] = NULL;
			}
		}
		for (int n = 0; n < K_NR; n++)
			file_close(&ld->fp[order[n]], &ld->fn[order[n]]);
	}
	return 0;
}

static void latency_free(void *state)
{
	struct latency *l = state;

	latency_finish(l, 0);
	free(l->dev);
	free(l);
}

const struct btt_output_ops latency_output = {
	.name = "latency",
	.wanted = latency_wanted,
	.new = latency_new,
	.finish = latency_finish,
	.free = latency_free,
};
