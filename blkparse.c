// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse: merge block traces by time and print them, with the classic output.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "parse-run.h"
#include "blk/event.h"
#include "blk/format.h"

#define BLKPARSE_VERSION "1.2.0"

/*
 * Interrupts (SIGINT, SIGTERM, SIGHUP), as the classic tool catches them. Files stop being
 * read at the first one. A pipe is read on to its end: the tracer stopped by the same Ctrl-C
 * drains its buffers and then closes its output. The interrupt that cuts a pipe short (the
 * second one) replaces its descriptor by /dev/null, so that a read waiting there ends as the
 * input does and the sorter then prints everything read, with the summary. The library sees
 * nothing of this.
 */
static volatile sig_atomic_t interrupts;
static volatile sig_atomic_t cut_at = 1; /* interrupts that cut the input being read */
static volatile sig_atomic_t cut_fd = -1; /* that input's descriptor, or -1 */
static volatile sig_atomic_t null_fd = -1;
static volatile sig_atomic_t cut_done;

static void cut_input(void)
{
	if (cut_fd < 0 || cut_done)
		return;
	if (null_fd >= 0 && dup2(null_fd, cut_fd) >= 0)
		cut_done = 1;
}

static void on_interrupt(int sig)
{
	int e = errno;

	if (interrupts < 2)
		interrupts++;
	if (interrupts >= cut_at) {
		cut_input();
		if (!cut_done && cut_fd >= 0) {
			/* no /dev/null to read: end as if the interrupt was not caught */
			signal(sig, SIG_DFL);
			raise(sig);
		}
	}
	errno = e;
}

static void catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	/* reads and writes resume after the handler: stdio and the outputs see no EINTR */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int count_interrupts(void *ctx)
{
	(void)ctx;
	return interrupts;
}

static void watch_input(void *ctx, int fd, int at)
{
	(void)ctx;
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cut_at = at;
	cut_fd = fd;
	if (interrupts >= cut_at)
		cut_input();
}

static int unwatch_input(void *ctx)
{
	(void)ctx;
	cut_fd = -1;
	if (null_fd >= 0)
		close(null_fd);
	null_fd = -1;
	return cut_done;
}

static const struct option long_opts[] = {
	{"act-mask", required_argument, NULL, 'a'},
	{"set-mask", required_argument, NULL, 'A'},
	{"batch", required_argument, NULL, 'b'},
	{"input-directory", required_argument, NULL, 'D'},
	{"dump-binary", required_argument, NULL, 'd'},
	{"format", required_argument, NULL, 'f'},
	{"format-spec", required_argument, NULL, 'F'},
	{"hash-by-name", no_argument, NULL, 'h'},
	{"input", required_argument, NULL, 'i'},
	{"no-msgs", no_argument, NULL, 'M'},
	{"output", required_argument, NULL, 'o'},
	{"no-text-output", no_argument, NULL, 'O'},
	{"quiet", no_argument, NULL, 'q'},
	{"per-program-stats", no_argument, NULL, 's'},
	{"sort-program-stats", required_argument, NULL, 'S'},
	{"track-ios", no_argument, NULL, 't'},
	{"stopwatch", required_argument, NULL, 'w'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"cgroup", no_argument, NULL, 1000},
	{"cgroup-msgs", no_argument, NULL, 1000},
	{"iowait", no_argument, NULL, 1002},
	{"help", no_argument, NULL, 1001},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: blkparse [options] -i <input> [-i <input> ...]\n\n"
		"  -i, --input=NAME            trace NAME.blktrace.N files, a merged trace file, or '-' (stdin)\n"
		"  -D, --input-directory=DIR   directory prepended to input names\n"
		"  -a, --act-mask=ACTION       only show this category (repeatable): read write flush sync\n"
		"                              queue requeue issue complete fs pc notify ahead meta discard\n"
		"                              drv_data fua\n"
		"  -A, --set-mask=HEX          set the category mask (1..FFFF)\n"
		"  -b, --batch=N               records read ahead per input (default 512)\n"
		"  -d, --dump-binary=FILE      write the merged binary trace ('-' = stdout; .gz = gzip)\n"
		"  -M, --no-msgs               leave message records out of the -d dump\n"
		"  -f, --format=FMT            output format for every action\n"
		"  -F, --format-spec=X,FMT     output format for action X\n"
		"  -h, --hash-by-name          per-program statistics by name instead of PID\n"
		"  -o, --output=FILE           text output file (default stdout)\n"
		"  -O, --no-text-output        no text output (and no statistics)\n"
		"  -q, --quiet                 no per-device/CPU summary\n"
		"  -s, --per-program-stats     per-program statistics\n"
		"  -S, --sort-program-stats=K  sort them by N Q q R r W w C c (implies -s)\n"
		"  -t, --track-ios             per-request elapsed times\n"
		"  -w, --stopwatch=[START:]END only records between START and END seconds\n"
		"  -v, --verbose               more diagnostics\n"
		"  -V, --version               print the version\n"
		"      --cgroup                decode cgroup-tagged records as blkparse 1.3.0 does (1.2.0\n"
		"                              hides cgroup-tagged messages and rejects tagged events)\n"
		"      --iowait                print the I/O wait notes (blktrace --iowait) as lines of\n"
		"                              their own\n"
		"      --help                  this text\n");
}

