// SPDX-License-Identifier: GPL-2.0
/*
 * I/O wait by process (see waits.h), a subscriber of the I/O model.
 *
 * Per thread (the pid of a Q, the tid of a wait): the Q times of its I/Os in flight
 * (sorted), the union of its completed I/Os' [Q, C] spans (disjoint, sorted) since its
 * last wait ended, and its I/Os per device. A wait note arrives at its end time, after the
 * completions that ended it: the part of [start, end] covered by those spans, or by an
 * I/O still in flight, is its own-I/O time. A thread's next wait begins after this one
 * ended, so the spans that ended before are dropped then; a thread that queues many I/Os
 * without waiting keeps its latest MAX_SPANS (the older ones are forgotten; a wait that
 * began before the end of one is counted as possibly short of own-I/O time).
 */
#include <stdlib.h>
#include <string.h>

#include "blk/hist.h"
#include "blk/iowait.h"
#include "btt.h"
#include "common.h"
#include "iowait/waits-int.h"
#include "iowait/waits.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/replay.h"
#include "model/u64map.h"
#include "output.h"

/* ---- threads and processes ---- */

static __attribute__((noinline)) struct thread *thread_slow(struct waits *w, uint32_t tid,
							    int create)
{
	unsigned int c = tid % 64;
	uint64_t *v;
	struct thread *t;

	v = u64map_get(&w->tmap, (uint64_t)tid + 1);
	if (v) {
		w->cache[c].tid = tid;
		w->cache[c].idx = (uint32_t)*v + 1;
		return &w->th[*v];
	}
	if (!create || w->nth >= MAX_THREADS)
		return NULL;
	w->th = array_grow(w->th, &w->ath, w->nth, sizeof(*w->th));
	t = &w->th[w->nth];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->proc = -1;
	t->last_c = NO_TIME;
	t->last_c_dev = NO_DEV;
	if (u64map_put(&w->tmap, (uint64_t)tid + 1, w->nth) < 0)
		die("out of memory");
	w->cache[c].tid = tid;
	w->cache[c].idx = (uint32_t)++w->nth;
	return t;
}

/* the thread @tid (made when @create and new), or NULL; per I/O twice: the cache inline */
static inline struct thread *thread_of(struct waits *w, uint32_t tid, int create)
{
	unsigned int c = tid % 64;

	if (w->cache[c].idx && w->cache[c].tid == tid)
		return &w->th[w->cache[c].idx - 1];
	return thread_slow(w, tid, create);
}

static struct proc *proc_of(struct waits *w, const struct blk_iowait *iw)
{
	uint64_t *v = u64map_get(&w->pmap, (uint64_t)iw->tgid + 1);
	struct proc *p;

	if (v) {
		p = &w->pr[*v];
	} else {
		if (w->npr >= MAX_PROCS)
			return NULL;
		w->pr = array_grow(w->pr, &w->apr, w->npr, sizeof(*w->pr));
		p = &w->pr[w->npr];
		memset(p, 0, sizeof(*p));
		p->tgid = iw->tgid;
		p->hist = xcalloc(1, sizeof(*p->hist));
		blk_hist_clear(p->hist);
		if (u64map_put(&w->pmap, (uint64_t)iw->tgid + 1, w->npr) < 0)
			die("out of memory");
		w->npr++;
	}
	/* the process's name: its leader's latest (a process that exec'ed is named after what
	 * it became: a shell's child that waited as "sh", then read as "dd"), else the first
	 * thread's seen */
	if (!p->comm[0] || iw->tid == iw->tgid) {
		snprintf(p->comm, sizeof(p->comm), "%s", iw->comm);
	}
	return p;
}

/* ---- a thread's I/Os in flight and completed ---- */

static size_t lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void inflight_add(struct waits *w, struct thread *t, uint64_t q)
{
	size_t i = t->ninflight;

	if (t->ninflight >= MAX_INFLIGHT) {
		w->overflow++;
		return;
	}
	t->inflight = array_grow(t->inflight, &t->ainflight, t->ninflight, sizeof(uint64_t));
	while (i > 0 && t->inflight[i - 1] > q)
		i--;
	if (i < t->ninflight)
		memmove(&t->inflight[i + 1], &t->inflight[i],
			(t->ninflight - i) * sizeof(uint64_t));
	t->inflight[i] = q;
	t->ninflight++;
}

/* an I/O queued at @q leaves (one of them when several were queued at once: the same) */
static void inflight_del(struct thread *t, uint64_t q)
{
	size_t i;

	if (t->ninflight && t->inflight[0] == q) {
		/* the oldest: completions mostly come in the order of their Qs */
		if (--t->ninflight)
			memmove(t->inflight, t->inflight + 1, t->ninflight * sizeof(uint64_t));
		return;
	}
	i = lower_bound(t->inflight, t->ninflight, q);

	if (i == t->ninflight || t->inflight[i] != q)
		return; /* not kept (overflow) */
	memmove(&t->inflight[i], &t->inflight[i + 1], (t->ninflight - i - 1) * sizeof(uint64_t));
	t->ninflight--;
}

