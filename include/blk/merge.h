/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File-mode merge: k per-(device, CPU) inputs in, one time-ordered stream out, in exactly
 * the classic blkparse order: each input is read ahead in batches of @batch records (notify
 * records are handed to a callback while a batch is read, as the classic tool does), and the
 * input whose next record is earliest goes next; ties go to the input that has waited
 * longest. Memory is O(inputs x batch), whatever the trace length.
 */
#ifndef BLK_MERGE_H
#define BLK_MERGE_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/reader.h"

struct blk_merge;

enum blk_merge_note {
	BLK_NOTE_RECORD, /* a record was read into a batch: consume it or queue it */
	BLK_NOTE_BAD_CPU, /* a record's cpu field differs from its input's CPU; dropped */
	BLK_NOTE_END, /* the input ended (or failed) while a batch was read; @ev is NULL */
};

/*
 * Called while a batch is read. For BLK_NOTE_RECORD return 1 if the callback consumed the
 * record (it is then not merged; the classic tool does this for notify records), 0 to queue
 * it, or a negative errno to stop; other notes ignore the return value unless negative.
 * @ev is valid during the call only.
 */
typedef int (*blk_merge_note_fn)(void *arg, enum blk_merge_note what, void *owner, int cpu,
				 const struct blk_event *ev);

/**
 * blk_merge_new() - an empty merge that reads @batch records ahead per input
 * Return: a merge to free with blk_merge_free(), or NULL (ENOMEM).
 */
struct blk_merge *blk_merge_new(unsigned int batch, blk_merge_note_fn fn, void *arg);

/**
 * blk_merge_add() - add input @r (ownership passes to @m) for @owner's CPU @cpu
 * Its first batch is read now, in the order inputs are added.
 * Return: 0 or -errno (ENOMEM, or what the callback returned).
 */
int blk_merge_add(struct blk_merge *m, struct blk_reader *r, void *owner, int cpu);

/**
 * blk_merge_peek_time() - before the first blk_merge_next(): time of the earliest record
 * (the classic "genesis")
 * Return: 1 and *@t, or 0 if nothing is pending (or records were already taken).
 */
int blk_merge_peek_time(struct blk_merge *m, uint64_t *t);

/**
 * blk_merge_next() - the next record in merged order
 * Return: 1 with *@ev (time not rebased), *@owner and *@cpu set; 0 when all inputs are
 * exhausted or failed; a negative errno if the callback asked to stop.
 * ev->pdu stays valid until the next call.
 */
int blk_merge_next(struct blk_merge *m, struct blk_event *ev, void **owner, int *cpu);

/**
 * blk_merge_take() - blk_merge_next() without the copy
 * Return: as blk_merge_next(), with *@ev pointing at the record in @m's batch: the caller
 * may change it, and it (with its payload) stays valid until the next call.
 */
int blk_merge_take(struct blk_merge *m, struct blk_event **ev, void **owner, int *cpu);

/*
 * Raw mode, for a binary dump that needs no decoded record: each record is kept as the bytes
 * the dump writes, and taken with blk_merge_dump_raw() (blk_merge_take() and
 * blk_merge_next() are not for this mode). The note callback sees every record decoded, as
 * in the other mode. Set before the first blk_merge_add(); return 0 or -EBUSY.
 */
int blk_merge_set_raw(struct blk_merge *m);

/*
 * Raw mode: from now on the plain records of the input(s) added with @owner (host-order
 * version 7 records of the input's CPU that are not notes) are not shown to the note
 * callback, which has no more use for them; they are queued without being decoded. Notes,
 * records of another CPU and other inputs' records are shown as before. May be called from
 * the callback. Return 0, or -EINVAL if @m is not in raw mode.
 */
int blk_merge_quiet(struct blk_merge *m, void *owner);

struct blk_output;

/* What blk_merge_dump_raw() writes of the records it takes, and how. */
struct blk_merge_dump {
	uint32_t act_mask; /* a record whose action has none of these bits is left out */
	int msgs; /* message notes are written (else left out) */
	uint64_t rebase; /* subtracted from each time, written and compared below */
	uint64_t start; /* a record before this time is left out */
	uint64_t end; /* a record past it ends the dump (taken, not written) */
	uint64_t pause; /* a record at this time (as read) or later is not taken yet */
};

enum {
	BLK_DUMP_END = 0, /* every record was taken */
	BLK_DUMP_MORE = 1, /* @max records taken, or a batch read (the note callback ran) */
	BLK_DUMP_PAUSE = 2, /* the next record is at @d->pause or later: not taken */
	BLK_DUMP_STOP = 3, /* a record past the end was taken: the dump ends */
	BLK_DUMP_OUTPUT = 4, /* the output failed (blk_output_error()) */
};

/**
 * blk_merge_dump_raw() - raw mode: take the next records in merged order and write to @o
 * those that @d keeps, their times rebased
 * Runs of host-order version 7 records that follow each other in memory are copied at once
 * (blk_output_raw_bytes()), from the reader's buffer where the batch stayed there; others
 * one by one (blk_output_record()). Stops after @max (> 0) records, after reading a batch
 * (before any of its records is taken: the caller sees what the note callback did first),
 * before a record at @d->pause or later (the caller writes what must come before it, then
 * calls again with a later pause), or at a record past @d->end. *@taken: the records taken.
 * Return: a BLK_DUMP_* value, or -errno from the note callback (-EINVAL if @m is not in raw
 * mode or @max is 0).
 */
int blk_merge_dump_raw(struct blk_merge *m, struct blk_output *o, const struct blk_merge_dump *d,
		       unsigned int max, unsigned int *taken);

/* Number of inputs that stopped on damaged data; blk_merge_error(m, i) describes each. */
unsigned int blk_merge_nerrors(const struct blk_merge *m);
const char *blk_merge_error(const struct blk_merge *m, unsigned int i);

/* Free @m and its readers (NULL allowed). */
void blk_merge_free(struct blk_merge *m);

#endif /* BLK_MERGE_H */
