// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace: record block I/O events per CPU into NAME.blktrace.CPU files, through the
 * kernel's relay files (the classic path) or, where those cannot be opened (kernel
 * lockdown) or on request, through the ftrace blk tracer in tracefs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "blk/backend.h"
#include "blk/kernel.h"
#include "blk/net.h"
#include "blk/output.h"
#include "blk/trace.h"
#include "blk/window.h"
#include "trace-run.h"

#define BLKTRACE_VERSION "2.0.0"
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct option long_opts[] = {
	{"dev", required_argument, NULL, 'd'},
	{"input-devs", required_argument, NULL, 'I'},
	{"act-mask", required_argument, NULL, 'a'},
	{"set-mask", required_argument, NULL, 'A'},
	{"relay", required_argument, NULL, 'r'},
	{"output", required_argument, NULL, 'o'},
	{"kill", no_argument, NULL, 'k'},
	{"stopwatch", required_argument, NULL, 'w'},
	{"version", no_argument, NULL, 'V'},
	{"buffer-size", required_argument, NULL, 'b'},
	{"num-sub-buffers", required_argument, NULL, 'n'},
	{"output-dir", required_argument, NULL, 'D'},
	{"listen", no_argument, NULL, 'l'},
	{"host", required_argument, NULL, 'h'},
	{"port", required_argument, NULL, 'p'},
	{"no-sendfile", no_argument, NULL, 's'},
	{"backend", required_argument, NULL, 1000},
	{"iowait", optional_argument, NULL, 1002},
	{"iowait-all", no_argument, NULL, 1003},
	{"iowait-maxactive", required_argument, NULL, 1004},
	{"origin", no_argument, NULL, 1005},
	{"help", no_argument, NULL, 1001},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: blktrace [options] -d DEV [-d DEV ...]   (or: blktrace [options] DEV ...)\n\n"
		"  -d, --dev=DEV              trace this block device (repeatable)\n"
		"  -I, --input-devs=FILE      read device names from FILE\n"
		"  -a, --act-mask=ACTION      only these categories (repeatable): read write flush sync\n"
		"                             queue requeue issue complete fs pc notify ahead meta discard\n"
		"                             drv_data fua\n"
		"  -A, --set-mask=HEX         set the whole category mask\n"
		"  -r, --relay=PATH           debugfs mount point (default /sys/kernel/debug)\n"
		"  -o, --output=NAME          output base name ('-' = stream to stdout)\n"
		"  -D, --output-dir=DIR       directory for the output files\n"
		"  -w, --stopwatch=SECS       stop after SECS seconds\n"
		"  -b, --buffer-size=KIB      sub-buffer size in KiB (default 512)\n"
		"  -n, --num-sub-buffers=N    number of sub-buffers (default 4)\n"
		"  -k, --kill                 stop and tear down a running trace of the devices\n"
		"  -l, --listen               network server mode\n"
		"  -h, --host=HOST            network client mode: send the trace to HOST\n"
		"  -p, --port=PORT            network port (default 8462)\n"
		"  -s, --no-sendfile          client: use send() instead of sendfile()\n"
		"      --backend=auto|relay|tracefs\n"
		"                             relay files (classic), the tracefs blk tracer (works under\n"
		"                             kernel lockdown), or auto: relay, else tracefs\n"
		"      --iowait[=SOURCE]      also record the tasks' I/O waits (NAME.iowait.blktrace.N):\n"
		"                             SOURCE module, kprobe, sched, or auto (the first there)\n"
		"      --iowait-all           sched source: keep the sleeps without an I/O in flight too\n"
		"      --iowait-maxactive=N   kprobe source: waits followed at once (default 2 x CPUs)\n"
		"      --origin               also record each I/O's cgroup, the task that dirtied its data\n"
		"                             and its file (notes the classic tools skip; the relay backend\n"
		"                             writes the last two to NAME.origin.blktrace.N)\n"
		"  -V, -v, --version          print the version\n"
		"      --help                 this text\n");
}

