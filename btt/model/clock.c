// SPDX-License-Identifier: GPL-2.0
/* The wall clock of the trace btt reads (see clock.h). */
#include <stdlib.h>

#include "common.h"
#include "model/alloc.h"
#include "model/clock.h"

struct btt_clock {
	struct blk_wallclock *w;
	iomodel_next_fn next; /* the stream read, which next_record() wraps */
	void *src;
	int settled; /* btt_clock_base() was asked: kind, sec, nsec */
	int watch; /* a record can still change what take() knows (else it is not called) */
	enum blk_wall_kind kind;
	int64_t sec;
	long nsec;
	unsigned int gen; /* of w when settled */
	int have_first;
	struct blk_event first;
	int late; /* a timestamp note after settling without one: late_time */
	uint64_t late_time;
};

static void take(struct btt_clock *c, const struct blk_event *ev)
{
	if (!c->settled) {
		if (!c->have_first && !blk_event_is_notify(ev)) {
			c->first = *ev;
			c->first.pdu = NULL;
			c->have_first = 1;
		}
		blk_wallclock_record(c->w, ev);
	} else if (blk_event_is_notify(ev)) {
		blk_wallclock_record(c->w, ev);
		if (blk_wallclock_generation(c->w) != c->gen) {
			c->late = 1;
			c->late_time = ev->time;
			c->watch = 0;
		}
	}
}

static int next_record(void *src, struct blk_event *ev)
{
	struct btt_clock *c = src;
	int rc = c->next(c->src, ev);

	if (rc > 0 && c->watch)
		take(c, ev);
	return rc;
}

struct btt_clock *btt_clock_new(iomodel_next_fn *next, void **src, const struct blk_event *ev)
{
	struct btt_clock *c = xcalloc(1, sizeof(*c));

	c->w = blk_wallclock_new();
	if (!c->w)
		die("out of memory");
	c->watch = 1;
	c->next = *next;
	c->src = *src;
	*next = next_record;
	*src = c;
	if (ev)
		take(c, ev);
	return c;
}

void btt_clock_free(struct btt_clock *c)
{
	if (!c)
		return;
	blk_wallclock_free(c->w);
	free(c);
}

enum blk_wall_kind btt_clock_base(struct btt_clock *c, int64_t *sec, long *nsec)
{
	if (!c->settled) {
		c->kind = blk_wallclock_base(c->w, &c->sec, &c->nsec);
		c->gen = blk_wallclock_generation(c->w);
		c->settled = 1;
		/* settled on a timestamp note: no later record changes it, or is a late note */
		c->watch = c->kind == BLK_WALL_NONE;
	}
	*sec = c->sec;
	*nsec = c->nsec;
	return c->kind;
}

uint64_t btt_clock_note_offset(const struct btt_clock *c)
{
	return c->settled ? blk_wallclock_offset(c->w) : 0;
}

const struct blk_event *btt_clock_first(const struct btt_clock *c)
{
	return c->have_first ? &c->first : NULL;
}

int btt_clock_late_note(const struct btt_clock *c, uint64_t *time)
{
	if (!c->late)
		return 0;
	*time = c->late_time;
	return 1;
}
