/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A time-ordering window over several record streams: each stream (a CPU's records of a
 * device, as a tracer reads them) is in time order on its own; the window hands out the
 * records of all of them in time order, each as soon as no stream can still bring an
 * older one. A stream says how far it has come by its records and by marks ("nothing
 * older than T will follow"). Memory is bounded: a push beyond the limit is refused.
 * Not thread-safe: callers that push from several threads hold one lock around it.
 */
#ifndef BLK_WINDOW_H
#define BLK_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct blk_window;

/* @nstreams streams holding at most @max_bytes of records in all. NULL with errno set. */
struct blk_window *blk_window_new(int nstreams, size_t max_bytes);

/* NULL allowed. */
void blk_window_free(struct blk_window *w);

/**
 * blk_window_push() - append whole host-order records (@n bytes at @p) to @stream; they
 * also mark the stream as far as the last of them
 * Return: 0; -ENOBUFS if the window holds its limit already (nothing appended: take
 * records out first); -ENOMEM; -EINVAL if @p does not hold whole records.
 */
int blk_window_push(struct blk_window *w, int stream, const unsigned char *p, size_t n);

/* No record of @stream pushed from now on is older than @time (marks only move forward). */
void blk_window_mark(struct blk_window *w, int stream, uint64_t time);

/**
 * blk_window_take() - move records into @out, in time order (at most @max bytes, but one
 * record even if it is larger), as long as the next one is ready: every stream holds a
 * later record or is marked at or past its time. With @flush, take whatever is held
 * (the end of a run, or a full window that a stalled stream would otherwise block).
 * Return: the bytes moved (0: nothing ready). @max must be at least 64 + 65535.
 */
size_t blk_window_take(struct blk_window *w, unsigned char *out, size_t max, int flush);

/* Bytes of records held. */
size_t blk_window_bytes(const struct blk_window *w);

/* The limit given to blk_window_new(). */
size_t blk_window_limit(const struct blk_window *w);

/*
 * Records pushed older than a record already taken (only possible after a @flush take
 * with a stream behind, or a stream not in time order): they come out late, out of order.
 */
uint64_t blk_window_late(const struct blk_window *w);

#endif /* BLK_WINDOW_H */
