// SPDX-License-Identifier: GPL-2.0
/*
 * I/O by cgroup (see cgroups.h). Until the first cgroup note the output only looks at notes:
 * a trace without them costs it nothing. At the first one it follows every event
 * (iomodel_follow_events()) and the bios: btt's model of every bio when another output
 * made one, else one of its own from then on. A bio is charged to the cgroup the notes
 * give its Q (lib/cgmap.c: by device, CPU and sequence number), found when the bio is made
 * and kept by its id until it is done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/cgroup.h"
#include "blk/hist.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/follow.h"
#include "model/iomodel.h"
#include "output.h"
#include "report/cgroups.h"

/* the most (cgroup, device) rows, each two histograms (64 KiB): past it, bios are counted */
#define MAX_ROWS 256

struct row {
	uint64_t id; /* 0: the bios no note names */
	uint32_t dev; /* device index */
	uint64_t ios, bytes, nd2c;
	double q2c, d2c; /* sums, seconds */
	struct blk_hist *h; /* Q2C, D2C */
};

struct cgroups {
	struct btt_devs *devs;
	struct bfollow *follow;
	struct blk_cgmap *map;
	uint64_t *cg; /* by bio id: its cgroup id + 1, 0 when none */
	size_t ncg;
	struct row *rows;
	size_t nrows, arows;
	uint64_t past_rows, notes_bad;
};

/* a Q: the cgroup of the bio it made */
static void on_queued(void *ctx, const struct blk_event *ev, uint32_t bio)
{
	struct cgroups *c = ctx;
	uint64_t id;

	c->cg = array_grow_zero(c->cg, &c->ncg, bio, sizeof(*c->cg));
	c->cg[bio] = blk_cgmap_lookup(c->map, ev, &id) ? id + 1 : 0;
}

int cgroups_bio(const void *state, uint32_t id, uint64_t *cg, const char **path)
{
	const struct cgroups *c = state;

	if (!c || id >= c->ncg || !c->cg[id])
		return 0;
	*cg = c->cg[id] - 1;
	*path = blk_cgmap_path(c->map, *cg);
	return 1;
}

static struct row *row_of(struct cgroups *c, uint64_t id, uint32_t dev)
{
	struct row *r;

	for (size_t i = 0; i < c->nrows; i++)
		if (c->rows[i].id == id && c->rows[i].dev == dev)
			return &c->rows[i];
	if (c->nrows == MAX_ROWS)
		return NULL;
	c->rows = array_grow(c->rows, &c->arows, c->nrows, sizeof(*c->rows));
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->dev = dev;
	r->h = xcalloc(2, sizeof(*r->h));
	return r;
}

static void on_bio(void *ctx, const struct btt_bio *b, int counted)
{
	struct cgroups *c = ctx;
	uint64_t id = 0;
	struct row *r;

	if (b->id < c->ncg) {
		id = c->cg[b->id] ? c->cg[b->id] - 1 : 0;
		c->cg[b->id] = 0;
	}
	if (!counted)
		return;
	r = row_of(c, id, devs_find(c->devs, b->device)->idx);
	if (!r) {
		c->past_rows++;
		return;
	}
	r->ios++;
	r->bytes += (uint64_t)b->nsec << 9;
	r->q2c += (double)tdelta(b->t_q, b->t_last_c) / 1.0e9;
	blk_hist_add(&r->h[0], tdelta(b->t_q, b->t_last_c));
	if (b->t_first_d != NO_TIME) {
		r->nd2c++;
		r->d2c += (double)tdelta(b->t_first_d, b->t_last_c) / 1.0e9;
		blk_hist_add(&r->h[1], tdelta(b->t_first_d, b->t_last_c));
	}
}

