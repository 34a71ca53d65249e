/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Activity ranges: the periods of Q and of C activity of a region (the system, a device
 * or a process), split where no activity was seen for longer than -d; kept to the end, as
 * they are printed then (a few per second of trace, whatever the event rate).
 */
#ifndef BTT_RANGES_H
#define BTT_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct range {
	uint64_t start, end;
};

struct ranges {
	struct range *v;
	size_t n, alloc;
};

struct region {
	struct ranges q, c;
};

/* the gap that starts a new range, derived from -d once */
struct range_gap {
	uint64_t gap; /* the shortest gap in ns whose seconds exceed -d */
	int never; /* no gap does */
};

void range_gap_init(struct range_gap *g, double delta);
void region_add_slow(struct ranges *rs, uint64_t t, const struct range_gap *g);

/* activity at @t (an event earlier than the current range changes nothing) */
static inline void region_add(struct ranges *rs, uint64_t t, const struct range_gap *g)
{
	struct range *cur = rs->n ? &rs->v[rs->n - 1] : NULL;

	/* mostly: the current range goes on */
	if (cur && t >= cur->end && (g->never || t - cur->end < g->gap))
		cur->end = t;
	else
		region_add_slow(rs, t, g);
}
void region_release(struct region *reg);

#endif /* BTT_RANGES_H */
