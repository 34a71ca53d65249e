// SPDX-License-Identifier: GPL-2.0
/*
 * I/O by origin (see origins.h): per device and origin, the bios the trace's origin notes
 * charge to it (origin/track.h). A bio counts as one I/O of its origin (the task that dirtied
 * most of its bytes, else the task that queued it; the journal; metadata), with its Q2C; its
 * bytes go to each task by its share, those of a task other than the queuer counted apart
 * ("by others": the flusher's writeback of a task's pages).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/hist.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/follow.h"
#include "model/iomodel.h"
#include "origin/origins.h"
#include "origin/track.h"
#include "output.h"
#include "report/cgroups.h"

/* the most (device, origin) rows, each a histogram (32 KiB): past it, bios are counted */
#define MAX_ROWS 512

/* row.cls, in the table's order */
enum { CLS_TASK, CLS_JOURNAL, CLS_METADATA };

struct row {
	uint32_t dev; /* device index */
	int cls;
	uint32_t pid;
	char comm[16];
	uint64_t ios, bytes, foreign;
	uint64_t q2c; /* ns */
	struct blk_hist *h; /* Q2C */
};

struct origins {
	struct btt_devs *devs;
	struct otrack *track;
	struct row *rows;
	size_t nrows, arows;
	uint64_t past_rows;
};

static struct row *row_of(struct origins *o, uint32_t dev, int cls, uint32_t pid, const char *comm)
{
	struct row *r;

	for (size_t i = 0; i < o->nrows; i++)
		if (o->rows[i].dev == dev && o->rows[i].cls == cls && o->rows[i].pid == pid)
			return &o->rows[i];
	if (o->nrows == MAX_ROWS) {
		o->past_rows++;
		return NULL;
	}
	o->rows = array_grow(o->rows, &o->arows, o->nrows, sizeof(*o->rows));
	r = &o->rows[o->nrows++];
	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->cls = cls;
	r->pid = pid;
	strncpy(r->comm, comm, sizeof(r->comm) - 1);
	r->h = xcalloc(1, sizeof(*r->h));
	return r;
}

static void on_io(void *ctx, const struct btt_bio *b, const struct otrack_io *io)
{
	struct origins *o = ctx;
	uint32_t dev = devs_find(o->devs, b->device)->idx;
	int cls = io->kind == BLK_ORIGIN_JOURNAL    ? CLS_JOURNAL
		  : io->kind == BLK_ORIGIN_METADATA ? CLS_METADATA
						    : CLS_TASK;
	struct row *r = row_of(o, dev, cls, io->pid, io->comm);
	uint64_t q2c = tdelta(b->t_q, b->t_last_c);

	if (r) {
		r->ios++;
		r->q2c += q2c;
		blk_hist_add(r->h, q2c);
	}
	for (uint32_t i = 0; i < io->nshares; i++) {
		const struct blk_origin_share *s = &io->shares[i];

		if (cls != CLS_TASK) {
			if (r)
				r->bytes += s->bytes;
			continue;
		}
		r = row_of(o, dev, CLS_TASK, s->pid, s->comm);
		if (!r)
			continue;
		r->bytes += s->bytes;
		if (s->pid != io->qpid)
			r->foreign += s->bytes;
	}
}

static void *origins_new(const struct btt_view *v, void *opened)
{
	struct origins *o = xcalloc(1, sizeof(*o));

	(void)opened;
	o->devs = v->devs;
	o->track = otrack_new(v);
	otrack_listen(o->track, on_io, o);
	return o;
}

struct otrack *origins_track(void *state)
{
	return state ? ((struct origins *)state)->track : NULL;
}

static void origins_input_end(void *state, uint64_t t_last)
{
	struct origins *o = state;

	(void)t_last;
	otrack_input_end(o->track);
}

static int by_origin(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void origins_report(void *state, FILE *ofp)
{
	static const char *const cls_name[] = {"task", "journal", "metadata"};
	struct origins *o = state;
	const struct otrack_counts *c = otrack_counts(o->track);
	struct blk_origin_stats st;

	if (!otrack_following(o->track))
		return;
	blk_origin_stats(otrack_notes(o->track), &st);
	if (o->nrows) /* (none: no array, and qsort() may not be given NULL) */
		qsort(o->rows, o->nrows, sizeof(*o->rows), by_origin);
	fprintf(ofp, "==================== I/O by origin ====================\n\n");
	fprintf(ofp, "%10s %-8s %8s %-16s | %9s %14s %14s | %13s %13s\n", "DEV", "ORIGIN", "PID",
		"COMMAND", "I/Os", "BYTES", "BY OTHERS", "Q2C AVG(s)", "Q2C P99(s)");
	for (size_t i = 0; i < o->nrows; i++) {
		const struct row *r = &o->rows[i];

		fprintf(ofp, "%10s %-8s %8u %-16s | %9llu %14llu %14llu |",
			o->devs->v[r->dev]->label, cls_name[r->cls], r->pid,
			r->comm[0] ? r->comm : "-", (unsigned long long)r->ios,
			(unsigned long long)r->bytes, (unsigned long long)r->foreign);
		if (r->ios)
			fprintf(ofp, " %13.9f %13.9f\n", (double)r->q2c / (double)r->ios / 1.0e9,
				(double)blk_hist_percentile(r->h, 99) / 1.0e9);
		else
			fprintf(ofp, " %13s %13s\n", "-", "-");
	}
	fputc('\n', ofp);
	bfollow_count(
		ofp, c->notes_bad + st.unknown,
		"origin notes could not be used (damaged, or naming an unknown file): skipped");
	bfollow_say(otrack_follow(o->track), ofp, "origin");
	bfollow_count(ofp, o->past_rows,
		      "charges to origins past the table's 512 rows: not in the table");
	bfollow_say_nomem(otrack_follow(o->track), ofp);
	bfollow_count(ofp, c->nomem,
		      "bios looked up in the notes without their shares (out of memory)");
	bfollow_count(ofp, st.dirty_pages, "dirty pages no write took by the end of the trace");
	bfollow_count(ofp, st.max_dirty_pages,
		      "dirty pages waiting for their write at most (the map's size)");
	fputc('\n', ofp);
}

static void origins_free(void *state)
{
	struct origins *o = state;

	if (!o)
		return;
	for (size_t i = 0; i < o->nrows; i++)
		free(o->rows[i].h);
	free(o->rows);
	otrack_free(o->track);
	free(o);
}

const struct btt_output_ops origins_output = {
	.name = "origins",
	.new = origins_new,
	.input_end = origins_input_end,
	.report = origins_report,
	.free = origins_free,
};

void bio_notes_of(struct bio_notes_src *s, const struct btt_view *v, const struct btt_bio *b,
		  struct bio_notes *n)
{
	const struct otrack_io *o;

	if (!s->looked) {
		s->looked = 1;
		s->cgroups = btt_view_output(v, "cgroups");
		s->track = origins_track(btt_view_output(v, "origins"));
	}
	memset(n, 0, sizeof(*n));
	n->has_cgroup = cgroups_bio(s->cgroups, b->id, &n->cgroup_id, &n->cgroup);
	if (!s->track || !(o = otrack_io_of(s->track, b->id)))
		return;
	n->has_origin = 1;
	n->origin = o->name;
	n->origin_pid = o->pid;
	if (o->has_file) {
		n->has_file = 1;
		n->path = blk_origin_path(otrack_notes(s->track), b->device, o->ino);
		n->ino = o->ino;
		n->offset = o->offset;
	}
}
