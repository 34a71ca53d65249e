// SPDX-License-Identifier: GPL-2.0
/*
 * Activity ranges (see ranges.h).
 */
#include <stdlib.h>

#include "model/alloc.h"
#include "report/ranges.h"

void region_add_slow(struct ranges *rs, uint64_t t, const struct range_gap *g)
{
	struct range *cur = rs->n ? &rs->v[rs->n - 1] : NULL;

	/* an event earlier than the current range (the input is not sorted) changes nothing */
	if (cur && t < cur->end)
		return;
	if (!cur || (!g->never && t - cur->end >= g->gap)) {
		rs->v = array_grow(rs->v, &rs->alloc, rs->n, sizeof(*rs->v));
		cur = &rs->v[rs->n++];
		cur->start = t;
	}
	cur->end = t;
}

void range_gap_init(struct range_gap *g, double delta)
{
	uint64_t lo = 0, hi = UINT64_MAX;

	g->never = !((double)UINT64_MAX / 1.0e9 > delta);
	/* seconds never decrease with the ns: the first gap past delta, by bisection */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((double)mid / 1.0e9 > delta)
			hi = mid;
		else
			lo = mid + 1;
	}
	g->gap = lo;
}

void region_release(struct region *reg)
{
	free(reg->q.v);
	free(reg->c.v);
	*reg = (struct region){{NULL, 0, 0}, {NULL, 0, 0}};
}
