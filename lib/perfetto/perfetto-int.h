/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inside of the Perfetto trace writer (include/blk-perfetto/perfetto.h), shared by its two
 * files: perfetto.c (the trace, its tracks and lanes, interning, packets) and
 * perfetto-event.c (the events: slices, instants, counters). Field numbers are those of the
 * schema (perfetto_trace.proto); each is named once below.
 */
#ifndef BLK_PERFETTO_INT_H
#define BLK_PERFETTO_INT_H

#include <stdint.h>

#include "blk-perfetto/perfetto.h"
#include "blk-perfetto/protobuf.h"

/* shared by the library's files only: not exported from a shared object */
#ifndef __hidden
#define __hidden __attribute__((visibility("hidden")))
#endif

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

/* the strings last interned, by address: most names are the same few constants (256: with
 * 64, one lookup in seven missed on large-perf, two strings of an I/O at one place) */
#define RECENT 256
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
	/* the sequence's id and its flags, as every packet after the first has them (with
	 * room to copy all eight bytes) */
	unsigned char seq_hdr[8];
	uint8_t seq_hdr_len;
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

/* the track of @uuid, or NULL */
static inline struct pf_track *pf_track_of(struct blk_perfetto *pf, uint64_t uuid)
{
	if (!uuid || uuid > pf->ntracks)
		return NULL;
	return &pf->tracks[uuid - 1];
}

/*
 * The iid of string @s of @kind: found, or given now with its definition added to the
 * entries pending for the next packet. 0 when the string is not interned (too long, the
 * table full, or out of memory): the caller writes it inline. @fixed: @s is a fixed string
 * (BLK_PERFETTO_EV_FIXED_NAME), found again by its address alone.
 */
__hidden uint64_t blk_perfetto_iid_of(struct blk_perfetto *pf, int kind, const char *s, int fixed);

/* where @s of @kind is kept among the recent ones: by its whole address (short literals lie
 * a few bytes apart) and its kind */
static inline struct pf_recent *pf_recent_of(struct blk_perfetto *pf, int kind, const char *s)
{
	return &pf->recent[((uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull >> 56 ^ (unsigned)kind) &
			   (RECENT - 1)];
}

/* blk_perfetto_iid_of(), its commonest case inline: a fixed string met at its address before */
static inline uint64_t blk_perfetto_iid_of_inline(struct blk_perfetto *pf, int kind, const char *s,
						  int fixed)
{
	const struct pf_recent *r = pf_recent_of(pf, kind, s);

	if (fixed && r->s == s && r->kind == kind)
		return r->iid;
	return blk_perfetto_iid_of(pf, kind, s, fixed);
}

/* A string field of the packet being built, interned (field @iid_field) or inline. */
__hidden void blk_perfetto_put_str(struct blk_perfetto *pf, int kind, uint32_t iid_field,
				   uint32_t str_field, const char *s);

/* Start a packet in pf->pkt, at time @ts if @has_ts. */
__hidden void blk_perfetto_pkt_begin(struct blk_perfetto *pf, int has_ts, uint64_t ts);

/*
 * Close the packet (with the interned entries its fields used, or any pending) and write it.
 * On success, the state that the packet changed is committed; on failure nothing is written.
 */
__hidden int blk_perfetto_pkt_finish(struct blk_perfetto *pf);

#endif /* BLK_PERFETTO_INT_H */
