// SPDX-License-Identifier: GPL-2.0
/*
 * The model of every bio (btt/model/bios.c): synthetic event sequences, each with the bios
 * it must deliver, in order (table-driven); then a random workload of split, merged and
 * out-of-order bios checked against what each bio went through, and the stale bios'
 * bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/bios.h"
#include "model/iomodel.h"

#define SDA BLK_MKDEV(8, 0)
#define SDB BLK_MKDEV(8, 16)
#define SDA1 BLK_MKDEV(8, 1)
#define DM BLK_MKDEV(253, 0)
#define MS 1000000ull /* ns */
#define NONE (-1) /* an expected time that is NO_TIME */

/* an event: @k is the action letter as blkparse prints it ('E': bios_finish()) */
struct tev {
	char k;
	uint32_t dev;
	uint64_t sector;
	uint32_t nsec;
	uint64_t ms;
	uint32_t from_dev; /* A: where from */
	uint64_t from_sector;
	uint16_t error; /* C */
};

/* a bio expected from done() */
struct texp {
	uint32_t dev;
	uint64_t sector;
	uint32_t nsec;
	uint32_t flags;
	uint32_t pieces, requeues;
	int64_t q, d, c; /* ms, or NONE */
	uint16_t error;
	uint32_t from_dev;
	uint64_t from_sector;
};

struct got {
	struct btt_bio *b;
	size_t n, cap;
};

static void on_done(void *ctx, const struct btt_bio *b)
{
	struct got *g = ctx;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->b = realloc(g->b, g->cap * sizeof(*g->b));
		assert_non_null(g->b);
	}
	g->b[g->n++] = *b;
}

static unsigned int code_of(char k)
{
	switch (k) {
	case 'Q':
		return BLK_TA_QUEUE;
	case 'X':
		return BLK_TA_SPLIT;
	case 'A':
		return BLK_TA_REMAP;
	case 'M':
		return BLK_TA_BACKMERGE;
	case 'F':
		return BLK_TA_FRONTMERGE;
	case 'G':
		return BLK_TA_GETRQ;
	case 'I':
		return BLK_TA_INSERT;
	case 'D':
		return BLK_TA_ISSUE;
	case 'R':
		return BLK_TA_REQUEUE;
	case 'C':
		return BLK_TA_COMPLETE;
	default:
		fail_msg("no event '%c'", k);
		return 0;
	}
}

static void feed(struct bios *s, const struct tev *t)
{
	unsigned char pdu[16];
	struct blk_event ev = {
		.time = t->ms * MS,
		.sector = t->sector,
		.action = code_of(t->k) | BLK_TC_ACT(BLK_TC_READ),
		.bytes = t->nsec << 9,
		.pid = 100,
		.device = t->dev,
		.error = t->error,
		.version = 7,
	};

	if (t->k == 'A') {
		for (int i = 0; i < 4; i++) {
			pdu[i] = (unsigned char)(t->from_dev >> (24 - 8 * i));
			pdu[4 + i] = (unsigned char)(t->dev >> (24 - 8 * i));
		}
		for (int i = 0; i < 8; i++)
			pdu[8 + i] = (unsigned char)(t->from_sector >> (56 - 8 * i));
		ev.pdu = pdu;
		ev.pdu_len = sizeof(pdu);
	} else if (t->k == 'X') {
		/* the block layer's: the front piece, where the rest starts; dm's (XD()): the
		 * rest, its own sector */
		uint64_t s2 = t->from_dev ? t->from_sector : t->sector + t->nsec;

		for (int i = 0; i < 8; i++)
			pdu[i] = (unsigned char)(s2 >> (56 - 8 * i));
		ev.pdu = pdu;
		ev.pdu_len = 8;
	}
	assert_int_equal(bios_event(s, &ev), 0);
}

static uint64_t ms_or_none(int64_t ms)
{
	return ms == NONE ? NO_TIME : (uint64_t)ms * MS;
}

