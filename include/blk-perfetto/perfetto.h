/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A streaming writer of Perfetto traces (the protobuf format ui.perfetto.dev and the trace
 * processor open): TrackEvent tracks, slices, instants, counters and flows, encoded with
 * blk-perfetto/protobuf.h and written through a struct blk_output (gzip when the name ends in
 * ".gz").
 *
 * Design
 *
 * Track layout. A track is described once (a TrackDescriptor packet) when it is created and
 * gets the next small uuid (1, 2, 3, ...: one or two varint bytes in every event). The layout
 * for block I/O, which this API is made for:
 *
 *   "8,0 (sda)"              slice track, no parent, child_ordering EXPLICIT: the device row
 *     "I/O" x N lanes        slice tracks, parent the device, all with one name: the UI folds
 *                            them into one expandable row (sibling merge by name), one lane per
 *                            I/O in flight; blk_perfetto_lane_take() hands out the lowest free
 *                            lane, so the number of lanes is the largest number of I/Os that
 *                            overlapped. An I/O slice ("R 4 KiB") holds its stage slices
 *                            (Q2G, G2I, I2D, D2C), strictly nested, on the same lane.
 *     "in flight", "MB/s"..  counter tracks, parent the device (unit, unit name, incremental)
 *   "fio" (pid 1234)         process track (ProcessDescriptor): instants such as "queued"
 *     "fio" (tid 1235)       thread track (ThreadDescriptor)
 *
 * Note that a track whose parent is a process or thread track is shown beside it, not in it
 * (the schema's back-compat rule): nest under an intermediate slice track instead.
 *
 * One sequence. Every packet carries the same trusted_packet_sequence_id. The first packet sets
 * SEQ_INCREMENTAL_STATE_CLEARED and first_packet_on_sequence and holds the clock snapshot and
 * the TracePacketDefaults; every later packet sets SEQ_NEEDS_INCREMENTAL_STATE.
 *
 * Time. Event times are the trace's own nanoseconds, on a builtin clock (CLOCK_MONOTONIC of the
 * traced machine unless opts->clock_id says otherwise), declared the primary trace clock. The
 * first packet's ClockSnapshot ties that clock at opts->start_ns to clock 64, a sequence-scoped
 * clock marked is_incremental, and, given a wall-clock pair, to REALTIME (so the UI shows the
 * date); TracePacketDefaults make clock 64 every packet's default. A packet's timestamp is then
 * the distance from the previous packet (one to three bytes instead of eight). An event earlier
 * than the previous packet (allowed, as long as no track goes back in time) is written with its
 * absolute time and an explicit timestamp_clock_id, which leaves the incremental clock alone:
 * emit in time order to keep the file small.
 *
 * Interning. Event names, categories, debug annotation names and, on request, string values
 * are interned: the first use of a string gives it the next id of its kind, and its definition
 * goes into the InternedData of the very packet that first uses it, so an id is always defined
 * earlier on the same sequence. Up to BLK_PERFETTO_MAX_INTERNED strings (and strings up to
 * BLK_PERFETTO_MAX_INTERN_LEN bytes) are interned; others are written inline.
 *
 * Counters. A counter track declared incremental gets the difference from its previous value
 * (the caller always passes the value itself). Counter values can also ride on a slice or
 * instant event (extra_counter_track_uuids/values: five or six bytes instead of a packet of
 * about twenty).
 *
 * Flows. blk_perfetto_flow_new() gives an id; put it in flow_ids of the first event (an I/O
 * slice's begin, a process's "queued" instant) and in terminating_flow_ids of the last one.
 * flow_ids are fixed64 in the schema: 9 bytes plus the key, whatever the value (the
 * BLK_PERFETTO_VARINT_FLOWS flag writes the older varint fields instead).
 *
 * Streaming and validity. A packet is built whole in a buffer reused from packet to packet and
 * handed to the output in one write, so the output only ever holds whole packets; memory is
 * the largest packet, the track table, the lanes and the interned strings, never the trace.
 * Every call checks its arguments against the state of the trace before encoding anything (a
 * track that exists and is of the right kind, an end with a slice open on its track, no track
 * going back in time, no nesting deeper than BLK_PERFETTO_MAX_DEPTH) and, on any error,
 * writes nothing and changes nothing: the file stays what the trace processor expects.
 *
 * Errors: functions return 0 or -errno (EINVAL: misuse as above; ENOMEM; the output's write
 * error, which is sticky). Nothing is printed.
 */
