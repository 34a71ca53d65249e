// SPDX-License-Identifier: GPL-2.0
/*
 * Time series from the event stream, in bounded memory: pass 1 finds each trace's time
 * range, devices and event kinds; pass 2 bins throughput, IOPS, latency and queue depth
 * into IOW_NBUCKETS buckets over the plotted window, latency percentiles into
 * IOW_NBANDS histograms, and the I/O map into a pixel grid of counters.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "iowatcher.h"

#define NS_PER_SEC 1000000000ull
#define FL_MAX_BITS 22 /* at most 4M requests in flight are tracked */

static const char *const graph_names[IOW_G_NR] = {
	[IOW_G_IO] = "io",
	[IOW_G_TPUT] = "tput",
	[IOW_G_FIO] = "fio",
	[IOW_G_CPU_SYS] = "cpu-sys",
	[IOW_G_CPU_IO] = "cpu-io",
	[IOW_G_CPU_IRQ] = "cpu-irq",
	[IOW_G_CPU_SOFT] = "cpu-soft",
	[IOW_G_CPU_USER] = "cpu-user",
	[IOW_G_LATENCY] = "latency",
	[IOW_G_LATHIST] = "latency-hist",
	[IOW_G_QDEPTH] = "queue-depth",
	[IOW_G_IOPS] = "iops",
};

int iow_graph_from_name(const char *name)
{
	if (!strcmp(name, "queue_depth"))
		return IOW_G_QDEPTH;
	for (int i = 0; i < IOW_G_NR; i++)
		if (!strcmp(name, graph_names[i]))
			return i;
	return -1;
}

const char *iow_graph_name(int g)
{
	return graph_names[g];
}

static int is_io(const struct blk_event *ev)
{
	return !blk_event_has_cat(ev, BLK_TC_PC);
}

static struct iow_dev *find_dev(struct iow_trace *t, uint32_t dev, int add)
{
	for (unsigned int i = 0; i < t->ndevs; i++)
		if (t->devs[i].dev == dev)
			return &t->devs[i];
	if (!add || t->ndevs == IOW_MAX_DEVS)
		return NULL;
	t->devs[t->ndevs].dev = dev;
	return &t->devs[t->ndevs++];
}

/* -P: a small hash table of processes (at most IOW_MAX_PIDS, the rest are not counted) */
#define PID_SLOTS (2 * IOW_MAX_PIDS)

static void count_pid(struct iow_trace *t, uint32_t pid, int k)
{
	uint32_t j = (pid * 2654435761u) & (PID_SLOTS - 1);

	while (t->pids[j].used && t->pids[j].pid != pid)
		j = (j + 1) & (PID_SLOTS - 1);
	if (!t->pids[j].used) {
		if (t->npids == IOW_MAX_PIDS)
			return;
		t->pids[j].used = 1;
		t->pids[j].pid = pid;
		t->npids++;
	}
	t->pids[j].n[k]++;
}

/* -P: give the colours to the processes with the most plotted events, busiest first */
static void pick_procs(struct iow_trace *t)
{
	int k = t->io_act == BLK_TA_QUEUE ? 0 : t->io_act == BLK_TA_ISSUE ? 1 : 2;

	t->nprocs = 0;
	while (t->nprocs < IOW_MAX_PROCS) {
		struct iow_pid_count *best = NULL;

		for (unsigned int i = 0; i < PID_SLOTS; i++) {
			struct iow_pid_count *c = &t->pids[i];

			if (c->used && c->n[k] &&
			    (!best || c->n[k] > best->n[k] ||
			     (c->n[k] == best->n[k] && c->pid < best->pid)))
				best = c;
		}
		if (!best)
			break;
		t->procs[t->nprocs++].pid = best->pid;
		best->n[k] = 0;
	}
}

