// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/printq.c: lines rendered on the worker thread come out in order and
 * byte for byte as blk_format_default()/blk_format_render() write them on the caller's
 * thread; text, payloads larger than a batch's arena, syncs between lines, write errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>

#include "blk/format.h"
#include "blk/output.h"
#include "blk/printq.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

static char *temp_name(char *path)
{
	int fd;

	strcpy(path, "/tmp/blk-unit-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

static const char *const acts[] = {"Q", "G", "I", "D", "C", "M", "P", "U", "UT", "A", "X"};
static const uint32_t codes[] = {BLK_TA_QUEUE, BLK_TA_GETRQ,	 BLK_TA_INSERT,
				 BLK_TA_ISSUE, BLK_TA_COMPLETE,	 BLK_TA_BACKMERGE,
				 BLK_TA_PLUG,  BLK_TA_UNPLUG_IO, BLK_TA_UNPLUG_TIMER,
				 BLK_TA_REMAP, BLK_TA_SPLIT};

/* The @i-th test event, its payload in @pdu (24 bytes), its context in @c. */
static void make_event(unsigned int i, struct blk_event *ev, unsigned char *pdu,
		       struct blk_fmt_ctx *c)
{
	static const char *const comms[] = {"fio", "kworker/0:1H", NULL, "a-fifteen-chars"};
	unsigned int k = i % (sizeof(acts) / sizeof(acts[0]));

	memset(ev, 0, sizeof(*ev));
	memset(c, 0, sizeof(*c));
	ev->time = 1000000000ull * (i / 1000) + i * 977ull;
	ev->sector = 123456789ull * i;
	ev->bytes = (i % 9) * 4096;
	ev->action = codes[k] | CAT(i % 2 ? BLK_TC_WRITE : BLK_TC_READ) | CAT(BLK_TC_QUEUE);
	ev->pid = 1000 + i % 7;
	ev->device = BLK_MKDEV(8, i % 3);
	ev->cpu = i % 2;
	ev->sequence = i;
	ev->error = (uint16_t)(i % 5 == 0);
	ev->version = BLK_IO_TRACE_VERSION;
	for (int b = 0; b < 24; b++)
		pdu[b] = (unsigned char)(i * 31 + b);
	if (codes[k] == BLK_TA_UNPLUG_IO || codes[k] == BLK_TA_UNPLUG_TIMER ||
	    codes[k] == BLK_TA_SPLIT) {
		ev->pdu_len = 8;
	} else if (codes[k] == BLK_TA_REMAP) {
		ev->pdu_len = 16;
	} else if (i % 11 == 0) {
		/* a PC request with a payload printed in hex */
		ev->action |= CAT(BLK_TC_PC);
		ev->pdu_len = 24;
		c->pc_pdu = pdu;
		c->pc_pdu_len = 24;
	} else if (i % 17 == 0) {
		/* a PC payload of its own, not the event's */
		ev->action |= CAT(BLK_TC_PC);
		ev->pdu_len = 8;
		c->pc_pdu = pdu + 8;
		c->pc_pdu_len = 16;
	}
	if (i % 13 == 0) {
		/* a wall clock, for %z */
		c->have_wall = 1;
		c->wall_sec = 1700000000 + (int64_t)i;
		c->wall_nsec = (long)(i * 1000) % 1000000000;
	}
	ev->pdu = pdu;
	c->act = acts[k];
	c->comm = comms[i % 4];
	c->cpu = (int)ev->cpu;
	c->elapsed = i % 3 ? BLK_NO_ELAPSED : i * 1000ull;
	c->cg_ino = i;
	c->cg_gen = i + 1;
	/* a cgroup path (%G) on every 3rd: its pointer rides in the arena before the payload */
	if (i % 3 == 0)
		c->cg_path = i % 2 ? "/db/writer" : "/";
	/* an origin (%o %O %f %F) on every 4th: its struct rides in the arena too */
	if (i % 4 == 1) {
		static const struct blk_fmt_origin origins[] = {
			{.pid = 77,
			 .name = "dd",
			 .has_file = 1,
			 .ino = 12,
			 .offset = 4096,
			 .path = "/mnt/a"},
			{.pid = 78, .name = "journal"},
			{.pid = 79, .name = "fio", .has_file = 1, .ino = 13, .offset = 0},
			{.has_file = 1, .ino = 14, .offset = 512},
		};

		c->origin = &origins[(i / 4) % 4];
	}
}

/* Queue @n lines (every 97th a text line, every 5th with the format @f) and render them the
 * same way by hand into @want. */
static void queue_lines(struct blk_printq *q, struct blk_format *f, unsigned int n,
			struct blk_strbuf *want)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned char pdu[24];
		struct blk_event ev;
		struct blk_fmt_ctx c;
		const struct blk_format *lf = i % 5 == 0 ? f : NULL;

		if (i % 97 == 0) {
			char line[64];
			int len = snprintf(line, sizeof(line), "a message line %u\n", i);

			assert_int_equal(blk_printq_text(q, line, (size_t)len), 0);
			blk_strbuf_add(want, line, (size_t)len);
			continue;
		}
		make_event(i, &ev, pdu, &c);
		if (lf && c.elapsed == BLK_NO_ELAPSED)
			c.elapsed = 7;
		assert_int_equal(blk_printq_event(q, lf, &ev, &c), 0);
		/* the queue copied them: what the caller does next must not matter */
		memset(pdu, 0xee, sizeof(pdu));
		make_event(i, &ev, pdu, &c);
		if (lf && c.elapsed == BLK_NO_ELAPSED)
			c.elapsed = 7;
		if (lf)
			assert_int_equal(blk_format_render(lf, &ev, &c, want), 0);
		else
			blk_format_default(&ev, &c, want);
	}
}

