/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-second completion counts btt always writes: sys_iops_fp.dat, sys_mbps_fp.dat
 * and the same per device (<dev>_iops_fp.dat, <dev>_mbps_fp.dat).
 */
#ifndef BTT_IOPS_MBPS_H
#define BTT_IOPS_MBPS_H

struct btt_output_ops;

/* the output (output.h): the sys files are created at new(), the last second written at
 * finish() */
extern const struct btt_output_ops iops_mbps_output;

#endif /* BTT_IOPS_MBPS_H */
