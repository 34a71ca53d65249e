// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/cgmap.c: the cgroup of each event from blktrace --origin's notes (trace.h
 * BLK_TN_CGROUP, BLK_TN_CGPATH): runs per device and CPU, plugs passed over, runs in any
 * order, paths, and damaged notes counted, never taken.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk/cgroup.h"

#define DEV BLK_MKDEV(7, 0)

/* whether @m took any run or path note */
static int notes_taken(const struct blk_cgmap *m)
{
	struct blk_cgmap_stats st;

	blk_cgmap_stats(m, &st);
	return st.runs || st.paths;
}

static int run_note(struct blk_cgmap *m, uint32_t dev, uint32_t cpu, uint64_t id, uint32_t first,
		    uint32_t count)
{
	struct blk_cgroup_pdu pdu = {.id = id, .first = first, .count = count};
	struct blk_event ev;

	blk_event_note(&ev, BLK_TN_CGROUP, dev, cpu, 1000, &pdu, sizeof(pdu));
	return blk_cgmap_note(m, &ev);
}

static int path_note(struct blk_cgmap *m, uint64_t id, const char *path, size_t len)
{
	unsigned char pdu[64];
	struct blk_event ev;

	memcpy(pdu, &id, 8);
	memcpy(pdu + 8, path, len);
	blk_event_note(&ev, BLK_TN_CGPATH, DEV, 0, 1000, pdu, (uint16_t)(8 + len));
	return blk_cgmap_note(m, &ev);
}

/* the cgroup the map gives an event of @code on @dev/@cpu with sequence @seq, 0 if none */
static uint64_t cg_of(struct blk_cgmap *m, uint32_t dev, uint32_t cpu, uint32_t seq,
		      unsigned int code)
{
	struct blk_event ev;
	uint64_t id = 99;
	int ret;

	memset(&ev, 0, sizeof(ev));
	ev.device = dev;
	ev.cpu = cpu;
	ev.sequence = seq;
	ev.action = BLK_TC_ACT(BLK_TC_READ | BLK_TC_QUEUE) | code;
	ret = blk_cgmap_lookup(m, &ev, &id);
	assert_int_equal(ret, id != 0);
	return id;
}

static void runs_per_stream(void **state)
{
	struct blk_cgmap *m = blk_cgmap_new();

	(void)state;
	assert_non_null(m);
	assert_false(notes_taken(m));
	assert_int_equal(run_note(m, DEV, 0, 17, 1, 6), 1);
	assert_int_equal(run_note(m, DEV, 0, 45, 7, 3), 1);
	assert_int_equal(run_note(m, DEV, 1, 45, 1, 2), 1);
	assert_int_equal(run_note(m, BLK_MKDEV(8, 0), 0, 99, 1, 100), 1);
	assert_true(notes_taken(m));
	/* in order, as blkparse prints them */
	for (uint32_t s = 1; s <= 6; s++)
		assert_int_equal(cg_of(m, DEV, 0, s, BLK_TA_QUEUE), 17);
	for (uint32_t s = 7; s <= 9; s++)
		assert_int_equal(cg_of(m, DEV, 0, s, BLK_TA_COMPLETE), 45);
	assert_int_equal(cg_of(m, DEV, 0, 10, BLK_TA_QUEUE), 0);
	assert_int_equal(cg_of(m, DEV, 0, 0, BLK_TA_QUEUE), 0);
	/* other CPU, other device */
	assert_int_equal(cg_of(m, DEV, 1, 2, BLK_TA_QUEUE), 45);
	assert_int_equal(cg_of(m, DEV, 1, 3, BLK_TA_QUEUE), 0);
	assert_int_equal(cg_of(m, DEV, 2, 1, BLK_TA_QUEUE), 0);
	assert_int_equal(cg_of(m, BLK_MKDEV(8, 0), 0, 50, BLK_TA_ISSUE), 99);
	/* out of order (binary search), and plugs and unplugs inside a run: never tagged */
	assert_int_equal(cg_of(m, DEV, 0, 8, BLK_TA_QUEUE), 45);
	assert_int_equal(cg_of(m, DEV, 0, 2, BLK_TA_GETRQ), 17);
	assert_int_equal(cg_of(m, DEV, 0, 3, BLK_TA_PLUG), 0);
	assert_int_equal(cg_of(m, DEV, 0, 4, BLK_TA_UNPLUG_IO), 0);
	assert_int_equal(cg_of(m, DEV, 0, 4, BLK_TA_UNPLUG_TIMER), 0);
	blk_cgmap_free(m);
}

