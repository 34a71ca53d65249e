// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/merge.c: file-mode k-way merge, classic tie order, notes, damage. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blk/merge.h"
#include "blk/output.h"
#include "blk/reader.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))
#define MAX_IN 4
#define MAX_REC 64

/*
 * One input: per-CPU file (cpu = stream number) holding records with the given times;
 * the record's sequence is its index in the stream. A time of NOTE_AT(t) makes that record
 * a TN_PROCESS notify record at time t; BAD_CPU_AT(t) gives it a foreign cpu field.
 */
#define NOTE_FLAG (1ull << 62)
#define BADCPU_FLAG (1ull << 61)
#define NOTE_AT(t) ((t) | NOTE_FLAG)
#define BAD_CPU_AT(t) ((t) | BADCPU_FLAG)
#define TIME_END UINT64_MAX

struct input_spec {
	uint64_t times[MAX_REC]; /* ends at TIME_END */
	int damage_after; /* >0: garbage after that many records */
};

struct note_log {
	int consume; /* return 1 for notify records */
	int fail_after; /* >0: return -EINTR on that record note */
	int records, notify, bad_cpu, bad_cpu_owner_cpu;
	int ends; /* BLK_NOTE_END notes */
	uint32_t bad_cpu_field;
	void *bad_cpu_owner;
	struct blk_merge *quiet; /* raw mode: blk_merge_quiet() for an input at its first record */
	int plain; /* records seen that are neither notes nor of a bad CPU */
};

static int note_fn(void *arg, enum blk_merge_note what, void *owner, int cpu,
		   const struct blk_event *ev)
{
	struct note_log *l = arg;

	if (what == BLK_NOTE_END) {
		assert_null(ev);
		l->ends++;
		return 0;
	}
	if (what == BLK_NOTE_BAD_CPU) {
		l->bad_cpu++;
		l->bad_cpu_owner = owner;
		l->bad_cpu_owner_cpu = cpu;
		l->bad_cpu_field = ev->cpu;
		return 0;
	}
	assert_int_equal(what, BLK_NOTE_RECORD);
	assert_int_equal(ev->cpu, (uint32_t)cpu);
	l->records++;
	if (l->fail_after && l->records == l->fail_after)
		return -EINTR;
	if (blk_event_is_notify(ev)) {
		l->notify++;
		return l->consume;
	}
	l->plain++;
	if (l->quiet)
		assert_int_equal(blk_merge_quiet(l->quiet, owner), 0);
	return 0;
}

/* Record @i of input @stream as write_input() writes it. */
static struct blk_event spec_event(int stream, int i, const struct input_spec *in)
{
	uint64_t t = in->times[i] & ~(NOTE_FLAG | BADCPU_FLAG);
	struct blk_event e = test_event((uint32_t)i, t, (uint32_t)stream,
					CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE,
					1000u * (unsigned int)stream + (unsigned int)i, 4096);
	static const char comm[] = "dd";

	if (in->times[i] & NOTE_FLAG) {
		e.action = BLK_TN_ACTION(BLK_TN_PROCESS);
		e.pdu = (const unsigned char *)comm;
		e.pdu_len = sizeof(comm);
	}
	if (in->times[i] & BADCPU_FLAG)
		e.cpu = (uint32_t)stream + 10;
	return e;
}

/* Input @stream in byte order @be (test_host_be() for the host's), version @version. */
static void write_input_as(char *path, int stream, const struct input_spec *in, int be,
			   uint8_t version)
{
	struct tbuf b = TBUF_INIT;
	int i;

	for (i = 0; in->times[i] != TIME_END; i++) {
		struct blk_event e = spec_event(stream, i, in);

		e.version = version;
		if (in->damage_after && i == in->damage_after) {
			static const char junk[64] = "garbage that is not a record";

			tbuf_add(&b, junk, sizeof(junk));
		}
		tbuf_add_event(&b, &e, be);
	}
	test_write_temp(path, b.p, b.len);
	tbuf_free(&b);
}

