// SPDX-License-Identifier: GPL-2.0
/*
 * btt: analyse a merged block trace (as written by blkparse -d) and report the time
 * spent in each phase of an I/O's life, per device and for the system.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk-export/export.h"
#include "blk/reader.h"
#include "btt.h"
#include "common.h"
#include "export/export-out.h"
#include "perfetto/perfetto-out.h"

/* what main() takes from the command line besides btt's options */
struct cmdline {
	struct btt_opts *o;
	const char *input; /* -i */
	int verbose; /* -v */
	int ch_schema; /* --clickhouse-schema */
	const char *cluster; /* --cluster */
};

/* the fleet export (export-out.c) */
enum { OPT_EXPORT = 320, OPT_HOST, OPT_CH_SCHEMA, OPT_CLUSTER, OPT_EXPORT_BATCH };
enum { OPT_PASSWORD_FILE = 340, OPT_CA_FILE, OPT_INSECURE };
enum { OPT_PERCENTILES = 256, OPT_PERCENTILES_ONLY, OPT_IOWAIT_ONLY };
enum { OPT_PERFETTO = 300 };

static const struct option long_opts[] = {
	{"seek-absolute", no_argument, NULL, 'a'},
	{"all-data", no_argument, NULL, 'A'},
	{"dump-blocknos", required_argument, NULL, 'B'},
	{"range-delta", required_argument, NULL, 'd'},
	{"devices", required_argument, NULL, 'D'},
	{"exes", required_argument, NULL, 'e'},
	{"help", no_argument, NULL, 'h'},
	{"input-file", required_argument, NULL, 'i'},
	{"iostat", required_argument, NULL, 'I'},
	{"d2c-latencies", required_argument, NULL, 'l'},
	{"periodic-latencies", required_argument, NULL, 'L'},
	{"seeks-per-second", required_argument, NULL, 'm'},
	{"dev-maps", required_argument, NULL, 'M'},
	{"output-file", required_argument, NULL, 'o'},
	{"per-io-dump", required_argument, NULL, 'p'},
	{"per-io-trees", required_argument, NULL, 'P'},
	{"q2c-latencies", required_argument, NULL, 'q'},
	{"active-queue-depth", required_argument, NULL, 'Q'},
	{"no-remaps", no_argument, NULL, 'r'},
	{"seeks", required_argument, NULL, 's'},
	{"iostat-interval", required_argument, NULL, 'S'},
	{"time-start", required_argument, NULL, 't'},
	{"time-end", required_argument, NULL, 'T'},
	{"unplug-hist", required_argument, NULL, 'u'},
	{"version", no_argument, NULL, 'V'},
	{"verbose", no_argument, NULL, 'v'},
	{"easy-parse-avgs", no_argument, NULL, 'X'},
	{"q2d-latencies", required_argument, NULL, 'z'},
	{"do-active", no_argument, NULL, 'Z'},
	{"export", required_argument, NULL, OPT_EXPORT},
	{"host", required_argument, NULL, OPT_HOST},
	{"clickhouse-schema", no_argument, NULL, OPT_CH_SCHEMA},
	{"cluster", required_argument, NULL, OPT_CLUSTER},
	{"export-batch", required_argument, NULL, OPT_EXPORT_BATCH},
	{"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
	{"ca-file", required_argument, NULL, OPT_CA_FILE},
	{"insecure", no_argument, NULL, OPT_INSECURE},
	{"percentiles", no_argument, NULL, OPT_PERCENTILES},
	{"percentiles-only", no_argument, NULL, OPT_PERCENTILES_ONLY},
	{"perfetto", required_argument, NULL, OPT_PERFETTO},
	{"iowait-only", no_argument, NULL, OPT_IOWAIT_ONLY},
	{NULL, 0, NULL, 0},
};

static const char short_opts[] = ":aAB:d:D:e:hi:I:l:L:m:M:o:p:P:q:Q:rs:S:t:T:u:VvXz:Z";

/* option, argument, help: kept next to each other so usage stays in step with the table */
static const char *const help[][3] = {
	{"-a, --seek-absolute", "", "seek distance is start minus the previous end"},
	{"-A, --all-data", "", "also per-process and per-device tables, Q2D histogram"},
	{"-B, --dump-blocknos", "NAME", "write block numbers of issues to NAME_<dev>_{r,w,c}.dat"},
	{"-d, --range-delta", "SECS", "gap that splits activity ranges (default 0.1)"},
	{"-D, --devices", "M,m;...", "only report these devices"},
	{"-e, --exes", "EXE,...", "only report these processes"},
	{"-h, --help", "", "this text"},
	{"-i, --input-file", "FILE", "merged binary trace (blkparse -d); required"},
	{"-I, --iostat", "FILE", "write iostat-like statistics to FILE"},
	{"-l, --d2c-latencies", "NAME", "per-IO D2C latencies to NAME_<dev>_d2c.dat"},
	{"-L, --periodic-latencies", "SECS", "windowed average latencies (<dev>_*_plat.dat)"},
	{"-m, --seeks-per-second", "NAME", "seeks per second to NAME_<dev>.dat (needs -s)"},
	{"-M, --dev-maps", "FILE", "device names: lines '<name> <maj>,<min>'"},
	{"-o, --output-file", "NAME", "write NAME.avg and NAME.dat instead of stdout"},
	{"-p, --per-io-dump", "FILE", "list every IO's events in FILE"},
	{"-P, --per-io-trees", "NAME", "per-device <dev>_pit.dat files"},
	{"-q, --q2c-latencies", "NAME", "per-IO Q2C latencies to NAME_<dev>_q2c.dat"},
	{"-Q, --active-queue-depth", "NAME", "in-flight depth steps to NAME_<dev>_aqd.dat"},
	{"-r, --no-remaps", "", "ignore remap (A) events"},
	{"-s, --seeks", "NAME", "seek distances to NAME_<dev>_{q2q,d2d}_{r,w,c}.dat"},
	{"-S, --iostat-interval", "SECS", "iostat interval in trace seconds (default 1)"},
	{"-t, --time-start", "SECS", "ignore events before SECS"},
	{"-T, --time-end", "SECS", "stop at the first event after SECS"},
	{"-u, --unplug-hist", "NAME", "unplug depth histograms to NAME_<dev>.dat"},
	{"-V, --version", "", "print the version"},
	{"-v, --verbose", "", "progress and the record rate on stdout"},
	{"-X, --easy-parse-avgs", "", "also NAME.xvg (with -o)"},
	{"-z, --q2d-latencies", "NAME", "per-IO Q2D latencies to NAME_<dev>_q2d.dat"},
	{"-Z, --do-active", "", "write <dev>_live.dat and sys_live.dat"},
	{"    --export", "DEST", "every I/O: clickhouse[s]://[USER@]HOST[:PORT]/DB or tsv:DIR"},
	{"    --host", "NAME", "the rows' host label (default: the hostname)"},
	{"    --export-batch", "ROWS", "rows per INSERT (default 65536)"},
	{"    --password-file", "FILE", "ClickHouse's password (else $CLICKHOUSE_PASSWORD)"},
	{"    --ca-file", "FILE", "clickhouses://: trust the CAs in FILE (PEM)"},
	{"    --insecure", "", "no certificate check; a password over plain HTTP"},
	{"    --clickhouse-schema", "", "print the export's tables (DDL) and exit"},
	{"    --cluster", "NAME", "with --clickhouse-schema: Distributed tables too"},
	{"    --percentiles", "", "add Q2C/D2C/Q2D percentiles after the report"},
	{"    --percentiles-only", "", "print only the percentiles"},
	{"    --perfetto", "FILE", "every I/O on a Perfetto timeline in FILE (.gz: gzip)"},
	{"    --iowait-only", "", "print only the I/O wait by process section"},
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: btt -i FILE [options]\n\n");
	for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++) {
		char left[64];

		snprintf(left, sizeof(left), "%s%s%s", help[i][0], help[i][1][0] ? " " : "",
			 help[i][1]);
		fprintf(fp, "  %-34s %s\n", left, help[i][2]);
	}
}

