// SPDX-License-Identifier: GPL-2.0
/*
 * btt --perfetto=FILE (see perfetto-out.h): a subscriber of the I/O model that draws every
 * queued I/O as a slice from its Q to its C with its stages inside (pfdraw.c draws).
 *
 * Why records wait. The model knows an I/O's stages for certain only at its completion (a
 * requeue moves its D, a split moves its G), so an I/O is drawn when it is done, back in
 * time. Written at once, most packets would then need an absolute timestamp (eight bytes
 * more than the usual one or two). Instead, what is to be drawn becomes a record that waits
 * in time order (pfsort.h: an I/O's slice is one run of records), and a record goes out
 * once nothing earlier can still come: its time is before the watermark, the Q of every
 * I/O still in flight, which this file works out and says to the drawing as it moves on
 * (in steps of MARK_NS). The file is then in time order, every timestamp a small
 * increment, and each lane is handed out in time order. A record waits at most LAG_NS of
 * trace time behind an I/O in flight, and at most pfsort.c's MAX_PENDING records wait: past
 * either, the earliest go out anyway, and what comes later for them is written with an
 * absolute time (still valid: no track goes back in time). Memory: the I/Os in flight and
 * the waiting records.
 *
 * I/O waits (blktrace --iowait). A wait note comes at the wait's end: its slice "iowait"
 * goes on the waiting thread's track (pfdraw.c), with a flow from the end of the slice of
 * the thread's last I/O to complete before the wait's end. That I/O's end was pushed when
 * it completed, before the note was read, so the watermark is held HOLD_NS of trace time
 * behind the newest event: the end is still waiting when the note comes, and gets the
 * flow's start. An I/O whose end went out already (it completed more than HOLD_NS before
 * the wait's end, or past MAX_PENDING) gives no flow: counted in the remarks.
 *
 * Threads. The records, the ordering (pfsort.c) and the drawing (pfdraw.c, the writer) are
 * on a second thread (pfpipe.h), which also writes the file, while this one reads on; an
 * I/O's slot is this file's until the drawing is done with it (its slice's end),
 * and an error of the drawing is known at the end (pfout_finish()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/iowait.h"
#include "blk/output.h"
#include "blk-perfetto/perfetto.h"
#include "blk/trace.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/clock.h"
#include "model/iomodel.h"
#include "model/u64map.h"
#include "output.h"
#include "perfetto/perfetto-out.h"
#include "perfetto/pfdraw.h"
#include "perfetto/pfpipe.h"
#include "perfetto/pfsort.h"

#define LAG_NS 1000000000ull
#define HOLD_NS 50000000ull /* records wait this long for the wait notes that follow */
#define MARK_NS 65536ull /* the watermark is said to the drawing in steps of ~65 us */
#define WINDOW_NS 10000000ull /* throughput windows: 10 ms */
#define NONE UINT32_MAX
#define NO_WINDOW UINT64_MAX
#define MAX_NOTES 8

/* the stage letters, in the order an I/O meets them */
static const char letters[] = "QAGIMDC";
enum { L_Q, L_A, L_G, L_I, L_M, L_D, L_C, L_NR };

/* an I/O from its Q until its slice is drawn (the drawing frees it: pfsort.h) */
struct slot {
	struct pf_io io;
	uint64_t t_q, t_a;
	uint32_t gen;
	uint32_t prev, next; /* the list of I/Os in flight, by Q; next: the free list */
	uint32_t up, up_gen; /* io.flow_from: the slot of the I/O it was remapped from */
	uint8_t mapped; /* in pfout.map: an A remapped it to a lower device */
};

struct dstate {
	int64_t driver;
	uint64_t win, bytes[2], ios[2]; /* the current throughput window */
	uint64_t c_before_q; /* completions before the device's first Q */
	int had_q;
};

