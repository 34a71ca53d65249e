/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -I FILE: iostat-like statistics, one block of rows per -S seconds of trace time and a
 * cumulative block at the end, computed the way btt 2.09 computes them.
 */
#ifndef BTT_IOSTAT_H
#define BTT_IOSTAT_H

#include <stdint.h>

struct btt_output_ops;

/* the output (output.h) for -I: its file is created at new(); at finish(), the cumulative
 * block, stamped with the time of the last event taken, and the file closed */
extern const struct btt_output_ops iostat_output;

#endif /* BTT_IOSTAT_H */
