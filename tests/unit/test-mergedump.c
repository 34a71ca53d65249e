// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of blk_merge_dump_raw() (lib/merge.c) and blk_output_raw_bytes() (lib/output.c):
 * the dump of a raw merge against the decoded merge's records, filtered and rebased here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/merge.h"
#include "blk/output.h"
#include "blk/reader.h"
#include "helpers.h"

#define NIN 3
#define NREC 1500

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(test_xorshift(&rnd_state) % n);
}

/* What an input is made of: its byte order and version, and how many notes */
struct in_kind {
	int foreign; /* the other byte order */
	uint8_t version; /* 0: 7, or BLK_IO_TRACE2_VERSION */
};

static const char comm[] = "dd";
static const char msg[] = "a message note";
static const unsigned char pdu[40] = "payload of a plain record, 40 bytes...";

/* Input @s: NREC records, times in steps of 0-2 with some going back; notes and payloads */
static void make_input(struct tbuf *b, int s, const struct in_kind *k)
{
	uint64_t t = 2000 + rnd(5); /* above every rebase below */
	int be = k->foreign ? !test_host_be() : test_host_be();

	for (int i = 0; i < NREC; i++) {
		uint32_t cat = rnd(4) ? BLK_TC_READ | BLK_TC_QUEUE : BLK_TC_WRITE | BLK_TC_COMPLETE;
		struct blk_event e = test_event((uint32_t)i, t, (uint32_t)s,
						(uint64_t)BLK_TC_ACT(cat) | BLK_TA_QUEUE,
						(uint64_t)i * 8, 4096);
		uint32_t r = rnd(100);

		e.version = k->version;
		if (r < 2) {
			e.action = BLK_TN_ACTION(BLK_TN_PROCESS);
			e.pdu = (const unsigned char *)comm;
			e.pdu_len = sizeof(comm);
		} else if (r < 4) {
			e.action = BLK_TN_ACTION(BLK_TN_MESSAGE);
			e.pdu = (const unsigned char *)msg;
			e.pdu_len = sizeof(msg);
		} else if (r < 8) {
			e.pdu = pdu;
			e.pdu_len = (uint16_t)(1 + rnd(sizeof(pdu)));
		}
		tbuf_add_event(b, &e, be);
		t += rnd(3);
		if (rnd(10) == 0)
			t -= rnd(6);
	}
}

/* the filter of blk_merge_dump, written out again: 1 keep, 0 leave out, -1 past the end */
static int keep(const struct blk_merge_dump *d, uint64_t time, uint32_t a)
{
	uint64_t t = time - d->rebase;

	if (t > d->end)
		return -1;
	return (a & d->act_mask) && t >= d->start &&
	       (d->msgs || a != BLK_TN_ACTION(BLK_TN_MESSAGE));
}

static struct blk_merge *new_merge(unsigned int batch, int raw, struct tbuf *in, size_t buf_size)
{
	static int owners[NIN];
	struct blk_merge *m = blk_merge_new(batch, NULL, NULL);

	assert_non_null(m);
	if (raw)
		assert_int_equal(blk_merge_set_raw(m), 0);
	for (int s = 0; s < NIN; s++) {
		char path[64];
		struct blk_reader *r;

		test_write_temp(path, in[s].p, in[s].len);
		r = blk_reader_open(path);
		assert_non_null(r);
		if (buf_size)
			blk_reader_set_buf_size(r, buf_size);
		assert_int_equal(blk_merge_add(m, r, &owners[s], s), 0);
		unlink(path);
	}
	if (raw)
		for (int s = 0; s < NIN; s++)
			assert_int_equal(blk_merge_quiet(m, &owners[s]), 0);
	return m;
}

/*
 * The bytes the dump should hold: the decoded merge's records that @d keeps, rebased; and
 * the time (as read) of every record the dump takes, in @times.
 */