static void usage_error(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	error("%s", msg);
	hint("see 'btt --help'");
	exit(2);
}

static double parse_double(const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end) {
		error("option '%s': '%s' is not a number", opt, arg);
		hint("see 'btt --help'");
		exit(2);
	}
	return v;
}

/* --export, --host, --cluster: checked before anything is read */
static void check_export_args(const struct cmdline *cl)
{
	const struct btt_opts *o = cl->o;
	struct blk_export_dest d;
	char err[600];

	if (o->export_dest && blk_export_dest_parse(o->export_dest, &d, err, sizeof(err)) < 0) {
		error("option '--export': %s", err);
		hint("DEST is clickhouse[s]://[USER@]HOST[:PORT]/DATABASE[?distributed=1] or tsv:DIR");
		exit(1);
	}
	if (o->export_host && (!o->export_host[0] || strlen(o->export_host) > BLK_ROW_STR_MAX))
		usage_error("option '--host': '%s' must be 1 to 255 bytes", o->export_host);
	if (!o->export_dest && (o->export_host || o->export_batch))
		usage_error("option '%s' needs '--export'",
			    o->export_host ? "--host" : "--export-batch");
	if (o->password_file && access(o->password_file, R_OK) < 0) {
		error("option '--password-file': cannot read '%s': %s", o->password_file,
		      strerror(errno));
		exit(1);
	}
	if (o->ca_file && access(o->ca_file, R_OK) < 0) {
		error("option '--ca-file': cannot read '%s': %s", o->ca_file, strerror(errno));
		exit(1);
	}
	if (!o->export_dest && (o->password_file || o->ca_file || o->insecure))
		usage_error("option '%s' needs '--export'", o->password_file ? "--password-file"
							    : o->ca_file     ? "--ca-file"
									     : "--insecure");
	if (cl->cluster && !cl->ch_schema)
		usage_error("option '--cluster' (here '%s') needs '--clickhouse-schema'",
			    cl->cluster);
}

