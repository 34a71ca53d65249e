// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/acct.c's observation hooks (struct blk_acct_hooks): each is called when
 * and as acct.h says, and what track_new fills in is what -t's elapsed times start from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/acct.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))
#define W_FS (BLK_TC_WRITE | BLK_TC_FS)

struct rec {
	int comms, procs, news, freed;
	uint32_t comm_pid[8];
	char comm[8][16];
	uint64_t next_tag; /* what track_new hands out (then + 1) */
	uint64_t init_alloc; /* allocation time track_new claims */
	uint64_t freed_tag, freed_sector, freed_times[4];
};

static void comm_added(void *ctx, uint32_t pid, const char *comm)
{
	struct rec *r = ctx;

	assert_true(r->comms < 8);
	r->comm_pid[r->comms] = pid;
	snprintf(r->comm[r->comms], sizeof(r->comm[0]), "%s", comm);
	r->comms++;
}

static void proc_missed(void *ctx)
{
	((struct rec *)ctx)->procs++;
}

static void track_new(void *ctx, struct blk_acct_track_init *t)
{
	struct rec *r = ctx;

	/* the entry starts zeroed */
	assert_int_equal(t->tag, 0);
	assert_int_equal(t->allocation_time, 0);
	assert_int_equal(t->queue_time, 0);
	assert_int_equal(t->dispatch_time, 0);
	r->news++;
	t->tag = r->next_tag++;
	t->allocation_time = r->init_alloc;
}

static void track_freed(void *ctx, uint64_t tag, uint64_t sector, const uint64_t times[4])
{
	struct rec *r = ctx;

	r->freed++;
	r->freed_tag = tag;
	r->freed_sector = sector;
	memcpy(r->freed_times, times, sizeof(r->freed_times));
}

static struct blk_acct_hooks hooks_of(struct rec *r)
{
	struct blk_acct_hooks h = {comm_added, proc_missed, track_new, track_freed, r};

	return h;
}

/* Account @action on sector @sector at @time from @pid; return the elapsed time given. */
static uint64_t event(struct blk_acct *a, struct blk_acct_dev *d, uint64_t action, uint64_t sector,
		      uint64_t time, uint32_t pid)
{
	struct blk_event ev = test_event(1, time, 0, action, sector, 4096);
	struct blk_fmt_ctx c = {0};

	ev.pid = pid;
	assert_int_equal(blk_acct_event(a, d, 0, &ev, &c), 1);
	return c.elapsed;
}

/* comm_added: once per new pid, with the name as kept (first one, cut to 15 characters). */
static void test_comm_added(void **state)
{
	struct blk_acct_opts o = {0};
	struct blk_acct *a = blk_acct_new(&o);
	struct rec r = {0};
	struct blk_acct_hooks h = hooks_of(&r);

	(void)state;
	blk_acct_set_hooks(a, &h);
	blk_acct_set_comm(a, 7, "kworker/u16:3-events_unbound", 28);
	blk_acct_set_comm(a, 7, "other", 5);
	blk_acct_set_comm(a, 8, "dd", 2);
	assert_int_equal(r.comms, 2);
	assert_int_equal(r.comm_pid[0], 7);
	assert_string_equal(r.comm[0], "kworker/u16:3-e");
	assert_int_equal(r.comm_pid[1], 8);
	assert_string_equal(r.comm[1], "dd");
	/* NULL: nobody is told any more */
	blk_acct_set_hooks(a, NULL);
	blk_acct_set_comm(a, 9, "fio", 3);
	assert_int_equal(r.comms, 2);
	assert_string_equal(blk_acct_comm(a, 9), "fio");
	blk_acct_free(a);
}

/* proc_missed: -s only, once per pid that has no block yet. */
static void test_proc_missed(void **state)
{
	struct blk_acct_opts o = {0};
	struct blk_acct *a;
	struct blk_acct_dev *d;
	struct rec r = {0};
	struct blk_acct_hooks h = hooks_of(&r);

	(void)state;
	for (int per_process = 0; per_process < 2; per_process++) {
		memset(&r, 0, sizeof(r));
		o.per_process = per_process;
		a = blk_acct_new(&o);
		d = blk_acct_dev(a, BLK_MKDEV(8, 0), NULL);
		blk_acct_set_hooks(a, &h);
		event(a, d, CAT(W_FS | BLK_TC_QUEUE) | BLK_TA_QUEUE, 8, 1000, 7);
		event(a, d, CAT(W_FS | BLK_TC_QUEUE) | BLK_TA_QUEUE, 16, 2000, 7);
		event(a, d, CAT(W_FS | BLK_TC_QUEUE) | BLK_TA_QUEUE, 24, 3000, 8);
		assert_int_equal(r.procs, per_process ? 2 : 0);
		assert_int_equal(r.news, 0); /* no -t */
		blk_acct_free(a);
	}
}

/*
 * track_new/track_freed: an entry starts with the times the hook gives (the insert's
 * elapsed time is counted from that allocation time), and is freed at its completion
 * with its tag, its sector and all four times.
 */
static void test_track_hooks(void **state)
{
	struct blk_acct_opts o = {0};
	struct blk_acct *a;
	struct blk_acct_dev *d;
	struct rec r = {0};
	struct blk_acct_hooks h = hooks_of(&r);

	(void)state;
	o.track_ios = 1;
	a = blk_acct_new(&o);
	d = blk_acct_dev(a, BLK_MKDEV(8, 0), NULL);
	r.next_tag = 42;
	r.init_alloc = 1000;
	blk_acct_set_hooks(a, &h);
	assert_int_equal(event(a, d, CAT(W_FS | BLK_TC_QUEUE) | BLK_TA_INSERT, 100, 5000, 7), 4000);
	assert_int_equal(r.news, 1);
	assert_int_equal(event(a, d, CAT(W_FS | BLK_TC_ISSUE) | BLK_TA_ISSUE, 100, 7000, 7), 2000);
	assert_int_equal(r.freed, 0);
	assert_int_equal(event(a, d, CAT(W_FS | BLK_TC_COMPLETE) | BLK_TA_COMPLETE, 100, 10000, 7),
			 3000);
	assert_int_equal(r.news, 1);
	assert_int_equal(r.freed, 1);
	assert_int_equal(r.freed_tag, 42);
	assert_int_equal(r.freed_sector, 100);
	assert_int_equal(r.freed_times[0], 1000);
	assert_int_equal(r.freed_times[1], 5000);
	assert_int_equal(r.freed_times[2], 7000);
	assert_int_equal(r.freed_times[3], 10000);
	/* without hooks an entry starts at zero: the insert has no elapsed time */
	blk_acct_set_hooks(a, NULL);
	assert_int_equal(event(a, d, CAT(W_FS | BLK_TC_QUEUE) | BLK_TA_INSERT, 200, 5000, 7),
			 BLK_NO_ELAPSED);
	assert_int_equal(event(a, d, CAT(W_FS | BLK_TC_COMPLETE) | BLK_TA_COMPLETE, 200, 9000, 7),
			 9000);
	assert_int_equal(r.news, 1);
	assert_int_equal(r.freed, 1);
	blk_acct_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comm_added),
		cmocka_unit_test(test_proc_missed),
		cmocka_unit_test(test_track_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
