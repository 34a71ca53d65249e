// SPDX-License-Identifier: GPL-2.0
/*
 * The tracefs backend (blk_backend_tracefs): the blk tracer set up through a blk_tfs session
 * (tracefs.c), each CPU's ring-buffer pages read from trace_pipe_raw (tfsring.c) and turned
 * into classic per-CPU records (tfsconv.c) as they are read, or, for per-CPU files, kept as
 * they are until the trace stops and turned into records then.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blk/backend.h"
#include "blk/event.h"
#include "blk/kernel.h"
#include "cgpath.h"
#include "tfsconv.h"
#include "tfsorigin.h"
#include "tfsring.h"
#include "tracefs.h"
#include "util.h"

/* per CPU, when neither -b nor -n is given: 1/256 of the memory over the CPUs, in these bounds */
#define TFS_DEFAULT_MIN_KB 16384u
#define TFS_DEFAULT_MAX_KB 65536u
#define TFS_MAX_KB 262144u /* growing after losses stops here */
/*
 * pids whose names the kernel keeps while pages wait for the end (saved_cmdlines_size; 128
 * by default): ~80 KiB of kernel memory, read per new pid at the end
 */
#define TFS_CMDLINES 4096u

struct tfs_cpu {
	struct tfs_ring *ring; /* per_cpu/cpuN/trace_pipe_raw, its pages kept or converted */
	struct blk_tfsconv *conv;
};

struct tfs_backend {
	struct blk_backend base;
	const struct blk_backend_cfg *cfg;
	char dir[KPATH_DIR];
	struct blk_tfs *t;
	struct tfs_cpu *cpu;
	unsigned int kb; /* ring buffer per CPU now */
	int grow; /* may grow the ring after losses */
	unsigned long long *seen_lost; /* per CPU index, at the last tick */
	uint64_t start_mono;
	uint32_t start_real[2];
	int ts_sent;
	int stopped; /* stop() was called (atomic): the spools are converted */
	struct blk_cgpath *cgpath; /* --origin: cgroup ids to paths, NULL if no hierarchy */
	unsigned long cg_unknown; /* cgroup ids not found, as said last */
	struct tfs_origin *origin; /* --origin: files and dirtiers, NULL if not asked */
	struct blk_tfsconv **convs; /* each CPU's converter (for the origin's file names) */
	unsigned int ticks;
	char what[KPATH_DIR + 128]; /* describe() */
};

static const char *tfs_comm(void *ctx, uint32_t pid, char *buf, size_t len)
{
	return blk_tfs_comm(ctx, pid, buf, len);
}

static const char *tfs_cgpath(void *ctx, uint64_t id, char *buf, size_t len)
{
	return blk_cgpath_lookup(ctx, id, buf, len);
}

/* --origin's events, in the blk tracer's ring (tfsorigin.h) */
static int tfs_event_format(void *ctx, const char *event, char *buf, size_t len)
{
	return blk_tfs_event_format(ctx, event, buf, len);
}

static int tfs_enable_event(void *ctx, const char *event, const char *filter, int *filtered)
{
	return blk_tfs_enable_event(ctx, event, filter, filtered);
}

/* the timestamp note the relay path's kernel writes at start: wall and trace time paired */
static int tfs_timestamp(struct tfs_backend *b)
{
	struct blk_event ev;

	for (int i = 0; i < b->cfg->ndevs; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.time = b->start_mono;
		ev.action = BLK_TN_ACTION(BLK_TN_TIMESTAMP);
		ev.pid = (uint32_t)getpid();
		ev.device = b->cfg->devs[i].devno;
		ev.cpu = (uint32_t)b->cfg->cpus[0];
		ev.pdu = (const unsigned char *)b->start_real;
		ev.pdu_len = sizeof(b->start_real);
		ev.version = BLK_IO_TRACE_VERSION;
		if (blk_tfsconv_put(b->cpu[0].conv, i, &ev))
			return -ENOMEM;
	}
	return 0;
}

