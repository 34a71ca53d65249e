// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "blk/trace.h"
#include "blk/wallclock.h"

#define NS_PER_SEC 1000000000ll

struct wnote {
	uint64_t time;
	uint32_t device, cpu, pid;
};

struct blk_wallclock {
	int have_ts;
	uint64_t ts_time; /* trace time of the last timestamp note */
	int64_t ts_sec;
	long ts_nsec;
	unsigned int gen;
	int have_first;
	struct wnote first; /* the earliest event fed before settling */
	int settled;
	enum blk_wall_kind kind; /* once settled */
	uint64_t offset; /* added to input times to put them on the notes' clock */
	struct wnote *notes; /* process notes, until settled */
	size_t nnotes, cap;
};

struct blk_wallclock *blk_wallclock_new(void)
{
	return calloc(1, sizeof(struct blk_wallclock));
}

void blk_wallclock_free(struct blk_wallclock *w)
{
	if (!w)
		return;
	free(w->notes);
	free(w);
}

static void keep_note(struct blk_wallclock *w, const struct blk_event *ev)
{
	if (w->nnotes == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 64;
		struct wnote *n;

		if (nc > BLK_WALLCLOCK_MAX_NOTES)
			nc = BLK_WALLCLOCK_MAX_NOTES;
		if (nc == w->cap)
			return;
		n = realloc(w->notes, nc * sizeof(*n));
		if (!n)
			return; /* the estimate then falls back on the timestamp */
		w->notes = n;
		w->cap = nc;
	}
	w->notes[w->nnotes++] = (struct wnote){ev->time, ev->device, ev->cpu, ev->pid};
}

void blk_wallclock_record(struct blk_wallclock *w, const struct blk_event *ev)
{
	uint32_t a = blk_event_action32(ev) & ~BLK_TA_CGROUP;

	if (!blk_event_is_notify(ev)) {
		if (!w->settled && (!w->have_first || ev->time < w->first.time)) {
			w->first = (struct wnote){ev->time, ev->device, ev->cpu, ev->pid};
			w->have_first = 1;
		}
		return;
	}
	if (a == BLK_TN_ACTION(BLK_TN_TIMESTAMP) && ev->pdu_len == 8) {
		uint32_t words[2];

		memcpy(words, ev->pdu, 8);
		w->have_ts = 1;
		w->ts_time = ev->time;
		w->ts_sec = (int64_t)words[0] + words[1] / NS_PER_SEC;
		w->ts_nsec = (long)(words[1] % NS_PER_SEC);
		w->gen++;
	} else if (a == BLK_TN_ACTION(BLK_TN_PROCESS) && !w->settled) {
		keep_note(w, ev);
	}
}

/* Decide how input times relate to the notes' clock (once a timestamp note is known). */
static void settle(struct blk_wallclock *w)
{
	const struct wnote *f = &w->first, *best = NULL;

	w->settled = 1;
	w->kind = BLK_WALL_EXACT;
	w->offset = 0;
	if (w->have_first && f->time < w->ts_time && w->ts_time - f->time > (uint64_t)NS_PER_SEC) {
		/* rebased by blkparse -d: find the process note written just before this event */
		for (size_t i = 0; i < w->nnotes; i++) {
			const struct wnote *n = &w->notes[i];

			if (n->device == f->device && n->cpu == f->cpu && n->pid == f->pid &&
			    (!best || n->time < best->time))
				best = n;
		}
		w->kind = best ? BLK_WALL_ESTIMATED : BLK_WALL_GUESSED;
		w->offset = (best ? best->time : w->ts_time) - f->time;
	}
	free(w->notes);
	w->notes = NULL;
	w->nnotes = w->cap = 0;
}

enum blk_wall_kind blk_wallclock_base(struct blk_wallclock *w, int64_t *sec, long *nsec)
{
	int64_t d;

	if (!w->have_ts)
		return BLK_WALL_NONE;
	if (!w->settled)
		settle(w);
	/* input time 0 is at trace time offset, d ns from the timestamp note (modulo 2^64) */
	d = (int64_t)(w->offset - w->ts_time);
	*sec = w->ts_sec + d / NS_PER_SEC;
	*nsec = w->ts_nsec + (long)(d % NS_PER_SEC);
	if (*nsec < 0) {
		*nsec += NS_PER_SEC;
		(*sec)--;
	} else if (*nsec >= NS_PER_SEC) {
		*nsec -= NS_PER_SEC;
		(*sec)++;
	}
	return w->kind;
}

uint64_t blk_wallclock_offset(const struct blk_wallclock *w)
{
	return w->settled ? w->offset : 0;
}

unsigned int blk_wallclock_generation(const struct blk_wallclock *w)
{
	return w->gen;
}
