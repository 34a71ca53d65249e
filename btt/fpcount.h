/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-second completion counts btt always writes: sys_iops_fp.dat, sys_mbps_fp.dat
 * and the same per device (<dev>_iops_fp.dat, <dev>_mbps_fp.dat).
 */
#ifndef BTT_FPCOUNT_H
#define BTT_FPCOUNT_H

#include <stdint.h>
#include <stdio.h>

struct btt_output_ops;

struct fp_counter {
	FILE *iops, *mbps;
	char *iops_name, *mbps_name;
	long cur;
	uint64_t ios, sectors;
};

struct fpcount {
	struct fp_counter sys;
	struct fp_counter *dev; /* by device index */
	size_t ndev, adev;
};

/* the output (output.h): the sys files are created at new(), the last second written at
 * finish() */
extern const struct btt_output_ops fpcount_output;

#endif /* BTT_FPCOUNT_H */
