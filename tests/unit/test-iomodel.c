// SPDX-License-Identifier: GPL-2.0
/*
 * btt's I/O model (btt/model/iomodel.c) through its subscriber interface: event sequences are
 * fed to the model, and a recording subscriber writes what it receives as text lines,
 * which are compared with the lines expected by hand (the rules of btt 2.09: see
 * btt/model/iomodel.h and doc/btt.1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/event.h"
#include "blk/trace.h"
#include "model/devs.h"
#include "model/iomodel.h"
#include "model/qio.h"

#define SDA BLK_MKDEV(8, 0)
#define SDA1 BLK_MKDEV(8, 1)
#define SDB BLK_MKDEV(8, 16)
#define DM0 BLK_MKDEV(253, 0)
#define MS 1000000ull /* ns */

/* ---- the recording subscriber ---- */

struct rec {
	char *log;
	size_t len, cap;
	unsigned int flags;
	uint32_t events; /* dev events logged (0: none) */
	const char *tag; /* prefixed to each line (a second subscriber) */
	struct rec *sink; /* writes into this one's log (NULL: its own) */
};

static void logf_(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct rec *r, const char *fmt, ...)
{
	const char *tag = r->tag;
	va_list ap;
	int n;

	if (r->sink)
		r = r->sink;
	if (r->cap - r->len < 512) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->log = realloc(r->log, r->cap);
		assert_non_null(r->log);
	}
	if (tag)
		r->len += (size_t)snprintf(r->log + r->len, r->cap - r->len, "%s ", tag);
	va_start(ap, fmt);
	n = vsnprintf(r->log + r->len, r->cap - r->len, fmt, ap);
	va_end(ap);
	r->len += (size_t)n;
	r->log[r->len++] = '\n';
	r->log[r->len] = '\0';
}

/* a time in ms ("-" when absent), in one of 16 static buffers (a line takes up to 8) */
static const char *ms(uint64_t t)
{
	static char buf[16][32];
	static int k;
	char *b = buf[k++ % 16];

	if (t == NO_TIME)
		return "-";
	if (t % MS)
		snprintf(b, 32, "%lluns", (unsigned long long)t);
	else
		snprintf(b, 32, "%llu", (unsigned long long)(t / MS));
	return b;
}

static const char stage_names[] = "QGSIMDCA";

static void on_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	logf_(ctx, "%c %s %llu+%u t=%s prev=%s %s", stage_names[st], io->dev->name,
	      (unsigned long long)io->sector, io->nsec, ms(t),
	      st < BTT_NTIMES ? ms(io->t[st]) : "-", io->proc->name);
}

static void on_done(void *ctx, const struct btt_io *io)
{
	struct rec *r = ctx;
	char extra[128] = "";
	size_t n = 0;

	if (r->flags & BTT_SUB_ISSUE)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, " d=%llu+%u",
				      (unsigned long long)io->d_sector, io->d_nsec);
	if (r->flags & BTT_SUB_REMAP && io->remapped)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, " from=%u,%u:%llu",
				      BLK_MAJOR(io->from_device), BLK_MINOR(io->from_device),
				      (unsigned long long)io->from_sector);
	if (r->flags & BTT_SUB_RWBS)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, " act=%llx",
				      (unsigned long long)io->action);
	logf_(r, "done %s %llu+%u Q=%s G=%s S=%s I=%s M=%s D=%s C=%s c=%llu+%u err=%u pid=%u%s",
	      io->dev->name, (unsigned long long)io->sector, io->nsec, ms(io->t[BTT_STAGE_Q]),
	      ms(io->t[BTT_STAGE_G]), ms(io->t[BTT_STAGE_S]), ms(io->t[BTT_STAGE_I]),
	      ms(io->t[BTT_STAGE_M]), ms(io->t[BTT_STAGE_D]), ms(io->t[BTT_STAGE_C]),
	      (unsigned long long)io->c_sector, io->c_nsec, io->error, io->pid, extra);
}

static void on_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	logf_(ctx, "lost %s %s %llu+%u Q=%s D=%s", why == BTT_LOST_REPLACED ? "replaced" : "end",
	      io->dev->name, (unsigned long long)io->sector, io->nsec, ms(io->t[BTT_STAGE_Q]),
	      ms(io->t[BTT_STAGE_D]));
}

