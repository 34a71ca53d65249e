// SPDX-License-Identifier: GPL-2.0
/*
 * blkrawverify: check the per-CPU files blktrace wrote for a device, record by record.
 *
 * For DEV it reads DEV.blktrace.0, DEV.blktrace.1, ... until a file is missing. Each record
 * must decode (the reader checks magic, version and that the payload is there), carry the
 * CPU number of its file, and, notes aside, have a higher sequence number and a later time
 * than the last good record of the file, and the same device. stdout gets one line per CPU
 * file; the details of every bad record and a summary per CPU go to DEV.verify.out, laid out
 * as blkrawverify 1.2.0 lays them out.
 *
 * Where the classic tool reads on after damaged bytes as if a bare 48-byte header had been
 * there, we search for the next offset at which the reader decodes records again, resume
 * there, and say which bytes were skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "blk/event.h"
#include "blk/reader.h"
#include "resync.h"

/* Counts for one CPU file. */
struct rv_counts {
	unsigned int good, bad;
	unsigned int cpu, seq, dev, time, damaged;
};

/* What is being checked: one CPU file of one device. */
struct rv_file {
	const char *path;
	unsigned int cpu;
	FILE *out; /* DEV.verify.out, or NULL if it could not be created */
	struct blk_reader *r;
	uint64_t base; /* file offset the reader started at */
	uint64_t next_off; /* file offset of the record after the last one read */
	/* the last record the current reader returned: file offset, header and payload size */
	int have_last;
	uint64_t last_off;
	size_t last_hdr;
	unsigned int last_pdu;
	struct rv_counts n;
	int have_prev; /* prev: the last record given a verdict ("seq-1") */
	struct blk_event prev;
	int have_good; /* the last good record's sequence, time and device */
	uint32_t seq;
	uint64_t time;
	uint32_t device;
	int failed; /* an error that is not a finding about the data */
};

static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: blkrawverify DEV [DEV...]\n\n"
		   "Check the trace files DEV.blktrace.0, DEV.blktrace.1, ... record by record.\n"
		   "One line per CPU file goes to stdout, the details to DEV.verify.out.\n"
		   "Exit status 1 if a record is bad or a file cannot be read.\n\n"
		   "  -h, --help    this text\n"
		   "  -V, --version print the version\n");
}

static void parse_args(int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			/* the classic tool has no version option */
			print_version("%s", "blkrawverify");
			exit(0);
		default:
			if (optopt)
				error("unknown option '-%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			exit(2);
		}
	}
	if (optind == argc) {
		error("no device given");
		usage(stderr);
		exit(2);
	}
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	return s;
}

/* ---- the details file ---- */

static const char *const ta_names[] = {
	[BLK_TA_QUEUE] = "QUEUE",
	[BLK_TA_BACKMERGE] = "BACKMERGE",
	[BLK_TA_FRONTMERGE] = "FRONTMERGE",
	[BLK_TA_GETRQ] = "GETRQ",
	[BLK_TA_SLEEPRQ] = "SLEEPRQ",
	[BLK_TA_REQUEUE] = "REQUEUE",
	[BLK_TA_ISSUE] = "ISSUE",
	[BLK_TA_COMPLETE] = "COMPLETE",
	[BLK_TA_PLUG] = "PLUG",
	[BLK_TA_UNPLUG_IO] = "UNPLUG_IO",
	[BLK_TA_UNPLUG_TIMER] = "UNPLUG_TIMER",
	[BLK_TA_INSERT] = "INSERT",
	[BLK_TA_SPLIT] = "SPLIT",
	[BLK_TA_BOUNCE] = "BOUNCE",
	[BLK_TA_REMAP] = "REMAP",
	[BLK_TA_ABORT] = "ABORT",
	[BLK_TA_DRV_DATA] = "DRV_DATA",
	[BLK_TA_ZONE_PLUG] = "ZONE_PLUG",
	[BLK_TA_ZONE_UNPLUG] = "ZONE_UNPLUG",
};

