// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/format.c: -f/-F formats, the default line, hex and wall-clock helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <time.h>

#include "blk/format.h"
#include "blk/strbuf.h"
#include "helpers.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

/* be64 0x0000000100000007: %U prints the low 32 bits, 7 */
static const unsigned char u_pdu[8] = { 0, 0, 0, 1, 0, 0, 0, 7 };

/* The fixed event of the format cases. */
static struct blk_event fixed_event(void)
{
	struct blk_event ev = test_event(4711, 12 * 1000000000ull + 3456789, 3,
					 CAT(BLK_TC_WRITE | BLK_TC_SYNC | BLK_TC_QUEUE) |
						 BLK_TA_QUEUE,
					 987654321, 8192);

	ev.device = BLK_MKDEV(8, 16);
	ev.pid = 1234;
	ev.error = 5;
	ev.pdu = u_pdu;
	ev.pdu_len = sizeof(u_pdu);
	return ev;
}

static struct blk_fmt_ctx fixed_ctx(void)
{
	struct blk_fmt_ctx c;

	memset(&c, 0, sizeof(c));
	c.act = "Q";
	c.comm = "fio";
	c.cpu = 3;
	c.elapsed = 1234567; /* ns: %u prints 1234 (microseconds) */
	return c;
}

static const struct fmt_case {
	const char *spec;
	const char *want;
} cases[] = {
	/* every field */
	{ "%a", "Q" },
	{ "%c", "3" },
	{ "%C", "fio" },
	{ "%d", "WS" },
	{ "%D", "  8,16 " },
	{ "%e", "5" },
	{ "%m", "16" },
	{ "%M", "8" },
	{ "%n", "16" },
	{ "%N", "8192" },
	{ "%p", "1234" },
	{ "%s", "4711" },
	{ "%S", "987654321" },
	{ "%t", "003456789" },
	{ "%T", "12" },
	{ "%u", "1234" },
	{ "%U", "7" },
	/* widths and alignment */
	{ "%5p", " 1234" },
	{ "%-5p|", "1234 |" },
	{ "%8p", "    1234" },
	{ "%2p", "1234" },
	{ "%-2p|", "1234|" },
	{ "%9t", "003456789" },
	{ "%12t", "000003456789" },
	{ "%-12t|", "000003456789|" },	/* '-' is ignored: always zero-padded */
	{ "%3t", "3456789" },
	{ "%5T", "   12" },
	{ "%-5T|", "12   |" },
	{ "%-6a|", "Q     |" },
	{ "%4a", "   Q" },
	{ "%3d", " WS" },
	{ "%-4d|", "WS  |" },
	{ "%5C", "  fio" },
	{ "%-5C|", "fio  |" },
	{ "%4c", "   3" },
	{ "%-3c|", "3  |" },
	{ "%3e", "  5" },
	{ "%4M,%-4m|", "   8,16  |" },
	{ "%6n", "    16" },
	{ "%-6N|", "8192  |" },
	{ "%10S", " 987654321" },
	{ "%-6s|", "4711  |" },
	{ "%10u", "      1234" },
	{ "%3U", "  7" },
	{ "%05p", " 1234" },		/* a leading 0 is part of the width, not a flag */
	{ "%-05p|", "1234 |" },
	{ "%-0p|", "1234|" },
	{ "%0t", "3456789" },
	{ "%9D", "  8,16 " },		/* width ignored */
	{ "%-9D|", "  8,16 |" },
	/* escapes */
	{ "a\\nb", "a\nb" },
	{ "\\t%p\\t", "\t1234\t" },
	{ "\\b\\r", "\b\r" },
	{ "%p\\n", "1234\n" },
	/* percent signs */
	{ "100%%", "100%" },
	{ "%%p", "%p" },
	{ "%%%p", "%1234" },
	{ "trail%", "trail%" },
	{ "%", "%" },
	{ "%p%", "1234%" },
	/* a field cut short by the end of the format prints nothing */
	{ "x%-", "x" },
	{ "x%12", "x" },
	{ "x%-3", "x" },
	/* unknown letters print themselves, honouring the width */
	{ "%x", "x" },
	{ "%3x", "  x" },
	{ "%-3x|", "x  |" },
	/* literals */
	{ "", "" },
	{ "plain text", "plain text" },
	/* whole lines */
	{ "%D %2c %8s %5T.%9t %5p %2a %3d\\n",
	  "  8,16   3     4711    12.003456789  1234  Q  WS\n" },
	{ "%M,%m %S + %n [%C] %e %u\\n", "8,16 987654321 + 16 [fio] 5 1234\n" },
};

