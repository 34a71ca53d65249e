// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/acct.h"
#include "blk/log.h"

#include "acct-int.h"

struct blk_acct *blk_acct_new(const struct blk_acct_opts *o)
{
	struct blk_acct *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->o = *o;
	return a;
}

static void free_tracks(struct blk_acct_dev *d)
{
	for (size_t i = 0; i < d->ntrack_buckets; i++) {
		struct track *t = d->tracks[i], *n;

		for (; t; t = n) {
			n = t->next;
			free(t);
		}
	}
	free(d->tracks);
}

void blk_acct_free(struct blk_acct *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; i < a->ndevs; i++) {
		free_tracks(a->devs[i]);
		for (unsigned int c = 0; c < a->devs[i]->nchunks; c++)
			free(a->devs[i]->cpus[c]);
		free(a->devs[i]->cpus);
		free(a->devs[i]->name);
		free(a->devs[i]);
	}
	for (size_t i = 0; i < a->nprocs; i++)
		free(a->procs[i]);
	free(a->procs);
	free(a->proc_idx);
	free(a->devs);
	free(a->comms);
	while (a->comm_blocks) {
		struct comm_block *b = a->comm_blocks;

		a->comm_blocks = b->next;
		free(b);
	}
	free(a);
}

struct blk_acct_dev *blk_acct_dev(struct blk_acct *a, uint32_t devno, const char *name)
{
	struct blk_acct_dev *d, **nd;

	for (unsigned int i = 0; i < a->ndevs; i++) {
		d = a->devs[i];
		if (name ? (d->name && !strcmp(d->name, name)) : (!d->name && d->devno == devno))
			return d;
	}
	nd = realloc(a->devs, (a->ndevs + 1) * sizeof(*nd));
	if (!nd)
		return NULL;
	a->devs = nd;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->devno = devno;
	d->last_cpu = -1;
	if (name && !(d->name = strdup(name))) {
		free(d);
		return NULL;
	}
	a->devs[a->ndevs++] = d;
	return d;
}

unsigned int blk_acct_ndevs(const struct blk_acct *a)
{
	return a->ndevs;
}

struct blk_acct_dev *blk_acct_dev_at(struct blk_acct *a, unsigned int i)
{
	return i < a->ndevs ? a->devs[i] : NULL;
}

uint32_t blk_acct_dev_devno(const struct blk_acct_dev *d)
{
	return d->devno;
}

void blk_acct_dev_set_devno(struct blk_acct_dev *d, uint32_t devno)
{
	d->devno = devno;
}

uint64_t blk_acct_dev_events(const struct blk_acct_dev *d)
{
	return d->events;
}

uint64_t blk_acct_bad_actions(const struct blk_acct *a, uint32_t *first)
{
	*first = a->first_bad;
	return a->bad_actions;
}

/* ---- pid -> name ---- */

static size_t hash32(uint32_t v)
{
	return (size_t)(v * 2654435761u);
}

static struct comm_ent *comm_find(struct blk_acct *a, uint32_t pid)
{
	size_t mask, i;

	if (!a->comm_cap)
		return NULL;
	mask = a->comm_cap - 1;
	for (i = hash32(pid) & mask; a->comms[i]; i = (i + 1) & mask)
		if (a->comms[i]->pid == pid)
			return a->comms[i];
	return NULL;
}

static struct comm_ent *comm_add(struct blk_acct *a, uint32_t pid, const char *comm, size_t len)
{
	struct comm_ent *e = comm_find(a, pid);
	size_t mask, i;

	if (e)
		return e;
	if ((a->ncomm + 1) * 2 > a->comm_cap) {
		size_t nc = a->comm_cap ? a->comm_cap * 2 : 256;
		struct comm_ent **n = calloc(nc, sizeof(*n)), **old = a->comms;
		size_t oc = a->comm_cap;

		if (!n)
			return NULL;
		a->comms = n;
		a->comm_cap = nc;
		for (size_t k = 0; k < oc; k++) {
			if (!old[k])
				continue;
			for (i = hash32(old[k]->pid) & (nc - 1); n[i]; i = (i + 1) & (nc - 1))
				;
			n[i] = old[k];
		}
		free(old);
	}
	if (a->ncomm % COMM_BLOCK == 0) {
		struct comm_block *b = malloc(sizeof(*b));

		if (!b)
			return NULL;
		b->next = a->comm_blocks;
		a->comm_blocks = b;
	}
	mask = a->comm_cap - 1;
	for (i = hash32(pid) & mask; a->comms[i]; i = (i + 1) & mask)
		;
	e = &a->comm_blocks->e[a->ncomm % COMM_BLOCK];
	a->comms[i] = e;
	e->pid = pid;
	if (len > sizeof(e->comm) - 1)
		len = sizeof(e->comm) - 1;
	memcpy(e->comm, comm, len);
	e->comm[len] = '\0';
	e->comm[strnlen(e->comm, len)] = '\0';
	a->ncomm++;
	if (a->hooks.comm_added)
		a->hooks.comm_added(a->hooks.ctx, pid, e->comm);
	return e;
}

