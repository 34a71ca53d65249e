// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/export/schema.c: the RowBinary, Native and TSV encoders against hand-written bytes,
 * the values of a row (derived intervals, string limits), the DDL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk-export/schema.h"
#include "export/export-int.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* a small table of every column type, for exact bytes */
static const struct blk_column tcols[] = {
	{"s", BLK_COL_STRING, ""},
	{"u32", BLK_COL_UINT32, ""},
	{"i32", BLK_COL_INT32, ""},
	{"u64", BLK_COL_UINT64, ""},
};
static const struct blk_table ttab = {"t", tcols, 4, 3, "s", "test", 4};

static void assert_bytes(const struct blk_strbuf *sb, const void *want, size_t n)
{
	if (sb->len != n)
		print_error("got %zu bytes, want %zu\n", sb->len, n);
	assert_int_equal(sb->len, n);
	assert_memory_equal(sb->buf, want, n);
}

static union blk_value sval(const char *s)
{
	union blk_value v;

	v.s.p = s;
	v.s.len = strlen(s);
	return v;
}

static void test_rowbinary(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	union blk_value v[4] = {
		sval("ab"), {.u = 0x01020304}, {.i = -2}, {.u = 0x1122334455667788ULL}};
	static const unsigned char want[] = {
		2,    'a',  'b', /* LEB128 length, bytes */
		0x04, 0x03, 0x02, 0x01, /* UInt32 little endian */
		0xfe, 0xff, 0xff, 0xff, /* Int32 -2 */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* UInt64 */
	};
	char big[301];
	size_t n;

	(void)state;
	blk_schema_row_rowbinary(&sb, &ttab, v);
	assert_bytes(&sb, want, sizeof(want));

	/* a string of 127 bytes has a one-byte length, 128 and 300 two (0x80 0x01, 0xac 0x02) */
	for (size_t len = 0; len <= 300; len++) {
		unsigned char head[2];

		memset(big, 'x', len);
		big[len] = 0;
		v[0] = sval(big);
		blk_strbuf_reset(&sb);
		blk_schema_row_rowbinary(&sb, &ttab, v);
		n = len < 128 ? 1 : 2;
		head[0] = (unsigned char)(len < 128 ? len : (len & 0x7f) | 0x80);
		head[1] = (unsigned char)(len >> 7);
		assert_int_equal(sb.len, n + len + 16);
		assert_memory_equal(sb.buf, head, n);
		assert_memory_equal(sb.buf + n, big, len);
		assert_memory_equal(sb.buf + n + len, want + 3, 16);
	}
	assert_int_equal((unsigned char)sb.buf[0], 0xac);
	assert_int_equal((unsigned char)sb.buf[1], 0x02);
	blk_strbuf_release(&sb);
}

/* two rows as one Native block: hand-written bytes; a batch that is not whole is refused */
static void test_native(void **state)
{
	struct blk_strbuf rows = BLK_STRBUF_INIT, sb = BLK_STRBUF_INIT;
	union blk_value a[4] = {sval("ab"), {.u = 0x01020304}, {.i = -2}, {.u = 5}};
	union blk_value b[4] = {sval(""), {.u = 7}, {.i = 1}, {.u = 0x1122334455667788ULL}};
	static const unsigned char want[] = {
		4,    2, /* columns, rows */
		1,    's',  6,	  'S',	't',  'r',  'i',  'n',	'g', 2,	  'a', 'b',  0, /* "ab", "" */
		3,    'u',  '3',  '2',	6,    'U',  'I',  'n',	't', '3', '2', 0x04, 0x03, 0x02,
		0x01, 7,    0,	  0,	0,    3,    'i',  '3',	'2', 5,	  'I', 'n',  't',  '3',
		'2',  0xfe, 0xff, 0xff, 0xff, 1,    0,	  0,	0,   3,	  'u', '6',  '4',  6,
		'U',  'I',  'n',  't',	'6',  '4',  5,	  0,	0,   0,	  0,   0,    0,	   0,
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	};

	(void)state;
	blk_schema_row_rowbinary(&rows, &ttab, a);
	blk_schema_row_rowbinary(&rows, &ttab, b);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, rows.len, 2), 0);
	assert_bytes(&sb, want, sizeof(want));
	/* no rows: the counts alone */
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, 0, 0), 0);
	assert_int_equal(sb.len, 2 + 9 + 11 + 10 + 11);
	/* a row short, a row too many, a row cut inside, the row count wrong */
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, rows.len - 1, 2),
			 -EINVAL);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, rows.len, 1),
			 -EINVAL);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, rows.len, 3),
			 -EINVAL);
	assert_int_equal(blk_schema_rowbinary_to_native(&sb, &ttab, rows.buf, 2, 1), -EINVAL);
	assert_int_equal(sb.len, 0);
	blk_strbuf_release(&rows);
	blk_strbuf_release(&sb);
}

