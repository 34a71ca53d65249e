// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O model (see iomodel.h): each event is matched against the queued I/Os of its
 * device, which are indexed by start sector (qtree.h); what it finds is handed to the
 * subscribers. A Q is freed when a completion covers it, so memory follows the number of
 * I/Os in flight.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "blk/devname.h"
#include "model/alloc.h"
#include "common.h"
#include "model/iomodel.h"
#include "model/qio.h"

#define MAX_SUBS 16

enum { IOP_Q, IOP_A, IOP_G, IOP_S, IOP_I, IOP_M, IOP_D, IOP_C, IOP_R };

/* the callbacks of one kind, in subscription order (only the subscribers that set one) */
struct stage_cb {
	void (*fn)(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t);
	void *ctx;
};

struct io_cb {
	void (*fn)(void *ctx, const struct btt_io *io);
	void *ctx;
};

struct lost_cb {
	void (*fn)(void *ctx, const struct btt_io *io, enum btt_lost why);
	void *ctx;
};

struct ev_cb {
	void (*fn)(void *ctx, const struct btt_dev_event *e);
	void *ctx;
};

struct tick_cb {
	void (*fn)(void *ctx, uint64_t t);
	void *ctx;
};

struct note_cb {
	void (*fn)(void *ctx, const struct blk_event *ev);
	void *ctx;
};

/*
 * With BTT_SUB_REMAP: the origins of the last A events, by their target (device and
 * sector), until the Q they announce takes them. A small table: an A whose Q never comes
 * is overwritten in time.
 */
#define ORIGIN_SLOTS 1024

struct origin_slot {
	uint64_t sector, from_sector;
	uint32_t device, from_device;
	int set;
};

struct iomodel {
	struct btt_devs *devs;
	struct iomodel_opts o;
	struct qios q; /* the queued I/Os' records */
	struct qtree **qt; /* each device's tree of queued I/Os, by device index */
	size_t nqt, aqt;
	struct qmatch qm; /* the I/Os an issue or a completion takes */
	int sealed; /* the first event was seen: no more subscribers */
	unsigned int flags; /* what the subscribers asked for, together */
	size_t nsubs;
	struct stage_cb stage[BTT_STAGE_NR][MAX_SUBS];
	struct io_cb done[MAX_SUBS];
	struct lost_cb lost[MAX_SUBS], lost_end[MAX_SUBS];
	struct ev_cb ev[BTT_EV_NR][MAX_SUBS];
	struct tick_cb tick[MAX_SUBS];
	struct note_cb note[MAX_SUBS], event[MAX_SUBS];
	unsigned char nstage[BTT_STAGE_NR], ndone, nlost, nlost_end, nev[BTT_EV_NR], ntick, nnote;
	unsigned char nevent;
	struct origin_slot *origins;
	int ended; /* an event past -T */
	uint64_t last_time; /* of the last event taken */
	uint64_t n_traces; /* records other than notes */
	struct iomodel_counts c;
};

struct iomodel *iomodel_new(struct btt_devs *devs, const struct iomodel_opts *o)
{
	struct iomodel *m = xcalloc(1, sizeof(*m));

	m->devs = devs;
	m->o = *o;
	return m;
}