#ifndef BLK_PERFETTO_H
#define BLK_PERFETTO_H

#include <stddef.h>
#include <stdint.h>

struct blk_output;
struct blk_perfetto;

/* Builtin clock ids of the schema (ClockSnapshot.Clock.BuiltinClocks). */
enum blk_perfetto_clock {
	BLK_PERFETTO_CLOCK_REALTIME = 1,
	BLK_PERFETTO_CLOCK_MONOTONIC = 3,
	BLK_PERFETTO_CLOCK_MONOTONIC_RAW = 5,
	BLK_PERFETTO_CLOCK_BOOTTIME = 6,
};

/* The sequence-scoped clock of incremental timestamps. */
#define BLK_PERFETTO_CLOCK_INCREMENTAL 64
#define BLK_PERFETTO_MAX_INTERNED (1u << 20)
#define BLK_PERFETTO_MAX_INTERN_LEN 256
/* Slices open at once on one track. */
#define BLK_PERFETTO_MAX_DEPTH 64

enum blk_perfetto_flags {
	BLK_PERFETTO_GZIP = 1 << 0, /* gzip whatever the name (blk_perfetto_open()) */
	BLK_PERFETTO_NO_GZIP = 1 << 1, /* no gzip even for a name ending in ".gz" */
	/* flow ids as varints (flow_ids_old, terminating_flow_ids_old: deprecated in the schema
	 * but read by the trace processor as the fixed64 ones): 2 + 1..3 bytes instead of 10 */
	BLK_PERFETTO_VARINT_FLOWS = 1 << 2,
};

/* How a trace starts. All-zero (or a NULL pointer) is valid: times from 0, no wall clock. */
struct blk_perfetto_opts {
	unsigned int flags; /* enum blk_perfetto_flags */
	uint32_t sequence_id; /* trusted_packet_sequence_id; 0 means 1 */
	uint32_t clock_id; /* the trace's clock (enum blk_perfetto_clock); 0 means MONOTONIC */
	uint64_t start_ns; /* no event earlier than this, ideally: the incremental clock's base */
	int has_wall; /* the trace time wall_ts was the wall clock wall_sec.wall_nsec */
	uint64_t wall_ts;
	int64_t wall_sec;
	long wall_nsec; /* 0..999999999 */
};

enum blk_perfetto_track_type {
	BLK_PERFETTO_TRACK_SLICE, /* slices and instants; may be the parent of other tracks */
	BLK_PERFETTO_TRACK_COUNTER, /* counter values only */
	BLK_PERFETTO_TRACK_PROCESS, /* a process (pid, name): slices and instants */
	BLK_PERFETTO_TRACK_THREAD, /* a thread (pid, tid, name): slices and instants */
};

/* TrackDescriptor.ChildTracksOrdering */
enum blk_perfetto_order {
	BLK_PERFETTO_ORDER_DEFAULT = 0,
	BLK_PERFETTO_ORDER_LEXICOGRAPHIC = 1,
	BLK_PERFETTO_ORDER_CHRONOLOGICAL = 2,
	BLK_PERFETTO_ORDER_EXPLICIT = 3, /* by the children's rank */
};

/* TrackDescriptor.SiblingMergeBehavior */
enum blk_perfetto_merge {
	BLK_PERFETTO_MERGE_DEFAULT = 0, /* siblings of one name merge */
	BLK_PERFETTO_MERGE_BY_NAME = 1,
	BLK_PERFETTO_MERGE_NONE = 2,
};

/* CounterDescriptor.Unit */
enum blk_perfetto_unit {
	BLK_PERFETTO_UNIT_NONE = 0,
	BLK_PERFETTO_UNIT_TIME_NS = 1,
	BLK_PERFETTO_UNIT_COUNT = 2,
	BLK_PERFETTO_UNIT_SIZE_BYTES = 3,
};

