// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace's submissions: each kind of process has its submission path (random reads and
 * writes, a database, writeback, readahead, the journal with its flushes, metadata reads,
 * passthrough commands, discards), which queues bios, merges or splits them, plugs, gets
 * requests and dispatches them; the run picks a process, lets it submit, and moves on.
 */
#include <stdio.h>
#include <string.h>

#include "gen.h"

#define MAX_BATCH 10		/* requests built by one submission */
#define MAX_RQ_SECTORS 2560	/* larger bios are split (X) */
#define DISK_SECTORS (1ull << 31)

struct gen_batch {
	struct gen_req rq[MAX_BATCH];
	unsigned int n;
	int plugged;
};

/* A submission-path record: first let due completions happen. */
static void sub(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
		uint32_t bytes)
{
	model_drain(g, c->t);
	rec_io(g, c, code, cats, sector, bytes, 0, NULL, 0);
}

static void plug(struct gen *g, struct gen_ctx *c, struct gen_batch *b)
{
	model_drain(g, c->t);
	rec_io(g, c, BLK_TA_PLUG, TC(READ), 0, 0, 0, NULL, 0);
	b->plugged = 1;
}

/* Queue a bio: remap it first if it was submitted to the partition. */
static void queue_bio(struct gen *g, struct gen_ctx *c, uint64_t cats, uint64_t sector,
		      uint32_t bytes)
{
	const struct gen_dev *d = &g->devs[c->dev];

	if (c->proc < NPROC && procs[c->proc].part) {
		unsigned char pdu[sizeof(struct blk_io_trace_remap)];
		uint64_t from = sector - PART_START;

		for (int i = 0; i < 4; i++) {
			pdu[i] = (unsigned char)(d->part >> (24 - 8 * i));
			pdu[4 + i] = (unsigned char)(d->dev >> (24 - 8 * i));
		}
		for (int i = 0; i < 8; i++)
			pdu[8 + i] = (unsigned char)(from >> (56 - 8 * i));
		model_drain(g, c->t);
		rec_io(g, c, BLK_TA_REMAP, cats, sector, bytes, 0, pdu, sizeof(pdu));
	}
	sub(g, c, BLK_TA_QUEUE, cats, sector, bytes);
}

/* Get a new request for the bio just queued. */
static struct gen_req *get_rq(struct gen *g, struct gen_ctx *c, struct gen_batch *b,
			      uint64_t cats, uint64_t sector, uint32_t bytes)
{
	struct gen_req *rq = &b->rq[b->n++];

	sub(g, c, BLK_TA_GETRQ, cats, sector, bytes);
	memset(rq, 0, sizeof(*rq));
	rq->sector = sector;
	rq->bytes = bytes;
	rq->cats = cats;
	rq->dev = (uint16_t)c->dev;
	rq->owner_cpu = (uint16_t)c->cpu;
	rq->owner = (uint8_t)c->proc;
	return rq;
}

/* Queue a bio and either merge it at the back of the last request or give it a new one. */
static void bio(struct gen *g, struct gen_ctx *c, struct gen_batch *b, uint64_t cats,
		uint64_t sector, uint32_t bytes, int may_merge)
{
	struct gen_req *last = b->n ? &b->rq[b->n - 1] : NULL;

	queue_bio(g, c, cats, sector, bytes);
	if (may_merge && last && last->cats == cats && last->sector + last->bytes / 512 == sector &&
	    (last->bytes + bytes) / 512 <= MAX_RQ_SECTORS && !one_in(&g->r, 6)) {
		sub(g, c, BLK_TA_BACKMERGE, cats, sector, bytes);
		last->bytes += bytes;
		return;
	}
	get_rq(g, c, b, cats, sector, bytes);
}

