// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "blk/trace.h"
#include "blk/wallclock.h"

#define S 1000000000ull

/* One record of a case: T timestamp note, P process note, E event. */
struct rec {
	char kind;
	uint64_t time;
	uint32_t dev, cpu, pid;
	uint32_t sec, nsec; /* T */
};

struct wcase {
	const char *what;
	struct rec recs[8];
	enum blk_wall_kind kind;
	int64_t sec; /* wall clock of input time 0 */
	long nsec;
	uint64_t offset; /* blk_wallclock_offset(): input time 0 on the notes' clock */
};

static const struct wcase cases[] = {
	{"no timestamp note", {{'E', 5 * S, 1, 0, 7, 0, 0}}, BLK_WALL_NONE, 0, 0, 0},
	{"raw times: note time minus its distance from 0",
	 {{'T', 10 * S + 250, 1, 0, 0, 1000, 100}, {'P', 11 * S, 1, 0, 7, 0, 0}, {'E', 11 * S + 5, 1, 0, 7, 0, 0}},
	 BLK_WALL_EXACT, 989, 100 - 250 + (long)S, 0},
	{"raw times, an event a little before the timestamp note (the kernel's race)",
	 {{'T', 10 * S, 1, 0, 0, 1000, 0}, {'E', 10 * S - 3000, 1, 1, 9, 0, 0}},
	 BLK_WALL_EXACT, 990, 0, 0},
	{"rebased: the first event's process note dates it",
	 {{'T', 10 * S, 1, 0, 0, 1000, 500},
	  {'P', 12 * S + 40, 1, 1, 9, 0, 0}, /* same process, other CPU */
	  {'P', 12 * S + 60, 2, 0, 7, 0, 0}, /* other device */
	  {'P', 12 * S + 100, 1, 0, 7, 0, 0},
	  {'P', 15 * S, 1, 0, 7, 0, 0}, /* a later note of it */
	  {'E', 0, 1, 0, 7, 0, 0},
	  {'E', 1000, 1, 1, 9, 0, 0}},
	 BLK_WALL_ESTIMATED, 1002, 600, 12 * S + 100},
	{"rebased, notes after the event in the file, the first event not read first",
	 {{'T', 10 * S, 1, 0, 0, 1000, 500}, {'E', 3 * S, 1, 1, 9, 0, 0}, {'E', 0, 1, 0, 7, 0, 0},
	  {'P', 12 * S + 100, 1, 0, 7, 0, 0}},
	 BLK_WALL_ESTIMATED, 1002, 600, 12 * S + 100},
	{"rebased without the note: the first event at the timestamp",
	 {{'T', 10 * S, 1, 0, 0, 1000, 500}, {'P', 12 * S, 1, 0, 8, 0, 0}, {'E', 0, 1, 0, 7, 0, 0}},
	 BLK_WALL_GUESSED, 1000, 500, 10 * S},
	{"a nanosecond field of a second or more is carried",
	 {{'T', 2 * S, 1, 0, 0, 1000, 1500000000u}, {'E', 2 * S, 1, 0, 7, 0, 0}},
	 BLK_WALL_EXACT, 999, 500000000, 0},
};

static void feed(struct blk_wallclock *w, const struct rec *r)
{
	struct blk_event ev;
	uint32_t words[2] = {r->sec, r->nsec};
	char comm[16] = "proc";

	memset(&ev, 0, sizeof(ev));
	ev.time = r->time;
	ev.device = r->dev;
	ev.cpu = r->cpu;
	ev.pid = r->pid;
	if (r->kind == 'T') {
		ev.action = BLK_TN_ACTION(BLK_TN_TIMESTAMP);
		ev.pdu = (const unsigned char *)words;
		ev.pdu_len = 8;
	} else if (r->kind == 'P') {
		ev.action = BLK_TN_ACTION(BLK_TN_PROCESS);
		ev.pdu = (const unsigned char *)comm;
		ev.pdu_len = sizeof(comm);
	} else {
		ev.action = BLK_TA_QUEUE | BLK_TC_ACT(BLK_TC_READ);
		ev.sector = 8;
		ev.bytes = 4096;
	}
	blk_wallclock_record(w, &ev);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct wcase *c = &cases[i];
		struct blk_wallclock *w = blk_wallclock_new();
		int64_t sec = -1;
		long nsec = -1;

		assert_non_null(w);
		for (const struct rec *r = c->recs; r->kind; r++)
			feed(w, r);
		print_message("%s\n", c->what);
		assert_int_equal(blk_wallclock_offset(w), 0);
		assert_int_equal(blk_wallclock_base(w, &sec, &nsec), c->kind);
		assert_int_equal(blk_wallclock_offset(w), c->offset);
		if (c->kind != BLK_WALL_NONE) {
			assert_int_equal(sec, c->sec);
			assert_int_equal(nsec, c->nsec);
		}
		blk_wallclock_free(w);
	}
}

/* The first answer settles the first event; a new timestamp note moves the base. */
static void test_settle_and_new_timestamp(void **state)
{
	struct blk_wallclock *w = blk_wallclock_new();
	const struct rec t1 = {'T', 10 * S, 1, 0, 0, 1000, 0}, p = {'P', 20 * S, 1, 0, 7, 0, 0},
			 e = {'E', 0, 1, 0, 7, 0, 0}, e_earlier = {'E', 0, 1, 1, 9, 0, 0},
			 t2 = {'T', 11 * S, 2, 0, 0, 1001, 5};
	unsigned int gen;
	int64_t sec;
	long nsec;

	(void)state;
	assert_non_null(w);
	feed(w, &p);
	feed(w, &e);
	assert_int_equal(blk_wallclock_base(w, &sec, &nsec), BLK_WALL_NONE);
	feed(w, &t1);
	gen = blk_wallclock_generation(w);
	assert_int_equal(blk_wallclock_base(w, &sec, &nsec), BLK_WALL_ESTIMATED);
	assert_int_equal(sec, 1010);
	assert_int_equal(nsec, 0);
	/* settled: a later event at 0 with no note changes nothing */
	feed(w, &e_earlier);
	assert_int_equal(blk_wallclock_base(w, &sec, &nsec), BLK_WALL_ESTIMATED);
	assert_int_equal(sec, 1010);
	assert_int_equal(blk_wallclock_generation(w), gen);
	feed(w, &t2);
	assert_int_not_equal(blk_wallclock_generation(w), gen);
	assert_int_equal(blk_wallclock_base(w, &sec, &nsec), BLK_WALL_ESTIMATED);
	assert_int_equal(sec, 1010);
	assert_int_equal(nsec, 5);
	blk_wallclock_free(w);
	blk_wallclock_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_settle_and_new_timestamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
