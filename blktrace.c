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
#include "blk/kernel.h"
#include "blk/net.h"
#include "blk/output.h"
#include "blk/trace.h"

#define BLKTRACE_VERSION "2.0.0"
#define MAX_CPUS 4096
#define MAX_DEVS 64

enum backend { BACKEND_AUTO, BACKEND_RELAY, BACKEND_TRACEFS };

struct bt_opts {
	const char *devs[MAX_DEVS];
	int ndevs;
	uint64_t act_mask; /* 0 = all */
	unsigned int buf_kb;
	unsigned int nbuf;
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

/* Per device, per CPU counters (written by that CPU's thread only). */
struct bt_count {
	uint64_t events, bytes;
	uint64_t lost;
};

struct bt_dev {
	const char *path;
	int fd;
	uint32_t devno; /* kernel encoding, as in records */
	char sysname[64]; /* block name in sysfs (loop0, sda1) */
	char name[64]; /* kernel trace name (relay) */
	char outbase[4096]; /* output file base (dir/name) */
	int set_up; /* relay set up (needs teardown) */
	int started;
	long long dropped;
	struct bt_count cnt[MAX_CPUS];
};

struct bt_run;

struct bt_cpu {
	struct bt_run *run;
	int cpu;
	pthread_t th;
	int started;
	struct blk_output *out[MAX_DEVS]; /* this CPU's file of each device */
	int rfd[MAX_DEVS]; /* relay: traceN of each device */
	int tfd; /* tracefs: trace_pipe */
	int nfd[MAX_DEVS]; /* network client: connection of each device */
	unsigned char *buf;
	size_t buflen, bufcap;
	uint32_t seq[MAX_DEVS];
	uint32_t *pids[MAX_DEVS]; /* pids announced (tracefs) */
	size_t npids[MAX_DEVS], pidcap[MAX_DEVS];
	unsigned char *carry[MAX_DEVS]; /* relay: partial record between reads */
	size_t ncarry[MAX_DEVS];
	int err;
	char errmsg[512];
};

struct bt_run {
	struct bt_opts *o;
	struct bt_dev devs[MAX_DEVS];
	int ndevs;
	enum backend backend;
	char debugfs[4096];
	char tracefs[4096];
	struct blk_tfs *tfs;
	int cpus[MAX_CPUS];
	int ncpus;
	struct bt_cpu *cpu;
	struct blk_output *stdout_out; /* -o - */
	int net; /* network client (-h) */
	pthread_mutex_t stdout_mu;
	volatile int draining; /* stop requested: read what is left, then end */
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
			break;
		case 'n':
			o->nbuf = (unsigned int)parse_opt_num(optarg, "-n", 1, 65536);
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

static void dev_sysname(struct bt_dev *d, struct stat *st)
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
		struct bt_dev *d = &r->devs[i];
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

static void set_outbase(struct bt_run *r, struct bt_dev *d)
{
	const char *base = r->o->output && strcmp(r->o->output, "-") ? r->o->output : d->name;

	if (r->o->outdir)
		snprintf(d->outbase, sizeof(d->outbase), "%s/%s", r->o->outdir, base);
	else
		snprintf(d->outbase, sizeof(d->outbase), "%s", base);
}

/* ---- writing ---- */

static int emit(struct bt_cpu *c, int dev, const void *p, size_t n)
{
	struct bt_run *r = c->run;
	int ret;

	if (r->net) {
		ret = blk_net_send_data(c->nfd[dev], r->devs[dev].name, (uint32_t)c->cpu,
					(uint32_t)r->ncpus, p, n, r->o->buf_kb * 1024, r->o->nbuf);
		if (ret && !c->err) {
			c->err = ret;
			snprintf(c->errmsg, sizeof(c->errmsg), "sending to %s: %s", r->o->host,
				 strerror(-ret));
			kill(getpid(), SIGTERM);
		}
		return ret;
	}
	if (r->stdout_out) {
		pthread_mutex_lock(&r->stdout_mu);
		ret = blk_output_write(r->stdout_out, p, n);
		pthread_mutex_unlock(&r->stdout_mu);
	} else {
		ret = blk_output_write(c->out[dev], p, n);
	}
	if (ret && !c->err) {
		c->err = ret;
		snprintf(c->errmsg, sizeof(c->errmsg), "%s",
			 blk_output_error(r->stdout_out ? r->stdout_out : c->out[dev]));
		/* a lost output ends the run (the threads block signals: main gets it) */
		kill(getpid(), SIGTERM);
	}
	return ret;
}

static int emit_event(struct bt_cpu *c, int dev, const struct blk_event *ev)
{
	unsigned char buf[64 + 65536];
	size_t n = blk_event_encode(ev, buf);

	c->run->devs[dev].cnt[c->cpu].events++;
	c->run->devs[dev].cnt[c->cpu].bytes += n;
	return emit(c, dev, buf, n);
}

/* ---- relay backend ---- */

/* Count whole records of @dev's stream and pass complete ones on. */
static void relay_data(struct bt_cpu *c, int dev, const unsigned char *p, size_t n)
{
	struct bt_count *cnt = &c->run->devs[dev].cnt[c->cpu];
	unsigned char *cb = c->carry[dev];
	size_t have = c->ncarry[dev], off = 0, start = 0;
	unsigned char *all;

	/* join the carried partial record with the new bytes (a buffer kept per thread) */
	if (c->bufcap < have + n) {
		unsigned char *nb = realloc(c->buf, have + n);

		if (!nb)
			return;
		c->buf = nb;
		c->bufcap = have + n;
	}
	all = c->buf;
	if (have)
		memcpy(all, cb, have);
	memcpy(all + have, p, n);
	n += have;
	while (off + sizeof(struct blk_io_trace) <= n) {
		struct blk_io_trace t;
		size_t len;

		memcpy(&t, all + off, sizeof(t));
		if ((t.magic & BLK_IO_TRACE_MAGIC_MASK) != BLK_IO_TRACE_MAGIC) {
			/* not a record boundary: pass the rest through unchanged */
			off = n;
			break;
		}
		len = ((t.magic & 0xff) == BLK_IO_TRACE2_VERSION ? sizeof(struct blk_io_trace2)
								 : sizeof(t));
		if (len == sizeof(struct blk_io_trace2)) {
			struct blk_io_trace2 t2;

			if (off + len > n)
				break;
			memcpy(&t2, all + off, sizeof(t2));
			len += t2.pdu_len;
		} else {
			len += t.pdu_len;
		}
		if (off + len > n)
			break;
		off += len;
		/* notes (process names, timestamps, messages) are not I/O events */
		if (!(t.action & BLK_TC_ACT(BLK_TC_NOTIFY)))
			cnt->events++;
	}
	if (off > start) {
		emit(c, dev, all + start, off - start);
		cnt->bytes += off - start;
	}
	/* keep the partial record for the next read */
	free(cb);
	c->carry[dev] = NULL;
	c->ncarry[dev] = n - off;
	if (n > off) {
		c->carry[dev] = malloc(n - off);
		if (c->carry[dev])
			memcpy(c->carry[dev], all + off, n - off);
		else
			c->ncarry[dev] = 0;
	}
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

static void *relay_thread(void *arg)
{
	struct bt_cpu *c = arg;
	struct bt_run *r = c->run;
	struct pollfd pfd[MAX_DEVS];
	size_t bufsz = (size_t)r->o->buf_kb * 1024;
	unsigned char *buf = malloc(bufsz);
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pin_to_cpu(c->cpu);
	if (!buf)
		return NULL;
	for (;;) {
		int draining = __atomic_load_n(&r->draining, __ATOMIC_ACQUIRE), got = 0;

		for (int i = 0; i < r->ndevs; i++) {
			pfd[i].fd = c->rfd[i];
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (!draining)
			poll(pfd, (nfds_t)r->ndevs, r->stdout_out ? 50 : 200);
		for (int i = 0; i < r->ndevs; i++) {
			ssize_t n;

			if (!draining && !(pfd[i].revents & POLLIN))
				continue;
			n = read(c->rfd[i], buf, bufsz);
			if (n > 0) {
				relay_data(c, i, buf, (size_t)n);
				got = 1;
			}
		}
		if (draining && !got)
			break;
	}
	free(buf);
	return NULL;
}

static int relay_setup_all(struct bt_run *r, char *why, size_t whylen)
{
	struct blk_relay_setup s;
	char path[4400];
	int ret, fd;

	ret = blk_find_debugfs(r->o->debugfs, 1, r->debugfs, sizeof(r->debugfs));
	if (ret) {
		snprintf(why, whylen, "debugfs is not mounted%s%s (%s)",
			 r->o->debugfs ? " at " : "", r->o->debugfs ? r->o->debugfs : "",
			 strerror(-ret));
		return ret;
	}
	for (int i = 0; i < r->ndevs; i++) {
		struct bt_dev *d = &r->devs[i];

		memset(&s, 0, sizeof(s));
		s.act_mask = r->o->act_mask;
		s.buf_size = r->o->buf_kb * 1024;
		s.buf_nr = r->o->nbuf;
		ret = blk_relay_setup(d->fd, &s);
		if (ret) {
			if (ret == -EBUSY)
				snprintf(
					why, whylen,
					"'%s' is already being traced (BLKTRACESETUP: %s); 'blktrace -k -d %s' stops a left-over trace",
					d->path, strerror(-ret), d->path);
			else
				snprintf(why, whylen, "BLKTRACESETUP on '%s' failed: %s", d->path,
					 strerror(-ret));
			return ret;
		}
		d->set_up = 1;
		snprintf(d->name, sizeof(d->name), "%s", s.name);
	}
	/* lockdown shows here: the relay files exist but cannot be opened */
	snprintf(path, sizeof(path), "%s/block/%s/trace%d", r->debugfs, r->devs[0].name,
		 r->cpus[0]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "cannot open '%s': %s%s", path, strerror(-ret),
			 ret == -EPERM ? " (kernel lockdown forbids relay files)" : "");
		return ret;
	}
	close(fd);
	return 0;
}

static void relay_teardown_all(struct bt_run *r)
{
	for (int i = 0; i < r->ndevs; i++) {
		struct bt_dev *d = &r->devs[i];

		if (!d->set_up)
			continue;
		blk_relay_stop(d->fd);
		blk_relay_teardown(d->fd);
		d->set_up = 0;
	}
}

static int relay_open_cpu(struct bt_run *r, struct bt_cpu *c)
{
	char path[4400];

	for (int i = 0; i < r->ndevs; i++) {
		snprintf(path, sizeof(path), "%s/block/%s/trace%d", r->debugfs, r->devs[i].name,
			 c->cpu);
		c->rfd[i] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (c->rfd[i] < 0)
			return error("cannot open '%s': %s", path, strerror(errno));
	}
	return 0;
}

/* ---- tracefs backend ---- */

static int dev_index(struct bt_run *r, uint32_t devno)
{
	for (int i = 0; i < r->ndevs; i++)
		if (r->devs[i].devno == devno)
			return i;
	return -1;
}

static int pid_seen(struct bt_cpu *c, int dev, uint32_t pid)
{
	for (size_t i = 0; i < c->npids[dev]; i++)
		if (c->pids[dev][i] == pid)
			return 1;
	if (c->npids[dev] == c->pidcap[dev]) {
		size_t nc = c->pidcap[dev] ? c->pidcap[dev] * 2 : 64;
		uint32_t *n = realloc(c->pids[dev], nc * sizeof(*n));

		if (!n)
			return 1;
		c->pids[dev] = n;
		c->pidcap[dev] = nc;
	}
	c->pids[dev][c->npids[dev]++] = pid;
	return 0;
}

/* The process note the kernel writes the first time a task is seen. */
static void announce(struct bt_cpu *c, int dev, const struct blk_event *ev)
{
	char comm[64] = "", path[64];
	unsigned char pdu[16];
	struct blk_event n = *ev;
	FILE *f;

	if (!blk_tfs_comm(c->run->tfs, ev->pid, comm, sizeof(comm))) {
		if (ev->pid == 0) {
			snprintf(comm, sizeof(comm), "swapper/%d", c->cpu);
		} else {
			snprintf(path, sizeof(path), "/proc/%u/comm", ev->pid);
			f = fopen(path, "re");
			if (!f || !fgets(comm, sizeof(comm), f))
				snprintf(comm, sizeof(comm), "unknown");
			if (f)
				fclose(f);
			comm[strcspn(comm, "\n")] = '\0';
		}
	}
	memset(pdu, 0, sizeof(pdu));
	memcpy(pdu, comm, strnlen(comm, 15));
	n.action = BLK_TN_ACTION(BLK_TN_PROCESS);
	n.sequence = 0;
	n.sector = 0;
	n.bytes = 0;
	n.error = 0;
	n.pdu = pdu;
	n.pdu_len = sizeof(pdu);
	n.version = BLK_IO_TRACE_VERSION;
	emit_event(c, dev, &n);
	c->run->devs[dev].cnt[c->cpu].events--; /* notes are not events in the summary */
}

/* Turn the records of one trace_pipe read into classic per-CPU records. */
static size_t tfs_convert(struct bt_cpu *c, const unsigned char *p, size_t n)
{
	size_t off = 0;

	while (off + sizeof(struct blk_tfs_ent) + sizeof(struct blk_io_trace) <= n) {
		struct blk_io_trace t;
		struct blk_event ev;
		size_t len;
		int dev;

		memcpy(&t, p + off + sizeof(struct blk_tfs_ent), sizeof(t));
		len = sizeof(struct blk_tfs_ent) + sizeof(t) + t.pdu_len;
		if ((t.magic & BLK_IO_TRACE_MAGIC_MASK) != BLK_IO_TRACE_MAGIC) {
			/* not ours (or out of step): skip what is left of this read */
			return n;
		}
		if (off + len > n)
			break;
		dev = dev_index(c->run, t.device);
		if (dev >= 0) {
			memset(&ev, 0, sizeof(ev));
			ev.time = t.time;
			ev.sector = t.sector;
			ev.bytes = t.bytes;
			ev.action = t.action;
			ev.pid = t.pid;
			ev.device = t.device;
			ev.cpu = (uint32_t)c->cpu;
			ev.error = t.error;
			ev.pdu_len = t.pdu_len;
			ev.pdu = p + off + sizeof(struct blk_tfs_ent) + sizeof(t);
			ev.version = BLK_IO_TRACE_VERSION;
			if (!blk_event_is_notify(&ev)) {
				if (!pid_seen(c, dev, ev.pid))
					announce(c, dev, &ev);
				ev.sequence = ++c->seq[dev];
			}
			emit_event(c, dev, &ev);
		}
		off += len;
	}
	return off;
}

static void *tfs_thread(void *arg)
{
	struct bt_cpu *c = arg;
	struct bt_run *r = c->run;
	struct pollfd pfd;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pin_to_cpu(c->cpu);
	c->bufcap = 1 << 20;
	c->buf = malloc(c->bufcap);
	if (!c->buf)
		return NULL;
	for (;;) {
		int draining = __atomic_load_n(&r->draining, __ATOMIC_ACQUIRE);
		ssize_t n;
		size_t used;

		pfd.fd = c->tfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (!draining)
			poll(&pfd, 1, r->stdout_out ? 50 : 200);
		n = read(c->tfd, c->buf + c->buflen, c->bufcap - c->buflen);
		if (n <= 0) {
			if (draining && (n == 0 || errno == EAGAIN))
				break;
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(c->errmsg, sizeof(c->errmsg),
					 "reading trace_pipe of CPU %d: %s", c->cpu,
					 strerror(errno));
				c->err = -errno;
				break;
			}
			continue;
		}
		c->buflen += (size_t)n;
		used = tfs_convert(c, c->buf, c->buflen);
		memmove(c->buf, c->buf + used, c->buflen - used);
		c->buflen -= used;
	}
	return NULL;
}

/* The timestamp note the kernel writes when tracing starts: pairs wall and trace time. */
static void tfs_timestamp(struct bt_run *r)
{
	struct timespec mono, real;
	uint32_t w[2];
	struct blk_event ev;
	struct bt_cpu *c = &r->cpu[0];

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	w[0] = (uint32_t)real.tv_sec;
	w[1] = (uint32_t)real.tv_nsec;
	for (int i = 0; i < r->ndevs; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.time = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
		ev.action = BLK_TN_ACTION(BLK_TN_TIMESTAMP);
		ev.pid = (uint32_t)getpid();
		ev.device = r->devs[i].devno;
		ev.cpu = (uint32_t)c->cpu;
		ev.pdu = (const unsigned char *)w;
		ev.pdu_len = sizeof(w);
		ev.version = BLK_IO_TRACE_VERSION;
		emit_event(c, i, &ev);
		r->devs[i].cnt[c->cpu].events--;
	}
}

/* ---- the run ---- */

static void open_outputs(struct bt_run *r)
{
	char path[4200];
	int maxcpu = r->cpus[r->ncpus - 1];

	if (r->o->output && !strcmp(r->o->output, "-")) {
		r->stdout_out = blk_output_fdopen(STDOUT_FILENO, "(stdout)", BLK_OUTPUT_NOCLOSE);
		if (!r->stdout_out)
			die("out of memory");
		pthread_mutex_init(&r->stdout_mu, NULL);
		return;
	}
	if (r->o->outdir && mkdir(r->o->outdir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", r->o->outdir, strerror(errno));
	for (int i = 0; i < r->ndevs; i++) {
		set_outbase(r, &r->devs[i]);
		/* offline CPUs get empty files, so that readers find every later CPU */
		for (int cpu = 0; cpu <= maxcpu; cpu++) {
			int k, fd;

			snprintf(path, sizeof(path), "%s.blktrace.%d", r->devs[i].outbase, cpu);
			for (k = 0; k < r->ncpus && r->cpus[k] != cpu; k++)
				;
			if (k == r->ncpus) {
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
				if (fd < 0)
					die("cannot create '%s': %s", path, strerror(errno));
				close(fd);
				continue;
			}
			r->cpu[k].out[i] = blk_output_open(path, 0);
			if (!r->cpu[k].out[i])
				die("cannot create '%s': %s", path, strerror(errno));
		}
	}
}

static void print_summary(struct bt_run *r, FILE *f)
{
	uint64_t all_events = 0, all_lost = 0;

	for (int i = 0; i < r->ndevs; i++) {
		struct bt_dev *d = &r->devs[i];
		uint64_t ev = 0, bytes = 0, lost = 0;

		fprintf(f, "=== %s ===\n", d->name);
		for (int k = 0; k < r->ncpus; k++) {
			struct bt_count *cnt = &d->cnt[r->cpus[k]];

			fprintf(f, "  CPU%3d: %20llu events, %8llu KiB data\n", r->cpus[k],
				(unsigned long long)cnt->events,
				(unsigned long long)((cnt->bytes + 1023) / 1024));
			ev += cnt->events;
			bytes += cnt->bytes;
			lost += cnt->lost;
		}
		if (d->dropped > 0)
			lost += (uint64_t)d->dropped;
		fprintf(f, "  Total:  %20llu events (dropped %llu), %8llu KiB data\n",
			(unsigned long long)ev, (unsigned long long)lost,
			(unsigned long long)((bytes + 1023) / 1024));
		all_events += ev;
		all_lost += lost;
	}
	if (all_lost) {
		fprintf(stderr, "You have %llu (%5.1f%%) dropped events\n",
			(unsigned long long)all_lost,
			100.0 * (double)all_lost / (double)(all_events + all_lost));
		fprintf(stderr,
			"Consider using a larger buffer size (-b) and/or more buffers (-n)\n");
	}
}

static int kill_traces(struct bt_opts *o)
{
	const char *names[MAX_DEVS];
	char tdir[4096];
	int failed = 0, ndevs = 0;

	for (int i = 0; i < o->ndevs; i++) {
		int fd = open(o->devs[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC), r1, r2;

		if (fd < 0) {
			error("cannot open '%s': %s", o->devs[i], strerror(errno));
			failed = 1;
			continue;
		}
		r1 = blk_relay_stop(fd);
		r2 = blk_relay_teardown(fd);
		if (r2 && r2 != -EINVAL && r2 != -ENXIO) {
			error("BLKTRACETEARDOWN on '%s' failed: %s", o->devs[i], strerror(-r2));
			failed = 1;
		} else if (r1 == -EINVAL && r2) {
			fprintf(stderr, "%s: no trace was running on '%s'\n", progname(),
				o->devs[i]);
		}
		{
			struct bt_dev d = {.path = o->devs[i]};
			struct stat st;

			if (!fstat(fd, &st) && S_ISBLK(st.st_mode)) {
				dev_sysname(&d, &st);
				names[ndevs] = strdup(d.sysname);
				if (names[ndevs])
					ndevs++;
			}
		}
		close(fd);
	}
	/* a tracer killed while using tracefs leaves the blk tracer set up */
	if (ndevs && !blk_find_tracefs(0, tdir, sizeof(tdir))) {
		int r = blk_tfs_reset(tdir, names, ndevs);

		if (r < 0) {
			error("could not reset the blk tracer in '%s': %s", tdir, strerror(-r));
			failed = 1;
		} else if (r > 0) {
			fprintf(stderr, "%s: reset the tracefs blk tracer left set up in '%s'\n",
				progname(), tdir);
		}
	}
	for (int i = 0; i < ndevs; i++)
		free((char *)names[i]);
	return failed;
}

/* -h: a connection per device per CPU (-s: one per CPU), each stream opened. */
static void net_open(struct bt_run *r)
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
					die("%s", err);
			}
			if (r->o->no_sendfile)
				shared = fd;
			c->nfd[i] = fd;
			if (blk_net_send_hdr(fd, r->devs[i].name, (uint32_t)c->cpu,
					     (uint32_t)r->ncpus, BLK_NET_OPEN, r->o->buf_kb * 1024,
					     r->o->nbuf))
				die("the server at %s did not accept the stream of %s, CPU %d",
				    r->o->host, r->devs[i].name, c->cpu);
		}
	}
	fprintf(stderr, "%s: connected!\n", progname());
}

static int net_close(struct bt_run *r)
{
	int failed = 0;

	for (int k = 0; k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];

		for (int i = 0; i < r->ndevs; i++) {
			uint64_t drops = r->devs[i].dropped > 0 ? (uint64_t)r->devs[i].dropped : 0;

			for (int q = 0; q < r->ncpus; q++)
				drops += r->devs[i].cnt[r->cpus[q]].lost;
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
	struct bt_run *r;
	char why[1024] = "", err[1024] = "";
	struct sigaction sa;
	sigset_t mask;
	int failed = 0, ret;

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
	r->ncpus = blk_online_cpus(r->cpus, MAX_CPUS);
	if (r->ncpus <= 0)
		die("cannot read the online CPUs: %s", strerror(r->ncpus ? -r->ncpus : EIO));
	r->cpu = calloc((size_t)r->ncpus, sizeof(*r->cpu));
	if (!r->cpu)
		die("out of memory");
	for (int k = 0; k < r->ncpus; k++) {
		r->cpu[k].run = r;
		r->cpu[k].cpu = r->cpus[k];
		r->cpu[k].tfd = -1;
		for (int i = 0; i < MAX_DEVS; i++)
			r->cpu[k].rfd[i] = r->cpu[k].nfd[i] = -1;
	}
	open_devs(r);

	/* signals end the run; the threads block them */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	r->backend = o.backend;
	if (r->backend != BACKEND_TRACEFS) {
		ret = relay_setup_all(r, why, sizeof(why));
		if (ret) {
			relay_teardown_all(r);
			if (r->backend == BACKEND_RELAY || ret == -EBUSY) {
				error("%s", why);
				exit(1);
			}
			r->backend = BACKEND_TRACEFS;
		} else {
			r->backend = BACKEND_RELAY;
		}
	}
	if (r->backend == BACKEND_TRACEFS) {
		const char *names[MAX_DEVS];

		for (int i = 0; i < r->ndevs; i++)
			names[i] = r->devs[i].sysname;
		ret = blk_find_tracefs(1, r->tracefs, sizeof(r->tracefs));
		if (ret)
			die("relay path unusable (%s), and tracefs is not available: %s",
			    why[0] ? why : "not tried", strerror(-ret));
		r->tfs = blk_tfs_open(r->tracefs, names, r->ndevs, (uint32_t)o.act_mask,
				      o.buf_kb * o.nbuf, err, sizeof(err));
		if (!r->tfs) {
			int e = errno;

			error("cannot trace through tracefs: %s", err);
			if (e == EBUSY && strstr(err, "blk tracer"))
				hint("'blktrace -k -d DEV' resets a blk tracer left set up by a killed blktrace");
			if (why[0])
				hint("the relay path failed too: %s", why);
			exit(1);
		}
		fprintf(stderr, "%s: using the tracefs blk tracer (%s)\n", progname(),
			why[0] ? why : "--backend=tracefs");
	}
	if (o.host) {
		r->net = 1;
		net_open(r);
	} else {
		open_outputs(r);
	}

	if (r->backend == BACKEND_TRACEFS)
		/* before the threads start: they own the outputs afterwards */
		tfs_timestamp(r);
	for (int k = 0; k < r->ncpus; k++) {
		struct bt_cpu *c = &r->cpu[k];

		if (r->backend == BACKEND_RELAY) {
			if (relay_open_cpu(r, c)) {
				failed = 1;
				break;
			}
			ret = pthread_create(&c->th, NULL, relay_thread, c);
		} else {
			c->tfd = blk_tfs_open_cpu(r->tfs, c->cpu);
			if (c->tfd < 0) {
				error("cannot open trace_pipe of CPU %d: %s", c->cpu,
				      strerror(-c->tfd));
				failed = 1;
				break;
			}
			ret = pthread_create(&c->th, NULL, tfs_thread, c);
		}
		if (ret) {
			error("cannot start the thread of CPU %d: %s", c->cpu, strerror(ret));
			failed = 1;
			break;
		}
		c->started = 1;
	}

	if (!failed) {
		if (r->backend == BACKEND_RELAY) {
			for (int i = 0; i < r->ndevs; i++) {
				ret = blk_relay_start(r->devs[i].fd);
				if (ret) {
					error("BLKTRACESTART on '%s' failed: %s", r->devs[i].path,
					      strerror(-ret));
					failed = 1;
					break;
				}
				r->devs[i].started = 1;
			}
		} else {
			ret = blk_tfs_start(r->tfs);
			if (ret) {
				error("cannot start tracing: %s", strerror(-ret));
				failed = 1;
			}
		}
	}
	if (!failed) {
		if (o.stopwatch)
			alarm(o.stopwatch);
		sigemptyset(&mask);
		while (!stop_requested)
			sigsuspend(&mask);
	}

	/* stop, drain, tear down: on every path */
	if (r->backend == BACKEND_RELAY) {
		for (int i = 0; i < r->ndevs; i++)
			if (r->devs[i].started)
				blk_relay_stop(r->devs[i].fd);
	} else if (r->tfs) {
		blk_tfs_stop(r->tfs);
	}
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < r->ncpus; k++)
		if (r->cpu[k].started)
			pthread_join(r->cpu[k].th, NULL);
	if (r->backend == BACKEND_RELAY) {
		for (int i = 0; i < r->ndevs; i++)
			r->devs[i].dropped = blk_relay_dropped(r->debugfs, r->devs[i].name);
		for (int k = 0; k < r->ncpus; k++)
			for (int i = 0; i < r->ndevs; i++)
				if (r->cpu[k].rfd[i] >= 0)
					close(r->cpu[k].rfd[i]);
		relay_teardown_all(r);
	} else if (r->tfs) {
		for (int k = 0; k < r->ncpus; k++) {
			/* the ring buffer is shared by the devices: its losses count for each */
			unsigned long long lost = blk_tfs_lost(r->tfs, r->cpus[k]);

			for (int i = 0; i < r->ndevs; i++)
				r->devs[i].cnt[r->cpus[k]].lost = lost;
			if (r->cpu[k].tfd >= 0)
				close(r->cpu[k].tfd);
		}
		ret = blk_tfs_close(r->tfs);
		if (ret) {
			error("could not restore every tracefs setting: %s", strerror(-ret));
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
			if (c->out[i] && blk_output_finish(c->out[i])) {
				error("%s", blk_output_error(c->out[i]));
				failed = 1;
			}
			blk_output_free(c->out[i]);
			free(c->pids[i]);
			free(c->carry[i]);
		}
		free(c->buf);
	}
	if (r->stdout_out) {
		if (blk_output_finish(r->stdout_out)) {
			error("%s", blk_output_error(r->stdout_out));
			failed = 1;
		}
		blk_output_free(r->stdout_out);
	}
	if (!failed || r->backend) {
		/* with -o - the statistics must not mix with the stream */
		print_summary(r, r->stdout_out ? stderr : stdout);
	}
	for (int i = 0; i < r->ndevs; i++)
		close(r->devs[i].fd);
	free(r->cpu);
	free(r);
	return failed ? 1 : 0;
}
