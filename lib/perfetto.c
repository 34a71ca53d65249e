// SPDX-License-Identifier: GPL-2.0
/*
 * The Perfetto trace writer: see the design note in include/blk/perfetto.h. Field numbers are
 * those of the schema (perfetto_trace.proto); each is named once below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/output.h"
#include "blk/perfetto.h"
#include "blk/protobuf.h"

/* Trace */
#define F_TRACE_PACKET 1
/* TracePacket */
#define F_PKT_TIMESTAMP 8
#define F_PKT_CLOCK_ID 58
#define F_PKT_TRACK_EVENT 11
#define F_PKT_TRACK_DESCRIPTOR 60
#define F_PKT_CLOCK_SNAPSHOT 6
#define F_PKT_SEQUENCE_ID 10
#define F_PKT_INTERNED_DATA 12
#define F_PKT_SEQUENCE_FLAGS 13
#define F_PKT_DEFAULTS 59
#define F_PKT_FIRST_ON_SEQUENCE 87
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
/* TracePacketDefaults */
#define F_DEFAULTS_CLOCK_ID 58
/* ClockSnapshot, ClockSnapshot.Clock */
#define F_SNAP_CLOCKS 1
#define F_SNAP_PRIMARY 2
#define F_CLOCK_ID 1
#define F_CLOCK_TIMESTAMP 2
#define F_CLOCK_INCREMENTAL 3
/* TrackEvent */
#define F_EV_CATEGORY_IIDS 3
#define F_EV_CATEGORIES 22
#define F_EV_NAME_IID 10
#define F_EV_NAME 23
#define F_EV_TYPE 9
#define F_EV_TRACK 11
#define F_EV_COUNTER 30
#define F_EV_DOUBLE_COUNTER 44
#define F_EV_EXTRA_TRACKS 31
#define F_EV_EXTRA_VALUES 12
#define F_EV_FLOWS 47
#define F_EV_TERMINATING_FLOWS 48
#define F_EV_FLOWS_OLD 36
#define F_EV_TERMINATING_FLOWS_OLD 42
#define F_EV_ANNOTATIONS 4
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4
/* DebugAnnotation */
#define F_ARG_NAME_IID 1
#define F_ARG_NAME 10
#define F_ARG_BOOL 2
#define F_ARG_UINT 3
#define F_ARG_INT 4
#define F_ARG_DOUBLE 5
#define F_ARG_STRING 6
#define F_ARG_STRING_IID 17
/* InternedData; EventName, EventCategory, DebugAnnotationName, InternedString */
#define F_INT_CATEGORIES 1
#define F_INT_EVENT_NAMES 2
#define F_INT_ARG_NAMES 3
#define F_INT_ARG_STRINGS 29
#define F_ENTRY_IID 1
#define F_ENTRY_NAME 2
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
#define F_TD_UUID 1
#define F_TD_PARENT 5
#define F_TD_NAME 2
#define F_TD_DESCRIPTION 14
#define F_TD_PROCESS 3
#define F_TD_THREAD 4
#define F_TD_COUNTER 8
#define F_TD_CHILD_ORDERING 11
#define F_TD_RANK 12
#define F_TD_MERGE 15
#define F_PROC_PID 1
#define F_PROC_NAME 6
#define F_THREAD_PID 1
#define F_THREAD_TID 2
#define F_THREAD_NAME 5
#define F_CTR_UNIT 3
#define F_CTR_UNIT_NAME 6
#define F_CTR_MULTIPLIER 4
#define F_CTR_INCREMENTAL 5
#define F_CTR_SHARE_KEY 7

#define MAX_VALUES 32

enum intern_kind { K_NAME, K_CATEGORY, K_ARG_NAME, K_ARG_STRING, K_KINDS };

static const uint32_t intern_field[K_KINDS] = {
	[K_NAME] = F_INT_EVENT_NAMES,
	[K_CATEGORY] = F_INT_CATEGORIES,
	[K_ARG_NAME] = F_INT_ARG_NAMES,
	[K_ARG_STRING] = F_INT_ARG_STRINGS,
};

struct pf_track {
	uint8_t type; /* enum blk_perfetto_track_type */
	uint8_t incremental;
	uint8_t taken; /* a lane handed out */
	uint32_t depth; /* slices open */
	uint32_t set; /* lane set + 1, or 0 */
	uint32_t lane;
	uint64_t last_ts;
	int64_t last_value; /* incremental counters */
};