void blk_acct_set_comm(struct blk_acct *a, uint32_t pid, const char *comm, size_t len)
{
	comm_add(a, pid, comm, strnlen(comm, len));
}

const char *blk_acct_comm(struct blk_acct *a, uint32_t pid)
{
	struct comm_ent *e = comm_find(a, pid);

	return e ? e->comm : NULL;
}

/* ---- per-process ---- */

static size_t hash_str(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static size_t proc_hash(const struct blk_acct *a, const struct proc *p)
{
	return a->o.hash_by_name ? hash_str(p->comm) : hash32(p->pid);
}

static int proc_index_insert(struct blk_acct *a, size_t idx)
{
	size_t mask, i;

	if ((a->nprocs + 1) * 2 > a->proc_idx_cap) {
		size_t nc = a->proc_idx_cap ? a->proc_idx_cap * 2 : 64;
		size_t *n = malloc(nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t k = 0; k < nc; k++)
			n[k] = SIZE_MAX;
		free(a->proc_idx);
		a->proc_idx = n;
		a->proc_idx_cap = nc;
		for (size_t k = 0; k < a->nprocs; k++) {
			if (k == idx)
				continue;
			for (i = proc_hash(a, a->procs[k]) & (nc - 1); n[i] != SIZE_MAX;
			     i = (i + 1) & (nc - 1))
				;
			n[i] = k;
		}
	}
	mask = a->proc_idx_cap - 1;
	for (i = proc_hash(a, a->procs[idx]) & mask; a->proc_idx[i] != SIZE_MAX; i = (i + 1) & mask)
		;
	a->proc_idx[i] = idx;
	return 0;
}

static struct proc *proc_lookup(struct blk_acct *a, uint32_t pid, const char *name)
{
	size_t mask, i;

	if (!a->proc_idx_cap)
		return NULL;
	mask = a->proc_idx_cap - 1;
	i = (a->o.hash_by_name ? hash_str(name) : hash32(pid)) & mask;
	for (; a->proc_idx[i] != SIZE_MAX; i = (i + 1) & mask) {
		struct proc *p = a->procs[a->proc_idx[i]];

		if (a->o.hash_by_name ? !strcmp(p->comm, name) : p->pid == pid)
			return p;
	}
	return NULL;
}

/* The name used for @pid, registering "unknown" when it has none (as the classic tool). */
static const char *comm_or_unknown(struct blk_acct *a, uint32_t pid)
{
	struct comm_ent *e = comm_find(a, pid);

	if (!e)
		e = comm_add(a, pid, "unknown", 7);
	return e ? e->comm : "unknown";
}

/* Find a process without creating it. */
static struct proc *find_proc(struct blk_acct *a, uint32_t pid)
{
	struct proc *p;

	if (!a->o.hash_by_name)
		return proc_lookup(a, pid, NULL);
	{
		const char *n = blk_acct_comm(a, pid);

		if (!n)
			return NULL;
		p = proc_lookup(a, pid, n);
	}
	if (p && p->pid != pid)
		p->more_than_one = 1;
	return p;
}

static struct io_stats *proc_stats(struct blk_acct *a, uint32_t pid)
{
	struct proc *p = find_proc(a, pid);
	const char *name;

	if (p)
		return &p->ios;
	/* the classic tool allocates its block here, before naming an unknown pid */
	if (a->hooks.proc_missed)
		a->hooks.proc_missed(a->hooks.ctx);
	name = comm_or_unknown(a, pid);
	if (a->o.hash_by_name) {
		p = proc_lookup(a, pid, name);
		if (p) {
			if (p->pid != pid)
				p->more_than_one = 1;
			return &p->ios;
		}
	}
	if (a->nprocs == a->procs_cap) {
		size_t nc = a->procs_cap ? a->procs_cap * 2 : 64;
		struct proc **n = realloc(a->procs, nc * sizeof(*n));

		if (!n)
			return NULL;
		a->procs = n;
		a->procs_cap = nc;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", name);
	a->procs[a->nprocs] = p;
	if (proc_index_insert(a, a->nprocs)) {
		free(p);
		return NULL;
	}
	a->nprocs++;
	return &p->ios;
}

/* ---- request tracking (-t) ---- */

static size_t hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v;
}

static struct track **track_slot(struct blk_acct_dev *d, uint64_t sector)
{
	struct track **pp;

	if (!d->ntrack_buckets)
		return NULL;
	pp = &d->tracks[hash64(sector) & (d->ntrack_buckets - 1)];
	while (*pp && (*pp)->sector != sector)
		pp = &(*pp)->next;
	return pp;
}

static struct track *track_find(struct blk_acct_dev *d, uint64_t sector)
{
	struct track **pp = track_slot(d, sector);

	return pp ? *pp : NULL;
}

static void track_unlink(struct blk_acct_dev *d, struct track *t)
{
	struct track **pp = track_slot(d, t->sector);

	if (pp && *pp == t) {
		*pp = t->next;
		d->ntracks--;
	}
}

/* Insert @t; on a duplicate sector report the alias and return -EEXIST (t not inserted). */
static int track_insert(struct blk_acct_dev *d, struct track *t)
{
	struct track **pp;

	if (d->ntracks + 1 > d->ntrack_buckets) {
		size_t nb = d->ntrack_buckets ? d->ntrack_buckets * 2 : 1024;
		struct track **n = calloc(nb, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < d->ntrack_buckets; i++) {
			struct track *x = d->tracks[i], *nx;

			for (; x; x = nx) {
				nx = x->next;
				x->next = n[hash64(x->sector) & (nb - 1)];
				n[hash64(x->sector) & (nb - 1)] = x;
			}
		}
		free(d->tracks);
		d->tracks = n;
		d->ntrack_buckets = nb;
	}
	pp = track_slot(d, t->sector);
	if (*pp) {
		blk_log("sector alias (%llu) on device %d,%d!", (unsigned long long)t->sector,
			BLK_MAJOR(d->devno), BLK_MINOR(d->devno));
		return -EEXIST;
	}
	t->next = NULL;
	*pp = t;
	d->ntracks++;
	return 0;
}

void blk_acct_set_hooks(struct blk_acct *a, const struct blk_acct_hooks *h)
{
	if (h)
		a->hooks = *h;
	else
		memset(&a->hooks, 0, sizeof(a->hooks));
}

static struct track *track_get(struct blk_acct *a, struct blk_acct_dev *d, uint32_t pid,
			       uint64_t sector)
{
	struct track *t = track_find(d, sector);
	struct blk_acct_track_init m = {0};

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	/* the classic tool's entry is malloc()ed: its times are what the memory held */
	if (a->hooks.track_new)
		a->hooks.track_new(a->hooks.ctx, &m);
	t->tag = m.tag;
	t->allocation_time = m.allocation_time;
	t->queue_time = m.queue_time;
	t->dispatch_time = m.dispatch_time;
	comm_or_unknown(a, pid);
	t->pid = pid;
	t->sector = sector;
	if (track_insert(d, t)) {
		free(t);
		return NULL;
	}
	return t;
}

static struct proc *wait_proc(struct blk_acct *a, const struct track *t)
{
	return a->o.per_process ? find_proc(a, t->pid) : NULL;
}

static uint64_t track_insert_time(struct blk_acct *a, struct blk_acct_dev *d,
				  const struct blk_event *ev)
{
	struct track *t = track_get(a, d, ev->pid, ev->sector);
	struct proc *p;
	uint64_t e;

	if (!t)
		return BLK_NO_ELAPSED;
	t->queue_time = ev->time;
	if (!t->allocation_time)
		return BLK_NO_ELAPSED;
	e = t->queue_time - t->allocation_time;
	p = wait_proc(a, t);
	if (p && e > p->longest_allocation_wait[blk_event_is_write(ev)])
		p->longest_allocation_wait[blk_event_is_write(ev)] = e;
	return e;
}

static void track_miss(struct blk_acct *a, struct blk_acct_dev *d, const char *what,
		       uint64_t sector)
{
	if (a->o.verbose)
		blk_log("%s not found for (%d,%d): %llu", what, BLK_MAJOR(d->devno),
			BLK_MINOR(d->devno), (unsigned long long)sector);
}

static uint64_t track_issue_time(struct blk_acct *a, struct blk_acct_dev *d,
				 const struct blk_event *ev)
{
	struct track *t;
	struct proc *p;
	uint64_t e;

	if (!blk_event_has_cat(ev, BLK_TC_FS))
		return BLK_NO_ELAPSED;
	t = track_find(d, ev->sector);
	if (!t) {
		track_miss(a, d, "issue", ev->sector);
		return BLK_NO_ELAPSED;
	}
	t->dispatch_time = ev->time;
	e = t->dispatch_time - t->queue_time;
	p = wait_proc(a, t);
	if (p && e > p->longest_dispatch_wait[blk_event_is_write(ev)])
		p->longest_dispatch_wait[blk_event_is_write(ev)] = e;
	return e;
}

static uint64_t track_complete_time(struct blk_acct *a, struct blk_acct_dev *d,
				    const struct blk_event *ev)
{
	struct track *t = track_find(d, ev->sector);
	struct proc *p;
	uint64_t e;

	if (!t) {
		track_miss(a, d, "complete", ev->sector);
		return BLK_NO_ELAPSED;
	}
	e = ev->time - t->dispatch_time;
	p = wait_proc(a, t);
	if (p && e > p->longest_completion_wait[blk_event_is_write(ev)])
		p->longest_completion_wait[blk_event_is_write(ev)] = e;
	track_unlink(d, t);
	{
		uint64_t times[4] = {t->allocation_time, t->queue_time, t->dispatch_time, ev->time};

		if (a->hooks.track_freed)
			a->hooks.track_freed(a->hooks.ctx, t->tag, t->sector, times);
	}
	free(t);
	return e;
}

static void track_frontmerge(struct blk_acct *a, struct blk_acct_dev *d, const struct blk_event *ev)
{
	uint64_t s = ev->sector + blk_event_sectors(ev);
	struct track *t = track_find(d, s);

	if (!t) {
		track_miss(a, d, "merge", s);
		return;
	}
	track_unlink(d, t);
	t->sector -= blk_event_sectors(ev);
	if (track_insert(d, t))
		free(t);
}

/* ---- counting ---- */

/* The counters of @cpu (< BLK_MAX_CPUS, checked by the reader), created on first use. */
static struct acct_cpu *get_cpu(struct blk_acct_dev *d, int cpu)
{
	unsigned int c, k;

	if (cpu == d->last_cpu)
		return d->last_pc;
	if (cpu < 0 || cpu >= BLK_MAX_CPUS)
		cpu = 0;
	c = (unsigned int)cpu / CPU_CHUNK;
	if (c >= d->nchunks) {
		struct acct_cpu **n = realloc(d->cpus, (c + 1) * sizeof(*n));

		if (!n)
			abort();
		for (k = d->nchunks; k <= c; k++)
			n[k] = NULL;
		d->cpus = n;
		d->nchunks = c + 1;
	}
	if (!d->cpus[c]) {
		d->cpus[c] = calloc(CPU_CHUNK, sizeof(**d->cpus));
		if (!d->cpus[c])
			abort();
	}
	d->last_cpu = cpu;
	d->last_pc = &d->cpus[c][(unsigned int)cpu % CPU_CHUNK];
	return d->last_pc;
}

void blk_acct_seen(struct blk_acct_dev *d, int cpu)
{
	get_cpu(d, cpu)->nelems++;
}

void blk_acct_last_time(struct blk_acct_dev *d, uint64_t t)
{
	d->last_time = t;
}

void blk_acct_count(struct blk_acct_dev *d, uint64_t t)
{
	if (!d->events)
		d->first_time = t;
	d->events++;
}

void blk_acct_set_skips(struct blk_acct_dev *d, uint64_t ranges, uint64_t missing)
{
	d->skips = ranges;
	d->seq_skips = missing;
}

#define KB(ev) ((uint64_t)((ev)->bytes >> 10))
#define BR(ev) ((uint64_t)((ev)->bytes & 1023))

static void add_queue(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->qwrites++;
		s->qwrite_kb += KB(ev);
		s->qwrite_b += BR(ev);
	} else {
		s->qreads++;
		s->qread_kb += KB(ev);
		s->qread_b += BR(ev);
	}
}