static const struct tsv_case {
	const char *s;
	const char *want; /* the string field as written */
} tsv_cases[] = {
	{"", ""},
	{"plain", "plain"},
	{"a\tb", "a\\tb"},
	{"l1\nl2", "l1\\nl2"},
	{"cr\r", "cr\\r"},
	{"back\\slash", "back\\\\slash"},
	{"\\t", "\\\\t"}, /* a backslash then t: not a tab */
	{"'quotes' and \"these\"", "'quotes' and \"these\""},
	{"\t\t\n", "\\t\\t\\n"},
	{"caf\xc3\xa9 \x01", "caf\xc3\xa9 \x01"}, /* other bytes as they are */
};

static void test_tsv(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	char want[200];

	(void)state;
	for (size_t i = 0; i < N(tsv_cases); i++) {
		union blk_value v[4] = {sval(tsv_cases[i].s),
					{.u = 4294967295u},
					{.i = -2147483647 - 1},
					{.u = UINT64_MAX}};

		blk_strbuf_reset(&sb);
		blk_schema_row_tsv(&sb, &ttab, v);
		snprintf(want, sizeof(want), "%s\t4294967295\t-2147483648\t18446744073709551615\n",
			 tsv_cases[i].want);
		assert_bytes(&sb, want, strlen(want));
	}
	blk_strbuf_reset(&sb);
	blk_schema_table_names(&sb, &ttab, "\t");
	assert_bytes(&sb, "s\tu32\ti32\tu64", 13);
	blk_strbuf_release(&sb);
}

static void test_intervals(void **state)
{
	(void)state;
	assert_int_equal(blk_interval_ns(10, 25), 15);
	assert_int_equal(blk_interval_ns(10, 10), 0);
	assert_int_equal(blk_interval_ns(0, 25), 0); /* a stage not seen */
	assert_int_equal(blk_interval_ns(10, 0), 0);
	assert_int_equal(blk_interval_ns(25, 10), 0); /* later before earlier */
}

static void test_io_values(void **state)
{
	struct blk_io_row r = {
		.device = "sdb",
		.major = 8,
		.minor = 16,
		.pid = 42,
		.comm = NULL,
		.rwbs = "WS",
		.sector = 2048,
		.bytes = 4096,
		.q_ns = 1000,
		.g_ns = 0,
		.i_ns = 1300,
		.d_ns = 1500,
		.c_ns = 9500,
		.merged = 2,
		.split = 1,
		.pieces = 3,
		.completions = 4,
		.requeues = 5,
		.no_q = 6,
		.unfinished = 7,
		.remap_major = 8,
		.remap_minor = 17,
		.remap_sector = 10,
		.error = -5,
		.cgroup = "/db",
		.origin_pid = 41,
		.origin_comm = "postgres",
		.file = "/data/t\tab",
		.file_offset = 8192,
	};
	union blk_value v[BLK_IO_NCOLS];
	const struct blk_table *t = blk_schema_table(BLK_TABLE_IO);
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	const char *want = "h1\tsdb\t8\t16\t42\t\tWS\t2048\t4096\t1000\t0\t1300\t1500\t9500"
			   "\t0\t0\t200\t8000\t8500\t2\t1\t3\t4\t5\t6\t7\t8\t17\t10\t-5"
			   "\t/db\t41\tpostgres\t/data/t\\tab\t8192\t77\t88\n";
	char err[200], longname[300];

	(void)state;
	assert_int_equal(blk_schema_io_values(&r, "h1", 77, 88, v, err, sizeof(err)), 0);
	blk_schema_row_tsv(&sb, t, v);
	assert_bytes(&sb, want, strlen(want));
	/*
	 * RowBinary: strings 1+2, 1+3, 1+0, 1+2, 1+3, 1+8, 1+10 bytes; 14 UInt32 and an Int32;
	 * 15 UInt64
	 */
	blk_strbuf_reset(&sb);
	blk_schema_row_rowbinary(&sb, t, v);
	assert_int_equal(sb.len, 3 + 4 + 1 + 3 + 4 + 9 + 11 + 15 * 4 + 15 * 8);

	memset(longname, 'd', BLK_ROW_STR_MAX);
	longname[BLK_ROW_STR_MAX] = 0;
	r.device = longname;
	assert_int_equal(blk_schema_io_values(&r, "h1", 0, 0, v, err, sizeof(err)), 0);
	longname[BLK_ROW_STR_MAX] = 'd';
	longname[BLK_ROW_STR_MAX + 1] = 0;
	assert_int_equal(blk_schema_io_values(&r, "h1", 0, 0, v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "device name 'dddd"));
	assert_non_null(strstr(err, "longer than 255 bytes"));
	/* a path may be longer (up to BLK_ROW_PATH_MAX) */
	r.device = "sdb";
	r.file = longname;
	assert_int_equal(blk_schema_io_values(&r, "h1", 0, 0, v, err, sizeof(err)), 0);
	blk_strbuf_release(&sb);
}

