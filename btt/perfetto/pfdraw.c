// SPDX-License-Identifier: GPL-2.0
/*
 * The tracks and events of btt --perfetto (see pfdraw.h). The layout, per device:
 *
 *   "8,0 (sda)"                    the device's track, child_ordering EXPLICIT; unplugs,
 *                                  requeues and messages as instants on it
 *     "I/O" x lanes                one lane per bio in flight at once, all of one name (the
 *                                  UI folds them into one row): each completed bio a slice
 *                                  with its stage slices inside
 *     "I/O pieces" x lanes         the pieces of split bios: each device request a bio went
 *                                  out in, from its D to its C (stage "D2C" inside)
 *     "I/O not completed" x lanes  the bios given up before their last completion
 *     "in driver", "queued"        counters (count): requests between D and C, bios between
 *                                  their Q (or first event) and their last C
 *     "read MB/s" ... "write IOPS" counters over fixed windows of completions
 *
 * and one process track per pid, with a "queued" instant for each I/O it queued; thread
 * tracks for the I/O waits and the dirtying bursts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/event.h"
#include "blk-perfetto/perfetto.h"
#include "blk/trace.h"
#include "model/alloc.h"
#include "model/u64map.h"
#include "perfetto/pfdraw.h"

#define MAX_VALUES 16
/* the names of events and args: literals, or the caller's fixed strings (pfdraw.h) */
#define FIXED (BLK_PERFETTO_EV_FIXED_NAME | BLK_PERFETTO_EV_FIXED_ARG_NAMES)

static const char *const ctr_name[PF_NCTR] = {
	"in driver", "queued", "read MB/s", "write MB/s", "read IOPS", "write IOPS",
};

static const char *const ctr_description[PF_NCTR] = {
	"requests issued to the driver (D) and not completed (C) yet",
	"bios queued (Q, or their first event without one) not completed yet, as drawn",
	"bytes completed per second (reads), over windows of 10 ms",
	"bytes completed per second (writes), over windows of 10 ms",
	"completions per second (reads), over windows of 10 ms",
	"completions per second (writes), over windows of 10 ms",
};

static const char *const set_name[PF_NSETS] = {"I/O", "I/O pieces", "I/O not completed"};

struct lanes {
	uint64_t *uuid; /* lane index -> track */
	uint64_t *free; /* bitmap of the free lanes */
	uint32_t n, cap;
};

/* the slice name and RWBS of I/Os of one action and size */
#define NAMES 16
struct pf_name {
	uint64_t action;
	uint32_t bytes;
	uint64_t name_iid, rwbs_iid; /* interned (0: not, the strings are given) */
	char name[48], rwbs[BLK_RWBS_LEN];
};

/* the iids of the stages' names (fixed strings, a handful: looked up by address) */
#define STAGE_NAMES 16
struct stage_name {
	const char *s;
	uint64_t iid;
};

/* a thread's tracks of dirtying bursts: a list per thread, the first whose last event is not
 * after a burst takes it */
struct blane {
	uint64_t uuid;
	uint32_t next; /* index + 1 of the next of its thread, 0: none */
};

struct pdev {
	uint64_t track;
	uint64_t ctr[PF_NCTR];
	int64_t queued; /* the I/Os whose slice has begun and not ended, as drawn */
	struct lanes lanes[PF_NSETS];
	int described;
};

struct pfdraw {
	struct blk_output *out;
	struct blk_perfetto *pf;
	int err;
	struct pdev *dev;
	size_t ndev, adev;
	uint64_t *last; /* track uuid -> time of its last event */
	size_t alast;
	struct u64map procs; /* pid + 1 -> process track */
	struct u64map threads; /* tid + 1 -> thread track (of the waits) */
	struct u64map bthreads; /* tid + 1 -> index + 1 of its first burst track in blanes */
	struct blane *blanes;
	size_t nblanes, ablanes;
	struct blk_perfetto_value pend[MAX_VALUES]; /* counter values waiting for an event */
	unsigned int npend;
	uint64_t pend_ts;
	uint64_t lanes_made[PF_NSETS];
	struct pf_name names[NAMES]; /* slice names of recent kinds of I/O */
	struct stage_name stage[STAGE_NAMES];
	unsigned int nstage;
	uint64_t *proc_iid; /* a process's index (btt_proc.idx) -> its name's iid, 0: none */
	size_t aproc_iid;
};