static void render_ok(const char *spec, const struct blk_event *ev, const struct blk_fmt_ctx *c,
		      const char *want)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	struct blk_format *f;
	char err[256] = "";

	f = blk_format_compile(spec, err, sizeof(err));
	if (!f)
		print_error("'%s': compile failed: %s\n", spec, err);
	assert_non_null(f);
	/* rendering appends */
	blk_strbuf_addstr(&sb, ">");
	assert_int_equal(blk_format_render(f, ev, c, &sb), 0);
	if (sb.len != strlen(want) + 1 || memcmp(sb.buf + 1, want, strlen(want)))
		print_error("'%s': got '%.*s', want '%s'\n", spec, (int)sb.len - 1, sb.buf + 1,
			    want);
	assert_int_equal(sb.len, strlen(want) + 1);
	assert_memory_equal(sb.buf, ">", 1);
	assert_memory_equal(sb.buf + 1, want, strlen(want));
	/* a compiled format renders the same way twice */
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_format_render(f, ev, c, &sb), 0);
	assert_int_equal(sb.len, strlen(want));
	blk_strbuf_release(&sb);
	blk_format_free(f);
}

static void test_format_cases(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		render_ok(cases[i].spec, &ev, &c, cases[i].want);
}

static void test_format_null_comm(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();

	(void)state;
	c.comm = NULL;
	render_ok("[%C]", &ev, &c, "[(null)]");
	render_ok("[%8C]", &ev, &c, "[  (null)]");
}

static void test_format_pdu_field(void **state)
{
	static const unsigned char pc[6] = { 0x12, 0, 0, 0, 0x24, 0 };
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();

	(void)state;
	/* no PC payload: %P prints nothing */
	render_ok("<%P>", &ev, &c, "<>");
	c.pc_pdu = pc;
	c.pc_pdu_len = sizeof(pc);
	render_ok("<%P>", &ev, &c, "<12 00 00 00 24 00 ..>");
	render_ok("<%20P>", &ev, &c, "<12 00 00 00 24 00 ..>"); /* width ignored */
}

static void test_format_cgroup(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();

	(void)state;
	/* no cgroup: %g as blkparse 1.3.0 prints an untagged record, %G a dash */
	render_ok("<%g|%G>", &ev, &c, "<0,0|->");
	/* an id without a known path: %G prints it in decimal */
	c.cg_ino = 0x2d;
	render_ok("<%g|%G|%-4G|%4G>", &ev, &c, "<2d,0|45|45  |  45>");
	c.cg_gen = 1;
	render_ok("<%g|%G>", &ev, &c, "<2d,1|4294967341>");
	c.cg_path = "/cgexpB/sub";
	render_ok("<%G|%-13G|>", &ev, &c, "</cgexpB/sub|/cgexpB/sub  |>");
}

static void test_format_origin(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();
	struct blk_fmt_origin o = {.pid = 4242, .name = "dd"};

	(void)state;
	/* nothing known: a dash each */
	render_ok("<%o|%O|%f|%F>", &ev, &c, "<-|-|-|->");
	render_ok("<%3o|%-3f>", &ev, &c, "<  -|-  >");
	/* an origin, no file */
	c.origin = &o;
	render_ok("<%o|%O|%f|%F>", &ev, &c, "<4242|dd|-|->");
	render_ok("<%6o|%-6O|>", &ev, &c, "<  4242|dd    |>");
	/* a file without a name, then named */
	o.has_file = 1;
	o.ino = 131;
	o.offset = 8192;
	render_ok("<%f|%F|%-8f|%6F>", &ev, &c, "<ino 131|8192|ino 131 |  8192>");
	o.path = "/mnt/a";
	render_ok("<%f|%8f>", &ev, &c, "</mnt/a|  /mnt/a>");
	/* a file without the origin */
	o.name = NULL;
	render_ok("<%o|%O|%f>", &ev, &c, "<-|-|/mnt/a>");
}