static void parse_args(int argc, char **argv, struct cmdline *cl)
{
	struct btt_opts *o = cl->o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->seek_absolute = 1;
			break;
		case 'A':
			o->all_data = 1;
			break;
		case 'B':
			o->bno_name = optarg;
			break;
		case 'd':
			o->range_delta = parse_double("--range-delta", optarg);
			break;
		case 'D':
			o->devices = optarg;
			break;
		case 'e':
			o->exes = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			cl->input = optarg;
			break;
		case 'I':
			o->iostat_name = optarg;
			break;
		case 'l':
			o->d2c_name = optarg;
			break;
		case 'L':
			o->plat_freq = parse_double("--periodic-latencies", optarg);
			break;
		case 'm':
			o->sps_name = optarg;
			break;
		case 'M':
			o->devmap_name = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			o->per_io_name = optarg;
			break;
		case 'P':
			o->pit_name = optarg;
			break;
		case 'q':
			o->q2c_name = optarg;
			break;
		case 'Q':
			o->aqd_name = optarg;
			break;
		case 'r':
			o->no_remaps = 1;
			break;
		case 's':
			o->seek_name = optarg;
			break;
		case 'S':
			o->iostat_interval = (int)parse_double("--iostat-interval", optarg);
			if (o->iostat_interval <= 0)
				usage_error("option '--iostat-interval': '%s' must be at least 1",
					    optarg);
			break;
		case 't':
			o->t_start = parse_double("--time-start", optarg);
			o->time_bounded = 1;
			break;
		case 'T':
			o->t_end = parse_double("--time-end", optarg);
			o->time_bounded = 1;
			break;
		case 'u':
			o->unplug_name = optarg;
			break;
		case 'V':
			print_version("btt version 2.09");
			exit(0);
		case 'v':
			cl->verbose++;
			break;
		case 'X':
			o->easy_parse = 1;
			break;
		case 'z':
			o->q2d_name = optarg;
			break;
		case 'Z':
			o->do_active = 1;
			break;
		case OPT_EXPORT:
			o->export_dest = optarg;
			break;
		case OPT_HOST:
			o->export_host = optarg;
			break;
		case OPT_CH_SCHEMA:
			cl->ch_schema = 1;
			break;
		case OPT_CLUSTER:
			cl->cluster = optarg;
			break;
		case OPT_PASSWORD_FILE:
			o->password_file = optarg;
			break;
		case OPT_CA_FILE:
			o->ca_file = optarg;
			break;
		case OPT_INSECURE:
			o->insecure = 1;
			break;
		case OPT_EXPORT_BATCH:
			o->export_batch = (unsigned int)parse_opt_num(optarg, "--export-batch", 1,
								      BLK_EXPORT_MAX_BATCH_ROWS);
			break;
		case OPT_PERCENTILES:
			o->percentiles = 1;
			break;
		case OPT_PERCENTILES_ONLY:
			o->percentiles = 2;
			break;
		case OPT_PERFETTO:
			o->perfetto_name = optarg;
			break;
		case OPT_IOWAIT_ONLY:
			o->iowait_only = 1;
			break;
		case ':':
			error("option '%s' needs a value", argv[optind - 1]);
			hint("see 'btt --help'");
			exit(2);
		default:
			if (optopt)
				error("unknown option '-%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			hint("see 'btt --help'");
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	check_export_args(cl);
	if (cl->ch_schema)
		return;
	if (!cl->input) {
		error("no input file");
		hint("give the merged trace with -i FILE (make one with 'blkparse -i NAME -d FILE -O')");
		exit(2);
	}
	if (o->sps_name && !o->seek_name) {
		error("option '--seeks-per-second' needs '--seeks'");
		hint("add -s NAME");
		exit(2);
	}
}

/* --clickhouse-schema: the shards' database is the one of --export=clickhouse://.../DB */
static int print_schema(const struct cmdline *cl)
{
	struct blk_export_dest d;
	char err[600];
	const char *db = NULL;

	if (cl->o->export_dest &&
	    !blk_export_dest_parse(cl->o->export_dest, &d, err, sizeof(err)) &&
	    d.kind == BLK_EXPORT_CLICKHOUSE)
		db = d.database;
	if (export_out_schema(stdout, cl->cluster, db) < 0)
		return 1;
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));
	return 0;
}

