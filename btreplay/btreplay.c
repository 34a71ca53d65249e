// SPDX-License-Identifier: GPL-2.0
/*
 * btreplay: re-issue the I/Os of btrecord's replay files (DEV.BASE.CPU) with libaio and
 * O_DIRECT, one thread per file pinned to a CPU, keeping the recorded time between bunches
 * (divided by -x) or as fast as possible (-N). Writes are issued as reads unless -W.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common.h"
#include "replay-file.h"
#include "stream.h"
#include "target.h"

#define BTREPLAY_VERSION "2.0.0"

struct rp_map {
	char *from, *to;
};

struct rp_opts {
	const char *idir;
	const char *ibase;
	int find;
	int verbose;
	int no_stalls;
	int write_enable;
	int force;
	unsigned int ncpus; /* 0: every CPU we may run on */
	unsigned long iterations;
	unsigned long acc;
	struct rp_map *maps;
	size_t nmaps;
	const char **devs;
	int ndevs;
};

struct rp_run {
	struct rp_opts *o;
	struct rf_list inputs;
	struct rp_stream *s;
	size_t ns;
	struct rp_target *tgts;
	size_t ntgts;
	int cpus[CPU_SETSIZE];
	int ncpus;
	struct rp_shared sh; /* what the replay threads share */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct option long_opts[] = {
	{"cpus", required_argument, NULL, 'c'},
	{"input-directory", required_argument, NULL, 'd'},
	{"find-records", no_argument, NULL, 'F'},
	{"help", no_argument, NULL, 'h'},
	{"input-base", required_argument, NULL, 'i'},
	{"iterations", required_argument, NULL, 'I'},
	{"map-devs", required_argument, NULL, 'M'},
	{"no-stalls", no_argument, NULL, 'N'},
	{"acc-factor", required_argument, NULL, 'x'},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"write-enable", no_argument, NULL, 'W'},
	{"force", no_argument, NULL, 1000},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: btreplay [options] DEV...\n"
		"Replay the I/O of btrecord's files DIR/DEV.BASE.CPU onto /dev/DEV (or as mapped).\n\n"
		"  -c, --cpus=N                 use N CPUs: recorded CPU c replays on the (c mod N)th\n"
		"                               (default: every CPU this process may run on)\n"
		"  -d, --input-directory=DIR    where the replay files are (default .)\n"
		"  -F, --find-records           take every NAME.BASE.CPU in the input directory\n"
		"  -i, --input-base=BASE        middle part of the file names (default replay)\n"
		"  -I, --iterations=N           replay N times (default 1)\n"
		"  -M, --map-devs=FILE          lines 'RECORDED REPLAY': replay the I/O recorded on\n"
		"                               RECORDED onto /dev/REPLAY (repeatable)\n"
		"  -N, --no-stalls              issue bunches as fast as possible, ignoring time\n"
		"  -x, --acc-factor=N           divide the recorded time between bunches by N\n"
		"  -W, --write-enable           issue recorded writes as writes (default: as reads)\n"
		"      --force                  with -W: write even to a mounted or busy device\n"
		"  -v, --verbose                name the files and print a summary on stderr; twice:\n"
		"                               log every bunch and I/O to FILE.rep\n"
		"  -V, --version                print the version\n"
		"  -h, --help                   this text\n");
}

