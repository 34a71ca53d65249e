// SPDX-License-Identifier: GPL-2.0
/*
 * The records of btt --perfetto in time order, on the drawing's side (see pfsort.h). What
 * comes in order waits in pforder.h's FIFO, an I/O's slice as one run in its heap; a record
 * goes out once it is before the watermark, or at once if it is before all that waits and
 * the watermark, or when more than MAX_PENDING wait (the earliest then, what comes later
 * for them is written with an absolute time: still valid, no track goes back in time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "perfetto/pfsort.h"

#define MAX_PENDING 65536

/* an I/O from its "queued" record to its slice's end */
struct dslot {
	struct pf_run run; /* once arrived */
	uint64_t flow_end; /* a flow from the slice's end (a wait it ended) */
	uint64_t cancel[PF_MAX_FLOWS_OUT]; /* flows to drop from io.flow_out when it arrives */
	uint64_t *bflows; /* the flows into it from dirtying bursts (pfsort_bflows()) */
	uint32_t gen;
	uint8_t ncancel, rk, begun, arrived, nbflows;
};

struct pfsort {
	struct pfdraw *d;
	int err;
	struct pforder q;
	uint64_t w; /* the watermark */
	struct dslot *slots;
	size_t nslots, aslots;
	uint32_t *freed;
	size_t nfreed, afreed;
	struct pfsort_stats st;
};

struct pfsort *pfsort_new(struct pfdraw *d)
{
	struct pfsort *s = xcalloc(1, sizeof(*s));

	s->d = d;
	return s;
}

static void note_err(struct pfsort *s, int ret)
{
	if (ret && !s->err)
		s->err = ret;
}

static void slot_free(struct pfsort *s, uint32_t i)
{
	if (s->slots[i].bflows) {
		free(s->slots[i].bflows);
		s->slots[i].bflows = NULL;
		s->slots[i].nbflows = 0;
	}
	s->slots[i].gen++;
	s->slots[i].arrived = 0;
	s->freed = array_grow(s->freed, &s->afreed, s->nfreed, sizeof(*s->freed));
	s->freed[s->nfreed++] = i;
}

/* a record not drawn: what it owns is freed */
static void drop(const struct pf_rec *r)
{
	if (r->kind == PFR_MESSAGE || r->kind == PFR_WAIT_END || r->kind == PFR_BURST)
		free((void *)(uintptr_t)r->v);
}

static void draw_one(struct pfsort *s, const struct pf_rec *r)
{
	/* an I/O's records name its slot; the others' slot is a device's (or track's) number */
	struct pfdraw *d = s->d;
	double v;
	int ret = 0;

	switch (r->kind) {
	case PFR_COUNTER:
		ret = pfdraw_counter(d, r->slot, (enum pf_ctr)r->x, r->ts, (int64_t)r->v);
		break;
	case PFR_RATE:
		memcpy(&v, &r->v, sizeof(v));
		ret = pfdraw_rate(d, r->slot, (enum pf_ctr)r->x, r->ts, v);
		break;
	case PFR_QUEUED: {
		/* the device's queued count rides on the instant */
		const struct pf_io *io = &s->slots[r->slot].run.io;

		if (!io->piece)
			ret = pfdraw_queued_step(d, io->dev, r->ts, 1);
		if (!ret && !io->no_q && !io->piece)
			ret = pfdraw_queued(d, io, r->ts);
		break;
	}
	case PFR_UNPLUG:
		ret = pfdraw_instant(d, r->slot, r->ts, r->x ? "unplug (timer)" : "unplug", "count",
				     NULL, r->v);
		break;
	case PFR_REQUEUE:
		ret = pfdraw_instant(d, r->slot, r->ts, "requeue", "sector", NULL, r->v);
		break;
	case PFR_MESSAGE:
		ret = pfdraw_instant(d, r->slot, r->ts, "message", "text",
				     (const char *)(uintptr_t)r->v, 0);
		break;
	case PFR_WAIT_BEGIN:
		ret = pfdraw_wait_begin(d, (const struct pf_wait *)(uintptr_t)r->v, r->ts);
		break;
	case PFR_WAIT_END:
		ret = pfdraw_wait_end(d, (const struct pf_wait *)(uintptr_t)r->v, r->ts);
		break;
	case PFR_BURST:
		ret = pfdraw_burst(d, (const struct pf_burst *)(uintptr_t)r->v, r->ts);
		break;
	}
	drop(r);
	note_err(s, ret);
}

