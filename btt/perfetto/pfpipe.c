// SPDX-License-Identifier: GPL-2.0
/*
 * The drawing on a second thread (see pfpipe.h). A call becomes a command in the chunk
 * being filled: a header (its kind, its size, a device or I/O number, a time) and what
 * else the call needs. A full chunk goes to the thread, which hands its commands to
 * pfsort.c in order and gives the chunk back; the caller waits only when all PFPIPE_CHUNKS are taken.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/output.h"
#include "blk-perfetto/perfetto.h"
#include "common.h"
#include "model/alloc.h"
#include "model/clock.h"
#include "perfetto/pfpipe.h"

/*
 * 256 KiB: each chunk handed over may cost a wake-up of the drawing's thread (it is often
 * waiting), and a wake-up across CPUs is dear in a VM: with 64 KiB chunks, 15% of the
 * caller's thread's samples were in them (perf, large-perf, with the drawing left out).
 * 256 KiB: the export ~8% faster; 1 MiB gained no more for 3 MiB more memory (with a
 * wake-up per chunk, see PFPIPE_WAKE_AT).
 */
#define CHUNK_SIZE (256 * 1024)

/*
 * A sleeping side is woken only when half the chunks wait for it (full ones for the
 * drawing, spare ones for the caller), or at the end: each side then runs through several
 * chunks per wake-up instead of taking turns chunk by chunk (a futex wake and a sleep on
 * each side per chunk, dear in a VM).
 */
#define PFPIPE_WAKE_AT (PFPIPE_CHUNKS / 2)

enum cmd_kind { C_START, C_DEVICE, C_REC, C_QUEUED, C_RUN, C_MARK, C_FLOW, C_DRAIN, C_BFLOWS };

struct cmd {
	uint32_t kind, size; /* size: of the whole command, a multiple of 8 */
	uint32_t id; /* C_RUN, C_FLOW, C_BFLOWS: the I/O's slot */
	uint32_t x; /* C_FLOW: the slot's generation; C_BFLOWS: the number of flows */
	uint64_t ts; /* C_REC, C_QUEUED: the newest time read; C_MARK: the watermark;
		      * C_FLOW: the wait's end */
};

struct cmd_start {
	struct cmd c;
	struct blk_perfetto_opts o;
};

struct cmd_device {
	struct cmd c;
	uint32_t device;
	char name[BTT_LABEL_LEN];
};

struct cmd_rec {
	struct cmd c;
	struct pf_rec r;
};

struct cmd_queued {
	struct cmd c;
	struct pf_rec r;
	const struct btt_proc *proc;
	uint64_t flow_in;
	uint32_t pid, dev;
};

struct cmd_run {
	struct cmd c;
	struct pf_run run;
};

struct cmd_flow {
	struct cmd c;
	struct pf_wait *w;
};

struct cmd_bflows {
	struct cmd c;
	uint64_t *flows;
};

struct chunk {
	size_t len;
	unsigned char buf[CHUNK_SIZE];
};

struct pfpipe {
	/* the caller's side */
	struct blk_output *out;
	struct chunk *cur;
	int threaded, may_thread;
	pthread_t thread;
	/* between the two, under mu */
	pthread_mutex_t mu;
	pthread_cond_t full_cv; /* a sleeping drawing: PFPIPE_WAKE_AT chunks are full, or stop */
	pthread_cond_t spare_cv; /* a sleeping caller: PFPIPE_WAKE_AT chunks are spare */
	int draw_sleeps, caller_sleeps;
	struct chunk *full[PFPIPE_CHUNKS]; /* to draw, in order: a ring */
	unsigned int head, nfull;
	struct chunk *spare[PFPIPE_CHUNKS];
	unsigned int nspare, made;
	int stop;
	int err; /* the drawing's first error, copied */
	uint32_t *freed; /* slots the drawing freed, for the caller */
	size_t nfreed, afreed;
	struct pfsort_stats st; /* the drawing's, once it is done */
	/* the drawing's side */
	struct pfdraw *d;
	struct pfsort *s;
	int derr;
};

