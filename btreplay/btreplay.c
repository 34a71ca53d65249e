// SPDX-License-Identifier: GPL-2.0
/*
 * btreplay: re-issue the I/Os of btrecord's replay files (DEV.BASE.CPU) with libaio and
 * O_DIRECT, one thread per file pinned to a CPU, keeping the recorded time between bunches
 * (divided by -x) or as fast as possible (-N). Writes are issued as reads unless -W.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libaio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "replay-file.h"
#include "target.h"

#define BTREPLAY_VERSION "2.0.0"
#define RP_DEPTH 512 /* iocbs per replay file (one aio context each) */
#define RP_MAX_IO (64u << 20) /* larger packets (whole-device discards) are skipped */
#define RP_SLEEP_SLICE_NS 100000000ll /* sleeps are cut into slices to notice a stop */
#define NSEC 1000000000ll

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

/* What one replay file holds, from the scan before the replay. */
struct rp_scan {
	uint64_t bunches, pkts, reads, writes, flushes, big, bytes;
	uint64_t first_ts, last_ts, max_bytes;
};

/* One replay file: one thread, one aio context. */
struct rp_stream {
	struct rp_run *run;
	const struct rf_input *in;
	struct rp_target *tgt;
	int cpu; /* CPU the thread is pinned to */
	FILE *f;
	FILE *rep; /* -vv log */
	struct rp_scan scan;
	pthread_t th;
	int started;
	io_context_t ctx;
	struct iocb *iocbs;
	struct iocb **free;
	struct iocb **batch;
	struct io_event *events;
	int nfree, nbatch;
	void *rbuf, *wbuf;
	/* counted by the thread, read by main after join */
	uint64_t ios, reads, writes, as_reads, flushes, skipped, bytes;
	uint64_t errors, short_ios, late_max_ns;
	int failed;
	char errmsg[600];
};

