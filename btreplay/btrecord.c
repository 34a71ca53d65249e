// SPDX-License-Identifier: GPL-2.0
/*
 * btrecord: turn per-CPU block traces (DEV.blktrace.CPU) into replay files (DEV.BASE.CPU)
 * that btreplay re-issues. Only queue (Q) records are kept; they are grouped into bunches
 * of I/Os that start close together, which btreplay submits at once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "blk/event.h"
#include "blk/reader.h"
#include "blk/trace.h"
#include "replay-file.h"

#define BTRECORD_VERSION "2.0.0"
#define DEF_BUNCH_NS 10000000ull
#define DEF_MAX_PKTS 8

struct rec_opts {
	const char *idir;
	const char *odir;
	const char *base;
	int find;
	int verbose;
	uint64_t bunch_ns;
	unsigned int max_pkts;
	const char **devs;
	int ndevs;
};

/* One output file being written: the bunch being filled and the running counts. */
struct rec_out {
	const struct rec_opts *o;
	const char *dev;
	int cpu;
	char *path;
	FILE *f;
	FILE *rec; /* -v: text copy, PATH.rec */
	struct rf_file_hdr hdr;
	int have_genesis;
	uint64_t last_time;
	uint64_t nbunches, npkts; /* everything written */
	uint64_t last_npkts; /* packets of the last bunch written */
	struct {
		struct rf_bunch_hdr hdr;
		struct rf_pkt pkts[RF_MAX_PKTS];
	} bunch;
};

static const struct option long_opts[] = {
	{"input-directory", required_argument, NULL, 'd'},
	{"output-directory", required_argument, NULL, 'D'},
	{"find-traces", no_argument, NULL, 'F'},
	{"help", no_argument, NULL, 'h'},
	{"max-bunch-time", required_argument, NULL, 'm'},
	{"max-pkts", required_argument, NULL, 'M'},
	{"output-base", required_argument, NULL, 'o'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: btrecord [options] DEV...\n"
		"Turn the per-CPU traces DIR/DEV.blktrace.CPU into replay files ODIR/DEV.BASE.CPU.\n\n"
		"  -d, --input-directory=DIR    where the trace files are (default .)\n"
		"  -D, --output-directory=DIR   where the replay files go (default .)\n"
		"  -F, --find-traces            take every NAME.blktrace.CPU in the input directory\n"
		"  -m, --max-bunch-time=NSEC    longest time span of one bunch (default 10000000)\n"
		"  -M, --max-pkts=N             most I/Os in one bunch, 1..512 (default 8)\n"
		"  -o, --output-base=BASE       middle part of the output names (default replay)\n"
		"  -v, --verbose                per-file statistics on stderr and a text copy of each\n"
		"                               replay file (FILE.rec); twice: every I/O on stderr\n"
		"  -V, --version                print the version\n"
		"  -h, --help                   this text\n");
}

static void bad_usage(const char *fmt, const char *arg)
{
	error(fmt, arg);
	fprintf(stderr, "Try 'btrecord --help' for more information.\n");
	exit(1);
}

