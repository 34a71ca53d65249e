// SPDX-License-Identifier: GPL-2.0
/*
 * One trace's event stream: a merged binary file (blkparse -d, read as it is) or the
 * per-CPU files NAME.blktrace.N (merged by time through the library). Streaming: nothing
 * is kept per event; iowatcher walks each trace twice (time range, then series).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "blk/merge.h"
#include "blk/reader.h"
#include "common.h"
#include "iowatcher.h"

static int is_regular(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

static int has_cpu0(const char *dir, const char *base)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.blktrace.0", dir, base);
	if (is_regular(path))
		return 1;
	snprintf(path, sizeof(path), "%s/%s.blktrace.0.gz", dir, base);
	return is_regular(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* -t DIR: the traces of every device recorded in DIR, as one trace */
static int scan_dir(struct iow_trace *t)
{
	DIR *d = opendir(t->arg);
	struct dirent *de;
	const char *s;
	size_t len;

	if (!d)
		return error("cannot open '%s': %s", t->arg, strerror(errno));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nb;

		if (l > 11 && !strcmp(de->d_name + l - 11, ".blktrace.0"))
			l -= 11;
		else if (l > 14 && !strcmp(de->d_name + l - 14, ".blktrace.0.gz"))
			l -= 14;
		else
			continue;
		nb = realloc(t->bases, (t->nbases + 1) * sizeof(*nb));
		if (!nb)
			die("out of memory");
		t->bases = nb;
		t->bases[t->nbases] = strndup(de->d_name, l);
		if (!t->bases[t->nbases++])
			die("out of memory");
	}
	closedir(d);
	if (!t->nbases) {
		error("no trace found in directory '%s'", t->arg);
		hint("a directory given to -t must hold per-CPU files NAME.blktrace.N");
		return -1;
	}
	qsort(t->bases, t->nbases, sizeof(*t->bases), cmp_str);
	t->dir = xstrdup(t->arg);
	/* iowatcher -d with several devices writes DIR/NAME/DEV.blktrace.N and DIR/NAME.mpstat */
	len = strlen(t->arg);
	while (len > 1 && t->arg[len - 1] == '/')
		len--;
	if (asprintf(&t->mpstat, "%.*s.mpstat", (int)len, t->arg) < 0)
		die("out of memory");
	if (!is_regular(t->mpstat)) {
		free(t->mpstat);
		t->mpstat = NULL;
	}
	s = t->arg + strlen(t->arg);
	while (s > t->arg && s[-1] == '/')
		s--;
	while (s > t->arg && s[-1] != '/')
		s--;
	if (!t->label)
		t->label = strndup(s, strcspn(s, "/"));
	if (!t->label)
		die("out of memory");
	return 0;
}

int iow_trace_resolve(struct iow_trace *t)
{
	char *n, *p, *slash, path[4096];
	struct stat st;

	if (!stat(t->arg, &st) && S_ISDIR(st.st_mode))
		return scan_dir(t);
	n = xstrdup(t->arg);

	if (is_regular(t->arg) && !strstr(t->arg, ".blktrace.")) {
		t->path = xstrdup(t->arg);
		goto mpstat;
	}
	snprintf(path, sizeof(path), "%s.dump", t->arg);
	if (is_regular(path)) {
		t->path = xstrdup(path);
		goto mpstat;
	}
	p = strstr(n, ".blktrace.");
	if (p)
		*p = '\0';
	else if ((p = strrchr(n, '.')) && strcmp(p, ".dump") == 0 && !strchr(p, '/'))
		*p = '\0';
	slash = strrchr(n, '/');
	if (slash) {
		*slash = '\0';
		t->dir = xstrdup(n[0] ? n : "/");
		t->base = xstrdup(slash + 1);
	} else {
		t->dir = xstrdup(".");
		t->base = xstrdup(n);
	}
	if (!has_cpu0(t->dir, t->base)) {
		free(n);
		error("no trace found for '%s'", t->arg);
		hint("-t takes a merged trace file (blkparse -d), NAME for per-CPU files NAME.blktrace.N, or a directory of them");
		return -1;
	}
	t->bases = malloc(sizeof(*t->bases));
	if (!t->bases)
		die("out of memory");
	t->bases[0] = xstrdup(t->base);
	t->nbases = 1;
mpstat:
	free(n);
	/* CPU statistics recorded with the trace: NAME.mpstat (or FILE.mpstat) */
	if (t->base) {
		snprintf(path, sizeof(path), "%s/%s.mpstat", t->dir, t->base);
	} else {
		const char *dot = strrchr(t->path, '.');

		if (dot && !strchr(dot, '/'))
			snprintf(path, sizeof(path), "%.*s.mpstat", (int)(dot - t->path), t->path);
		if (!dot || strchr(dot, '/') || !is_regular(path))
			snprintf(path, sizeof(path), "%s.mpstat", t->path);
	}
	if (is_regular(path))
		t->mpstat = xstrdup(path);
	if (!t->label) {
		const char *b = t->base ? t->base : t->path;
		const char *s = strrchr(b, '/');

		char *dot;

		t->label = xstrdup(s ? s + 1 : b);
		dot = strrchr(t->label, '.');
		if (dot && dot != t->label && (!strcmp(dot, ".bin") || !strcmp(dot, ".dump")))
			*dot = '\0';
	}
	return 0;
}

