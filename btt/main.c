// SPDX-License-Identifier: GPL-2.0
/*
 * btt: analyse a merged block trace (as written by blkparse -d) and report the time
 * spent in each phase of an I/O's life, per device and for the system.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "btt.h"
#include "common.h"
#include "iomodel.h"
#include "iostat.h"
#include "blk/reader.h"

struct btt_opts opts = {
	.range_delta = 0.1,
	.iostat_interval = 1,
};
struct btt_state bs;

enum { OPT_PERCENTILES = 256, OPT_PERCENTILES_ONLY };

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
	{"percentiles", no_argument, NULL, OPT_PERCENTILES},
	{"percentiles-only", no_argument, NULL, OPT_PERCENTILES_ONLY},
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
	{"    --percentiles", "", "add Q2C/D2C/Q2D percentiles after the report"},
	{"    --percentiles-only", "", "print only the percentiles"},
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

static void parse_args(int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			opts.seek_absolute = 1;
			break;
		case 'A':
			opts.all_data = 1;
			break;
		case 'B':
			opts.bno_name = optarg;
			break;
		case 'd':
			opts.range_delta = parse_double("--range-delta", optarg);
			break;
		case 'D':
			opts.devices = optarg;
			break;
		case 'e':
			opts.exes = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			opts.input = optarg;
			break;
		case 'I':
			opts.iostat_name = optarg;
			break;
		case 'l':
			opts.d2c_name = optarg;
			break;
		case 'L':
			opts.plat_freq = parse_double("--periodic-latencies", optarg);
			break;
		case 'm':
			opts.sps_name = optarg;
			break;
		case 'M':
			opts.devmap_name = optarg;
			break;
		case 'o':
			opts.output = optarg;
			break;
		case 'p':
			opts.per_io_name = optarg;
			break;
		case 'P':
			opts.pit_name = optarg;
			break;
		case 'q':
			opts.q2c_name = optarg;
			break;
		case 'Q':
			opts.aqd_name = optarg;
			break;
		case 'r':
			opts.no_remaps = 1;
			break;
		case 's':
			opts.seek_name = optarg;
			break;
		case 'S':
			opts.iostat_interval = (int)parse_double("--iostat-interval", optarg);
			if (opts.iostat_interval <= 0)
				usage_error("option '--iostat-interval': '%s' must be at least 1",
					    optarg);
			break;
		case 't':
			opts.t_start = parse_double("--time-start", optarg);
			opts.time_bounded = 1;
			break;
		case 'T':
			opts.t_end = parse_double("--time-end", optarg);
			opts.time_bounded = 1;
			break;
		case 'u':
			opts.unplug_name = optarg;
			break;
		case 'V':
			print_version("btt version 2.09");
			exit(0);
		case 'v':
			opts.verbose++;
			break;
		case 'X':
			opts.easy_parse = 1;
			break;
		case 'z':
			opts.q2d_name = optarg;
			break;
		case 'Z':
			opts.do_active = 1;
			break;
		case OPT_PERCENTILES:
			opts.percentiles = 1;
			break;
		case OPT_PERCENTILES_ONLY:
			opts.percentiles = 2;
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
	if (!opts.input) {
		error("no input file");
		hint("give the merged trace with -i FILE (make one with 'blkparse -i NAME -d FILE -O')");
		exit(2);
	}
	if (opts.sps_name && !opts.seek_name) {
		error("option '--seeks-per-second' needs '--seeks'");
		hint("add -s NAME");
		exit(2);
	}
}

/* -v: once per wall-clock second, the records taken so far and how far into the file */
static void progress(struct blk_reader *r, off_t size)
{
	static time_t last;
	static unsigned int calls;
	time_t now;

	if (calls++ % 1024)
		return;
	now = time(NULL);
	if (now == last)
		return;
	if (last && size > 0)
		printf("\r%10llu t (%5.2lf%%)", (unsigned long long)bs.n_traces,
		       100.0 * (double)blk_reader_offset(r) / (double)size);
	last = now;
}

