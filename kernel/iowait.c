// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O wait backend (blk_backend_iowait): a private tracefs instance with the events of
 * the source iowait-src.c chose, their ring buffers read raw, merged by time across CPUs
 * and turned into waits (waitjoin.h), delivered as I/O wait notes (trace.h) on the stream
 * of the CPU each task went on running on. Everything it creates (the instance, kprobe
 * events) is removed by close().
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk/backend.h"
#include "ftrace.h"
#include "blk/iowait.h"
#include "blk/kernel.h"
#include "blk/waitjoin.h"
#include "iowait-int.h"

static void errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tgid of a thread ---- */

static int32_t proc_tgid(int32_t tid)
{
	char p[64], line[128];
	int32_t tgid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", tid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (int32_t)atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid;
}

/* saved_tgids of tracefs (the instance records them: options/record-tgid) */
static int32_t saved_tgid(const struct iw_backend *b, int32_t tid)
{
	char p[4200], line[64];
	int32_t tgid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/saved_tgids", b->tfs);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int a, c;

		if (sscanf(line, "%d %d", &a, &c) == 2 && a == tid) {
			tgid = c;
			break;
		}
	}
	fclose(f);
	return tgid;
}

static void resolve_tgid(struct iw_backend *b, struct blk_iowait *w)
{
	unsigned int h = (w->tid * 2654435761u) % TGID_CACHE;
	int32_t tgid;

	if (w->tgid)
		return;
	if (b->tgids[h].tid == (int32_t)w->tid) {
		w->tgid = (uint32_t)b->tgids[h].tgid;
		return;
	}
	tgid = proc_tgid((int32_t)w->tid);
	if (!tgid)
		tgid = saved_tgid(b, (int32_t)w->tid);
	if (!tgid) {
		w->tgid = w->tid;
		w->flags |= BLK_IOWAIT_F_TGID_UNKNOWN;
		return;
	}
	b->tgids[h].tid = (int32_t)w->tid;
	b->tgids[h].tgid = tgid;
	w->tgid = (uint32_t)tgid;
}

/* ---- the notes ---- */

static int cpu_index(const struct iw_backend *b, int cpu)
{
	for (int k = 0; k < b->cfg->ncpus; k++)
		if (b->cfg->cpus[k] == cpu)
			return k;
	return 0;
}

static int stage_wait(struct iw_backend *b, struct blk_iowait *w)
{
	int k = cpu_index(b, w->cpu);
	struct iw_cpu *c = &b->cpu[k];
	struct blk_iowait_pdu pdu;
	struct blk_event ev;

	resolve_tgid(b, w);
	w->cpu = b->cfg->cpus[k];
	w->device = b->cfg->devs[0].devno;
	blk_iowait_encode(w, &pdu, &ev);
	if (c->cap - c->len < 64 + sizeof(pdu)) {
		size_t cap = c->cap ? c->cap * 2 : 16384;
		unsigned char *n = realloc(c->stage, cap);

		if (!n)
			return -ENOMEM;
		c->stage = n;
		c->cap = cap;
	}
	c->len += blk_event_encode(&ev, c->stage + c->len);
	c->nrec++;
	return 0;
}

static int iw_close(struct blk_backend *bb, char *err, size_t len)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	int ret;

	if (!b)
		return 0;
	for (int k = 0; b->cpu && k < b->cfg->ncpus; k++) {
		if (b->cpu[k].fd >= 0)
			close(b->cpu[k].fd);
		free(b->cpu[k].q.v);
		free(b->cpu[k].stage);
	}
	ret = blk_ftrace_inst_free(b->inst);
	if (ret)
		errf(err, len, "could not remove the I/O wait instance of tracefs: %s",
		     strerror(-ret));
	/* kprobe events can go once no instance has them enabled */
	iw_remove_probes(b);
	free(b->cpu);
	free(b->pfd);
	blk_wf_free(b->wf);
	free(b->page);
	blk_ftrace_pages_free(b->pages);
	blk_wj_free(b->wj);
	free(b);
	return ret;
}

