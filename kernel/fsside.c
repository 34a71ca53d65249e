// SPDX-License-Identifier: GPL-2.0
/*
 * --origin's side stream beside the relay backend (blk_backend_fsside): the relay path's
 * kernel records no file-system events, so --origin's (tfsorigin.c) are enabled in a private
 * tracefs instance, instances/blktrace-origin-PID, on the clock of the relay records (the
 * instance's "mono" trace clock: ktime_get()'s). Each CPU's ring is read as it comes
 * (tfsring.c) and turned into origin notes by a converter per CPU (tfsconv.c), each device's
 * notes in an output stream of its own (NAME.origin: its per-CPU files
 * NAME.origin.blktrace.N), the files' names at the end of it. The pages are converted as
 * they are read, not kept until the stop: the names of the dirtying tasks are read while
 * they run. close() removes the instance, and blktrace -k one a killed tracer left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/kernel.h"
#include "ftrace.h"
#include "tfsconv.h"
#include "tfsorigin.h"
#include "tfsring.h"
#include "util.h"

#define FSS_PREFIX "blktrace-origin-"
#define FSS_KB 4096u /* the instance's ring per CPU at the start */
#define FSS_MAX_KB 65536u /* growing after losses stops here */

struct fss_cpu {
	struct tfs_ring *ring;
	struct blk_tfsconv *conv;
	uint64_t base_lost; /* the ring's counters at the start */
	uint64_t seen_lost; /* its losses at the last tick */
};

struct fss_backend {
	struct blk_backend base;
	const struct blk_backend_cfg *cfg;
	char tfs[KPATH_DIR];
	struct blk_ftrace_inst *inst;
	struct tfs_origin *origin;
	struct fss_cpu *cpu;
	struct blk_tfsconv **convs; /* each CPU's converter (for the files' names) */
	unsigned int kb; /* ring per CPU now */
	int grow; /* may grow it after losses */
	int started;
	int stopped; /* stop() was called (atomic) */
	char what[2048];
};

/* tfsorigin.h's events, in the instance */
static int fss_format(void *ctx, const char *event, char *buf, size_t len)
{
	return blk_ftrace_inst_format_text(ctx, event, buf, len);
}

static int fss_enable(void *ctx, const char *event, const char *filter, int *filtered)
{
	return blk_ftrace_inst_enable(ctx, event, filter, filtered);
}

/*
 * A dirtying task's name, when its first page is converted (a fraction of a second after):
 * the task's own while it runs, else the one the kernel saved (it may have ended since)
 */
static const char *fss_comm(void *ctx, uint32_t pid, char *buf, size_t len)
{
	struct fss_backend *b = ctx;
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%u/comm", pid);
	f = pid ? fopen(p, "re") : NULL;
	if (f) {
		int ok = fgets(buf, (int)len, f) != NULL;

		fclose(f);
		buf[strcspn(buf, "\n")] = '\0';
		if (ok && buf[0])
			return buf;
	}
	return pid ? blk_ftrace_saved_comm(b->tfs, pid, buf, len) : NULL;
}

static int fss_close(struct blk_backend *bb, char *err, size_t len)
{
	struct fss_backend *b = (struct fss_backend *)bb;
	int ret;

	if (!b)
		return 0;
	for (int k = 0; b->cpu && k < b->cfg->ncpus; k++) {
		tfs_ring_free(b->cpu[k].ring);
		blk_tfsconv_free(b->cpu[k].conv);
	}
	tfs_origin_free(b->origin);
	ret = b->inst ? blk_ftrace_inst_free(b->inst) : 0;
	if (ret)
		kerr(err, len, "could not remove --origin's tracefs instance: %s", strerror(-ret));
	free(b->cpu);
	free(b->convs);
	free(b);
	return ret;
}

/* each CPU's converter, ring and starting losses */
static int fss_open_cpus(struct fss_backend *b, char *err, size_t len)
{
	const struct blk_backend_cfg *cfg = b->cfg;
	uint32_t devnos[64];
	int ret;

	for (int i = 0; i < cfg->ndevs; i++)
		devnos[i] = cfg->devs[i].devno;
	for (int k = 0; k < cfg->ncpus; k++) {
		struct fss_cpu *c = &b->cpu[k];

		/* no spool: the dirtiers' names are taken as their pages are converted */
		ret = tfs_ring_cpu_open(blk_ftrace_inst_dir(b->inst), devnos, cfg->ndevs,
					cfg->cpus[k],
					blk_ftrace_inst_open_cpu(b->inst, cfg->cpus[k]), fss_comm,
					b, NULL, &c->conv, &c->ring, err, len);
		if (ret)
			return ret;
		blk_tfsconv_set_origin(c->conv, tfs_origin_events(b->origin));
		b->convs[k] = c->conv;
		c->base_lost = blk_ftrace_inst_lost(b->inst, cfg->cpus[k]);
	}
	return 0;
}

