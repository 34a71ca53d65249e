// SPDX-License-Identifier: GPL-2.0
/*
 * The print queue (printq.h): a ring of batches handed from the caller to one worker thread
 * under a mutex, so that everything the worker reads was written before the hand-over.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blk/printq.h"

#define PQ_NBATCH 8
#define PQ_LINES 256
#define PQ_ARENA (16 * 1024)
/*
 * Either side, once asleep, is woken only when PQ_WAKE batches are ready for it (or at a
 * sync): each wake-up then serves several batches, not one (waking per batch cost as much
 * CPU time as the rendering of a tenth of the lines).
 */
#define PQ_WAKE 4

enum pq_kind { PQ_EVENT, PQ_TEXT };

/*
 * A queued line: what its rendering reads of the event and of its context, 112 bytes (the
 * two structs whole took 168); the payloads, and the wall clock of a context that has one
 * (for %z), are in the batch's arena.
 */
struct pq_line {
	uint64_t time, sector, action, elapsed;
	const char *act, *comm;
	const struct blk_format *f;
	uint32_t sequence, bytes, pid, device, ev_cpu;
	int cpu;
	uint32_t cg_ino, cg_gen;
	uint32_t pdu_off; /* the event's payload, or the text (PQ_TEXT, len bytes) */
	uint32_t pc_off; /* the PC payload (has_pc): its own copy, or the event's */
	uint32_t wall_off; /* the wall clock (have_wall) */
	uint32_t len; /* PQ_TEXT: the text's length; else the PC payload's */
	uint16_t error, pdu_len;
	uint8_t version, kind, has_pc, have_wall; /* have_wall: | PQ_CGPATH | PQ_ORIGIN */
};

/* a cgroup path (%G): its pointer is in the arena just before the event's payload */
#define PQ_CGPATH 2
/* an origin (%o %O %f %F): its struct is in the arena just before that (or the payload) */
#define PQ_ORIGIN 4

/* the wall clock of a context, as kept in the arena */
struct pq_wall {
	int64_t sec;
	long nsec;
};

_Static_assert(sizeof(struct pq_line) == 112, "a queued line is 112 bytes");

struct pq_batch {
	struct pq_line lines[PQ_LINES];
	unsigned int n;
	unsigned char *arena;
	size_t used, cap;
};

/*
 * The two counters are atomic, so that a batch changes hands without a lock; the lock and
 * the conditions serve only to sleep. A side that goes to sleep first says so (worker_waits,
 * caller_waits), then looks at the counter again; the other side first moves the counter,
 * then looks at the flag: one of the two sees the other (sequentially consistent atomics),
 * so no wake-up is lost.
 */
struct blk_printq {
	struct blk_output *out;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work; /* the worker waits for batches (or the stop) */
	pthread_cond_t done; /* the caller waits for free batches (or all done) */
	_Atomic uint64_t filled, rendered; /* batches handed over, and rendered */
	atomic_int worker_waits, caller_waits;
	atomic_int err; /* the first write error the worker saw (positive errno) */
	/* under lock */
	int stop;
	unsigned int caller_need; /* the caller sleeps until at most this many are unrendered */
	/* the caller's */
	int seen_err;
	struct pq_batch *cur; /* the batch being filled */
	struct pq_batch b[PQ_NBATCH];
};

static void render(struct blk_printq *q, const struct pq_batch *b)
{
	struct blk_strbuf *sb = blk_output_sb(q->out);
	int err = 0;

	for (unsigned int i = 0; i < b->n; i++) {
		const struct pq_line *l = &b->lines[i];
		struct blk_fmt_origin origin;
		struct blk_event ev;
		struct blk_fmt_ctx c;

		if (l->kind == PQ_TEXT) {
			blk_strbuf_add(sb, b->arena + l->pdu_off, l->len);
		} else {
			ev.time = l->time;
			ev.sector = l->sector;
			ev.action = l->action;
			ev.offset = 0;
			ev.sequence = l->sequence;
			ev.bytes = l->bytes;
			ev.pid = l->pid;
			ev.device = l->device;
			ev.cpu = l->ev_cpu;
			ev.error = l->error;
			ev.pdu_len = l->pdu_len;
			ev.version = l->version;
			ev.pdu = b->arena + l->pdu_off;
			c.act = l->act;
			c.comm = l->comm;
			c.cpu = l->cpu;
			c.elapsed = l->elapsed;
			c.pc_pdu = NULL;
			c.pc_pdu_len = 0;
			if (l->has_pc) {
				c.pc_pdu = b->arena + l->pc_off;
				c.pc_pdu_len = l->len;
			}
			c.cg_ino = l->cg_ino;
			c.cg_gen = l->cg_gen;
			c.cg_path = NULL;
			if (l->have_wall & PQ_CGPATH)
				memcpy(&c.cg_path, b->arena + l->pdu_off - sizeof(c.cg_path),
				       sizeof(c.cg_path));
			c.origin = NULL;
			if (l->have_wall & PQ_ORIGIN) {
				size_t at = l->pdu_off - sizeof(origin) -
					    (l->have_wall & PQ_CGPATH ? sizeof(c.cg_path) : 0);

				memcpy(&origin, b->arena + at, sizeof(origin));
				c.origin = &origin;
			}
			c.have_wall = l->have_wall & 1;
			c.wall_sec = 0;
			c.wall_nsec = 0;
			if (l->have_wall & 1) {
				struct pq_wall w;

				memcpy(&w, b->arena + l->wall_off, sizeof(w));
				c.wall_sec = w.sec;
				c.wall_nsec = w.nsec;
			}
			if (l->f)
				blk_format_render(l->f, &ev, &c, sb);
			else
				blk_format_default(&ev, &c, sb);
		}
		if (!err)
			err = blk_output_check(q->out);
	}
	if (err) {
		int none = 0;

		atomic_compare_exchange_strong(&q->err, &none, -err);
	}
}

