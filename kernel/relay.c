// SPDX-License-Identifier: GPL-2.0
/*
 * The classic relay interface: BLKTRACESETUP(2)/START/STOP/TEARDOWN on a block device,
 * per-CPU relay files and the dropped counter in debugfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/frame.h"
#include "blk/kernel.h"
#include "cgpath.h"
#include "holder.h"
#include "tfsconv.h"
#include "util.h"
#include "blk/trace.h"

#define BLKTRACESETUP _IOWR(0x12, BLKTRACESETUP_NR, struct blk_user_trace_setup)
#define BLKTRACESETUP2 _IOWR(0x12, BLKTRACESETUP2_NR, struct blk_user_trace_setup2)
#define BLKTRACESTART _IO(0x12, BLKTRACESTART_NR)
#define BLKTRACESTOP _IO(0x12, BLKTRACESTOP_NR)
#define BLKTRACETEARDOWN _IO(0x12, BLKTRACETEARDOWN_NR)

int blk_relay_setup(int fd, struct blk_relay_setup *s)
{
	struct blk_user_trace_setup2 v2;
	struct blk_user_trace_setup v1;

	memset(&v2, 0, sizeof(v2));
	v2.act_mask = s->act_mask ? s->act_mask : ~0ull;
	v2.buf_size = s->buf_size;
	v2.buf_nr = s->buf_nr;
	if (!ioctl(fd, BLKTRACESETUP2, &v2)) {
		snprintf(s->name, sizeof(s->name), "%s", v2.name);
		s->version = 2;
		return 0;
	}
	if (errno == EBUSY)
		return -EBUSY;
	memset(&v1, 0, sizeof(v1));
	v1.act_mask = (uint16_t)(s->act_mask ? s->act_mask : 0xffff);
	v1.buf_size = s->buf_size;
	v1.buf_nr = s->buf_nr;
	if (ioctl(fd, BLKTRACESETUP, &v1))
		return -errno;
	snprintf(s->name, sizeof(s->name), "%s", v1.name);
	s->version = 1;
	return 0;
}

int blk_relay_start(int fd)
{
	return ioctl(fd, BLKTRACESTART) ? -errno : 0;
}

int blk_relay_stop(int fd)
{
	return ioctl(fd, BLKTRACESTOP) ? -errno : 0;
}

int blk_relay_teardown(int fd)
{
	return ioctl(fd, BLKTRACETEARDOWN) ? -errno : 0;
}

long long blk_relay_dropped(const char *debugfs, const char *name)
{
	char path[KPATH_SUB], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/block/%s/dropped", debugfs, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return atoll(buf);
}

/* ---- the relay backend ---- */

/* one CPU's relay file of one device, and the partial record left from its last read */
struct relay_stream {
	int fd;
	unsigned char *buf;
	size_t len, cap;
	uint64_t skipped;
	int swapped;
	/* --origin: the cgroup ids out of the records, into notes (tfsconv.c, as for tracefs) */
	struct blk_tfsconv *cg;
};

struct relay_backend {
	struct blk_backend base;
	const struct blk_backend_cfg *cfg;
	char debugfs[KPATH_DIR];
	size_t bufsz; /* bytes per read() */
	struct relay_stream *st; /* [k * ndevs + dev] */
	int *set_up, *started;
	int *gone; /* torn down from outside (blktrace -k): the relay files are dead */
	long long *dropped;
	/* --origin: the blk tracer's blk_cgroup option (global: it tags the relay path's records too) */
	char tracefs[KPATH_DIR];
	char cg_was[16]; /* its value before, put back at close; "" if not set */
	struct blk_cgpath *paths; /* NULL: no hierarchy, ids by number */
	char what[512];
};

/* did someone else tear @dev's trace down? (its relay files leave debugfs) */
static int relay_gone(struct relay_backend *r, int dev)
{
	char path[KPATH];

	/* block/NAME itself stays with blk-mq's debugfs: the relay files go */
	snprintf(path, sizeof(path), "%s/block/%s/dropped", r->debugfs, r->cfg->devs[dev].name);
	return access(path, F_OK) && errno == ENOENT;
}

static struct relay_stream *rstream(struct relay_backend *r, int dev, int k)
{
	return &r->st[(size_t)k * (size_t)r->cfg->ndevs + (size_t)dev];
}