struct pf_lanes {
	uint64_t parent;
	char *name;
	int32_t rank;
	uint64_t *uuid; /* lane index -> track uuid */
	uint32_t *heap; /* free lane indices, a min-heap */
	uint32_t n, nfree, cap;
};

struct pf_string {
	uint32_t hash, iid, off, len; /* iid 0: empty slot */
	uint8_t kind;
};

/* the strings last interned, by address: most names are the same few constants */
#define RECENT 64
struct pf_recent {
	const char *s;
	uint32_t iid, off, len;
	uint8_t kind;
};

struct blk_perfetto {
	struct blk_output *out;
	int own_out;
	int err; /* sticky output error */
	uint32_t seq;
	uint32_t clock;
	int varint_flows; /* BLK_PERFETTO_VARINT_FLOWS */
	uint64_t seq_ts; /* the incremental clock's value: time of the last relative packet */
	struct blk_pb pkt; /* the packet being built */
	struct blk_pb pending; /* InternedData entries not written yet */
	struct pf_track *tracks; /* uuid - 1 -> track */
	size_t ntracks, tracks_cap;
	struct pf_lanes *sets;
	unsigned int nsets, sets_cap;
	struct pf_string *strings; /* open addressing, power-of-two size */
	size_t nstrings, strings_cap;
	char *arena;
	size_t arena_len, arena_cap;
	struct pf_recent recent[RECENT];
	uint64_t next_iid[K_KINDS];
	uint64_t next_flow;
	/* the packet being built: its time, whether it is relative */
	uint64_t pkt_ts;
	int pkt_relative;
	struct blk_perfetto_stats st;
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
 * The iid of @s, found first among the strings last interned at the same address (checked:
 * a caller's buffer may hold another string now), then in the table.
 */
static uint64_t intern(struct blk_perfetto *pf, int kind, const char *s)
{
	struct pf_recent *r = &pf->recent[((uintptr_t)s >> 3 ^ (uintptr_t)kind * 7) % RECENT];
	uint64_t iid;

	if (r->s == s && r->kind == kind && !strncmp(pf->arena + r->off, s, r->len) && !s[r->len])
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

/* A string field, interned (field @iid_field) or inline (field @str_field). */
static void put_str(struct blk_perfetto *pf, int kind, uint32_t iid_field, uint32_t str_field,
		    const char *s)
{
	uint64_t iid = intern(pf, kind, s);

	if (iid)
		blk_pb_varint(&pf->pkt, iid_field, iid);
	else
		blk_pb_string(&pf->pkt, str_field, s);
}

/* ---- packets ---- */

/* Start a packet in pf->pkt, at time @ts if @has_ts. */
static void pkt_begin(struct blk_perfetto *pf, int has_ts, uint64_t ts)
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
static int pkt_finish(struct blk_perfetto *pf)
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
	return pkt_finish(pf);
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

static struct pf_track *track(struct blk_perfetto *pf, uint64_t uuid)
{
	if (!uuid || uuid > pf->ntracks)
		return NULL;
	return &pf->tracks[uuid - 1];
}

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
	    (t->parent && !track(pf, t->parent)))
		return -EINVAL;
	if ((unsigned int)t->child_ordering > BLK_PERFETTO_ORDER_EXPLICIT ||
	    (unsigned int)t->merge > BLK_PERFETTO_MERGE_NONE ||
	    (t->incremental && t->type != BLK_PERFETTO_TRACK_COUNTER))
		return -EINVAL;
	if (grow((void **)&pf->tracks, &pf->tracks_cap, pf->ntracks + 1, sizeof(*pf->tracks)))
		return -ENOMEM;
	pkt_begin(pf, t->has_ts, t->ts);
	put_descriptor(pf, t, id);
	if ((ret = pkt_finish(pf)))
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

	if ((parent && !track(pf, parent)) || !name)
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
		tr = track(pf, uuid);
		tr->set = set + 1;
		tr->lane = l->n;
		l->uuid[l->n++] = uuid;
	}
	track(pf, uuid)->taken = 1;
	*track_uuid = uuid;
	return 0;
}

int blk_perfetto_lane_give(struct blk_perfetto *pf, uint64_t uuid)
{
	struct pf_track *tr = track(pf, uuid);

	if (!tr || !tr->set || !tr->taken)
		return -EINVAL;
	if (tr->depth)
		return -EBUSY;
	tr->taken = 0;
	heap_push(&pf->sets[tr->set - 1], tr->lane);
	return 0;
}