static void write_input(char *path, int stream, const struct input_spec *in)
{
	write_input_as(path, stream, in, test_host_be(), 0);
}

struct out_rec {
	int stream;
	int index;
	uint64_t time;
};

static int classic_order(const struct input_spec *in, int n, struct out_rec *out);

/*
 * Merge @n inputs (added in order 0..n-1, owner = &owners[i], cpu = i) with @batch;
 * return the number of records written to @out.
 */
static int run_merge_how(const struct input_spec *in, int n, unsigned int batch,
			 struct note_log *log, struct out_rec *out, int max_out,
			 struct blk_merge **keep, int take);

static int run_merge(const struct input_spec *in, int n, unsigned int batch, struct note_log *log,
		     struct out_rec *out, int max_out, struct blk_merge **keep)
{
	return run_merge_how(in, n, batch, log, out, max_out, keep, 0);
}

/*
 * Raw mode: the whole merge of @m written by blk_merge_dump_raw() (budgets of 1 to 50
 * records, times not rebased). Return its bytes (free()) and their length in *@len.
 */
static unsigned char *dump_all(struct blk_merge *m, size_t *len)
{
	const struct blk_merge_dump all = {
		.act_mask = UINT32_MAX, .msgs = 1, .end = UINT64_MAX, .pause = UINT64_MAX};
	struct blk_output *o;
	unsigned char *p;
	unsigned int taken, k = 0;
	char path[64];
	int ret;

	test_write_temp(path, "", 0);
	o = blk_output_open(path, 0);
	assert_non_null(o);
	do
		ret = blk_merge_dump_raw(m, o, &all, 1 + k++ % 50, &taken);
	while (ret == BLK_DUMP_MORE);
	assert_int_equal(ret, BLK_DUMP_END);
	assert_int_equal(blk_output_close(o), 0);
	p = test_read_file(path, len);
	unlink(path);
	return p;
}

/*
 * Raw mode: the record at @p (@left bytes on) is one of input cpu (its cpu field) of @in,
 * host order, in version @version: the bytes blk_event_encode() gives for it. *@ev is that
 * record, *@cpu its input. Return its length.
 */
static size_t check_raw(const unsigned char *p, size_t left, const struct input_spec *in,
			uint8_t version, struct blk_event *ev, int *cpu)
{
	unsigned char want[sizeof(struct blk_io_trace2) + 8];
	uint32_t seq, c;
	size_t len;

	assert_true(left >= sizeof(struct blk_io_trace));
	memcpy(&seq, p + offsetof(struct blk_io_trace, sequence), 4);
	if (version == BLK_IO_TRACE2_VERSION)
		memcpy(&c, p + offsetof(struct blk_io_trace2, cpu), 4);
	else
		memcpy(&c, p + offsetof(struct blk_io_trace, cpu), 4);
	assert_true(seq < MAX_REC);
	assert_true(c < MAX_IN);
	*cpu = (int)c;
	*ev = spec_event(*cpu, (int)seq, &in[c]);
	ev->version = version ? version : BLK_IO_TRACE_VERSION;
	len = blk_event_encode(ev, want);
	assert_true(left >= len);
	assert_memory_equal(p, want, len);
	return len;
}

/*
 * @take: 1: the records come from blk_merge_take(), and each is scribbled on once read (its
 * time set to 0 or to the largest value, in turn), as a caller may change it; 2: from the
 * dump of a merge in raw mode (blk_merge_dump_raw()), each checked against its input's
 * record (input 0 made quiet before the first); 3: the same with each input made quiet by
 * the callback at its first plain record.
 */
static int run_merge_how(const struct input_spec *in, int n, unsigned int batch,
			 struct note_log *log, struct out_rec *out, int max_out,
			 struct blk_merge **keep, int take)
{
	static int owners[MAX_IN];
	char paths[MAX_IN][64];
	struct blk_merge *m = blk_merge_new(batch, note_fn, log);
	struct blk_event ev, *p0;
	uint64_t prev = 0, genesis = 0;
	int got = 0, ret, cpu, have_genesis, ends0 = log->ends;
	void *owner;
	unsigned char *dumped = NULL;
	size_t dump_len = 0, at = 0;

