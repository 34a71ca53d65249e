// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/iowait.c: I/O wait notes written byte by byte in both byte orders (not
 * with the encoder) and decoded, the encoder's records, damaged payloads, blkparse -d's
 * rebasing, and the time-ordered queue.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "blk/frame.h"
#include "blk/iowait.h"
#include "helpers.h"

struct wcase {
	uint64_t end, duration, rebase;
	uint32_t tgid, tid, dev, io_dev;
	uint32_t cpu;
	int32_t waker, sleep;
	uint8_t source, flags, func;
	const char *comm;
};

static const struct wcase cases[] = {
	{5000000000ull, 200000, 0, 4101, 4102, BLK_MKDEV(7, 0), BLK_MKDEV(7, 0), 1, 0, 1,
	 BLK_IOWAIT_SRC_SCHED, BLK_IOWAIT_F_IO | BLK_IOWAIT_F_IO_CHECKED, 0, "dd"},
	{123, 123, 77, 1, 1, BLK_MKDEV(252, 0), 0, 0, -1, -1, BLK_IOWAIT_SRC_MODULE, 0,
	 BLK_IOWAIT_FN_BLK_IO_SCHEDULE, "a-name-of-16chrs"},
	{UINT64_MAX, 1, 0, 9, 10, BLK_MKDEV(8, 16), 0, 4095, 4094, 3, BLK_IOWAIT_SRC_KPROBE,
	 BLK_IOWAIT_F_TGID_UNKNOWN, BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT, ""},
};

/* the payload of @c, field by field in byte order @be, @len as its len field */
static void put_pdu(struct tbuf *b, const struct wcase *c, int be, unsigned int version,
		    unsigned int len)
{
	char comm[16] = {0};

	tbuf_put(b, BLK_IOWAIT_MAGIC, 4, be);
	tbuf_put(b, version, 2, be);
	tbuf_put(b, len, 2, be);
	tbuf_put(b, c->duration, 8, be);
	tbuf_put(b, c->rebase, 8, be);
	tbuf_put(b, c->tgid, 4, be);
	tbuf_put(b, c->tid, 4, be);
	tbuf_put(b, c->io_dev, 4, be);
	tbuf_put(b, (uint32_t)c->waker, 4, be);
	tbuf_put(b, (uint32_t)c->sleep, 4, be);
	tbuf_put(b, c->source, 1, be);
	tbuf_put(b, c->flags, 1, be);
	tbuf_put(b, c->func, 1, be);
	tbuf_put(b, 0, 1, be);
	memcpy(comm, c->comm, strnlen(c->comm, 16));
	tbuf_add(b, comm, 16);
}

/* a whole record of @c in byte order @be, with @extra payload bytes after the 64 */
static void put_record(struct tbuf *b, const struct wcase *c, int be, unsigned int extra)
{
	struct tbuf p = TBUF_INIT;
	struct blk_event ev;

	put_pdu(&p, c, be, BLK_IOWAIT_VERSION, 64 + extra);
	for (unsigned int i = 0; i < extra; i++)
		tbuf_put(&p, 0xab, 1, be);
	memset(&ev, 0, sizeof(ev));
	ev.time = c->end;
	ev.action = BLK_TN_ACTION(BLK_TN_IOWAIT);
	ev.pid = c->tid;
	ev.device = c->dev;
	ev.cpu = c->cpu;
	ev.version = BLK_IO_TRACE_VERSION;
	ev.pdu = p.p;
	ev.pdu_len = (uint16_t)p.len;
	tbuf_add_event(b, &ev, be);
	tbuf_free(&p);
}

static void check_decoded(const struct blk_iowait *w, const struct wcase *c)
{
	assert_true(w->end == c->end);
	assert_true(w->duration == c->duration);
	assert_true(w->start == (int64_t)(c->end - c->duration));
	assert_true(w->rebase == c->rebase);
	assert_int_equal(w->tgid, c->tgid);
	assert_int_equal(w->tid, c->tid);
	assert_int_equal(w->device, c->dev);
	assert_int_equal(w->io_dev, c->io_dev);
	assert_int_equal(w->cpu, (int)c->cpu);
	assert_int_equal(w->waker_cpu, c->waker);
	assert_int_equal(w->sleep_cpu, c->sleep);
	assert_int_equal(w->source, c->source);
	assert_int_equal(w->flags, c->flags);
	assert_int_equal(w->func, c->func);
	assert_string_equal(w->comm, c->comm);
}

