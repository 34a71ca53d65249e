// SPDX-License-Identifier: GPL-2.0
/*
 * The drawing on a second thread (see pfpipe.h). A call becomes a command in the chunk
 * being filled: a header (its kind, its size, a device or I/O number, a time) and what
 * else the call needs. A full chunk goes to the thread, which draws its commands in order
 * and gives the chunk back; the caller waits only when all PFPIPE_CHUNKS are taken.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "common.h"
#include "pfpipe.h"
#include "blk/output.h"
#include "blk/perfetto.h"

/*
 * 256 KiB: each chunk handed over may cost a wake-up of the drawing's thread (it is often
 * waiting), and a wake-up across CPUs is dear in a VM: with 64 KiB chunks, 15% of the
 * caller's thread's samples were in them (perf, large-perf, with the drawing left out).
 * 256 KiB: the export ~8% faster; 1 MiB gained no more for 3 MiB more memory.
 */
#define CHUNK_SIZE (256 * 1024)

enum cmd_kind {
	C_START,
	C_DEVICE,
	C_COUNTER,
	C_RATE,
	C_QUEUED,
	C_BEGIN,
	C_STAGE,
	C_END,
	C_INSTANT,
	C_WAIT_BEGIN,
	C_WAIT_END
};

struct cmd {
	uint32_t kind, size; /* size: of the whole command, a multiple of 8 */
	uint32_t id; /* a device or an I/O */
	uint32_t x; /* C_COUNTER, C_RATE: the counter; C_STAGE: first */
	uint64_t ts;
	uint64_t v; /* a counter's value (a double's bits), a flow, a value */
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

struct cmd_queued {
	struct cmd c;
	const struct btt_proc *proc;
	uint64_t flow_in;
	uint32_t pid;
};

struct cmd_end {
	struct cmd c;
	int64_t queued;
};

struct cmd_begin {
	struct cmd c;
	struct pf_io io;
};

struct cmd_ptr {
	struct cmd c;
	const char *name, *arg;
	void *p;
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
	pthread_cond_t cv;
	struct chunk *full[PFPIPE_CHUNKS]; /* to draw, in order: a ring */
	unsigned int head, nfull;
	struct chunk *spare[PFPIPE_CHUNKS];
	unsigned int nspare, made;
	int stop;
	int err; /* the drawing's first error, copied */
	/* the drawing's side */
	struct pfdraw *d;
	struct pf_io *io; /* by I/O number */
	size_t aio;
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
	const struct cmd_ptr *cp = (const struct cmd_ptr *)c;
	struct pf_io *io;
	double v;
	int ret = 0;

