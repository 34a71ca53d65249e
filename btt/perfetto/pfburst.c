// SPDX-License-Identifier: GPL-2.0
/*
 * btt --perfetto's dirtying bursts (issue 39), for a trace recorded with blktrace --origin:
 * an instant "dirty" on the dirtying thread's track per burst, with a flow to the slice of
 * every bio that wrote its pages back.
 *
 * A burst is what one thread dirtied of one file in one go: the DIRTY notes (dirty runs) of
 * one (device, thread, inode), each within BURST_GAP_NS of the one before and all within
 * BURST_SPAN_NS of the first. 200 ms is the longest the kernel's dirty throttling pauses a
 * writer at a time (balance_dirty_pages(), MAX_PAUSE: HZ / 5), so a writer throttled as it
 * goes stays one burst; a thread that dirties without such a pause is cut every second, so
 * that an instant stands for at most a second of its writing (and its flows for the bios of
 * those pages, not of minutes). A thread writing two files at once has a burst for each: an
 * instant names its file.
 *
 * The pages come from the origin tracker (origin/track.h), which this file asks to tag each
 * DIRTY note's pages with its burst's number: lib/origin.c then says, at each write's Q, how
 * many pages of which burst it took. Each burst counts its pages not taken yet; each
 * write that takes some gets a flow (its number given then, kept with its bio's slot, drawn
 * on the begin of its slice). A burst is drawn once it can grow no more (its thread dirtied
 * more of the file past the rule, or the time passed: the newest event, put on the notes'
 * clock) and its pages were all taken: its flows are all known then. The instant is at the
 * burst's first run, far behind what was drawn by then: it goes out of time order (written
 * with an absolute time), on a thread track of its own (pfdraw_burst()), and its flows are
 * flow ids on both ends, which the trace processor orders by time whatever the file's
 * order.
 *
 * Memory: the bursts not drawn, as a ring in the order they began. A burst whose pages are
 * not written within PF_BURST_STALE_NS of its first run (a file deleted or truncated, pages
 * still dirty when tracing stopped), or the oldest past PF_BURST_MAX_OPEN, is given up: drawn
 * with the flows it has; later writes of its pages have no flow (counted). At most
 * PF_BURST_MAX_FLOWS flows per burst and PF_MAX_BURST_FLOWS per bio (counted past them).
 */
#include <stdlib.h>
#include <string.h>

#include "blk/origin.h"
#include "common.h"
#include "model/alloc.h"
#include "model/clock.h"
#include "model/u64map.h"
#include "origin/origins.h"
#include "origin/track.h"
#include "output.h"
#include "perfetto/pfdraw.h"
#include "perfetto/pfpipe.h"
#include "perfetto/pfstate.h"

#define BURST_GAP_NS 200000000ull
#define BURST_SPAN_NS 1000000000ull
#define NO_CHECK UINT64_MAX

/* a burst not drawn yet (its entry in the ring: id 0 when drawn) */
struct burst {
	uint64_t id; /* 1, 2, ...: the pages' tag */
	uint64_t key; /* key_of() */
	uint64_t ino, offset; /* its file, the bytes into it of its first run */
	uint64_t t_first, t_last; /* its first and last runs (the notes' clock) */
	uint64_t pages, left; /* pages it dirtied (new to the map), those no write took yet */
	uint64_t *flows;
	size_t nflows, aflows;
	uint32_t device, tid, page, ios;
	uint8_t sealed; /* its key has a newer burst: it grows no more */
	uint8_t waiting; /* in the list of those whose pages all went (they wait for their end) */
	char comm[16];
};

/* the flow of a bio whose slot is not made yet (pfout_on_made() deferred it) */
struct stash {
	uint64_t flow, burst;
	uint32_t bio;
};

struct pfbursts {
	struct otrack *track;
	struct burst *ring; /* the ids [head, next), at id & (cap - 1) */
	uint64_t cap, head, next;
	struct u64map bykey; /* key_of() -> the id of that key's newest burst */
	uint64_t *wait; /* ids whose pages all went, waiting for their end: [whead, nwait) */
	size_t nwait, await, whead;
	struct stash *stash;
	size_t nstash, astash;
	uint64_t now; /* the newest time known, on the notes' clock */
	/* what was drawn, given up, left out */
	uint64_t drawn, zero, stale, limit, unwritten_end, pages_end, before, early;
	uint64_t late, io_full, burst_full, no_slice;
};

static uint64_t key_of(uint32_t device, uint32_t tid, uint64_t ino)
{
	uint64_t k = (ino * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)device << 32 | tid);

	k *= 0xBF58476D1CE4E5B9ull;
	return k ? k : 1;
}

static struct burst *burst_of(const struct pfbursts *s, uint64_t id)
{
	struct burst *b;