static const char *const ev_names[BTT_EV_NR] = {
	"NEW",
	"FIRST_Q",
	"QUEUE",
	"REMAP",
	"GETRQ",
	"SLEEPRQ",
	"INSERT",
	"MERGE",
	"REQUEUE",
	"ISSUE",
	"COMPLETE",
	"PLUG",
	"UNPLUG",
	"UNPLUG_TIMER",
	"MESSAGE",
	"ISSUE_BEFORE_Q",
	"COMPLETE_BEFORE_Q",
};

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct rec *r = ctx;

	if (!(r->events & (1u << e->kind)))
		return;
	if (e->kind == BTT_EV_MESSAGE)
		logf_(r, "ev MESSAGE %s '%.*s'", e->dev->label, (int)e->len, e->text);
	else if (e->kind == BTT_EV_REMAP)
		logf_(r, "ev REMAP %s %llu from=%u,%u:%llu", e->dev->name,
		      (unsigned long long)e->ev->sector, BLK_MAJOR(e->from_device),
		      BLK_MINOR(e->from_device), (unsigned long long)e->from_sector);
	else
		logf_(r, "ev %s %s t=%s n=%llu", ev_names[e->kind], e->dev->name, ms(e->ev->time),
		      (unsigned long long)e->count);
}

/* ---- a model and its events ---- */

struct world {
	struct btt_devs devs;
	struct iomodel *m;
	struct rec r;
	uint32_t seq;
	uint16_t error; /* of the events fed */
};

static void world_init(struct world *w, unsigned int flags, uint32_t events)
{
	struct iomodel_opts o = {0};
	struct btt_io_sub sub = {
		.stage = on_stage,
		.done = on_done,
		.lost = on_lost,
		.dev_event = on_event,
	};

	memset(w, 0, sizeof(*w));
	devs_init(&w->devs, NULL);
	w->m = iomodel_new(&w->devs, &o);
	w->r.flags = flags;
	w->r.events = events;
	sub.ctx = &w->r;
	sub.flags = flags;
	assert_int_equal(iomodel_subscribe(w->m, &sub), 0);
}

static void world_free(struct world *w)
{
	iomodel_free(w->m);
	devs_release(&w->devs);
	free(w->r.log);
}

static void feed(struct world *w, uint64_t t, unsigned int code, uint32_t cats, uint32_t dev,
		 uint64_t sector, uint32_t nsec, uint32_t pid, const void *pdu, uint16_t pdu_len)
{
	struct blk_event ev = {
		.time = t,
		.sector = sector,
		.action = code | BLK_TC_ACT(cats),
		.sequence = ++w->seq,
		.bytes = nsec << 9,
		.pid = pid,
		.device = dev,
		.pdu = pdu,
		.pdu_len = pdu_len,
		.error = w->error,
		.version = 7,
	};

	iomodel_event(w->m, &ev);
}

/* an event of a request: @ms_t milliseconds, a read unless @cats says otherwise */
static void io(struct world *w, uint64_t ms_t, unsigned int code, uint32_t dev, uint64_t sector,
	       uint32_t nsec)
{
	feed(w, ms_t * MS, code, BLK_TC_READ, dev, sector, nsec, 10, NULL, 0);
}

static void name_pid(struct world *w, uint32_t pid, const char *name)
{
	feed(w, 0, BLK_TN_PROCESS, BLK_TC_NOTIFY, 0, 0, 0, pid, name, (uint16_t)strlen(name));
}

static void remap(struct world *w, uint64_t ms_t, uint32_t dev, uint64_t sector, uint32_t nsec,
		  uint32_t from_dev, uint64_t from_sector)
{
	unsigned char pdu[16];

	for (int i = 0; i < 4; i++) {
		pdu[i] = (unsigned char)(from_dev >> (24 - 8 * i));
		pdu[4 + i] = (unsigned char)(dev >> (24 - 8 * i));
	}
	for (int i = 0; i < 8; i++)
		pdu[8 + i] = (unsigned char)(from_sector >> (56 - 8 * i));
	feed(w, ms_t * MS, BLK_TA_REMAP, BLK_TC_READ, dev, sector, nsec, 10, pdu, sizeof(pdu));
}

static void expect(struct world *w, const char *want)
{
	const char *got = w->r.log ? w->r.log : "";

	if (strcmp(got, want)) {
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
		fail();
	}
}

/* ---- the cases ---- */

