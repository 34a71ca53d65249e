// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace "blk" tracer as a tracing backend where relay files cannot be used (kernel
 * lockdown). Every setting touched is saved first and put back by blk_tfs_close().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "blk/backend.h"
#include "blk/event.h"
#include "blk/kernel.h"
#include "tfsconv.h"
#include "util.h"

#define MAX_CPUS_TRACKED 4096

struct tfs_dev {
	char name[64];
	char dir[KPATH_SUB]; /* /sys/class/block/NAME/trace */
	int was_enabled;
	int enabled;
};

struct blk_tfs {
	char dir[KPATH_DIR];
	int was_on;
	char tracer[64];
	char clock[32];
	int bin;
	char buf_kb[32];
	int buf_changed;
	int tracer_set, clock_set, bin_set;
	int touched; /* something was changed: restore on close */
	struct tfs_dev *devs;
	int ndevs;
	unsigned long long base_lost[MAX_CPUS_TRACKED];
	char saved[512];
};

static int tpath(const struct blk_tfs *t, char *buf, size_t len, const char *rel)
{
	return snprintf(buf, len, "%s/%s", t->dir, rel) >= (int)len ? -ENAMETOOLONG : 0;
}

static int tread(const struct blk_tfs *t, const char *rel, char *buf, size_t len)
{
	char p[KPATH];

	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	return read_str(p, buf, len);
}

static int twrite(const struct blk_tfs *t, const char *rel, const char *s)
{
	char p[KPATH];

	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	return write_str(p, s);
}

/* "[local] global counter" -> "local" */
static void bracketed(const char *s, char *out, size_t len)
{
	const char *a = strchr(s, '['), *b = a ? strchr(a, ']') : NULL;

	if (a && b && (size_t)(b - a - 1) < len) {
		memcpy(out, a + 1, (size_t)(b - a - 1));
		out[b - a - 1] = '\0';
	} else {
		snprintf(out, len, "%s", s);
	}
}