static struct blk_backend *iw_open(const struct blk_backend_cfg *cfg, char *err, size_t len)
{
	struct iw_backend *b = calloc(1, sizeof(*b));
	struct blk_wj_opts wo = {0};
	char name[64], buf[8192];
	int ret = -ENOMEM;

	if (!b)
		goto nomem;
	b->base.ops = &blk_backend_iowait;
	b->cfg = cfg;
	b->dev_filtered = 1;
	b->page_size = (size_t)sysconf(_SC_PAGESIZE);
	b->page = malloc(b->page_size);
	b->cpu = calloc((size_t)cfg->ncpus, sizeof(*b->cpu));
	b->pfd = calloc((size_t)cfg->ncpus, sizeof(*b->pfd));
	if (!b->page || !b->cpu || !b->pfd)
		goto nomem;
	for (int k = 0; k < cfg->ncpus; k++)
		b->cpu[k].fd = -1;
	ret = blk_find_tracefs(1, b->tfs, sizeof(b->tfs));
	if (ret) {
		errf(err, len, "tracefs is not available: %s", strerror(-ret));
		goto fail;
	}
	ret = iw_choose(b, err, len);
	if (ret)
		goto fail;
	snprintf(buf, sizeof(buf), "%s/events/header_page", b->tfs);
	{
		char text[1024];

		ret = blk_ftrace_read(buf, text, sizeof(text));
		b->pages = ret ? NULL : blk_ftrace_pages_new(text);
		if (!b->pages) {
			ret = ret ? ret : -errno;
			errf(err, len, "cannot read the ring-buffer page layout in '%s': %s", buf,
			     strerror(-ret));
			goto fail;
		}
	}
	snprintf(name, sizeof(name), INST_PREFIX "%d", (int)getpid());
	b->inst = blk_ftrace_inst_new(b->tfs, name, err, len);
	if (!b->inst) {
		ret = -errno;
		goto fail;
	}
	/* the block records' clock (relay: ktime_get; tracefs: mono) */
	ret = blk_ftrace_inst_write(b->inst, "trace_clock", "mono");
	if (ret) {
		errf(err, len, "cannot set the trace clock of '%s' to mono: %s",
		     blk_ftrace_inst_dir(b->inst), strerror(-ret));
		goto fail;
	}
	blk_ftrace_inst_write(b->inst, "buffer_size_kb", IW_BUF_KB);
	/*
	 * Woken by the kernel when a buffer is a quarter full: a fast workload cannot fill a
	 * buffer between two reads (the sched source writes some 300 bytes per I/O wait)
	 */
	b->watermark = !blk_ftrace_inst_write(b->inst, "buffer_percent", IW_WATERMARK);
	blk_ftrace_inst_write(b->inst, "options/record-tgid", "1");
	ret = iw_setup_events(b, err, len);
	if (ret)
		goto fail;
	/* --iowait-all keeps every sleep in state D: no task's wakings may be left out */
	if (b->src == BLK_IOWAIT_SRC_SCHED && !cfg->iowait_all && b->waking[0] &&
	    !(b->wf = blk_wf_new()))
		goto nomem;
	wo.source = b->src;
	wo.keep_all = cfg->iowait_all;
	b->wj = blk_wj_new(&wo);
	if (!b->wj)
		goto nomem;
	for (int k = 0; k < cfg->ncpus; k++) {
		b->cpu[k].fd = blk_ftrace_inst_open_cpu(b->inst, cfg->cpus[k]);
		if (b->cpu[k].fd < 0) {
			ret = b->cpu[k].fd;
			errf(err, len, "cannot open the raw buffer of CPU %d in '%s': %s",
			     cfg->cpus[k], blk_ftrace_inst_dir(b->inst), strerror(-ret));
			goto fail;
		}
		b->cpu[k].base_lost = blk_ftrace_inst_lost(b->inst, cfg->cpus[k]);
		b->pfd[k].fd = b->cpu[k].fd;
		b->pfd[k].events = POLLIN;
	}
	b->missed_base = iw_missed_now(b);
	if (b->missed_base < 0)
		b->missed_base = 0;
	b->missed_seen = b->missed_base;
	return &b->base;
nomem:
	ret = -ENOMEM;
	errf(err, len, "out of memory");
fail:
	if (b) {
		char ignored[256];

		iw_close(&b->base, ignored, sizeof(ignored));
	}
	errno = -ret;
	return NULL;
}

