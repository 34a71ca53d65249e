/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse-style accounting: per-device and per-CPU I/O counters, device queue depth,
 * per-process counters (-s), request tracking for elapsed times (-t), the pid -> name map,
 * and the end-of-run summary text. Streaming: memory grows with devices, CPUs, processes
 * and requests in flight, never with trace length.
 */
#ifndef BLK_ACCT_H
#define BLK_ACCT_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/format.h"
#include "blk/strbuf.h"

struct blk_acct;
struct blk_acct_dev;

struct blk_acct_opts {
	int per_process; /* -s */
	int hash_by_name; /* -h */
	int track_ios; /* -t */
	int verbose; /* -v: tracking misses are reported through the log hook */
	char sort_key; /* -S key (N Q q R r W w C c), 0 = by name */
};

/* Return: a new accounting state, or NULL (ENOMEM). */
struct blk_acct *blk_acct_new(const struct blk_acct_opts *o);
void blk_acct_free(struct blk_acct *a);

/**
 * blk_acct_dev() - the device called @name (file mode) or numbered @devno (pipe mode,
 * @name NULL); created on first use, in order of first use
 * Return: the device (owned by @a), or NULL (ENOMEM).
 */
struct blk_acct_dev *blk_acct_dev(struct blk_acct *a, uint32_t devno, const char *name);

/* Register @pid's name (first name wins, cut to 15 characters). */
void blk_acct_set_comm(struct blk_acct *a, uint32_t pid, const char *comm, size_t len);

/* @pid's name, or NULL when unknown; valid and unchanged while @a lives. */
const char *blk_acct_comm(struct blk_acct *a, uint32_t pid);

/* A new -t tracking entry: what its times start as (0 unless a hook says otherwise). */
struct blk_acct_track_init {
	uint64_t tag; /* the observer's number for the entry, handed back when it is freed */
	uint64_t allocation_time, queue_time, dispatch_time;
};

/*
 * What the accounting does, for an observer that follows it step by step (the tool decides
 * what for). Every member may be NULL.
 */
struct blk_acct_hooks {
	/* a pid -> name entry was created (@comm: the name as kept, NUL-terminated) */
	void (*comm_added)(void *ctx, uint32_t pid, const char *comm);
	/*
	 * -s: a record's pid has no per-process block yet; called before the pid is named and
	 * before a block is looked up by name (-h) or created
	 */
	void (*proc_missed)(void *ctx);
	/* a tracking entry is created; @t is zeroed, the hook may fill it */
	void (*track_new)(void *ctx, struct blk_acct_track_init *t);
	/*
	 * the tracking entry @tag, for @sector, is freed at its completion, holding these
	 * times (allocation, queue, dispatch, completion)
	 */
	void (*track_freed)(void *ctx, uint64_t tag, uint64_t sector, const uint64_t times[4]);
	void *ctx;
};

/* Report to @h (copied; NULL: to nobody) from now on. */
void blk_acct_set_hooks(struct blk_acct *a, const struct blk_acct_hooks *h);

/* Count a record of @dev on @cpu (any record read, shown or not). */
void blk_acct_seen(struct blk_acct_dev *d, int cpu);

/* Note @t as the device's latest record time (for throughput). */
void blk_acct_last_time(struct blk_acct_dev *d, uint64_t t);

/**
 * blk_acct_event() - account a displayed data record and prepare its line
 * Fills c->act, c->comm, c->elapsed and c->pc_pdu for rendering. Counts the record in
 * the device's event total.
 * Return: 1 if the line is to be printed, 0 if the record is silent (driver data), or
 * -EINVAL for an action the classic tool does not know (counted; not printed).
 */
int blk_acct_event(struct blk_acct *a, struct blk_acct_dev *d, int cpu, const struct blk_event *ev,
		   struct blk_fmt_ctx *c);

/* Count a displayed record that is not a data event (a message) in the device total. */
void blk_acct_count(struct blk_acct_dev *d, uint64_t t);

/* Sequence gaps of the device (pipe mode). */
void blk_acct_set_skips(struct blk_acct_dev *d, uint64_t ranges, uint64_t missing);

uint32_t blk_acct_dev_devno(const struct blk_acct_dev *d);
void blk_acct_dev_set_devno(struct blk_acct_dev *d, uint32_t devno);
uint64_t blk_acct_dev_events(const struct blk_acct_dev *d);
unsigned int blk_acct_ndevs(const struct blk_acct *a);
struct blk_acct_dev *blk_acct_dev_at(struct blk_acct *a, unsigned int i);

/* Append the per-process blocks (-s) to @sb. */
void blk_acct_print_procs(struct blk_acct *a, struct blk_strbuf *sb);

/* Append the per-device and per-CPU summary to @sb. */
void blk_acct_print_devs(struct blk_acct *a, struct blk_strbuf *sb);

/* Number of records with an unknown action, and the first such action word. */
uint64_t blk_acct_bad_actions(const struct blk_acct *a, uint32_t *first);

#endif /* BLK_ACCT_H */
