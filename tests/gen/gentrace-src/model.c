// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace's request model: the requests in flight wait in a small heap keyed on the time
 * of their next step (issue, requeue, completion, flush sequence); its size is bounded by
 * the queue depth, so memory is constant whatever -n says. Each step writes its record and
 * schedules the next one.
 */
#include <errno.h>

#include "gen.h"

/* ---- the heap of requests in flight ---- */

static int req_before(const struct gen_req *a, const struct gen_req *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->order < b->order;
}

static void heap_push(struct gen *g, struct gen_req *rq)
{
	size_t i = g->nheap++;

	rq->order = g->order++;
	while (i) {
		size_t p = (i - 1) / 2;

		if (!req_before(rq, &g->heap[p]))
			break;
		g->heap[i] = g->heap[p];
		i = p;
	}
	g->heap[i] = *rq;
	g->devs[rq->dev].inflight++;
}

static void heap_pop(struct gen *g, struct gen_req *out)
{
	struct gen_req last;
	size_t i = 0;

	*out = g->heap[0];
	g->devs[out->dev].inflight--;
	last = g->heap[--g->nheap];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= g->nheap)
			break;
		if (c + 1 < g->nheap && req_before(&g->heap[c + 1], &g->heap[c]))
			c++;
		if (!req_before(&g->heap[c], &last))
			break;
		g->heap[i] = g->heap[c];
		i = c;
	}
	if (g->nheap)
		g->heap[i] = last;
}

/* ---- request life after issue ---- */

static uint64_t service_time(struct gen *g, const struct gen_req *rq)
{
	uint64_t t;

	if (rq->cats & TC(DISCARD))
		t = rnd_range(&g->r, 500000, 5000000);
	else if (rq->cdb)
		t = rnd_range(&g->r, 100000, 2000000);
	else if (rq->cats & TC(WRITE))
		t = rnd_range(&g->r, 15000, 120000) + rq->bytes / 2;
	else if (!rq->bytes)
		t = rnd_range(&g->r, 200000, 3000000);	/* cache flush */
	else
		t = rnd_range(&g->r, 40000, 250000) + rq->bytes / 2;
	if (one_in(&g->r, 400))
		t += rnd_range(&g->r, 1000000, 15000000);
	return t;
}

/* The request was just issued at @t: schedule its completion (or, rarely, a requeue). */
void model_after_issue(struct gen *g, struct gen_req *rq, uint64_t t, enum gen_step done)
{
	if (done == ST_COMPLETE && !rq->cdb && one_in(&g->r, 1500)) {
		rq->step = ST_REQUEUE;
		rq->time = t + rnd_range(&g->r, 2000, 20000);
		rq->cpu = rq->owner_cpu;
		rq->proc = PROC_KBLOCKD;
		heap_push(g, rq);
		return;
	}
	rq->step = (uint8_t)done;
	rq->time = t + service_time(g, rq);
	rq->cpu = rq->owner_cpu;
	if (g->o->cpus > 1 && one_in(&g->r, 4))
		rq->cpu = (uint16_t)rnd_below(&g->r, g->o->cpus);
	rq->proc = PROC_IDLE;
	if (rq->cpu == rq->owner_cpu && one_in(&g->r, 5))
		rq->proc = rq->owner;
	if (done == ST_COMPLETE && one_in(&g->r, 20000))
		rq->error = (uint16_t)-EIO;
	heap_push(g, rq);
}

void model_then(struct gen *g, struct gen_req *rq, enum gen_step step, uint64_t t)
{
	rq->step = (uint8_t)step;
	rq->time = t + rnd_range(&g->r, 3000, 60000);
	rq->cpu = rq->owner_cpu;
	rq->proc = PROC_KBLOCKD;
	heap_push(g, rq);
}

/* Take the next step of @rq (popped from the heap). Writes without draining the heap. */
static void step(struct gen *g, struct gen_req *rq)
{
	struct gen_ctx c = { rq->dev, rq->cpu, rq->proc, rq->time };
	uint64_t data = rq->cats & ~(TC(FLUSH) | TC(FUA));
	uint64_t flush = TC(READ) | TC(FLUSH);

	switch (rq->step) {
	case ST_COMPLETE:
		rec_rq(g, &c, BLK_TA_COMPLETE, rq, rq_cats(rq), rq->sector, rq->bytes, rq->error);
		break;
	case ST_REQUEUE:
		rec_rq(g, &c, BLK_TA_REQUEUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		model_then(g, rq, ST_INSERT, c.t);
		break;
	case ST_INSERT:
		rec_rq(g, &c, BLK_TA_INSERT, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		model_then(g, rq, ST_ISSUE, c.t);
		break;
	case ST_ISSUE:
		rec_rq(g, &c, BLK_TA_ISSUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		model_after_issue(g, rq, c.t, ST_COMPLETE);
		break;
	case ST_FL_PRE_ISSUE:
	case ST_FL_POST_ISSUE:
		rec_io(g, &c, BLK_TA_ISSUE, flush | TC(FS), 0, 0, 0, NULL, 0);
		model_after_issue(g, rq, c.t,
				  rq->step == ST_FL_PRE_ISSUE ? ST_FL_PRE_DONE : ST_FL_POST_DONE);
		break;
	case ST_FL_PRE_DONE:
		rec_io(g, &c, BLK_TA_COMPLETE, flush | TC(FS), 0, 0, 0, NULL, 0);
		model_then(g, rq, ST_FL_DATA_ISSUE, c.t);
		break;
	case ST_FL_DATA_ISSUE:
		rec_io(g, &c, BLK_TA_ISSUE, data | TC(FS), rq->sector, rq->bytes, 0, NULL, 0);
		model_after_issue(g, rq, c.t, ST_FL_DATA_DONE);
		break;
	case ST_FL_DATA_DONE:
		rec_io(g, &c, BLK_TA_COMPLETE, data | TC(FS), rq->sector, rq->bytes, 0, NULL, 0);
		model_then(g, rq, ST_FL_POST_ISSUE, c.t);
		break;
	case ST_FL_POST_DONE:
		rec_io(g, &c, BLK_TA_COMPLETE, flush | TC(FS), 0, 0, 0, NULL, 0);
		rq->proc = PROC_IDLE;
		rq->step = ST_FL_END;
		rq->time = c.t;
		heap_push(g, rq);
		break;
	case ST_FL_END:
		rec_io(g, &c, BLK_TA_COMPLETE, data | TC(FS), rq->sector, 0, 0, NULL, 0);
		break;
	}
}

/* Let every request step that is due by @t happen first, so that time only moves forward. */
void model_drain(struct gen *g, uint64_t t)
{
	struct gen_req rq;

	while (g->nheap && g->heap[0].time <= t && !g->done) {
		heap_pop(g, &rq);
		step(g, &rq);
	}
}

/* Wait (in simulated time) until @need more requests fit on the device of @c. */
void model_make_room(struct gen *g, struct gen_ctx *c, unsigned int need)
{
	struct gen_req rq;

	while (g->devs[c->dev].inflight + need > QDEPTH && g->nheap && !g->done) {
		heap_pop(g, &rq);
		step(g, &rq);
	}
	if (c->t <= g->clock)
		c->t = g->clock + rec_gap(g);
}
