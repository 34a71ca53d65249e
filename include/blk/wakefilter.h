/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The waking filter of the sched source: which tasks' sched_waking events the kernel may
 * leave out. Most wakings are of tasks that never sleep in the uninterruptible state (on
 * a loop device, per read: the loop worker and ksoftirqd beside the reader); their events
 * cost the traced workload and the reader for nothing. A task woken often in an interval
 * that was never seen switched out in state D is left out (by pid and name), at most
 * BLK_WF_MAX of them; one seen switched out in state D is taken back at once, and never
 * left out again. Its sleeps until the kernel has the new filter may have lost their end:
 * those that would have been kept (an I/O of the task in flight) are counted (blind
 * sleeps), never made up. Pure logic: the caller writes the
 * filter text into tracefs.
 */
#ifndef BLK_WAKEFILTER_H
#define BLK_WAKEFILTER_H

#include <stddef.h>
#include <stdint.h>

#define BLK_WF_MAX 16 /* tasks left out at most */
#define BLK_WF_MIN_WAKINGS 200 /* in an interval, to be left out */
#define BLK_WF_INTERVAL_NS 1000000000ull

struct blk_wf;

/* NULL on ENOMEM. */
struct blk_wf *blk_wf_new(void);
void blk_wf_free(struct blk_wf *f);

/*
 * A sched_switch of @tid in state D at @ts (events in time order), @io: the sleep is one
 * to keep (an I/O of the task in flight). Return 1 if @tid was left out: the filter must
 * be written again now (blk_wf_filter()); the sleep is blind until blk_wf_written() says
 * the kernel has it.
 */
int blk_wf_switch_d(struct blk_wf *f, int32_t tid, uint64_t ts, int io);

/* A sched_waking of @tid (name @comm, 16 bytes, need not be NUL-terminated) at @ts. */
void blk_wf_waking(struct blk_wf *f, int32_t tid, const char *comm, uint64_t ts);

/*
 * At @now (the trace clock), at most once an interval: leave out the tasks woken at
 * least BLK_WF_MIN_WAKINGS times in the interval just ended that were never seen in state
 * D. Return 1 if the filter changed (write blk_wf_filter()), else 0.
 */
int blk_wf_tick(struct blk_wf *f, uint64_t now);

/*
 * The filter text for the sched_waking event into @buf: "(pid != P || comm != \"C\") && ..."
 * or "0" (no filter) when no task is left out. Return the length, or -ENOSPC.
 */
int blk_wf_filter(const struct blk_wf *f, char *buf, size_t len);

/* The kernel took the filter written at @now (@ok 0: it refused it: nothing is left out
 * from now on, and the filter is not written again). */
void blk_wf_written(struct blk_wf *f, uint64_t now, int ok);

/* Tasks left out now; sleeps to keep of left-out tasks whose end may have been filtered out. */
int blk_wf_excluded(const struct blk_wf *f);
uint64_t blk_wf_blind(const struct blk_wf *f);

#endif /* BLK_WAKEFILTER_H */