/* ---- the drawing's side ---- */

static void note_err(struct pfpipe *pp, int ret)
{
	if (ret && !pp->derr) {
		pp->derr = ret;
		if (pp->threaded)
			pthread_mutex_lock(&pp->mu);
		pp->err = ret;
		if (pp->threaded)
			pthread_mutex_unlock(&pp->mu);
	}
}

static void run_cmd(struct pfpipe *pp, const struct cmd *c)
{
	int ret = 0;

	switch (c->kind) {
	case C_START:
		if (!pp->derr)
			ret = pfdraw_start(pp->d, &((const struct cmd_start *)c)->o);
		break;
	case C_DEVICE: {
		const struct cmd_device *cd = (const struct cmd_device *)c;
		struct btt_dev dev = {.device = cd->device, .idx = c->id};

		memcpy(dev.name, cd->name, sizeof(dev.name));
		if (!pp->derr)
			ret = pfdraw_device(pp->d, &dev);
		break;
	}
	/* the records go on after an error: pfsort.h frees what they own */
	case C_REC:
		pfsort_push(pp->s, &((const struct cmd_rec *)c)->r, c->ts);
		break;
	case C_QUEUED: {
		const struct cmd_queued *cq = (const struct cmd_queued *)c;
		struct pf_io io = {
			.proc = cq->proc, .flow_in = cq->flow_in, .pid = cq->pid, .dev = cq->dev};

		pfsort_queued(pp->s, &cq->r, &io, c->ts);
		break;
	}
	case C_RUN:
		pfsort_run(pp->s, c->id, &((const struct cmd_run *)c)->run);
		break;
	case C_MARK:
		pfsort_mark(pp->s, c->ts);
		break;
	case C_FLOW:
		pfsort_flow(pp->s, c->id, c->x, c->ts, ((const struct cmd_flow *)c)->w);
		break;
	case C_DRAIN:
		pfsort_drain(pp->s);
		break;
	case C_BFLOWS:
		pfsort_bflows(pp->s, c->id, ((const struct cmd_bflows *)c)->flows, c->x);
		break;
	}
	note_err(pp, ret);
	note_err(pp, pfsort_error(pp->s));
}

static void run_chunk(struct pfpipe *pp, struct chunk *ch)
{
	for (size_t at = 0; at < ch->len;) {
		const struct cmd *c = (const struct cmd *)(ch->buf + at);

		run_cmd(pp, c);
		at += c->size;
	}
	ch->len = 0;
}

/* the slots the drawing freed go where the caller takes them (under mu when threaded) */
static void publish_freed(struct pfpipe *pp)
{
	size_t n;
	const uint32_t *v = pfsort_freed(pp->s, &n);

	if (!n)
		return;
	pp->freed = array_grow(pp->freed, &pp->afreed, pp->nfreed + n - 1, sizeof(*pp->freed));
	memcpy(pp->freed + pp->nfreed, v, n * sizeof(*v));
	pp->nfreed += n;
	pfsort_freed_clear(pp->s);
}

