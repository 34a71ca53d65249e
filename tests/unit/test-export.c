// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/export/export.c and lib/export/clickhouse.c: destinations (good and
 * malformed), the options, the TSV sink with its ids pinned (they are stored in tables: an
 * export run again must make the same), where batches end (rows, bytes, UTC days), and the
 * ClickHouse protocol against a scripted server: the table check, the first batch asked about,
 * a lost answer (found stored, not sent again), a lost request (sent again), a busy server, a
 * refusal (sticky), a partial batch, an export made with other limits, retries running out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "blk-export/export.h"
#include "blk/strbuf.h"
#include "fakeserver.h"
#include "helpers.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct dest_case {
	const char *s;
	int kind;
	const char *host;
	int port;
	const char *db, *user;
	int tls, distributed;
} dest_cases[] = {
	{"clickhouse://127.0.0.1:8123/blk", BLK_EXPORT_CLICKHOUSE, "127.0.0.1", 8123, "blk", "", 0,
	 0},
	{"clickhouse://ch.example.com/fleet_1", BLK_EXPORT_CLICKHOUSE, "ch.example.com", 8123,
	 "fleet_1", "", 0, 0},
	{"clickhouse://writer@db-2:9123/x?distributed=1", BLK_EXPORT_CLICKHOUSE, "db-2", 9123, "x",
	 "writer", 0, 1},
	{"clickhouse://[::1]:8124/blk", BLK_EXPORT_CLICKHOUSE, "::1", 8124, "blk", "", 0, 0},
	{"clickhouse://[fe80::1]/blk", BLK_EXPORT_CLICKHOUSE, "fe80::1", 8123, "blk", "", 0, 0},
	{"clickhouses://ch.example.com/fleet", BLK_EXPORT_CLICKHOUSE, "ch.example.com", 8443,
	 "fleet", "", 1, 0},
	{"clickhouses://w@h:9440/d", BLK_EXPORT_CLICKHOUSE, "h", 9440, "d", "w", 1, 0},
};

static void test_dest(void **state)
{
	struct blk_export_dest d;
	char err[300];

	(void)state;
	for (size_t i = 0; i < N(dest_cases); i++) {
		const struct dest_case *c = &dest_cases[i];

		if (blk_export_dest_parse(c->s, &d, err, sizeof(err)))
			print_error("%s: %s\n", c->s, err);
		assert_int_equal(blk_export_dest_parse(c->s, &d, err, sizeof(err)), 0);
		assert_int_equal(d.kind, c->kind);
		assert_string_equal(d.host, c->host);
		assert_int_equal(d.port, c->port);
		assert_string_equal(d.database, c->db);
		assert_string_equal(d.user, c->user);
		assert_int_equal(d.tls, c->tls);
		assert_int_equal(d.distributed, c->distributed);
	}
	assert_int_equal(blk_export_dest_parse("tsv:/tmp/x y", &d, err, sizeof(err)), 0);
	assert_int_equal(d.kind, BLK_EXPORT_TSV);
	assert_string_equal(d.dir, "/tmp/x y");
}

static const struct bad_dest {
	const char *s, *msg;
} bad_dests[] = {
	{"", "bad destination '': not clickhouse[s]://[USER@]HOST[:PORT]/DATABASE or tsv:DIR"},
	{NULL, "bad destination '': not clickhouse[s]://[USER@]HOST[:PORT]/DATABASE or tsv:DIR"},
	{"http://h/db", "not clickhouse[s]://[USER@]HOST[:PORT]/DATABASE or tsv:DIR"},
	{"clickhouse:/h/db", "not clickhouse[s]://"},
	{"clickhouse://h", "no database (clickhouse://HOST:PORT/DATABASE)"},
	{"clickhouse://h/", "database '' is not a name"},
	{"clickhouse://h/a.b", "database 'a.b' is not a name"},
	{"clickhouse://h/db/x", "database 'db/x' is not a name"},
	{"clickhouse:///db", "no host"},
	{"clickhouse://h:0/db", "port '0' is not a number from 1 to 65535"},
	{"clickhouse://h:65536/db", "port '65536' is not a number from 1 to 65535"},
	{"clickhouse://h:/db", "port '' is not a number from 1 to 65535"},
	{"clickhouse://h:-1/db", "port '-1' is not a number"},
	{"clickhouse://h:99999999999999999999/db", "bad port"},
	{"clickhouse://h x/db", "bad character in host name (at ' x/db')"},
	{"clickhouse://@h/db", "empty user name before '@'"},
	{"clickhouse://u$er@h/db", "bad character '$' in user name"},
	{"clickhouse://[::1/db", "no ']' after the IPv6 address"},
	{"clickhouse://[zz::1]/db", "bad IPv6 address"},
	{"clickhouse://h/db?distributed=2", "unknown option 'distributed=2'"},
	{"clickhouse://h/db?", ""}, /* an empty option list is fine */
	{"tsv:", "no directory (tsv:DIR)"},
	{"clickhouse://me:secret@h:x/db",
	 "bad destination 'clickhouse://me:***@h:x/db': a password in the destination is refused"},
	{"clickhouses://me:secret@h/db", "(--password-file FILE) or in CLICKHOUSE_PASSWORD"},
};