static unsigned long long cpu_lost(const struct blk_tfs *t, int cpu)
{
	char rel[64], buf[2048], *p;
	unsigned long long total = 0;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	if (tread(t, rel, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\noverrun:");
	if (!p && !strncmp(buf, "overrun:", 8))
		p = buf - 1;
	if (p)
		total += strtoull(p + 10, NULL, 10);
	p = strstr(buf, "dropped events:");
	if (p)
		total += strtoull(p + 15, NULL, 10);
	return total;
}

struct blk_tfs *blk_tfs_open(const char *dir, const char *const *sysnames, int ndevs,
			     uint32_t act_mask, unsigned int buf_kb, char *err, size_t errlen)
{
	struct blk_tfs *t = calloc(1, sizeof(*t));
	char buf[4096], p[KPATH];
	int ret;

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(t->dir, sizeof(t->dir), "%s", dir);
	t->devs = calloc((size_t)ndevs, sizeof(*t->devs));
	if (!t->devs) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* save */
	if ((ret = tread(t, "tracing_on", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/tracing_on': %s", dir, strerror(-ret));
		goto fail;
	}
	t->was_on = atoi(buf);
	if ((ret = tread(t, "current_tracer", t->tracer, sizeof(t->tracer)))) {
		kerr(err, errlen, "cannot read '%s/current_tracer': %s", dir, strerror(-ret));
		goto fail;
	}
	if (tread(t, "available_tracers", buf, sizeof(buf)) || !strstr(buf, "blk")) {
		ret = -EOPNOTSUPP;
		kerr(err, errlen, "the kernel has no 'blk' tracer (CONFIG_BLK_DEV_IO_TRACE)");
		goto fail;
	}
	if (!strcmp(t->tracer, "blk")) {
		ret = -EBUSY;
		kerr(err, errlen,
		     "the blk tracer is already in use in '%s' (another blktrace, or one that was killed)",
		     dir);
		goto fail;
	}
	if (strcmp(t->tracer, "nop")) {
		ret = -EBUSY;
		kerr(err, errlen, "tracefs is in use by the '%s' tracer", t->tracer);
		goto fail;
	}
	if ((ret = tread(t, "trace_clock", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/trace_clock': %s", dir, strerror(-ret));
		goto fail;
	}
	bracketed(buf, t->clock, sizeof(t->clock));
	if ((ret = tread(t, "options/bin", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/options/bin': %s", dir, strerror(-ret));
		goto fail;
	}
	t->bin = atoi(buf);
	if (!tread(t, "buffer_size_kb", buf, sizeof(buf))) {
		char *e = strstr(buf, "expanded: ");

		/* an unexpanded buffer cannot be put back: keep the size it expands to */
		snprintf(t->buf_kb, sizeof(t->buf_kb), "%lu", strtoul(e ? e + 10 : buf, NULL, 10));
	}
	for (int i = 0; i < ndevs; i++) {
		struct tfs_dev *d = &t->devs[i];

		snprintf(d->name, sizeof(d->name), "%s", sysnames[i]);
		snprintf(d->dir, sizeof(d->dir), "/sys/class/block/%s/trace", sysnames[i]);
		snprintf(p, sizeof(p), "%s/enable", d->dir);
		if ((ret = read_str(p, buf, sizeof(buf)))) {
			kerr(err, errlen, "cannot read '%s': %s", p, strerror(-ret));
			goto fail;
		}
		d->was_enabled = atoi(buf);
		if (d->was_enabled) {
			ret = -EBUSY;
			kerr(err, errlen,
			     "'%s' is already being traced through tracefs ('%s' is 1)",
			     sysnames[i], p);
			goto fail;
		}
	}
	t->ndevs = ndevs;
	snprintf(t->saved, sizeof(t->saved),
		 "tracing_on=%d current_tracer=%s trace_clock=%s options/bin=%d buffer_size_kb=%s",
		 t->was_on, t->tracer, t->clock, t->bin, t->buf_kb);

	/* set up */
	t->touched = 1;
	if ((ret = twrite(t, "tracing_on", "0")))
		goto werr;
	t->clock_set = 1;
	if ((ret = twrite(t, "trace_clock", "mono")))
		goto werr;
	if (buf_kb) {
		snprintf(buf, sizeof(buf), "%u", buf_kb);
		t->buf_changed = 1;
		if ((ret = twrite(t, "buffer_size_kb", buf)))
			goto werr;
	}
	for (int i = 0; i < ndevs; i++) {
		struct tfs_dev *d = &t->devs[i];

		snprintf(p, sizeof(p), "%s/enable", d->dir);
		d->enabled = 1;
		if ((ret = write_str(p, "1"))) {
			kerr(err, errlen, "cannot enable tracing of '%s' (%s): %s", d->name, p,
			     strerror(-ret));
			goto fail;
		}
		if (act_mask) {
			snprintf(p, sizeof(p), "%s/act_mask", d->dir);
			snprintf(buf, sizeof(buf), "0x%x", act_mask);
			if ((ret = write_str(p, buf))) {
				kerr(err, errlen, "cannot set '%s': %s", p, strerror(-ret));
				goto fail;
			}
		}
	}
	t->tracer_set = 1;
	if ((ret = twrite(t, "current_tracer", "blk")))
		goto werr;
	t->bin_set = 1;
	if ((ret = twrite(t, "options/bin", "1")))
		goto werr;
	/* old contents would be read as records: start empty */
	if ((ret = twrite(t, "trace", "")))
		goto werr;
	for (int c = 0; c < MAX_CPUS_TRACKED; c++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "per_cpu/cpu%d", c);
		if (tpath(t, p, sizeof(p), rel) || access(p, F_OK))
			break;
		t->base_lost[c] = cpu_lost(t, c);
	}
	return t;
werr:
	kerr(err, errlen, "cannot set up the blk tracer in '%s': %s", dir, strerror(-ret));
fail:
	blk_tfs_close(t);
	errno = -ret;
	return NULL;
}

int blk_tfs_start(struct blk_tfs *t)
{
	return twrite(t, "tracing_on", "1");
}

int blk_tfs_stop(struct blk_tfs *t)
{
	return twrite(t, "tracing_on", "0");
}

int blk_tfs_open_cpu(struct blk_tfs *t, int cpu)
{
	char rel[64], p[KPATH];
	int fd;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

unsigned long long blk_tfs_lost(struct blk_tfs *t, int cpu)
{
	unsigned long long now = cpu_lost(t, cpu);

	if (cpu < 0 || cpu >= MAX_CPUS_TRACKED)
		return now;
	return now >= t->base_lost[cpu] ? now - t->base_lost[cpu] : now;
}

const char *blk_tfs_comm(struct blk_tfs *t, uint32_t pid, char *buf, size_t len)
{
	char p[KPATH], line[256];
	FILE *f;

	if (tpath(t, p, sizeof(p), "saved_cmdlines"))
		return NULL;
	f = fopen(p, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp || (uint32_t)strtoul(line, NULL, 10) != pid)
			continue;
		sp++;
		sp[strcspn(sp, "\n")] = '\0';
		snprintf(buf, len, "%s", sp);
		fclose(f);
		return buf;
	}
	fclose(f);
	return NULL;
}

const char *blk_tfs_saved(const struct blk_tfs *t)
{
	return t->saved;
}

int blk_tfs_close(struct blk_tfs *t)
{
	char p[KPATH], v[32];
	int ret = 0, r;

	if (!t)
		return 0;
	if (!t->touched)
		goto out;
#define KEEP(x)                  \
	do {                     \
		r = (x);         \
		if (r && !ret)   \
			ret = r; \
	} while (0)
	KEEP(twrite(t, "tracing_on", "0"));
	if (t->bin_set) {
		snprintf(v, sizeof(v), "%d", t->bin);
		KEEP(twrite(t, "options/bin", v));
	}
	if (t->tracer_set)
		KEEP(twrite(t, "current_tracer", t->tracer));
	for (int i = 0; i < t->ndevs; i++) {
		if (!t->devs[i].enabled)
			continue;
		snprintf(p, sizeof(p), "%s/enable", t->devs[i].dir);
		KEEP(write_str(p, "0"));
	}
	if (t->buf_changed && t->buf_kb[0])
		KEEP(twrite(t, "buffer_size_kb", t->buf_kb));
	if (t->clock_set && t->clock[0])
		KEEP(twrite(t, "trace_clock", t->clock));
	snprintf(v, sizeof(v), "%d", t->was_on);
	KEEP(twrite(t, "tracing_on", v));
#undef KEEP
out:
	free(t->devs);
	free(t);
	return ret;
}

/* a process other than us that holds a trace_pipe(_raw) of the top-level buffer open, or 0 */
static int pipe_holder(char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		char p[300], link[KPATH];
		DIR *fds;
		struct dirent *fe;
		int pid = atoi(de->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%d/fd", pid);
		fds = opendir(p);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			ssize_t n;

			snprintf(p, sizeof(p), "/proc/%d/fd/%s", pid, fe->d_name);
			n = readlink(p, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (((n > 11 && !strcmp(link + n - 11, "/trace_pipe")) ||
			     (n > 15 && !strcmp(link + n - 15, "/trace_pipe_raw"))) &&
			    !strstr(link, "/instances/")) {
				found = pid;
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	if (found) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/comm", found);
		if (read_str(p, comm, len))
			snprintf(comm, len, "?");
	}
	return found;
}

int blk_tfs_kill(const char *dir, const char *const *sysnames, int ndevs, int wait_ms, char *msg,
		 size_t len)
{
	struct blk_tfs t;
	char buf[256], p[KPATH], comm[64];
	int ret = 0, pid;

	memset(&t, 0, sizeof(t));
	snprintf(t.dir, sizeof(t.dir), "%s", dir);
	if (tread(&t, "current_tracer", buf, sizeof(buf)))
		return 0;
	if (strcmp(buf, "blk"))
		return 0;
	/* turning a device off is what a running tracer of ours watches for */
	for (int i = 0; i < ndevs; i++) {
		snprintf(p, sizeof(p), "/sys/class/block/%s/trace/enable", sysnames[i]);
		if (!read_str(p, buf, sizeof(buf)) && atoi(buf) && write_str(p, "0") && !ret) {
			ret = -EIO;
			kerr(msg, len, "cannot turn off '%s'", p);
		}
	}
	if (ret)
		return ret;
	pid = pipe_holder(comm, sizeof(comm));
	if (pid) {
		/* a tracer is reading: it puts tracefs back itself when it notices */
		for (int waited = 0; waited < wait_ms; waited += 50) {
			if (!tread(&t, "current_tracer", buf, sizeof(buf)) && strcmp(buf, "blk")) {
				kerr(msg, len, "stopped the running trace (pid %d, %s)", pid, comm);
				return 1;
			}
			usleep(50 * 1000);
		}
		kerr(msg, len,
		     "the tracer reading '%s' (pid %d, %s) did not stop within %d ms; stop it with 'kill %d'",
		     dir, pid, comm, wait_ms, pid);
		return -EBUSY;
	}
	/* nobody reads: a tracer killed with SIGKILL left it set up */
	if (twrite(&t, "current_tracer", "nop")) {
		kerr(msg, len, "cannot reset '%s/current_tracer'", dir);
		return -EIO;
	}
	if (twrite(&t, "options/bin", "0")) {
		kerr(msg, len, "cannot reset '%s/options/bin'", dir);
		return -EIO;
	}
	kerr(msg, len, "reset the tracefs blk tracer left set up in '%s'", dir);
	return 2;
}

/* ---- the tracefs backend: ring-buffer pages turned into classic per-CPU records ---- */

/* pages read per call at most, so that a busy CPU's records are delivered as they come */
#define TFS_READ_PAGES 256
/* per CPU, when neither -b nor -n is given: 1/256 of the memory over the CPUs, in these bounds */
#define TFS_DEFAULT_MIN_KB 16384u
#define TFS_DEFAULT_MAX_KB 65536u
#define TFS_MAX_KB 262144u /* growing after losses stops here */

struct tfs_cpu {
	int fd; /* per_cpu/cpuN/trace_pipe_raw */
	struct tracefs_cpu *tcpu; /* libtracefs's reader of it */
	unsigned char *page;
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
};

static const char *tfs_comm(void *ctx, uint32_t pid, char *buf, size_t len)
{
	return blk_tfs_comm(ctx, pid, buf, len);
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
		struct tfs_cpu *c = &b->cpu[k];

		if (c->tcpu)
			tracefs_cpu_free_fd(c->tcpu);
		if (c->fd >= 0)
			close(c->fd);
		free(c->page);
		blk_tfsconv_free(c->conv);
	}
	free(b->cpu);
	free(b->seen_lost);
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

/*
 * The page size trace_pipe_raw hands out: buffer_subbuf_size_kb where the kernel has it
 * (6.8 and later), else the page of header_page's layout.
 */
static int tfs_page_size(struct tfs_backend *b, const struct blk_tfsconv *conv)
{
	char p[KPATH], v[32];
	long kb;

	snprintf(p, sizeof(p), "%s/buffer_subbuf_size_kb", b->dir);
	if (!read_str(p, v, sizeof(v)) && (kb = strtol(v, NULL, 10)) > 0 && kb <= 1024)
		return (int)kb * 1024;
	return blk_tfsconv_page_size(conv);
}

/* Open each CPU's trace_pipe_raw and make its reader and converter. Return 0 or -errno. */
static int tfs_open_cpus(struct tfs_backend *b, char *err, size_t len)
{
	const struct blk_backend_cfg *cfg = b->cfg;
	uint32_t devnos[64];
	char p[KPATH], hp[4096];
	int ret, size;

	snprintf(p, sizeof(p), "%s/events/header_page", b->dir);
	ret = read_str(p, hp, sizeof(hp));
	if (ret) {
		kerr(err, len, "cannot read '%s': %s", p, strerror(-ret));
		return ret;
	}
	for (int i = 0; i < cfg->ndevs; i++)
		devnos[i] = cfg->devs[i].devno;
	for (int k = 0; k < cfg->ncpus; k++) {
		struct tfs_cpu *c = &b->cpu[k];

		c->conv = blk_tfsconv_new(hp, devnos, cfg->ndevs, (uint32_t)cfg->cpus[k], tfs_comm,
					  b->t);
		if (!c->conv) {
			ret = -errno;
			kerr(err, len, "cannot read the ring-buffer page layout in '%s': %s", p,
			     strerror(-ret));
			return ret;
		}
		size = tfs_page_size(b, c->conv);
		c->page = malloc((size_t)size);
		if (!c->page)
			return -ENOMEM;
		c->fd = blk_tfs_open_cpu(b->t, cfg->cpus[k]);
		if (c->fd < 0) {
			kerr(err, len, "cannot open '%s/per_cpu/cpu%d/trace_pipe_raw': %s", b->dir,
			     cfg->cpus[k], strerror(-c->fd));
			return c->fd;
		}
		c->tcpu = tracefs_cpu_alloc_fd(c->fd, size, true);
		if (!c->tcpu)
			return errno ? -errno : -ENOMEM;
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
	if (!b->cpu || !b->seen_lost)
		goto nomem;
	for (int k = 0; k < cfg->ncpus; k++)
		b->cpu[k].fd = -1;
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
	b->t = blk_tfs_open(b->dir, names, cfg->ndevs, (uint32_t)cfg->act_mask, b->kb, err, len);
	if (!b->t) {
		ret = -errno;
		goto fail;
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
	uint64_t now, last = 0;
	int ret, got = 0;

	if (k == 0 && !b->ts_sent && __atomic_load_n(&b->start_mono, __ATOMIC_ACQUIRE)) {
		b->ts_sent = 1;
		if (tfs_timestamp(b))
			goto nomem;
	}
	if (wait_ms > 0) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};

		poll(&pfd, 1, wait_ms);
	}
	now = tfs_mono_now();
	for (int pages = 0; pages < TFS_READ_PAGES; pages++) {
		int n = tracefs_cpu_read(c->tcpu, c->page, true);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			ret = -errno;
			kerr(err, len, "reading trace_pipe_raw of CPU %d: %s", b->cfg->cpus[k],
			     strerror(-ret));
			return ret;
		}
		if (n <= 0)
			break;
		ret = blk_tfsconv_page(c->conv, c->page, (size_t)n, &last);
		if (ret == -ENOMEM)
			goto nomem;
		if (ret < 0) {
			kerr(err, len, "CPU %d: trace_pipe_raw gave a page that is not one",
			     b->cfg->cpus[k]);
			return ret;
		}
		got = 1;
	}
	for (int i = 0; i < b->cfg->ndevs; i++) {
		unsigned long events;
		size_t n;
		const unsigned char *p = blk_tfsconv_staged(c->conv, i, &n, &events);

		if (n) {
			ret = sink->records(sink->ctx, i, k, p, n, events);
			blk_tfsconv_clear(c->conv, i);
			if (ret) {
				kerr(err, len, "%s", strerror(-ret));
				return ret;
			}
		}
		/* one ring carries every device of this CPU, in time order */
		if (sink->mark)
			sink->mark(sink->ctx, i, k,
				   got && last ? last : now - BLK_BACKEND_SLACK_NS);
	}
	return got;
nomem:
	kerr(err, len, "out of memory converting the records of CPU %d", b->cfg->cpus[k]);
	return -ENOMEM;
}

static int tfs_backend_tick(struct blk_backend *bb, char *msg, size_t len)
{
	struct tfs_backend *b = (struct tfs_backend *)bb;
	unsigned long long lost = 0;
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
	if (worst >= 0 && b->grow && b->kb < TFS_MAX_KB) {
		unsigned int kb = b->kb * 4 > TFS_MAX_KB ? TFS_MAX_KB : b->kb * 4;

		snprintf(v, sizeof(v), "%u", kb);
		if (twrite(b->t, "buffer_size_kb", v)) {
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
	return blk_tfs_stop(((struct tfs_backend *)bb)->t);
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
};
