// SPDX-License-Identifier: GPL-2.0
/*
 * The relay path's cgroup-tagged records turned into classic records and cgroup notes (see
 * relaycg.h and trace.h BLK_TN_CGROUP). Each record is framed (lib/frame.c), stripped of
 * its id and written again in its own version; an event starts or extends a run note by
 * the sequence number the kernel gave it, exactly as tfsconv.c does for the tracefs path.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "blk/cgroup.h"
#include "blk/event.h"
#include "blk/frame.h"
#include "blk/trace.h"
#include "cgpath.h"
#include "relaycg.h"

struct blk_relaycg {
	uint32_t devno, cpu;
	struct blk_cgpath *paths;
	unsigned char *buf; /* the converted records of the last call */
	size_t len, cap;
	/* the open run: its note's payload at run_off in buf */
	int run_open;
	size_t run_off;
	uint64_t run_id;
	uint32_t run_next, run_count;
	uint64_t *named; /* the ids whose path note this stream carries */
	size_t nnamed, capnamed;
	uint64_t tagged, runs;
};

struct blk_relaycg *blk_relaycg_new(uint32_t devno, uint32_t cpu, struct blk_cgpath *paths)
{
	struct blk_relaycg *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->devno = devno;
	c->cpu = cpu;
	c->paths = paths;
	return c;
}

static int room(struct blk_relaycg *c, size_t need)
{
	size_t cap = c->cap ? c->cap : 64 * 1024;
	unsigned char *nb;

	if (c->cap - c->len >= need)
		return 0;
	while (cap - c->len < need)
		cap *= 2;
	nb = realloc(c->buf, cap);
	if (!nb)
		return -ENOMEM;
	c->buf = nb;
	c->cap = cap;
	return 0;
}

static int put(struct blk_relaycg *c, const struct blk_event *ev)
{
	if (room(c, 64 + (size_t)ev->pdu_len))
		return -ENOMEM;
	c->len += blk_event_encode(ev, c->buf + c->len);
	return 0;
}

/* the path note of @id, once per stream, where the path is known */
static int announce(struct blk_relaycg *c, uint64_t id, uint64_t ts)
{
	unsigned char pdu[8 + BLK_CGPATH_MAX + 1];
	struct blk_event n;
	size_t len;

	for (size_t i = 0; i < c->nnamed; i++)
		if (c->named[i] == id)
			return 0;
	if (c->nnamed == c->capnamed) {
		size_t cap = c->capnamed ? c->capnamed * 2 : 16;
		uint64_t *nn = realloc(c->named, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		c->named = nn;
		c->capnamed = cap;
	}
	/* asked once per stream, found or not */
	c->named[c->nnamed++] = id;
	if (!c->paths || !blk_cgpath_lookup(c->paths, id, (char *)pdu + 8, sizeof(pdu) - 8))
		return 0;
	len = strnlen((char *)pdu + 8, BLK_CGPATH_MAX);
	if (!len)
		return 0;
	memcpy(pdu, &id, 8);
	blk_event_note(&n, BLK_TN_CGPATH, c->devno, c->cpu, ts, pdu, (uint16_t)(8 + len));
	return put(c, &n);
}

static void run_grow(struct blk_relaycg *c)
{
	c->run_next++;
	c->run_count++;
	memcpy(c->buf + c->run_off + offsetof(struct blk_cgroup_pdu, count), &c->run_count,
	       sizeof(c->run_count));
}

/* event @seq at @ts was tagged with @id: one more in the open run, or a new run note */
static int run(struct blk_relaycg *c, uint64_t id, uint32_t seq, uint64_t ts)
{
	struct blk_cgroup_pdu pdu = {.id = id, .first = seq, .count = 1};
	struct blk_event n;

	if (c->run_open && c->run_id == id && c->run_next == seq) {
		run_grow(c);
		return 0;
	}
	if (announce(c, id, ts))
		return -ENOMEM;
	blk_event_note(&n, BLK_TN_CGROUP, c->devno, c->cpu, ts, &pdu, sizeof(pdu));
	if (put(c, &n))
		return -ENOMEM;
	c->runs++;
	c->run_open = 1;
	c->run_off = c->len - sizeof(pdu);
	c->run_id = id;
	c->run_next = seq + 1;
	c->run_count = 1;
	return 0;
}

/* one framed record: passed on untagged, an event's id in a run note before it */
static int convert(struct blk_relaycg *c, struct blk_event *ev, unsigned long *events)
{
	int notify = blk_event_is_notify(ev), tagged = 0;
	uint64_t id = 0;

	if ((ev->action & BLK_TA_CGROUP) && ev->pdu_len >= 8) {
		memcpy(&id, ev->pdu, 8);
		ev->action &= ~(uint64_t)BLK_TA_CGROUP;
		ev->pdu += 8;
		ev->pdu_len = (uint16_t)(ev->pdu_len - 8);
		tagged = 1;
		c->tagged++;
	}
	if (!notify) {
		if (tagged) {
			if (run(c, id, ev->sequence, ev->time))
				return -ENOMEM;
		} else if (c->run_open && c->run_next == ev->sequence &&
			   blk_cgroup_untagged(ev->action)) {
			/* a plug or unplug in the run: passed over (trace.h BLK_TN_CGROUP) */
			run_grow(c);
		} else {
			c->run_open = 0;
		}
		(*events)++;
	}
	return put(c, ev);
}

int blk_relaycg_convert(struct blk_relaycg *c, const unsigned char *in, size_t n,
			const unsigned char **out, size_t *outlen, unsigned long *events)
{
	size_t off = 0;
	int swapped = 0;

	c->len = 0;
	c->run_open = 0;
	*events = 0;
	while (off < n) {
		struct blk_event ev;
		long r = blk_frame(in + off, n - off, &swapped, &ev);

		/* the caller hands whole records (blk_frame_count()): nothing else comes */
		if (r <= 0)
			break;
		if (convert(c, &ev, events))
			return -ENOMEM;
		off += (size_t)r;
	}
	c->run_open = 0;
	*out = c->buf;
	*outlen = c->len;
	return 0;
}

void blk_relaycg_counts(const struct blk_relaycg *c, uint64_t *tagged, uint64_t *runs)
{
	*tagged = c->tagged;
	*runs = c->runs;
}

void blk_relaycg_free(struct blk_relaycg *c)
{
	if (!c)
		return;
	free(c->buf);
	free(c->named);
	free(c);
}