static void add_dev(struct bt_opts *o, const char *d)
{
	for (int i = 0; i < o->ndevs; i++)
		if (!strcmp(o->devs[i], d))
			return;
	if (o->ndevs == MAX_DEVS)
		die("too many devices (at most %d)", MAX_DEVS);
	o->devs[o->ndevs++] = d;
}

static void read_devs_file(struct bt_opts *o, const char *file)
{
	FILE *f = fopen(file, "re");
	char word[4096];

	if (!f)
		die("option '-I': cannot open '%s': %s", file, strerror(errno));
	while (fscanf(f, "%4095s", word) == 1) {
		char *d = strdup(word);

		if (!d)
			die("out of memory");
		add_dev(o, d);
	}
	fclose(f);
}

static void parse_args(int argc, char **argv, struct bt_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "d:I:a:A:r:o:kw:vVb:n:D:lh:p:s", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'd':
			add_dev(o, optarg);
			break;
		case 'I':
			read_devs_file(o, optarg);
			break;
		case 'a': {
			int m = blk_category_from_name(optarg);

			if (m < 0) {
				error("Invalid action mask %s", optarg);
				hint("known: %s", blk_category_names);
				exit(1);
			}
			o->act_mask |= (uint64_t)m;
			break;
		}
		case 'A': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 16);

			if (end == optarg || *end || v < 1 || v > 0xffff)
				die("Invalid set action mask %s/0x%lx (a hex mask 1..FFFF)", optarg,
				    v);
			o->act_mask = v;
			break;
		}
		case 'r':
			o->debugfs = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'k':
			o->kill = 1;
			break;
		case 'w':
			o->stopwatch = (unsigned int)parse_opt_num(optarg, "-w", 1, 86400 * 365);
			break;
		case 'v':
		case 'V':
			print_version("%s version %s", progname(), BLKTRACE_VERSION);
			exit(0);
		case 'b':
			o->buf_kb = (unsigned int)parse_opt_num(optarg, "-b", 1, 16384);
			o->buf_given = 1;
			break;
		case 'n':
			o->nbuf = (unsigned int)parse_opt_num(optarg, "-n", 1, 65536);
			o->buf_given = 1;
			break;
		case 'D':
			o->outdir = optarg;
			break;
		case 'l':
			o->listen = 1;
			break;
		case 'h':
			o->host = optarg;
			break;
		case 'p':
			o->port = (int)parse_opt_num(optarg, "-p", 1, 65535);
			break;
		case 's':
			o->no_sendfile = 1;
			break;
		case 1000:
			if (!strcmp(optarg, "auto"))
				o->backend = BACKEND_AUTO;
			else if (!strcmp(optarg, "relay"))
				o->backend = BACKEND_RELAY;
			else if (!strcmp(optarg, "tracefs"))
				o->backend = BACKEND_TRACEFS;
			else
				die("option '--backend': unknown backend '%s' (auto, relay or tracefs)",
				    optarg);
			break;
		case 1001:
			usage(stdout);
			exit(0);
		case 1002:
			if (!optarg)
				optarg = (char *)"auto";
			if (strcmp(optarg, "auto") && strcmp(optarg, "module") &&
			    strcmp(optarg, "kprobe") && strcmp(optarg, "sched"))
				die("option '--iowait': unknown source '%s' (auto, module, kprobe or sched)",
				    optarg);
			o->iowait = optarg;
			break;
		case 1003:
			o->iowait_all = 1;
			break;
		case 1004:
			o->iowait_maxactive =
				(unsigned int)parse_opt_num(optarg, "--iowait-maxactive", 1, 4096);
			break;
		case 1005:
			o->origin = 1;
			break;
		default:
			usage(stderr);
			exit(1);
		}
	}
	while (optind < argc)
		add_dev(o, argv[optind++]);
	if (!o->ndevs && !o->listen) {
		/* the classic tool prints only the usage, and exits 1 */
		error("no device given");
		usage(stderr);
		exit(1);
	}
	if ((o->iowait_all || o->iowait_maxactive) && !o->iowait)
		die("options '--iowait-all' and '--iowait-maxactive' go with '--iowait'");
	if (o->iowait && (o->listen || o->kill))
		die("option '--iowait' records with a trace: not with -l or -k");
	if (o->origin && (o->listen || o->kill))
		die("option '--origin' records with a trace: not with -l or -k");
	if (o->output && strcmp(o->output, "-") && o->ndevs > 1)
		die("option '-o': one output name cannot be used for %d devices (use -D, or -o -)",
		    o->ndevs);
}