struct pfout {
	const struct btt_view *v;
	char *path;
	struct blk_output *out;
	struct pfpipe *d; /* the drawing (on a second thread) */
	int started;
	uint64_t first_ts;
	struct slot *slots;
	size_t nslots, aslots;
	uint32_t free_slot, head, tail;
	uint32_t *byid; /* the model's btt_io.id -> slot + 1 (0: not drawn) */
	size_t abyid;
	struct u64map map; /* device and sector of an I/O in flight that an A remapped -> slot */
	struct u64map lastc; /* tid + 1 -> slot << 32 | gen of its last I/O completed */
	uint64_t *lastc_v; /* the value of lastc_pid in lastc (NULL: none; a put moves values) */
	uint32_t lastc_pid;
	struct u64map wend; /* tid + 1 -> the end of its last wait drawn */
	uint64_t seq, now, next_flow;
	uint64_t mark; /* the watermark last said to the drawing */
	struct dstate *dev;
	size_t ndev, adev;
	char names[L_NR][L_NR + 1][8]; /* "Q2G"..., [x][L_NR]: "after D" */
	uint64_t no_key, no_upper, lost[2]; /* no_key: remaps not followed (see key_of()) */
	uint64_t stage_late; /* stages left out: after the I/O's D */
	uint64_t waits, wait_bad, wait_overlap;
	struct pfsort_stats st; /* the drawing's, at the end */
	int err, finished, ended;
	char msg[600], hint[200];
	char *notes[MAX_NOTES];
	unsigned int nnotes;
};

/* ---- errors and remarks ---- */

static void set_error(struct pfout *p, int err)
{
	if (p->err || !err)
		return;
	p->err = err;
	if (err == -EINVAL) {
		snprintf(p->msg, sizeof(p->msg), "internal error writing Perfetto trace '%s': %s",
			 p->path, strerror(-err));
		snprintf(p->hint, sizeof(p->hint),
			 "the file holds what came before (a valid trace); please report this");
	} else {
		snprintf(p->msg, sizeof(p->msg), "cannot write Perfetto trace '%s': %s", p->path,
			 strerror(-err));
	}
}

