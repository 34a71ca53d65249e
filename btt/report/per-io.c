// SPDX-License-Identifier: GPL-2.0
/*
 * The per-IO files (see per-io.h), subscribers of the I/O model: both read the completed
 * I/Os in the order the classic walk meets them, then the completion.
 */
#include <stdlib.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/outfile.h"
#include "report/per-io.h"

struct perio {
	FILE *per_io; /* -p */
	char *per_io_name;
	int pit; /* -P */
	FILE **pit_fp; /* by device index */
	size_t ndev, adev;
	uint64_t pit_d; /* the last issue of the I/Os of the completion */
};

static void per_io_line(FILE *fp, const char *lead, uint64_t t, char kind, uint64_t sec, uint32_t n)
{
	fprintf(fp, "%s %15.9lf %c %10llu+%-4u\n", lead, (double)t / 1.0e9, kind,
		(unsigned long long)sec, n);
}

/* seconds as the reference prints them: an int, so "no D" (all ones) wraps */
static void pit_time(FILE *fp, uint64_t t)
{
	fprintf(fp, "%d.%09llu", (int)(uint32_t)(t / 1000000000ULL),
		(unsigned long long)(t % 1000000000ULL));
}

static void on_done(void *ctx, const struct btt_io *io)
{
	static const char pad[] = "        ";
	static const struct {
		enum btt_stage st;
		char c;
	} later[] = {{BTT_STAGE_G, 'G'}, {BTT_STAGE_I, 'I'}, {BTT_STAGE_M, 'M'}};
	struct perio *p = ctx;
	char lead[80];

	if (p->pit) {
		FILE *fp = p->pit_fp[io->dev->idx];

		pit_time(fp, io->t[BTT_STAGE_Q]);
		fputc(' ', fp);
		if (io->t[BTT_STAGE_D] != NO_TIME)
			p->pit_d = io->t[BTT_STAGE_D];
	}
	if (!p->per_io)
		return;
	snprintf(lead, sizeof(lead), "%3u,%-3u:", BLK_MAJOR(io->dev->device),
		 BLK_MINOR(io->dev->device));
	per_io_line(p->per_io, lead, io->t[BTT_STAGE_Q], 'Q', io->sector, io->nsec);
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		if (io->t[later[i].st] != NO_TIME)
			per_io_line(p->per_io, pad, io->t[later[i].st], later[i].c, io->sector,
				    io->nsec);
	if (io->t[BTT_STAGE_D] != NO_TIME)
		per_io_line(p->per_io, pad, io->t[BTT_STAGE_D], 'D', io->d_sector, io->d_nsec);
	per_io_line(p->per_io, pad, io->t[BTT_STAGE_C], 'C', io->c_sector, io->c_nsec);
	fputc('\n', p->per_io);
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct perio *p = ctx;
	char fn[4096];
	FILE *fp;

	if (e->kind == BTT_EV_NEW) {
		if (!p->pit)
			return;
		/* kept even when empty, as with the reference */
		snprintf(fn, sizeof(fn), "%s_pit.dat", e->dev->name);
		p->pit_fp = array_grow(p->pit_fp, &p->adev, e->dev->idx, sizeof(*p->pit_fp));
		p->pit_fp[p->ndev++] = file_create(fn, NULL);
		return;
	}
	/* the end of a completion */
	if (p->pit) {
		fp = p->pit_fp[e->dev->idx];
		fputs("| ", fp);
		pit_time(fp, p->pit_d);
		fputs(" | ", fp);
		pit_time(fp, e->ev->time);
		fputc('\n', fp);
		p->pit_d = NO_TIME;
	}
	if (p->per_io)
		fputs("-----------------------------------------\n", p->per_io);
}

static int perio_wanted(const struct btt_opts *o)
{
	return o->per_io_name || o->pit_name;
}

static void *perio_new(const struct btt_view *v, void *opened)
{
	struct perio *p;
	struct btt_io_sub sub = {
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_COMPLETE,
		.done = on_done,
		.dev_event = on_event,
	};

	(void)opened;
	p = xcalloc(1, sizeof(*p));
	p->pit = v->opts->pit_name != NULL;
	p->pit_d = NO_TIME;
	if (v->opts->per_io_name) {
		p->per_io = file_create(v->opts->per_io_name, &p->per_io_name);
		/* the issue that took each I/O */
		sub.flags = BTT_SUB_ISSUE;
	}
	sub.ctx = p;
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return p;
}

static void perio_free(void *state)
{
	struct perio *p = state;

	file_close(&p->per_io, &p->per_io_name);
	for (size_t i = 0; i < p->ndev; i++)
		file_close(&p->pit_fp[i], NULL);
	free(p->pit_fp);
	free(p);
}

const struct btt_output_ops per_io_output = {
	.name = "per-io",
	.wanted = perio_wanted,
	.new = perio_new,
	.free = perio_free,
};
