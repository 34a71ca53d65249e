// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the relay path's cgroup-tagged records (blktrace --origin --backend=relay)
 * through kernel/tfsconv.c's blk_tfsconv_record(): passed on untagged, with the ids in run
 * notes that lib/cgmap.c reads back to the same cgroup for each event; plugs passed over,
 * notes stripped too, runs closed at the end of each batch (blk_tfsconv_clear()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "blk/cgroup.h"
#include "blk/event.h"
#include "blk/frame.h"
#include "../../kernel/tfsconv.h"

#define DEV BLK_MKDEV(7, 0)
#define CG_A 0x1234ull
#define CG_B 0x99ull

/* append one version-7 record of @action (BLK_TA_CGROUP set: @id before its 4-byte payload) */
static size_t rec(unsigned char *buf, uint32_t seq, uint32_t action, uint64_t id)
{
	unsigned char pdu[12];
	struct blk_event ev;
	uint16_t len = 0;

	memset(&ev, 0, sizeof(ev));
	if (action & BLK_TA_CGROUP) {
		memcpy(pdu, &id, 8);
		len = 8;
	}
	memcpy(pdu + len, "abcd", 4);
	len += 4;
	ev.version = BLK_IO_TRACE_VERSION;
	ev.sequence = seq;
	ev.time = 1000 + seq;
	ev.sector = 8 * seq;
	ev.bytes = 4096;
	ev.action = action;
	ev.pid = 42;
	ev.device = DEV;
	ev.cpu = 1;
	ev.pdu = pdu;
	ev.pdu_len = len;
	return blk_event_encode(&ev, buf);
}

/* the records at @in (@n bytes) through the converter, as relay.c hands them: *@out, *@outlen */
static int convert(struct blk_tfsconv *c, const unsigned char *in, size_t n,
		   const unsigned char **out, size_t *outlen, unsigned long *events)
{
	int swapped = 0;

	blk_tfsconv_clear(c, 0);
	for (size_t off = 0; off < n;) {
		struct blk_event ev;
		long r = blk_frame(in + off, n - off, &swapped, &ev);

		assert_true(r > 0);
		if (blk_tfsconv_record(c, 0, &ev))
			return -1;
		off += (size_t)r;
	}
	*out = blk_tfsconv_staged(c, 0, outlen, events);
	return 0;
}

static uint32_t act(unsigned int code, uint32_t cat)
{
	return BLK_TC_ACT(cat) | code;
}

static void test_untag_and_runs(void **state)
{
	unsigned char in[4096], pdu[16];
	size_t n = 0, outlen, off = 0;
	const unsigned char *out;
	unsigned long events = 0;
	uint32_t devno = DEV;
	struct blk_tfsconv *c = blk_tfsconv_new(NULL, &devno, 1, 1, NULL, NULL);
	struct blk_cgmap *m = blk_cgmap_new();
	uint64_t id, tagged, runs;
	int swapped = 0, nev = 0, nnotes = 0;
	struct blk_event ev;
	/* the cgroup each event (by sequence number) must get back: 0 none (a plug: none) */
	const uint64_t want[] = {0, CG_A, CG_A, 0, CG_A, CG_B, 0};

	(void)state;
	assert_non_null(c);
	assert_non_null(m);
	n += rec(in + n, 1, act(BLK_TA_QUEUE, BLK_TC_QUEUE) | BLK_TA_CGROUP, CG_A);
	n += rec(in + n, 2, act(BLK_TA_GETRQ, BLK_TC_QUEUE) | BLK_TA_CGROUP, CG_A);
	/* a plug: never tagged, passed over by the run */
	n += rec(in + n, 3, act(BLK_TA_PLUG, BLK_TC_QUEUE), 0);
	n += rec(in + n, 4, act(BLK_TA_INSERT, BLK_TC_QUEUE) | BLK_TA_CGROUP, CG_A);
	n += rec(in + n, 5, act(BLK_TA_ISSUE, BLK_TC_ISSUE) | BLK_TA_CGROUP, CG_B);
	n += rec(in + n, 6, act(BLK_TA_COMPLETE, BLK_TC_COMPLETE), 0);
	/* a tagged note (a message): stripped, not an event */
	n += rec(in + n, 0, BLK_TN_ACTION(BLK_TN_MESSAGE) | BLK_TA_CGROUP, CG_B);
	assert_int_equal(convert(c, in, n, &out, &outlen, &events), 0);
	assert_int_equal(events, 6);
	while (off < outlen) {
		long r = blk_frame(out + off, outlen - off, &swapped, &ev);

		assert_true(r > 0);
		off += (size_t)r;
		assert_false(blk_event_action32(&ev) & BLK_TA_CGROUP);
		if (blk_event_is_cgroup(&ev)) {
			nnotes++;
			assert_int_equal(blk_cgmap_note(m, &ev), 1);
			continue;
		}
		/* every record keeps its own payload, the id taken out */
		assert_int_equal(ev.pdu_len, 4);
		assert_memory_equal(ev.pdu, "abcd", 4);
		if (blk_event_is_notify(&ev))
			continue;
		nev++;
		assert_int_equal(blk_cgmap_lookup(m, &ev, &id), want[ev.sequence] != 0);
		if (want[ev.sequence])
			assert_int_equal(id, want[ev.sequence]);
	}
	assert_int_equal(nev, 6);
	/* one run of A over 1-4 (the plug inside), one of B */
	assert_int_equal(nnotes, 2);
	blk_tfsconv_cgroup_counts(c, &tagged, &runs);
	assert_int_equal(tagged, 5);
	assert_int_equal(runs, 2);

	/* the next batch: A again at 7 starts a new run (runs end with their batch) */
	n = rec(in, 7, act(BLK_TA_QUEUE, BLK_TC_QUEUE) | BLK_TA_CGROUP, CG_A);
	assert_int_equal(convert(c, in, n, &out, &outlen, &events), 0);
	assert_int_equal(events, 1);
	assert_true(blk_frame(out, outlen, &swapped, &ev) > 0);
	assert_true(blk_event_is_cgroup(&ev));
	memcpy(pdu, ev.pdu, sizeof(struct blk_cgroup_pdu));
	assert_int_equal(((struct blk_cgroup_pdu *)pdu)->first, 7);
	blk_cgmap_free(m);
	blk_tfsconv_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untag_and_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
