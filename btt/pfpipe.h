/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drawing of btt --perfetto on a second thread: perfetto-out.c says what to draw, in
 * order, as it would call pfdraw.h; the calls are copied into chunks that a thread hands
 * to pfdraw.c (and so to the writer) while the next chunk fills; the file is then written
 * on a thread of its own (blk_output_set_async()). The threads are made when the first
 * chunk is full: a small trace is drawn at the end on the caller's thread. Without a thread
 * (it could not be made), a chunk is drawn when it is full, on the caller's thread. Memory:
 * at most PFPIPE_CHUNKS chunks.
 *
 * An I/O is known by a number (its slot in perfetto-out.c) from pfpipe_begin() to
 * pfpipe_end(); the drawing keeps its copy of the I/O (its lane) meanwhile.
 *
 * Errors come later: pfpipe_error() is the first error of the drawing seen so far (0 or
 * -errno, as pfdraw.h returns them), pfpipe_finish() the final one.
 */
#ifndef BTT_PFPIPE_H
#define BTT_PFPIPE_H

#include <stdint.h>

#include "pfdraw.h"

struct blk_output;
struct blk_perfetto_opts;
struct pfpipe;

#define PFPIPE_CHUNKS 4

/* A drawing onto @out (see pfdraw_new()). Exits without memory. */
struct pfpipe *pfpipe_new(struct blk_output *out);

/* The calls of pfdraw.h, which they become on the drawing's side. */
void pfpipe_start(struct pfpipe *pp, const struct blk_perfetto_opts *o);
void pfpipe_device(struct pfpipe *pp, const struct btt_dev *dev);
void pfpipe_counter(struct pfpipe *pp, uint32_t dev, enum pf_ctr c, uint64_t ts, int64_t v);
void pfpipe_rate(struct pfpipe *pp, uint32_t dev, enum pf_ctr c, uint64_t ts, double v);
/* the queued counter of @io's device at @ts is @queued, and @io's "queued" instant */
void pfpipe_queued(struct pfpipe *pp, const struct pf_io *io, uint64_t ts, int64_t queued);
void pfpipe_begin(struct pfpipe *pp, uint32_t id, const struct pf_io *io, uint64_t ts);
void pfpipe_stage(struct pfpipe *pp, uint32_t id, uint64_t ts, const char *name, int first);
/* the queued counter of the I/O's device at @ts is @queued, and the I/O's end */
void pfpipe_end(struct pfpipe *pp, uint32_t id, uint64_t ts, int64_t queued, uint64_t flow);
/* @text: NULL, or a malloc()ed string the drawing frees */
void pfpipe_instant(struct pfpipe *pp, uint32_t dev, uint64_t ts, const char *name, const char *arg,
		    char *text, uint64_t value);
/* @w lives until pfpipe_wait_end(), which hands it over (the drawing frees it) */
void pfpipe_wait_begin(struct pfpipe *pp, const struct pf_wait *w, uint64_t ts);
void pfpipe_wait_end(struct pfpipe *pp, struct pf_wait *w, uint64_t ts);

/* The first error of the drawing seen so far. */
int pfpipe_error(struct pfpipe *pp);

/*
 * Draw all that was said, flush (pfdraw_flush()) and finish the drawing (pfdraw_free()),
 * end the thread and free @pp (NULL allowed). Return: 0 or the first error.
 */
int pfpipe_finish(struct pfpipe *pp);

#endif /* BTT_PFPIPE_H */