static void pass1_event(struct iow_trace *t, const struct blk_event *ev, void *arg)
{
	unsigned int code = blk_event_code(ev);
	struct iow_dev *d;

	(void)arg;
	t->nevents++;
	if (ev->time > t->t_max)
		t->t_max = ev->time;
	if (!is_io(ev))
		return;
	if (code == BLK_TA_QUEUE)
		t->nq++;
	else if (code == BLK_TA_ISSUE)
		t->nd++;
	else if (code == BLK_TA_COMPLETE)
		t->nc++;
	else
		return;
	if (t->pids)
		count_pid(t, ev->pid, code == BLK_TA_QUEUE ? 0 : code == BLK_TA_ISSUE ? 1 : 2);
	d = find_dev(t, ev->device, 1);
	if (d && ev->sector + blk_event_sectors(ev) > d->max_end)
		d->max_end = ev->sector + blk_event_sectors(ev);
}

static unsigned int first_of(const struct iow_trace *t, const unsigned int *codes)
{
	for (int i = 0; i < 3; i++) {
		uint64_t n = codes[i] == BLK_TA_QUEUE	? t->nq
			     : codes[i] == BLK_TA_ISSUE ? t->nd
							: t->nc;

		if (n)
			return codes[i];
	}
	return 0;
}

int iow_pass1(struct iow_opts *o)
{
	static const unsigned int cdq[3] = {BLK_TA_COMPLETE, BLK_TA_ISSUE, BLK_TA_QUEUE};
	static const unsigned int qdc[3] = {BLK_TA_QUEUE, BLK_TA_ISSUE, BLK_TA_COMPLETE};

	for (int i = 0; i < o->ntraces; i++) {
		struct iow_trace *t = o->traces[i];
		uint64_t base = 0;

		if (o->per_process) {
			t->pids = calloc(PID_SLOTS, sizeof(*t->pids));
			if (!t->pids)
				die("out of memory");
		}
		if (iow_trace_walk(t, pass1_event, o) < 0)
			return -1;
		if (t->damaged && !t->nevents)
			return -1;
		if (t->damaged)
			fprintf(stderr,
				"hint: plotting the %llu events of '%s' before the damage\n",
				(unsigned long long)t->nevents, t->arg);
		if (!t->nevents)
			warning("trace '%s' has no events", t->arg);
		t->tput_act = first_of(t, cdq);
		t->io_act = o->io_act ? (unsigned int)o->io_act : first_of(t, qdc);
		t->lat_from = !t->nc ? 0 : t->nd ? BLK_TA_ISSUE : t->nq ? BLK_TA_QUEUE : 0;
		if (t->pids) {
			pick_procs(t);
			free(t->pids);
			t->pids = NULL;
		}
		/* several devices in one trace are stacked into banks */
		for (unsigned int d = 0; d < t->ndevs; d++) {
			t->devs[d].base = base;
			base += t->devs[d].max_end;
		}
		t->bank_end = base;
	}
	return 0;
}

void iow_layout(struct iow_opts *o)
{
	uint64_t t_end = 0, y_end = 0;

	for (int i = 0; i < o->ntraces; i++) {
		if (o->traces[i]->t_max > t_end)
			t_end = o->traces[i]->t_max;
		if (o->traces[i]->bank_end > y_end)
			y_end = o->traces[i]->bank_end;
	}
	for (int i = 0; i < o->nfios; i++)
		if (o->fios[i]->t_max > t_end)
			t_end = o->fios[i]->t_max;
	if (!t_end)
		t_end = NS_PER_SEC;
	if (!y_end)
		y_end = 2048;
	o->t_end = t_end;
	o->x0 = o->xmin >= 0 ? (uint64_t)(o->xmin * 1e9) : 0;
	o->x1 = o->xmax >= 0 ? (uint64_t)(o->xmax * 1e9) : t_end;
	if (o->x1 <= o->x0)
		o->x1 = o->x0 + NS_PER_SEC;
	o->y_end = y_end;
	o->y0 = o->ymin >= 0 ? (uint64_t)(o->ymin * 2048.0) : 0;
	o->y1 = o->ymax >= 0 ? (uint64_t)(o->ymax * 2048.0) : y_end;
	if (o->y1 <= o->y0)
		o->y1 = o->y0 + 2048;
	o->grid_w = o->width < IOW_GRID_X_MAX ? (unsigned int)o->width : IOW_GRID_X_MAX;
	o->grid_h = o->height < IOW_GRID_Y_MAX ? (unsigned int)o->height : IOW_GRID_Y_MAX;
}