static void test_dest_bad(void **state)
{
	struct blk_export_dest d;
	char err[300];

	(void)state;
	for (size_t i = 0; i < N(bad_dests); i++) {
		int ret = blk_export_dest_parse(bad_dests[i].s, &d, err, sizeof(err));

		if (!bad_dests[i].msg[0]) {
			assert_int_equal(ret, 0);
			continue;
		}
		if (ret != -EINVAL || !strstr(err, bad_dests[i].msg))
			print_error("'%s': %d '%s', want '%s'\n", bad_dests[i].s, ret, err,
				    bad_dests[i].msg);
		assert_int_equal(ret, -EINVAL);
		assert_non_null(strstr(err, bad_dests[i].msg));
		assert_null(strstr(err, "secret"));
	}
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/blk-unit-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static char *slurp(const char *dir, const char *name)
{
	char path[300];
	unsigned char *p;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	p = test_read_file(path, &n);
	p = realloc(p, n + 1);
	p[n] = 0;
	return (char *)p;
}

static void rmtree(char *dir)
{
	char path[300];

	for (const char *const *f = (const char *const[]){"io.tsv", "iowait.tsv", ".io.tsv.tmp",
							  ".iowait.tsv.tmp", NULL};
	     *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *f);
		unlink(path);
	}
	assert_int_equal(rmdir(dir), 0);
	free(dir);
}

static struct blk_io_row io_row(void)
{
	struct blk_io_row r = {
		.device = "sdb",
		.major = 8,
		.minor = 16,
		.pid = 42,
		.comm = "dd",
		.rwbs = "WS",
		.sector = 2048,
		.bytes = 4096,
		.q_ns = 1000,
		.g_ns = 0,
		.i_ns = 1300,
		.d_ns = 1500,
		.c_ns = 9500,
		.merged = 2,
		.remap_major = 8,
		.remap_minor = 17,
		.remap_sector = 10,
		.error = -5,
		.cgroup = "/db",
		.origin_pid = 41,
		.origin_comm = "postgres",
		.file = "/data/t",
		.file_offset = 8192,
	};
	return r;
}

/*
 * The ids, pinned: values computed by tests/gen/exportrows.py (a second implementation of
 * the hash). Changing them would make every export run again store its rows twice. The
 * batch id is the one of before the columns cgroup..file_offset (not hashed: id_cols).
 */
