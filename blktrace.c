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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

#define BLKTRACE_VERSION "2.0.0"
#define MAX_CPUS 4096
#define MAX_DEVS 64
#define READER_NICE -10 /* the readers of the kernel's buffers */

enum backend { BACKEND_AUTO, BACKEND_RELAY, BACKEND_TRACEFS };

struct bt_opts {
	const char *devs[MAX_DEVS];
	int ndevs;
	uint64_t act_mask; /* 0 = all */
	unsigned int buf_kb;
	unsigned int nbuf;
	int buf_given; /* -b or -n given */
	const char *output; /* -o */
	const char *outdir; /* -D */
	const char *debugfs; /* -r */
	unsigned int stopwatch;
	int kill;
	int listen;
	const char *host;
	int port;
	int no_sendfile;
	enum backend backend;
};

/* Per device counters of one CPU (written by that CPU's thread only). */
struct bt_count {
	uint64_t events, bytes;
};

struct bt_run;

struct bt_cpu {
	struct bt_run *run;
	int k; /* index into run->cpus */
	int cpu;
	pthread_t th;
	int started;
	struct blk_output *out[MAX_DEVS]; /* this CPU's file of each device */
	int nfd[MAX_DEVS]; /* network client: connection of each device */
	struct bt_count cnt[MAX_DEVS];
	int err;
	char errmsg[512];
};

/* -o -: the CPUs' records merged in time order before they go to stdout */
struct bt_stdout {
	struct blk_output *out;
	struct blk_window *win;
	pthread_mutex_t mu;
	pthread_cond_t data, space; /* something to take / room to push */
	pthread_t th;
	int started;
	int pressure; /* a reader waits for room: take even what is not yet ordered */
	int readers_done; /* every reader has ended: take everything, then end */
	int err;
};

struct bt_run {
	struct bt_opts *o;
	struct blk_backend_dev devs[MAX_DEVS];
	int ndevs;
	char outbase[MAX_DEVS][4096];
	int cpus[MAX_CPUS];
	int ncpus;
	struct bt_cpu *cpu;
	struct blk_backend_cfg cfg;
	const struct blk_backend_ops *ops;
	struct blk_backend *be;
	struct blk_backend_sink sink;
	struct bt_stdout so;
	int to_stdout;
	int net; /* network client (-h) */
	int draining; /* stop requested: read what is left, then end (atomic) */
	int reader_failed; /* a reader ended with an error (atomic) */
};

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

/* ---- outputs ---- */

static void file_path(struct bt_run *r, int dev, int cpu, char *buf, size_t len)
{
	snprintf(buf, len, "%s.blktrace.%d", r->outbase[dev], cpu);
}

/*
 * Before the kernel is touched: the output directory exists (-D is created) and each
 * file can be created there, so that a mistyped path fails with nothing to undo. The
 * files themselves are truncated only once tracing is set up (a busy device must not
 * cost the files of the trace that holds it).
 */
