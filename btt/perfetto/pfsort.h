/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of btt --perfetto in time order, on the drawing's side (pfpipe.h's thread):
 * perfetto-out.c numbers what is to be drawn (a record: a counter value, an instant, the
 * start or end of a wait; a run: the slice of an I/O with its stages) and says, now and
 * then, before which time nothing more can come (the watermark, see perfetto-out.c); here
 * the records wait in a pforder.h queue and go to pfdraw.h smallest (time, order) first.
 *
 * An I/O is known by its slot (perfetto-out.c's number for it) from its "queued" record
 * (pfsort_queued()) to the end of its slice: then the slot is freed here (and its flows
 * from dirtying bursts), and goes back to perfetto-out.c through pfsort_freed() (which may
 * give the number to another I/O only then). Each slot has a generation, counted up when it
 * is freed, on both sides alike.
 *
 * After an error of the drawing (pfsort_error()), records are no longer drawn: what they
 * own is freed, their slots are freed as if drawn.
 */
#ifndef BTT_PFSORT_H
#define BTT_PFSORT_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto/pfdraw.h"
#include "perfetto/pforder.h"

struct pfsort;

/* what a record is (struct pf_rec's kind); @slot is a device's index, or an I/O's slot */
enum pf_rec_kind {
	PFR_COUNTER, /* counter x of device slot: v (an int64) */
	PFR_RATE, /* the same, v a double's bits */
	PFR_QUEUED, /* I/O slot was queued (pfsort_queued()) */
	PFR_UNPLUG, /* x: by the timer; v: the count */
	PFR_REQUEUE, /* v: the sector */
	PFR_MESSAGE, /* v: a malloc()ed text, freed once drawn */
	PFR_WAIT_BEGIN, /* v: a struct pf_wait (malloc()ed), which PFR_WAIT_END frees */
	PFR_WAIT_END,
	PFR_BURST /* v: a struct pf_burst (malloc()ed), freed once drawn */
};

/* the most records of a run: the slice's begin, up to six stages, its end */
#define PF_RUN_MAX 8

/*
 * struct pf_run - the slice of a completed (or lost) I/O, as perfetto-out.c makes it
 * @io: the I/O (its flows to remapped I/Os included)
 * @rts, @rname, @rn: record k at rts[k], in order 1 << 63 | (rseq + k); 0 the begin,
 *	1..rn - 2 the stages (named rname[k], a string that lives as long as the drawing),
 *	rn - 1 the end
 * @up, @up_gen: with io.flow_from, the slot (and its generation) of the I/O it was
 *	remapped from, whose slice starts that flow
 */
struct pf_run {
	struct pf_io io;
	uint64_t rts[PF_RUN_MAX];
	const char *rname[PF_RUN_MAX];
	uint64_t rseq;
	uint32_t up, up_gen;
	uint8_t rn;
};

/* what the remarks say, once the drawing is done */
struct pfsort_stats {
	uint64_t cancelled; /* remap flows not drawn: the start would have come after the end */
	uint64_t wait_flows; /* waits with a flow from their thread's last completion */
	uint64_t wait_late; /* waits whose thread's last completion was drawn already */
};

/* The ordering in front of @d (the caller's). Exits without memory. */
struct pfsort *pfsort_new(struct pfdraw *d);

/* Record @r; @now: no record later than it has been read (a hint: later ones wait in the
 * heap, not the FIFO). */
void pfsort_push(struct pfsort *s, const struct pf_rec *r, uint64_t now);

/* @r (a PFR_QUEUED) starts I/O @r->slot: @io's dev, proc, pid and flow_in are what its
 * "queued" instant needs. */
void pfsort_queued(struct pfsort *s, const struct pf_rec *r, const struct pf_io *io, uint64_t now);

/* The slice of I/O @slot (copied). */
void pfsort_run(struct pfsort *s, uint32_t slot, const struct pf_run *run);

/* Before its pfsort_run(): the flows into I/O @slot from dirtying bursts, @flows (a malloc()ed
 * array, handed over), @n of them (at most PF_MAX_BURST_FLOWS). */
void pfsort_bflows(struct pfsort *s, uint32_t slot, uint64_t *flows, unsigned int n);

/* Nothing before @w is still to come: what waits before it is drawn. */
void pfsort_mark(struct pfsort *s, uint64_t w);

/*
 * The wait @w ended at @end; its thread's last completed I/O was slot @slot in generation
 * @gen. If that I/O's end is still to be drawn (and ended by @end, and starts no other wait's
 * flow), it starts flow w->flow; otherwise w->flow becomes 0.
 */
void pfsort_flow(struct pfsort *s, uint32_t slot, uint32_t gen, uint64_t end, struct pf_wait *w);

/* Draw everything still waiting. */
void pfsort_drain(struct pfsort *s);

/* The slots freed since pfsort_freed_clear() (*@n of them), valid until the next call of
 * this file. */
const uint32_t *pfsort_freed(const struct pfsort *s, size_t *n);
void pfsort_freed_clear(struct pfsort *s);

/* The first error of the drawing (0 or -errno, as pfdraw.h returns them). */
int pfsort_error(const struct pfsort *s);

void pfsort_stats(const struct pfsort *s, struct pfsort_stats *st);

/* Free @s and what still waits (not drawn); NULL allowed. */
void pfsort_free(struct pfsort *s);

#endif /* BTT_PFSORT_H */
