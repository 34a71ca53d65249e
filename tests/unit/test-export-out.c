// SPDX-License-Identifier: GPL-2.0
/*
 * btt --export's subscriber (btt/export/export-out.c): event streams fed through btt's I/O model
 * into a tsv:DIR export, and the rows compared with lines written by hand: the wall clock
 * of the timestamp note, RWBS, merges, remap origins, the completion's error as -errno, the
 * -D filter, a late timestamp note, the iowait rows of I/O wait notes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk/event.h"
#include "blk/iowait.h"
#include "blk/trace.h"
#include "btt.h"
#include "model/bios.h"
#include "model/clock.h"
#include "export/export-out.h"

#define SDA BLK_MKDEV(8, 0)
#define SDA1 BLK_MKDEV(8, 1)
#define SDB BLK_MKDEV(8, 16)
#define US 1000ull /* ns */
#define MAXEV 64

struct stream {
	struct blk_event ev[MAXEV];
	unsigned char pdu[MAXEV][64];
	size_t n, next;
};

static void add(struct stream *s, uint64_t t, unsigned int code, uint32_t cats, uint32_t dev,
		uint64_t sector, uint32_t nsec, uint16_t error, const void *pdu, uint16_t pdu_len)
{
	struct blk_event *ev = &s->ev[s->n];

	assert_true(s->n < MAXEV && pdu_len <= sizeof(s->pdu[0]));
	if (pdu_len)
		memcpy(s->pdu[s->n], pdu, pdu_len);
	*ev = (struct blk_event){
		.time = t,
		.sector = sector,
		.action = code | BLK_TC_ACT(cats),
		.sequence = (uint32_t)s->n + 1,
		.bytes = nsec << 9,
		.pid = 10,
		.device = dev,
		.error = error,
		.pdu = s->pdu[s->n],
		.pdu_len = pdu_len,
		.version = 7,
	};
	s->n++;
}

/* a request's event at @us microseconds */
static void io(struct stream *s, uint64_t us, unsigned int code, uint32_t cats, uint32_t dev,
	       uint64_t sector, uint32_t nsec)
{
	add(s, us * US, code, cats, dev, sector, nsec, 0, NULL, 0);
}

/* the wall clock @sec.@nsec at trace time @t (the kernel's TN_TIMESTAMP, host order) */
static void timestamp(struct stream *s, uint64_t t, uint32_t sec, uint32_t nsec)
{
	uint32_t w[2] = {sec, nsec};

	add(s, t, BLK_TN_TIMESTAMP, BLK_TC_NOTIFY, SDA, 0, 0, 0, w, sizeof(w));
}

static void remap(struct stream *s, uint64_t us, uint32_t dev, uint64_t sector, uint32_t nsec,
		  uint32_t from_dev, uint64_t from_sector)
{
	unsigned char pdu[16];

	for (int i = 0; i < 4; i++) {
		pdu[i] = (unsigned char)(from_dev >> (24 - 8 * i));
		pdu[4 + i] = (unsigned char)(dev >> (24 - 8 * i));
	}
	for (int i = 0; i < 8; i++)
		pdu[8 + i] = (unsigned char)(from_sector >> (56 - 8 * i));
	add(s, us * US, BLK_TA_REMAP, BLK_TC_READ, dev, sector, nsec, 0, pdu, sizeof(pdu));
}

static int next_ev(void *src, struct blk_event *ev)
{
	struct stream *s = src;

	if (s->next == s->n)
		return 0;
	*ev = s->ev[s->next++];
	return 1;
}

/* an I/O wait note: @w's record (blk_iowait_encode) */
static void wait_note(struct stream *s, const struct blk_iowait *w)
{
	struct blk_iowait_pdu pdu;
	struct blk_event ev;

	blk_iowait_encode(w, &pdu, &ev);
	add(s, ev.time, BLK_TN_IOWAIT, BLK_TC_NOTIFY, ev.device, 0, 0, 0, &pdu, ev.pdu_len);
	s->ev[s->n - 1].pid = ev.pid;
	s->ev[s->n - 1].cpu = ev.cpu;
	s->ev[s->n - 1].action = ev.action;
}

