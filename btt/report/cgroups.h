/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O by cgroup": per cgroup and device, the bios (model/bios.h) the trace's cgroup notes
 * charge to it (include/blk/trace.h, BLK_TN_CGROUP and BLK_TN_CGPATH, recorded by blktrace
 * --origin), their bytes, and their Q2C and D2C mean and 99th percentile. Ours, not btt
 * 2.09's: the section is printed only for a trace that holds cgroup notes.
 */
#ifndef BTT_CGROUPS_H
#define BTT_CGROUPS_H

extern const struct btt_output_ops cgroups_output;

#endif /* BTT_CGROUPS_H */