static const char *relay_cgpath(void *ctx, uint64_t id, char *buf, size_t len)
{
	return blk_cgpath_lookup(ctx, id, buf, len);
}

/*
 * --origin: read the blk tracer's blk_cgroup option under @tracefs into @was (@len bytes;
 * NULL: do not read it), then write @value. Return 0 or -errno.
 */
static int cg_option(const char *tracefs, const char *value, char *was, size_t len)
{
	char path[KPATH];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/options/blk_cgroup", tracefs);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (was) {
		n = read(fd, was, len - 1);
		if (n <= 0) {
			close(fd);
			return n < 0 ? -errno : -EIO;
		}
		was[n] = '\0';
		was[strcspn(was, "\n")] = '\0';
	}
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : n < 0 ? -errno : -EIO;
}

int blk_relay_cgroup_reset(const char *tracefs)
{
	char was[16];
	int ret;

	ret = cg_option(tracefs, "0", was, sizeof(was));
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	return atoi(was) != 0;
}

/*
 * --origin on the relay path: the kernel tags each record with its cgroup once the blk
 * tracer's blk_cgroup option is on (a global of the blk tracer, set through tracefs, which
 * the relay path reads too); each stream's converter takes the ids out into notes.
 */
static int relay_origin(struct relay_backend *r, char *err, size_t len)
{
	const struct blk_backend_cfg *cfg = r->cfg;
	char was[16];
	const char *root;
	int ret, v;

	ret = blk_find_tracefs(1, r->tracefs, sizeof(r->tracefs));
	if (ret) {
		kerr(err, len, "--origin needs tracefs for the blk tracer's blk_cgroup option: %s",
		     strerror(-ret));
		return ret;
	}
	ret = cg_option(r->tracefs, "1", was, sizeof(was));
	if (ret) {
		kerr(err, len,
		     "--origin needs the blk tracer's blk_cgroup option, but '%s/options/blk_cgroup' cannot be set: %s (a kernel without CONFIG_BLK_CGROUP?)",
		     r->tracefs, strerror(-ret));
		return ret;
	}
	snprintf(r->cg_was, sizeof(r->cg_was), "%s", was[0] ? was : "0");
	r->paths = blk_cgpath_new();
	for (int k = 0; k < cfg->ncpus; k++)
		for (int i = 0; i < cfg->ndevs; i++) {
			struct relay_stream *s = rstream(r, i, k);

			s->cg = blk_tfsconv_new(NULL, &cfg->devs[i].devno, 1,
						(uint32_t)cfg->cpus[k], NULL, NULL);
			if (s->cg && r->paths)
				blk_tfsconv_set_cgpath(s->cg, relay_cgpath, r->paths);
			if (!s->cg) {
				kerr(err, len, "out of memory");
				return -ENOMEM;
			}
		}
	root = r->paths ? blk_cgpath_root(r->paths, &v) : NULL;
	if (root)
		snprintf(
			r->what, sizeof(r->what),
			"--origin: the cgroup of each I/O, named from the cgroup v%d hierarchy at %s",
			v, root);
	else
		snprintf(
			r->what, sizeof(r->what),
			"--origin: the cgroup of each I/O, by id only (no cgroup hierarchy of the blkio/io controller is mounted)");
	return 0;
}

static int relay_close(struct blk_backend *b, char *err, size_t len)
{
	struct relay_backend *r = (struct relay_backend *)b;
	int ret = 0;

	if (!r)
		return 0;
	for (int k = 0; r->st && k < r->cfg->ncpus; k++)
		for (int i = 0; i < r->cfg->ndevs; i++) {
			struct relay_stream *s = rstream(r, i, k);

			if (s->fd >= 0)
				close(s->fd);
			free(s->buf);
			blk_tfsconv_free(s->cg);
		}
	for (int i = 0; r->set_up && i < r->cfg->ndevs; i++) {
		int e;

		if (!r->set_up[i] || r->gone[i])
			continue;
		blk_relay_stop(r->cfg->devs[i].fd);
		e = blk_relay_teardown(r->cfg->devs[i].fd);
		if (e && !ret) {
			ret = e;
			kerr(err, len, "BLKTRACETEARDOWN on '%s' failed: %s", r->cfg->devs[i].path,
			     strerror(-e));
		}
	}
	if (r->cg_was[0] && cg_option(r->tracefs, r->cg_was, NULL, 0) && !ret) {
		ret = -EIO;
		kerr(err, len,
		     "cannot put back '%s/options/blk_cgroup' (%s): 'blktrace -k' resets it",
		     r->tracefs, r->cg_was);
	}
	blk_cgpath_free(r->paths);
	free(r->st);
	free(r->set_up);
	free(r->started);
	free(r->gone);
	free(r->dropped);
	free(r);
	return ret;
}