/* the bios model takes every event the I/O model takes, as btt.c has it */
static void bios_take(void *ctx, const struct blk_event *ev)
{
	assert_int_equal(bios_event(ctx, ev), 0);
}

/*
 * Run @s through btt's model into tsv:DIR (with -D @devices, -t/-T when @t_end > 0) and
 * return @table's rows (its first @cols columns), sorted, without the header; malloc'ed.
 */
static char *run_table(struct stream *s, const char *devices, double t_start, double t_end,
		       const char *table, int cols)
{
	char dir[] = "/tmp/test-export-out.XXXXXX", dest[64], path[96], cmd[256];
	struct btt b = {.opts = BTT_OPTS_INIT};
	struct export_out *xo;
	struct iomodel_opts mo = {0};
	iomodel_next_fn next = next_ev;
	void *src = s;
	struct blk_event ev;
	char *out;
	size_t len = 0;
	FILE *fp;

	assert_non_null(mkdtemp(dir));
	s->next = 0;
	snprintf(dest, sizeof(dest), "tsv:%s", dir);
	b.opts.export_dest = dest;
	b.opts.export_host = "h1";
	b.opts.input = "test";
	if (t_end > 0) {
		b.opts.time_bounded = mo.time_bounded = 1;
		b.opts.t_start = mo.t_start = t_start;
		b.opts.t_end = mo.t_end = t_end;
	}
	devs_init(&b.devs, devices);
	b.model = iomodel_new(&b.devs, &mo);
	assert_int_equal(next_ev(s, &ev), 1);
	b.clock = btt_clock_new(&next, &src, &ev);
	b.bios = bios_new(NULL, NULL);
	assert_non_null(b.bios);
	iomodel_subscribe(b.model, &(struct btt_io_sub){.ctx = b.bios, .event = bios_take});
	b.view = (struct btt_view){.opts = &b.opts,
				   .devs = &b.devs,
				   .model = b.model,
				   .clock = b.clock,
				   .bios = b.bios};
	xo = export_out_new(&b.view);
	assert_non_null(xo);
	assert_int_equal(iomodel_run(b.model, next, src, &ev, NULL, NULL), 0);
	iomodel_finish(b.model);
	bios_finish(b.bios);
	assert_int_equal(export_out_finish(xo), 0);
	export_out_free(xo);
	bios_free(b.bios);
	btt_clock_free(b.clock);
	iomodel_free(b.model);
	devs_release(&b.devs);
	snprintf(path, sizeof(path), "%s/%s", dir, table);
	snprintf(cmd, sizeof(cmd), "tail -n +2 %s | cut -f1-%d | LC_ALL=C sort", path, cols);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	out = calloc(1, 8192);
	assert_non_null(out);
	len = fread(out, 1, 8191, fp);
	out[len] = '\0';
	pclose(fp);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return out;
}

/* io.tsv's rows without the export and batch ids */
static char *run(struct stream *s, const char *devices)
{
	return run_table(s, devices, 0, 0, "io.tsv", 30);
}

static void expect(char *got, const char *want)
{
	if (strcmp(got, want)) {
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
		free(got);
		fail();
	}
	free(got);
}

/* 2025-12-02 00:00:00.000001 UTC at trace time 1 us: trace time 0 is at midnight, so a time
 * of N us is T0 followed by N us in five digits, "02000" for 2 us */
#define T0 "17646336000000"

/*
 * A write with a G and an I and an error, a back merge into it (both bios share the request:
 * merged, inserted and issued with it, its one completion counted on the first), a
 * read-ahead completed with a positive error, a remapped read; the columns are host device
 * major minor pid comm rwbs sector bytes q g i d c q2g g2i i2d d2c q2c merged split pieces
 * completions requeues no_q unfinished remap_major remap_minor remap_sector error.
 */
