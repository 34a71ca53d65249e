/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O wait by process" (an addition to the classic report, issue 15): the I/O wait notes
 * of blktrace --iowait (blk/iowait.h) joined with the I/Os of the model. Per process (by
 * tgid): its waits (count, total, p50, p99, max, from a bounded-error histogram: p50 and
 * p99 within 1/64 above a recorded wait, the max exact), the I/Os its threads queued on
 * each device with their mean Q2C and D2C, and how much of its wait time the waiting
 * thread's own I/Os (Q to C) were in flight; per device, who waited on it most (a wait is
 * on the device of the last of its thread's I/Os to complete during it, else on that of
 * the note's I/O in flight). Printed when the trace holds waits, or with --iowait-only.
 */
#ifndef BTT_WAITS_H
#define BTT_WAITS_H

#include <stdio.h>

struct btt_output_ops;
struct btt_view;
struct waits;

/* a subscriber to @v->model (always: the section appears when the trace holds waits) */
struct waits *waits_new(const struct btt_view *v);
/* whether the trace held I/O wait notes (read or not) */
int waits_any(const struct waits *w);
/* the section, on @ofp */
void waits_print(const struct waits *w, FILE *ofp);
void waits_free(struct waits *w);
/* the output (output.h): its report() is the section, with waits or --iowait-only */
extern const struct btt_output_ops waits_output;

#endif /* BTT_WAITS_H */