/* @r drawn, or dropped after an error */
static void draw(struct pfsort *s, const struct pf_rec *r)
{
	if (!s->err)
		draw_one(s, r);
	else
		drop(r);
}

/* the flow of @io from the I/O it was remapped from is not drawn */
static void cancel_flow(struct pfsort *s, struct pf_run *run)
{
	struct dslot *up = &s->slots[run->up];
	uint64_t f = run->io.flow_from;

	if (up->arrived) {
		struct pf_io *u = &up->run.io;

		for (unsigned int j = 0; j < u->nflow_out; j++)
			if (u->flow_out[j] == f)
				u->flow_out[j] = u->flow_out[--u->nflow_out];
	} else if (up->ncancel < PF_MAX_FLOWS_OUT) {
		up->cancel[up->ncancel++] = f;
	}
	run->io.flow_from = 0;
	s->st.cancelled++;
}

/* record @k of the run of slot @i (its slice) */
static void draw_run(struct pfsort *s, uint32_t i, unsigned int k)
{
	struct dslot *ds = &s->slots[i];
	struct pf_run *run = &ds->run;
	uint64_t ts = run->rts[k];
	int ret;

	if (k == 0) {
		/* the flow's start must come first: drop it if the I/O it comes from is still
		 * to be drawn (it went out of order, late) */
		if (run->io.flow_from && s->slots[run->up].gen == run->up_gen &&
		    !s->slots[run->up].begun)
			cancel_flow(s, run);
		ret = pfdraw_begin(s->d, &run->io, ts, ds->bflows, ds->nbflows);
		ds->begun = 1;
	} else if (k + 1 < run->rn) {
		ret = pfdraw_stage(s->d, &run->io, ts, run->rname[k], k == 1);
	} else {
		ret = run->io.piece ? 0 : pfdraw_queued_step(s->d, run->io.dev, ts, -1);
		if (!ret)
			ret = pfdraw_end(s->d, &run->io, ts, ds->flow_end);
		slot_free(s, i);
	}
	note_err(s, ret);
}

/* the order of record @k of the run of @run */
static uint64_t run_order(const struct pf_run *run, unsigned int k)
{
	return 1ull << 63 | (run->rseq + k);
}

/* nothing waiting comes before (@ts, @order), nothing to come can: it can be drawn now */
static int now_or_never(const struct pfsort *s, uint64_t ts, uint64_t order)
{
	uint64_t mt, mo;

	return (!pfo_min(&s->q, &mt, &mo) || pf_before(ts, order, mt, mo)) && ts < s->w &&
	       s->q.n <= MAX_PENDING;
}

/*
 * Take the first record waiting: drawn if no error came, else dropped. With @more, the
 * records of its run at the same time are next (nothing comes between): drawn with it.
 */
static void take(struct pfsort *s, int more)
{
	struct pf_rec r;

	if (pfo_pop(&s->q, &r)) {
		struct dslot *ds = &s->slots[r.slot];
		const struct pf_run *run = &ds->run;
		unsigned int k = ds->rk++, end;

		if (s->err) {
			pfo_run_drop(&s->q, run->rn - ds->rk);
			slot_free(s, r.slot);
			return;
		}
		while (more && ds->rk < run->rn && run->rts[ds->rk] == run->rts[k]) {
			ds->rk++;
			pfo_run_skip(&s->q, 1);
		}
		end = ds->rk;
		if (ds->rk < run->rn)
			pfo_run_next(&s->q, run->rts[ds->rk], run_order(run, ds->rk));
		else
			pfo_run_drop(&s->q, 0);
		/* after an error the drawing writes nothing (pfdraw.h): the end still frees */
		for (; k < end; k++)
			draw_run(s, r.slot, k);
		return;
	}
	draw(s, &r);
}

/* draw the records nothing earlier can come before (all of them with @all) */
static void drain(struct pfsort *s, int all)
{
	uint64_t ts, order;

	while (pfo_min(&s->q, &ts, &order) && (all || ts < s->w || s->q.n > MAX_PENDING))
		take(s, all || ts < s->w);
}