static int iw_start(struct blk_backend *bb, char *err, size_t len)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	int ret = blk_ftrace_inst_write(b->inst, "tracing_on", "1");

	if (ret)
		errf(err, len, "cannot start the I/O wait instance '%s': %s",
		     blk_ftrace_inst_dir(b->inst), strerror(-ret));
	b->started = !ret;
	return ret;
}

static int iw_stop(struct blk_backend *bb)
{
	struct iw_backend *b = (struct iw_backend *)bb;

	b->stopped = 1;
	return blk_ftrace_inst_write(b->inst, "tracing_on", "0");
}

/* Read what CPU index @k has. Return pages read, or -errno. */
static int read_cpu(struct iw_backend *b, int k, char *err, size_t len)
{
	struct iw_cpu *c = &b->cpu[k];
	struct iw_walk w = {b, k};
	uint64_t now = mono_now();
	int pages = 0;

	for (;;) {
		ssize_t n = read(c->fd, b->page, b->page_size);
		uint64_t missed;
		int ret;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0) {
			ret = -errno;
			errf(err, len, "reading the raw buffer of CPU %d: %s", b->cfg->cpus[k],
			     strerror(-ret));
			return ret;
		}
		if (n == 0)
			break;
		pages++;
		ret = blk_ftrace_page_walk(b->pages, b->page, (size_t)n, iw_on_raw, &w, &missed);
		if (ret == -ENOMEM) {
			errf(err, len, "out of memory for the events of CPU %d", b->cfg->cpus[k]);
			return ret;
		}
		if (ret < 0)
			b->pages_bad++;
		if (missed)
			b->pages_lost++;
	}
	c->drained = now;
	return pages;
}

/* Merge what can be merged (everything with @flush) and feed the joiner in time order. */
static int merge(struct iw_backend *b, int flush, uint64_t *upto)
{
	const uint64_t slack = BLK_BACKEND_SLACK_NS;

	for (;;) {
		int best = -1;
		uint64_t limit = UINT64_MAX;
		struct blk_wj_event e;
		struct blk_iowait w;
		int ret;

		for (int k = 0; k < b->cfg->ncpus; k++) {
			struct fifo *q = &b->cpu[k].q;

			if (q->n) {
				if (best < 0 ||
				    q->v[q->head].ts < b->cpu[best].q.v[b->cpu[best].q.head].ts)
					best = k;
			} else if (b->cpu[k].drained - slack < limit) {
				limit = b->cpu[k].drained - slack;
			}
		}
		if (best < 0) {
			if (limit != UINT64_MAX && limit > *upto)
				*upto = limit;
			return 0;
		}
		e = b->cpu[best].q.v[b->cpu[best].q.head];
		if (!flush && e.ts > limit) {
			if (limit > *upto)
				*upto = limit;
			return 0;
		}
		b->cpu[best].q.head = (b->cpu[best].q.head + 1) & (b->cpu[best].q.cap - 1);
		b->cpu[best].q.n--;
		*upto = e.ts;
		if (b->wf && e.kind == BLK_WJ_SWITCH_D &&
		    blk_wf_switch_d(b->wf, e.tid, e.ts, blk_wj_has_io(b->wj, e.tid)))
			b->wf_dirty = 1;
		else if (b->wf && e.kind == BLK_WJ_WAKING)
			blk_wf_waking(b->wf, e.tid, e.comm, e.ts);
		ret = blk_wj_feed(b->wj, &e, &w);
		if (ret < 0)
			return ret;
		if (ret && stage_wait(b, &w))
			return -ENOMEM;
	}
}