static void note_process(struct iow_trace *t, const struct blk_event *ev)
{
	struct iow_proc *pr = NULL;
	size_t n;

	if (blk_event_code(ev) != BLK_TN_PROCESS || !ev->pdu_len)
		return;
	for (unsigned int i = 0; i < t->nnames; i++)
		if (t->names[i].pid == ev->pid)
			pr = &t->names[i];
	if (!pr) {
		if (t->nnames == sizeof(t->names) / sizeof(t->names[0]))
			return;
		pr = &t->names[t->nnames++];
		pr->pid = ev->pid;
	}
	n = ev->pdu_len < sizeof(pr->comm) - 1 ? ev->pdu_len : sizeof(pr->comm) - 1;
	memcpy(pr->comm, ev->pdu, n);
	pr->comm[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)pr->comm[i] < 0x20)
			pr->comm[i] = '\0';
}

static int on_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
		     const struct blk_event *ev)
{
	(void)owner;
	(void)cpu;
	if (what != BLK_NOTE_RECORD || !blk_event_is_notify(ev))
		return 0;
	note_process(arg, ev);
	return 1;
}

static int walk_file(struct iow_trace *t, iow_event_fn fn, void *arg)
{
	struct blk_reader *r = blk_reader_open(t->path);
	struct blk_event ev;
	int ret;

	if (!r)
		return error("cannot open '%s': %s", t->path, strerror(errno));
	while ((ret = blk_reader_next(r, &ev)) > 0) {
		if (blk_event_is_notify(&ev)) {
			note_process(t, &ev);
			continue;
		}
		fn(t, &ev, arg);
	}
	if (ret < 0 && !t->damaged)
		error("%s", blk_reader_error(r));
	blk_reader_close(r);
	if (ret < 0)
		t->damaged = 1;
	return ret < 0 ? 1 : 0;
}

static int walk_cpus(struct iow_trace *t, iow_event_fn fn, void *arg)
{
	struct blk_merge *m = blk_merge_new(512, on_record, t);
	struct blk_event ev;
	uint64_t genesis = 0;
	char path[4096];
	void *owner;
	int cpu, ret, bad = 0;

	if (!m)
		die("out of memory");
	for (unsigned int b = 0; b < t->nbases; b++) {
		for (cpu = 0;; cpu++) {
			const char *base = t->bases[b];
			struct blk_reader *r;
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s.blktrace.%d", t->dir, base, cpu);
			if (stat(path, &st)) {
				snprintf(path, sizeof(path), "%s/%s.blktrace.%d.gz", t->dir, base,
					 cpu);
				if (stat(path, &st))
					break;
			}
			if (!st.st_size)
				continue;
			r = blk_reader_open(path);
			if (!r) {
				error("cannot open '%s': %s", path, strerror(errno));
				blk_merge_free(m);
				return -1;
			}
			if (blk_merge_add(m, r, t, cpu))
				die("out of memory");
		}
	}
	if (!blk_merge_peek_time(m, &genesis))
		genesis = 0;
	while ((ret = blk_merge_next(m, &ev, &owner, &cpu)) > 0) {
		ev.time -= genesis;
		fn(t, &ev, arg);
	}
	for (unsigned int i = 0; i < blk_merge_nerrors(m); i++) {
		if (!t->damaged)
			error("%s", blk_merge_error(m, i));
		bad = 1;
	}
	blk_merge_free(m);
	if (ret < 0 && ret != -EIO && !t->damaged)
		error("'%s': %s", t->arg, strerror(-ret));
	if (bad || ret < 0)
		t->damaged = 1;
	return bad || ret < 0 ? 1 : 0;
}

int iow_trace_walk(struct iow_trace *t, iow_event_fn fn, void *arg)
{
	return t->path ? walk_file(t, fn, arg) : walk_cpus(t, fn, arg);
}
