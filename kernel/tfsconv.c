// SPDX-License-Identifier: GPL-2.0
/*
 * The blk tracer's ring-buffer pages turned into classic records: libtraceevent's kbuffer
 * walks the page (blk_ftrace_page_walk(), header_page gives its layout), each blk entry
 * becomes the record the trace_pipe "bin" path wrote (see tfsconv.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace.h"
#include "blk/cgroup.h"
#include "blk/trace.h"
#include "fsevents.h"
#include "tfsconv.h"

/* --origin: the file maps of a stream remembered to drop their repeats */
#define FMAP_RECENT 8
/* --origin: the folios last added to the page cache on this CPU (their sizes) */
#define FOLIO_RECENT 32
/* --origin: the names of the dirtying tasks, by pid (a power of 2) */
#define DIRTIERS 64

/* the pids announced with a process note on one CPU's stream of one device */
struct pidset {
	uint32_t *slot; /* pid + 1, 0 = free */
	size_t cap, n;
};

struct stage {
	unsigned char *buf; /* converted records not yet delivered */
	size_t len, cap;
	unsigned long events, records;
	uint32_t seq;
	struct pidset pids;
	/* the open cgroup run (trace.h BLK_TN_CGROUP): its note's payload in buf */
	int run_open;
	size_t run_off;
	uint64_t run_id;
	uint32_t run_next, run_count;
	uint64_t *cgs; /* the ids whose path note this stream carries */
	size_t ncgs, capcgs;
	uint64_t last_ts; /* of the last record staged */
	/* --origin: the open dirty run (trace.h BLK_TN_DIRTY), its note's payload in buf */
	int dirty_open;
	size_t dirty_off;
	uint32_t dirty_pid;
	uint64_t dirty_ino, dirty_next;
	uint32_t dirty_count;
	/* the open file map (BLK_TN_FMAP), grown while no I/O event follows it */
	int fmap_open;
	size_t fmap_off;
	unsigned long fmap_events;
	int fmap_slot; /* its copy in recent[] */
	struct blk_fmap_pdu recent[FMAP_RECENT]; /* the last maps written (ino 0: none) */
	int recent_next;
	struct blk_fsev_inos inos; /* the files of its notes */
};

struct folio_seen {
	int dev;
	uint64_t ino, index;
	unsigned int order;
};

struct blk_tfsconv {
	struct blk_ftrace_pages *pages;
	uint32_t cpu;
	uint32_t *devnos;
	int ndevs;
	struct stage *st; /* per device */
	uint64_t skipped, missed;
	uint64_t cg_tagged, cg_runs; /* records tagged (blk_tfsconv_record()), run notes made */
	blk_tfsconv_comm_fn comm;
	void *ctx;
	blk_tfsconv_cgpath_fn cgpath;
	void *cgctx;
	const struct blk_fsev *origin; /* --origin's events, or NULL */
	struct folio_seen folios[FOLIO_RECENT];
	int folio_next;
	struct dirtier {
		uint32_t pid1; /* pid + 1, 0: free */
		char comm[16];
	} dirtiers[DIRTIERS];
	uint64_t ndirty, nfmap; /* origin notes written */
};

/* where struct trace_entry ends in the entry: the blk_io_trace fields the kernel sets */
#define ENT_HDR 8

static int pidset_add(struct pidset *s, uint32_t pid)
{
	size_t i;

	if (s->n * 2 >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint32_t *nslot = calloc(cap, sizeof(*nslot));

		if (!nslot)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++) {
			if (!s->slot[j])
				continue;
			for (i = (s->slot[j] * 2654435761u) & (cap - 1); nslot[i];
			     i = (i + 1) & (cap - 1))
				;
			nslot[i] = s->slot[j];
		}
		free(s->slot);
		s->slot = nslot;
		s->cap = cap;
	}
	for (i = ((pid + 1) * 2654435761u) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == pid + 1)
			return 0;
	s->slot[i] = pid + 1;
	s->n++;
	return 1;
}

