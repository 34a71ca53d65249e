// SPDX-License-Identifier: GPL-2.0
/*
 * One run of btt (see btt.h): the outputs the options ask for subscribe to the I/O model,
 * the model reads the stream, and the outputs write what they found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "btt.h"
#include "clock.h"
#include "common.h"
#include "export-out.h"
#include "extras.h"
#include "fpcount.h"
#include "iostat.h"
#include "latency.h"
#include "live.h"
#include "outfile.h"
#include "pct.h"
#include "perio.h"
#include "perfetto-out.h"
#include "report.h"
#include "seek.h"
#include "stats.h"
#include "waits.h"

int btt_init(struct btt *b)
{
	devs_init(&b->devs, b->opts.devices);
	if (b->opts.devmap_name)
		return devs_load_map(&b->devs, b->opts.devmap_name);
	return 0;
}

int btt_run(struct btt *b, iomodel_next_fn next, void *src, struct blk_event *ev,
	    void (*progress)(void *arg), void *arg)
{
	struct iomodel_opts mo = {
		.time_bounded = b->opts.time_bounded,
		.t_start = b->opts.t_start,
		.t_end = b->opts.t_end,
		.no_remaps = b->opts.no_remaps,
	};

	b->model = iomodel_new(&b->devs, &mo);
	/* one wall clock for the outputs that date events, shown every record as it is read */
	if (b->opts.export_dest || b->pf)
		b->clock = btt_clock_new(&next, &src, ev);
	b->xout = export_out_new(b);
	/* in this order, the files are created as the reference creates them */
	b->stats = stats_new(b);
	b->fp = fpcount_new(b);
	b->lat = latency_new(b);
	b->extras = extras_new(b);
	b->perio = perio_new(b);
	b->pct = pct_new(b);
	b->live = live_new(b);
	b->iostat = iostat_new(b);
	pfout_subscribe(b->pf, b->model);
	b->waits = waits_new(b);
	return iomodel_run(b->model, next, src, ev, progress, arg);
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

static FILE *open_out(const struct btt *b, const char *suffix, char **name)
{
	char fn[4096];

	if (!b->opts.output)
		return stdout;
	snprintf(fn, sizeof(fn), "%s.%s", b->opts.output, suffix);
	return file_create(fn, name);
}

int btt_report(struct btt *b)
{
	char *avg_name = NULL, *dat_name = NULL;
	FILE *avg_fp, *dat_fp;

	iomodel_finish(b->model);
	pfout_input_end(b->pf, iomodel_last_time(b->model));
	stats_finish(b->stats, &b->devs);
	live_finish(b->live);
	devs_sort_procs(&b->devs);
	prepare_seeks(b->stats);

	avg_fp = open_out(b, "avg", &avg_name);
	if (b->opts.percentiles != 2 && !b->opts.iowait_only)
		report_print(b, avg_fp);
	if (b->pct && !b->opts.iowait_only)
		pct_print(b->pct, b, avg_fp);
	/* a trace with I/O waits: who waited (not in the classic report otherwise) */
	if (waits_any(b->waits) || b->opts.iowait_only)
		waits_print(b->waits, b, avg_fp);
	if (b->opts.percentiles != 2 && !b->opts.iowait_only) {
		dat_fp = b->opts.output ? open_out(b, "dat", &dat_name) : avg_fp;
		ranges_print(b, dat_fp);
		if (dat_fp != stdout)
			file_close(&dat_fp, &dat_name);
	}
	if (avg_fp != stdout)
		file_close(&avg_fp, &avg_name);
	else if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));

	if (b->opts.do_active)
		live_write(b->live, b);
	fpcount_finish(b->fp);
	latency_finish(b->lat);
	for (size_t i = 0; i < b->stats->ndev; i++)
		seeki_sps_write(b->stats->dev[i].q2q_seek, b->stats->dev[i].d2d_seek,
				b->devs.v[i]->name, b->opts.sps_name);
	export_out_finish(b->xout);
	iostat_finish(b->iostat, iomodel_last_time(b->model));
	extras_finish(b->extras, &b->devs);
	pfout_finish(b->pf, iomodel_last_time(b->model));
	return 0;
}

void btt_release(struct btt *b)
{
	pfout_free(b->pf);
	waits_free(b->waits);
	iostat_free(b->iostat);
	live_free(b->live);
	pct_free(b->pct);
	perio_free(b->perio);
	extras_free(b->extras);
	latency_free(b->lat);
	fpcount_free(b->fp);
	export_out_free(b->xout);
	btt_clock_free(b->clock);
	stats_free(b->stats);
	iomodel_free(b->model);
	devs_release(&b->devs);
	b->pf = NULL;
	b->waits = NULL;
	b->iostat = NULL;
	b->live = NULL;
	b->pct = NULL;
	b->perio = NULL;
	b->extras = NULL;
	b->lat = NULL;
	b->fp = NULL;
	b->stats = NULL;
	b->model = NULL;
	b->xout = NULL;
	b->clock = NULL;
}
