// SPDX-License-Identifier: GPL-2.0
/*
 * btt's "I/O wait by process" (btt/iowait/waits.c), a subscriber of the I/O model: events and
 * I/O wait notes are fed to a model with only this subscriber, and the section it prints
 * is compared with the one worked out by hand (the rules: btt/iowait/waits.h, doc/btt.1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/event.h"
#include "blk/iowait.h"
#include "blk/trace.h"
#include "btt.h"
#include "iowait/waits.h"

#define SDA BLK_MKDEV(8, 0)
#define SDB BLK_MKDEV(8, 16)
#define MS 1000000ull /* ns */

struct world {
	struct btt b;
	struct waits *waits;
	uint32_t seq;
};

static void world_init(struct world *w, int bounded, double t_start, double t_end)
{
	struct iomodel_opts mo = {.time_bounded = bounded, .t_start = t_start, .t_end = t_end};

	memset(w, 0, sizeof(*w));
	w->b.opts.time_bounded = bounded;
	w->b.opts.t_start = t_start;
	w->b.opts.t_end = t_end;
	devs_init(&w->b.devs, NULL);
	w->b.model = iomodel_new(&w->b.devs, &mo);
	w->b.view = (struct btt_view){.opts = &w->b.opts, .devs = &w->b.devs, .model = w->b.model};
	w->waits = waits_new(&w->b.view);
}

static void world_free(struct world *w)
{
	waits_free(w->waits);
	iomodel_free(w->b.model);
	devs_release(&w->b.devs);
}

/* an I/O event (Q, D or C) at @t ns */
static void io(struct world *w, uint64_t t, unsigned int code, uint32_t dev, uint64_t sector,
	       uint32_t pid)
{
	struct blk_event ev = {
		.time = t,
		.sector = sector,
		.action = code | BLK_TC_ACT(BLK_TC_READ) |
			  BLK_TC_ACT(code == BLK_TA_QUEUE   ? BLK_TC_QUEUE
				     : code == BLK_TA_ISSUE ? BLK_TC_ISSUE
							    : BLK_TC_COMPLETE),
		.sequence = ++w->seq,
		.bytes = 4096,
		.pid = pid,
		.device = dev,
		.version = 7,
	};

	iomodel_event(w->b.model, &ev);
}

/* a wait note of thread @tid of @tgid from @s to @e ns */
static void wait(struct world *w, uint64_t s, uint64_t e, uint32_t tgid, uint32_t tid,
		 const char *comm, unsigned int flags, uint32_t io_dev)
{
	struct blk_iowait iw = {
		.end = e,
		.duration = e - s,
		.tgid = tgid,
		.tid = tid,
		.device = SDA,
		.io_dev = io_dev,
		.sleep_cpu = 0,
		.waker_cpu = 1,
		.source = BLK_IOWAIT_SRC_SCHED,
		.flags = flags,
	};
	struct blk_iowait_pdu pdu;
	struct blk_event ev;

	snprintf(iw.comm, sizeof(iw.comm), "%s", comm);
	blk_iowait_encode(&iw, &pdu, &ev);
	iomodel_event(w->b.model, &ev);
}

static char *section(struct world *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	iomodel_finish(w->b.model);
	waits_print(w->waits, f);
	fclose(f);
	return buf;
}

#define F_IO (BLK_IOWAIT_F_IO | BLK_IOWAIT_F_IO_CHECKED)
#define HEAD                                                                \
	"==================== I/O wait by process ====================\n\n" \
	"     PID COMMAND          |   WAITS      TOTAL(s)        P50(s)        P99(s)        MAX(s) |    OWN I/O(s)     OWN\n"
#define DEVHEAD \
	"\n       DEV |   WAITS      TOTAL(s) | MOST PID COMMAND            WAITS      TOTAL(s)   SHARE\n"
#define SCHED                   \
	"\nWaits from: sched\n" \
	"  (sched: uninterruptible sleeps during which the task had an I/O of its own in flight)\n"