/* -v: once per wall-clock second, the records taken so far and how far into the file */
struct progress {
	struct btt *b;
	struct blk_reader *r;
	off_t size;
	time_t last;
	unsigned int calls;
};

static void progress(void *arg)
{
	struct progress *p = arg;
	time_t now;

	if (p->calls++ % 1024)
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	if (p->last && p->size > 0)
		printf("\r%10llu t (%5.2lf%%)", (unsigned long long)iomodel_records(p->b->model),
		       100.0 * (double)blk_reader_offset(p->r) / (double)p->size);
	p->last = now;
}

/* --perfetto: its remarks, and its error once (1 then) */
static int perfetto_messages(const struct btt *b)
{
	const struct pfout *pf = btt_output(b, "perfetto");
	const char *s;

	for (unsigned int i = 0; (s = pfout_note(pf, i)); i++)
		warning("%s", s);
	if (!pfout_error(pf))
		return 0;
	error("%s", pfout_error(pf));
	if (pfout_hint(pf))
		hint("%s", pfout_hint(pf));
	return 1;
}

static int next_record(void *src, struct blk_event *ev)
{
	return blk_reader_next(src, ev);
}

/* -i names no file: a base name of per-CPU files (NAME.blktrace.N) is the usual slip */
static void __attribute__((noreturn)) open_failed(const char *input)
{
	int e = errno;
	char cpu0[4096];

	error("cannot open '%s': %s", input, strerror(e));
	snprintf(cpu0, sizeof(cpu0), "%s.blktrace.0", input);
	if (e == ENOENT && !access(cpu0, F_OK))
		hint("'%s' looks like per-CPU trace files (%s ...): run 'blkparse -i %s -d %s.bin -O' and then 'btt -i %s.bin'",
		     input, cpu0, input, input, input);
	exit(1);
}

/* in @base, the ".blktrace." of a name NAME.blktrace.N (N decimal), or NULL */
static const char *cpu_suffix(const char *base)
{
	const char *p, *last = NULL;

	for (p = strstr(base, ".blktrace."); p; p = strstr(p + 1, ".blktrace."))
		last = p;
	if (!last || last == base || !last[10] ||
	    strspn(last + 10, "0123456789") != strlen(last + 10))
		return NULL;
	return last;
}

