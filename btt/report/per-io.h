/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-IO files: -p FILE lists each completed I/O with its stage times (and a line of
 * dashes after each completion), -P writes <dev>_pit.dat, a line per completion with the
 * Q times of the I/Os it took, the last issue and the completion.
 */
#ifndef BTT_PER_IO_H
#define BTT_PER_IO_H

struct btt_output_ops;

/* the output (output.h), for -p and -P: files created at new(), closed at free() */
extern const struct btt_output_ops per_io_output;

#endif /* BTT_PER_IO_H */
