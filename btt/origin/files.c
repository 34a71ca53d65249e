// SPDX-License-Identifier: GPL-2.0
/*
 * I/O by file (see files.h): the bios the origins output's tracker names by a file
 * (origin/track.h), per device and inode: I/Os, bytes read and written, Q2C time, and the
 * tasks that read and wrote them (a read to its queuer, a write's bytes to each task by its
 * share). A bio over several files is the first one's. The files are named at the report:
 * the tracer writes their names at the end of the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/iomodel.h"
#include "origin/files.h"
#include "origin/origins.h"
#include "origin/track.h"
#include "output.h"

/* the most files followed (each some 400 bytes): past it, bios are counted */
#define MAX_FILES (1u << 18)
/* the tasks kept per file, the others' bytes added up */
#define TASKS 6
/* the files in each of the two tables */
#define TOP 10

struct task {
	uint32_t pid;
	char comm[16];
	uint64_t rbytes, wbytes;
};

struct file {
	uint32_t device, dev; /* the trace's device number, its index */
	uint64_t ino;
	uint64_t ios, rbytes, wbytes, q2c; /* q2c: ns */
	struct task t[TASKS];
	int nt;
	uint64_t other_r, other_w; /* the bytes of tasks past TASKS */
};

struct files {
	struct btt_devs *devs;
	struct otrack *track;
	struct file *f; /* open addressing by (device, inode), a power of two of slots */
	size_t nf, af;
	uint64_t past, no_file;
};

static size_t slot(const struct files *s, uint32_t device, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)device << 40)) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & (s->af - 1);

	while (s->f[i].ios && (s->f[i].ino != ino || s->f[i].device != device))
		i = (i + 1) & (s->af - 1);
	return i;
}

static struct file *file_of(struct files *s, uint32_t device, uint64_t ino)
{
	size_t i;

	if ((s->nf + 1) * 2 > s->af && s->nf < MAX_FILES) {
		struct file *old = s->f;
		size_t oldn = s->af;

		s->af = s->af ? s->af * 2 : 256;
		s->f = xcalloc(s->af, sizeof(*s->f));
		for (i = 0; i < oldn; i++)
			if (old[i].ios)
				s->f[slot(s, old[i].device, old[i].ino)] = old[i];
		free(old);
	}
	i = slot(s, device, ino);
	if (!s->f[i].ios) {
		if (s->nf == MAX_FILES) {
			s->past++;
			return NULL;
		}
		s->nf++;
		s->f[i].device = device;
		s->f[i].ino = ino;
	}
	return &s->f[i];
}

static void charge(struct file *f, uint32_t pid, const char *comm, uint64_t bytes, int write)
{
	struct task *t = NULL;

	for (int i = 0; i < f->nt && !t; i++)
		if (f->t[i].pid == pid)
			t = &f->t[i];
	if (!t && f->nt < TASKS) {
		t = &f->t[f->nt++];
		t->pid = pid;
		strncpy(t->comm, comm, sizeof(t->comm) - 1);
	}
	if (!t)
		*(write ? &f->other_w : &f->other_r) += bytes;
	else
		*(write ? &t->wbytes : &t->rbytes) += bytes;
}

static void on_io(void *ctx, const struct btt_bio *b, const struct otrack_io *io)
{
	struct files *s = ctx;
	int write = blk_event_has_cat(&(struct blk_event){.action = b->action}, BLK_TC_WRITE);
	uint64_t bytes = (uint64_t)b->nsec << 9;
	struct file *f;

	if (!io->has_file) {
		s->no_file++;
		return;
	}
	f = file_of(s, b->device, io->ino);
	if (!f)
		return;
	f->dev = devs_find(s->devs, b->device)->idx;
	f->ios++;
	f->q2c += tdelta(b->t_q, b->t_last_c);
	*(write ? &f->wbytes : &f->rbytes) += bytes;
	if (!write) {
		charge(f, io->pid, io->comm, bytes, 0);
		return;
	}
	for (uint32_t i = 0; i < io->nshares; i++)
		charge(f, io->shares[i].pid, io->shares[i].comm, io->shares[i].bytes, 1);
}

static void *files_new(const struct btt_view *v, void *opened)
{
	struct otrack *t = origins_track(btt_view_output(v, "origins"));
	struct files *s;

	(void)opened;
	if (!t)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->devs = v->devs;
	s->track = t;
	otrack_listen(t, on_io, s);
	return s;
}

