// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace: write a synthetic, deterministic per-CPU block trace.
 *
 * The generator simulates a few processes doing I/O to one or more disks and writes what
 * blktrace would have recorded: per-CPU files NAME.blktrace.CPU (NAMEk per device when there
 * are several), or one chunk-interleaved stream on stdout with --pipe.
 *
 * Every record goes through one global clock, so time stamps strictly increase across all
 * files (and therefore per CPU). Requests in flight wait in a small heap keyed on the time of
 * their next step (issue, requeue, completion, flush sequence); its size is bounded by the
 * queue depth, so memory is constant whatever -n says.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk/event.h"
#include "blk/output.h"
#include "blk/trace.h"

#define MAX_CPUS 256
#define MAX_DEVS 64
#define MAX_STREAMS 1024
#define QDEPTH 32		/* requests in flight per device */
#define MAX_BATCH 10		/* requests built by one submission */
#define PDU_MAX 128
#define REC_MAX (sizeof(struct blk_io_trace2) + PDU_MAX)
#define CHUNK 4096		/* --pipe: bytes per CPU buffer before a read round */
#define NSEC 1000000000ull
#define MAX_RQ_SECTORS 2560	/* larger bios are split (X) */
#define PART_START 2048		/* first sector of partition 1 on every disk */
#define DISK_SECTORS (1ull << 31)

#define TC(c) ((uint64_t)BLK_TC_ACT(BLK_TC_##c))

struct gen_opts {
	uint64_t events;
	uint64_t seed;
	unsigned int cpus;
	unsigned int devices;
	const char *name;
	const char *dir;
	int big_endian;
	int v2;
	int pipe;
};

/* splitmix64: small, fast and the same everywhere (rand() is neither). */
struct rnd {
	uint64_t s;
};

enum gen_kind {
	GK_RANDREAD,
	GK_RANDWRITE,
	GK_DB,
	GK_WRITEBACK,
	GK_READAHEAD,
	GK_JOURNAL,
	GK_META,
	GK_PC,
	GK_DISCARD,
};

struct gen_proc {
	uint32_t pid;
	const char *comm;
	enum gen_kind kind;
	unsigned int weight;
	int part;		/* goes through partition 1, so every bio is remapped (A) */
};

static const struct gen_proc procs[] = {
	{ 2301, "fio", GK_RANDREAD, 300, 0 },
	{ 2302, "fio", GK_RANDWRITE, 250, 0 },
	{ 1187, "postgres", GK_DB, 120, 0 },
	{ 193, "kworker/u8:2", GK_WRITEBACK, 100, 0 },
	{ 3322, "tar", GK_READAHEAD, 80, 1 },
	{ 612, "jbd2/sda1-8", GK_JOURNAL, 60, 1 },
	{ 3401, "find", GK_META, 40, 1 },
	{ 5120, "smartctl", GK_PC, 4, 0 },
	{ 5201, "fstrim", GK_DISCARD, 2, 1 },
};
#define NPROC (sizeof(procs) / sizeof(procs[0]))
#define PROC_IDLE NPROC			/* swapper/N, pid 0: completions in interrupts */
#define PROC_KBLOCKD (NPROC + 1)	/* kworker/N:1H: asynchronous dispatch */
#define KBLOCKD_PID 20000

/* What happens to a request next. */
enum gen_step {
	ST_COMPLETE,
	ST_REQUEUE,
	ST_INSERT,
	ST_ISSUE,
	ST_FL_PRE_ISSUE,	/* preflush: D FN */
	ST_FL_PRE_DONE,		/* C FN */
	ST_FL_DATA_ISSUE,	/* the data, without F bits */
	ST_FL_DATA_DONE,
	ST_FL_POST_ISSUE,	/* postflush for FUA emulation */
	ST_FL_POST_DONE,
	ST_FL_END,		/* the original request completes with 0 bytes */
};