static struct blk_backend *fss_open(const struct blk_backend_cfg *cfg, char *err, size_t len)
{
	struct fss_backend *b = calloc(1, sizeof(*b));
	struct tfs_origin_where where = {fss_format, fss_enable, NULL};
	char name[64], v[32];
	size_t n;
	int ret;

	if (!b || cfg->ndevs > 64)
		goto nomem;
	b->base.ops = &blk_backend_fsside;
	b->cfg = cfg;
	b->cpu = calloc((size_t)cfg->ncpus, sizeof(*b->cpu));
	b->convs = calloc((size_t)cfg->ncpus, sizeof(*b->convs));
	if (!b->cpu || !b->convs)
		goto nomem;
	ret = blk_find_tracefs(1, b->tfs, sizeof(b->tfs));
	if (ret) {
		kerr(err, len, "--origin needs tracefs for the file-system events: %s",
		     strerror(-ret));
		goto fail;
	}
	snprintf(name, sizeof(name), FSS_PREFIX "%d", (int)getpid());
	b->inst = blk_ftrace_inst_new(b->tfs, name, err, len);
	if (!b->inst) {
		ret = -errno;
		goto fail;
	}
	/* the relay records' clock (ktime_get()), as for --iowait's instance */
	ret = blk_ftrace_inst_write(b->inst, "trace_clock", "mono");
	if (ret) {
		kerr(err, len, "cannot set the trace clock of '%s' to mono: %s",
		     blk_ftrace_inst_dir(b->inst), strerror(-ret));
		goto fail;
	}
	b->kb = FSS_KB;
	snprintf(v, sizeof(v), "%u", b->kb);
	b->grow = !blk_ftrace_inst_write(b->inst, "buffer_size_kb", v);
	n = (size_t)snprintf(
		b->what, sizeof(b->what),
		"--origin beside the relay files: the tracefs instance %s (mono clock)",
		blk_ftrace_inst_dir(b->inst));
	where.ctx = b->inst;
	b->origin = tfs_origin_open(&where, cfg, b->what + n, sizeof(b->what) - n, err, len);
	if (!b->origin) {
		ret = -errno;
		goto fail;
	}
	ret = fss_open_cpus(b, err, len);
	if (ret)
		goto fail;
	return &b->base;
nomem:
	ret = -ENOMEM;
	kerr(err, len, "out of memory");
fail:
	if (b && b->cfg) {
		char ignored[256];

		fss_close(&b->base, ignored, sizeof(ignored));
	} else {
		free(b);
	}
	errno = -ret;
	return NULL;
}

static int fss_start(struct blk_backend *bb, char *err, size_t len)
{
	struct fss_backend *b = (struct fss_backend *)bb;
	int ret = blk_ftrace_inst_write(b->inst, "tracing_on", "1");

	if (ret)
		kerr(err, len, "cannot start --origin's tracefs instance '%s': %s",
		     blk_ftrace_inst_dir(b->inst), strerror(-ret));
	b->started = !ret;
	return ret;
}

static int fss_stop(struct blk_backend *bb)
{
	struct fss_backend *b = (struct fss_backend *)bb;
	int ret = blk_ftrace_inst_write(b->inst, "tracing_on", "0");

	__atomic_store_n(&b->stopped, 1, __ATOMIC_RELEASE);
	return ret;
}

static int fss_read(struct blk_backend *bb, int k, int wait_ms, const struct blk_backend_sink *sink,
		    char *err, size_t len)
{
	struct fss_backend *b = (struct fss_backend *)bb;
	struct fss_cpu *c = &b->cpu[k];
	struct tfs_ring_batch batch;
	int ret, stopped = __atomic_load_n(&b->stopped, __ATOMIC_ACQUIRE);

	ret = tfs_ring_read(c->ring, wait_ms, stopped, &batch, err, len);
	if (ret)
		return ret;
	/* the last CPU read to the end names the files of every CPU's notes */
	if (!batch.got && stopped) {
		ret = tfs_origin_drained(b->origin, k, b->convs, &batch.last);
		if (ret < 0) {
			kerr(err, len, "out of memory naming the files of the origin notes");
			return ret;
		}
		batch.got = ret;
	}
	ret = tfs_ring_deliver(c->conv, b->cfg->ndevs, k, &batch, 1, sink, err, len);
	return ret ? ret : batch.got;
}