static void test_plain(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 1u << BTT_EV_NEW | 1u << BTT_EV_FIRST_Q | 1u << BTT_EV_COMPLETE);
	name_pid(&w, 10, "fio/0");
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_GETRQ, SDA, 100, 8);
	io(&w, 3, BLK_TA_INSERT, SDA, 100, 8);
	io(&w, 5, BLK_TA_ISSUE, SDA, 100, 8);
	feed(&w, 9 * MS, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 8, 0, NULL, 0);
	/* the process is named up to a '/'; the completion's pid is not the I/O's */
	expect(&w, "ev NEW 8,0 t=1 n=0\n"
		   "ev FIRST_Q 8,0 t=1 n=0\n"
		   "Q 8,0 100+8 t=1 prev=1 fio\n"
		   "G 8,0 100+8 t=2 prev=- fio\n"
		   "I 8,0 100+8 t=3 prev=- fio\n"
		   "D 8,0 100+8 t=5 prev=- fio\n"
		   "done 8,0 100+8 Q=1 G=2 S=- I=3 M=- D=5 C=9 c=100+8 err=0 pid=10\n"
		   "ev COMPLETE 8,0 t=9 n=1\n");
	world_free(&w);
}

static void test_sleep_and_labels(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 1u << BTT_EV_MESSAGE);
	/* a -M name would replace both; here the numbers */
	io(&w, 1, BLK_TA_QUEUE, SDB, 8, 8);
	io(&w, 2, BLK_TA_SLEEPRQ, SDB, 8, 8);
	io(&w, 4, BLK_TA_GETRQ, SDB, 8, 8);
	feed(&w, 5 * MS, BLK_TN_MESSAGE, BLK_TC_NOTIFY, SDB, 0, 0, 0, "hello\0junk", 10);
	expect(&w, "Q 8,16 8+8 t=1 prev=1 pid000000010\n"
		   "S 8,16 8+8 t=2 prev=- pid000000010\n"
		   "G 8,16 8+8 t=4 prev=- pid000000010\n"
		   "ev MESSAGE (  8, 16) 'hello'\n");
	world_free(&w);
}

/*
 * A back merge: the second bio joins the request of the first; one issue and one
 * completion take both, in the classic walk's order (pre-order: 100 is the root, 108 its
 * right child). The issue that took them is the merged request.
 */
static void test_back_merge(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, BTT_SUB_ISSUE, 1u << BTT_EV_ISSUE | 1u << BTT_EV_MERGE);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_GETRQ, SDA, 100, 8);
	io(&w, 3, BLK_TA_INSERT, SDA, 100, 8);
	io(&w, 4, BLK_TA_QUEUE, SDA, 108, 8);
	io(&w, 5, BLK_TA_BACKMERGE, SDA, 108, 8);
	io(&w, 6, BLK_TA_ISSUE, SDA, 100, 16);
	io(&w, 8, BLK_TA_COMPLETE, SDA, 100, 16);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "G 8,0 100+8 t=2 prev=- pid000000010\n"
		   "I 8,0 100+8 t=3 prev=- pid000000010\n"
		   "Q 8,0 108+8 t=4 prev=4 pid000000010\n"
		   "M 8,0 108+8 t=5 prev=- pid000000010\n"
		   "ev MERGE 8,0 t=5 n=0\n"
		   "D 8,0 100+8 t=6 prev=- pid000000010\n"
		   "D 8,0 108+8 t=6 prev=- pid000000010\n"
		   "ev ISSUE 8,0 t=6 n=2\n"
		   "done 8,0 100+8 Q=1 G=2 S=- I=3 M=- D=6 C=8 c=100+16 err=0 pid=10 d=100+16\n"
		   "done 8,0 108+8 Q=4 G=- S=- I=- M=5 D=6 C=8 c=100+16 err=0 pid=10 d=100+16\n");
	world_free(&w);
}

/* A front merge: the request at 108 grows down to 100; the walk meets 108 (the root) first. */
static void test_front_merge(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 0);
	io(&w, 1, BLK_TA_QUEUE, SDA, 108, 8);
	io(&w, 2, BLK_TA_GETRQ, SDA, 108, 8);
	io(&w, 3, BLK_TA_INSERT, SDA, 108, 8);
	io(&w, 4, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 5, BLK_TA_FRONTMERGE, SDA, 100, 8);
	io(&w, 6, BLK_TA_ISSUE, SDA, 100, 16);
	io(&w, 8, BLK_TA_COMPLETE, SDA, 100, 16);
	expect(&w, "Q 8,0 108+8 t=1 prev=1 pid000000010\n"
		   "G 8,0 108+8 t=2 prev=- pid000000010\n"
		   "I 8,0 108+8 t=3 prev=- pid000000010\n"
		   "Q 8,0 100+8 t=4 prev=4 pid000000010\n"
		   "M 8,0 100+8 t=5 prev=- pid000000010\n"
		   "D 8,0 108+8 t=6 prev=- pid000000010\n"
		   "D 8,0 100+8 t=6 prev=- pid000000010\n"
		   "done 8,0 108+8 Q=1 G=2 S=- I=3 M=- D=6 C=8 c=100+16 err=0 pid=10\n"
		   "done 8,0 100+8 Q=4 G=- S=- I=- M=5 D=6 C=8 c=100+16 err=0 pid=10\n");
	world_free(&w);
}