static const char *const tn_names[] = {
	[BLK_TN_PROCESS] = "PROCESS",
	[BLK_TN_TIMESTAMP] = "TIMESTAMP",
	[BLK_TN_MESSAGE] = "MESSAGE",
};

/* "__BLK_TA_ISSUE | BLK_TC_WRITE | BLK_TC_FS ": the action code, then each category bit. */
static void print_action(FILE *out, const struct blk_event *ev)
{
	uint32_t action = blk_event_action32(ev);
	unsigned int code = action & 0xffff & ~BLK_TA_CGROUP;
	const char *name = NULL;
	const char *w = blk_category_names;

	if (blk_event_is_notify(ev)) {
		if (code < sizeof(tn_names) / sizeof(tn_names[0]))
			name = tn_names[code];
	} else if (code < sizeof(ta_names) / sizeof(ta_names[0])) {
		name = ta_names[code];
	}
	if (!name) {
		fprintf(out, "Invalid action=%08x", action);
		return;
	}
	fprintf(out, "__BLK_%s_%s ", blk_event_is_notify(ev) ? "TN" : "TA", name);
	if (action & BLK_TA_CGROUP)
		fputs("| BLK_TA_CGROUP ", out);
	/* the library's category names are listed in bit order */
	while (*w) {
		size_t len = strcspn(w, " ");
		char word[32];
		int bit;

		if (len < sizeof(word)) {
			memcpy(word, w, len);
			word[len] = '\0';
			bit = blk_category_from_name(word);
			if (bit > 0 && (action & BLK_TC_ACT((uint32_t)bit))) {
				fputs("| BLK_TC_", out);
				for (size_t i = 0; i < len; i++)
					fputc(toupper((unsigned char)word[i]), out);
				fputc(' ', out);
			}
		}
		w += len;
		w += strspn(w, " ");
	}
}

static void dump_event(FILE *out, const char *what, const struct blk_event *ev)
{
	fprintf(out, "    Dump %s\n", what);
	fprintf(out, "        %8s: %08x\n", "magic", BLK_IO_TRACE_MAGIC | ev->version);
	fprintf(out, "        %8s: %u\n", "sequence", ev->sequence);
	fprintf(out, "        %8s: %" PRIu64 "\n", "time", ev->time);
	fprintf(out, "        %8s: %" PRIu64 "\n", "sector", ev->sector);
	fprintf(out, "        %8s: %u\n", "bytes", ev->bytes);
	fprintf(out, "        %8s: ", "action");
	print_action(out, ev);
	fputc('\n', out);
	/* 1.2.0 prints "bytes" a second time here; the pid is what belongs in this slot */
	fprintf(out, "        %8s: %u\n", "pid", ev->pid);
	fprintf(out, "        %8s: %u\n", "cpu", ev->cpu);
	fprintf(out, "        %8s: %u\n", "error", ev->error);
	fprintf(out, "        %8s: %u\n", "pdu_len", ev->pdu_len);
	fprintf(out, "        %8s: (%u,%u)\n\n", "device", BLK_MAJOR(ev->device),
		BLK_MINOR(ev->device));
}

static void begin_finding(struct rv_file *f)
{
	f->n.bad++;
	if (!f->out)
		return;
	fputs("    ----------------\n", f->out);
	if (f->have_prev)
		dump_event(f->out, "seq-1", &f->prev);
}

static void remember(struct rv_file *f, const struct blk_event *ev)
{
	f->prev = *ev;
	f->prev.pdu = NULL; /* borrowed from the reader; never printed */
	f->have_prev = 1;
}

static void bad_record(struct rv_file *f, const char *what, const struct blk_event *ev,
		       unsigned int *counter)
{
	begin_finding(f);
	if (f->out)
		dump_event(f->out, what, ev);
	remember(f, ev);
	(*counter)++;
}