/* add [a, b] to the thread's union of completed spans */
static void span_add(struct thread *t, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = t->nspans, j;
	struct span *last = t->nspans ? &t->spans[t->nspans - 1] : NULL;

	/* the usual cases: after the last span, or overlapping only it */
	if (last && a >= last->a && a <= last->b) {
		last->b = b > last->b ? b : last->b;
		return;
	}
	if ((!last || a > last->b) && t->nspans < MAX_SPANS) {
		t->spans = array_grow(t->spans, &t->aspans, t->nspans, sizeof(struct span));
		t->spans[t->nspans++] = (struct span){a, b};
		return;
	}

	/* the first span that ends at or after a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->spans[mid].b < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < t->nspans && t->spans[j].a <= b; j++)
		;
	if (j > lo) {
		/* it overlaps spans lo .. j-1: they become one */
		t->spans[lo].a = a < t->spans[lo].a ? a : t->spans[lo].a;
		t->spans[lo].b = b > t->spans[j - 1].b ? b : t->spans[j - 1].b;
		memmove(&t->spans[lo + 1], &t->spans[j], (t->nspans - j) * sizeof(struct span));
		t->nspans -= j - lo - 1;
		return;
	}
	if (t->nspans >= MAX_SPANS) {
		/* the older half is forgotten (once per MAX_SPANS / 2 spans) */
		size_t drop = MAX_SPANS / 2;

		if (lo < drop) {
			t->forgot_b = b > t->forgot_b ? b : t->forgot_b;
			return;
		}
		if (t->spans[drop - 1].b > t->forgot_b)
			t->forgot_b = t->spans[drop - 1].b;
		memmove(t->spans, &t->spans[drop], (t->nspans - drop) * sizeof(struct span));
		t->nspans -= drop;
		lo -= drop;
	}
	t->spans = array_grow(t->spans, &t->aspans, t->nspans, sizeof(struct span));
	memmove(&t->spans[lo + 1], &t->spans[lo], (t->nspans - lo) * sizeof(struct span));
	t->spans[lo] = (struct span){a, b};
	t->nspans++;
}

/* the time of [s, e] the thread had an I/O of its own in flight */
static uint64_t covered(const struct thread *t, uint64_t s, uint64_t e)
{
	uint64_t from = e, sum = 0; /* [from, e]: an I/O still in flight at e */

	if (t->ninflight && t->inflight[0] < e)
		from = t->inflight[0] > s ? t->inflight[0] : s;
	for (size_t i = 0; i < t->nspans; i++) {
		uint64_t x = t->spans[i].a > s ? t->spans[i].a : s;
		uint64_t y = t->spans[i].b < from ? t->spans[i].b : from;

		if (y > x)
			sum += y - x;
	}
	return sum + (e - from);
}

/* the spans that ended by @e can cover no later wait of the thread */
static void spans_prune(struct thread *t, uint64_t e)
{
	size_t i = 0;

	while (i < t->nspans && t->spans[i].b <= e)
		i++;
	if (!i)
		return; /* also when there are none yet: spans may be NULL */
	memmove(t->spans, &t->spans[i], (t->nspans - i) * sizeof(struct span));
	t->nspans -= i;
}

/* ---- the model's callbacks ---- */

/* the device @dev (index) of thread @t */
static struct tdev *tdev_at(struct thread *t, uint32_t dev)
{
	struct tdev *td;

	if (t->last_dev < t->ndevs && t->devs[t->last_dev].dev == dev)
		return &t->devs[t->last_dev];
	td = waits_tdev_of(&t->devs, &t->ndevs, &t->adevs, dev);
	t->last_dev = (uint32_t)(td - t->devs);
	return td;
}

/* a Q with bytes (after its stage Q): a bio of the thread, in flight from now */
static void on_queue(void *ctx, const struct btt_dev_event *e)
{
	struct waits *w = ctx;
	struct thread *th = thread_of(w, e->ev->pid, 1);

	if (!th) {
		w->untracked++;
		return;
	}
	inflight_add(w, th, e->ev->time);
	tdev_at(th, e->dev->idx)->ios++;
}