int iomodel_subscribe(struct iomodel *m, const struct btt_io_sub *s)
{
	if (m->sealed && (s->flags || s->tick || s->note || s->stage))
		return -EBUSY;
	if (m->nsubs == MAX_SUBS)
		return -ENOSPC;
	m->nsubs++;
	m->flags |= s->flags;
	if (s->tick)
		m->tick[m->ntick++] = (struct tick_cb){s->tick, s->ctx};
	if (s->note)
		m->note[m->nnote++] = (struct note_cb){s->note, s->ctx};
	if (s->event)
		m->event[m->nevent++] = (struct note_cb){s->event, s->ctx};
	for (int st = 0; s->stage && st < BTT_STAGE_NR; st++)
		if (!s->stages || (s->stages & (1u << st)))
			m->stage[st][m->nstage[st]++] = (struct stage_cb){s->stage, s->ctx};
	if (s->done)
		m->done[m->ndone++] = (struct io_cb){s->done, s->ctx};
	if (s->lost) {
		m->lost[m->nlost++] = (struct lost_cb){s->lost, s->ctx};
		if (s->flags & BTT_SUB_LOST_AT_END)
			m->lost_end[m->nlost_end++] = (struct lost_cb){s->lost, s->ctx};
	}
	for (int k = 0; s->dev_event && k < BTT_EV_NR; k++)
		if (!s->events || (s->events & (1u << k)))
			m->ev[k][m->nev[k]++] = (struct ev_cb){s->dev_event, s->ctx};
	return 0;
}

int iomodel_follow_events(struct iomodel *m, void (*fn)(void *ctx, const struct blk_event *ev),
			  void *ctx)
{
	if (m->nevent == MAX_SUBS)
		return -ENOSPC;
	m->event[m->nevent++] = (struct note_cb){fn, ctx};
	return 0;
}

/* the first event: the records' layout follows what the subscribers asked for */
static void seal(struct iomodel *m)
{
	m->sealed = 1;
	qios_init(&m->q, !!(m->flags & BTT_SUB_ISSUE), !!(m->flags & BTT_SUB_REMAP),
		  !!(m->flags & BTT_SUB_RWBS));
	if (m->flags & BTT_SUB_REMAP)
		m->origins = xcalloc(ORIGIN_SLOTS, sizeof(*m->origins));
}

/* ---- what the subscribers receive ---- */

static inline void emit(const struct iomodel *m, const struct btt_dev_event *e)
{
	const struct ev_cb *cb = m->ev[e->kind];
	unsigned int n = m->nev[e->kind];

	for (unsigned int k = 0; k < n; k++)
		cb[k].fn(cb[k].ctx, e);
}

/* an event of @dip as subscribers see it (the caller adds what its kind carries) */
static inline void ev_of(struct btt_dev_event *e, enum btt_ev kind, const struct btt_dev *dip,
			 const struct btt_proc *pip, const struct blk_event *ev)
{
	e->kind = kind;
	e->dev = dip;
	e->proc = pip;
	e->ev = ev;
	e->count = 0;
	e->from_sector = 0;
	e->from_device = 0;
	e->text = NULL;
	e->len = 0;
}

static inline __attribute__((always_inline)) void
emit_simple(struct iomodel *m, enum btt_ev kind, const struct btt_dev *dip,
	    const struct btt_proc *pip, const struct blk_event *ev, uint64_t count)
{
	struct btt_dev_event e;

	if (!m->nev[kind])
		return;
	ev_of(&e, kind, dip, pip, ev);
	e.count = count;
	emit(m, &e);
}

/* the I/O of node @i as subscribers see it */
static inline __attribute__((always_inline)) void view(const struct iomodel *m, uint32_t i,
						       struct btt_io *io)
{
	const struct qio *q = qio_at(&m->q, i);
	const struct qio_who *w = qio_pair(&m->q, q);

	io->dev = m->devs->v[w->dev];
	io->proc = w->proc;
	io->pid = w->pid;
	io->action = w->action;
	io->sector = m->q.pool.node[i].sector;
	io->nsec = qtree_nsec(&m->q.pool, i);
	qio_times(&m->q, q, io->t);
	io->t[BTT_STAGE_C] = NO_TIME;
	io->d_sector = 0;
	io->d_nsec = 0;
	if (m->q.issue_off && io->t[BTT_STAGE_D] != NO_TIME) {
		io->d_sector = qio_issue(q, &m->q)->sector;
		io->d_nsec = qio_issue(q, &m->q)->nsec;
	}
	io->remapped = 0;
	io->from_device = 0;
	io->from_sector = 0;
	if (m->q.origin_off && qio_origin(q, &m->q)->set) {
		io->remapped = 1;
		io->from_device = qio_origin(q, &m->q)->device;
		io->from_sector = qio_origin(q, &m->q)->sector;
	}
	io->c_sector = 0;
	io->c_nsec = 0;
	io->error = 0;
	io->id = i;
}