static void expected(struct blk_merge *dec, const struct blk_merge_dump *d, struct tbuf *want,
		     uint64_t *times)
{
	struct blk_event ev;
	void *owner;
	int cpu, k;

	while (blk_merge_next(dec, &ev, &owner, &cpu) == 1) {
		unsigned char rec[64 + 256];

		*times++ = ev.time;
		k = keep(d, ev.time, (uint32_t)ev.action);
		if (k < 0)
			break;
		if (!k)
			continue;
		ev.time -= d->rebase;
		tbuf_add(want, rec, blk_event_encode(&ev, rec));
	}
}

/*
 * The dump of @raw by blk_merge_dump_raw() into @path, with budgets drawn at random, and,
 * when @pauses, pauses drawn at random around the next record's time (@times: the time of
 * each record in merged order): the records taken before a pause are all earlier than it,
 * the next one is not. Return the records taken.
 */
static unsigned int dump(struct blk_merge *raw, const struct blk_merge_dump *d, const char *path,
			 int async, int pauses, const uint64_t *times)
{
	struct blk_output *o = blk_output_open(path, 0);
	struct blk_merge_dump dp = *d;
	unsigned int total = 0, calls = 0, npause = 0;
	int ret;

	assert_non_null(o);
	if (async)
		assert_int_equal(blk_output_set_async(o), 0);
	for (;;) {
		unsigned int taken = 99999;

		dp.pause = UINT64_MAX;
		if (pauses && rnd(3) == 0 && total < NIN * NREC)
			dp.pause = times[total] + rnd(40) - (rnd(2) ? 2 : 0);
		ret = blk_merge_dump_raw(raw, o, &dp, 1 + rnd(rnd(4) ? 300 : 3), &taken);
		assert_true(taken != 99999);
		for (unsigned int i = total; i < total + taken; i++)
			assert_true(times[i] < dp.pause);
		total += taken;
		calls++;
		if (ret == BLK_DUMP_PAUSE) {
			assert_true(total < NIN * NREC);
			assert_true(times[total] >= dp.pause);
			npause++;
			continue;
		}
		if (ret == BLK_DUMP_END || ret == BLK_DUMP_STOP)
			break;
		assert_int_equal(ret, BLK_DUMP_MORE);
	}
	assert_true(calls > 1);
	if (pauses)
		assert_true(npause > 0);
	assert_int_equal(blk_output_close(o), 0);
	return total;
}

static void check_dump(const struct in_kind *kinds, unsigned int batch, size_t buf_size,
		       const struct blk_merge_dump *d, int async, int pauses)
{
	struct tbuf in[NIN] = {TBUF_INIT, TBUF_INIT, TBUF_INIT}, want = TBUF_INIT;
	struct blk_merge *raw, *dec;
	uint64_t *times = calloc(NIN * NREC, sizeof(*times));
	unsigned char *got;
	size_t got_len;
	unsigned int taken;
	char path[64];

	assert_non_null(times);
	for (int s = 0; s < NIN; s++)
		make_input(&in[s], s, &kinds[s]);
	raw = new_merge(batch, 1, in, buf_size);
	dec = new_merge(batch, 0, in, buf_size);
	expected(dec, d, &want, times);
	test_write_temp(path, "", 0);
	taken = dump(raw, d, path, async, pauses, times);
	if (d->end == UINT64_MAX)
		assert_int_equal(taken, NIN * NREC);
	got = test_read_file(path, &got_len);
	unlink(path);
	assert_int_equal(got_len, want.len);
	assert_memory_equal(got, want.p, want.len);
	/* nothing is left behind the end */
	if (d->end == UINT64_MAX)
		assert_int_equal(blk_merge_dump_raw(raw, NULL, d, 10, &taken), BLK_DUMP_END);
	free(got);
	free(times);
	blk_merge_free(raw);
	blk_merge_free(dec);
	for (int s = 0; s < NIN; s++)
		tbuf_free(&in[s]);
	tbuf_free(&want);
}