static void test_rows(void **state)
{
	struct stream s = {0};
	static const char name[] = "fio";

	(void)state;
	timestamp(&s, 1 * US, 1764633600, 1000);
	add(&s, 1 * US, BLK_TN_PROCESS, BLK_TC_NOTIFY, SDA, 0, 0, 0, name, 3);
	io(&s, 2, BLK_TA_QUEUE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 8);
	io(&s, 3, BLK_TA_GETRQ, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 8);
	io(&s, 4, BLK_TA_QUEUE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 108, 8);
	io(&s, 5, BLK_TA_BACKMERGE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 108, 8);
	io(&s, 6, BLK_TA_INSERT, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 16);
	io(&s, 7, BLK_TA_ISSUE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 16);
	add(&s, 9 * US, BLK_TA_COMPLETE, BLK_TC_WRITE | BLK_TC_SYNC, SDA, 100, 16, 0xfffb, NULL, 0);
	io(&s, 10, BLK_TA_QUEUE, BLK_TC_READ | BLK_TC_AHEAD, SDB, 0, 8);
	io(&s, 11, BLK_TA_ISSUE, BLK_TC_READ | BLK_TC_AHEAD, SDB, 0, 8);
	add(&s, 12 * US, BLK_TA_COMPLETE, BLK_TC_READ, SDB, 0, 8, 5, NULL, 0);
	remap(&s, 13, SDA, 2148, 8, SDA1, 100);
	io(&s, 14, BLK_TA_QUEUE, BLK_TC_READ, SDA, 2148, 8);
	io(&s, 15, BLK_TA_ISSUE, BLK_TC_READ, SDA, 2148, 8);
	io(&s, 17, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 2148, 8);
	expect(run(&s, NULL),
	       "h1\t8,0\t8\t0\t10\tfio\tR\t2148\t4096\t" T0 "14000\t0\t0\t" T0 "15000\t" T0
	       "17000\t0\t0\t0\t2000\t3000\t0\t0\t1\t1\t0\t0\t0\t8\t1\t100\t0\n"
	       "h1\t8,0\t8\t0\t10\tfio\tWS\t100\t4096\t" T0 "02000\t" T0 "03000\t" T0 "06000\t" T0
	       "07000\t" T0
	       "09000\t1000\t3000\t1000\t2000\t7000\t1\t0\t1\t1\t0\t0\t0\t0\t0\t0\t-5\n"
	       "h1\t8,0\t8\t0\t10\tfio\tWS\t108\t4096\t" T0 "04000\t0\t" T0 "06000\t" T0
	       "07000\t" T0 "09000\t0\t0\t1000\t2000\t5000\t1\t0\t1\t0\t0\t0\t0\t0\t0\t0\t-5\n"
	       "h1\t8,16\t8\t16\t10\tfio\tRA\t0\t4096\t" T0 "10000\t0\t0\t" T0 "11000\t" T0
	       "12000\t0\t0\t0\t1000\t2000\t0\t0\t1\t1\t0\t0\t0\t0\t0\t0\t-5\n");
}

/* -D 8,16: the rows of that device only */
static void test_devices(void **state)
{
	struct stream s = {0};

	(void)state;
	timestamp(&s, 1 * US, 1764633600, 1000);
	io(&s, 2, BLK_TA_QUEUE, BLK_TC_READ, SDA, 100, 8);
	io(&s, 3, BLK_TA_QUEUE, BLK_TC_READ, SDB, 200, 8);
	io(&s, 4, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 8);
	io(&s, 5, BLK_TA_COMPLETE, BLK_TC_READ, SDB, 200, 8);
	expect(run(&s, "8,16"),
	       "h1\t8,16\t8\t16\t10\tpid000000010\tR\t200\t4096\t" T0 "03000\t0\t0\t0\t" T0
	       "05000\t0\t0\t0\t0\t2000\t0\t0\t0\t1\t0\t0\t0\t0\t"
	       "0\t0\t0\n");
}

/*
 * A timestamp note after the first row: the rows keep the clock they started with (here
 * none: the input "test" cannot be stat'ed, so trace time 0 is dated at btt's start, which
 * the test cannot know; it checks that both rows have the same base).
 */