/* The waking filter, when it changed: written into the instance (refused: none from now on). */
static void update_waking_filter(struct iw_backend *b)
{
	char filter[2048], rel[96];
	int ok;

	if (!blk_wf_tick(b->wf, mono_now()) && !b->wf_dirty)
		return;
	b->wf_dirty = 0;
	snprintf(rel, sizeof(rel), "events/%s/filter", b->waking);
	ok = blk_wf_filter(b->wf, filter, sizeof(filter)) >= 0 &&
	     !blk_ftrace_inst_write(b->inst, rel, filter);
	if (!ok)
		blk_ftrace_inst_write(b->inst, rel, "0");
	/* the kernel has it: the wakings after now are filtered by it */
	blk_wf_written(b->wf, mono_now(), ok);
}

static int iw_read(struct blk_backend *bb, int k, int wait_ms, const struct blk_backend_sink *sink,
		   char *err, size_t len)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	uint64_t upto = 0;
	int pages = 0, delivered = 0, ret, woken = 0;

	(void)k;
	if (wait_ms > 0 && b->watermark) {
		ret = poll(b->pfd, (nfds_t)b->cfg->ncpus, wait_ms);
		woken = ret > 0;
		/* a buffer that cannot be polled: sleeps again, not to spin */
		for (int i = 0; ret > 0 && i < b->cfg->ncpus; i++)
			if (b->pfd[i].revents & (POLLERR | POLLNVAL))
				b->watermark = 0;
	} else if (wait_ms > 0) {
		poll(NULL, 0, wait_ms);
	}
	for (int i = 0; i < b->cfg->ncpus; i++) {
		ret = read_cpu(b, i, err, len);
		if (ret < 0)
			return ret;
		pages += ret;
	}
	/*
	 * A kernel whose poll() ignores buffer_percent (before 5.x: readable as soon as an
	 * event is in) wakes the reader at every event: after 16 wake-ups in a row that found
	 * less than a sixteenth of the watermark, it sleeps wait_ms again
	 */
	if (woken && pages < IW_WATERMARK_PAGES / 16)
		b->early_wakes++;
	else if (!woken || pages >= IW_WATERMARK_PAGES / 16)
		b->early_wakes = 0;
	if (b->early_wakes >= 16)
		b->watermark = 0;
	ret = merge(b, b->stopped && !pages, &upto);
	if (ret) {
		errf(err, len, "out of memory merging the I/O wait events");
		return ret;
	}
	if (b->wf && !b->stopped)
		update_waking_filter(b);
	for (int i = 0; i < b->cfg->ncpus; i++) {
		struct iw_cpu *c = &b->cpu[i];

		if (c->len) {
			ret = sink->records(sink->ctx, 0, i, c->stage, c->len, c->nrec);
			c->len = 0;
			c->nrec = 0;
			delivered = 1;
			if (ret) {
				errf(err, len, "%s", strerror(-ret));
				return ret;
			}
		}
		if (sink->mark && upto)
			sink->mark(sink->ctx, 0, i, upto);
	}
	return pages || delivered;
}

static int iw_tick(struct blk_backend *bb, char *msg, size_t len)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	long long m;

	if (b->started && !blk_ftrace_inst_alive(b->inst)) {
		errf(msg, len,
		     "the I/O wait instance '%s' was turned off or removed from outside ('blktrace -k'?); ending the trace",
		     blk_ftrace_inst_dir(b->inst));
		return -ESHUTDOWN;
	}
	m = iw_missed_now(b);
	if (m > b->missed_seen) {
		long long first = !b->said_missed;

		b->missed_seen = m;
		if (first) {
			b->said_missed = 1;
			if (b->src == BLK_IOWAIT_SRC_MODULE)
				errf(msg, len,
				     "the blk_iowait module's kretprobes are missing I/O waits (%lld so far: more tasks wait at once than its maxactive): they are counted as lost, the summary has them all; load it with a larger maxactive=",
				     m - b->missed_base);
			else
				errf(msg, len,
				     "the kprobe events are missing I/O waits (%lld so far: more tasks wait at once than maxactive %u): they are counted as lost, the summary has them all; --iowait-maxactive raises it",
				     m - b->missed_base, b->maxactive);
			return 1;
		}
	}
	return 0;
}