struct pfdraw *pfdraw_new(struct blk_output *out)
{
	struct pfdraw *d = xcalloc(1, sizeof(*d));

	d->out = out;
	for (int i = 0; i < NAMES; i++)
		d->names[i].action = UINT64_MAX;
	return d;
}

static int fail(struct pfdraw *d, int ret)
{
	if (ret && !d->err)
		d->err = ret;
	return d->err;
}

int pfdraw_start(struct pfdraw *d, const struct blk_perfetto_opts *o)
{
	d->pf = blk_perfetto_new(d->out, o);
	if (!d->pf)
		return fail(d, errno ? -errno : -ENOMEM);
	return 0;
}

int pfdraw_started(const struct pfdraw *d)
{
	return d->pf != NULL;
}

static uint64_t *last_of(struct pfdraw *d, uint64_t uuid)
{
	d->last = array_grow(d->last, &d->alast, uuid, sizeof(*d->last));
	return &d->last[uuid];
}

/* @ts, moved up to the last event of @track */
static uint64_t at(struct pfdraw *d, uint64_t track, uint64_t ts)
{
	uint64_t *l = last_of(d, track);

	if (ts < *l)
		ts = *l;
	*l = ts;
	return ts;
}

static int track(struct pfdraw *d, const struct blk_perfetto_track *t, uint64_t *uuid)
{
	int ret;

	if (d->err || !d->pf)
		return d->err ? d->err : -EINVAL;
	ret = blk_perfetto_track_new(d->pf, t, uuid);
	if (ret)
		return fail(d, ret);
	*last_of(d, *uuid) = t->has_ts ? t->ts : 0;
	return 0;
}

int pfdraw_device(struct pfdraw *d, const struct btt_dev *dev)
{
	char name[BTT_LABEL_LEN + 32];
	struct pdev *p;
	int ret;

	d->dev = array_grow(d->dev, &d->adev, dev->idx, sizeof(*d->dev));
	while (d->ndev <= dev->idx)
		memset(&d->dev[d->ndev++], 0, sizeof(*d->dev));
	p = &d->dev[dev->idx];
	if (p->described)
		return 0;
	snprintf(name, sizeof(name), "%u,%u", BLK_MAJOR(dev->device), BLK_MINOR(dev->device));
	if (strcmp(name, dev->name))
		snprintf(name + strlen(name), sizeof(name) - strlen(name), " (%s)", dev->name);
	ret = track(d,
		    &(struct blk_perfetto_track){
			    .type = BLK_PERFETTO_TRACK_SLICE,
			    .name = name,
			    .description =
				    "a device as btt names it: its I/Os, counters and events",
			    .child_ordering = BLK_PERFETTO_ORDER_EXPLICIT},
		    &p->track);
	for (int c = 0; !ret && c < PF_NCTR; c++) {
		int rate = c >= PF_RMB;

		ret = track(d,
			    &(struct blk_perfetto_track){
				    .type = BLK_PERFETTO_TRACK_COUNTER,
				    .parent = p->track,
				    .name = ctr_name[c],
				    .description = ctr_description[c],
				    .rank = PF_NSETS + c,
				    .unit = rate ? BLK_PERFETTO_UNIT_NONE : BLK_PERFETTO_UNIT_COUNT,
				    .unit_name = !rate	       ? NULL
						 : c <= PF_WMB ? "MB/s"
							       : "IOPS",
				    .y_axis_share_key = !rate	      ? "requests"
							: c <= PF_WMB ? "MB/s"
								      : "IOPS"},
			    &p->ctr[c]);
	}
	p->described = !ret;
	return ret;
}

/* ---- counter values ---- */

