// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/waitjoin.c: the sched source (sleeps with and without an I/O in
 * flight, merged completions, wakings of running tasks, bounded tables, and a random run
 * against a naive model), the kprobe source (nesting, missed returns), the module source.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/waitjoin.h"
#include "helpers.h"

#define DEV BLK_MKDEV(7, 0)

static struct blk_wj *new_wj(enum blk_iowait_source s, int keep_all, size_t tasks, size_t ios)
{
	struct blk_wj_opts o = {s, keep_all, tasks, ios};
	struct blk_wj *j = blk_wj_new(&o);

	assert_non_null(j);
	return j;
}

static struct blk_wj_event ev(uint64_t ts, enum blk_wj_kind k, int cpu, int32_t tid)
{
	struct blk_wj_event e;

	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.kind = k;
	e.cpu = cpu;
	e.tid = tid;
	e.dev = DEV;
	snprintf(e.comm, sizeof(e.comm), "t%d", tid);
	return e;
}

static struct blk_wj_event io(uint64_t ts, enum blk_wj_kind k, int32_t tid, uint64_t sector,
			      uint32_t nr)
{
	struct blk_wj_event e = ev(ts, k, 0, tid);

	e.sector = sector;
	e.nr = nr;
	return e;
}

static struct blk_wj_event waking(uint64_t ts, int32_t tid, int cpu, int target)
{
	struct blk_wj_event e = ev(ts, BLK_WJ_WAKING, cpu, tid);

	e.target_cpu = target;
	return e;
}

/*
 * An fsync's sleep on the journal: no I/O of its own in flight, woken by the journal thread,
 * which queued I/O while it slept: kept, with the waker named. A sleep woken by a task that
 * queued nothing meanwhile (its last I/O was before the sleep), or by the idle task (0), is
 * not kept.
 */