static void decodes_both_byte_orders(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int be = 0; be <= 1; be++) {
			for (unsigned int extra = 0; extra <= 8; extra += 8) {
				struct tbuf b = TBUF_INIT;
				struct blk_event ev;
				struct blk_iowait w;
				int swapped = -1;

				put_record(&b, &cases[i], be, extra);
				assert_int_equal(blk_frame(b.p, b.len, &swapped, &ev),
						 (long)(48 + 64 + extra));
				assert_true(blk_event_is_iowait(&ev));
				assert_true(blk_event_is_notify(&ev));
				assert_int_equal(blk_iowait_decode(&ev, &w), 0);
				check_decoded(&w, &cases[i]);
				tbuf_free(&b);
			}
		}
	}
}

/*
 * A wait another task's I/O ended (BLK_IOWAIT_F_WAKER_IO): its payload grows by the waker's
 * fields (len 88), which decode, rebase and the text carry; without the flag it stays 64.
 */
static void waker_fields_round_trip(void **state)
{
	struct blk_iowait w = {0}, back;
	struct blk_iowait_pdu pdu, rpdu;
	struct blk_event ev, got;
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	unsigned char buf[256];
	int swapped = -1;

	(void)state;
	w.end = 5000;
	w.duration = 1200;
	w.tgid = w.tid = 77;
	w.device = BLK_MKDEV(7, 1);
	w.cpu = 1;
	w.waker_cpu = 1;
	w.sleep_cpu = 0;
	w.source = BLK_IOWAIT_SRC_SCHED;
	w.flags = BLK_IOWAIT_F_IO_CHECKED | BLK_IOWAIT_F_WAKER_IO;
	snprintf(w.comm, sizeof(w.comm), "fio");
	w.waker_tid = 640;
	snprintf(w.waker_comm, sizeof(w.waker_comm), "jbd2/loop1-8");
	blk_iowait_encode(&w, &pdu, &ev);
	assert_int_equal(ev.pdu_len, 88);
	assert_int_equal(blk_event_encode(&ev, buf), 48 + 88);
	assert_true(blk_frame(buf, 48 + 88, &swapped, &got) > 0);
	assert_int_equal(blk_iowait_decode(&got, &back), 0);
	assert_int_equal(back.waker_tid, 640);
	assert_string_equal(back.waker_comm, "jbd2/loop1-8");
	assert_int_equal(blk_iowait_rebase(&got, &rpdu, 1000), 0);
	assert_int_equal(got.pdu_len, 88);
	assert_int_equal(blk_iowait_decode(&got, &back), 0);
	assert_int_equal(back.end, 4000);
	assert_int_equal(back.waker_tid, 640);
	assert_int_equal(blk_iowait_format(&got, &sb), 0);
	assert_non_null(strstr(sb.buf, " io=none woken_by=640[jbd2/loop1-8]\n"));
	blk_strbuf_release(&sb);
	/* the flag without the fields (a payload cut to 64): damaged */
	pdu.len = 64;
	ev.pdu_len = 64;
	assert_int_equal(blk_iowait_decode(&ev, &back), -EINVAL);
	/* no flag: the 64 bytes of before */
	w.flags = BLK_IOWAIT_F_IO_CHECKED | BLK_IOWAIT_F_IO;
	blk_iowait_encode(&w, &pdu, &ev);
	assert_int_equal(ev.pdu_len, 64);
	assert_int_equal(blk_iowait_decode(&ev, &back), 0);
	assert_int_equal(back.waker_tid, 0);
}

