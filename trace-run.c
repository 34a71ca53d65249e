// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace's run: every source (backend) the same way, with no backend-specific branch:
 * set up, one reader thread per CPU index (or one for a one_reader backend), the records
 * written per output stream and CPU, the run ended by a signal, the stopwatch or a
 * source, then stop, drain, summary and teardown in reverse order on every path.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "blk/devname.h"
#include "blk/frame.h"
#include "blk/net.h"
#include "trace-run.h"
#include "trace-stdout.h"

#define READER_NICE -10 /* the readers of the kernel's buffers */

static size_t slot(const struct bt_run *r, int i, int k)
{
	return (size_t)i * (size_t)r->ncpus + (size_t)k;
}

/* ---- outputs ---- */

static void file_path(const struct bt_src *s, int i, int cpu, char *buf, size_t len)
{
	snprintf(buf, len, "%s.blktrace.%d", s->outbase[i], cpu);
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
	struct bt_src *s = &r->src[0];
	struct stat st;

	if (r->to_stdout || r->net)
		return;
	if (r->o->outdir && mkdir(r->o->outdir, 0755) && errno != EEXIST)
		die("cannot create '%s': %s", r->o->outdir, strerror(errno));
	for (int i = 0; i < r->ndevs; i++) {
		const char *base = r->o->output ? r->o->output : r->devs[i].sysname;

		if (r->o->outdir)
			snprintf(s->outbase[i], sizeof(s->outbase[i]), "%s/%s", r->o->outdir, base);
		else
			snprintf(s->outbase[i], sizeof(s->outbase[i]), "%s", base);
		file_path(s, i, r->cpus[0], path, sizeof(path));
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
		if (i == 0)
			snprintf(r->spool_dir, sizeof(r->spool_dir), "%s", dir);
	}
}

static int open_files(struct bt_run *r, struct bt_src *s)
{
	char path[4200];
	int maxcpu = r->cpus[r->ncpus - 1];

	for (int i = 0; i < s->nout; i++) {
		/* offline CPUs get empty files, so that readers find every later CPU */
		for (int cpu = 0; cpu <= maxcpu; cpu++) {
			int k, fd;

			file_path(s, i, cpu, path, sizeof(path));
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
			s->out[slot(r, i, k)] = blk_output_open(path, 0);
			if (!s->out[slot(r, i, k)])
				return error("cannot create '%s': %s", path, strerror(errno));
		}
	}
	return 0;
}

/*
 * After @s's file for output @i, CPU @cpu failed (a full disk): count what the file holds,
 * whole records only, into *@cnt, and cut off a partial record at its end so that the file
 * reads cleanly. The events are counted as the backends count them: the records that are
 * not notes, or every record for a source whose records are all its own notes (--iowait's
 * waits, s->ops->unit). Return 0 or -errno.
 */
