// SPDX-License-Identifier: GPL-2.0
/*
 * I/O waits from the events of a wait source (waitjoin.h): a table of the tasks followed
 * (open addressing on the tid, backward-shift deletion) and, for the sched source, the
 * I/Os in flight per device (sorted by sector, so that a completion covering a range
 * finds the bios queued inside it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/waitjoin.h"

struct task {
	int32_t tid; /* 0: free slot */
	uint32_t inflight; /* I/Os queued and not completed (sched) */
	uint32_t io_dev; /* device of its last queued I/O */
	uint8_t sleeping, had_io, depth;
	int sleep_cpu, waker_cpu;
	uint64_t sleep_ts;
	enum blk_iowait_func fn[2]; /* kprobe: entries open, outermost first */
	uint64_t enter_ts;
	char comm[16];
};

struct io {
	uint64_t sector;
	uint32_t nr;
	int32_t tid;
};

struct iodev {
	uint32_t dev;
	struct io *v;
	size_t n, cap;
};

#define MAX_DEVS 64
#define QUEUERS 256 /* the latest queuers remembered (by tid, direct-mapped) */

/* a task that queued I/O on a traced device: when it last did */
struct queuer {
	int32_t tid;
	uint64_t last_q;
	char comm[16];
};

struct blk_wj {
	struct blk_wj_opts o;
	struct task *t;
	size_t cap, n; /* slots, used */
	struct iodev devs[MAX_DEVS];
	int ndevs;
	size_t nios;
	struct blk_wj_stats st;
	struct queuer queuers[QUEUERS];
};

struct blk_wj *blk_wj_new(const struct blk_wj_opts *o)
{
	struct blk_wj *j;

	if (o->source != BLK_IOWAIT_SRC_SCHED && o->source != BLK_IOWAIT_SRC_KPROBE &&
	    o->source != BLK_IOWAIT_SRC_MODULE) {
		errno = EINVAL;
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->o = *o;
	if (!j->o.max_tasks)
		j->o.max_tasks = 65536;
	if (!j->o.max_ios)
		j->o.max_ios = 65536;
	return j;
}

void blk_wj_free(struct blk_wj *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->ndevs; i++)
		free(j->devs[i].v);
	free(j->t);
	free(j);
}

void blk_wj_get_stats(const struct blk_wj *j, struct blk_wj_stats *s)
{
	*s = j->st;
}

/* ---- the task table ---- */

static size_t slot_of(const struct blk_wj *j, int32_t tid)
{
	return ((uint32_t)tid * 2654435761u) & (j->cap - 1);
}

static struct task *find(struct blk_wj *j, int32_t tid)
{
	if (!j->cap || tid <= 0)
		return NULL;
	for (size_t i = slot_of(j, tid);; i = (i + 1) & (j->cap - 1)) {
		if (!j->t[i].tid)
			return NULL;
		if (j->t[i].tid == tid)
			return &j->t[i];
	}
}

int blk_wj_has_io(struct blk_wj *j, int32_t tid)
{
	struct task *t = find(j, tid);

	return t && t->inflight > 0;
}

static int grow(struct blk_wj *j)
{
	size_t cap = j->cap ? j->cap * 2 : 256;
	struct task *old = j->t, *nt = calloc(cap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t k = 0; k < j->cap; k++) {
		size_t i;

		if (!old[k].tid)
			continue;
		for (i = ((uint32_t)old[k].tid * 2654435761u) & (cap - 1); nt[i].tid;
		     i = (i + 1) & (cap - 1))
			;
		nt[i] = old[k];
	}
	free(old);
	j->t = nt;
	j->cap = cap;
	return 0;
}

/* The task's entry, made if needed; NULL if the table is full (counted) or on ENOMEM. */
static struct task *get(struct blk_wj *j, int32_t tid, int *nomem)
{
	struct task *t = find(j, tid);
	size_t i;

	if (t || tid <= 0)
		return t;
	if (j->n >= j->o.max_tasks) {
		j->st.tasks_full++;
		return NULL;
	}
	if ((j->n + 1) * 2 > j->cap && grow(j)) {
		*nomem = 1;
		return NULL;
	}
	for (i = slot_of(j, tid); j->t[i].tid; i = (i + 1) & (j->cap - 1))
		;
	memset(&j->t[i], 0, sizeof(j->t[i]));
	j->t[i].tid = tid;
	j->t[i].sleep_cpu = j->t[i].waker_cpu = -1;
	j->n++;
	return &j->t[i];
}