static void test_format_wall(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	c.have_wall = 1;
	c.wall_sec = 0;
	c.wall_nsec = 0;
	render_ok("%z", &ev, &c, "00:00:12.003456");
	/* nanoseconds carry into the seconds */
	c.wall_sec = 3600;
	c.wall_nsec = 999000000;
	render_ok("%z", &ev, &c, "01:00:13.002456");
	render_ok("%17z|", &ev, &c, "  01:00:13.002456|");
	render_ok("%-17z|", &ev, &c, "01:00:13.002456  |");
}

static const struct bad_spec {
	const char *spec;
	const char *want;	/* in the message */
} bad_specs[] = {
	{ "\\q", "\\q" },
	{ "%p \\x %s", "\\x" },
	{ "abc\\", "escape" },
	{ "\\\\", "escape" },
};

static void test_format_compile_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
		char err[256] = "";
		struct blk_format *f = blk_format_compile(bad_specs[i].spec, err, sizeof(err));

		if (f || !strstr(err, bad_specs[i].want))
			print_error("'%s': compiled=%d message '%s'\n", bad_specs[i].spec, f != NULL,
				    err);
		assert_null(f);
		assert_non_null(strstr(err, bad_specs[i].want));
		assert_non_null(strstr(err, "escape"));
	}
	blk_format_free(NULL);
}

static void test_format_elapsed(void **state)
{
	struct blk_event ev = fixed_event();
	struct blk_fmt_ctx c = fixed_ctx();
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	struct blk_format *f;
	char err[128];

	(void)state;
	f = blk_format_compile("%p %u", err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(blk_format_needs_elapsed(f), 1);
	c.elapsed = BLK_NO_ELAPSED;
	assert_int_equal(blk_format_render(f, &ev, &c, &sb), -EINVAL);
	c.elapsed = 0;
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_format_render(f, &ev, &c, &sb), 0);
	assert_int_equal(sb.len, 6);
	assert_memory_equal(sb.buf, "1234 0", 6);
	blk_format_free(f);

	f = blk_format_compile("%p %%u %T", err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(blk_format_needs_elapsed(f), 0);
	c.elapsed = BLK_NO_ELAPSED;
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_format_render(f, &ev, &c, &sb), 0);
	blk_format_free(f);
	blk_strbuf_release(&sb);
}

/* ---- the default line ---- */

struct default_case {
	const char *name;
	uint32_t cpu, seq, pid, bytes;
	uint64_t time, sector, action;
	uint16_t error;
	const char *act;
	const char *comm;
	uint64_t elapsed;
	const unsigned char *pdu;	/* record payload */
	unsigned int pdu_len;
	const unsigned char *pc_pdu;	/* PC payload for the ctx */
	unsigned int pc_pdu_len;
	const char *want;
};