static void add_merge(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->mwrites++;
		s->mwrite_kb += KB(ev);
		s->mwrite_b += BR(ev);
	} else {
		s->mreads++;
		s->mread_kb += KB(ev);
		s->mread_b += BR(ev);
	}
}

static void add_issue(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->iwrites++;
		s->iwrite_kb += KB(ev);
		s->iwrite_b += BR(ev);
	} else {
		s->ireads++;
		s->iread_kb += KB(ev);
		s->iread_b += BR(ev);
	}
}

static void add_requeue(struct io_stats *s, const struct blk_event *ev, int w)
{
	/* a requeue takes its size back from the dispatch counters (and may underflow them) */
	if (w) {
		s->wrqueue++;
		s->iwrite_kb -= KB(ev);
		s->iwrite_b -= BR(ev);
	} else {
		s->rrqueue++;
		s->iread_kb -= KB(ev);
		s->iread_b -= BR(ev);
	}
}

static void add_complete(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->cwrites++;
		s->cwrite_kb += KB(ev);
		s->cwrite_b += BR(ev);
	} else {
		s->creads++;
		s->cread_kb += KB(ev);
		s->cread_b += BR(ev);
	}
}

static void add_unplug(struct io_stats *s, const struct blk_event *ev, int timer)
{
	(void)ev;
	if (timer)
		s->timer_unplugs++;
	else
		s->io_unplugs++;
}