static void test_tsv_ids(void **state)
{
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct blk_iowait_row w = {.pid = 7,
				   .tid = 8,
				   .comm = "dd",
				   .start_ns = 123,
				   .duration_ns = 456,
				   .source = "sched",
				   .cpu = 3,
				   .waker_cpu = -1};
	struct blk_io_row r = io_row();
	struct blk_export_stats st;
	struct blk_export *x;
	char err[300], dest[300], *dir = tmpdir(), *s;

	(void)state;
	o.host = "h1";
	o.trace_id = "trace-x";
	snprintf(dest, sizeof(dest), "tsv:%s", dir);
	x = blk_export_open(dest, &o, err, sizeof(err));
	assert_non_null(x);
	assert_int_equal(blk_export_id(x), 3301293126463539972ULL);
	assert_int_equal(blk_export_io(x, &r, err, sizeof(err)), 0);
	assert_int_equal(blk_export_iowait(x, &w, err, sizeof(err)), 0);
	/* nothing is in place before the end */
	snprintf(err, sizeof(err), "%s/io.tsv", dir);
	assert_int_equal(access(err, F_OK), -1);
	assert_int_equal(blk_export_close(x, &st, err, sizeof(err)), 0);
	assert_int_equal(st.rows[BLK_TABLE_IO], 1);
	assert_int_equal(st.batches[BLK_TABLE_IOWAIT], 1);
	s = slurp(dir, "io.tsv");
	assert_string_equal(
		s,
		"host\tdevice\tmajor\tminor\tpid\tcomm\trwbs\tsector\tbytes\tq_ns\tg_ns\ti_ns\td_ns"
		"\tc_ns\tq2g_ns\tg2i_ns\ti2d_ns\td2c_ns\tq2c_ns\tmerged\tsplit\tpieces\tcompletions"
		"\trequeues\tno_q\tunfinished\tremap_major\tremap_minor"
		"\tremap_sector\terror\tcgroup\torigin_pid\torigin_comm\tfile\tfile_offset"
		"\texport_id\tbatch_id\n"
		"h1\tsdb\t8\t16\t42\tdd\tWS\t2048\t4096\t1000\t0\t1300\t1500\t9500\t0\t0\t200"
		"\t8000\t8500\t2\t0\t0\t0\t0\t0\t0\t8\t17\t10\t-5\t/db\t41\tpostgres"
		"\t/data/t\t8192\t3301293126463539972"
		"\t1929959233581169799\n");
	free(s);
	s = slurp(dir, "iowait.tsv");
	assert_string_equal(s, "host\tdevice\tmajor\tminor\tpid\ttid\tcomm\tstart_ns\tduration_ns"
			       "\tsource\tcpu\twaker_cpu\texport_id\tbatch_id\n"
			       "h1\t\t0\t0\t7\t8\tdd\t123\t456\tsched\t3\t-1\t3301293126463539972"
			       "\t16516042327092875033\n");
	free(s);
	/* the batch limits are part of a batch's id */
	o.batch_rows = 2;
	x = blk_export_open(dest, &o, err, sizeof(err));
	assert_non_null(x);
	assert_int_equal(blk_export_io(x, &r, err, sizeof(err)), 0);
	assert_int_equal(blk_export_close(x, NULL, err, sizeof(err)), 0);
	s = slurp(dir, "io.tsv");
	assert_non_null(strstr(s, "\t3301293126463539972\t8388014243180765560\n"));
	free(s);
	rmtree(dir);
}

/* The batch id column of each data line of @s, numbered by first appearance: "0 0 1 1 2". */
static void batch_pattern(const char *s, char *out, size_t outlen)
{
	char ids[64][24];
	int nids = 0;
	size_t n = 0;

	s = strchr(s, '\n') + 1;
	while (*s) {
		const char *eol = strchr(s, '\n'), *tab = eol;
		char id[24];
		int k;

		while (tab[-1] != '\t')
			tab--;
		snprintf(id, sizeof(id), "%.*s", (int)(eol - tab), tab);
		for (k = 0; k < nids && strcmp(ids[k], id); k++)
			;
		if (k == nids)
			strcpy(ids[nids++], id);
		n += (size_t)snprintf(out + n, outlen - n, "%s%d", n ? " " : "", k);
		s = eol + 1;
	}
}

