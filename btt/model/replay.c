// SPDX-License-Identifier: GPL-2.0
/*
 * A model of its own over a trace file's first records (model/replay.h).
 */
#include <errno.h>

#include "blk/reader.h"
#include "model/replay.h"

struct replay {
	const struct btt_io_sub *sub;
	struct btt_devs *devs; /* the run's registry */
};

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct replay *r = ctx;
	struct btt_dev_event x = *e;

	x.dev = devs_find(r->devs, e->dev->device);
	if (x.dev)
		r->sub->dev_event(r->sub->ctx, &x);
}

static void on_done(void *ctx, const struct btt_io *io)
{
	struct replay *r = ctx;
	struct btt_io x = *io;

	x.dev = devs_find(r->devs, io->dev->device);
	if (x.dev)
		r->sub->done(r->sub->ctx, &x);
}

static void on_lost(void *ctx, const struct btt_io *io, enum btt_lost why)
{
	struct replay *r = ctx;
	struct btt_io x = *io;

	x.dev = devs_find(r->devs, io->dev->device);
	if (x.dev)
		r->sub->lost(r->sub->ctx, &x, why);
}

int iomodel_replay(const char *path, const struct iomodel *m, struct btt_devs *devs,
		   const struct btt_io_sub *sub, int (*stop)(const struct blk_event *ev))
{
	struct replay r = {.sub = sub, .devs = devs};
	struct btt_io_sub own = {
		.ctx = &r,
		.events = sub->events,
		.dev_event = sub->dev_event ? on_event : NULL,
		.done = sub->done ? on_done : NULL,
		.lost = sub->lost ? on_lost : NULL,
	};
	struct blk_reader *rd = blk_reader_open(path);
	struct btt_devs d;
	struct iomodel *again;
	struct blk_event ev;
	int rc;

	if (!rd)
		return -errno;
	devs_init(&d, devs->filter);
	again = iomodel_new(&d, iomodel_options(m));
	iomodel_subscribe(again, &own);
	while ((rc = blk_reader_next(rd, &ev)) > 0 && !stop(&ev))
		iomodel_event(again, &ev);
	iomodel_free(again);
	devs_release(&d);
	rc = rc < 0 ? rc : 0;
	blk_reader_close(rd);
	return rc;
}