/* Room for @need more bytes in @st. Return 0 or -ENOMEM. */
static int stage_room(struct stage *st, size_t need)
{
	size_t cap = st->cap ? st->cap : 64 * 1024;
	unsigned char *nb;

	if (st->cap - st->len >= need)
		return 0;
	while (cap - st->len < need)
		cap *= 2;
	nb = realloc(st->buf, cap);
	if (!nb)
		return -ENOMEM;
	st->buf = nb;
	st->cap = cap;
	return 0;
}

int blk_tfsconv_put(struct blk_tfsconv *c, int dev, const struct blk_event *ev)
{
	struct stage *st = &c->st[dev];

	if (stage_room(st, 64 + ev->pdu_len))
		return -ENOMEM;
	st->len += blk_event_encode(ev, st->buf + st->len);
	st->last_ts = ev->time;
	st->records++;
	if (!blk_event_is_notify(ev))
		st->events++;
	return 0;
}

/* the name of @pid into @comm (64 bytes): the comm function's, else /proc's, or "unknown" */
static void task_name(struct blk_tfsconv *c, uint32_t pid, char *comm)
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	if (c->comm && c->comm(c->ctx, pid, comm, 64))
		return;
	if (pid == 0) {
		snprintf(comm, 64, "swapper/%u", c->cpu);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f || !fgets(comm, 64, f))
		snprintf(comm, 64, "unknown");
	if (f)
		fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
}

/* the process note the relay path's kernel writes the first time it sees a task */
static int announce(struct blk_tfsconv *c, int dev, const struct blk_event *ev)
{
	char comm[64];
	unsigned char pdu[16];
	struct blk_event n = *ev;

	task_name(c, ev->pid, comm);
	memset(pdu, 0, sizeof(pdu));
	memcpy(pdu, comm, strnlen(comm, 15));
	n.action = BLK_TN_ACTION(BLK_TN_PROCESS);
	n.sequence = 0;
	n.sector = 0;
	n.bytes = 0;
	n.error = 0;
	n.pdu = pdu;
	n.pdu_len = sizeof(pdu);
	n.version = BLK_IO_TRACE_VERSION;
	return blk_tfsconv_put(c, dev, &n);
}

/* the path note of cgroup @id, once per stream, where the path is known */
static int announce_cgroup(struct blk_tfsconv *c, int dev, uint64_t id, uint64_t ts)
{
	struct stage *st = &c->st[dev];
	unsigned char pdu[8 + BLK_CGPATH_MAX + 1];
	struct blk_event n;
	size_t len;

	for (size_t i = 0; i < st->ncgs; i++)
		if (st->cgs[i] == id)
			return 0;
	if (!c->cgpath || !c->cgpath(c->cgctx, id, (char *)pdu + 8, sizeof(pdu) - 8))
		return 0;
	len = strnlen((char *)pdu + 8, BLK_CGPATH_MAX);
	if (!len)
		return 0;
	if (st->ncgs == st->capcgs) {
		size_t cap = st->capcgs ? st->capcgs * 2 : 16;
		uint64_t *ncgs = realloc(st->cgs, cap * sizeof(*ncgs));

		if (!ncgs)
			return -ENOMEM;
		st->cgs = ncgs;
		st->capcgs = cap;
	}
	st->cgs[st->ncgs++] = id;
	memcpy(pdu, &id, 8);
	blk_event_note(&n, BLK_TN_CGPATH, c->devnos[dev], c->cpu, ts, pdu, (uint16_t)(8 + len));
	return blk_tfsconv_put(c, dev, &n);
}

/* one more event in the open run: its note's count, in the stage, grows */
static void cgroup_run_grow(struct stage *st)
{
	st->run_next++;
	st->run_count++;
	memcpy(st->buf + st->run_off + offsetof(struct blk_cgroup_pdu, count), &st->run_count,
	       sizeof(st->run_count));
}

/*
 * Event @seq of device @dev at @ts was tagged with cgroup @id: one more in the open run,
 * or a new run note (trace.h BLK_TN_CGROUP) before it. Return 0 or -ENOMEM.
 */
