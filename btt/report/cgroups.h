/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O by cgroup": per cgroup and device, the bios (model/bios.h) the trace's cgroup notes
 * charge to it (include/blk/trace.h, BLK_TN_CGROUP and BLK_TN_CGPATH, recorded by blktrace
 * --origin), their bytes, and their Q2C and D2C mean and 99th percentile. Ours, not btt
 * 2.09's: the section is printed only for a trace that holds cgroup notes.
 */
#ifndef BTT_CGROUPS_H
#define BTT_CGROUPS_H

#include <stdint.h>

extern const struct btt_output_ops cgroups_output;

/*
 * cgroups_bio() - the cgroup the notes gave bio @id at its Q, while it is in flight (until
 * the section's done() for it, which comes after those subscribed before the first note)
 * Return: 1 with *@cg and *@path (NULL: no path note; it lives as long as the run), 0 when
 * none (or @state is NULL).
 */
int cgroups_bio(const void *state, uint32_t id, uint64_t *cg, const char **path);

#endif /* BTT_CGROUPS_H */