uint64_t iow_bucket_ns(const struct iow_opts *o)
{
	uint64_t b = (o->x1 - o->x0) / IOW_NBUCKETS;

	return b ? b : 1;
}

/* bucket of time @t, or -1 outside the window */
static int bucket_of(const struct iow_opts *o, uint64_t t, unsigned int n)
{
	uint64_t i;

	if (t < o->x0 || t > o->x1)
		return -1;
	i = (uint64_t)((double)(t - o->x0) * n / (double)(o->x1 - o->x0));
	return i >= n ? (int)n - 1 : (int)i;
}

/* ---- the in-flight table ---- */

static uint64_t fl_hash(uint32_t dev, uint64_t sector)
{
	uint64_t h = sector * 0x9e3779b97f4a7c15ull ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4full);

	return h ^ (h >> 29);
}

static int fl_grow(struct iow_inflight *fl)
{
	uint64_t nsize = fl->slot ? (fl->mask + 1) * 2 : 1024;
	struct iow_slot *old = fl->slot, *ns;
	uint64_t osize = fl->slot ? fl->mask + 1 : 0;

	if (nsize > (1ull << FL_MAX_BITS))
		return -ENOSPC;
	ns = calloc(nsize, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	fl->slot = ns;
	fl->mask = nsize - 1;
	for (uint64_t i = 0; i < osize; i++) {
		uint64_t j;

		if (!old[i].used)
			continue;
		j = fl_hash(old[i].dev, old[i].sector) & fl->mask;
		while (ns[j].used)
			j = (j + 1) & fl->mask;
		ns[j] = old[i];
	}
	free(old);
	return 0;
}

/* Return 1 if a new entry was made, 0 if an existing one was updated, -1 if full. */
static int fl_insert(struct iow_inflight *fl, uint32_t dev, uint64_t sector, uint64_t time)
{
	uint64_t j;

	if ((!fl->slot || fl->n * 2 >= fl->mask + 1) && fl_grow(fl)) {
		if (!fl->slot || fl->n + 1 > fl->mask) {
			fl->dropped++;
			return -1;
		}
	}
	j = fl_hash(dev, sector) & fl->mask;
	while (fl->slot[j].used) {
		if (fl->slot[j].dev == dev && fl->slot[j].sector == sector) {
			fl->slot[j].time = time;
			return 0;
		}
		j = (j + 1) & fl->mask;
	}
	fl->slot[j].used = 1;
	fl->slot[j].dev = dev;
	fl->slot[j].sector = sector;
	fl->slot[j].time = time;
	fl->n++;
	return 1;
}

/* Remove (dev, sector); return 1 and its time, or 0 if absent. */
static int fl_remove(struct iow_inflight *fl, uint32_t dev, uint64_t sector, uint64_t *time)
{
	uint64_t j, k;

	if (!fl->slot)
		return 0;
	j = fl_hash(dev, sector) & fl->mask;
	while (fl->slot[j].used) {
		if (fl->slot[j].dev == dev && fl->slot[j].sector == sector)
			break;
		j = (j + 1) & fl->mask;
	}
	if (!fl->slot[j].used)
		return 0;
	*time = fl->slot[j].time;
	/* backward-shift deletion keeps probe chains intact without tombstones */
	for (k = (j + 1) & fl->mask; fl->slot[k].used; k = (k + 1) & fl->mask) {
		uint64_t home = fl_hash(fl->slot[k].dev, fl->slot[k].sector) & fl->mask;

		if (((k - home) & fl->mask) >= ((k - j) & fl->mask)) {
			fl->slot[j] = fl->slot[k];
			j = k;
		}
	}
	fl->slot[j].used = 0;
	fl->n--;
	return 1;
}

/* ---- pass 2 ---- */

const char *iow_proc_name(const struct iow_trace *t, uint32_t pid)
{
	for (unsigned int i = 0; i < t->nnames; i++)
		if (t->names[i].pid == pid)
			return t->names[i].comm;
	return NULL;
}

unsigned int iow_io_slot(struct iow_opts *o, struct iow_trace *t, const struct blk_event *ev)
{
	if (!o->per_process)
		return blk_event_is_write(ev) ? 1 : 0;
	for (unsigned int i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == ev->pid)
			return i;
	return IOW_MAX_PROCS;
}

long iow_io_cell(const struct iow_opts *o, const struct iow_trace *t, const struct blk_event *ev)
{
	struct iow_dev *d = NULL;
	uint64_t off, x, y;

	for (unsigned int i = 0; i < t->ndevs; i++)
		if (t->devs[i].dev == ev->device)
			d = (struct iow_dev *)&t->devs[i];
	if (!d || ev->time < o->x0 || ev->time > o->x1)
		return -1;
	off = d->base + ev->sector;
	if (off < o->y0 || off > o->y1)
		return -1;
	x = (uint64_t)((double)(ev->time - o->x0) * o->grid_w / (double)(o->x1 - o->x0));
	y = (uint64_t)((double)(off - o->y0) * o->grid_h / (double)(o->y1 - o->y0));
	if (x >= o->grid_w)
		x = o->grid_w - 1;
	if (y >= o->grid_h)
		y = o->grid_h - 1;
	return (long)(y * o->grid_w + x);
}

static void depth_advance(struct iow_opts *o, struct iow_trace *t, uint64_t now)
{
	uint64_t from = t->last_depth_t, bns = iow_bucket_ns(o);

	if (now <= from) {
		return;
	}
	t->last_depth_t = now;
	if (!t->depth)
		return;
	if (from < o->x0)
		from = o->x0;
	if (now > o->x1)
		now = o->x1;
	while (from < now) {
		uint64_t b = (from - o->x0) / bns, end;

		if (b >= IOW_NBUCKETS)
			b = IOW_NBUCKETS - 1;
		end = o->x0 + (b + 1) * bns;
		if (b == IOW_NBUCKETS - 1 || end > now)
			end = now;
		t->depth_area[b] += (double)t->depth * (double)(end - from);
		from = end;
	}
}

static unsigned int log_index(uint64_t v)
{
	double l;

	if (v < 2)
		return 0;
	l = log2((double)v) * 4.0;
	return l >= IOW_NLOG - 1 ? IOW_NLOG - 1 : (unsigned int)l;
}

static void pass2_event(struct iow_trace *t, const struct blk_event *ev, void *arg)
{
	struct iow_opts *o = arg;
	unsigned int code = blk_event_code(ev);
	int b = bucket_of(o, ev->time, IOW_NBUCKETS);

	if (!is_io(ev))
		return;
	if (code == t->io_act) {
		long cell = iow_io_cell(o, t, ev);
		unsigned int slot = iow_io_slot(o, t, ev);

		if (cell >= 0) {
			if (!t->grid[slot]) {
				t->grid[slot] =
					calloc((size_t)o->grid_w * o->grid_h, sizeof(uint32_t));
				if (!t->grid[slot])
					die("out of memory");
			}
			t->grid[slot][cell]++;
			t->slot_ios[slot]++;
			t->plotted++;
		}
	}
	if (code == t->tput_act && b >= 0) {
		if (blk_event_is_write(ev)) {
			t->wr_bytes[b] += ev->bytes;
			t->wr_ios++;
			t->wr_total += ev->bytes;
		} else {
			t->rd_bytes[b] += ev->bytes;
			t->rd_ios++;
			t->rd_total += ev->bytes;
		}
		t->ios[b] += 1;
	}
	if (!t->lat_from)
		return;
	if (code == t->lat_from) {
		int r = fl_insert(&t->fl, ev->device, ev->sector, ev->time);

		if (r > 0) {
			depth_advance(o, t, ev->time);
			t->depth++;
		}
	} else if (code == BLK_TA_COMPLETE) {
		uint64_t start, lat;

		if (!fl_remove(&t->fl, ev->device, ev->sector, &start))
			return;
		depth_advance(o, t, ev->time);
		t->depth--;
		if (b < 0)
			return;
		lat = ev->time > start ? ev->time - start : 0;
		t->lat_sum[b] += (double)lat;
		t->lat_n[b] += 1;
		t->lat_total += (double)lat;
		if (lat > t->lat_max)
			t->lat_max = lat;
		blk_hist_add(&t->lat_all, lat);
		blk_hist_add(&t->bands[bucket_of(o, ev->time, IOW_NBANDS)], lat);
		t->lat_log[log_index(lat)]++;
	}
}

int iow_pass2(struct iow_opts *o)
{
	for (int i = 0; i < o->ntraces; i++) {
		struct iow_trace *t = o->traces[i];

		t->bands = calloc(IOW_NBANDS, sizeof(*t->bands));
		if (!t->bands)
			die("out of memory");
		/* the walk adds process names again */
		t->nnames = 0;
		if (iow_trace_walk(t, pass2_event, o) < 0)
			return -1;
		depth_advance(o, t, o->x1);
		if (t->fl.dropped)
			warning("'%s': %llu requests not tracked for latency (too many in flight)",
				t->arg, (unsigned long long)t->fl.dropped);
		free(t->fl.slot);
		t->fl.slot = NULL;
	}
	return 0;
}

/* ---- fio bandwidth logs: "time (ms), rate (KiB/s), direction, block size" ---- */

static int fio_walk(struct iow_opts *o, struct iow_fio *f, int bin)
{
	FILE *fp = fopen(f->path, "r");
	char line[512];

	if (!fp)
		return error("cannot open '%s': %s", f->path, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long ms;
		double rate;
		int dir = 0, b;

		if (sscanf(line, "%llu , %lf , %d", &ms, &rate, &dir) < 2 || dir > 1)
			continue;
		if (!bin) {
			if (ms * 1000000ull > f->t_max)
				f->t_max = ms * 1000000ull;
			continue;
		}
		b = bucket_of(o, ms * 1000000ull, IOW_NBUCKETS);
		if (b >= 0) {
			f->sum[b] += rate;
			f->n[b] += 1;
		}
	}
	fclose(fp);
	return 0;
}

int iow_fio_load(struct iow_opts *o)
{
	for (int i = 0; i < o->nfios; i++)
		if (fio_walk(o, o->fios[i], o->t_end != 0))
			return -1;
	return 0;
}

/* ---- mpstat -P ALL 1 output: one "all" row per second ---- */

static void mpstat_load_one(struct iow_opts *o, struct iow_trace *t)
{
	static const char *const cols[IOW_CPU_NR] = {"%sys", "%iowait", "%irq", "%soft", "%usr"};
	int colidx[IOW_CPU_NR] = {-1, -1, -1, -1, -1};
	FILE *fp = fopen(t->mpstat, "r");
	char line[1024];
	unsigned int sample = 0;

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *tok[64], *s, *save = NULL;
		int n = 0, cpu_col = -1;

		for (s = strtok_r(line, " \t\n", &save); s && n < 64;
		     s = strtok_r(NULL, " \t\n", &save))
			tok[n++] = s;
		for (int i = 0; i < n; i++)
			if (!strcmp(tok[i], "CPU"))
				cpu_col = i;
		if (cpu_col >= 0) {
			for (int c = 0; c < IOW_CPU_NR; c++)
				for (int i = 0; i < n; i++)
					if (!strcmp(tok[i], cols[c]))
						colidx[c] = i - cpu_col;
			continue;
		}
		for (int i = 0; i < n; i++) {
			int b;

			if (strcmp(tok[i], "all") || !strcmp(tok[0], "Average:"))
				continue;
			sample++;
			b = bucket_of(o, (uint64_t)sample * NS_PER_SEC, IOW_NBUCKETS);
			if (b < 0)
				break;
			for (int c = 0; c < IOW_CPU_NR; c++)
				if (colidx[c] > 0 && i + colidx[c] < n)
					t->cpu[c][b] += atof(tok[i + colidx[c]]);
			t->cpu_n[b] += 1;
			break;
		}
	}
	fclose(fp);
}

void iow_mpstat_load(struct iow_opts *o)
{
	for (int i = 0; i < o->ntraces; i++)
		if (o->traces[i]->mpstat)
			mpstat_load_one(o, o->traces[i]);
}

void iow_trace_free(struct iow_trace *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->dir);
	free(t->base);
	for (unsigned int i = 0; i < t->nbases; i++)
		free(t->bases[i]);
	free(t->bases);
	free(t->label);
	free(t->mpstat);
	free(t->bands);
	free(t->pids);
	free(t->fl.slot);
	for (int i = 0; i <= IOW_MAX_PROCS; i++)
		free(t->grid[i]);
	free(t);
}
