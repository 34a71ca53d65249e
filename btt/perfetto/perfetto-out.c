// SPDX-License-Identifier: GPL-2.0
/*
 * btt --perfetto=FILE (see perfetto-out.h): a subscriber of the model of every bio
 * (model/bios.h), each bio a slice from its Q (or first event) to its last C with its
 * stages inside and a split bio's pieces beside (pfbios.c), and of the I/O model for the
 * devices' events and counters (this file); pfdraw.c draws.
 *
 * Why records wait. A bio's stages and pieces are known for certain only when it is done
 * (a requeue moves its D, a split adds pieces), so a bio is drawn when it is done, back in
 * time. Written at once, most packets would then need an absolute timestamp (eight bytes
 * more than the usual one or two). Instead, what is to be drawn becomes a record that waits
 * in time order (pfsort.h: a bio's slice is one run of records), and a record goes out
 * once nothing earlier can still come: its time is before the watermark, the first event
 * of every bio still in flight (the list of slots, pfbios.c), which this file works out and
 * says to the drawing as it moves on (in steps of MARK_NS). The file is then in time
 * order, every timestamp a small increment, and each lane is handed out in time order. A
 * record waits at most LAG_NS of trace time behind a bio in flight, and at most pfsort.c's
 * MAX_PENDING records wait: past either, the earliest go out anyway, and what comes later
 * for them is written with an absolute time (still valid: no track goes back in time).
 * Memory: the bios in flight (the bios model gives up those in flight for longer than
 * BIOS_STALE_NS) and the waiting records.
 *
 * I/O waits (blktrace --iowait). A wait note comes at the wait's end: its slice "iowait"
 * goes on the waiting thread's track (pfdraw.c), with a flow from the end of the slice of
 * the thread's last bio to complete before the wait's end. That bio's end was pushed when
 * it completed, before the note was read, so the watermark is held HOLD_NS of trace time
 * behind the newest event: the end is still waiting when the note comes, and gets the
 * flow's start. A bio whose end went out already (it completed more than HOLD_NS before
 * the wait's end, or past MAX_PENDING) gives no flow: counted in the remarks.
 *
 * Dirtying bursts (blktrace --origin): pfburst.c draws an instant per burst of a thread's
 * dirtying, with flows to the bios that wrote its pages back. A burst is known whole only
 * once its pages were written, seconds after it: its record comes long after the watermark
 * passed its time and goes out at once, with an absolute time, on a track of its own (so
 * no track goes back in time), its flows on both ends as flow ids (ordered by time).
 *
 * Threads. The records, the ordering (pfsort.c) and the drawing (pfdraw.c, the writer) are
 * on a second thread (pfpipe.h), which also writes the file, while this one reads on; a
 * bio's slot is this side's until the drawing is done with it (its slice's end),
 * and an error of the drawing is known at the end (pfout_finish()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/iowait.h"
#include "blk/origin.h"
#include "blk/output.h"
#include "blk-perfetto/perfetto.h"
#include "blk/trace.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/iomodel.h"
#include "model/u64map.h"
#include "output.h"
#include "perfetto/perfetto-out.h"
#include "perfetto/pfdraw.h"
#include "perfetto/pfpipe.h"
#include "perfetto/pfsort.h"
#include "perfetto/pfstate.h"

#define LAG_NS 1000000000ull
#define HOLD_NS 50000000ull /* records wait this long for the wait notes that follow */
#define MARK_NS 65536ull /* the watermark is said to the drawing in steps of ~65 us */
#define WINDOW_NS 10000000ull /* throughput windows: 10 ms */
#define NO_WINDOW UINT64_MAX

/* the stage letters, in the order a bio meets them (enum pf_letter) */
static const char letters[] = "QAGIMDC";

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

static void push(struct pfout *p, uint64_t ts, int counter, uint32_t kind, uint32_t slot,
		 unsigned int x, uint64_t v)
{
	struct pf_rec r = pfout_rec(p, ts, counter, kind, slot, x, v);

	pfpipe_rec(p->d, &r, p->now);
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
	if (p->npend)
		pfout_flush_pending(p);
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
	else if (u64map_put(&p->wend, (uint64_t)iw.tid + 1, e) < 0 ||
		 (!u64map_get(&p->tgids, (uint64_t)iw.tid + 1) &&
		  u64map_put(&p->tgids, (uint64_t)iw.tid + 1, iw.tgid) < 0))
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
	else if (!p->bursts && blk_event_is_dirty(ev))
		pfburst_note(p, ev);
}