/*
 * A dm device: its Q, then the A that remaps it to the disk (the A's Q2A is a stage of
 * the dm I/O), then the disk's own Q, whose origin is the A's. The completions are
 * delivered separately, each on its device.
 */
static void test_remap_dm(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, BTT_SUB_REMAP, 1u << BTT_EV_REMAP);
	io(&w, 1, BLK_TA_QUEUE, DM0, 100, 8);
	remap(&w, 2, SDA, 5100, 8, DM0, 100);
	io(&w, 3, BLK_TA_QUEUE, SDA, 5100, 8);
	io(&w, 4, BLK_TA_ISSUE, SDA, 5100, 8);
	io(&w, 5, BLK_TA_COMPLETE, SDA, 5100, 8);
	io(&w, 6, BLK_TA_COMPLETE, DM0, 100, 8);
	expect(&w, "Q 253,0 100+8 t=1 prev=1 pid000000010\n"
		   "ev REMAP 8,0 5100 from=253,0:100\n"
		   "A 253,0 100+8 t=2 prev=- pid000000010\n"
		   "Q 8,0 5100+8 t=3 prev=3 pid000000010\n"
		   "D 8,0 5100+8 t=4 prev=- pid000000010\n"
		   "done 8,0 5100+8 Q=3 G=- S=- I=- M=- D=4 C=5 c=5100+8 err=0 pid=10 "
		   "from=253,0:100\n"
		   "done 253,0 100+8 Q=1 G=- S=- I=- M=- D=- C=6 c=100+8 err=0 pid=10\n");
	world_free(&w);
}

/*
 * A partition: the A comes first (sda1's sector 100 is the disk's 2148), then the disk's
 * Q; sda1 was never queued on (no Q2A). An A whose Q goes elsewhere gives no origin.
 */
static void test_remap_partition(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, BTT_SUB_REMAP, 0);
	remap(&w, 1, SDA, 2148, 8, SDA1, 100);
	io(&w, 2, BLK_TA_QUEUE, SDA, 2148, 8);
	remap(&w, 3, SDA, 4000, 8, SDA1, 1952);
	io(&w, 4, BLK_TA_QUEUE, SDA, 4008, 8);
	io(&w, 5, BLK_TA_COMPLETE, SDA, 2148, 8);
	io(&w, 6, BLK_TA_COMPLETE, SDA, 4008, 8);
	expect(&w, "Q 8,0 2148+8 t=2 prev=2 pid000000010\n"
		   "Q 8,0 4008+8 t=4 prev=4 pid000000010\n"
		   "done 8,0 2148+8 Q=2 G=- S=- I=- M=- D=- C=5 c=2148+8 err=0 pid=10 "
		   "from=8,1:100\n"
		   "done 8,0 4008+8 Q=4 G=- S=- I=- M=- D=- C=6 c=4008+8 err=0 pid=10\n");
	world_free(&w);
}

/* D, R, D, C: the second issue sees the first, and the later one is the I/O's D */
static void test_requeue(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, BTT_SUB_ISSUE, 1u << BTT_EV_REQUEUE | 1u << BTT_EV_ISSUE);
	io(&w, 1, BLK_TA_QUEUE, SDA, 200, 16);
	io(&w, 2, BLK_TA_ISSUE, SDA, 200, 16);
	io(&w, 3, BLK_TA_REQUEUE, SDA, 200, 16);
	io(&w, 4, BLK_TA_ISSUE, SDA, 200, 16);
	io(&w, 7, BLK_TA_COMPLETE, SDA, 200, 16);
	expect(&w, "Q 8,0 200+16 t=1 prev=1 pid000000010\n"
		   "D 8,0 200+16 t=2 prev=- pid000000010\n"
		   "ev ISSUE 8,0 t=2 n=1\n"
		   "ev REQUEUE 8,0 t=3 n=0\n"
		   "D 8,0 200+16 t=4 prev=2 pid000000010\n"
		   "ev ISSUE 8,0 t=4 n=1\n"
		   "done 8,0 200+16 Q=1 G=- S=- I=- M=- D=4 C=7 c=200+16 err=0 pid=10 d=200+16\n");
	world_free(&w);
}