struct gen_req {
	uint64_t time;		/* of the next step */
	uint64_t order;		/* tie-break: heap order is total */
	uint64_t sector;
	uint64_t cats;		/* category bits of the request, without FS/PC */
	uint32_t bytes;
	uint16_t dev;
	uint16_t cpu;		/* CPU of the next step */
	uint16_t owner_cpu;
	uint16_t error;
	uint8_t proc;		/* process of the next step */
	uint8_t owner;		/* submitting process */
	uint8_t step;
	uint8_t cdb;		/* PC request: index into cdbs[], else 0 */
};

struct gen_dev {
	uint32_t dev;
	uint32_t part;
	uint64_t cursor[NPROC];	/* next sector of each sequential stream */
	unsigned int inflight;
};

struct gen_stream {
	struct blk_output *out;		/* per-CPU file, or NULL with --pipe */
	unsigned char *chunk;		/* --pipe: pending bytes of this CPU */
	size_t chunk_len;
	uint32_t seq;
	uint32_t seen;			/* processes that already have a TN_PROCESS here */
};

struct gen {
	const struct gen_opts *o;
	struct rnd r;
	struct gen_dev *devs;
	struct gen_stream *streams;	/* [dev * cpus + cpu] */
	struct gen_req *heap;
	size_t nheap;
	uint64_t order;
	uint64_t clock;			/* time of the last record */
	uint64_t next;			/* requested time of the next submission */
	uint64_t written;
	struct blk_output *pipe_out;
	uint16_t proc_cpu[NPROC];
	int swap;
	int done;
};

/* Passthrough commands (old kernels attach the CDB to every PC record). */
static const struct {
	unsigned char len;
	uint32_t bytes;
	unsigned char cdb[16];
} cdbs[] = {
	{ 0, 0, { 0 } },
	{ 6, 0, { 0x00 } },					/* TEST UNIT READY */
	{ 6, 96, { 0x12, 0x00, 0x00, 0x00, 0x60, 0x00 } },	/* INQUIRY */
	/* ATA PASS-THROUGH(16) SMART READ DATA */
	{ 16, 512, { 0x85, 0x08, 0x0e, 0x00, 0xd0, 0x00, 0x01, 0x00, 0x00, 0x00, 0x4f, 0x00,
		     0xc2, 0x00, 0xb0, 0x00 } },
	{ 10, 8, { 0x25 } },					/* READ CAPACITY(10) */
};
#define NCDB (sizeof(cdbs) / sizeof(cdbs[0]))

static __attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "gentrace: ");
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		exit(1);
	exit(1);
}

/* ---- random numbers ---- */

static uint64_t rnd_next(struct rnd *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t rnd_below(struct rnd *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd_next(r) * n) >> 64);
}

/* Uniform in [lo, hi]. */
static uint64_t rnd_range(struct rnd *r, uint64_t lo, uint64_t hi)
{
	return lo + rnd_below(r, hi - lo + 1);
}

/* True once in @n draws on average. */
static int one_in(struct rnd *r, uint64_t n)
{
	return rnd_below(r, n) == 0;
}

/* ---- the heap of requests in flight ---- */

static int req_before(const struct gen_req *a, const struct gen_req *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->order < b->order;
}

static void heap_push(struct gen *g, struct gen_req *rq)
{
	size_t i = g->nheap++;

	rq->order = g->order++;
	while (i) {
		size_t p = (i - 1) / 2;

		if (!req_before(rq, &g->heap[p]))
			break;
		g->heap[i] = g->heap[p];
		i = p;
	}
	g->heap[i] = *rq;
	g->devs[rq->dev].inflight++;
}

static void heap_pop(struct gen *g, struct gen_req *out)
{
	struct gen_req last;
	size_t i = 0;

	*out = g->heap[0];
	g->devs[out->dev].inflight--;
	last = g->heap[--g->nheap];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= g->nheap)
			break;
		if (c + 1 < g->nheap && req_before(&g->heap[c + 1], &g->heap[c]))
			c++;
		if (!req_before(&g->heap[c], &last))
			break;
		g->heap[i] = g->heap[c];
		i = c;
	}
	if (g->nheap)
		g->heap[i] = last;
}

/* ---- writing records ---- */