static void *worker(void *arg)
{
	struct blk_printq *q = arg;
	uint64_t r = 0; /* the worker's own count: q->rendered */

	for (;;) {
		uint64_t f = atomic_load(&q->filled);

		if (f == r) {
			int stop;

			pthread_mutex_lock(&q->lock);
			atomic_store(&q->worker_waits, 1);
			while ((f = atomic_load(&q->filled)) == r && !q->stop)
				pthread_cond_wait(&q->work, &q->lock);
			atomic_store(&q->worker_waits, 0);
			stop = f == r;
			pthread_mutex_unlock(&q->lock);
			if (stop)
				break;
		}
		render(q, &q->b[r % PQ_NBATCH]);
		atomic_store(&q->rendered, ++r);
		if (atomic_load(&q->caller_waits)) {
			pthread_mutex_lock(&q->lock);
			if (atomic_load(&q->filled) - r <= q->caller_need)
				pthread_cond_signal(&q->done);
			pthread_mutex_unlock(&q->lock);
		}
	}
	return NULL;
}

struct blk_printq *blk_printq_new(struct blk_output *out)
{
	struct blk_printq *q = calloc(1, sizeof(*q));
	sigset_t all, old;
	int e;

	if (!q)
		return NULL;
	q->out = out;
	q->cur = &q->b[0];
	for (int i = 0; i < PQ_NBATCH; i++) {
		q->b[i].arena = malloc(PQ_ARENA);
		q->b[i].cap = PQ_ARENA;
		if (!q->b[i].arena) {
			e = ENOMEM;
			goto fail;
		}
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	/* signals stay with the caller's thread, whose handlers expect them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&q->thread, NULL, worker, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		pthread_cond_destroy(&q->done);
		pthread_cond_destroy(&q->work);
		pthread_mutex_destroy(&q->lock);
		goto fail;
	}
	return q;
fail:
	for (int i = 0; i < PQ_NBATCH; i++)
		free(q->b[i].arena);
	free(q);
	errno = e;
	return NULL;
}

/* Hand the caller's batch to the worker and wait for the next one to be free. */
static int submit(struct blk_printq *q, int wait_all)
{
	uint64_t f = atomic_load(&q->filled);
	uint64_t limit = wait_all ? 0 : PQ_NBATCH - 1; /* unrendered batches we may go on with */

	if (q->b[f % PQ_NBATCH].n)
		atomic_store(&q->filled, ++f);
	if (atomic_load(&q->worker_waits) && f != atomic_load(&q->rendered) &&
	    (wait_all || f - atomic_load(&q->rendered) >= PQ_WAKE)) {
		pthread_mutex_lock(&q->lock);
		pthread_cond_signal(&q->work);
		pthread_mutex_unlock(&q->lock);
	}
	if (f - atomic_load(&q->rendered) > limit) {
		pthread_mutex_lock(&q->lock);
		q->caller_need = wait_all ? 0 : PQ_NBATCH - PQ_WAKE;
		atomic_store(&q->caller_waits, 1);
		while (f - atomic_load(&q->rendered) > q->caller_need)
			pthread_cond_wait(&q->done, &q->lock);
		atomic_store(&q->caller_waits, 0);
		pthread_mutex_unlock(&q->lock);
	}
	q->seen_err = atomic_load(&q->err);
	q->cur = &q->b[f % PQ_NBATCH];
	q->cur->n = 0;
	q->cur->used = 0;
	return -q->seen_err;
}

/* Room for @n more arena bytes in the caller's batch (handed over first if full). */
static struct pq_batch *room(struct blk_printq *q, size_t n)
{
	struct pq_batch *b = q->cur;

	if (q->seen_err)
		return NULL;
	if (b->n == PQ_LINES || b->cap - b->used < n) {
		if (b->n && submit(q, 0))
			return NULL;
		b = q->cur;
		if (b->cap < n) {
			/* a payload larger than the arena (up to 64 KiB): grow it once */
			unsigned char *na = realloc(b->arena, n);

			if (!na) {
				q->seen_err = ENOMEM;
				return NULL;
			}
			b->arena = na;
			b->cap = n;
		}
	}
	return b;
}

static uint32_t put(struct pq_batch *b, const void *p, size_t n)
{
	uint32_t off = (uint32_t)b->used;

	if (n)
		memcpy(b->arena + b->used, p, n);
	b->used += n;
	return off;
}

/*
 * The event and its context, a field at a time, each with a load of its own size: the
 * caller has just stored most of them one by one (the context, the rebased time), and a
 * struct copy's wide loads would wait for those stores to reach the cache. The fields of the
 * two are taken in turn, which keeps the compiler from joining them into wide loads again.
 */
static void copy_line(struct pq_line *l, const struct blk_event *ev, const struct blk_fmt_ctx *c)
{
	l->time = ev->time;
	l->act = c->act;
	l->sector = ev->sector;
	l->comm = c->comm;
	l->action = ev->action;
	l->cpu = c->cpu;
	l->sequence = ev->sequence;
	l->elapsed = c->elapsed;
	l->bytes = ev->bytes;
	l->cg_ino = c->cg_ino;
	l->pid = ev->pid;
	l->cg_gen = c->cg_gen;
	l->device = ev->device;
	l->have_wall = (uint8_t) !!c->have_wall;
	l->ev_cpu = ev->cpu;
	l->error = ev->error;
	l->pdu_len = ev->pdu_len;
	l->version = ev->version;
}

int blk_printq_event(struct blk_printq *q, const struct blk_format *f, const struct blk_event *ev,
		     const struct blk_fmt_ctx *c)
{
	int share_pc = c->pc_pdu == ev->pdu && c->pc_pdu_len <= ev->pdu_len;
	size_t need = ev->pdu_len + (c->pc_pdu && !share_pc ? c->pc_pdu_len : 0) +
		      (c->have_wall ? sizeof(struct pq_wall) : 0) +
		      (c->cg_path ? sizeof(c->cg_path) : 0) + (c->origin ? sizeof(*c->origin) : 0);
	struct pq_batch *b = q->cur;
	struct pq_line *l;

	if (b->n == PQ_LINES || b->cap - b->used < need || q->seen_err) {
		b = room(q, need);
		if (!b)
			return -q->seen_err;
	}
	l = &b->lines[b->n++];
	l->kind = PQ_EVENT;
	copy_line(l, ev, c);
	l->f = f;
	if (c->origin) {
		put(b, c->origin, sizeof(*c->origin));
		l->have_wall |= PQ_ORIGIN;
	}
	if (c->cg_path) {
		put(b, &c->cg_path, sizeof(c->cg_path));
		l->have_wall |= PQ_CGPATH;
	}
	l->pdu_off = put(b, ev->pdu, ev->pdu_len);
	l->has_pc = c->pc_pdu != NULL;
	l->len = c->pc_pdu ? c->pc_pdu_len : 0;
	if (c->pc_pdu)
		l->pc_off = share_pc ? l->pdu_off : put(b, c->pc_pdu, c->pc_pdu_len);
	if (c->have_wall) {
		struct pq_wall w = {c->wall_sec, c->wall_nsec};

		l->wall_off = put(b, &w, sizeof(w));
	}
	return 0;
}

int blk_printq_text(struct blk_printq *q, const char *s, size_t n)
{
	struct pq_batch *b = room(q, n);
	struct pq_line *l;

	if (!b)
		return -q->seen_err;
	l = &b->lines[b->n++];
	l->kind = PQ_TEXT;
	l->pdu_off = put(b, s, n);
	l->len = (uint32_t)n;
	return 0;
}

int blk_printq_sync(struct blk_printq *q)
{
	return submit(q, 1);
}

void blk_printq_free(struct blk_printq *q)
{
	if (!q)
		return;
	blk_printq_sync(q);
	pthread_mutex_lock(&q->lock);
	q->stop = 1;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	for (int i = 0; i < PQ_NBATCH; i++)
		free(q->b[i].arena);
	free(q);
}