static int count_written(const struct bt_src *s, int i, int cpu, struct bt_count *cnt)
{
	size_t cap = 1u << 20, len = 0;
	unsigned char *buf = malloc(cap);
	uint64_t events = 0, good = 0;
	char path[4200];
	int fd, swapped = -1, ret = 0, eof = 0;

	file_path(s, i, cpu, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!buf || fd < 0) {
		ret = buf ? -errno : -ENOMEM;
		goto out;
	}
	while (!eof) {
		ssize_t n = read(fd, buf + len, cap - len);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		eof = n == 0;
		len += (size_t)n;
		for (;;) {
			struct blk_event ev;
			long rl = blk_frame(buf + off, len - off, &swapped, &ev);

			if (rl < 0)
				eof = 1; /* not a record: what follows is not counted */
			if (rl <= 0)
				break;
			if (s->ops->unit || !blk_event_is_notify(&ev))
				events++;
			off += (size_t)rl;
			good += (uint64_t)rl;
		}
		memmove(buf, buf + off, len - off);
		len -= off;
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap * 2);

			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (ftruncate(fd, (off_t)good))
		ret = -errno;
	cnt->unwritten = cnt->events > events ? cnt->events - events : 0;
	cnt->events = events;
	cnt->bytes = good;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* ---- what the backends read ---- */

/* @n bytes of whole records of output @i, CPU index @k, to where the run writes them */
static int put_records(struct bt_reader *rd, int i, int k, const unsigned char *p, size_t n)
{
	struct bt_src *s = rd->src;
	struct bt_run *r = rd->run;
	size_t x = slot(r, i, k);
	int ret;

	s->cnt[x].bytes += n;
	if (r->net) {
		ret = blk_net_send_data(s->nfd[x], s->name[i], (uint32_t)r->cpus[k],
					(uint32_t)r->ncpus, p, n, r->o->buf_kb * 1024, r->o->nbuf);
		if (ret && !rd->err)
			snprintf(rd->errmsg, sizeof(rd->errmsg), "sending to %s: %s", r->o->host,
				 strerror(-ret));
	} else if (r->to_stdout) {
		ret = trace_stdout_push(r, s->win_base + k * s->nout + i, p, n);
		if (ret && !rd->err)
			snprintf(rd->errmsg, sizeof(rd->errmsg), "%s",
				 ret == -ENOMEM ? "out of memory for the stdout window"
						: blk_output_error(r->so.out));
	} else {
		ret = blk_output_write(s->out[x], p, n);
		if (ret && !rd->err)
			snprintf(rd->errmsg, sizeof(rd->errmsg), "%s", blk_output_error(s->out[x]));
	}
	if (ret && !rd->err)
		rd->err = ret;
	return ret;
}

/*
 * Before the first records (@p) of a block device's stream: the note that names the
 * device (trace.h BLK_TN_DEVNAME), at the time of the first of them, so that the tools
 * can call the device by its name. Return 0 or -errno.
 */
static int put_devname(struct bt_reader *rd, int i, int k, const unsigned char *p, size_t n)
{
	struct bt_run *r = rd->run;
	unsigned char rec[sizeof(struct blk_io_trace2) + BLK_DEVNAME_MAX];
	struct blk_event first, note;
	int swapped = -1;

	if (blk_frame(p, n, &swapped, &first) <= 0 || swapped)
		return 0;
	blk_devname_encode(&note, r->devs[i].devno, rd->src->name[i], first.time,
			   (uint32_t)r->cpus[k]);
	return put_records(rd, i, k, rec, blk_event_encode(&note, rec));
}

static int on_records(void *ctx, int i, int k, const unsigned char *p, size_t n,
		      unsigned long events)
{
	struct bt_reader *rd = ctx;
	struct bt_src *s = rd->src;
	struct bt_count *cnt = &s->cnt[slot(rd->run, i, k)];
	int ret;

	cnt->events += events;
	if (s == &rd->run->src[0] && !cnt->named) {
		cnt->named = 1;
		ret = put_devname(rd, i, k, p, n);
		if (ret)
			return ret;
	}
	return put_records(rd, i, k, p, n);
}

static void on_mark(void *ctx, int i, int k, uint64_t time)
{
	struct bt_reader *rd = ctx;
	struct bt_run *r = rd->run;

	if (!r->to_stdout)
		return;
	trace_stdout_mark(r, rd->src->win_base + k * rd->src->nout + i, time);
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
	struct bt_reader *rd = arg;
	struct bt_run *r = rd->run;
	struct bt_src *s = rd->src;
	struct blk_backend_sink sink = {.records = on_records, .mark = on_mark, .ctx = rd};
	char err[512];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (!s->ops->one_reader)
		pin_to_cpu(rd->cpu);
	/*
	 * The kernel's buffers fill at the workload's pace whatever else runs: a busy machine
	 * must not starve their readers into drops (root only; without it, the usual priority)
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), READER_NICE);
	for (;;) {
		int draining = __atomic_load_n(&r->draining, __ATOMIC_ACQUIRE);
		int ret = s->ops->read(s->be, rd->k, draining ? 0 : (r->to_stdout ? 50 : 200),
				       &sink, err, sizeof(err));

		if (ret < 0) {
			if (!rd->err) {
				rd->err = ret;
				snprintf(rd->errmsg, sizeof(rd->errmsg), "%s", err);
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

	for (int j = 0; j < r->nsrc; j++) {
		struct bt_src *s = &r->src[j];
		const char *unit = s->ops->unit ? s->ops->unit : "events";
		char note[1024];

		if (!s->be)
			continue;

		for (int i = 0; i < s->nout; i++) {
			uint64_t ev = 0, bytes = 0, lost = 0, skipped = 0;

			fprintf(f, "=== %s ===\n", s->name[i]);
			for (int k = 0; k < r->ncpus; k++) {
				struct bt_count *cnt = &s->cnt[slot(r, i, k)];

				fprintf(f, "  CPU%3d: %20llu %s, %8llu KiB data\n", r->cpus[k],
					(unsigned long long)cnt->events, unit,
					(unsigned long long)((cnt->bytes + 1023) / 1024));
				ev += cnt->events;
				bytes += cnt->bytes;
				lost += s->ops->lost(s->be, i, k);
				skipped += s->ops->skipped(s->be, i, k);
			}
			fprintf(f, "  Total:  %20llu %s (%s %llu), %8llu KiB data\n",
				(unsigned long long)ev, unit, s->ops->unit ? "lost" : "dropped",
				(unsigned long long)lost,
				(unsigned long long)((bytes + 1023) / 1024));
			/* what was read from the kernel but is not in the files, and why */
			for (int k = 0; k < r->ncpus; k++) {
				struct bt_count *cnt = &s->cnt[slot(r, i, k)];

				if (cnt->failed)
					fprintf(f, "  Not written: %llu %s of CPU %d: %s\n",
						(unsigned long long)cnt->unwritten, unit,
						r->cpus[k],
						blk_output_error(s->out[slot(r, i, k)]));
			}
			if (skipped)
				warning("%llu bytes of the kernel's stream of %s were not records and were skipped",
					(unsigned long long)skipped, s->name[i]);
			if (s->ops->unit) {
				if (lost)
					warning("%llu %s of %s were lost (%s)",
						(unsigned long long)lost, s->ops->lost_unit,
						s->name[i], s->ops->lost_why);
				continue;
			}
			all_events += ev;
			all_lost += lost;
		}
		if (s->ops->report && s->ops->report(s->be, note, sizeof(note)))
			fprintf(f, "  %s\n", note);
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

/* ---- network client ---- */

/*
 * -h: a connection per stream (output and CPU); -s: one per CPU shared by the devices of
 * a block backend (a one_reader backend's streams, written by its own thread, keep their
 * own connections); each stream opened.
 */
static int net_open(struct bt_run *r)
{
	char err[512];

	fprintf(stderr, "%s: connecting to %s\n", progname(), r->o->host);
	for (int j = 0; j < r->nsrc; j++) {
		struct bt_src *s = &r->src[j];

		for (int k = 0; k < r->ncpus; k++) {
			int shared = -1;

			for (int i = 0; i < s->nout; i++) {
				int fd = shared;

				if (fd < 0) {
					fd = blk_net_connect(r->o->host, r->o->port, err,
							     sizeof(err));
					if (fd < 0)
						return error("%s", err);
				}
				if (r->o->no_sendfile && !s->ops->one_reader)
					shared = fd;
				s->nfd[slot(r, i, k)] = fd;
				if (blk_net_send_hdr(fd, s->name[i], (uint32_t)r->cpus[k],
						     (uint32_t)r->ncpus, BLK_NET_OPEN,
						     r->o->buf_kb * 1024, r->o->nbuf))
					return error(
						"the server at %s did not accept the stream of %s, CPU %d",
						r->o->host, s->name[i], r->cpus[k]);
			}
		}
	}
	fprintf(stderr, "%s: connected!\n", progname());
	return 0;
}

static int net_close(struct bt_run *r)
{
	int failed = 0;

	for (int j = 0; j < r->nsrc; j++) {
		struct bt_src *s = &r->src[j];

		for (int k = 0; k < r->ncpus; k++) {
			for (int i = 0; i < s->nout; i++) {
				size_t x = slot(r, i, k);
				uint64_t drops = 0;

				for (int q = 0; s->be && q < r->ncpus; q++)
					drops += s->ops->lost(s->be, i, q);
				if (s->nfd[x] < 0)
					continue;
				if (blk_net_send_hdr(s->nfd[x], s->name[i], (uint32_t)drops,
						     (uint32_t)r->ncpus, BLK_NET_CLOSE,
						     r->o->buf_kb * 1024, r->o->nbuf)) {
					error("closing the stream of %s, CPU %d with %s failed",
					      s->name[i], r->cpus[k], r->o->host);
					failed = 1;
				}
				if (!r->o->no_sendfile || s->ops->one_reader || i == s->nout - 1)
					close(s->nfd[x]);
				s->nfd[x] = -1;
			}
		}
	}
	return failed;
}

/* ---- the sources ---- */

/* The arrays of @s for @nout outputs. Return 0 or -1 (out of memory, reported). */
static int src_alloc(struct bt_run *r, struct bt_src *s, int nout)
{
	size_t n = (size_t)nout * (size_t)r->ncpus;

	s->nout = nout;
	s->out = calloc(n, sizeof(*s->out));
	s->cnt = calloc(n, sizeof(*s->cnt));
	s->nfd = malloc(n * sizeof(*s->nfd));
	if (!s->out || !s->cnt || !s->nfd)
		return error("out of memory");
	for (size_t x = 0; x < n; x++)
		s->nfd[x] = -1;
	return 0;
}

/* Choose and set up the block backend (relay, else tracefs under --backend=auto). */
static int setup_block(struct bt_run *r)
{
	struct bt_src *s = &r->src[0];
	char why[1024] = "", err[1024] = "";
	int e;

	s->cfg = (struct blk_backend_cfg){
		.devs = r->devs,
		.ndevs = r->ndevs,
		.cpus = r->cpus,
		.ncpus = r->ncpus,
		.act_mask = r->o->act_mask,
		.buf_kb = r->o->buf_kb,
		.nbuf = r->o->nbuf,
		.buf_default = !r->o->buf_given,
		.debugfs = r->o->debugfs,
		.spool_dir = r->spool_dir[0] ? r->spool_dir : NULL,
		.origin = r->o->origin,
	};
	if (r->o->backend != BACKEND_TRACEFS) {
		s->ops = &blk_backend_relay;
		s->be = s->ops->open(&s->cfg, why, sizeof(why));
		if (s->be) {
			if (s->ops->describe && s->ops->describe(s->be))
				fprintf(stderr, "%s: %s\n", progname(), s->ops->describe(s->be));
			return 0;
		}
		e = errno;
		if (r->o->backend == BACKEND_RELAY || e == EBUSY)
			return error("%s", why);
	}
	s->ops = &blk_backend_tracefs;
	s->be = s->ops->open(&s->cfg, err, sizeof(err));
	if (!s->be) {
		e = errno;
		error("cannot trace through tracefs: %s", err);
		if (e == EBUSY && strstr(err, "no process reads it"))
			hint("'blktrace -k -d DEV' puts back the tracefs settings a killed blktrace left");
		if (why[0])
			hint("the relay path failed too: %s", why);
		return -1;
	}
	fprintf(stderr, "%s: using the tracefs blk tracer (%s)\n", progname(),
		why[0] ? why : "--backend=tracefs");
	if (s->ops->describe && s->ops->describe(s->be))
		fprintf(stderr, "%s: %s\n", progname(), s->ops->describe(s->be));
	return 0;
}

/*
 * A side source beside the block backend, @ops with @cfg (kept in the source): @nout
 * outputs named after the first @nout block devices' (NAME@suffix). Return 0, or -1 said
 * (@what: what it failed to record, @remedy the hint).
 */
static int setup_side(struct bt_run *r, const struct blk_backend_ops *ops,
		      const struct blk_backend_cfg *cfg, const char *suffix, int nout,
		      const char *what, const char *remedy)
{
	struct bt_src *s = &r->src[r->nsrc];
	char err[2048] = "";

	s->cfg = *cfg;
	s->ops = ops;
	for (int i = 0; i < nout; i++) {
		/* (through a copy: at -O1 GCC cannot tell that r->src[0] is not *s) */
		char base[sizeof(s->outbase[i])];

		snprintf(base, sizeof(base), "%.56s%s", r->src[0].name[i], suffix);
		snprintf(s->name[i], sizeof(s->name[i]), "%s", base);
		snprintf(base, sizeof(base), "%.4088s%s", r->src[0].outbase[i], suffix);
		snprintf(s->outbase[i], sizeof(s->outbase[i]), "%s", base);
	}
	if (src_alloc(r, s, nout))
		return -1;
	r->nsrc++; /* freed by trace_run_release() whatever happens */
	s->be = s->ops->open(&s->cfg, err, sizeof(err));
	if (!s->be) {
		error("cannot record %s: %s", what, err);
		hint("%s", remedy);
		return -1;
	}
	fprintf(stderr, "%s: %s\n", progname(), s->ops->describe(s->be));
	return 0;
}

/*
 * --origin on the relay backend: the file-system events of the devices beside it, in an
 * output of their own per device, NAME.origin (the relay path's kernel records none).
 */
static int setup_fsside(struct bt_run *r)
{
	return setup_side(
		r, &blk_backend_fsside, &r->src[0].cfg, ".origin", r->ndevs,
		"--origin's files and dirtiers beside the relay files",
		"--backend=tracefs records them in the blk tracer's ring; without --origin the relay path traces as before");
}

/* --iowait: the I/O wait backend, its one output named after the first device's. */
static int setup_iowait(struct bt_run *r)
{
	struct blk_backend_cfg cfg = r->src[0].cfg;

	cfg.iowait_source = r->o->iowait;
	cfg.iowait_all = r->o->iowait_all;
	cfg.iowait_maxactive = r->o->iowait_maxactive;
	return setup_side(
		r, &blk_backend_iowait, &cfg, ".iowait", 1, "I/O waits",
		"--iowait=sched works on any kernel with the scheduler tracepoints; without --iowait the block events are traced alone");
}

/* Wait for a signal, the stopwatch or a source ended from outside. Return 0 or -1. */
static int wait_for_end(struct bt_run *r, const sigset_t *unblocked)
{
	struct timespec tick = {.tv_sec = 0, .tv_nsec = 250 * 1000000L}, now, end;
	char msg[1024];

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += r->o->stopwatch;
	while (!*r->stop) {
		int shut = 0;

		ppoll(NULL, 0, &tick, unblocked);
		if (*r->stop || __atomic_load_n(&r->reader_failed, __ATOMIC_ACQUIRE))
			break;
		for (int j = 0; j < r->nsrc && !shut; j++) {
			int ret = r->src[j].ops->tick(r->src[j].be, msg, sizeof(msg));

			if (ret == 1) {
				fprintf(stderr, "%s: %s\n", progname(), msg);
			} else if (ret == -ESHUTDOWN) {
				fprintf(stderr, "%s: %s\n", progname(), msg);
				shut = 1;
			} else if (ret < 0) {
				return error("%s", msg);
			}
		}
		if (shut)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (r->o->stopwatch && (now.tv_sec > end.tv_sec ||
					(now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)))
			break;
	}
	return 0;
}

static int start_readers(struct bt_run *r, struct bt_src *s)
{
	s->nreaders = s->ops->one_reader ? 1 : r->ncpus;
	s->rd = calloc((size_t)s->nreaders, sizeof(*s->rd));
	if (!s->rd)
		return error("out of memory");
	for (int k = 0; k < s->nreaders; k++) {
		struct bt_reader *rd = &s->rd[k];
		int ret;

		rd->run = r;
		rd->src = s;
		rd->k = k;
		rd->cpu = r->cpus[k];
		ret = pthread_create(&rd->th, NULL, reader_thread, rd);
		if (ret)
			return error("cannot start the reader of %s, CPU %d: %s", s->name[0],
				     rd->cpu, strerror(ret));
		rd->started = 1;
	}
	return 0;
}

/* a device's name into an output's (snprintf() here made gcc -O1 warn of overlap) */
static void copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memmove(dst, src, n);
	dst[n] = '\0';
}