static void *draw_thread(void *arg)
{
	struct pfpipe *pp = arg;

	pthread_mutex_lock(&pp->mu);
	for (;;) {
		struct chunk *ch;

		while (!pp->nfull && !pp->stop) {
			pp->draw_sleeps = 1;
			pthread_cond_wait(&pp->full_cv, &pp->mu);
			pp->draw_sleeps = 0;
		}
		if (!pp->nfull)
			break;
		ch = pp->full[pp->head];
		pthread_mutex_unlock(&pp->mu);
		run_chunk(pp, ch);
		pthread_mutex_lock(&pp->mu);
		publish_freed(pp);
		pp->head = (pp->head + 1) % PFPIPE_CHUNKS;
		pp->nfull--;
		pp->spare[pp->nspare++] = ch;
		if (pp->caller_sleeps && (pp->nspare >= PFPIPE_WAKE_AT || !pp->nfull))
			pthread_cond_signal(&pp->spare_cv);
	}
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

/* ---- the caller's side ---- */

struct pfpipe *pfpipe_new(struct blk_output *out)
{
	struct pfpipe *pp = xcalloc(1, sizeof(*pp));

	pp->out = out;
	pp->d = pfdraw_new(out);
	pp->s = pfsort_new(pp->d);
	pp->cur = xmalloc(sizeof(*pp->cur));
	pp->cur->len = 0;
	pp->made = 1;
	pp->may_thread = 1;
	pthread_mutex_init(&pp->mu, NULL);
	pthread_cond_init(&pp->full_cv, NULL);
	pthread_cond_init(&pp->spare_cv, NULL);
	return pp;
}

/*
 * The drawing's thread, made when the first chunk is full (a small trace is drawn at the
 * end, on the caller's thread, and makes none); it writes (and compresses) what it encodes
 * itself. Nothing has been drawn yet: the output is this thread's to hand over. A third
 * thread for the file won nothing on two CPUs (large-perf, medians of 21 interleaved
 * rounds, 2026-12-07: 1.17 s with it, 1.12 s without; to .gz, 7 rounds: 1.88 s, 2.02 s).
 */
static void start_threads(struct pfpipe *pp)
{
	sigset_t all, old;

	pp->may_thread = 0;
	/* signals stay with the caller's thread, whose handlers expect them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pp->threaded = pthread_create(&pp->thread, NULL, draw_thread, pp) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* the chunk filled goes to the drawing (@last: the end); a spare one (or a new one) is
 * filled next */
static void hand_over(struct pfpipe *pp, int last)
{
	if (!pp->threaded && pp->may_thread && !last)
		start_threads(pp);
	if (!pp->threaded) {
		run_chunk(pp, pp->cur);
		publish_freed(pp);
		return;
	}
	pthread_mutex_lock(&pp->mu);
	pp->full[(pp->head + pp->nfull++) % PFPIPE_CHUNKS] = pp->cur;
	if (pp->draw_sleeps && (pp->nfull >= PFPIPE_WAKE_AT || last))
		pthread_cond_signal(&pp->full_cv);
	if (!pp->nspare && pp->made < PFPIPE_CHUNKS) {
		pp->made++;
		pthread_mutex_unlock(&pp->mu);
		pp->cur = xmalloc(sizeof(*pp->cur));
		pp->cur->len = 0;
		return;
	}
	while (!pp->nspare) {
		pp->caller_sleeps = 1;
		pthread_cond_wait(&pp->spare_cv, &pp->mu);
		pp->caller_sleeps = 0;
	}
	pp->cur = pp->spare[--pp->nspare];
	pthread_mutex_unlock(&pp->mu);
}

/* room for a command of @size bytes of @kind at @ts, for @id: its header filled */
static void *put(struct pfpipe *pp, uint32_t kind, size_t size, uint32_t id, uint64_t ts)
{
	struct cmd *c;

	size = (size + 7) & ~(size_t)7;
	if (CHUNK_SIZE - pp->cur->len < size)
		hand_over(pp, 0);
	c = (struct cmd *)(pp->cur->buf + pp->cur->len);
	pp->cur->len += size;
	c->kind = kind;
	c->size = (uint32_t)size;
	c->id = id;
	c->ts = ts;
	return c;
}

void pfpipe_start(struct pfpipe *pp, const struct blk_perfetto_opts *o)
{
	struct cmd_start *c = put(pp, C_START, sizeof(*c), 0, 0);

	c->o = *o;
}

void pfpipe_begin(struct pfpipe *pp, uint64_t first_ts, struct btt_clock *clock)
{
	struct blk_perfetto_opts o = {.flags = BLK_PERFETTO_VARINT_FLOWS, .start_ns = first_ts};
	int64_t sec;
	long nsec;

	if (clock && btt_clock_base(clock, &sec, &nsec) != BLK_WALL_NONE && sec >= 0) {
		/* the wall clock of time 0, which the writer relates to start_ns */
		o.has_wall = 1;
		o.wall_ts = 0;
		o.wall_sec = sec;
		o.wall_nsec = nsec;
	}
	pfpipe_start(pp, &o);
}

void pfpipe_device(struct pfpipe *pp, const struct btt_dev *dev)
{
	struct cmd_device *c = put(pp, C_DEVICE, sizeof(*c), dev->idx, 0);

	c->device = dev->device;
	snprintf(c->name, sizeof(c->name), "%s", devs_out_name(dev));
}

void pfpipe_rec(struct pfpipe *pp, const struct pf_rec *r, uint64_t now)
{
	struct cmd_rec *c = put(pp, C_REC, sizeof(*c), 0, now);

	c->r = *r;
}

void pfpipe_queued(struct pfpipe *pp, const struct pf_rec *r, const struct pf_io *io, uint64_t now)
{
	struct cmd_queued *c = put(pp, C_QUEUED, sizeof(*c), 0, now);

	c->r = *r;
	c->proc = io->proc;
	c->flow_in = io->flow_in;
	c->pid = io->pid;
	c->dev = io->dev;
}

void pfpipe_bflows(struct pfpipe *pp, uint32_t slot, uint64_t *flows, unsigned int n)
{
	struct cmd_bflows *c = put(pp, C_BFLOWS, sizeof(*c), slot, 0);

	c->c.x = n;
	c->flows = flows;
}

struct pf_run *pfpipe_run(struct pfpipe *pp, uint32_t slot)
{
	return &((struct cmd_run *)put(pp, C_RUN, sizeof(struct cmd_run), slot, 0))->run;
}

void pfpipe_mark(struct pfpipe *pp, uint64_t w)
{
	put(pp, C_MARK, sizeof(struct cmd), 0, w);
}

void pfpipe_flow(struct pfpipe *pp, uint32_t slot, uint32_t gen, uint64_t end, struct pf_wait *w)
{
	struct cmd_flow *c = put(pp, C_FLOW, sizeof(*c), slot, end);

	c->c.x = gen;
	c->w = w;
}

void pfpipe_drain(struct pfpipe *pp)
{
	put(pp, C_DRAIN, sizeof(struct cmd), 0, 0);
}

void pfpipe_flush(struct pfpipe *pp)
{
	if (pp->cur->len)
		hand_over(pp, 1);
}

size_t pfpipe_take_freed(struct pfpipe *pp, uint32_t *v, size_t max)
{
	size_t n;

	if (pp->threaded)
		pthread_mutex_lock(&pp->mu);
	n = pp->nfreed < max ? pp->nfreed : max;
	pp->nfreed -= n;
	if (n)
		memcpy(v, pp->freed + pp->nfreed, n * sizeof(*v));
	if (pp->threaded)
		pthread_mutex_unlock(&pp->mu);
	return n;
}

int pfpipe_error(struct pfpipe *pp)
{
	int e;

	if (!pp->threaded)
		return pp->err;
	pthread_mutex_lock(&pp->mu);
	e = pp->err;
	pthread_mutex_unlock(&pp->mu);
	return e;
}

int pfpipe_finish(struct pfpipe *pp, struct pfsort_stats *st)
{
	int ret;

	if (!pp)
		return 0;
	pfpipe_flush(pp);
	if (pp->threaded) {
		pthread_mutex_lock(&pp->mu);
		pp->stop = 1;
		pthread_cond_signal(&pp->full_cv);
		pthread_mutex_unlock(&pp->mu);
		pthread_join(pp->thread, NULL);
	}
	/* the thread is gone: its side is this side's now */
	if (st)
		pfsort_stats(pp->s, st);
	pfsort_free(pp->s);
	if (pp->d && pfdraw_started(pp->d))
		note_err(pp, pfdraw_flush(pp->d));
	ret = pfdraw_free(pp->d);
	if (!ret)
		ret = pp->derr;
	else if (pp->derr)
		ret = pp->derr;
	free(pp->cur);
	for (unsigned int i = 0; i < pp->nspare; i++)
		free(pp->spare[i]);
	free(pp->freed);
	pthread_cond_destroy(&pp->full_cv);
	pthread_cond_destroy(&pp->spare_cv);
	pthread_mutex_destroy(&pp->mu);
	free(pp);
	return ret;
}