static void __attribute__((format(printf, 2, 3))) note(struct pfout *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (p->nnotes == MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->notes[p->nnotes++] = xstrdup(buf);
}

/* ---- the records ---- */

/* record @kind at @ts (@counter: a counter value, first at its time), with @slot, @x, @v */
static struct pf_rec rec(struct pfout *p, uint64_t ts, int counter, uint32_t kind, uint32_t slot,
			 unsigned int x, uint64_t v)
{
	return (struct pf_rec){.ts = ts,
			       .order = (counter ? 0 : 1ull << 63) | p->seq++,
			       .v = v,
			       .x = (uint16_t)x,
			       .kind = (uint16_t)kind,
			       .slot = slot};
}

static void push(struct pfout *p, uint64_t ts, int counter, uint32_t kind, uint32_t slot,
		 unsigned int x, uint64_t v)
{
	struct pf_rec r = rec(p, ts, counter, kind, slot, x, v);

	pfpipe_rec(p->d, &r, p->now);
}

/* ---- I/O slots ---- */

/* the map's key of an I/O: its device index and start sector (0: none, its remaps are not
 * followed) */
static uint64_t key_of(uint32_t dev, uint64_t sector)
{
	if (dev >= 4096 || sector >= 1ull << 51)
		return 0;
	return (sector << 12 | dev) + 1;
}

static void slot_free(struct pfout *p, uint32_t i)
{
	p->slots[i].gen++;
	p->slots[i].next = p->free_slot;
	p->free_slot = i;
}

static uint32_t slot_new(struct pfout *p)
{
	uint32_t i, got[256];
	size_t n;

	if (p->free_slot == NONE) {
		/* the slots the drawing is done with */
		n = pfpipe_take_freed(p->d, got, 256);
		for (size_t k = 0; k < n; k++)
			slot_free(p, got[k]);
	}
	i = p->free_slot;

	if (i != NONE) {
		p->free_slot = p->slots[i].next;
	} else {
		p->slots = array_grow(p->slots, &p->aslots, p->nslots, sizeof(*p->slots));
		i = (uint32_t)p->nslots++;
		p->slots[i].gen = 0;
	}
	return i;
}

static void flight_add(struct pfout *p, uint32_t i)
{
	struct slot *s = &p->slots[i];

	s->prev = p->tail;
	s->next = NONE;
	if (p->tail != NONE)
		p->slots[p->tail].next = i;
	else
		p->head = i;
	p->tail = i;
}

static void flight_del(struct pfout *p, uint32_t i)
{
	struct slot *s = &p->slots[i];

	if (s->prev != NONE)
		p->slots[s->prev].next = s->next;
	else
		p->head = s->next;
	if (s->next != NONE)
		p->slots[s->next].prev = s->prev;
	else
		p->tail = s->prev;
}

/* records before this time can be drawn: nothing earlier can come */
static uint64_t watermark(const struct pfout *p)
{
	uint64_t w = p->now > HOLD_NS ? p->now - HOLD_NS : 0;

	if (p->head != NONE && p->slots[p->head].t_q < w) {
		w = p->slots[p->head].t_q;
		if (p->now > LAG_NS && w < p->now - LAG_NS)
			w = p->now - LAG_NS;
	}
	return w;
}

/* ---- the trace's start ---- */

static void start(struct pfout *p)
{
	struct blk_perfetto_opts o = {.flags = BLK_PERFETTO_VARINT_FLOWS, .start_ns = p->first_ts};
	int64_t sec;
	long nsec;

	if (p->started || p->err)
		return;
	if (p->v->clock && btt_clock_base(p->v->clock, &sec, &nsec) != BLK_WALL_NONE && sec >= 0) {
		/* the wall clock of time 0, which the writer relates to start_ns */
		o.has_wall = 1;
		o.wall_ts = 0;
		o.wall_sec = sec;
		o.wall_nsec = nsec;
	}
	pfpipe_start(p->d, &o);
	p->started = 1;
}

static struct dstate *dstate_new(struct pfout *p, uint32_t idx)
{
	p->dev = array_grow(p->dev, &p->adev, idx, sizeof(*p->dev));
	while (p->ndev <= idx)
		p->dev[p->ndev++] = (struct dstate){.win = NO_WINDOW};
	return &p->dev[idx];
}

/* the state of device @idx (made at its first event: a call per event, kept inline) */
static inline struct dstate *dstate(struct pfout *p, uint32_t idx)
{
	return __builtin_expect(idx < p->ndev, 1) ? &p->dev[idx] : dstate_new(p, idx);
}

/* ---- counters ---- */

static void counter(struct pfout *p, uint32_t dev, enum pf_ctr c, uint64_t ts, int64_t v)
{
	push(p, ts, 1, PFR_COUNTER, dev, c, (uint64_t)v);
}

static void rate(struct pfout *p, uint32_t dev, enum pf_ctr c, uint64_t ts, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	push(p, ts, 1, PFR_RATE, dev, c, bits);
}

/* the window of @ds ends: its rates at its start, and zeros after it unless @next follows */
static void window_close(struct pfout *p, uint32_t dev, uint64_t next)
{
	struct dstate *ds = &p->dev[dev];
	uint64_t ts = ds->win * WINDOW_NS;
	double per_s = 1e9 / (double)WINDOW_NS;

	for (int rd = 0; rd < 2; rd++) {
		rate(p, dev, rd ? PF_RMB : PF_WMB, ts, (double)ds->bytes[rd] * per_s / 1e6);
		rate(p, dev, rd ? PF_RIOPS : PF_WIOPS, ts, (double)ds->ios[rd] * per_s);
	}
	if (next != ds->win + 1)
		for (int c = PF_RMB; c <= PF_WIOPS; c++)
			rate(p, dev, (enum pf_ctr)c, ts + WINDOW_NS, 0);
	ds->win = NO_WINDOW;
}

static void completion(struct pfout *p, struct dstate *ds, const struct btt_dev_event *e)
{
	uint64_t w = e->ev->time / WINDOW_NS;
	/* as RWBS shows it: a discard is not a write */
	int rd = !(e->ev->action & BLK_TC_ACT(BLK_TC_WRITE)) ||
		 (e->ev->action & BLK_TC_ACT(BLK_TC_DISCARD));

	if (ds->driver > 0)
		counter(p, e->dev->idx, PF_DRIVER, e->ev->time, --ds->driver);
	if (ds->win != NO_WINDOW && ds->win != w)
		window_close(p, e->dev->idx, w);
	if (ds->win == NO_WINDOW) {
		ds->win = w;
		memset(ds->bytes, 0, sizeof(ds->bytes));
		memset(ds->ios, 0, sizeof(ds->ios));
	}
	ds->bytes[rd] += e->ev->bytes;
	ds->ios[rd]++;
}

/* ---- the model's callbacks ---- */

/* a wait note: the wait's slice, and the flow from its thread's last completion */
static void on_wait(struct pfout *p, const struct blk_event *ev)
{
	struct blk_iowait iw;
	struct pf_wait *w;
	uint64_t *last, *we, s, e;

	if (blk_iowait_decode(ev, &iw)) {
		p->wait_bad++;
		return;
	}
	p->waits++;
	s = iw.start < 0 ? 0 : (uint64_t)iw.start;
	e = iw.end;
	/* a thread waits once at a time: a wait that overlaps its last one (made up traces) is
	 * drawn from that one's end, its ns argument the whole wait */
	we = u64map_get(&p->wend, (uint64_t)iw.tid + 1);
	if (we && s < *we) {
		p->wait_overlap++;
		s = *we;
		if (e < s)
			e = s;
	}
	if (we)
		*we = e;
	else if (u64map_put(&p->wend, (uint64_t)iw.tid + 1, e) < 0)
		die("out of memory");
	w = xcalloc(1, sizeof(*w));
	*w = (struct pf_wait){
		.duration = iw.duration,
		.source = blk_iowait_source_name(iw.source),
		.tgid = iw.tgid,
		.tid = iw.tid,
		.io_dev = iw.io_dev,
		.has_io = !!(iw.flags & BLK_IOWAIT_F_IO),
	};
	memcpy(w->comm, iw.comm, sizeof(w->comm));
	last = u64map_get(&p->lastc, (uint64_t)iw.tid + 1);
	if (last) {
		/* the flow if that I/O's end is still to be drawn (the drawing knows) */
		w->flow = ++p->next_flow;
		pfpipe_flow(p->d, (uint32_t)(*last >> 32), (uint32_t)*last, iw.end, w);
	}
	push(p, s, 0, PFR_WAIT_BEGIN, 0, 0, (uintptr_t)w);
	push(p, e, 0, PFR_WAIT_END, 0, 0, (uintptr_t)w);
}

static void on_note(void *ctx, const struct blk_event *ev)
{
	struct pfout *p = ctx;

	if (blk_event_is_iowait(ev))
		on_wait(p, ev);
}

static void on_tick(void *ctx, uint64_t t)
{
	struct pfout *p = ctx;
	uint64_t w;

	if (t > p->now)
		p->now = t;
	/* the watermark is at most now - HOLD_NS: most ticks cannot move it a step */
	if (p->now < p->mark + MARK_NS + HOLD_NS)
		return;
	w = watermark(p);
	if (w >= p->mark + MARK_NS) {
		pfpipe_mark(p->d, w);
		p->mark = w;
	}
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct pfout *p = ctx;
	uint32_t dev = e->dev->idx;
	struct dstate *ds;

	if (e->kind == BTT_EV_NEW) {
		if (!p->started) {
			/* the first event: the wall clock is known (a trace has its notes
			 * first, and btt's clock has seen every record up to this one) */
			p->first_ts = e->ev->time;
			start(p);
		}
		dstate(p, dev);
		if (!p->err)
			pfpipe_device(p->d, e->dev);
		return;
	}
	ds = dstate(p, dev);
	switch (e->kind) {
	case BTT_EV_FIRST_Q:
		ds->had_q = 1;
		break;
	case BTT_EV_ISSUE:
	case BTT_EV_ISSUE_BEFORE_Q:
		counter(p, dev, PF_DRIVER, e->ev->time, ++ds->driver);
		break;
	case BTT_EV_REQUEUE:
		if (ds->driver > 0)
			counter(p, dev, PF_DRIVER, e->ev->time, --ds->driver);
		push(p, e->ev->time, 0, PFR_REQUEUE, dev, 0, e->ev->sector);
		break;
	case BTT_EV_COMPLETE_BEFORE_Q:
		ds->c_before_q++;
		completion(p, ds, e);
		break;
	case BTT_EV_COMPLETE:
		completion(p, ds, e);
		break;
	case BTT_EV_UNPLUG:
	case BTT_EV_UNPLUG_TIMER:
		push(p, e->ev->time, 0, PFR_UNPLUG, dev, e->kind == BTT_EV_UNPLUG_TIMER, e->count);
		break;
	case BTT_EV_MESSAGE: {
		char *text = xmalloc(e->len + 1);

		memcpy(text, e->text, e->len);
		text[e->len] = '\0';
		push(p, e->ev->time, 0, PFR_MESSAGE, dev, 0, (uintptr_t)text);
		break;
	}
	default:
		break;
	}
}

/* a Q: the I/O gets a slot, its process a "queued" instant */
static void queued(struct pfout *p, const struct btt_io *io, uint64_t t)
{
	uint64_t *up;
	struct pf_rec r;
	uint32_t i;
	struct slot *s;

	i = slot_new(p);
	s = &p->slots[i];
	s->io = (struct pf_io){
		.sector = io->sector,
		.action = io->action,
		.proc = io->proc,
		.pid = io->pid,
		.nsec = io->nsec,
		.dev = io->dev->idx,
		.remapped = (uint8_t)io->remapped,
		.from_device = io->from_device,
		.from_sector = io->from_sector,
		.flow_in = ++p->next_flow,
	};
	s->t_q = t;
	s->t_a = NO_TIME;
	if (io->remapped) {
		/* the flow from the I/O it comes from, when that one is drawn too */
		struct btt_dev *from = devs_find(p->v->devs, io->from_device);
		uint64_t k = from ? key_of(from->idx, io->from_sector) : 0;

		up = k ? u64map_get(&p->map, k) : NULL;
		if (up && p->slots[*up].io.nflow_out < PF_MAX_FLOWS_OUT) {
			struct slot *u = &p->slots[*up];

			s->io.flow_from = ++p->next_flow;
			u->io.flow_out[u->io.nflow_out++] = s->io.flow_from;
			s->up = (uint32_t)*up;
			s->up_gen = u->gen;
		} else if (from && !k) {
			p->no_key++;
		} else {
			p->no_upper++;
		}
	}
	s->mapped = 0;
	p->byid = array_grow_zero(p->byid, &p->abyid, io->id, sizeof(*p->byid));
	p->byid[io->id] = i + 1;
	flight_add(p, i);
	r = rec(p, t, 0, PFR_QUEUED, i, 0, 0);
	pfpipe_queued(p->d, &r, &s->io, p->now);
}

/* the slot of the model's I/O @io, or NONE */
static uint32_t slot_of(const struct pfout *p, const struct btt_io *io)
{
	return io->id < p->abyid && p->byid[io->id] ? p->byid[io->id] - 1 : NONE;
}

static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	struct pfout *p = ctx;
	uint32_t i;
	uint64_t key;

	if (st == BTT_STAGE_Q) {
		queued(p, io, t);
	} else if (st == BTT_STAGE_A && (i = slot_of(p, io)) != NONE) {
		/* remapped: the I/O it becomes on the lower device finds it by its start */
		p->slots[i].t_a = t;
		key = key_of(io->dev->idx, io->sector);
		if (key && !p->slots[i].mapped) {
			if (u64map_put(&p->map, key, i) < 0)
				die("out of memory");
			p->slots[i].mapped = 1;
		}
	}
}