	assert_non_null(m);
	if (take >= 2)
		assert_int_equal(blk_merge_set_raw(m), 0);
	if (take == 3)
		log->quiet = m;
	else
		assert_int_equal(blk_merge_quiet(m, &owners[0]), take == 2 ? 0 : -EINVAL);
	for (int i = 0; i < n; i++) {
		struct blk_reader *r;

		write_input(paths[i], i, &in[i]);
		r = blk_reader_open(paths[i]);
		assert_non_null(r);
		assert_int_equal(blk_merge_add(m, r, &owners[i], i), 0);
		unlink(paths[i]);
	}
	have_genesis = blk_merge_peek_time(m, &genesis);
	if (take >= 2)
		dumped = dump_all(m, &dump_len);
	for (;;) {
		struct blk_event *p = NULL;

		if (take >= 2) {
			/* the dump's records, one by one */
			ret = at < dump_len;
			if (ret) {
				at += check_raw(dumped + at, dump_len - at, in, 0, &ev, &cpu);
				owner = &owners[cpu];
			}
		} else if (take) {
			ret = blk_merge_take(m, &p, &owner, &cpu);
			if (ret == 1)
				ev = *p;
		} else {
			ret = blk_merge_next(m, &ev, &owner, &cpu);
		}
		if (ret != 1)
			break;
		assert_true(got < max_out);
		assert_true(cpu >= 0 && cpu < n);
		assert_ptr_equal(owner, &owners[cpu]);
		assert_int_equal(ev.cpu, (uint32_t)cpu);
		/* the payload stays readable until the next call */
		if (ev.pdu_len)
			assert_memory_equal(ev.pdu, "dd", 3);
		if (got == 0 && have_genesis)
			assert_int_equal(ev.time, genesis);
		assert_true(ev.time >= prev);
		prev = ev.time;
		out[got].stream = cpu;
		out[got].index = (int)ev.sequence;
		out[got].time = ev.time;
		got++;
		if (take < 2)
			assert_int_equal(blk_merge_peek_time(m, &genesis), 0);
		if (p)
			p->time = got % 2 ? 0 : UINT64_MAX;
	}
	assert_int_equal(ret, 0);
	/* exhausted stays exhausted */
	if (take == 3) {
		/* each input showed its first plain record only */
		assert_true(log->plain <= n);
		log->quiet = NULL;
	}
	if (take >= 2) {
		const struct blk_merge_dump all = {
			.act_mask = UINT32_MAX, .end = UINT64_MAX, .pause = UINT64_MAX};
		unsigned int taken;

		assert_int_equal(blk_merge_dump_raw(m, NULL, &all, 10, &taken), BLK_DUMP_END);
		/* the other mode's take is refused */
		assert_int_equal(blk_merge_take(m, &p0, &owner, &cpu), -EINVAL);
		free(dumped);
	} else {
		assert_int_equal(blk_merge_next(m, &ev, &owner, &cpu), 0);
	}
	/* every input told its end once, when the read that found it was made */
	assert_int_equal(log->ends - ends0, n);
	if (keep)
		*keep = m;
	else
		blk_merge_free(m);
	return got;
}

static void test_interleaved(void **state)
{
	static const struct input_spec in[3] = {
		{{1, 4, 7, 10, 13, TIME_END}, 0},
		{{2, 5, 8, 11, TIME_END}, 0},
		{{3, 6, 9, 12, 14, 15, TIME_END}, 0},
	};
	static const unsigned int batches[] = {0, 1, 2, 3, 512};
	struct out_rec out[32];
	struct note_log log;

	(void)state;
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		int n;

		memset(&log, 0, sizeof(log));
		n = run_merge(in, 3, batches[b], &log, out, 32, NULL);
		assert_int_equal(n, 15);
		assert_int_equal(log.records, 15);
		for (int i = 0; i < n; i++)
			assert_int_equal(out[i].time, (uint64_t)i + 1);
	}
}

