// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O model: each event is matched against the queued I/Os (Q) of its device, which
 * are indexed by start sector. G, S, I and M find the Q with the same start; D and C take
 * every Q that lies inside their range. A Q is freed when a completion covers it, so
 * memory follows the number of I/Os in flight.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "iomodel.h"
#include "iostat.h"

enum { IOP_Q, IOP_A, IOP_G, IOP_S, IOP_I, IOP_M, IOP_D, IOP_C, IOP_R };

static struct qmatch qm;
static struct qio **matched;
static uint64_t *issued; /* a completion's issue times, dropped once it is counted */
static size_t nmatched, amatched;

static void update(enum avg_kind k, struct qio *q, uint64_t t)
{
	const struct who *w = &bs.who[q->who];

	avg_add(&bs.all.a[k], t);
	avg_add(&bs.devs[w->dev]->avgs.a[k], t);
	if (w->pip)
		avg_add(&w->pip->avgs.a[k], t);
}

static void update_lq(uint64_t *last, struct avg *ap, uint64_t t)
{
	if (*last != NO_TIME)
		avg_add(ap, t > *last ? t - *last : 1);
	*last = t;
}

/* the device of @ev, or NULL while the device is still before its first Q or A */
static struct dev *setup_pip(const struct blk_event *ev, int type, struct proc **pip)
{
	struct dev *dip = dev_get(ev->device, ev->time);

	if (dip->pre_culling) {
		if (type != IOP_Q && type != IOP_A)
			return NULL;
		dip->pre_culling = 0;
		/* the device has queued I/O: its D2C is the classic one */
		u64map_free(&dip->d_no_q);
		if (dip->hist)
			blk_hist_clear(&dip->hist[HIST_D2C_NO_Q]);
	}
	dip->last_ns = ev->time;
	/* every event taken names its process (it shows in the per-process rows) */
	*pip = proc_get(ev->pid);
	return dip;
}

static struct dev *setup(const struct blk_event *ev, int type)
{
	struct proc *pip;

	return setup_pip(ev, type, &pip);
}

/* the Q whose range holds @sector (the search path depends on the tree shape) */
static struct qio *find_sec(struct dev *dip, uint64_t sector)
{
	uint32_t i = qtree_find(&bs.qpool, &dip->qt, sector);

	return i ? qpool_data(&bs.qpool, i) : NULL;
}

static uint32_t qio_index(const struct qio *q)
{
	return (uint32_t)(((const unsigned char *)q - bs.qpool.data) / bs.qpool.data_size);
}

/* ---- times far from their Q, in a table by node and kind (rare) ---- */

static uint64_t far_key(const struct qio *q, enum qio_time k)
{
	return ((uint64_t)qio_index(q) << 3 | (uint64_t)k) + 1;
}

uint64_t qio_time(const struct qio *q, enum qio_time k)
{
	if (q->dt[k] == QT_FAR)
		return *u64map_get(&bs.far, far_key(q, k));
	return q->dt[k] ? q->time + q->dt[k] - 1 : NO_TIME;
}

static void qio_set_time(struct qio *q, enum qio_time k, uint64_t t)
{
	uint64_t d = t - q->time; /* after the Q, as the trace is merged; else far */

	if (d < QT_FAR - 1) {
		if (q->dt[k] == QT_FAR)
			u64map_del(&bs.far, far_key(q, k));
		q->dt[k] = (uint32_t)d + 1;
	} else if (q->dt[k] == QT_FAR) {
		*u64map_get(&bs.far, far_key(q, k)) = t;
	} else {
		if (u64map_put(&bs.far, far_key(q, k), t) < 0)
			die("out of memory");
		q->dt[k] = QT_FAR;
	}
}

/* before the node is reused */
static void qio_forget(struct qio *q)
{
	for (int k = 0; k < QT_N; k++)
		if (q->dt[k] == QT_FAR)
			u64map_del(&bs.far, far_key(q, (enum qio_time)k));
}

uint64_t qio_sector(const struct qio *q)
{
	return bs.qpool.node[qio_index(q)].sector;
}

uint32_t qio_nsec(const struct qio *q)
{
	return qtree_nsec(&bs.qpool, qio_index(q));
}

void qio_release_all(void)
{
	qpool_release(&bs.qpool);
	u64map_free(&bs.far);
	free(bs.who);
	bs.who = NULL;
	bs.nwho = bs.awho = 0;
	u64map_free(&bs.who_map);
	for (size_t i = 0; i < bs.nprocs; i++)
		bs.procs[i]->who_dev = 0; /* their cached pairs are gone */
}