static void test_late_timestamp(void **state)
{
	struct stream s = {0};
	char *got, *p;
	unsigned long long q1, c1, q2, c2;

	(void)state;
	io(&s, 2, BLK_TA_QUEUE, BLK_TC_READ, SDA, 100, 8);
	io(&s, 4, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 8);
	timestamp(&s, 5 * US, 1764633600, 0);
	io(&s, 6, BLK_TA_QUEUE, BLK_TC_READ, SDA, 200, 8);
	io(&s, 9, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 200, 8);
	got = run(&s, NULL);
	p = got;
	for (int i = 0; i < 9 && p; i++)
		p = strchr(p + 1, '\t');
	assert_non_null(p);
	assert_int_equal(sscanf(p, "\t%llu\t0\t0\t0\t%llu", &q1, &c1), 2);
	p = strchr(p, '\n');
	for (int i = 0; i < 9 && p; i++)
		p = strchr(p + 1, '\t');
	assert_non_null(p);
	assert_int_equal(sscanf(p, "\t%llu\t0\t0\t0\t%llu", &q2, &c2), 2);
	assert_int_equal(c1 - q1, 2000);
	assert_int_equal(q2 - q1, 4000);
	assert_int_equal(c2 - q2, 3000);
	assert_true(q1 > 1764633600000000000ull); /* not the late note's 2025 */
	free(got);
}

/*
 * Waits: one row each (host device major minor pid tid comm start_ns duration_ns source cpu
 * waker_cpu): start = wall(end) - duration; the device of the note's I/O in flight, by
 * btt's name, or empty and 0 0 without one; waker -1; -D does not filter them, -T does (by
 * their end); a damaged note gives no row.
 */
static void test_waits(void **state)
{
	struct blk_iowait w = {
		.end = 20 * US,
		.duration = 5 * US,
		.tgid = 7,
		.tid = 10,
		.device = SDA,
		.io_dev = SDB,
		.cpu = 1,
		.sleep_cpu = 1,
		.waker_cpu = 0,
		.source = BLK_IOWAIT_SRC_SCHED,
		.flags = BLK_IOWAIT_F_IO | BLK_IOWAIT_F_IO_CHECKED,
		.comm = "dd",
	};
	struct stream s = {0};

	(void)state;
	timestamp(&s, 1 * US, 1764633600, 1000);
	io(&s, 2, BLK_TA_QUEUE, BLK_TC_READ, SDA, 100, 8);
	io(&s, 3, BLK_TA_QUEUE, BLK_TC_READ, SDB, 200, 8);
	io(&s, 4, BLK_TA_COMPLETE, BLK_TC_READ, SDA, 100, 8);
	io(&s, 5, BLK_TA_COMPLETE, BLK_TC_READ, SDB, 200, 8);
	wait_note(&s, &w);
	w.end = 40 * US;
	w.duration = 12345;
	w.tid = 11;
	w.flags = BLK_IOWAIT_F_TGID_UNKNOWN;
	w.waker_cpu = -1;
	w.cpu = 0;
	w.source = BLK_IOWAIT_SRC_MODULE;
	memcpy(w.comm, "kworker/u8:1", 13);
	wait_note(&s, &w);
	w.end = 50 * US;
	wait_note(&s, &w);
	memset(s.pdu[s.n - 1], 0x58, 4); /* damaged: bad magic */
	expect(run_table(&s, "8,0", 0, 0, "iowait.tsv", 12),
	       "h1\t\t0\t0\t7\t11\tkworker/u8:1\t" T0 "27655\t12345\tmodule\t0\t-1\n"
	       "h1\t8,16\t8\t16\t7\t10\tdd\t" T0 "15000\t5000\tsched\t1\t0\n");
	expect(run_table(&s, NULL, 0, 0.000030, "iowait.tsv", 12),
	       "h1\t8,16\t8\t16\t7\t10\tdd\t" T0 "15000\t5000\tsched\t1\t0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_late_timestamp),
		cmocka_unit_test(test_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
