// SPDX-License-Identifier: GPL-2.0
/*
 * Devices and processes: lookup and creation, the -D and -e filters, the -M name map.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "iomodel.h"

struct pid_slot {
	uint32_t pid;
	struct proc *pip;
};

static struct pid_slot *pids;
static size_t npids, apids;
static struct dev *last_dev;

struct devmap {
	uint32_t device;
	char name[64];
};
static struct devmap *maps;
static size_t nmaps;

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("out of memory");
	return p;
}

struct dev *dev_find(uint32_t device)
{
	if (last_dev && last_dev->device == device)
		return last_dev;
	for (size_t i = 0; i < bs.ndevs; i++) {
		if (bs.devs[i]->device == device) {
			last_dev = bs.devs[i];
			return last_dev;
		}
	}
	return NULL;
}

static FILE *lat_file(const char *name, const char *dev, const char *kind, char **fn)
{
	char buf[4096];

	if (!name)
		return NULL;
	snprintf(buf, sizeof(buf), "%s_%s_%s.dat", name, dev, kind);
	return file_create(buf, fn);
}

struct dev *dev_get(uint32_t device, uint64_t time)
{
	struct dev *dip = dev_find(device);
	unsigned int ma = BLK_MAJOR(device);
	char name[64];

	if (dip)
		return dip;
	dip = xcalloc(1, sizeof(*dip));
	dip->device = device;
	dip->pre_culling = 1;
	dip->remapper = ma == 9 || ma == 253 || ma == 254;
	dip->last_q = NO_TIME;
	dip->start_time = bit_time(time);
	for (size_t i = 0; i < nmaps; i++)
		if (maps[i].device == device)
			dip->map_name = maps[i].name;
	dev_label(dip, name, sizeof(name), 0);
	dip->q2q_seek = seeki_new(opts.seek_name, name, "q2q");
	dip->d2d_seek = seeki_new(opts.seek_name, name, "d2d");
	fp_init(&dip->fp, name);
	dip->d2c_fp = lat_file(opts.d2c_name, name, "d2c", &dip->d2c_fn);
	dip->q2c_fp = lat_file(opts.q2c_name, name, "q2c", &dip->q2c_fn);
	dip->q2d_fp = lat_file(opts.q2d_name, name, "q2d", &dip->q2d_fn);
	if (opts.percentiles)
		dip->hist = xcalloc(HIST_NR, sizeof(*dip->hist));
	if (bs.ndevs == bs.adevs) {
		bs.adevs = bs.adevs ? bs.adevs * 2 : 8;
		bs.devs = realloc(bs.devs, bs.adevs * sizeof(*bs.devs));
		if (!bs.devs)
			die("out of memory");
	}
	dip->idx = (uint32_t)bs.ndevs;
	bs.devs[bs.ndevs++] = dip;
	last_dev = dip;
	extra_new_dev(dip);
	return dip;
}

void dev_label(const struct dev *dip, char *buf, size_t len, int parens)
{
	if (dip->map_name)
		snprintf(buf, len, "%s", dip->map_name);
	else if (parens)
		snprintf(buf, len, "(%3u,%3u)", BLK_MAJOR(dip->device), BLK_MINOR(dip->device));
	else
		snprintf(buf, len, "%u,%u", BLK_MAJOR(dip->device), BLK_MINOR(dip->device));
}

/* -D "maj,min;maj,min": whether @dip is in the list (always, without -D) */
int dev_shown(const struct dev *dip)
{
	const char *p = opts.devices;
	unsigned int ma, mi;
	int n;

	if (!p)
		return 1;
	while (*p) {
		if (sscanf(p, "%u,%u%n", &ma, &mi, &n) == 2) {
			if (BLK_MKDEV(ma, mi) == dip->device)
				return 1;
			p += n;
		}
		p = strchr(p, ';');
		if (!p)
			break;
		p++;
	}
	return 0;
}

static struct pid_slot *pid_slot(uint32_t pid)
{
	size_t i = (pid * 2654435761u) & (apids - 1);

	while (pids[i].pip && pids[i].pid != pid)
		i = (i + 1) & (apids - 1);
	return &pids[i];
}

struct proc *proc_find(uint32_t pid)
{
	if (!npids)
		return NULL;
	return pid_slot(pid)->pip;
}

/* the process of an event; one never named by a note gets the name "pid%09u" */
struct proc *proc_get(uint32_t pid)
{
	struct proc *pip = proc_find(pid);
	char name[32];

	if (pip)
		return pip;
	snprintf(name, sizeof(name), "pid%09u", pid);
	proc_register(pid, name);
	return proc_find(pid);
}