static void test_two_inputs(void **state)
{
	static const struct input_spec in[2] = {
		{{100, 200, 300, 301, 302, 900, TIME_END}, 0},
		{{150, 160, 170, 800, 1000, TIME_END}, 0},
	};
	static const int want_stream[] = {0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1};
	struct out_rec out[16];
	struct note_log log;
	int n;

	(void)state;
	memset(&log, 0, sizeof(log));
	n = run_merge(in, 2, 2, &log, out, 16, NULL);
	assert_int_equal(n, 11);
	for (int i = 0; i < n; i++)
		assert_int_equal(out[i].stream, want_stream[i]);
}

/* The exact classic order for ties (verified against the reference blkparse). */
static void test_ties_classic_order(void **state)
{
	static const struct input_spec in[3] = {
		{{10, 20, 20, 30, TIME_END}, 0},
		{{20, 20, 25, TIME_END}, 0},
		{{20, 30, 30, TIME_END}, 0},
	};
	static const struct {
		int stream, index;
	} want[] = {
		{0, 0}, {0, 1}, {0, 2}, {2, 0}, {1, 0}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {0, 3},
	};
	struct out_rec out[16];
	struct note_log log;
	int n;

	(void)state;
	memset(&log, 0, sizeof(log));
	n = run_merge(in, 3, 0, &log, out, 16, NULL);
	assert_int_equal(n, 10);
	for (int i = 0; i < n; i++) {
		if (out[i].stream != want[i].stream || out[i].index != want[i].index)
			print_error("position %d: got %d/%d, want %d/%d\n", i, out[i].stream,
				    out[i].index, want[i].stream, want[i].index);
		assert_int_equal(out[i].stream, want[i].stream);
		assert_int_equal(out[i].index, want[i].index);
	}
	/* the model of the classic list used below agrees with the reference tool here */
	assert_int_equal(classic_order(in, 3, out), 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(out[i].stream, want[i].stream);
		assert_int_equal(out[i].index, want[i].index);
	}
}

/*
 * The classic tool's stream list (blkparse ms_sort/ms_resort/ms_deq), modelled directly:
 * a stream is inserted before the streams of equal time but never before the head, and
 * the stream in front stays there while its next record is not later than the next
 * stream's. Fills @out with the (stream, index) order; returns the record count.
 */
static int classic_order(const struct input_spec *in, int n, struct out_rec *out)
{
	int next[MAX_IN], pos[MAX_IN], len[MAX_IN];
	int head = -1, got = 0;

#define T(s) (in[s].times[pos[s]])
	for (int s = 0; s < n; s++) {
		next[s] = -1;
		pos[s] = 0;
		for (len[s] = 0; in[s].times[len[s]] != TIME_END; len[s]++)
			;
	}
	/* ms_sort() of every stream with records, in the order they were added */
	for (int s = 0; s < n + 1; s++) {
		int cur = s < n ? s : -1;

		if (cur < 0 || !len[cur])
			continue;
		if (head < 0) {
			head = cur;
		} else if (T(cur) < T(head)) {
			next[cur] = head;
			head = cur;
		} else {
			int t = head;

			while (next[t] >= 0 && T(next[t]) < T(cur))
				t = next[t];
			next[cur] = next[t];
			next[t] = cur;
		}
	}
	while (head >= 0) {
		int s = head;

		out[got].stream = s;
		out[got].index = pos[s];
		out[got].time = T(s);
		got++;
		/* ms_deq() */
		if (++pos[s] == len[s]) {
			head = next[s];
			next[s] = -1;
			continue;
		}
		/* ms_resort() */
		if (next[s] >= 0 && T(s) > T(next[s])) {
			int t;

			head = next[s];
			next[s] = -1;
			if (T(s) < T(head)) {
				next[s] = head;
				head = s;
				continue;
			}
			t = head;
			while (next[t] >= 0 && T(next[t]) < T(s))
				t = next[t];
			next[s] = next[t];
			next[t] = s;
		}
	}
#undef T
	return got;
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state % n;
}