/* the number of files NAME.blktrace.N (N decimal) in @dir, @base being NAME's last part */
static int count_cpu_files(const char *dir, const char *base, size_t blen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const char *p = de->d_name;

		if (strncmp(p, base, blen) || strncmp(p + blen, ".blktrace.", 10))
			continue;
		if (cpu_suffix(p) == p + blen)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * -i names one CPU's file of a trace of several (NAME.blktrace.N beside NAME.blktrace.M):
 * btt would read its events as the whole trace, and report from a part of the I/Os (a
 * request queued on one CPU and completed on another gets a wrong completion, or none).
 * Refuse it with the merge that makes the file btt wants. btt 2.09 reads such a file.
 * A side file (I/O waits: NAME.iowait.blktrace.N; the relay backend's origin notes:
 * NAME.origin.blktrace.N) is merged by blkparse -i NAME as well.
 */
static void refuse_cpu_file(const char *input)
{
	const char *slash = strrchr(input, '/'), *base = slash ? slash + 1 : input;
	const char *dot = cpu_suffix(base);
	char dir[4096], name[4096];
	size_t blen, nlen;
	int n;

	if (!dot)
		return;
	blen = (size_t)(dot - base);
	if (slash == input)
		snprintf(dir, sizeof(dir), "/");
	else if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - input), input);
	else
		snprintf(dir, sizeof(dir), ".");
	n = count_cpu_files(dir, base, blen);
	if (n < 2)
		return;
	nlen = (size_t)(dot - input);
	if (blen > 7 && (!strncmp(dot - 7, ".iowait", 7) || !strncmp(dot - 7, ".origin", 7)))
		nlen -= 7;
	snprintf(name, sizeof(name), "%.*s", (int)nlen, input);
	error("'%s' is one of %d per-CPU files of a trace: btt reads the trace merged into one file",
	      input, n);
	hint("run 'blkparse -i %s -d %s.bin -O' and then 'btt -i %s.bin'", name, name, name);
	exit(1);
}

int main(int argc, char **argv)
{
	struct btt b = {.opts = BTT_OPTS_INIT};
	struct cmdline cl = {.o = &b.opts};
	struct progress pr = {.b = &b};
	struct blk_reader *r;
	struct blk_event ev;
	struct timespec t0, t1;
	struct stat st;
	int rc, status = 0;

	set_progname("btt");
	install_log_hook();
	parse_args(argc, argv, &cl);
	if (cl.ch_schema)
		return print_schema(&cl);
	refuse_cpu_file(cl.input); /* before any output file is made */
	b.opts.input = cl.input;
	rc = btt_init(&b);
	if (rc < 0)
		die("cannot read device map '%s': %s", b.opts.devmap_name, strerror(-rc));
	if (btt_open(&b) < 0)
		exit(perfetto_messages(&b));

	r = blk_reader_open(cl.input);
	if (!r)
		open_failed(cl.input);
	if (cl.verbose && stat(cl.input, &st) == 0)
		pr.size = st.st_size;
	pr.r = r;
	/* like the reference, an input without a single record gives no report and no files */
	rc = blk_reader_next(r, &ev);
	if (rc <= 0) {
		if (rc < 0)
			error("%s", blk_reader_error(r));
		blk_reader_close(r);
		btt_release(&b);
		return rc < 0 ? 1 : 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = btt_run(&b, next_record, r, &ev, cl.verbose ? progress : NULL, &pr);
	if (cl.verbose) {
		/* -v: the record count and rate, on stdout as the reference prints it */
		unsigned long long n = iomodel_records(b.model);
		double secs;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("\r%80s\r%10llu traces @ %.1lf Ktps in %.6lf seconds\n", "", n,
		       secs > 0 ? (double)n / secs / 1000.0 : 0.0, secs);
	}
	if (rc < 0) {
		error("%s", blk_reader_error(r));
		status = 1;
	}
	blk_reader_close(r);
	if (btt_report(&b) < 0)
		status = 1;
	status |= perfetto_messages(&b);
	btt_release(&b);
	return status;
}