static int cgroup_run(struct blk_tfsconv *c, int dev, uint64_t id, uint32_t seq, uint64_t ts)
{
	struct stage *st = &c->st[dev];
	struct blk_cgroup_pdu pdu = {.id = id, .first = seq, .count = 1};
	struct blk_event n;

	if (st->run_open && st->run_id == id && st->run_next == seq) {
		cgroup_run_grow(st);
		return 0;
	}
	if (announce_cgroup(c, dev, id, ts))
		return -ENOMEM;
	blk_event_note(&n, BLK_TN_CGROUP, c->devnos[dev], c->cpu, ts, &pdu, sizeof(pdu));
	if (blk_tfsconv_put(c, dev, &n))
		return -ENOMEM;
	c->cg_runs++;
	st->run_open = 1;
	st->run_off = st->len - sizeof(pdu);
	st->run_id = id;
	st->run_next = seq + 1;
	st->run_count = 1;
	return 0;
}

/*
 * Event @seq of device @dev at @ts (@action) had cgroup @id if @tagged: one more in the open
 * run, a new run note, a plug passed over (trace.h BLK_TN_CGROUP), or the run closed.
 * Return 0 or -ENOMEM.
 */
static int cgroup_mark(struct blk_tfsconv *c, int dev, int tagged, uint64_t id, uint64_t action,
		       uint32_t seq, uint64_t ts)
{
	struct stage *st = &c->st[dev];

	if (tagged)
		return cgroup_run(c, dev, id, seq, ts);
	if (st->run_open && st->run_next == seq && blk_cgroup_untagged(action))
		cgroup_run_grow(st);
	else
		st->run_open = 0;
	return 0;
}

int blk_tfsconv_record(struct blk_tfsconv *c, int dev, struct blk_event *ev)
{
	uint64_t id = 0;
	int tagged = 0;

	if ((ev->action & BLK_TA_CGROUP) && ev->pdu_len >= sizeof(id)) {
		memcpy(&id, ev->pdu, sizeof(id));
		ev->action &= ~(uint64_t)BLK_TA_CGROUP;
		ev->pdu += sizeof(id);
		ev->pdu_len = (uint16_t)(ev->pdu_len - sizeof(id));
		tagged = 1;
		c->cg_tagged++;
	}
	if (!blk_event_is_notify(ev) &&
	    cgroup_mark(c, dev, tagged, id, ev->action, ev->sequence, ev->time))
		return -ENOMEM;
	return blk_tfsconv_put(c, dev, ev);
}

void blk_tfsconv_cgroup_counts(const struct blk_tfsconv *c, uint64_t *tagged, uint64_t *runs)
{
	*tagged = c->cg_tagged;
	*runs = c->cg_runs;
}

static int dev_index(const struct blk_tfsconv *c, uint32_t devno)
{
	for (int i = 0; i < c->ndevs; i++)
		if (c->devnos[i] == devno)
			return i;
	return -1;
}

/* ---- --origin: dirty runs and file maps (trace.h BLK_TN_DIRTY, BLK_TN_FMAP) ---- */

/* the pages of the folio at @r->index (the size it entered the page cache with, else 1) */
static uint32_t folio_pages(const struct blk_tfsconv *c, const struct blk_fsev_rec *r)
{
	for (int i = 0; i < FOLIO_RECENT; i++) {
		const struct folio_seen *f = &c->folios[i];

		if (f->ino == r->ino && f->index == r->index && f->dev == r->dev)
			return 1u << f->order;
	}
	return 1;
}