/* Random inputs full of ties: the merge order equals the classic list's, for any batch. */
static void check_classic_list(int take)
{
	struct input_spec in[MAX_IN];
	struct out_rec got[MAX_IN * 10], want[MAX_IN * 10];
	struct note_log log;

	for (int iter = 0; iter < 300; iter++) {
		int n = 2 + (int)rnd(MAX_IN - 1), ng, nw;
		unsigned int batch = rnd(4);

		for (int s = 0; s < n; s++) {
			int len = (int)rnd(9);
			uint64_t t = rnd(4);

			for (int i = 0; i < len; i++) {
				in[s].times[i] = t;
				t += rnd(3);
			}
			in[s].times[len] = TIME_END;
			in[s].damage_after = 0;
		}
		memset(&log, 0, sizeof(log));
		ng = run_merge_how(in, n, batch, &log, got, MAX_IN * 10, NULL, take);
		nw = classic_order(in, n, want);
		assert_int_equal(ng, nw);
		for (int i = 0; i < nw; i++) {
			if (got[i].stream != want[i].stream || got[i].index != want[i].index) {
				print_error(
					"iteration %d (batch %u), position %d: got %d/%d, want %d/%d\n",
					iter, batch, i, got[i].stream, got[i].index, want[i].stream,
					want[i].index);
				for (int s = 0; s < n; s++) {
					print_error("  stream %d:", s);
					for (int k = 0; in[s].times[k] != TIME_END; k++)
						print_error(" %llu",
							    (unsigned long long)in[s].times[k]);
					print_error("\n");
				}
			}
			assert_int_equal(got[i].stream, want[i].stream);
			assert_int_equal(got[i].index, want[i].index);
		}
	}
}

static void test_matches_classic_list(void **state)
{
	(void)state;
	check_classic_list(0);
}

/* blk_merge_take(): the same order, whatever the caller does to the records it took */
static void test_take_matches_classic_list(void **state)
{
	(void)state;
	check_classic_list(1);
}

/* blk_merge_dump_raw(): the same order, each record's bytes as blk_event_encode() gives them */
static void test_raw_matches_classic_list(void **state)
{
	(void)state;
	check_classic_list(2);
	check_classic_list(3);
}

/*
 * Raw mode on a foreign-order and on a version-8 input: the records come out in host order,
 * in their own version, as the dump writes them; notes not consumed are merged with them.
 * Quiet inputs (blk_merge_quiet() at the first plain record) still show their notes and
 * their records of another CPU.
 */
static void test_raw_foreign_and_v2(void **state)
{
	static const struct input_spec in[2] = {
		{{1, NOTE_AT(3), 5, BAD_CPU_AT(6), 7, TIME_END}, 0},
		{{2, 4, 6, NOTE_AT(8), 9, TIME_END}, 0},
	};
	static const uint8_t versions[2] = {BLK_IO_TRACE_VERSION, BLK_IO_TRACE2_VERSION};
	static int owners[2];

	(void)state;
	for (int order = 0; order < 2; order++) {
		for (int v = 0; v < 4; v++) {
			struct note_log log;
			struct blk_merge *m;
			struct blk_event ev;
			char paths[2][64];
			unsigned char *dumped;
			uint64_t prev = 0;
			size_t len, at = 0;
			int cpu, got = 0;

			memset(&log, 0, sizeof(log));
			m = blk_merge_new(2, note_fn, &log);
			assert_non_null(m);
			assert_int_equal(blk_merge_set_raw(m), 0);
			if (v >= 2)
				log.quiet = m;
			for (int i = 0; i < 2; i++) {
				struct blk_reader *r;

				write_input_as(paths[i], i, &in[i],
					       order ? test_foreign_order() : test_host_be(),
					       versions[v % 2]);
				r = blk_reader_open(paths[i]);
				assert_non_null(r);
				assert_int_equal(blk_merge_add(m, r, &owners[i], i), 0);
				unlink(paths[i]);
			}
			/* too late once inputs are in */
			assert_int_equal(blk_merge_set_raw(m), -EBUSY);
			dumped = dump_all(m, &len);
			while (at < len) {
				at += check_raw(dumped + at, len - at, in, versions[v % 2], &ev,
						&cpu);
				assert_true(ev.time >= prev);
				prev = ev.time;
				got++;
			}
			free(dumped);
			assert_int_equal(got, 9);
			assert_int_equal(log.notify, 2);
			assert_int_equal(log.bad_cpu, 1);
			/* quiet: host-order version 7 inputs show only their first plain record */
			assert_int_equal(log.plain,
					 v >= 2 && !order && versions[v % 2] == 7 ? 2 : 7);
			blk_merge_free(m);
		}
	}
}