static struct blk_backend *relay_open(const struct blk_backend_cfg *cfg, char *err, size_t len)
{
	struct relay_backend *r = calloc(1, sizeof(*r));
	size_t n = (size_t)cfg->ncpus * (size_t)cfg->ndevs;
	char path[KPATH];
	int ret;

	if (!r)
		goto nomem;
	r->base.ops = &blk_backend_relay;
	r->cfg = cfg;
	r->bufsz = (size_t)cfg->buf_kb * 1024;
	r->st = calloc(n, sizeof(*r->st));
	r->set_up = calloc((size_t)cfg->ndevs, sizeof(int));
	r->started = calloc((size_t)cfg->ndevs, sizeof(int));
	r->gone = calloc((size_t)cfg->ndevs, sizeof(int));
	r->dropped = calloc((size_t)cfg->ndevs, sizeof(long long));
	if (!r->st || !r->set_up || !r->started || !r->gone || !r->dropped)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		r->st[i].fd = -1;
	ret = blk_find_debugfs(cfg->debugfs, 1, r->debugfs, sizeof(r->debugfs));
	if (ret) {
		kerr(err, len, "debugfs is not mounted%s%s (%s)", cfg->debugfs ? " at " : "",
		     cfg->debugfs ? cfg->debugfs : "", strerror(-ret));
		goto fail;
	}
	for (int i = 0; i < cfg->ndevs; i++) {
		struct blk_backend_dev *d = &cfg->devs[i];
		struct blk_relay_setup s;

		memset(&s, 0, sizeof(s));
		s.act_mask = cfg->act_mask;
		s.buf_size = cfg->buf_kb * 1024;
		s.buf_nr = cfg->nbuf;
		ret = blk_relay_setup(d->fd, &s);
		if (ret == -EBUSY) {
			char under[KPATH], comm[64];
			int pid;

			/* a live tracer holds the relay files of the device open */
			snprintf(under, sizeof(under), "%s/block/%s/", r->debugfs, d->sysname);
			pid = blk_holder_find(blk_holder_prefix, under, comm, sizeof(comm));
			/* or a tracer through tracefs (the blk tracer's pipes) */
			if (!pid)
				pid = blk_holder_find(blk_holder_blk_pipe, NULL, comm,
						      sizeof(comm));
			if (pid)
				kerr(err, len,
				     "'%s' is being traced by process %d (%s); stop it first (kill -INT %d)",
				     d->path, pid, comm, pid);
			else
				kerr(err, len,
				     "'%s' is already being traced (BLKTRACESETUP: %s) and no process reads the trace: 'blktrace -k -d %s' stops a left-over trace",
				     d->path, strerror(-ret), d->path);
			goto fail;
		} else if (ret) {
			kerr(err, len, "BLKTRACESETUP on '%s' failed: %s", d->path, strerror(-ret));
			goto fail;
		}
		r->set_up[i] = 1;
		snprintf(d->name, sizeof(d->name), "%s", s.name);
	}
	/* lockdown shows here: the relay files exist but cannot be opened */
	for (int k = 0; k < cfg->ncpus; k++)
		for (int i = 0; i < cfg->ndevs; i++) {
			struct relay_stream *s = rstream(r, i, k);

			snprintf(path, sizeof(path), "%s/block/%s/trace%d", r->debugfs,
				 cfg->devs[i].name, cfg->cpus[k]);
			s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (s->fd < 0) {
				ret = -errno;
				kerr(err, len, "cannot open '%s': %s%s", path, strerror(-ret),
				     ret == -EPERM ? " (kernel lockdown forbids relay files)" : "");
				goto fail;
			}
			s->swapped = 0;
		}
	if (cfg->origin) {
		ret = relay_origin(r, err, len);
		if (ret)
			goto fail;
	}
	return &r->base;
nomem:
	ret = -ENOMEM;
	kerr(err, len, "out of memory");
fail:
	relay_close(&r->base, NULL, 0);
	errno = -ret;
	return NULL;
}

