/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every bio from a note on, for the sections that learn from the trace's notes what to charge
 * each bio to (the cgroup notes: report/cgroups.c; the origin notes: origin/track.c). Until
 * bfollow_start() (the first such note) it costs nothing. From then on it follows every
 * event (iomodel_follow_events()) and every bio: btt's model of every bio when another output
 * made one (struct btt_view.bios), else one of its own from then on. Each Q that makes a bio
 * is handed to @queued with the bio's id (bios.h: kept until its done()); each bio done to
 * @done, saying whether the section counts it: its Q is in the trace at or after the first
 * event followed, it completed, and its device is one the report shows. The others are
 * counted here, for bfollow_say().
 */
#ifndef BTT_FOLLOW_H
#define BTT_FOLLOW_H

#include <stdint.h>
#include <stdio.h>

#include "blk/event.h"

struct btt_bio;
struct btt_view;
struct bfollow;

/**
 * struct bfollow_ops - the section's callbacks, with @ctx
 * @queued: Q @ev made the bio @id
 * @done: bio @b is done (free what was kept by its id); @counted: the section counts it
 */
struct bfollow_ops {
	void *ctx;
	void (*queued)(void *ctx, const struct blk_event *ev, uint32_t id);
	void (*done)(void *ctx, const struct btt_bio *b, int counted);
};

/* the follower of a section of the run @v; dies when out of memory */
struct bfollow *bfollow_new(const struct btt_view *v, const struct bfollow_ops *ops);
void bfollow_free(struct bfollow *f);

/* the first note: follow from the next event on (again: nothing) */
void bfollow_start(struct bfollow *f);
int bfollow_following(const struct bfollow *f);

/* the trace ended: the bios of its own model delivered */
void bfollow_input_end(struct bfollow *f);

/* "N text" on @ofp when @n is not 0 */
void bfollow_count(FILE *ofp, uint64_t n, const char *text);

/*
 * bfollow_say() - the bios left out of @what's tables ("cgroup", "origin"): queued before
 * the first note, not completed, of devices not shown
 */
void bfollow_say(const struct bfollow *f, FILE *ofp, const char *what);

/* the events the model of every bio could not take whole (out of memory), said on @ofp */
void bfollow_say_nomem(const struct bfollow *f, FILE *ofp);

#endif /* BTT_FOLLOW_H */