static void emit_stage(struct iomodel *m, uint32_t i, enum btt_stage st, uint64_t t)
{
	struct btt_io io;

	const struct stage_cb *cb = m->stage[st];
	unsigned int n = m->nstage[st];

	if (!n)
		return;
	view(m, i, &io);
	for (unsigned int k = 0; k < n; k++)
		cb[k].fn(cb[k].ctx, &io, st, t);
}

static void emit_lost(struct iomodel *m, const struct lost_cb *cb, unsigned int n, uint32_t i,
		      uint32_t nsec, enum btt_lost why)
{
	struct btt_io io;

	view(m, i, &io);
	io.nsec = nsec;
	for (unsigned int k = 0; k < n; k++)
		cb[k].fn(cb[k].ctx, &io, why);
}

/* ---- devices ---- */

static void new_dev(struct iomodel *m, struct btt_dev *dip, const struct blk_event *ev)
{
	m->qt = array_grow(m->qt, &m->aqt, dip->idx, sizeof(*m->qt));
	while (m->nqt <= dip->idx)
		m->qt[m->nqt++] = xcalloc(1, sizeof(**m->qt));
	emit_simple(m, BTT_EV_NEW, dip, NULL, ev, 0);
}

/* the device of @ev, or NULL while the device is still before its first Q or A */
static inline __attribute__((always_inline)) struct btt_dev *
setup(struct iomodel *m, const struct blk_event *ev, int type, const struct btt_proc **pip)
{
	int created;
	struct btt_dev *dip = devs_get(m->devs, ev->device, ev->time, &created);

	if (created)
		new_dev(m, dip, ev);
	if (dip->pre_culling) {
		if (type != IOP_Q && type != IOP_A) {
			if (type == IOP_D)
				emit_simple(m, BTT_EV_ISSUE_BEFORE_Q, dip, NULL, ev, 0);
			else if (type == IOP_C)
				emit_simple(m, BTT_EV_COMPLETE_BEFORE_Q, dip, NULL, ev, 0);
			return NULL;
		}
		dip->pre_culling = 0;
		emit_simple(m, BTT_EV_FIRST_Q, dip, NULL, ev, 0);
	}
	dip->last_ns = ev->time;
	/* every event taken names its process (it shows in the per-process rows) */
	*pip = procs_get(m->devs, ev->pid);
	return dip;
}

/* the node whose range holds @sector (the search path depends on the tree shape) */
static uint32_t find_sec(struct iomodel *m, const struct btt_dev *dip, uint64_t sector)
{
	return qtree_find(&m->q.pool, m->qt[dip->idx], sector);
}

/* the nodes inside the range of @ev, in the order the classic walk meets them */
static void match(struct iomodel *m, const struct btt_dev *dip, const struct blk_event *ev)
{
	if (qtree_collect(&m->q.pool, m->qt[dip->idx], ev->sector, ev->sector + (ev->bytes >> 9),
			  &m->qm) < 0)
		die("out of memory");
}

/* ---- remap origins ---- */

static struct origin_slot *origin_slot(struct iomodel *m, uint32_t device, uint64_t sector)
{
	return &m->origins[u64_home(sector ^ ((uint64_t)device << 40), 10)];
}

static void origin_put(struct iomodel *m, const struct blk_event *ev,
		       const struct blk_io_trace_remap *rp)
{
	*origin_slot(m, ev->device, ev->sector) = (struct origin_slot){
		.sector = ev->sector,
		.from_sector = rp->sector_from,
		.device = ev->device,
		.from_device = rp->device_from,
		.set = 1,
	};
}

