/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blktrace -o - (trace-stdout.c): the records of every output stream of a run (struct
 * bt_run, trace-run.h) held in a bounded window and written to stdout in time order by a
 * thread of their own, which a lost output makes end the run (SIGTERM to the process).
 */
#ifndef BLKTRACE_STDOUT_H
#define BLKTRACE_STDOUT_H

#include <stddef.h>
#include <stdint.h>

#include "trace-run.h"

/*
 * trace_stdout_open() - the window for @r's streams (each source's win_base set) and its
 * writer thread. Return 0, or -1 said (error()).
 */
int trace_stdout_open(struct bt_run *r);

/*
 * trace_stdout_push() - @n bytes of whole records of window stream @stream, waiting while
 * the window is full. Return 0 or -errno (-ENOMEM, or the output's failure).
 */
int trace_stdout_push(struct bt_run *r, int stream, const unsigned char *p, size_t n);

/* Nothing older than @time will come to window stream @stream. */
void trace_stdout_mark(struct bt_run *r, int stream, uint64_t time);

/*
 * trace_stdout_close() - after the readers ended: write what is held and end the writer;
 * *@late: the records that reached stdout out of time order. Return 0 or -errno.
 */
int trace_stdout_close(struct bt_run *r, uint64_t *late);

#endif /* BLKTRACE_STDOUT_H */
