/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text lines rendered on a second thread. The caller queues events in output order, each
 * with a copy of what its line needs (format.h's context); a worker thread renders them in
 * that order into a blk_output and writes it out, while the caller reads and merges the next
 * ones. Memory is a fixed ring of batches, whatever the trace length.
 */
#ifndef BLK_PRINTQ_H
#define BLK_PRINTQ_H

#include <stddef.h>

#include "blk/event.h"
#include "blk/format.h"
#include "blk/output.h"

struct blk_printq;

/**
 * blk_printq_new() - start a worker thread that renders into @out
 * @out stays the caller's; between blk_printq_sync() and the next queued line, and after
 * blk_printq_free(), the caller may use it again (the worker does not touch it then).
 * Return: a queue to free with blk_printq_free(), or NULL with errno set (no thread: the
 * caller renders the lines itself).
 */
struct blk_printq *blk_printq_new(struct blk_output *out);

/**
 * blk_printq_event() - queue the line of @ev: rendered with @f, or the default line if @f
 * is NULL, with the context @c
 * @ev, @c and their payloads are copied; the strings c->act and c->comm are not: they must
 * stay valid and unchanged until the line is rendered (blk_printq_sync()), as must @f.
 * @f must not need an elapsed time that @c lacks (blk_format_render() would fail).
 * Return: 0, or the -errno of the first write error of @out.
 */
int blk_printq_event(struct blk_printq *q, const struct blk_format *f, const struct blk_event *ev,
		     const struct blk_fmt_ctx *c);

/**
 * blk_printq_text() - queue @n bytes of ready-made text (copied)
 * Return: 0, or the -errno of the first write error of @out.
 */
int blk_printq_text(struct blk_printq *q, const char *s, size_t n);

/**
 * blk_printq_sync() - wait until every queued line is in @out (appended; written once
 * large, as blk_output_check() does)
 * Return: 0, or the -errno of the first write error of @out.
 */
int blk_printq_sync(struct blk_printq *q);

/* Sync, stop the worker and free @q (NULL allowed); @out stays open. */
void blk_printq_free(struct blk_printq *q);

#endif /* BLK_PRINTQ_H */