static void add_pc_queue(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->qwrites_pc++;
		s->qwrite_kb_pc += KB(ev);
		s->qwrite_b_pc += BR(ev);
	} else {
		s->qreads_pc++;
		s->qread_kb += KB(ev); /* sic: the classic tool adds PC reads to the FS KiB */
		s->qread_b_pc += BR(ev);
	}
}

static void add_pc_issue(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->iwrites_pc++;
		s->iwrite_kb_pc += KB(ev);
		s->iwrite_b_pc += BR(ev);
	} else {
		s->ireads_pc++;
		s->iread_kb_pc += KB(ev);
		s->iread_b_pc += BR(ev);
	}
}

static void add_pc_requeue(struct io_stats *s, const struct blk_event *ev, int w)
{
	if (w) {
		s->wrqueue_pc++;
		s->iwrite_kb_pc -= KB(ev);
		s->iwrite_b_pc -= BR(ev);
	} else {
		s->rrqueue_pc++;
		s->iread_kb_pc -= KB(ev);
		s->iread_b_pc -= BR(ev);
	}
}

static void add_pc_complete(struct io_stats *s, const struct blk_event *ev, int w)
{
	(void)ev;
	if (w)
		s->cwrites_pc++;
	else
		s->creads_pc++;
}

typedef void (*add_fn)(struct io_stats *, const struct blk_event *, int);

