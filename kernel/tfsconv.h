/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The blk tracer's ring-buffer pages (per_cpu/cpuN/trace_pipe_raw) turned into classic
 * per-device records, one converter per CPU. Internal to kernel/ (the tracefs backend and
 * its unit test).
 *
 * In the ring buffer each blk entry is a struct blk_io_trace whose first 8 bytes (magic,
 * sequence) hold the kernel's struct trace_entry (type, flags, preempt count, pid) and whose
 * time is not set: the entry's ring-buffer time stamp is its time. The converter gives each
 * record what the "bin" output of trace_pipe gave it (magic, the time stamp) and what the
 * relay path's kernel adds (per-device sequence numbers, a process note the first time a
 * pid is seen), so the records are the ones the trace_pipe path wrote, byte for byte.
 */
#ifndef BLK_KERNEL_TFSCONV_H
#define BLK_KERNEL_TFSCONV_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"

struct blk_tfsconv;
struct blk_fsev;
struct blk_fsev_inos;

/* The name of @pid for its process note: fill @buf (@len bytes) and return it, or NULL. */
typedef const char *(*blk_tfsconv_comm_fn)(void *ctx, uint32_t pid, char *buf, size_t len);

/**
 * blk_tfsconv_new() - a converter for the ring of CPU @cpu
 * @header_page: the text of events/header_page (the page layout, read by libtraceevent), or
 *	NULL for a converter of records handed one by one (blk_tfsconv_record())
 * @devnos: the @ndevs devices traced, in the order of their record streams
 * @comm: names a pid for its process note (NULL: /proc, then "unknown")
 * Return: the converter, or NULL with errno set (EINVAL: @header_page not understood).
 */
struct blk_tfsconv *blk_tfsconv_new(const char *header_page, const uint32_t *devnos, int ndevs,
				    uint32_t cpu, blk_tfsconv_comm_fn comm, void *ctx);

/*
 * The path of cgroup @id (the kernel's cgroup id) in the io/blkio controller's hierarchy:
 * fill @buf (@len bytes) and return it, or NULL if not known.
 */
typedef const char *(*blk_tfsconv_cgpath_fn)(void *ctx, uint64_t id, char *buf, size_t len);

/**
 * blk_tfsconv_set_cgpath() - name cgroup ids with @fn (and @ctx) in path notes
 *
 * Whatever is set: an entry the blk_cgroup option tagged (BLK_TA_CGROUP, the id before its
 * payload) becomes the untagged record and, for an event, a cgroup run note (trace.h
 * BLK_TN_CGROUP). With @fn, each stream also gets a path note for each id, before the
 * first run note naming it, where @fn knows the path.
 */
void blk_tfsconv_set_cgpath(struct blk_tfsconv *c, blk_tfsconv_cgpath_fn fn, void *ctx);

/**
 * blk_tfsconv_set_origin() - recognise --origin's events by @o (which must outlive @c) and
 * write what they say as origin notes (trace.h BLK_TN_DIRTY, BLK_TN_FMAP) in the stream of
 * their device, in time order with its events
 *
 * A dirty run grows while the same task dirties the next page of the same file, a file map
 * while the next event continues it in the file and on the disk; both end when the stage is
 * handed on (blk_tfsconv_clear()). A map that one of the stream's last few maps already
 * says is dropped. A folio's pages are counted from its size when it entered the page cache
 * on this CPU shortly before (filemap events), else as one page.
 */
void blk_tfsconv_set_origin(struct blk_tfsconv *c, const struct blk_fsev *o);

/* The origin notes written so far: dirty runs and file maps. */
void blk_tfsconv_origin_counts(const struct blk_tfsconv *c, uint64_t *dirty, uint64_t *fmap);

/* The inode numbers in the origin notes of device index @dev's stream. */
const struct blk_fsev_inos *blk_tfsconv_inos(const struct blk_tfsconv *c, int dev);

/* The time of the last record staged for device index @dev (0: none yet). */
uint64_t blk_tfsconv_last(const struct blk_tfsconv *c, int dev);

/* The size of a ring-buffer page (sub-buffer) as header_page gives it. */
int blk_tfsconv_page_size(const struct blk_tfsconv *c);

/**
 * blk_tfsconv_page() - convert every entry of one ring-buffer page (@len bytes as read) into
 * the devices' stages
 * @last: set to the time of the page's last entry (left alone for an empty page)
 * Return: the number of blk entries in the page, or -errno (-EINVAL: not a page,
 * -ENOMEM).
 */
int blk_tfsconv_page(struct blk_tfsconv *c, const void *page, size_t len, uint64_t *last);

/**
 * blk_tfsconv_record() - stage record @ev of device index @dev read elsewhere (the relay
 * path's files, which carry the kernel's own sequence numbers and process notes): a record
 * the blk_cgroup option tagged goes on untagged, its event's cgroup in a run note (as for
 * the pages' entries). @ev's payload is changed to skip the id. Return 0 or -ENOMEM.
 */
int blk_tfsconv_record(struct blk_tfsconv *c, int dev, struct blk_event *ev);

/* The records blk_tfsconv_record() took tagged, and the run notes written, so far. */
void blk_tfsconv_cgroup_counts(const struct blk_tfsconv *c, uint64_t *tagged, uint64_t *runs);

/* Stage @ev (a note of the caller's: the start time stamp) for device index @dev. */
int blk_tfsconv_put(struct blk_tfsconv *c, int dev, const struct blk_event *ev);

/*
 * The records staged for device index @dev: @len bytes, @events of them I/O events (the
 * rest notes). blk_tfsconv_clear() empties the stage once they are delivered.
 */
const unsigned char *blk_tfsconv_staged(const struct blk_tfsconv *c, int dev, size_t *len,
					unsigned long *events);
/* The number of records staged for device index @dev, notes and events. */
unsigned long blk_tfsconv_staged_records(const struct blk_tfsconv *c, int dev);
void blk_tfsconv_clear(struct blk_tfsconv *c, int dev);

/* Bytes of entries that were not blk records (skipped), and events the pages say were lost. */
uint64_t blk_tfsconv_skipped(const struct blk_tfsconv *c);
uint64_t blk_tfsconv_missed(const struct blk_tfsconv *c);

void blk_tfsconv_free(struct blk_tfsconv *c);

#endif /* BLK_KERNEL_TFSCONV_H */