static const struct in_kind host3[NIN] = {{0, 0}, {0, 0}, {0, 0}};
/* a foreign-order input (encoded in host order, version 7) and a version 8 one */
static const struct in_kind mixed3[NIN] = {{0, 0}, {1, 0}, {0, BLK_IO_TRACE2_VERSION}};

/*
 * Everything kept: the dump holds every record of the decoded merge, rebased, byte for byte,
 * for batches of 1 to 600, inputs read through 16 KiB (most batches stay in the reader's
 * buffer, some are copied) or the default buffer, with and without the writing thread, with
 * and without pauses.
 */
static void test_dump_all(void **state)
{
	const unsigned int batches[] = {1, 7, 100, 512, 600};
	const struct blk_merge_dump all = {
		.act_mask = UINT32_MAX, .msgs = 1, .rebase = 1000, .start = 0, .end = UINT64_MAX};

	(void)state;
	for (unsigned int bi = 0; bi < sizeof(batches) / sizeof(batches[0]); bi++) {
		check_dump(host3, batches[bi], 16384, &all, 0, 0);
		check_dump(host3, batches[bi], 0, &all, 1, 1);
		check_dump(host3, batches[bi], 16384, &all, 0, 1);
	}
}

/* Inputs of another byte order and of version 8: the same bytes */
static void test_dump_foreign_v8(void **state)
{
	const struct blk_merge_dump all = {
		.act_mask = UINT32_MAX, .msgs = 1, .rebase = 0, .start = 0, .end = UINT64_MAX};

	(void)state;
	check_dump(mixed3, 512, 16384, &all, 0, 0);
	check_dump(mixed3, 100, 0, &all, 1, 1);
	check_dump(mixed3, 1, 16384, &all, 0, 1);
	check_dump(mixed3, 7, 16384, &all, 0, 1);
}

/*
 * Filters: categories (reads only: the writes and the notes left out), messages left out,
 * a window of times (before the start left out, the first past the end stops the dump).
 */
static void test_dump_filters(void **state)
{
	const struct blk_merge_dump reads = {.act_mask = BLK_TC_ACT(BLK_TC_READ),
					     .msgs = 1,
					     .rebase = 1000,
					     .start = 0,
					     .end = UINT64_MAX};
	const struct blk_merge_dump nomsg = {
		.act_mask = UINT32_MAX, .msgs = 0, .rebase = 0, .start = 0, .end = UINT64_MAX};
	const struct blk_merge_dump window = {
		.act_mask = UINT32_MAX, .msgs = 1, .rebase = 1000, .start = 1300, .end = 2200};

	(void)state;
	check_dump(host3, 512, 16384, &reads, 0, 0);
	check_dump(host3, 7, 0, &reads, 1, 1);
	check_dump(mixed3, 512, 16384, &nomsg, 0, 1);
	check_dump(host3, 512, 16384, &nomsg, 0, 0);
	check_dump(host3, 512, 16384, &window, 0, 0);
	check_dump(host3, 100, 0, &window, 1, 1);
	check_dump(mixed3, 512, 16384, &window, 0, 1);
}

/*
 * blk_output_raw_bytes(): records of every size (with payloads up to 64 KiB) in spans of
 * any length, split where the flush size falls: the bytes of one blk_output_record() each;
 * with and without the writing thread.
 */