/* Equal times everywhere: the result is a permutation in time order with nothing lost. */
static void test_all_equal_times(void **state)
{
	static const struct input_spec in[3] = {
		{{5, 5, 5, TIME_END}, 0},
		{{5, 5, TIME_END}, 0},
		{{5, 5, 5, 5, TIME_END}, 0},
	};
	struct out_rec out[16];
	struct note_log log;
	int next[3] = {0};
	int n;

	(void)state;
	memset(&log, 0, sizeof(log));
	n = run_merge(in, 3, 2, &log, out, 16, NULL);
	assert_int_equal(n, 9);
	for (int i = 0; i < n; i++) {
		/* each input's records come out in their own order */
		assert_int_equal(out[i].index, next[out[i].stream]++);
	}
	assert_int_equal(next[0], 3);
	assert_int_equal(next[1], 2);
	assert_int_equal(next[2], 4);
}

/* Notify records consumed by the callback (return 1) are not merged and not counted. */
static void test_notify_consumed(void **state)
{
	static const struct input_spec in[2] = {
		{{NOTE_AT(1), 2, NOTE_AT(3), 4, 6, TIME_END}, 0},
		{{1, NOTE_AT(2), 3, 5, NOTE_AT(7), TIME_END}, 0},
	};
	struct out_rec out[16];
	struct note_log log;
	int n;

	(void)state;
	/* batch 1: consumed notes must not end a batch early or be counted in it */
	for (unsigned int batch = 0; batch < 3; batch++) {
		memset(&log, 0, sizeof(log));
		log.consume = 1;
		n = run_merge(in, 2, batch, &log, out, 16, NULL);
		assert_int_equal(log.notify, 4);
		assert_int_equal(n, 6);
		for (int i = 0; i < n; i++)
			assert_true(out[i].time >= 1 && out[i].time <= 6);
	}

	/* not consumed (return 0): they are merged like any record */
	memset(&log, 0, sizeof(log));
	n = run_merge(in, 2, 0, &log, out, 16, NULL);
	assert_int_equal(log.notify, 4);
	assert_int_equal(n, 10);
}

/* A record whose cpu field is not its input's CPU is reported and dropped. */
static void test_bad_cpu(void **state)
{
	static const struct input_spec in[2] = {
		{{1, 3, 5, TIME_END}, 0},
		{{2, BAD_CPU_AT(4), 6, TIME_END}, 0},
	};
	struct out_rec out[16];
	struct note_log log;
	int n;

	(void)state;
	memset(&log, 0, sizeof(log));
	n = run_merge(in, 2, 0, &log, out, 16, NULL);
	assert_int_equal(n, 5);
	assert_int_equal(log.bad_cpu, 1);
	assert_int_equal(log.bad_cpu_owner_cpu, 1);
	assert_int_equal(log.bad_cpu_field, 11);
	assert_non_null(log.bad_cpu_owner);
	assert_int_equal(log.records, 5);
	for (int i = 0; i < n; i++)
		assert_true(out[i].time != 4);
}