struct tcase {
	const char *name;
	const struct tev *ev;
	size_t nev;
	const struct texp *exp;
	size_t nexp;
};

/* the events, whole (the compiler wants every field) */
#define E(k, dev, s, n, ms)               \
	{                                 \
		k, dev, s, n, ms, 0, 0, 0 \
	}
#define EA(dev, s, n, ms, fd, fs)             \
	{                                     \
		'A', dev, s, n, ms, fd, fs, 0 \
	}
#define XD(dev, s, n, ms)                 \
	{                                 \
		'X', dev, s, n, ms, 1, s, 0 \
	}
#define ERR(dev, s, n, ms, err)               \
	{                                     \
		'C', dev, s, n, ms, 0, 0, err \
	}
/* the bios expected: B() without an error or a remap */
#define B(dev, s, n, fl, p, r, q, d, c)               \
	{                                             \
		dev, s, n, fl, p, r, q, d, c, 0, 0, 0 \
	}
#define BX(dev, s, n, fl, p, r, q, d, c, err, fd, fs)     \
	{                                                 \
		dev, s, n, fl, p, r, q, d, c, err, fd, fs \
	}
#define EV(...) ((const struct tev[]){__VA_ARGS__})
#define EXP(...) ((const struct texp[]){__VA_ARGS__})
#define CASE(nm, evs, exps)                                                                  \
	{                                                                                    \
		.name = nm, .ev = evs, .nev = sizeof(evs) / sizeof(struct tev), .exp = exps, \
		.nexp = sizeof(exps) / sizeof(struct texp)                                   \
	}