static void swap_header(unsigned char *buf, int v2)
{
	if (v2) {
		struct blk_io_trace2 t;

		memcpy(&t, buf, sizeof(t));
		t.magic = __builtin_bswap32(t.magic);
		t.sequence = __builtin_bswap32(t.sequence);
		t.time = __builtin_bswap64(t.time);
		t.sector = __builtin_bswap64(t.sector);
		t.bytes = __builtin_bswap32(t.bytes);
		t.pid = __builtin_bswap32(t.pid);
		t.action = __builtin_bswap64(t.action);
		t.device = __builtin_bswap32(t.device);
		t.cpu = __builtin_bswap32(t.cpu);
		t.error = __builtin_bswap16(t.error);
		t.pdu_len = __builtin_bswap16(t.pdu_len);
		memcpy(buf, &t, sizeof(t));
	} else {
		struct blk_io_trace t;

		memcpy(&t, buf, sizeof(t));
		t.magic = __builtin_bswap32(t.magic);
		t.sequence = __builtin_bswap32(t.sequence);
		t.time = __builtin_bswap64(t.time);
		t.sector = __builtin_bswap64(t.sector);
		t.bytes = __builtin_bswap32(t.bytes);
		t.action = __builtin_bswap32(t.action);
		t.pid = __builtin_bswap32(t.pid);
		t.device = __builtin_bswap32(t.device);
		t.cpu = __builtin_bswap32(t.cpu);
		t.error = __builtin_bswap16(t.error);
		t.pdu_len = __builtin_bswap16(t.pdu_len);
		memcpy(buf, &t, sizeof(t));
	}
}

static void check_output(struct blk_output *o, int ret)
{
	if (ret < 0)
		die("%s", blk_output_error(o));
}

/* --pipe: one read round of `blktrace -o -`: every CPU buffer, in device and CPU order. */
static void pipe_round(struct gen *g)
{
	size_t n = (size_t)g->o->devices * g->o->cpus;

	for (size_t i = 0; i < n; i++) {
		struct gen_stream *s = &g->streams[i];

		if (!s->chunk_len)
			continue;
		check_output(g->pipe_out, blk_output_write(g->pipe_out, s->chunk, s->chunk_len));
		s->chunk_len = 0;
	}
}

static void write_record(struct gen *g, struct gen_stream *s, const struct blk_event *ev)
{
	unsigned char buf[REC_MAX];
	size_t n;

	if (!g->swap && !g->o->pipe) {
		check_output(s->out, blk_output_event(s->out, ev));
		return;
	}
	n = blk_event_encode(ev, buf);
	if (g->swap)
		swap_header(buf, ev->version == BLK_IO_TRACE2_VERSION);
	if (!g->o->pipe) {
		check_output(s->out, blk_output_write(s->out, buf, n));
		return;
	}
	memcpy(s->chunk + s->chunk_len, buf, n);
	s->chunk_len += n;
	if (s->chunk_len >= CHUNK)
		pipe_round(g);
}

static uint32_t proc_pid(unsigned int proc, unsigned int cpu)
{
	if (proc < NPROC)
		return procs[proc].pid;
	return proc == PROC_IDLE ? 0 : KBLOCKD_PID + cpu;
}

static void proc_comm(unsigned int proc, unsigned int cpu, char comm[16])
{
	memset(comm, 0, 16);
	if (proc < NPROC)
		snprintf(comm, 16, "%s", procs[proc].comm);
	else if (proc == PROC_IDLE)
		snprintf(comm, 16, "swapper/%u", cpu);
	else
		snprintf(comm, 16, "kworker/%u:1H", cpu);
}

/*
 * Write @ev to stream (@dev, @cpu) on behalf of @proc. ev->time is the requested time; the
 * record gets the next free tick of the global clock and ev->time is updated. Header fields
 * the stream owns (version, sequence, device, cpu, pid) are filled in here.
 */
static void emit(struct gen *g, unsigned int dev, unsigned int cpu, unsigned int proc,
		 struct blk_event *ev)
{
	struct gen_stream *s = &g->streams[dev * g->o->cpus + cpu];
	int notify = blk_event_is_notify(ev);

