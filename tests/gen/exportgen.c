// SPDX-License-Identifier: GPL-2.0
/*
 * exportgen: export synthetic, deterministic rows through the library's export module
 * (include/blk-export/export.h), as btt --export will, so that the export is tested end to end
 * against a real ClickHouse server (tests/e2e/t1300-clickhouse.sh) and measured
 * (bench/bench-export.sh).
 *
 *   exportgen [options] DEST         export --rows io rows and --waits iowait rows
 *   exportgen --schema [--cluster NAME --shard-db DB]   print the DDL
 *
 * Row i of io (tests/gen/exportrows.py computes the same rows independently):
 *   device   i%3: sda (8,0), sdb (8,16), nvme0n1 (259,0)
 *   pid      1000 + i%7, comm one of seven names (three with a tab, a backslash, a newline)
 *   rwbs     i%4: R W WS RA          sector i*8     bytes 4096 * (1 + i%4)
 *   q        start + i*step         g  0 if i%5 == 0, else q + 100
 *   i        q + 200 + (i%3)*10     d  q + 1000 + (i%11)*37     c  d + 20000 + (i%13)*1001
 *   merged   1 if i%5 == 0          remap 8,1 at i*8 + 2048 if i%17 == 0
 *   split    1 if i%7 == 3          pieces 2 + i%3 if split, else 1
 *   completions 0 if merged, else pieces    requeues 1 if i%23 == 0    no_q, unfinished 0
 *   error    -5 if i%101 == 0
 * Row j of iowait, emitted after io row i as soon as j*rows <= i*waits:
 *   pid 2000 + j%5, tid pid + j%2, comm "waiter" + j%5, device sda (8,0) if j is even
 *   start start + j*5000, duration 100000 + (j%9)*1234, source module/kprobe/sched by j%3,
 *   cpu j%4, waker_cpu -1 if j%6 == 0, else (j+1)%4
 * The default start is 50 ms before a UTC midnight: the rows cross a day (a partition).
 *
 * At the end, --stats prints one line of counts to stderr. Errors print one line
 * "exportgen: MESSAGE" (and "hint: ..." where there is one) and exit 1; usage errors exit 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk-export/export.h"
#include "blk-export/schema.h"
#include "blk/strbuf.h"

struct gen_opts {
	const char *dest;
	struct blk_export_opts eo;
	uint64_t rows, waits, start, step, rate;
	int schema, stats;
	const char *cluster, *shard_db;
};

static const char *const devs[3] = {"sda", "sdb", "nvme0n1"};
static const uint32_t dev_major[3] = {8, 8, 259}, dev_minor[3] = {0, 16, 0};
static const char *const comms[7] = {"fio",	  "kworker/0:1H", "jbd2/sda1-8", "postgres: wal",
				     "tab\there", "back\\slash",  "new\nline"};
static const char *const rwbs[4] = {"R", "W", "WS", "RA"};
static const char *const cgroups[4] = {"", "/", "/system.slice/db.service", "4242"};
static const char *const files[4] = {"", "/var/lib/db/base/16384/2619", "ino 131",
				     "/tmp/tab\there"};
static const char *const sources[3] = {"module", "kprobe", "sched"};

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: exportgen [--rows N] [--waits N] [--host NAME] [--trace-id ID] [--start NS]\n"
		"                 [--step NS] [--batch-rows N] [--batch-bytes N] [--gzip 0-9]\n"
		"                 [--retries N] [--backoff MS] [--timeout MS] [--rate ROWS/S]\n"
		"                 [--stats] DEST\n"
		"       exportgen --schema [--cluster NAME --shard-db DB]\n");
	exit(code);
}

static uint64_t num(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "exportgen: option '--%s': invalid value '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv, struct gen_opts *o)
{
	static const struct option lo[] = {
		{"rows", 1, NULL, 'n'},	      {"waits", 1, NULL, 'w'},
		{"host", 1, NULL, 'H'},	      {"trace-id", 1, NULL, 'T'},
		{"start", 1, NULL, 's'},      {"step", 1, NULL, 'S'},
		{"batch-rows", 1, NULL, 'r'}, {"batch-bytes", 1, NULL, 'b'},
		{"gzip", 1, NULL, 'z'},	      {"retries", 1, NULL, 'R'},
		{"backoff", 1, NULL, 'B'},    {"timeout", 1, NULL, 't'},
		{"rate", 1, NULL, 'x'},	      {"stats", 0, NULL, 'v'},
		{"schema", 0, NULL, 'D'},     {"cluster", 1, NULL, 'C'},
		{"shard-db", 1, NULL, 'd'},   {"help", 0, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		const char *name = "";

		for (int i = 0; lo[i].name; i++)
			if (lo[i].val == c)
				name = lo[i].name;
		switch (c) {
		case 'n':
			o->rows = num(optarg, name);
			break;
		case 'w':
			o->waits = num(optarg, name);
			break;
		case 'H':
			o->eo.host = optarg;
			break;
		case 'T':
			o->eo.trace_id = optarg;
			break;
		case 's':
			o->start = num(optarg, name);
			break;
		case 'S':
			o->step = num(optarg, name);
			break;
		case 'r':
			o->eo.batch_rows = (unsigned int)num(optarg, name);
			break;
		case 'b':
			o->eo.batch_bytes = num(optarg, name);
			break;
		case 'z':
			o->eo.gzip_level = (int)num(optarg, name);
			break;
		case 'R':
			o->eo.retries = (unsigned int)num(optarg, name);
			break;
		case 'B':
			o->eo.backoff_ms = (unsigned int)num(optarg, name);
			break;
		case 't':
			o->eo.timeout_ms = (unsigned int)num(optarg, name);
			break;
		case 'x':
			o->rate = num(optarg, name);
			break;
		case 'v':
			o->stats = 1;
			break;
		case 'D':
			o->schema = 1;
			break;
		case 'C':
			o->cluster = optarg;
			break;
		case 'd':
			o->shard_db = optarg;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (o->schema ? optind != argc : optind != argc - 1)
		usage(2);
	o->dest = o->schema ? NULL : argv[optind];
}

static void io_row(const struct gen_opts *o, uint64_t i, struct blk_io_row *r)
{
	memset(r, 0, sizeof(*r));
	r->device = devs[i % 3];
	r->major = dev_major[i % 3];
	r->minor = dev_minor[i % 3];
	r->pid = 1000 + (uint32_t)(i % 7);
	r->comm = comms[i % 7];
	r->rwbs = rwbs[i % 4];
	r->sector = i * 8;
	r->bytes = 4096 * (1 + (uint32_t)(i % 4));
	r->q_ns = o->start + i * o->step;
	r->g_ns = i % 5 ? r->q_ns + 100 : 0;
	r->i_ns = r->q_ns + 200 + (i % 3) * 10;
	r->d_ns = r->q_ns + 1000 + (i % 11) * 37;
	r->c_ns = r->d_ns + 20000 + (i % 13) * 1001;
	r->merged = i % 5 ? 0 : 1;
	r->split = i % 7 == 3;
	r->pieces = r->split ? 2 + (uint32_t)(i % 3) : 1;
	r->completions = r->merged ? 0 : r->pieces;
	r->requeues = i % 23 == 0;
	if (i % 17 == 0) {
		r->remap_major = 8;
		r->remap_minor = 1;
		r->remap_sector = i * 8 + 2048;
	}
	r->error = i % 101 ? 0 : -5;
	r->cgroup = cgroups[i % 4];
	r->origin_pid = i % 3 ? 3000 + (uint32_t)(i % 5) : r->pid;
	r->origin_comm = i % 11 ? comms[(i + 1) % 7] : "journal";
	r->file = files[i % 4];
	r->file_offset = i % 4 ? i * 4096 : 0;
}

static void wait_row(const struct gen_opts *o, uint64_t j, char *comm, struct blk_iowait_row *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(comm, 16, "waiter%u", (unsigned int)(j % 5));
	r->pid = 2000 + (uint32_t)(j % 5);
	r->tid = r->pid + (uint32_t)(j % 2);
	r->comm = comm;
	if (j % 2 == 0) {
		r->device = "sda";
		r->major = 8;
	}
	r->start_ns = o->start + j * 5000;
	r->duration_ns = 100000 + (j % 9) * 1234;
	r->source = sources[j % 3];
	r->cpu = (uint32_t)(j % 4);
	r->waker_cpu = j % 6 ? (int32_t)((j + 1) % 4) : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --rate: sleep until row @n is due */