static uint64_t tfs_mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tfs_backend_close(struct blk_backend *bb, char *err, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	int ret;

	if (!b)
		return 0;
	for (int k = 0; b->cpu && k < b->cfg->ncpus; k++) {
		tfs_ring_free(b->cpu[k].ring);
		blk_tfsconv_free(b->cpu[k].conv);
	}
	free(b->cpu);
	free(b->seen_lost);
	free(b->convs);
	blk_cgpath_free(b->cgpath);
	tfs_origin_free(b->origin);
	ret = blk_tfs_close(b->t);
	if (ret)
		kerr(err, len, "could not restore every tracefs setting in '%s': %s", b->dir,
		     strerror(-ret));
	free(b);
	return ret;
}

/* the default ring size per CPU (KiB) for @ncpus CPUs */
static unsigned int default_kb(int ncpus)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "MemTotal:", 9))
				kb = strtoull(line + 9, NULL, 10);
		fclose(f);
	}
	kb = kb / 256 / (unsigned long long)(ncpus > 0 ? ncpus : 1);
	if (kb < TFS_DEFAULT_MIN_KB)
		kb = TFS_DEFAULT_MIN_KB;
	if (kb > TFS_DEFAULT_MAX_KB)
		kb = TFS_DEFAULT_MAX_KB;
	return (unsigned int)kb;
}

/* Open each CPU's trace_pipe_raw and make its reader and converter. Return 0 or -errno. */
static int tfs_open_cpus(struct tfs_backend *b, char *err, size_t len)
{
	const struct blk_backend_cfg *cfg = b->cfg;
	uint32_t devnos[64];
	int ret;

	for (int i = 0; i < cfg->ndevs; i++)
		devnos[i] = cfg->devs[i].devno;
	for (int k = 0; k < cfg->ncpus; k++) {
		struct tfs_cpu *c = &b->cpu[k];

		ret = tfs_ring_cpu_open(b->dir, devnos, cfg->ndevs, cfg->cpus[k],
					blk_tfs_open_cpu(b->t, cfg->cpus[k]), tfs_comm, b->t,
					cfg->spool_dir, &c->conv, &c->ring, err, len);
		if (ret)
			return ret;
		if (b->cgpath)
			blk_tfsconv_set_cgpath(c->conv, tfs_cgpath, b->cgpath);
		if (b->origin)
			blk_tfsconv_set_origin(c->conv, tfs_origin_events(b->origin));
		b->convs[k] = c->conv;
	}
	return 0;
}

static struct blk_backend *tfs_backend_open(const struct blk_backend_cfg *cfg, char *err,
					    size_t len)
{
	struct tfs_backend *b = calloc(1, sizeof(*b));
	const char *names[64];
	int ret;

	if (!b || cfg->ndevs > 64)
		goto nomem;
	b->base.ops = &blk_backend_tracefs;
	b->cfg = cfg;
	b->cpu = calloc((size_t)cfg->ncpus, sizeof(*b->cpu));
	b->seen_lost = calloc((size_t)cfg->ncpus, sizeof(*b->seen_lost));
	b->convs = calloc((size_t)cfg->ncpus, sizeof(*b->convs));
	if (!b->cpu || !b->seen_lost || !b->convs)
		goto nomem;
	ret = blk_find_tracefs(1, b->dir, sizeof(b->dir));
	if (ret) {
		kerr(err, len, "tracefs is not available: %s", strerror(-ret));
		goto fail;
	}
	for (int i = 0; i < cfg->ndevs; i++) {
		names[i] = cfg->devs[i].sysname;
		snprintf(cfg->devs[i].name, sizeof(cfg->devs[i].name), "%s", cfg->devs[i].sysname);
	}
	/* the relay path's buffers are per device; this ring is shared by all of them */
	b->grow = cfg->buf_default;
	b->kb = cfg->buf_default ? default_kb(cfg->ncpus) : cfg->buf_kb * cfg->nbuf;
	/* pages kept to the end: their pids' names must still be known then */
	b->t = blk_tfs_open(b->dir, names, cfg->ndevs, (uint32_t)cfg->act_mask, b->kb,
			    cfg->spool_dir ? TFS_CMDLINES : 0, cfg->origin, err, len);
	if (!b->t) {
		ret = -errno;
		goto fail;
	}
	if (cfg->origin) {
		const char *root;
		int v;

		/* no hierarchy mounted: the ids are still recorded, named by number */
		b->cgpath = blk_cgpath_new();
		if (b->cgpath) {
			root = blk_cgpath_root(b->cgpath, &v);
			snprintf(
				b->what, sizeof(b->what),
				"--origin: the cgroup of each I/O, named from the cgroup v%d hierarchy at %s",
				v, root);
		} else {
			snprintf(
				b->what, sizeof(b->what),
				"--origin: the cgroup of each I/O, by id only (no cgroup hierarchy of the blkio/io controller is mounted)");
		}
		size_t n = strlen(b->what);
		struct tfs_origin_where where = {tfs_event_format, tfs_enable_event, b->t};

		b->origin =
			tfs_origin_open(&where, cfg, b->what + n, sizeof(b->what) - n, err, len);
		if (!b->origin) {
			ret = -errno;
			goto fail;
		}
	}
	ret = tfs_open_cpus(b, err, len);
	if (ret)
		goto fail;
	return &b->base;
nomem:
	ret = -ENOMEM;
	kerr(err, len, "out of memory");
fail:
	if (b && b->cfg) {
		char ignored[256];

		tfs_backend_close(&b->base, ignored, sizeof(ignored));
	} else {
		free(b);
	}
	errno = -ret;
	return NULL;
}

