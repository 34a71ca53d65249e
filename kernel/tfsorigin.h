/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blktrace --origin's files and dirtiers (kernel/tfsorigin.c): the file-system events enabled
 * where they are read (fsevents.h says which), the block size of the file system on each
 * traced device, and at the end the paths of the files the notes named (trace.h
 * BLK_TN_FILE). One implementation for both places the events are read: the blk tracer's
 * ring (the tracefs backend, tfsback.c) and a private instance of their own beside the relay
 * backend (fsside.c). Private to kernel/.
 */
#ifndef BLK_KERNEL_TFSORIGIN_H
#define BLK_KERNEL_TFSORIGIN_H

#include <stddef.h>
#include <stdint.h>

struct blk_backend_cfg;
struct blk_fsev;
struct blk_tfsconv;

struct tfs_origin;

/* Where the events are enabled: a tracefs directory's events, through the caller's session. */
struct tfs_origin_where {
	/* The text of events/@event/format ("group/name"). 0 or -errno (-ENOENT: no such event). */
	int (*format)(void *ctx, const char *event, char *buf, size_t len);
	/*
	 * Record @event, with @filter where the kernel takes it (*@filtered says), disabled
	 * again when the session ends. 0, -EBUSY (someone else's: left alone), or -errno.
	 */
	int (*enable)(void *ctx, const char *event, const char *filter, int *filtered);
	void *ctx;
};

/**
 * tfs_origin_open() - enable through @where the events that exist on this kernel, filtered on
 * @cfg's devices, and find the file system mounted from each device
 * @what: filled with what is recorded, and which devices get no file maps (to say once)
 * Return: the state (free with tfs_origin_free()), or NULL with errno set (ENOMEM, or the
 * error enabling an event, with @err filled).
 */
struct tfs_origin *tfs_origin_open(const struct tfs_origin_where *where,
				   const struct blk_backend_cfg *cfg, char *what, size_t wlen,
				   char *err, size_t elen);

/* The decoder of the events enabled, for the converters (blk_tfsconv_set_origin()). */
const struct blk_fsev *tfs_origin_events(const struct tfs_origin *o);

/**
 * tfs_origin_name() - find the path of every file in the origin notes of the @nconv
 * converters @convs (walking the mounts of each device) and stage a file note for each in
 * the stream of @into (one of them, the converter of CPU @cpu), timed at the last record of
 * the device's streams
 * Return: 0 or -ENOMEM.
 */
int tfs_origin_name(struct tfs_origin *o, struct blk_tfsconv *const *convs, int nconv,
		    struct blk_tfsconv *into, uint32_t cpu);

/**
 * tfs_origin_drained() - CPU index @k's ring has nothing left after the stop: the last of
 * the CPUs to get there (each converter @convs, one per CPU index of the configuration, is
 * then done with) stages the file notes in its own converter (tfs_origin_name()), and raises
 * *@last to the time of the last record staged there. Once per CPU index; called by the
 * CPUs' readers.
 * Return: 1 the file notes were staged, 0 not (not the last CPU, or said before), -ENOMEM.
 */
int tfs_origin_drained(struct tfs_origin *o, int k, struct blk_tfsconv *const *convs,
		       uint64_t *last);

/* The summary's line: the origin notes of @convs and the files named. */
void tfs_origin_report(const struct tfs_origin *o, struct blk_tfsconv *const *convs, int nconv,
		       char *msg, size_t len);

void tfs_origin_free(struct tfs_origin *o);

#endif /* BLK_KERNEL_TFSORIGIN_H */
