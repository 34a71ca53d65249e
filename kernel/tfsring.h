/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CPU's ring buffer read from trace_pipe_raw (kernel/tfsring.c): its pages turned into
 * records by a converter (tfsconv.h) as they are read, or first kept in a spool.
 *
 * The spool: a CPU's raw ring-buffer pages kept in an unnamed file beside the trace while
 * tracing runs, to be converted into records when it ends. Storing a page costs the
 * tracer a read and a write of 4 KiB; turning its ~60 entries into records costs more than
 * both, and on a busy machine every cycle of the tracer's is taken from the workload. The
 * conversion waits for the end, when the workload's time no longer counts. Private to
 * kernel/ (the tracefs backend, and --origin's side stream beside the relay backend).
 *
 * The file has no name (O_TMPFILE, else unlinked at once): nothing is left behind by a
 * tracer that is killed. The pages come back in the order they were added; those already
 * read back have their disk space freed as it goes, so the spool and the records it becomes
 * do not both take the trace's size at the end.
 */
#ifndef BLK_KERNEL_TFSRING_H
#define BLK_KERNEL_TFSRING_H

#include <stddef.h>
#include <stdint.h>

#include "tfsconv.h"

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

/* ---- a CPU's ring ---- */

struct blk_backend_sink;

struct tfs_ring;

/*
 * The size of the pages the rings of the tracefs directory @dir (the top level or an
 * instance) hand out: buffer_subbuf_size_kb where the kernel has it (6.8 and later), else
 * the page of the layout converter @conv read from header_page.
 */
int tfs_ring_page_size(const char *dir, const struct blk_tfsconv *conv);

/**
 * tfs_ring_open() - read CPU @cpu's ring from @fd (its trace_pipe_raw, opened non-blocking;
 * the ring owns it from now on, failure or not) in pages of @size bytes, converted by @conv
 * (the caller's, which must outlive the ring)
 * @spool_dir: while tracing runs, keep the pages in a spool there and convert them once the
 *	trace stops; NULL (or a directory with no room for a spool): convert them as read
 * Return: the ring (free with tfs_ring_free()), or NULL with errno set.
 */
struct tfs_ring *tfs_ring_open(int fd, int size, int cpu, struct blk_tfsconv *conv,
			       const char *spool_dir);

/**
 * tfs_ring_cpu_open() - CPU @cpu's converter and ring in the tracefs directory @dir (the top
 * level or an instance): the converter of the page layout @dir's events/header_page gives,
 * for the @ndevs devices @devnos, naming tasks with @comm and @ctx (tfsconv.h), and the ring
 * read from @fd, @dir's per_cpu/cpuN/trace_pipe_raw (taken, failure or not; a negative
 * errno: it could not be opened), its pages kept in @spool_dir (NULL: converted as read)
 * Return: 0, or -errno with @err filled; *@conv and *@ring are set where they were made
 * (the caller frees them, failure or not).
 */
int tfs_ring_cpu_open(const char *dir, const uint32_t *devnos, int ndevs, int cpu, int fd,
		      blk_tfsconv_comm_fn comm, void *ctx, const char *spool_dir,
		      struct blk_tfsconv **conv, struct tfs_ring **ring, char *err, size_t len);

/* What a tfs_ring_read() did. */
struct tfs_ring_batch {
	int got; /* pages were read (from the ring or the spool) */
	int kept; /* they went to the spool: the converter staged nothing */
	uint64_t last; /* the time of the last entry converted, 0 if none */
	uint64_t now; /* CLOCK_MONOTONIC after the wait (what the ring holds is older) */
};

/**
 * tfs_ring_read() - wait at most @wait_ms for the ring to have pages, then read a batch of
 * them: kept in the spool while tracing runs (@stopped 0), converted into the converter's
 * stages once it is stopped (the spool's pages first, a batch per call, then the ring's),
 * or converted as read when there is no spool (or it failed: a full disk)
 * Return: 0 with *@b filled, or -errno with the reason in @err (-ENOMEM, -EINVAL for a page
 * that is not one, a read error).
 */
int tfs_ring_read(struct tfs_ring *r, int wait_ms, int stopped, struct tfs_ring_batch *b, char *err,
		  size_t len);

/**
 * tfs_ring_deliver() - hand the records @conv staged for each of its @ndevs devices to @sink
 * as CPU index @k's (the stages emptied), and mark each stream up to the time @b's batch
 * reached (its last entry's, else @b->now less BLK_BACKEND_SLACK_NS: one ring carries every
 * device of its CPU, in time order)
 * @all: count every record as an event for the sink (a stream of notes only), else the I/O
 *	events only
 * Return: 0, or the sink's -errno with @err filled.
 */
int tfs_ring_deliver(struct blk_tfsconv *conv, int ndevs, int k, const struct tfs_ring_batch *b,
		     int all, const struct blk_backend_sink *sink, char *err, size_t len);

/* Close the ring's descriptor and free it (NULL allowed); the converter stays the caller's. */
void tfs_ring_free(struct tfs_ring *r);

#endif /* BLK_KERNEL_TFSRING_H */
