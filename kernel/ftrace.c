// SPDX-License-Identifier: GPL-2.0
/*
 * Trace events read through a private tracefs instance: the ring-buffer page format of
 * trace_pipe_raw (as the kernel's ring_buffer.c lays it out and libtraceevent's kbuffer
 * reads it), event format files, the instance's life cycle, kprobe events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk/ftrace.h"
#include "util.h"

/* ---- pages ---- */

#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define TS_SHIFT 27
#define TS_MSB_MASK (~((1ull << 59) - 1)) /* bits an absolute time stamp does not carry */

void blk_ftrace_page_fmt_default(struct blk_ftrace_page_fmt *f, unsigned int page_size)
{
	uint16_t x = 1;
	unsigned char c;

	memcpy(&c, &x, 1);
	f->ts_off = 0;
	f->commit_off = 8;
	f->commit_size = 8;
	f->data_off = 16;
	f->data_size = page_size > 16 ? page_size - 16 : 0;
	f->big_endian_bits = c == 0;
}

/* "field: TYPE NAME;\toffset:N;\tsize:N;..." for NAME in @text */
static int header_field(const char *text, const char *name, unsigned int *off, unsigned int *size)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';'), *q;

		if (!semi)
			return -EINVAL;
		q = semi;
		while (q > p && q[-1] == ' ')
			q--;
		if ((size_t)(q - p) > n && !strncmp(q - n, name, n) && q[-(long)n - 1] == ' ') {
			const char *o = strstr(semi, "offset:"), *s = strstr(semi, "size:");

			if (!o || !s)
				return -EINVAL;
			*off = (unsigned int)strtoul(o + 7, NULL, 10);
			*size = (unsigned int)strtoul(s + 5, NULL, 10);
			return 0;
		}
		p = semi;
	}
	return -EINVAL;
}

