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
 * While the thread writes, the caller fills the next buffer: a check that finds it full
 * hands it over, waiting only when the thread holds two it has not written yet, so memory
 * stays three buffers of the flush size. A write error is reported by the check, flush or finish after it. The buffer
 * behind blk_output_sb() changes at every hand-over (the struct stays).
 * Return: 0, or -errno (no thread: @o stays synchronous and works as before).
 */
int blk_output_set_async(struct blk_output *o);

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
 * Append the host-order record of @len bytes at @rec (blk_event_encode()'s bytes) with its
 * time replaced by @time: the bytes blk_output_event() would write for the decoded record
 * with that time (@len is at least the 48 bytes of a version 7 header). Return 0 or -errno.
 */
int blk_output_record(struct blk_output *o, const unsigned char *rec, size_t len, uint64_t time);

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