/* ---- devices ---- */

static void dev_sysname(struct blk_backend_dev *d, struct stat *st)
{
	char p[128], buf[512], *s;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/uevent", major(st->st_rdev),
		 minor(st->st_rdev));
	f = fopen(p, "re");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			if (!strncmp(buf, "DEVNAME=", 8)) {
				buf[strcspn(buf, "\n")] = '\0';
				snprintf(d->sysname, sizeof(d->sysname), "%s", buf + 8);
				break;
			}
		}
		fclose(f);
	}
	if (!d->sysname[0]) {
		s = strrchr(d->path, '/');
		snprintf(d->sysname, sizeof(d->sysname), "%s", s ? s + 1 : d->path);
	}
	/* the kernel names traces like this: '/' becomes '_' (cciss/c0d0) */
	for (s = d->sysname; *s; s++)
		if (*s == '/')
			*s = '_';
}

/* does this process hold CAP_SYS_ADMIN (capability 21 of /proc/self/status's CapEff)? 1
 * yes, 0 no, -1 when it cannot tell */
static int have_sys_admin(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int ret = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			ret = (int)((strtoull(line + 7, NULL, 16) >> 21) & 1);
			break;
		}
	if (f)
		fclose(f);
	return ret;
}

/* both ways of tracing (BLKTRACESETUP, tracefs) need CAP_SYS_ADMIN: say so before any of
 * them fails with a bare EACCES */
static void need_root(const char *what)
{
	if (!have_sys_admin())
		die("%s needs root: the CAP_SYS_ADMIN capability, which this process lacks (the "
		    "kernel's BLKTRACESETUP and tracefs both require it); run it as root, e.g. with sudo",
		    what);
}

