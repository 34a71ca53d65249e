/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything that talks to a kernel (kernel/): the BLKTRACE* ioctls and relay files in
 * debugfs, the ftrace "blk" tracer in tracefs, and the discovery and save/restore of
 * both. The tracer front-end (blktrace.c) chooses a backend and runs the threads.
 */
#ifndef BLK_KERNEL_H
#define BLK_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define BLKTRACESETUP_NR 115
#define BLKTRACESTART_NR 116
#define BLKTRACESTOP_NR 117
#define BLKTRACETEARDOWN_NR 118
#define BLKTRACESETUP2_NR 142

/* ---- filesystems ---- */

/**
 * blk_find_debugfs() - the debugfs mount point (mounting it at /sys/kernel/debug if
 * @mount_it and nothing is mounted)
 * Return: 0 and @buf filled, or -errno (-ENOENT: not mounted).
 */
int blk_find_debugfs(const char *hint, int mount_it, char *buf, size_t len);

/* The same for tracefs (/sys/kernel/tracing, or debugfs/tracing). */
int blk_find_tracefs(int mount_it, char *buf, size_t len);

/* Online CPUs (from /sys/devices/system/cpu/online): fills @cpus, returns the count or -errno. */
int blk_online_cpus(int *cpus, int max);

/* ---- relay (BLKTRACESETUP) ---- */

struct blk_relay_setup {
	uint64_t act_mask; /* categories (16 bits with the v1 ioctl) */
	uint32_t buf_size, buf_nr;
	char name[64]; /* out: the kernel's name for the device */
	int version; /* out: 2 if BLKTRACESETUP2 was used, else 1 */
};

/* BLKTRACESETUP2, falling back to BLKTRACESETUP. Return 0 or -errno. */
int blk_relay_setup(int fd, struct blk_relay_setup *s);
int blk_relay_start(int fd);
int blk_relay_stop(int fd);
int blk_relay_teardown(int fd);

/*
 * blk_relay_cgroup_reset() - turn the blk tracer's blk_cgroup option under @tracefs off (what
 * a relay tracer with --origin killed by SIGKILL left on: the classic tools reject the records
 * it tags). Return 1 if it was on, 0 if it was off or the kernel has none, or -errno.
 */
int blk_relay_cgroup_reset(const char *tracefs);

/* Read debugfs/block/NAME/dropped. Return the count, or -errno. */
long long blk_relay_dropped(const char *debugfs, const char *name);

/* ---- tracefs blk tracer ---- */

/*
 * blk_tfs_kill() - blktrace -k through tracefs: when the blk tracer is in use, turn off
 * tracing of the devices (@sysnames), then wait up to @wait_ms for the tracer reading the
 * buffer to notice and put tracefs back; when no process reads it (a tracer killed with
 * SIGKILL), put the blk tracer and the bin option back to their defaults (nop, 0) itself.
 * The trace clock and buffer size are left as they are (what they were is not known).
 * Return: 0 if the blk tracer was not in use, 1 if a running tracer stopped, 2 if a
 * left-over was reset (a message in @msg for both), or -errno with the reason in @msg.
 */
int blk_tfs_kill(const char *dir, const char *const *sysnames, int ndevs, int wait_ms, char *msg,
		 size_t len);

/*
 * blk_iowait_kill() - blktrace -k for the I/O wait backend: turn off the tracefs
 * instances of running tracers (they notice, end and remove them), remove those and the
 * kprobe events of tracers that are gone (killed with SIGKILL).
 * Return: 0 if there was nothing, 1 with a message in @msg, or -errno with the reason.
 */
int blk_iowait_kill(const char *tracefs, char *msg, size_t len);

/*
 * blk_fsside_kill() - blktrace -k for --origin's instance beside the relay backend
 * (blk_backend_fsside): turn off those of running tracers (they notice, end and remove
 * them), remove those of tracers that are gone (killed with SIGKILL).
 * Return: 0 if there was none, 1 with a message in @msg, or -errno with the reason.
 */
int blk_fsside_kill(const char *tracefs, char *msg, size_t len);

/*
 * Header of each record read from trace_pipe in the "bin" format (the read path before
 * trace_pipe_raw; its unit test checks the raw pages' records against this format).
 */
struct blk_tfs_ent {
	uint32_t pid;
	uint32_t cpu;
	uint64_t ts;
};
_Static_assert(sizeof(struct blk_tfs_ent) == 16, "tracefs bin header is 16 bytes");

#endif /* BLK_KERNEL_H */