/*
 * Thread 10: reads queued at 1 ms (completed at 6 ms, after the wait) and 3 ms (completed
 * at 4 ms); it waits from 2 to 5 ms: all 3 ms are its own I/O's (the first in flight at the
 * end). Thread 20's read runs from 9 to 11 ms, its wait from 10 to 14 ms: 1 ms own, 3 ms
 * someone else's; its thread 22 waits 1 ms with no I/O of its own, the tracer having seen
 * one in flight on sdb; thread 21 (never waiting, not the leader) reads on sdb: not
 * counted for process 20. Process 30 waits 6 ms, ended by no I/O. Process 20's p50 is its
 * 1 ms wait's bucket top (1007615 ns: 2^19..2^20 in 64 buckets of 8192 ns).
 */
static void test_own_and_others(void **state)
{
	struct world w;
	char *got;

	(void)state;
	world_init(&w, 0, 0, 0);
	io(&w, 1 * MS, BLK_TA_QUEUE, SDA, 0, 10);
	io(&w, 1 * MS + 10, BLK_TA_ISSUE, SDA, 0, 10);
	io(&w, 3 * MS, BLK_TA_QUEUE, SDA, 100, 10);
	io(&w, 3 * MS + 500000, BLK_TA_ISSUE, SDA, 100, 10);
	io(&w, 4 * MS, BLK_TA_COMPLETE, SDA, 100, 0);
	wait(&w, 2 * MS, 5 * MS, 10, 10, "reader", F_IO, SDA);
	io(&w, 6 * MS, BLK_TA_COMPLETE, SDA, 0, 0);
	io(&w, 9 * MS, BLK_TA_QUEUE, SDA, 200, 20);
	io(&w, 11 * MS, BLK_TA_COMPLETE, SDA, 200, 0);
	io(&w, 12 * MS, BLK_TA_QUEUE, SDB, 0, 21);
	io(&w, 13 * MS, BLK_TA_COMPLETE, SDB, 0, 0);
	wait(&w, 10 * MS, 14 * MS, 20, 20, "db", F_IO, SDA);
	wait(&w, 14 * MS, 15 * MS, 20, 22, "db-helper", F_IO, SDB);
	wait(&w, 20 * MS, 26 * MS, 30, 30, "other", 0, 0);
	got = section(&w);
	assert_string_equal(
		got, HEAD
		"      30 other            |       1   0.006000000   0.006000000   0.006000000   0.006000000 |   0.000000000   0.00%\n"
		"      20 db               |       2   0.005000000   0.001007615   0.004000000   0.004000000 |   0.001000000  20.00%\n"
		"         (  8,  0)        |       1 I/Os  Q2C avg   0.002000000  D2C avg             -\n"
		"      10 reader           |       1   0.003000000   0.003000000   0.003000000   0.003000000 |   0.003000000 100.00%\n"
		"         (  8,  0)        |       2 I/Os  Q2C avg   0.003000000  D2C avg   0.002749995\n" DEVHEAD
		" (  8,  0) |       2   0.007000000 |       20 db                     1   0.004000000  57.14%\n"
		" (  8, 16) |       1   0.001000000 |       20 db                     1   0.001000000 100.00%\n" SCHED
		"1 waits ended by no I/O of a traced device (in no device's line)\n\n");
	free(got);
	world_free(&w);
}

/*
 * A process is named after its leader's latest wait: one that waited as "sh" (a shell's
 * child before exec) and then as "dd" is dd; a thread's name (tid 41) does not rename it
 * once the leader has waited, and names it until then (process 50).
 */
static void test_names(void **state)
{
	struct world w;
	char *got;

	(void)state;
	world_init(&w, 0, 0, 0);
	wait(&w, 1 * MS, 2 * MS, 40, 40, "sh", 0, 0);
	wait(&w, 3 * MS, 5 * MS, 40, 40, "dd", 0, 0);
	wait(&w, 6 * MS, 9 * MS, 40, 41, "worker", 0, 0);
	wait(&w, 10 * MS, 18 * MS, 50, 51, "helper", 0, 0);
	got = section(&w);
	assert_non_null(strstr(got, "      40 dd               |       3"));
	assert_non_null(strstr(got, "      50 helper           |       1"));
	assert_null(strstr(got, " sh "));
	free(got);
	world_free(&w);
}