void pfsort_push(struct pfsort *s, const struct pf_rec *r, uint64_t now)
{
	if (now_or_never(s, r->ts, r->order)) {
		draw(s, r);
		return;
	}
	pfo_push(&s->q, r, now);
	if (s->q.n > MAX_PENDING)
		drain(s, 0);
}

void pfsort_queued(struct pfsort *s, const struct pf_rec *r, const struct pf_io *io, uint64_t now)
{
	struct dslot *ds;

	if (r->slot >= s->nslots) {
		/* new slots: generation 0, as on the caller's side */
		s->slots = array_grow(s->slots, &s->aslots, r->slot, sizeof(*s->slots));
		memset(&s->slots[s->nslots], 0, (r->slot + 1 - s->nslots) * sizeof(*s->slots));
		s->nslots = r->slot + 1;
	}
	ds = &s->slots[r->slot];
	ds->run.io = *io;
	ds->flow_end = 0;
	ds->ncancel = 0;
	ds->rk = 0;
	ds->begun = 0;
	ds->arrived = 0;
	pfsort_push(s, r, now);
}

void pfsort_run(struct pfsort *s, uint32_t slot, const struct pf_run *run)
{
	struct dslot *ds = &s->slots[slot];
	struct pf_io *io = &ds->run.io;

	ds->run = *run;
	/* the flows to I/Os drawn before it (pfsort_queued() came before: the slot is known) */
	for (unsigned int c = 0; c < ds->ncancel; c++)
		for (unsigned int j = 0; j < io->nflow_out; j++)
			if (io->flow_out[j] == ds->cancel[c])
				io->flow_out[j] = io->flow_out[--io->nflow_out];
	ds->ncancel = 0;
	ds->arrived = 1;
	ds->rk = 0;
	if (s->err) {
		slot_free(s, slot);
		return;
	}
	/* what can be drawn now is (as pfsort_push() does), the rest waits as one run */
	while (ds->rk < run->rn && now_or_never(s, run->rts[ds->rk], run_order(run, ds->rk)))
		draw_run(s, slot, ds->rk++);
	if (ds->rk < run->rn)
		pfo_push_run(&s->q, run->rts[ds->rk], run_order(run, ds->rk), slot,
			     run->rn - ds->rk);
	if (s->q.n > MAX_PENDING)
		drain(s, 0);
}

void pfsort_bflows(struct pfsort *s, uint32_t slot, uint64_t *flows, unsigned int n)
{
	struct dslot *ds = &s->slots[slot];

	free(ds->bflows);
	ds->bflows = flows;
	ds->nbflows = (uint8_t)n;
}

void pfsort_mark(struct pfsort *s, uint64_t w)
{
	uint64_t ts, order;

	if (w > s->w)
		s->w = w;
	if (pfo_min(&s->q, &ts, &order) && ts < s->w)
		drain(s, 0);
}

void pfsort_flow(struct pfsort *s, uint32_t slot, uint32_t gen, uint64_t end, struct pf_wait *w)
{
	struct dslot *ds = slot < s->nslots ? &s->slots[slot] : NULL;

	/* (the end's time: the run's last) */
	if (ds && ds->gen == gen && ds->arrived && !ds->flow_end &&
	    ds->run.rts[ds->run.rn - 1] <= end) {
		ds->flow_end = w->flow;
		s->st.wait_flows++;
		return;
	}
	if (!ds || ds->gen != gen)
		s->st.wait_late++;
	w->flow = 0;
}

void pfsort_drain(struct pfsort *s)
{
	drain(s, 1);
}

const uint32_t *pfsort_freed(const struct pfsort *s, size_t *n)
{
	*n = s->nfreed;
	return s->freed;
}

void pfsort_freed_clear(struct pfsort *s)
{
	s->nfreed = 0;
}

int pfsort_error(const struct pfsort *s)
{
	return s->err;
}

void pfsort_stats(const struct pfsort *s, struct pfsort_stats *st)
{
	*st = s->st;
}

void pfsort_free(struct pfsort *s)
{
	if (!s)
		return;
	if (!s->err)
		s->err = -ECANCELED; /* what waits is dropped, not drawn */
	while (s->q.n)
		take(s, 0);
	pfo_free(&s->q);
	for (size_t i = 0; i < s->nslots; i++)
		free(s->slots[i].bflows);
	free(s->slots);
	free(s->freed);
	free(s);
}
