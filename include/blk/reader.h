/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One trace input (a per-CPU file, a merged file, or a pipe), plain or gzip-compressed
 * (detected by content). Yields one validated, host-order record at a time.
 */
#ifndef BLK_READER_H
#define BLK_READER_H

#include <stdint.h>

#include "blk/event.h"

struct blk_reader;

/**
 * blk_reader_open() - open @path ("-" is standard input) for reading
 * Return: a reader to free with blk_reader_close(), or NULL with errno set.
 */
struct blk_reader *blk_reader_open(const char *path);

/**
 * blk_reader_fdopen() - read from @fd, which the reader then owns; @name is used in messages
 * Return: a reader, or NULL with errno set.
 */
struct blk_reader *blk_reader_fdopen(int fd, const char *name);

/**
 * blk_reader_next() - decode the next record of @r into *@ev
 * Return: 1 and *@ev, 0 at a clean end of input, or a negative errno on damage or a read
 * error; blk_reader_error() then describes it (file, offset, what). After an error the
 * reader stays at end of input.
 * ev->pdu points into @r's buffer and stays valid until the next call on @r.
 */
int blk_reader_next(struct blk_reader *r, struct blk_event *ev);

/**
 * blk_reader_ready() - whether blk_reader_next() can return without blocking
 * Return: 1 if a record (or end of input) is available now, 0 if a read would wait.
 */
int blk_reader_ready(struct blk_reader *r);

/**
 * blk_reader_would_wait() - whether the next blk_reader_next() would wait for input now
 * Return: 1 if no whole record (nor the end of input) is buffered and the descriptor has
 * no data to read at once; 0 otherwise (a regular file never waits).
 */
int blk_reader_would_wait(struct blk_reader *r);

/*
 * blk_reader_set_wait() - let blk_reader_ready() wait up to @ms milliseconds for a pipe
 * to have data, so that a fast writer's stream is cut into the same batches every run.
 */
void blk_reader_set_wait(struct blk_reader *r, int ms);

/*
 * Let the buffer grow to @bytes (at least 16 KiB), not 128 KiB: for many inputs read at
 * once, where memory counts (a record longer than that still fits).
 */
void blk_reader_set_buf_size(struct blk_reader *r, size_t bytes);

/* Name given at open time; valid while @r lives. */
const char *blk_reader_name(const struct blk_reader *r);

/* Description of the last error ("" if none); valid while @r lives. */
const char *blk_reader_error(const struct blk_reader *r);

/* 1 if the input is byte-swapped relative to this host (known after the first record). */
int blk_reader_swapped(const struct blk_reader *r);

/* 1 if the input is gzip-compressed. */
int blk_reader_compressed(const struct blk_reader *r);

/* Bytes of (decompressed) input consumed so far. */
uint64_t blk_reader_offset(const struct blk_reader *r);

/* Number of records returned so far. */
uint64_t blk_reader_records(const struct blk_reader *r);

/*
 * The bytes of the record blk_reader_next() returned last, as read, when they are a host-order
 * version 7 record (the bytes blk_event_encode() gives for it); NULL for any other record
 * and before the first. Valid until the next call on @r.
 */
const unsigned char *blk_reader_last_native(const struct blk_reader *r);

/*
 * The plain records from the next one on, up to @max of them, one after the other: host-order
 * version 7 records, wholly buffered, not notes (no notify category), of cpu @cpu; until one
 * that is not. Return the bytes of the first (valid until the next call on @r), with the
 * number of records in *@n and their bytes in *@len, stepping over them as blk_reader_next()
 * would; or NULL (*@n and *@len 0), leaving the next record to blk_reader_next().
 */
const unsigned char *blk_reader_plain_span(struct blk_reader *r, uint32_t cpu, unsigned int max,
					   unsigned int *n, size_t *len);

/* Free @r and close its descriptor; NULL is allowed. */
void blk_reader_close(struct blk_reader *r);

#endif /* BLK_READER_H */
