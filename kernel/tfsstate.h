/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracefs settings a blktrace changed, and how to put them back: by the tracer itself
 * when it ends, and by 'blktrace -k' after it was killed (SIGKILL runs no cleanup), from a
 * state file under /run the tracer keeps while it traces (kernel/tfsstate.c). Private to
 * kernel/.
 */
#ifndef BLK_KERNEL_TFSSTATE_H
#define BLK_KERNEL_TFSSTATE_H

#include <stddef.h>

#include "util.h"

#define TFS_STATE_DIR "/run/blktrace-ng"
#define TFS_STATE_FILE TFS_STATE_DIR "/tracefs.state"

/* an event blktrace --origin enabled (it was off and unfiltered): put back off */
struct tfs_state_event {
	char name[96]; /* "group/name" under events/ */
};

/* a device whose trace/enable was set (its act_mask lives and dies with that trace) */
struct tfs_state_dev {
	char name[64]; /* under /sys/class/block */
};

/* what was found before anything was changed */
struct tfs_state {
	int pid; /* the tracer that changed it */
	char dir[KPATH_DIR]; /* the tracefs mount */
	int was_on, bin;
	char tracer[64], clock[32], buf_kb[32];
	char cmdlines[32]; /* saved_cmdlines_size */
	char cgroup[8]; /* options/blk_cgroup, when blktrace --origin set it ("" if not) */
	struct tfs_state_dev *devs;
	int ndevs;
	struct tfs_state_event *events;
	int nevents;
};

/* tfs_state_put_back()'s @what: which settings were changed */
enum {
	TFS_PUT_BIN = 1 << 0,
	TFS_PUT_TRACER = 1 << 1,
	TFS_PUT_DEVS = 1 << 2, /* each device's trace/enable to 0 */
	TFS_PUT_BUF = 1 << 3,
	TFS_PUT_CLOCK = 1 << 4,
	TFS_PUT_CMDLINES = 1 << 5,
	TFS_PUT_CGROUP = 1 << 6,
	TFS_PUT_EVENTS = 1 << 7, /* each event's enable and filter to 0 */
	TFS_PUT_ALL = 0xff,
};

/* Add event @name to @s->events. 0 or -ENOMEM. */
int tfs_state_add_event(struct tfs_state *s, const char *name);

/* Write @v to @rel under @s->dir (a tracefs file). 0 or -errno. */
int tfs_state_set(const struct tfs_state *s, const char *rel, const char *v);

/**
 * tfs_state_put_back() - write the settings of @what back as @s found them, tracing off
 * first and tracing_on as found last
 * Return: 0, or the first -errno (every setting is tried).
 */
int tfs_state_put_back(const struct tfs_state *s, unsigned int what);

/* Keep @s in TFS_STATE_FILE (written whole, then renamed). 0 or -errno. */
int tfs_state_save(const struct tfs_state *s);

/* Remove TFS_STATE_FILE when it is process @pid's. */
void tfs_state_forget(int pid);

/**
 * tfs_state_load() - read TFS_STATE_FILE into @s (free with tfs_state_free())
 * Return: 0, -ENOENT when there is none, -EINVAL when it is not one, or -errno.
 */
int tfs_state_load(struct tfs_state *s);

void tfs_state_free(struct tfs_state *s);

/* "current_tracer=nop trace_clock=local ...": what @s puts back, for messages */
void tfs_state_describe(const struct tfs_state *s, char *buf, size_t len);

#endif /* BLK_KERNEL_TFSSTATE_H */