static int flush_values(struct pfdraw *d)
{
	int ret = 0;

	for (unsigned int i = 0; i < d->npend && !ret; i++)
		ret = blk_perfetto_counter(d->pf, d->pend[i].track, d->pend_ts, d->pend[i].value);
	d->npend = 0;
	return fail(d, ret);
}

int pfdraw_flush(struct pfdraw *d)
{
	if (d->err || !d->pf)
		return d->err;
	return flush_values(d);
}

int pfdraw_counter(struct pfdraw *d, uint32_t dev, enum pf_ctr c, uint64_t ts, int64_t v)
{
	uint64_t t;
	unsigned int i;

	if (d->err || dev >= d->ndev || !d->dev[dev].described)
		return d->err ? d->err : -EINVAL;
	t = d->dev[dev].ctr[c];
	ts = at(d, t, ts);
	if (d->npend && (d->pend_ts != ts || d->npend == MAX_VALUES) && flush_values(d))
		return d->err;
	d->pend_ts = ts;
	for (i = 0; i < d->npend && d->pend[i].track != t; i++)
		;
	d->pend[i] = (struct blk_perfetto_value){t, v};
	if (i == d->npend)
		d->npend++;
	return 0;
}

int pfdraw_queued_step(struct pfdraw *d, uint32_t dev, uint64_t ts, int by)
{
	if (d->err || dev >= d->ndev || !d->dev[dev].described)
		return d->err ? d->err : -EINVAL;
	d->dev[dev].queued += by;
	return pfdraw_counter(d, dev, PF_QUEUED, ts, d->dev[dev].queued);
}

int pfdraw_rate(struct pfdraw *d, uint32_t dev, enum pf_ctr c, uint64_t ts, double v)
{
	uint64_t t;

	if (d->err || dev >= d->ndev || !d->dev[dev].described)
		return d->err ? d->err : -EINVAL;
	t = d->dev[dev].ctr[c];
	return fail(d, blk_perfetto_counter_double(d->pf, t, at(d, t, ts), v));
}

/* The values waiting at @ts ride on @ev; the others are written first. */
static int values_for(struct pfdraw *d, struct blk_perfetto_event *ev)
{
	ev->values = NULL;
	ev->nvalues = 0;
	if (!d->npend)
		return 0;
	if (d->pend_ts != ev->ts)
		return flush_values(d);
	ev->values = d->pend;
	ev->nvalues = d->npend;
	return 0;
}

/* write @ev (begin, end or instant) with the values waiting for its time */
static int draw_event(struct pfdraw *d,
		      int (*fn)(struct blk_perfetto *, const struct blk_perfetto_event *),
		      struct blk_perfetto_event *ev)
{
	int ret;

	if (d->err)
		return d->err;
	if ((ret = values_for(d, ev)))
		return ret;
	ret = fn(d->pf, ev);
	if (!ret && ev->nvalues)
		d->npend = 0;
	return fail(d, ret);
}

/* @s as it can go into the trace (its strings are UTF-8): @s itself when it is printable
 * ASCII, else a copy in @buf with '?' for every other byte */
static const char *clean(const char *s, char *buf, size_t n)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			break;
	if (!s[i])
		return s;
	for (i = 0; s[i] && i + 1 < n; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* ---- processes ---- */

/* the track of process @pid (named @name, may be NULL), made at @ts if new: 0 and *@uuid */
static int proc_track(struct pfdraw *d, uint32_t pid, const char *name, uint64_t ts, uint64_t *uuid)
{
	uint64_t *slot = u64map_get(&d->procs, (uint64_t)pid + 1);
	char buf[256];
	int ret;

	if (slot) {
		*uuid = *slot;
		return 0;
	}
	ret = track(d,
		    &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_PROCESS,
						 .pid = (int32_t)pid,
						 .name = name ? clean(name, buf, sizeof(buf))
							      : NULL,
						 .has_ts = 1,
						 .ts = ts},
		    uuid);
	if (ret)
		return ret;
	if (u64map_put(&d->procs, (uint64_t)pid + 1, *uuid) < 0)
		return fail(d, -ENOMEM);
	return 0;
}

