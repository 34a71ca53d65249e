/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pipe-mode ordering: one stream of records from several CPUs and devices (a live tracer's
 * output, or a merged file on standard input) is read in batches and emitted in the
 * classic blkparse order: sorted by (time, device, sequence), each CPU's records released
 * only in sequence order, gaps counted as skips when the input ends. Memory is bounded by
 * the reorder window (a stalled window is released, with the gap counted as a skip).
 */
#ifndef BLK_PIPESORT_H
#define BLK_PIPESORT_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/merge.h"
#include "blk/reader.h"

struct blk_pipesort;

/*
 * What the sorter does, for an observer that follows it step by step (the tool decides
 * what for). Every member may be NULL; so may the table. A tag is the
 * observer's own number for a record or a gap, handed back in later calls (0 when the
 * hook is absent).
 */
struct blk_pipesort_hooks {
	/* a record kept for sorting was read into the batch; Return: its tag */
	uint64_t (*record_read)(void *ctx, const struct blk_event *ev);
	/* a read found the end of the input (once more if it ended inside a batch) */
	void (*input_end)(void *ctx);
	/* a batch was read; it is sorted next (its records newest-read first) */
	void (*batch_read)(void *ctx);
	/* the record @tag was sorted: its time rebased to @time, its CPU looked up */
	void (*record_sorted)(void *ctx, uint64_t tag, uint32_t device, uint32_t cpu,
			      uint64_t time);
	/*
	 * the record @tag was dropped (outside the stopwatch), or was returned and the next
	 * blk_pipesort_next() call came (records still held at blk_pipesort_free() are not
	 * reported)
	 */
	void (*record_released)(void *ctx, uint64_t tag);
	/*
	 * a CPU's first record to be returned has a sequence number other than 0 and 1: the
	 * CPUs with a record in the window were looked at (@mask: those below 64)
	 */
	void (*cpu_check)(void *ctx, uint64_t mask);
	/* a new gap in a CPU's sequence numbers was recorded; Return: its tag */
	uint64_t (*gap_recorded)(void *ctx, uint64_t start, uint64_t end);
	/* the gap @tag was filled by late records and forgotten */
	void (*gap_filled)(void *ctx, uint64_t tag);
	void *ctx;
};

struct blk_pipesort_opts {
	unsigned int batch; /* records per batch (default 512) */
	uint64_t stop_start, stop_end; /* keep records in [start, end) after rebasing */
	unsigned int max_pending; /* reorder window cap (0: 64 batches, at least 65536) */
	int wait_ms; /* a batch ends when the input is idle this long */
	blk_merge_note_fn fn; /* called for every record read (BLK_NOTE_RECORD) */
	void *arg;
	const struct blk_pipesort_hooks *hooks; /* optional; must outlive the sorter */
};

/**
 * blk_pipesort_new() - order the records of @r (ownership passes to the sorter)
 * Return: a sorter to free with blk_pipesort_free(), or NULL (ENOMEM).
 */
struct blk_pipesort *blk_pipesort_new(struct blk_reader *r, const struct blk_pipesort_opts *o);

/**
 * blk_pipesort_next() - the next record in order, its time rebased
 * Return: 1 and *@ev; 0 at end of input (or on damage: see blk_pipesort_error()); or a
 * negative errno from the callback. ev->pdu is valid until the next call.
 */
int blk_pipesort_next(struct blk_pipesort *ps, struct blk_event *ev);

/*
 * blk_pipesort_rebase() - what was subtracted from the time of the record last returned:
 * the genesis (the smallest time of the first batch; as in the classic tool, found again in
 * the next batch while it is 0, so a merged file's later batches have a second one).
 */
uint64_t blk_pipesort_rebase(const struct blk_pipesort *ps);

/* 1 if the next blk_pipesort_next() would read more input (good moment to flush output). */
int blk_pipesort_needs_input(const struct blk_pipesort *ps);

/* Damage description, or NULL if the input ended cleanly. */
const char *blk_pipesort_error(const struct blk_pipesort *ps);

/* Gap ranges and missing sequence numbers of @dev, summed over its CPUs. */
void blk_pipesort_skips(const struct blk_pipesort *ps, uint32_t dev, uint64_t *ranges,
			uint64_t *missing);

/* Call @fn for each gap range of @dev (cpu, first, last missing sequence). */
void blk_pipesort_each_skip(const struct blk_pipesort *ps, uint32_t dev,
			    void (*fn)(void *arg, uint32_t dev, int cpu, uint64_t first,
				       uint64_t last),
			    void *arg);

/* Number of times a stalled reorder window was released early. */
uint64_t blk_pipesort_forced(const struct blk_pipesort *ps);

void blk_pipesort_free(struct blk_pipesort *ps);

#endif /* BLK_PIPESORT_H */