/* Forget @t if nothing about it is pending (backward-shift deletion). */
static void maybe_drop(struct blk_wj *j, struct task *t)
{
	size_t i, k;

	if (t->inflight || t->sleeping || t->depth)
		return;
	i = (size_t)(t - j->t);
	j->t[i].tid = 0;
	j->n--;
	for (k = (i + 1) & (j->cap - 1); j->t[k].tid; k = (k + 1) & (j->cap - 1)) {
		size_t home = slot_of(j, j->t[k].tid);

		/* move k into the hole at i if its home is not in (i, k] (cyclically) */
		if ((k > i && (home <= i || home > k)) || (k < i && home <= i && home > k)) {
			j->t[i] = j->t[k];
			j->t[k].tid = 0;
			i = k;
		}
	}
}

/* ---- I/Os in flight (sched) ---- */

static struct iodev *iodev(struct blk_wj *j, uint32_t dev, int make)
{
	for (int i = 0; i < j->ndevs; i++)
		if (j->devs[i].dev == dev)
			return &j->devs[i];
	if (!make || j->ndevs == MAX_DEVS)
		return NULL;
	j->devs[j->ndevs].dev = dev;
	return &j->devs[j->ndevs++];
}

/* first index with sector >= @s */
static size_t lower(const struct iodev *d, uint64_t s)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->v[mid].sector < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void io_done(struct blk_wj *j, const struct io *io)
{
	struct task *t = find(j, io->tid);

	if (t && t->inflight) {
		t->inflight--;
		maybe_drop(j, t);
	}
}