/* the index of the pair (@dip, @pip) in bs.who, added when new */
static uint32_t who_get(struct dev *dip, struct proc *pip)
{
	uint64_t key = ((uint64_t)dip->idx << 32 | (pip ? pip->idx + 1 : 0)) + 1, *v;
	uint32_t w;

	if (pip && pip->who_dev == dip->idx + 1)
		return pip->who;
	v = u64map_get(&bs.who_map, key);
	if (v) {
		w = (uint32_t)*v;
	} else {
		bs.who = array_grow(bs.who, &bs.awho, bs.nwho, sizeof(*bs.who));
		if (bs.nwho >= UINT32_MAX || u64map_put(&bs.who_map, key, bs.nwho) < 0)
			die("out of memory");
		w = (uint32_t)bs.nwho++;
		bs.who[w] = (struct who){.dev = dip->idx, .pip = pip};
	}
	if (pip) {
		pip->who_dev = dip->idx + 1;
		pip->who = w;
	}
	return w;
}

/* a second I/O at the same start orphans the first: it takes its node */
static struct qio *insert_q(struct dev *dip, uint64_t sector, uint32_t bytes)
{
	struct qio *q;
	uint32_t i;
	int replaced;

	if (!bs.qpool.data_size)
		qpool_init(&bs.qpool,
			   opts.per_io_name ? sizeof(struct qio) : offsetof(struct qio, d_sec));
	i = qtree_insert(&bs.qpool, &dip->qt, sector, bytes >> 9, &replaced);
	if (!i)
		die("out of memory for %u queued I/Os", bs.qpool.used);
	q = qpool_data(&bs.qpool, i);
	if (replaced) {
		uint64_t d = qio_time(q, QT_D);

		if (d != NO_TIME)
			dset_del(&bs.issued, d);
		qio_forget(q);
		memset(q, 0, bs.qpool.data_size);
	}
	return q;
}

/* the Qs inside the range of @ev, in the order the classic walk meets them */
static void match(struct dev *dip, const struct blk_event *ev)
{
	if (qtree_collect(&bs.qpool, &dip->qt, ev->sector, ev->sector + (ev->bytes >> 9), &qm) < 0)
		die("out of memory");
	if (qm.n > amatched) {
		amatched = qm.cap;
		free(matched);
		free(issued);
		matched = malloc(amatched * sizeof(*matched));
		issued = malloc(amatched * sizeof(*issued));
		if (!matched || !issued)
			die("out of memory");
	}
	for (size_t i = 0; i < qm.n; i++)
		matched[i] = qpool_data(&bs.qpool, qm.idx[i]);
	nmatched = qm.n;
}

static void hist_add(struct dev *dip, int which, uint64_t v)
{
	if (!dip->hist)
		return;
	blk_hist_add(&dip->hist[which], v);
	blk_hist_add(&bs.hist[which], v);
}

/*
 * Before a device's first Q the classic model ignores its events; the percentiles pair
 * its issues with the completions that start at the same sector (as iowatcher does), for
 * a trace without Q events. A second issue at the same start replaces the first.
 */
static void no_q_issue(const struct blk_event *ev)
{
	struct dev *dip = dev_find(ev->device);
	uint64_t *t;

	if (!dip || !dip->hist || ev->sector == UINT64_MAX)
		return;
	t = u64map_get(&dip->d_no_q, ev->sector + 1);
	if (t)
		*t = ev->time;
	else if (u64map_put(&dip->d_no_q, ev->sector + 1, ev->time) < 0)
		die("out of memory");
}

static void no_q_complete(const struct blk_event *ev)
{
	struct dev *dip = dev_find(ev->device);
	uint64_t *t;

	if (!dip || !dip->d_no_q.n || ev->sector == UINT64_MAX)
		return;
	t = u64map_get(&dip->d_no_q, ev->sector + 1);
	if (!t)
		return;
	blk_hist_add(&dip->hist[HIST_D2C_NO_Q], tdelta(*t, ev->time));
	u64map_del(&dip->d_no_q, ev->sector + 1);
}