/* ---- events ---- */

static int slice_track(const struct pf_track *tr)
{
	return tr && tr->type != BLK_PERFETTO_TRACK_COUNTER;
}

/* Check the counter values of an event at @ts; put their differences in @v. */
static int check_values(struct blk_perfetto *pf, const struct blk_perfetto_value *values,
			unsigned int n, uint64_t ts, int64_t *v)
{
	if (n > MAX_VALUES)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		struct pf_track *tr = track(pf, values[i].track);

		if (!tr || tr->type != BLK_PERFETTO_TRACK_COUNTER || ts < tr->last_ts)
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (values[j].track == values[i].track)
				return -EINVAL;
		v[i] = values[i].value;
		if (tr->incremental)
			v[i] = (int64_t)((uint64_t)values[i].value - (uint64_t)tr->last_value);
	}
	return 0;
}

static void commit_values(struct blk_perfetto *pf, const struct blk_perfetto_value *values,
			  unsigned int n, uint64_t ts)
{
	for (unsigned int i = 0; i < n; i++) {
		struct pf_track *tr = track(pf, values[i].track);

		tr->last_ts = ts;
		tr->last_value = values[i].value;
	}
	pf->st.counters += n;
}

static int check_args(const struct blk_perfetto_arg *a, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!a[i].name || (unsigned int)a[i].type > BLK_PERFETTO_ARG_DOUBLE)
			return -EINVAL;
		if ((a[i].type == BLK_PERFETTO_ARG_STR || a[i].type == BLK_PERFETTO_ARG_ISTR) &&
		    !a[i].v.s)
			return -EINVAL;
	}
	return 0;
}

/* The debug annotations @a (checked by check_args()). */
static void put_args(struct blk_perfetto *pf, const struct blk_perfetto_arg *a, unsigned int n)
{
	struct blk_pb *pb = &pf->pkt;

	for (unsigned int i = 0; i < n; i++) {
		blk_pb_begin(pb, F_EV_ANNOTATIONS);
		put_str(pf, K_ARG_NAME, F_ARG_NAME_IID, F_ARG_NAME, a[i].name);
		switch (a[i].type) {
		case BLK_PERFETTO_ARG_INT:
			blk_pb_int(pb, F_ARG_INT, a[i].v.i);
			break;
		case BLK_PERFETTO_ARG_UINT:
			blk_pb_varint(pb, F_ARG_UINT, a[i].v.u);
			break;
		case BLK_PERFETTO_ARG_BOOL:
			blk_pb_varint(pb, F_ARG_BOOL, !!a[i].v.u);
			break;
		case BLK_PERFETTO_ARG_STR:
			blk_pb_string(pb, F_ARG_STRING, a[i].v.s);
			break;
		case BLK_PERFETTO_ARG_ISTR:
			put_str(pf, K_ARG_STRING, F_ARG_STRING_IID, F_ARG_STRING, a[i].v.s);
			break;
		case BLK_PERFETTO_ARG_DOUBLE:
			blk_pb_double(pb, F_ARG_DOUBLE, a[i].v.d);
			break;
		}
		blk_pb_end(pb);
	}
}