/*
 * One completion over three I/Os queued (and issued) apart: after 100, 108, 116 the tree
 * is rotated (108 at the root), so the walk meets 108, 100, 116. A completion with an error
 * gives it to each.
 */
static void test_one_c_several_q(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 1u << BTT_EV_COMPLETE);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_QUEUE, SDA, 108, 8);
	io(&w, 3, BLK_TA_QUEUE, SDA, 116, 8);
	feed(&w, 4 * MS, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 24, 10, NULL, 0);
	io(&w, 5, BLK_TA_QUEUE, SDA, 300, 8);
	w.error = 5;
	io(&w, 5, BLK_TA_COMPLETE, SDA, 300, 8);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "Q 8,0 108+8 t=2 prev=2 pid000000010\n"
		   "Q 8,0 116+8 t=3 prev=3 pid000000010\n"
		   "done 8,0 108+8 Q=2 G=- S=- I=- M=- D=- C=4 c=100+24 err=0 pid=10\n"
		   "done 8,0 100+8 Q=1 G=- S=- I=- M=- D=- C=4 c=100+24 err=0 pid=10\n"
		   "done 8,0 116+8 Q=3 G=- S=- I=- M=- D=- C=4 c=100+24 err=0 pid=10\n"
		   "ev COMPLETE 8,0 t=4 n=3\n"
		   "Q 8,0 300+8 t=5 prev=5 pid000000010\n"
		   "done 8,0 300+8 Q=5 G=- S=- I=- M=- D=- C=5 c=300+8 err=5 pid=10\n"
		   "ev COMPLETE 8,0 t=5 n=1\n");
	world_free(&w);
}

/* never completed: not delivered as done; lost at the end only to those who ask */
static void test_never_completes(void **state)
{
	struct world w, e;

	(void)state;
	world_init(&w, 0, 0);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_ISSUE, SDA, 100, 8);
	io(&w, 3, BLK_TA_COMPLETE, SDA, 500, 8);
	iomodel_finish(w.m);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "D 8,0 100+8 t=2 prev=- pid000000010\n");
	world_free(&w);

	world_init(&e, BTT_SUB_LOST_AT_END, 0);
	io(&e, 1, BLK_TA_QUEUE, SDB, 300, 8);
	io(&e, 2, BLK_TA_QUEUE, SDA, 200, 8);
	io(&e, 3, BLK_TA_QUEUE, SDA, 100, 8);
	io(&e, 4, BLK_TA_ISSUE, SDA, 100, 8);
	iomodel_finish(e.m);
	/* device by device (creation order), in sector order */
	expect(&e, "Q 8,16 300+8 t=1 prev=1 pid000000010\n"
		   "Q 8,0 200+8 t=2 prev=2 pid000000010\n"
		   "Q 8,0 100+8 t=3 prev=3 pid000000010\n"
		   "D 8,0 100+8 t=4 prev=- pid000000010\n"
		   "lost end 8,16 300+8 Q=1 D=-\n"
		   "lost end 8,0 100+8 Q=3 D=4\n"
		   "lost end 8,0 200+8 Q=2 D=-\n");
	world_free(&e);
}

/* a second Q at the same start orphans the first (with its length and issue) */
static void test_second_q_same_sector(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 0);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_ISSUE, SDA, 100, 8);
	io(&w, 3, BLK_TA_QUEUE, SDA, 100, 16);
	io(&w, 4, BLK_TA_COMPLETE, SDA, 100, 16);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "D 8,0 100+8 t=2 prev=- pid000000010\n"
		   "lost replaced 8,0 100+8 Q=1 D=2\n"
		   "Q 8,0 100+16 t=3 prev=3 pid000000010\n"
		   "done 8,0 100+16 Q=3 G=- S=- I=- M=- D=- C=4 c=100+16 err=0 pid=10\n");
	world_free(&w);
}

/*
 * Before a device's first Q the model ignores its events (only D and C are reported, as
 * such, for the percentiles); plugs count already. The first Q starts the device.
 */