static void test_batches(void **state)
{
	static const struct {
		unsigned int rows;
		size_t bytes;
		uint64_t c_ns[8];
		const char *want;
	} cases[] = {
		{2, 0, {1, 2, 3, 4, 5}, "0 0 1 1 2"},
		{3, 0, {1, 2, 3, 4, 5, 6, 7}, "0 0 0 1 1 1 2"},
		/* a UTC day ends a batch, back and forth */
		{0, 0, {1, BLK_DAY_NS, BLK_DAY_NS + 1, BLK_DAY_NS - 1, 2}, "0 1 1 2 2"},
		{2, 0, {1, 2, 3, BLK_DAY_NS, 4}, "0 0 1 2 3"},
		/* bytes: a row is about 80 bytes of TSV; a batch ends once it has 150 */
		{0, 150, {1, 2, 3, 4, 5}, "0 0 1 1 2"},
		{0, 1, {1, 2, 3}, "0 1 2"},
	};
	char err[300], dest[300], got[100], *dir = tmpdir(), *s;

	(void)state;
	snprintf(dest, sizeof(dest), "tsv:%s", dir);
	for (size_t i = 0; i < N(cases); i++) {
		struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
		struct blk_export_stats st;
		struct blk_export *x;
		size_t nrows = 0;

		o.host = "h";
		o.trace_id = "t";
		o.batch_rows = cases[i].rows;
		o.batch_bytes = cases[i].bytes;
		x = blk_export_open(dest, &o, err, sizeof(err));
		assert_non_null(x);
		for (; nrows < 8 && cases[i].c_ns[nrows]; nrows++) {
			struct blk_io_row r = io_row();

			r.q_ns = r.g_ns = r.i_ns = r.d_ns = 0;
			r.c_ns = cases[i].c_ns[nrows];
			assert_int_equal(blk_export_io(x, &r, err, sizeof(err)), 0);
		}
		assert_int_equal(blk_export_close(x, &st, err, sizeof(err)), 0);
		s = slurp(dir, "io.tsv");
		batch_pattern(s, got, sizeof(got));
		if (strcmp(got, cases[i].want))
			print_error("case %zu: '%s', want '%s'\n", i, got, cases[i].want);
		assert_string_equal(got, cases[i].want);
		assert_int_equal(st.rows[BLK_TABLE_IO], nrows);
		assert_int_equal(st.batches[BLK_TABLE_IO], got[strlen(got) - 1] - '0' + 1);
		free(s);
	}
	rmtree(dir);
}

static void test_opts(void **state)
{
	static const struct {
		const char *host, *trace;
		unsigned int rows;
		int gzip;
		const char *msg;
	} cases[] = {
		{NULL, "t", 0, -1, "the host label must have 1 to 255 bytes"},
		{"", "t", 0, -1, "the host label must have 1 to 255 bytes"},
		{"h", NULL, 0, -1, "an export needs the trace's identity"},
		{"h", "", 0, -1, "an export needs the trace's identity"},
		{"h", "t", 1000001, -1, "batches are at most 1000000 rows and 268435456 bytes"},
		{"h", "t", 0, 10, "gzip level 10 is not one of 0 to 9"},
	};
	char err[300], dest[300], *dir = tmpdir();

	(void)state;
	snprintf(dest, sizeof(dest), "tsv:%s", dir);
	for (size_t i = 0; i < N(cases); i++) {
		struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;

		o.host = cases[i].host;
		o.trace_id = cases[i].trace;
		o.batch_rows = cases[i].rows;
		o.gzip_level = cases[i].gzip;
		errno = 0;
		assert_null(blk_export_open(dest, &o, err, sizeof(err)));
		assert_int_equal(errno, EINVAL);
		assert_string_equal(err, cases[i].msg);
	}
	{
		struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
		char bad[300];

		o.host = "h";
		o.trace_id = "t";
		snprintf(bad, sizeof(bad), "tsv:%s/no/such/parent", dir);
		assert_null(blk_export_open(bad, &o, err, sizeof(err)));
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(err, "cannot create directory '"));
		/* discard removes what was begun; nothing is left */
		struct blk_export *x = blk_export_open(dest, &o, err, sizeof(err));

		assert_non_null(x);
		blk_export_discard(x);
		blk_export_discard(NULL);
		assert_int_equal(blk_export_close(NULL, NULL, err, sizeof(err)), 0);
	}
	rmtree(dir);
}

/* ---- the ClickHouse protocol against a scripted server ---- */

#define OK200(body) "HTTP/1.1 200 OK\r\nContent-Length: " #body "\r\n\r\n"

static char describe_io[2048], describe_iowait[2048], describe_bad[2048];

/* the DESCRIBE TABLE answer for @t; @bad_col: a column given as UInt32 */
static void make_describe(char *out, size_t len, enum blk_table_id id, const char *bad_col)
{
	const struct blk_table *t = blk_schema_table(id);
	struct blk_strbuf body = BLK_STRBUF_INIT;

	for (unsigned int c = 0; c < t->ncols; c++)
		blk_strbuf_addf(&body, "%s\t%s\t\t\n", t->cols[c].name,
				bad_col && !strcmp(bad_col, t->cols[c].name)
					? "UInt32"
					: blk_schema_col_type_name(t->cols[c].type));
	snprintf(out, len, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%.*s", body.len,
		 (int)body.len, body.buf);
	blk_strbuf_release(&body);
}