int pfdraw_queued(struct pfdraw *d, const struct pf_io *io, uint64_t ts)
{
	struct blk_perfetto_event ev = {.ts = ts, .name = "queued", .flags = FIXED};
	uint64_t uuid;
	int ret;

	if (d->err)
		return d->err;
	if ((ret = proc_track(d, io->pid, io->proc ? io->proc->name : NULL, ts, &uuid)))
		return ret;
	ev.track = uuid;
	ev.ts = at(d, uuid, ts);
	if (io->flow_in) {
		ev.flows = &io->flow_in;
		ev.nflows = 1;
	}
	return draw_event(d, blk_perfetto_instant, &ev);
}

/* ---- I/O waits, on the waiting thread's track ---- */

static int thread_track(struct pfdraw *d, const struct pf_wait *w, uint64_t ts, uint64_t *uuid)
{
	uint64_t *slot = u64map_get(&d->threads, (uint64_t)w->tid + 1), parent;
	char buf[32];
	int ret;

	if (slot) {
		*uuid = *slot;
		return 0;
	}
	if ((ret = proc_track(d, w->tgid, w->comm, ts, &parent)))
		return ret;
	ret = track(d,
		    &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_THREAD,
						 .parent = parent,
						 .pid = (int32_t)w->tgid,
						 .tid = w->tid,
						 .name = clean(w->comm, buf, sizeof(buf)),
						 .has_ts = 1,
						 .ts = ts},
		    uuid);
	if (ret)
		return ret;
	if (u64map_put(&d->threads, (uint64_t)w->tid + 1, *uuid) < 0)
		return fail(d, -ENOMEM);
	return 0;
}

int pfdraw_wait_begin(struct pfdraw *d, const struct pf_wait *w, uint64_t ts)
{
	char dev[24];
	struct blk_perfetto_arg args[3] = {
		BLK_PERFETTO_UINT("ns", w->duration),
		BLK_PERFETTO_ISTR("source", w->source),
	};
	struct blk_perfetto_event ev = {.name = "iowait", .args = args, .nargs = 2, .flags = FIXED};
	int ret;

	if (d->err)
		return d->err;
	if ((ret = thread_track(d, w, ts, &ev.track)))
		return ret;
	if (w->has_io) {
		snprintf(dev, sizeof(dev), "%u,%u", BLK_MAJOR(w->io_dev), BLK_MINOR(w->io_dev));
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_ISTR("io", dev);
	}
	ev.ts = at(d, ev.track, ts);
	return draw_event(d, blk_perfetto_begin, &ev);
}

int pfdraw_wait_end(struct pfdraw *d, const struct pf_wait *w, uint64_t ts)
{
	uint64_t *slot = u64map_get(&d->threads, (uint64_t)w->tid + 1);
	struct blk_perfetto_event ev = {.ts = ts};

	if (d->err)
		return d->err;
	if (!slot)
		return fail(d, -EINVAL);
	ev.track = *slot;
	ev.ts = at(d, ev.track, ts);
	if (w->flow) {
		ev.terminating_flows = &w->flow;
		ev.nterminating = 1;
	}
	return draw_event(d, blk_perfetto_end, &ev);
}

/* ---- dirtying bursts, on the dirtying thread's tracks ---- */