/* a bio of thread @pid on device @dev queued at @q completed at @c (issued at @d) */
static void completed(struct waits *w, uint32_t pid, uint32_t dev, uint64_t q, uint64_t d,
		      uint64_t c)
{
	struct thread *t = thread_of(w, pid, 0);
	struct tdev *td;

	if (!t)
		return;
	inflight_del(t, q);
	span_add(t, q, c > q ? c : q);
	td = tdev_at(t, dev);
	td->nq2c++;
	td->q2c += tdelta(q, c);
	if (d != NO_TIME) {
		td->d2c += tdelta(d, c);
		td->nd2c++;
	}
	if (t->last_c == NO_TIME || c >= t->last_c) {
		t->last_c = c;
		t->last_c_dev = dev;
	}
}

/* the classic model's pairing: for the I/Os queued before the bios are followed */
static void on_done(void *ctx, const struct btt_io *io)
{
	struct waits *w = ctx;
	uint64_t q = io->t[BTT_STAGE_Q];

	if (!w->use_bios || q < w->bios_from)
		completed(w, io->pid, io->dev->idx, q, io->t[BTT_STAGE_D], io->t[BTT_STAGE_C]);
}

static void on_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	struct waits *w = ctx;
	uint64_t q = io->t[BTT_STAGE_Q];
	struct thread *t;

	(void)why;
	if (w->use_bios && q >= w->bios_from)
		return; /* the bio's own end says */
	if (w->use_bios)
		w->classic_lost++;
	t = thread_of(w, io->pid, 0);
	if (t)
		inflight_del(t, q);
}

/* a bio done (model/bios.h); one whose Q is not in the trace has no thread */
static void on_bio(void *ctx, const struct btt_bio *b)
{
	struct waits *w = ctx;
	const struct btt_dev *dip;
	struct thread *t;

	if ((b->flags & BTT_BIO_NO_Q) || b->t_q < w->bios_from)
		return;
	if ((b->flags & BTT_BIO_UNFINISHED) || b->t_last_c == NO_TIME) {
		t = thread_of(w, b->pid, 0);
		if (t)
			inflight_del(t, b->t_q);
		return;
	}
	dip = devs_find(w->devs, b->device);
	if (dip)
		completed(w, b->pid, dip->idx, b->t_q, b->t_first_d, b->t_last_c);
}

/* every event, to our own bios model once it runs */
static void on_event(void *ctx, const struct blk_event *ev)
{
	struct waits *w = ctx;

	if (w->own && bios_event(w->own, ev) < 0)
		w->nomem++;
}

static int outside(const struct waits *w, uint64_t t)
{
	double s = (double)t / 1.0e9;

	return w->bounded && (s < w->t_start || s > w->t_end); /* as the model's window */
}

/* a sleep of no I/O (--iowait-all): to its process where it has a counted wait */
static void untied(struct waits *w, const struct blk_iowait *iw)
{
	uint64_t *v = u64map_get(&w->pmap, (uint64_t)iw->tgid + 1);

	w->no_io++;
	if (v) {
		w->pr[*v].untied_waits++;
		w->pr[*v].untied_ns += iw->duration;
	} else {
		w->untied_ns += iw->duration;
	}
}

/* a wait the waker's I/O ended: to that waker, by tid (the first MAX_WAKERS) */
static void on_others(struct waits *w, struct proc *p, const struct blk_iowait *iw)
{
	size_t i;

	w->others++;
	p->others_waits++;
	p->others_ns += iw->duration;
	for (i = 0; i < p->nwk; i++)
		if (p->wk[i].tid == iw->waker_tid)
			break;
	if (i == p->nwk) {
		if (p->nwk == MAX_WAKERS)
			return;
		p->nwk++;
		p->wk[i].tid = iw->waker_tid;
		snprintf(p->wk[i].comm, sizeof(p->wk[i].comm), "%s", iw->waker_comm);
	}
	p->wk[i].waits++;
	p->wk[i].ns += iw->duration;
}

static int is_iowait(const struct blk_event *ev)
{
	return blk_event_is_iowait(ev);
}

/* the first wait note: the I/Os before it, read again, and the model's from now on */
static void follow(struct waits *w)
{
	int rc = iomodel_replay(w->replay, w->model, w->devs, &w->sub, is_iowait);

	if (rc < 0)
		w->replay_errno = -rc;
	w->replay = NULL;
	if (iomodel_subscribe(w->model, &w->sub) < 0)
		die("internal error: too many subscribers");
}