static void usage_error(const char *msg)
{
	error("%s", msg);
	fprintf(stderr, "Try 'btreplay --help' for more information.\n");
	exit(1);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* "/dev/sda" and "sda" name the same recorded device. */
static const char *strip_dev(const char *s)
{
	return strncmp(s, "/dev/", 5) ? s : s + 5;
}

static void read_map(struct rp_opts *o, const char *file)
{
	FILE *f = fopen(file, "re");
	char line[1024];
	int lineno = 0;

	if (!f)
		die("option '--map-devs': cannot open '%s': %s", file, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char a[512], b[512], extra[2];
		int n;

		lineno++;
		n = sscanf(line, "%511s %511s %1s", a, b, extra);
		if (n <= 0 || a[0] == '#')
			continue;
		if (n != 2) {
			error("'%s' line %d: expected 'RECORDED_DEV REPLAY_DEV'", file, lineno);
			hint("one pair of device names per line, e.g. 'sda sdb' (without /dev/)");
			exit(1);
		}
		o->maps = realloc(o->maps, (o->nmaps + 1) * sizeof(*o->maps));
		if (!o->maps)
			die("out of memory");
		o->maps[o->nmaps].from = xstrdup(strip_dev(a));
		o->maps[o->nmaps].to = xstrdup(b);
		o->nmaps++;
	}
	if (ferror(f))
		die("cannot read '%s': %s", file, strerror(errno));
	fclose(f);
}

static void parse_args(int argc, char **argv, struct rp_opts *o)
{
	int c;

	argv[0] = (char *)progname(); /* getopt's messages then start with the tool's name */
	while ((c = getopt_long(argc, argv, "c:d:Fhi:I:M:Nx:vVW", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->ncpus = (unsigned int)parse_opt_num(optarg, "--cpus", 1, CPU_SETSIZE);
			break;
		case 'd':
			o->idir = optarg;
			break;
		case 'F':
			o->find = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			if (!*optarg || strchr(optarg, '/'))
				die("option '--input-base': '%s' is not a file name part (no '/', not empty)",
				    optarg);
			o->ibase = optarg;
			break;
		case 'I':
			o->iterations = parse_opt_num(optarg, "--iterations", 1, 1000000);
			break;
		case 'M':
			read_map(o, optarg);
			break;
		case 'N':
			o->no_stalls = 1;
			break;
		case 'x':
			o->acc = parse_opt_num(optarg, "--acc-factor", 1, 1000000000);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			print_version("btreplay version %s (replay files version 1.0.0)",
				      BTREPLAY_VERSION);
			exit(0);
		case 'W':
			o->write_enable = 1;
			break;
		case 1000:
			o->force = 1;
			break;
		default:
			fprintf(stderr, "Try 'btreplay --help' for more information.\n");
			exit(1);
		}
	}
	o->devs = (const char **)argv + optind;
	o->ndevs = argc - optind;
	if (o->find && o->ndevs) {
		warning("device names are ignored with -F (every replay file in '%s' is taken)",
			o->idir);
		o->ndevs = 0;
	}
	if (!o->find && !o->ndevs)
		usage_error(
			"no device given (name the recorded devices, e.g. 'sda' for sda.replay.N, or use -F)");
	if (o->force && !o->write_enable)
		warning("--force has no effect without -W (nothing is written)");
}

/* ---- setup: files, targets, streams ---- */

static void find_inputs(struct rp_run *r)
{
	struct rp_opts *o = r->o;
	const char *dev;
	int n, i = 0;

	if (o->find) {
		n = rf_find(&r->inputs, o->idir, NULL, o->ibase);
		if (n < 0)
			die("cannot read input directory '%s': %s", o->idir, strerror(-n));
		if (!n) {
			error("no replay files (NAME.%s.CPU) found in '%s'", o->ibase, o->idir);
			hint("btrecord writes them (into its -D directory); -i names another middle part");
			exit(1);
		}
		return;
	}
	n = rf_find_devs(&r->inputs, o->idir, o->devs, o->ndevs, o->ibase, &i);
	if (!n)
		return;
	dev = o->devs[i];
	if (n < 0)
		die("cannot look for the replay files of '%s' in '%s': %s", dev, o->idir,
		    strerror(-n));
	error("no replay files '%s/%s.%s.CPU' found", o->idir, dev, o->ibase);
	if (!strncmp(dev, "/dev/", 5))
		hint("name the recorded device as btrecord did: '%s', not the device path",
		     dev + 5);
	else
		hint("use -d DIR for the directory holding them, -i for another middle part, or -F");
	exit(1);
}

/* The replay device of recorded device @dev: mapped, under /dev, '_' read as '/' if needed. */
static char *target_path(const struct rp_opts *o, const char *dev)
{
	const char *name = dev;
	struct stat st;
	char *p, *s;

	for (size_t i = 0; i < o->nmaps; i++) {
		if (!strcmp(o->maps[i].from, dev)) {
			name = o->maps[i].to;
			break;
		}
	}
	if (name[0] == '/')
		return xstrdup(name);
	if (asprintf(&p, "/dev/%s", name) < 0)
		die("out of memory");
	if (stat(p, &st) && strchr(name, '_')) {
		/* trace names have '/' turned into '_' (cciss/c0d0 -> cciss_c0d0) */
		for (s = p + 5; *s; s++)
			if (*s == '_')
				*s = '/';
		if (stat(p, &st))
			for (s = p + 5; *s; s++)
				if (*s == '/')
					*s = '_';
	}
	return p;
}

static void refuse_if_mounted(const struct rp_opts *o, const char *path)
{
	char dev[4096], mnt[4096];
	struct stat st;
	int ret;

	if (!o->write_enable || o->force || stat(path, &st) || !S_ISBLK(st.st_mode))
		return;
	ret = target_mounted(st.st_rdev, dev, sizeof(dev), mnt, sizeof(mnt));
	if (ret < 0) {
		error("cannot check whether '%s' is mounted: /proc/self/mountinfo: %s", path,
		      strerror(-ret));
		hint("pass --force to write to it without the check");
		exit(1);
	}
	if (!ret)
		return;
	if (!strcmp(dev, path))
		error("refusing to write to '%s': it is mounted on '%s'", path, mnt);
	else
		error("refusing to write to '%s': '%s' on it is mounted on '%s'", path, dev, mnt);
	hint("replaying writes would corrupt that file system; unmount it first, or pass --force to write anyway");
	exit(1);
}

static struct rp_target *open_target(struct rp_run *r, const struct rf_input *in)
{
	const struct rp_opts *o = r->o;
	struct rp_target *t;
	char *path = target_path(o, in->dev);
	unsigned int flags = 0;
	struct stat st;
	int ret;

	for (size_t i = 0; i < r->ntgts; i++) {
		if (!strcmp(r->tgts[i].path, path) ||
		    (!stat(path, &st) && S_ISBLK(st.st_mode) && r->tgts[i].is_blk &&
		     st.st_rdev == r->tgts[i].rdev)) {
			free(path);
			return &r->tgts[i];
		}
	}
	refuse_if_mounted(o, path);
	t = &r->tgts[r->ntgts];
	t->path = path;
	if (o->write_enable)
		flags |= TARGET_WRITE | (o->force ? 0 : TARGET_EXCL);
	ret = target_open(t, flags);
	if (!ret) {
		r->ntgts++;
		return t;
	}
	if (ret == -EBUSY && (flags & TARGET_EXCL)) {
		error("refusing to write to '%s': it is in use (%s)", path, strerror(-ret));
		hint("the kernel holds it: a file system mounted elsewhere, swap, or a member of a device-mapper/md/LVM device; free it, or pass --force");
	} else if (ret == -ENOTBLK) {
		error("cannot replay '%s' onto '%s': not a block device or a file", in->path, path);
	} else {
		error("cannot open '%s' to replay '%s': %s", path, in->path, strerror(-ret));
		if (ret == -ENOENT)
			hint("map the recorded device to one of this machine with -M FILE (a line '%s DEV')",
			     in->dev);
		else if (ret == -EINVAL)
			hint("'%s' does not support O_DIRECT (tmpfs?); replay onto a block device",
			     path);
		else if (ret == -EACCES || ret == -EPERM)
			hint("replaying needs read%s access to the device; run as root",
			     o->write_enable ? "-write" : "");
	}
	exit(1);
}

static void find_cpus(struct rp_run *r)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			r->cpus[r->ncpus++] = c;
	if (r->o->ncpus > (unsigned int)r->ncpus) {
		error("option '--cpus': %u CPUs asked for, but this process may use only %d",
		      r->o->ncpus, r->ncpus);
		exit(1);
	}
	if (r->o->ncpus)
		r->ncpus = (int)r->o->ncpus;
}

static void setup(struct rp_run *r)
{
	struct rp_opts *o = r->o;
	int have_genesis = 0;

	find_inputs(r);
	find_cpus(r);
	r->ns = r->inputs.n;
	r->sh.write_enable = o->write_enable;
	r->sh.no_stalls = o->no_stalls;
	r->sh.acc = o->acc;
	r->sh.iterations = o->iterations;
	r->sh.nstreams = r->ns;
	r->sh.stop = &stop_requested;
	r->s = calloc(r->ns, sizeof(*r->s));
	r->tgts = calloc(r->ns, sizeof(*r->tgts));
	if (!r->s || !r->tgts)
		die("out of memory");
	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];

		s->sh = &r->sh;
		s->in = &r->inputs.v[i];
		s->cpu = r->cpus[s->in->cpu % r->ncpus];
		if (stream_open(s))
			exit(1);
		s->tgt = open_target(r, s->in);
		if (stream_scan(s))
			exit(1);
		if (s->scan.bunches && (!have_genesis || s->scan.first_ts < r->sh.genesis)) {
			r->sh.genesis = s->scan.first_ts;
			have_genesis = 1;
		}
	}
	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];

		if (!s->scan.bunches) {
			if (o->verbose)
				fprintf(stderr, "%s: '%s': no I/O to replay\n", progname(),
					s->in->path);
			continue;
		}
		if (stream_setup_aio(s))
			exit(1);
		if (o->verbose)
			fprintf(stderr,
				"%s: '%s': %llu I/Os in %llu bunches over %.3f s -> '%s' on CPU %d\n",
				progname(), s->in->path, (unsigned long long)s->scan.pkts,
				(unsigned long long)s->scan.bunches,
				(double)(s->scan.last_ts - s->scan.first_ts) / 1e9, s->tgt->path,
				s->cpu);
		if (o->verbose > 1) {
			char *p;

			if (asprintf(&p, "%s.rep", s->in->path) < 0)
				die("out of memory");
			s->rep = fopen(p, "we");
			if (!s->rep)
				die("cannot create '%s': %s", p, strerror(errno));
			free(p);
		}
	}
}