int blk_ftrace_page_fmt_parse(const char *text, struct blk_ftrace_page_fmt *f)
{
	struct blk_ftrace_page_fmt n = *f;
	unsigned int sz;

	if (header_field(text, "timestamp", &n.ts_off, &sz) || sz != 8 ||
	    header_field(text, "commit", &n.commit_off, &n.commit_size) ||
	    (n.commit_size != 4 && n.commit_size != 8) ||
	    header_field(text, "data", &n.data_off, &n.data_size))
		return -EINVAL;
	*f = n;
	return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int blk_ftrace_page_walk(const struct blk_ftrace_page_fmt *f, const unsigned char *p, size_t len,
			 blk_ftrace_rec_fn fn, void *arg, uint64_t *missed)
{
	uint64_t ts, commit, used;
	size_t off, end;
	int n = 0;

	*missed = 0;
	if (len < f->data_off || len < f->commit_off + f->commit_size || len < f->ts_off + 8)
		return -EINVAL;
	memcpy(&ts, p + f->ts_off, 8);
	if (f->commit_size == 8) {
		memcpy(&commit, p + f->commit_off, 8);
	} else {
		uint32_t c32;

		memcpy(&c32, p + f->commit_off, 4);
		commit = c32;
	}
	used = commit & ~(RB_MISSED_EVENTS | RB_MISSED_STORED);
	if (used > len - f->data_off)
		return -EINVAL;
	off = f->data_off;
	end = f->data_off + (size_t)used;
	if (commit & RB_MISSED_EVENTS) {
		*missed = 1;
		/* the count, when stored, follows the data (a long) */
		if ((commit & RB_MISSED_STORED) && end + f->commit_size <= len) {
			uint64_t m = 0;

			memcpy(&m, p + end, f->commit_size);
			*missed = f->commit_size == 4 ? (uint32_t)m : m;
		}
	}
	while (off + 4 <= end) {
		uint32_t h = get_u32(p + off), type_len, delta;
		struct blk_ftrace_rec r;
		size_t next, dlen;
		int ret;

		if (f->big_endian_bits) {
			type_len = h >> 27;
			delta = h & ((1u << 27) - 1);
		} else {
			type_len = h & 0x1f;
			delta = h >> 5;
		}
		switch (type_len) {
		case RB_TYPE_PADDING:
			if (!delta)
				return n; /* the rest of the page is padding */
			if (off + 8 > end)
				return -EINVAL;
			/* a discarded event: its time still counts for the next ones */
			ts += delta;
			next = off + 4 + get_u32(p + off + 4);
			break;
		case RB_TYPE_TIME_EXTEND:
			if (off + 8 > end)
				return -EINVAL;
			ts += ((uint64_t)get_u32(p + off + 4) << TS_SHIFT) + delta;
			next = off + 8;
			break;
		case RB_TYPE_TIME_STAMP: {
			uint64_t abs;

			if (off + 8 > end)
				return -EINVAL;
			abs = ((uint64_t)get_u32(p + off + 4) << TS_SHIFT) | delta;
			abs |= ts & TS_MSB_MASK;
			if (abs < ts)
				abs += 1ull << 59;
			ts = abs;
			next = off + 8;
			break;
		}
		default:
			ts += delta;
			if (type_len == 0) {
				if (off + 8 > end)
					return -EINVAL;
				dlen = get_u32(p + off + 4);
				if (dlen < 4)
					return -EINVAL;
				r.data = p + off + 8;
				r.len = dlen - 4;
				next = off + 4 + dlen;
			} else {
				r.data = p + off + 4;
				r.len = (size_t)type_len * 4;
				next = off + 4 + r.len;
			}
			if (next > end)
				return -EINVAL;
			r.ts = ts;
			n++;
			ret = fn(arg, &r);
			if (ret)
				return ret;
			break;
		}
		if (next <= off || next > end)
			return -EINVAL;
		off = next;
	}
	return n;
}

/* ---- formats ---- */

int blk_ftrace_format_parse(const char *text, struct blk_ftrace_format *fmt)
{
	const char *p = text, *id = strstr(text, "\nID:"), *name = strstr(text, "name:");

	memset(fmt, 0, sizeof(*fmt));
	if (!strncmp(text, "ID:", 3))
		id = text - 1;
	if (!id)
		return -EINVAL;
	fmt->id = atoi(id + 4);
	if (name) {
		name += 5;
		while (*name == ' ')
			name++;
		snprintf(fmt->name, sizeof(fmt->name), "%.*s", (int)strcspn(name, "\n"), name);
	}
	while ((p = strstr(p, "field:")) && fmt->nfields < BLK_FTRACE_MAX_FIELDS) {
		struct blk_ftrace_field *fl = &fmt->f[fmt->nfields];
		const char *semi = strchr(p, ';'), *q, *o, *s, *sg, *b;

		if (!semi)
			break;
		q = semi;
		b = memchr(p, '[', (size_t)(semi - p));
		if (b)
			q = b; /* "char comm[16]" or "__data_loc char[] cmd" */
		fl->data_loc = !strncmp(p + 6, "__data_loc", 10);
		if (b && !fl->data_loc)
			fl->array = 1;
		if (fl->data_loc) {
			/* the name follows the brackets */
			const char *e = semi;

			q = e;
			while (q > p && q[-1] != ' ')
				q--;
			snprintf(fl->name, sizeof(fl->name), "%.*s", (int)(e - q), q);
		} else {
			const char *e = q;

			while (q > p && q[-1] != ' ')
				q--;
			snprintf(fl->name, sizeof(fl->name), "%.*s", (int)(e - q), q);
		}
		o = strstr(semi, "offset:");
		s = strstr(semi, "size:");
		sg = strstr(semi, "signed:");
		if (!o || !s)
			break;
		fl->offset = (unsigned int)strtoul(o + 7, NULL, 10);
		fl->size = (unsigned int)strtoul(s + 5, NULL, 10);
		fl->is_signed = sg ? atoi(sg + 7) : 0;
		fmt->nfields++;
		p = semi;
	}
	return fmt->nfields ? 0 : -EINVAL;
}

const struct blk_ftrace_field *blk_ftrace_field(const struct blk_ftrace_format *fmt,
						const char *name)
{
	for (int i = 0; i < fmt->nfields; i++)
		if (!strcmp(fmt->f[i].name, name))
			return &fmt->f[i];
	return NULL;
}

int64_t blk_ftrace_get_int(const struct blk_ftrace_field *f, const unsigned char *data, size_t len)
{
	if (!f || f->offset + f->size > len)
		return 0;
	switch (f->size) {
	case 1: {
		uint8_t v = data[f->offset];

		return f->is_signed ? (int8_t)v : v;
	}
	case 2: {
		uint16_t v;

		memcpy(&v, data + f->offset, 2);
		return f->is_signed ? (int16_t)v : v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, data + f->offset, 4);
		return f->is_signed ? (int32_t)v : (int64_t)v;
	}
	case 8: {
		uint64_t v;

		memcpy(&v, data + f->offset, 8);
		return (int64_t)v;
	}
	default:
		return 0;
	}
}