static void test_raw_bytes(void **state)
{
	(void)state;
	for (unsigned int fi = 0; fi < 4; fi++) {
		struct tbuf in = TBUF_INIT;
		struct blk_output *a, *b;
		unsigned char *pa, *pb, *big = calloc(1, 65535);
		size_t la, lb, off = 0;
		char path_a[64], path_b[64];

		assert_non_null(big);
		for (int i = 0; i < 400; i++) {
			struct blk_event e = test_event((uint32_t)i, 5000 + (uint64_t)i, 0,
							BLK_TC_ACT(BLK_TC_READ) | BLK_TA_QUEUE, 8,
							8);
			uint32_t r = rnd(20);

			if (r == 0) {
				e.pdu = big;
				e.pdu_len = (uint16_t)(60000 + rnd(5536));
			} else if (r < 6) {
				e.pdu = big;
				e.pdu_len = (uint16_t)rnd(300);
			}
			tbuf_add_event(&in, &e, test_host_be());
		}
		test_write_temp(path_a, "", 0);
		test_write_temp(path_b, "", 0);
		a = blk_output_open(path_a, 0);
		b = blk_output_open(path_b, 0);
		assert_non_null(a);
		assert_non_null(b);
		if (fi & 1)
			assert_int_equal(blk_output_set_async(a), 0);
		/* spans of 1 to 40 records */
		while (off < in.len) {
			size_t end = off;
			unsigned int k = 1 + rnd(40);

			for (unsigned int j = 0; j < k && end < in.len; j++) {
				uint16_t pl;

				memcpy(&pl, in.p + end + offsetof(struct blk_io_trace, pdu_len), 2);
				end += sizeof(struct blk_io_trace) + pl;
			}
			assert_int_equal(blk_output_raw_bytes(a, in.p + off, end - off, 4000), 0);
			for (size_t q = off; q < end;) {
				uint16_t pl;
				uint64_t t;

				memcpy(&pl, in.p + q + offsetof(struct blk_io_trace, pdu_len), 2);
				memcpy(&t, in.p + q + offsetof(struct blk_io_trace, time), 8);
				assert_int_equal(blk_output_record(b, in.p + q,
								   sizeof(struct blk_io_trace) + pl,
								   t - 4000),
						 0);
				q += sizeof(struct blk_io_trace) + pl;
			}
			off = end;
		}
		/* a span that ends inside a record is refused */
		assert_int_equal(blk_output_raw_bytes(a, in.p, 47, 0), -EINVAL);
		assert_int_equal(blk_output_close(a), 0);
		assert_int_equal(blk_output_close(b), 0);
		pa = test_read_file(path_a, &la);
		pb = test_read_file(path_b, &lb);
		assert_int_equal(la, in.len);
		assert_int_equal(la, lb);
		assert_memory_equal(pa, pb, la);
		/* the times are rebased, the rest as it was */
		{
			uint64_t t;

			memcpy(&t, pa + offsetof(struct blk_io_trace, time), 8);
			assert_int_equal(t, 1000);
			assert_memory_equal(pa, in.p, offsetof(struct blk_io_trace, time));
		}
		unlink(path_a);
		unlink(path_b);
		free(pa);
		free(pb);
		free(big);
		tbuf_free(&in);
	}
}

/* Not in raw mode, or no budget: refused. */
static void test_dump_refused(void **state)
{
	struct blk_merge *m = blk_merge_new(0, NULL, NULL);
	const struct blk_merge_dump all = {
		.act_mask = UINT32_MAX, .end = UINT64_MAX, .pause = UINT64_MAX};
	unsigned int taken = 1;

	(void)state;
	assert_non_null(m);
	assert_int_equal(blk_merge_dump_raw(m, NULL, &all, 10, &taken), -EINVAL);
	assert_int_equal(taken, 0);
	assert_int_equal(blk_merge_set_raw(m), 0);
	assert_int_equal(blk_merge_dump_raw(m, NULL, &all, 0, &taken), -EINVAL);
	/* an empty merge has nothing to dump */
	assert_int_equal(blk_merge_dump_raw(m, NULL, &all, 10, &taken), BLK_DUMP_END);
	blk_merge_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_all),     cmocka_unit_test(test_dump_foreign_v8),
		cmocka_unit_test(test_dump_filters), cmocka_unit_test(test_raw_bytes),
		cmocka_unit_test(test_dump_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
