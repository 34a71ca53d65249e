// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace "blk" tracer as a tracing backend where relay files cannot be used (kernel
 * lockdown). Every setting touched is saved first and put back by blk_tfs_close().
 */
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
#include "holder.h"
#include "tfsstate.h"
#include "tfsconv.h"
#include "util.h"

#define MAX_CPUS_TRACKED 4096

struct tfs_dev {
	char dir[KPATH_SUB]; /* /sys/class/block/NAME/trace */
	int was_enabled;
	int enabled;
};

struct blk_tfs {
	struct tfs_state st; /* as found: dir, settings, the devices traced */
	int buf_changed;
	int tracer_set, clock_set;
	int touched; /* something was changed: restore on close */
	int state_kept; /* st is in TFS_STATE_FILE, for blktrace -k after a SIGKILL */
	struct tfs_dev *devs;
	int ndevs;
	unsigned long long base_lost[MAX_CPUS_TRACKED];
};

static int tpath(const struct blk_tfs *t, char *buf, size_t len, const char *rel)
{
	return snprintf(buf, len, "%s/%s", t->st.dir, rel) >= (int)len ? -ENAMETOOLONG : 0;
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
	return tfs_state_set(&t->st, rel, s);
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

/* who reads the blk tracer's pipes, 0 if nobody */
static int pipe_holder(char *comm, size_t len)
{
	return blk_holder_find(blk_holder_blk_pipe, NULL, comm, len);
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
	snprintf(t->st.dir, sizeof(t->st.dir), "%s", dir);
	t->st.pid = (int)getpid();
	t->devs = calloc((size_t)ndevs, sizeof(*t->devs));
	t->st.devs = calloc((size_t)ndevs, sizeof(*t->st.devs));
	if (!t->devs || !t->st.devs) {
		free(t->devs);
		free(t->st.devs);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* save */
	if ((ret = tread(t, "tracing_on", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/tracing_on': %s", dir, strerror(-ret));
		goto fail;
	}
	t->st.was_on = atoi(buf);
	if ((ret = tread(t, "current_tracer", t->st.tracer, sizeof(t->st.tracer)))) {
		kerr(err, errlen, "cannot read '%s/current_tracer': %s", dir, strerror(-ret));
		goto fail;
	}
	if (tread(t, "available_tracers", buf, sizeof(buf)) || !strstr(buf, "blk")) {
		ret = -EOPNOTSUPP;
		kerr(err, errlen, "the kernel has no 'blk' tracer (CONFIG_BLK_DEV_IO_TRACE)");
		goto fail;
	}
	if (!strcmp(t->st.tracer, "blk")) {
		char comm[64];
		int pid = pipe_holder(comm, sizeof(comm));

		ret = -EBUSY;
		if (pid)
			kerr(err, errlen,
			     "the blk tracer in '%s' is in use: process %d (%s) is tracing; stop it first (kill -INT %d)",
			     dir, pid, comm, pid);
		else
			kerr(err, errlen,
			     "the blk tracer in '%s' is set up but no process reads it: left set up by a blktrace that was killed",
			     dir);
		goto fail;
	}
	if (strcmp(t->st.tracer, "nop")) {
		ret = -EBUSY;
		kerr(err, errlen, "tracefs is in use by the '%s' tracer", t->st.tracer);
		goto fail;
	}
	if ((ret = tread(t, "trace_clock", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/trace_clock': %s", dir, strerror(-ret));
		goto fail;
	}
	bracketed(buf, t->st.clock, sizeof(t->st.clock));
	if ((ret = tread(t, "options/bin", buf, sizeof(buf)))) {
		kerr(err, errlen, "cannot read '%s/options/bin': %s", dir, strerror(-ret));
		goto fail;
	}
	t->st.bin = atoi(buf);
	if (!tread(t, "buffer_size_kb", buf, sizeof(buf))) {
		char *e = strstr(buf, "expanded: ");

		/* an unexpanded buffer cannot be put back: keep the size it expands to */
		snprintf(t->st.buf_kb, sizeof(t->st.buf_kb), "%lu",
			 strtoul(e ? e + 10 : buf, NULL, 10));
	}
	for (int i = 0; i < ndevs; i++) {
		struct tfs_dev *d = &t->devs[i];

		snprintf(t->st.devs[i].name, sizeof(t->st.devs[i].name), "%s", sysnames[i]);
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
	t->st.ndevs = ndevs;
	/* kept where blktrace -k finds it after a SIGKILL; tracing goes on without it (no /run) */
	t->state_kept = !tfs_state_save(&t->st);

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
			kerr(err, errlen, "cannot enable tracing of '%s' (%s): %s", sysnames[i], p,
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
	/* options/bin is left as found: the raw pages are the ring's entries whatever it says */
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

int blk_tfs_close(struct blk_tfs *t)
{
	unsigned int what = 0;
	int ret = 0;

	if (!t)
		return 0;
	if (t->touched) {
		what |= t->tracer_set ? TFS_PUT_TRACER : 0;
		what |= t->buf_changed ? TFS_PUT_BUF : 0;
		what |= t->clock_set ? TFS_PUT_CLOCK : 0;
		for (int i = 0; i < t->ndevs; i++)
			what |= t->devs[i].enabled ? TFS_PUT_DEVS : 0;
		ret = tfs_state_put_back(&t->st, what);
	}
	/* kept when something could not be put back: blktrace -k tries again */
	if (t->state_kept && !ret)
		tfs_state_forget(t->st.pid);
	free(t->devs);
	tfs_state_free(&t->st);
	free(t);
	return ret;
}

/*
 * No process traces: put back what the state file of a killed tracer says it found, when
 * it is about @dir. Return 2 done (@msg says what), 0 no such file, -errno.
 */
static int put_back_left(const char *dir, char *msg, size_t len)
{
	struct tfs_state st;
	char what[256];
	int ret = tfs_state_load(&st);

	if (ret == -ENOENT)
		return 0;
	if (ret) {
		kerr(msg, len, "cannot read '%s': %s (remove it if it is not blktrace's)",
		     TFS_STATE_FILE, strerror(-ret));
		return ret;
	}
	if (strcmp(st.dir, dir) || blk_pid_alive(st.pid)) {
		tfs_state_free(&st);
		return 0;
	}
	ret = tfs_state_put_back(&st, TFS_PUT_ALL);
	tfs_state_describe(&st, what, sizeof(what));
	if (ret)
		kerr(msg, len, "could not put back every tracefs setting in '%s' (%s): %s", dir,
		     what, strerror(-ret));
	else
		kerr(msg, len,
		     "put back the tracefs settings blktrace %d (killed) had changed in '%s': %s",
		     st.pid, dir, what);
	if (!ret)
		unlink(TFS_STATE_FILE);
	tfs_state_free(&st);
	return ret ? ret : 2;
}

int blk_tfs_kill(const char *dir, const char *const *sysnames, int ndevs, int wait_ms, char *msg,
		 size_t len)
{
	struct blk_tfs t;
	char buf[256], p[KPATH], comm[64];
	int ret = 0, pid;

	memset(&t, 0, sizeof(t));
	snprintf(t.st.dir, sizeof(t.st.dir), "%s", dir);
	if (tread(&t, "current_tracer", buf, sizeof(buf)))
		return 0;
	if (strcmp(buf, "blk"))
		return put_back_left(dir, msg, len);
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
	ret = put_back_left(dir, msg, len);
	if (ret)
		return ret;
	/* no state file (a tracer of before it, or /run not writable): what is known */
	if (twrite(&t, "current_tracer", "nop")) {
		kerr(msg, len, "cannot reset '%s/current_tracer'", dir);
		return -EIO;
	}
	if (twrite(&t, "options/bin", "0")) {
		kerr(msg, len, "cannot reset '%s/options/bin'", dir);
		return -EIO;
	}
	kerr(msg, len,
	     "reset the tracefs blk tracer left set up in '%s' (current_tracer=nop options/bin=0); "
	     "no %s says what trace_clock and buffer_size_kb were",
	     dir, TFS_STATE_FILE);
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