/*
 * A track to create. Fields left 0/NULL are not written. The strings are copied into the
 * descriptor packet; they need to live only for the call.
 */
struct blk_perfetto_track {
	enum blk_perfetto_track_type type;
	uint64_t parent; /* uuid of an existing track, 0: none (ignored by process/thread tracks) */
	const char *name; /* process and thread tracks: the process or thread name */
	const char *description; /* shown by the UI's help button */
	int32_t pid; /* process and thread tracks */
	int64_t tid; /* thread tracks */
	int32_t rank; /* sibling_order_rank (parent ordered EXPLICIT) */
	enum blk_perfetto_order child_ordering;
	enum blk_perfetto_merge merge;
	int has_ts; /* write the descriptor with timestamp ts (advised for processes, threads) */
	uint64_t ts;
	/* counter tracks: */
	enum blk_perfetto_unit unit;
	const char *unit_name; /* free-form unit, e.g. "MB/s" */
	int64_t unit_multiplier;
	int incremental; /* values are written as differences (int values only) */
	const char *y_axis_share_key;
};

enum blk_perfetto_arg_type {
	BLK_PERFETTO_ARG_INT,
	BLK_PERFETTO_ARG_UINT,
	BLK_PERFETTO_ARG_BOOL,
	BLK_PERFETTO_ARG_STR, /* written inline: for strings that rarely repeat */
	BLK_PERFETTO_ARG_ISTR, /* interned: for strings that repeat (RWBS, process names) */
	BLK_PERFETTO_ARG_DOUBLE,
	BLK_PERFETTO_ARG_IID, /* v.u: the iid of an interned string (blk_perfetto_intern()) */
};

/* A debug annotation (an arg in the UI): name -> value. The name is always interned. */
struct blk_perfetto_arg {
	const char *name;
	enum blk_perfetto_arg_type type;
	union {
		int64_t i;
		uint64_t u;
		const char *s;
		double d;
	} v;
};
#define BLK_PERFETTO_INT(n, x)                                        \
	{                                                             \
		.name = (n), .type = BLK_PERFETTO_ARG_INT, .v.i = (x) \
	}
#define BLK_PERFETTO_UINT(n, x)                                        \
	{                                                              \
		.name = (n), .type = BLK_PERFETTO_ARG_UINT, .v.u = (x) \
	}
#define BLK_PERFETTO_BOOL(n, x)                                          \
	{                                                                \
		.name = (n), .type = BLK_PERFETTO_ARG_BOOL, .v.u = !!(x) \
	}
#define BLK_PERFETTO_STR(n, x)                                        \
	{                                                             \
		.name = (n), .type = BLK_PERFETTO_ARG_STR, .v.s = (x) \
	}
#define BLK_PERFETTO_ISTR(n, x)                                        \
	{                                                              \
		.name = (n), .type = BLK_PERFETTO_ARG_ISTR, .v.s = (x) \
	}
#define BLK_PERFETTO_IID(n, x)                                        \
	{                                                             \
		.name = (n), .type = BLK_PERFETTO_ARG_IID, .v.u = (x) \
	}
#define BLK_PERFETTO_DOUBLE(n, x)                                        \
	{                                                                \
		.name = (n), .type = BLK_PERFETTO_ARG_DOUBLE, .v.d = (x) \
	}

/* A counter value carried by an event: the value of counter track @track at the event's time. */
struct blk_perfetto_value {
	uint64_t track;
	int64_t value;
};

/*
 * An event on a track. Only track and ts are needed; the arrays are read during the call.
 * name: the slice or instant name, interned (not written for an end). category: optional,
 * interned. flows: flow ids that start or pass through this event; terminating_flows: flow
 * ids that end here. values: counter values at ts (counter tracks, see above). flags: what
 * the writer may trust (enum blk_perfetto_event_flags), 0: nothing.
 *
 * A string that comes back often (a name, an arg's value) can be interned once by the
 * caller, who then gives its iid (name_iid, BLK_PERFETTO_ARG_IID) and spares the writer the
 * lookup: an iid stays valid as long as the writer lives.
 */
