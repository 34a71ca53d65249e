/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup notes (the record layouts are in trace.h: BLK_TN_CGROUP, BLK_TN_CGPATH; made with
 * blk_event_note()), and the map a reader builds from them (lib/cgmap.c) to name the
 * cgroup of each event.
 */
#ifndef BLK_CGROUP_H
#define BLK_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/trace.h"

/* Whether @ev is a cgroup run note / a cgroup path note (by its action). */
static inline int blk_event_is_cgroup(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_CGROUP);
}

static inline int blk_event_is_cgpath(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_CGPATH);
}

/* Whether the kernel never tags events of @action with a cgroup: plugs and unplugs. */
static inline int blk_cgroup_untagged(uint64_t action)
{
	unsigned int code = (unsigned int)(action & 0xffff);

	return code == BLK_TA_PLUG || code == BLK_TA_UNPLUG_IO || code == BLK_TA_UNPLUG_TIMER;
}

/*
 * What a reader knows of cgroups: the runs of events each note names, per device and CPU,
 * and the paths of the ids. Opaque; one per run of a tool, used by one thread.
 */
struct blk_cgmap;

/* Counts of what could not be used, for the tool to say. */
struct blk_cgmap_stats {
	uint64_t runs, paths; /* notes taken */
	uint64_t bad; /* notes too short, with a path too long or not printable: skipped */
	uint64_t unnamed; /* ids seen in runs without a path note (named by number) */
};

/**
 * blk_cgmap_new() - an empty map
 * Return: the map (free with blk_cgmap_free(), NULL allowed there), or NULL (no memory).
 */
struct blk_cgmap *blk_cgmap_new(void);
void blk_cgmap_free(struct blk_cgmap *m);

/**
 * blk_cgmap_note() - take the cgroup note @ev (run or path; other records are left alone)
 * Return: 1 taken, 0 not a cgroup note, -EINVAL a cgroup note that is damaged (counted,
 * skipped), -ENOMEM.
 */
int blk_cgmap_note(struct blk_cgmap *m, const struct blk_event *ev);

/**
 * blk_cgmap_lookup() - the cgroup id of the event @ev (by its device, CPU and sequence
 * number), from the run notes taken so far
 * Return: 1 with *@id set, 0 when no run names it or it is a plug or unplug (*@id = 0).
 */
int blk_cgmap_lookup(struct blk_cgmap *m, const struct blk_event *ev, uint64_t *id);

/**
 * blk_cgmap_path() - the path of cgroup @id from its path note
 * Return: the path (it lives as long as @m), or NULL if no note gave one.
 */
const char *blk_cgmap_path(const struct blk_cgmap *m, uint64_t id);

/**
 * blk_cgmap_stats() - what was taken and skipped so far into *@st (the ids without a
 * path are counted now, over every run taken)
 */
void blk_cgmap_stats(const struct blk_cgmap *m, struct blk_cgmap_stats *st);

#endif /* BLK_CGROUP_H */
