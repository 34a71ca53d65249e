/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The relay path's records with the blk_cgroup option on (blktrace --origin): each record the
 * kernel tagged (BLK_TA_CGROUP, the cgroup id before its payload) passed on untagged, as the
 * classic tools read it, with the id carried in cgroup notes (trace.h BLK_TN_CGROUP runs,
 * BLK_TN_CGPATH paths), as the tracefs path does (tfsconv.c).
 */
#ifndef BLK_KERNEL_RELAYCG_H
#define BLK_KERNEL_RELAYCG_H

#include <stddef.h>
#include <stdint.h>

struct blk_cgpath;

/* One relay stream's converter (one device, one CPU); used by one thread. */
struct blk_relaycg;

/**
 * blk_relaycg_new() - a converter for the relay stream of device @devno on CPU @cpu
 * @paths: names the ids in path notes (NULL: by number only); shared, it locks itself
 * Return: the converter (free with blk_relaycg_free()), or NULL (no memory).
 */
struct blk_relaycg *blk_relaycg_new(uint32_t devno, uint32_t cpu, struct blk_cgpath *paths);

/**
 * blk_relaycg_convert() - convert @n bytes of whole host-order records at @in
 * @out: set to the converted records (valid until the next call), @outlen to their length
 * @events: set to the I/O events among them (the rest are notes)
 *
 * A run note ends at the end of each call's records, so that each batch handed on is whole.
 * Return: 0, or -ENOMEM.
 */
int blk_relaycg_convert(struct blk_relaycg *c, const unsigned char *in, size_t n,
			const unsigned char **out, size_t *outlen, unsigned long *events);

/* Records the kernel tagged and the run notes written, so far. */
void blk_relaycg_counts(const struct blk_relaycg *c, uint64_t *tagged, uint64_t *runs);

void blk_relaycg_free(struct blk_relaycg *c);

#endif /* BLK_KERNEL_RELAYCG_H */
