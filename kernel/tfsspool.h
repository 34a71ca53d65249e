/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CPU's raw ring-buffer pages kept in an unnamed file beside the trace while tracing runs,
 * to be converted into records when it ends (kernel/tfsspool.c). Storing a page costs the
 * tracer a read and a write of 4 KiB; turning its ~60 entries into records costs more than
 * both, and on a busy machine every cycle of the tracer's is taken from the workload. The
 * conversion waits for the end, when the workload's time no longer counts. Private to
 * kernel/ (the tracefs backend).
 *
 * The file has no name (O_TMPFILE, else unlinked at once): nothing is left behind by a
 * tracer that is killed. The pages come back in the order they were added; those already
 * read back have their disk space freed as it goes, so the spool and the records it becomes
 * do not both take the trace's size at the end.
 */
#ifndef BLK_KERNEL_TFSSPOOL_H
#define BLK_KERNEL_TFSSPOOL_H

#include <stddef.h>

struct tfs_spool;

/**
 * tfs_spool_new() - an empty spool in directory @dir for pages of @page_size bytes
 * Return: the spool, or NULL with errno set (the directory's error).
 */
struct tfs_spool *tfs_spool_new(const char *dir, size_t page_size);

/**
 * tfs_spool_add() - keep one page (@len bytes, at most the page size; the rest is zeros)
 * Return: 0, or -errno when it could not be written to the file: the spool takes nothing
 * more, and everything added so far (the page too) still comes back from tfs_spool_next().
 */
int tfs_spool_add(struct tfs_spool *s, const void *page, size_t len);

/*
 * The next page in the order added (page-size bytes), NULL when there is none left; the
 * pointer is valid until the next call. A page the file cannot give back is an error:
 * NULL with *@err set to -errno (else *@err is 0).
 */
const void *tfs_spool_next(struct tfs_spool *s, int *err);

/* -errno when the file failed and the spool takes no more pages, else 0. */
int tfs_spool_failed(const struct tfs_spool *s);

/* Pages added and not yet given back. */
size_t tfs_spool_pending(const struct tfs_spool *s);

void tfs_spool_free(struct tfs_spool *s);

#endif /* BLK_KERNEL_TFSSPOOL_H */
