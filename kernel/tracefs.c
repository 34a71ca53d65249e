// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace "blk" tracer as a tracing backend where relay files cannot be used (kernel
 * lockdown). Every setting touched is saved first and put back by blk_tfs_close().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk/kernel.h"

#define MAX_CPUS_TRACKED 4096

struct tfs_dev {
	char name[64];
	char dir[4200]; /* /sys/class/block/NAME/trace */
	int was_enabled;
	int enabled;
};

struct blk_tfs {
	char dir[4096];
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

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

static int tpath(const struct blk_tfs *t, char *buf, size_t len, const char *rel)
{
	return snprintf(buf, len, "%s/%s", t->dir, rel) >= (int)len ? -ENAMETOOLONG : 0;
}

static int tread(const struct blk_tfs *t, const char *rel, char *buf, size_t len)
{
	char p[4400];

	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	return read_str(p, buf, len);
}

static int twrite(const struct blk_tfs *t, const char *rel, const char *s)
{
	char p[4400];

	if (tpath(t, p, sizeof(p), rel))
		return -ENAMETOOLONG;
	return write_str(p, s);
}

static void errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
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
	char buf[4096], p[4400];
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
		errf(err, errlen, "cannot read '%s/tracing_on': %s", dir, strerror(-ret));
		goto fail;
	}
	t->was_on = atoi(buf);
	if ((ret = tread(t, "current_tracer", t->tracer, sizeof(t->tracer)))) {
		errf(err, errlen, "cannot read '%s/current_tracer': %s", dir, strerror(-ret));
		goto fail;
	}
	if (tread(t, "available_tracers", buf, sizeof(buf)) || !strstr(buf, "blk")) {
		ret = -EOPNOTSUPP;
		errf(err, errlen, "the kernel has no 'blk' tracer (CONFIG_BLK_DEV_IO_TRACE)");
		goto fail;
	}
	if (!strcmp(t->tracer, "blk")) {
		ret = -EBUSY;
		errf(err, errlen,
		     "the blk tracer is already in use in '%s' (another blktrace, or one that was killed)",
		     dir);
		goto fail;
	}
	if (strcmp(t->tracer, "nop")) {
		ret = -EBUSY;
		errf(err, errlen, "tracefs is in use by the '%s' tracer", t->tracer);
		goto fail;
	}
	if ((ret = tread(t, "trace_clock", buf, sizeof(buf)))) {
		errf(err, errlen, "cannot read '%s/trace_clock': %s", dir, strerror(-ret));
		goto fail;
	}
	bracketed(buf, t->clock, sizeof(t->clock));
	if ((ret = tread(t, "options/bin", buf, sizeof(buf)))) {
		errf(err, errlen, "cannot read '%s/options/bin': %s", dir, strerror(-ret));
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
			errf(err, errlen, "cannot read '%s': %s", p, strerror(-ret));
			goto fail;
		}
		d->was_enabled = atoi(buf);
		if (d->was_enabled) {
			ret = -EBUSY;
			errf(err, errlen,
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
			errf(err, errlen, "cannot enable tracing of '%s' (%s): %s", d->name, p,
			     strerror(-ret));
			goto fail;
		}
		if (act_mask) {
			snprintf(p, sizeof(p), "%s/act_mask", d->dir);
			snprintf(buf, sizeof(buf), "0x%x", act_mask);
			if ((ret = write_str(p, buf))) {
				errf(err, errlen, "cannot set '%s': %s", p, strerror(-ret));
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
	errf(err, errlen, "cannot set up the blk tracer in '%s': %s", dir, strerror(-ret));
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
	char rel[64], p[4400];
	int fd;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe", cpu);
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
	char p[4400], line[256];
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
	char p[4400], v[32];
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

int blk_tfs_reset(const char *dir, const char *const *sysnames, int ndevs)
{
	struct blk_tfs t;
	char buf[256], p[4400];
	int ret = 0, was_blk;

	memset(&t, 0, sizeof(t));
	snprintf(t.dir, sizeof(t.dir), "%s", dir);
	if (tread(&t, "current_tracer", buf, sizeof(buf)))
		return -ENOENT;
	was_blk = !strcmp(buf, "blk");
	for (int i = 0; i < ndevs; i++) {
		snprintf(p, sizeof(p), "/sys/class/block/%s/trace/enable", sysnames[i]);
		if (!read_str(p, buf, sizeof(buf)) && atoi(buf)) {
			if (write_str(p, "0") && !ret)
				ret = -EIO;
			was_blk = 1;
		}
	}
	if (!was_blk)
		return 0;
	if (twrite(&t, "current_tracer", "nop") && !ret)
		ret = -EIO;
	if (twrite(&t, "options/bin", "0") && !ret)
		ret = -EIO;
	return ret ? ret : 1;
}