enum blk_perfetto_string_kind {
	BLK_PERFETTO_EVENT_NAME, /* for name_iid */
	BLK_PERFETTO_ARG_STRING, /* for BLK_PERFETTO_ARG_IID */
};

/* The iid of @s as a string of @kind, interned now if new (its definition goes out with the
 * next packet); 0 when it cannot be (too long, too many strings, out of memory): then give
 * the string itself. */
uint64_t blk_perfetto_intern(struct blk_perfetto *pf, enum blk_perfetto_string_kind kind,
			     const char *s);

enum blk_perfetto_event_flags {
	/* name and category are fixed strings (literals, or text that stays as it is at its
	 * address as long as the writer lives): found again by their address alone, without
	 * comparing their text to the one interned */
	BLK_PERFETTO_EV_FIXED_NAME = 1 << 0,
	BLK_PERFETTO_EV_FIXED_ARG_NAMES = 1 << 1, /* the same for the names of args */
};

struct blk_perfetto_event {
	uint64_t track;
	uint64_t ts;
	const char *name;
	uint64_t name_iid; /* not 0: the name's iid (blk_perfetto_intern()), @name not read */
	const char *category;
	const struct blk_perfetto_arg *args;
	unsigned int nargs;
	const uint64_t *flows;
	unsigned int nflows;
	const uint64_t *terminating_flows;
	unsigned int nterminating;
	const struct blk_perfetto_value *values;
	unsigned int nvalues;
	unsigned int flags;
};

/* What has been written so far. */
struct blk_perfetto_stats {
	uint64_t packets; /* TracePackets written, descriptors included */
	uint64_t bytes; /* bytes of the uncompressed trace */
	uint64_t tracks;
	uint64_t slices; /* slices begun */
	uint64_t instants;
	uint64_t counters; /* counter values: counter packets and values on events */
	uint64_t interned; /* strings interned */
	uint64_t absolute; /* packets written with an absolute time (earlier than the one before) */
};

/**
 * blk_perfetto_open() - start a trace in file @path ("-" is standard output)
 * @opts: how the trace starts (NULL: all zero). gzip when @path ends in ".gz" or
 *        BLK_PERFETTO_GZIP is set, unless BLK_PERFETTO_NO_GZIP is.
 * The first packet (clock snapshot, packet defaults) is written before this returns.
 * Return: a writer to finish with blk_perfetto_close(), or NULL with errno set.
 */
struct blk_perfetto *blk_perfetto_open(const char *path, const struct blk_perfetto_opts *opts);

/**
 * blk_perfetto_new() - start a trace on @out, which stays the caller's
 * @out must outlive the writer; finish it (blk_output_close()) after blk_perfetto_close().
 * The gzip flags of @opts are ignored (@out is as it was opened).
 * Return: a writer, or NULL with errno set.
 */
struct blk_perfetto *blk_perfetto_new(struct blk_output *out, const struct blk_perfetto_opts *opts);

/**
 * blk_perfetto_close() - finish and free @pf (NULL is allowed)
 * Closes the output if blk_perfetto_open() opened it. Slices still open stay open in the file
 * (the trace processor shows them as not ended).
 * Return: 0, or the first -errno of the trace's writes (the output's error text is then in
 * blk_output_error(), which the caller must read before closing: keep the output with
 * blk_perfetto_new() to read it after).
 */
int blk_perfetto_close(struct blk_perfetto *pf);

/* The output @pf writes to (borrowed: valid until blk_perfetto_close()), e.g. for its error. */
struct blk_output *blk_perfetto_output(struct blk_perfetto *pf);

/* Copy the counts of what @pf wrote into *@st. */
void blk_perfetto_stats(const struct blk_perfetto *pf, struct blk_perfetto_stats *st);

/**
 * blk_perfetto_track_new() - describe a new track and return its uuid in *@uuid
 * The descriptor is written now, so the track exists before any event on it.
 * Return: 0, or -EINVAL (unknown parent, bad type), -ENOMEM, an output error.
 */