static int by_bytes(const void *x, const void *y)
{
	const struct file *a = *(const struct file *const *)x, *b = *(const struct file *const *)y;
	uint64_t ba = a->rbytes + a->wbytes, bb = b->rbytes + b->wbytes;

	if (ba != bb)
		return ba > bb ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static int by_q2c(const void *x, const void *y)
{
	const struct file *a = *(const struct file *const *)x, *b = *(const struct file *const *)y;

	if (a->q2c != b->q2c)
		return a->q2c > b->q2c ? -1 : 1;
	return by_bytes(x, y);
}

/* "  readers: cat[77] 8192, ..." (the tasks in the order first met) */
static void tasks(FILE *ofp, const struct file *f, int write)
{
	uint64_t other = write ? f->other_w : f->other_r;
	int n = 0;

	fprintf(ofp, "    %s:", write ? "writers" : "readers");
	for (int i = 0; i < f->nt; i++) {
		uint64_t v = write ? f->t[i].wbytes : f->t[i].rbytes;

		if (v)
			fprintf(ofp, "%s %s[%u] %llu", n++ ? "," : "",
				f->t[i].comm[0] ? f->t[i].comm : "-", f->t[i].pid,
				(unsigned long long)v);
	}
	if (other)
		fprintf(ofp, "%s others %llu", n++ ? "," : "", (unsigned long long)other);
	fprintf(ofp, "%s\n", n ? "" : " -");
}

static void table(struct files *s, FILE *ofp, struct file **v, size_t n, const char *title)
{
	const struct blk_origin *notes = otrack_notes(s->track);

	fprintf(ofp, "%s\n", title);
	fprintf(ofp, "%10s %-40s | %9s %14s %14s | %13s %13s\n", "DEV", "FILE", "I/Os",
		"READ BYTES", "WRITE BYTES", "Q2C SUM(s)", "Q2C AVG(s)");
	for (size_t i = 0; i < n && i < TOP; i++) {
		const struct file *f = v[i];
		const char *path = blk_origin_path(notes, f->device, f->ino);
		char num[32];

		if (!path) {
			snprintf(num, sizeof(num), "ino %llu", (unsigned long long)f->ino);
			path = num;
		}
		fprintf(ofp, "%10s %-40s | %9llu %14llu %14llu | %13.9f %13.9f\n",
			s->devs->v[f->dev]->label, path, (unsigned long long)f->ios,
			(unsigned long long)f->rbytes, (unsigned long long)f->wbytes,
			(double)f->q2c / 1.0e9, (double)f->q2c / (double)f->ios / 1.0e9);
		tasks(ofp, f, 0);
		tasks(ofp, f, 1);
	}
	fputc('\n', ofp);
}

static void files_report(void *state, FILE *ofp)
{
	struct files *s = state;
	struct file **v;
	size_t n = 0, unnamed = 0;

	if (!otrack_following(s->track))
		return;
	v = xmalloc((s->nf + 1) * sizeof(*v));
	for (size_t i = 0; i < s->af; i++)
		if (s->f[i].ios) {
			v[n++] = &s->f[i];
			unnamed += !blk_origin_path(otrack_notes(s->track), s->f[i].device,
						    s->f[i].ino);
		}
	fprintf(ofp, "==================== I/O by file ====================\n\n");
	if (n) /* (none: v may be NULL, and qsort() may not be given NULL) */
		qsort(v, n, sizeof(*v), by_bytes);
	table(s, ofp, v, n, "Top files by bytes:");
	if (n)
		qsort(v, n, sizeof(*v), by_q2c);
	table(s, ofp, v, n, "Top files by Q2C time:");
	fprintf(ofp, "%zu files with I/O", n);
	if (unnamed)
		fprintf(ofp, ", %zu of them not named (deleted before the end): by inode", unnamed);
	fputc('\n', ofp);
	if (s->no_file)
		fprintf(ofp, "%llu bios of no file (no file map covers them): not in the tables\n",
			(unsigned long long)s->no_file);
	if (s->past)
		fprintf(ofp, "%llu bios of files past the %u followed: not in the tables\n",
			(unsigned long long)s->past, MAX_FILES);
	fputc('\n', ofp);
	free(v);
}

static void files_free(void *state)
{
	struct files *s = state;

	if (!s)
		return;
	free(s->f);
	free(s);
}

const struct btt_output_ops files_output = {
	.name = "files",
	.new = files_new,
	.report = files_report,
	.free = files_free,
};