static void check_outputs(struct bt_run *r)
{
	char path[4200], dir[4200], *slash;
	struct stat st;

	if (r->to_stdout || r->net)
		return;
	if (r->o->outdir && mkdir(r->o->outdir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", r->o->outdir, strerror(errno));
	for (int i = 0; i < r->ndevs; i++) {
		const char *base = r->o->output ? r->o->output : r->devs[i].sysname;

		if (r->o->outdir)
			snprintf(r->outbase[i], sizeof(r->outbase[i]), "%s/%s", r->o->outdir, base);
		else
			snprintf(r->outbase[i], sizeof(r->outbase[i]), "%s", base);
		file_path(r, i, r->cpus[0], path, sizeof(path));
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		if (stat(dir, &st))
			die("cannot create '%s': %s", path, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			die("cannot create '%s': '%s' is not a directory", path, dir);
		if (access(dir, W_OK | X_OK))
			die("cannot create '%s': %s", path, strerror(errno));
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			die("cannot create '%s': %s", path, strerror(EISDIR));
	}
}

static int open_files(struct bt_run *r)
{
	char path[4200];
	int maxcpu = r->cpus[r->ncpus - 1];

	for (int i = 0; i < r->ndevs; i++) {
		/* offline CPUs get empty files, so that readers find every later CPU */
		for (int cpu = 0; cpu <= maxcpu; cpu++) {
			int k, fd;

			file_path(r, i, cpu, path, sizeof(path));
			for (k = 0; k < r->ncpus && r->cpus[k] != cpu; k++)
				;
			if (k == r->ncpus) {
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
				if (fd < 0)
					return error("cannot create '%s': %s", path,
						     strerror(errno));
				close(fd);
				continue;
			}
			r->cpu[k].out[i] = blk_output_open(path, 0);
			if (!r->cpu[k].out[i])
				return error("cannot create '%s': %s", path, strerror(errno));
		}
	}
	return 0;
}

/* ---- -o -: the ordering window and its writer ---- */

#define STDOUT_WINDOW (128u << 20) /* records held while waiting for the slowest CPU */
#define STDOUT_CHUNK (1u << 20)

static void *stdout_thread(void *arg)
{
	struct bt_run *r = arg;
	struct bt_stdout *so = &r->so;
	size_t cap = STDOUT_CHUNK + 64 + 65536;
	unsigned char *buf = malloc(cap);
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&so->mu);
	if (!buf)
		so->err = -ENOMEM;
	while (buf) {
		size_t n = blk_window_take(so->win, buf, STDOUT_CHUNK,
					   so->pressure || so->readers_done);
		struct timespec ts;

		if (n) {
			int ret;

			so->pressure = 0;
			pthread_cond_broadcast(&so->space);
			pthread_mutex_unlock(&so->mu);
			ret = blk_output_write(so->out, buf, n);
			if (!ret)
				ret = blk_output_flush(so->out);
			pthread_mutex_lock(&so->mu);
			if (ret && !so->err) {
				so->err = ret;
				/* a lost output ends the run (threads block signals: main gets it) */
				kill(getpid(), SIGTERM);
			}
			continue;
		}
		if (so->readers_done)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_nsec -= 1000000000L;
			ts.tv_sec++;
		}
		pthread_cond_timedwait(&so->data, &so->mu, &ts);
	}
	pthread_mutex_unlock(&so->mu);
	free(buf);
	return NULL;
}

static int stdout_open(struct bt_run *r)
{
	struct bt_stdout *so = &r->so;
	int ret;

	so->out = blk_output_fdopen(STDOUT_FILENO, "(stdout)", BLK_OUTPUT_NOCLOSE);
	so->win = blk_window_new(r->ncpus * r->ndevs, STDOUT_WINDOW);
	if (!so->out || !so->win)
		return error("out of memory");
	pthread_mutex_init(&so->mu, NULL);
	pthread_cond_init(&so->data, NULL);
	pthread_cond_init(&so->space, NULL);
	ret = pthread_create(&so->th, NULL, stdout_thread, r);
	if (ret)
		return error("cannot start the stdout writer: %s", strerror(ret));
	so->started = 1;
	return 0;
}

static int stdout_push(struct bt_run *r, int stream, const unsigned char *p, size_t n)
{
	struct bt_stdout *so = &r->so;
	int ret;

	pthread_mutex_lock(&so->mu);
	while ((ret = blk_window_push(so->win, stream, p, n)) == -ENOBUFS && !so->err) {
		so->pressure = 1;
		pthread_cond_signal(&so->data);
		pthread_cond_wait(&so->space, &so->mu);
	}
	if (!ret)
		pthread_cond_signal(&so->data);
	else if (so->err)
		ret = so->err;
	pthread_mutex_unlock(&so->mu);
	return ret;
}

/* After the readers ended: write what is held and end the writer. Return 0 or -errno. */
static int stdout_close(struct bt_run *r, uint64_t *late)
{
	struct bt_stdout *so = &r->so;
	int ret = 0;

	if (so->started) {
		pthread_mutex_lock(&so->mu);
		so->readers_done = 1;
		pthread_cond_signal(&so->data);
		pthread_mutex_unlock(&so->mu);
		pthread_join(so->th, NULL);
		ret = so->err;
		pthread_mutex_destroy(&so->mu);
		pthread_cond_destroy(&so->data);
		pthread_cond_destroy(&so->space);
	}
	*late = so->win ? blk_window_late(so->win) : 0;
	if (so->out && blk_output_finish(so->out) && !ret)
		ret = -EIO;
	return ret;
}

/* ---- what the backend reads ---- */

static int on_records(void *ctx, int dev, int k, const unsigned char *p, size_t n,
		      unsigned long events)
{
	struct bt_cpu *c = ctx;
	struct bt_run *r = c->run;
	int ret;

	c->cnt[dev].events += events;
	c->cnt[dev].bytes += n;
	if (r->net) {
		ret = blk_net_send_data(c->nfd[dev], r->devs[dev].name, (uint32_t)c->cpu,
					(uint32_t)r->ncpus, p, n, r->o->buf_kb * 1024, r->o->nbuf);
		if (ret && !c->err)
			snprintf(c->errmsg, sizeof(c->errmsg), "sending to %s: %s", r->o->host,
				 strerror(-ret));
	} else if (r->to_stdout) {
		ret = stdout_push(r, k * r->ndevs + dev, p, n);
		if (ret && !c->err)
			snprintf(c->errmsg, sizeof(c->errmsg), "%s",
				 ret == -ENOMEM ? "out of memory for the stdout window"
						: blk_output_error(r->so.out));
	} else {
		ret = blk_output_write(c->out[dev], p, n);
		if (ret && !c->err)
			snprintf(c->errmsg, sizeof(c->errmsg), "%s", blk_output_error(c->out[dev]));
	}
	if (ret && !c->err)
		c->err = ret;
	return ret;
}

static void on_mark(void *ctx, int dev, int k, uint64_t time)
{
	struct bt_cpu *c = ctx;
	struct bt_run *r = c->run;

	if (!r->to_stdout)
		return;
	pthread_mutex_lock(&r->so.mu);
	blk_window_mark(r->so.win, k * r->ndevs + dev, time);
	pthread_cond_signal(&r->so.data);
	pthread_mutex_unlock(&r->so.mu);
}

/*
 * Run on the traced CPU, as the classic tracer does: a relay sub-buffer is then never read
 * while the kernel is still writing a record it reserved on that CPU (reading from another
 * CPU can copy a half-written record).
 */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *reader_thread(void *arg)
{
	struct bt_cpu *c = arg;
	struct bt_run *r = c->run;
	struct blk_backend_sink sink = {.records = on_records, .mark = on_mark, .ctx = c};
	char err[512];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pin_to_cpu(c->cpu);
	/*
	 * The kernel's buffers fill at the workload's pace whatever else runs: a busy machine
	 * must not starve their readers into drops (root only; without it, the usual priority)
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE);
	for (;;) {
		int draining = __atomic_load_n(&r->draining, __ATOMIC_ACQUIRE);
		int ret = r->ops->read(r->be, c->k, draining ? 0 : (r->to_stdout ? 50 : 200), &sink,
				       err, sizeof(err));

		if (ret < 0) {
			if (!c->err) {
				c->err = ret;
				snprintf(c->errmsg, sizeof(c->errmsg), "%s", err);
			}
			__atomic_store_n(&r->reader_failed, 1, __ATOMIC_RELEASE);
			/* the threads block signals: the main thread gets it */
			kill(getpid(), SIGTERM);
			break;
		}
		if (draining && ret == 0)
			break;
	}
	return NULL;
}

