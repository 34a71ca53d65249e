/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse's origin notes (blk/origin.h), and the origin and file of each event for the
 * -f/-F fields %o, %O, %f, %F. The notes are read in-band (the tracefs backend writes them
 * in the devices' streams) or from the side files NAME.origin.blktrace.N beside an input's
 * per-CPU files (the relay backend's: merged on their own, read in step with the events, as
 * far as the time of the event at hand; their names read first, in a pass of their own).
 * The names (FILE) are taken as they are read; the runs and maps
 * (DIRTY, FMAP) wait for the events of their time, which blkparse prints after reading a
 * batch ahead (see take_due() in parse-origin.c). A Q is looked
 * up in the notes (lib/origin.c: a write takes the dirty pages it covers); the other events
 * of its I/O are given the Q's answer while it is remembered (a table of PO_SLOTS slots by
 * device and first sector: the last I/O queued there, until its C), and their file from the
 * maps at their own sector. Front-end code for blkparse's run.
 */
#ifndef BLKPARSE_ORIGIN_H
#define BLKPARSE_ORIGIN_H

#include "blk/event.h"
#include "blk/format.h"
#include "blk/origin.h"
#include "blk/output.h"

struct parse_origin;

/* an empty one; dies when out of memory */
struct parse_origin *parse_origin_new(void);
void parse_origin_free(struct parse_origin *p);

/*
 * the note @ev as read from @input (file mode: its input file; else NULL): 1 an origin
 * note (kept or taken), 0 not one; dies on ENOMEM
 */
int parse_origin_note(struct parse_origin *p, const struct blk_event *ev, const void *input);

/*
 * The origin and file of event @ev of @input (as for parse_origin_note()), at input time @t
 * (its time before blkparse rebased it), queued by a task named @comm (NULL when not
 * known): the notes due taken first; returns what %o %O %f %F print (valid until the next
 * call), or NULL when none is known
 */
const struct blk_fmt_origin *parse_origin_event(struct parse_origin *p, const struct blk_event *ev,
						const void *input, uint64_t t, const char *comm);

/*
 * the FILE notes of the regular files @paths (the run's inputs) taken now, at the first origin
 * note: the tracer writes the names at the end of the trace, and the events before them
 * would print "ino N" (a pipe's come as they come); nothing when the notes are only dumped
 */
void parse_origin_names_ahead(struct parse_origin *p, char *const *paths, size_t n);

/* whether input @name (in @dir, or the current directory if NULL) has side files */
int parse_origin_side_exists(const char *dir, const char *name);

/*
 * File mode: read the side files of input @name (in @dir, or the current directory if
 * NULL), NAME.origin.blktrace.0, .1, ... up to the first that does not exist: their file
 * names now (-d: written into the dump now), their runs and maps in step with the events.
 * Return the number of files opened (0 if none), dying on an open error.
 */
int parse_origin_add_files(struct parse_origin *p, const char *dir, const char *name);

/* what the notes held that could not be used */
void parse_origin_stats(const struct parse_origin *p, struct blk_origin_stats *st);

/*
 * At the end: an error per side file that stopped on damaged data, a warning for their
 * records dropped (a cpu field not their file's) or skipped (not origin notes). Return 1 if
 * a file was damaged, else 0.
 */
int parse_origin_side_report(const struct parse_origin *p);

/*
 * -d: the DIRTY and FMAP notes go into @dump as they are taken (in time order with the
 * events, as the I/O wait notes do), not as read, so that a reader of the merged file (btt)
 * has each run and map where it belongs among the events; @apply: also look the events up
 * in them (text with %o %O %f %F), else the notes are only written
 */
void parse_origin_set_dump(struct parse_origin *p, struct blk_output *dump, int apply);

/* -d without text: the notes due before event @ev of @input (at input time @t) written out */
void parse_origin_emit(struct parse_origin *p, const struct blk_event *ev, const void *input,
		       uint64_t t);

/*
 * -d of the raw merge (no record decoded): the time (as read) of the earliest note waiting,
 * UINT64_MAX if none; and the notes of time @t or before written out, in time order
 */
uint64_t parse_origin_due(struct parse_origin *p);
void parse_origin_emit_until(struct parse_origin *p, uint64_t t);

/* the end: the notes still waiting written out; 0, or -EIO if the dump failed at any time */
int parse_origin_flush(struct parse_origin *p);

#endif /* BLKPARSE_ORIGIN_H */