/* the I/O of @io leaves (completed at @end, or @lost): its slice, stage by stage */
static void leave(struct pfout *p, const struct btt_io *io, uint64_t end, const char *lost)
{
	uint64_t t[L_NR], prev, stop, lim;
	struct pf_run *run;
	uint32_t i = slot_of(p, io);
	struct slot *s;
	int last = L_Q, n;

	if (i == NONE)
		return;
	s = &p->slots[i];
	p->byid[io->id] = 0;
	if (s->mapped)
		u64map_del(&p->map, key_of(io->dev->idx, io->sector));
	flight_del(p, i);
	/* its run (pfsort.h): the slice's begin, each stage from its start, the end */
	run = pfpipe_run(p->d, i);
	run->io = s->io;
	run->io.error = lost ? 0 : io->error;
	run->io.merged = btt_io_merged(io) && io->t[BTT_STAGE_D] != NO_TIME && !lost;
	run->io.merged_into = io->d_sector;
	run->io.lost = lost;
	run->io.set = lost ? PF_SET_LOST : PF_SET_IO;
	run->up = s->up;
	run->up_gen = s->up_gen;
	/* btt's Q2C: at least 1 ns; the stages in their order, each inside the one before */
	prev = s->t_q;
	stop = end > prev ? end : prev + 1;
	t[L_A] = s->t_a;
	t[L_G] = io->t[BTT_STAGE_G];
	t[L_I] = io->t[BTT_STAGE_I];
	t[L_M] = io->t[BTT_STAGE_M];
	t[L_D] = io->t[BTT_STAGE_D];
	/* btt's D2C above all: a G, I or M the model times after the D (the classic rules give
	 * an I/O the event of an overlapping one whose sector lies in its range) is left out,
	 * not the D */
	lim = t[L_D] != NO_TIME && t[L_D] >= prev && t[L_D] <= stop ? t[L_D] : stop;
	n = 0;
	run->rseq = p->seq;
	run->rts[n++] = prev;
	for (int l = L_A; l <= L_D; l++) {
		if (t[l] == NO_TIME)
			continue;
		if (t[l] < prev || t[l] > (l < L_D ? lim : stop)) {
			if (l < L_D && t[l] > lim && t[l] <= stop)
				p->stage_late++;
			continue;
		}
		run->rts[n] = prev;
		run->rname[n++] = p->names[last][l];
		prev = t[l];
		last = l;
	}
	run->rts[n] = prev;
	run->rname[n++] = p->names[last][lost ? L_NR : L_C];
	run->rts[n++] = stop;
	run->rn = (uint8_t)n;
	p->seq += n;
	if (!lost) {
		/* most I/Os in a row are one thread's: its value is looked up once */
		uint64_t v = (uint64_t)i << 32 | s->gen, *lc;

		if (p->lastc_v && p->lastc_pid == io->pid) {
			*p->lastc_v = v;
		} else if ((lc = u64map_get(&p->lastc, (uint64_t)io->pid + 1))) {
			*lc = v;
			p->lastc_v = lc;
			p->lastc_pid = io->pid;
		} else {
			if (u64map_put(&p->lastc, (uint64_t)io->pid + 1, v) < 0)
				die("out of memory");
			p->lastc_v = NULL;
		}
	}
}