static void test_pre_culling(void **state)
{
	struct world w;
	unsigned char depth[8] = {0, 0, 0, 0, 0, 0, 0, 3};

	(void)state;
	world_init(&w, 0, ~0u);
	io(&w, 1, BLK_TA_GETRQ, SDB, 100, 8);
	io(&w, 2, BLK_TA_ISSUE, SDB, 100, 8);
	feed(&w, 3 * MS, BLK_TA_UNPLUG_IO, BLK_TC_QUEUE, SDB, 0, 0, 10, depth, 8);
	io(&w, 4, BLK_TA_COMPLETE, SDB, 100, 8);
	/* a plug on a device never named is dropped */
	feed(&w, 5 * MS, BLK_TA_PLUG, BLK_TC_QUEUE, SDA, 0, 0, 10, NULL, 0);
	io(&w, 6, BLK_TA_QUEUE, SDB, 100, 8);
	io(&w, 7, BLK_TA_COMPLETE, SDB, 100, 8);
	expect(&w, "ev NEW 8,16 t=1 n=0\n"
		   "ev ISSUE_BEFORE_Q 8,16 t=2 n=0\n"
		   "ev UNPLUG 8,16 t=3 n=3\n"
		   "ev COMPLETE_BEFORE_Q 8,16 t=4 n=0\n"
		   "ev FIRST_Q 8,16 t=6 n=0\n"
		   "Q 8,16 100+8 t=6 prev=6 pid000000010\n"
		   "ev QUEUE 8,16 t=6 n=0\n"
		   "done 8,16 100+8 Q=6 G=- S=- I=- M=- D=- C=7 c=100+8 err=0 pid=10\n"
		   "ev COMPLETE 8,16 t=7 n=1\n");
	world_free(&w);
}

/*
 * Time going backwards (the trace is taken in file order): an issue before its Q, a
 * getrq long after (past the 32-bit offsets, kept apart), both delivered exactly.
 */
static void test_time_backwards(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 0);
	io(&w, 2000, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 1000, BLK_TA_ISSUE, SDA, 100, 8);
	io(&w, 9000, BLK_TA_GETRQ, SDA, 100, 8);
	feed(&w, 2000 * MS + 7, BLK_TA_INSERT, BLK_TC_READ, SDA, 100, 8, 10, NULL, 0);
	io(&w, 1500, BLK_TA_COMPLETE, SDA, 100, 8);
	expect(&w, "Q 8,0 100+8 t=2000 prev=2000 pid000000010\n"
		   "D 8,0 100+8 t=1000 prev=- pid000000010\n"
		   "G 8,0 100+8 t=9000 prev=- pid000000010\n"
		   "I 8,0 100+8 t=2000000007ns prev=- pid000000010\n"
		   "done 8,0 100+8 Q=2000 G=9000 S=- I=2000000007ns M=- D=1000 C=1500 c=100+8 "
		   "err=0 pid=10\n");
	world_free(&w);
}

/* the Q's action bits (for its RWBS) come with it; events without bytes are not modelled */
static void test_rwbs_and_zero_bytes(void **state)
{
	struct world w;
	char rwbs[BLK_RWBS_LEN];
	struct blk_event q = {.bytes = 4096};

	(void)state;
	world_init(&w, BTT_SUB_RWBS, 0);
	feed(&w, 1 * MS, BLK_TA_QUEUE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 8, 10, NULL, 0);
	io(&w, 2, BLK_TA_QUEUE, SDA, 200, 0);
	io(&w, 3, BLK_TA_COMPLETE, SDA, 100, 0);
	io(&w, 4, BLK_TA_COMPLETE, SDA, 100, 8);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "done 8,0 100+8 Q=1 G=- S=- I=- M=- D=- C=4 c=100+8 err=0 pid=10 act=a0000\n");
	/* those bits give the Q's RWBS */
	q.action = 0xa0000 | BLK_TA_QUEUE;
	blk_event_rwbs(&q, rwbs);
	assert_string_equal(rwbs, "WS");
	world_free(&w);
}

/* two subscribers, called in the order they came, with their masks; none after the start */
static void test_subscribers(void **state)
{
	struct world w;
	struct rec r2 = {.tag = "2", .events = ~0u};
	struct btt_io_sub sub = {
		.ctx = &r2,
		.stages = 1u << BTT_STAGE_D,
		.events = 1u << BTT_EV_ISSUE,
		.stage = on_stage,
		.dev_event = on_event,
	};

	(void)state;
	world_init(&w, 0, 0);
	r2.sink = &w.r;
	assert_int_equal(iomodel_subscribe(w.m, &sub), 0);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 2, BLK_TA_ISSUE, SDA, 100, 8);
	assert_int_equal(iomodel_subscribe(w.m, &sub), -EBUSY);
	expect(&w, "Q 8,0 100+8 t=1 prev=1 pid000000010\n"
		   "D 8,0 100+8 t=2 prev=- pid000000010\n"
		   "2 D 8,0 100+8 t=2 prev=- pid000000010\n"
		   "2 ev ISSUE 8,0 t=2 n=1\n");
	world_free(&w);
}