/*
 * Once the queued I/Os outgrow the caches (requests that never complete pile up), events
 * are taken in batches: before a batch is modelled, the insertions it will make descend
 * together (qtree_prefetch), so that their cache misses overlap.
 */
#define BATCH 16
#define PREFETCH_NODES (256u << 10) /* 4 MiB of nodes */

struct batch {
	struct blk_event ev[BATCH];
	size_t pdu_off[BATCH];
	size_t n;
	unsigned char *pdu; /* the payloads, copied: the reader's are valid until its next call */
	size_t pdu_len, pdu_cap;
};

static void batch_add(struct batch *b, const struct blk_event *ev)
{
	if (b->pdu_len + ev->pdu_len > b->pdu_cap) {
		size_t cap = b->pdu_cap ? b->pdu_cap : 4096;
		unsigned char *p;

		while (cap < b->pdu_len + ev->pdu_len)
			cap *= 2;
		p = realloc(b->pdu, cap);
		if (!p)
			die("out of memory");
		b->pdu = p;
		b->pdu_cap = cap;
	}
	if (ev->pdu_len)
		memcpy(b->pdu + b->pdu_len, ev->pdu, ev->pdu_len);
	b->pdu_off[b->n] = b->pdu_len;
	b->pdu_len += ev->pdu_len;
	b->ev[b->n++] = *ev;
}

static void batch_prefetch(struct batch *b)
{
	struct qtree *t[BATCH];
	uint64_t sector[BATCH];
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++) {
		const struct blk_event *ev = &b->ev[i];
		uint32_t act = blk_event_action32(ev);
		struct dev *dip;

		b->ev[i].pdu = b->pdu + b->pdu_off[i];
		if ((act & (BLK_TC_ACT(BLK_TC_NOTIFY) | BLK_TC_ACT(BLK_TC_PC))) || !ev->bytes)
			continue;
		/* the insertions: the other searches mostly go through the table */
		if ((act & 0xffff) == BLK_TA_QUEUE && (dip = dev_find(ev->device))) {
			t[n] = &dip->qt;
			sector[n++] = ev->sector;
		}
	}
	qtree_prefetch(&bs.qpool, t, sector, n);
}

/* the events from @ev on; the reader's last status */
static int run(struct blk_reader *r, struct blk_event *ev, off_t size)
{
	struct batch b = {.n = 0};
	int rc = 1;

	/* one at a time while the queued I/Os fit in the caches (batches cost a copy) */
	while (bs.qpool.used < PREFETCH_NODES) {
		iomodel_event(ev);
		if (opts.verbose)
			progress(r, size);
		if (bs.done || (rc = blk_reader_next(r, ev)) <= 0)
			return rc;
	}
	batch_add(&b, ev);
	for (;;) {
		while (b.n < BATCH && (rc = blk_reader_next(r, ev)) > 0)
			batch_add(&b, ev);
		batch_prefetch(&b);
		for (size_t i = 0; i < b.n && !bs.done; i++) {
			iomodel_event(&b.ev[i]);
			if (opts.verbose)
				progress(r, size);
		}
		if (bs.done || rc <= 0)
			break;
		b.n = 0;
		b.pdu_len = 0;
	}
	free(b.pdu);
	return rc;
}

/* the seek streams' first pass, two at a time */
static void prepare_seeks(void)
{
	struct seeki **v = malloc((bs.ndevs ? bs.ndevs : 1) * 2 * sizeof(*v));

	if (!v)
		die("out of memory");
	for (size_t i = 0; i < bs.ndevs; i++) {
		v[2 * i] = bs.devs[i]->q2q_seek;
		v[2 * i + 1] = bs.devs[i]->d2d_seek;
	}
	seeki_prepare(v, 2 * bs.ndevs);
	free(v);
}