/* Unplug (if plugged), insert and issue every request of @b; @insert: show I records. */
static void dispatch(struct gen *g, struct gen_ctx *c, struct gen_batch *b, int insert)
{
	struct gen_ctx d = *c;

	if (b->plugged) {
		unsigned int code = one_in(&g->r, 10) ? BLK_TA_UNPLUG_TIMER : BLK_TA_UNPLUG_IO;

		model_drain(g, c->t);
		rec_io_u64(g, c, code, TC(READ), 0, 0, b->n);
		insert = 1;
	}
	for (unsigned int i = 0; insert && i < b->n; i++) {
		model_drain(g, c->t);
		rec_rq(g, c, BLK_TA_INSERT, &b->rq[i], rq_cats(&b->rq[i]), b->rq[i].sector,
		       b->rq[i].bytes, 0);
	}
	/* Sometimes kblockd issues them, a little later. */
	if (one_in(&g->r, 8)) {
		d.proc = PROC_KBLOCKD;
		d.t = c->t + rnd_range(&g->r, 5000, 200000);
		c = &d;
	}
	for (unsigned int i = 0; i < b->n; i++) {
		struct gen_req *rq = &b->rq[i];

		model_drain(g, c->t);
		if (g->done)
			return;
		rec_rq(g, c, BLK_TA_ISSUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		model_after_issue(g, rq, c->t, ST_COMPLETE);
	}
}

static uint64_t rand_sector(struct gen *g, int part, uint64_t align)
{
	uint64_t lo = part ? PART_START : 0;
	uint64_t s = rnd_range(&g->r, lo, DISK_SECTORS - 4096);

	return s / align * align;
}

static uint32_t small_size(struct gen *g)
{
	if (!one_in(&g->r, 8))
		return 4096;
	return (uint32_t)rnd_range(&g->r, 2, 32) * 4096;
}

static void submit_random(struct gen *g, struct gen_ctx *c, uint64_t cats)
{
	struct gen_batch b = { .n = 0 };
	unsigned int k = one_in(&g->r, 2) ? 1 : (unsigned int)rnd_range(&g->r, 2, 4);

	model_make_room(g, c, k);
	if (k > 1)
		plug(g, c, &b);
	for (unsigned int i = 0; i < k; i++)
		bio(g, c, &b, cats, rand_sector(g, procs[c->proc].part, 8), small_size(g), 0);
	/* A write plugs after getting its request and is issued directly at unplug. */
	if (k == 1 && (cats & TC(WRITE)) && one_in(&g->r, 2)) {
		model_drain(g, c->t);
		rec_io(g, c, BLK_TA_PLUG, TC(READ), 0, 0, 0, NULL, 0);
	}
	dispatch(g, c, &b, k == 1 && one_in(&g->r, 3));
}

static void submit_writeback(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats = TC(WRITE) | (one_in(&g->r, 3) ? TC(SYNC) : 0);
	uint64_t *cur = &g->devs[c->dev].cursor[c->proc];
	unsigned int k = (unsigned int)rnd_range(&g->r, 1, 6);

	model_make_room(g, c, MAX_BATCH);
	if (!*cur || one_in(&g->r, 50))
		*cur = rand_sector(g, 0, 2048);
	plug(g, c, &b);
	for (unsigned int i = 0; i < k && b.n < MAX_BATCH - 2; i++) {
		uint32_t sectors;

		if (one_in(&g->r, 15)) {
			/* A bio too big for one request: queued whole, split (X) in two. */
			uint64_t s = *cur;

			queue_bio(g, c, cats, s, 4096 * 512);
			model_drain(g, c->t);
			rec_io_u64(g, c, BLK_TA_SPLIT, cats, s, MAX_RQ_SECTORS * 512,
				   s + MAX_RQ_SECTORS);
			get_rq(g, c, &b, cats, s, MAX_RQ_SECTORS * 512);
			get_rq(g, c, &b, cats, s + MAX_RQ_SECTORS, (4096 - MAX_RQ_SECTORS) * 512);
			*cur += 4096;
			continue;
		}
		sectors = (uint32_t)rnd_range(&g->r, 1, 256) * 8;
		bio(g, c, &b, cats, *cur, sectors * 512, 1);
		*cur += sectors;
	}
	if (*cur > DISK_SECTORS - 8192)
		*cur = 0;
	dispatch(g, c, &b, 1);
}

static void submit_readahead(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats = TC(READ) | TC(AHEAD) | (one_in(&g->r, 20) ? TC(META) : 0);
	uint64_t *cur = &g->devs[c->dev].cursor[c->proc];
	unsigned int k = (unsigned int)rnd_range(&g->r, 1, 3);

	model_make_room(g, c, k);
	if (*cur < PART_START || one_in(&g->r, 30) || *cur > DISK_SECTORS - 8192)
		*cur = rand_sector(g, 1, 8);
	if (k > 1)
		plug(g, c, &b);
	for (unsigned int i = 0; i < k; i++) {
		uint32_t sectors = (uint32_t)rnd_range(&g->r, 4, 32) * 8;

		bio(g, c, &b, cats, *cur, sectors * 512, 1);
		*cur += sectors;
	}
	dispatch(g, c, &b, 1);
}

static void submit_journal(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats = TC(WRITE) | TC(SYNC) | TC(META);
	uint64_t *cur = &g->devs[c->dev].cursor[c->proc];
	unsigned int k = (unsigned int)rnd_range(&g->r, 1, 6);
	struct gen_req *rq;

	model_make_room(g, c, k + 1);
	if (*cur < PART_START || one_in(&g->r, 200))
		*cur = rand_sector(g, 1, 2048);
	plug(g, c, &b);
	for (unsigned int i = 0; i < k; i++) {
		uint32_t sectors = (uint32_t)rnd_range(&g->r, 1, 4) * 8;

		bio(g, c, &b, cats, *cur, sectors * 512, 1);
		*cur += sectors;
	}
	dispatch(g, c, &b, 1);
	if (!one_in(&g->r, 3) || g->done)
		return;
	/* The commit block: preflush, FUA write emulated with a postflush. */
	b.n = 0;
	cats |= TC(FLUSH) | TC(FUA);
	queue_bio(g, c, cats, *cur, 4096);
	rq = get_rq(g, c, &b, cats, *cur, 4096);
	*cur += 8;
	model_then(g, rq, ST_FL_PRE_ISSUE, c->t);
}

static void submit_db(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats;

	model_make_room(g, c, 1);
	if (one_in(&g->r, 3))
		cats = TC(WRITE) | TC(SYNC) | (one_in(&g->r, 10) ? TC(FUA) : 0);
	else
		cats = TC(READ) | (one_in(&g->r, 4) ? TC(SYNC) : 0);
	bio(g, c, &b, cats, rand_sector(g, 0, 16), 8192, 0);
	dispatch(g, c, &b, 1);
}

static void submit_meta(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };

	model_make_room(g, c, 1);
	bio(g, c, &b, TC(READ) | TC(META) | (one_in(&g->r, 2) ? TC(SYNC) : 0), rand_sector(g, 1, 8),
	    4096, 0);
	dispatch(g, c, &b, 1);
}