static int tfs_backend_start(struct blk_backend *bb, char *err, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	struct timespec real;
	int ret;

	clock_gettime(CLOCK_REALTIME, &real);
	b->start_real[0] = (uint32_t)real.tv_sec;
	b->start_real[1] = (uint32_t)real.tv_nsec;
	/* the readers run already: start_mono set (last) says the pair is there to send */
	__atomic_store_n(&b->start_mono, tfs_mono_now(), __ATOMIC_RELEASE);
	ret = blk_tfs_start(b->t);
	if (ret)
		kerr(err, len, "cannot start tracing in '%s': %s", b->dir, strerror(-ret));
	return ret;
}

static int tfs_backend_read(struct blk_backend *bb, int k, int wait_ms,
			    const struct blk_backend_sink *sink, char *err, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	struct tfs_cpu *c = &b->cpu[k];
	struct tfs_ring_batch batch;
	int ret, stopped = __atomic_load_n(&b->stopped, __ATOMIC_ACQUIRE);

	if (k == 0 && !b->ts_sent && __atomic_load_n(&b->start_mono, __ATOMIC_ACQUIRE)) {
		b->ts_sent = 1;
		if (tfs_timestamp(b)) {
			kerr(err, len, "out of memory converting the records of CPU %d",
			     b->cfg->cpus[k]);
			return -ENOMEM;
		}
	}
	ret = tfs_ring_read(c->ring, wait_ms, stopped, &batch, err, len);
	if (ret || batch.kept)
		return ret ? ret : batch.got;
	/* --origin: the last CPU read to the end names the files of every CPU's notes */
	if (!batch.got && stopped && b->origin) {
		ret = tfs_origin_drained(b->origin, k, b->convs, &batch.last);
		if (ret < 0) {
			kerr(err, len, "out of memory naming the files of the origin notes");
			return ret;
		}
		batch.got = ret;
	}
	ret = tfs_ring_deliver(c->conv, b->cfg->ndevs, k, &batch, 0, sink, err, len);
	return ret ? ret : batch.got;
}

