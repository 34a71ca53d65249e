// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace: write a synthetic, deterministic per-CPU block trace.
 *
 * The generator simulates a few processes doing I/O to one or more disks and writes what
 * blktrace would have recorded: per-CPU files NAME.blktrace.CPU (NAMEk per device when there
 * are several), or one chunk-interleaved stream on stdout with --pipe.
 *
 * This file holds the options and main(); the simulation is in gentrace-src/ (gen.h says
 * which module holds what).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gentrace-src/gen.h"

#define MAX_CPUS 256
#define MAX_DEVS 64
#define MAX_STREAMS 1024

/* ---- options ---- */

static const struct option long_opts[] = {
	{ "events", required_argument, NULL, 'n' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "devices", required_argument, NULL, 'd' },
	{ "seed", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "directory", required_argument, NULL, 'D' },
	{ "big-endian", no_argument, NULL, 'B' },
	{ "v2", no_argument, NULL, '2' },
	{ "pipe", no_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"Usage: gentrace [options]\n"
	"\n"
	"  -n, --events=N      records to write in all, notify records included (default 100000)\n"
	"  -c, --cpus=N        per-CPU files per device, 1..256 (default 2)\n"
	"  -d, --devices=N     traced disks, 1..64; names get the device index when N > 1\n"
	"  -s, --seed=N        random seed; the same seed gives the same bytes (default 1)\n"
	"  -o, --output=NAME   write NAME.blktrace.CPU (default 'gentrace')\n"
	"  -D, --directory=DIR directory for relative NAMEs (created if missing)\n"
	"      --big-endian    write big-endian records whatever the host order\n"
	"      --v2            write version-8 (struct blk_io_trace2) records\n"
	"      --pipe          write one stream to stdout, CPUs interleaved in chunks\n"
	"  -h, --help          this text\n";

static __attribute__((format(printf, 1, 2), noreturn)) void usage_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gentrace: %s\nhint: see 'gentrace --help'\n", buf);
	exit(2);
}

static uint64_t parse_num(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		usage_error("option '%s': invalid value '%s' (expected %llu..%llu)", opt, arg,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_args(int argc, char **argv, struct gen_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "n:c:d:s:o:D:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->events = parse_num("--events", optarg, 0, UINT64_MAX);
			break;
		case 'c':
			o->cpus = (unsigned int)parse_num("--cpus", optarg, 1, MAX_CPUS);
			break;
		case 'd':
			o->devices = (unsigned int)parse_num("--devices", optarg, 1, MAX_DEVS);
			break;
		case 's':
			o->seed = parse_num("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'o':
			if (!*optarg)
				usage_error("option '--output': empty name");
			o->name = optarg;
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'B':
			o->big_endian = 1;
			break;
		case '2':
			o->v2 = 1;
			break;
		case 'p':
			o->pipe = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			fputs(usage_text, stderr);
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->cpus * o->devices > MAX_STREAMS)
		usage_error("too many files: '--cpus' times '--devices' is over %d", MAX_STREAMS);
}

int main(int argc, char **argv)
{
	struct gen_opts o = { .events = 100000, .seed = 1, .cpus = 2, .devices = 1,
			      .name = "gentrace" };
	struct gen g;
	int ret;

	parse_args(argc, argv, &o);
	memset(&g, 0, sizeof(g));
	g.o = &o;
	g.r.s = o.seed;
	/* Default is host order; --big-endian only swaps on little-endian hosts. */
	g.swap = o.big_endian && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	g.devs = calloc(o.devices, sizeof(*g.devs));
	g.streams = calloc((size_t)o.devices * o.cpus, sizeof(*g.streams));
	g.heap = calloc((size_t)o.devices * QDEPTH + 1, sizeof(*g.heap));
	if (!g.devs || !g.streams || !g.heap)
		die("out of memory");
	streams_open(&g);
	if (!o.events)
		g.done = 1;
	gen_run(&g);
	if (o.pipe)
		rec_pipe_round(&g);
	ret = streams_close(&g);
	free(g.heap);
	free(g.streams);
	free(g.devs);
	return ret ? 1 : 0;
}
