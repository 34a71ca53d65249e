/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The devices btreplay issues I/O to: opening them for direct I/O, their size and block
 * size, and whether one is in use by a mounted file system.
 */
#ifndef BTREPLAY_TARGET_H
#define BTREPLAY_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rp_target {
	char *path; /* /dev/NAME (owned) */
	int fd; /* -1 until opened */
	int is_blk; /* a block device (else a regular file) */
	dev_t rdev; /* block devices: the device number */
	uint64_t size; /* bytes */
	unsigned int lbs; /* logical block size: O_DIRECT alignment */
};

enum target_open_flags {
	TARGET_WRITE = 1 << 0, /* open read-write (else read-only) */
	TARGET_EXCL = 1 << 1, /* block devices: claim exclusively (fails if in use) */
};

/**
 * target_open() - open @t->path for direct I/O and fill in its size and block size
 * Return: 0, or -errno (@t->fd stays -1). -ENOTBLK: neither a block device nor a file.
 */
int target_open(struct rp_target *t, unsigned int flags);

/* Close @t's descriptor and free its path; @t may be half set up. */
void target_release(struct rp_target *t);

/**
 * target_mounted() - whether block device @rdev, or a partition of it, is mounted
 * @dev, @dlen: filled with the mounted device ("/dev/sdb1") when found
 * @mnt, @mlen: filled with where it is mounted
 *
 * Reads /proc/self/mountinfo (device numbers, so "/dev/root" is recognised too), and the
 * source of each mount when it is a device node.
 * Return: 1 if mounted, 0 if not, -errno if the mount table cannot be read.
 */
int target_mounted(dev_t rdev, char *dev, size_t dlen, char *mnt, size_t mlen);

#endif /* BTREPLAY_TARGET_H */