static int tfs_backend_tick(struct blk_backend *bb, char *msg, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	unsigned long long lost = 0;
	unsigned long named = 0, unknown = 0;
	char p[KPATH], v[32];
	int worst = -1;

	for (int i = 0; i < b->cfg->ndevs; i++) {
		snprintf(p, sizeof(p), "/sys/class/block/%s/trace/enable", b->cfg->devs[i].sysname);
		if (!read_str(p, v, sizeof(v)) && !strcmp(v, "0")) {
			kerr(msg, len,
			     "tracing of '%s' was turned off from outside ('%s' is 0: stopped by 'blktrace -k'?); ending the trace",
			     b->cfg->devs[i].path, p);
			return -ESHUTDOWN;
		}
	}
	for (int k = 0; k < b->cfg->ncpus; k++) {
		unsigned long long now = blk_tfs_lost(b->t, b->cfg->cpus[k]);

		if (now > b->seen_lost[k]) {
			if (worst < 0 || now - b->seen_lost[k] > lost) {
				lost = now - b->seen_lost[k];
				worst = k;
			}
			b->seen_lost[k] = now;
		}
	}
	++b->ticks;
	/* every 2 s (8 ticks): cgroups made meanwhile, for pages converted after they are gone */
	if (b->cgpath && b->ticks % 8 == 0)
		blk_cgpath_refresh(b->cgpath);
	/*
	 * every tick, while pages wait for the end: the names of the tasks (a busy machine
	 * cycles through the kernel's few thousand in a second or two)
	 */
	if (b->cfg->spool_dir)
		blk_tfs_names_refresh(b->t);
	if (b->cgpath)
		blk_cgpath_counts(b->cgpath, &named, &unknown);
	if (b->cgpath && unknown > b->cg_unknown) {
		int v;
		const char *root = blk_cgpath_root(b->cgpath, &v);

		b->cg_unknown = unknown;
		kerr(msg, len,
		     "%lu cgroup id(s) not found under %s (removed before blktrace looked): named by number",
		     b->cg_unknown, root);
		return 1;
	}
	if (worst >= 0 && b->grow && b->kb < TFS_MAX_KB) {
		unsigned int kb = b->kb * 4 > TFS_MAX_KB ? TFS_MAX_KB : b->kb * 4;

		if (blk_tfs_resize(b->t, kb)) {
			b->grow = 0;
			kerr(msg, len, "%llu events lost on CPU %d; could not grow the ring buffer",
			     lost, b->cfg->cpus[worst]);
			return 1;
		}
		kerr(msg, len,
		     "%llu events lost on CPU %d: tracefs ring buffer grown from %u to %u KiB per CPU",
		     lost, b->cfg->cpus[worst], b->kb, kb);
		b->kb = kb;
		return 1;
	}
	return 0;
}

static int tfs_backend_stop(struct blk_backend *bb)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	int ret = blk_tfs_stop(b->t);

	__atomic_store_n(&b->stopped, 1, __ATOMIC_RELEASE);
	return ret;
}

static uint64_t tfs_backend_lost(struct blk_backend *bb, int dev, int k)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;

	uint64_t stats = blk_tfs_lost(b->t, b->cfg->cpus[k]);
	uint64_t pages = blk_tfsconv_missed(b->cpu[k].conv);

	(void)dev; /* the ring buffer is shared by the devices: its losses count for each */
	/* the ring's counters, or what the pages said was missed where that is more */
	return pages > stats ? pages : stats;
}

static uint64_t tfs_backend_skipped(struct blk_backend *bb, int dev, int k)
{
	/* a CPU's pipe is shared by the devices: count what it skipped once */
	return dev == 0 ? blk_tfsconv_skipped(((struct tfs_backend *)bb)->cpu[k].conv) : 0;
}

/* the summary's lines about --origin: the cgroups named and those only numbered; the notes */
static int tfs_backend_report(struct blk_backend *bb, char *msg, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	unsigned long named, unknown;
	const char *root;
	size_t n;
	int v;

	if (!b->cfg->origin)
		return 0;
	if (!b->cgpath) {
		kerr(msg, len, "Cgroups: named by number only (no blkio/io cgroup hierarchy)");
	} else {
		root = blk_cgpath_root(b->cgpath, &v);
		blk_cgpath_counts(b->cgpath, &named, &unknown);
		kerr(msg, len, "Cgroups: %lu named from %s, %lu not found there (named by number)",
		     named, root, unknown);
	}
	n = strlen(msg);
	if (b->origin && n + 3 < len) {
		memcpy(msg + n, "\n  ", 3);
		tfs_origin_report(b->origin, b->convs, b->cfg->ncpus, msg + n + 3, len - n - 3);
	}
	return 1;
}

static const char *tfs_backend_describe(struct blk_backend *bb)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;

	return b->what[0] ? b->what : NULL;
}

const struct blk_backend_ops blk_backend_tracefs = {
	.name = "tracefs",
	.open = tfs_backend_open,
	.start = tfs_backend_start,
	.read = tfs_backend_read,
	.tick = tfs_backend_tick,
	.stop = tfs_backend_stop,
	.lost = tfs_backend_lost,
	.skipped = tfs_backend_skipped,
	.close = tfs_backend_close,
	.describe = tfs_backend_describe,
	.report = tfs_backend_report,
};