static const struct tcase cases[] = {
	CASE("plain Q G I D C",
	     EV(E('Q', SDA, 0, 8, 1), E('G', SDA, 0, 8, 1), E('I', SDA, 0, 8, 1),
		E('D', SDA, 0, 8, 2), E('C', SDA, 0, 8, 3)),
	     EXP(B(SDA, 0, 8, 0, 1, 0, 1, 2, 3))),
	CASE("split in 4, completed out of order: done once, at the last C",
	     EV(E('Q', SDA, 0, 64, 1), E('X', SDA, 0, 16, 1), E('X', SDA, 16, 16, 1),
		E('X', SDA, 32, 16, 1), E('D', SDA, 0, 16, 2), E('D', SDA, 16, 16, 3),
		E('D', SDA, 32, 16, 4), E('D', SDA, 48, 16, 5), E('C', SDA, 32, 16, 6),
		E('C', SDA, 0, 16, 7), E('C', SDA, 48, 16, 8), E('C', SDA, 16, 16, 9)),
	     EXP(B(SDA, 0, 64, BTT_BIO_SPLIT, 4, 0, 1, 2, 9))),
	CASE("3 bios back-merged into one request: each done at its C",
	     EV(E('Q', SDA, 0, 8, 1), E('G', SDA, 0, 8, 1), E('Q', SDA, 8, 8, 2),
		E('M', SDA, 8, 8, 2), E('Q', SDA, 16, 8, 3), E('M', SDA, 16, 8, 3),
		E('D', SDA, 0, 24, 4), E('C', SDA, 0, 24, 5)),
	     EXP(B(SDA, 0, 8, BTT_BIO_MERGED, 1, 0, 1, 4, 5),
		 B(SDA, 8, 8, BTT_BIO_MERGED, 1, 0, 2, 4, 5),
		 B(SDA, 16, 8, BTT_BIO_MERGED, 1, 0, 3, 4, 5))),
	CASE("a front merge",
	     EV(E('Q', SDA, 8, 8, 1), E('Q', SDA, 0, 8, 2), E('F', SDA, 0, 8, 2),
		E('D', SDA, 0, 16, 3), E('C', SDA, 0, 16, 4)),
	     EXP(B(SDA, 8, 8, BTT_BIO_MERGED, 1, 0, 1, 3, 4),
		 B(SDA, 0, 8, BTT_BIO_MERGED, 1, 0, 2, 3, 4))),
	CASE("a requeue: R, D again, one piece",
	     EV(E('Q', SDA, 0, 8, 1), E('D', SDA, 0, 8, 2), E('R', SDA, 0, 8, 3),
		E('D', SDA, 0, 8, 4), E('C', SDA, 0, 8, 5)),
	     EXP(B(SDA, 0, 8, 0, 1, 1, 1, 2, 5))),
	CASE("a bio in 2 pieces, both requeued: 2 pieces",
	     EV(E('Q', SDA, 0, 16, 1), E('X', SDA, 0, 8, 1), E('D', SDA, 0, 8, 2),
		E('D', SDA, 8, 8, 2), E('R', SDA, 0, 8, 3), E('R', SDA, 8, 8, 3),
		E('D', SDA, 8, 8, 4), E('D', SDA, 0, 8, 4), E('C', SDA, 0, 16, 5)),
	     EXP(B(SDA, 0, 16, BTT_BIO_SPLIT, 2, 2, 1, 2, 5))),
	CASE("Q-less D and C (-a issue -a complete)",
	     EV(E('D', SDA, 100, 8, 1), E('C', SDA, 100, 8, 2)),
	     EXP(B(SDA, 100, 8, BTT_BIO_NO_Q, 1, 0, NONE, 1, 2))),
	CASE("a C alone", EV(E('C', SDA, 200, 8, 1)),
	     EXP(B(SDA, 200, 8, BTT_BIO_NO_Q | BTT_BIO_NO_D, 0, 0, NONE, NONE, 1))),
	CASE("partial completions, the error kept",
	     EV(E('Q', SDA, 0, 16, 1), E('D', SDA, 0, 16, 2), E('C', SDA, 0, 4, 3),
		ERR(SDA, 4, 4, 4, 5), E('C', SDA, 8, 8, 5)),
	     EXP(BX(SDA, 0, 16, 0, 1, 0, 1, 2, 5, 5, 0, 0))),
	CASE("two bios in flight at the same sectors: the older first",
	     EV(E('Q', SDA, 0, 8, 1), E('D', SDA, 0, 8, 2), E('Q', SDA, 0, 8, 3),
		E('D', SDA, 0, 8, 4), E('C', SDA, 0, 8, 5), E('C', SDA, 0, 8, 6)),
	     EXP(B(SDA, 0, 8, 0, 1, 0, 1, 2, 5), B(SDA, 0, 8, 0, 1, 0, 3, 4, 6))),
	CASE("a C goes to the bio issued before one inside it that is not",
	     EV(E('Q', SDA, 0, 16, 1), E('X', SDA, 0, 8, 1), E('D', SDA, 0, 8, 2),
		E('Q', SDA, 0, 8, 3), E('C', SDA, 0, 8, 4), E('D', SDA, 8, 8, 5),
		E('C', SDA, 8, 8, 6), E('D', SDA, 0, 8, 7), E('C', SDA, 0, 8, 8)),
	     EXP(B(SDA, 0, 16, BTT_BIO_SPLIT, 2, 0, 1, 2, 6), B(SDA, 0, 8, 0, 1, 0, 3, 7, 8))),
	CASE("a D larger than the bios it holds: the rest has no Q",
	     EV(E('Q', SDA, 8, 8, 1), E('D', SDA, 0, 24, 2), E('C', SDA, 0, 24, 3)),
	     EXP(B(SDA, 8, 8, BTT_BIO_MERGED, 1, 0, 1, 2, 3),
		 B(SDA, 0, 8, BTT_BIO_NO_Q | BTT_BIO_MERGED, 1, 0, NONE, 2, 3),
		 B(SDA, 16, 8, BTT_BIO_NO_Q | BTT_BIO_MERGED, 1, 0, NONE, 2, 3))),
	CASE("a bio inside a larger one",
	     EV(E('Q', SDA, 0, 64, 1), E('Q', SDA, 16, 8, 2), E('D', SDA, 16, 8, 3),
		E('C', SDA, 16, 8, 4), E('D', SDA, 0, 64, 5), E('C', SDA, 0, 64, 6)),
	     EXP(B(SDA, 16, 8, 0, 1, 0, 2, 3, 4), B(SDA, 0, 64, 0, 1, 0, 1, 5, 6))),
	CASE("a remap, then the Q on the lower device",
	     EV(E('Q', DM, 0, 8, 1), EA(SDA, 2048, 8, 1, DM, 0), E('Q', SDA, 2048, 8, 1),
		E('D', SDA, 2048, 8, 2), E('C', SDA, 2048, 8, 3), E('C', DM, 0, 8, 3)),
	     EXP(BX(SDA, 2048, 8, BTT_BIO_REMAPPED, 1, 0, 1, 2, 3, 0, DM, 0),
		 B(DM, 0, 8, BTT_BIO_NO_D, 0, 0, 1, NONE, 3))),
	CASE("dm's split: the bio cut to its rest, its one C over the rest",
	     EV(E('Q', DM, 32640, 256, 1), XD(DM, 32768, 128, 1), E('C', DM, 32768, 128, 5)),
	     EXP(B(DM, 32640, 256, BTT_BIO_SPLIT | BTT_BIO_NO_D, 0, 0, 1, NONE, 5))),
	CASE("dm's split twice (3 targets), then the C",
	     EV(E('Q', DM, 0, 300, 1), XD(DM, 100, 200, 1), XD(DM, 200, 100, 2),
		E('C', DM, 200, 100, 6)),
	     EXP(B(DM, 0, 300, BTT_BIO_SPLIT | BTT_BIO_NO_D, 0, 0, 1, NONE, 6))),
	CASE("dm onto a partition: its A, the partition's A, the bio from dm",
	     EV(E('Q', DM, 32640, 8, 1), EA(SDA, 32640, 8, 1, DM, 32640),
		EA(SDA, 34688, 8, 1, SDA1, 32640), E('Q', SDA, 34688, 8, 1),
		E('D', SDA, 34688, 8, 2), E('C', SDA, 34688, 8, 3), E('C', DM, 32640, 8, 3)),
	     EXP(BX(SDA, 34688, 8, BTT_BIO_REMAPPED, 1, 0, 1, 2, 3, 0, DM, 32640),
		 B(DM, 32640, 8, BTT_BIO_NO_D, 0, 0, 1, NONE, 3))),
	CASE("bios_finish(): those in flight, oldest first",
	     EV(E('Q', SDA, 0, 8, 1), E('Q', SDA, 100, 8, 2), E('D', SDA, 100, 8, 3),
		E('C', SDA, 100, 4, 4), E('E', 0, 0, 0, 0)),
	     EXP(B(SDA, 0, 8, BTT_BIO_UNFINISHED | BTT_BIO_NO_D, 0, 0, 1, NONE, NONE),
		 B(SDA, 100, 8, BTT_BIO_UNFINISHED, 1, 0, 2, 3, 4))),
	CASE("devices kept apart",
	     EV(E('Q', SDA, 0, 8, 1), E('Q', SDB, 0, 8, 2), E('D', SDB, 0, 8, 3),
		E('C', SDB, 0, 8, 4), E('E', 0, 0, 0, 0)),
	     EXP(B(SDB, 0, 8, 0, 1, 0, 2, 3, 4),
		 B(SDA, 0, 8, BTT_BIO_UNFINISHED | BTT_BIO_NO_D, 0, 0, 1, NONE, NONE))),
	CASE("0-byte flushes ignored",
	     EV(E('Q', SDA, 0, 0, 1), E('G', SDA, 0, 0, 1), E('D', SDA, 0, 0, 2),
		E('C', SDA, 0, 0, 3), E('E', 0, 0, 0, 0)),
	     EXP(B(0, 0, 0, 0, 0, 0, 0, 0, 0))),
	CASE("a bio in flight for over BIOS_STALE_NS is given up at the next event",
	     EV(E('Q', SDA, 0, 8, 1), E('D', SDA, 0, 8, 2), E('Q', SDA, 0, 8, 2 + 61000),
		E('D', SDA, 0, 8, 3 + 61000), E('C', SDA, 0, 8, 4 + 61000)),
	     EXP(B(SDA, 0, 8, BTT_BIO_UNFINISHED, 1, 0, 1, 2, NONE),
		 B(SDA, 0, 8, 0, 1, 0, 2 + 61000, 3 + 61000, 4 + 61000))),
};

