/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracefs blk tracer session (kernel/tracefs.c): the settings saved, the blk tracer set up
 * for a set of devices, and everything put back. Private to kernel/ (the tracefs backend,
 * kernel/tfsback.c); blktrace -k's blk_tfs_kill() is in blk/kernel.h.
 */
#ifndef BLK_KERNEL_TRACEFS_H
#define BLK_KERNEL_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

struct blk_tfs;

/**
 * blk_tfs_open() - save the state of tracefs at @dir and of @ndevs devices' trace
 * attributes (@sysnames: block names such as "loop0"), then set up the blk tracer for them
 * with @act_mask (categories, 0 = all) and @buf_kb per-CPU buffer (0 = keep); @cmdlines:
 * the kernel keeps the names of at least that many pids (saved_cmdlines_size; 0 = keep),
 * for records converted long after their process may have gone; @cgroup: turn the blk
 * tracer's blk_cgroup option on (put back as found on close)
 * Return: a session (restore with blk_tfs_close()), or NULL with errno set and @err filled.
 */
struct blk_tfs *blk_tfs_open(const char *dir, const char *const *sysnames, int ndevs,
			     uint32_t act_mask, unsigned int buf_kb, unsigned int cmdlines,
			     int cgroup, char *err, size_t errlen);

/* Start (tracing_on=1) / stop (tracing_on=0) recording. Return 0 or -errno. */
int blk_tfs_start(struct blk_tfs *t);
int blk_tfs_stop(struct blk_tfs *t);

/* The text of events/@event/format ("group/name"). Return 0 or -errno (ENOENT: none). */
int blk_tfs_event_format(struct blk_tfs *t, const char *event, char *buf, size_t len);

/**
 * blk_tfs_enable_event() - record event @event ("group/name") in the blk tracer's ring,
 * with @filter where the kernel takes it (*@filtered says), disabled again on close (and
 * by blktrace -k after a SIGKILL)
 * Return: 0, -EBUSY if it is enabled or filtered already (someone else's: left alone), or
 * -errno.
 */
int blk_tfs_enable_event(struct blk_tfs *t, const char *event, const char *filter, int *filtered);

/* Set the ring buffer to @kb KiB per CPU (buffer_size_kb; put back on close). 0 or -errno. */
int blk_tfs_resize(struct blk_tfs *t, unsigned int kb);

/* Open per_cpu/cpuN/trace_pipe_raw (non-blocking). Return an fd or -errno. */
int blk_tfs_open_cpu(struct blk_tfs *t, int cpu);

/* Events lost on @cpu since blk_tfs_open() (overrun + dropped). */
unsigned long long blk_tfs_lost(struct blk_tfs *t, int cpu);

/*
 * The name of @pid: the kernel's saved one (saved_cmdlines), else the last one it gave to
 * blk_tfs_names_refresh(); NULL when neither knows it. @buf holds it.
 */
const char *blk_tfs_comm(struct blk_tfs *t, uint32_t pid, char *buf, size_t len);

/*
 * Keep the names the kernel saves now (saved_cmdlines holds only the last few thousand
 * tasks), for blk_tfs_comm() when pages are converted after the tasks left it.
 */
void blk_tfs_names_refresh(struct blk_tfs *t);

/* Put everything back as found and free @t (NULL allowed). Return 0 or the first -errno. */
int blk_tfs_close(struct blk_tfs *t);

#endif /* BLK_KERNEL_TRACEFS_H */