static void origin_take(struct iomodel *m, const struct blk_event *ev, struct qio *q)
{
	struct origin_slot *s = origin_slot(m, ev->device, ev->sector);
	struct qio_origin *o = qio_origin(q, &m->q);

	if (!s->set || s->device != ev->device || s->sector != ev->sector)
		return;
	*o = (struct qio_origin){.sector = s->from_sector, .device = s->from_device, .set = 1};
	s->set = 0;
}

/* ---- the events ---- */

static void do_queue(struct iomodel *m, const struct blk_event *ev)
{
	const struct btt_proc *pip;
	struct btt_dev *dip = setup(m, ev, IOP_Q, &pip);
	uint32_t i, old_nsec = 0;
	struct qio *q;
	int replaced;

	if (!dip)
		return;
	m->c.queued += (uint64_t)dip->shown;
	/* a second I/O at the same start orphans the first: it takes its node */
	i = qtree_insert(&m->q.pool, m->qt[dip->idx], ev->sector, ev->bytes >> 9, &replaced,
			 &old_nsec);
	if (!i)
		die("out of memory for %u queued I/Os", m->q.pool.used);
	q = qio_at(&m->q, i);
	if (replaced) {
		m->c.replaced += (uint64_t)dip->shown;
		if (m->nlost)
			emit_lost(m, m->lost, m->nlost, i, old_nsec, BTT_LOST_REPLACED);
		qio_forget(&m->q, q);
		memset(q, 0, m->q.pool.data_size);
	}
	q->who = qio_who(&m->q, dip->idx, ev->pid, pip, ev->action & ~(uint64_t)0xffff);
	q->time = ev->time;
	if (m->origins)
		origin_take(m, ev, q);
	emit_stage(m, i, BTT_STAGE_Q, ev->time);
	emit_simple(m, BTT_EV_QUEUE, dip, pip, ev, 0);
}

static void do_remap(struct iomodel *m, const struct blk_event *ev)
{
	struct blk_io_trace_remap rp;
	const struct btt_proc *pip;
	struct btt_dev *dip, *qdip;
	uint32_t i;

	if (m->o.no_remaps)
		return;
	dip = setup(m, ev, IOP_A, &pip);
	if (!dip || blk_event_remap(ev, &rp) < 0)
		return;
	if (m->origins)
		origin_put(m, ev, &rp);
	if (m->nev[BTT_EV_REMAP]) {
		struct btt_dev_event e;

		ev_of(&e, BTT_EV_REMAP, dip, pip, ev);
		e.from_device = rp.device_from;
		e.from_sector = rp.sector_from;
		emit(m, &e);
	}
	qdip = devs_find(m->devs, rp.device_from);
	if (!qdip)
		return;
	i = find_sec(m, qdip, rp.sector_from);
	if (i)
		emit_stage(m, i, BTT_STAGE_A, ev->time);
}

/* G, S, I, M: the I/O whose range holds the event's sector enters the stage */
static void do_stage(struct iomodel *m, const struct blk_event *ev, int type, enum btt_stage st,
		     enum btt_ev kind)
{
	const struct btt_proc *pip;
	struct btt_dev *dip = setup(m, ev, type, &pip);
	uint32_t i;

	if (!dip)
		return;
	i = find_sec(m, dip, ev->sector);
	if (i) {
		emit_stage(m, i, st, ev->time);
		qio_set_time(&m->q, qio_at(&m->q, i), (enum qio_time)(st - BTT_STAGE_G), ev->time);
	}
	emit_simple(m, kind, dip, pip, ev, 0);
}

static void do_requeue(struct iomodel *m, const struct blk_event *ev)
{
	const struct btt_proc *pip;
	struct btt_dev *dip = setup(m, ev, IOP_R, &pip);

	if (dip)
		emit_simple(m, BTT_EV_REQUEUE, dip, pip, ev, 0);
}