	if (id < s->head || id >= s->next)
		return NULL;
	b = &s->ring[id & (s->cap - 1)];
	return b->id == id ? b : NULL;
}

/* the notes' clock minus this is the events' (a merged file of blkparse -d: not 0) */
static uint64_t note_offset(const struct pfout *p)
{
	return p->v->clock ? btt_clock_note_offset(p->v->clock) : 0;
}

/* the time it grows no more by (the notes' clock) */
static uint64_t end_of(const struct burst *b)
{
	uint64_t gap = b->t_last + BURST_GAP_NS, span = b->t_first + BURST_SPAN_NS - 1;

	return gap < span ? gap : span;
}

/* ---- drawing ---- */

/*
 * @b drawn (unless it has no page of its own, or the trace has not started: counted), and
 * its entry freed. Only the limit of memory gives a burst up before the trace's first event
 * (its start settles the wall clock, which the notes' times need; and a record cannot wait
 * for it: the first tick says a watermark before it).
 */
static void draw(struct pfout *p, struct burst *b)
{
	struct pfbursts *s = p->bursts;
	uint64_t *id = u64map_get(&s->bykey, b->key), off = note_offset(p);
	struct pf_burst *d;
	struct pf_rec r;

	if (id && *id == b->id)
		u64map_del(&s->bykey, b->key);
	if (!b->pages) {
		s->zero++;
	} else if (!p->started) {
		s->early++;
	} else {
		d = xmalloc(sizeof(*d) + b->nflows * sizeof(d->flows[0]));
		d->ino = b->ino;
		d->offset = b->offset;
		d->pages = b->pages;
		d->bytes = b->pages * b->page;
		d->unwritten = b->left;
		d->ns = b->t_last - b->t_first;
		d->before = b->t_first < off ? off - b->t_first : 0;
		s->before += d->before != 0;
		d->file = blk_origin_path(otrack_notes(s->track), b->device, b->ino);
		d->tid = b->tid;
		id = u64map_get(&p->tgids, (uint64_t)b->tid + 1);
		d->tgid = id ? (uint32_t)*id : b->tid;
		d->device = b->device;
		d->ios = b->ios;
		d->nflows = (uint32_t)b->nflows;
		memcpy(d->comm, b->comm, sizeof(d->comm));
		if (b->nflows)
			memcpy(d->flows, b->flows, b->nflows * sizeof(d->flows[0]));
		r = pfout_rec(p, b->t_first > off ? b->t_first - off : 0, 0, PFR_BURST, 0, 0,
			      (uintptr_t)d);
		pfpipe_rec(p->d, &r, p->now);
		s->drawn++;
	}
	free(b->flows);
	memset(b, 0, sizeof(*b));
	while (s->head < s->next && !s->ring[s->head & (s->cap - 1)].id)
		s->head++;
}

/* the oldest burst given up: drawn with what it has */
static void give_up(struct pfout *p, uint64_t *count)
{
	struct pfbursts *s = p->bursts;
	struct burst *b = &s->ring[s->head & (s->cap - 1)];

	(*count)++;
	draw(p, b);
}

/* the next time a burst may be due (the events' clock), in p->burst_check */
static void next_check(struct pfout *p)
{
	struct pfbursts *s = p->bursts;
	uint64_t t = NO_CHECK, off = note_offset(p), e;
	const struct burst *b;

	if (s->whead < s->nwait) {
		/* its end, or now if it is not waiting any more (drawn, grown, sealed) */
		b = burst_of(s, s->wait[s->whead]);
		t = b && !b->left && !b->sealed ? end_of(b) + 1 : 0;
	}
	if (s->head < s->next) {
		b = &s->ring[s->head & (s->cap - 1)];
		e = b->t_first + PF_BURST_STALE_NS + 1;
		if (e < t)
			t = e;
	}
	if (!p->started)
		p->burst_check = 0; /* the first event's tick, once started */
	else if (t == NO_CHECK)
		p->burst_check = t;
	else
		p->burst_check = t > off ? t - off : 0;
}

/* what is due at @now (the notes' clock): the bursts whose pages all went and that grow no
 * more, in the order their pages went; those given up */
static void due(struct pfout *p, uint64_t now)
{
	struct pfbursts *s = p->bursts;

	if (now > s->now)
		s->now = now;
	while (s->whead < s->nwait) {
		struct burst *b = burst_of(s, s->wait[s->whead]);

		if (b && !b->left && !b->sealed && end_of(b) >= s->now)
			break;
		s->whead++;
		if (!b)
			continue;
		b->waiting = 0;
		if (!b->left)
			draw(p, b); /* else it waits again when its pages are taken */
	}
	if (s->whead == s->nwait)
		s->whead = s->nwait = 0;
	while (s->head < s->next &&
	       s->ring[s->head & (s->cap - 1)].t_first + PF_BURST_STALE_NS < s->now)
		give_up(p, &s->stale);
}