static void runs_out_of_order(void **state)
{
	struct blk_cgmap *m = blk_cgmap_new();

	(void)state;
	/* a later note for earlier numbers (two traces of one device read together) */
	assert_int_equal(run_note(m, DEV, 0, 5, 100, 10), 1);
	assert_int_equal(run_note(m, DEV, 0, 6, 1, 10), 1);
	assert_int_equal(cg_of(m, DEV, 0, 3, BLK_TA_QUEUE), 6);
	assert_int_equal(cg_of(m, DEV, 0, 105, BLK_TA_QUEUE), 5);
	assert_int_equal(cg_of(m, DEV, 0, 50, BLK_TA_QUEUE), 0);
	/* a sequence number that wrapped inside a run */
	assert_int_equal(run_note(m, DEV, 3, 7, 0xfffffffeu, 4), 1);
	assert_int_equal(cg_of(m, DEV, 3, 0xffffffffu, BLK_TA_QUEUE), 7);
	assert_int_equal(cg_of(m, DEV, 3, 1, BLK_TA_QUEUE), 7);
	assert_int_equal(cg_of(m, DEV, 3, 2, BLK_TA_QUEUE), 0);
	blk_cgmap_free(m);
}

static void paths_and_damage(void **state)
{
	struct blk_cgmap *m = blk_cgmap_new();
	struct blk_cgmap_stats st;
	struct blk_event ev;
	unsigned char shortpdu[8] = {0};

	(void)state;
	assert_null(blk_cgmap_path(m, 17));
	assert_int_equal(path_note(m, 17, "/cgexpA", 7), 1);
	assert_int_equal(path_note(m, 1, "/", 1), 1);
	/* every stream names it: the first stays */
	assert_int_equal(path_note(m, 17, "/other", 6), 1);
	assert_string_equal(blk_cgmap_path(m, 17), "/cgexpA");
	assert_string_equal(blk_cgmap_path(m, 1), "/");
	assert_null(blk_cgmap_path(m, 45));
	/* damaged: empty path, a control byte, a run too short or of no events */
	assert_int_equal(path_note(m, 46, "", 0), -EINVAL);
	assert_int_equal(path_note(m, 47, "/a\nb", 4), -EINVAL);
	blk_event_note(&ev, BLK_TN_CGROUP, DEV, 0, 1, shortpdu, sizeof(shortpdu));
	assert_int_equal(blk_cgmap_note(m, &ev), -EINVAL);
	assert_int_equal(run_note(m, DEV, 0, 45, 1, 0), -EINVAL);
	assert_null(blk_cgmap_path(m, 47));
	/* not a cgroup note */
	blk_event_note(&ev, BLK_TN_DEVNAME, DEV, 0, 1, "loop0", 5);
	assert_int_equal(blk_cgmap_note(m, &ev), 0);
	/* an id without a path, named twice: one unnamed */
	assert_int_equal(run_note(m, DEV, 0, 45, 1, 2), 1);
	assert_int_equal(run_note(m, DEV, 0, 45, 5, 2), 1);
	assert_int_equal(run_note(m, DEV, 0, 17, 9, 2), 1);
	blk_cgmap_stats(m, &st);
	assert_int_equal(st.runs, 3);
	assert_int_equal(st.paths, 2);
	assert_int_equal(st.bad, 4);
	assert_int_equal(st.unnamed, 1);
	/* many paths: the table grows */
	for (uint64_t id = 1000; id < 1300; id++) {
		char p[32];
		int n = snprintf(p, sizeof(p), "/c%llu", (unsigned long long)id);

		assert_int_equal(path_note(m, id, p, (size_t)n), 1);
	}
	assert_string_equal(blk_cgmap_path(m, 1234), "/c1234");
	assert_string_equal(blk_cgmap_path(m, 17), "/cgexpA");
	blk_cgmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_per_stream),
		cmocka_unit_test(runs_out_of_order),
		cmocka_unit_test(paths_and_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