static void do_issue(struct iomodel *m, const struct blk_event *ev)
{
	const struct btt_proc *pip;
	struct btt_dev *dip = setup(m, ev, IOP_D, &pip);

	if (!dip)
		return;
	match(m, dip, ev);
	for (size_t k = 0; k < m->qm.n; k++) {
		uint32_t i = m->qm.idx[k];
		struct qio *q = qio_at(&m->q, i);

		emit_stage(m, i, BTT_STAGE_D, ev->time);
		/* issued again (after a requeue): the later time counts */
		qio_set_time(&m->q, q, QT_D, ev->time);
		if (m->q.issue_off)
			*qio_issue(q, &m->q) =
				(struct qio_issue){.sector = ev->sector, .nsec = ev->bytes >> 9};
	}
	emit_simple(m, BTT_EV_ISSUE, dip, pip, ev, m->qm.n);
}

static void do_complete(struct iomodel *m, const struct blk_event *ev)
{
	const struct btt_proc *pip;
	struct btt_dev *dip = setup(m, ev, IOP_C, &pip);
	unsigned int ndone = m->ndone;
	struct qtree *t;

	if (!dip)
		return;
	t = m->qt[dip->idx];
	match(m, dip, ev);
	m->c.completed += dip->shown ? m->qm.n : 0;
	for (size_t k = 0; k < m->qm.n; k++) {
		uint32_t i = m->qm.idx[k];

		if (ndone) {
			struct btt_io io;

			view(m, i, &io);
			io.t[BTT_STAGE_C] = ev->time;
			io.c_sector = ev->sector;
			io.c_nsec = ev->bytes >> 9;
			io.error = ev->error;
			for (unsigned int s = 0; s < ndone; s++)
				m->done[s].fn(m->done[s].ctx, &io);
		}
		qio_forget(&m->q, qio_at(&m->q, i));
		qtree_erase(&m->q.pool, t, i);
	}
	emit_simple(m, BTT_EV_COMPLETE, dip, pip, ev, m->qm.n);
}

static void do_plug(struct iomodel *m, const struct blk_event *ev, unsigned int code)
{
	struct btt_dev *dip = devs_find(m->devs, ev->device);
	enum btt_ev kind = code == BLK_TA_PLUG	      ? BTT_EV_PLUG
			   : code == BLK_TA_UNPLUG_IO ? BTT_EV_UNPLUG
						      : BTT_EV_UNPLUG_TIMER;

	/* plugs do not name a device, and count before its first Q too */
	if (dip)
		emit_simple(m, kind, dip, NULL, ev,
			    kind == BTT_EV_PLUG ? 0 : blk_event_pdu_u64(ev));
}

static void do_notify(struct iomodel *m, const struct blk_event *ev)
{
	uint32_t act = blk_event_action32(ev);
	const struct btt_proc *pip;
	struct btt_dev *dip;
	char name[256];
	size_t n;

	if (act == BLK_TN_ACTION(BLK_TN_PROCESS)) {
		if (ev->pid == 0) {
			procs_register(m->devs, 0, "kernel");
			return;
		}
		n = ev->pdu_len < sizeof(name) - 1 ? ev->pdu_len : sizeof(name) - 1;
		memcpy(name, ev->pdu, n);
		name[n] = '\0';
		name[strcspn(name, "/")] = '\0';
		procs_register(m->devs, ev->pid, name);
	} else if (blk_event_is_devname(ev)) {
		/* the tracer's name for the device: for the Perfetto and export labels */
		if (!blk_devname_decode(ev, name, sizeof(name)))
			devs_name_from_trace(m->devs, ev->device, name);
	} else if (act == BLK_TN_ACTION(BLK_TN_MESSAGE)) {
		/* a message counts as an event of its device: it may create the device,
		 * and is dropped while the device waits for its first Q */
		dip = setup(m, ev, IOP_M, &pip);
		if (dip && m->nev[BTT_EV_MESSAGE]) {
			struct btt_dev_event e;

			ev_of(&e, BTT_EV_MESSAGE, dip, pip, ev);
			e.text = (const char *)ev->pdu;
			e.len = strnlen((const char *)ev->pdu, ev->pdu_len);
			emit(m, &e);
		}
	}
}

