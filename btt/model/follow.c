// SPDX-License-Identifier: GPL-2.0
/*
 * Every bio from a note on (see follow.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/follow.h"
#include "model/iomodel.h"
#include "output.h"

struct bfollow {
	struct btt_devs *devs;
	struct iomodel *model;
	struct bios *shared, *own; /* the bios followed: btt's, or ours */
	struct bfollow_ops ops;
	int following;
	/*
	 * the time of the first event followed (a note's own time need not be on the events'
	 * clock: blkparse -d makes the events' relative, not the notes')
	 */
	uint64_t t_follow;
	int t_follow_set;
	/* the bio made by the event being taken (its made hook comes before our event call) */
	uint32_t made_id;
	int made;
	uint64_t no_q, unfinished, no_dev, nomem;
};

static void on_made(void *ctx, const struct btt_bio *b)
{
	struct bfollow *f = ctx;

	f->made_id = b->id;
	f->made = !(b->flags & BTT_BIO_NO_Q);
}

static void on_event(void *ctx, const struct blk_event *ev)
{
	struct bfollow *f = ctx;

	if (!f->t_follow_set) {
		f->t_follow = ev->time;
		f->t_follow_set = 1;
	}
	if (f->own) {
		f->made = 0;
		if (bios_event(f->own, ev) < 0)
			f->nomem++;
	}
	/* btt's own bios model took the event before us, ours just now */
	if (f->made && (ev->action & 0xffff) == BLK_TA_QUEUE)
		f->ops.queued(f->ops.ctx, ev, f->made_id);
	f->made = 0;
}

static void on_bio(void *ctx, const struct btt_bio *b)
{
	struct bfollow *f = ctx;
	int counted = 0;

	/* btt's bios model knows the bios queued before the first note; ours does not */
	if ((b->flags & BTT_BIO_NO_Q) || b->t_q < f->t_follow)
		f->no_q++;
	else if ((b->flags & BTT_BIO_UNFINISHED) || b->t_last_c == NO_TIME)
		f->unfinished++;
	else if (!devs_find(f->devs, b->device))
		f->no_dev++;
	else
		counted = 1;
	f->ops.done(f->ops.ctx, b, counted);
}

struct bfollow *bfollow_new(const struct btt_view *v, const struct bfollow_ops *ops)
{
	struct bfollow *f = xcalloc(1, sizeof(*f));

	f->devs = v->devs;
	f->model = v->model;
	f->shared = v->bios;
	f->ops = *ops;
	return f;
}

void bfollow_start(struct bfollow *f)
{
	struct bios_hooks h = {.ctx = f, .made = on_made};
	struct bios *b = f->shared;

	if (f->following)
		return;
	f->following = 1;
	if (!b)
		b = f->own = bios_new(NULL, NULL);
	if (!b || bios_subscribe(b, on_bio, f) < 0 || bios_hook(b, &h) < 0 ||
	    iomodel_follow_events(f->model, on_event, f) < 0)
		die("out of memory to follow every bio");
}

int bfollow_following(const struct bfollow *f)
{
	return f->following;
}

void bfollow_input_end(struct bfollow *f)
{
	if (f->own)
		bios_finish(f->own);
}

void bfollow_count(FILE *ofp, uint64_t n, const char *text)
{
	if (n)
		fprintf(ofp, "%llu %s\n", (unsigned long long)n, text);
}

void bfollow_say(const struct bfollow *f, FILE *ofp, const char *what)
{
	if (f->no_q)
		fprintf(ofp,
			"%llu bios queued before the first %s note (or whose Q is not in the trace): not in the table\n",
			(unsigned long long)f->no_q, what);
	bfollow_count(ofp, f->unfinished, "bios not completed in the trace: not in the table");
	bfollow_count(ofp, f->no_dev,
		      "bios of devices the report leaves out (-D): not in the table");
}

void bfollow_say_nomem(const struct bfollow *f, FILE *ofp)
{
	bfollow_count(ofp, f->nomem,
		      "events the model of every bio could not take whole (out of memory)");
}

void bfollow_free(struct bfollow *f)
{
	if (!f)
		return;
	bios_free(f->own);
	free(f);
}