static void on_note(void *ctx, const struct blk_event *ev)
{
	struct waits *w = ctx;
	struct blk_iowait iw;
	struct thread *t;
	struct proc *p;
	uint64_t s, e;
	uint32_t dev = NO_DEV;

	if (!blk_event_is_iowait(ev))
		return;
	if (w->replay)
		follow(w);
	w->notes++;
	if (blk_iowait_decode(ev, &iw)) {
		w->bad++;
		return;
	}
	if (outside(w, iw.end)) {
		w->outside++;
		return;
	}
	if ((iw.flags & BLK_IOWAIT_F_IO_CHECKED) && !(iw.flags & BLK_IOWAIT_F_IO) &&
	    !(iw.flags & BLK_IOWAIT_F_WAKER_IO)) {
		/* blktrace --iowait-all: a sleep no source tied to an I/O */
		untied(w, &iw);
		return;
	}
	t = thread_of(w, iw.tid, 1);
	p = t ? proc_of(w, &iw) : NULL;
	if (!p) {
		w->untracked++;
		return;
	}
	if (!w->use_bios) {
		w->own = bios_new(on_bio, w);
		if (!w->own)
			die("out of memory");
		w->use_bios = 1;
		w->bios_from = ev->time + 1; /* a Q at the same time is the classic model's */
	}
	w->sources |= 1u << (iw.source & 31);
	t->proc = (int32_t)(p - w->pr);
	e = iw.end;
	s = iw.start < 0 ? 0 : (uint64_t)iw.start;
	p->waits++;
	p->ns += iw.duration;
	/* a wait another task's I/O ended had none of its own in flight (the tracer saw) */
	if (!(iw.flags & BLK_IOWAIT_F_WAKER_IO))
		p->covered += covered(t, s, e);
	if (t->forgot_b > s)
		w->approx++; /* a span forgotten might have covered part of it */
	blk_hist_add(p->hist, iw.duration);
	if (iw.flags & BLK_IOWAIT_F_WAKER_IO) {
		/* on another task's I/O: no device of its own */
		on_others(w, p, &iw);
		spans_prune(t, e);
		return;
	}
	/* its device: that of the last I/O of the thread to complete during it */
	if (t->last_c != NO_TIME && t->last_c >= s && t->last_c <= e) {
		dev = t->last_c_dev;
	} else if (iw.flags & BLK_IOWAIT_F_IO) {
		const struct btt_dev *dip = devs_find(w->devs, iw.io_dev);

		dev = dip ? dip->idx : NO_DEV;
	}
	if (dev != NO_DEV) {
		struct tdev *td = waits_tdev_of(&t->devs, &t->ndevs, &t->adevs, dev);

		td->waits++;
		td->wait_ns += iw.duration;
	} else {
		w->no_dev++;
	}
	spans_prune(t, e);
}

struct waits *waits_new(const struct btt_view *v)
{
	struct waits *w = xcalloc(1, sizeof(*w));
	struct btt_io_sub sub = {
		.ctx = w,
		/* the report's statistics take the Q events too: no view is built for us alone */
		.events = 1u << BTT_EV_QUEUE,
		.dev_event = on_queue,
		.done = on_done,
		.lost = on_lost,
	};

	w->devs = v->devs;
	w->iowait_only = v->opts->iowait_only;
	w->bounded = v->opts->time_bounded;
	w->t_start = v->opts->t_start;
	w->t_end = v->opts->t_end;
	if (v->bios) {
		w->use_bios = 1;
		if (bios_subscribe(v->bios, on_bio, w) < 0)
			die("internal error: too many subscribers");
	} else {
		sub.event = on_event;
		if (btt_input_is_file(v->opts->input))
			w->replay = v->opts->input;
	}
	w->model = v->model;
	w->sub = sub;
	if (w->replay)
		sub = (struct btt_io_sub){.ctx = w};
	sub.note = on_note;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return w;
}

int waits_any(const struct waits *w)
{
	return w && w->notes;
}

void waits_free(struct waits *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nth; i++) {
		free(w->th[i].inflight);
		free(w->th[i].spans);
		free(w->th[i].devs);
	}
	for (size_t i = 0; i < w->npr; i++)
		free(w->pr[i].hist);
	bios_free(w->own);
	free(w->th);
	free(w->pr);
	u64map_free(&w->tmap);
	u64map_free(&w->pmap);
	free(w);
}

/* ---- the output (output.h) ---- */

static void *waits_out_new(const struct btt_view *v, void *opened)
{
	(void)opened;
	return waits_new(v);
}

/* the bios of our own model still in flight: their threads' I/Os in flight at the end */
static void waits_input_end(void *state, uint64_t t_last)
{
	struct waits *w = state;

	(void)t_last;
	if (w->own)
		bios_finish(w->own);
}

static void waits_report(void *state, FILE *avg)
{
	const struct waits *w = state;

	/* a trace with I/O waits: who waited (not in the classic report otherwise) */
	if (waits_any(w) || w->iowait_only)
		waits_print(w, avg);
}

static void waits_out_free(void *state)
{
	waits_free(state);
}

const struct btt_output_ops waits_output = {
	.name = "waits",
	.new = waits_out_new,
	.input_end = waits_input_end,
	.report = waits_report,
	.free = waits_out_free,
};