/* page @r->index of @r->ino dirtied: one more in the open run, or a new run's note */
static int origin_dirty(struct blk_tfsconv *c, const struct blk_fsev_rec *r, uint64_t ts)
{
	struct stage *st = &c->st[r->dev];
	uint32_t pages = folio_pages(c, r);
	struct blk_dirty_pdu pdu;
	struct blk_event n;
	struct dirtier *dt;
	char comm[64];

	if (st->dirty_open && st->dirty_pid == r->pid && st->dirty_ino == r->ino &&
	    st->dirty_next == r->index) {
		st->dirty_next += pages;
		st->dirty_count += pages;
		memcpy(st->buf + st->dirty_off + offsetof(struct blk_dirty_pdu, count),
		       &st->dirty_count, sizeof(st->dirty_count));
		return 0;
	}
	memset(&pdu, 0, sizeof(pdu));
	pdu.ino = r->ino;
	pdu.index = r->index;
	pdu.count = pages;
	pdu.page_size = (uint32_t)blk_fsev_page_size(c->origin);
	/*
	 * the comm function reads the kernel's saved_cmdlines whole: asked once per task (a
	 * random writer makes a run per page), the name kept from then on
	 */
	dt = &c->dirtiers[r->pid & (DIRTIERS - 1)];
	if (dt->pid1 != r->pid + 1) {
		task_name(c, r->pid, comm);
		dt->pid1 = r->pid + 1;
		memset(dt->comm, 0, sizeof(dt->comm));
		memcpy(dt->comm, comm, strnlen(comm, sizeof(dt->comm) - 1));
	}
	memcpy(pdu.comm, dt->comm, sizeof(pdu.comm));
	blk_event_note(&n, BLK_TN_DIRTY, c->devnos[r->dev], c->cpu, ts, &pdu, sizeof(pdu));
	n.pid = r->pid;
	if (blk_tfsconv_put(c, r->dev, &n) || blk_fsev_inos_add(&st->inos, r->ino) < 0)
		return -ENOMEM;
	st->dirty_open = 1;
	st->dirty_off = st->len - sizeof(pdu);
	st->dirty_pid = r->pid;
	st->dirty_ino = r->ino;
	st->dirty_next = r->index + pages;
	st->dirty_count = pages;
	c->ndirty++;
	return 0;
}

/* whether map @m says nothing that @e, a map written before, does not say already */
static int fmap_within(const struct blk_fmap_pdu *e, const struct blk_fsev_rec *m)
{
	uint64_t d = m->offset - e->offset;

	return e->ino == m->ino && m->offset >= e->offset &&
	       m->offset + m->bytes <= e->offset + e->bytes && !(d % 512) &&
	       m->sector == e->sector + d / 512;
}

/* the maps remembered that sectors @sector on (@bytes) no longer describe, but for @keep */
static void fmap_forget(struct stage *st, uint64_t sector, uint64_t bytes, int keep)
{
	for (int i = 0; i < FMAP_RECENT; i++) {
		struct blk_fmap_pdu *e = &st->recent[i];

		if (i != keep && e->ino && e->sector < sector + (bytes + 511) / 512 &&
		    sector < e->sector + (e->bytes + 511) / 512)
			e->ino = 0;
	}
}

/*
 * @r->bytes of @r->ino at @r->offset are at @r->sector: dropped where a map written before
 * says so already, grown into the open map where it continues it in the file and on the
 * disk (no I/O event between), else a new note
 */
static int origin_fmap(struct blk_tfsconv *c, const struct blk_fsev_rec *r, uint64_t ts)
{
	struct stage *st = &c->st[r->dev];
	struct blk_fmap_pdu pdu = {r->ino, r->offset, r->sector, r->bytes}, *open;
	struct blk_event n;

	for (int i = 0; i < FMAP_RECENT; i++)
		if (fmap_within(&st->recent[i], r))
			return 0;
	open = &st->recent[st->fmap_slot];
	if (st->fmap_open && st->fmap_events == st->events && open->ino == r->ino &&
	    !(open->bytes % 512) && r->offset == open->offset + open->bytes &&
	    r->sector == open->sector + open->bytes / 512) {
		fmap_forget(st, r->sector, r->bytes, st->fmap_slot);
		open->bytes += r->bytes;
		memcpy(st->buf + st->fmap_off + offsetof(struct blk_fmap_pdu, bytes), &open->bytes,
		       sizeof(open->bytes));
		return 0;
	}
	fmap_forget(st, r->sector, r->bytes, -1);
	blk_event_note(&n, BLK_TN_FMAP, c->devnos[r->dev], c->cpu, ts, &pdu, sizeof(pdu));
	n.pid = r->pid;
	if (blk_tfsconv_put(c, r->dev, &n) || blk_fsev_inos_add(&st->inos, r->ino) < 0)
		return -ENOMEM;
	st->fmap_open = 1;
	st->fmap_off = st->len - sizeof(pdu);
	st->fmap_events = st->events;
	st->fmap_slot = st->recent_next;
	st->recent[st->recent_next] = pdu;
	st->recent_next = (st->recent_next + 1) % FMAP_RECENT;
	c->nfmap++;
	return 0;
}