static void pid_insert(uint32_t pid, struct proc *pip)
{
	struct pid_slot *old = pids, *s;
	size_t oalloc = apids;

	if ((npids + 1) * 2 > apids) {
		apids = apids ? apids * 2 : 64;
		pids = xcalloc(apids, sizeof(*pids));
		for (size_t i = 0; i < oalloc; i++)
			if (old[i].pip)
				*pid_slot(old[i].pid) = old[i];
		free(old);
	}
	s = pid_slot(pid);
	if (!s->pip)
		npids++;
	s->pid = pid;
	s->pip = pip;
}

void proc_register(uint32_t pid, const char *name)
{
	struct proc *pip;

	if (proc_find(pid))
		return;
	for (size_t i = 0; i < bs.nprocs; i++) {
		if (strcmp(bs.procs[i]->name, name) == 0) {
			pid_insert(pid, bs.procs[i]);
			return;
		}
	}
	pip = xcalloc(1, sizeof(*pip));
	pip->name = strdup(name);
	if (!pip->name)
		die("out of memory");
	pip->last_q = NO_TIME;
	pip->idx = (uint32_t)bs.nprocs;
	if (bs.nprocs == bs.aprocs) {
		bs.aprocs = bs.aprocs ? bs.aprocs * 2 : 16;
		bs.procs = realloc(bs.procs, bs.aprocs * sizeof(*bs.procs));
		if (!bs.procs)
			die("out of memory");
	}
	bs.procs[bs.nprocs++] = pip;
	pid_insert(pid, pip);
}

/*
 * The devices in report order: creation order, or with -D the order of the list (devices
 * of the list that the trace does not have are left out).
 */
void devs_order(void)
{
	const char *p = opts.devices;
	unsigned int ma, mi;
	struct dev *dip;

	free(bs.out);
	bs.out = xcalloc(bs.ndevs ? bs.ndevs : 1, sizeof(*bs.out));
	bs.nout = 0;
	if (!p) {
		for (size_t i = 0; i < bs.ndevs; i++)
			bs.out[bs.nout++] = bs.devs[i];
		return;
	}
	while (*p && bs.nout < bs.ndevs) {
		if (sscanf(p, "%u,%u", &ma, &mi) == 2 && (dip = dev_find(BLK_MKDEV(ma, mi)))) {
			size_t k;

			for (k = 0; k < bs.nout && bs.out[k] != dip; k++)
				;
			if (k == bs.nout)
				bs.out[bs.nout++] = dip;
		}
		p = strchr(p, ';');
		if (!p)
			break;
		p++;
	}
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *pa = *(const struct proc *const *)a;
	const struct proc *pb = *(const struct proc *const *)b;

	return strcmp(pa->name, pb->name);
}

void devs_sort_procs(void)
{
	if (bs.nprocs)
		qsort(bs.procs, bs.nprocs, sizeof(*bs.procs), proc_cmp);
}

/*
 * -M file: "<name> <maj>,<min>" per line; reading stops at a line that mentions "Device"
 * or does not parse.
 */
int devmap_load(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[512], name[64];
	unsigned int ma, mi;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (strstr(line, "Device"))
			break;
		if (sscanf(line, "%63s %u,%u", name, &ma, &mi) != 3)
			break;
		maps = realloc(maps, (nmaps + 1) * sizeof(*maps));
		if (!maps)
			die("out of memory");
		maps[nmaps].device = BLK_MKDEV(ma, mi);
		snprintf(maps[nmaps].name, sizeof(maps[nmaps].name), "%s", name);
		nmaps++;
	}
	fclose(fp);
	return 0;
}

/* The requests still queued when the trace ends: not needed by the report. */
void devs_drop_ios(void)
{
	for (size_t i = 0; i < bs.ndevs; i++)
		qtree_reset(&bs.devs[i]->qt);
	qio_release_all();
#ifdef __GLIBC__
	/* give the freed pages back before the seek statistics take their memory */
	malloc_trim(0);
#endif
}

void devs_release(void)
{
	devs_drop_ios();
	for (size_t i = 0; i < bs.ndevs; i++) {
		struct dev *dip = bs.devs[i];

		region_release(&dip->regions);
		live_release(&dip->live);
		seeki_free(dip->q2q_seek);
		seeki_free(dip->d2d_seek);
		free(dip->hist);
		u64map_free(&dip->d_no_q);
		free(dip);
	}
	free(bs.devs);
	bs.devs = NULL;
	free(bs.out);
	bs.out = NULL;
	bs.nout = 0;
	bs.ndevs = bs.adevs = 0;
	for (size_t i = 0; i < bs.nprocs; i++) {
		region_release(&bs.procs[i]->regions);
		free(bs.procs[i]->name);
		free(bs.procs[i]);
	}
	free(bs.procs);
	bs.procs = NULL;
	bs.nprocs = bs.aprocs = 0;
	free(pids);
	pids = NULL;
	npids = apids = 0;
	free(maps);
	maps = NULL;
	nmaps = 0;
	last_dev = NULL;
}