static void on_done(void *ctx, const struct btt_io *io)
{
	leave(ctx, io, io->t[BTT_STAGE_C], NULL);
}

static void on_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	struct pfout *p = ctx;

	p->lost[why == BTT_LOST_END]++;
	leave(p, io, p->now,
	      why == BTT_LOST_END ? "still queued when the trace ended"
				  : "replaced: a later Q at the same sector took its place");
}

/* ---- the interface ---- */

/* the file created before the trace is read, so that a bad path fails early */
static int pfout_open(const struct btt_view *v, void **state)
{
	const char *path = v->opts->perfetto_name;
	size_t n = strlen(path);
	struct pfout *p;

	p = xcalloc(1, sizeof(*p));
	*state = p;
	p->v = v;
	p->path = xstrdup(path);
	p->free_slot = p->head = p->tail = NONE;
	for (int x = 0; x < L_NR; x++) {
		for (int y = 0; y < L_NR; y++)
			snprintf(p->names[x][y], sizeof(p->names[x][y]), "%c2%c", letters[x],
				 letters[y]);
		snprintf(p->names[x][L_NR], sizeof(p->names[x][L_NR]), "after %c", letters[x]);
	}
	/* gzip at its fastest: level 6 takes twice as long for a file a quarter smaller */
	p->out = blk_output_open(path, n > 3 && !strcmp(path + n - 3, ".gz")
					       ? BLK_OUTPUT_GZIP | BLK_OUTPUT_GZIP_FAST
					       : 0);
	if (!p->out) {
		p->err = -errno;
		snprintf(p->msg, sizeof(p->msg), "cannot create Perfetto trace '%s': %s", path,
			 strerror(errno));
		snprintf(p->hint, sizeof(p->hint),
			 "give --perfetto a file in a directory you can write to");
		return -1;
	}
	p->d = pfpipe_new(p->out);
	return 0;
}