/* a track of @b's thread whose last event is not after @ts: 0 and *@uuid */
static int burst_track(struct pfdraw *d, const struct pf_burst *b, uint64_t ts, uint64_t *uuid)
{
	uint64_t *first = u64map_get(&d->bthreads, (uint64_t)b->tid + 1), parent;
	uint32_t i = first ? (uint32_t)*first : 0, last = 0;
	char buf[32];
	int ret;

	for (; i; last = i, i = d->blanes[i - 1].next)
		if (d->last[d->blanes[i - 1].uuid] <= ts) {
			*uuid = d->blanes[i - 1].uuid;
			return 0;
		}
	if ((ret = proc_track(d, b->tgid, b->comm, ts, &parent)))
		return ret;
	ret = track(d,
		    &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_THREAD,
						 .parent = parent,
						 .pid = (int32_t)b->tgid,
						 .tid = b->tid,
						 .name = clean(b->comm, buf, sizeof(buf)),
						 .has_ts = 1,
						 .ts = ts},
		    uuid);
	if (ret)
		return ret;
	d->blanes = array_grow(d->blanes, &d->ablanes, d->nblanes, sizeof(*d->blanes));
	d->blanes[d->nblanes++] = (struct blane){*uuid, 0};
	if (last)
		d->blanes[last - 1].next = (uint32_t)d->nblanes;
	else if (u64map_put(&d->bthreads, (uint64_t)b->tid + 1, d->nblanes) < 0)
		return fail(d, -ENOMEM);
	return 0;
}

int pfdraw_burst(struct pfdraw *d, const struct pf_burst *b, uint64_t ts)
{
	char dev[24], fname[BLK_FILE_PATH_MAX + 1];
	struct blk_perfetto_arg args[9] = {
		BLK_PERFETTO_UINT("pages", b->pages),  BLK_PERFETTO_UINT("bytes", b->bytes),
		BLK_PERFETTO_UINT("file-ino", b->ino), BLK_PERFETTO_UINT("file-offset", b->offset),
		BLK_PERFETTO_ISTR("device", dev),      BLK_PERFETTO_UINT("ns", b->ns),
		BLK_PERFETTO_UINT("ios", b->ios),
	};
	struct blk_perfetto_event ev = {.name = "dirty",
					.args = args,
					.nargs = 7,
					.flows = b->flows,
					.nflows = b->nflows,
					.flags = FIXED};
	int ret;

	if (d->err)
		return d->err;
	if ((ret = burst_track(d, b, ts, &ev.track)))
		return ret;
	snprintf(dev, sizeof(dev), "%u,%u", BLK_MAJOR(b->device), BLK_MINOR(b->device));
	if (b->file)
		args[2] = (struct blk_perfetto_arg)BLK_PERFETTO_STR("file", clean(b->file, fname,
										  sizeof(fname)));
	if (b->unwritten)
		args[ev.nargs++] =
			(struct blk_perfetto_arg)BLK_PERFETTO_UINT("pages-unwritten", b->unwritten);
	if (b->before)
		args[ev.nargs++] =
			(struct blk_perfetto_arg)BLK_PERFETTO_UINT("before-trace-ns", b->before);
	ev.ts = at(d, ev.track, ts);
	return draw_event(d, blk_perfetto_instant, &ev);
}

/* ---- lanes ---- */

/* the lowest free lane of @l whose last event is not after @ts: its index, or l->n */
static uint32_t lane_find(struct pfdraw *d, const struct lanes *l, uint64_t ts)
{
	for (uint32_t w = 0; w * 64 < l->n; w++) {
		uint64_t bits = l->free[w];

		while (bits) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);

			if (d->last[l->uuid[i]] <= ts)
				return i;
			bits &= bits - 1;
		}
	}
	return l->n;
}

static int lane_take(struct pfdraw *d, struct pf_io *io, uint64_t ts)
{
	struct pdev *p = &d->dev[io->dev];
	struct lanes *l = &p->lanes[io->set];
	uint32_t i = lane_find(d, l, ts);
	int ret;

	if (i == l->n) {
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 64;
			l->uuid = realloc(l->uuid, l->cap * sizeof(*l->uuid));
			l->free = realloc(l->free, l->cap / 64 * sizeof(*l->free));
			if (!l->uuid || !l->free)
				return fail(d, -ENOMEM);
			memset(l->free + l->cap / 128, 0, l->cap / 128 * sizeof(*l->free));
			if (l->cap == 64)
				l->free[0] = 0;
		}
		ret = track(d,
			    &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_SLICE,
							 .parent = p->track,
							 .name = set_name[io->set],
							 .rank = io->set},
			    &l->uuid[i]);
		if (ret)
			return ret;
		l->n++;
		d->lanes_made[io->set]++;
	} else {
		l->free[i / 64] &= ~(1ull << (i % 64));
	}
	io->lane = l->uuid[i];
	io->lane_idx = i;
	return 0;
}