static void test_same_as_direct(void **state)
{
	char path[64], err[128];
	struct blk_strbuf want = BLK_STRBUF_INIT;
	struct blk_format *f = blk_format_compile(
		"%D %2c %8s %5T.%9t %p %a %d %S + %n %u %C %P %z %g %G %o %-4O %f %3F\\n", err,
		sizeof(err));
	struct blk_output *o;
	struct blk_printq *q;
	size_t n;
	char *got;

	(void)state;
	assert_non_null(f);
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	q = blk_printq_new(o);
	assert_non_null(q);
	queue_lines(q, f, 20000, &want);
	/* after a sync the output is the caller's again, in order */
	assert_int_equal(blk_printq_sync(q), 0);
	blk_strbuf_addstr(blk_output_sb(o), "between\n");
	blk_strbuf_addstr(&want, "between\n");
	queue_lines(q, f, 3000, &want);
	blk_printq_free(q);
	blk_strbuf_addstr(blk_output_sb(o), "summary\n");
	blk_strbuf_addstr(&want, "summary\n");
	assert_int_equal(blk_output_close(o), 0);
	got = slurp(path, &n);
	assert_int_equal(n, want.len);
	assert_memory_equal(got, want.buf, n);
	free(got);
	unlink(path);
	blk_strbuf_release(&want);
	blk_format_free(f);
}

/*
 * Syncs after any number of lines: none, part of one batch, a few (fewer than wake the
 * worker), the whole ring and more; after each, the output is the caller's and holds every
 * line before it. A lost wake-up hangs here.
 */
static void test_sync_points(void **state)
{
	char path[64], err[128];
	struct blk_strbuf want = BLK_STRBUF_INIT;
	struct blk_format *f = blk_format_compile("%a %d %S + %n [%C]\n", err, sizeof(err));
	struct blk_output *o;
	struct blk_printq *q;
	uint32_t seed = 17;
	size_t n;
	char *got;

	(void)state;
	assert_non_null(f);
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	q = blk_printq_new(o);
	assert_non_null(q);
	for (int i = 0; i < 300; i++) {
		static const unsigned int sizes[] = {0, 1, 255, 256, 257, 700, 1025, 2500, 5000};
		char mark[32];
		int len;

		seed = seed * 1103515245u + 12345u;
		queue_lines(q, f, sizes[(seed >> 16) % 9], &want);
		assert_int_equal(blk_printq_sync(q), 0);
		len = snprintf(mark, sizeof(mark), "sync %d\n", i);
		blk_strbuf_add(blk_output_sb(o), mark, (size_t)len);
		blk_strbuf_add(&want, mark, (size_t)len);
	}
	blk_printq_free(q);
	assert_int_equal(blk_output_close(o), 0);
	got = slurp(path, &n);
	assert_int_equal(n, want.len);
	assert_memory_equal(got, want.buf, n);
	free(got);
	unlink(path);
	blk_strbuf_release(&want);
	blk_format_free(f);
}

/* A text line larger than a batch's arena, between short ones. */
static void test_large_text(void **state)
{
	char path[64];
	size_t big = 70000, n;
	char *text = malloc(big), *got;
	struct blk_output *o;
	struct blk_printq *q;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < big; i++)
		text[i] = (char)('a' + i % 26);
	o = blk_output_open(temp_name(path), 0);
	assert_non_null(o);
	q = blk_printq_new(o);
	assert_non_null(q);
	assert_int_equal(blk_printq_text(q, "1\n", 2), 0);
	assert_int_equal(blk_printq_text(q, text, big), 0);
	assert_int_equal(blk_printq_text(q, "2\n", 2), 0);
	blk_printq_free(q);
	assert_int_equal(blk_output_close(o), 0);
	got = slurp(path, &n);
	assert_int_equal(n, big + 4);
	assert_memory_equal(got, "1\n", 2);
	assert_memory_equal(got + 2, text, big);
	assert_memory_equal(got + 2 + big, "2\n", 2);
	free(got);
	free(text);
	unlink(path);
}

/* A write error of the worker comes back to the caller, which can then stop. */
static void test_write_error(void **state)
{
	struct blk_output *o = blk_output_open("/dev/full", 0);
	struct blk_printq *q;
	int ret = 0;

	(void)state;
	assert_non_null(o);
	q = blk_printq_new(o);
	assert_non_null(q);
	for (unsigned int i = 0; i < 200000 && !ret; i++) {
		unsigned char pdu[24];
		struct blk_event ev;
		struct blk_fmt_ctx c;

		make_event(i, &ev, pdu, &c);
		ret = blk_printq_event(q, NULL, &ev, &c);
	}
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(blk_printq_sync(q), -ENOSPC);
	assert_int_equal(blk_printq_text(q, "x", 1), -ENOSPC);
	blk_printq_free(q);
	assert_int_equal(blk_output_close(o), -ENOSPC);
	blk_printq_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_direct),
		cmocka_unit_test(test_sync_points),
		cmocka_unit_test(test_large_text),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
