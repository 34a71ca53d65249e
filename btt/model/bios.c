// SPDX-License-Identifier: GPL-2.0
/*
 * Every bio, by sector coverage (bios.h). The bios in flight of each device sit in a treap
 * ordered by (start sector, age), each node holding the furthest end in its subtree: the
 * k bios overlapping [s, e) are found by skipping the subtrees that end at or before s and
 * stopping at the first start at or after e, in O(log n + k) when the bios lie side by
 * side and O((k + 1) log n) at worst. Nodes live in one pool and
 * are named by index (0: none); the freed are kept on a free list, so that an event
 * allocates nothing once the pool is large enough. A list in age order gives the oldest
 * bio at once, for giving up the stale and for bios_finish().
 */
#include <errno.h>
#include <stdlib.h>

#include "model/bios.h"
#include "model/iomodel.h"
#include "model/u64map.h"

struct bnode {
	struct btt_bio b;
	uint64_t seq; /* the order bios were made in: the older takes first */
	uint64_t end; /* b.sector + b.nsec */
	uint64_t maxend; /* the furthest end in its subtree */
	uint64_t t_start; /* its first event, for giving it up */
	uint32_t left, right, prio;
	uint32_t older, newer; /* the age list; newer links the free list */
	uint32_t tree; /* its device's tree */
	uint32_t unissued; /* sectors no D has taken (again, after an R) */
	uint32_t remaining; /* sectors no C has taken */
	uint32_t requeued; /* R events that gave sectors back: as many D add no piece */
};

struct dtree {
	uint32_t device;
	uint32_t root;
};

/* a remap waiting for its Q */
struct premap {
	uint32_t device, from_device;
	uint64_t sector, from_sector;
	uint64_t time;
	int live;
};

#define NREMAP 64

struct span {
	uint64_t s, e;
};

struct bios_sub {
	bios_done_fn done;
	void *ctx;
};

struct bios {
	struct bios_sub sub[BIOS_MAX_SUBS];
	unsigned int nsub;
	struct bios_hooks hook[BIOS_MAX_SUBS];
	unsigned int nhook;
	struct bnode *n; /* the pool; n[0] unused */
	uint32_t nalloc, nused, free;
	uint32_t oldest, newest;
	uint64_t seq, rng;
	struct dtree *t;
	uint32_t nt, talloc;
	struct u64map devmap; /* device + 1 -> index in t */
	uint32_t *hit; /* the bios an event overlaps */
	uint64_t a, e; /* the event's range */
	int issued_first; /* bios a D took some of take a C first */
	uint32_t nhit, hitalloc;
	struct span *span; /* the parts of an event no bio took yet */
	uint32_t nspan, spanalloc;
	struct premap remap[NREMAP];
	uint32_t remap_next, remap_live;
	uint64_t stale_ns; /* the limits (bios_set_limits()) */
	uint32_t max_in_flight;
	struct bios_counts c;
};

/* ---- the treap ---- */

static int before(const struct bnode *a, const struct bnode *b)
{
	return a->b.sector < b->b.sector || (a->b.sector == b->b.sector && a->seq < b->seq);
}

static void update(struct bnode *n, uint32_t x)
{
	uint64_t m = n[x].end;

	if (n[x].left && n[n[x].left].maxend > m)
		m = n[n[x].left].maxend;
	if (n[x].right && n[n[x].right].maxend > m)
		m = n[n[x].right].maxend;
	n[x].maxend = m;
}

/* the nodes of @t before @k to *@l, the rest to *@r */
static void split(struct bnode *n, uint32_t t, const struct bnode *k, uint32_t *l, uint32_t *r)
{
	if (!t) {
		*l = *r = 0;
	} else if (before(&n[t], k)) {
		split(n, n[t].right, k, &n[t].right, r);
		update(n, t);
		*l = t;
	} else {
		split(n, n[t].left, k, l, &n[t].left);
		update(n, t);
		*r = t;
	}
}