static int event(struct blk_perfetto *pf, int type, const struct blk_perfetto_event *ev)
{
	struct pf_track *tr = track(pf, ev->track);
	struct blk_pb *pb = &pf->pkt;
	int64_t v[MAX_VALUES];
	int ret;

	if (pf->err)
		return pf->err;
	if (!slice_track(tr) || ev->ts < tr->last_ts)
		return -EINVAL;
	if (type == TYPE_SLICE_END && !tr->depth)
		return -EINVAL;
	if (type != TYPE_SLICE_END && !ev->name)
		return -EINVAL;
	if (type == TYPE_SLICE_BEGIN && tr->depth >= BLK_PERFETTO_MAX_DEPTH)
		return -EINVAL;
	if ((ev->nflows && !ev->flows) || (ev->nterminating && !ev->terminating_flows) ||
	    (ev->nargs && !ev->args) || (ev->nvalues && !ev->values))
		return -EINVAL;
	for (unsigned int i = 0; i < ev->nflows; i++)
		if (!ev->flows[i])
			return -EINVAL;
	for (unsigned int i = 0; i < ev->nterminating; i++)
		if (!ev->terminating_flows[i])
			return -EINVAL;
	if ((ret = check_args(ev->args, ev->nargs)))
		return ret;
	if ((ret = check_values(pf, ev->values, ev->nvalues, ev->ts, v)))
		return ret;

	pkt_begin(pf, 1, ev->ts);
	blk_pb_begin(pb, F_PKT_TRACK_EVENT);
	if (type != TYPE_SLICE_END) {
		if (ev->category)
			put_str(pf, K_CATEGORY, F_EV_CATEGORY_IIDS, F_EV_CATEGORIES, ev->category);
		put_str(pf, K_NAME, F_EV_NAME_IID, F_EV_NAME, ev->name);
	}
	blk_pb_varint(pb, F_EV_TYPE, (uint64_t)type);
	blk_pb_varint(pb, F_EV_TRACK, ev->track);
	put_args(pf, ev->args, ev->nargs);
	for (unsigned int i = 0; i < ev->nflows; i++)
		if (pf->varint_flows)
			blk_pb_varint(pb, F_EV_FLOWS_OLD, ev->flows[i]);
		else
			blk_pb_fixed64(pb, F_EV_FLOWS, ev->flows[i]);
	for (unsigned int i = 0; i < ev->nterminating; i++)
		if (pf->varint_flows)
			blk_pb_varint(pb, F_EV_TERMINATING_FLOWS_OLD, ev->terminating_flows[i]);
		else
			blk_pb_fixed64(pb, F_EV_TERMINATING_FLOWS, ev->terminating_flows[i]);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		blk_pb_varint(pb, F_EV_EXTRA_TRACKS, ev->values[i].track);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		blk_pb_int(pb, F_EV_EXTRA_VALUES, v[i]);
	blk_pb_end(pb);
	if ((ret = pkt_finish(pf)))
		return ret;

	if (!pf->pkt_relative)
		pf->st.absolute++;
	tr->last_ts = ev->ts;
	if (type == TYPE_SLICE_BEGIN) {
		tr->depth++;
		pf->st.slices++;
	} else if (type == TYPE_SLICE_END) {
		tr->depth--;
	} else {
		pf->st.instants++;
	}
	commit_values(pf, ev->values, ev->nvalues, ev->ts);
	return 0;
}

int blk_perfetto_begin(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_SLICE_BEGIN, ev);
}

int blk_perfetto_end(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_SLICE_END, ev);
}

int blk_perfetto_end_at(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts)
{
	struct blk_perfetto_event ev = {.track = track_uuid, .ts = ts};

	return event(pf, TYPE_SLICE_END, &ev);
}

int blk_perfetto_instant(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_INSTANT, ev);
}

static int counter(struct blk_perfetto *pf, uint64_t uuid, uint64_t ts, int is_double,
		   int64_t value, double d)
{
	struct pf_track *tr = track(pf, uuid);
	struct blk_pb *pb = &pf->pkt;
	int ret;

	if (pf->err)
		return pf->err;
	if (!tr || tr->type != BLK_PERFETTO_TRACK_COUNTER || ts < tr->last_ts ||
	    (is_double && tr->incremental))
		return -EINVAL;
	pkt_begin(pf, 1, ts);
	blk_pb_begin(pb, F_PKT_TRACK_EVENT);
	blk_pb_varint(pb, F_EV_TYPE, TYPE_COUNTER);
	blk_pb_varint(pb, F_EV_TRACK, uuid);
	if (is_double)
		blk_pb_double(pb, F_EV_DOUBLE_COUNTER, d);
	else if (tr->incremental)
		blk_pb_int(pb, F_EV_COUNTER, (int64_t)((uint64_t)value - (uint64_t)tr->last_value));
	else
		blk_pb_int(pb, F_EV_COUNTER, value);
	blk_pb_end(pb);
	if ((ret = pkt_finish(pf)))
		return ret;
	if (!pf->pkt_relative)
		pf->st.absolute++;
	tr->last_ts = ts;
	tr->last_value = value;
	pf->st.counters++;
	return 0;
}

int blk_perfetto_counter(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts, int64_t value)
{
	return counter(pf, track_uuid, ts, 0, value, 0);
}

int blk_perfetto_counter_double(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts,
				double value)
{
	return counter(pf, track_uuid, ts, 1, 0, value);
}
