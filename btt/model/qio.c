// SPDX-License-Identifier: GPL-2.0
/*
 * The records of the queued I/Os (see qio.h): far times, pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"
#include "common.h"
#include "model/qio.h"

void qios_init(struct qios *s, int issue, int origin, int keep_action)
{
	size_t size = sizeof(struct qio);

	memset(s, 0, sizeof(*s));
	if (issue) {
		s->issue_off = size;
		size += sizeof(struct qio_issue);
	}
	if (origin) {
		s->origin_off = size;
		size += sizeof(struct qio_origin);
	}
	s->keep_action = keep_action;
	qpool_init(&s->pool, size);
}

void qios_release(struct qios *s)
{
	size_t issue = s->issue_off, origin = s->origin_off;
	int keep = s->keep_action;

	qpool_release(&s->pool);
	u64map_free(&s->far);
	free(s->who);
	u64map_free(&s->who_map);
	qios_init(s, issue != 0, origin != 0, keep);
}

#ifndef BTT_NO_FAR
static uint64_t far_key(const struct qios *s, const struct qio *q, enum qio_time k)
{
	return ((uint64_t)qio_index(s, q) << 3 | (uint64_t)k) + 1;
}

uint64_t qio_far_time(const struct qios *s, const struct qio *q, enum qio_time k)
{
	return *u64map_get(&s->far, far_key(s, q, k));
}

void qio_set_far(struct qios *s, struct qio *q, enum qio_time k, uint64_t t)
{
	uint64_t d = t - q->time;

	if (d < QT_FAR - 1) {
		/* was far, is near */
		u64map_del(&s->far, far_key(s, q, k));
		q->dt[k] = (uint32_t)d + 1;
	} else if (q->dt[k] == QT_FAR) {
		*u64map_get(&s->far, far_key(s, q, k)) = t;
	} else {
		if (u64map_put(&s->far, far_key(s, q, k), t) < 0)
			die("out of memory");
		q->dt[k] = QT_FAR;
		q->who |= QIO_FAR;
	}
}

void qio_forget_far(struct qios *s, struct qio *q)
{
	for (int k = 0; k < QT_N; k++)
		if (q->dt[k] == QT_FAR)
			u64map_del(&s->far, far_key(s, q, (enum qio_time)k));
}
#endif

uint32_t qio_who_slow(struct qios *s, uint32_t dev, uint32_t pid, const struct btt_proc *proc,
		      uint64_t action)
{
	struct qio_cache *c = &s->cache[(pid * 2654435761u) >> 24];
	uint64_t key = ((uint64_t)dev << 32 | pid) + 1, *v;
	/* the last pair of the chain, by index: growing the array below moves it */
	uint32_t w, last = UINT32_MAX;

	v = u64map_get(&s->who_map, key);
	for (w = v ? (uint32_t)*v : UINT32_MAX; w != UINT32_MAX;) {
		if (s->who[w].action == action)
			goto found;
		last = w;
		w = s->who[w].next ? s->who[w].next - 1 : UINT32_MAX;
	}
	if (s->nwho >= QIO_FAR - 1)
		die("out of memory for the queued I/Os' processes");
	s->who = array_grow(s->who, &s->awho, s->nwho, sizeof(*s->who));
	w = (uint32_t)s->nwho++;
	s->who[w] = (struct qio_who){.dev = dev, .pid = pid, .proc = proc, .action = action};
	if (last != UINT32_MAX)
		s->who[last].next = w + 1;
	else if (u64map_put(&s->who_map, key, w) < 0)
		die("out of memory");
found:
	*c = (struct qio_cache){.pid = pid, .dev1 = dev + 1, .who = w, .action = action};
	return w;
}