static void submit_discard(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint32_t sectors = (uint32_t)rnd_range(&g->r, 1, 32) * 2048;

	model_make_room(g, c, 1);
	bio(g, c, &b, TC(WRITE) | TC(DISCARD), rand_sector(g, 1, 2048), sectors * 512, 0);
	dispatch(g, c, &b, 1);
}

static void submit_pc(struct gen *g, struct gen_ctx *c)
{
	struct gen_req rq;
	unsigned int cdb = (unsigned int)rnd_range(&g->r, 1, NCDB - 1);

	model_make_room(g, c, 1);
	memset(&rq, 0, sizeof(rq));
	rq.cats = TC(READ);
	rq.cdb = (uint8_t)cdb;
	rq.bytes = cdbs[cdb].bytes;
	rq.dev = (uint16_t)c->dev;
	rq.owner_cpu = (uint16_t)c->cpu;
	rq.owner = (uint8_t)c->proc;
	model_drain(g, c->t);
	rec_rq(g, c, BLK_TA_INSERT, &rq, rq_cats(&rq), 0, rq.bytes, 0);
	model_drain(g, c->t);
	rec_rq(g, c, BLK_TA_ISSUE, &rq, rq_cats(&rq), 0, rq.bytes, 0);
	if (!g->done)
		model_after_issue(g, &rq, c->t, ST_COMPLETE);
}

