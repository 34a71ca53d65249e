// SPDX-License-Identifier: GPL-2.0
/*
 * The seek streams read ahead (see seekahead.h). The thread follows what the I/O model
 * does with a Q or a D (iomodel.c: iomodel_event(), model(), setup()): notes and
 * pass-through commands are no I/O; -t/-T bound the time; a Q or D of no bytes is left out;
 * a device's Ds count from its first Q (or A, unless -r).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blk/event.h"
#include "blk/reader.h"
#include "blk/trace.h"
#include "btt.h"
#include "report/seek.h"
#include "report/seekahead.h"

/* more devices than this in one trace: not worth a second reading */
#define MAX_DEVS 1024

struct ahead_stream {
	struct seek_pos pos;
	struct seekstat *ss;
	uint64_t n, fp;
	struct seekstat_result res;
	int done; /* res holds the statistics */
};

struct ahead_dev {
	uint32_t dev;
	int culling; /* no Q or A yet: its Ds do not count */
	struct ahead_stream s[2]; /* Q2Q, D2D */
};

struct seekahead {
	char *path;
	int absolute, no_remaps, time_bounded;
	double t_start, t_end;
	pthread_t th;
	int joined;
	atomic_int stop;
	int failed; /* written by the thread, read after the join */
	struct ahead_dev *dev;
	size_t ndev;
};

static struct ahead_dev *dev_of(struct seekahead *sa, uint32_t dev, size_t *hint)
{
	struct ahead_dev *d;

	if (*hint < sa->ndev && sa->dev[*hint].dev == dev)
		return &sa->dev[*hint];
	for (size_t i = 0; i < sa->ndev; i++)
		if (sa->dev[i].dev == dev) {
			*hint = i;
			return &sa->dev[i];
		}
	if (sa->ndev == MAX_DEVS)
		return NULL;
	d = realloc(sa->dev, (sa->ndev + 1) * sizeof(*d));
	if (!d)
		return NULL;
	sa->dev = d;
	d = &sa->dev[sa->ndev];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	d->culling = 1;
	for (int k = 0; k < 2; k++) {
		d->s[k].pos.absolute = sa->absolute;
		d->s[k].ss = seekstat_new(0);
		if (!d->s[k].ss) {
			seekstat_free(d->s[0].ss);
			return NULL;
		}
	}
	*hint = sa->ndev++;
	return d;
}

static int add(struct ahead_stream *st, const struct blk_event *ev)
{
	uint64_t mag = seek_magnitude(seek_distance(&st->pos, ev->sector, blk_event_sectors(ev)));

	st->n++;
	st->fp = seek_fingerprint(st->fp, mag);
	return seekstat_add(st->ss, mag);
}

/* 0 the whole input was read, -1 not (a read error, out of memory, stopped) */
static int read_all(struct seekahead *sa)
{
	struct blk_reader *r = blk_reader_open(sa->path);
	struct blk_event ev;
	size_t hint = 0;
	unsigned long k = 0;
	int rc;

	if (!r)
		return -1;
	while ((rc = blk_reader_next(r, &ev)) > 0) {
		uint32_t act = blk_event_action32(&ev), code = act & 0xffff;
		struct ahead_dev *d;

		if ((++k & 0xffff) == 0 && atomic_load_explicit(&sa->stop, memory_order_relaxed))
			break;
		if (act & (BLK_TC_ACT(BLK_TC_NOTIFY) | BLK_TC_ACT(BLK_TC_PC)))
			continue;
		if (sa->time_bounded) {
			double t = (double)ev.time / 1.0e9;

			if (t < sa->t_start)
				continue;
			if (t > sa->t_end)
				break;
		}
		if (code == BLK_TA_QUEUE || code == BLK_TA_ISSUE) {
			if (ev.bytes == 0)
				continue;
		} else if (code != BLK_TA_REMAP || sa->no_remaps) {
			continue;
		}
		d = dev_of(sa, ev.device, &hint);
		if (!d) {
			rc = -1;
			break;
		}
		if (code == BLK_TA_REMAP) {
			d->culling = 0;
		} else if (code == BLK_TA_QUEUE) {
			d->culling = 0;
			if (add(&d->s[0], &ev)) {
				rc = -1;
				break;
			}
		} else if (!d->culling && add(&d->s[1], &ev)) {
			rc = -1;
			break;
		}
	}
	blk_reader_close(r);
	return rc < 0 || atomic_load(&sa->stop) ? -1 : 0;
}

static void *work(void *arg)
{
	struct seekahead *sa = arg;

	if (read_all(sa)) {
		sa->failed = 1;
		return NULL;
	}
	for (size_t i = 0; i < sa->ndev; i++)
		for (int k = 0; k < 2; k++) {
			struct ahead_stream *st = &sa->dev[i].s[k];

			if (atomic_load(&sa->stop))
				return NULL;
			if (st->n && seekstat_finish(st->ss, &st->res) == 0)
				st->done = 1;
			/* its memory goes at once: the next stream needs as much */
			seekstat_free(st->ss);
			st->ss = NULL;
		}
	return NULL;
}

static int cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

struct seekahead *seekahead_start(const struct btt_opts *o)
{
	struct seekahead *sa;

	/* --perfetto's drawing thread already keeps the second CPU busy */
	if (!btt_input_is_file(o->input) || o->devices || o->exes || o->perfetto_name || cpus() < 2)
		return NULL;
	sa = calloc(1, sizeof(*sa));
	if (!sa || !(sa->path = strdup(o->input))) {
		free(sa);
		return NULL;
	}
	sa->absolute = o->seek_absolute;
	sa->no_remaps = o->no_remaps;
	sa->time_bounded = o->time_bounded;
	sa->t_start = o->t_start;
	sa->t_end = o->t_end;
	atomic_init(&sa->stop, 0);
	if (pthread_create(&sa->th, NULL, work, sa)) {
		free(sa->path);
		free(sa);
		return NULL;
	}
	return sa;
}

static void join(struct seekahead *sa)
{
	if (!sa->joined) {
		pthread_join(sa->th, NULL);
		sa->joined = 1;
	}
}

int seekahead_take(struct seekahead *sa, uint32_t dev, int d2d, uint64_t n, uint64_t fp,
		   struct seekstat_result *res)
{
	join(sa);
	if (sa->failed)
		return 0;
	for (size_t i = 0; i < sa->ndev; i++) {
		struct ahead_stream *st = &sa->dev[i].s[d2d ? 1 : 0];

		if (sa->dev[i].dev != dev)
			continue;
		if (!st->done || st->n != n || st->fp != fp)
			return 0;
		*res = st->res;
		memset(&st->res, 0, sizeof(st->res));
		st->done = 0;
		return 1;
	}
	return 0;
}

void seekahead_free(struct seekahead *sa)
{
	if (!sa)
		return;
	atomic_store(&sa->stop, 1);
	join(sa);
	for (size_t i = 0; i < sa->ndev; i++)
		for (int k = 0; k < 2; k++) {
			seekstat_free(sa->dev[i].s[k].ss);
			free(sa->dev[i].s[k].res.modes);
		}
	free(sa->dev);
	free(sa->path);
	free(sa);
}