/* ---- the summary ---- */

static void print_summary(struct bt_run *r, FILE *f, uint64_t late)
{
	uint64_t all_events = 0, all_lost = 0;

	for (int i = 0; i < r->ndevs; i++) {
		uint64_t ev = 0, bytes = 0, lost = 0, skipped = 0;

		fprintf(f, "=== %s ===\n", r->devs[i].name);
		for (int k = 0; k < r->ncpus; k++) {
			struct bt_count *cnt = &r->cpu[k].cnt[i];

			fprintf(f, "  CPU%3d: %20llu events, %8llu KiB data\n", r->cpus[k],
				(unsigned long long)cnt->events,
				(unsigned long long)((cnt->bytes + 1023) / 1024));
			ev += cnt->events;
			bytes += cnt->bytes;
			if (r->be) {
				lost += r->ops->lost(r->be, i, k);
				skipped += r->ops->skipped(r->be, i, k);
			}
		}
		fprintf(f, "  Total:  %20llu events (dropped %llu), %8llu KiB data\n",
			(unsigned long long)ev, (unsigned long long)lost,
			(unsigned long long)((bytes + 1023) / 1024));
		if (skipped)
			warning("%llu bytes of the kernel's stream of %s were not records and were skipped",
				(unsigned long long)skipped, r->devs[i].name);
		all_events += ev;
		all_lost += lost;
	}
	if (late)
		warning("%llu records reached stdout out of time order (the ordering window was full while a CPU lagged)",
			(unsigned long long)late);
	if (all_lost) {
		fprintf(stderr, "You have %llu (%5.1f%%) dropped events\n",
			(unsigned long long)all_lost,
			100.0 * (double)all_lost / (double)(all_events + all_lost));
		fprintf(stderr,
			"Consider using a larger buffer size (-b) and/or more buffers (-n)\n");
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
	for (int i = 0; i < ndevs; i++) {
		if (!ret) {
			/* a relay trace (BLKTRACESETUP) */
			int r1 = blk_relay_stop(devs[i].fd), r2 = blk_relay_teardown(devs[i].fd);

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
	return failed;
}

/* ---- network client ---- */

/* -h: a connection per device per CPU (-s: one per CPU), each stream opened. */
static int net_open(struct bt_run *r)
{
	char err[512];

	fprintf(stderr, "%s: connecting to %s\n", progname(), r->o->host);
	for (int k = 0; k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];
		int shared = -1;

		for (int i = 0; i < r->ndevs; i++) {
			int fd = shared;

			if (fd < 0) {
				fd = blk_net_connect(r->o->host, r->o->port, err, sizeof(err));
				if (fd < 0)
					return error("%s", err);
			}
			if (r->o->no_sendfile)
				shared = fd;
			c->nfd[i] = fd;
			if (blk_net_send_hdr(fd, r->devs[i].name, (uint32_t)c->cpu,
					     (uint32_t)r->ncpus, BLK_NET_OPEN, r->o->buf_kb * 1024,
					     r->o->nbuf))
				return error(
					"the server at %s did not accept the stream of %s, CPU %d",
					r->o->host, r->devs[i].name, c->cpu);
		}
	}
	fprintf(stderr, "%s: connected!\n", progname());
	return 0;
}

static int net_close(struct bt_run *r)
{
	int failed = 0;

	for (int k = 0; k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];

		for (int i = 0; i < r->ndevs; i++) {
			uint64_t drops = 0;

			for (int q = 0; r->be && q < r->ncpus; q++)
				drops += r->ops->lost(r->be, i, q);
			if (c->nfd[i] < 0)
				continue;
			if (blk_net_send_hdr(c->nfd[i], r->devs[i].name, (uint32_t)drops,
					     (uint32_t)r->ncpus, BLK_NET_CLOSE, r->o->buf_kb * 1024,
					     r->o->nbuf)) {
				error("closing the stream of %s, CPU %d with %s failed",
				      r->devs[i].name, c->cpu, r->o->host);
				failed = 1;
			}
			if (!r->o->no_sendfile || i == r->ndevs - 1)
				close(c->nfd[i]);
			c->nfd[i] = -1;
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

/* ---- the run ---- */

/* Choose and set up a backend (relay, else tracefs under --backend=auto). Return 0 or -1. */
static int setup_backend(struct bt_run *r)
{
	char why[1024] = "", err[1024] = "";
	int e;

	r->cfg = (struct blk_backend_cfg){
		.devs = r->devs,
		.ndevs = r->ndevs,
		.cpus = r->cpus,
		.ncpus = r->ncpus,
		.act_mask = r->o->act_mask,
		.buf_kb = r->o->buf_kb,
		.nbuf = r->o->nbuf,
		.buf_default = !r->o->buf_given,
		.debugfs = r->o->debugfs,
	};
	if (r->o->backend != BACKEND_TRACEFS) {
		r->ops = &blk_backend_relay;
		r->be = r->ops->open(&r->cfg, why, sizeof(why));
		if (r->be)
			return 0;
		e = errno;
		if (r->o->backend == BACKEND_RELAY || e == EBUSY)
			return error("%s", why);
	}
	r->ops = &blk_backend_tracefs;
	r->be = r->ops->open(&r->cfg, err, sizeof(err));
	if (!r->be) {
		e = errno;
		error("cannot trace through tracefs: %s", err);
		if (e == EBUSY && strstr(err, "blk tracer"))
			hint("'blktrace -k -d DEV' stops a running trace or resets a blk tracer left set up by a killed blktrace");
		if (why[0])
			hint("the relay path failed too: %s", why);
		return -1;
	}
	fprintf(stderr, "%s: using the tracefs blk tracer (%s)\n", progname(),
		why[0] ? why : "--backend=tracefs");
	return 0;
}

/* Wait for a signal, the stopwatch or a device turned off from outside. Return 0 or -1. */
static int wait_for_end(struct bt_run *r, const sigset_t *unblocked)
{
	struct timespec tick = {.tv_sec = 0, .tv_nsec = 250 * 1000000L}, now, end;
	char msg[1024];

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += r->o->stopwatch;
	while (!stop_requested) {
		int ret;

		ppoll(NULL, 0, &tick, unblocked);
		if (stop_requested || __atomic_load_n(&r->reader_failed, __ATOMIC_ACQUIRE))
			break;
		ret = r->ops->tick(r->be, msg, sizeof(msg));
		if (ret == 1) {
			fprintf(stderr, "%s: %s\n", progname(), msg);
		} else if (ret == -ESHUTDOWN) {
			fprintf(stderr, "%s: %s\n", progname(), msg);
			break;
		} else if (ret < 0) {
			return error("%s", msg);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (r->o->stopwatch && (now.tv_sec > end.tv_sec ||
					(now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)))
			break;
	}
	return 0;
}

static int run(struct bt_run *r)
{
	struct sigaction sa;
	sigset_t mask, old;
	char err[1024];
	uint64_t late = 0;
	int failed = 0, ret;

	/* signals end the run: blocked except while the main thread waits */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);
	sigdelset(&old, SIGHUP);

	check_outputs(r);
	if (setup_backend(r))
		return 1;
	/* from here on every path goes through the teardown below */
	if (r->net)
		failed = net_open(r) < 0;
	else if (r->to_stdout)
		failed = stdout_open(r) < 0;
	else
		failed = open_files(r) < 0;
	for (int k = 0; !failed && k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];

		ret = pthread_create(&c->th, NULL, reader_thread, c);
		if (ret) {
			error("cannot start the thread of CPU %d: %s", c->cpu, strerror(ret));
			failed = 1;
			break;
		}
		c->started = 1;
	}
	if (!failed && r->ops->start(r->be, err, sizeof(err))) {
		error("%s", err);
		failed = 1;
	}
	if (!failed && !stop_requested && wait_for_end(r, &old))
		failed = 1;

	/* stop, drain, tear down: on every path */
	r->ops->stop(r->be);
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < r->ncpus; k++)
		if (r->cpu[k].started)
			pthread_join(r->cpu[k].th, NULL);
	if (r->to_stdout) {
		ret = stdout_close(r, &late);
		if (ret) {
			const char *e = r->so.out ? blk_output_error(r->so.out) : "";

			error("%s", e[0] ? e : strerror(-ret));
			failed = 1;
		}
	}
	if (r->net && net_close(r))
		failed = 1;
	for (int k = 0; k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];

		if (c->err) {
			error("%s", c->errmsg);
			failed = 1;
		}
		for (int i = 0; i < r->ndevs; i++) {
			if (c->out[i] && blk_output_finish(c->out[i]) && !c->err) {
				error("%s", blk_output_error(c->out[i]));
				failed = 1;
			}
		}
	}
	/* with -o - the statistics must not mix with the stream */
	print_summary(r, r->to_stdout ? stderr : stdout, late);
	ret = r->ops->close(r->be, err, sizeof(err));
	r->be = NULL;
	if (ret) {
		error("%s", err);
		failed = 1;
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct bt_opts o = {.buf_kb = 512, .nbuf = 4, .port = 8462};
	struct bt_run *r;
	int failed;

	set_progname(argv[0]);
	install_log_hook();
	parse_args(argc, argv, &o);
	if (o.kill)
		return kill_traces(&o);
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
	r->cpu = calloc((size_t)r->ncpus, sizeof(*r->cpu));
	if (!r->cpu)
		die("out of memory");
	for (int k = 0; k < r->ncpus; k++) {
		r->cpu[k].run = r;
		r->cpu[k].k = k;
		r->cpu[k].cpu = r->cpus[k];
		for (int i = 0; i < MAX_DEVS; i++)
			r->cpu[k].nfd[i] = -1;
	}
	open_devs(r);
	failed = run(r);
	for (int k = 0; k < r->ncpus; k++)
		for (int i = 0; i < r->ndevs; i++)
			blk_output_free(r->cpu[k].out[i]);
	blk_output_free(r->so.out);
	blk_window_free(r->so.win);
	for (int i = 0; i < r->ndevs; i++)
		close(r->devs[i].fd);
	free(r->cpu);
	free(r);
	return failed ? 1 : 0;
}