static const unsigned char be64_1[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
static const unsigned char be64_2[8] = { 0, 0, 0, 0, 0, 0, 0, 2 };
static const unsigned char be64_4160[8] = { 0, 0, 0, 0, 0, 0, 0x10, 0x40 };
static const unsigned char remap_pdu[16] = {
	0x00, 0x80, 0x00, 0x01,	/* from 8,1 */
	0x00, 0x80, 0x00, 0x00,	/* to 8,0 */
	0, 0, 0, 0, 0, 0, 0x08, 0x00, /* sector 2048 */
};
static const unsigned char pc_cmd[16] = { 0x12, 0, 0, 0, 0x24, 0 };

#define NOEL BLK_NO_ELAPSED
#define WS CAT(BLK_TC_WRITE | BLK_TC_SYNC)

static const struct default_case dcases[] = {
	{ "Q", 0, 1, 100, 4096, 0, 2048, WS | BLK_TA_QUEUE, 0, "Q", "dd", NOEL, NULL, 0, NULL, 0,
	  "  8,0    0        1     0.000000000   100  Q  WS 2048 + 8 [dd]\n" },
	{ "Q no data", 0, 2, 100, 0, 1000, 0, CAT(BLK_TC_FLUSH) | BLK_TA_QUEUE, 0, "Q", "dd", NOEL,
	  NULL, 0, NULL, 0, "  8,0    0        2     0.000001000   100  Q  FN [dd]\n" },
	{ "I", 0, 3, 100, 4096, 1500, 2048, WS | BLK_TA_INSERT, 0, "I", "dd", NOEL, NULL, 0, NULL,
	  0, "  8,0    0        3     0.000001500   100  I  WS 2048 + 8 [dd]\n" },
	{ "D", 1, 4, 100, 4096, 1800, 2048, WS | BLK_TA_ISSUE, 0, "D", "dd", NOEL, NULL, 0, NULL, 0,
	  "  8,0    1        4     0.000001800   100  D  WS 2048 + 8 [dd]\n" },
	{ "D elapsed", 1, 4, 100, 4096, 1800, 2048, WS | BLK_TA_ISSUE, 0, "D", "dd", 1000, NULL,
	  0, NULL, 0, "  8,0    1        4     0.000001800   100  D  WS 2048 + 8 (    1000) [dd]\n" },
	{ "D elapsed no data", 1, 4, 100, 0, 1800, 0, CAT(BLK_TC_FLUSH) | BLK_TA_ISSUE, 0, "D",
	  "dd", 250, NULL, 0, NULL, 0,
	  "  8,0    1        4     0.000001800   100  D  FN (     250) [dd]\n" },
	{ "C", 0, 5, 0, 4096, 2000, 2048, WS | BLK_TA_COMPLETE, 0, "C", NULL, NOEL, NULL, 0, NULL,
	  0, "  8,0    0        5     0.000002000     0  C  WS 2048 + 8 [0]\n" },
	{ "C elapsed", 0, 5, 0, 4096, 2000, 2048, WS | BLK_TA_COMPLETE, 0, "C", NULL, 1500, NULL,
	  0, NULL, 0, "  8,0    0        5     0.000002000     0  C  WS 2048 + 8 (    1500) [0]\n" },
	{ "C error", 0, 6, 0, 4096, 2000, 2048, WS | BLK_TA_COMPLETE, 5, "C", NULL, NOEL, NULL, 0,
	  NULL, 0, "  8,0    0        6     0.000002000     0  C  WS 2048 + 8 [5]\n" },
	{ "C no data", 0, 6, 0, 0, 2000, 0, CAT(BLK_TC_FLUSH) | BLK_TA_COMPLETE, 0, "C", NULL,
	  NOEL, NULL, 0, NULL, 0, "  8,0    0        6     0.000002000     0  C  FN 0 [0]\n" },
	{ "R", 0, 6, 0, 4096, 2000, 2048, WS | BLK_TA_REQUEUE, 0, "R", "dd", NOEL, NULL, 0, NULL,
	  0, "  8,0    0        6     0.000002000     0  R  WS 2048 + 8 [0]\n" },
	{ "M", 0, 2, 100, 4096, 500, 2056, WS | BLK_TA_BACKMERGE, 0, "M", "dd", NOEL, NULL, 0, NULL,
	  0, "  8,0    0        2     0.000000500   100  M  WS 2056 + 8 [dd]\n" },
	{ "G no comm", 0, 2, 100, 4096, 500, 2048, WS | BLK_TA_GETRQ, 0, "G", NULL, NOEL, NULL, 0,
	  NULL, 0, "  8,0    0        2     0.000000500   100  G  WS 2048 + 8 [(null)]\n" },
	{ "S no data", 0, 2, 100, 0, 500, 0, BLK_TA_SLEEPRQ, 0, "S", "dd", NOEL, NULL, 0, NULL, 0,
	  "  8,0    0        2     0.000000500   100  S   N [dd]\n" },
	{ "P", 0, 3, 100, 0, 1000, 0, CAT(BLK_TC_QUEUE) | BLK_TA_PLUG, 0, "P", "dd", NOEL, NULL, 0,
	  NULL, 0, "  8,0    0        3     0.000001000   100  P   N [dd]\n" },
	{ "U", 1, 7, 100, 0, 3000, 0, CAT(BLK_TC_QUEUE) | BLK_TA_UNPLUG_IO, 0, "U", "dd", NOEL,
	  be64_1, 8, NULL, 0, "  8,0    1        7     0.000003000   100  U   N [dd] 1\n" },
	{ "UT", 0, 8, 100, 0, 3000, 0, CAT(BLK_TC_QUEUE) | BLK_TA_UNPLUG_TIMER, 0, "UT", "dd",
	  NOEL, be64_2, 8, NULL, 0, "  8,0    0        8     0.000003000   100 UT   N [dd] 2\n" },
	{ "X", 0, 10, 100, 65536, 6100, 4096, CAT(BLK_TC_AHEAD) | BLK_TA_SPLIT, 0, "X", "dd",
	  NOEL, be64_4160, 8, NULL, 0,
	  "  8,0    0       10     0.000006100   100  X  RA 4096 / 4160 [dd]\n" },
	{ "A", 0, 11, 100, 65536, 6200, 4096, CAT(BLK_TC_QUEUE) | BLK_TA_REMAP, 0, "A", "dd", NOEL,
	  remap_pdu, 16, NULL, 0,
	  "  8,0    0       11     0.000006200   100  A   R 4096 + 128 <- (8,1) 2048\n" },
	{ "PC D", 1, 2, 200, 0, 8500, 0, CAT(BLK_TC_PC) | BLK_TA_ISSUE, 0, "D", NULL, NOEL, NULL,
	  0, pc_cmd, 16,
	  "  8,0    1        2     0.000008500   200  D   N 0 (12 00 00 00 24 00 ..) [(null)]\n" },
	{ "PC C", 1, 3, 200, 0, 9000, 0, CAT(BLK_TC_PC) | BLK_TA_COMPLETE, 0, "C", NULL, NOEL,
	  NULL, 0, pc_cmd, 16,
	  "  8,0    1        3     0.000009000   200  C   N (12 00 00 00 24 00 ..) [0]\n" },
	{ "wide", 12, 12345678, 123456, 512, 12345ull * 1000000000ull + 1, 1, WS | BLK_TA_QUEUE, 0,
	  "Q", "kworker/u16:2", NOEL, NULL, 0, NULL, 0,
	  "  8,0   12 12345678 12345.000000001 123456  Q  WS 1 + 1 [kworker/u16:2]\n" },
	{ "long rwbs", 0, 1, 1, 512, 0, 8,
	  CAT(BLK_TC_FLUSH | BLK_TC_FUA | BLK_TC_AHEAD | BLK_TC_SYNC | BLK_TC_META) | BLK_TA_QUEUE,
	  0, "Q", "x", NOEL, NULL, 0, NULL, 0,
	  "  8,0    0        1     0.000000000     1  Q FRFASM 8 + 1 [x]\n" },
};

static void test_default_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
		const struct default_case *d = &dcases[i];
		struct blk_event ev = test_event(d->seq, d->time, d->cpu, d->action, d->sector,
						 d->bytes);
		struct blk_fmt_ctx c;
		struct blk_strbuf sb = BLK_STRBUF_INIT;

		ev.pid = d->pid;
		ev.error = d->error;
		ev.pdu = d->pdu;
		ev.pdu_len = (uint16_t)d->pdu_len;
		memset(&c, 0, sizeof(c));
		c.act = d->act;
		c.comm = d->comm;
		c.cpu = (int)d->cpu;
		c.elapsed = d->elapsed;
		c.pc_pdu = d->pc_pdu;
		c.pc_pdu_len = d->pc_pdu_len;
		blk_format_default(&ev, &c, &sb);
		if (sb.len != strlen(d->want) || memcmp(sb.buf, d->want, sb.len))
			print_error("%s:\n got '%.*s'\nwant '%s'\n", d->name, (int)sb.len, sb.buf,
				    d->want);
		assert_int_equal(sb.len, strlen(d->want));
		assert_memory_equal(sb.buf, d->want, sb.len);
		blk_strbuf_release(&sb);
	}
}