/* one of --origin's events, at @ts: its note, if it says something. 0 or -ENOMEM. */
static int origin_entry(struct blk_tfsconv *c, const struct blk_fsev_rec *r, uint64_t ts)
{
	switch (r->kind) {
	case BLK_FSEV_FOLIO:
		c->folios[c->folio_next] = (struct folio_seen){r->dev, r->ino, r->index, r->order};
		c->folio_next = (c->folio_next + 1) % FOLIO_RECENT;
		return 0;
	case BLK_FSEV_DIRTY:
		return origin_dirty(c, r, ts);
	case BLK_FSEV_FMAP:
		return origin_fmap(c, r, ts);
	default:
		return 0;
	}
}

/*
 * One entry of @size bytes at @data, stamped @ts. The ring holds other entries beside the
 * blk tracer's (trace_marker writes, events enabled at the top level): their type number
 * is not published for the blk tracer, so an entry is taken as a blk entry by its shape (as
 * long as a blk_io_trace and its pdu, recorded on this CPU), after --origin's events,
 * which are known by their type. Return 1 if it was one, 0 if not, -ENOMEM.
 *
 * The record is the entry itself from the sector on (the CPU in it is this CPU's), behind
 * the magic, the sequence number and the time: copied whole rather than decoded and
 * encoded again (a fifth of the tracer's time at 700k events/s).
 */
static int convert_entry(struct blk_tfsconv *c, const unsigned char *data, int size, uint64_t ts)
{
	struct blk_io_trace t;
	struct stage *st;
	uint32_t head[2] = {BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION, 0};
	uint64_t cg = 0;
	size_t len;
	int dev, ret, tagged = 0;

	if (c->origin) {
		struct blk_fsev_rec r;

		if (blk_fsev_decode(c->origin, data, (size_t)size, &r))
			return origin_entry(c, &r, ts) ? -ENOMEM : 0;
	}
	if (size < (int)sizeof(t))
		goto skip;
	memcpy(&t, data, sizeof(t));
	if (t.cpu != c->cpu || sizeof(t) + t.pdu_len > (size_t)size)
		goto skip;
	dev = dev_index(c, t.device);
	if (dev < 0)
		return 1;
	st = &c->st[dev];
	if ((t.action & BLK_TA_CGROUP) && t.pdu_len >= sizeof(cg)) {
		/* the blk_cgroup option's id: carried in a note, the record left untagged */
		memcpy(&cg, data + sizeof(t), sizeof(cg));
		t.action &= ~BLK_TA_CGROUP;
		t.pdu_len = (uint16_t)(t.pdu_len - sizeof(cg));
		tagged = 1;
	}
	if (!(t.action & BLK_TC_ACT(BLK_TC_NOTIFY))) {
		ret = pidset_add(&st->pids, t.pid);
		if (ret > 0) {
			struct blk_event ev;

			memset(&ev, 0, sizeof(ev));
			ev.time = ts;
			ev.pid = t.pid;
			ev.device = t.device;
			ev.cpu = c->cpu;
			ret = announce(c, dev, &ev);
		}
		if (ret < 0)
			return -ENOMEM;
		head[1] = ++st->seq;
		if (cgroup_mark(c, dev, tagged, cg, t.action, head[1], ts))
			return -ENOMEM;
		st->events++;
	}
	len = sizeof(t) + t.pdu_len;
	if (stage_room(st, len))
		return -ENOMEM;
	memcpy(st->buf + st->len, head, sizeof(head));
	memcpy(st->buf + st->len + 8, &ts, 8);
	st->last_ts = ts;
	if (tagged) {
		memcpy(st->buf + st->len + 16, (const unsigned char *)&t + 16, sizeof(t) - 16);
		memcpy(st->buf + st->len + sizeof(t), data + sizeof(t) + sizeof(cg), t.pdu_len);
	} else {
		memcpy(st->buf + st->len + 16, data + 16, len - 16);
	}
	st->len += len;
	st->records++;
	return 1;
skip:
	c->skipped += (uint64_t)size;
	return 0;
}

struct walk {
	struct blk_tfsconv *c;
	int n; /* blk entries */
	uint64_t last;
};