/* subscribe what pfout_open() made (made now if it was not), before the first event */
static void *pfout_new(const struct btt_view *v, void *opened)
{
	struct pfout *p;
	struct btt_io_sub sub = {
		.flags = BTT_SUB_RWBS | BTT_SUB_ISSUE | BTT_SUB_REMAP | BTT_SUB_LOST_AT_END,
		.stages = 1u << BTT_STAGE_Q | 1u << BTT_STAGE_A,
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_FIRST_Q | 1u << BTT_EV_ISSUE |
			  1u << BTT_EV_ISSUE_BEFORE_Q | 1u << BTT_EV_REQUEUE |
			  1u << BTT_EV_COMPLETE | 1u << BTT_EV_COMPLETE_BEFORE_Q |
			  1u << BTT_EV_UNPLUG | 1u << BTT_EV_UNPLUG_TIMER | 1u << BTT_EV_MESSAGE,
		.tick = on_tick,
		.stage = on_stage,
		.done = on_done,
		.lost = on_lost,
		.dev_event = on_event,
		.note = on_note,
	};

	if (!opened)
		pfout_open(v, &opened);
	p = opened;
	sub.ctx = p;
	if (!p->err && iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return p;
}

/* what could not be drawn, for the front-end to say */
static void remarks(struct pfout *p)
{
	for (size_t i = 0; i < p->ndev; i++) {
		const struct dstate *ds = &p->dev[i];
		const char *name = p->v->devs->v[i]->name;

		if (!ds->c_before_q)
			continue;
		if (!ds->had_q)
			note(p,
			     "'%s': device %s has completions only (%llu C, no Q events): its I/Os, stages, 'queued' counter and processes cannot be drawn; its throughput and IOPS are",
			     p->path, name, (unsigned long long)ds->c_before_q);
		else
			note(p,
			     "'%s': device %s: %llu completions before its first Q (btt ignores them) count in its throughput and IOPS only",
			     p->path, name, (unsigned long long)ds->c_before_q);
	}
	if (p->no_upper)
		note(p,
		     "'%s': %llu I/Os remapped from a device without queued I/Os (a partition, or before the trace): their 'remapped-from' argument says where they came from, no flow arrow",
		     p->path, (unsigned long long)p->no_upper);
	if (p->st.cancelled)
		note(p, "'%s': %llu remap flows not drawn (drawn out of order)", p->path,
		     (unsigned long long)p->st.cancelled);
	if (p->stage_late)
		note(p,
		     "'%s': %llu stages (G, I, M or A) that btt's model times after their I/O's D (an event of an overlapping I/O in its range) are not drawn: the D2C stages are btt's",
		     p->path, (unsigned long long)p->stage_late);
	if (p->no_key)
		note(p,
		     "'%s': %llu remapped I/Os without a flow from the I/O they came from (its sector beyond 2^51, or its device past the 4096th)",
		     p->path, (unsigned long long)p->no_key);
	if (p->lost[0])
		note(p,
		     "'%s': %llu I/Os replaced by a later Q at their sector are on 'I/O not completed' tracks",
		     p->path, (unsigned long long)p->lost[0]);
	if (p->lost[1])
		note(p, "'%s': %llu I/Os still queued at the end are on 'I/O not completed' tracks",
		     p->path, (unsigned long long)p->lost[1]);
	if (p->st.wait_late)
		note(p,
		     "'%s': %llu of %llu I/O waits without a flow from their thread's last completion: it was drawn already (more than %llu ms before the wait's end)",
		     p->path, (unsigned long long)p->st.wait_late, (unsigned long long)p->waits,
		     (unsigned long long)(HOLD_NS / 1000000));
	if (p->wait_overlap)
		note(p,
		     "'%s': %llu I/O waits overlap an earlier wait of their thread: drawn from its end (their 'ns' argument is the whole wait)",
		     p->path, (unsigned long long)p->wait_overlap);
	if (p->wait_bad)
		note(p,
		     "'%s': %llu I/O wait notes could not be read (damaged, or a newer version): not drawn",
		     p->path, (unsigned long long)p->wait_bad);
}

/* what is left to draw is handed to the drawing, which finishes it during the report */
static void pfout_input_end(void *state, uint64_t last_time)
{
	struct pfout *p = state;

	if (p->finished || p->ended || !p->out)
		return;
	p->ended = 1;
	if (last_time > p->now)
		p->now = last_time;
	start(p);
	for (size_t i = 0; i < p->ndev; i++)
		if (p->dev[i].win != NO_WINDOW)
			window_close(p, (uint32_t)i, NO_WINDOW);
	pfpipe_drain(p->d);
	/* the drawing finishes while the caller writes its report */
	pfpipe_flush(p->d);
}

/* I/Os still drawn are closed, the file finished and closed (the error: pfout_error()) */
static int pfout_finish(void *state, uint64_t last_time)
{
	struct pfout *p = state;
	int ret;

	if (p->finished)
		return 0;
	if (!p->out) {
		p->finished = 1;
		return 0;
	}
	pfout_input_end(p, last_time);
	p->finished = 1;
	ret = pfpipe_finish(p->d, &p->st);
	p->d = NULL;
	set_error(p, ret);
	ret = blk_output_close(p->out);
	p->out = NULL;
	set_error(p, ret);
	remarks(p);
	return 0;
}

const char *pfout_error(const struct pfout *p)
{
	return p && p->err ? p->msg : NULL;
}

const char *pfout_hint(const struct pfout *p)
{
	return p && p->err && p->hint[0] ? p->hint : NULL;
}

const char *pfout_note(const struct pfout *p, unsigned int i)
{
	return p && i < p->nnotes ? p->notes[i] : NULL;
}

static void pfout_free(void *state)
{
	struct pfout *p = state;

	pfpipe_finish(p->d, NULL);
	blk_output_close(p->out);
	u64map_free(&p->map);
	free(p->byid);
	u64map_free(&p->lastc);
	u64map_free(&p->wend);
	for (unsigned int i = 0; i < p->nnotes; i++)
		free(p->notes[i]);
	free(p->slots);
	free(p->dev);
	free(p->path);
	free(p);
}

static int pfout_wanted(const struct btt_opts *o)
{
	return o->perfetto_name != NULL;
}

const struct btt_output_ops perfetto_output = {
	.name = "perfetto",
	.flags = BTT_OUTPUT_CLOCK,
	.wanted = pfout_wanted,
	.open = pfout_open,
	.new = pfout_new,
	.input_end = pfout_input_end,
	.finish = pfout_finish,
	.free = pfout_free,
};