/* events lost on CPU index @k since the start: the ring's counters, or what its pages said */
static uint64_t cpu_lost(struct fss_backend *b, int k)
{
	uint64_t now = blk_ftrace_inst_lost(b->inst, b->cfg->cpus[k]);
	uint64_t stats = now >= b->cpu[k].base_lost ? now - b->cpu[k].base_lost : 0;
	uint64_t pages = blk_tfsconv_missed(b->cpu[k].conv);

	return pages > stats ? pages : stats;
}

static int fss_tick(struct blk_backend *bb, char *msg, size_t len)
{
	struct fss_backend *b = (struct fss_backend *)bb;
	uint64_t lost = 0;
	int worst = -1;
	char v[32];

	if (b->started && !blk_ftrace_inst_alive(b->inst)) {
		kerr(msg, len,
		     "--origin's tracefs instance '%s' was turned off or removed from outside ('blktrace -k'?); ending the trace",
		     blk_ftrace_inst_dir(b->inst));
		return -ESHUTDOWN;
	}
	for (int k = 0; k < b->cfg->ncpus; k++) {
		uint64_t now = cpu_lost(b, k);

		if (now > b->cpu[k].seen_lost) {
			if (worst < 0 || now - b->cpu[k].seen_lost > lost) {
				lost = now - b->cpu[k].seen_lost;
				worst = k;
			}
			b->cpu[k].seen_lost = now;
		}
	}
	if (worst < 0 || !b->grow || b->kb >= FSS_MAX_KB)
		return 0;
	snprintf(v, sizeof(v), "%u", b->kb * 4 > FSS_MAX_KB ? FSS_MAX_KB : b->kb * 4);
	if (blk_ftrace_inst_write(b->inst, "buffer_size_kb", v)) {
		b->grow = 0;
		kerr(msg, len,
		     "%llu file-system events lost on CPU %d; could not grow --origin's ring buffer",
		     (unsigned long long)lost, b->cfg->cpus[worst]);
		return 1;
	}
	kerr(msg, len,
	     "%llu file-system events lost on CPU %d: --origin's ring buffer grown from %u to %s KiB per CPU",
	     (unsigned long long)lost, b->cfg->cpus[worst], b->kb, v);
	b->kb = (unsigned int)strtoul(v, NULL, 10);
	return 1;
}

static uint64_t fss_lost(struct blk_backend *bb, int dev, int k)
{
	(void)dev; /* the ring is shared by the devices: its losses count for each */
	return cpu_lost((struct fss_backend *)bb, k);
}

static uint64_t fss_skipped(struct blk_backend *bb, int dev, int k)
{
	/* entries of events not ours (enabled in the instance by someone else), once per CPU */
	return dev == 0 ? blk_tfsconv_skipped(((struct fss_backend *)bb)->cpu[k].conv) : 0;
}

static const char *fss_describe(struct blk_backend *bb)
{
	return ((struct fss_backend *)bb)->what;
}

static int fss_report(struct blk_backend *bb, char *msg, size_t len)
{
	struct fss_backend *b = (struct fss_backend *)bb;

	tfs_origin_report(b->origin, b->convs, b->cfg->ncpus, msg, len);
	return 1;
}

const struct blk_backend_ops blk_backend_fsside = {
	.name = "origin",
	.open = fss_open,
	.start = fss_start,
	.read = fss_read,
	.tick = fss_tick,
	.stop = fss_stop,
	.lost = fss_lost,
	.skipped = fss_skipped,
	.close = fss_close,
	.unit = "notes",
	.lost_unit = "file-system events",
	.lost_why =
		"overwritten in --origin's ring buffer: their I/Os may lack a dirtier or a file",
	.describe = fss_describe,
	.report = fss_report,
};

int blk_fsside_kill(const char *tracefs, char *msg, size_t len)
{
	int stopped, removed, failed;

	msg[0] = '\0';
	blk_ftrace_inst_del_left(tracefs, FSS_PREFIX, &stopped, &removed, &failed);
	if (failed) {
		kerr(msg, len, "could not remove %d left-over --origin tracefs instance(s)",
		     failed);
		return -EBUSY;
	}
	if (stopped || removed)
		kerr(msg, len,
		     "--origin's file-system events: %d running trace(s) turned off, %d left-over tracefs instance(s) removed",
		     stopped, removed);
	return stopped || removed;
}