static void encoder_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct wcase *c = &cases[i];
		struct blk_iowait w = {0}, back;
		struct blk_iowait_pdu pdu;
		struct blk_event ev, got;
		unsigned char buf[256];
		struct tbuf ref = TBUF_INIT;
		size_t n;
		int swapped = -1;

		w.end = c->end;
		w.duration = c->duration;
		w.tgid = c->tgid;
		w.tid = c->tid;
		w.device = c->dev;
		w.io_dev = c->io_dev;
		w.cpu = (int)c->cpu;
		w.waker_cpu = c->waker;
		w.sleep_cpu = c->sleep;
		w.source = c->source;
		w.flags = c->flags;
		w.func = c->func;
		snprintf(w.comm, sizeof(w.comm), "%s", c->comm);
		blk_iowait_encode(&w, &pdu, &ev);
		n = blk_event_encode(&ev, buf);
		assert_int_equal(n, 48 + 64);
		/* byte for byte the record written by hand (rebase 0 in a new record) */
		{
			struct wcase c0 = *c;

			c0.rebase = 0;
			put_record(&ref, &c0, test_host_be(), 0);
		}
		assert_int_equal(ref.len, n);
		assert_memory_equal(ref.p, buf, n);
		assert_int_equal(blk_frame(buf, n, &swapped, &got), (long)n);
		assert_int_equal(blk_iowait_decode(&got, &back), 0);
		assert_true(back.rebase == 0);
		assert_string_equal(back.comm, c->comm);
		tbuf_free(&ref);
	}
}

static void rejects_damage(void **state)
{
	const struct wcase *c = &cases[0];
	struct blk_event ev;
	struct blk_iowait w;
	struct tbuf b = TBUF_INIT;
	int swapped = -1;

	(void)state;
	/* too short */
	put_record(&b, c, TEST_LE, 0);
	assert_true(blk_frame(b.p, b.len, &swapped, &ev) > 0);
	ev.pdu_len = 63;
	assert_int_equal(blk_iowait_decode(&ev, &w), -EINVAL);
	ev.pdu_len = 64;
	/* not a wait note */
	ev.action = BLK_TN_ACTION(BLK_TN_MESSAGE);
	assert_int_equal(blk_iowait_decode(&ev, &w), -EINVAL);
	ev.action = BLK_TN_ACTION(BLK_TN_IOWAIT) | BLK_TA_CGROUP;
	assert_false(blk_event_is_iowait(&ev));
	ev.action = BLK_TN_ACTION(BLK_TN_IOWAIT);
	/* bad magic */
	b.p[48] ^= 0x01;
	assert_int_equal(blk_iowait_decode(&ev, &w), -EINVAL);
	b.p[48] ^= 0x01;
	assert_int_equal(blk_iowait_decode(&ev, &w), 0);
	tbuf_free(&b);
	/* another version; a len below 64 or beyond the payload */
	for (int k = 0; k < 3; k++) {
		struct tbuf p = TBUF_INIT;

		put_pdu(&p, c, TEST_BE, k == 0 ? 2 : 1, k == 1 ? 60 : 65);
		memset(&ev, 0, sizeof(ev));
		ev.action = BLK_TN_ACTION(BLK_TN_IOWAIT);
		ev.pdu = p.p;
		ev.pdu_len = 64;
		assert_int_equal(blk_iowait_decode(&ev, &w), k == 0 ? -EPROTONOSUPPORT : -EINVAL);
		tbuf_free(&p);
	}
}

