// SPDX-License-Identifier: GPL-2.0
/*
 * Output files of btt: creation, removal of those left empty, per-second completion
 * counts (the _fp.dat files) and per-IO latency lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btt.h"
#include "common.h"

FILE *file_create(const char *name, char **saved)
{
	FILE *fp = fopen(name, "w");

	if (!fp) {
		error("cannot create '%s': %s", name, strerror(errno));
		exit(1);
	}
	if (saved) {
		*saved = strdup(name);
		if (!*saved)
			die("out of memory");
	}
	return fp;
}

/* Close *@fp (if open); remove the file if nothing was written to it. */
void file_close(FILE **fp, char **name)
{
	long size;

	if (!*fp)
		return;
	size = ftell(*fp);
	if (fclose(*fp) != 0)
		error("write error on '%s': %s", name && *name ? *name : "?", strerror(errno));
	if (size == 0 && name && *name)
		unlink(*name);
	*fp = NULL;
	if (name) {
		free(*name);
		*name = NULL;
	}
}

void fp_init(struct fp_counter *fc, const char *prefix)
{
	char fn[4096];

	snprintf(fn, sizeof(fn), "%s_iops_fp.dat", prefix);
	fc->iops = file_create(fn, &fc->iops_name);
	snprintf(fn, sizeof(fn), "%s_mbps_fp.dat", prefix);
	fc->mbps = file_create(fn, &fc->mbps_name);
	fc->cur = -1;
}

static void fp_flush(struct fp_counter *fc)
{
	fprintf(fc->iops, "%ld %llu\n", fc->cur, (unsigned long long)fc->ios);
	fprintf(fc->mbps, "%ld %lf\n", fc->cur, (double)fc->sectors * 512.0 / (1024.0 * 1024.0));
}

void fp_add(struct fp_counter *fc, uint64_t time, uint32_t sectors)
{
	long sec = (long)(time / 1000000000ULL);

	if (!fc->iops)
		return;
	if (sec != fc->cur) {
		if (fc->cur != -1)
			fp_flush(fc);
		fc->cur = sec;
		fc->ios = 0;
		fc->sectors = 0;
	}
	fc->ios++;
	fc->sectors += sectors;
}

void fp_finish(struct fp_counter *fc)
{
	if (!fc->iops)
		return;
	fp_flush(fc);
	file_close(&fc->iops, &fc->iops_name);
	file_close(&fc->mbps, &fc->mbps_name);
}

void latency_write(FILE *fp, uint64_t when, uint64_t lat)
{
	if (fp)
		fprintf(fp, "%lf %lf\n", bit_time(when), bit_time(lat));
}

struct plat {
	FILE *fp;
	char *name;
	double start, last, total;
	long n;
};

/* the middle of a window as btt 2.09 computes it (the halved sum rounds differently) */
static double plat_mid(const struct plat *p)
{
	return p->start + (p->last - p->start) / 2;
}

void plat_add(struct dev *dip, int kind, uint64_t when, uint64_t lat)
{
	static const char *const kinds[] = {"q2c", "d2c", "q2d"};
	struct plat *p = dip->plat[kind];
	double t = bit_time(when);
	char dev[64], fn[4096];

	if (opts.plat_freq <= 0)
		return;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			die("out of memory");
		dev_label(dip, dev, sizeof(dev), 0);
		snprintf(fn, sizeof(fn), "%s_%s_plat.dat", dev, kinds[kind]);
		p->fp = file_create(fn, &p->name);
		dip->plat[kind] = p;
	}
	if (p->n == 0) {
		p->start = t;
	} else if (t - p->start >= opts.plat_freq) {
		fprintf(p->fp, "%lf %lf\n", plat_mid(p), p->total / (double)p->n);
		p->start = t;
		p->total = 0;
		p->n = 0;
	}
	p->total += bit_time(lat);
	p->n++;
	p->last = t;
}

void plat_finish(struct dev *dip)
{
	for (int k = 0; k < 3; k++) {
		struct plat *p = dip->plat[k];

		if (!p)
			continue;
		if (p->n)
			fprintf(p->fp, "%lf %lf\n", plat_mid(p), p->total / (double)p->n);
		file_close(&p->fp, &p->name);
		free(p);
		dip->plat[k] = NULL;
	}
}
