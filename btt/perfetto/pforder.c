// SPDX-License-Identifier: GPL-2.0
/*
 * The waiting records of btt --perfetto (see pforder.h): a FIFO of the records that came
 * in order, a FIFO of the runs that came in order, and a binary heap of the others and of
 * the runs being taken.
 */
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "perfetto/pforder.h"

/* without branches: which child is smaller is a coin toss, which a branch would mispredict */
static inline int ent_before(const struct pfo_ent *x, const struct pfo_ent *y)
{
	return (x->ts < y->ts) | ((x->ts == y->ts) & (x->order < y->order));
}

/* @e into the hole at @i, moved up to its place */
static void sift_up(struct pforder *q, size_t i, struct pfo_ent e)
{
	for (; i && ent_before(&e, &q->heap[(i - 1) / 2]); i = (i - 1) / 2)
		q->heap[i] = q->heap[(i - 1) / 2];
	q->heap[i] = e;
}

static void heap_up(struct pforder *q, struct pfo_ent e)
{
	q->heap = array_grow(q->heap, &q->aheap, q->nheap, sizeof(*q->heap));
	sift_up(q, q->nheap++, e);
}

/* the smaller child of @i, 0 if it has none */
static inline size_t smaller_child(const struct pforder *q, size_t i)
{
	size_t c = 2 * i + 1;

	if (c >= q->nheap)
		return 0;
	if (c + 1 < q->nheap)
		c += (size_t)ent_before(&q->heap[c + 1], &q->heap[c]);
	return c;
}

/* put @e at the top and move it down to its place */
static void heap_down(struct pforder *q, struct pfo_ent e)
{
	size_t i = 0, c;

	while ((c = smaller_child(q, i)) && ent_before(&q->heap[c], &e)) {
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = e;
}

/*
 * The top leaves. The last entry, which takes its place, belongs near the bottom: the hole
 * goes down the smaller children to a leaf (one comparison a level) and the last entry up
 * from there (a level or two), not down from the top (two a level, all the way): on
 * large-perf the pops were 470 instructions each, a twelfth of the drawing's thread.
 */
static void heap_pop(struct pforder *q)
{
	struct pfo_ent last = q->heap[--q->nheap];
	size_t i = 0, c;

	if (!q->nheap)
		return;
	while ((c = smaller_child(q, i))) {
		q->heap[i] = q->heap[c];
		i = c;
	}
	sift_up(q, i, last);
}

/* a ring of *@cap elements of @size (a power of two, or 0: none yet) holding @n from *@head:
 * twice as large (@first the first time), its elements moved to the front */
static void *ring_grow(void *ring, size_t *cap, size_t *head, size_t n, size_t size, size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first, tail = n < *cap - *head ? n : *cap - *head;
	unsigned char *r = xmalloc(ncap * size);

	if (n) {
		memcpy(r, (unsigned char *)ring + *head * size, tail * size);
		memcpy(r + tail * size, ring, (n - tail) * size);
	}
	free(ring);
	*cap = ncap;
	*head = 0;
	return r;
}

void pfo_push(struct pforder *q, const struct pf_rec *r, uint64_t now)
{
	size_t i;

	q->n++;
	if (r->ts <= now) {
		const struct pf_rec *t = q->fn ? &q->fifo[(q->fhead + q->fn - 1) & (q->fcap - 1)]
					       : NULL;

		if (!t || pf_before(t->ts, t->order, r->ts, r->order)) {
			if (q->fn == q->fcap)
				q->fifo = ring_grow(q->fifo, &q->fcap, &q->fhead, q->fn,
						    sizeof(*q->fifo), 1024);
			q->fifo[(q->fhead + q->fn++) & (q->fcap - 1)] = *r;
			return;
		}
	}
	if (q->pool_free) {
		i = q->pool_free - 1;
		q->pool_free = (size_t)q->pool[i].v;
	} else {
		q->pool = array_grow(q->pool, &q->apool, q->npool, sizeof(*q->pool));
		i = q->npool++;
	}
	q->pool[i] = *r;
	heap_up(q, (struct pfo_ent){r->ts, r->order, (uint32_t)i});
}

void pfo_push_run(struct pforder *q, uint64_t ts, uint64_t order, uint32_t id, uint32_t count)
{
	struct pfo_ent e = {ts, order, PFO_RUN | id};

	q->n += count;
	if (q->rn && !ent_before(&q->runs[(q->rhead + q->rn - 1) & (q->rcap - 1)], &e)) {
		heap_up(q, e);
		return;
	}
	if (q->rn == q->rcap)
		q->runs = ring_grow(q->runs, &q->rcap, &q->rhead, q->rn, sizeof(*q->runs), 256);
	q->runs[(q->rhead + q->rn++) & (q->rcap - 1)] = e;
}

int pfo_pop(struct pforder *q, struct pf_rec *r)
{
	enum pfo_part p = pfo_first(q, &r->ts, &r->order);
	const struct pfo_ent *h;

	q->n--;
	if (p == PFO_RECS) {
		*r = q->fifo[q->fhead];
		q->fhead = (q->fhead + 1) & (q->fcap - 1);
		q->fn--;
		return 0;
	}
	q->taken_fifo = p == PFO_RUNS;
	h = q->taken_fifo ? &q->runs[q->rhead] : &q->heap[0];
	if (h->ref & PFO_RUN) {
		r->slot = h->ref & ~PFO_RUN;
		return 1;
	}
	*r = q->pool[h->ref];
	q->pool[h->ref].v = q->pool_free;
	q->pool_free = (size_t)h->ref + 1;
	heap_pop(q);
	return 0;
}

/* the head of the FIFO of runs leaves it */
static void runs_pop(struct pforder *q)
{
	q->rhead = (q->rhead + 1) & (q->rcap - 1);
	q->rn--;
}

void pfo_run_next(struct pforder *q, uint64_t ts, uint64_t order)
{
	struct pfo_ent *head, e = {ts, order, 0};

	if (!q->taken_fifo) {
		e.ref = q->heap[0].ref;
		heap_down(q, e);
		return;
	}
	head = &q->runs[q->rhead];
	e.ref = head->ref;
	/* still before the next run of the FIFO: it stays at the head, in order */
	if (q->rn == 1 || ent_before(&e, &q->runs[(q->rhead + 1) & (q->rcap - 1)])) {
		*head = e;
		return;
	}
	runs_pop(q);
	heap_up(q, e);
}

void pfo_run_drop(struct pforder *q, uint32_t left)
{
	q->n -= left;
	if (q->taken_fifo)
		runs_pop(q);
	else
		heap_pop(q);
}

void pfo_free(struct pforder *q)
{
	free(q->fifo);
	free(q->heap);
	free(q->runs);
	free(q->pool);
	memset(q, 0, sizeof(*q));
}