static void do_queue(const struct blk_event *ev)
{
	struct proc *pip;
	struct dev *dip = setup_pip(ev, IOP_Q, &pip);
	struct qio *q;

	if (!dip)
		return;
	q = insert_q(dip, ev->sector, ev->bytes);
	q->who = who_get(dip, pip);
	q->time = ev->time;

	if (dip->remapper) {
		update_lq(&bs.last_q, &bs.all.a[AV_Q2Q_DM], ev->time);
		update_lq(&dip->last_q, &dip->avgs.a[AV_Q2Q_DM], ev->time);
		if (pip)
			update_lq(&pip->last_q, &pip->avgs.a[AV_Q2Q_DM], ev->time);
	} else {
		update_lq(&bs.last_q, &bs.all.a[AV_Q2Q], ev->time);
		update_lq(&dip->last_q, &dip->avgs.a[AV_Q2Q], ev->time);
		if (pip)
			update_lq(&pip->last_q, &pip->avgs.a[AV_Q2Q], ev->time);
	}
	region_add(&bs.all_regions.q, ev->time);
	region_add(&dip->regions.q, ev->time);
	if (pip)
		region_add(&pip->regions.q, ev->time);

	seeki_add(dip->q2q_seek, ev->time, ev->sector, ev->bytes, !blk_event_is_write(ev));
	extra_queue(dip, ev);
	dip->n_qs++;
	dip->t_act_q += dip->n_act_q;
	dip->n_act_q++;
}

static void do_remap(const struct blk_event *ev)
{
	struct blk_io_trace_remap rp;
	struct dev *qdip;
	struct qio *q;

	if (opts.no_remaps)
		return;
	if (!setup(ev, IOP_A))
		return;
	if (blk_event_remap(ev, &rp) < 0)
		return;
	qdip = dev_find(rp.device_from);
	if (!qdip)
		return;
	q = find_sec(qdip, rp.sector_from);
	if (q)
		update(qdip->remapper ? AV_Q2A_DM : AV_Q2A, q, tdelta(q->time, ev->time));
}

static void do_getrq(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_G);
	struct qio *q;

	if (!dip)
		return;
	q = find_sec(dip, ev->sector);
	if (q) {
		uint64_t s_time = qio_time(q, QT_S);

		qio_set_time(q, QT_G, ev->time);
		update(AV_Q2G, q, tdelta(q->time, ev->time));
		if (s_time != NO_TIME)
			update(AV_S2G, q, tdelta(s_time, ev->time));
	}
	extra_getrq(dip, ev);
}

static void do_sleeprq(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_S);
	struct qio *q;

	if (!dip)
		return;
	q = find_sec(dip, ev->sector);
	if (q)
		qio_set_time(q, QT_S, ev->time);
}

static void do_insert(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_I);
	struct qio *q;

	if (!dip)
		return;
	q = find_sec(dip, ev->sector);
	if (q) {
		uint64_t g_time = qio_time(q, QT_G);

		if (g_time != NO_TIME)
			update(AV_G2I, q, tdelta(g_time, ev->time));
		qio_set_time(q, QT_I, ev->time);
	}
}

static void do_merge(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_M);
	struct qio *q;

	if (!dip)
		return;
	q = find_sec(dip, ev->sector);
	if (q) {
		update(AV_Q2M, q, tdelta(q->time, ev->time));
		qio_set_time(q, QT_M, ev->time);
	}
	extra_merge(dip, ev);
	if (dip->n_act_q)
		dip->n_act_q--;
}

static void do_requeue(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_R);

	if (!dip)
		return;
	dip->n_qs++;
	dip->t_act_q += dip->n_act_q;
	dip->n_act_q++;
}

static void do_issue(const struct blk_event *ev)
{
	struct dev *dip = setup(ev, IOP_D);

	if (!dip) {
		no_q_issue(ev);
		return;
	}
	if (dip->n_act_q)
		dip->n_act_q--;
	seeki_add(dip->d2d_seek, ev->time, ev->sector, ev->bytes, !blk_event_is_write(ev));
	dip->n_ds++;
	extra_issue(dip, ev);
	match(dip, ev);
	for (size_t i = 0; i < nmatched; i++) {
		struct qio *q = matched[i];
		/* the reference does not clamp Q2D (an issue before its queue wraps around) */
		uint64_t q2d = ev->time - q->time;

		uint64_t i_time = qio_time(q, QT_I), m_time = qio_time(q, QT_M);
		uint64_t d_time = qio_time(q, QT_D);

		if (i_time != NO_TIME)
			update(AV_I2D, q, tdelta(i_time, ev->time));
		else if (m_time != NO_TIME)
			update(AV_M2D, q, tdelta(m_time, ev->time));
		/* issued again (after a requeue): the later time counts */
		if (d_time != NO_TIME)
			dset_del(&bs.issued, d_time);
		qio_set_time(q, QT_D, ev->time);
		dset_add(&bs.issued, ev->time);
		if (opts.per_io_name) {
			q->d_sec = ev->sector;
			q->d_nsec = ev->bytes >> 9;
		}
		extra_q2d(q, q2d);
		latency_write(dip->q2d_fp, ev->time, q2d);
		plat_add(dip, 2, ev->time, q2d);
		hist_add(dip, HIST_Q2D, tdelta(q->time, ev->time));
	}
}