static void print_summary(FILE *out, unsigned int cpu, const struct rv_counts *n)
{
	/* float, then double: the percentage rounds as the classic tool's does */
	double pct = n->good ? 100.0 * (float)n->good / (float)(n->good + n->bad) : 0.0;

	fputs("    ---------------------\n", out);
	fprintf(out, "    Summary for cpu %u:\n", cpu);
	fprintf(out, "    %10u valid + %10u invalid (%5.1f%%) processed\n\n", n->good, n->bad, pct);
	if (!n->bad)
		return;
	if (n->cpu)
		fprintf(out, "         %u cpu\n", n->cpu);
	if (n->seq)
		fprintf(out, "         %u seq\n", n->seq);
	if (n->dev)
		fprintf(out, "         %u dev\n", n->dev);
	if (n->time)
		fprintf(out, "         %u time\n", n->time);
	if (n->damaged)
		fprintf(out, "         %u damaged\n", n->damaged);
	fputc('\n', out);
}

/* ---- checks ---- */

static void check_event(struct rv_file *f, const struct blk_event *ev)
{
	if (ev->cpu != f->cpu) {
		bad_record(f, "bad cpu", ev, &f->n.cpu);
		return;
	}
	/* notes carry no sequence number and may be written out of time order */
	if (blk_event_is_notify(ev))
		return;
	if (f->have_good) {
		if (ev->sequence <= f->seq) {
			bad_record(f, "bad seq", ev, &f->n.seq);
			return;
		}
		if (ev->time <= f->time) {
			bad_record(f, "time regression", ev, &f->n.time);
			return;
		}
		if (ev->device != f->device) {
			bad_record(f, "bad dev", ev, &f->n.dev);
			return;
		}
	}
	f->have_good = 1;
	f->seq = ev->sequence;
	f->time = ev->time;
	f->device = ev->device;
	f->n.good++;
	remember(f, ev);
}

/* Past this many damaged places in one file, the rest of it is not searched. */
#define RV_MAX_DAMAGE 1000

/*
 * The reader stopped on damage at f->next_off. Record it, then look for the place where
 * records start again. When the last record claims a payload, that pdu_len may be what is
 * wrong, so the search starts just after the last record's header.
 * Return: 1 to go on reading there, 0 to stop.
 */
static int damaged(struct rv_file *f)
{
	char msg[1024];
	uint64_t at = f->next_off, from = at + 1;
	int64_t resume = -1;
	int compressed = blk_reader_compressed(f->r);
	struct stat st;

	resync_abs_offsets(blk_reader_error(f->r), f->base, f->path, msg, sizeof(msg));
	if (!f->n.damaged)
		error("%s", msg);
	f->n.damaged++;
	begin_finding(f);
	if (f->have_last && f->last_pdu)
		from = f->last_off + f->last_hdr;
	if (!compressed && f->n.damaged <= RV_MAX_DAMAGE)
		resume = resync_find(f->path, from);
	if (f->out) {
		FILE *o = f->out;

		fprintf(o, "    Damaged data at offset %" PRIu64 "\n", at);
		fprintf(o, "        %s\n", msg);
		if (resume >= 0 && (uint64_t)resume < at)
			fprintf(o,
				"        records start again at offset %" PRId64
				", inside the %u-byte payload the record at offset %" PRIu64
				" claims\n\n",
				resume, f->last_pdu, f->last_off);
		else if (resume >= 0)
			fprintf(o,
				"        records start again at offset %" PRId64 " (%" PRIu64
				" byte%s skipped)\n\n",
				resume, (uint64_t)resume - at,
				resume - (int64_t)at == 1 ? "" : "s");
		else if (compressed)
			fputs("        the rest of the compressed file is not checked\n\n", o);
		else if (f->n.damaged > RV_MAX_DAMAGE)
			fprintf(o,
				"        more than %d damaged places: the rest of the file is not checked\n\n",
				RV_MAX_DAMAGE);
		else if (stat(f->path, &st) == 0 && (uint64_t)st.st_size > at)
			fprintf(o, "        no record follows in the last %" PRIu64 " bytes\n\n",
				(uint64_t)st.st_size - at);
		else
			fputs("        no record follows\n\n", o);
	}
	blk_reader_close(f->r);
	f->r = NULL;
	if (resume < 0)
		return 0;
	f->r = resync_open_at(f->path, (uint64_t)resume);
	if (!f->r) {
		error("cannot open '%s': %s", f->path, strerror(errno));
		f->failed = 1;
		return 0;
	}
	f->base = (uint64_t)resume;
	f->next_off = f->base;
	f->have_last = 0;
	return 1;
}