static uint64_t iw_lost(struct blk_backend *bb, int dev, int k)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	uint64_t now = blk_ftrace_inst_lost(b->inst, b->cfg->cpus[k]), lost;

	(void)dev;
	lost = now >= b->cpu[k].base_lost ? now - b->cpu[k].base_lost : 0;
	if (k == 0) {
		long long m = iw_missed_now(b);

		if (m < b->missed_seen)
			m = b->missed_seen; /* the module may be gone at the end */
		lost += (uint64_t)(m - b->missed_base);
		/* sleeps whose waking the filter may have left out (never made up) */
		lost += b->wf ? blk_wf_blind(b->wf) : 0;
	}
	return lost;
}

static uint64_t iw_skipped(struct blk_backend *bb, int dev, int k)
{
	(void)bb;
	(void)dev;
	(void)k;
	return 0;
}

static const char *iw_describe(struct blk_backend *bb)
{
	return ((struct iw_backend *)bb)->why;
}

static int iw_report(struct blk_backend *bb, char *msg, size_t len)
{
	struct iw_backend *b = (struct iw_backend *)bb;
	struct blk_wj_stats st;
	size_t n = 0;

	blk_wj_get_stats(b->wj, &st);
	n += (size_t)snprintf(msg + n, len - n, "source %s", blk_iowait_source_name(b->src));
	if (b->src == BLK_IOWAIT_SRC_SCHED && n < len)
		n += (size_t)snprintf(
			msg + n, len - n,
			", %llu uninterruptible sleeps without an I/O of the task in flight on a traced device not kept, %llu kept for the I/O of the task that woke them",
			(unsigned long long)st.not_io, (unsigned long long)st.waker_io);
	if (b->src != BLK_IOWAIT_SRC_SCHED && n < len)
		n += (size_t)snprintf(msg + n, len - n, ", %lld missed by the probes (lost)",
				      b->missed_seen - b->missed_base);
	if (b->src == BLK_IOWAIT_SRC_KPROBE && n < len)
		n += (size_t)snprintf(
			msg + n, len - n,
			", maxactive %u, %llu entries whose return was missed, %llu returns without entry",
			b->maxactive, (unsigned long long)st.stale,
			(unsigned long long)st.unmatched);
	if (b->wf && n < len)
		n += (size_t)snprintf(
			msg + n, len - n,
			", %d tasks never seen in state D left out of the wakings (%llu of their sleeps not seen to the end, lost)",
			blk_wf_excluded(b->wf), (unsigned long long)blk_wf_blind(b->wf));
	if ((st.tasks_full || st.ios_full) && n < len)
		n += (size_t)snprintf(msg + n, len - n,
				      ", not followed (tables full): %llu task events, %llu I/Os",
				      (unsigned long long)st.tasks_full,
				      (unsigned long long)st.ios_full);
	if ((b->pages_bad || b->pages_lost) && n < len)
		snprintf(msg + n, len - n, ", %llu damaged and %llu overwritten-before ring pages",
			 (unsigned long long)b->pages_bad, (unsigned long long)b->pages_lost);
	return 1;
}

const struct blk_backend_ops blk_backend_iowait = {
	.name = "iowait",
	.open = iw_open,
	.start = iw_start,
	.read = iw_read,
	.tick = iw_tick,
	.stop = iw_stop,
	.lost = iw_lost,
	.skipped = iw_skipped,
	.close = iw_close,
	.one_reader = 1,
	.unit = "waits",
	.lost_unit = "I/O waits",
	.lost_why = "missed by the probes, or in events the kernel's ring buffer overwrote",
	.describe = iw_describe,
	.report = iw_report,
};
