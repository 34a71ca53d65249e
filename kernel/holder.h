/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who holds a tracing file open: the process to name when a device is busy, instead of a
 * hint that would stop a live trace (kernel/holder.c). Private to kernel/.
 */
#ifndef BLK_KERNEL_HOLDER_H
#define BLK_KERNEL_HOLDER_H

#include <stddef.h>

/* does an open file's /proc/PID/fd link @link name what we look for? */
typedef int (*blk_holder_match_fn)(const char *link, const void *ctx);

/**
 * blk_holder_find() - a process other than this one with an open file that @match accepts
 * @comm: filled with its name (/proc/PID/comm), "?" if unknown; @len bytes
 * Return: its pid, or 0 when none (or /proc cannot be read).
 */
int blk_holder_find(blk_holder_match_fn match, const void *ctx, char *comm, size_t len);

/* blk_holder_match_fn: a link ending in @ctx (a string) */
int blk_holder_suffix(const char *link, const void *ctx);

/* blk_holder_match_fn: a link under @ctx (a directory, "/sys/kernel/debug/block/sda/") */
int blk_holder_prefix(const char *link, const void *ctx);

/* blk_holder_match_fn: a per-CPU pipe of tracefs's top-level buffer (the blk tracer's:
 * per_cpu/cpuN/trace_pipe or trace_pipe_raw), not an instance's; @ctx unused */
int blk_holder_blk_pipe(const char *link, const void *ctx);

/* is process @pid alive (kill(pid, 0) succeeds or fails with EPERM)? */
int blk_pid_alive(int pid);

#endif /* BLK_KERNEL_HOLDER_H */
