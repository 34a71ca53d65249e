// SPDX-License-Identifier: GPL-2.0
/*
 * iowatcher: graphs (SVG, PNG, an HTML report, or a movie) of block I/O traces.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/strbuf.h"
#include "common.h"
#include "iowatcher.h"

enum { OPT_HELP = 256, OPT_HTML, OPT_MOVIE_LENGTH };

static const struct option long_opts[] = {
	{"trace", required_argument, NULL, 't'},
	{"fio-trace", required_argument, NULL, 'F'},
	{"label", required_argument, NULL, 'l'},
	{"title", required_argument, NULL, 'T'},
	{"output", required_argument, NULL, 'o'},
	{"only-graph", required_argument, NULL, 'O'},
	{"no-graph", required_argument, NULL, 'N'},
	{"device", required_argument, NULL, 'd'},
	{"blktrace-destination", required_argument, NULL, 'D'},
	{"prog", no_argument, NULL, 'p'},
	{"movie", optional_argument, NULL, 'm'},
	{"codec", required_argument, NULL, 'C'},
	{"keep-movie-svgs", no_argument, NULL, 'K'},
	{"movie-length", required_argument, NULL, OPT_MOVIE_LENGTH},
	{"rolling", required_argument, NULL, 'r'},
	{"height", required_argument, NULL, 'h'},
	{"width", required_argument, NULL, 'w'},
	{"columns", required_argument, NULL, 'c'},
	{"xzoom", required_argument, NULL, 'x'},
	{"yzoom", required_argument, NULL, 'y'},
	{"io-plot-action", required_argument, NULL, 'a'},
	{"per-process-io", no_argument, NULL, 'P'},
	{"html", required_argument, NULL, OPT_HTML},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static const char usage_text[] =
	"Usage: iowatcher [options] [--] [program args...]\n"
	"\n"
	"  -t, --trace=NAME            trace to plot (repeatable): a merged trace file (blkparse -d),\n"
	"                              NAME for per-CPU files NAME.blktrace.N, or NAME.dump\n"
	"  -F, --fio-trace=FILE        fio bandwidth log to plot (repeatable)\n"
	"  -l, --label=TEXT            legend label of the n-th trace (repeatable)\n"
	"  -T, --title=TEXT            title of the page\n"
	"  -o, --output=FILE           output: FILE.svg (default trace.svg), FILE.png (through\n"
	"                              rsvg-convert), or with -m the movie: FILE.mp4 (default\n"
	"                              trace.mp4), .mkv, .mov, .avi or .webm (through ffmpeg)\n"
	"      --html=FILE             also write a self-contained HTML report with summary tables\n"
	"  -O, --only-graph=NAME       draw only this graph (repeatable)\n"
	"  -N, --no-graph=NAME         do not draw this graph (repeatable)\n"
	"                              graphs: io tput fio cpu-sys cpu-io cpu-irq cpu-soft cpu-user\n"
	"                              latency latency-hist queue-depth iops\n"
	"  -d, --device=DEV            trace DEV with blktrace while running, then plot it\n"
	"  -D, --blktrace-destination=DIR  where the traces of -d go (default .)\n"
	"  -p, --prog                  run the program given after the options while tracing\n"
	"  -m, --movie[=rect|spindle]  make a movie of the I/O (ffmpeg)\n"
	"  -C, --codec=NAME            ffmpeg video codec (default libx264)\n"
	"  -K, --keep-movie-svgs       keep the frames of the movie\n"
	"      --movie-length=SECS     length of the movie, 20 frames a second (default 30)\n"
	"  -r, --rolling=SECS          rolling average window of the line graphs (default span/25)\n"
	"  -h, --height=PX             height of each graph (default 250)\n"
	"  -w, --width=PX              width of each graph (default 700)\n"
	"  -c, --columns=N             graphs per row (default 1)\n"
	"  -x, --xzoom=MIN:MAX         time range in seconds (either side optional)\n"
	"  -y, --yzoom=MIN:MAX         offset range of the I/O map in MiB (either side optional)\n"
	"  -a, --io-plot-action=Q|D|C  event plotted on the I/O map (default Q, then D, then C)\n"
	"  -P, --per-process-io        one colour per process on the I/O map\n"
	"  -V, --version               print the version\n"
	"      --help                  this text\n";

static void usage_error(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	error("%s", msg);
	fputs("hint: see 'iowatcher --help'\n", stderr);
	exit(2);
}

static double parse_num(const char *opt, const char *s, double min)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < min) {
		char buf[300];

		snprintf(buf, sizeof(buf), "option '%s': invalid value '%s'", opt, s);
		usage_error("%s", buf);
	}
	return v;
}

static void parse_range(const char *opt, const char *s, double *lo, double *hi)
{
	char buf[256], *colon;

	snprintf(buf, sizeof(buf), "%s", s);
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (buf[0])
		*lo = parse_num(opt, buf, 0);
	if (colon && colon[1])
		*hi = parse_num(opt, colon + 1, 0);
	if (*hi >= 0 && *lo >= 0 && *hi <= *lo)
		usage_error("option '%s': the range is empty", opt);
}

static struct iow_trace *new_trace(const char *arg)
{
	struct iow_trace *t = calloc(1, sizeof(*t));

	if (!t)
		die("out of memory");
	t->arg = arg;
	return t;
}

static void set_graph(struct iow_opts *o, const char *name, int on)
{
	int g = iow_graph_from_name(name);

	if (g < 0) {
		char buf[300];

		snprintf(buf, sizeof(buf), "unknown graph '%s'", name);
		usage_error("%s", buf);
	}
	if (on && !o->only_seen) {
		for (int i = 0; i < IOW_G_NR; i++)
			o->graphs[i] = 0;
		o->only_seen = 1;
	}
	o->graphs[g] = on;
}

static int ends_with(const char *s, const char *sfx)
{
	size_t a = strlen(s), b = strlen(sfx);

	return a >= b && !strcasecmp(s + a - b, sfx);
}

/* what ffmpeg writes a movie as, by the name's ending (the default codec is libx264) */
static const char *const movie_names[] = {".mp4", ".mkv", ".mov", ".avi", ".webm"};
#define NMOVIE (sizeof(movie_names) / sizeof(movie_names[0]))