static void check_case(const struct tcase *tc)
{
	struct got g = {0};
	struct bios *s = bios_new(on_done, &g);
	size_t nexp = tc->nexp;

	assert_non_null(s);
	if (nexp == 1 && tc->exp[0].nsec == 0)
		nexp = 0; /* the empty table */
	for (size_t i = 0; i < tc->nev; i++) {
		if (tc->ev[i].k == 'E')
			bios_finish(s);
		else
			feed(s, &tc->ev[i]);
	}
	if (g.n != nexp)
		fail_msg("%s: %zu bios, %zu expected", tc->name, g.n, nexp);
	for (size_t i = 0; i < nexp; i++) {
		const struct texp *e = &tc->exp[i];
		const struct btt_bio *b = &g.b[i];

		if (b->device != e->dev || b->sector != e->sector || b->nsec != e->nsec ||
		    b->flags != e->flags || b->pieces != e->pieces || b->requeues != e->requeues ||
		    b->t_q != ms_or_none(e->q) || b->t_first_d != ms_or_none(e->d) ||
		    b->t_last_c != ms_or_none(e->c) || b->error != e->error ||
		    b->from_device != e->from_dev || b->from_sector != e->from_sector)
			fail_msg(
				"%s: bio %zu: dev %x %llu+%u flags %#x pieces %u requeues %u q %lld "
				"d %lld c %lld error %u from %x %llu",
				tc->name, i, b->device, (unsigned long long)b->sector, b->nsec,
				b->flags, b->pieces, b->requeues,
				b->t_q == NO_TIME ? -1LL : (long long)(b->t_q / MS),
				b->t_first_d == NO_TIME ? -1LL : (long long)(b->t_first_d / MS),
				b->t_last_c == NO_TIME ? -1LL : (long long)(b->t_last_c / MS),
				b->error, b->from_device, (unsigned long long)b->from_sector);
		assert_int_equal(b->pid, e->flags & BTT_BIO_NO_Q ? 0 : 100);
	}
	/* nothing else left in flight */
	bios_finish(s);
	if (g.n != nexp)
		fail_msg("%s: %zu bios left in flight", tc->name, g.n - nexp);
	assert_int_equal(bios_counts(s)->in_flight, 0);
	/* each C counted for one bio: the device's completions, merged requests once */
	uint64_t nc = 0;

	for (size_t i = 0; i < g.n; i++)
		nc += g.b[i].completions;
	if (nc != bios_counts(s)->completions)
		fail_msg("%s: %llu completions counted over the bios, %llu C events", tc->name,
			 (unsigned long long)nc, (unsigned long long)bios_counts(s)->completions);
	bios_free(s);
	free(g.b);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

/* the limits: the oldest given up when the most are kept, or when stale */
static void test_limits(void **state)
{
	static const struct tev ev[] = {
		E('Q', SDA, 0, 8, 1),	E('Q', SDA, 8, 8, 2),	E('Q', SDA, 16, 8, 3),
		E('Q', SDA, 24, 8, 4),	E('Q', SDA, 32, 8, 5),	E('D', SDA, 32, 8, 6),
		E('C', SDA, 32, 8, 7),	E('Q', SDA, 40, 8, 20), /* 1 to 4: stale by 20 ms */
		E('C', SDA, 40, 8, 21),
	};
	struct got g = {0};
	struct bios *s = bios_new(on_done, &g);

	(void)state;
	assert_non_null(s);
	bios_set_limits(s, 10 * MS, 3);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		feed(s, &ev[i]);
	/* the 4th Q gives up the 1st, the 5th the 2nd; the 7th Q (at 20 ms) the 3rd and 4th */
	assert_int_equal(g.n, 6);
	for (size_t i = 0; i < 6; i++) {
		static const uint64_t sector[] = {0, 8, 32, 16, 24, 40};
		static const uint32_t flags[] = {
			BTT_BIO_UNFINISHED | BTT_BIO_NO_D,
			BTT_BIO_UNFINISHED | BTT_BIO_NO_D,
			0,
			BTT_BIO_UNFINISHED | BTT_BIO_NO_D,
			BTT_BIO_UNFINISHED | BTT_BIO_NO_D,
			BTT_BIO_NO_D,
		};

		assert_int_equal(g.b[i].sector, sector[i]);
		assert_int_equal(g.b[i].flags, flags[i]);
	}
	assert_int_equal(bios_counts(s)->unfinished, 4);
	assert_int_equal(bios_counts(s)->max_in_flight, 4); /* a Q, then the oldest given up */
	assert_int_equal(bios_counts(s)->in_flight, 0);
	assert_int_equal(bios_counts(s)->completions, 2); /* one each for 32+8 and 40+8 */
	bios_free(s);
	free(g.b);
}

/* the counts of a trace with one of each */
static void test_counts(void **state)
{
	static const struct tev ev[] = {
		E('Q', SDA, 0, 64, 1),	 E('X', SDA, 0, 32, 1),	 E('Q', SDA, 64, 8, 2),
		E('M', SDA, 64, 8, 2),	 E('D', SDA, 0, 32, 3),	 E('D', SDA, 32, 40, 3),
		E('R', SDA, 32, 40, 4),	 E('D', SDA, 32, 40, 5), E('C', SDA, 0, 72, 6),
		EA(SDB, 8, 8, 7, DM, 0), E('Q', SDB, 8, 8, 7),	 E('D', SDB, 500, 8, 8),
		E('C', SDB, 900, 8, 9),	 E('D', SDB, 0, 0, 9),	 E('C', SDB, 0, 0, 9),
	};
	struct got g = {0};
	struct bios *s = bios_new(on_done, &g);
	const struct bios_counts *c;

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		feed(s, &ev[i]);
	c = bios_counts(s);
	assert_int_equal(c->in_flight, 2); /* the Q at SDB 8, the Q-less D at 500 */
	bios_finish(s);
	c = bios_counts(s);
	assert_int_equal(c->bios, 5);
	assert_int_equal(c->requests, 4);
	assert_int_equal(c->completions, 2);
	assert_int_equal(c->splits, 1);
	assert_int_equal(c->merges, 1);
	assert_int_equal(c->requeues, 1);
	assert_int_equal(c->remaps, 1);
	assert_int_equal(c->no_q, 2);
	assert_int_equal(c->unfinished, 2);
	assert_int_equal(c->in_flight, 0);
	assert_int_equal(c->max_in_flight, 3); /* with the lone C at 900, at once done */
	assert_int_equal(g.n, 5);
	bios_free(s);
	free(g.b);
}

/* ---- a random workload: bios split, merged, completed in pieces, out of order ---- */

struct rbio {
	uint64_t sector;
	uint32_t nsec;
	uint64_t t_q, t_d, t_c;
	uint32_t pieces;
	int done;
};

struct rworld {
	struct rbio *b;
	size_t n;
	uint64_t now; /* the time of the event being fed */
	size_t ndone;
	uint64_t completions; /* counted over the bios */
};

static struct rbio *rfind(struct rworld *w, uint64_t sector)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->b[mid].sector < sector)
			lo = mid + 1;
		else
			hi = mid;
	}
	assert_true(lo < w->n && w->b[lo].sector == sector);
	return &w->b[lo];
}