static int group_setup(void **state)
{
	(void)state;
	make_describe(describe_io, sizeof(describe_io), BLK_TABLE_IO, NULL);
	make_describe(describe_iowait, sizeof(describe_iowait), BLK_TABLE_IOWAIT, NULL);
	make_describe(describe_bad, sizeof(describe_bad), BLK_TABLE_IO, "q2c_ns");
	return 0;
}

#define STEP_DESCRIBE_IO                                                               \
	{                                                                              \
		FAKE_REPLY, "POST /?wait_end_of_query=1 |DESCRIBE TABLE db.io FORMAT", \
			describe_io, 0                                                 \
	}
#define STEP_DESCRIBE_IOWAIT                                                      \
	{                                                                         \
		FAKE_REPLY, "DESCRIBE TABLE db.iowait FORMAT", describe_iowait, 0 \
	}
#define STEP_IDLE(n)                                                                               \
	{                                                                                          \
		FAKE_REPLY, "SELECT count() FROM system.processes WHERE query_id = 'blktrace-ng-", \
			OK200(2) #n "\n", 0                                                        \
	}
#define STEP_COUNT(a, b)                                                                                            \
	{                                                                                                           \
		FAKE_REPLY,                                                                                         \
			"SELECT countIf(batch_id = |FROM db.io WHERE host = 'h\\'q' AND export_id = |AND c_ns >= ", \
			OK200(4) #a "\t" #b "\n", 0                                                                 \
	}
#define INSERT_IO \
	"POST /?query=INSERT%20INTO%20db.io%20%28host%2C%20device%2C|%20batch_id%29%20FORMAT%20Native&query_id=blktrace-ng-|Content-Length: "

static struct blk_export *open_fake(const struct fake_server *fs, const char *opt,
				    struct blk_export_opts *o, char *err, size_t errlen)
{
	char dest[200];

	o->host = "h'q";
	o->trace_id = "t";
	o->batch_rows = 2;
	o->retries = 3;
	o->backoff_ms = 1;
	o->timeout_ms = 3000;
	snprintf(dest, sizeof(dest), "clickhouse://127.0.0.1:%d/db%s", fs->port, opt);
	return blk_export_open(dest, o, err, errlen);
}

static void add_rows(struct blk_export *x, int n, int want_ret, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		struct blk_io_row r = io_row();

		r.sector = (uint64_t)i;
		assert_int_equal(blk_export_io(x, &r, err, errlen), i + 1 == n ? want_ret : 0);
	}
}

