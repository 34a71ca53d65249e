/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The I/O waits of an event stream (kernel/waitjoin.c): what the kernel events of an I/O
 * wait source say, fed in time order, turned into whole waits (struct blk_iowait).
 *
 * - sched: a task switched out in state D (sched_switch) until it is woken (sched_waking,
 *   on the waker's CPU): an uninterruptible sleep. It is an I/O wait when the task had an
 *   I/O of its own in flight on a traced device as it went to sleep (its bios queued,
 *   block_bio_queue, not yet completed, block_rq_complete/block_bio_complete covering
 *   their sector); the others are dropped and counted, or kept labelled (keep_all).
 * - kprobe: entries and returns of io_schedule, io_schedule_timeout and blk_io_schedule;
 *   the outermost pair of a task is the wait (blk_io_schedule calls one of the others);
 *   a return that went missing (kretprobe maxactive) is found out at the task's next entry.
 *   Wakings of a task inside give the waker's CPU.
 * - module: the module's tracepoint gives whole waits.
 * Memory is bounded: at most max_tasks tasks and max_ios I/Os in flight are followed; what
 * does not fit is counted.
 */
#ifndef BLK_WAITJOIN_H
#define BLK_WAITJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "blk/iowait.h"

enum blk_wj_kind {
	BLK_WJ_SWITCH_D, /* @tid went to sleep in state D on @cpu (@comm) */
	BLK_WJ_WAKING, /* @tid is woken, by @cpu (task @waker), to run on @target_cpu */
	BLK_WJ_QUEUE, /* a bio of @tid (@comm) queued on @dev: @sector, @nr sectors */
	BLK_WJ_COMPLETE, /* I/O of @dev completed: @nr sectors from @sector */
	BLK_WJ_ENTER, /* @tid entered @func on @cpu (@comm) */
	BLK_WJ_EXIT, /* @tid returned from @func on @cpu */
	BLK_WJ_WAIT, /* a whole wait (module): ended now on @cpu, @duration ... */
};

struct blk_wj_event {
	uint64_t ts; /* trace clock, ns */
	enum blk_wj_kind kind;
	int cpu; /* the CPU the event was recorded on */
	int32_t tid;
	int target_cpu;
	uint32_t dev; /* record encoding (major << 20 | minor) */
	uint32_t nr;
	uint64_t sector;
	enum blk_iowait_func func;
	char comm[16]; /* need not be NUL-terminated */
	/* BLK_WJ_WAIT */
	uint64_t duration;
	int32_t tgid;
	int waker_cpu, sleep_cpu;
	/* BLK_WJ_WAKING: the task that recorded it (the waker; 0 in an interrupt of the idle task) */
	int32_t waker;
};

struct blk_wj_opts {
	enum blk_iowait_source source;
	int keep_all; /* sched: keep sleeps without an I/O in flight, labelled io=none */
	size_t max_tasks; /* 0: 65536 */
	size_t max_ios; /* 0: 65536 */
};

struct blk_wj_stats {
	uint64_t waits; /* waits given out */
	uint64_t waker_io; /* sched: of them, without I/O of their own, woken by a task that
			    * queued I/O during the sleep (BLK_IOWAIT_F_WAKER_IO) */
	uint64_t not_io; /* sched: D sleeps without an I/O of the task in flight (not kept) */
	uint64_t stale; /* kprobe: entries whose return never came (a missed kretprobe) */
	uint64_t unmatched; /* kprobe: returns without their entry */
	uint64_t tasks_full; /* events of tasks not followed: the task table was full */
	uint64_t ios_full; /* I/Os not followed: the I/O table was full */
};

struct blk_wj;

/* A joiner for @o->source. NULL with errno set (ENOMEM, EINVAL for an unknown source). */
struct blk_wj *blk_wj_new(const struct blk_wj_opts *o);

/* NULL allowed. */
void blk_wj_free(struct blk_wj *j);

/**
 * blk_wj_feed() - take event @e (events in time order)
 * Return: 1 if it ended a wait, then in *@w (its tgid 0 when the events do not give it;
 * device and rebase 0: the caller's); 0 if not; -ENOMEM.
 */
int blk_wj_feed(struct blk_wj *j, const struct blk_wj_event *e, struct blk_iowait *w);

/* Whether the sched source follows an I/O of @tid in flight (its sleep now would be kept). */
int blk_wj_has_io(struct blk_wj *j, int32_t tid);

/* What was counted so far. */
void blk_wj_get_stats(const struct blk_wj *j, struct blk_wj_stats *s);

#endif /* BLK_WAITJOIN_H */