static void model(struct iomodel *m, const struct blk_event *ev, unsigned int code)
{
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
		do_queue(m, ev);
		break;
	case BLK_TA_REMAP:
		do_remap(m, ev);
		break;
	case BLK_TA_INSERT:
		do_stage(m, ev, IOP_I, BTT_STAGE_I, BTT_EV_INSERT);
		break;
	case BLK_TA_GETRQ:
		do_stage(m, ev, IOP_G, BTT_STAGE_G, BTT_EV_GETRQ);
		break;
	case BLK_TA_BACKMERGE:
	case BLK_TA_FRONTMERGE:
		do_stage(m, ev, IOP_M, BTT_STAGE_M, BTT_EV_MERGE);
		break;
	case BLK_TA_REQUEUE:
		do_requeue(m, ev);
		break;
	case BLK_TA_ISSUE:
		do_issue(m, ev);
		break;
	case BLK_TA_COMPLETE:
		do_complete(m, ev);
		break;
	case BLK_TA_PLUG:
	case BLK_TA_UNPLUG_IO:
	case BLK_TA_UNPLUG_TIMER:
		do_plug(m, ev, code);
		break;
	case BLK_TA_SLEEPRQ:
		do_stage(m, ev, IOP_S, BTT_STAGE_S, BTT_EV_SLEEPRQ);
		break;
	case BLK_TA_SPLIT:
		m->c.splits++;
		break;
	default:
		break;
	}
}

void iomodel_event(struct iomodel *m, const struct blk_event *ev)
{
	uint32_t act = blk_event_action32(ev);
	unsigned int code = act & 0xffff;

	if (!m->sealed)
		seal(m);
	if (act & BLK_TC_ACT(BLK_TC_NOTIFY)) {
		for (unsigned int k = 0; k < m->nnote; k++)
			m->note[k].fn(m->note[k].ctx, ev);
		do_notify(m, ev);
		return;
	}
	if (act & BLK_TC_ACT(BLK_TC_PC))
		return;
	m->n_traces++;
	if (m->o.time_bounded) {
		double t = (double)ev->time / 1.0e9;

		if (t < m->o.t_start)
			return;
		if (t > m->o.t_end) {
			m->ended = 1;
			return;
		}
	}
	m->last_time = ev->time;
	for (unsigned int k = 0; k < m->ntick; k++)
		m->tick[k].fn(m->tick[k].ctx, ev->time);
	model(m, ev, code);
	/* after the model: the devices it names for the first time are in the registry */
	for (unsigned int k = 0; k < m->nevent; k++)
		m->event[k].fn(m->event[k].ctx, ev);
}

/* ---- reading a stream ---- */

/*
 * Once the queued I/Os outgrow the caches (requests that never complete pile up), events
 * are taken in batches: before a batch is modelled, the insertions it will make descend
 * together (qtree_prefetch), so that their cache misses overlap.
 */
#define BATCH 16
#define PREFETCH_NODES (256u << 10) /* 4 MiB of nodes */

struct batch {
	struct blk_event ev[BATCH];
	size_t pdu_off[BATCH];
	size_t n;
	unsigned char *pdu; /* the payloads, copied: the reader's are valid until its next call */
	size_t pdu_len, pdu_cap;
};

static void batch_add(struct batch *b, const struct blk_event *ev)
{
	if (b->pdu_len + ev->pdu_len > b->pdu_cap) {
		size_t cap = b->pdu_cap ? b->pdu_cap : 4096;
		unsigned char *p;

		while (cap < b->pdu_len + ev->pdu_len)
			cap *= 2;
		p = realloc(b->pdu, cap);
		if (!p)
			die("out of memory");
		b->pdu = p;
		b->pdu_cap = cap;
	}
	if (ev->pdu_len)
		memcpy(b->pdu + b->pdu_len, ev->pdu, ev->pdu_len);
	b->pdu_off[b->n] = b->pdu_len;
	b->pdu_len += ev->pdu_len;
	b->ev[b->n++] = *ev;
}