static void account(struct blk_acct *a, struct acct_cpu *pc, add_fn fn, const struct blk_event *ev,
		    int w)
{
	fn(&pc->ios, ev, w);
	if (a->o.per_process) {
		struct io_stats *ps = proc_stats(a, ev->pid);

		if (ps)
			fn(ps, ev, w);
	}
}

static void depth_inc(struct blk_acct_dev *d, int w)
{
	if (++d->cur_depth[w] > d->max_depth[w])
		d->max_depth[w] = d->cur_depth[w];
}

static void depth_dec(struct blk_acct_dev *d, int w)
{
	if (d->cur_depth[w])
		d->cur_depth[w]--;
}

static int bad_action(struct blk_acct *a, const struct blk_event *ev)
{
	if (!a->bad_actions++)
		a->first_bad = blk_event_action32(ev);
	return -EINVAL;
}

static int event_pc(struct blk_acct *a, struct blk_acct_dev *d, struct acct_cpu *pc,
		    const struct blk_event *ev, struct blk_fmt_ctx *c)
{
	int w = blk_event_is_write(ev);

	switch (blk_event_code(ev)) {
	case BLK_TA_QUEUE:
		c->act = "Q";
		account(a, pc, add_pc_queue, ev, w);
		break;
	case BLK_TA_GETRQ:
		c->act = "G";
		break;
	case BLK_TA_SLEEPRQ:
		c->act = "S";
		break;
	case BLK_TA_REQUEUE:
		depth_dec(d, w);
		account(a, pc, add_pc_requeue, ev, w);
		c->act = "R";
		break;
	case BLK_TA_ISSUE:
		account(a, pc, add_pc_issue, ev, w);
		depth_inc(d, w);
		c->act = "D";
		c->pc_pdu = ev->pdu;
		c->pc_pdu_len = ev->pdu_len;
		break;
	case BLK_TA_COMPLETE:
		depth_dec(d, w);
		c->act = "C";
		c->pc_pdu = ev->pdu;
		c->pc_pdu_len = ev->pdu_len;
		account(a, pc, add_pc_complete, ev, w);
		break;
	case BLK_TA_INSERT:
		c->act = "I";
		c->pc_pdu = ev->pdu;
		c->pc_pdu_len = ev->pdu_len;
		break;
	default:
		return bad_action(a, ev);
	}
	return 1;
}

