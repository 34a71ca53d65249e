/* SPDX-License-Identifier: GPL-2.0 */
/*
 * I/O wait notes (the record layout is in trace.h: BLK_TN_IOWAIT, struct blk_iowait_pdu):
 * the decoded view, the encoder the tracer uses, the rebasing blkparse -d applies, and a
 * bounded time-ordered queue for a reader that meets them out of order (a pipe).
 */
#ifndef BLK_IOWAIT_H
#define BLK_IOWAIT_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/strbuf.h"
#include "blk/trace.h"

/* One wait, in host order. Times are on the record's time base (see rebase). */
struct blk_iowait {
	uint64_t end; /* the record's time: when the wait ended */
	uint64_t duration; /* ns */
	int64_t start; /* end - duration: negative when it began before a merged trace's 0 */
	uint64_t rebase; /* subtracted from the times by blkparse -d: add it for trace-clock time */
	uint32_t tgid, tid;
	uint32_t device; /* the record's device: the trace's first device */
	uint32_t io_dev; /* with BLK_IOWAIT_F_IO: the device of the task's I/O in flight */
	int cpu; /* the CPU the task went on running on (the record's cpu) */
	int sleep_cpu; /* the CPU the wait began on, -1 if not known */
	int waker_cpu; /* the CPU that woke the task, -1 if not known */
	enum blk_iowait_source source;
	enum blk_iowait_func func;
	unsigned int flags; /* enum blk_iowait_flags */
	char comm[17]; /* NUL-terminated */
	/* with BLK_IOWAIT_F_WAKER_IO: the task that woke it (else 0 and "") */
	uint32_t waker_tid;
	char waker_comm[17];
};

/* Whether @ev is an I/O wait note (by its action; the payload is checked by decode). */
static inline int blk_event_is_iowait(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_IOWAIT);
}

/**
 * blk_iowait_decode() - the wait held by @ev
 * Return: 0 and *@w filled; -EINVAL if @ev is not an I/O wait note or its payload is
 * damaged (too short, bad magic in either byte order); -EPROTONOSUPPORT for a payload
 * version this library does not know.
 */
int blk_iowait_decode(const struct blk_event *ev, struct blk_iowait *w);

/**
 * blk_iowait_encode() - the record of @w (version 7, host order) into @ev, its payload
 * into @pdu; ev->pdu points at @pdu, which must outlive @ev. Encode it with
 * blk_event_encode() or blk_output_event(). @w->start and @w->rebase are not used (a new
 * record has rebase 0; the start is end - duration).
 */
void blk_iowait_encode(const struct blk_iowait *w, struct blk_iowait_pdu *pdu,
		       struct blk_event *ev);

/**
 * blk_iowait_rebase() - what blkparse -d writes for the note @ev when the events' times
 * have @amount subtracted: a copy in @pdu (ev->pdu pointed at it) with @amount added to
 * its rebase field, and ev->time lowered by @amount
 * Return: 0; -ERANGE if the wait ended before @amount (its time would be negative; @ev
 * unchanged); -EINVAL or -EPROTONOSUPPORT as blk_iowait_decode().
 */
int blk_iowait_rebase(struct blk_event *ev, struct blk_iowait_pdu *pdu, uint64_t amount);

/**
 * blk_iowait_format() - append blkparse --iowait's line for the note @ev to @sb:
 *   "DEV CPU 0 END TID w N [comm] start=S ns=D tgid=T sleep_cpu=C waker_cpu=W source=X"
 * then " io=MAJ,MIN" (an I/O of the task in flight on that device), " func=NAME" when known;
 * header columns as a message line's, END = ev->time, S = END - D (signed), "-" for what
 * is not known.
 * Return: 0, or the error of blk_iowait_decode() (nothing appended).
 */
int blk_iowait_format(const struct blk_event *ev, struct blk_strbuf *sb);

/* "module", "kprobe", "sched" (or "unknown"): static strings. */
const char *blk_iowait_source_name(enum blk_iowait_source s);
/* "io_schedule", "io_schedule_timeout", "blk_io_schedule", or NULL if not known. */
const char *blk_iowait_func_name(enum blk_iowait_func f);

/*
 * A bounded queue of wait notes ordered by time, for a reader that takes them as they are
 * read (a pipe) and hands them out in step with the events: copies of the records are kept
 * (no pointer into the input), at most @max of them.
 */
struct blk_iowait_queue;

/* An empty queue of at most @max records (0: 65536). NULL with errno set. */
struct blk_iowait_queue *blk_iowait_queue_new(size_t max);

/* Free @q and what it holds (NULL allowed). */
void blk_iowait_queue_free(struct blk_iowait_queue *q);

/**
 * blk_iowait_queue_push() - keep a copy of @ev (any record, normally a wait note)
 * Return: 0; 1 if the queue was full (nothing kept: take the earliest out first);
 * -ENOMEM.
 */
int blk_iowait_queue_push(struct blk_iowait_queue *q, const struct blk_event *ev);

/**
 * blk_iowait_queue_peek() - the earliest record held (ties: the first pushed)
 * Return: 1 and *@ev (ev->pdu valid until the record is popped), 0 if empty.
 */
int blk_iowait_queue_peek(struct blk_iowait_queue *q, struct blk_event *ev);

/* Drop the earliest record (the one peek returns); nothing if empty. */
void blk_iowait_queue_pop(struct blk_iowait_queue *q);

/* Records held. */
size_t blk_iowait_queue_len(const struct blk_iowait_queue *q);

#endif /* BLK_IOWAIT_H */