static void on_note(void *ctx, const struct blk_event *ev)
{
	struct cgroups *c = ctx;
	int ret = blk_cgmap_note(c->map, ev);

	if (ret == -ENOMEM)
		die("out of memory for the cgroup notes");
	if (ret < 0)
		c->notes_bad++;
	if (ret > 0)
		bfollow_start(c->follow);
}

static void *cgroups_new(const struct btt_view *v, void *opened)
{
	struct cgroups *c = xcalloc(1, sizeof(*c));

	(void)opened;
	c->devs = v->devs;
	c->follow = bfollow_new(
		v, &(struct bfollow_ops){.ctx = c, .queued = on_queued, .done = on_bio});
	c->map = blk_cgmap_new();
	if (!c->map ||
	    iomodel_subscribe(v->model, &(struct btt_io_sub){.ctx = c, .note = on_note}) < 0)
		die("out of memory for the cgroup section");
	return c;
}

static void cgroups_input_end(void *state, uint64_t t_last)
{
	struct cgroups *c = state;

	(void)t_last;
	bfollow_input_end(c->follow);
}

static int by_cgroup(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

static void sec(FILE *ofp, double s)
{
	fprintf(ofp, " %13.9f", s);
}

static void cgroups_report(void *state, FILE *ofp)
{
	struct cgroups *c = state;
	struct blk_cgmap_stats st;

	if (!bfollow_following(c->follow))
		return;
	blk_cgmap_stats(c->map, &st);
	/* (no rows: no array, and qsort() may not be given NULL) */
	if (c->nrows)
		qsort(c->rows, c->nrows, sizeof(*c->rows), by_cgroup);
	fprintf(ofp, "==================== I/O by cgroup ====================\n\n");
	fprintf(ofp, "%-32s %10s | %9s %14s | %13s %13s | %13s %13s\n", "CGROUP", "DEV", "I/Os",
		"BYTES", "Q2C AVG(s)", "Q2C P99(s)", "D2C AVG(s)", "D2C P99(s)");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];
		const char *path = r->id ? blk_cgmap_path(c->map, r->id) : "(no cgroup note)";
		char num[48];

		if (!path) {
			snprintf(num, sizeof(num), "id %llu", (unsigned long long)r->id);
			path = num;
		}
		fprintf(ofp, "%-32s %10s | %9llu %14llu |", path, c->devs->v[r->dev]->label,
			(unsigned long long)r->ios, (unsigned long long)r->bytes);
		sec(ofp, r->q2c / (double)r->ios);
		sec(ofp, (double)blk_hist_percentile(&r->h[0], 99) / 1.0e9);
		fprintf(ofp, " |");
		if (r->nd2c) {
			sec(ofp, r->d2c / (double)r->nd2c);
			sec(ofp, (double)blk_hist_percentile(&r->h[1], 99) / 1.0e9);
		} else {
			fprintf(ofp, " %13s %13s", "-", "-");
		}
		fputc('\n', ofp);
	}
	fputc('\n', ofp);
	bfollow_count(ofp, st.bad + c->notes_bad,
		      "cgroup notes could not be read (damaged): skipped");
	bfollow_count(ofp, st.unnamed,
		      "cgroups with no path note (removed before the tracer looked): by id");
	bfollow_say(c->follow, ofp, "cgroup");
	bfollow_count(ofp, c->past_rows,
		      "bios of cgroups past the table's 256 rows: not in the table");
	bfollow_say_nomem(c->follow, ofp);
	fputc('\n', ofp);
}

static void cgroups_free(void *state)
{
	struct cgroups *c = state;

	if (!c)
		return;
	for (size_t i = 0; i < c->nrows; i++)
		free(c->rows[i].h);
	free(c->rows);
	free(c->cg);
	bfollow_free(c->follow);
	blk_cgmap_free(c->map);
	free(c);
}

const struct btt_output_ops cgroups_output = {
	.name = "cgroups",
	.new = cgroups_new,
	.input_end = cgroups_input_end,
	.report = cgroups_report,
	.free = cgroups_free,
};
