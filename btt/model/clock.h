/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wall clock of the trace btt reads, once for every output that dates its events
 * (--export's rows, --perfetto's clock snapshot): lib/wallclock.c fed with each record as
 * it is read, before the model, as blkparse's %z sees them.
 */
#ifndef BTT_CLOCK_H
#define BTT_CLOCK_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/wallclock.h"
#include "model/iomodel.h"

struct btt_clock;

/*
 * btt_clock_new() - a clock fed by the stream *@next, *@src, which it wraps: *@next and
 * *@src are replaced by the wrapper, to be read instead; @ev (may be NULL) is the record
 * read already. Until the first btt_clock_base() every record is fed to it, after it only
 * notes (a later timestamp note is seen: btt_clock_late_note()). Exits when out of memory.
 */
struct btt_clock *btt_clock_new(iomodel_next_fn *next, void **src, const struct blk_event *ev);

void btt_clock_free(struct btt_clock *c);

/*
 * btt_clock_base() - the wall clock at trace time 0 (blk_wallclock_base()); the first call
 * settles it for the rest of the run: later calls give the same answer.
 */
enum blk_wall_kind btt_clock_base(struct btt_clock *c, int64_t *sec, long *nsec);

/*
 * btt_clock_note_offset() - the nanoseconds to take from a note's own time (a DIRTY note's)
 * to put it on the events' clock: 0 but for a merged file of blkparse -d, which rebases its
 * events and not its notes (the amount estimated as the wall clock's, blk/wallclock.h).
 * Settled by the first btt_clock_base(); 0 before it.
 */
uint64_t btt_clock_note_offset(const struct btt_clock *c);

/* The first event read (not a note), its pdu not kept; NULL before it. */
const struct blk_event *btt_clock_first(const struct btt_clock *c);

/*
 * btt_clock_late_note() - a timestamp note read after the clock was settled without one
 * (whose answer it would have changed): 1 and its trace time in *@time, else 0.
 */
int btt_clock_late_note(const struct btt_clock *c, uint64_t *time);

#endif /* BTT_CLOCK_H */