/* @b's pages all went: drawn once it grows no more */
static void all_taken(struct pfout *p, struct burst *b)
{
	struct pfbursts *s = p->bursts;

	if (b->waiting)
		return;
	if (s->whead && s->whead * 2 >= s->nwait) {
		memmove(s->wait, s->wait + s->whead, (s->nwait - s->whead) * sizeof(*s->wait));
		s->nwait -= s->whead;
		s->whead = 0;
	}
	s->wait = array_grow(s->wait, &s->await, s->nwait, sizeof(*s->wait));
	s->wait[s->nwait++] = b->id;
	b->waiting = 1;
}

void pfburst_check(struct pfout *p, uint64_t now)
{
	if (!p->started)
		return;
	due(p, now + note_offset(p));
	next_check(p);
}

/* ---- the origin tracker's tagger ---- */

static struct burst *burst_new(struct pfout *p)
{
	struct pfbursts *s = p->bursts;
	struct burst *b;

	if (s->next - s->head >= PF_BURST_MAX_OPEN)
		give_up(p, &s->limit);
	if (s->next - s->head == s->cap) {
		uint64_t cap = s->cap * 2;
		struct burst *ring = xcalloc(cap, sizeof(*ring));

		for (uint64_t id = s->head; id < s->next; id++)
			ring[id & (cap - 1)] = s->ring[id & (s->cap - 1)];
		free(s->ring);
		s->ring = ring;
		s->cap = cap;
	}
	b = &s->ring[s->next & (s->cap - 1)];
	memset(b, 0, sizeof(*b));
	b->id = s->next++;
	return b;
}

/* DIRTY note @ev: the burst it joins, or a new one */
static uint64_t tag(void *ctx, const struct blk_event *ev, const struct blk_dirty_pdu *pdu)
{
	struct pfout *p = ctx;
	struct pfbursts *s = p->bursts;
	uint64_t key = key_of(ev->device, ev->pid, pdu->ino), *id = u64map_get(&s->bykey, key);
	struct burst *b = id ? burst_of(s, *id) : NULL;
	uint64_t t = ev->time;

	if (b && b->device == ev->device && b->tid == ev->pid && b->ino == pdu->ino && !b->sealed &&
	    (t <= b->t_last || t - b->t_last <= BURST_GAP_NS) &&
	    (t <= b->t_first || t - b->t_first < BURST_SPAN_NS)) {
		if (t > b->t_last)
			b->t_last = t;
		return b->id;
	}
	if (b) {
		/* it grows no more: drawn now if its pages all went */
		b->sealed = 1;
		if (!b->left)
			all_taken(p, b);
	}
	b = burst_new(p);
	b->key = key;
	b->ino = pdu->ino;
	b->offset = pdu->index * pdu->page_size;
	b->t_first = b->t_last = t;
	b->device = ev->device;
	b->tid = ev->pid;
	b->page = pdu->page_size;
	memcpy(b->comm, pdu->comm, sizeof(b->comm));
	b->comm[sizeof(b->comm) - 1] = '\0';
	if ((id = u64map_get(&s->bykey, key)))
		*id = b->id;
	else if (u64map_put(&s->bykey, key, b->id) < 0)
		die("out of memory");
	if (p->started)
		due(p, t);
	next_check(p);
	return b->id;
}

static void dirtied(void *ctx, uint64_t id, uint64_t pages)
{
	struct pfout *p = ctx;
	struct burst *b = burst_of(p->bursts, id);

	if (!b)
		return;
	b->pages += pages;
	b->left += pages;
	if (!b->left)
		all_taken(p, b);
	next_check(p);
}

/* a flow into bio @bio from burst @burst: its number, 0 when it cannot be drawn (counted) */
static uint64_t flow_to(struct pfout *p, uint32_t bio, uint64_t burst)
{
	struct pfbursts *s = p->bursts;
	uint32_t i = pfout_slot_of(p, bio);
	size_t n = 0;

	if (i != NONE) {
		struct slot *sl = &p->slots[i];

		if (sl->nbflows >= PF_MAX_BURST_FLOWS) {
			s->io_full++;
			return 0;
		}
		if (!sl->bflows)
			sl->bflows = xmalloc(PF_MAX_BURST_FLOWS * sizeof(*sl->bflows));
		sl->bflows[sl->nbflows++] = ++p->next_flow;
		return p->next_flow;
	}
	/* made later, if its hook waits (pfout_on_made()) */
	for (size_t k = 0; k < p->npend; k++)
		if (p->pend[k].what == PEND_MADE && p->pend[k].b.id == bio) {
			for (size_t j = 0; j < s->nstash; j++)
				n += s->stash[j].bio == bio;
			if (n >= PF_MAX_BURST_FLOWS) {
				s->io_full++;
				return 0;
			}
			s->stash = array_grow(s->stash, &s->astash, s->nstash, sizeof(*s->stash));
			s->stash[s->nstash++] = (struct stash){++p->next_flow, burst, bio};
			return p->next_flow;
		}
	s->no_slice++;
	return 0;
}

