/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records btt --perfetto holds back until they can be drawn in time order (why: see
 * perfetto-out.c), handed out smallest (ts, order) first.
 *
 * Most records come in time order (counters, "queued" instants, completions: at the time
 * of the event just read); they wait in a FIFO, at no cost but a copy. The others (the
 * slices of an I/O, drawn at its completion back from its Q) go into a binary heap. An
 * I/O's records (its slice's begin, its stages, its end) are one run, in order among
 * themselves: the heap holds the run once, keyed by its next record, so it stays as small
 * as the number of I/Os waiting, not of their records. The caller keeps a run's records;
 * the queue knows it by a number (the I/O's slot).
 *
 * Runs come as their I/Os complete, most in the order of their first records (an I/O's Q):
 * those wait in a FIFO of runs, and go into the heap only once their first record is taken
 * (a run then overlaps the time drawn: the heap holds the I/Os in flight at that time, not
 * all that wait). Only a run that comes out of order goes into the heap at once. (With
 * btt --perfetto's hold of 50 ms, the heap held every I/O of the last 50 ms.)
 */
#ifndef BTT_PFORDER_H
#define BTT_PFORDER_H

#include <stddef.h>
#include <stdint.h>

/* a record to draw at @ts; at one time the smaller @order first; @v, @slot, @kind, @x: the
 * caller's (32 bytes: the FIFO holds thousands) */
struct pf_rec {
	uint64_t ts, order;
	uint64_t v;
	uint32_t slot;
	uint16_t kind, x;
};

/* in the heap: a single record (its index in the pool) or a run (PFO_RUN | its id) */
#define PFO_RUN (1u << 31)
struct pfo_ent {
	uint64_t ts, order;
	uint32_t ref;
};

/* Zeroed is empty. */
struct pforder {
	struct pf_rec *fifo; /* a ring of fcap (a power of two) */
	size_t fcap, fhead, fn;
	struct pfo_ent *heap;
	size_t nheap, aheap;
	struct pfo_ent *runs; /* the FIFO of runs in order: a ring of rcap (a power of two) */
	size_t rcap, rhead, rn;
	int taken_fifo; /* the run just taken is the head of runs (else the heap's top) */
	struct pf_rec *pool; /* the heap's single records */
	size_t npool, apool;
	size_t pool_free; /* a free list through pool[].v: index + 1, 0: none */
	size_t n; /* records waiting, those of runs counted */
};

static inline int pf_before(uint64_t ts, uint64_t order, uint64_t ts2, uint64_t order2)
{
	return ts < ts2 || (ts == ts2 && order < order2);
}

/* Record @r (copied); @now: no later time has been read (later records go to the heap). */
void pfo_push(struct pforder *q, const struct pf_rec *r, uint64_t now);

/* Run @id of @count records, the first at (@ts, @order). */
void pfo_push_run(struct pforder *q, uint64_t ts, uint64_t order, uint32_t id, uint32_t count);

/* the part of a queue that holds its smallest (ts, order) */
enum pfo_part { PFO_EMPTY, PFO_RECS, PFO_RUNS, PFO_HEAP };

/* Which part of @q holds the smallest record waiting, its time and order in *@ts, *@order
 * (PFO_EMPTY: nothing waits, both left as they are). */
static inline enum pfo_part pfo_first(const struct pforder *q, uint64_t *ts, uint64_t *order)
{
	const struct pf_rec *f = q->fn ? &q->fifo[q->fhead] : NULL;
	const struct pfo_ent *h = q->nheap ? &q->heap[0] : NULL;
	const struct pfo_ent *r = q->rn ? &q->runs[q->rhead] : NULL;
	enum pfo_part p = h ? PFO_HEAP : PFO_EMPTY;

	if (r && (!h || pf_before(r->ts, r->order, h->ts, h->order))) {
		h = r;
		p = PFO_RUNS;
	}
	if (f && (!h || pf_before(f->ts, f->order, h->ts, h->order))) {
		*ts = f->ts;
		*order = f->order;
		return PFO_RECS;
	}
	if (h) {
		*ts = h->ts;
		*order = h->order;
	}
	return p;
}

/* 1 and the smallest time and order waiting in *@ts, *@order; 0 when nothing waits. */
static inline int pfo_min(const struct pforder *q, uint64_t *ts, uint64_t *order)
{
	return pfo_first(q, ts, order) != PFO_EMPTY;
}

/*
 * Take the smallest record (something must wait): 0 and the record in *@r, or 1 for the
 * next record of a run, its id in r->slot (and its time and order in r->ts, r->order). A
 * run taken must be settled at once, before anything else is pushed: pfo_run_next() with
 * the key of its next record, or pfo_run_drop() when it has none left.
 */
int pfo_pop(struct pforder *q, struct pf_rec *r);
void pfo_run_next(struct pforder *q, uint64_t ts, uint64_t order);

/* The run just taken leaves the queue, with @left records of it not drawn. */
void pfo_run_drop(struct pforder *q, uint32_t left);

/*
 * @count more records of the run just taken are taken with it (before pfo_run_next() or
 * pfo_run_drop()): those at the same time, which nothing can come between.
 */
static inline void pfo_run_skip(struct pforder *q, uint32_t count)
{
	q->n -= count;
}

void pfo_free(struct pforder *q);

#endif /* BTT_PFORDER_H */
