// SPDX-License-Identifier: GPL-2.0
/*
 * blkiomon: periodic statistics of request sizes and D2C latencies from a binary trace
 * stream on standard input, as the classic tool prints them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "mon-run.h"
#include "blk/output.h"
#include "blk/reader.h"

#define BLKIOMON_VERSION "0.3"

static FILE *open_text(const char *name)
{
	FILE *f;

	if (!strcmp(name, "-"))
		return stdout;
	f = fopen(name, "w");
	if (!f)
		die("cannot create '%s': %s", name, strerror(errno));
	return f;
}

static const struct option long_opts[] = {
	{"interval", required_argument, NULL, 'I'},
	{"human-readable", required_argument, NULL, 'h'},
	{"binary", required_argument, NULL, 'b'},
	{"dump-lldd", required_argument, NULL, 'd'},
	{"debug", required_argument, NULL, 'D'},
	{"msg-queue", required_argument, NULL, 'Q'},
	{"msg-queue-id", required_argument, NULL, 'q'},
	{"msg-id", required_argument, NULL, 'm'},
	{"version", no_argument, NULL, 'V'},
	{"trace-time", no_argument, NULL, 1000},
	{"csv", required_argument, NULL, 1001},
	{"percentiles", no_argument, NULL, 1002},
	{"help", no_argument, NULL, 1003},
	{"exact-throughput", no_argument, NULL, 1004},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: blkiomon -I SECS [options] < binary-trace-stream\n"
		"  e.g. blktrace -d DEV -a issue -a complete -o - | blkiomon -I 10 -h -\n\n"
		"  -I, --interval=SECS        report every SECS seconds (required)\n"
		"  -h, --human-readable=FILE  text report ('-' = stdout)\n"
		"  -b, --binary=FILE          binary records (big-endian, 424 bytes each)\n"
		"  -d, --dump-lldd=FILE       copy of every driver-data record\n"
		"  -D, --debug=FILE           unmatched records and final counts\n"
		"  -Q, --msg-queue=PATH       System V message queue key path\n"
		"  -q, --msg-queue-id=N       its project id\n"
		"  -m, --msg-id=N             message type\n"
		"      --trace-time           cut intervals by trace time, not wall clock: a recorded\n"
		"                             file gives the same report every run (last interval too)\n"
		"      --csv=FILE             one CSV line per device and interval\n"
		"      --percentiles          add p50/p99/p99.9 of D2C to the text report\n"
		"      --exact-throughput     throughput of requests over 4 MiB without the classic\n"
		"                             tool's 32-bit overflow (text and -b records change)\n"
		"  -V, --version              print the version\n");
}

int main(int argc, char **argv)
{
	struct mon_opts o = {.msg_id = 1};
	struct mon m = {.o = &o, .msq = -1};
	struct blk_reader *r;
	int c, ret;

	set_progname(argv[0]);
	install_log_hook();
	while ((c = getopt_long(argc, argv, "I:h:b:d:D:Q:q:m:V", long_opts, NULL)) != -1) {
		switch (c) {
		case 'I': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end || v <= 0)
				die("option '-I': invalid interval '%s' (whole seconds > 0)",
				    optarg);
			o.interval = (unsigned int)v;
			break;
		}
		case 'h':
			o.human = optarg;
			break;
		case 'b':
			o.binary = optarg;
			break;
		case 'd':
			o.lldd = optarg;
			break;
		case 'D':
			o.debug = optarg;
			break;
		case 'Q':
			o.msg_path = optarg;
			break;
		case 'q':
			o.msg_proj = atoi(optarg);
			if (!o.msg_proj)
				die("option '-q': the project id must not be 0");
			break;
		case 'm':
			o.msg_id = atol(optarg);
			if (o.msg_id <= 0)
				die("option '-m': the message type must be > 0");
			break;
		case 'V':
			print_version("%s version %s", progname(), BLKIOMON_VERSION);
			return 0;
		case 1000:
			o.trace_time = 1;
			break;
		case 1001:
			o.csv = optarg;
			break;
		case 1002:
			o.percentiles = 1;
			break;
		case 1003:
			usage(stdout);
			return 0;
		case 1004:
			o.exact_thrput = 1;
			break;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!o.interval) {
		error("no interval given");
		usage(stderr);
		return 1;
	}
	if (o.human)
		m.human = open_text(o.human);
	if (o.debug)
		m.debug = open_text(o.debug);
	if (o.csv) {
		m.csv = open_text(o.csv);
		fprintf(m.csv,
			"time,major,minor,reads,writes,read_bytes,write_bytes,d2c_read_avg_us,d2c_write_avg_us,d2c_p50_us,d2c_p99_us,d2c_p999_us,bidir\n");
	}
	if (o.binary && !(m.binary = blk_output_open(o.binary, 0)))
		die("cannot create '%s': %s", o.binary, strerror(errno));
	if (o.lldd && !(m.lldd = blk_output_open(o.lldd, 0)))
		die("cannot create '%s': %s", o.lldd, strerror(errno));
	if (o.msg_path) {
		key_t key = ftok(o.msg_path, o.msg_proj);

		if (key == -1)
			die("option '-Q': ftok('%s', %d): %s", o.msg_path, o.msg_proj,
			    strerror(errno));
		/* the classic tool waits until the consumer has created the queue */
		while ((m.msq = msgget(key, 0)) < 0)
			sleep(1);
	}
	r = blk_reader_open("-");
	if (!r)
		die("cannot read standard input: %s", strerror(errno));
	ret = mon_run(&m, r);
	if (m.human && m.human != stdout)
		fclose(m.human);
	if (m.debug && m.debug != stdout)
		fclose(m.debug);
	if (m.csv && m.csv != stdout)
		fclose(m.csv);
	if (m.binary && blk_output_close(m.binary))
		ret = -1;
	if (m.lldd && blk_output_close(m.lldd))
		ret = -1;
	blk_reader_close(r);
	return ret < 0 ? 1 : 0;
}
