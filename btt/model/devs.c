// SPDX-License-Identifier: GPL-2.0
/*
 * Devices and processes: lookup and creation, the -D filter and order, the -M name map
 * and the names the trace's notes give (see devs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/trace.h"
#include "model/alloc.h"
#include "model/devs.h"

void devs_init(struct btt_devs *d, const char *filter)
{
	memset(d, 0, sizeof(*d));
	d->filter = filter;
}

struct btt_dev *devs_find(struct btt_devs *d, uint32_t device)
{
	if (d->last && d->last->device == device)
		return d->last;
	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i]->device == device) {
			d->last = d->v[i];
			return d->last;
		}
	}
	return NULL;
}

/* the place of @device in the -D list (its first mention), or -1 */
static long filter_pos(const char *p, uint32_t device)
{
	unsigned int ma, mi;
	long pos = 0;
	int n;

	while (*p) {
		if (sscanf(p, "%u,%u%n", &ma, &mi, &n) == 2) {
			if (BLK_MKDEV(ma, mi) == device)
				return pos;
			p += n;
		}
		pos++;
		p = strchr(p, ';');
		if (!p)
			break;
		p++;
	}
	return -1;
}

/* a new shown device takes its place in the report order */
static void order_add(struct btt_devs *d, struct btt_dev *dip)
{
	size_t k;

	d->out = array_grow(d->out, &d->aout, d->nout, sizeof(*d->out));
	if (!d->filter) {
		d->out[d->nout++] = dip;
		return;
	}
	/* by the place in the list */
	k = d->nout;
	while (k &&
	       filter_pos(d->filter, d->out[k - 1]->device) > filter_pos(d->filter, dip->device)) {
		d->out[k] = d->out[k - 1];
		k--;
	}
	d->out[k] = dip;
	d->nout++;
}

static void make_labels(struct btt_dev *dip, const char *map_name)
{
	unsigned int ma = BLK_MAJOR(dip->device), mi = BLK_MINOR(dip->device);

	dip->mapped = !!map_name;
	if (map_name) {
		snprintf(dip->name, sizeof(dip->name), "%s", map_name);
		snprintf(dip->label, sizeof(dip->label), "%s", map_name);
	} else {
		snprintf(dip->name, sizeof(dip->name), "%u,%u", ma, mi);
		snprintf(dip->label, sizeof(dip->label), "(%3u,%3u)", ma, mi);
	}
}

struct btt_dev *devs_get_slow(struct btt_devs *d, uint32_t device, uint64_t time, int *created)
{
	struct btt_dev *dip = devs_find(d, device);
	unsigned int ma = BLK_MAJOR(device);
	const char *map_name = NULL;

	*created = 0;
	if (dip)
		return dip;
	dip = xcalloc(1, sizeof(*dip));
	dip->device = device;
	dip->idx = (uint32_t)d->n;
	dip->pre_culling = 1;
	dip->remapper = ma == 9 || ma == 253 || ma == 254;
	dip->shown = !d->filter || filter_pos(d->filter, device) >= 0;
	dip->first_ns = dip->last_ns = time;
	for (size_t i = 0; i < d->nmaps; i++)
		if (d->maps[i].device == device)
			map_name = d->maps[i].name;
	make_labels(dip, map_name);
	for (size_t i = 0; i < d->ntnames; i++)
		if (d->tnames[i].device == device)
			memcpy(dip->trace_name, d->tnames[i].name, sizeof(dip->trace_name));
	d->v = array_grow(d->v, &d->alloc, d->n, sizeof(*d->v));
	d->v[d->n++] = dip;
	if (dip->shown)
		order_add(d, dip);
	d->last = dip;
	*created = 1;
	return dip;
}

static struct btt_pid_slot *pid_slot(const struct btt_devs *d, uint32_t pid)
{
	size_t i = (pid * 2654435761u) & (d->apids - 1);

	while (d->pids[i].pip && d->pids[i].pid != pid)
		i = (i + 1) & (d->apids - 1);
	return &d->pids[i];
}

struct btt_proc *procs_find(const struct btt_devs *d, uint32_t pid)
{
	if (!d->npids)
		return NULL;
	return pid_slot(d, pid)->pip;
}