static void do_complete(const struct blk_event *ev)
{
	struct proc *pip;
	struct dev *dip = setup_pip(ev, IOP_C, &pip);
	uint64_t d_time = NO_TIME;
	size_t nissued = 0;

	if (!dip) {
		no_q_complete(ev);
		return;
	}
	fp_add(&bs.sys_fp, ev->time, ev->bytes >> 9);
	fp_add(&dip->fp, ev->time, ev->bytes >> 9);
	avg_add(&bs.all.a[AV_BLKS], ev->bytes >> 9);
	avg_add(&dip->avgs.a[AV_BLKS], ev->bytes >> 9);
	if (pip)
		avg_add(&pip->avgs.a[AV_BLKS], ev->bytes >> 9);
	region_add(&bs.all_regions.c, ev->time);
	region_add(&dip->regions.c, ev->time);
	if (pip)
		region_add(&pip->regions.c, ev->time);
	extra_complete(dip, ev);

	match(dip, ev);
	extra_pit(dip, matched, nmatched, ev);
	for (size_t i = 0; i < nmatched; i++) {
		struct qio *q = matched[i];
		uint64_t q2c = tdelta(q->time, ev->time), q_d_time = qio_time(q, QT_D);

		update(dip->remapper ? AV_Q2C_DM : AV_Q2C, q, q2c);
		latency_write(dip->q2c_fp, q->time, q2c);
		plat_add(dip, 0, q->time, q2c);
		hist_add(dip, HIST_Q2C, q2c);
		if (q_d_time != NO_TIME) {
			uint64_t d2c = tdelta(q_d_time, ev->time);

			update(AV_D2C, q, d2c);
			latency_write(dip->d2c_fp, ev->time, d2c);
			plat_add(dip, 1, ev->time, d2c);
			hist_add(dip, HIST_D2C, d2c);
			extra_q_done(q, ev);
			/* the live period starts at the earliest issue, as the reference's */
			if (d_time == NO_TIME || q_d_time < d_time)
				d_time = q_d_time;
			issued[nissued++] = q_d_time;
		}
		extra_per_io(q, ev);
		qio_forget(q);
		qtree_erase(&bs.qpool, &dip->qt, qm.idx[i]); /* q's index, without a division */
	}
	extra_per_io_end();
	if (d_time != NO_TIME) {
		live_add(&dip->live, d_time, ev->time, &bs.issued);
		live_add(&bs.all_live, d_time, ev->time, &bs.issued);
	}
	/* no longer in flight: only now, so that the interval above found its start */
	while (nissued)
		dset_del(&bs.issued, issued[--nissued]);
}

static void unplug(struct dev *dip, double now)
{
	dip->is_plugged = 0;
	dip->plugged_time += now - dip->last_plug;
}

static void do_plug(const struct blk_event *ev, int code)
{
	struct dev *dip = dev_find(ev->device);
	uint64_t depth;

	if (!dip)
		return;
	if (code == BLK_TA_PLUG) {
		if (!dip->is_plugged) {
			dip->is_plugged = 1;
			dip->last_plug = bit_time(ev->time);
		}
		return;
	}
	depth = blk_event_pdu_u64(ev);
	/* the unplug histogram counts every U, plugged or not */
	extra_unplug(dip, depth, code == BLK_TA_UNPLUG_TIMER);
	if (!dip->is_plugged)
		return;
	if (code == BLK_TA_UNPLUG_IO) {
		dip->nplugs++;
		dip->nios_up += depth;
	} else {
		dip->nplugs_t++;
		dip->nios_upt += depth;
	}
	unplug(dip, bit_time(ev->time));
}

static void do_notify(const struct blk_event *ev)
{
	uint32_t act = blk_event_action32(ev);
	char name[256];
	size_t n;

	if (act == BLK_TN_ACTION(BLK_TN_PROCESS)) {
		if (ev->pid == 0) {
			proc_register(0, "kernel");
			return;
		}
		n = ev->pdu_len < sizeof(name) - 1 ? ev->pdu_len : sizeof(name) - 1;
		memcpy(name, ev->pdu, n);
		name[n] = '\0';
		name[strcspn(name, "/")] = '\0';
		proc_register(ev->pid, name);
	} else if (act == BLK_TN_ACTION(BLK_TN_MESSAGE)) {
		/* a message counts as an event of its device: it may create the device,
		 * and is dropped while the device waits for its first Q */
		if (setup(ev, IOP_M))
			extra_message(ev);
	}
}

