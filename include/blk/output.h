/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A buffered output (text or binary) with sticky error reporting, optionally gzip-compressed.
 * The writer of the binary trace format lives here too: blk_output_event().
 */
#ifndef BLK_OUTPUT_H
#define BLK_OUTPUT_H

#include <stddef.h>

#include "blk/event.h"
#include "blk/strbuf.h"

struct blk_output;

enum blk_output_flags {
	BLK_OUTPUT_GZIP = 1 << 0, /* compress with gzip */
	BLK_OUTPUT_NOCLOSE = 1 << 1, /* do not close the descriptor (stdout) */
	/* with BLK_OUTPUT_GZIP: the fastest compression (level 1, not 6): for large outputs
	 * that are written faster than level 6 compresses (a Perfetto trace) */
	BLK_OUTPUT_GZIP_FAST = 1 << 2,
};

/**
 * blk_output_open() - create/truncate @path ("-" = standard output)
 * Return: an output to finish with blk_output_close(), or NULL with errno set.
 */
struct blk_output *blk_output_open(const char *path, unsigned int flags);

/* Write to @fd (owned unless BLK_OUTPUT_NOCLOSE); @name is used in messages. */
struct blk_output *blk_output_fdopen(int fd, const char *name, unsigned int flags);

/**
 * blk_output_set_async() - write (and compress) on a second thread from now on
 * While the thread writes one buffer, the caller fills the next: a check that finds the
 * buffer full hands it over (waiting only for the write before it), so memory stays two
 * buffers. A write error is reported by the check, flush or finish after it. The buffer
 * behind blk_output_sb() changes at every hand-over (the struct stays).
 * Return: 0, or -errno (no thread: @o stays synchronous and works as before).
 */
int blk_output_set_async(struct blk_output *o);

/*
 * blk_output_set_async() with @nbuf buffers (1 to 8) that the thread may hold at once
 * besides the one being filled (1: blk_output_set_async()): a caller that fills faster than
 * the thread writes still waits, but the thread finds the next buffer ready instead of
 * sleeping until the caller hands it over. Memory: @nbuf + 1 buffers.
 * Return: 0, -EINVAL for another @nbuf, or -errno as blk_output_set_async().
 */
int blk_output_set_async_bufs(struct blk_output *o, unsigned int nbuf);

/*
 * The thread of blk_output_set_async(), once it has written all it was handed, waits up to
 * @usec microseconds for the next buffer spinning on the CPU before it sleeps (0, the
 * default: it sleeps at once). For a caller that hands over buffers faster than the wake-up
 * of a sleeping thread costs, with a CPU of its own for the thread: not when other work
 * (another thread, the other end of a pipe) needs that CPU. No thread: nothing.
 */
void blk_output_set_async_spin(struct blk_output *o, unsigned int usec);

/*
 * The pending text buffer: append to it, then call blk_output_check() so that it is
 * written out once it is large. Valid while @o lives.
 */
struct blk_strbuf *blk_output_sb(struct blk_output *o);

/* Write the pending buffer if it holds more than the flush threshold. Return 0 or -errno. */
int blk_output_check(struct blk_output *o);

/* Append raw bytes. Return 0 or -errno (sticky: the first error is kept). */
int blk_output_write(struct blk_output *o, const void *p, size_t n);

/* Append @ev as a host-order binary record of its version. Return 0 or -errno. */
int blk_output_event(struct blk_output *o, const struct blk_event *ev);

/*
 * Append the host-order record of @len bytes at @rec (blk_event_encode()'s bytes, as
 * blk_merge_take_raw() hands them out) with its time replaced by @time: the bytes
 * blk_output_event() would write for the decoded record with that time (@len is at least
 * the 48 bytes of a version 7 header). Return 0 or -errno.
 */
int blk_output_record(struct blk_output *o, const unsigned char *rec, size_t len, uint64_t time);

/*
 * Write (or hand to the thread of blk_output_set_async()) once @bytes are pending, not
 * 128 KiB (0: back to that): fewer, larger writes, two buffers of that size.
 */
void blk_output_set_flush_size(struct blk_output *o, size_t bytes);

struct blk_merge_raw;

/*
 * blk_output_record() for the @n records of a run of blk_merge_take_run_raw() (or any
 * array of them), each with @rebase subtracted from its time. Return 0 or -errno.
 */
int blk_output_raw_run(struct blk_output *o, const struct blk_merge_raw *recs, unsigned int n,
		       uint64_t rebase);

/*
 * Append the @len bytes at @data, host-order version 7 records one after the other, each
 * with @rebase subtracted from its time. Return 0, -EINVAL if the bytes end inside a record
 * (those before it are written), or -errno.
 */
int blk_output_raw_bytes(struct blk_output *o, const unsigned char *data, size_t len,
			 uint64_t rebase);

/* Write out everything pending. Return 0 or -errno. */
int blk_output_flush(struct blk_output *o);

/* Flush and close the descriptor; @o stays valid for blk_output_error(). Return 0 or -errno. */
int blk_output_finish(struct blk_output *o);

/* Free @o without reporting (NULL allowed). */
void blk_output_free(struct blk_output *o);

/* Finish and free @o (NULL allowed). Return 0 or the first -errno seen. */
int blk_output_close(struct blk_output *o);

/* "'name': write failed: <strerror>" for the first error, or "". */
const char *blk_output_error(const struct blk_output *o);

#endif /* BLK_OUTPUT_H */