static void rebase_keeps_the_writers_order(void **state)
{
	(void)state;
	for (int be = 0; be <= 1; be++) {
		struct tbuf b = TBUF_INIT;
		struct blk_iowait_pdu pdu;
		struct blk_event ev, keep;
		struct blk_iowait w;
		int swapped = -1;

		/* rebase 77 already, and 8 bytes of a later version */
		put_record(&b, &cases[1], be, 8);
		assert_true(blk_frame(b.p, b.len, &swapped, &ev) > 0);
		keep = ev;
		assert_int_equal(blk_iowait_rebase(&ev, &pdu, 124), -ERANGE);
		assert_true(ev.time == keep.time && ev.pdu == keep.pdu);
		assert_int_equal(blk_iowait_rebase(&ev, &pdu, 23), 0);
		assert_true(ev.time == 100);
		assert_ptr_equal(ev.pdu, &pdu);
		assert_int_equal(ev.pdu_len, 64);
		assert_int_equal(pdu.magic == BLK_IOWAIT_MAGIC, be == test_host_be());
		assert_int_equal(blk_iowait_decode(&ev, &w), 0);
		assert_true(w.rebase == 100);
		assert_true(w.end == 100 && w.duration == 123 && w.start == -23);
		assert_int_equal(w.func, BLK_IOWAIT_FN_BLK_IO_SCHEDULE);
		tbuf_free(&b);
	}
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(blk_iowait_source_name(BLK_IOWAIT_SRC_SCHED), "sched");
	assert_string_equal(blk_iowait_source_name(BLK_IOWAIT_SRC_MODULE), "module");
	assert_string_equal(blk_iowait_source_name(BLK_IOWAIT_SRC_KPROBE), "kprobe");
	assert_string_equal(blk_iowait_source_name((enum blk_iowait_source)9), "unknown");
	assert_string_equal(blk_iowait_func_name(BLK_IOWAIT_FN_IO_SCHEDULE), "io_schedule");
	assert_null(blk_iowait_func_name(BLK_IOWAIT_FN_UNKNOWN));
}

static void queue_orders_by_time_then_push(void **state)
{
	static const uint64_t times[] = {50, 10, 30, 10, 70, 20, 10, 60};
	struct blk_iowait_queue *q = blk_iowait_queue_new(0);
	unsigned char big[300];
	uint64_t last = 0, prev_tag = 0;
	struct blk_event ev;
	size_t n = sizeof(times) / sizeof(times[0]);

	(void)state;
	assert_non_null(q);
	memset(big, 0x5a, sizeof(big));
	for (size_t i = 0; i < n; i++) {
		unsigned char pdu[8];

		memset(&ev, 0, sizeof(ev));
		ev.time = times[i];
		ev.sector = i; /* push order */
		memset(pdu, (int)i, sizeof(pdu));
		ev.pdu = i == 4 ? big : pdu;
		ev.pdu_len = i == 4 ? sizeof(big) : sizeof(pdu);
		assert_int_equal(blk_iowait_queue_push(q, &ev), 0);
		memset(pdu, 0xff, sizeof(pdu)); /* the queue keeps its own copy */
	}
	assert_int_equal(blk_iowait_queue_len(q), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(blk_iowait_queue_peek(q, &ev), 1);
		assert_true(ev.time >= last);
		if (ev.time == last && i)
			assert_true(ev.sector > prev_tag);
		if (ev.sector == 4) {
			assert_int_equal(ev.pdu_len, sizeof(big));
			assert_memory_equal(ev.pdu, big, sizeof(big));
		} else {
			assert_int_equal(ev.pdu[0], (unsigned char)ev.sector);
		}
		last = ev.time;
		prev_tag = ev.sector;
		blk_iowait_queue_pop(q);
	}
	assert_int_equal(blk_iowait_queue_peek(q, &ev), 0);
	blk_iowait_queue_pop(q);
	blk_iowait_queue_free(q);
	blk_iowait_queue_free(NULL);
}

static void queue_is_bounded(void **state)
{
	struct blk_iowait_queue *q = blk_iowait_queue_new(3);
	struct blk_event ev;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	for (int i = 0; i < 3; i++) {
		ev.time = (uint64_t)(10 - i);
		assert_int_equal(blk_iowait_queue_push(q, &ev), 0);
	}
	ev.time = 1;
	assert_int_equal(blk_iowait_queue_push(q, &ev), 1);
	assert_int_equal(blk_iowait_queue_len(q), 3);
	assert_int_equal(blk_iowait_queue_peek(q, &ev), 1);
	assert_true(ev.time == 8);
	blk_iowait_queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_both_byte_orders),
		cmocka_unit_test(encoder_round_trip),
		cmocka_unit_test(waker_fields_round_trip),
		cmocka_unit_test(rejects_damage),
		cmocka_unit_test(rebase_keeps_the_writers_order),
		cmocka_unit_test(names),
		cmocka_unit_test(queue_orders_by_time_then_push),
		cmocka_unit_test(queue_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