static void batch_prefetch(struct iomodel *m, struct batch *b)
{
	struct qtree *t[BATCH];
	uint64_t sector[BATCH];
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++) {
		const struct blk_event *ev = &b->ev[i];
		uint32_t act = blk_event_action32(ev);
		struct btt_dev *dip;

		b->ev[i].pdu = b->pdu + b->pdu_off[i];
		if ((act & (BLK_TC_ACT(BLK_TC_NOTIFY) | BLK_TC_ACT(BLK_TC_PC))) || !ev->bytes)
			continue;
		/* the insertions: the other searches mostly go through the table */
		if ((act & 0xffff) == BLK_TA_QUEUE && (dip = devs_find(m->devs, ev->device))) {
			t[n] = m->qt[dip->idx];
			sector[n++] = ev->sector;
		}
	}
	qtree_prefetch(&m->q.pool, t, sector, n);
}

int iomodel_run(struct iomodel *m, iomodel_next_fn next, void *src, struct blk_event *ev,
		void (*progress)(void *arg), void *arg)
{
	struct batch b = {.n = 0};
	int rc = 1;

	/* one at a time while the queued I/Os fit in the caches (batches cost a copy) */
	while (m->q.pool.used < PREFETCH_NODES) {
		iomodel_event(m, ev);
		if (progress)
			progress(arg);
		if (m->ended || (rc = next(src, ev)) <= 0)
			return m->ended ? 0 : rc;
	}
	batch_add(&b, ev);
	for (;;) {
		while (b.n < BATCH && (rc = next(src, ev)) > 0)
			batch_add(&b, ev);
		batch_prefetch(m, &b);
		for (size_t i = 0; i < b.n && !m->ended; i++) {
			iomodel_event(m, &b.ev[i]);
			if (progress)
				progress(arg);
		}
		if (m->ended || rc <= 0)
			break;
		b.n = 0;
		b.pdu_len = 0;
	}
	free(b.pdu);
	return m->ended ? 0 : rc;
}

int iomodel_done(const struct iomodel *m)
{
	return m->ended;
}

const struct iomodel_opts *iomodel_options(const struct iomodel *m)
{
	return &m->o;
}

uint64_t iomodel_records(const struct iomodel *m)
{
	return m->n_traces;
}

const struct iomodel_counts *iomodel_counts(const struct iomodel *m)
{
	return &m->c;
}

uint64_t iomodel_last_time(const struct iomodel *m)
{
	return m->last_time;
}

/* every queued I/O goes */
static void drop(struct iomodel *m)
{
	for (size_t d = 0; d < m->nqt; d++)
		qtree_reset(m->qt[d]);
	qios_release(&m->q);
	free(m->qm.idx);
	memset(&m->qm, 0, sizeof(m->qm));
	free(m->origins);
	m->origins = NULL;
}

void iomodel_finish(struct iomodel *m)
{
	/* the I/Os never completed, to those who asked, device by device in sector order */
	for (size_t d = 0; m->nlost_end && d < m->nqt; d++)
		for (uint32_t i = qtree_first(&m->q.pool, m->qt[d]); i;
		     i = qtree_next(&m->q.pool, i))
			emit_lost(m, m->lost_end, m->nlost_end, i, qtree_nsec(&m->q.pool, i),
				  BTT_LOST_END);
	/* the requests still queued are not needed by the outputs */
	drop(m);
#ifdef __GLIBC__
	/* give the freed pages back before the seek statistics take their memory */
	malloc_trim(0);
#endif
}

void iomodel_free(struct iomodel *m)
{
	if (!m)
		return;
	drop(m);
	for (size_t d = 0; d < m->nqt; d++)
		free(m->qt[d]);
	free(m->qt);
	free(m);
}
