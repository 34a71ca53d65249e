// SPDX-License-Identifier: GPL-2.0
/*
 * The report's statistics (see statistics.h), a subscriber of the I/O model.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "report/seek.h"
#include "report/seekahead.h"
#include "report/statistics.h"

static double secs(uint64_t t)
{
	return (double)t / 1.0e9;
}

static void procs_grow(struct stats *s, uint32_t idx)
{
	while (s->nproc <= idx) {
		s->proc = array_grow(s->proc, &s->aproc, s->nproc, sizeof(*s->proc));
		s->proc[s->nproc++] = (struct proc_stats){.last_q = NO_TIME};
	}
}

static inline struct proc_stats *proc_of(struct stats *s, const struct btt_proc *pip)
{
	if (pip->idx >= s->nproc)
		procs_grow(s, pip->idx);
	return &s->proc[pip->idx];
}

const struct proc_stats *stats_proc(const struct stats *s, const struct btt_proc *pip)
{
	return pip->idx < s->nproc ? &s->proc[pip->idx] : NULL;
}

/*
 * With one device the system's statistics are the device's: they are kept once, and
 * copied from the device's when a second device appears or at the end (sys_copy()).
 */
static inline int sys_kept(const struct stats *s)
{
	return s->ndev > 1;
}

static void ranges_copy(struct ranges *to, const struct ranges *from)
{
	free(to->v);
	*to = (struct ranges){.n = from->n};
	if (from->n) {
		to->v = array_grow(NULL, &to->alloc, from->n - 1, sizeof(*to->v));
		memcpy(to->v, from->v, from->n * sizeof(*to->v));
	}
}

/* the system's statistics become the first device's */
static void sys_copy(struct stats *s)
{
	const struct dev_stats *d = &s->dev[0];

	s->all = d->avgs;
	s->last_q = d->last_q;
	ranges_copy(&s->all_regions.q, &d->regions.q);
	ranges_copy(&s->all_regions.c, &d->regions.c);
}

/* an I/O's process had its Q counted (BTT_EV_QUEUE): it has its statistics */
static void update(struct stats *s, enum avg_kind k, const struct btt_io *io, uint64_t t)
{
	if (sys_kept(s))
		avg_add(&s->all.a[k], t);
	avg_add(&s->dev[io->dev->idx].avgs.a[k], t);
	avg_add(&s->proc[io->proc->idx].avgs.a[k], t);
}

static void update_lq(uint64_t *last, struct avg *ap, uint64_t t)
{
	if (*last != NO_TIME)
		avg_add(ap, t > *last ? t - *last : 1);
	*last = t;
}

static const double q2d_edges[Q2D_BUCKETS - 1] = {.005, .010, .025, .050, .075,
						  .100, .250, .500, 1.0};

static void q2d_hist_add(uint64_t *h, uint64_t q2d)
{
	double t = secs(q2d);
	int i;

	for (i = 0; i < Q2D_BUCKETS - 1; i++)
		if (t < q2d_edges[i])
			break;
	h[i]++;
}

static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	struct stats *s = ctx;
	const uint64_t *tt = io->t;

	switch (st) {
	case BTT_STAGE_G:
		update(s, AV_Q2G, io, tdelta(tt[BTT_STAGE_Q], t));
		if (tt[BTT_STAGE_S] != NO_TIME)
			update(s, AV_S2G, io, tdelta(tt[BTT_STAGE_S], t));
		break;
	case BTT_STAGE_I:
		if (tt[BTT_STAGE_G] != NO_TIME)
			update(s, AV_G2I, io, tdelta(tt[BTT_STAGE_G], t));
		break;
	case BTT_STAGE_M:
		update(s, AV_Q2M, io, tdelta(tt[BTT_STAGE_Q], t));
		break;
	case BTT_STAGE_D:
		if (tt[BTT_STAGE_I] != NO_TIME)
			update(s, AV_I2D, io, tdelta(tt[BTT_STAGE_I], t));
		else if (tt[BTT_STAGE_M] != NO_TIME)
			update(s, AV_M2D, io, tdelta(tt[BTT_STAGE_M], t));
		/* the reference does not clamp Q2D here (an issue before its queue wraps) */
		if (s->all_data)
			q2d_hist_add(s->dev[io->dev->idx].q2d_hist, t - tt[BTT_STAGE_Q]);
		break;
	case BTT_STAGE_A:
		update(s, io->dev->remapper ? AV_Q2A_DM : AV_Q2A, io, tdelta(tt[BTT_STAGE_Q], t));
		break;
	default:
		break;
	}
}

static void on_done(void *ctx, const struct btt_io *io)
{
	struct stats *s = ctx;
	uint64_t c = io->t[BTT_STAGE_C];

	update(s, io->dev->remapper ? AV_Q2C_DM : AV_Q2C, io, tdelta(io->t[BTT_STAGE_Q], c));
	if (io->t[BTT_STAGE_D] != NO_TIME)
		update(s, AV_D2C, io, tdelta(io->t[BTT_STAGE_D], c));
}

static void new_dev(struct stats *s, const struct btt_dev *dip)
{
	struct dev_stats *d;

	s->dev = array_grow(s->dev, &s->adev, dip->idx, sizeof(*s->dev));
	d = &s->dev[s->ndev++];
	*d = (struct dev_stats){.last_q = NO_TIME, .start_time = secs(dip->first_ns)};
	d->q2q_seek = seeki_new(s->seek_name, dip->name, "q2q", s->sps, s->seek_absolute);
	d->d2d_seek = seeki_new(s->seek_name, dip->name, "d2d", s->sps, s->seek_absolute);
	seeki_ahead(d->q2q_seek, s->ahead, dip->device, 0);
	seeki_ahead(d->d2d_seek, s->ahead, dip->device, 1);
	if (s->ndev == 2)
		sys_copy(s);
}