	if (g->done)
		return;
	if (!notify && !(s->seen & (1u << proc))) {
		struct blk_event n;
		char comm[16];

		memset(&n, 0, sizeof(n));
		proc_comm(proc, cpu, comm);
		n.time = ev->time;
		n.action = BLK_TN_ACTION(BLK_TN_PROCESS);
		n.pdu = (const unsigned char *)comm;
		n.pdu_len = sizeof(comm);
		emit(g, dev, cpu, proc, &n);
		s->seen |= 1u << proc;
		if (g->done)
			return;
	}
	if (ev->time <= g->clock)
		ev->time = g->clock + 1;
	g->clock = ev->time;
	ev->version = g->o->v2 ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION;
	ev->sequence = notify ? 0 : ++s->seq;
	ev->device = g->devs[dev].dev;
	ev->cpu = cpu;
	ev->pid = proc_pid(proc, cpu);
	write_record(g, s, ev);
	if (++g->written >= g->o->events)
		g->done = 1;
}

static uint64_t code_cat(unsigned int code)
{
	switch (code) {
	case BLK_TA_REQUEUE:
		return TC(REQUEUE);
	case BLK_TA_ISSUE:
		return TC(ISSUE);
	case BLK_TA_COMPLETE:
		return TC(COMPLETE);
	case BLK_TA_SPLIT:
	case BLK_TA_BOUNCE:
		return 0;
	default:
		return TC(QUEUE);
	}
}

/* Who is doing something, where, and when it may happen next. */
struct gen_ctx {
	unsigned int dev;
	unsigned int cpu;
	unsigned int proc;
	uint64_t t;
};

/* A short pause between two records of the same code path. */
static uint64_t gap(struct gen *g)
{
	return rnd_range(&g->r, 150, one_in(&g->r, 8) ? 40000 : 4000);
}

/* Write one I/O record now (c->t) and move c->t a little past it. */
static void io(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
	       uint32_t bytes, uint16_t error, const void *pdu, unsigned int pdu_len)
{
	struct blk_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.time = c->t;
	ev.action = code | code_cat(code) | cats;
	ev.sector = sector;
	ev.bytes = bytes;
	ev.error = error;
	ev.pdu = pdu;
	ev.pdu_len = (uint16_t)pdu_len;
	emit(g, c->dev, c->cpu, c->proc, &ev);
	c->t = ev.time + gap(g);
}

static void io_u64(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats,
		   uint64_t sector, uint32_t bytes, uint64_t val)
{
	unsigned char pdu[8];

	for (int i = 0; i < 8; i++)
		pdu[i] = (unsigned char)(val >> (56 - 8 * i));
	io(g, c, code, cats, sector, bytes, 0, pdu, sizeof(pdu));
}

static void note(struct gen *g, struct gen_ctx *c, unsigned int code, const void *pdu,
		 unsigned int pdu_len)
{
	struct blk_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.time = c->t;
	ev.action = BLK_TN_ACTION(code);
	ev.pdu = pdu;
	ev.pdu_len = (uint16_t)pdu_len;
	emit(g, c->dev, c->cpu, c->proc, &ev);
	c->t = ev.time + gap(g);
}

/* Categories of a request record: file-system or passthrough. */
static uint64_t rq_cats(const struct gen_req *rq)
{
	return rq->cats | (rq->cdb ? TC(PC) : TC(FS));
}

static void rq_record(struct gen *g, struct gen_ctx *c, unsigned int code,
		      const struct gen_req *rq, uint64_t cats, uint64_t sector, uint32_t bytes,
		      uint16_t error)
{
	if (rq->cdb)
		io(g, c, code, cats, sector, bytes, error, cdbs[rq->cdb].cdb, cdbs[rq->cdb].len);
	else
		io(g, c, code, cats, sector, bytes, error, NULL, 0);
}

/* ---- request life after issue ---- */

static uint64_t service_time(struct gen *g, const struct gen_req *rq)
{
	uint64_t t;

	if (rq->cats & TC(DISCARD))
		t = rnd_range(&g->r, 500000, 5000000);
	else if (rq->cdb)
		t = rnd_range(&g->r, 100000, 2000000);
	else if (rq->cats & TC(WRITE))
		t = rnd_range(&g->r, 15000, 120000) + rq->bytes / 2;
	else if (!rq->bytes)
		t = rnd_range(&g->r, 200000, 3000000);	/* cache flush */
	else
		t = rnd_range(&g->r, 40000, 250000) + rq->bytes / 2;
	if (one_in(&g->r, 400))
		t += rnd_range(&g->r, 1000000, 15000000);
	return t;
}