void blk_ftrace_get_str(const struct blk_ftrace_field *f, const unsigned char *data, size_t len,
			char *buf, size_t blen)
{
	size_t off, n;

	buf[0] = '\0';
	if (!f || !blen || f->offset + f->size > len)
		return;
	if (f->data_loc) {
		uint32_t loc;

		memcpy(&loc, data + f->offset, 4);
		off = loc & 0xffff;
		n = loc >> 16;
		if (off > len || n > len - off)
			return;
	} else {
		off = f->offset;
		n = f->size;
	}
	n = strnlen((const char *)data + off, n);
	if (n >= blen)
		n = blen - 1;
	memcpy(buf, data + off, n);
	buf[n] = '\0';
}

/* ---- files ---- */

int blk_ftrace_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0 && !got) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	buf[got] = '\0';
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	return 0;
}

static int write_flags(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (close(fd))
		return -errno;
	return 0;
}

int blk_ftrace_write(const char *path, const char *s)
{
	return write_flags(path, s, O_TRUNC);
}

/* ---- instances ---- */

#define MAX_ENABLED 16

struct blk_ftrace_inst {
	char dir[KPATH_SUB];
	char enabled[MAX_ENABLED][128];
	int filtered[MAX_ENABLED];
	int nenabled;
};

struct blk_ftrace_inst *blk_ftrace_inst_new(const char *tracefs, const char *name, char *err,
					    size_t len)
{
	struct blk_ftrace_inst *in = calloc(1, sizeof(*in));
	char p[KPATH];
	int e;

	if (!in) {
		snprintf(err, len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(in->dir, sizeof(in->dir), "%s/instances/%s", tracefs, name);
	if (mkdir(in->dir, 0700)) {
		e = errno;
		if (e == EEXIST)
			snprintf(err, len, "a tracefs instance '%s' exists already", in->dir);
		else
			snprintf(err, len, "cannot create the tracefs instance '%s': %s", in->dir,
				 strerror(e));
		free(in);
		errno = e;
		return NULL;
	}
	/* a new instance records at once: off until the tracer starts */
	snprintf(p, sizeof(p), "%s/tracing_on", in->dir);
	e = -blk_ftrace_write(p, "0");
	if (e) {
		snprintf(err, len, "cannot write '%s': %s", p, strerror(e));
		rmdir(in->dir);
		free(in);
		errno = e;
		return NULL;
	}
	return in;
}

const char *blk_ftrace_inst_dir(const struct blk_ftrace_inst *in)
{
	return in->dir;
}

int blk_ftrace_inst_write(struct blk_ftrace_inst *in, const char *rel, const char *value)
{
	char p[KPATH];

	snprintf(p, sizeof(p), "%s/%s", in->dir, rel);
	return blk_ftrace_write(p, value);
}

int blk_ftrace_inst_enable(struct blk_ftrace_inst *in, const char *event, const char *filter,
			   int *filtered)
{
	char p[KPATH];
	int ret, f = 0;

	if (in->nenabled == MAX_ENABLED)
		return -ENOSPC;
	snprintf(p, sizeof(p), "%s/events/%s/enable", in->dir, event);
	if (access(p, F_OK))
		return -ENOENT;
	if (filter) {
		snprintf(p, sizeof(p), "%s/events/%s/filter", in->dir, event);
		f = !blk_ftrace_write(p, filter);
	}
	if (filtered)
		*filtered = f;
	snprintf(p, sizeof(p), "%s/events/%s/enable", in->dir, event);
	snprintf(in->enabled[in->nenabled], sizeof(in->enabled[0]), "%s", event);
	in->filtered[in->nenabled++] = f;
	ret = blk_ftrace_write(p, "1");
	return ret;
}

static int read_alloc(const char *path, char **out)
{
	size_t cap = 8192;
	char *buf = malloc(cap);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = blk_ftrace_read(path, buf, cap);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

int blk_ftrace_inst_format(struct blk_ftrace_inst *in, const char *event,
			   struct blk_ftrace_format *fmt)
{
	char p[KPATH], *text;
	int ret;

	snprintf(p, sizeof(p), "%s/events/%s/format", in->dir, event);
	ret = read_alloc(p, &text);
	if (ret)
		return ret;
	ret = blk_ftrace_format_parse(text, fmt);
	free(text);
	return ret;
}

int blk_ftrace_inst_open_cpu(struct blk_ftrace_inst *in, int cpu)
{
	char p[KPATH];
	int fd;

	snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/trace_pipe_raw", in->dir, cpu);
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

uint64_t blk_ftrace_inst_lost(struct blk_ftrace_inst *in, int cpu)
{
	char p[KPATH], buf[2048], *s;
	uint64_t total = 0;

	snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/stats", in->dir, cpu);
	if (blk_ftrace_read(p, buf, sizeof(buf)))
		return 0;
	s = strstr(buf, "overrun:");
	if (s)
		total += strtoull(s + 8, NULL, 10);
	s = strstr(buf, "dropped events:");
	if (s)
		total += strtoull(s + 15, NULL, 10);
	return total;
}

int blk_ftrace_inst_alive(struct blk_ftrace_inst *in)
{
	char p[KPATH], v[16];

	snprintf(p, sizeof(p), "%s/tracing_on", in->dir);
	return !blk_ftrace_read(p, v, sizeof(v)) && !strcmp(v, "1");
}

int blk_ftrace_inst_free(struct blk_ftrace_inst *in)
{
	char p[KPATH];
	int ret = 0, r;

	if (!in)
		return 0;
	snprintf(p, sizeof(p), "%s/tracing_on", in->dir);
	blk_ftrace_write(p, "0");
	while (in->nenabled > 0) {
		const char *ev = in->enabled[--in->nenabled];

		snprintf(p, sizeof(p), "%s/events/%s/enable", in->dir, ev);
		r = blk_ftrace_write(p, "0");
		if (r && r != -ENOENT && !ret)
			ret = r;
		if (in->filtered[in->nenabled]) {
			snprintf(p, sizeof(p), "%s/events/%s/filter", in->dir, ev);
			blk_ftrace_write(p, "0");
		}
	}
	if (rmdir(in->dir) && errno != ENOENT && !ret)
		ret = -errno;
	free(in);
	return ret;
}

/* ---- kprobe events ---- */

int blk_ftrace_kprobe_add(const char *tracefs, const char *line)
{
	char p[KPATH_SUB];

	snprintf(p, sizeof(p), "%s/kprobe_events", tracefs);
	return write_flags(p, line, O_APPEND);
}

int blk_ftrace_kprobe_del(const char *tracefs, const char *group_event)
{
	char p[KPATH_SUB], line[256];

	snprintf(p, sizeof(p), "%s/kprobe_events", tracefs);
	snprintf(line, sizeof(line), "-:%s", group_event);
	return write_flags(p, line, O_APPEND);
}

long long blk_ftrace_kprobe_missed(const char *tracefs, const char *group_event)
{
	char p[KPATH_SUB], line[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/kprobe_profile", tracefs);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[256];
		unsigned long long hit, missed;

		/* 6.1 lists the event's name alone, later kernels GROUP/EVENT */
		if (sscanf(line, "%255s %llu %llu", name, &hit, &missed) == 3 &&
		    (!strcmp(name, group_event) ||
		     (strchr(group_event, '/') && !strcmp(name, strchr(group_event, '/') + 1)))) {
			fclose(f);
			return (long long)missed;
		}
	}
	fclose(f);
	return -ENOENT;
}
