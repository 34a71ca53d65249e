/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --percentiles, --percentiles-only: Q2C, D2C and Q2D percentiles per device and in
 * total (an addition to the classic report), from bounded-error histograms: each value is
 * within 1/64 of a recorded latency. A trace recorded without Q events has D2C times
 * only before each device's first Q, which the classic model ignores: issues and
 * completions are then paired by start sector (as iowatcher does).
 */
#ifndef BTT_PERCENTILES_H
#define BTT_PERCENTILES_H

#include <stdio.h>

struct btt_output_ops;

/* the output (output.h) for --percentiles: the table is its report() */
extern const struct btt_output_ops percentiles_output;

#endif /* BTT_PERCENTILES_H */
