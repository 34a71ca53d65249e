// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/ftrace.c's decoders: ring-buffer pages built here word by word (small
 * and large events, time extends, absolute stamps, discarded events, end padding, lost-event
 * flags, damage), header_page and event format texts as this project's kernels print them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../kernel/ftrace.h"
#include "helpers.h"

#define PAGE 4096

struct page {
	unsigned char p[PAGE];
	size_t off; /* next event at */
};

static void page_init(struct page *pg, uint64_t ts)
{
	memset(pg->p, 0, sizeof(pg->p));
	memcpy(pg->p, &ts, 8);
	pg->off = 16;
}

static void put32(struct page *pg, uint32_t v)
{
	memcpy(pg->p + pg->off, &v, 4);
	pg->off += 4;
}

static uint32_t hdr(uint32_t type_len, uint32_t delta)
{
	return type_len | (delta << 5); /* little-endian bit fields (x86) */
}

/* an event of @n data bytes (a multiple of 4), its first byte @tag */
static void put_event(struct page *pg, uint32_t delta, size_t n, unsigned char tag, int big)
{
	if (big || n > 28 * 4) {
		put32(pg, hdr(0, delta));
		put32(pg, (uint32_t)n + 4);
	} else {
		put32(pg, hdr((uint32_t)(n / 4), delta));
	}
	memset(pg->p + pg->off, 0, n);
	pg->p[pg->off] = tag;
	pg->off += n;
}

static void page_commit(struct page *pg, uint64_t flags)
{
	uint64_t c = (pg->off - 16) | flags;

	memcpy(pg->p + 8, &c, 8);
}

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
				  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

struct seen {
	int n;
	uint64_t ts[32];
	unsigned char tag[32];
	size_t len[32];
	int stop_at;
};

static int collect(void *arg, const struct blk_ftrace_rec *r)
{
	struct seen *s = arg;

	s->ts[s->n] = r->ts;
	s->tag[s->n] = r->data[0];
	s->len[s->n] = r->len;
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static void walks_every_kind_of_entry(void **state)
{
	struct blk_ftrace_pages *f = blk_ftrace_pages_new(header_page);
	struct page pg;
	struct seen s = {0};
	uint64_t missed;

	(void)state;
	if (test_host_be())
		skip();
	assert_non_null(f);
	page_init(&pg, 1000000);
	put_event(&pg, 5, 16, 1, 0); /* 1000005 */
	put_event(&pg, 10, 200, 2, 0); /* large: 1000015 */
	put32(&pg, hdr(30, 3)); /* time extend: + (2 << 27) + 3 */
	put32(&pg, 2);
	put_event(&pg, 0, 8, 3, 0); /* 1000018 + 2^28 */
	put32(&pg, hdr(29, 7)); /* a discarded event of 12 bytes: its delta counts */
	put32(&pg, 12);
	pg.off += 8;
	put_event(&pg, 1, 4, 4, 1); /* small, written large */
	put32(&pg, hdr(31, 123)); /* absolute stamp: 5 << 27 | 123 */
	put32(&pg, 5);
	put_event(&pg, 2, 4, 5, 0);
	page_commit(&pg, 0);
	put32(&pg, hdr(29, 0)); /* padding to the end (outside commit anyway) */
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed), 5);
	assert_true(missed == 0);
	assert_int_equal(s.n, 5);
	assert_true(s.ts[0] == 1000005 && s.tag[0] == 1 && s.len[0] == 16);
	assert_true(s.ts[1] == 1000015 && s.tag[1] == 2 && s.len[1] == 200);
	assert_true(s.ts[2] == 1000018 + (2ull << 27) && s.tag[2] == 3 && s.len[2] == 8);
	assert_true(s.ts[3] == 1000018 + (2ull << 27) + 7 + 1 && s.tag[3] == 4 && s.len[3] == 4);
	assert_true(s.ts[4] == ((5ull << 27) | 123) + 2 && s.tag[4] == 5);
	blk_ftrace_pages_free(f);
}

static void end_padding_and_lost_events(void **state)
{
	struct blk_ftrace_pages *f = blk_ftrace_pages_new(header_page);
	struct page pg;
	struct seen s = {0};
	uint64_t missed, count = 42;

	(void)state;
	if (test_host_be())
		skip();
	assert_non_null(f);
	page_init(&pg, 50);
	put_event(&pg, 1, 8, 9, 0);
	put32(&pg, hdr(29, 0)); /* padding, delta 0: nothing more on this page */
	put_event(&pg, 1, 8, 10, 0);
	page_commit(&pg, 1ull << 31);
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed), 1);
	assert_true(missed == 1);
	/* with the count stored after the data */
	memset(&s, 0, sizeof(s));
	page_init(&pg, 50);
	put_event(&pg, 1, 8, 9, 0);
	page_commit(&pg, (1ull << 31) | (1ull << 30));
	memcpy(pg.p + pg.off, &count, 8);
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed), 1);
	assert_true(missed == 42);
	/* the callback stops the walk */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	page_init(&pg, 50);
	put_event(&pg, 1, 8, 9, 0);
	put_event(&pg, 1, 8, 9, 0);
	page_commit(&pg, 0);
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed), 7);
	assert_int_equal(s.n, 1);
	/* an empty page (a read of nothing new) */
	page_init(&pg, 50);
	page_commit(&pg, 0);
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed), 0);
	blk_ftrace_pages_free(f);
}