static void parse_args(int argc, char **argv, struct rec_opts *o)
{
	int c;

	argv[0] = (char *)progname(); /* getopt's messages then start with the tool's name */
	while ((c = getopt_long(argc, argv, "d:D:Fhm:M:o:vV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->idir = optarg;
			break;
		case 'D':
			o->odir = optarg;
			break;
		case 'F':
			o->find = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'm':
			o->bunch_ns = parse_opt_num(optarg, "--max-bunch-time", 1, UINT64_MAX);
			break;
		case 'M':
			o->max_pkts =
				(unsigned int)parse_opt_num(optarg, "--max-pkts", 1, RF_MAX_PKTS);
			break;
		case 'o':
			if (!*optarg || strchr(optarg, '/'))
				die("option '--output-base': '%s' is not a file name part (no '/', not empty)",
				    optarg);
			o->base = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			print_version("btrecord version %s (replay files version 1.0.0)",
				      BTRECORD_VERSION);
			exit(0);
		default:
			fprintf(stderr, "Try 'btrecord --help' for more information.\n");
			exit(1);
		}
	}
	o->devs = (const char **)argv + optind;
	o->ndevs = argc - optind;
	if (o->find && o->ndevs) {
		warning("device names are ignored with -F (every trace in '%s' is taken)", o->idir);
		o->ndevs = 0;
	}
	if (!o->find && !o->ndevs)
		bad_usage("no device given%s",
			  " (name the traces, e.g. 'sda' for sda.blktrace.N, or use -F)");
}

static void check_dir(const char *dir, const char *what)
{
	struct stat st;

	if (stat(dir, &st))
		die("cannot use %s '%s': %s", what, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("cannot use %s '%s': %s", what, dir, strerror(ENOTDIR));
}

static void find_inputs(const struct rec_opts *o, struct rf_list *l)
{
	const char *dev;
	int n, i = 0;

	if (o->find) {
		n = rf_find(l, o->idir, NULL, "blktrace");
		if (n < 0)
			die("cannot read input directory '%s': %s", o->idir, strerror(-n));
		if (!n) {
			error("no trace files (NAME.blktrace.CPU) found in '%s'", o->idir);
			hint("blktrace writes them where it runs, or into its -D directory");
			exit(1);
		}
		return;
	}
	n = rf_find_devs(l, o->idir, o->devs, o->ndevs, "blktrace", &i);
	if (!n)
		return;
	dev = o->devs[i];
	if (n < 0)
		die("cannot look for the traces of '%s' in '%s': %s", dev, o->idir, strerror(-n));
	error("no trace files '%s/%s.blktrace.CPU' found", o->idir, dev);
	if (!strncmp(dev, "/dev/", 5))
		hint("name the trace as blktrace wrote it: '%s', not the device path", dev + 5);
	else if (strstr(dev, ".blktrace."))
		hint("name the trace without its '.blktrace.CPU' suffix: '%.*s'",
		     (int)(strstr(dev, ".blktrace.") - dev), dev);
	else
		hint("use -d DIR for the directory holding them, or -F to take every trace there");
	exit(1);
}

/* ---- output ---- */

static int out_write(struct rec_out *w, const void *p, size_t n)
{
	return fwrite(p, 1, n, w->f) == n ? 0 : -1;
}

static void show_hdr(const struct rec_out *w)
{
	if (w->o->verbose)
		fprintf(stderr, "\t%s: %llx %llx %llx %llx\n", w->path,
			(unsigned long long)w->hdr.version, (unsigned long long)w->hdr.genesis,
			(unsigned long long)w->hdr.nbunches, (unsigned long long)w->hdr.npkts);
}

static int flush_bunch(struct rec_out *w)
{
	uint64_t n = w->bunch.hdr.npkts;

	if (!n)
		return 0;
	if (out_write(w, &w->bunch, sizeof(w->bunch.hdr) + n * sizeof(struct rf_pkt)))
		return -1;
	if (w->rec) {
		uint64_t t = w->bunch.hdr.time_stamp - w->hdr.genesis;

		fprintf(w->rec, "------------------\n%4llu.%09llu %3llu\n------------------\n",
			(unsigned long long)(t / 1000000000), (unsigned long long)(t % 1000000000),
			(unsigned long long)n);
		for (uint64_t i = 0; i < n; i++)
			fprintf(w->rec, "\t%u %10llu\t%10llu\n", w->bunch.pkts[i].rw,
				(unsigned long long)w->bunch.pkts[i].sector,
				(unsigned long long)(w->bunch.pkts[i].nbytes / 512));
	}
	w->nbunches++;
	w->npkts += n;
	w->last_npkts = n;
	w->bunch.hdr.npkts = 0;
	return 0;
}

/* Add queued I/O @ev; return 0, -1 on a write error, -2 if time went backwards. */
static int add_io(struct rec_out *w, const struct blk_event *ev)
{
	struct rf_pkt *p;

	if (w->have_genesis && ev->time < w->last_time)
		return -2;
	if (w->o->verbose > 1)
		fprintf(stderr, "%2d: %10llu+%10llu (%d) @ %10llx\n", w->cpu,
			(unsigned long long)ev->sector, (unsigned long long)(ev->bytes / 512),
			blk_event_has_cat(ev, BLK_TC_READ), (unsigned long long)ev->time);
	if (!w->have_genesis) {
		w->have_genesis = 1;
		w->hdr.genesis = ev->time;
		if (w->o->verbose > 1)
			fprintf(stderr, "\tSetting new genesis: %llx(%d)\n",
				(unsigned long long)ev->time, w->cpu);
	}
	w->last_time = ev->time;
	if (w->bunch.hdr.npkts &&
	    (w->bunch.hdr.npkts == w->o->max_pkts ||
	     ev->time - w->bunch.hdr.time_stamp > w->o->bunch_ns) &&
	    flush_bunch(w))
		return -1;
	if (!w->bunch.hdr.npkts)
		w->bunch.hdr.time_stamp = ev->time;
	p = &w->bunch.pkts[w->bunch.hdr.npkts++];
	p->sector = ev->sector;
	p->nbytes = ev->bytes;
	p->rw = blk_event_has_cat(ev, BLK_TC_READ);
	p->pad = 0;
	return 0;
}

/* Queue records of a queue category (notify records included, as the classic tool does). */
static int is_queue(const struct blk_event *ev)
{
	return (blk_event_action32(ev) & 0xffff) == BLK_TA_QUEUE &&
	       blk_event_has_cat(ev, BLK_TC_QUEUE);
}

/* Convert one trace file; return 0, or -1 after reporting an error. */
static int record_one(const struct rec_opts *o, const struct rf_input *in)
{
	struct rec_out *w = calloc(1, sizeof(*w));
	struct blk_reader *r = NULL;
	struct blk_event ev;
	const char *why = NULL;
	int ret = -1, rc = 0, werr = 0;

	if (!w)
		die("out of memory");
	w->o = o;
	w->dev = in->dev;
	w->cpu = in->cpu;
	if (asprintf(&w->path, "%s/%s.%s.%d", o->odir, in->dev, o->base, in->cpu) < 0)
		die("out of memory");
	r = blk_reader_open(in->path);
	if (!r) {
		error("cannot open '%s': %s", in->path, strerror(errno));
		goto out;
	}
	w->f = fopen(w->path, "we");
	if (!w->f) {
		error("cannot create '%s': %s", w->path, strerror(errno));
		goto out;
	}
	if (o->verbose) {
		char *rp;

		if (asprintf(&rp, "%s.rec", w->path) < 0)
			die("out of memory");
		w->rec = fopen(rp, "we");
		if (!w->rec)
			error("cannot create '%s': %s", rp, strerror(errno));
		free(rp);
		if (!w->rec)
			goto out;
	}
	w->hdr.version = RF_VERSION;
	show_hdr(w);
	werr = out_write(w, &w->hdr, sizeof(w->hdr));
	while (!werr && (rc = blk_reader_next(r, &ev)) > 0) {
		if (!is_queue(&ev))
			continue;
		werr = add_io(w, &ev);
		if (werr == -2) {
			error("'%s': time goes backwards at offset %llu (%llu after %llu)",
			      in->path, (unsigned long long)ev.offset, (unsigned long long)ev.time,
			      (unsigned long long)w->last_time);
			why = "the trace is damaged or was not written per CPU";
			werr = 0;
			rc = -EINVAL;
			break;
		}
	}
	if (rc < 0 && !why) {
		error("%s", blk_reader_error(r));
		why = "the trace is damaged";
	}
	if (!werr)
		werr = flush_bunch(w);
	/* the header counts leave out the last bunch, as the classic btrecord's do */
	if (w->nbunches) {
		w->hdr.nbunches = w->nbunches - 1;
		w->hdr.npkts = w->npkts - w->last_npkts;
	}
	if (!werr && fseeko(w->f, 0, SEEK_SET))
		werr = -1;
	if (!werr)
		werr = out_write(w, &w->hdr, sizeof(w->hdr));
	show_hdr(w);
	if (!werr && fflush(w->f))
		werr = -1;
	if (werr) {
		error("cannot write '%s': %s", w->path, strerror(errno));
		goto out;
	}
	if (w->rec && (fflush(w->rec) || ferror(w->rec))) {
		error("cannot write '%s.rec': %s", w->path, strerror(errno));
		goto out;
	}
	if (o->verbose && w->nbunches)
		fprintf(stderr,
			"%s:%d: %llu pkts (tot), %llu pkts (replay), %llu bunches, %.1f pkts/bunch\n",
			in->dev, in->cpu, (unsigned long long)blk_reader_records(r),
			(unsigned long long)w->npkts, (unsigned long long)w->nbunches,
			(double)w->npkts / (double)w->nbunches);
	if (why) {
		hint("%s; '%s' holds the %llu I/Os queued before that point", why, w->path,
		     (unsigned long long)w->npkts);
		goto out;
	}
	ret = 0;
out:
	if (w->f && fclose(w->f) && !ret) {
		error("cannot write '%s': %s", w->path, strerror(errno));
		ret = -1;
	}
	if (w->rec)
		fclose(w->rec);
	blk_reader_close(r);
	free(w->path);
	free(w);
	return ret;
}

int main(int argc, char **argv)
{
	struct rec_opts o = {.idir = ".",
			     .odir = ".",
			     .base = "replay",
			     .bunch_ns = DEF_BUNCH_NS,
			     .max_pkts = DEF_MAX_PKTS};
	struct rf_list inputs = RF_LIST_INIT;
	int failed = 0;

	set_progname(argv[0]);
	install_log_hook();
	parse_args(argc, argv, &o);
	check_dir(o.idir, "input directory");
	check_dir(o.odir, "output directory");
	find_inputs(&o, &inputs);
	for (size_t i = 0; i < inputs.n; i++)
		failed |= record_one(&o, &inputs.v[i]) < 0;
	rf_list_release(&inputs);
	return failed ? 1 : 0;
}