static void test_iowait_values(void **state)
{
	struct blk_iowait_row r = {.device = NULL,
				   .pid = 7,
				   .tid = 8,
				   .comm = "dd",
				   .start_ns = 123,
				   .duration_ns = 456,
				   .source = "sched",
				   .cpu = 3,
				   .waker_cpu = -1};
	union blk_value v[BLK_IOWAIT_NCOLS];
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	const char *want = "h\t\t0\t0\t7\t8\tdd\t123\t456\tsched\t3\t-1\t1\t2\n";
	char err[200];

	(void)state;
	assert_int_equal(blk_schema_iowait_values(&r, "h", 1, 2, v, err, sizeof(err)), 0);
	blk_schema_row_tsv(&sb, blk_schema_table(BLK_TABLE_IOWAIT), v);
	assert_bytes(&sb, want, strlen(want));
	blk_strbuf_release(&sb);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_ddl(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	char err[200], line[200];
	const char *s;

	(void)state;
	assert_int_equal(blk_schema_ddl(&sb, NULL, NULL, err, sizeof(err)), 0);
	blk_strbuf_addch(&sb, 0);
	s = sb.buf;
	assert_int_equal(count(s, ";"), 2); /* two statements, no semicolon in a comment */
	assert_int_equal(count(s, "'"), 0);
	assert_non_null(strstr(s, "CREATE TABLE IF NOT EXISTS io\n(\n    host String, --"));
	assert_non_null(strstr(s,
			       ")\nENGINE = MergeTree\nPARTITION BY intDiv(c_ns, 86400000000000)\n"
			       "ORDER BY (host, device, c_ns);\n"));
	assert_non_null(strstr(s, "PARTITION BY intDiv(start_ns, 86400000000000)\n"
				  "ORDER BY (host, device, start_ns);\n"));
	assert_null(strstr(s, "Distributed"));
	/* every column, with its type, in order */
	for (int t = 0; t < BLK_TABLE_NR; t++) {
		const struct blk_table *tab = blk_schema_table((enum blk_table_id)t);
		const char *p = strstr(s, tab->name);

		for (unsigned int c = 0; c < tab->ncols; c++) {
			snprintf(line, sizeof(line), "\n    %s %s%s", tab->cols[c].name,
				 blk_schema_col_type_name(tab->cols[c].type),
				 c + 1 < tab->ncols ? "," : "");
			p = strstr(p, line);
			assert_non_null(p);
		}
	}
	assert_non_null(strstr(s, "    q2c_ns UInt64,"));
	assert_non_null(strstr(s, "    d2c_ns UInt64,"));
	assert_non_null(strstr(s, "    batch_id UInt64 --"));

	blk_strbuf_reset(&sb);
	assert_int_equal(blk_schema_ddl(&sb, "c1", "db_2", err, sizeof(err)), 0);
	blk_strbuf_addch(&sb, 0);
	assert_int_equal(count(sb.buf, ";"), 4);
	assert_non_null(strstr(sb.buf, "CREATE TABLE IF NOT EXISTS io_all AS io\n"
				       "ENGINE = Distributed(c1, 'db_2', io, batch_id);\n"));
	assert_non_null(strstr(sb.buf, "CREATE TABLE IF NOT EXISTS iowait_all AS iowait\n"
				       "ENGINE = Distributed(c1, 'db_2', iowait, batch_id);\n"));
	blk_strbuf_reset(&sb);
	assert_int_equal(blk_schema_ddl(&sb, "c1", "", err, sizeof(err)), 0);
	blk_strbuf_addch(&sb, 0);
	assert_non_null(strstr(sb.buf, "Distributed(c1, '', io, batch_id)"));

	blk_strbuf_reset(&sb);
	assert_int_equal(blk_schema_ddl(&sb, "c-1", "db", err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "cluster name 'c-1' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
	assert_int_equal(blk_schema_ddl(&sb, "c1", NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(blk_schema_ddl(&sb, "c1", "x'y", err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "database name 'x'y' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
	assert_int_equal(sb.len, 0);
	blk_strbuf_release(&sb);
}

static void test_ident(void **state)
{
	static const char *const good[] = {"a", "_", "io_all", "A9", "x123456789"};
	static const char *const bad[] = {"", "9a", "a-b", "a b", "a.b", "`a`", "a'", "\xc3\xa9"};
	char long_ok[65], long_bad[66];

	(void)state;
	for (size_t i = 0; i < N(good); i++)
		assert_true(blk_schema_ident_ok(good[i]));
	for (size_t i = 0; i < N(bad); i++)
		assert_false(blk_schema_ident_ok(bad[i]));
	assert_false(blk_schema_ident_ok(NULL));
	memset(long_ok, 'a', 64);
	long_ok[64] = 0;
	memset(long_bad, 'a', 65);
	long_bad[65] = 0;
	assert_true(blk_schema_ident_ok(long_ok));
	assert_false(blk_schema_ident_ok(long_bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rowbinary), cmocka_unit_test(test_native),
		cmocka_unit_test(test_tsv),	  cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_io_values), cmocka_unit_test(test_iowait_values),
		cmocka_unit_test(test_ddl),	  cmocka_unit_test(test_ident),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