int trace_run(struct bt_run *r)
{
	sigset_t mask, old;
	char err[1024];
	uint64_t late = 0;
	int failed = 0, ret;

	/* signals end the run: blocked except while the main thread waits */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);
	sigdelset(&old, SIGHUP);

	check_outputs(r);
	if (src_alloc(r, &r->src[0], r->ndevs))
		return 1;
	r->nsrc = 1;
	for (int i = 0; i < r->ndevs; i++)
		copy_name(r->src[0].name[i], sizeof(r->src[0].name[i]), r->devs[i].name);
	if (setup_block(r)) {
		r->src[0].be = NULL;
		return 1;
	}
	/* the relay backend learns the kernel's names of the devices at open */
	for (int i = 0; i < r->ndevs; i++)
		copy_name(r->src[0].name[i], sizeof(r->src[0].name[i]), r->devs[i].name);
	/* from here on every path goes through the teardown below */
	if (r->o->origin && r->src[0].ops == &blk_backend_relay && setup_fsside(r))
		failed = 1;
	if (!failed && r->o->iowait && setup_iowait(r))
		failed = 1;
	if (!failed) {
		if (r->net)
			failed = net_open(r) < 0;
		else if (r->to_stdout)
			failed = trace_stdout_open(r) < 0;
		for (int j = 0; !failed && !r->net && !r->to_stdout && j < r->nsrc; j++)
			failed = open_files(r, &r->src[j]) < 0;
	}
	for (int j = 0; !failed && j < r->nsrc; j++)
		failed = start_readers(r, &r->src[j]) < 0;
	for (int j = 0; !failed && j < r->nsrc; j++) {
		if (r->src[j].ops->start(r->src[j].be, err, sizeof(err))) {
			error("%s", err);
			failed = 1;
		}
	}
	if (!failed && !*r->stop && wait_for_end(r, &old))
		failed = 1;

	/* stop, drain, tear down: on every path */
	for (int j = 0; j < r->nsrc; j++)
		if (r->src[j].be)
			r->src[j].ops->stop(r->src[j].be);
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	for (int j = 0; j < r->nsrc; j++)
		for (int k = 0; k < r->src[j].nreaders; k++)
			if (r->src[j].rd[k].started)
				pthread_join(r->src[j].rd[k].th, NULL);
	if (r->to_stdout) {
		ret = trace_stdout_close(r, &late);
		if (ret) {
			const char *e = r->so.out ? blk_output_error(r->so.out) : "";

			error("%s", e[0] ? e : strerror(-ret));
			failed = 1;
		}
	}
	if (r->net && net_close(r))
		failed = 1;
	for (int j = 0; j < r->nsrc; j++) {
		struct bt_src *s = &r->src[j];

		for (int k = 0; k < s->nreaders; k++) {
			if (s->rd[k].err) {
				error("%s", s->rd[k].errmsg);
				failed = 1;
			}
		}
		for (size_t x = 0; x < (size_t)s->nout * (size_t)r->ncpus; x++) {
			/* the reader of the slot already said why its output failed */
			int rk = s->ops->one_reader ? 0 : (int)(x % (size_t)r->ncpus);

			if (s->out[x] && blk_output_finish(s->out[x]) &&
			    !(rk < s->nreaders && s->rd[rk].err)) {
				error("%s", blk_output_error(s->out[x]));
				failed = 1;
			}
			/* the summary counts what the file holds, and what it lost */
			if (s->out[x] && blk_output_error(s->out[x])[0]) {
				int i = (int)(x / (size_t)r->ncpus),
				    k = (int)(x % (size_t)r->ncpus);

				s->cnt[x].failed = 1;
				ret = count_written(s, i, r->cpus[k], &s->cnt[x]);
				if (ret) {
					file_path(s, i, r->cpus[k], err, sizeof(err));
					error("cannot count the records written to '%s': %s", err,
					      strerror(-ret));
				}
				failed = 1;
			}
		}
	}
	/* with -o - the statistics must not mix with the stream */
	print_summary(r, r->to_stdout ? stderr : stdout, late);
	for (int j = r->nsrc; j-- > 0;) {
		struct bt_src *s = &r->src[j];

		if (!s->be)
			continue;
		ret = s->ops->close(s->be, err, sizeof(err));
		s->be = NULL;
		if (ret) {
			error("%s", err);
			failed = 1;
		}
	}
	return failed;
}

void trace_run_release(struct bt_run *r)
{
	for (int j = 0; j < r->nsrc; j++) {
		struct bt_src *s = &r->src[j];

		for (size_t x = 0; s->out && x < (size_t)s->nout * (size_t)r->ncpus; x++)
			blk_output_free(s->out[x]);
		free(s->out);
		free(s->cnt);
		free(s->nfd);
		free(s->rd);
	}
	r->nsrc = 0;
	blk_output_free(r->so.out);
	blk_window_free(r->so.win);
}