	if (pp->derr) {
		/* nothing more is drawn after an error; what the commands own is freed */
		if (c->kind == C_INSTANT || c->kind == C_WAIT_END)
			free(cp->p);
		return;
	}
	switch (c->kind) {
	case C_START:
		ret = pfdraw_start(pp->d, &((const struct cmd_start *)c)->o);
		break;
	case C_DEVICE: {
		const struct cmd_device *cd = (const struct cmd_device *)c;
		struct btt_dev dev = {.device = cd->device, .idx = c->id};

		memcpy(dev.name, cd->name, sizeof(dev.name));
		ret = pfdraw_device(pp->d, &dev);
		break;
	}
	case C_COUNTER:
		ret = pfdraw_counter(pp->d, c->id, (enum pf_ctr)c->x, c->ts, (int64_t)c->v);
		break;
	case C_RATE:
		memcpy(&v, &c->v, sizeof(v));
		ret = pfdraw_rate(pp->d, c->id, (enum pf_ctr)c->x, c->ts, v);
		break;
	case C_QUEUED: {
		const struct cmd_queued *cq = (const struct cmd_queued *)c;
		struct pf_io q = {.proc = cq->proc, .flow_in = cq->flow_in, .pid = cq->pid};

		ret = pfdraw_counter(pp->d, c->x, PF_QUEUED, c->ts, (int64_t)c->v);
		if (!ret)
			ret = pfdraw_queued(pp->d, &q, c->ts);
		break;
	}
	case C_BEGIN:
		pp->io = array_grow(pp->io, &pp->aio, c->id, sizeof(*pp->io));
		io = &pp->io[c->id];
		*io = ((const struct cmd_begin *)c)->io;
		ret = pfdraw_begin(pp->d, io, c->ts);
		break;
	case C_STAGE:
		ret = pfdraw_stage(pp->d, &pp->io[c->id], c->ts, cp->name, (int)c->x);
		break;
	case C_END:
		io = &pp->io[c->id];
		ret = pfdraw_counter(pp->d, io->dev, PF_QUEUED, c->ts,
				     ((const struct cmd_end *)c)->queued);
		if (!ret)
			ret = pfdraw_end(pp->d, io, c->ts, c->v);
		break;
	case C_INSTANT:
		ret = pfdraw_instant(pp->d, c->id, c->ts, cp->name, cp->arg, cp->p, c->v);
		free(cp->p);
		break;
	case C_WAIT_BEGIN:
		ret = pfdraw_wait_begin(pp->d, cp->p, c->ts);
		break;
	case C_WAIT_END:
		ret = pfdraw_wait_end(pp->d, cp->p, c->ts);
		free(cp->p);
		break;
	}
	note_err(pp, ret);
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

static void *draw_thread(void *arg)
{
	struct pfpipe *pp = arg;

	pthread_mutex_lock(&pp->mu);
	for (;;) {
		struct chunk *ch;

		while (!pp->nfull && !pp->stop)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (!pp->nfull)
			break;
		ch = pp->full[pp->head];
		pthread_mutex_unlock(&pp->mu);
		run_chunk(pp, ch);
		pthread_mutex_lock(&pp->mu);
		pp->head = (pp->head + 1) % PFPIPE_CHUNKS;
		pp->nfull--;
		pp->spare[pp->nspare++] = ch;
		pthread_cond_broadcast(&pp->cv);
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
	pp->cur = xmalloc(sizeof(*pp->cur));
	pp->cur->len = 0;
	pp->made = 1;
	pp->may_thread = 1;
	pthread_mutex_init(&pp->mu, NULL);
	pthread_cond_init(&pp->cv, NULL);
	return pp;
}

/*
 * The threads, made when the first chunk is full (a small trace is drawn at the end, on
 * the caller's thread, and makes none): the drawing's, and the file's (which writes and
 * compresses what the drawing encodes). Nothing has been drawn yet: the output is this
 * thread's to hand over.
 */
static void start_threads(struct pfpipe *pp)
{
	sigset_t all, old;

	pp->may_thread = 0;
	blk_output_set_async(pp->out);
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
		return;
	}
	pthread_mutex_lock(&pp->mu);
	pp->full[(pp->head + pp->nfull++) % PFPIPE_CHUNKS] = pp->cur;
	pthread_cond_broadcast(&pp->cv);
	if (!pp->nspare && pp->made < PFPIPE_CHUNKS) {
		pp->made++;
		pthread_mutex_unlock(&pp->mu);
		pp->cur = xmalloc(sizeof(*pp->cur));
		pp->cur->len = 0;
		return;
	}
	while (!pp->nspare)
		pthread_cond_wait(&pp->cv, &pp->mu);
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

void pfpipe_device(struct pfpipe *pp, const struct btt_dev *dev)
{
	struct cmd_device *c = put(pp, C_DEVICE, sizeof(*c), dev->idx, 0);

	c->device = dev->device;
	memcpy(c->name, dev->name, sizeof(c->name));
}

void pfpipe_counter(struct pfpipe *pp, uint32_t dev, enum pf_ctr ctr, uint64_t ts, int64_t v)
{
	struct cmd *c = put(pp, C_COUNTER, sizeof(*c), dev, ts);

	c->x = ctr;
	c->v = (uint64_t)v;
}

void pfpipe_rate(struct pfpipe *pp, uint32_t dev, enum pf_ctr ctr, uint64_t ts, double v)
{
	struct cmd *c = put(pp, C_RATE, sizeof(*c), dev, ts);

	c->x = ctr;
	memcpy(&c->v, &v, sizeof(v));
}

void pfpipe_queued(struct pfpipe *pp, const struct pf_io *io, uint64_t ts, int64_t queued)
{
	struct cmd_queued *c = put(pp, C_QUEUED, sizeof(*c), 0, ts);

	c->c.x = io->dev;
	c->c.v = (uint64_t)queued;
	c->proc = io->proc;
	c->flow_in = io->flow_in;
	c->pid = io->pid;
}

void pfpipe_begin(struct pfpipe *pp, uint32_t id, const struct pf_io *io, uint64_t ts)
{
	struct cmd_begin *c = put(pp, C_BEGIN, sizeof(*c), id, ts);

	c->io = *io;
}

void pfpipe_stage(struct pfpipe *pp, uint32_t id, uint64_t ts, const char *name, int first)
{
	struct cmd_ptr *c = put(pp, C_STAGE, sizeof(*c), id, ts);

	c->c.x = (uint32_t)first;
	c->name = name;
}

void pfpipe_end(struct pfpipe *pp, uint32_t id, uint64_t ts, int64_t queued, uint64_t flow)
{
	struct cmd_end *c = put(pp, C_END, sizeof(*c), id, ts);

	c->queued = queued;
	c->c.v = flow;
}

void pfpipe_instant(struct pfpipe *pp, uint32_t dev, uint64_t ts, const char *name, const char *arg,
		    char *text, uint64_t value)
{
	struct cmd_ptr *c = put(pp, C_INSTANT, sizeof(*c), dev, ts);

	c->name = name;
	c->arg = arg;
	c->p = text;
	c->c.v = value;
}

void pfpipe_wait_begin(struct pfpipe *pp, const struct pf_wait *w, uint64_t ts)
{
	struct cmd_ptr *c = put(pp, C_WAIT_BEGIN, sizeof(*c), 0, ts);

	c->p = (void *)(uintptr_t)w;
}

void pfpipe_wait_end(struct pfpipe *pp, struct pf_wait *w, uint64_t ts)
{
	struct cmd_ptr *c = put(pp, C_WAIT_END, sizeof(*c), 0, ts);

	c->p = w;
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

int pfpipe_finish(struct pfpipe *pp)
{
	int ret;

	if (!pp)
		return 0;
	if (pp->cur->len)
		hand_over(pp, 1);
	if (pp->threaded) {
		pthread_mutex_lock(&pp->mu);
		pp->stop = 1;
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
		pthread_join(pp->thread, NULL);
	}
	/* the thread is gone: its side is this side's now */
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
	free(pp->io);
	pthread_cond_destroy(&pp->cv);
	pthread_mutex_destroy(&pp->mu);
	free(pp);
	return ret;
}
