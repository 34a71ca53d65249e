/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wall-clock time of trace events (blkparse's %z). When tracing starts, the kernel records a
 * TN_TIMESTAMP note: the wall clock (seconds, nanoseconds) at the note's trace time. An
 * event's wall clock is the note's plus the event's distance from the note.
 *
 * That needs the events' times on the notes' clock. A merged file written by blkparse -d has
 * its events rebased to its first one (time 0) while its notes keep their own times, and the
 * amount subtracted is recorded nowhere. Such an input is recognised by its first event coming
 * more than a second before the timestamp note. The amount is then taken from the process note
 * that the kernel writes just before a task's first event: the earliest note of the first
 * event's device, CPU and process is taken to be at the time of that event. Times are then
 * early by the time from that note to the event: the nanoseconds of the kernel's trace path
 * (about 130 us in a TCG-emulated VM). Without such a note, the first event is taken to come
 * at the timestamp note, and times are early by the time from the start of tracing to it.
 */
#ifndef BLK_WALLCLOCK_H
#define BLK_WALLCLOCK_H

#include <stdint.h>

#include "blk/event.h"

enum blk_wall_kind {
	BLK_WALL_NONE, /* no timestamp note (yet): no wall clock */
	BLK_WALL_EXACT, /* the events' times are on the notes' clock */
	BLK_WALL_ESTIMATED, /* rebased input, dated by its first event's process note */
	BLK_WALL_GUESSED, /* rebased input without that note: first event at the timestamp */
};

/* Process notes kept until the first event is known (a merged file has them first). */
#define BLK_WALLCLOCK_MAX_NOTES 65536

struct blk_wallclock;

/**
 * blk_wallclock_new() - an empty wall clock
 * Return: a handle to free with blk_wallclock_free(), or NULL (ENOMEM).
 */
struct blk_wallclock *blk_wallclock_new(void);

/* Free @w; NULL is allowed. */
void blk_wallclock_free(struct blk_wallclock *w);

/*
 * blk_wallclock_record() - take note of a record as it is read, with its time as in the
 * input (before any rebasing): timestamp and process notes, and events (the earliest one
 * fed before the first answer is the input's first event). Other notes are ignored. Process
 * notes beyond BLK_WALLCLOCK_MAX_NOTES are not kept.
 */
void blk_wallclock_record(struct blk_wallclock *w, const struct blk_event *ev);

/**
 * blk_wallclock_base() - wall clock at input time 0: an event's is *@sec.*@nsec plus its time
 * The first answer with a timestamp note known settles which event came first and, for a
 * rebased input, its time; the process notes kept are freed then. A later timestamp note
 * still changes the answer (see blk_wallclock_generation()).
 * Return: the kind of answer; *@sec and *@nsec (0..999999999) are set unless BLK_WALL_NONE.
 */
enum blk_wall_kind blk_wallclock_base(struct blk_wallclock *w, int64_t *sec, long *nsec);

/*
 * blk_wallclock_offset() - what the first blk_wallclock_base() with a timestamp note settled:
 * the nanoseconds added to input times to put them on the notes' clock (not 0 only for a
 * rebased input, BLK_WALL_ESTIMATED or BLK_WALL_GUESSED: a note's own time minus it is on
 * the events' clock); 0 before that.
 */
uint64_t blk_wallclock_offset(const struct blk_wallclock *w);

/* A number that changes whenever blk_wallclock_base() may answer differently. */
unsigned int blk_wallclock_generation(const struct blk_wallclock *w);

#endif /* BLK_WALLCLOCK_H */