static void test_header(void **state)
{
	struct blk_event ev = test_event(42, 7000000123ull, 2, WS | BLK_TA_QUEUE, 0, 4096);
	struct blk_fmt_ctx c;
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	static const char want[] = "259,65536  2       42     7.000000123   100 ZP  WS ";

	(void)state;
	memset(&c, 0, sizeof(c));
	c.act = "ZP";
	c.cpu = 2;
	ev.device = BLK_MKDEV(259, 65536);
	blk_format_header(&ev, &c, "WS", &sb);
	assert_int_equal(sb.len, strlen(want));
	assert_memory_equal(sb.buf, want, sb.len);
	blk_strbuf_release(&sb);
}

static int long_comm_checks(void *arg)
{
	static const char *const acts[] = { "P", "Q", "M", "U", "X" };
	char comm[301], want[512];
	struct blk_event ev = test_event(1, 0, 0, CAT(BLK_TC_QUEUE) | BLK_TA_PLUG, 0, 0);
	struct blk_fmt_ctx c;

	(void)arg;
	memset(comm, 'c', 300);
	comm[300] = '\0';
	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		const char *tail = acts[i][0] == 'U' ? " 0" : "";

		memset(&c, 0, sizeof(c));
		c.act = acts[i];
		c.comm = comm;
		c.elapsed = BLK_NO_ELAPSED;
		if (acts[i][0] == 'X')
			snprintf(want, sizeof(want),
				 "  8,0    0        1     0.000000000   100  %s   N 0 / 0 [%s]\n",
				 acts[i], comm);
		else
			snprintf(want, sizeof(want),
				 "  8,0    0        1     0.000000000   100  %s   N [%s]%s\n", acts[i],
				 comm, tail);
		blk_format_default(&ev, &c, &sb);
		CHILD_CHECK(sb.alloc > sb.len);
		CHILD_CHECK(sb.len == strlen(want));
		CHILD_CHECK(!memcmp(sb.buf, want, sb.len));
		blk_strbuf_release(&sb);
	}

	/* a long action string in the header */
	{
		struct blk_strbuf sb = BLK_STRBUF_INIT;
		char act[201];

		memset(act, 'x', 200);
		act[0] = 'Q';
		act[200] = '\0';
		memset(&c, 0, sizeof(c));
		c.act = act;
		c.comm = "dd";
		c.elapsed = BLK_NO_ELAPSED;
		snprintf(want, sizeof(want), "  8,0    0        1     0.000000000   100 %s   N [dd]\n",
			 act);
		blk_format_default(&ev, &c, &sb);
		CHILD_CHECK(sb.alloc > sb.len);
		CHILD_CHECK(sb.len == strlen(want));
		CHILD_CHECK(!memcmp(sb.buf, want, sb.len));
		blk_strbuf_release(&sb);
	}
	return 0;
}