static int on_entry(void *arg, const struct blk_ftrace_rec *r)
{
	struct walk *w = arg;
	int ret = convert_entry(w->c, r->data, (int)r->len, r->ts);

	if (ret < 0)
		return ret;
	w->n += ret;
	w->last = r->ts;
	return 0;
}

int blk_tfsconv_page(struct blk_tfsconv *c, const void *page, size_t len, uint64_t *last)
{
	struct walk w = {c, 0, 0};
	uint64_t missed;
	int ret;

	ret = blk_ftrace_page_walk(c->pages, page, len, on_entry, &w, &missed);
	c->missed += missed;
	if (ret < 0)
		return ret;
	if (ret > 0)
		*last = w.last;
	return w.n;
}

struct blk_tfsconv *blk_tfsconv_new(const char *header_page, const uint32_t *devnos, int ndevs,
				    uint32_t cpu, blk_tfsconv_comm_fn comm, void *ctx)
{
	struct blk_tfsconv *c = calloc(1, sizeof(*c));

	if (!c)
		goto nomem;
	c->devnos = calloc((size_t)ndevs + 1, sizeof(*c->devnos));
	c->st = calloc((size_t)ndevs + 1, sizeof(*c->st));
	if (!c->devnos || !c->st)
		goto nomem;
	memcpy(c->devnos, devnos, (size_t)ndevs * sizeof(*devnos));
	c->ndevs = ndevs;
	c->cpu = cpu;
	c->comm = comm;
	c->ctx = ctx;
	/* (no header_page: records handed one by one, blk_tfsconv_record()) */
	c->pages = header_page ? blk_ftrace_pages_new(header_page) : NULL;
	if (header_page && !c->pages) {
		int err = errno;

		blk_tfsconv_free(c);
		errno = err;
		return NULL;
	}
	return c;
nomem:
	blk_tfsconv_free(c);
	errno = ENOMEM;
	return NULL;
}

int blk_tfsconv_page_size(const struct blk_tfsconv *c)
{
	return blk_ftrace_pages_size(c->pages);
}

const unsigned char *blk_tfsconv_staged(const struct blk_tfsconv *c, int dev, size_t *len,
					unsigned long *events)
{
	*len = c->st[dev].len;
	*events = c->st[dev].events;
	return c->st[dev].buf;
}

unsigned long blk_tfsconv_staged_records(const struct blk_tfsconv *c, int dev)
{
	return c->st[dev].records;
}

void blk_tfsconv_clear(struct blk_tfsconv *c, int dev)
{
	c->st[dev].len = 0;
	c->st[dev].events = 0;
	c->st[dev].records = 0;
	/* a run's note is in the batch handed on: the next event starts a new one */
	c->st[dev].run_open = 0;
	c->st[dev].dirty_open = 0;
	c->st[dev].fmap_open = 0;
}

void blk_tfsconv_set_cgpath(struct blk_tfsconv *c, blk_tfsconv_cgpath_fn fn, void *ctx)
{
	c->cgpath = fn;
	c->cgctx = ctx;
}

void blk_tfsconv_set_origin(struct blk_tfsconv *c, const struct blk_fsev *o)
{
	c->origin = o;
}

void blk_tfsconv_origin_counts(const struct blk_tfsconv *c, uint64_t *dirty, uint64_t *fmap)
{
	*dirty = c->ndirty;
	*fmap = c->nfmap;
}

const struct blk_fsev_inos *blk_tfsconv_inos(const struct blk_tfsconv *c, int dev)
{
	return &c->st[dev].inos;
}

uint64_t blk_tfsconv_last(const struct blk_tfsconv *c, int dev)
{
	return c->st[dev].last_ts;
}

uint64_t blk_tfsconv_skipped(const struct blk_tfsconv *c)
{
	return c->skipped;
}

uint64_t blk_tfsconv_missed(const struct blk_tfsconv *c)
{
	return c->missed;
}

void blk_tfsconv_free(struct blk_tfsconv *c)
{
	if (!c)
		return;
	for (int i = 0; c->st && i < c->ndevs; i++) {
		free(c->st[i].buf);
		free(c->st[i].pids.slot);
		free(c->st[i].cgs);
		blk_fsev_inos_release(&c->st[i].inos);
	}
	blk_ftrace_pages_free(c->pages);
	free(c->st);
	free(c->devnos);
	free(c);
}