static void message(struct gen *g, struct gen_ctx *c)
{
	static const char *const what[] = { "dispatch", "insert_request", "expire", "idle slice" };
	char msg[96];
	int n;

	n = snprintf(msg, sizeof(msg), "bfq%u%c %s: served %llu", proc_pid(c->proc, c->cpu),
		     one_in(&g->r, 2) ? 'S' : 'A', what[rnd_below(&g->r, 4)],
		     (unsigned long long)rnd_below(&g->r, 100000));
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = (int)strlen(msg);
	model_drain(g, c->t);
	rec_note(g, c, BLK_TN_MESSAGE, msg, (unsigned int)n);
}

static unsigned int pick_proc(struct gen *g)
{
	unsigned int total = 0;
	uint64_t x;

	for (unsigned int i = 0; i < NPROC; i++)
		total += procs[i].weight;
	x = rnd_below(&g->r, total);
	for (unsigned int i = 0; i < NPROC; i++) {
		if (x < procs[i].weight)
			return i;
		x -= procs[i].weight;
	}
	return 0;
}

static void submit(struct gen *g)
{
	struct gen_ctx c;

	c.proc = pick_proc(g);
	c.dev = (unsigned int)rnd_below(&g->r, g->o->devices);
	if (one_in(&g->r, 300))
		g->proc_cpu[c.proc] = (uint16_t)rnd_below(&g->r, g->o->cpus);
	c.cpu = g->proc_cpu[c.proc];
	c.t = g->next;
	if (one_in(&g->r, 400))
		message(g, &c);
	switch (procs[c.proc].kind) {
	case GK_RANDREAD:
		submit_random(g, &c, TC(READ));
		break;
	case GK_RANDWRITE:
		submit_random(g, &c, TC(WRITE) | TC(SYNC));
		break;
	case GK_DB:
		submit_db(g, &c);
		break;
	case GK_WRITEBACK:
		submit_writeback(g, &c);
		break;
	case GK_READAHEAD:
		submit_readahead(g, &c);
		break;
	case GK_JOURNAL:
		submit_journal(g, &c);
		break;
	case GK_META:
		submit_meta(g, &c);
		break;
	case GK_PC:
		submit_pc(g, &c);
		break;
	case GK_DISCARD:
		submit_discard(g, &c);
		break;
	}
	g->next = c.t + rnd_range(&g->r, 1000, 40000);
	if (one_in(&g->r, 2000))
		g->next += rnd_range(&g->r, 1000000, 50000000);	/* idle */
}

void gen_run(struct gen *g)
{
	uint64_t boot = rnd_range(&g->r, 5, 900) * NSEC + rnd_below(&g->r, NSEC);
	uint64_t wall = 1767225600ull + rnd_below(&g->r, 86400ull * 365);

	for (unsigned int i = 0; i < NPROC; i++)
		g->proc_cpu[i] = (uint16_t)(i % g->o->cpus);
	/* Tracing starts: the kernel notes the wall clock once per device, on one CPU. */
	for (unsigned int d = 0; d < g->o->devices && !g->done; d++) {
		struct gen_ctx c = { d, 0, PROC_IDLE, boot };
		uint32_t words[2] = { (uint32_t)wall, (uint32_t)rnd_below(&g->r, NSEC) };

		if (g->swap) {
			words[0] = __builtin_bswap32(words[0]);
			words[1] = __builtin_bswap32(words[1]);
		}
		rec_note(g, &c, BLK_TN_TIMESTAMP, words, sizeof(words));
	}
	g->next = g->clock + rnd_range(&g->r, 1000, 100000);
	while (!g->done)
		submit(g);
}