/*
 * A second Q at the same sector replaces the first: the first is no longer in flight (the
 * wait from 22 to 23 ms is covered by the second, queued at 22.5 ms: half of it). A sleep
 * the tracer checked and found without an I/O (--iowait-all) is not counted, nor a note
 * whose payload is damaged, nor a wait after the -T window's end (-t 0 -T 0.05). Both bios
 * count as queued; the Q2C is the completed second's.
 */
static void test_replaced_no_io_bad_window(void **state)
{
	struct world w;
	struct blk_iowait iw = {.end = 30 * MS, .duration = MS, .tgid = 40, .tid = 40};
	struct blk_iowait_pdu pdu;
	struct blk_event ev;
	char *got;

	(void)state;
	world_init(&w, 1, 0, 0.05);
	io(&w, 20 * MS, BLK_TA_QUEUE, SDA, 100, 40);
	io(&w, 22 * MS + 500000, BLK_TA_QUEUE, SDA, 100, 40);
	wait(&w, 22 * MS, 23 * MS, 40, 40, "replacer", F_IO, SDA);
	io(&w, 24 * MS, BLK_TA_COMPLETE, SDA, 100, 0);
	wait(&w, 25 * MS, 27 * MS, 40, 40, "replacer", BLK_IOWAIT_F_IO_CHECKED, 0);
	blk_iowait_encode(&iw, &pdu, &ev);
	pdu.magic = 0x12345678;
	iomodel_event(w.b.model, &ev);
	wait(&w, 60 * MS, 61 * MS, 40, 40, "replacer", F_IO, SDA);
	got = section(&w);
	assert_string_equal(
		got, HEAD
		"      40 replacer         |       1   0.001000000   0.001000000   0.001000000   0.001000000 |   0.000500000  50.00%\n"
		"         (  8,  0)        |       2 I/Os  Q2C avg   0.001500000  D2C avg             -\n" DEVHEAD
		" (  8,  0) |       1   0.001000000 |       40 replacer               1   0.001000000 100.00%\n"
		/* the sleep of no I/O (25 to 27 ms), as its process's NOT TIED time */
		"\n     PID COMMAND          |   WAITS  ON OTHERS(s) | WOKEN BY COMMAND            WAITS      TOTAL(s) |   NOT TIED(s)\n"
		"      40 replacer         |       0   0.000000000 |        -                                        |   0.002000000\n" SCHED
		"1 sleeps tied to no I/O (blktrace --iowait-all): not counted in WAITS; NOT TIED above\n"
		"1 waits outside the -t/-T window: not counted\n"
		"1 I/O wait notes could not be read (damaged, or a newer version): not counted\n\n");
	free(got);
	world_free(&w);
}

/* p50 and p99 of 100 waits of 1..100 us: the 50th and the 99th, within 1/64 above */
static void test_percentiles(void **state)
{
	struct world w;
	char *got, want[256];

	(void)state;
	world_init(&w, 0, 0, 0);
	io(&w, 0, BLK_TA_QUEUE, SDA, 0, 50);
	for (uint64_t i = 1; i <= 100; i++)
		wait(&w, i * MS, i * MS + i * 1000, 50, 50, "p", F_IO, SDA);
	got = section(&w);
	/* 50 us and 99 us fall in buckets of 512 ns (2^15..2^16 ns in 64): tops 50175, 99327 */
	snprintf(
		want, sizeof(want),
		"      50 p                |     100   0.005050000   0.000050175   0.000099327   0.000100000 |");
	assert_non_null(strstr(got, want));
	free(got);
	world_free(&w);
}

/* without notes: nothing but a line saying so */
static void test_none(void **state)
{
	struct world w;
	char *got;

	(void)state;
	world_init(&w, 0, 0, 0);
	io(&w, MS, BLK_TA_QUEUE, SDA, 0, 1);
	io(&w, 2 * MS, BLK_TA_COMPLETE, SDA, 0, 0);
	assert_false(waits_any(w.waits));
	got = section(&w);
	assert_string_equal(
		got, "==================== I/O wait by process ====================\n\n"
		     "No I/O wait notes in this trace (blktrace --iowait records them).\n\n");
	free(got);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_and_others),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_replaced_no_io_bad_window),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