static void check_file(struct rv_file *f)
{
	struct blk_event ev;
	int ret;

	for (;;) {
		ret = blk_reader_next(f->r, &ev);
		if (ret == 1) {
			f->have_last = 1;
			f->last_off = f->base + ev.offset;
			f->last_hdr = blk_event_record_len(&ev) - ev.pdu_len;
			f->last_pdu = ev.pdu_len;
			f->next_off = f->last_off + blk_event_record_len(&ev);
			check_event(f, &ev);
			continue;
		}
		if (ret == 0)
			break;
		if (!resync_is_damage(ret)) {
			char msg[1024];

			resync_abs_offsets(blk_reader_error(f->r), f->base, f->path, msg,
					   sizeof(msg));
			error("%s", msg);
			f->failed = 1;
			break;
		}
		if (!damaged(f))
			break;
	}
	blk_reader_close(f->r);
	f->r = NULL;
}

/* ---- one device ---- */

struct rv_dev {
	const char *name;
	char *out_path;
	FILE *out;
	int out_failed; /* could not create or write DEV.verify.out */
	int problems;
};

/* DEV.verify.out is created when the first CPU file opens, as the classic tool does it. */
static void open_details(struct rv_dev *d)
{
	if (d->out || d->out_failed)
		return;
	d->out = fopen(d->out_path, "w");
	if (!d->out) {
		error("cannot create '%s': %s", d->out_path, strerror(errno));
		d->out_failed = 1;
		d->problems = 1;
		return;
	}
	fprintf(d->out, "\n---------------\nVerifying %s\n", d->name);
}

/* Check CPU file @cpu. Return: 1 if it was there, 0 if the device has no more CPU files. */
static int verify_cpu(struct rv_dev *d, unsigned int cpu)
{
	struct rv_file f = {0};
	struct stat st;
	char *path;

	path = xasprintf("%s.blktrace.%u", d->name, cpu);
	if (stat(path, &st) < 0) {
		if (errno != ENOENT) {
			error("cannot access '%s': %s", path, strerror(errno));
			d->problems = 1;
		} else if (cpu == 0) {
			error("no trace files found for '%s' (no '%s')", d->name, path);
			d->problems = 1;
		}
		free(path);
		return 0;
	}
	printf("    CPU %u ", cpu);
	fflush(stdout);
	f.path = path;
	f.cpu = cpu;
	f.r = blk_reader_open(path);
	if (!f.r) {
		error("cannot open '%s': %s", path, strerror(errno));
		d->problems = 1;
		goto out;
	}
	open_details(d);
	f.out = d->out;
	check_file(&f);
	if (f.out)
		print_summary(f.out, cpu, &f.n);
	if (f.n.bad) {
		printf("-- %u bad", f.n.bad);
		d->problems = 1;
	}
	if (f.failed)
		d->problems = 1;
out:
	putchar('\n');
	fflush(stdout);
	free(path);
	return 1;
}

static int verify_device(const char *name)
{
	struct rv_dev d = {.name = name};
	unsigned int cpu;

	d.out_path = xasprintf("%s.verify.out", name);
	printf("Verifying %s\n", name);
	fflush(stdout);
	for (cpu = 0; verify_cpu(&d, cpu); cpu++)
		;
	if (d.out) {
		int bad = ferror(d.out);

		if (fclose(d.out) || bad) {
			error("cannot write '%s': %s", d.out_path, strerror(bad ? EIO : errno));
			d.problems = 1;
		} else {
			printf("Wrote output to %s\n", d.out_path);
		}
	}
	free(d.out_path);
	return d.problems;
}

int main(int argc, char **argv)
{
	int ret = 0;

	set_progname(argv[0]);
	parse_args(argc, argv);
	for (int i = optind; i < argc; i++)
		if (verify_device(argv[i]))
			ret = 1;
	if (fflush(stdout) || ferror(stdout))
		die("cannot write to stdout: %s", strerror(errno));
	return ret;
}