static void lane_give(struct pfdraw *d, const struct pf_io *io)
{
	struct lanes *l = &d->dev[io->dev].lanes[io->set];

	l->free[io->lane_idx / 64] |= 1ull << (io->lane_idx % 64);
}

uint64_t pfdraw_lanes(const struct pfdraw *d, enum pf_set set)
{
	return d->lanes_made[set];
}

/* ---- I/O slices ---- */

/* "R 4 KiB", "WS 128 KiB", "D 1 MiB", "W 1536 B": the direction (RWBS) and the size */
static const struct pf_name *io_name(struct pfdraw *d, const struct pf_io *io)
{
	uint32_t bytes = io->nsec << 9;
	struct pf_name *nm = &d->names[(io->action >> 16 ^ io->action >> 32 ^ bytes >> 9) % NAMES];
	struct blk_event ev = {.action = io->action, .bytes = bytes};
	int n;

	if (io->action == nm->action && bytes == nm->bytes)
		return nm;
	n = blk_event_rwbs(&ev, nm->rwbs);
	memcpy(nm->name, nm->rwbs, (size_t)n);
	nm->name[n++] = ' ';
	if (bytes && bytes % (1024 * 1024) == 0)
		snprintf(nm->name + n, sizeof(nm->name) - n, "%u MiB", bytes >> 20);
	else if (bytes && bytes % 1024 == 0)
		snprintf(nm->name + n, sizeof(nm->name) - n, "%u KiB", bytes >> 10);
	else
		snprintf(nm->name + n, sizeof(nm->name) - n, "%u B", bytes);
	nm->action = io->action;
	nm->bytes = bytes;
	nm->name_iid = blk_perfetto_intern(d->pf, BLK_PERFETTO_EVENT_NAME, nm->name);
	nm->rwbs_iid = blk_perfetto_intern(d->pf, BLK_PERFETTO_ARG_STRING, nm->rwbs);
	return nm;
}

/* the iid of the (cleaned) name of @io's process, 0 if it has none or it cannot be interned */
static uint64_t proc_iid(struct pfdraw *d, const struct pf_io *io)
{
	uint32_t i;
	char pname[256];

	if (!io->proc)
		return 0;
	i = io->proc->idx;
	d->proc_iid = array_grow_zero(d->proc_iid, &d->aproc_iid, i, sizeof(*d->proc_iid));
	if (!d->proc_iid[i])
		d->proc_iid[i] = blk_perfetto_intern(d->pf, BLK_PERFETTO_ARG_STRING,
						     clean(io->proc->name, pname, sizeof(pname)));
	return d->proc_iid[i];
}

/* the arguments from the trace's notes (struct pf_io): cgroup, origin, file; 5 at most */
static void notes_args(const struct pf_io *io, struct blk_perfetto_arg *args, unsigned int *n)
{
	if (io->has_cgroup)
		args[(*n)++] =
			io->cgroup ? (struct blk_perfetto_arg)BLK_PERFETTO_STR("cgroup", io->cgroup)
				   : (struct blk_perfetto_arg)BLK_PERFETTO_UINT("cgroup-id",
										io->cgroup_id);
	if (io->has_origin) {
		args[(*n)++] = (struct blk_perfetto_arg)BLK_PERFETTO_STR("origin", io->origin);
		args[(*n)++] =
			(struct blk_perfetto_arg)BLK_PERFETTO_UINT("origin-pid", io->origin_pid);
	}
	if (io->has_file) {
		args[(*n)++] = io->file
				       ? (struct blk_perfetto_arg)BLK_PERFETTO_STR("file", io->file)
				       : (struct blk_perfetto_arg)BLK_PERFETTO_UINT("file-ino",
										    io->file_ino);
		args[(*n)++] =
			(struct blk_perfetto_arg)BLK_PERFETTO_UINT("file-offset", io->file_offset);
	}
}