static void pace(const struct gen_opts *o, uint64_t n, double t0)
{
	double due = t0 + (double)n / (double)o->rate, d = due - now();

	if (d > 0) {
		struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};

		nanosleep(&ts, NULL);
	}
}

static int fail(const char *err)
{
	fprintf(stderr, "exportgen: %s\n", err);
	if (strstr(err, "Connection refused"))
		fprintf(stderr, "hint: is clickhouse-server running and listening on that port?\n");
	else if (strstr(err, "doesn't exist") || strstr(err, "no column"))
		fprintf(stderr, "hint: create the tables: exportgen --schema | clickhouse-client "
				"--database DB --multiquery\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct gen_opts o = {.eo = BLK_EXPORT_OPTS_INIT, .rows = 1000, .step = 1000};
	struct blk_export_stats st;
	struct blk_export *x;
	char err[1024];
	uint64_t j = 0;
	double t0, t;

	/* 2025-12-01 23:59:59.950 UTC */
	o.start = 1764633599950000000ULL;
	o.eo.host = "host-a";
	o.eo.trace_id = "trace-1";
	parse_args(argc, argv, &o);
	if (o.schema) {
		struct blk_strbuf sb = BLK_STRBUF_INIT;

		if (blk_schema_ddl(&sb, o.cluster, o.shard_db, err, sizeof(err)))
			return fail(err);
		fwrite(sb.buf, 1, sb.len, stdout);
		blk_strbuf_release(&sb);
		return 0;
	}
	t0 = now();
	x = blk_export_open(o.dest, &o.eo, err, sizeof(err));
	if (!x)
		return fail(err);
	for (uint64_t i = 0; i < o.rows || j < o.waits; i++) {
		struct blk_io_row r;

		if (o.rate)
			pace(&o, i + j, t0);
		if (i < o.rows) {
			io_row(&o, i, &r);
			if (blk_export_io(x, &r, err, sizeof(err)))
				goto failed;
		}
		while (j < o.waits && (j * o.rows <= i * o.waits || i >= o.rows)) {
			struct blk_iowait_row w;
			char comm[16];

			wait_row(&o, j++, comm, &w);
			if (blk_export_iowait(x, &w, err, sizeof(err)))
				goto failed;
		}
	}
	if (blk_export_close(x, &st, err, sizeof(err)))
		return fail(err);
	t = now() - t0;
	if (o.stats)
		fprintf(stderr,
			"exportgen: rows_io=%" PRIu64 " rows_iowait=%" PRIu64 " batches_io=%" PRIu64
			" batches_iowait=%" PRIu64 " present=%" PRIu64 " rows_present=%" PRIu64
			" retries=%" PRIu64 " checks=%" PRIu64 " bytes_raw=%" PRIu64
			" bytes_sent=%" PRIu64 " seconds=%.3f\n",
			st.rows[BLK_TABLE_IO], st.rows[BLK_TABLE_IOWAIT], st.batches[BLK_TABLE_IO],
			st.batches[BLK_TABLE_IOWAIT], st.batches_present, st.rows_present,
			st.retries, st.checks, st.bytes_raw, st.bytes_sent, t);
	return 0;
failed:
	blk_export_discard(x);
	return fail(err);
}