int blk_acct_event(struct blk_acct *a, struct blk_acct_dev *d, int cpu, const struct blk_event *ev,
		   struct blk_fmt_ctx *c)
{
	struct acct_cpu *pc = get_cpu(d, cpu);
	int w = blk_event_is_write(ev);
	int ret = 1;
	int track = a->o.track_ios;

	c->cpu = cpu;
	c->elapsed = BLK_NO_ELAPSED;
	c->pc_pdu = NULL;
	c->pc_pdu_len = 0;
	if (blk_event_has_cat(ev, BLK_TC_PC)) {
		ret = event_pc(a, d, pc, ev, c);
		goto out;
	}
	switch (blk_event_code(ev)) {
	case BLK_TA_QUEUE:
		/*
		 * On md/dm the interesting span is Q..C: note Q as dispatch. The classic tool
		 * knows a device's number only in pipe mode (in file mode it stays 0 there).
		 */
		if (track && !d->name && (BLK_MAJOR(d->devno) == 253 || BLK_MAJOR(d->devno) == 9)) {
			struct track *t = track_get(a, d, ev->pid, ev->sector);

			if (t)
				t->dispatch_time = ev->time;
		}
		account(a, pc, add_queue, ev, w);
		c->act = "Q";
		break;
	case BLK_TA_INSERT:
		c->act = "I";
		if (track)
			c->elapsed = track_insert_time(a, d, ev);
		break;
	case BLK_TA_BACKMERGE:
		account(a, pc, add_merge, ev, w);
		c->act = "M";
		break;
	case BLK_TA_FRONTMERGE:
		account(a, pc, add_merge, ev, w);
		if (track)
			track_frontmerge(a, d, ev);
		c->act = "F";
		break;
	case BLK_TA_GETRQ:
		if (track) {
			struct track *t = track_get(a, d, ev->pid, ev->sector);

			if (t)
				t->allocation_time = ev->time;
		}
		c->act = "G";
		break;
	case BLK_TA_SLEEPRQ:
		c->act = "S";
		break;
	case BLK_TA_REQUEUE:
		depth_dec(d, w);
		account(a, pc, add_requeue, ev, w);
		c->act = "R";
		break;
	case BLK_TA_ISSUE:
		account(a, pc, add_issue, ev, w);
		depth_inc(d, w);
		c->act = "D";
		if (track)
			c->elapsed = track_issue_time(a, d, ev);
		break;
	case BLK_TA_COMPLETE:
		depth_dec(d, w);
		account(a, pc, add_complete, ev, w);
		c->act = "C";
		if (track)
			c->elapsed = track_complete_time(a, d, ev);
		break;
	case BLK_TA_PLUG:
		c->act = "P";
		break;
	case BLK_TA_UNPLUG_IO:
		account(a, pc, add_unplug, ev, 0);
		c->act = "U";
		break;
	case BLK_TA_UNPLUG_TIMER:
		account(a, pc, add_unplug, ev, 1);
		c->act = "UT";
		break;
	case BLK_TA_SPLIT:
		c->act = "X";
		break;
	case BLK_TA_BOUNCE:
		c->act = "B";
		break;
	case BLK_TA_REMAP:
		c->act = "A";
		break;
	case BLK_TA_DRV_DATA:
		ret = 0;
		break;
	case BLK_TA_ZONE_PLUG:
		if (ev->version != BLK_IO_TRACE2_VERSION)
			return bad_action(a, ev);
		c->act = "ZP";
		break;
	case BLK_TA_ZONE_UNPLUG:
		if (ev->version != BLK_IO_TRACE2_VERSION)
			return bad_action(a, ev);
		account(a, pc, add_unplug, ev, 0);
		c->act = "ZU";
		break;
	default:
		ret = bad_action(a, ev);
		break;
	}
out:
	if (ret > 0)
		c->comm = blk_acct_comm(a, ev->pid);
	return ret;
}