static void r_done(void *ctx, const struct btt_bio *b)
{
	struct rworld *w = ctx;
	struct rbio *r = rfind(w, b->sector);

	assert_false(r->done);
	r->done = 1;
	w->ndone++;
	w->completions += b->completions;
	assert_int_equal(b->nsec, r->nsec);
	assert_int_equal(b->flags & (BTT_BIO_NO_Q | BTT_BIO_NO_D | BTT_BIO_UNFINISHED), 0);
	assert_int_equal(b->pieces, r->pieces);
	assert_int_equal(b->t_q, r->t_q);
	assert_int_equal(b->t_first_d, r->t_d);
	assert_int_equal(b->t_last_c, r->t_c);
	assert_int_equal(b->t_last_c, w->now); /* done at its last C */
}

struct req {
	uint64_t s, e;
	uint64_t t;
};

static void shuffle(struct req *r, size_t n, uint64_t *rng)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = test_xorshift(rng) % i;
		struct req t = r[i - 1];

		r[i - 1] = r[j];
		r[j] = t;
	}
}

static void rfeed(struct bios *s, struct rworld *w, char k, uint64_t a, uint64_t e, uint64_t t)
{
	unsigned char pdu[8] = {0};
	struct blk_event ev = {
		.time = t,
		.sector = a,
		.action = code_of(k) | BLK_TC_ACT(BLK_TC_WRITE),
		.bytes = (uint32_t)(e - a) << 9,
		.pid = 100,
		.device = SDA,
		.version = 7,
		.pdu = pdu,
		.pdu_len = 8,
	};

	w->now = t;
	assert_int_equal(bios_event(s, &ev), 0);
}

