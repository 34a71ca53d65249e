// SPDX-License-Identifier: GPL-2.0
/*
 * Per-second completion counts (see iops-mbps.h), a subscriber of the I/O model.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/iops-mbps.h"
#include "report/outfile.h"

/* one pair of files: the completions and their size in the current second of trace time */
struct fp_counter {
	FILE *iops, *mbps;
	char *iops_name, *mbps_name;
	long cur;
	uint64_t ios, sectors;
};

struct iops_mbps {
	struct fp_counter sys;
	struct fp_counter *dev; /* by device index */
	size_t ndev, adev;
};

static void fp_init(struct fp_counter *fc, const char *prefix)
{
	char fn[4096];

	snprintf(fn, sizeof(fn), "%s_iops_fp.dat", prefix);
	fc->iops = file_create(fn, &fc->iops_name);
	snprintf(fn, sizeof(fn), "%s_mbps_fp.dat", prefix);
	fc->mbps = file_create(fn, &fc->mbps_name);
	fc->cur = -1;
}

static void fp_flush(struct fp_counter *fc)
{
	fprintf(fc->iops, "%ld %llu\n", fc->cur, (unsigned long long)fc->ios);
	fprintf(fc->mbps, "%ld %lf\n", fc->cur, (double)fc->sectors * 512.0 / (1024.0 * 1024.0));
}

static void fp_add(struct fp_counter *fc, uint64_t time, uint32_t sectors)
{
	long sec = (long)(time / 1000000000ULL);

	if (!fc->iops)
		return;
	if (sec != fc->cur) {
		if (fc->cur != -1)
			fp_flush(fc);
		fc->cur = sec;
		fc->ios = 0;
		fc->sectors = 0;
	}
	fc->ios++;
	fc->sectors += sectors;
}

static void fp_finish(struct fp_counter *fc)
{
	if (!fc->iops)
		return;
	fp_flush(fc);
	file_close(&fc->iops, &fc->iops_name);
	file_close(&fc->mbps, &fc->mbps_name);
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct iops_mbps *f = ctx;

	if (e->kind == BTT_EV_NEW) {
		f->dev = array_grow(f->dev, &f->adev, e->dev->idx, sizeof(*f->dev));
		f->dev[f->ndev] = (struct fp_counter){0};
		fp_init(&f->dev[f->ndev++], e->dev->name);
		return;
	}
	fp_add(&f->sys, e->ev->time, blk_event_sectors(e->ev));
	fp_add(&f->dev[e->dev->idx], e->ev->time, blk_event_sectors(e->ev));
}

static void *iops_mbps_new(const struct btt_view *v, void *opened)
{
	struct iops_mbps *f = xcalloc(1, sizeof(*f));
	struct btt_io_sub sub = {
		.ctx = f,
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_COMPLETE,
		.dev_event = on_event,
	};

	(void)opened;
	fp_init(&f->sys, "sys");
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return f;
}

/* write the last second of each counter and close the files */
static int iops_mbps_finish(void *state, uint64_t t_last)
{
	struct iops_mbps *f = state;

	(void)t_last;
	fp_finish(&f->sys);
	for (size_t i = 0; i < f->ndev; i++)
		fp_finish(&f->dev[i]);
	return 0;
}

static void iops_mbps_free(void *state)
{
	struct iops_mbps *f = state;

	iops_mbps_finish(f, 0);
	free(f->dev);
	free(f);
}

const struct btt_output_ops iops_mbps_output = {
	.name = "iops-mbps",
	.new = iops_mbps_new,
	.finish = iops_mbps_finish,
	.free = iops_mbps_free,
};