static void open_devs(struct bt_run *r)
{
	for (int i = 0; i < r->o->ndevs; i++) {
		struct blk_backend_dev *d = &r->devs[i];
		struct stat st;

		d->path = r->o->devs[i];
		d->fd = open(d->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (d->fd < 0)
			die("cannot open '%s': %s", d->path, strerror(errno));
		if (fstat(d->fd, &st) || !S_ISBLK(st.st_mode))
			die("'%s' is not a block device", d->path);
		d->devno = BLK_MKDEV(major(st.st_rdev), minor(st.st_rdev));
		dev_sysname(d, &st);
		_Static_assert(sizeof(d->name) == sizeof(d->sysname), "same size");
		memcpy(d->name, d->sysname, sizeof(d->name));
		r->ndevs++;
	}
}

/* ---- -k ---- */

static int kill_traces(struct bt_opts *o)
{
	const char *names[MAX_DEVS];
	struct blk_backend_dev devs[MAX_DEVS];
	char tdir[4096], msg[1024];
	int failed = 0, ndevs = 0, ret;

	memset(devs, 0, sizeof(devs));
	for (int i = 0; i < o->ndevs; i++) {
		struct blk_backend_dev *d = &devs[ndevs];
		struct stat st;

		d->path = o->devs[i];
		d->fd = open(d->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (d->fd < 0) {
			error("cannot open '%s': %s", d->path, strerror(errno));
			failed = 1;
			continue;
		}
		if (fstat(d->fd, &st) || !S_ISBLK(st.st_mode)) {
			error("'%s' is not a block device", d->path);
			close(d->fd);
			failed = 1;
			continue;
		}
		dev_sysname(d, &st);
		names[ndevs++] = d->sysname;
	}
	/* a trace through tracefs: its tracer notices and puts everything back itself */
	ret = 0;
	if (ndevs && !blk_find_tracefs(0, tdir, sizeof(tdir)))
		ret = blk_tfs_kill(tdir, names, ndevs, 5000, msg, sizeof(msg));
	if (ret < 0) {
		error("%s", msg);
		failed = 1;
	} else if (ret > 0) {
		fprintf(stderr, "%s: %s\n", progname(), msg);
	}
	int relay_down = 0;

	for (int i = 0; i < ndevs; i++) {
		if (!ret) {
			/* a relay trace (BLKTRACESETUP) */
			int r1 = blk_relay_stop(devs[i].fd), r2 = blk_relay_teardown(devs[i].fd);

			relay_down |= !r2;

			if (r2 && r2 != -EINVAL && r2 != -ENXIO) {
				error("BLKTRACETEARDOWN on '%s' failed: %s", devs[i].path,
				      strerror(-r2));
				failed = 1;
			} else if (r1 == -EINVAL && r2) {
				fprintf(stderr, "%s: no trace was running on '%s'\n", progname(),
					devs[i].path);
			}
		}
		close(devs[i].fd);
	}
	/* a relay tracer with --origin turned the blk tracer's blk_cgroup option on */
	if (relay_down && !blk_find_tracefs(0, tdir, sizeof(tdir))) {
		ret = blk_relay_cgroup_reset(tdir);
		if (ret < 0) {
			error("cannot reset '%s/options/blk_cgroup': %s", tdir, strerror(-ret));
			failed = 1;
		} else if (ret > 0) {
			fprintf(stderr,
				"%s: reset '%s/options/blk_cgroup' (a relay trace with --origin left it on)\n",
				progname(), tdir);
		}
	}
	/* --origin's instance beside a relay trace: of a running tracer turned off, else removed */
	if (!blk_find_tracefs(0, tdir, sizeof(tdir))) {
		ret = blk_fsside_kill(tdir, msg, sizeof(msg));
		if (ret < 0) {
			error("%s", msg);
			failed = 1;
		} else if (ret > 0) {
			fprintf(stderr, "%s: %s\n", progname(), msg);
		}
	}
	/* I/O wait instances: of running tracers turned off, left-overs of killed ones removed */
	if (!blk_find_tracefs(0, tdir, sizeof(tdir))) {
		ret = blk_iowait_kill(tdir, msg, sizeof(msg));
		if (ret < 0) {
			error("%s", msg);
			failed = 1;
		} else if (ret > 0) {
			fprintf(stderr, "%s: %s\n", progname(), msg);
		}
	}
	return failed;
}

static int run_server(struct bt_opts *o)
{
	struct blk_net_server_opts so = {.port = o->port, .dir = o->outdir};
	struct sigaction sa;
	char err[512];
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o->outdir && mkdir(o->outdir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", o->outdir, strerror(errno));
	so.stop = (volatile int *)&stop_requested;
	ret = blk_net_server(&so, err, sizeof(err));
	if (ret)
		die("%s", err);
	return 0;
}

int main(int argc, char **argv)
{
	struct bt_opts o = {.buf_kb = 512, .nbuf = 4, .port = 8462};
	struct sigaction sa;
	struct bt_run *r;
	int failed;

	set_progname(argv[0]);
	install_log_hook();
	parse_args(argc, argv, &o);
	if (o.kill) {
		need_root("'blktrace -k'");
		return kill_traces(&o);
	}
	if (o.listen)
		return run_server(&o);

	r = calloc(1, sizeof(*r));
	if (!r)
		die("out of memory");
	r->o = &o;
	r->to_stdout = o.output && !strcmp(o.output, "-");
	r->net = o.host != NULL;
	r->ncpus = blk_online_cpus(r->cpus, MAX_CPUS);
	if (r->ncpus <= 0)
		die("cannot read the online CPUs: %s", strerror(r->ncpus ? -r->ncpus : EIO));
	need_root("tracing a block device");
	open_devs(r);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	r->stop = &stop_requested;
	failed = trace_run(r);
	trace_run_release(r);
	for (int i = 0; i < r->ndevs; i++)
		close(r->devs[i].fd);
	free(r);
	return failed ? 1 : 0;
}
