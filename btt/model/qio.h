/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compact record of a queued I/O, the payload of its node in its device's tree
 * (qtree.h, which holds its sector and length): the Q's time, the later stage times as
 * 32-bit offsets from it (a time too far from its Q is kept apart, by node and kind), and
 * one 4-byte index naming its device, process and action bits together. The parts that
 * only some subscribers need (the issue that took it, its remap origin) follow when asked.
 */
#ifndef BTT_QIO_H
#define BTT_QIO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/devs.h"
#include "model/qtree.h"
#include "model/u64map.h"

/* the times a queued I/O records after its Q */
enum qio_time { QT_G, QT_S, QT_I, QT_M, QT_D, QT_N };

/* dt[k]: 0 none; QT_FAR in the far map; else time - Q's time + 1 */
#define QT_FAR UINT32_MAX

#ifndef BTT_NO_FAR
struct qio {
	uint64_t time;
	uint32_t who; /* index in qios.who, | QIO_FAR once a time was kept in the far map */
	uint32_t dt[QT_N];
};
#else
/* measuring only: every time in 64 bits (time + 1, 0: none), no far map */
struct qio {
	uint64_t time;
	uint32_t who;
	uint32_t pad;
	uint64_t t1[QT_N];
};
#endif

/* in qio.who: some dt[] is (or was) QT_FAR; the pairs' indexes stay below it */
#define QIO_FAR (1u << 31)

/* with BTT_SUB_ISSUE: the issue that took it */
struct qio_issue {
	uint64_t sector;
	uint32_t nsec, pad;
};

/* with BTT_SUB_REMAP: where an A event remapped it from */
struct qio_origin {
	uint64_t sector;
	uint32_t device, set;
};

/* a device, a pid (and so a process) and the action bits that queued I/O */
struct qio_who {
	uint32_t dev; /* index in the registry */
	uint32_t pid;
	const struct btt_proc *proc;
	uint64_t action; /* 0 unless the action bits are kept */
	uint32_t next; /* the next pair of the same device and pid, + 1 (0: none) */
};

#define QIO_CACHE 256

/* the last pair of a pid (pids queue on one device with one kind of request, mostly) */
struct qio_cache {
	uint32_t pid, dev1, who;
	uint64_t action;
};

struct qios {
	struct qpool pool; /* the nodes of every device's tree, and their payloads */
	struct u64map far; /* times too far from their Q: ((node << 3 | kind) + 1) -> time */
	size_t issue_off, origin_off; /* of the optional parts in the payload (0: not kept) */
	int keep_action;
	struct qio_who *who;
	size_t nwho, awho;
	struct u64map who_map; /* ((device << 32) | pid) + 1 -> first pair */
	struct qio_cache cache[QIO_CACHE];
};

/* Lay out the payload: with the issue and/or the origin parts (sizes multiple of 8). */
void qios_init(struct qios *s, int issue, int origin, int keep_action);
/* Free every record and pair (the trees that held the nodes must be reset). */
void qios_release(struct qios *s);

static inline struct qio *qio_at(const struct qios *s, uint32_t i)
{
	return (struct qio *)qpool_data(&s->pool, i);
}

static inline uint32_t qio_index(const struct qios *s, const struct qio *q)
{
	return (uint32_t)(((const unsigned char *)q - s->pool.data) / s->pool.data_size);
}

static inline struct qio_issue *qio_issue(const struct qio *q, const struct qios *s)
{
	return (struct qio_issue *)((unsigned char *)q + s->issue_off);
}

static inline struct qio_origin *qio_origin(const struct qio *q, const struct qios *s)
{
	return (struct qio_origin *)((unsigned char *)q + s->origin_off);
}

uint64_t qio_far_time(const struct qios *s, const struct qio *q, enum qio_time k);
void qio_set_far(struct qios *s, struct qio *q, enum qio_time k, uint64_t t);

#ifndef BTT_NO_FAR
/* the time of stage @k, or NO_TIME */
static inline uint64_t qio_time(const struct qios *s, const struct qio *q, enum qio_time k)
{
	if (q->dt[k] == QT_FAR)
		return qio_far_time(s, q, k);
	return q->dt[k] ? q->time + q->dt[k] - 1 : (uint64_t)-1;
}

static inline void qio_set_time(struct qios *s, struct qio *q, enum qio_time k, uint64_t t)
{
	uint64_t d = t - q->time; /* after the Q, as the trace is merged; else far */

	if (d < QT_FAR - 1 && q->dt[k] != QT_FAR)
		q->dt[k] = (uint32_t)d + 1;
	else
		qio_set_far(s, q, k, t);
}

void qio_forget_far(struct qios *s, struct qio *q);

/* before the node is reused or freed: its far times go */
static inline void qio_forget(struct qios *s, struct qio *q)
{
	if (q->who & QIO_FAR)
		qio_forget_far(s, q);
}

/* the Q's time and the stage times after it, into @t[0..QT_N] (NO_TIME when absent) */
static inline void qio_times(const struct qios *s, const struct qio *q, uint64_t *t)
{
	uint64_t base = q->time - 1;
	uint32_t d[QT_N];

	/* read first: the stores could alias them */
	memcpy(d, q->dt, sizeof(d));
	t[0] = q->time;
	/* written out: the loop is not unrolled at -O2 */
	t[1] = d[QT_G] ? base + d[QT_G] : (uint64_t)-1;
	t[2] = d[QT_S] ? base + d[QT_S] : (uint64_t)-1;
	t[3] = d[QT_I] ? base + d[QT_I] : (uint64_t)-1;
	t[4] = d[QT_M] ? base + d[QT_M] : (uint64_t)-1;
	t[5] = d[QT_D] ? base + d[QT_D] : (uint64_t)-1;
	/* times far from their Q are kept apart (rare) */
	if (q->who & QIO_FAR)
		for (int k = 0; k < QT_N; k++)
			if (d[k] == QT_FAR)
				t[k + 1] = qio_far_time(s, q, (enum qio_time)k);
}
#else
static inline uint64_t qio_time(const struct qios *s, const struct qio *q, enum qio_time k)
{
	(void)s;
	return q->t1[k] - 1;
}

static inline void qio_set_time(struct qios *s, struct qio *q, enum qio_time k, uint64_t t)
{
	(void)s;
	q->t1[k] = t + 1;
}

static inline void qio_forget(struct qios *s, struct qio *q)
{
	(void)s;
	(void)q;
}

static inline void qio_times(const struct qios *s, const struct qio *q, uint64_t *t)
{
	(void)s;
	t[0] = q->time;
	for (int k = 0; k < QT_N; k++)
		t[k + 1] = q->t1[k] - 1;
}
#endif

static inline const struct qio_who *qio_pair(const struct qios *s, const struct qio *q)
{
	return &s->who[q->who & ~QIO_FAR];
}

uint32_t qio_who_slow(struct qios *s, uint32_t dev, uint32_t pid, const struct btt_proc *proc,
		      uint64_t action);

/* the pair (device index @dev, @pid with @proc, @action bits), added when new */
static inline uint32_t qio_who(struct qios *s, uint32_t dev, uint32_t pid,
			       const struct btt_proc *proc, uint64_t action)
{
	const struct qio_cache *c = &s->cache[(pid * 2654435761u) >> 24];

	if (!s->keep_action)
		action = 0;
	if (c->dev1 == dev + 1 && c->pid == pid && c->action == action)
		return c->who;
	return qio_who_slow(s, dev, pid, proc, action);
}

#endif /* BTT_QIO_H */