/* ---- main ---- */

static void start_threads(struct rp_run *r, unsigned int *n)
{
	*n = 0;
	for (size_t i = 0; i < r->ns; i++)
		*n += r->s[i].scan.bunches > 0;
	if (pthread_barrier_init(&r->sh.ready, NULL, *n + 1) ||
	    pthread_barrier_init(&r->sh.go, NULL, *n + 1))
		die("pthread_barrier_init: %s", strerror(errno));
	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];
		int ret;

		if (!s->scan.bunches)
			continue;
		ret = pthread_create(&s->th, NULL, stream_thread, s);
		if (ret)
			die("cannot start the replay thread of '%s': %s", s->in->path,
			    strerror(ret));
		s->started = 1;
	}
}

static int report(struct rp_run *r, int64_t elapsed)
{
	struct rp_stream tot = {0};
	int failed = 0;

	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];

		if (s->failed) {
			error("%s", s->errmsg);
			failed = 1;
		}
		tot.ios += s->ios;
		tot.reads += s->reads;
		tot.writes += s->writes;
		tot.as_reads += s->as_reads;
		tot.flushes += s->flushes;
		tot.skipped += s->skipped;
		tot.bytes += s->bytes;
		tot.errors += s->errors;
		tot.short_ios += s->short_ios;
		if (s->late_max_ns > tot.late_max_ns)
			tot.late_max_ns = s->late_max_ns;
		if (r->o->verbose && s->started)
			fprintf(stderr,
				"%s: '%s': %llu I/Os (%llu reads, %llu writes, %llu writes as reads), %llu flushes, %llu skipped, %llu errors, at most %.3f ms late\n",
				progname(), s->in->path, (unsigned long long)s->ios,
				(unsigned long long)s->reads, (unsigned long long)s->writes,
				(unsigned long long)s->as_reads, (unsigned long long)s->flushes,
				(unsigned long long)s->skipped, (unsigned long long)s->errors,
				(double)s->late_max_ns / 1e6);
	}
	if (r->o->verbose)
		fprintf(stderr, "%s: %llu I/Os, %.1f MiB in %.3f s (%lu iteration%s)\n", progname(),
			(unsigned long long)tot.ios, (double)tot.bytes / 1048576.0,
			(double)elapsed / 1e9, r->o->iterations, r->o->iterations > 1 ? "s" : "");
	if (tot.as_reads && !r->o->write_enable)
		fprintf(stderr, "%s: %llu recorded writes were issued as reads (-W writes)\n",
			progname(), (unsigned long long)tot.as_reads);
	if (tot.errors) {
		error("%llu I/Os failed (the first is shown above)",
		      (unsigned long long)tot.errors);
		failed = 1;
	}
	if (tot.short_ios)
		warning("%llu I/Os transferred fewer bytes than recorded",
			(unsigned long long)tot.short_ios);
	if (stop_requested) {
		error("interrupted: %llu I/Os issued", (unsigned long long)tot.ios);
		failed = 1;
	}
	return failed;
}

