// SPDX-License-Identifier: GPL-2.0
/*
 * The Perfetto trace writer: see the design note in include/blk-perfetto/perfetto.h. This file: the
 * trace, its tracks and lanes, interning, packets; the events are in perfetto-event.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/output.h"
#include "perfetto-int.h"

static const uint32_t intern_field[K_KINDS] = {
	[K_NAME] = F_INT_EVENT_NAMES,
	[K_CATEGORY] = F_INT_CATEGORIES,
	[K_ARG_NAME] = F_INT_ARG_NAMES,
	[K_ARG_STRING] = F_INT_ARG_STRINGS,
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -ENOMEM;
		n *= 2;
	}
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* ---- interning ---- */

static uint32_t hash_str(int kind, const char *s, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)kind;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int strings_rehash(struct blk_perfetto *pf)
{
	size_t cap = pf->strings_cap ? pf->strings_cap * 2 : 256;
	struct pf_string *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < pf->strings_cap; i++) {
		struct pf_string *e = &pf->strings[i];
		size_t j;

		if (!e->iid)
			continue;
		for (j = e->hash & (cap - 1); t[j].iid; j = (j + 1) & (cap - 1))
			;
		t[j] = *e;
	}
	free(pf->strings);
	pf->strings = t;
	pf->strings_cap = cap;
	return 0;
}

/*
 * The iid of string @s of @kind: found, or given now with its definition added to the
 * entries pending for the next packet. 0 when the string is not interned (too long, the
 * table full, or out of memory): the caller writes it inline.
 */
static uint64_t intern_slow(struct blk_perfetto *pf, int kind, const char *s);

/*
 * The iid of @s, found first among the strings last interned at the same address (checked,
 * unless @fixed: a caller's buffer may hold another string now), then in the table.
 */
uint64_t blk_perfetto_iid_of(struct blk_perfetto *pf, int kind, const char *s, int fixed)
{
	struct pf_recent *r = pf_recent_of(pf, kind, s);
	uint64_t iid;

	if (r->s == s && r->kind == kind &&
	    (fixed || (!strncmp(pf->arena + r->off, s, r->len) && !s[r->len])))
		return r->iid;
	iid = intern_slow(pf, kind, s);
	if (iid) {
		const struct pf_string *e = NULL;

		/* the entry just found or made: its place in the arena */
		for (size_t j = hash_str(kind, s, strlen(s)) & (pf->strings_cap - 1);
		     pf->strings[j].iid; j = (j + 1) & (pf->strings_cap - 1))
			if (pf->strings[j].iid == iid && pf->strings[j].kind == kind) {
				e = &pf->strings[j];
				break;
			}
		if (e)
			*r = (struct pf_recent){s, (uint32_t)iid, e->off, e->len, (uint8_t)kind};
	}
	return iid;
}

static uint64_t intern_slow(struct blk_perfetto *pf, int kind, const char *s)
{
	size_t n = strlen(s), j, old;
	uint32_t h = hash_str(kind, s, n);
	struct pf_string *e;
	uint64_t iid;

	if (pf->strings_cap) {
		for (j = h & (pf->strings_cap - 1); pf->strings[j].iid;
		     j = (j + 1) & (pf->strings_cap - 1)) {
			e = &pf->strings[j];
			if (e->hash == h && e->kind == kind && e->len == n &&
			    !memcmp(pf->arena + e->off, s, n))
				return e->iid;
		}
	}
	if (n > BLK_PERFETTO_MAX_INTERN_LEN || pf->nstrings >= BLK_PERFETTO_MAX_INTERNED)
		return 0;
	if ((pf->nstrings + 1) * 2 > pf->strings_cap && strings_rehash(pf))
		return 0;
	if (grow((void **)&pf->arena, &pf->arena_cap, pf->arena_len + n, 1))
		return 0;
	iid = pf->next_iid[kind] + 1;
	old = pf->pending.len;
	blk_pb_begin(&pf->pending, intern_field[kind]);
	blk_pb_varint(&pf->pending, F_ENTRY_IID, iid);
	blk_pb_bytes(&pf->pending, F_ENTRY_NAME, s, n);
	if (blk_pb_end(&pf->pending)) {
		blk_pb_reset(&pf->pending);
		pf->pending.len = old;
		return 0;
	}
	for (j = h & (pf->strings_cap - 1); pf->strings[j].iid; j = (j + 1) & (pf->strings_cap - 1))
		;
	e = &pf->strings[j];
	e->hash = h;
	e->iid = (uint32_t)iid;
	e->kind = (uint8_t)kind;
	e->off = (uint32_t)pf->arena_len;
	e->len = (uint32_t)n;
	memcpy(pf->arena + pf->arena_len, s, n);
	pf->arena_len += n;
	pf->nstrings++;
	pf->next_iid[kind] = iid;
	pf->st.interned++;
	return iid;
}

