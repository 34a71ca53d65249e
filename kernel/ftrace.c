// SPDX-License-Identifier: GPL-2.0
/*
 * Trace events read through a private tracefs instance: the ring-buffer pages of
 * trace_pipe_raw (walked by libtraceevent's kbuffer), event format files (parsed by
 * libtraceevent), the instance's life cycle, kprobe events.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "ftrace.h"
#include "holder.h"
#include "util.h"

/* ---- pages ---- */

struct blk_ftrace_pages {
	struct kbuffer *kbuf;
	unsigned int data_off; /* where the events start */
	unsigned int commit_size; /* bytes of the commit word */
	int page_size;
};

/*
 * The length in a page's commit word: below the missed-events flags (bits 31 and 30). The
 * kernel adds the flags to the word as an int, so on a 64-bit kernel bits 32-63 are set too
 * when events were missed (seen on 6.18: 0xffffffffc0000fd8 for 4056 bytes)
 */
#define RB_COMMIT_MASK ((1ull << 30) - 1)

struct blk_ftrace_pages *blk_ftrace_pages_new(const char *header_page)
{
	struct blk_ftrace_pages *pg = calloc(1, sizeof(*pg));
	struct tep_handle *tep = tep_alloc();
	char *text = strdup(header_page);
	int err = ENOMEM, hsize;