struct btt_proc *procs_get_slow(struct btt_devs *d, uint32_t pid)
{
	struct btt_proc *pip = procs_find(d, pid);
	char name[32];

	if (!pip) {
		snprintf(name, sizeof(name), "pid%09u", pid);
		procs_register(d, pid, name);
		pip = procs_find(d, pid);
	}
	/* a pid keeps its process: it can be remembered */
	d->last_pid = pid;
	d->last_proc = pip;
	return pip;
}

static void pid_insert(struct btt_devs *d, uint32_t pid, struct btt_proc *pip)
{
	struct btt_pid_slot *old = d->pids, *s;
	size_t oalloc = d->apids;

	if ((d->npids + 1) * 2 > d->apids) {
		d->apids = d->apids ? d->apids * 2 : 64;
		d->pids = xcalloc(d->apids, sizeof(*d->pids));
		for (size_t i = 0; i < oalloc; i++)
			if (old[i].pip)
				*pid_slot(d, old[i].pid) = old[i];
		free(old);
	}
	s = pid_slot(d, pid);
	if (!s->pip)
		d->npids++;
	s->pid = pid;
	s->pip = pip;
}

void procs_register(struct btt_devs *d, uint32_t pid, const char *name)
{
	struct btt_proc *pip;

	if (procs_find(d, pid))
		return;
	for (size_t i = 0; i < d->nprocs; i++) {
		if (strcmp(d->procs[i]->name, name) == 0) {
			pid_insert(d, pid, d->procs[i]);
			return;
		}
	}
	pip = xcalloc(1, sizeof(*pip));
	pip->name = xstrdup(name);
	pip->idx = (uint32_t)d->nprocs;
	d->procs = array_grow(d->procs, &d->aprocs, d->nprocs, sizeof(*d->procs));
	d->procs[d->nprocs++] = pip;
	pid_insert(d, pid, pip);
}

static int proc_cmp(const void *a, const void *b)
{
	const struct btt_proc *pa = *(const struct btt_proc *const *)a;
	const struct btt_proc *pb = *(const struct btt_proc *const *)b;

	return strcmp(pa->name, pb->name);
}

void devs_sort_procs(struct btt_devs *d)
{
	if (d->nprocs)
		qsort(d->procs, d->nprocs, sizeof(*d->procs), proc_cmp);
}

void devs_name_from_trace(struct btt_devs *d, uint32_t device, const char *name)
{
	struct btt_dev *dip = devs_find(d, device);

	if (dip) {
		if (!dip->trace_name[0])
			snprintf(dip->trace_name, sizeof(dip->trace_name), "%s", name);
		return;
	}
	for (size_t i = 0; i < d->ntnames; i++)
		if (d->tnames[i].device == device)
			return;
	d->tnames = array_grow(d->tnames, &d->atnames, d->ntnames, sizeof(*d->tnames));
	d->tnames[d->ntnames].device = device;
	snprintf(d->tnames[d->ntnames].name, sizeof(d->tnames[d->ntnames].name), "%s", name);
	d->ntnames++;
}

int devs_load_map(struct btt_devs *d, const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[512], name[BTT_LABEL_LEN];
	unsigned int ma, mi;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		struct btt_devmap *m;

		if (strstr(line, "Device"))
			break;
		if (sscanf(line, "%63s %u,%u", name, &ma, &mi) != 3)
			break;
		m = realloc(d->maps, (d->nmaps + 1) * sizeof(*d->maps));
		if (!m) {
			fclose(fp);
			return -ENOMEM;
		}
		d->maps = m;
		d->maps[d->nmaps].device = BLK_MKDEV(ma, mi);
		snprintf(d->maps[d->nmaps].name, sizeof(d->maps[d->nmaps].name), "%s", name);
		d->nmaps++;
	}
	fclose(fp);
	return 0;
}

void devs_release(struct btt_devs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	free(d->out);
	for (size_t i = 0; i < d->nprocs; i++) {
		free(d->procs[i]->name);
		free(d->procs[i]);
	}
	free(d->procs);
	free(d->pids);
	free(d->maps);
	free(d->tnames);
	devs_init(d, NULL);
}
