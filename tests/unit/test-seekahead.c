// SPDX-License-Identifier: GPL-2.0
/*
 * btt's seek streams read ahead (btt/report/seekahead.c): from a trace file, the Q2Q and
 * D2D statistics of each device, given only to a stream of the same length and fingerprint.
 * The expected streams are worked out here from the events as written, by btt 2.09's rules
 * (seek.c's distance, iomodel.c's choice of events), and their statistics by seekstat.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btt.h"
#include "helpers.h"
#include "report/seek.h"
#include "report/seekahead.h"
#include "report/seekstat.h"

#define NDEV 3
#define MAXV 4096

/* one expected stream */
struct want {
	uint64_t v[MAXV];
	size_t n;
	long long last_start, last_end;
};

struct trace {
	struct tbuf tb;
	struct want w[NDEV][2];
	int culling[NDEV];
	uint32_t seq;
};

static const uint32_t devno[NDEV] = {BLK_MKDEV(8, 0), BLK_MKDEV(8, 16), BLK_MKDEV(253, 0)};

/* btt 2.09's distance (not -a), written out again here */
static uint64_t dist(struct want *w, uint64_t sector, uint32_t bytes)
{
	long long s = (long long)sector, e = s + (long long)(bytes >> 9), d;

	if ((w->last_start <= s && s <= w->last_end) || (w->last_start <= e && e <= w->last_end))
		d = 0;
	else if (s > w->last_end)
		d = s - w->last_end;
	else
		d = s - w->last_start;
	w->last_start = s;
	w->last_end = e;
	return d < 0 ? (uint64_t)-d : (uint64_t)d;
}

/*
 * Add an event; @counts: it belongs to the stream (a Q, or a D after the device's first Q
 * or A), which the caller decides from the rules the test states
 */
static void put(struct trace *t, int dev, uint64_t time, uint32_t code, uint64_t sector,
		uint32_t bytes, int counts)
{
	struct blk_event ev =
		test_event(++t->seq, time, 0, code | BLK_TC_ACT(BLK_TC_READ), sector, bytes);

	ev.device = devno[dev];
	if (code == BLK_TA_REMAP) {
		static unsigned char pdu[16];

		ev.pdu = pdu;
		ev.pdu_len = sizeof(pdu);
	}
	tbuf_add_event(&t->tb, &ev, test_host_be());
	if (counts) {
		struct want *w = &t->w[dev][code == BLK_TA_ISSUE];

		assert_true(w->n < MAXV);
		w->v[w->n++] = dist(w, sector, bytes);
	}
}

static void expected(const struct want *w, uint64_t *fp, struct seekstat_result *res)
{
	struct seekstat *ss = seekstat_new(64); /* small: the temporary file is used too */

	assert_non_null(ss);
	*fp = 0;
	for (size_t i = 0; i < w->n; i++) {
		*fp = seek_fingerprint(*fp, w->v[i]);
		assert_int_equal(seekstat_add(ss, w->v[i]), 0);
	}
	assert_int_equal(seekstat_finish(ss, res), 0);
	seekstat_free(ss);
}

static int two_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= 2;
}

/*
 * A trace of three devices: 8,0 with Qs and Ds (and Cs, notes, pass-through commands and
 * empty Qs, none of which count); 8,16 whose first Ds come before its first Q (not
 * counted); 253,0 whose first D follows an A (counted). Values repeat so that the tree's
 * shape decides the modes.
 */
static void make_trace(struct trace *t, uint64_t seed)
{
	uint64_t time = 1000;

	memset(t, 0, sizeof(*t));
	for (int d = 0; d < NDEV; d++)
		t->culling[d] = 1;
	put(t, 1, time++, BLK_TA_ISSUE, 100, 4096, 0);
	put(t, 2, time++, BLK_TA_REMAP, 500, 4096, 0);
	t->culling[2] = 0;
	for (int i = 0; i < 6000; i++) {
		int d = (int)(test_xorshift(&seed) % NDEV);
		uint64_t sector = (test_xorshift(&seed) % 64) * 8;
		uint32_t bytes = 4096u << (test_xorshift(&seed) % 3);

		time += 1 + test_xorshift(&seed) % 1000;
		switch (test_xorshift(&seed) % 7) {
		case 0:
			put(t, d, time, BLK_TA_ISSUE, sector, bytes, !t->culling[d]);
			break;
		case 1:
			put(t, d, time, BLK_TA_COMPLETE, sector, bytes, 0);
			break;
		case 2:
			put(t, d, time, BLK_TA_QUEUE, sector, 0, 0); /* no bytes: left out */
			break;
		default:
			put(t, d, time, BLK_TA_QUEUE, sector, bytes, 1);
			t->culling[d] = 0;
			break;
		}
	}
	{
		/* a pass-through command and a note: no I/O */
		struct blk_event ev = test_event(++t->seq, time + 1, 0,
						 BLK_TA_QUEUE | BLK_TC_ACT(BLK_TC_PC), 8, 4096);

		tbuf_add_event(&t->tb, &ev, test_host_be());
		ev = test_event(++t->seq, time + 2, 0, BLK_TN_PROCESS | BLK_TC_ACT(BLK_TC_NOTIFY),
				0, 0);
		tbuf_add_event(&t->tb, &ev, test_host_be());
	}
}