/* -t/-T: events before the window are skipped, the first after it ends the model */
static void test_time_window(void **state)
{
	struct world w;
	struct iomodel_opts o = {.time_bounded = 1, .t_start = 0.002, .t_end = 0.005};
	struct btt_io_sub sub = {.stage = on_stage, .done = on_done};

	(void)state;
	memset(&w, 0, sizeof(w));
	devs_init(&w.devs, NULL);
	w.m = iomodel_new(&w.devs, &o);
	sub.ctx = &w.r;
	assert_int_equal(iomodel_subscribe(w.m, &sub), 0);
	io(&w, 1, BLK_TA_QUEUE, SDA, 100, 8);
	io(&w, 3, BLK_TA_QUEUE, SDA, 200, 8);
	io(&w, 6, BLK_TA_COMPLETE, SDA, 200, 8);
	assert_int_equal(iomodel_done(w.m), 1);
	assert_int_equal(iomodel_records(w.m), 3);
	assert_int_equal(iomodel_last_time(w.m), 3 * MS);
	expect(&w, "Q 8,0 200+8 t=3 prev=3 pid000000010\n");
	world_free(&w);
}

static void on_note(void *ctx, const struct blk_event *ev)
{
	logf_(ctx, "note %u t=%s pid=%u '%.*s'", (unsigned int)(ev->action & 0xffff), ms(ev->time),
	      ev->pid, (int)ev->pdu_len, (const char *)ev->pdu);
}

/* notes reach note() before the model takes them, also outside the -t/-T window */
static void test_notes(void **state)
{
	struct world w;
	struct iomodel_opts o = {.time_bounded = 1, .t_start = 0.002, .t_end = 0.005};
	struct btt_io_sub sub = {.note = on_note, .done = on_done};

	(void)state;
	memset(&w, 0, sizeof(w));
	devs_init(&w.devs, NULL);
	w.m = iomodel_new(&w.devs, &o);
	sub.ctx = &w.r;
	assert_int_equal(iomodel_subscribe(w.m, &sub), 0);
	name_pid(&w, 42, "fio");
	feed(&w, 1 * MS, BLK_TN_MESSAGE, BLK_TC_NOTIFY, SDA, 0, 0, 0, "hi", 2);
	feed(&w, 3 * MS, BLK_TA_QUEUE, BLK_TC_READ, SDA, 100, 8, 42, NULL, 0);
	feed(&w, 4 * MS, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 8, 42, NULL, 0);
	feed(&w, 9 * MS, BLK_TN_TIMESTAMP, BLK_TC_NOTIFY, SDA, 0, 0, 0, "12345678", 8);
	expect(&w, "note 0 t=0 pid=42 'fio'\n"
		   "note 2 t=1 pid=0 'hi'\n"
		   "done 8,0 100+8 Q=3 G=- S=- I=- M=- D=- C=4 c=100+8 err=0 pid=42\n"
		   "note 1 t=9 pid=0 '12345678'\n");
	world_free(&w);
}

/*
 * One device and pid queuing with 100 kinds of action (the bits kept, as for --perfetto's
 * RWBS): each new pair goes at the end of that pid's chain, also when the array of pairs
 * grows under it (the link to the new pair was written through a pointer into the old
 * array: into freed memory, the pair lost, found again as a new one each time)
 */
static void test_who_chain_grows(void **state)
{
	struct qios s;
	uint32_t first[100];

	(void)state;
	memset(&s, 0, sizeof(s));
	qios_init(&s, 0, 0, 1);
	for (unsigned int i = 0; i < 100; i++)
		first[i] = qio_who_slow(&s, 0, 7, NULL, (uint64_t)(i + 1) << 16);
	for (unsigned int i = 0; i < 100; i++) {
		assert_int_equal(qio_who_slow(&s, 0, 7, NULL, (uint64_t)(i + 1) << 16), first[i]);
		assert_int_equal(s.who[first[i]].action, (uint64_t)(i + 1) << 16);
	}
	assert_int_equal(s.nwho, 100);
	/* another pid of the device: a chain of its own */
	assert_int_equal(qio_who_slow(&s, 0, 8, NULL, 1 << 16), 100);
	assert_int_equal(s.nwho, 101);
	qios_release(&s);
}

/*
 * btt_io.id: the same number in every call for an I/O, from its Q to its done() or lost(),
 * and no other I/O in flight has it (a subscriber keeps its state in an array by it).
 */