static void sched_sleep_woken_by_a_task_with_io(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_SCHED, 0, 0, 0);
	struct blk_wj_stats st;
	struct blk_iowait w;
	struct blk_wj_event e;

	(void)state;
	/* the journal thread (300) queued at 5, before the first sleep */
	e = io(5, BLK_WJ_QUEUE, 300, 800, 8);
	snprintf(e.comm, sizeof(e.comm), "jbd2/loop0-8");
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = io(6, BLK_WJ_COMPLETE, 0, 800, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	/* fio (100) sleeps at 10 without I/O; woken at 20 by 300, which queued nothing since */
	e = ev(10, BLK_WJ_SWITCH_D, 0, 100);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(20, 100, 1, 0);
	e.waker = 300;
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	/* it sleeps again at 30; 300 queues at 35 (the commit); 300 wakes it at 50 */
	e = ev(30, BLK_WJ_SWITCH_D, 0, 100);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = io(35, BLK_WJ_QUEUE, 300, 808, 8);
	snprintf(e.comm, sizeof(e.comm), "jbd2/loop0-8");
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = io(45, BLK_WJ_COMPLETE, 0, 808, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(50, 100, 1, 0);
	e.waker = 300;
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_int_equal(w.tid, 100);
	assert_int_equal(w.duration, 20);
	assert_int_equal(w.flags, BLK_IOWAIT_F_IO_CHECKED | BLK_IOWAIT_F_WAKER_IO);
	assert_int_equal(w.waker_tid, 300);
	assert_string_equal(w.waker_comm, "jbd2/loop0-8");
	/* a third sleep, woken from an interrupt of the idle task: not kept */
	e = ev(60, BLK_WJ_SWITCH_D, 0, 100);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = io(62, BLK_WJ_QUEUE, 300, 816, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(70, 100, 1, 0);
	e.waker = 0;
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	blk_wj_get_stats(j, &st);
	assert_int_equal(st.waits, 1);
	assert_int_equal(st.waker_io, 1);
	assert_int_equal(st.not_io, 2);
	blk_wj_free(j);
}

static void sched_sleep_with_io_in_flight(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_SCHED, 0, 0, 0);
	struct blk_wj_event e;
	struct blk_iowait w;
	struct blk_wj_stats st;

	(void)state;
	e = io(10, BLK_WJ_QUEUE, 100, 8, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = ev(20, BLK_WJ_SWITCH_D, 0, 100);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = io(30, BLK_WJ_COMPLETE, 0, 8, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(31, 100, 1, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_true(w.end == 31 && w.duration == 11 && w.start == 20);
	assert_int_equal(w.tid, 100);
	assert_int_equal(w.tgid, 0);
	assert_string_equal(w.comm, "t100");
	assert_int_equal(w.cpu, 0);
	assert_int_equal(w.sleep_cpu, 0);
	assert_int_equal(w.waker_cpu, 1);
	assert_int_equal(w.source, BLK_IOWAIT_SRC_SCHED);
	assert_int_equal(w.flags, BLK_IOWAIT_F_IO | BLK_IOWAIT_F_IO_CHECKED);
	assert_int_equal(w.io_dev, DEV);
	/* the same task sleeps again, nothing in flight now: not an I/O wait */
	e = ev(40, BLK_WJ_SWITCH_D, 1, 100);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(50, 100, 0, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	/* a waking of a task that is not asleep, tid 0 */
	e = waking(60, 100, 0, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = ev(61, BLK_WJ_SWITCH_D, 0, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	blk_wj_get_stats(j, &st);
	assert_true(st.waits == 1 && st.not_io == 1 && st.tasks_full == 0);
	blk_wj_free(j);
}

static void sched_keep_all_and_merged_completions(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_SCHED, 1, 0, 0);
	struct blk_wj_event e;
	struct blk_iowait w;

	(void)state;
	/* three bios merged into one request completed at once */
	for (int i = 0; i < 3; i++) {
		e = io(10 + (uint64_t)i, BLK_WJ_QUEUE, 7, 100 + 8 * (uint64_t)i, 8);
		assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	}
	e = io(20, BLK_WJ_COMPLETE, 0, 100, 24);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	/* a bio on another device, still in flight, does not count for this one's range */
	e = io(21, BLK_WJ_QUEUE, 8, 100, 8);
	e.dev = BLK_MKDEV(8, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = ev(30, BLK_WJ_SWITCH_D, 1, 7);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(35, 7, 0, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	/* kept (keep_all), checked, no I/O */
	assert_int_equal(w.flags, BLK_IOWAIT_F_IO_CHECKED);
	assert_int_equal(w.io_dev, 0);
	e = ev(40, BLK_WJ_SWITCH_D, 1, 8);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(45, 8, 0, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_int_equal(w.flags, BLK_IOWAIT_F_IO | BLK_IOWAIT_F_IO_CHECKED);
	assert_int_equal(w.io_dev, BLK_MKDEV(8, 0));
	blk_wj_free(j);
}

static void sched_tables_are_bounded(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_SCHED, 0, 2, 3);
	struct blk_wj_event e;
	struct blk_iowait w;
	struct blk_wj_stats st;

	(void)state;
	for (int tid = 1; tid <= 3; tid++) {
		e = ev(10, BLK_WJ_SWITCH_D, 0, tid);
		assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	}
	for (int i = 0; i < 5; i++) {
		e = io(20, BLK_WJ_QUEUE, 1, 8 * (uint64_t)i, 8);
		assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	}
	blk_wj_get_stats(j, &st);
	assert_int_equal(st.tasks_full, 1);
	assert_int_equal(st.ios_full, 2);
	blk_wj_free(j);
}

/* A random run of 300 tasks against a naive model of the same rules. */
struct mtask {
	int inflight, sleeping, had_io;
	uint64_t since;
};

static void sched_random_against_a_model(void **state)
{
	enum { NT = 300, NIO = 4000 };
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_SCHED, 0, 0, 0);
	static struct mtask m[NT + 1];
	static int32_t io_tid[NIO]; /* sector/8 -> tid, 0 = none */
	unsigned int seed = 12345;
	uint64_t ts = 0, got = 0, want = 0;

	(void)state;
	memset(m, 0, sizeof(m));
	memset(io_tid, 0, sizeof(io_tid));
	for (int step = 0; step < 200000; step++) {
		struct blk_wj_event e;
		struct blk_iowait w;
		int r, tid, slot, expect = 0;

		seed = seed * 1103515245u + 12345u;
		r = (int)((seed >> 16) % 4);
		seed = seed * 1103515245u + 12345u;
		tid = 1 + (int)((seed >> 16) % NT);
		seed = seed * 1103515245u + 12345u;
		slot = (int)((seed >> 16) % NIO);
		ts += 1 + (seed >> 28);
		switch (r) {
		case 0: /* a running task queues a bio */
			if (m[tid].sleeping || io_tid[slot])
				continue;
			e = io(ts, BLK_WJ_QUEUE, tid, 8 * (uint64_t)slot, 8);
			io_tid[slot] = tid;
			m[tid].inflight++;
			break;
		case 1: /* a completion */
			if (!io_tid[slot])
				continue;
			e = io(ts, BLK_WJ_COMPLETE, 0, 8 * (uint64_t)slot, 8);
			m[io_tid[slot]].inflight--;
			io_tid[slot] = 0;
			break;
		case 2: /* a running task sleeps */
			if (m[tid].sleeping)
				continue;
			e = ev(ts, BLK_WJ_SWITCH_D, 0, tid);
			m[tid].sleeping = 1;
			m[tid].had_io = m[tid].inflight > 0;
			m[tid].since = ts;
			break;
		default:
			e = waking(ts, tid, 1, 0);
			if (m[tid].sleeping) {
				expect = m[tid].had_io;
				m[tid].sleeping = 0;
			}
			break;
		}
		r = blk_wj_feed(j, &e, &w);
		assert_int_equal(r, expect);
		if (r) {
			assert_int_equal(w.tid, tid);
			assert_true(w.start == (int64_t)m[tid].since);
			got++;
		}
		want += (uint64_t)expect;
	}
	assert_true(got == want && got > 1000);
	blk_wj_free(j);
}

static struct blk_wj_event enter(uint64_t ts, int32_t tid, enum blk_iowait_func f, int cpu)
{
	struct blk_wj_event e = ev(ts, BLK_WJ_ENTER, cpu, tid);

	e.func = f;
	return e;
}

static struct blk_wj_event leave(uint64_t ts, int32_t tid, enum blk_iowait_func f, int cpu)
{
	struct blk_wj_event e = ev(ts, BLK_WJ_EXIT, cpu, tid);

	e.func = f;
	return e;
}

static void kprobe_nesting_and_missed_returns(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_KPROBE, 0, 0, 0);
	struct blk_wj_event e;
	struct blk_iowait w;
	struct blk_wj_stats st;

	(void)state;
	/* blk_io_schedule -> io_schedule_timeout: one wait, the outer one */
	e = enter(100, 5, BLK_IOWAIT_FN_BLK_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = enter(101, 5, BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = waking(150, 5, 1, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = leave(160, 5, BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = leave(161, 5, BLK_IOWAIT_FN_BLK_IO_SCHEDULE, 1);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_true(w.end == 161 && w.duration == 61);
	assert_int_equal(w.func, BLK_IOWAIT_FN_BLK_IO_SCHEDULE);
	assert_int_equal(w.sleep_cpu, 0);
	assert_int_equal(w.cpu, 1);
	assert_int_equal(w.waker_cpu, 1);
	assert_int_equal(w.source, BLK_IOWAIT_SRC_KPROBE);
	assert_string_equal(w.comm, "t5");
	/* a return missed (maxactive): the next entry finds it out */
	e = enter(200, 5, BLK_IOWAIT_FN_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = enter(300, 5, BLK_IOWAIT_FN_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = leave(310, 5, BLK_IOWAIT_FN_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_true(w.duration == 10 && w.waker_cpu == -1);
	/* the inner return missed: the outer one still ends the wait */
	e = enter(400, 5, BLK_IOWAIT_FN_BLK_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = enter(401, 5, BLK_IOWAIT_FN_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	e = leave(420, 5, BLK_IOWAIT_FN_BLK_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_true(w.duration == 20);
	/* a return without its entry (the probe missed the entry, or tracing began inside) */
	e = leave(500, 6, BLK_IOWAIT_FN_IO_SCHEDULE, 0);
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	/* io_schedule does not nest in io_schedule */
	blk_wj_get_stats(j, &st);
	assert_true(st.waits == 3 && st.stale == 2 && st.unmatched == 1);
	blk_wj_free(j);
}

static void module_waits_pass_through(void **state)
{
	struct blk_wj *j = new_wj(BLK_IOWAIT_SRC_MODULE, 0, 0, 0);
	struct blk_wj_event e = ev(1000, BLK_WJ_WAIT, 1, 42);
	struct blk_iowait w;

	(void)state;
	e.duration = 300;
	e.tgid = 40;
	e.waker_cpu = 0;
	e.sleep_cpu = 1;
	e.func = BLK_IOWAIT_FN_IO_SCHEDULE;
	memcpy(e.comm, "0123456789abcdef", 16); /* no NUL */
	assert_int_equal(blk_wj_feed(j, &e, &w), 1);
	assert_true(w.end == 1000 && w.duration == 300 && w.start == 700);
	assert_int_equal(w.tgid, 40);
	assert_int_equal(w.tid, 42);
	assert_string_equal(w.comm, "0123456789abcdef");
	assert_int_equal(w.source, BLK_IOWAIT_SRC_MODULE);
	e.kind = BLK_WJ_WAKING;
	assert_int_equal(blk_wj_feed(j, &e, &w), 0);
	blk_wj_free(j);
	{
		struct blk_wj_opts o = {BLK_IOWAIT_SRC_UNKNOWN, 0, 0, 0};

		assert_null(blk_wj_new(&o));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sched_sleep_with_io_in_flight),
		cmocka_unit_test(sched_sleep_woken_by_a_task_with_io),
		cmocka_unit_test(sched_keep_all_and_merged_completions),
		cmocka_unit_test(sched_tables_are_bounded),
		cmocka_unit_test(sched_random_against_a_model),
		cmocka_unit_test(kprobe_nesting_and_missed_returns),
		cmocka_unit_test(module_waits_pass_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
