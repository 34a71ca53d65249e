/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiomon's run: a binary trace stream read to its end, issues paired with their
 * completions, and a report per interval on the outputs the caller opened. Front-end code
 * (it prints, and dies when out of memory), kept apart from blkiomon.c's option parsing
 * so that the fuzz target (tests/fuzz/fuzz-iomon.c) runs the real thing.
 */
#ifndef BLKIOMON_RUN_H
#define BLKIOMON_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "blk/output.h"
#include "blk/reader.h"

#define PARK_BUCKETS 128

struct dstat;
struct parked;

struct mon_opts {
	unsigned int interval;
	const char *human, *binary, *lldd, *debug, *csv;
	const char *msg_path;
	int msg_proj;
	long msg_id;
	int trace_time;
	int percentiles;
	int exact_thrput;
};

/* The run's state: the caller sets o, the outputs (NULL: none) and msq (-1: none). */
struct mon {
	struct mon_opts *o;
	FILE *human, *debug, *csv;
	struct blk_output *binary, *lldd;
	int msq;
	struct dstat *devs; /* newest first, as the classic tool lists them */
	struct parked *park[PARK_BUCKETS];
	struct parked *free_parked;
	uint64_t matched, dropped, leftover, zero_d2c;
	uint64_t before_issue; /* completions older than the issue they met (all intervals) */
	int have_ts;
	int64_t ts_sec;
	uint64_t ts_time;
};

/**
 * mon_run() - read @r to its end (or damage), reporting per interval; then the leftover
 * records, the final counts (-D) and the end-of-run warnings. @r stays the caller's, as do
 * the outputs in @m (flushed after each report, not closed).
 * Return: 0, or a negative number after a read error (reported).
 */
int mon_run(struct mon *m, struct blk_reader *r);

#endif /* BLKIOMON_RUN_H */
