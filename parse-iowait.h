/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse's I/O wait notes (blk/iowait.h): found in the side files NAME.iowait.blktrace.N
 * beside an input's per-CPU files, or in-band in a pipe or merged file; handed out in step
 * with the events, their times rebased as the events' are: printed as their own lines with
 * --iowait, written into the -d dump. Front-end code: blkparse's run calls it at four
 * places (file inputs found, a note read, before each event, the end).
 */
#ifndef BLKPARSE_IOWAIT_H
#define BLKPARSE_IOWAIT_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/output.h"
#include "blk/printq.h"

struct parse_waits;

struct parse_waits_opts {
	int print; /* --iowait: print the waits as lines of the text output */
	struct blk_output *text; /* the text output (NULL: none) */
	struct blk_printq *q; /* the text's print queue, if it has one: the lines go through it */
	struct blk_output *dump; /* -d: write them into it (NULL: no dump) */
	unsigned int batch; /* records read ahead per side file */
	uint64_t stop_start, stop_end; /* blkparse -w: keep waits that end in [start, end] */
};

/* NULL (nothing to do) when neither printing nor a dump is asked for; dies on ENOMEM. */
struct parse_waits *parse_waits_new(const struct parse_waits_opts *o);

void parse_waits_free(struct parse_waits *w);

/*
 * File mode: read the side files of input @name (in @dir, or the current directory if
 * NULL), NAME.iowait.blktrace.0, .1, ... up to the first that does not exist. Return the
 * number of files opened (0 if none), dying on an open error.
 */
int parse_waits_add_files(struct parse_waits *w, const char *dir, const char *name);

/* A wait note read in-band (pipe mode, or a per-CPU file that holds one): keep a copy. */
void parse_waits_take(struct parse_waits *w, const struct blk_event *ev);

/*
 * Hand out every wait that ended at input time @until or before (UINT64_MAX: all of them,
 * at the end), with @rebase subtracted from its times: a line of the text output, the
 * record written into the dump.
 * Return: 0, or -EIO if an output failed.
 */
int parse_waits_emit(struct parse_waits *w, uint64_t until, uint64_t rebase);

/*
 * The input time of the earliest wait held (the next that parse_waits_emit() hands out), or
 * UINT64_MAX if none is.
 */
uint64_t parse_waits_due(struct parse_waits *w);

/* At the end: one warning per kind of wait that was not handed out (on stderr). */
void parse_waits_report(struct parse_waits *w);

#endif /* BLKPARSE_IOWAIT_H */