/*
 * -o picks the format by its ending: .svg or .png for a picture, a video container with
 * -m. Anything else would be an SVG under a misleading name: a usage error.
 */
static void check_output(const struct iow_opts *o)
{
	const char *out = o->output, *also = "";
	int movie_name = 0, picture_name = ends_with(out, ".svg") || ends_with(out, ".png");

	for (size_t i = 0; i < NMOVIE; i++)
		movie_name |= ends_with(out, movie_names[i]);
	if (o->movie ? movie_name : picture_name)
		return;
	if (o->movie) {
		error("option '-o': unknown movie type '%s'", out);
		hint("with -m, name it FILE.mp4, .mkv, .mov, .avi or .webm (made by ffmpeg)%s",
		     picture_name ? "; for a picture leave out -m" : "");
		exit(2);
	}
	if (movie_name)
		also = "; a movie needs -m";
	else if (ends_with(out, ".html") || ends_with(out, ".htm"))
		also = "; an HTML report is --html=FILE";
	error("option '-o': unknown output type '%s'", out);
	hint("name it FILE.svg or FILE.png (made by rsvg-convert), or with -m FILE.mp4, .mkv, .mov, .avi or .webm%s",
	     also);
	exit(2);
}

static void parse_args(int argc, char **argv, struct iow_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "+t:F:l:T:o:O:N:d:D:pm::C:Kr:h:w:c:x:y:a:PV", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 't':
			if (o->ntraces == IOW_MAX_TRACES)
				usage_error("too many traces (at most %s)", "64");
			o->traces[o->ntraces++] = new_trace(optarg);
			break;
		case 'F': {
			struct iow_fio *f;

			if (o->nfios == IOW_MAX_TRACES)
				usage_error("too many fio logs (at most %s)", "64");
			f = calloc(1, sizeof(*f));
			if (!f)
				die("out of memory");
			f->path = optarg;
			f->label = strrchr(optarg, '/') ? strrchr(optarg, '/') + 1 : optarg;
			o->fios[o->nfios++] = f;
			break;
		}
		case 'l':
			if (o->nlabels < IOW_MAX_TRACES)
				o->labels[o->nlabels++] = optarg;
			break;
		case 'T':
			o->title = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_HTML:
			o->html = optarg;
			break;
		case 'O':
			set_graph(o, optarg, 1);
			break;
		case 'N':
			set_graph(o, optarg, 0);
			break;
		case 'd':
			if (o->ndevices == 64)
				usage_error("too many devices (at most %s)", "64");
			o->devices[o->ndevices++] = optarg;
			break;
		case 'D':
			o->dest_dir = optarg;
			break;
		case 'p':
			o->prog = 1;
			break;
		case 'm':
			if (!optarg || !strcmp(optarg, "rect"))
				o->movie = 1;
			else if (!strcmp(optarg, "spindle"))
				o->movie = 2;
			else
				usage_error(
					"option '--movie': unknown style '%s' (rect or spindle)",
					optarg);
			break;
		case 'C':
			o->codec = optarg;
			break;
		case 'K':
			o->keep_frames = 1;
			break;
		case OPT_MOVIE_LENGTH: {
			double v = parse_num("--movie-length", optarg, 1);

			if (v > 3600 || v != (unsigned int)v)
				usage_error(
					"option '--movie-length': '%s' is not a whole number of seconds from 1 to 3600",
					optarg);
			o->movie_seconds = (unsigned int)v;
			break;
		}
		case 'r':
			o->rolling = parse_num("--rolling", optarg, 0);
			break;
		case 'h':
			o->height = (int)parse_num("--height", optarg, 50);
			break;
		case 'w':
			o->width = (int)parse_num("--width", optarg, 100);
			break;
		case 'c':
			o->columns = (int)parse_num("--columns", optarg, 1);
			break;
		case 'x':
			parse_range("--xzoom", optarg, &o->xmin, &o->xmax);
			break;
		case 'y':
			parse_range("--yzoom", optarg, &o->ymin, &o->ymax);
			break;
		case 'a':
			if (!strcmp(optarg, "Q"))
				o->io_act = BLK_TA_QUEUE;
			else if (!strcmp(optarg, "D"))
				o->io_act = BLK_TA_ISSUE;
			else if (!strcmp(optarg, "C"))
				o->io_act = BLK_TA_COMPLETE;
			else
				usage_error(
					"option '--io-plot-action': unknown action '%s' (Q, D or C)",
					optarg);
			break;
		case 'P':
			o->per_process = 1;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			/* the classic iowatcher has no version option */
			print_version("iowatcher");
			exit(0);
		default:
			fputs("hint: see 'iowatcher --help'\n", stderr);
			exit(2);
		}
	}
	if (o->height > 10000 || o->width > 20000 || o->columns > 64)
		usage_error("%s", "graph size or column count out of range");
	if (o->prog) {
		if (optind >= argc)
			usage_error("%s", "option '--prog': no program given");
		o->prog_argv = argv + optind;
	} else if (optind < argc) {
		usage_error("unexpected argument '%s' (use -p to run a program)", argv[optind]);
	}
	if (o->prog && !o->ndevices)
		usage_error("%s", "option '--prog' needs a device to trace (-d)");
	if (!o->ntraces && !o->nfios && !o->ndevices)
		usage_error("%s", "no trace given (-t NAME, -F FILE, or -d DEV)");
	if (o->output)
		check_output(o);
}