/* A damaged input stops; the others go on; the damage is counted once and described. */
static void test_damaged_input(void **state)
{
	static const struct input_spec in[3] = {
		{{1, 4, 7, 10, 13, TIME_END}, 0},
		{{2, 5, 8, 11, 14, TIME_END}, 3}, /* garbage after 2, 5, 8 */
		{{3, 6, 9, 12, 15, TIME_END}, 0},
	};
	static const unsigned int batches[] = {0, 2};
	struct out_rec out[32];
	struct note_log log;
	struct blk_merge *m;

	(void)state;
	for (size_t b = 0; b < 2; b++) {
		int n, from1 = 0;

		memset(&log, 0, sizeof(log));
		n = run_merge(in, 3, batches[b], &log, out, 32, &m);
		assert_int_equal(n, 13);
		for (int i = 0; i < n; i++)
			if (out[i].stream == 1)
				from1++;
		assert_int_equal(from1, 3);
		assert_int_equal(blk_merge_nerrors(m), 1);
		assert_non_null(strstr(blk_merge_error(m, 0), "/tmp/blk-unit-"));
		assert_non_null(strstr(blk_merge_error(m, 0), "bad magic"));
		assert_non_null(strstr(blk_merge_error(m, 0), "offset 144"));
		assert_string_equal(blk_merge_error(m, 1), "");
		blk_merge_free(m);
	}
}

/* A negative callback return stops the merge with that errno. */
static void test_callback_error(void **state)
{
	static const struct input_spec in[1] = {{{1, 2, 3, 4, TIME_END}, 0}};
	struct note_log log;
	struct blk_merge *m;
	struct blk_event ev;
	struct blk_reader *r;
	char path[64];
	void *owner;
	int cpu, owner_val = 0;

	(void)state;
	/* during the first batch: blk_merge_add() fails */
	memset(&log, 0, sizeof(log));
	log.fail_after = 2;
	m = blk_merge_new(0, note_fn, &log);
	assert_non_null(m);
	write_input(path, 0, &in[0]);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_merge_add(m, r, &owner_val, 0), -EINTR);
	blk_merge_free(m);
	unlink(path);

	/* during a later batch: blk_merge_next() fails */
	memset(&log, 0, sizeof(log));
	log.fail_after = 3;
	m = blk_merge_new(2, note_fn, &log);
	assert_non_null(m);
	write_input(path, 0, &in[0]);
	r = blk_reader_open(path);
	assert_non_null(r);
	assert_int_equal(blk_merge_add(m, r, &owner_val, 0), 0);
	assert_int_equal(blk_merge_next(m, &ev, &owner, &cpu), 1);
	assert_int_equal(ev.time, 1);
	assert_int_equal(blk_merge_next(m, &ev, &owner, &cpu), 1);
	assert_int_equal(ev.time, 2);
	assert_int_equal(blk_merge_next(m, &ev, &owner, &cpu), -EINTR);
	blk_merge_free(m);
	unlink(path);
}

static void test_empty_and_null(void **state)
{
	static const struct input_spec in[2] = {
		{{TIME_END}, 0},
		{{7, TIME_END}, 0},
	};
	struct out_rec out[4];
	struct blk_merge *m;
	struct blk_event ev;
	uint64_t t;
	void *owner;
	int cpu;

	(void)state;
	blk_merge_free(NULL);
	m = blk_merge_new(0, NULL, NULL);
	assert_non_null(m);
	assert_int_equal(blk_merge_peek_time(m, &t), 0);
	assert_int_equal(blk_merge_next(m, &ev, &owner, &cpu), 0);
	assert_int_equal(blk_merge_nerrors(m), 0);
	blk_merge_free(m);

	assert_int_equal(run_merge(in, 2, 0, &(struct note_log){0}, out, 4, NULL), 1);
	assert_int_equal(out[0].stream, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_two_inputs),
		cmocka_unit_test(test_ties_classic_order),
		cmocka_unit_test(test_matches_classic_list),
		cmocka_unit_test(test_take_matches_classic_list),
		cmocka_unit_test(test_raw_matches_classic_list),
		cmocka_unit_test(test_raw_foreign_and_v2),
		cmocka_unit_test(test_all_equal_times),
		cmocka_unit_test(test_notify_consumed),
		cmocka_unit_test(test_bad_cpu),
		cmocka_unit_test(test_damaged_input),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_empty_and_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