struct rp_run {
	struct rp_opts *o;
	struct rf_list inputs;
	struct rp_stream *s;
	size_t ns;
	struct rp_target *tgts;
	size_t ntgts;
	uint64_t genesis;
	int cpus[CPU_SETSIZE];
	int ncpus;
	pthread_barrier_t ready, go;
	struct timespec t0; /* start of the current iteration */
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

static unsigned long parse_ulong(const char *s, const char *opt, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || *s == '-' || v < lo || v > hi)
		die("option '%s': invalid value '%s' (%lu..%lu)", opt, s, lo, hi);
	return v;
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
			o->ncpus = (unsigned int)parse_ulong(optarg, "--cpus", 1, CPU_SETSIZE);
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
			o->iterations = parse_ulong(optarg, "--iterations", 1, 1000000);
			break;
		case 'M':
			read_map(o, optarg);
			break;
		case 'N':
			o->no_stalls = 1;
			break;
		case 'x':
			o->acc = parse_ulong(optarg, "--acc-factor", 1, 1000000000);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			printf("btreplay version %s (replay files version 1.0.0)\n",
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

/* ---- setup: files, targets, scan ---- */

static void find_inputs(struct rp_run *r)
{
	struct rp_opts *o = r->o;
	int n;

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
	for (int i = 0; i < o->ndevs; i++) {
		const char *dev = o->devs[i];
		int dup = 0;

		for (int j = 0; j < i; j++)
			dup |= !strcmp(o->devs[j], dev);
		if (dup)
			continue;
		n = rf_find(&r->inputs, o->idir, dev, o->ibase);
		if (n < 0)
			die("cannot look for the replay files of '%s' in '%s': %s", dev, o->idir,
			    strerror(-n));
		if (n)
			continue;
		error("no replay files '%s/%s.%s.CPU' found", o->idir, dev, o->ibase);
		if (!strncmp(dev, "/dev/", 5))
			hint("name the recorded device as btrecord did: '%s', not the device path",
			     dev + 5);
		else
			hint("use -d DIR for the directory holding them, -i for another middle part, or -F");
		exit(1);
	}
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

/* Read the next bunch of @f at *@off into @hdr/@pkts; 1, 0 at the end, -1 on damage. */
static int read_bunch(FILE *f, const char *name, uint64_t *off, struct rf_bunch_hdr *hdr,
		      struct rf_pkt *pkts, char *err, size_t elen)
{
	size_t n = fread(hdr, 1, sizeof(*hdr), f);

	if (n == 0 && !ferror(f))
		return 0;
	if (n != sizeof(*hdr))
		goto short_read;
	if (hdr->npkts < 1 || hdr->npkts > RF_MAX_PKTS) {
		snprintf(err, elen, "'%s': bad bunch of %llu packets at offset %llu (damaged?)",
			 name, (unsigned long long)hdr->npkts, (unsigned long long)*off);
		return -1;
	}
	n = fread(pkts, sizeof(*pkts), hdr->npkts, f);
	if (n != hdr->npkts)
		goto short_read;
	*off += sizeof(*hdr) + hdr->npkts * sizeof(*pkts);
	return 1;
short_read:
	if (ferror(f))
		snprintf(err, elen, "'%s': read error at offset %llu: %s", name,
			 (unsigned long long)*off, strerror(errno));
	else
		snprintf(err, elen, "'%s': truncated bunch at offset %llu", name,
			 (unsigned long long)*off);
	return -1;
}

/* Check one packet against the target; die with a message naming both if it cannot work. */
static void check_pkt(const struct rp_stream *s, const struct rf_pkt *p, uint64_t off)
{
	const struct rp_target *t = s->tgt;
	uint64_t start = p->sector << 9;

	if (!p->nbytes || p->nbytes > RP_MAX_IO)
		return;
	if (p->sector > (UINT64_MAX >> 9) || start + p->nbytes > t->size) {
		error("'%s': the I/O at sector %llu (%llu bytes, bunch at offset %llu) lies beyond the end of '%s' (%llu bytes)",
		      s->in->path, (unsigned long long)p->sector, (unsigned long long)p->nbytes,
		      (unsigned long long)off, t->path, (unsigned long long)t->size);
		hint("replay onto a device at least as large as the recorded one (map it with -M)");
		exit(1);
	}
	if (start % t->lbs || p->nbytes % t->lbs) {
		error("'%s': the I/O at sector %llu (%llu bytes) is not aligned to the %u-byte blocks of '%s'",
		      s->in->path, (unsigned long long)p->sector, (unsigned long long)p->nbytes,
		      t->lbs, t->path);
		hint("direct I/O must be aligned to the device's logical block size; replay onto a device with %s-byte blocks",
		     p->nbytes % 4096 || start % 4096 ? "512" : "smaller");
		exit(1);
	}
}

/* Open the replay file of @s and check its header. */
static void open_stream(struct rp_stream *s)
{
	struct rf_file_hdr fh;
	int ret;

	s->f = fopen(s->in->path, "re");
	if (!s->f)
		die("cannot open '%s': %s", s->in->path, strerror(errno));
	if (fread(&fh, sizeof(fh), 1, s->f) != 1) {
		error("'%s': %s", s->in->path,
		      ferror(s->f) ? strerror(errno) : "too short for a replay file header");
		exit(1);
	}
	ret = rf_check_hdr(&fh);
	if (ret) {
		error("'%s': %s", s->in->path,
		      ret == -EPROTO
			      ? "written on a host of the other byte order (replay files are in host order)"
			      : "not a replay file (bad version; btrecord writes version 0x10000)");
		exit(1);
	}
}

/* Read the bunches of a replay file once: validate them and count what they hold. */
static void scan_stream(struct rp_stream *s)
{
	struct rf_bunch_hdr hdr;
	struct rf_pkt pkts[RF_MAX_PKTS];
	uint64_t off = sizeof(struct rf_file_hdr);
	char err[600];
	int ret;

	while ((ret = read_bunch(s->f, s->in->path, &off, &hdr, pkts, err, sizeof(err))) > 0) {
		if (!s->scan.bunches)
			s->scan.first_ts = hdr.time_stamp;
		s->scan.bunches++;
		s->scan.last_ts = hdr.time_stamp;
		for (uint64_t i = 0; i < hdr.npkts; i++) {
			const struct rf_pkt *p = &pkts[i];

			check_pkt(s, p, off - sizeof(hdr) - hdr.npkts * sizeof(*p));
			s->scan.pkts++;
			if (!p->nbytes) {
				s->scan.flushes += !p->rw;
				continue;
			}
			if (p->nbytes > RP_MAX_IO) {
				s->scan.big++;
				continue;
			}
			if (p->rw)
				s->scan.reads++;
			else
				s->scan.writes++;
			s->scan.bytes += p->nbytes;
			if (p->nbytes > s->scan.max_bytes)
				s->scan.max_bytes = p->nbytes;
		}
	}
	if (ret < 0) {
		error("%s", err);
		hint("make the replay files again with btrecord");
		exit(1);
	}
	if (s->scan.big)
		warning("'%s': %llu I/Os larger than %u MiB will be skipped (discards of whole devices?)",
			s->in->path, (unsigned long long)s->scan.big, RP_MAX_IO >> 20);
}

static void *alloc_buf(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t sz = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	void *p;

	if (posix_memalign(&p, (size_t)pg, sz ? sz : (size_t)pg))
		die("out of memory (%zu-byte I/O buffer)", sz);
	return p;
}

/* Writes carry a fixed, incompressible pattern rather than zeros that devices may elide. */
static void fill_pattern(void *buf, size_t n, uint64_t seed)
{
	uint64_t *w = buf, x = seed;

	for (size_t i = 0; i < n / 8; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		w[i] = z ^ (z >> 31);
	}
}

static void setup_aio(struct rp_run *r, struct rp_stream *s)
{
	int ret;

	ret = io_setup(RP_DEPTH, &s->ctx);
	if (ret < 0) {
		error("io_setup for '%s' failed: %s", s->in->path, strerror(-ret));
		if (ret == -EAGAIN)
			hint("the system-wide limit of asynchronous I/O events is reached; raise /proc/sys/fs/aio-max-nr (%zu replay files need %zu)",
			     r->ns, r->ns * RP_DEPTH);
		else if (ret == -ENOSYS)
			hint("this kernel has no asynchronous I/O (CONFIG_AIO)");
		exit(1);
	}
	s->iocbs = calloc(RP_DEPTH, sizeof(*s->iocbs));
	s->free = calloc(RP_DEPTH, sizeof(*s->free));
	s->batch = calloc(RP_DEPTH, sizeof(*s->batch));
	s->events = calloc(RP_DEPTH, sizeof(*s->events));
	if (!s->iocbs || !s->free || !s->batch || !s->events)
		die("out of memory");
	for (int i = 0; i < RP_DEPTH; i++)
		s->free[i] = &s->iocbs[i];
	s->nfree = RP_DEPTH;
	s->rbuf = alloc_buf(s->scan.max_bytes);
	if (r->o->write_enable && s->scan.writes) {
		s->wbuf = alloc_buf(s->scan.max_bytes);
		fill_pattern(s->wbuf, s->scan.max_bytes, 0x62747265706c6179ull + (uint64_t)s->cpu);
	}
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
	r->s = calloc(r->ns, sizeof(*r->s));
	r->tgts = calloc(r->ns, sizeof(*r->tgts));
	if (!r->s || !r->tgts)
		die("out of memory");
	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];

		s->run = r;
		s->in = &r->inputs.v[i];
		s->cpu = r->cpus[s->in->cpu % r->ncpus];
		open_stream(s);
		s->tgt = open_target(r, s->in);
		scan_stream(s);
		if (s->scan.bunches && (!have_genesis || s->scan.first_ts < r->genesis)) {
			r->genesis = s->scan.first_ts;
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
		setup_aio(r, s);
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

/* ---- the replay threads ---- */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC + t->tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

static void fail(struct rp_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct rp_stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	s->failed = 1;
}

/* Sleep until @deadline (CLOCK_MONOTONIC ns), in slices so that a stop is noticed. */
static void sleep_until(int64_t deadline)
{
	for (;;) {
		int64_t now = now_ns(), until = deadline;
		struct timespec ts;

		if (now >= deadline || stop_requested)
			return;
		if (until - now > RP_SLEEP_SLICE_NS)
			until = now + RP_SLEEP_SLICE_NS;
		ts.tv_sec = until / NSEC;
		ts.tv_nsec = until % NSEC;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void complete(struct rp_stream *s, const struct io_event *ev)
{
	struct iocb *cb = ev->obj;
	long res = (long)ev->res;
	size_t want = cb->u.c.nbytes;

	if (res < 0) {
		if (!s->errors++)
			warning("%s of %zu bytes at sector %llu on '%s' failed: %s (replaying '%s'; further errors are counted)",
				cb->aio_lio_opcode == IO_CMD_PWRITE ? "write" : "read", want,
				(unsigned long long)(cb->u.c.offset >> 9), s->tgt->path,
				strerror((int)-res), s->in->path);
	} else if ((size_t)res != want) {
		s->short_ios++;
	}
	s->free[s->nfree++] = cb;
}

/* Collect at least @min completions. */
static int reap(struct rp_stream *s, int min)
{
	int inflight = RP_DEPTH - s->nfree - s->nbatch;

	if (min > inflight)
		min = inflight;
	while (inflight > 0) {
		int r = io_getevents(s->ctx, min, RP_DEPTH, s->events, NULL);

		if (r == -EINTR)
			continue;
		if (r < 0) {
			fail(s, "io_getevents on '%s' failed: %s", s->tgt->path, strerror(-r));
			return -1;
		}
		for (int i = 0; i < r; i++)
			complete(s, &s->events[i]);
		break;
	}
	return 0;
}

static int submit(struct rp_stream *s)
{
	struct iocb **list = s->batch;
	int n = s->nbatch, tries = 0;

	while (n > 0) {
		int r = io_submit(s->ctx, n, list);

		if (r == -EAGAIN || r == -EINTR) {
			if (++tries > 1000) {
				fail(s, "io_submit on '%s' keeps failing: %s", s->tgt->path,
				     strerror(-r));
				return -1;
			}
			s->nbatch = n;
			if (reap(s, 1))
				return -1;
			continue;
		}
		if (r < 0) {
			fail(s, "io_submit on '%s' failed: %s", s->tgt->path, strerror(-r));
			return -1;
		}
		list += r;
		n -= r;
	}
	s->nbatch = 0;
	return 0;
}

static struct iocb *get_iocb(struct rp_stream *s)
{
	if (!s->nfree && (submit(s) || reap(s, 1)))
		return NULL;
	return s->nfree ? s->free[--s->nfree] : NULL;
}

static void log_io(struct rp_stream *s, char op, const struct rf_pkt *p)
{
	if (s->rep)
		fprintf(s->rep, "\t%c %12llu %10llu\n", op, (unsigned long long)p->sector,
			(unsigned long long)p->nbytes);
}

/* Issue one packet (or queue it in the batch); return -1 on a fatal error. */
static int issue(struct rp_stream *s, const struct rf_pkt *p)
{
	int write = !p->rw && s->run->o->write_enable;
	struct iocb *cb;

	if (!p->nbytes || p->nbytes > RP_MAX_IO) {
		if (!p->nbytes && write) {
			/* a flush: issued from this thread, in order, so that it stays on this CPU */
			if (submit(s))
				return -1;
			log_io(s, 'F', p);
			if (fdatasync(s->tgt->fd) && !s->errors++)
				warning("flush of '%s' failed: %s (replaying '%s'; further errors are counted)",
					s->tgt->path, strerror(errno), s->in->path);
			s->flushes++;
		} else {
			log_io(s, '-', p);
			s->skipped++;
		}
		return 0;
	}
	cb = get_iocb(s);
	if (!cb)
		return -1;
	if (write)
		io_prep_pwrite(cb, s->tgt->fd, s->wbuf, p->nbytes, (long long)(p->sector << 9));
	else
		io_prep_pread(cb, s->tgt->fd, s->rbuf, p->nbytes, (long long)(p->sector << 9));
	s->batch[s->nbatch++] = cb;
	log_io(s, write ? 'W' : p->rw ? 'R' : 'r', p);
	s->ios++;
	s->bytes += p->nbytes;
	if (write)
		s->writes++;
	else if (p->rw)
		s->reads++;
	else
		s->as_reads++;
	return 0;
}

static void replay_once(struct rp_stream *s, unsigned long iter)
{
	const struct rp_opts *o = s->run->o;
	int64_t t0 = ts_ns(&s->run->t0);
	struct rf_bunch_hdr hdr;
	struct rf_pkt pkts[RF_MAX_PKTS];
	uint64_t off = sizeof(struct rf_file_hdr);
	char err[600];
	int ret = 0;

	if (fseeko(s->f, (off_t)off, SEEK_SET)) {
		fail(s, "'%s': seek failed: %s", s->in->path, strerror(errno));
		return;
	}
	if (s->rep)
		fprintf(s->rep, "# iteration %lu of '%s' onto '%s'\n", iter + 1, s->in->path,
			s->tgt->path);
	while (!stop_requested &&
	       (ret = read_bunch(s->f, s->in->path, &off, &hdr, pkts, err, sizeof(err))) > 0) {
		uint64_t rel = hdr.time_stamp > s->run->genesis ? hdr.time_stamp - s->run->genesis
								: 0;
		int64_t deadline = t0 + (int64_t)(rel / o->acc), late;

		if (!o->no_stalls)
			sleep_until(deadline);
		if (stop_requested)
			break;
		late = now_ns() - deadline;
		if (!o->no_stalls && late > 0 && (uint64_t)late > s->late_max_ns)
			s->late_max_ns = (uint64_t)late;
		if (s->rep)
			fprintf(s->rep,
				"%llu.%09llu bunch of %llu at +%llu.%09llu (late %lld ns)\n",
				(unsigned long long)((now_ns() - t0) / NSEC),
				(unsigned long long)((now_ns() - t0) % NSEC),
				(unsigned long long)hdr.npkts, (unsigned long long)(rel / NSEC),
				(unsigned long long)(rel % NSEC),
				(long long)(o->no_stalls ? 0 : late));
		for (uint64_t i = 0; i < hdr.npkts; i++)
			if (issue(s, &pkts[i]))
				return;
		if (submit(s))
			return;
		/* collect what has completed so far, without waiting */
		if (s->nfree < RP_DEPTH) {
			int r = io_getevents(s->ctx, 0, RP_DEPTH, s->events, &(struct timespec){0});

			for (int i = 0; i < r; i++)
				complete(s, &s->events[i]);
		}
	}
	if (ret < 0)
		fail(s, "%s", err);
}

static void *stream_thread(void *arg)
{
	struct rp_stream *s = arg;
	struct rp_run *r = s->run;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret)
		warning("cannot pin the replay of '%s' to CPU %d: %s", s->in->path, s->cpu,
			strerror(ret));
	for (unsigned long it = 0; it < r->o->iterations; it++) {
		pthread_barrier_wait(&r->ready);
		pthread_barrier_wait(&r->go);
		if (s->failed || stop_requested)
			continue;
		replay_once(s, it);
		while (s->nfree + s->nbatch < RP_DEPTH && !reap(s, RP_DEPTH))
			;
	}
	return NULL;
}

/* ---- main ---- */

static void start_threads(struct rp_run *r, unsigned int *n)
{
	*n = 0;
	for (size_t i = 0; i < r->ns; i++)
		*n += r->s[i].scan.bunches > 0;
	if (pthread_barrier_init(&r->ready, NULL, *n + 1) ||
	    pthread_barrier_init(&r->go, NULL, *n + 1))
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
	for (size_t i = 0; i < r->ns; i++) {
		struct rp_stream *s = &r->s[i];

		if (s->iocbs)
			io_destroy(s->ctx);
		if (s->f)
			fclose(s->f);
		if (s->rep)
			fclose(s->rep);
		free(s->iocbs);
		free(s->free);
		free(s->batch);
		free(s->events);
		free(s->rbuf);
		free(s->wbuf);
	}
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
	start = now_ns();
	if (!nthreads)
		warning("the replay files hold no I/O: nothing to replay");
	for (unsigned long it = 0; nthreads && it < o.iterations; it++) {
		pthread_barrier_wait(&r.ready);
		clock_gettime(CLOCK_MONOTONIC, &r.t0);
		pthread_barrier_wait(&r.go);
	}
	for (size_t i = 0; i < r.ns; i++)
		if (r.s[i].started)
			pthread_join(r.s[i].th, NULL);
	failed = report(&r, now_ns() - start);
	pthread_barrier_destroy(&r.ready);
	pthread_barrier_destroy(&r.go);
	cleanup(&r);
	return failed ? 1 : 0;
}