int pfdraw_begin(struct pfdraw *d, struct pf_io *io, uint64_t ts, const uint64_t *bflows,
		 unsigned int nbflows)
{
	char from[64];
	struct blk_perfetto_arg args[14] = {
		BLK_PERFETTO_UINT("sector", io->sector),
		BLK_PERFETTO_UINT("bytes", (uint64_t)io->nsec << 9),
		BLK_PERFETTO_ISTR("rwbs", ""),
		BLK_PERFETTO_INT("pid", io->pid),
		BLK_PERFETTO_ISTR("process", "?"),
	};
	char pname[256];
	uint64_t term[2], fl[PF_MAX_FLOWS_OUT + PF_MAX_BURST_FLOWS];
	/* the name is one of the names kept (io_name()), which change: not fixed */
	struct blk_perfetto_event ev = {.ts = ts,
					.args = args,
					.nargs = io->no_q || io->piece ? 3 : 5,
					.terminating_flows = term,
					.flags = BLK_PERFETTO_EV_FIXED_ARG_NAMES};
	const struct pf_name *nm;
	int ret;

	if (d->err || io->dev >= d->ndev || !d->dev[io->dev].described)
		return d->err ? d->err : -EINVAL;
	if ((ret = lane_take(d, io, ts)))
		return ret;
	nm = io_name(d, io);
	if ((args[4].v.u = proc_iid(d, io)))
		args[4].type = BLK_PERFETTO_ARG_IID;
	else if (io->proc)
		args[4].v.s = clean(io->proc->name, pname, sizeof(pname));
	else
		args[4].v.s = "?";
	ev.track = io->lane;
	ev.name = nm->name;
	ev.name_iid = nm->name_iid;
	if ((args[2].v.u = nm->rwbs_iid))
		args[2].type = BLK_PERFETTO_ARG_IID;
	else
		args[2].v.s = nm->rwbs;
	if (io->remapped) {
		snprintf(from, sizeof(from), "%u,%u sector %" PRIu64, BLK_MAJOR(io->from_device),
			 BLK_MINOR(io->from_device), io->from_sector);
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_STR("remapped-from", from);
	}
	if (io->kind)
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_ISTR("bio", io->kind);
	if (io->pieces > 1)
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_UINT("pieces", io->pieces);
	if (io->piece)
		args[ev.nargs++] =
			(struct blk_perfetto_arg)BLK_PERFETTO_UINT("bio-sector", io->bio_sector);
	notes_args(io, args, &ev.nargs);
	if (io->flow_in)
		term[ev.nterminating++] = io->flow_in;
	if (io->flow_from)
		term[ev.nterminating++] = io->flow_from;
	ev.flows = io->flow_out;
	ev.nflows = io->nflow_out;
	if (nbflows) {
		/* the flows from the bursts that dirtied its data (flow_ids too: the trace
		 * processor orders a flow's events by time, the burst's instant is earlier) */
		if (nbflows > PF_MAX_BURST_FLOWS)
			return fail(d, -EINVAL);
		memcpy(fl, io->flow_out, io->nflow_out * sizeof(*fl));
		memcpy(fl + io->nflow_out, bflows, nbflows * sizeof(*fl));
		ev.flows = fl;
		ev.nflows += nbflows;
	}
	at(d, io->lane, ts);
	return draw_event(d, blk_perfetto_begin, &ev);
}

/* the iid of stage name @s (a fixed string), 0 if it cannot be interned */
static uint64_t stage_iid(struct pfdraw *d, const char *s)
{
	uint64_t iid;

	for (unsigned int i = 0; i < d->nstage; i++)
		if (d->stage[i].s == s)
			return d->stage[i].iid;
	iid = blk_perfetto_intern(d->pf, BLK_PERFETTO_EVENT_NAME, s);
	if (iid && d->nstage < STAGE_NAMES)
		d->stage[d->nstage++] = (struct stage_name){s, iid};
	return iid;
}

/*
 * On @io's lane at @ts: the ends of its @nend innermost slices, then slice @iid (0: none),
 * with the counter values waiting for @ts (the others written first)
 */