/*
 * A process name longer than the kernel's 16 bytes (blk_fmt_ctx.comm has no documented
 * limit: another front-end, or a trace's TN_PROCESS payload, may give one) and a long
 * action string are printed whole and stay inside the buffer. Run in a child, so that a
 * heap overflow fails this test instead of taking the whole group down.
 *
 * Regression test for a heap overflow found by this test (lib/format.c): put_comm(), used
 * by blk_format_default(), reserved a fixed 24 bytes with blk_strbuf_reserve() and then
 * copied the whole name with blk_put_str(), so a name longer than the space left in the
 * buffer was written past the end of the heap block and sb->len ended up beyond sb->alloc
 * (AddressSanitizer: heap-buffer-overflow in blk_put_str via put_comm). Repro:
 * blk_format_default() of a "P" event with c->comm = a 300-character string into a fresh
 * BLK_STRBUF_INIT buffer. blk_format_header() had the same pattern for c->act (a fixed
 * 160-byte reservation). blkparse caps names at 15 bytes (lib/acct.c), so it was not
 * reachable from blkparse.
 */
static void test_default_long_comm(void **state)
{
	(void)state;
	assert_int_equal(test_in_child(long_comm_checks, NULL), 0);
}

static const struct hex_case {
	unsigned char p[8];
	unsigned int len;
	const char *want;
} hex_cases[] = {
	{ { 0 }, 0, "" },
	{ { 0 }, 1, "00 .." },
	{ { 1, 2 }, 2, "01 02" },
	{ { 1, 0 }, 2, "01 00 .." },
	{ { 0, 1 }, 2, "00 01" },
	{ { 0xab, 0xcd, 0, 0 }, 4, "ab cd 00 .." },
	{ { 0xff, 0, 0x10, 0, 0, 0x7f }, 6, "ff 00 10 00 00 7f" },
};

static void test_pdu_hex(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hex_cases) / sizeof(hex_cases[0]); i++) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;

		blk_strbuf_addstr(&sb, "");
		blk_format_pdu_hex(&sb, hex_cases[i].p, hex_cases[i].len);
		assert_int_equal(sb.len, strlen(hex_cases[i].want));
		assert_memory_equal(sb.buf, hex_cases[i].want, sb.len);
		blk_strbuf_release(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_cases),
		cmocka_unit_test(test_format_null_comm),
		cmocka_unit_test(test_format_pdu_field),
		cmocka_unit_test(test_format_cgroup),
		cmocka_unit_test(test_format_origin),
		cmocka_unit_test(test_format_wall),
		cmocka_unit_test(test_format_compile_errors),
		cmocka_unit_test(test_format_elapsed),
		cmocka_unit_test(test_default_lines),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_default_long_comm),
		cmocka_unit_test(test_pdu_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