static void on_tick(void *ctx, uint64_t t)
{
	struct pfout *p = ctx;
	uint64_t w;

	if (p->npend)
		pfout_flush_pending(p);
	if (t > p->now)
		p->now = t;
	/* the watermark is at most now - HOLD_NS: most ticks cannot move it a step */
	if (p->now < p->mark + MARK_NS + HOLD_NS)
		return;
	/* the bursts due, as often (bursts are drawn late anyway: a tick's test less) */
	/* (burst_check is UINT64_MAX without bursts, and so may be an event's time) */
	if (p->now >= p->burst_check && p->bursts)
		pfburst_check(p, p->now);
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
			pfout_start(p);
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
	p->burst_check = UINT64_MAX;
	for (int x = 0; x < L_NR; x++) {
		for (int y = 0; y < L_NR; y++)
			snprintf(p->names[x][y], sizeof(p->names[x][y]), "%c2%c", letters[x],
				 letters[y]);
		snprintf(p->names[x][L_NR], sizeof(p->names[x][L_NR]), "after %c", letters[x]);
	}
	pfout_kinds_init(p);
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
	/* the bios from the model of every bio; the device events from the I/O model */
	struct btt_io_sub sub = {
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_FIRST_Q | 1u << BTT_EV_ISSUE |
			  1u << BTT_EV_ISSUE_BEFORE_Q | 1u << BTT_EV_REQUEUE |
			  1u << BTT_EV_COMPLETE | 1u << BTT_EV_COMPLETE_BEFORE_Q |
			  1u << BTT_EV_UNPLUG | 1u << BTT_EV_UNPLUG_TIMER | 1u << BTT_EV_MESSAGE,
		.tick = on_tick,
		.dev_event = on_event,
		.note = on_note,
	};

	if (!opened)
		pfout_open(v, &opened);
	p = opened;
	sub.ctx = p;
	if (!p->err && (iomodel_subscribe(v->model, &sub) < 0 ||
			bios_subscribe(v->bios, pfout_on_bio, p) < 0 ||
			bios_hook(v->bios, &(struct bios_hooks){.ctx = p,
								.made = pfout_on_made,
								.piece = pfout_on_piece}) < 0))
		die("internal error: too many subscribers");
	return p;
}

/* what the dirtying bursts could not draw (pfburst.c) */
static void burst_remarks(struct pfout *p)
{
	struct pfburst_stats s;
	uint64_t lost;

	pfburst_stats(p, &s);
	lost = s.io_full + s.burst_full + s.no_slice;
	if (s.stale || s.limit)
		note(p,
		     "'%s': %llu dirtying bursts given up before their pages were all written (%llu %llu s after they began, %llu once %u more had begun, the limit of memory): drawn then, with the flows they had",
		     p->path, (unsigned long long)(s.stale + s.limit), (unsigned long long)s.stale,
		     (unsigned long long)(PF_BURST_STALE_NS / 1000000000),
		     (unsigned long long)s.limit, PF_BURST_MAX_OPEN);
	if (s.early)
		note(p,
		     "'%s': %llu of those given up before the trace's first block event: not drawn (the trace's start was not known yet)",
		     p->path, (unsigned long long)s.early);
	if (s.late)
		note(p,
		     "'%s': %llu writes took pages of dirtying bursts given up already: no flow from them",
		     p->path, (unsigned long long)s.late);
	if (lost)
		note(p,
		     "'%s': %llu flows from dirtying bursts not drawn (%llu to bios with %d already, %llu from bursts with %u already, %llu to bios not drawn)",
		     p->path, (unsigned long long)lost, (unsigned long long)s.io_full,
		     PF_MAX_BURST_FLOWS, (unsigned long long)s.burst_full, PF_BURST_MAX_FLOWS,
		     (unsigned long long)s.no_slice);
	if (s.before)
		note(p,
		     "'%s': %llu dirtying bursts began before the trace's time 0 (a merged file of blkparse -d starts at its first event): drawn at 0, their 'before-trace-ns' argument says how long before",
		     p->path, (unsigned long long)s.before);
	if (s.zero)
		note(p,
		     "'%s': %llu dirtying bursts of pages dirty already (none of their own) not drawn",
		     p->path, (unsigned long long)s.zero);
}

