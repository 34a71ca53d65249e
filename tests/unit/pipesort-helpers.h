/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the unit tests of lib/pipesort.c (test-pipesort*.c): an input stream
 * written from a table of records, a sort run that collects what comes out, and the checks
 * of its order and skips. Include after <cmocka.h> and "helpers.h".
 */
#ifndef BLK_TEST_PIPESORT_HELPERS_H
#define BLK_TEST_PIPESORT_HELPERS_H

#include <stdint.h>

#include "blk/pipesort.h"
#include "blk/reader.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))
#define DEV0 BLK_MKDEV(8, 0)
#define DEV1 BLK_MKDEV(8, 16)
#define END                   \
	{                     \
		0, 0, 0, 0, 0 \
	}

/* One record of the input stream, in stream order; a record with seq 0 ends the list. */
struct prec {
	uint32_t dev;
	uint32_t cpu;
	uint32_t seq;
	uint64_t time;
	uint16_t pdu_len; /* payload bytes, filled with the sequence number */
};

struct got {
	uint32_t dev, cpu, seq;
	uint64_t time;
};

struct note_count {
	int records, notify, consume, fail_at;
};

/* The record callback (o.fn): counts; consumes notify records when @consume, fails at @fail_at. */
static inline int note_fn(void *arg, enum blk_merge_note what, void *owner, int cpu,
			  const struct blk_event *ev)
{
	struct note_count *n = arg;

	assert_int_equal(what, BLK_NOTE_RECORD);
	assert_null(owner);
	assert_int_equal(cpu, (int)ev->cpu);
	n->records++;
	if (n->fail_at && n->records == n->fail_at)
		return -ECANCELED;
	if (blk_event_is_notify(ev)) {
		n->notify++;
		return n->consume;
	}
	return 0;
}

static inline void write_stream(char *path, const struct prec *in, int garbage_at)
{
	struct tbuf b = TBUF_INIT;
	unsigned char pdu[200];

	for (int i = 0; in[i].seq || in[i].time; i++) {
		struct blk_event e = test_event(in[i].seq, in[i].time, in[i].cpu,
						CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE,
						in[i].seq * 8ull, 4096);

		if (i == garbage_at)
			tbuf_add(&b, "junk junk junk junk junk junk junk junk junk junk", 48);
		e.device = in[i].dev;
		memset(pdu, (int)in[i].seq, sizeof(pdu));
		e.pdu = pdu;
		e.pdu_len = in[i].pdu_len;
		tbuf_add_event(&b, &e, test_host_be());
	}
	test_write_temp(path, b.p, b.len);
	tbuf_free(&b);
}

/* Sort @in with @o; collect up to @max records into @out. Return the sorter (to inspect). */
static inline struct blk_pipesort *run_sort(const struct prec *in, struct blk_pipesort_opts *o,
					    struct got *out, int max, int *nout, int garbage_at)
{
	struct blk_pipesort *ps;
	struct blk_reader *r;
	struct blk_event ev;
	char path[64];
	int n = 0, ret;

	write_stream(path, in, garbage_at);
	r = blk_reader_open(path);
	assert_non_null(r);
	unlink(path);
	ps = blk_pipesort_new(r, o);
	assert_non_null(ps);
	assert_int_equal(blk_pipesort_needs_input(ps), 1);
	while ((ret = blk_pipesort_next(ps, &ev)) == 1) {
		assert_true(n < max);
		/* the payload is a copy that stays valid until the next call */
		for (unsigned int k = 0; k < ev.pdu_len; k++)
			assert_int_equal(ev.pdu[k], ev.sequence & 0xff);
		out[n].dev = ev.device;
		out[n].cpu = ev.cpu;
		out[n].seq = ev.sequence;
		out[n].time = ev.time;
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(blk_pipesort_next(ps, &ev), 0);
	assert_int_equal(blk_pipesort_needs_input(ps), 0);
	*nout = n;
	return ps;
}

static inline void expect(const struct got *out, int n, const struct got *want, int nwant)
{
	if (n != nwant)
		print_error("got %d records, want %d\n", n, nwant);
	for (int i = 0; i < n && i < nwant; i++) {
		if (out[i].dev != want[i].dev || out[i].cpu != want[i].cpu ||
		    out[i].seq != want[i].seq || out[i].time != want[i].time)
			print_error(
				"#%d: got dev %x cpu %u seq %u time %llu, want dev %x cpu %u seq %u time %llu\n",
				i, out[i].dev, out[i].cpu, out[i].seq,
				(unsigned long long)out[i].time, want[i].dev, want[i].cpu,
				want[i].seq, (unsigned long long)want[i].time);
		assert_int_equal(out[i].dev, want[i].dev);
		assert_int_equal(out[i].cpu, want[i].cpu);
		assert_int_equal(out[i].seq, want[i].seq);
		assert_int_equal(out[i].time, want[i].time);
	}
	assert_int_equal(n, nwant);
}

static inline void expect_no_skips(const struct blk_pipesort *ps, uint32_t dev)
{
	uint64_t ranges = 99, missing = 99;

	blk_pipesort_skips(ps, dev, &ranges, &missing);
	assert_int_equal(ranges, 0);
	assert_int_equal(missing, 0);
}

#endif /* BLK_TEST_PIPESORT_HELPERS_H */
