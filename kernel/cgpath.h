/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup ids named by their paths (kernel/cgpath.c): the kernel's cgroup id of an I/O (the
 * blk_cgroup trace option's) is the inode number of the cgroup's directory in the hierarchy
 * of the io (cgroup v2) or blkio (v1) controller; the resolver finds that hierarchy, walks
 * it, and keeps what it found. Private to kernel/ (the tracefs backend).
 */
#ifndef BLK_KERNEL_CGPATH_H
#define BLK_KERNEL_CGPATH_H

#include <stddef.h>
#include <stdint.h>

struct blk_cgpath;

/**
 * blk_cgpath_new() - a resolver for the hierarchy of the block I/O controller: the cgroup
 * v1 mount with the blkio controller, else the cgroup v2 mount (from /proc/self/mounts),
 * walked once now (so that cgroups removed before the trace ends are still known)
 * Return: the resolver, or NULL with errno set (ENOENT: no such mount).
 */
struct blk_cgpath *blk_cgpath_new(void);

/**
 * blk_cgpath_lookup() - the path of cgroup @id below the hierarchy's root ("/" for the
 * root, "/a/b"), into @buf (@len bytes); an id not known yet walks the hierarchy again
 * (once per id). Safe from several threads.
 * Return: @buf, or NULL when no directory has that id (counted once per id).
 */
const char *blk_cgpath_lookup(struct blk_cgpath *r, uint64_t id, char *buf, size_t len);

/**
 * blk_cgpath_refresh() - walk the hierarchy again now (from the tracer's periodic tick):
 * cgroups made while it traces are known by their paths even if they are gone when their
 * ids are looked up
 */
void blk_cgpath_refresh(struct blk_cgpath *r);

/**
 * blk_cgpath_counts() - the ids asked for that were found (*@named) and that were found
 * nowhere (*@unknown), each counted once
 */
void blk_cgpath_counts(struct blk_cgpath *r, unsigned long *named, unsigned long *unknown);

/**
 * blk_cgpath_root() - the mount walked and, in *@version, its kind: 1 (v1 blkio) or 2 (v2)
 * Return: the mount point ("/sys/fs/cgroup/blkio"), valid while @r lives.
 */
const char *blk_cgpath_root(const struct blk_cgpath *r, int *version);

void blk_cgpath_free(struct blk_cgpath *r);

#endif /* BLK_KERNEL_CGPATH_H */