int blk_perfetto_track_new(struct blk_perfetto *pf, const struct blk_perfetto_track *t,
			   uint64_t *uuid);

/**
 * blk_perfetto_lanes_new() - a set of lanes: slice tracks of one name under @parent
 * Lanes are created (described) when first needed, with sibling_order_rank @rank. @name is
 * copied. The set lives as long as @pf.
 * Return: 0 and the set's handle in *@set, or -EINVAL (unknown parent), -ENOMEM.
 */
int blk_perfetto_lanes_new(struct blk_perfetto *pf, uint64_t parent, const char *name, int32_t rank,
			   unsigned int *set);

/**
 * blk_perfetto_lane_take() - the lowest-numbered free lane of @set, in *@track
 * The lane is the caller's until blk_perfetto_lane_give(); its descriptor is written now if
 * it is new.
 * Return: 0, or -EINVAL (unknown set), -ENOMEM, an output error.
 */
int blk_perfetto_lane_take(struct blk_perfetto *pf, unsigned int set, uint64_t *track);

/**
 * blk_perfetto_lane_give() - hand lane @track back to its set
 * Return: 0, -EBUSY if a slice is still open on it, -EINVAL if it is not a taken lane.
 */
int blk_perfetto_lane_give(struct blk_perfetto *pf, uint64_t track);

/* A new flow id (1, 2, 3, ...), for flows and terminating_flows of events. */
uint64_t blk_perfetto_flow_new(struct blk_perfetto *pf);

/**
 * blk_perfetto_begin() - begin slice @ev->name on @ev->track at @ev->ts
 * A slice begun while another is open on the track is its child; it must end first.
 * Return: 0, or -EINVAL (no such slice track, ts before the track's last event, @ev->name
 * NULL, too deep, a value for a track that is not a counter), -ENOMEM, an output error.
 */
int blk_perfetto_begin(struct blk_perfetto *pf, const struct blk_perfetto_event *ev);

/**
 * blk_perfetto_end() - end the innermost open slice of @ev->track at @ev->ts
 * @ev->name and @ev->category are not written; args are added to the slice's.
 * Return: 0, or -EINVAL (no slice open on the track, ts earlier than its last event...).
 */
int blk_perfetto_end(struct blk_perfetto *pf, const struct blk_perfetto_event *ev);

/* End the innermost open slice of @track at @ts: blk_perfetto_end() with nothing else. */
int blk_perfetto_end_at(struct blk_perfetto *pf, uint64_t track, uint64_t ts);

/**
 * blk_perfetto_slices() - on slice track @track at @ts: the ends of its @nend innermost open
 * slices, then, with @name_iid (blk_perfetto_intern()'s, an event name; 0: none), the begin
 * of that slice; counter @values (@nvalues of them, at @ts) ride on the first packet. The
 * packets blk_perfetto_end() and blk_perfetto_begin() would write for that, byte for byte,
 * without what their generality costs (the stages of an I/O: one end and one begin at one
 * time).
 * Return: 0, or the errors of blk_perfetto_end() and blk_perfetto_begin(); on -EINVAL
 * nothing is written.
 */
int blk_perfetto_slices(struct blk_perfetto *pf, uint64_t track, uint64_t ts, unsigned int nend,
			uint64_t name_iid, const struct blk_perfetto_value *values,
			unsigned int nvalues);

/* An instant event (a zero-length slice) @ev->name on @ev->track. Errors as _begin(). */
int blk_perfetto_instant(struct blk_perfetto *pf, const struct blk_perfetto_event *ev);

/**
 * blk_perfetto_counter() - counter track @track has value @value from @ts on
 * Return: 0, or -EINVAL (not a counter track, ts earlier than its last value), -ENOMEM...
 */
int blk_perfetto_counter(struct blk_perfetto *pf, uint64_t track, uint64_t ts, int64_t value);

/* The same with a floating-point value (not on an incremental counter: -EINVAL). */
int blk_perfetto_counter_double(struct blk_perfetto *pf, uint64_t track, uint64_t ts, double value);

#endif /* BLK_PERFETTO_H */