/* what could not be drawn, for the front-end to say */
static void remarks(struct pfout *p)
{
	for (size_t i = 0; i < p->ndev; i++) {
		const struct dstate *ds = &p->dev[i];
		const char *name = devs_out_name(p->v->devs->v[i]);

		if (!ds->c_before_q)
			continue;
		if (!ds->had_q)
			note(p,
			     "'%s': device %s has completions only (%llu C, no Q events): each is drawn as a bio of its own at its completion ('bio: no Q', no stages), without a process",
			     p->path, name, (unsigned long long)ds->c_before_q);
	}
	if (p->no_q)
		note(p,
		     "'%s': %llu bios without a Q in the trace (recorded without Q events, or queued before it started) are drawn from their first D or C, their 'bio' argument 'no Q'",
		     p->path, (unsigned long long)p->no_q);
	if (p->no_upper)
		note(p,
		     "'%s': %llu bios remapped from a device without bios in flight (a partition, or before the trace): their 'remapped-from' argument says where they came from, no flow arrow",
		     p->path, (unsigned long long)p->no_upper);
	if (p->st.cancelled)
		note(p, "'%s': %llu remap flows not drawn (drawn out of order)", p->path,
		     (unsigned long long)p->st.cancelled);
	if (p->stage_late)
		note(p,
		     "'%s': %llu stages (G, I or A) timed after their bio's first D (an event at a sector of it, after it went out) are not drawn",
		     p->path, (unsigned long long)p->stage_late);
	if (p->pieces_over)
		note(p,
		     "'%s': %llu pieces of split bios past the first %d of their bio are not drawn",
		     p->path, (unsigned long long)p->pieces_over, MAX_PIECES);
	if (p->gone[BTT_BIO_AT_END])
		note(p,
		     "'%s': %llu bios still in flight when the trace ended are on 'I/O not completed' tracks",
		     p->path, (unsigned long long)p->gone[BTT_BIO_AT_END]);
	if (p->gone[BTT_BIO_STALE])
		note(p,
		     "'%s': %llu bios in flight for more than %llu s (their completion not in the trace) were given up: on 'I/O not completed' tracks",
		     p->path, (unsigned long long)p->gone[BTT_BIO_STALE],
		     (unsigned long long)(BIOS_STALE_NS / 1000000000));
	if (p->gone[BTT_BIO_EVICTED])
		note(p,
		     "'%s': %llu bios given up at the model's memory limit (the oldest of more than %u in flight): on 'I/O not completed' tracks",
		     p->path, (unsigned long long)p->gone[BTT_BIO_EVICTED], BIOS_MAX_IN_FLIGHT);
	if (p->undrawn)
		note(p, "'%s': %llu bios of devices the I/O model did not name are not drawn",
		     p->path, (unsigned long long)p->undrawn);
	if (p->st.wait_late)
		note(p,
		     "'%s': %llu of %llu I/O waits without a flow from their thread's last completion: it was drawn already (more than %llu ms before the wait's end)",
		     p->path, (unsigned long long)p->st.wait_late, (unsigned long long)p->waits,
		     (unsigned long long)(HOLD_NS / 1000000));
	if (p->wait_overlap)
		note(p,
		     "'%s': %llu I/O waits overlap an earlier wait of their thread: drawn from its end (their 'ns' argument is the whole wait)",
		     p->path, (unsigned long long)p->wait_overlap);
	if (p->bursts)
		burst_remarks(p);
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
	pfout_start(p);
	pfout_flush_pending(p);
	if (p->bursts)
		pfburst_end(p);
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
	free(p->byid);
	free(p->pend);
	for (size_t i = 0; i < p->nslots; i++) {
		free(p->slots[i].pc);
		free(p->slots[i].bflows);
	}
	u64map_free(&p->lastc);
	u64map_free(&p->wend);
	u64map_free(&p->tgids);
	pfburst_free(p);
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
	.flags = BTT_OUTPUT_CLOCK | BTT_OUTPUT_BIOS,
	.wanted = pfout_wanted,
	.open = pfout_open,
	.new = pfout_new,
	.input_end = pfout_input_end,
	.finish = pfout_finish,
	.free = pfout_free,
};