static int relay_start(struct blk_backend *b, char *err, size_t len)
{
	struct relay_backend *r = (struct relay_backend *)b;

	for (int i = 0; i < r->cfg->ndevs; i++) {
		int ret = blk_relay_start(r->cfg->devs[i].fd);

		if (ret) {
			kerr(err, len, "BLKTRACESTART on '%s' failed: %s", r->cfg->devs[i].path,
			     strerror(-ret));
			return ret;
		}
		r->started[i] = 1;
	}
	return 0;
}

/* --origin: the @n bytes of whole records at @off of @s's buffer staged in its converter */
static int relay_convert(struct relay_stream *s, size_t off, size_t n)
{
	int swapped = s->swapped;

	for (size_t end = off + n; off < end;) {
		struct blk_event ev;
		long r = blk_frame(s->buf + off, end - off, &swapped, &ev);

		if (r <= 0)
			break; /* (whole records: blk_frame_count() framed them) */
		if (blk_tfsconv_record(s->cg, 0, &ev))
			return -ENOMEM;
		off += (size_t)r;
	}
	return 0;
}

/* pass the whole records at the start of @s's buffer on; keep a partial one */
static int relay_deliver(struct relay_backend *r, struct relay_stream *s, int dev, int k,
			 const struct blk_backend_sink *sink)
{
	size_t off = 0, outlen;

	while (off < s->len) {
		unsigned long events;
		long n = blk_frame_count(s->buf + off, s->len - off, &s->swapped, &events);
		int ret;

		if (n < 0) {
			/* not a record boundary (damage): skip to the next magic */
			size_t j = off + 1;

			while (j + 4 <= s->len) {
				uint32_t m;

				memcpy(&m, s->buf + j, 4);
				if ((m & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
					break;
				j++;
			}
			if (j + 4 > s->len)
				j = s->len;
			s->skipped += j - off;
			off = j;
			continue;
		}
		if (n == 0)
			break;
		if (s->cg) {
			ret = relay_convert(s, off, (size_t)n);
			if (!ret) {
				const unsigned char *out =
					blk_tfsconv_staged(s->cg, 0, &outlen, &events);

				ret = sink->records(sink->ctx, dev, k, out, outlen, events);
			}
			/* the batch is handed on whole: the next starts a new run */
			blk_tfsconv_clear(s->cg, 0);
		} else {
			ret = sink->records(sink->ctx, dev, k, s->buf + off, (size_t)n, events);
		}
		if (ret)
			return ret;
		off += (size_t)n;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
	(void)r;
	return 0;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int relay_read(struct blk_backend *b, int k, int wait_ms,
		      const struct blk_backend_sink *sink, char *err, size_t len)
{
	struct relay_backend *r = (struct relay_backend *)b;
	int nd = r->cfg->ndevs, got = 0;
	struct pollfd pfd[64];
	uint64_t now;

	if (wait_ms > 0 && nd <= 64) {
		for (int i = 0; i < nd; i++) {
			pfd[i].fd = rstream(r, i, k)->fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		poll(pfd, (nfds_t)nd, wait_ms);
	}
	now = mono_now();
	for (int i = 0; i < nd; i++) {
		struct relay_stream *s = rstream(r, i, k);
		ssize_t n;
		int ret;

		if (s->cap - s->len < r->bufsz) {
			size_t cap = s->len + r->bufsz;
			unsigned char *nb = realloc(s->buf, cap);

			if (!nb) {
				kerr(err, len, "out of memory for the relay data of CPU %d",
				     r->cfg->cpus[k]);
				return -ENOMEM;
			}
			s->buf = nb;
			s->cap = cap;
		}
		if (__atomic_load_n(&r->gone[i], __ATOMIC_ACQUIRE))
			continue;
		n = read(s->fd, s->buf + s->len, s->cap - s->len);
		if (n < 0 && errno == EIO && relay_gone(r, i)) {
			/* torn down from outside: nothing more will come */
			__atomic_store_n(&r->gone[i], 1, __ATOMIC_RELEASE);
			if (sink->mark)
				sink->mark(sink->ctx, i, k, UINT64_MAX);
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			ret = -errno;
			kerr(err, len, "reading the relay file of '%s', CPU %d: %s",
			     r->cfg->devs[i].name, r->cfg->cpus[k], strerror(-ret));
			return ret;
		}
		if (n <= 0) {
			if (sink->mark)
				sink->mark(sink->ctx, i, k, now - BLK_BACKEND_SLACK_NS);
			continue;
		}
		got = 1;
		s->len += (size_t)n;
		ret = relay_deliver(r, s, i, k, sink);
		if (ret) {
			kerr(err, len, "%s", strerror(-ret));
			return ret;
		}
	}
	return got;
}

static int relay_tick(struct blk_backend *b, char *msg, size_t len)
{
	struct relay_backend *r = (struct relay_backend *)b;

	for (int i = 0; i < r->cfg->ndevs; i++) {
		long long d = blk_relay_dropped(r->debugfs, r->cfg->devs[i].name);

		/* kept as it goes: a trace torn down from outside takes its counter along */
		if (d >= 0)
			r->dropped[i] = d;
		if (__atomic_load_n(&r->gone[i], __ATOMIC_ACQUIRE) || relay_gone(r, i)) {
			__atomic_store_n(&r->gone[i], 1, __ATOMIC_RELEASE);
			kerr(msg, len,
			     "the trace of '%s' was torn down from outside (by 'blktrace -k'?); stopping",
			     r->cfg->devs[i].path);
			return -ESHUTDOWN;
		}
	}
	return 0;
}

static int relay_stop(struct blk_backend *b)
{
	struct relay_backend *r = (struct relay_backend *)b;
	int ret = 0;

	for (int i = 0; i < r->cfg->ndevs; i++) {
		if (__atomic_load_n(&r->gone[i], __ATOMIC_ACQUIRE))
			continue; /* its counter went with it: the last one read stays */
		if (r->started[i]) {
			int e = blk_relay_stop(r->cfg->devs[i].fd);

			if (e && !ret)
				ret = e;
			r->started[i] = 0;
		}
		/* read while the files exist: teardown removes them */
		r->dropped[i] = blk_relay_dropped(r->debugfs, r->cfg->devs[i].name);
	}
	return ret;
}

static uint64_t relay_lost(struct blk_backend *b, int dev, int k)
{
	struct relay_backend *r = (struct relay_backend *)b;

	/* the kernel counts a device's drops over all CPUs */
	return k == 0 && r->dropped[dev] > 0 ? (uint64_t)r->dropped[dev] : 0;
}

static uint64_t relay_skipped(struct blk_backend *b, int dev, int k)
{
	return rstream((struct relay_backend *)b, dev, k)->skipped;
}

static const char *relay_describe(struct blk_backend *b)
{
	struct relay_backend *r = (struct relay_backend *)b;

	return r->what[0] ? r->what : NULL;
}

/* the summary's line about --origin: the records tagged, the runs, the cgroups named */
static int relay_report(struct blk_backend *b, char *msg, size_t len)
{
	struct relay_backend *r = (struct relay_backend *)b;
	unsigned long named = 0, unknown = 0;
	uint64_t tagged = 0, runs = 0;
	const char *root;
	int v;

	if (!r->cfg->origin)
		return 0;
	for (int k = 0; k < r->cfg->ncpus; k++)
		for (int i = 0; i < r->cfg->ndevs; i++) {
			uint64_t t, n;

			blk_tfsconv_cgroup_counts(rstream(r, i, k)->cg, &t, &n);
			tagged += t;
			runs += n;
		}
	if (!r->paths) {
		kerr(msg, len,
		     "Cgroups: named by number only (no blkio/io cgroup hierarchy); %llu records tagged, in %llu run notes",
		     (unsigned long long)tagged, (unsigned long long)runs);
		return 1;
	}
	blk_cgpath_counts(r->paths, &named, &unknown);
	root = blk_cgpath_root(r->paths, &v);
	kerr(msg, len,
	     "Cgroups: %lu named from %s, %lu not found there (named by number); %llu records tagged, in %llu run notes",
	     named, root, unknown, (unsigned long long)tagged, (unsigned long long)runs);
	return 1;
}

const struct blk_backend_ops blk_backend_relay = {
	.name = "relay",
	.open = relay_open,
	.start = relay_start,
	.read = relay_read,
	.tick = relay_tick,
	.stop = relay_stop,
	.lost = relay_lost,
	.skipped = relay_skipped,
	.close = relay_close,
	.describe = relay_describe,
	.report = relay_report,
};