static void same_result(const struct seekstat_result *a, const struct seekstat_result *b)
{
	assert_int_equal(a->median, b->median);
	assert_int_equal(a->nmds, b->nmds);
	assert_int_equal(a->most, b->most);
	for (int i = 0; i < a->nmds; i++)
		assert_int_equal(a->modes[i], b->modes[i]);
}

static void test_streams(void **state)
{
	struct trace *t = calloc(1, sizeof(*t));
	struct btt_opts o;
	char path[64];
	struct seekahead *sa;

	(void)state;
	if (!two_cpus())
		skip(); /* the reading ahead needs a second CPU */
	assert_non_null(t);
	make_trace(t, 0x1234567);
	test_write_temp(path, t->tb.p, t->tb.len);
	memset(&o, 0, sizeof(o));
	o.input = path;
	sa = seekahead_start(&o);
	assert_non_null(sa);
	for (int d = 0; d < NDEV; d++)
		for (int k = 0; k < 2; k++) {
			struct seekstat_result want, got;
			uint64_t fp;

			assert_true(t->w[d][k].n > 100);
			expected(&t->w[d][k], &fp, &want);
			/* another stream: another length, or the same length and another order */
			assert_int_equal(
				seekahead_take(sa, devno[d], k, t->w[d][k].n + 1, fp, &got), 0);
			assert_int_equal(
				seekahead_take(sa, devno[d], k, t->w[d][k].n, fp ^ 1, &got), 0);
			assert_int_equal(seekahead_take(sa, devno[d], k, t->w[d][k].n, fp, &got),
					 1);
			same_result(&want, &got);
			free(want.modes);
			free(got.modes);
			/* taken once */
			assert_int_equal(seekahead_take(sa, devno[d], k, t->w[d][k].n, fp, &got),
					 0);
		}
	assert_int_equal(seekahead_take(sa, BLK_MKDEV(9, 9), 0, 1, 0, &(struct seekstat_result){0}),
			 0);
	seekahead_free(sa);
	unlink(path);
	tbuf_free(&t->tb);
	free(t);
}

/* -T: the reading stops at the end time, as the model does */
static void test_time_bound(void **state)
{
	struct trace *t = calloc(1, sizeof(*t));
	struct seekstat_result got = {0};
	struct btt_opts o;
	struct want w = {0};
	char path[64];
	struct seekahead *sa;
	uint64_t fp = 0;

	(void)state;
	if (!two_cpus())
		skip();
	assert_non_null(t);
	/* 8,0's Qs at 1 s, 2 s, 3 s, 4 s: -t 1.5 -T 3.5 keeps the two in the middle */
	for (int i = 1; i <= 4; i++)
		put(t, 0, (uint64_t)i * 1000000000ull, BLK_TA_QUEUE, (uint64_t)i * 1000, 4096, 0);
	test_write_temp(path, t->tb.p, t->tb.len);
	memset(&o, 0, sizeof(o));
	o.input = path;
	o.time_bounded = 1;
	o.t_start = 1.5;
	o.t_end = 3.5;
	fp = seek_fingerprint(fp, dist(&w, 2000, 4096));
	fp = seek_fingerprint(fp, dist(&w, 3000, 4096));
	sa = seekahead_start(&o);
	assert_non_null(sa);
	assert_int_equal(seekahead_take(sa, devno[0], 0, 2, fp, &got), 1);
	assert_int_equal(got.nmds, 2);
	free(got.modes);
	seekahead_free(sa);
	unlink(path);
	tbuf_free(&t->tb);
	free(t);
}

/* no reading ahead where it cannot follow the report: it works the streams out itself */
static void test_not_started(void **state)
{
	struct btt_opts o;
	char path[64];
	struct trace *t = calloc(1, sizeof(*t));

	(void)state;
	assert_non_null(t);
	put(t, 0, 1, BLK_TA_QUEUE, 8, 4096, 0);
	test_write_temp(path, t->tb.p, t->tb.len);
	memset(&o, 0, sizeof(o));
	o.input = "-";
	assert_null(seekahead_start(&o));
	o.input = "/nonexistent/trace.bin";
	assert_null(seekahead_start(&o));
	o.input = "/tmp";
	assert_null(seekahead_start(&o));
	o.input = path;
	o.devices = "8,0";
	assert_null(seekahead_start(&o));
	o.devices = NULL;
	o.exes = "dd";
	assert_null(seekahead_start(&o));
	o.exes = NULL;
	o.perfetto_name = "out.pftrace";
	assert_null(seekahead_start(&o));
	unlink(path);
	tbuf_free(&t->tb);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_time_bound),
		cmocka_unit_test(test_not_started),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