	if (!pg || !tep || !text)
		goto fail;
	err = EINVAL;
	if (tep_parse_header_page(tep, text, (unsigned long)strlen(text), (int)sizeof(long)))
		goto fail;
	pg->page_size = tep_get_sub_buffer_size(tep);
	hsize = tep_get_header_page_size(tep);
	if (pg->page_size <= 0 || (hsize != 4 && hsize != 8))
		goto fail;
	/* kbuffer's layout: the time stamp (8 bytes), the commit word, the data */
	pg->commit_size = (unsigned int)hsize;
	pg->data_off = 8 + pg->commit_size;
	/*
	 * The commit word is as long as header_page says. tep_kbuffer() on a handle that has
	 * only parsed header_page read it as 4 bytes (libtraceevent 1.7.1: every entry 4
	 * bytes off), so the kbuffer is made here. Pages are in this machine's byte order.
	 */
	pg->kbuf = kbuffer_alloc(hsize == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
				 tep_is_bigendian() ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	if (!pg->kbuf)
		goto fail;
	tep_free(tep);
	free(text);
	return pg;
fail:
	tep_free(tep);
	free(text);
	blk_ftrace_pages_free(pg);
	errno = err;
	return NULL;
}

int blk_ftrace_pages_size(const struct blk_ftrace_pages *pg)
{
	return pg->page_size;
}

void blk_ftrace_pages_free(struct blk_ftrace_pages *pg)
{
	if (!pg)
		return;
	if (pg->kbuf)
		kbuffer_free(pg->kbuf);
	free(pg);
}

int blk_ftrace_page_walk(struct blk_ftrace_pages *pg, const unsigned char *p, size_t len,
			 blk_ftrace_rec_fn fn, void *arg, uint64_t *missed)
{
	unsigned long long ts, commit = 0;
	const unsigned char *data, *end;
	int n = 0, m, ret;

	*missed = 0;
	if (len < pg->data_off)
		return -EINVAL;
	/* kbuffer trusts the page: check that its data and each event stay inside it */
	memcpy(&commit, p + 8, pg->commit_size);
	commit &= RB_COMMIT_MASK;
	if (commit > len - pg->data_off)
		return -EINVAL;
	end = p + pg->data_off + commit;
	/* kbuffer only reads the page: its argument is not const */
	if (kbuffer_load_subbuffer(pg->kbuf, (void *)p))
		return -EINVAL;
	m = kbuffer_missed_events(pg->kbuf);
	if (m)
		*missed = m > 0 ? (uint64_t)m : 1;
	for (data = kbuffer_read_event(pg->kbuf, &ts); data;
	     data = kbuffer_next_event(pg->kbuf, &ts)) {
		struct blk_ftrace_rec r = {ts, data, 0};
		int size = kbuffer_event_size(pg->kbuf);

		if (size < 0 || data < p + pg->data_off || data > end ||
		    (size_t)size > (size_t)(end - data))
			return -EINVAL;
		r.len = (size_t)size;
		n++;
		ret = fn(arg, &r);
		if (ret)
			return ret;
	}
	return n;
}

/* ---- formats ---- */

static int copy_fields(struct blk_ftrace_format *fmt, const struct tep_format_field *f)
{
	for (; f; f = f->next) {
		struct blk_ftrace_field *fl = &fmt->f[fmt->nfields];

		if (fmt->nfields == BLK_FTRACE_MAX_FIELDS)
			return -E2BIG;
		snprintf(fl->name, sizeof(fl->name), "%s", f->name);
		fl->offset = (unsigned int)f->offset;
		fl->size = (unsigned int)f->size;
		fl->is_signed = !!(f->flags & TEP_FIELD_IS_SIGNED);
		fl->data_loc = !!(f->flags & TEP_FIELD_IS_DYNAMIC);
		fl->rel_loc = !!(f->flags & TEP_FIELD_IS_RELATIVE);
		fl->array = !fl->data_loc && (f->flags & TEP_FIELD_IS_ARRAY);
		fmt->nfields++;
	}
	return 0;
}

int blk_ftrace_format_parse(const char *text, struct blk_ftrace_format *fmt)
{
	struct tep_handle *tep;
	struct tep_event *ev = NULL;
	int ret = -EINVAL;

	memset(fmt, 0, sizeof(*fmt));
	/* libtraceevent says what it cannot parse (print formats) on stderr: not ours to print */
	tep_set_loglevel(TEP_LOG_NONE);
	tep = tep_alloc();
	if (!tep)
		return -ENOMEM;
	if (!tep_parse_format(tep, &ev, text, (unsigned long)strlen(text), "blktrace") && ev) {
		snprintf(fmt->name, sizeof(fmt->name), "%s", ev->name ? ev->name : "");
		fmt->id = ev->id;
		ret = copy_fields(fmt, ev->format.common_fields);
		if (!ret)
			ret = copy_fields(fmt, ev->format.fields);
		if (!ret && !fmt->nfields)
			ret = -EINVAL;
	}
	tep_free(tep);
	return ret;
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
		/* __rel_loc: the offset counts from the end of the field */
		off = (loc & 0xffff) + (f->rel_loc ? f->offset + f->size : 0);
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

const char *blk_ftrace_saved_comm(const char *tracefs, uint32_t pid, char *buf, size_t len)
{
	char p[KPATH], line[256];
	const char *got = NULL;
	FILE *f;

	snprintf(p, sizeof(p), "%s/saved_cmdlines", tracefs);
	f = fopen(p, "re");
	if (!f)
		return NULL;
	while (!got && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp || (uint32_t)strtoul(line, NULL, 10) != pid)
			continue;
		sp++;
		sp[strcspn(sp, "\n")] = '\0';
		/* "<...>": a pid whose name the kernel no longer has */
		if (strcmp(sp, "<...>")) {
			snprintf(buf, len, "%s", sp);
			got = buf;
		}
	}
	fclose(f);
	return got;
}

/* ---- instances (libtracefs) ---- */

#define MAX_ENABLED 16

struct blk_ftrace_inst {
	struct tracefs_instance *ti;
	char dir[KPATH_SUB];
	char sys[MAX_ENABLED][64], ev[MAX_ENABLED][64]; /* what was enabled */
	int filtered[MAX_ENABLED];
	int nenabled;
};

/* "GROUP/EVENT" -> "^GROUP$", "^EVENT$": libtracefs takes regular expressions */
static int split_event(const char *event, char *sys, char *ev, size_t len)
{
	const char *slash = strchr(event, '/');

	if (!slash || strchr(slash + 1, '/'))
		return -EINVAL;
	snprintf(sys, len, "%.*s", (int)(slash - event), event);
	snprintf(ev, len, "%s", slash + 1);
	return 0;
}

static void anchored(const char *name, char *re, size_t len)
{
	snprintf(re, len, "^%s$", name);
}

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

struct blk_ftrace_inst *blk_ftrace_inst_new(const char *tracefs, const char *name, char *err,
					    size_t len)
{
	struct blk_ftrace_inst *in = calloc(1, sizeof(*in));
	int e;

	if (!in) {
		snprintf(err, len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(in->dir, sizeof(in->dir), "%s/instances/%s", tracefs, name);
	/*
	 * Made here, then handed to libtracefs (tracefs_instance_alloc() takes an existing
	 * one): tracefs_instance_create() takes an instance that exists already as its own
	 * (another tracer's, of a pid used again) and works in the tracing directory it finds
	 * itself, not in the one given
	 */
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
	in->ti = tracefs_instance_alloc(tracefs, name);
	/* a new instance records at once: off until the tracer starts */
	errno = 0;
	if (!in->ti || tracefs_trace_off(in->ti)) {
		e = errno ? errno : EIO;
		snprintf(err, len, "cannot set up the tracefs instance '%s': %s", in->dir,
			 strerror(e));
		tracefs_instance_free(in->ti);
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
	errno = 0;
	return tracefs_instance_file_write(in->ti, rel, value) < 0 ? neg_errno() : 0;
}

int blk_ftrace_inst_enable(struct blk_ftrace_inst *in, const char *event, const char *filter,
			   int *filtered)
{
	char sys[64], ev[64], rs[80], re[80];
	int f = 0, k = in->nenabled;

	if (k == MAX_ENABLED)
		return -ENOSPC;
	if (split_event(event, sys, ev, sizeof(sys)))
		return -EINVAL;
	if (!tracefs_event_file_exists(in->ti, sys, ev, "enable"))
		return -ENOENT;
	if (filter)
		f = tracefs_event_file_write(in->ti, sys, ev, "filter", filter) >= 0;
	if (filtered)
		*filtered = f;
	snprintf(in->sys[k], sizeof(in->sys[k]), "%s", sys);
	snprintf(in->ev[k], sizeof(in->ev[k]), "%s", ev);
	in->filtered[k] = f;
	in->nenabled++;
	anchored(sys, rs, sizeof(rs));
	anchored(ev, re, sizeof(re));
	errno = 0;
	return tracefs_event_enable(in->ti, rs, re) ? neg_errno() : 0;
}

int blk_ftrace_inst_format(struct blk_ftrace_inst *in, const char *event,
			   struct blk_ftrace_format *fmt)
{
	char sys[64], ev[64], *text;
	int ret;

	if (split_event(event, sys, ev, sizeof(sys)))
		return -EINVAL;
	errno = 0;
	text = tracefs_event_file_read(in->ti, sys, ev, "format", NULL);
	if (!text)
		return errno ? -errno : -ENOENT;
	ret = blk_ftrace_format_parse(text, fmt);
	free(text);
	return ret;
}

int blk_ftrace_inst_format_text(struct blk_ftrace_inst *in, const char *event, char *buf,
				size_t len)
{
	char sys[64], ev[64], *text;

	if (split_event(event, sys, ev, sizeof(sys)))
		return -EINVAL;
	if (!tracefs_event_file_exists(in->ti, sys, ev, "format"))
		return -ENOENT;
	errno = 0;
	text = tracefs_event_file_read(in->ti, sys, ev, "format", NULL);
	if (!text)
		return errno ? -errno : -ENOENT;
	snprintf(buf, len, "%s", text);
	free(text);
	return 0;
}

int blk_ftrace_inst_open_cpu(struct blk_ftrace_inst *in, int cpu)
{
	char rel[64];
	int fd;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	errno = 0;
	fd = tracefs_instance_file_open(in->ti, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? neg_errno() : fd;
}

uint64_t blk_ftrace_inst_lost(struct blk_ftrace_inst *in, int cpu)
{
	char rel[64], *buf, *s;
	uint64_t total = 0;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	buf = tracefs_instance_file_read(in->ti, rel, NULL);
	if (!buf)
		return 0;
	s = strstr(buf, "overrun:");
	if (s)
		total += strtoull(s + 8, NULL, 10);
	s = strstr(buf, "dropped events:");
	if (s)
		total += strtoull(s + 15, NULL, 10);
	free(buf);
	return total;
}

int blk_ftrace_inst_alive(struct blk_ftrace_inst *in)
{
	return tracefs_trace_is_on(in->ti) == 1;
}

int blk_ftrace_inst_free(struct blk_ftrace_inst *in)
{
	int ret = 0;

	if (!in)
		return 0;
	tracefs_trace_off(in->ti);
	while (in->nenabled > 0) {
		int k = --in->nenabled;
		char rs[80], re[80];

		anchored(in->sys[k], rs, sizeof(rs));
		anchored(in->ev[k], re, sizeof(re));
		errno = 0;
		/* gone with an instance removed from outside: nothing to disable */
		if (tracefs_event_disable(in->ti, rs, re) && errno && errno != ENOENT && !ret)
			ret = -errno;
		if (in->filtered[k])
			tracefs_event_file_write(in->ti, in->sys[k], in->ev[k], "filter", "0");
	}
	errno = 0;
	if (tracefs_instance_destroy(in->ti) && errno != ENOENT && !ret)
		ret = neg_errno();
	tracefs_instance_free(in->ti);
	free(in);
	return ret;
}

void blk_ftrace_inst_del_left(const char *tracefs, const char *prefix, int *stopped, int *removed,
			      int *failed)
{
	char p[KPATH];
	size_t n = strlen(prefix);
	struct dirent *de;
	DIR *d;

	*stopped = *removed = *failed = 0;
	snprintf(p, sizeof(p), "%s/instances", tracefs);
	d = opendir(p);
	while (d && (de = readdir(d))) {
		int pid;

		if (strncmp(de->d_name, prefix, n))
			continue;
		pid = atoi(de->d_name + n);
		snprintf(p, sizeof(p), "%s/instances/%s/tracing_on", tracefs, de->d_name);
		if (pid > 0 && blk_pid_alive(pid)) {
			/* a running tracer: turned off, it notices and removes it itself */
			if (!blk_ftrace_write(p, "0"))
				(*stopped)++;
			continue;
		}
		blk_ftrace_write(p, "0");
		snprintf(p, sizeof(p), "%s/instances/%s/events/enable", tracefs, de->d_name);
		blk_ftrace_write(p, "0");
		snprintf(p, sizeof(p), "%s/instances/%s", tracefs, de->d_name);
		if (rmdir(p))
			(*failed)++;
		else
			(*removed)++;
	}
	if (d)
		closedir(d);
}

/* ---- kprobe events ---- */

int blk_ftrace_kprobe_add(const char *group, const char *event, const char *fn, const char *fetch,
			  int retprobe, unsigned int maxactive, struct tracefs_dynevent **out)
{
	struct tracefs_dynevent *ev;
	int ret;

	errno = 0;
	ev = retprobe ? tracefs_kretprobe_alloc(group, event, fn, fetch, 0)
		      : tracefs_kprobe_alloc(group, event, fn, fetch);
	if (!ev)
		return errno ? -errno : -ENOMEM;
	errno = 0;
	if (retprobe && maxactive) {
		char line[512];

		/*
		 * Written here: libtracefs 1.6.4 defines a kretprobe with a maxactive as
		 * "rN::GROUP/EVENT" (its prefix "rN:" and a colon more), which the kernel refuses
		 * with EINVAL (seen in t0550's VM). The event is libtracefs's for removal.
		 */
		snprintf(line, sizeof(line), "r%u:%s/%s %s%s%s\n", maxactive, group, event, fn,
			 fetch ? " " : "", fetch ? fetch : "");
		ret = tracefs_instance_file_append(NULL, "kprobe_events", line) < 0 ? neg_errno()
										    : 0;
	} else {
		ret = tracefs_dynevent_create(ev) ? neg_errno() : 0;
	}
	if (ret) {
		tracefs_dynevent_free(ev);
		return ret;
	}
	*out = ev;
	return 0;
}

int blk_ftrace_kprobe_del(struct tracefs_dynevent *ev)
{
	int ret = 0;

	/* its events are enabled in our instance only, and that is gone or disabled */
	errno = 0;
	if (ev && tracefs_dynevent_destroy(ev, false))
		ret = neg_errno();
	tracefs_dynevent_free(ev);
	return ret;
}

int blk_ftrace_kprobe_del_left(const char *prefix, int *failed)
{
	struct tracefs_dynevent **all = tracefs_dynevent_get_all(
		TRACEFS_DYNEVENT_KPROBE | TRACEFS_DYNEVENT_KRETPROBE, NULL);
	size_t n = strlen(prefix);
	int removed = 0;

	*failed = 0;
	for (int i = 0; all && all[i]; i++) {
		char *system = NULL, *event = NULL;
		int pid;

		tracefs_dynevent_info(all[i], &system, &event, NULL, NULL, NULL);
		pid = system && !strncmp(system, prefix, n) ? atoi(system + n) : -1;
		free(system);
		free(event);
		/* "PREFIX" with no pid after it is no live tracer's either */
		if (pid < 0 || (pid > 0 && blk_pid_alive(pid)))
			continue;
		/* forced: a killed tracer's instance may still have it enabled */
		if (tracefs_dynevent_destroy(all[i], true))
			(*failed)++;
		else
			removed++;
	}
	tracefs_dynevent_list_free(all);
	return removed;
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