/* @l and @r as one tree, every node of @l before every node of @r */
static uint32_t merge(struct bnode *n, uint32_t l, uint32_t r)
{
	if (!l || !r)
		return l ? l : r;
	if (n[l].prio > n[r].prio) {
		n[l].right = merge(n, n[l].right, r);
		update(n, l);
		return l;
	}
	n[r].left = merge(n, l, n[r].left);
	update(n, r);
	return r;
}

static uint32_t erase(struct bnode *n, uint32_t t, uint32_t x)
{
	if (t == x)
		return merge(n, n[x].left, n[x].right);
	if (before(&n[x], &n[t]))
		n[t].left = erase(n, n[t].left, x);
	else
		n[t].right = erase(n, n[t].right, x);
	update(n, t);
	return t;
}

/* ---- the pool ---- */

/* xorshift64: the treap's priorities */
static uint64_t rng_next(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

static uint32_t node_new(struct bios *s)
{
	uint32_t x = s->free;

	if (x) {
		s->free = s->n[x].newer;
	} else {
		if (s->nused >= s->nalloc) {
			uint32_t na = s->nalloc ? s->nalloc * 2 : 1024;
			struct bnode *p = na > s->nalloc ? realloc(s->n, (size_t)na * sizeof(*p))
							 : NULL;

			if (!p)
				return 0;
			s->n = p;
			s->nalloc = na;
		}
		x = s->nused++;
	}
	return x; /* bio_new() sets every field (a memset here cost a fifth of the model) */
}

static int grow(void **v, uint32_t *alloc, uint32_t need, size_t size)
{
	uint32_t na = *alloc ? *alloc : 16;
	void *p;

	if (need <= *alloc)
		return 0;
	while (na < need)
		na *= 2;
	p = realloc(*v, (size_t)na * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*alloc = na;
	return 0;
}

/* the tree of @device, made if new; UINT32_MAX when out of memory */
static uint32_t tree_of(struct bios *s, uint32_t device)
{
	uint64_t *v;

	if (s->nt && s->t[s->nt - 1].device == device)
		return s->nt - 1;
	v = u64map_get(&s->devmap, (uint64_t)device + 1);
	if (v)
		return (uint32_t)*v;
	if (grow((void **)&s->t, &s->talloc, s->nt + 1, sizeof(*s->t)) ||
	    u64map_put(&s->devmap, (uint64_t)device + 1, s->nt) < 0)
		return UINT32_MAX;
	s->t[s->nt] = (struct dtree){.device = device};
	return s->nt++;
}

/* a new bio in flight: [@sector, +@nsec) on @device, made by @ev; 0 when out of memory */
static uint32_t bio_new(struct bios *s, const struct blk_event *ev, uint64_t sector, uint32_t nsec)
{
	uint32_t ti = tree_of(s, ev->device), x, l, r;
	struct bnode *b;

	if (ti == UINT32_MAX)
		return 0;
	x = node_new(s);
	if (!x)
		return 0;
	b = &s->n[x];
	/* field by field: a compound literal is zeroed with a rep stos first */
	b->b.device = ev->device;
	b->b.pid = 0;
	b->b.sector = sector;
	b->b.nsec = nsec;
	b->b.action = ev->action;
	b->b.t_q = b->b.t_first_g = b->b.t_first_i = b->b.t_first_d = b->b.t_last_c = NO_TIME;
	b->b.pieces = b->b.completions = b->b.requeues = b->b.flags = 0;
	b->b.from_device = 0;
	b->b.from_sector = 0;
	b->b.error = 0;
	b->b.id = x;
	b->b.up_id = 0;
	b->b.t_remap = NO_TIME;
	b->b.gone = 0;
	b->left = b->right = b->newer = 0;
	b->requeued = 0;
	b->seq = ++s->seq;
	b->end = b->maxend = sector + nsec;
	b->t_start = ev->time;
	b->prio = (uint32_t)(rng_next(&s->rng) >> 32);
	b->tree = ti;
	b->unissued = b->remaining = nsec;
	split(s->n, s->t[ti].root, b, &l, &r);
	s->t[ti].root = merge(s->n, merge(s->n, l, x), r);
	b->older = s->newest;
	if (s->newest)
		s->n[s->newest].newer = x;
	else
		s->oldest = x;
	s->newest = x;
	s->c.bios++;
	if (++s->c.in_flight > s->c.max_in_flight)
		s->c.max_in_flight = s->c.in_flight;
	return x;
}

/* deliver bio @x (@flags added) and free it */
static void bio_done(struct bios *s, uint32_t x, uint32_t flags)
{
	struct bnode *b = &s->n[x];

	b->b.flags |= flags;
	if (b->b.t_first_d == NO_TIME)
		b->b.flags |= BTT_BIO_NO_D;
	if (b->b.flags & BTT_BIO_UNFINISHED)
		s->c.unfinished++;
	for (unsigned int k = 0; k < s->nsub; k++)
		s->sub[k].done(s->sub[k].ctx, &b->b);
	b = &s->n[x];
	s->t[b->tree].root = erase(s->n, s->t[b->tree].root, x);
	if (b->older)
		s->n[b->older].newer = b->newer;
	else
		s->oldest = b->newer;
	if (b->newer)
		s->n[b->newer].older = b->older;
	else
		s->newest = b->older;
	b->newer = s->free;
	s->free = x;
	s->c.in_flight--;
}

/* ---- the hooks (bios_hook()) ---- */

static void hook_made(struct bios *s, uint32_t x)
{
	for (unsigned int k = 0; k < s->nhook; k++)
		if (s->hook[k].made)
			s->hook[k].made(s->hook[k].ctx, &s->n[x].b);
}

/* bio @x took the part of the event's range [s->a, s->e) that it covers */
static void hook_piece(struct bios *s, uint32_t x, enum bios_piece_kind kind, uint64_t t)
{
	const struct bnode *b = &s->n[x];
	uint64_t lo = b->b.sector > s->a ? b->b.sector : s->a, hi = b->end < s->e ? b->end : s->e;

	for (unsigned int k = 0; k < s->nhook; k++)
		if (s->hook[k].piece)
			s->hook[k].piece(s->hook[k].ctx, &b->b, kind, t, lo, (uint32_t)(hi - lo));
}

/* ---- finding what an event covers ---- */

/* the bios of tree @t overlapping [@a, @e) to s->hit, in tree order */
static int collect(struct bios *s, uint32_t t, uint64_t a, uint64_t e)
{
	while (t && s->n[t].maxend > a) {
		if (collect(s, s->n[t].left, a, e))
			return -ENOMEM;
		if (s->n[t].b.sector >= e)
			return 0;
		if (s->n[t].end > a) {
			if (grow((void **)&s->hit, &s->hitalloc, s->nhit + 1, sizeof(*s->hit)))
				return -ENOMEM;
			s->hit[s->nhit++] = t;
		}
		t = s->n[t].right;
	}
	return 0;
}

/* whether bio @x lies inside the event's range */
static int inside(const struct bios *s, uint32_t x)
{
	return s->n[x].b.sector >= s->a && s->n[x].end <= s->e;
}

/*
 * The order bios take an event's sectors in: for a C, those a D took some of first (a C
 * follows its D); then those inside the event's range (a request holds whole bios, and
 * pieces of a split one); then the older (first in, first out).
 */
static int taking_order(const void *pa, const void *pb, void *ps)
{
	const struct bios *s = ps;
	uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
	int ix = inside(s, x), iy = inside(s, y);

	if (s->issued_first) {
		int dx = s->n[x].b.t_first_d != NO_TIME, dy = s->n[y].b.t_first_d != NO_TIME;

		if (dx != dy)
			return dy - dx;
	}
	if (ix != iy)
		return iy - ix;
	return (s->n[x].seq > s->n[y].seq) - (s->n[x].seq < s->n[y].seq);
}

/* the bios of @ev's device overlapping [@a, @e) to s->hit, in tree order */
static int collect_dev(struct bios *s, const struct blk_event *ev, uint64_t a, uint64_t e)
{
	uint64_t *v;
	uint32_t ti;

	if (s->nt && s->t[s->nt - 1].device == ev->device) {
		ti = s->nt - 1;
	} else {
		v = u64map_get(&s->devmap, (uint64_t)ev->device + 1);
		if (!v)
			return 0;
		ti = (uint32_t)*v;
	}
	return collect(s, s->t[ti].root, a, e);
}

/* the same, in their taking order (for a C when @issued_first) */
static int overlapping(struct bios *s, const struct blk_event *ev, uint64_t a, uint64_t e,
		       int issued_first)
{
	s->nhit = 0;
	if (collect_dev(s, ev, a, e))
		return -ENOMEM;
	s->a = a;
	s->e = e;
	s->issued_first = issued_first;
	for (uint32_t i = 1; i < s->nhit; i++) {
		/* often in order already (a request of bios queued in sector order) */
		if (taking_order(&s->hit[i - 1], &s->hit[i], s) > 0) {
			qsort_r(s->hit, s->nhit, sizeof(*s->hit), taking_order, s);
			break;
		}
	}
	return 0;
}

/* the newest bio of s->hit but @skip, 0 if none */
static uint32_t newest_hit(const struct bios *s, uint32_t skip)
{
	uint32_t x = 0;

	for (uint32_t i = 0; i < s->nhit; i++)
		if (s->hit[i] != skip && (!x || s->n[s->hit[i]].seq > s->n[x].seq))
			x = s->hit[i];
	return x;
}

/* the newest bio holding @ev's sector, 0 if none */
static uint32_t newest_at(struct bios *s, const struct blk_event *ev, int *err)
{
	s->nhit = 0;
	*err = collect_dev(s, ev, ev->sector, ev->sector + 1);
	return newest_hit(s, 0);
}

/*
 * Take the part of [@a, @e) that bio @x covers and no older bio took: the sectors of the
 * spans it overlaps, the spans cut. Return: how many sectors it overlapped.
 */
static uint64_t take(struct bios *s, uint32_t x)
{
	uint64_t bs = s->n[x].b.sector, be = s->n[x].end, got = 0;
	uint32_t i, n = s->nspan;

	for (i = 0; i < n; i++) {
		struct span *p = &s->span[i];
		uint64_t lo = p->s > bs ? p->s : bs, hi = p->e < be ? p->e : be;

		if (lo >= hi)
			continue;
		got += hi - lo;
		if (p->s < lo && p->e > hi) {
			/* the bio inside the span: cut it in two (room was made) */
			s->span[s->nspan++] = (struct span){hi, p->e};
			p->e = lo;
		} else if (p->s < lo) {
			p->e = lo;
		} else {
			p->s = hi; /* empty when hi == p->e */
		}
	}
	return got;
}

/* bio @x takes part in a D: a request of several bios is shared by each */
static void share(struct bios *s, uint32_t x, uint32_t *first, uint32_t *takers)
{
	if (++*takers == 1) {
		*first = x;
		return;
	}
	s->n[x].b.flags |= BTT_BIO_MERGED;
	if (*takers == 2)
		s->n[*first].b.flags |= BTT_BIO_MERGED;
}

enum kind { TAKE_ISSUE, TAKE_REQUEUE, TAKE_COMPLETE };

/* one span [@a, @e) to take from */
static int spans_init(struct bios *s, uint64_t a, uint64_t e)
{
	if (grow((void **)&s->span, &s->spanalloc, s->nhit + 1, sizeof(*s->span)))
		return -ENOMEM;
	s->span[0] = (struct span){a, e};
	s->nspan = 1;
	return 0;
}

/* D, R or C over [@a, @e): the bios in flight take their parts (see taking_order()) */
static int cover(struct bios *s, const struct blk_event *ev, enum kind k, uint64_t a, uint64_t e)
{
	int err = overlapping(s, ev, a, e, k == TAKE_COMPLETE);
	uint32_t i, first = 0, takers = 0, credited = 0;

	if (err || spans_init(s, a, e))
		return -ENOMEM;
	for (i = 0; i < s->nhit; i++) {
		uint32_t x = s->hit[i];
		struct bnode *b = &s->n[x];
		uint32_t left = k == TAKE_COMPLETE ? b->remaining : b->unissued;
		uint64_t got;

		if (k != TAKE_REQUEUE && !left)
			continue;
		got = take(s, x);
		if (!got)
			continue;
		if (k == TAKE_ISSUE) {
			enum bios_piece_kind kind = b->requeued ? BIOS_PIECE_REISSUE
								: BIOS_PIECE_ISSUE;

			share(s, x, &first, &takers);
			b->unissued -= got < left ? (uint32_t)got : left;
			if (b->requeued)
				b->requeued--;
			else
				b->b.pieces++;
			if (b->b.t_first_d == NO_TIME)
				b->b.t_first_d = ev->time;
			if (s->nhook)
				hook_piece(s, x, kind, ev->time);
		} else if (k == TAKE_REQUEUE) {
			b->b.requeues++;
			b->requeued++;
			b->unissued += (uint32_t)got;
			if (b->unissued > b->b.nsec)
				b->unissued = b->b.nsec;
		} else {
			if (!credited++)
				b->b.completions++;
			b->remaining -= got < left ? (uint32_t)got : left;
			b->b.t_last_c = ev->time;
			if (!b->b.error)
				b->b.error = ev->error;
			if (s->nhook)
				hook_piece(s, x, BIOS_PIECE_COMPLETE, ev->time);
		}
	}
	if (k == TAKE_COMPLETE) {
		for (i = 0; i < s->nhit; i++)
			if (!s->n[s->hit[i]].remaining)
				bio_done(s, s->hit[i], 0);
	}
	if (k == TAKE_REQUEUE)
		return 0;
	/* what no bio took: I/Os whose Q is not in the trace */
	for (i = 0; i < s->nspan; i++) {
		struct span p = s->span[i];
		uint32_t x;

		if (p.s >= p.e)
			continue;
		x = bio_new(s, ev, p.s, (uint32_t)(p.e - p.s));
		if (!x)
			return -ENOMEM;
		s->c.no_q++;
		s->n[x].b.flags |= BTT_BIO_NO_Q;
		s->n[x].unissued = 0;
		if (k == TAKE_ISSUE) {
			share(s, x, &first, &takers);
			s->n[x].b.pieces = 1;
			s->n[x].b.t_first_d = ev->time;
			if (s->nhook) {
				hook_made(s, x);
				hook_piece(s, x, BIOS_PIECE_ISSUE, ev->time);
			}
		} else {
			if (!credited++)
				s->n[x].b.completions = 1;
			s->n[x].remaining = 0;
			s->n[x].b.t_last_c = ev->time;
			s->n[x].b.error = ev->error;
			if (s->nhook)
				hook_made(s, x);
			bio_done(s, x, 0);
		}
	}
	return 0;
}

/* ---- the events ---- */

static void remap_put(struct bios *s, const struct blk_event *ev)
{
	struct blk_io_trace_remap r;
	struct premap *p = &s->remap[s->remap_next];

	if (blk_event_remap(ev, &r) < 0)
		return;
	/* a remap of a remap (dm onto a partition at sector S, then the partition from S onto
	 * its disk, both A events on the disk's trace): the bio comes from where the first
	 * came from */
	for (uint32_t k = 1; s->remap_live && k <= NREMAP; k++) {
		struct premap *q = &s->remap[(s->remap_next + NREMAP - k) % NREMAP];

		if (q->live && q->device == ev->device && q->sector == r.sector_from &&
		    q->from_device != r.device_from) {
			r.device_from = q->from_device;
			r.sector_from = q->from_sector;
			q->live = 0;
			s->remap_live--;
			break;
		}
	}
	if (!p->live)
		s->remap_live++;
	*p = (struct premap){
		.device = ev->device,
		.sector = ev->sector,
		.from_device = r.device_from,
		.from_sector = r.sector_from,
		.time = ev->time,
		.live = 1,
	};
	s->remap_next = (s->remap_next + 1) % NREMAP;
}

/* the remap waiting for a Q at (@device, @sector), newest first; taken */
static struct premap *remap_take(struct bios *s, uint32_t device, uint64_t sector)
{
	for (uint32_t k = 1; k <= NREMAP; k++) {
		struct premap *p = &s->remap[(s->remap_next + NREMAP - k) % NREMAP];

		if (p->live && p->device == device && p->sector == sector) {
			p->live = 0;
			s->remap_live--;
			return p;
		}
	}
	return NULL;
}

/* the newest bio in flight on @device holding @sector but @skip, 0 if none */
static uint32_t newest_on(struct bios *s, uint32_t device, uint64_t sector, uint32_t skip)
{
	uint64_t *v = u64map_get(&s->devmap, (uint64_t)device + 1);

	s->nhit = 0;
	if (!v || collect(s, s->t[*v].root, sector, sector + 1))
		return 0;
	return newest_hit(s, skip);
}

static int do_queue(struct bios *s, const struct blk_event *ev, uint32_t nsec)
{
	uint32_t x = bio_new(s, ev, ev->sector, nsec);
	struct premap *p;

	if (!x)
		return -ENOMEM;
	s->n[x].b.pid = ev->pid;
	s->n[x].b.t_q = ev->time;
	if (s->remap_live && (p = remap_take(s, ev->device, ev->sector))) {
		s->n[x].b.flags |= BTT_BIO_REMAPPED;
		s->n[x].b.from_device = p->from_device;
		s->n[x].b.from_sector = p->from_sector;
		s->n[x].b.t_remap = p->time;
		if (s->nhook)
			s->n[x].b.up_id = newest_on(s, p->from_device, p->from_sector, x);
	}
	if (s->nhook)
		hook_made(s, x);
	return 0;
}

/* X, M, F: the newest bio holding the event's sector gets @flag */
static int mark(struct bios *s, const struct blk_event *ev, uint32_t flag)
{
	int err;
	uint32_t x = newest_at(s, ev, &err);

	if (x)
		s->n[x].b.flags |= flag;
	return err;
}

/*
 * X. The block layer's split (bio_split) records the front piece and names where the rest
 * starts: pieces that each get their own D and C. dm's split records the rest, the bio
 * itself cut to it (its sector named twice): the front goes on as a clone that dm
 * completes with the bio, whose one C covers the rest only. So the front of such a bio
 * awaits no D or C of its own.
 */
static int split_at(struct bios *s, const struct blk_event *ev)
{
	int err;
	uint32_t x = newest_at(s, ev, &err);

	if (!x)
		return err;
	s->n[x].b.flags |= BTT_BIO_SPLIT;
	if (blk_event_pdu_u64(ev) == ev->sector && ev->sector > s->n[x].b.sector) {
		uint64_t rest = s->n[x].end - ev->sector;

		if (s->n[x].remaining > rest)
			s->n[x].remaining = (uint32_t)rest;
		if (s->n[x].unissued > rest)
			s->n[x].unissued = (uint32_t)rest;
	}
	return err;
}

/* G: the newest bio holding its sector got a request, if it had none */
static int got_request(struct bios *s, const struct blk_event *ev)
{
	int err;
	uint32_t x = newest_at(s, ev, &err);

	if (x && s->n[x].b.t_first_g == NO_TIME)
		s->n[x].b.t_first_g = ev->time;
	return err;
}

/* I: the bios with sectors still to issue in its range were inserted, if they were not */
static int inserted(struct bios *s, const struct blk_event *ev, uint32_t nsec)
{
	s->nhit = 0;
	if (collect_dev(s, ev, ev->sector, ev->sector + nsec))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nhit; i++) {
		struct bnode *b = &s->n[s->hit[i]];

		if (b->unissued && b->b.t_first_i == NO_TIME)
			b->b.t_first_i = ev->time;
	}
	return 0;
}

/* deliver the oldest bio in flight, BTT_BIO_UNFINISHED for reason @gone */
static void give_up_oldest(struct bios *s, enum btt_bio_gone gone)
{
	s->n[s->oldest].b.gone = (uint8_t)gone;
	bio_done(s, s->oldest, BTT_BIO_UNFINISHED);
}

/* give up the bios in flight for longer than the limit before @now */
static void give_up(struct bios *s, uint64_t now)
{
	while (s->oldest && now > s->n[s->oldest].t_start + s->stale_ns)
		give_up_oldest(s, BTT_BIO_STALE);
}

/* D, R or C */
static int take_event(struct bios *s, const struct blk_event *ev, enum kind k, uint32_t nsec)
{
	int err = cover(s, ev, k, ev->sector, ev->sector + nsec);

	/* after the event, when no bio of it is in use: the oldest while too many are kept */
	while (s->c.in_flight > s->max_in_flight)
		give_up_oldest(s, BTT_BIO_EVICTED);
	return err;
}

int bios_event(struct bios *s, const struct blk_event *ev)
{
	uint32_t act = blk_event_action32(ev);
	uint32_t nsec = blk_event_sectors(ev);
	int err;

	if (act & BLK_TC_ACT(BLK_TC_NOTIFY | BLK_TC_PC))
		return 0;
	if (s->oldest)
		give_up(s, ev->time);
	switch (act & 0xffff & ~BLK_TA_CGROUP) {
	case BLK_TA_SPLIT:
		s->c.splits++;
		return split_at(s, ev);
	case BLK_TA_REMAP:
		s->c.remaps++;
		remap_put(s, ev);
		return 0;
	default:
		break;
	}
	if (!nsec)
		return 0;
	switch (act & 0xffff & ~BLK_TA_CGROUP) {
	case BLK_TA_QUEUE:
		err = do_queue(s, ev, nsec);
		if (s->c.in_flight > s->max_in_flight)
			give_up_oldest(s, BTT_BIO_EVICTED);
		return err;
	case BLK_TA_GETRQ:
		return got_request(s, ev);
	case BLK_TA_INSERT:
		return inserted(s, ev, nsec);
	case BLK_TA_BACKMERGE:
	case BLK_TA_FRONTMERGE:
		s->c.merges++;
		return mark(s, ev, BTT_BIO_MERGED);
	case BLK_TA_ISSUE:
		s->c.requests++;
		return take_event(s, ev, TAKE_ISSUE, nsec);
	case BLK_TA_REQUEUE:
		s->c.requeues++;
		return take_event(s, ev, TAKE_REQUEUE, nsec);
	case BLK_TA_COMPLETE:
		s->c.completions++;
		return take_event(s, ev, TAKE_COMPLETE, nsec);
	default:
		return 0;
	}
}

struct bios *bios_new(bios_done_fn done, void *ctx)
{
	struct bios *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (done)
		bios_subscribe(s, done, ctx);
	s->rng = 0x2545F4914F6CDD1Dull;
	s->nused = 1; /* index 0 is no node */
	bios_set_limits(s, 0, 0);
	return s;
}

int bios_subscribe(struct bios *s, bios_done_fn done, void *ctx)
{
	if (s->nsub >= BIOS_MAX_SUBS)
		return -ENOSPC;
	s->sub[s->nsub++] = (struct bios_sub){done, ctx};
	return 0;
}

int bios_hook(struct bios *s, const struct bios_hooks *h)
{
	if (s->nhook >= BIOS_MAX_SUBS)
		return -ENOSPC;
	s->hook[s->nhook++] = *h;
	return 0;
}

void bios_set_limits(struct bios *s, uint64_t stale_ns, uint32_t max_in_flight)
{
	s->stale_ns = stale_ns ? stale_ns : BIOS_STALE_NS;
	s->max_in_flight = max_in_flight ? max_in_flight : BIOS_MAX_IN_FLIGHT;
}

void bios_finish(struct bios *s)
{
	while (s->oldest)
		give_up_oldest(s, BTT_BIO_AT_END);
}

const struct bios_counts *bios_counts(const struct bios *s)
{
	return &s->c;
}

void bios_free(struct bios *s)
{
	if (!s)
		return;
	free(s->n);
	free(s->t);
	free(s->hit);
	free(s->span);
	u64map_free(&s->devmap);
	free(s);
}