#define IDS 64
struct ids {
	uint64_t key[IDS]; /* id -> dev << 40 | sector + 1 of the I/O holding it (0: free) */
	unsigned int calls, reused;
	int ever[IDS];
};

static uint64_t id_key(const struct btt_io *io)
{
	return ((uint64_t)io->dev->device << 40 | io->sector) + 1;
}

static void id_stage(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t)
{
	struct ids *x = ctx;

	(void)t;
	x->calls++;
	assert_true(io->id < IDS);
	if (st == BTT_STAGE_Q) {
		assert_int_equal(x->key[io->id], 0); /* no I/O in flight has it */
		x->reused += x->ever[io->id];
		x->ever[io->id] = 1;
		x->key[io->id] = id_key(io);
	} else {
		assert_int_equal(x->key[io->id], id_key(io));
	}
}

static void id_leave(struct ids *x, const struct btt_io *io)
{
	x->calls++;
	assert_true(io->id < IDS);
	assert_int_equal(x->key[io->id], id_key(io));
	x->key[io->id] = 0;
}

static void id_done(void *ctx, const struct btt_io *io)
{
	id_leave(ctx, io);
}

static void id_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	(void)why;
	id_leave(ctx, io);
}

static void test_io_id(void **state)
{
	struct ids x = {0};
	struct world w;
	struct btt_io_sub sub = {.ctx = &x,
				 .flags = BTT_SUB_REMAP | BTT_SUB_LOST_AT_END,
				 .stage = id_stage,
				 .done = id_done,
				 .lost = id_lost};

	(void)state;
	world_init(&w, 0, 0);
	assert_int_equal(iomodel_subscribe(w.m, &sub), 0);
	/* I/Os that overlap in time, on two devices, one replaced, one remapped, one merged */
	for (uint64_t k = 0; k < 6; k++) {
		io(&w, 10 * k + 1, BLK_TA_QUEUE, SDA, 1000 * k, 8);
		io(&w, 10 * k + 2, BLK_TA_QUEUE, SDB, 1000 * k, 8);
		io(&w, 10 * k + 3, BLK_TA_GETRQ, SDA, 1000 * k, 8);
		io(&w, 10 * k + 3, BLK_TA_QUEUE, SDA, 1000 * k + 8, 8);
		io(&w, 10 * k + 4, BLK_TA_BACKMERGE, SDA, 1000 * k + 8, 8);
		io(&w, 10 * k + 5, BLK_TA_ISSUE, SDA, 1000 * k, 16);
	}
	io(&w, 70, BLK_TA_QUEUE, SDB, 2000, 16); /* replaces SDB's I/O at 2000 */
	io(&w, 71, BLK_TA_QUEUE, DM0, 50, 8);
	remap(&w, 72, SDA, 9050, 8, DM0, 50);
	io(&w, 73, BLK_TA_QUEUE, SDA, 9050, 8);
	for (uint64_t k = 0; k < 6; k++) {
		io(&w, 80 + k, BLK_TA_COMPLETE, SDA, 1000 * k, 16);
		if (k % 2)
			io(&w, 80 + k, BLK_TA_COMPLETE, SDB, 1000 * k, 8);
	}
	/* the ids of those done are given again to I/Os queued now */
	for (uint64_t k = 0; k < 6; k++)
		io(&w, 90 + k, BLK_TA_QUEUE, SDA, 5000 + 8 * k, 8);
	io(&w, 99, BLK_TA_COMPLETE, DM0, 50, 8);
	iomodel_finish(w.m);
	for (unsigned int i = 0; i < IDS; i++)
		assert_int_equal(x.key[i], 0); /* every I/O left, at the end at the latest */
	assert_true(x.reused > 0);
	assert_true(x.calls > 50);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_who_chain_grows),
		cmocka_unit_test(test_io_id),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_sleep_and_labels),
		cmocka_unit_test(test_back_merge),
		cmocka_unit_test(test_front_merge),
		cmocka_unit_test(test_remap_dm),
		cmocka_unit_test(test_remap_partition),
		cmocka_unit_test(test_requeue),
		cmocka_unit_test(test_one_c_several_q),
		cmocka_unit_test(test_never_completes),
		cmocka_unit_test(test_second_q_same_sector),
		cmocka_unit_test(test_pre_culling),
		cmocka_unit_test(test_time_backwards),
		cmocka_unit_test(test_rwbs_and_zero_bytes),
		cmocka_unit_test(test_subscribers),
		cmocka_unit_test(test_time_window),
		cmocka_unit_test(test_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
