// SPDX-License-Identifier: GPL-2.0
/*
 * The waking filter of the sched source (wakefilter.h): a bitmap of the tids seen in
 * state D (hashed: a collision only keeps a task in), the wakings counted per task in the
 * current interval (a small open-addressed table, what does not fit is not counted), the
 * tasks left out, and the blind sleeps of those taken back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/wakefilter.h"

#define DBITS 65536
#define NCOUNT 512

struct counted {
	int32_t tid; /* 0: free */
	uint32_t n;
	char comm[16];
};

struct left_out {
	int32_t tid;
	char comm[17];
};

struct blind {
	int32_t tid;
	uint64_t sure; /* 0 until the kernel has the filter that takes it back, then when */
	int io; /* the sleep would be kept: an I/O of the task was in flight */
};

struct blk_wf {
	uint8_t dsleep[DBITS / 8];
	struct counted c[NCOUNT];
	struct left_out out[BLK_WF_MAX];
	int nout;
	struct blind bl[BLK_WF_MAX];
	int nbl;
	uint64_t interval_end;
	uint64_t blind;
	int refused;
};

struct blk_wf *blk_wf_new(void)
{
	return calloc(1, sizeof(struct blk_wf));
}

void blk_wf_free(struct blk_wf *f)
{
	free(f);
}

static uint32_t hash(int32_t tid)
{
	return ((uint32_t)tid * 2654435761u) >> 16;
}

int blk_wf_switch_d(struct blk_wf *f, int32_t tid, uint64_t ts, int io)
{
	uint32_t h = hash(tid) % DBITS;

	f->dsleep[h / 8] |= (uint8_t)(1u << (h % 8));
	for (int i = 0; i < f->nbl; i++)
		if (f->bl[i].tid == tid) {
			/* switched out again without a waking seen: the last sleep's end was lost */
			f->blind += (uint64_t)f->bl[i].io;
			/* this sleep's waking comes through if the kernel had the filter by then */
			if (f->bl[i].sure && ts > f->bl[i].sure)
				f->bl[i] = f->bl[--f->nbl];
			else
				f->bl[i].io = io;
			break;
		}
	for (int i = 0; i < f->nout; i++)
		if (f->out[i].tid == tid) {
			f->out[i] = f->out[--f->nout];
			if (f->nbl < BLK_WF_MAX)
				f->bl[f->nbl++] = (struct blind){tid, 0, io};
			else
				f->blind += (uint64_t) !!io;
			return 1;
		}
	return 0;
}

void blk_wf_waking(struct blk_wf *f, int32_t tid, const char *comm, uint64_t ts)
{
	uint32_t h = hash(tid), d = h % DBITS;

	(void)ts;
	for (int i = 0; i < f->nbl; i++)
		if (f->bl[i].tid == tid) {
			f->bl[i] = f->bl[--f->nbl]; /* its sleep ended, and was seen to */
			break;
		}
	if (tid <= 0 || (f->dsleep[d / 8] & (1u << (d % 8))))
		return;
	for (uint32_t k = 0; k < 8; k++) {
		struct counted *c = &f->c[(h + k) % NCOUNT];

		if (c->tid == tid) {
			c->n++;
			return;
		}
		if (!c->tid) {
			c->tid = tid;
			c->n = 1;
			memcpy(c->comm, comm, sizeof(c->comm));
			return;
		}
	}
}

/* a name that can stand between double quotes in a filter */
static int plain(const char *comm, size_t n)
{
	size_t i;

	for (i = 0; i < n && comm[i]; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e || comm[i] == '"' || comm[i] == '\\')
			return 0;
	return i > 0;
}

int blk_wf_tick(struct blk_wf *f, uint64_t now)
{
	int changed = 0;

	if (!f->interval_end)
		f->interval_end = now + BLK_WF_INTERVAL_NS;
	if (now < f->interval_end)
		return 0;
	f->interval_end = now + BLK_WF_INTERVAL_NS;
	while (!f->refused && f->nout < BLK_WF_MAX) {
		struct counted *best = NULL;

		for (int i = 0; i < NCOUNT; i++) {
			struct counted *c = &f->c[i];
			uint32_t d = hash(c->tid) % DBITS;

			if (!c->tid || c->n < BLK_WF_MIN_WAKINGS ||
			    (f->dsleep[d / 8] & (1u << (d % 8))) ||
			    !plain(c->comm, sizeof(c->comm)))
				continue;
			if (!best || c->n > best->n)
				best = c;
		}
		if (!best)
			break;
		f->out[f->nout].tid = best->tid;
		memcpy(f->out[f->nout].comm, best->comm, sizeof(best->comm));
		f->out[f->nout].comm[16] = '\0';
		f->nout++;
		best->n = 0;
		changed = 1;
	}
	memset(f->c, 0, sizeof(f->c));
	return changed;
}

int blk_wf_filter(const struct blk_wf *f, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	if (!f->nout)
		n = (size_t)snprintf(buf, len, "0");
	for (int i = 0; i < f->nout && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s(pid != %d || comm != \"%s\")",
				      i ? " && " : "", f->out[i].tid, f->out[i].comm);
	return n < len ? (int)n : -ENOSPC;
}

void blk_wf_written(struct blk_wf *f, uint64_t now, int ok)
{
	if (!ok) {
		f->refused = 1;
		f->nout = 0;
	}
	/* a blind sleep from before is still blind: only the wakings after now are sure */
	for (int i = 0; i < f->nbl; i++)
		if (!f->bl[i].sure)
			f->bl[i].sure = now;
}

int blk_wf_excluded(const struct blk_wf *f)
{
	return f->nout;
}

uint64_t blk_wf_blind(const struct blk_wf *f)
{
	uint64_t n = f->blind;

	for (int i = 0; i < f->nbl; i++)
		n += (uint64_t)f->bl[i].io;
	return n;
}
