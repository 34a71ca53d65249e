/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-second completion counts btt always writes: sys_iops_fp.dat, sys_mbps_fp.dat
 * and the same per device (<dev>_iops_fp.dat, <dev>_mbps_fp.dat).
 */
#ifndef BTT_FPCOUNT_H
#define BTT_FPCOUNT_H

#include <stdint.h>
#include <stdio.h>

struct btt;

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

/* a subscriber to @b->model; the sys files are created now */
struct fpcount *fpcount_new(struct btt *b);
/* write the last second of each counter and close the files */
void fpcount_finish(struct fpcount *f);
void fpcount_free(struct fpcount *f);

#endif /* BTT_FPCOUNT_H */