static uint64_t secs_to_ns(const char *s, const char *opt)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0)
		die("option '%s': invalid time '%s' (seconds, e.g. 1.5)", opt, s);
	return (uint64_t)(v * 1e9);
}

static void parse_args(int argc, char **argv, struct parse_opts *o)
{
	int c, mask_set = 0;
	char err[256];

	while ((c = getopt_long(argc, argv, "a:A:b:D:d:f:F:hi:o:OqsS:tw:vVM", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'a': {
			int m = blk_category_from_name(optarg);

			if (m < 0) {
				error("Invalid action mask %s", optarg);
				hint("known: %s", blk_category_names);
				exit(1);
			}
			if (!mask_set)
				o->act_mask = 0;
			mask_set = 1;
			o->act_mask |= (uint32_t)m;
			break;
		}
		case 'A': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 16);

			if (end == optarg || *end || v < 1 || v > 0xffff)
				die("Invalid set action mask %s/0x%lx (a hex mask 1..FFFF)", optarg,
				    v);
			o->act_mask = (uint32_t)v;
			mask_set = 1;
			break;
		}
		case 'b': {
			long v = atol(optarg);

			o->batch = v > 0 ? (unsigned int)(v > 1000000 ? 1000000 : v) : 512;
			break;
		}
		case 'D':
			o->input_dir = optarg;
			break;
		case 'd':
			o->dump = optarg;
			break;
		case 'f': {
			struct blk_format *f = blk_format_compile(optarg, err, sizeof(err));

			o->args[o->nargs++] = (struct parse_arg){'f', optarg};
			if (!f)
				die("option '-f': %s", err);
			for (const char *p = "ABCDFGIMPQRSTUWX"; *p; p++) {
				if (!o->fmt[(unsigned char)*p])
					o->fmt[(unsigned char)*p] =
						blk_format_compile(optarg, err, sizeof(err));
			}
			blk_format_free(f);
			break;
		}
		case 'F': {
			unsigned char k = (unsigned char)optarg[0];
			struct blk_format *f;

			if (!k || !strchr("ABCDFGIMPQRSTUWX", k))
				die("Bad format specifier %c (option '-F' takes X,FORMAT with X one of ABCDFGIMPQRSTUWX)",
				    k ? k : ' ');
			if (optarg[1] != ',')
				die("Bad format specifier - need ',' %s", optarg);
			f = blk_format_compile(optarg + 2, err, sizeof(err));
			if (!f)
				die("option '-F': %s", err);
			blk_format_free(o->fmt[k]);
			o->fmt[k] = f;
			o->args[o->nargs++] = (struct parse_arg){'F', optarg};
			break;
		}
		case 'h':
			o->hash_by_name = 1;
			break;
		case 'i':
			o->args[o->nargs++] = (struct parse_arg){'i', optarg};
			o->inputs[o->ninputs++] = optarg;
			break;
		case 'M':
			o->dump_msgs = 0;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'O':
			o->text = 0;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 's':
			o->per_process = 1;
			break;
		case 'S':
			if (!optarg[0] || optarg[1] || !strchr("NQqRrWwCc", optarg[0]))
				die("option '-S': unknown sort key '%s' (one of N Q q R r W w C c)",
				    optarg);
			o->sort_key = optarg[0];
			o->per_process = 1;
			break;
		case 't':
			o->track = 1;
			break;
		case 'w': {
			char *copy = strdup(optarg), *colon;

			if (!copy)
				die("out of memory");
			colon = strchr(copy, ':');
			if (colon) {
				*colon = '\0';
				o->stop_start = copy[0] ? secs_to_ns(copy, "-w") : 0;
				o->stop_end = secs_to_ns(colon + 1, "-w");
			} else {
				o->stop_end = secs_to_ns(copy, "-w");
			}
			free(copy);
			if (o->stop_end <= o->stop_start)
				die("Invalid stopwatch value (%s): the end must be after the start",
				    optarg);
			break;
		}
		case 'v':
			o->verbose++;
			break;
		case 'V':
			print_version("%s version %s", progname(), BLKPARSE_VERSION);
			exit(0);
		case 1000:
			o->show_cgroup = 1;
			break;
		case 1001:
			usage(stdout);
			exit(0);
		case 1002:
			o->iowait = 1;
			break;
		default:
			usage(stderr);
			exit(1);
		}
	}
	while (optind < argc) {
		o->args[o->nargs++] = (struct parse_arg){'i', argv[optind]};
		o->inputs[o->ninputs++] = argv[optind++];
	}
	if (!o->ninputs) {
		usage(stderr);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct parse_opts o = {0};
	struct parse_env env = {stdout, count_interrupts, watch_input, unwatch_input, NULL};
	int ret;

	set_progname(argv[0]);
	install_log_hook();
	setlocale(LC_NUMERIC, "en_US");
	o.inputs = calloc((size_t)argc + 1, sizeof(*o.inputs));
	o.args = calloc((size_t)argc + 1, sizeof(*o.args));
	if (!o.inputs || !o.args)
		die("out of memory");
	o.act_mask = 0xffff;
	o.batch = 512;
	o.dump_msgs = 1;
	o.text = 1;
	o.stop_end = UINT64_MAX;
	parse_args(argc, argv, &o);
	catch_interrupts();
	ret = parse_run(&o, &env);
	for (int i = 0; i < 256; i++)
		blk_format_free(o.fmt[i]);
	free(o.inputs);
	free(o.args);
	return ret;
}