/* The request was just issued at @t: schedule its completion (or, rarely, a requeue). */
static void after_issue(struct gen *g, struct gen_req *rq, uint64_t t, enum gen_step done)
{
	if (done == ST_COMPLETE && !rq->cdb && one_in(&g->r, 1500)) {
		rq->step = ST_REQUEUE;
		rq->time = t + rnd_range(&g->r, 2000, 20000);
		rq->cpu = rq->owner_cpu;
		rq->proc = PROC_KBLOCKD;
		heap_push(g, rq);
		return;
	}
	rq->step = (uint8_t)done;
	rq->time = t + service_time(g, rq);
	rq->cpu = rq->owner_cpu;
	if (g->o->cpus > 1 && one_in(&g->r, 4))
		rq->cpu = (uint16_t)rnd_below(&g->r, g->o->cpus);
	rq->proc = PROC_IDLE;
	if (rq->cpu == rq->owner_cpu && one_in(&g->r, 5))
		rq->proc = rq->owner;
	if (done == ST_COMPLETE && one_in(&g->r, 20000))
		rq->error = (uint16_t)-EIO;
	heap_push(g, rq);
}

static void then(struct gen *g, struct gen_req *rq, enum gen_step step, uint64_t t)
{
	rq->step = (uint8_t)step;
	rq->time = t + rnd_range(&g->r, 3000, 60000);
	rq->cpu = rq->owner_cpu;
	rq->proc = PROC_KBLOCKD;
	heap_push(g, rq);
}