/* the far times follow their nodes to their new indexes */
static void far_remap(void *arg, const uint32_t *map, uint32_t n)
{
	struct u64map nf = {0};

	(void)arg;
	for (size_t h = 0; bs.far.bits && h < ((size_t)1 << bs.far.bits); h++) {
		uint64_t key = bs.far.key[h], idx;

		if (!key)
			continue;
		idx = (key - 1) >> 3;
		if (idx >= n)
			die("internal error: a far time of node %llu, past the %u nodes renumbered",
			    (unsigned long long)idx, n);
		if (u64map_put(&nf, ((uint64_t)map[idx] << 3 | ((key - 1) & 7)) + 1,
			       bs.far.val[h]) < 0)
			die("out of memory");
	}
	u64map_free(&bs.far);
	bs.far = nf;
}

/*
 * Once the queued I/Os no longer fit in the caches (requests that never complete pile
 * up), and each time they grew by half since, their nodes are renumbered in tree order,
 * if the trees were searched enough since to pay for it (a trace of nothing but queue
 * events would only pay).
 */
#define RELAYOUT_FIRST 32768u
#define RELAYOUT_EVENTS 16u /* events since the last layout, per queued I/O */

static void maybe_relayout(void)
{
	struct qtree **t;

	if (bs.qpool.live < (bs.relayout_at ? bs.relayout_at : RELAYOUT_FIRST) ||
	    bs.relayout_events / RELAYOUT_EVENTS < bs.qpool.live)
		return;
	t = malloc(bs.ndevs * sizeof(*t));
	if (!t)
		die("out of memory");
	for (size_t i = 0; i < bs.ndevs; i++)
		t[i] = &bs.devs[i]->qt;
	/* out of memory: the layout stays as it is */
	(void)qpool_relayout(&bs.qpool, t, bs.ndevs, far_remap, NULL);
	free(t);
	bs.relayout_at = bs.qpool.live + bs.qpool.live / 2;
	bs.relayout_events = 0;
}

void iomodel_event(const struct blk_event *ev)
{
	uint32_t act = blk_event_action32(ev);
	unsigned int code = act & 0xffff;

	if (act & BLK_TC_ACT(BLK_TC_NOTIFY)) {
		do_notify(ev);
		return;
	}
	if (act & BLK_TC_ACT(BLK_TC_PC))
		return;
	bs.n_traces++;
	if (opts.time_bounded) {
		if (bit_time(ev->time) < opts.t_start)
			return;
		if (bit_time(ev->time) > opts.t_end) {
			bs.done = 1;
			return;
		}
	}
	bs.last_time = ev->time;
	iostat_check_time(ev->time);
	bs.relayout_events++;
	maybe_relayout();
	switch (code) {
	case BLK_TA_QUEUE:
	case BLK_TA_GETRQ:
	case BLK_TA_SLEEPRQ:
	case BLK_TA_INSERT:
	case BLK_TA_BACKMERGE:
	case BLK_TA_FRONTMERGE:
	case BLK_TA_ISSUE:
	case BLK_TA_COMPLETE:
		if (ev->bytes == 0)
			return;
		break;
	default:
		break;
	}
	switch (code) {
	case BLK_TA_QUEUE:
		do_queue(ev);
		break;
	case BLK_TA_REMAP:
		do_remap(ev);
		break;
	case BLK_TA_INSERT:
		do_insert(ev);
		break;
	case BLK_TA_GETRQ:
		do_getrq(ev);
		break;
	case BLK_TA_BACKMERGE:
	case BLK_TA_FRONTMERGE:
		do_merge(ev);
		break;
	case BLK_TA_REQUEUE:
		do_requeue(ev);
		break;
	case BLK_TA_ISSUE:
		do_issue(ev);
		break;
	case BLK_TA_COMPLETE:
		do_complete(ev);
		break;
	case BLK_TA_PLUG:
	case BLK_TA_UNPLUG_IO:
	case BLK_TA_UNPLUG_TIMER:
		do_plug(ev, (int)code);
		break;
	case BLK_TA_SLEEPRQ:
		do_sleeprq(ev);
		break;
	default:
		break;
	}
}

void iomodel_finish(void)
{
	for (size_t i = 0; i < bs.ndevs; i++) {
		struct dev *dip = bs.devs[i];

		dip->end_time = bit_time(dip->last_ns);
		if (dip->is_plugged) {
			dip->nplugs++;
			unplug(dip, dip->end_time);
		}
	}
	free(matched);
	free(issued);
	matched = NULL;
	issued = NULL;
	dset_release(&bs.issued);
	nmatched = amatched = 0;
	free(qm.idx);
	memset(&qm, 0, sizeof(qm));
	devs_drop_ios();
}
