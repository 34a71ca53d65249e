/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blktrace --origin's files and dirtiers on the tracefs backend (kernel/tfsorigin.c): the
 * file-system events enabled beside the blk tracer (origin.h says which), the block size of
 * the file system on each traced device, and at the end the paths of the files the notes
 * named (trace.h BLK_TN_FILE). Private to kernel/ (tfsback.c).
 */
#ifndef BLK_KERNEL_TFSORIGIN_H
#define BLK_KERNEL_TFSORIGIN_H

#include <stddef.h>
#include <stdint.h>

struct blk_backend_cfg;
struct blk_fsev;
struct blk_tfs;
struct blk_tfsconv;

struct tfs_origin;

/**
 * tfs_origin_open() - enable in session @t the events that exist on this kernel, filtered on
 * @cfg's devices, and find the file system mounted from each device
 * @what: filled with what is recorded, and which devices get no file maps (to say once)
 * Return: the state (free with tfs_origin_free()), or NULL with errno set (ENOMEM, or the
 * error enabling an event, with @err filled).
 */
struct tfs_origin *tfs_origin_open(struct blk_tfs *t, const struct blk_backend_cfg *cfg, char *what,
				   size_t wlen, char *err, size_t elen);

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

/* The summary's line: the origin notes of @convs and the files named. */
void tfs_origin_report(const struct tfs_origin *o, struct blk_tfsconv *const *convs, int nconv,
		       char *msg, size_t len);

void tfs_origin_free(struct tfs_origin *o);

#endif /* BLK_KERNEL_TFSORIGIN_H */