/* @pipelined: the same requests in the same order, from the sender thread */
static void ch_retries(int pipelined)
{
	static const struct fake_step steps[] = {
		STEP_DESCRIBE_IO,
		STEP_DESCRIBE_IOWAIT,
		/* batch 0: asked about first (an earlier run may hold it), absent, sent */
		STEP_IDLE(0),
		STEP_COUNT(0, 0),
		{FAKE_REPLY, INSERT_IO, OK200(0), 0},
		/* batch 1: the answer is lost; asked about again: stored, not sent again */
		{FAKE_CLOSE, INSERT_IO, NULL, 0},
		STEP_IDLE(0),
		STEP_COUNT(2, 2),
		/* batch 2: the request is cut; asked about: absent, sent again */
		{FAKE_CLOSE_EARLY, INSERT_IO, NULL, 0},
		STEP_IDLE(0),
		STEP_COUNT(0, 0),
		{FAKE_REPLY, INSERT_IO, OK200(0), 0},
		/* batch 3: a busy server; the insert still runs for a while; then absent, sent */
		{FAKE_REPLY, INSERT_IO,
		 "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 43\r\n\r\n"
		 "Code: 252, e.displayText() = Too many parts",
		 0},
		STEP_IDLE(1),
		STEP_IDLE(0),
		STEP_COUNT(0, 0),
		{FAKE_REPLY, INSERT_IO, OK200(0), 0},
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct blk_export_stats st;
	struct fake_server fs;
	struct blk_export *x;
	char err[600];

	o.pipelined = pipelined;
	fake_server_start(&fs, steps, (int)N(steps));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	if (!x)
		print_error("%s\n", err);
	assert_non_null(x);
	add_rows(x, 8, 0, err, sizeof(err));
	assert_int_equal(blk_export_close(x, &st, err, sizeof(err)), 0);
	assert_int_equal(st.batches[BLK_TABLE_IO], 4);
	assert_int_equal(st.batches_present, 1);
	assert_int_equal(st.rows_present, 2);
	assert_int_equal(st.retries, 3);
	assert_int_equal(st.checks, 4);
	assert_int_equal(fake_server_wait(&fs), 0);
}

static void test_ch_retries(void **state)
{
	(void)state;
	ch_retries(0);
}

static void test_ch_retries_pipelined(void **state)
{
	(void)state;
	ch_retries(1);
}

static void test_ch_refused(void **state)
{
	static const struct fake_step steps[] = {
		STEP_DESCRIBE_IO,
		STEP_DESCRIBE_IOWAIT,
		STEP_IDLE(0),
		STEP_COUNT(0, 0),
		{FAKE_REPLY, INSERT_IO,
		 "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 112\r\n\r\n"
		 "Code: 164, e.displayText() = DB::Exception: Cannot insert into table in readonly mode, e.what() = DB::Exception\n",
		 0},
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct fake_server fs;
	struct blk_export *x;
	char err[600], want[600];

	(void)state;
	fake_server_start(&fs, steps, (int)N(steps));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	assert_non_null(x);
	add_rows(x, 2, -EACCES, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "INSERT of batch 0 into 'db.io' rejected by '127.0.0.1:%d': HTTP 500: Code: 164, "
		 "e.displayText() = DB::Exception: Cannot insert into table in readonly mode, "
		 "e.what() = DB::Exception",
		 fs.port);
	assert_string_equal(err, want);
	/* sticky: every later call says the same */
	memset(err, 0, sizeof(err));
	add_rows(x, 1, -EACCES, err, sizeof(err));
	assert_string_equal(err, want);
	assert_int_equal(blk_export_close(x, NULL, err, sizeof(err)), -EACCES);
	assert_string_equal(err, want);
	assert_int_equal(fake_server_wait(&fs), 0);
}

/* Pipelined, the rejected INSERT comes back from a later call, and stays. */
static void test_ch_refused_pipelined(void **state)
{
	static const struct fake_step steps[] = {
		STEP_DESCRIBE_IO,
		STEP_DESCRIBE_IOWAIT,
		STEP_IDLE(0),
		STEP_COUNT(0, 0),
		{FAKE_REPLY, INSERT_IO,
		 "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 112\r\n\r\n"
		 "Code: 164, e.displayText() = DB::Exception: Cannot insert into table in readonly mode, e.what() = DB::Exception\n",
		 0},
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct blk_export_stats st;
	struct fake_server fs;
	struct blk_export *x;
	char err[600], want[600];

	(void)state;
	o.pipelined = 1;
	fake_server_start(&fs, steps, (int)N(steps));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	assert_non_null(x);
	add_rows(x, 2, 0, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "INSERT of batch 0 into 'db.io' rejected by '127.0.0.1:%d': HTTP 500: Code: 164, "
		 "e.displayText() = DB::Exception: Cannot insert into table in readonly mode, "
		 "e.what() = DB::Exception",
		 fs.port);
	assert_int_equal(blk_export_flush(x, err, sizeof(err)), -EACCES);
	assert_string_equal(err, want);
	memset(err, 0, sizeof(err));
	add_rows(x, 1, -EACCES, err, sizeof(err));
	assert_string_equal(err, want);
	/* nothing after the failed batch: the next one ended is not sent (no step for it) */
	blk_export_get_stats(x, &st);
	assert_int_equal(st.batches[BLK_TABLE_IO], 0);
	assert_int_equal(blk_export_close(x, NULL, err, sizeof(err)), -EACCES);
	assert_string_equal(err, want);
	assert_int_equal(fake_server_wait(&fs), 0);
}

static void test_ch_open_errors(void **state)
{
	static const struct fake_step bad_type[] = {
		{FAKE_REPLY, "DESCRIBE TABLE db.io FORMAT", describe_bad, 0},
	};
	static const struct fake_step no_table[] = {
		{FAKE_REPLY, "DESCRIBE TABLE db.io FORMAT",
		 "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "60\r\nCode: 60, e.displayText() = DB::Exception: Table db.io doesn't exist., e.what() = DB::Exception\n\r\n0\r\n\r\n",
		 0},
	};
	static const struct fake_step dist[] = {
		{FAKE_REPLY, "DESCRIBE TABLE db.io_all FORMAT|Authorization: Basic dzpwJg==\r\n",
		 describe_io, 0},
		{FAKE_REPLY, "DESCRIBE TABLE db.iowait_all FORMAT",
		 "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nx\ty\n", 0},
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct fake_server fs;
	char err[600], want[600], dest[200];

	(void)state;
	fake_server_start(&fs, bad_type, (int)N(bad_type));
	assert_null(open_fake(&fs, "", &o, err, sizeof(err)));
	assert_int_equal(errno, EPROTO);
	snprintf(
		want, sizeof(want),
		"table 'db.io' at '127.0.0.1:%d' does not match the export: column 'q2c_ns' is UInt32, not UInt64",
		fs.port);
	assert_string_equal(err, want);
	assert_int_equal(fake_server_wait(&fs), 0);

	fake_server_start(&fs, no_table, (int)N(no_table));
	assert_null(open_fake(&fs, "", &o, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	snprintf(
		want, sizeof(want),
		"checking table 'db.io' rejected by '127.0.0.1:%d': HTTP 404: Code: 60, e.displayText() = DB::Exception: Table db.io doesn't exist., e.what() = DB::Exception",
		fs.port);
	assert_string_equal(err, want);
	assert_int_equal(fake_server_wait(&fs), 0);

	/* distributed: the _all tables; a user and a password; a table without our columns */
	fake_server_start(&fs, dist, (int)N(dist));
	o.host = "h";
	o.trace_id = "t";
	o.password = "p&";
	snprintf(dest, sizeof(dest), "clickhouse://w@127.0.0.1:%d/db?distributed=1", fs.port);
	assert_null(blk_export_open(dest, &o, err, sizeof(err)));
	assert_int_equal(errno, EPROTO);
	snprintf(
		want, sizeof(want),
		"table 'db.iowait_all' at '127.0.0.1:%d' does not match the export: it has no column 'host' (String)",
		fs.port);
	assert_string_equal(err, want);
	assert_int_equal(fake_server_wait(&fs), 0);

	/* nothing listening */
	snprintf(dest, sizeof(dest), "clickhouse://127.0.0.1:%d/db", fake_closed_port());
	assert_null(blk_export_open(dest, &o, err, sizeof(err)));
	assert_int_equal(errno, ECONNREFUSED);
	assert_non_null(strstr(err, "': Connection refused"));
}

static void test_ch_distributed(void **state)
{
	static const struct fake_step steps[] = {
		{FAKE_REPLY, "DESCRIBE TABLE db.io_all FORMAT", describe_io, 0},
		{FAKE_REPLY, "DESCRIBE TABLE db.iowait_all FORMAT", describe_iowait, 0},
		STEP_IDLE(0),
		{FAKE_REPLY,
		 "SELECT countIf(batch_id = |FROM db.io_all WHERE host = ", OK200(4) "0\t0\n", 0},
		{FAKE_REPLY,
		 "POST /?query=INSERT%20INTO%20db.io_all%20%28host|&insert_distributed_sync=1 HTTP/1.1|Authorization: Basic dzpwJg==\r\n",
		 OK200(0), 0},
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct fake_server fs;
	struct blk_export *x;
	char err[600], dest[200];

	(void)state;
	fake_server_start(&fs, steps, (int)N(steps));
	o.host = "h";
	o.trace_id = "t";
	o.password = "p&";
	snprintf(dest, sizeof(dest), "clickhouse://w@127.0.0.1:%d/db?distributed=1", fs.port);
	x = blk_export_open(dest, &o, err, sizeof(err));
	assert_non_null(x);
	add_rows(x, 3, 0, err, sizeof(err));
	assert_int_equal(blk_export_close(x, NULL, err, sizeof(err)), 0);
	assert_int_equal(fake_server_wait(&fs), 0);
}

/* The password: from a file only its owner reads; never in clear to another machine. */
static void test_ch_password(void **state)
{
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	char err[600], *dir = tmpdir(), path[300];
	FILE *f;

	(void)state;
	o.host = "h";
	o.trace_id = "t";
	snprintf(path, sizeof(path), "%s/pw", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("s3cret\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	o.password_file = path;
	assert_null(blk_export_open("clickhouses://w@127.0.0.1:1/db", &o, err, sizeof(err)));
	assert_int_equal(errno, EACCES);
	assert_non_null(strstr(err, "has mode 0644"));
	assert_non_null(strstr(err, "chmod 600"));
	assert_null(strstr(err, "s3cret"));
	/* mode 600: read, then refused in clear to a host that is not loopback */
	assert_int_equal(chmod(path, 0600), 0);
	assert_null(blk_export_open("clickhouse://w@192.0.2.1:1/db", &o, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "a password over plain HTTP to '192.0.2.1'"));
	o.password_file = NULL;
	o.password = "x";
	assert_null(blk_export_open("clickhouse://w@db.example.com/db", &o, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	/* loopback (nothing listens on port 1): the password is no reason to refuse */
	assert_null(blk_export_open("clickhouse://w@[::1]:1/db", &o, err, sizeof(err)));
	assert_int_not_equal(errno, EINVAL);
	assert_null(blk_export_open("clickhouse://w@127.0.0.1:1/db", &o, err, sizeof(err)));
	assert_int_not_equal(errno, EINVAL);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* What the server holds contradicts the batch: never sent, an error. */
static void test_ch_exists(void **state)
{
	static const struct fake_step partial[] = {
		STEP_DESCRIBE_IO,
		STEP_DESCRIBE_IOWAIT,
		STEP_IDLE(0),
		STEP_COUNT(1, 1),
	};
	static const struct fake_step limits[] = {
		STEP_DESCRIBE_IO,
		STEP_DESCRIBE_IOWAIT,
		STEP_IDLE(0),
		STEP_COUNT(0, 5),
	};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct fake_server fs;
	struct blk_export *x;
	char err[600];

	(void)state;
	fake_server_start(&fs, partial, (int)N(partial));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	assert_non_null(x);
	add_rows(x, 2, -EEXIST, err, sizeof(err));
	assert_non_null(strstr(err, "holds 1 of the 2 rows of batch 0 (batch_id "));
	assert_non_null(strstr(err, "): a partial INSERT, not sent again"));
	blk_export_discard(x);
	assert_int_equal(fake_server_wait(&fs), 0);

	fake_server_start(&fs, limits, (int)N(limits));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	assert_non_null(x);
	add_rows(x, 2, -EEXIST, err, sizeof(err));
	assert_non_null(strstr(err, "holds 5 rows of this export (export_id "));
	assert_non_null(strstr(
		err, ") in batches other than ours: exported before with other batch limits"));
	blk_export_discard(x);
	assert_int_equal(fake_server_wait(&fs), 0);
}

/* The server goes away for good: the retries run out, with the last reason. */
static void test_ch_gave_up(void **state)
{
	static const struct fake_step steps[] = {STEP_DESCRIBE_IO, STEP_DESCRIBE_IOWAIT};
	struct blk_export_opts o = BLK_EXPORT_OPTS_INIT;
	struct blk_export_stats st;
	struct fake_server fs;
	struct blk_export *x;
	char err[600], want[300];

	(void)state;
	fake_server_start(&fs, steps, (int)N(steps));
	x = open_fake(&fs, "", &o, err, sizeof(err));
	assert_non_null(x);
	assert_int_equal(fake_server_wait(&fs), 0);
	add_rows(x, 2, -ECONNREFUSED, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "cannot connect to '127.0.0.1:%d': Connection refused (gave up after 4 attempts)",
		 fs.port);
	assert_string_equal(err, want);
	blk_export_get_stats(x, &st);
	assert_int_equal(st.retries, 3);
	assert_int_equal(blk_export_close(x, NULL, err, sizeof(err)), -ECONNREFUSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dest),
		cmocka_unit_test(test_dest_bad),
		cmocka_unit_test(test_tsv_ids),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_ch_retries),
		cmocka_unit_test(test_ch_retries_pipelined),
		cmocka_unit_test(test_ch_refused),
		cmocka_unit_test(test_ch_refused_pipelined),
		cmocka_unit_test(test_ch_open_errors),
		cmocka_unit_test(test_ch_distributed),
		cmocka_unit_test(test_ch_password),
		cmocka_unit_test(test_ch_exists),
		cmocka_unit_test(test_ch_gave_up),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
