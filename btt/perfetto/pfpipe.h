/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drawing of btt --perfetto on a second thread: perfetto-out.c says what to draw as it
 * would call pfsort.h; the calls are copied into chunks that a thread hands to pfsort.c
 * (which puts the records in time order for pfdraw.c and the writer) while the next chunk
 * fills; that thread writes the file too. It is made when the first chunk is full: a small
 * trace is drawn at the end on the caller's thread. Without a thread
 * (it could not be made), a chunk is drawn when it is full, on the caller's thread. Memory:
 * at most PFPIPE_CHUNKS chunks.
 *
 * What is drawn is put in time order there (pfsort.h), on the drawing's thread: the caller
 * says what to draw and when nothing earlier can come (pfpipe_mark()). An I/O is known by
 * its slot; the slots the drawing is done with come back (pfpipe_take_freed()).
 *
 * Errors come later: pfpipe_error() is the first error of the drawing seen so far (0 or
 * -errno, as pfdraw.h returns them), pfpipe_finish() the final one.
 */
#ifndef BTT_PFPIPE_H
#define BTT_PFPIPE_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto/pfdraw.h"
#include "perfetto/pfsort.h"

struct blk_output;
struct blk_perfetto_opts;
struct btt_clock;
struct pfpipe;

#define PFPIPE_CHUNKS 8

/* A drawing onto @out (see pfdraw_new()). Exits without memory. */
struct pfpipe *pfpipe_new(struct blk_output *out);

/* Start the trace (pfdraw_start()), describe a device (pfdraw_device()): at once, in order
 * with the records (a device before its records). */
void pfpipe_start(struct pfpipe *pp, const struct blk_perfetto_opts *o);

/*
 * pfpipe_start() for btt's trace: times from @first_ts (its first event), the wall clock of
 * @clock (may be NULL) tied to time 0 when it has one (this settles @clock: btt_clock_base()).
 */
void pfpipe_begin(struct pfpipe *pp, uint64_t first_ts, struct btt_clock *clock);
void pfpipe_device(struct pfpipe *pp, const struct btt_dev *dev);

/* The calls of pfsort.h, which they become on the drawing's side (@w: handed over). */
void pfpipe_rec(struct pfpipe *pp, const struct pf_rec *r, uint64_t now);
void pfpipe_queued(struct pfpipe *pp, const struct pf_rec *r, const struct pf_io *io, uint64_t now);
void pfpipe_mark(struct pfpipe *pp, uint64_t w);
void pfpipe_flow(struct pfpipe *pp, uint32_t slot, uint32_t gen, uint64_t end, struct pf_wait *w);
void pfpipe_drain(struct pfpipe *pp);

/* Hand what was said so far to the drawing's thread, waking it (the end of the input: the
 * caller then has other work; more may be said after). */
void pfpipe_flush(struct pfpipe *pp);

/* pfsort_bflows(), before the pfpipe_run() of @slot (@flows handed over) */
void pfpipe_bflows(struct pfpipe *pp, uint32_t slot, uint64_t *flows, unsigned int n);

/* pfsort_run() for @slot: the run to fill, at once (before any other call of this file) */
struct pf_run *pfpipe_run(struct pfpipe *pp, uint32_t slot);

/* Up to @max slots the drawing freed (pfsort_freed()) into @v: their number. */
size_t pfpipe_take_freed(struct pfpipe *pp, uint32_t *v, size_t max);

/* The first error of the drawing seen so far. */
int pfpipe_error(struct pfpipe *pp);

/*
 * Draw all that was said, flush (pfdraw_flush()) and finish the drawing (pfdraw_free()),
 * end the thread and free @pp (NULL allowed); what still waits in pfsort.h is dropped
 * (pfpipe_drain() first draws it). The drawing's counts in *@st (NULL: not wanted).
 * Return: 0 or the first error.
 */
int pfpipe_finish(struct pfpipe *pp, struct pfsort_stats *st);

#endif /* BTT_PFPIPE_H */
