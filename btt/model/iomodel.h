/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The I/O model: btt's tracking of each queued I/O (Q) through G, S, I, M, A, D and C,
 * and the interface its outputs subscribe to. One model, several subscribers: the report's
 * statistics, the per-IO files, the latency files, the percentiles, iostat, and exporters
 * all read what the model delivers; none tracks I/Os itself.
 *
 * What the model does (btt 2.09's rules): a Q creates an I/O, indexed by its start sector
 * on its device (a second Q at the same start takes the first one's place: the first is
 * lost). G, S, I and M find the I/O whose range holds their sector. D and C take every I/O
 * lying inside their range, in the order the classic tree walk meets them (which depends
 * on the tree's shape and may miss some when ranges overlap). A C frees the I/Os it takes.
 * An A (remap) finds the I/O it remaps on the device it comes from. Before a device's first
 * Q or A its events are ignored (btt's pre-culling). I/Os still queued at the end are never
 * delivered as completed.
 *
 * Subscribing: fill a struct btt_io_sub and pass it to iomodel_subscribe() before the
 * first event. Example, a subscriber that prints each I/O's Q2C:
 *
 *	static void q2c(void *ctx, const struct btt_io *io)
 *	{
 *		fprintf(ctx, "%s %llu\n", io->dev->name,
 *			(unsigned long long)(io->t[BTT_STAGE_C] - io->t[BTT_STAGE_Q]));
 *	}
 *	...
 *	iomodel_subscribe(m, &(struct btt_io_sub){.ctx = stdout, .done = q2c});
 */
#ifndef BTT_IOMODEL_H
#define BTT_IOMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "model/devs.h"

/* a time that was not recorded */
#define NO_TIME ((uint64_t)-1)

/* The stages of an I/O; btt_io.t[] holds the times of the first seven. */
enum btt_stage {
	BTT_STAGE_Q, /* queued: the I/O is created */
	BTT_STAGE_G, /* given a request */
	BTT_STAGE_S, /* slept waiting for a request */
	BTT_STAGE_I, /* inserted into the scheduler */
	BTT_STAGE_M, /* merged into a request (back or front) */
	BTT_STAGE_D, /* issued to the driver (again after a requeue: the later D counts) */
	BTT_STAGE_C, /* completed */
	BTT_STAGE_A, /* remapped to another device (its Q2A); not kept in t[] */
	BTT_STAGE_NR
};

#define BTT_NTIMES BTT_STAGE_A

/**
 * struct btt_io - the view of one I/O given to a subscriber
 * @dev: the device of its Q
 * @proc: the process of its Q, as btt knows it (by name); @pid: the Q's pid
 * @sector: the Q's start sector; @nsec: the Q's length in sectors
 * @t: the stage times, NO_TIME when absent (see the callbacks for when each is set)
 * @action: the Q's action without its code (category bits, BLK_TC_ACT() and the v2
 *	bits), for its RWBS: only with BTT_SUB_RWBS (0 otherwise)
 * @d_sector: the issue (D) that took it, its start sector and @d_nsec its length: the
 *	request it went out in (for a merged I/O, the request it was merged into, as far as
 *	btt can tell); only with BTT_SUB_ISSUE, and with a D time
 * @remapped: with BTT_SUB_REMAP, 1 when an A event remapped it here (on this, the lower
 *	device): @from_device and @from_sector are then where it came from
 * @c_sector: in done() only: the completion that covered it (one C can complete several
 *	I/Os), its start, @c_nsec its length and @error its error
 * @id: a number for the I/O from its Q to its done() or lost(), the same in every call
 *	for it and no other I/O's meanwhile (then it may name another): below the most I/Os
 *	the model held at once, for a subscriber's array of what it keeps per I/O
 *
 * The view is valid during the callback only; copy what you keep.
 */
struct btt_io {
	const struct btt_dev *dev;
	const struct btt_proc *proc;
	uint32_t pid;
	uint32_t nsec;
	uint64_t sector;
	uint64_t t[BTT_NTIMES];
	uint64_t action;
	uint64_t d_sector;
	uint32_t d_nsec;
	int remapped;
	uint32_t from_device;
	uint64_t from_sector;
	uint64_t c_sector;
	uint32_t c_nsec;
	uint16_t error;
	uint32_t id;
};

/* the time from one stage to a later one: later minus earlier, or 1 ns if not later (btt's rule) */
static inline uint64_t tdelta(uint64_t from, uint64_t to)
{
	return from < to ? to - from : 1;
}

/* whether the I/O went the Q2M path (merged into another request) */
static inline int btt_io_merged(const struct btt_io *io)
{
	return io->t[BTT_STAGE_M] != NO_TIME;
}

/* The device-level events (btt_dev_event.kind), in the order of the trace. */
enum btt_ev {
	BTT_EV_NEW, /* a device named for the first time (also while it waits for a Q) */
	BTT_EV_FIRST_Q, /* its first Q or A: the model takes its events from now on */
	BTT_EV_QUEUE, /* the Q event (after its I/O's BTT_STAGE_Q) */
	BTT_EV_REMAP, /* an A event on this device: from_device, from_sector */
	BTT_EV_GETRQ,
	BTT_EV_SLEEPRQ,
	BTT_EV_INSERT,
	BTT_EV_MERGE, /* back or front merge */
	BTT_EV_REQUEUE,
	BTT_EV_ISSUE, /* after the BTT_STAGE_D of the I/Os it took (count) */
	BTT_EV_COMPLETE, /* after the done() of the I/Os it took (count) */
	BTT_EV_PLUG, /* plugs and unplugs: on any device already named, also before its */
	BTT_EV_UNPLUG, /* first Q (btt 2.09 counts them then too); count is the depth */
	BTT_EV_UNPLUG_TIMER,
	BTT_EV_MESSAGE, /* a message note: text, len */
	BTT_EV_ISSUE_BEFORE_Q, /* a D or C before the device's first Q, which the model */
	BTT_EV_COMPLETE_BEFORE_Q, /* ignores (a trace recorded without Q events has only those) */
	BTT_EV_NR
};

/**
 * struct btt_dev_event - an event of a device, valid during the callback
 * @ev: the trace event (time, sector, bytes, action, pid, error, payload); for NEW and
 *	FIRST_Q, the event that named the device or started it
 * @proc: the process of the event (NULL for NEW, FIRST_Q, PLUG and UNPLUG*)
 * @count: ISSUE, COMPLETE: the queued I/Os it took; UNPLUG*: the depth it reports
 * @from_device, @from_sector: REMAP: where the remapped I/O comes from
 * @text: MESSAGE: the message, @len bytes up to its first NUL (not NUL-terminated)
 */
struct btt_dev_event {
	enum btt_ev kind;
	const struct btt_dev *dev;
	const struct btt_proc *proc;
	const struct blk_event *ev;
	uint64_t count;
	uint64_t from_sector;
	uint32_t from_device;
	const char *text;
	size_t len;
};

/* why an I/O leaves the model without a completion */
enum btt_lost {
	BTT_LOST_REPLACED, /* a second Q at its start took its place */
	BTT_LOST_END, /* still queued when the trace ended (only with BTT_SUB_LOST_AT_END) */
};

/* what a subscriber asks the model to keep for it (memory per I/O in flight) */
enum btt_sub_flags {
	BTT_SUB_RWBS = 1 << 0, /* btt_io.action (no cost per I/O: kept with its process) */
	BTT_SUB_ISSUE = 1 << 1, /* btt_io.d_sector, d_nsec (16 bytes per I/O) */
	BTT_SUB_REMAP = 1 << 2, /* btt_io.remapped, from_* (16 bytes per I/O) */
	BTT_SUB_LOST_AT_END = 1 << 3, /* lost(BTT_LOST_END) for each I/O left at the end */
};

/**
 * struct btt_io_sub - a subscriber: any callback may be NULL
 * @ctx: passed to every callback
 * @flags: enum btt_sub_flags
 * @stages: the stages @stage is called for, as 1 << BTT_STAGE_x (0: all)
 * @events: the kinds @dev_event is called for, as 1 << BTT_EV_x (0: all)
 * @tick: every event the model reads, with its time, before it is modelled (notes and
 *	events outside -t/-T excepted; events of a device waiting for its Q included)
 * @event: the same events as @tick, the whole event (its payload valid during the call),
 *	after it is modelled (a device it names is in the registry then):
 *	for a model of its own beside this one (bios.h)
 * @stage: the I/O @io enters stage @st at @t. Q: @io was just created (t[Q] is @t, the
 *	other times NO_TIME). G, S, I, M: the I/O whose range holds the event's sector. D:
 *	each I/O the issue takes, in the classic walk's order. A: the I/O on the device an A
 *	event remaps from (found at the A's origin). In @io, t[@st] is still the time of an
 *	earlier entry into @st (a D after a requeue sees the first D), or NO_TIME; the model
 *	records @t after the call. No call for C: see @done.
 * @done: an I/O completed: for each I/O a C takes, in the order btt's classic walk meets
 *	them (the order of the -p per-IO file); t[C] and c_* are set. The I/O is freed after.
 * @lost: an I/O leaves without completing (see enum btt_lost); for REPLACED, before the
 *	BTT_STAGE_Q of the I/O that replaces it
 * @dev_event: see enum btt_ev
 * @note: every notify record (BLK_TC_NOTIFY: process names, TN_TIMESTAMP, messages,
 *	I/O waits), before the model takes it, whatever the -t/-T window; its payload is
 *	valid during the call only
 */
struct btt_io_sub {
	void *ctx;
	unsigned int flags;
	uint32_t stages;
	uint32_t events;
	void (*tick)(void *ctx, uint64_t t);
	void (*event)(void *ctx, const struct blk_event *ev);
	void (*stage)(void *ctx, const struct btt_io *io, enum btt_stage st, uint64_t t);
	void (*done)(void *ctx, const struct btt_io *io);
	void (*lost)(void *ctx, const struct btt_io *io, enum btt_lost why);
	void (*dev_event)(void *ctx, const struct btt_dev_event *e);
	void (*note)(void *ctx, const struct blk_event *ev);
};

/* the model's options (from btt's -t, -T, -r) */
struct iomodel_opts {
	int time_bounded;
	double t_start, t_end; /* seconds: events before are skipped, the first after ends it */
	int no_remaps; /* ignore A events */
};

struct iomodel;

/**
 * iomodel_new() - a model over the devices and processes of @devs
 * @devs is the caller's and must outlive the model; @o is copied.
 * Return: the model, to free with iomodel_free(); exits when out of memory.
 */
struct iomodel *iomodel_new(struct btt_devs *devs, const struct iomodel_opts *o);

/**
 * iomodel_subscribe() - add @sub (copied) before the first event
 * Subscribers are called in the order they subscribed. One with only @done, @lost,
 * @dev_event and @event (no flags) may also come later, from a note callback too: it is
 * called for what follows (the done() of the I/Os queued before included).
 * Return: 0, or -EBUSY after the first event (for the others), -ENOSPC past 16 subscribers.
 */
int iomodel_subscribe(struct iomodel *m, const struct btt_io_sub *sub);

/* the options @m was made with */
const struct iomodel_opts *iomodel_options(const struct iomodel *m);

/**
 * iomodel_follow_events() - from the next event on, have @fn (with @ctx) take every event
 * the model takes, as btt_io_sub.event does: for a subscriber that learns only from a note
 * that it needs them (a trace without such notes costs it nothing). Allowed at any time,
 * from a note callback too.
 * Return: 0, or -ENOSPC past 16 callbacks of events.
 */
int iomodel_follow_events(struct iomodel *m, void (*fn)(void *ctx, const struct blk_event *ev),
			  void *ctx);

/* Model one event (its payload is only read during the call). */
void iomodel_event(struct iomodel *m, const struct blk_event *ev);

/* the source of events iomodel_run() reads: 1 and *ev, 0 at the end, or -errno */
typedef int (*iomodel_next_fn)(void *src, struct blk_event *ev);

/**
 * iomodel_run() - model *@ev and the events @next gives after it, until the end of the
 * input or the end of the -T window
 * @progress: called after each event when not NULL, with @arg
 * Once many I/Os are queued, events are taken in small batches whose insertions are
 * prefetched together; @ev is used as the reader's buffer.
 * Return: the last status of @next (0 at a clean end or at -T, -errno on an error).
 */
int iomodel_run(struct iomodel *m, iomodel_next_fn next, void *src, struct blk_event *ev,
		void (*progress)(void *arg), void *arg);

/* 1 once an event past -T was seen (the model takes no more) */
int iomodel_done(const struct iomodel *m);
/* the records taken so far (notes not counted), and the time of the last event taken */
uint64_t iomodel_records(const struct iomodel *m);
uint64_t iomodel_last_time(const struct iomodel *m);

/**
 * struct iomodel_counts - what the model paired, on the devices shown (-D)
 * @queued: Q events that made an I/O; @completed: I/Os a C took (the classic latencies')
 * @replaced: I/Os a later Q at the same start took the place of (never completed)
 * @splits: X (split) events on any device: their bios are never paired whole
 * The I/Os neither completed nor replaced were still queued when the trace ended.
 */
struct iomodel_counts {
	uint64_t queued, completed, replaced, splits;
};

/* the counts so far */
const struct iomodel_counts *iomodel_counts(const struct iomodel *m);

/**
 * iomodel_finish() - the end of the trace: lost(BTT_LOST_END) to the subscribers that
 * asked for it, then every queued I/O is freed (their memory given back).
 */
void iomodel_finish(struct iomodel *m);

/* Free @m (NULL allowed). */
void iomodel_free(struct iomodel *m);

#endif /* BTT_IOMODEL_H */