/* Take the next step of @rq (popped from the heap). Writes without draining the heap. */
static void step(struct gen *g, struct gen_req *rq)
{
	struct gen_ctx c = { rq->dev, rq->cpu, rq->proc, rq->time };
	uint64_t data = rq->cats & ~(TC(FLUSH) | TC(FUA));
	uint64_t flush = TC(READ) | TC(FLUSH);

	switch (rq->step) {
	case ST_COMPLETE:
		rq_record(g, &c, BLK_TA_COMPLETE, rq, rq_cats(rq), rq->sector, rq->bytes,
			  rq->error);
		break;
	case ST_REQUEUE:
		rq_record(g, &c, BLK_TA_REQUEUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		then(g, rq, ST_INSERT, c.t);
		break;
	case ST_INSERT:
		rq_record(g, &c, BLK_TA_INSERT, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		then(g, rq, ST_ISSUE, c.t);
		break;
	case ST_ISSUE:
		rq_record(g, &c, BLK_TA_ISSUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		after_issue(g, rq, c.t, ST_COMPLETE);
		break;
	case ST_FL_PRE_ISSUE:
	case ST_FL_POST_ISSUE:
		io(g, &c, BLK_TA_ISSUE, flush | TC(FS), 0, 0, 0, NULL, 0);
		after_issue(g, rq, c.t,
			    rq->step == ST_FL_PRE_ISSUE ? ST_FL_PRE_DONE : ST_FL_POST_DONE);
		break;
	case ST_FL_PRE_DONE:
		io(g, &c, BLK_TA_COMPLETE, flush | TC(FS), 0, 0, 0, NULL, 0);
		then(g, rq, ST_FL_DATA_ISSUE, c.t);
		break;
	case ST_FL_DATA_ISSUE:
		io(g, &c, BLK_TA_ISSUE, data | TC(FS), rq->sector, rq->bytes, 0, NULL, 0);
		after_issue(g, rq, c.t, ST_FL_DATA_DONE);
		break;
	case ST_FL_DATA_DONE:
		io(g, &c, BLK_TA_COMPLETE, data | TC(FS), rq->sector, rq->bytes, 0, NULL, 0);
		then(g, rq, ST_FL_POST_ISSUE, c.t);
		break;
	case ST_FL_POST_DONE:
		io(g, &c, BLK_TA_COMPLETE, flush | TC(FS), 0, 0, 0, NULL, 0);
		rq->proc = PROC_IDLE;
		rq->step = ST_FL_END;
		rq->time = c.t;
		heap_push(g, rq);
		break;
	case ST_FL_END:
		io(g, &c, BLK_TA_COMPLETE, data | TC(FS), rq->sector, 0, 0, NULL, 0);
		break;
	}
}

/* Let every request step that is due by @t happen first, so that time only moves forward. */
static void drain(struct gen *g, uint64_t t)
{
	struct gen_req rq;

	while (g->nheap && g->heap[0].time <= t && !g->done) {
		heap_pop(g, &rq);
		step(g, &rq);
	}
}

/* Wait (in simulated time) until @need more requests fit on the device of @c. */
static void make_room(struct gen *g, struct gen_ctx *c, unsigned int need)
{
	struct gen_req rq;

	while (g->devs[c->dev].inflight + need > QDEPTH && g->nheap && !g->done) {
		heap_pop(g, &rq);
		step(g, &rq);
	}
	if (c->t <= g->clock)
		c->t = g->clock + gap(g);
}

/* ---- submission ---- */

struct gen_batch {
	struct gen_req rq[MAX_BATCH];
	unsigned int n;
	int plugged;
};

/* A submission-path record: first let due completions happen. */
static void sub(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
		uint32_t bytes)
{
	drain(g, c->t);
	io(g, c, code, cats, sector, bytes, 0, NULL, 0);
}

static void plug(struct gen *g, struct gen_ctx *c, struct gen_batch *b)
{
	drain(g, c->t);
	io(g, c, BLK_TA_PLUG, TC(READ), 0, 0, 0, NULL, 0);
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
		drain(g, c->t);
		io(g, c, BLK_TA_REMAP, cats, sector, bytes, 0, pdu, sizeof(pdu));
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

		drain(g, c->t);
		io_u64(g, c, code, TC(READ), 0, 0, b->n);
		insert = 1;
	}
	for (unsigned int i = 0; insert && i < b->n; i++) {
		drain(g, c->t);
		rq_record(g, c, BLK_TA_INSERT, &b->rq[i], rq_cats(&b->rq[i]), b->rq[i].sector,
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

		drain(g, c->t);
		if (g->done)
			return;
		rq_record(g, c, BLK_TA_ISSUE, rq, rq_cats(rq), rq->sector, rq->bytes, 0);
		after_issue(g, rq, c->t, ST_COMPLETE);
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

	make_room(g, c, k);
	if (k > 1)
		plug(g, c, &b);
	for (unsigned int i = 0; i < k; i++)
		bio(g, c, &b, cats, rand_sector(g, procs[c->proc].part, 8), small_size(g), 0);
	/* A write plugs after getting its request and is issued directly at unplug. */
	if (k == 1 && (cats & TC(WRITE)) && one_in(&g->r, 2)) {
		drain(g, c->t);
		io(g, c, BLK_TA_PLUG, TC(READ), 0, 0, 0, NULL, 0);
	}
	dispatch(g, c, &b, k == 1 && one_in(&g->r, 3));
}

static void submit_writeback(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats = TC(WRITE) | (one_in(&g->r, 3) ? TC(SYNC) : 0);
	uint64_t *cur = &g->devs[c->dev].cursor[c->proc];
	unsigned int k = (unsigned int)rnd_range(&g->r, 1, 6);

	make_room(g, c, MAX_BATCH);
	if (!*cur || one_in(&g->r, 50))
		*cur = rand_sector(g, 0, 2048);
	plug(g, c, &b);
	for (unsigned int i = 0; i < k && b.n < MAX_BATCH - 2; i++) {
		uint32_t sectors;

		if (one_in(&g->r, 15)) {
			/* A bio too big for one request: queued whole, split (X) in two. */
			uint64_t s = *cur;

			queue_bio(g, c, cats, s, 4096 * 512);
			drain(g, c->t);
			io_u64(g, c, BLK_TA_SPLIT, cats, s, MAX_RQ_SECTORS * 512,
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

	make_room(g, c, k);
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

	make_room(g, c, k + 1);
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
	then(g, rq, ST_FL_PRE_ISSUE, c->t);
}

static void submit_db(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint64_t cats;

	make_room(g, c, 1);
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

	make_room(g, c, 1);
	bio(g, c, &b, TC(READ) | TC(META) | (one_in(&g->r, 2) ? TC(SYNC) : 0),
	    rand_sector(g, 1, 8), 4096, 0);
	dispatch(g, c, &b, 1);
}

static void submit_discard(struct gen *g, struct gen_ctx *c)
{
	struct gen_batch b = { .n = 0 };
	uint32_t sectors = (uint32_t)rnd_range(&g->r, 1, 32) * 2048;

	make_room(g, c, 1);
	bio(g, c, &b, TC(WRITE) | TC(DISCARD), rand_sector(g, 1, 2048), sectors * 512, 0);
	dispatch(g, c, &b, 1);
}

static void submit_pc(struct gen *g, struct gen_ctx *c)
{
	struct gen_req rq;
	unsigned int cdb = (unsigned int)rnd_range(&g->r, 1, NCDB - 1);

	make_room(g, c, 1);
	memset(&rq, 0, sizeof(rq));
	rq.cats = TC(READ);
	rq.cdb = (uint8_t)cdb;
	rq.bytes = cdbs[cdb].bytes;
	rq.dev = (uint16_t)c->dev;
	rq.owner_cpu = (uint16_t)c->cpu;
	rq.owner = (uint8_t)c->proc;
	drain(g, c->t);
	rq_record(g, c, BLK_TA_INSERT, &rq, rq_cats(&rq), 0, rq.bytes, 0);
	drain(g, c->t);
	rq_record(g, c, BLK_TA_ISSUE, &rq, rq_cats(&rq), 0, rq.bytes, 0);
	if (!g->done)
		after_issue(g, &rq, c->t, ST_COMPLETE);
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
	drain(g, c->t);
	note(g, c, BLK_TN_MESSAGE, msg, (unsigned int)n);
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

static void run(struct gen *g)
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
		note(g, &c, BLK_TN_TIMESTAMP, words, sizeof(words));
	}
	g->next = g->clock + rnd_range(&g->r, 1000, 100000);
	while (!g->done)
		submit(g);
}

/* ---- setup ---- */

static void mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		die("path too long: '%s'", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			die("cannot create directory '%s': %s", buf, strerror(errno));
		*p = '/';
	}
}

static void open_streams(struct gen *g)
{
	const struct gen_opts *o = g->o;
	char path[4096];

	for (unsigned int d = 0; d < o->devices; d++) {
		struct gen_dev *dev = &g->devs[d];
		unsigned int major = d < 16 ? 8 : 65 + (d - 16) / 16;
		unsigned int minor = (d % 16) * 16;

		dev->dev = BLK_MKDEV(major, minor);
		dev->part = BLK_MKDEV(major, minor + 1);
		for (unsigned int c = 0; c < o->cpus; c++) {
			struct gen_stream *s = &g->streams[d * o->cpus + c];
			char num[16] = "";
			int n;

			if (o->pipe) {
				s->chunk = malloc(CHUNK + REC_MAX);
				if (!s->chunk)
					die("out of memory");
				continue;
			}
			if (o->devices > 1)
				snprintf(num, sizeof(num), "%u", d);
			if (o->name[0] == '/' || !o->dir)
				n = snprintf(path, sizeof(path), "%s%s.blktrace.%u", o->name, num,
					     c);
			else
				n = snprintf(path, sizeof(path), "%s/%s%s.blktrace.%u", o->dir,
					     o->name, num, c);
			if (n < 0 || (size_t)n >= sizeof(path))
				die("output path too long for '%s'", o->name);
			mkdirs(path);
			s->out = blk_output_open(path, 0);
			if (!s->out)
				die("cannot create '%s': %s", path, strerror(errno));
		}
	}
	if (o->pipe) {
		g->pipe_out = blk_output_open("-", 0);
		if (!g->pipe_out)
			die("cannot write to standard output: %s", strerror(errno));
	}
}

static int close_streams(struct gen *g)
{
	size_t n = (size_t)g->o->devices * g->o->cpus;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct gen_stream *s = &g->streams[i];

		if (s->out && blk_output_finish(s->out) < 0) {
			fprintf(stderr, "gentrace: %s\n", blk_output_error(s->out));
			ret = -1;
		}
		blk_output_free(s->out);
		free(s->chunk);
	}
	if (g->pipe_out) {
		if (blk_output_finish(g->pipe_out) < 0) {
			fprintf(stderr, "gentrace: %s\n", blk_output_error(g->pipe_out));
			ret = -1;
		}
		blk_output_free(g->pipe_out);
	}
	return ret;
}

/* ---- options ---- */

static const struct option long_opts[] = {
	{ "events", required_argument, NULL, 'n' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "devices", required_argument, NULL, 'd' },
	{ "seed", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "directory", required_argument, NULL, 'D' },
	{ "big-endian", no_argument, NULL, 'B' },
	{ "v2", no_argument, NULL, '2' },
	{ "pipe", no_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"Usage: gentrace [options]\n"
	"\n"
	"  -n, --events=N      records to write in all, notify records included (default 100000)\n"
	"  -c, --cpus=N        per-CPU files per device, 1..256 (default 2)\n"
	"  -d, --devices=N     traced disks, 1..64; names get the device index when N > 1\n"
	"  -s, --seed=N        random seed; the same seed gives the same bytes (default 1)\n"
	"  -o, --output=NAME   write NAME.blktrace.CPU (default 'gentrace')\n"
	"  -D, --directory=DIR directory for relative NAMEs (created if missing)\n"
	"      --big-endian    write big-endian records whatever the host order\n"
	"      --v2            write version-8 (struct blk_io_trace2) records\n"
	"      --pipe          write one stream to stdout, CPUs interleaved in chunks\n"
	"  -h, --help          this text\n";

static __attribute__((format(printf, 1, 2), noreturn)) void usage_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gentrace: %s\nhint: see 'gentrace --help'\n", buf);
	exit(2);
}

static uint64_t parse_num(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		usage_error("option '%s': invalid value '%s' (expected %llu..%llu)", opt, arg,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_args(int argc, char **argv, struct gen_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "n:c:d:s:o:D:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->events = parse_num("--events", optarg, 0, UINT64_MAX);
			break;
		case 'c':
			o->cpus = (unsigned int)parse_num("--cpus", optarg, 1, MAX_CPUS);
			break;
		case 'd':
			o->devices = (unsigned int)parse_num("--devices", optarg, 1, MAX_DEVS);
			break;
		case 's':
			o->seed = parse_num("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'o':
			if (!*optarg)
				usage_error("option '--output': empty name");
			o->name = optarg;
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'B':
			o->big_endian = 1;
			break;
		case '2':
			o->v2 = 1;
			break;
		case 'p':
			o->pipe = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			fputs(usage_text, stderr);
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->cpus * o->devices > MAX_STREAMS)
		usage_error("too many files: '--cpus' times '--devices' is over %d", MAX_STREAMS);
}

int main(int argc, char **argv)
{
	struct gen_opts o = { .events = 100000, .seed = 1, .cpus = 2, .devices = 1,
			      .name = "gentrace" };
	struct gen g;
	int ret;

	parse_args(argc, argv, &o);
	memset(&g, 0, sizeof(g));
	g.o = &o;
	g.r.s = o.seed;
	/* Default is host order; --big-endian only swaps on little-endian hosts. */
	g.swap = o.big_endian && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	g.devs = calloc(o.devices, sizeof(*g.devs));
	g.streams = calloc((size_t)o.devices * o.cpus, sizeof(*g.streams));
	g.heap = calloc((size_t)o.devices * QDEPTH + 1, sizeof(*g.heap));
	if (!g.devs || !g.streams || !g.heap)
		die("out of memory");
	open_streams(&g);
	if (!o.events)
		g.done = 1;
	run(&g);
	if (o.pipe)
		pipe_round(&g);
	ret = close_streams(&g);
	free(g.heap);
	free(g.streams);
	free(g.devs);
	return ret ? 1 : 0;
}