static int slices(struct pfdraw *d, struct pf_io *io, uint64_t ts, unsigned int nend, uint64_t iid)
{
	int ret;

	if (d->err)
		return d->err;
	ts = at(d, io->lane, ts);
	if (d->npend && d->pend_ts != ts && (ret = flush_values(d)))
		return ret;
	ret = blk_perfetto_slices(d->pf, io->lane, ts, nend, iid, d->pend, d->npend);
	if (!ret)
		d->npend = 0;
	return fail(d, ret);
}

int pfdraw_stage(struct pfdraw *d, struct pf_io *io, uint64_t ts, const char *name, int first)
{
	struct blk_perfetto_event ev = {.track = io->lane, .name = name, .flags = FIXED};
	uint64_t iid;
	int ret;

	if (d->err)
		return d->err;
	if ((iid = stage_iid(d, name)))
		return slices(d, io, ts, !first, iid);
	/* a name that could not be interned goes inline */
	ev.ts = at(d, io->lane, ts);
	if (!first && (ret = draw_event(d, blk_perfetto_end, &ev)))
		return ret;
	return draw_event(d, blk_perfetto_begin, &ev);
}

int pfdraw_end(struct pfdraw *d, struct pf_io *io, uint64_t ts, uint64_t flow)
{
	struct blk_perfetto_arg args[3];
	struct blk_perfetto_event ev = {
		.track = io->lane, .args = args, .flags = BLK_PERFETTO_EV_FIXED_ARG_NAMES};
	int ret;

	if (!io->error && !io->lost && !flow) {
		/* the commonest: the last stage's end and the slice's, nothing on them */
		if ((ret = slices(d, io, ts, io->nostage ? 1 : 2, 0)))
			return ret;
		lane_give(d, io);
		return 0;
	}
	ev.ts = at(d, io->lane, ts);
	if (!io->nostage && (ret = draw_event(d, blk_perfetto_end, &ev)))
		return ret;
	if (io->error)
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_INT("error", io->error);
	if (io->lost)
		args[ev.nargs++] = (struct blk_perfetto_arg)BLK_PERFETTO_ISTR("lost", io->lost);
	if (flow) {
		ev.flows = &flow;
		ev.nflows = 1;
	}
	if ((ret = draw_event(d, blk_perfetto_end, &ev)))
		return ret;
	lane_give(d, io);
	return 0;
}

int pfdraw_instant(struct pfdraw *d, uint32_t dev, uint64_t ts, const char *name, const char *arg,
		   const char *text, uint64_t value)
{
	char buf[1024];
	struct blk_perfetto_arg a =
		text ? (struct blk_perfetto_arg)BLK_PERFETTO_STR(arg, clean(text, buf, sizeof(buf)))
		     : (struct blk_perfetto_arg)BLK_PERFETTO_UINT(arg, value);
	struct blk_perfetto_event ev = {
		.ts = ts, .name = name, .args = &a, .nargs = 1, .flags = FIXED};

	if (d->err || dev >= d->ndev || !d->dev[dev].described)
		return d->err ? d->err : -EINVAL;
	ev.track = d->dev[dev].track;
	ev.ts = at(d, ev.track, ts);
	return draw_event(d, blk_perfetto_instant, &ev);
}

int pfdraw_free(struct pfdraw *d)
{
	int ret;

	if (!d)
		return 0;
	ret = d->err;
	if (d->pf) {
		if (!ret)
			ret = flush_values(d);
		int r = blk_perfetto_close(d->pf);

		if (!ret)
			ret = r;
	}
	for (size_t i = 0; i < d->ndev; i++)
		for (int s = 0; s < PF_NSETS; s++) {
			free(d->dev[i].lanes[s].uuid);
			free(d->dev[i].lanes[s].free);
		}
	free(d->dev);
	free(d->last);
	free(d->proc_iid);
	u64map_free(&d->procs);
	u64map_free(&d->threads);
	u64map_free(&d->bthreads);
	free(d->blanes);
	free(d);
	return ret;
}