static void cleanup(struct rp_run *r)
{
	for (size_t i = 0; i < r->ns; i++)
		stream_release(&r->s[i]);
	for (size_t i = 0; i < r->ntgts; i++)
		target_release(&r->tgts[i]);
	free(r->tgts);
	free(r->s);
	rf_list_release(&r->inputs);
	for (size_t i = 0; i < r->o->nmaps; i++) {
		free(r->o->maps[i].from);
		free(r->o->maps[i].to);
	}
	free(r->o->maps);
}

int main(int argc, char **argv)
{
	struct rp_opts o = {.idir = ".", .ibase = "replay", .iterations = 1, .acc = 1};
	struct rp_run r = {.o = &o, .inputs = RF_LIST_INIT};
	struct sigaction sa = {.sa_handler = on_signal};
	unsigned int nthreads;
	int64_t start;
	int failed;

	set_progname(argv[0]);
	install_log_hook();
	parse_args(argc, argv, &o);
	setup(&r);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	start_threads(&r, &nthreads);
	start = rp_now_ns();
	if (!nthreads)
		warning("the replay files hold no I/O: nothing to replay");
	for (unsigned long it = 0; nthreads && it < o.iterations; it++) {
		pthread_barrier_wait(&r.sh.ready);
		clock_gettime(CLOCK_MONOTONIC, &r.sh.t0);
		pthread_barrier_wait(&r.sh.go);
	}
	for (size_t i = 0; i < r.ns; i++)
		if (r.s[i].started)
			pthread_join(r.s[i].th, NULL);
	failed = report(&r, rp_now_ns() - start);
	pthread_barrier_destroy(&r.sh.ready);
	pthread_barrier_destroy(&r.sh.go);
	cleanup(&r);
	return failed ? 1 : 0;
}