/* the Q of bio @bio took tagged pages: each burst's left, and a flow from it */
static void taken(void *ctx, uint32_t bio, const struct blk_origin_tag *tags, size_t n)
{
	struct pfout *p = ctx;
	struct pfbursts *s = p->bursts;

	for (size_t k = 0; k < n; k++) {
		struct burst *b = burst_of(s, tags[k].tag);
		uint64_t f;

		if (!b) {
			s->late++; /* drawn already (given up) */
			continue;
		}
		b->left -= tags[k].pages < b->left ? tags[k].pages : b->left;
		b->ios++;
		if (b->nflows >= PF_BURST_MAX_FLOWS)
			s->burst_full++;
		else if ((f = flow_to(p, bio, b->id))) {
			b->flows = array_grow(b->flows, &b->aflows, b->nflows, sizeof(*b->flows));
			b->flows[b->nflows++] = f;
		}
		if (!b->left)
			all_taken(p, b);
	}
	next_check(p);
}

void pfburst_note(struct pfout *p, const struct blk_event *ev)
{
	struct otrack *t = origins_track(btt_view_output(p->v, "origins"));

	(void)ev;
	if (p->bursts || !t)
		return;
	p->bursts = xcalloc(1, sizeof(*p->bursts));
	p->bursts->track = t;
	p->bursts->cap = 64;
	p->bursts->ring = xcalloc(p->bursts->cap, sizeof(*p->bursts->ring));
	p->bursts->head = p->bursts->next = 1;
	p->burst_check = NO_CHECK;
	otrack_set_tagger(t, &(struct otrack_tagger){
				     .ctx = p, .tag = tag, .dirtied = dirtied, .taken = taken});
}

/* ---- bios made late ---- */

void pfburst_made(struct pfout *p, uint32_t id, uint32_t i)
{
	struct pfbursts *s = p->bursts;
	struct slot *sl = &p->slots[i];
	size_t k = 0;

	if (!s->nstash)
		return;
	for (size_t j = 0; j < s->nstash; j++) {
		if (s->stash[j].bio != id) {
			s->stash[k++] = s->stash[j];
			continue;
		}
		if (!sl->bflows)
			sl->bflows = xmalloc(PF_MAX_BURST_FLOWS * sizeof(*sl->bflows));
		sl->bflows[sl->nbflows++] = s->stash[j].flow;
	}
	s->nstash = k;
}

void pfburst_unstash(struct pfout *p)
{
	struct pfbursts *s = p->bursts;

	/* not made after all (a device the I/O model did not name): the burst's flow goes */
	for (size_t j = 0; j < s->nstash; j++) {
		struct burst *b = burst_of(s, s->stash[j].burst);

		s->no_slice++;
		for (size_t k = 0; b && k < b->nflows; k++)
			if (b->flows[k] == s->stash[j].flow) {
				memmove(b->flows + k, b->flows + k + 1,
					(b->nflows - k - 1) * sizeof(*b->flows));
				b->nflows--;
				break;
			}
	}
	s->nstash = 0;
}

/* ---- the end ---- */

void pfburst_end(struct pfout *p)
{
	struct pfbursts *s = p->bursts;

	pfburst_unstash(p);
	while (s->head < s->next) {
		struct burst *b = &s->ring[s->head & (s->cap - 1)];

		if (b->left) {
			s->unwritten_end++;
			s->pages_end += b->left;
		}
		draw(p, b);
	}
	s->whead = s->nwait = 0;
	p->burst_check = NO_CHECK;
}

void pfburst_stats(const struct pfout *p, struct pfburst_stats *st)
{
	const struct pfbursts *s = p->bursts;

	*st = (struct pfburst_stats){
		.stale = s->stale,
		.limit = s->limit,
		.late = s->late,
		.io_full = s->io_full,
		.burst_full = s->burst_full,
		.no_slice = s->no_slice,
		.zero = s->zero,
		.before = s->before,
		.early = s->early,
	};
}

void pfburst_free(struct pfout *p)
{
	struct pfbursts *s = p->bursts;

	if (!s)
		return;
	for (uint64_t i = 0; i < s->cap; i++)
		free(s->ring[i].flows);
	free(s->ring);
	free(s->wait);
	free(s->stash);
	u64map_free(&s->bykey);
	free(s);
	p->bursts = NULL;
}