static FILE *open_out(const char *suffix, char **name)
{
	char fn[4096];

	if (!opts.output)
		return stdout;
	snprintf(fn, sizeof(fn), "%s.%s", opts.output, suffix);
	return file_create(fn, name);
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

int main(int argc, char **argv)
{
	struct blk_reader *r;
	struct blk_event ev;
	FILE *avg_fp, *dat_fp;
	char *avg_name = NULL, *dat_name = NULL;
	struct timespec t0, t1;
	struct stat st;
	off_t size = 0;
	int rc = 0, status = 0;

	set_progname("btt");
	install_log_hook();
	parse_args(argc, argv);
	ranges_init();
	if (opts.devmap_name && (rc = devmap_load(opts.devmap_name)) < 0)
		die("cannot read device map '%s': %s", opts.devmap_name, strerror(-rc));

	r = blk_reader_open(opts.input);
	if (!r)
		open_failed(opts.input);
	blk_reader_set_readahead(r, 1);
	bs.last_q = NO_TIME;
	if (opts.verbose && stat(opts.input, &st) == 0)
		size = st.st_size;
	/* like the reference, an input without a single record gives no report and no files */
	rc = blk_reader_next(r, &ev);
	if (rc <= 0) {
		if (rc < 0)
			error("%s", blk_reader_error(r));
		blk_reader_close(r);
		return rc < 0 ? 1 : 0;
	}
	fp_init(&bs.sys_fp, "sys");
	extras_init();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = run(r, &ev, size);
	if (opts.verbose) {
		/* -v: the record count and rate, on stdout as the reference prints it */
		unsigned long long n = bs.n_traces;
		double secs;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("\r%80s\r%10llu traces @ %.1lf Ktps in %.6lf seconds\n", "", n,
		       secs > 0 ? (double)n / secs / 1000.0 : 0.0, secs);
	}
	if (!bs.done && rc < 0) {
		error("%s", blk_reader_error(r));
		status = 1;
	}
	blk_reader_close(r);
	iomodel_finish();
	devs_sort_procs();
	devs_order();
	prepare_seeks();

	avg_fp = open_out("avg", &avg_name);
	if (opts.percentiles != 2)
		report_print(avg_fp);
	if (opts.percentiles)
		pct_print(avg_fp);
	if (opts.percentiles != 2) {
		dat_fp = opts.output ? open_out("dat", &dat_name) : avg_fp;
		ranges_print(dat_fp);
		if (dat_fp != stdout)
			file_close(&dat_fp, &dat_name);
	}
	if (avg_fp != stdout)
		file_close(&avg_fp, &avg_name);
	else if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));

	if (opts.do_active) {
		float base = 1.0f;

		live_dump(&bs.all_live, "sys_live.dat", 0.0f);
		/* the shown devices in report order; each with live periods takes a row */
		for (size_t i = 0; i < bs.nout; i++) {
			char fn[128];

			dev_label(bs.out[i], fn, sizeof(fn) - 10, 0);
			strcat(fn, "_live.dat");
			live_dump(&bs.out[i]->live, fn, base);
			if (bs.out[i]->live.n)
				base += 1.0f;
		}
	}
	fp_finish(&bs.sys_fp);
	for (size_t i = 0; i < bs.ndevs; i++) {
		struct dev *dip = bs.devs[i];

		char lab[64];

		fp_finish(&dip->fp);
		plat_finish(dip);
		dev_label(dip, lab, sizeof(lab), 0);
		seeki_sps_write(dip->q2q_seek, dip->d2d_seek, lab);
		file_close(&dip->d2c_fp, &dip->d2c_fn);
		file_close(&dip->q2c_fp, &dip->q2c_fn);
		file_close(&dip->q2d_fp, &dip->q2d_fn);
	}
	iostat_finish(bs.last_time);
	extras_finish();
	region_release(&bs.all_regions);
	live_release(&bs.all_live);
	devs_release();
	return status;
}
