/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read-ahead of a regular file on a second thread: the file is read into a ring of large
 * buffers while the caller decodes the previous ones, so the kernel's copy runs on another
 * CPU. Each buffer has @headroom free bytes before its data, where the caller may put the
 * unread tail of the previous buffer to keep a record contiguous.
 */
#ifndef BLK_READAHEAD_H
#define BLK_READAHEAD_H

#include <stddef.h>

struct blk_readahead;

/* Read @fd from its current offset; NULL (errno set) if the thread cannot start. */
struct blk_readahead *blk_readahead_start(int fd, size_t size, size_t headroom, int nbuf);
/*
 * Wait for the next buffer: its start in *@buf (data at *@buf + headroom), its length in
 * *@len, 0 at end of file. Returns 0, or -errno for a read error. The buffer is the
 * caller's until blk_readahead_put(); at most nbuf - 1 may be held at once.
 */
int blk_readahead_get(struct blk_readahead *ra, unsigned char **buf, size_t *len);
void blk_readahead_put(struct blk_readahead *ra, unsigned char *buf);
/* Stop the thread and free every buffer. */
void blk_readahead_stop(struct blk_readahead *ra);

#endif /* BLK_READAHEAD_H */