static void queue(struct stats *s, struct dev_stats *d, const struct btt_dev_event *e)
{
	struct proc_stats *p = proc_of(s, e->proc);
	enum avg_kind k = e->dev->remapper ? AV_Q2Q_DM : AV_Q2Q;

	if (sys_kept(s)) {
		update_lq(&s->last_q, &s->all.a[k], e->ev->time);
		region_add(&s->all_regions.q, e->ev->time, &s->gap);
	}
	update_lq(&d->last_q, &d->avgs.a[k], e->ev->time);
	update_lq(&p->last_q, &p->avgs.a[k], e->ev->time);
	region_add(&d->regions.q, e->ev->time, &s->gap);
	region_add(&p->regions.q, e->ev->time, &s->gap);
	seeki_add(d->q2q_seek, e->ev->time, e->ev->sector, blk_event_sectors(e->ev),
		  !(e->ev->action & BLK_TC_ACT(BLK_TC_WRITE)));
	d->n_qs++;
	d->t_act_q += d->n_act_q;
	d->n_act_q++;
}

static void complete(struct stats *s, struct dev_stats *d, const struct btt_dev_event *e)
{
	struct proc_stats *p = proc_of(s, e->proc);

	if (sys_kept(s)) {
		avg_add(&s->all.a[AV_BLKS], blk_event_sectors(e->ev));
		region_add(&s->all_regions.c, e->ev->time, &s->gap);
	}
	avg_add(&d->avgs.a[AV_BLKS], blk_event_sectors(e->ev));
	avg_add(&p->avgs.a[AV_BLKS], blk_event_sectors(e->ev));
	region_add(&d->regions.c, e->ev->time, &s->gap);
	region_add(&p->regions.c, e->ev->time, &s->gap);
}

static void unplug(struct dev_stats *d, double now)
{
	d->is_plugged = 0;
	d->plugged_time += now - d->last_plug;
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct stats *s = ctx;
	struct dev_stats *d;

	if (e->kind == BTT_EV_NEW) {
		new_dev(s, e->dev);
		return;
	}
	d = &s->dev[e->dev->idx];
	switch (e->kind) {
	case BTT_EV_QUEUE:
		queue(s, d, e);
		break;
	case BTT_EV_REQUEUE:
		d->n_qs++;
		d->t_act_q += d->n_act_q;
		d->n_act_q++;
		break;
	case BTT_EV_MERGE:
		if (d->n_act_q)
			d->n_act_q--;
		break;
	case BTT_EV_ISSUE:
		if (d->n_act_q)
			d->n_act_q--;
		seeki_add(d->d2d_seek, e->ev->time, e->ev->sector, blk_event_sectors(e->ev),
			  !(e->ev->action & BLK_TC_ACT(BLK_TC_WRITE)));
		d->n_ds++;
		break;
	case BTT_EV_COMPLETE:
		complete(s, d, e);
		break;
	case BTT_EV_PLUG:
		if (!d->is_plugged) {
			d->is_plugged = 1;
			d->last_plug = secs(e->ev->time);
		}
		break;
	case BTT_EV_UNPLUG:
	case BTT_EV_UNPLUG_TIMER:
		if (!d->is_plugged)
			break;
		if (e->kind == BTT_EV_UNPLUG) {
			d->nplugs++;
			d->nios_up += e->count;
		} else {
			d->nplugs_t++;
			d->nios_upt += e->count;
		}
		unplug(d, secs(e->ev->time));
		break;
	default:
		break;
	}
}

struct stats *stats_new(const struct btt_view *v)
{
	struct stats *s = xcalloc(1, sizeof(*s));
	struct btt_io_sub sub = {
		.ctx = s,
		.stages = 1u << BTT_STAGE_G | 1u << BTT_STAGE_I | 1u << BTT_STAGE_M |
			  1u << BTT_STAGE_D | 1u << BTT_STAGE_A,
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_QUEUE | 1u << BTT_EV_REQUEUE |
			  1u << BTT_EV_MERGE | 1u << BTT_EV_ISSUE | 1u << BTT_EV_COMPLETE |
			  1u << BTT_EV_PLUG | 1u << BTT_EV_UNPLUG | 1u << BTT_EV_UNPLUG_TIMER,
		.stage = on_stage,
		.done = on_done,
		.dev_event = on_event,
	};

	s->v = v;
	s->last_q = NO_TIME;
	range_gap_init(&s->gap, v->opts->range_delta);
	s->seek_name = v->opts->seek_name;
	s->sps = v->opts->sps_name != NULL;
	s->seek_absolute = v->opts->seek_absolute;
	s->all_data = v->opts->all_data;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	s->ahead = seekahead_start(v->opts);
	return s;
}

void stats_finish(struct stats *s, const struct btt_devs *devs)
{
	if (s->ndev == 1)
		sys_copy(s);
	for (size_t i = 0; i < s->ndev; i++) {
		struct dev_stats *d = &s->dev[i];

		d->end_time = secs(devs->v[i]->last_ns);
		if (d->is_plugged) {
			d->nplugs++;
			unplug(d, d->end_time);
		}
	}
}

void stats_free(struct stats *s)
{
	if (!s)
		return;
	region_release(&s->all_regions);
	for (size_t i = 0; i < s->ndev; i++) {
		region_release(&s->dev[i].regions);
		seeki_free(s->dev[i].q2q_seek);
		seeki_free(s->dev[i].d2d_seek);
	}
	seekahead_free(s->ahead);
	free(s->dev);
	for (size_t i = 0; i < s->nproc; i++)
		region_release(&s->proc[i].regions);
	free(s->proc);
	free(s);
}