uint64_t blk_perfetto_intern(struct blk_perfetto *pf, enum blk_perfetto_string_kind kind,
			     const char *s)
{
	if (!s || pf->err || (kind != BLK_PERFETTO_EVENT_NAME && kind != BLK_PERFETTO_ARG_STRING))
		return 0;
	return blk_perfetto_iid_of(pf, kind == BLK_PERFETTO_EVENT_NAME ? K_NAME : K_ARG_STRING, s,
				   0);
}

/* A string field, interned (field @iid_field) or inline (field @str_field). */
void blk_perfetto_put_str(struct blk_perfetto *pf, int kind, uint32_t iid_field, uint32_t str_field,
			  const char *s)
{
	uint64_t iid = blk_perfetto_iid_of(pf, kind, s, 0);

	if (iid)
		blk_pb_varint(&pf->pkt, iid_field, iid);
	else
		blk_pb_string(&pf->pkt, str_field, s);
}

/* ---- packets ---- */

/* Start a packet in pf->pkt, at time @ts if @has_ts. */
void blk_perfetto_pkt_begin(struct blk_perfetto *pf, int has_ts, uint64_t ts)
{
	struct blk_pb *pb = &pf->pkt;

	blk_pb_reset(pb);
	blk_pb_begin(pb, F_TRACE_PACKET);
	pf->pkt_relative = 0;
	if (has_ts) {
		if (ts >= pf->seq_ts) {
			blk_pb_varint(pb, F_PKT_TIMESTAMP, ts - pf->seq_ts);
			pf->pkt_relative = 1;
			pf->pkt_ts = ts;
		} else {
			blk_pb_varint(pb, F_PKT_TIMESTAMP, ts);
			blk_pb_varint(pb, F_PKT_CLOCK_ID, pf->clock);
		}
	}
	blk_pb_varint(pb, F_PKT_SEQUENCE_ID, pf->seq);
	if (pf->st.packets)
		blk_pb_varint(pb, F_PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

/*
 * Close the packet (with the interned entries its fields used, or any pending) and write it.
 * On success, the state that the packet changed is committed; on failure nothing is written.
 */
int blk_perfetto_pkt_finish(struct blk_perfetto *pf)
{
	struct blk_pb *pb = &pf->pkt;
	int ret;

	if (pf->pending.len) {
		blk_pb_begin(pb, F_PKT_INTERNED_DATA);
		blk_pb_raw(pb, pf->pending.buf, pf->pending.len);
		blk_pb_end(pb);
	}
	if ((ret = blk_pb_end(pb)))
		return ret;
	if (pb->depth)
		return -EINVAL;
	if ((ret = blk_output_write(pf->out, pb->buf, pb->len))) {
		pf->err = ret;
		return ret;
	}
	blk_pb_reset(&pf->pending);
	if (pf->pkt_relative)
		pf->seq_ts = pf->pkt_ts;
	pf->st.packets++;
	pf->st.bytes += pb->len;
	return 0;
}

static int write_first_packet(struct blk_perfetto *pf, const struct blk_perfetto_opts *o)
{
	struct blk_pb *pb = &pf->pkt;
	uint64_t start = o ? o->start_ns : 0;

	blk_pb_reset(pb);
	blk_pb_begin(pb, F_TRACE_PACKET);
	blk_pb_varint(pb, F_PKT_SEQUENCE_ID, pf->seq);
	blk_pb_varint(pb, F_PKT_SEQUENCE_FLAGS,
		      SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	blk_pb_varint(pb, F_PKT_FIRST_ON_SEQUENCE, 1);
	blk_pb_begin(pb, F_PKT_DEFAULTS);
	blk_pb_varint(pb, F_DEFAULTS_CLOCK_ID, BLK_PERFETTO_CLOCK_INCREMENTAL);
	blk_pb_end(pb);
	blk_pb_begin(pb, F_PKT_CLOCK_SNAPSHOT);
	blk_pb_begin(pb, F_SNAP_CLOCKS);
	blk_pb_varint(pb, F_CLOCK_ID, pf->clock);
	blk_pb_varint(pb, F_CLOCK_TIMESTAMP, start);
	blk_pb_end(pb);
	blk_pb_begin(pb, F_SNAP_CLOCKS);
	blk_pb_varint(pb, F_CLOCK_ID, BLK_PERFETTO_CLOCK_INCREMENTAL);
	blk_pb_varint(pb, F_CLOCK_TIMESTAMP, start);
	blk_pb_varint(pb, F_CLOCK_INCREMENTAL, 1);
	blk_pb_end(pb);
	if (o && o->has_wall) {
		/* the wall clock at start_ns, in one snapshot with the others */
		int64_t wall, base;

		if (o->wall_sec < 0 || o->wall_sec >= INT64_MAX / 1000000000 - 1 ||
		    o->wall_nsec < 0 || o->wall_nsec > 999999999)
			return -EINVAL;
		base = o->wall_sec * 1000000000 + o->wall_nsec;
		/* base less (wall_ts - start), refused below 0 or beyond INT64_MAX (the times
		 * of a damaged trace may lie 2^63 apart: no signed overflow) */
		if (o->wall_ts >= start) {
			if (o->wall_ts - start > (uint64_t)base)
				return -EINVAL;
			wall = base - (int64_t)(o->wall_ts - start);
		} else {
			if (start - o->wall_ts > (uint64_t)(INT64_MAX - base))
				return -EINVAL;
			wall = base + (int64_t)(start - o->wall_ts);
		}
		blk_pb_begin(pb, F_SNAP_CLOCKS);
		blk_pb_varint(pb, F_CLOCK_ID, BLK_PERFETTO_CLOCK_REALTIME);
		blk_pb_varint(pb, F_CLOCK_TIMESTAMP, (uint64_t)wall);
		blk_pb_end(pb);
	}
	blk_pb_varint(pb, F_SNAP_PRIMARY, pf->clock);
	blk_pb_end(pb);
	pf->seq_ts = start;
	pf->pkt_relative = 0;
	return blk_perfetto_pkt_finish(pf);
}

/* ---- lifecycle ---- */

struct blk_perfetto *blk_perfetto_new(struct blk_output *out, const struct blk_perfetto_opts *o)
{
	struct blk_perfetto *pf;
	int ret;

	if (!out || (o && o->clock_id >= BLK_PERFETTO_CLOCK_INCREMENTAL)) {
		errno = EINVAL;
		return NULL;
	}
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	pf->out = out;
	pf->seq = o && o->sequence_id ? o->sequence_id : 1;
	pf->seq_hdr[0] = F_PKT_SEQUENCE_ID << 3 | BLK_PB_VARINT;
	pf->seq_hdr_len = (uint8_t)(1 + blk_pb_put_varint(pf->seq_hdr + 1, pf->seq));
	pf->seq_hdr[pf->seq_hdr_len++] = F_PKT_SEQUENCE_FLAGS << 3 | BLK_PB_VARINT;
	pf->seq_hdr[pf->seq_hdr_len++] = SEQ_NEEDS_INCREMENTAL_STATE;
	pf->clock = o && o->clock_id ? o->clock_id : BLK_PERFETTO_CLOCK_MONOTONIC;
	pf->varint_flows = o && (o->flags & BLK_PERFETTO_VARINT_FLOWS);
	blk_pb_init(&pf->pkt);
	blk_pb_init(&pf->pending);
	ret = write_first_packet(pf, o);
	if (ret) {
		pf->out = NULL;
		blk_perfetto_close(pf);
		errno = -ret;
		return NULL;
	}
	return pf;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

struct blk_perfetto *blk_perfetto_open(const char *path, const struct blk_perfetto_opts *o)
{
	unsigned int flags = o ? o->flags : 0;
	int gz = (flags & BLK_PERFETTO_GZIP) || ends_with(path, ".gz");
	struct blk_output *out;
	struct blk_perfetto *pf;
	int e;

	if (flags & BLK_PERFETTO_NO_GZIP)
		gz = 0;
	out = blk_output_open(path, gz ? BLK_OUTPUT_GZIP : 0);
	if (!out)
		return NULL;
	pf = blk_perfetto_new(out, o);
	if (!pf) {
		e = errno;
		blk_output_free(out);
		errno = e;
		return NULL;
	}
	pf->own_out = 1;
	return pf;
}

int blk_perfetto_close(struct blk_perfetto *pf)
{
	int ret;

	if (!pf)
		return 0;
	ret = pf->err;
	if (pf->own_out) {
		int r = blk_output_close(pf->out);

		if (!ret)
			ret = r;
	}
	for (unsigned int i = 0; i < pf->nsets; i++) {
		free(pf->sets[i].name);
		free(pf->sets[i].uuid);
		free(pf->sets[i].heap);
	}
	free(pf->sets);
	free(pf->tracks);
	free(pf->strings);
	free(pf->arena);
	blk_pb_release(&pf->pkt);
	blk_pb_release(&pf->pending);
	free(pf);
	return ret;
}

struct blk_output *blk_perfetto_output(struct blk_perfetto *pf)
{
	return pf->out;
}

void blk_perfetto_stats(const struct blk_perfetto *pf, struct blk_perfetto_stats *st)
{
	*st = pf->st;
}

uint64_t blk_perfetto_flow_new(struct blk_perfetto *pf)
{
	return ++pf->next_flow;
}

/* ---- tracks ---- */

static void put_descriptor(struct blk_perfetto *pf, const struct blk_perfetto_track *t,
			   uint64_t uuid)
{
	struct blk_pb *pb = &pf->pkt;

	blk_pb_begin(pb, F_PKT_TRACK_DESCRIPTOR);
	blk_pb_varint(pb, F_TD_UUID, uuid);
	if (t->parent && t->type != BLK_PERFETTO_TRACK_PROCESS &&
	    t->type != BLK_PERFETTO_TRACK_THREAD)
		blk_pb_varint(pb, F_TD_PARENT, t->parent);
	switch (t->type) {
	case BLK_PERFETTO_TRACK_PROCESS:
		blk_pb_begin(pb, F_TD_PROCESS);
		blk_pb_int(pb, F_PROC_PID, t->pid);
		if (t->name)
			blk_pb_string(pb, F_PROC_NAME, t->name);
		blk_pb_end(pb);
		break;
	case BLK_PERFETTO_TRACK_THREAD:
		blk_pb_begin(pb, F_TD_THREAD);
		blk_pb_int(pb, F_THREAD_PID, t->pid);
		blk_pb_int(pb, F_THREAD_TID, t->tid);
		if (t->name)
			blk_pb_string(pb, F_THREAD_NAME, t->name);
		blk_pb_end(pb);
		break;
	case BLK_PERFETTO_TRACK_COUNTER:
		blk_pb_begin(pb, F_TD_COUNTER);
		if (t->unit)
			blk_pb_varint(pb, F_CTR_UNIT, t->unit);
		if (t->unit_name)
			blk_pb_string(pb, F_CTR_UNIT_NAME, t->unit_name);
		if (t->unit_multiplier)
			blk_pb_int(pb, F_CTR_MULTIPLIER, t->unit_multiplier);
		if (t->incremental)
			blk_pb_varint(pb, F_CTR_INCREMENTAL, 1);
		if (t->y_axis_share_key)
			blk_pb_string(pb, F_CTR_SHARE_KEY, t->y_axis_share_key);
		blk_pb_end(pb);
		break;
	case BLK_PERFETTO_TRACK_SLICE:
		break;
	}
	if (t->name && t->type != BLK_PERFETTO_TRACK_PROCESS &&
	    t->type != BLK_PERFETTO_TRACK_THREAD)
		blk_pb_string(pb, F_TD_NAME, t->name);
	if (t->description)
		blk_pb_string(pb, F_TD_DESCRIPTION, t->description);
	if (t->child_ordering)
		blk_pb_varint(pb, F_TD_CHILD_ORDERING, t->child_ordering);
	if (t->rank)
		blk_pb_int(pb, F_TD_RANK, t->rank);
	if (t->merge)
		blk_pb_varint(pb, F_TD_MERGE, t->merge);
	blk_pb_end(pb);
}

int blk_perfetto_track_new(struct blk_perfetto *pf, const struct blk_perfetto_track *t,
			   uint64_t *uuid)
{
	struct pf_track *tr;
	uint64_t id = pf->ntracks + 1;
	int ret;

	if (pf->err)
		return pf->err;
	if ((unsigned int)t->type > BLK_PERFETTO_TRACK_THREAD ||
	    (t->parent && !pf_track_of(pf, t->parent)))
		return -EINVAL;
	if ((unsigned int)t->child_ordering > BLK_PERFETTO_ORDER_EXPLICIT ||
	    (unsigned int)t->merge > BLK_PERFETTO_MERGE_NONE ||
	    (t->incremental && t->type != BLK_PERFETTO_TRACK_COUNTER))
		return -EINVAL;
	if (grow((void **)&pf->tracks, &pf->tracks_cap, pf->ntracks + 1, sizeof(*pf->tracks)))
		return -ENOMEM;
	blk_perfetto_pkt_begin(pf, t->has_ts, t->ts);
	put_descriptor(pf, t, id);
	if ((ret = blk_perfetto_pkt_finish(pf)))
		return ret;
	if (t->has_ts && !pf->pkt_relative)
		pf->st.absolute++;
	tr = &pf->tracks[pf->ntracks++];
	memset(tr, 0, sizeof(*tr));
	tr->type = (uint8_t)t->type;
	tr->incremental = !!t->incremental;
	pf->st.tracks++;
	*uuid = id;
	return 0;
}

/* ---- lanes ---- */

static void heap_push(struct pf_lanes *l, uint32_t v)
{
	uint32_t i = l->nfree++;

	while (i && l->heap[(i - 1) / 2] > v) {
		l->heap[i] = l->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	l->heap[i] = v;
}

static uint32_t heap_pop(struct pf_lanes *l)
{
	uint32_t top = l->heap[0], v = l->heap[--l->nfree], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= l->nfree)
			break;
		if (c + 1 < l->nfree && l->heap[c + 1] < l->heap[c])
			c++;
		if (l->heap[c] >= v)
			break;
		l->heap[i] = l->heap[c];
		i = c;
	}
	if (l->nfree)
		l->heap[i] = v;
	return top;
}

int blk_perfetto_lanes_new(struct blk_perfetto *pf, uint64_t parent, const char *name, int32_t rank,
			   unsigned int *set)
{
	size_t cap = pf->sets_cap;
	struct pf_lanes *l;

	if ((parent && !pf_track_of(pf, parent)) || !name)
		return -EINVAL;
	if (grow((void **)&pf->sets, &cap, pf->nsets + 1, sizeof(*pf->sets)))
		return -ENOMEM;
	pf->sets_cap = (unsigned int)cap;
	l = &pf->sets[pf->nsets];
	memset(l, 0, sizeof(*l));
	l->name = strdup(name);
	if (!l->name)
		return -ENOMEM;
	l->parent = parent;
	l->rank = rank;
	*set = pf->nsets++;
	return 0;
}

int blk_perfetto_lane_take(struct blk_perfetto *pf, unsigned int set, uint64_t *track_uuid)
{
	struct blk_perfetto_track t = {.type = BLK_PERFETTO_TRACK_SLICE};
	struct pf_lanes *l;
	struct pf_track *tr;
	uint64_t uuid;
	size_t cap;
	int ret;

	if (set >= pf->nsets)
		return -EINVAL;
	l = &pf->sets[set];
	if (l->nfree) {
		uuid = l->uuid[heap_pop(l)];
	} else {
		/* a new lane; room for it in the free heap too, so that giving never fails */
		cap = l->cap;
		if (grow((void **)&l->uuid, &cap, (size_t)l->n + 1, sizeof(*l->uuid)))
			return -ENOMEM;
		cap = l->cap;
		if (grow((void **)&l->heap, &cap, (size_t)l->n + 1, sizeof(*l->heap)))
			return -ENOMEM;
		l->cap = (uint32_t)cap;
		t.parent = l->parent;
		t.name = l->name;
		t.rank = l->rank;
		if ((ret = blk_perfetto_track_new(pf, &t, &uuid)))
			return ret;
		tr = pf_track_of(pf, uuid);
		tr->set = set + 1;
		tr->lane = l->n;
		l->uuid[l->n++] = uuid;
	}
	pf_track_of(pf, uuid)->taken = 1;
	*track_uuid = uuid;
	return 0;
}

int blk_perfetto_lane_give(struct blk_perfetto *pf, uint64_t uuid)
{
	struct pf_track *tr = pf_track_of(pf, uuid);

	if (!tr || !tr->set || !tr->taken)
		return -EINVAL;
	if (tr->depth)
		return -EBUSY;
	tr->taken = 0;
	heap_push(&pf->sets[tr->set - 1], tr->lane);
	return 0;
}