/* Read the traces, then draw; return 0 or -1 (with a message). */
static int plot(struct iow_opts *o)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	int ret;

	if (o->ndevices && iow_trace_devices(o))
		return -1;
	for (int i = 0; i < o->ntraces; i++) {
		if (i < o->nlabels) {
			o->traces[i]->label = strdup(o->labels[i]);
			if (!o->traces[i]->label)
				die("out of memory");
		}
		if (iow_trace_resolve(o->traces[i]))
			return -1;
	}
	if (!o->output)
		o->output = o->movie ? "trace.mp4" : "trace.svg";
	if (iow_pass1(o) || iow_fio_load(o))
		return -1;
	iow_layout(o);
	if (iow_pass2(o) || iow_fio_load(o))
		return -1;
	iow_mpstat_load(o);
	if (o->movie)
		return iow_movie(o);
	iow_svg(&sb, o, NULL);
	if (ends_with(o->output, ".png"))
		ret = iow_svg_to_png(&sb, o->output);
	else
		ret = iow_write_file(o->output, &sb);
	if (!ret && o->html)
		ret = iow_html(o, &sb, o->html);
	blk_strbuf_release(&sb);
	return ret;
}

int main(int argc, char **argv)
{
	struct iow_opts o = {0};
	int ret;

	set_progname("iowatcher");
	install_log_hook();
	for (int i = 0; i < IOW_G_NR; i++)
		o.graphs[i] = 1;
	o.height = 250;
	o.width = 700;
	o.columns = 1;
	o.xmin = o.xmax = o.ymin = o.ymax = -1;
	o.codec = "libx264";
	parse_args(argc, argv, &o);
	ret = plot(&o);
	for (int i = 0; i < o.ntraces; i++) {
		/* a damaged input is drawn up to the damage, and still fails the run */
		if (o.traces[i]->damaged)
			ret = -1;
		iow_trace_free(o.traces[i]);
	}
	for (int i = 0; i < o.nfios; i++)
		free(o.fios[i]);
	return ret ? 1 : 0;
}