static void rejects_damaged_pages(void **state)
{
	struct blk_ftrace_pages *f = blk_ftrace_pages_new(header_page);
	struct page pg;
	struct seen s = {0};
	uint64_t missed;

	(void)state;
	if (test_host_be())
		skip();
	assert_non_null(f);
	/* a commit beyond the page */
	page_init(&pg, 0);
	{
		uint64_t c = PAGE;

		memcpy(pg.p + 8, &c, 8);
	}
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed),
			 -EINVAL);
	/* a large event longer than the data */
	page_init(&pg, 0);
	put32(&pg, hdr(0, 1));
	put32(&pg, 4000);
	page_commit(&pg, 0);
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, sizeof(pg.p), collect, &s, &missed),
			 -EINVAL);
	/* shorter than a header */
	assert_int_equal(blk_ftrace_page_walk(f, pg.p, 10, collect, &s, &missed), -EINVAL);
	blk_ftrace_pages_free(f);
}

static void parses_header_page(void **state)
{
	struct blk_ftrace_pages *f;

	(void)state;
	f = blk_ftrace_pages_new(header_page);
	assert_non_null(f);
	assert_int_equal(blk_ftrace_pages_size(f), 4096);
	blk_ftrace_pages_free(f);
	errno = 0;
	assert_null(blk_ftrace_pages_new("\tfield: u64 timestamp;\toffset:0;\tsize:8;\n"));
	assert_int_equal(errno, EINVAL);
}

/* as 6.18 prints them (sched_switch), and a kprobe event with a $comm string */
static const char switch_fmt[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

static const char kprobe_fmt[] =
	"name: enter_io_schedule\nID: 1650\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] comm;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"(%lx) comm=\\\"%s\\\"\", REC->__probe_ip, __get_str(comm)\n";

static void parses_formats_and_reads_fields(void **state)
{
	struct blk_ftrace_format fmt;
	const struct blk_ftrace_field *fl;
	unsigned char ev[64];
	char buf[32];
	int32_t pid = -5;
	int64_t st = 2;
	uint32_t loc;

	(void)state;
	assert_int_equal(blk_ftrace_format_parse(switch_fmt, &fmt), 0);
	assert_int_equal(fmt.id, 372);
	assert_string_equal(fmt.name, "sched_switch");
	assert_int_equal(fmt.nfields, 11);
	fl = blk_ftrace_field(&fmt, "prev_comm");
	assert_non_null(fl);
	assert_int_equal(fl->offset, 8);
	assert_int_equal(fl->size, 16);
	assert_true(fl->array && !fl->data_loc);
	fl = blk_ftrace_field(&fmt, "prev_state");
	assert_true(fl && fl->offset == 32 && fl->size == 8 && fl->is_signed);
	assert_null(blk_ftrace_field(&fmt, "nope"));
	memset(ev, 0, sizeof(ev));
	memcpy(ev + 8, "kworker/0:1H-kblockd", 16); /* no NUL within the 16 bytes */
	memcpy(ev + 24, &pid, 4);
	memcpy(ev + 32, &st, 8);
	blk_ftrace_get_str(blk_ftrace_field(&fmt, "prev_comm"), ev, sizeof(ev), buf, sizeof(buf));
	assert_string_equal(buf, "kworker/0:1H-kbl");
	assert_true(blk_ftrace_get_int(blk_ftrace_field(&fmt, "prev_pid"), ev, sizeof(ev)) == -5);
	assert_true(blk_ftrace_get_int(blk_ftrace_field(&fmt, "prev_state"), ev, sizeof(ev)) == 2);
	/* outside the data: 0 */
	assert_true(blk_ftrace_get_int(blk_ftrace_field(&fmt, "next_prio"), ev, 40) == 0);

	assert_int_equal(blk_ftrace_format_parse(kprobe_fmt, &fmt), 0);
	assert_int_equal(fmt.id, 1650);
	fl = blk_ftrace_field(&fmt, "comm");
	assert_true(fl && fl->data_loc && fl->offset == 16);
	memset(ev, 0, sizeof(ev));
	loc = (3u << 16) | 20;
	memcpy(ev + 16, &loc, 4);
	memcpy(ev + 20, "dd", 3);
	blk_ftrace_get_str(fl, ev, 24, buf, sizeof(buf));
	assert_string_equal(buf, "dd");
	/* a location beyond the event gives "" */
	loc = (3u << 16) | 30;
	memcpy(ev + 16, &loc, 4);
	blk_ftrace_get_str(fl, ev, 24, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(blk_ftrace_format_parse("name: x\nformat:\n", &fmt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walks_every_kind_of_entry),
		cmocka_unit_test(end_padding_and_lost_events),
		cmocka_unit_test(rejects_damaged_pages),
		cmocka_unit_test(parses_header_page),
		cmocka_unit_test(parses_formats_and_reads_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