static int queue_io(struct blk_wj *j, const struct blk_wj_event *e)
{
	struct iodev *d;
	struct task *t;
	size_t i;
	int nomem = 0;

	if (j->nios >= j->o.max_ios) {
		j->st.ios_full++;
		return 0;
	}
	if (e->tid > 0) {
		struct queuer *qr = &j->queuers[(uint32_t)e->tid % QUEUERS];

		qr->tid = e->tid;
		qr->last_q = e->ts;
		memcpy(qr->comm, e->comm, sizeof(qr->comm));
	}
	d = iodev(j, e->dev, 1);
	t = get(j, e->tid, &nomem);
	if (nomem)
		return -ENOMEM;
	if (!d || !t) {
		j->st.ios_full += !d;
		return 0;
	}
	i = lower(d, e->sector);
	if (i < d->n && d->v[i].sector == e->sector) {
		/* the same start queued again: the older one is taken as done */
		struct io old = d->v[i];

		d->v[i] = (struct io){e->sector, e->nr, e->tid};
		t->inflight++;
		t->io_dev = e->dev;
		io_done(j, &old);
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct io *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	memmove(d->v + i + 1, d->v + i, (d->n - i) * sizeof(*d->v));
	d->v[i] = (struct io){e->sector, e->nr, e->tid};
	d->n++;
	j->nios++;
	t->inflight++;
	t->io_dev = e->dev;
	return 0;
}

static void complete_io(struct blk_wj *j, const struct blk_wj_event *e)
{
	struct iodev *d = iodev(j, e->dev, 0);
	uint64_t end = e->sector + (e->nr ? e->nr : 1);
	size_t i, k;

	if (!d)
		return;
	i = lower(d, e->sector);
	for (k = i; k < d->n && d->v[k].sector < end; k++)
		io_done(j, &d->v[k]);
	memmove(d->v + i, d->v + k, (d->n - k) * sizeof(*d->v));
	d->n -= k - i;
	j->nios -= k - i;
}

/* ---- the sources ---- */

static void fill(struct blk_iowait *w, const struct task *t, uint64_t end, uint64_t start)
{
	memset(w, 0, sizeof(*w));
	w->end = end;
	w->duration = end > start ? end - start : 0;
	w->start = (int64_t)start;
	w->tid = (uint32_t)t->tid;
	memcpy(w->comm, t->comm, sizeof(t->comm));
	w->comm[sizeof(t->comm)] = '\0';
	w->sleep_cpu = t->sleep_cpu;
	w->waker_cpu = t->waker_cpu;
}

/*
 * The waker of @t's sleep, when it queued I/O on a traced device during the sleep (a
 * journal thread's commit, which an fsync sleeps on without I/O of its own), else NULL.
 */
static const struct queuer *waker_io(const struct blk_wj *j, const struct blk_wj_event *e,
				     const struct task *t)
{
	const struct queuer *qr;

	if (e->waker <= 0 || e->waker == t->tid)
		return NULL;
	qr = &j->queuers[(uint32_t)e->waker % QUEUERS];
	return qr->tid == e->waker && qr->last_q >= t->sleep_ts ? qr : NULL;
}

static int feed_sched(struct blk_wj *j, const struct blk_wj_event *e, struct blk_iowait *w)
{
	const struct queuer *qr;
	struct task *t;
	int nomem = 0, kept;

	switch (e->kind) {
	case BLK_WJ_QUEUE:
		return queue_io(j, e);
	case BLK_WJ_COMPLETE:
		complete_io(j, e);
		return 0;
	case BLK_WJ_SWITCH_D:
		t = get(j, e->tid, &nomem);
		if (!t)
			return nomem ? -ENOMEM : 0;
		t->sleeping = 1;
		t->had_io = t->inflight > 0;
		t->sleep_ts = e->ts;
		t->sleep_cpu = e->cpu;
		memcpy(t->comm, e->comm, sizeof(t->comm));
		return 0;
	case BLK_WJ_WAKING:
		t = find(j, e->tid);
		if (!t || !t->sleeping)
			return 0;
		t->sleeping = 0;
		qr = waker_io(j, e, t);
		kept = t->had_io || qr || j->o.keep_all;
		if (kept) {
			t->waker_cpu = e->cpu;
			fill(w, t, e->ts, t->sleep_ts);
			w->cpu = e->target_cpu;
			w->source = BLK_IOWAIT_SRC_SCHED;
			w->flags = BLK_IOWAIT_F_IO_CHECKED | (t->had_io ? BLK_IOWAIT_F_IO : 0);
			w->io_dev = t->had_io ? t->io_dev : 0;
			if (!t->had_io && qr) {
				w->flags |= BLK_IOWAIT_F_WAKER_IO;
				w->waker_tid = (uint32_t)qr->tid;
				memcpy(w->waker_comm, qr->comm, sizeof(qr->comm));
				w->waker_comm[sizeof(qr->comm)] = '\0';
				j->st.waker_io++;
			}
			j->st.waits++;
		} else {
			j->st.not_io++;
		}
		t->had_io = 0;
		maybe_drop(j, t);
		return kept;
	default:
		return 0;
	}
}

static int nests(enum blk_iowait_func outer, enum blk_iowait_func inner)
{
	return outer == BLK_IOWAIT_FN_BLK_IO_SCHEDULE &&
	       (inner == BLK_IOWAIT_FN_IO_SCHEDULE || inner == BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT);
}

static int feed_kprobe(struct blk_wj *j, const struct blk_wj_event *e, struct blk_iowait *w)
{
	struct task *t;
	int nomem = 0;

	switch (e->kind) {
	case BLK_WJ_ENTER:
		t = get(j, e->tid, &nomem);
		if (!t)
			return nomem ? -ENOMEM : 0;
		if (t->depth == 1 && nests(t->fn[0], e->func)) {
			t->fn[t->depth++] = e->func;
			return 0;
		}
		if (t->depth) {
			/* the return of what was open never came: its probe missed it */
			j->st.stale++;
		}
		t->depth = 1;
		t->fn[0] = e->func;
		t->enter_ts = e->ts;
		t->sleep_cpu = e->cpu;
		t->waker_cpu = -1;
		memcpy(t->comm, e->comm, sizeof(t->comm));
		return 0;
	case BLK_WJ_EXIT:
		t = find(j, e->tid);
		if (!t || !t->depth) {
			j->st.unmatched++;
			return 0;
		}
		if (t->fn[t->depth - 1] != e->func) {
			if (t->depth == 2 && t->fn[0] == e->func) {
				/* the inner return went missing */
				j->st.stale++;
				t->depth = 1;
			} else {
				j->st.unmatched++;
				return 0;
			}
		}
		if (--t->depth)
			return 0;
		fill(w, t, e->ts, t->enter_ts);
		w->cpu = e->cpu;
		w->source = BLK_IOWAIT_SRC_KPROBE;
		w->func = t->fn[0];
		j->st.waits++;
		maybe_drop(j, t);
		return 1;
	case BLK_WJ_WAKING:
		t = find(j, e->tid);
		if (t && t->depth)
			t->waker_cpu = e->cpu;
		return 0;
	default:
		return 0;
	}
}

static int feed_module(struct blk_wj *j, const struct blk_wj_event *e, struct blk_iowait *w)
{
	if (e->kind != BLK_WJ_WAIT)
		return 0;
	memset(w, 0, sizeof(*w));
	w->end = e->ts;
	w->duration = e->duration;
	w->start = (int64_t)(e->ts - e->duration);
	w->tid = (uint32_t)e->tid;
	w->tgid = (uint32_t)e->tgid;
	memcpy(w->comm, e->comm, sizeof(e->comm));
	w->comm[sizeof(e->comm)] = '\0';
	w->cpu = e->cpu;
	w->sleep_cpu = e->sleep_cpu;
	w->waker_cpu = e->waker_cpu;
	w->source = BLK_IOWAIT_SRC_MODULE;
	w->func = e->func;
	j->st.waits++;
	return 1;
}

int blk_wj_feed(struct blk_wj *j, const struct blk_wj_event *e, struct blk_iowait *w)
{
	switch (j->o.source) {
	case BLK_IOWAIT_SRC_SCHED:
		return feed_sched(j, e, w);
	case BLK_IOWAIT_SRC_KPROBE:
		return feed_kprobe(j, e, w);
	default:
		return feed_module(j, e, w);
	}
}