/* what the bios overlapping request @q see of its D or C (@k) */
static void expect(struct rworld *w, const struct req *q, char k)
{
	size_t lo = 0, hi = w->n;

	/* the last bio starting at or before q->s */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->b[mid].sector <= q->s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (struct rbio *r = &w->b[lo ? lo - 1 : 0]; r < w->b + w->n && r->sector < q->e; r++) {
		if (r->sector + r->nsec <= q->s)
			continue;
		if (k == 'D') {
			r->pieces++;
			if (r->t_d == NO_TIME)
				r->t_d = q->t;
		} else if (r->t_c == NO_TIME || q->t > r->t_c) {
			r->t_c = q->t;
		}
	}
}

/*
 * @nbatch batches of up to @batch bios (of @batch when @fixed), adjacent or not; each
 * batch's requests: a bio cut in up to 4 pieces, or a run of adjacent whole bios merged;
 * issued in random order, and completed (some in two parts) in random order after the
 * next batch was issued.
 */
static void random_run(uint64_t seed, size_t nbatch, size_t batch, int fixed)
{
	struct rworld w = {0};
	struct bios *s = bios_new(r_done, &w);
	uint64_t rng = seed, sector = 0, t = 1;
	struct req *rq = NULL, *prev = NULL, *cq = NULL;
	size_t nrq = 0, nprev = 0, cap = 0;

	assert_non_null(s);
	w.b = calloc(nbatch * batch, sizeof(*w.b));
	cap = 4 * batch + 1;
	rq = calloc(cap, sizeof(*rq));
	prev = calloc(cap, sizeof(*prev));
	cq = calloc(2 * cap, sizeof(*cq));
	assert_true(w.b && rq && prev && cq);
	for (size_t k = 0; k <= nbatch; k++) {
		size_t first = w.n, nb = k < nbatch ? 1 + test_xorshift(&rng) % batch : 0;
		struct req *tmp;
		size_t ncq = 0;

		if (fixed && k < nbatch)
			nb = batch;

		/* queue */
		for (size_t i = 0; i < nb; i++) {
			struct rbio *r = &w.b[w.n++];

			if (test_xorshift(&rng) % 3 == 0)
				sector += 1 + test_xorshift(&rng) % 64;
			r->sector = sector;
			r->nsec = 1 + (uint32_t)(test_xorshift(&rng) % 256);
			r->t_q = t;
			r->t_d = r->t_c = NO_TIME;
			sector += r->nsec;
			rfeed(s, &w, 'Q', r->sector, r->sector + r->nsec, t++);
		}
		/* the requests */
		nrq = 0;
		for (size_t i = first; i < w.n;) {
			struct rbio *r = &w.b[i];
			unsigned int p = 1 + (unsigned int)(test_xorshift(&rng) % 4);

			if (p > 1 && r->nsec >= p) {
				uint64_t a = r->sector;

				rfeed(s, &w, 'X', r->sector, r->sector + 1, t);
				for (unsigned int j = 1; j <= p; j++) {
					uint64_t e = j == p ? r->sector + r->nsec
							    : r->sector + r->nsec * j / p;

					if (e > a)
						rq[nrq++] = (struct req){a, e, 0};
					a = e;
				}
				i++;
				continue;
			}
			/* whole bios, merged while adjacent (at most 3) */
			rq[nrq] = (struct req){r->sector, r->sector + r->nsec, 0};
			for (i++; i < w.n && i - first < nb && w.b[i].sector == rq[nrq].e &&
				  test_xorshift(&rng) % 2;
			     i++)
				rq[nrq].e = w.b[i].sector + w.b[i].nsec;
			nrq++;
		}
		shuffle(rq, nrq, &rng);
		for (size_t i = 0; i < nrq; i++) {
			rq[i].t = t;
			expect(&w, &rq[i], 'D');
			rfeed(s, &w, 'D', rq[i].s, rq[i].e, t++);
		}
		/* the previous batch completes, some requests in two parts */
		for (size_t i = 0; i < nprev; i++) {
			if (prev[i].e - prev[i].s > 1 && test_xorshift(&rng) % 4 == 0) {
				uint64_t mid = prev[i].s + (prev[i].e - prev[i].s) / 2;

				cq[ncq++] = (struct req){prev[i].s, mid, 0};
				cq[ncq++] = (struct req){mid, prev[i].e, 0};
			} else {
				cq[ncq++] = prev[i];
			}
		}
		shuffle(cq, ncq, &rng);
		for (size_t i = 0; i < ncq; i++) {
			cq[i].t = t + i;
			expect(&w, &cq[i], 'C');
		}
		for (size_t i = 0; i < ncq; i++)
			rfeed(s, &w, 'C', cq[i].s, cq[i].e, t++);
		tmp = prev;
		prev = rq;
		rq = tmp;
		nprev = nrq;
	}
	assert_int_equal(w.ndone, w.n);
	assert_int_equal(bios_counts(s)->in_flight, 0);
	assert_int_equal(bios_counts(s)->bios, w.n);
	assert_int_equal(w.completions, bios_counts(s)->completions);
	bios_free(s);
	free(w.b);
	free(rq);
	free(prev);
	free(cq);
}

static void test_random(void **state)
{
	(void)state;
	random_run(0x9E3779B97F4A7C15ull, 200, 300, 0);
	random_run(12345, 2000, 8, 0);
}

/* 100,000 bios in flight at once (writeback), then issued and completed */
static void test_many_in_flight(void **state)
{
	(void)state;
	random_run(777, 1, 100000, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),	       cmocka_unit_test(test_counts),
		cmocka_unit_test(test_limits),	       cmocka_unit_test(test_random),
		cmocka_unit_test(test_many_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
