/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every bio, as the trace shows it: a model beside the classic one (iomodel.h) that
 * follows each queued bio by the sectors it covers, whatever happens to it on the way
 * (split, merged, remapped, requeued), and makes bios of the I/Os the trace shows without
 * a Q. It reproduces nothing of btt 2.09; the classic sections do not read it.
 *
 * The rule is sector coverage, per device. A Q of n sectors makes a bio with n sectors
 * still to issue and n still to complete. A D takes, from the bios in flight that overlap
 * it, the sectors they still have to issue: each bio that takes some went out in one more
 * device request (its pieces). A C takes the sectors still to complete the same way; a bio
 * with none left is done. Where two bios in flight cover the same sector, for a C one a D
 * took some of takes it first; then one lying inside the event's range (a request holds
 * whole bios and pieces of split ones); then the older (a re-read while the first is in
 * flight: first in, first out). The parts of a D or C that no bio
 * takes are I/Os whose Q is not in the trace: each becomes a bio of its own, marked
 * BTT_BIO_NO_Q (and BTT_BIO_NO_D when made from a C, done at once).
 *
 * Events with no bytes are ignored, except X (split) and A (remap); so are notes and
 * passthrough (PC) events. A G gives its time to the newest bio holding its sector, an I to
 * the bios with sectors still to issue in its range, each the first time. X and M/F mark
 * the newest bio holding their sector (they follow its Q at once); an X that names its own
 * sector as where the rest starts (dm's: the bio cut to its rest, the front completed with
 * it) leaves the bio only the rest to issue and complete. A D that several bios take marks
 * them all merged. An A on a device remaps the next Q there at its sector; an A from the sector an
 * earlier A on the device remapped to (dm onto a partition, the partition onto its disk)
 * keeps the first's origin. An R gives the sectors it covers back to issue;
 * the D that issues them again adds no piece.
 *
 * Memory: a bio is kept from its first event to its done(), in about 160 bytes. One that
 * is still in flight BIOS_STALE_NS after its first event (its C lost, or the trace started
 * or ended around it) is delivered as BTT_BIO_UNFINISHED at the next event, and freed: a
 * later Q at the same sectors is not confused with it. So is the oldest when an event
 * leaves more than BIOS_MAX_IN_FLIGHT kept (a trace of Q events only at a high rate): the
 * bios kept are at most those of the last BIOS_STALE_NS of the trace, and at most
 * BIOS_MAX_IN_FLIGHT between events. bios_set_limits() changes both.
 */
#ifndef BTT_BIOS_H
#define BTT_BIOS_H

#include <stdint.h>

#include "blk/event.h"

/* how long a bio may stay in flight before it is given up (the kernel's default request
 * timeout is 30 s) */
#define BIOS_STALE_NS (60ull * 1000000000ull)
/* the most bios kept (writeback keeps up to some 100,000 in flight) */
#define BIOS_MAX_IN_FLIGHT (1u << 20)

/* btt_bio.flags */
enum {
	BTT_BIO_SPLIT = 1 << 0, /* an X split it */
	BTT_BIO_MERGED = 1 << 1, /* it shares a request with others (M, F, or a D taking several) */
	BTT_BIO_REMAPPED = 1 << 2, /* an A remapped it here: from_device, from_sector */
	BTT_BIO_NO_Q = 1 << 3, /* made from a D or C: its Q is not in the trace */
	BTT_BIO_NO_D = 1 << 4, /* no D took any of it */
	BTT_BIO_UNFINISHED = 1 << 5, /* delivered before all its sectors completed */
};

/**
 * struct btt_bio - one bio, as the trace shows it; valid during done() only
 * @device: blk_event.device of its Q (or of the event that made it)
 * @pid: the pid of its Q (0 without a Q)
 * @sector: its first sector; @nsec: its length in sectors
 * @action: its Q's action (for RWBS), else the action of the event that made it
 * @t_q: its Q's time; @t_first_g: the first G at a sector of it (a piece got a request);
 *	@t_first_i: the first I over sectors of it still to issue; @t_first_d: the first D
 *	that took some of it; @t_last_c: the last C that took some of it (NO_TIME, iomodel.h's,
 *	when absent)
 * @pieces: the device requests (D) it went out in, a requeued one's D again not counted
 * @completions: the C events counted for it: each C with bytes is counted for the first
 *	bio it completes a part of, so that over every bio they add up to the device's
 *	completions (its IOPS), a request of several merged bios counted once
 * @requeues: the R events that took some of it
 * @flags: BTT_BIO_*
 * @from_device, @from_sector: with BTT_BIO_REMAPPED, where it came from
 * @error: the first nonzero error of the C events that took it
 * @id: a number for the bio from its first event to its done(), the same in every call
 *	for it (bios_hooks) and no other bio's meanwhile: below the most bios kept at once
 * @up_id: with BTT_BIO_REMAPPED, the @id of the bio in flight on @from_device holding
 *	@from_sector when its Q came (the bio it was remapped from), 0 when none was
 * @t_remap: with BTT_BIO_REMAPPED, the time of the A that remapped it (else NO_TIME)
 * @gone: with BTT_BIO_UNFINISHED, why it was given up (enum btt_bio_gone), else 0
 */
struct btt_bio {
	uint32_t device;
	uint32_t pid;
	uint64_t sector;
	uint32_t nsec;
	uint64_t action;
	uint64_t t_q, t_first_g, t_first_i, t_first_d, t_last_c;
	uint32_t pieces;
	uint32_t completions;
	uint32_t requeues;
	uint32_t flags;
	uint32_t from_device;
	uint64_t from_sector;
	uint16_t error;
	uint32_t id, up_id;
	uint64_t t_remap;
	uint8_t gone;
};

/* btt_bio.gone: why a bio was delivered BTT_BIO_UNFINISHED */
enum btt_bio_gone {
	BTT_BIO_AT_END = 1, /* still in flight at bios_finish() (the trace ended) */
	BTT_BIO_STALE, /* in flight for longer than the limit (BIOS_STALE_NS) */
	BTT_BIO_EVICTED, /* the oldest when more than the most kept (BIOS_MAX_IN_FLIGHT) */
};

/**
 * struct bios_counts - the totals of the events and bios seen
 * @bios: bios made (from a Q, or from a D or C without one)
 * @requests: D events with bytes (the device's requests, for its IOPS)
 * @completions: C events with bytes
 * @splits, @merges, @requeues, @remaps: X, M and F, R with bytes, A events
 * @no_q: bios made without a Q; @unfinished: bios delivered BTT_BIO_UNFINISHED
 * @in_flight: bios kept now; @max_in_flight: the most kept at once
 */
struct bios_counts {
	uint64_t bios, requests, completions;
	uint64_t splits, merges, requeues, remaps;
	uint64_t no_q, unfinished;
	uint64_t in_flight, max_in_flight;
};

struct bios;

/* the most callers of bios_subscribe() */
#define BIOS_MAX_SUBS 8

/* called once for each bio, when it is done or given up */
typedef void (*bios_done_fn)(void *ctx, const struct btt_bio *b);

/* bios_hooks.piece's kinds */
enum bios_piece_kind {
	BIOS_PIECE_ISSUE, /* a D took some of it: one more piece (b->pieces counts it) */
	BIOS_PIECE_REISSUE, /* a D took again what an R gave back (no new piece) */
	BIOS_PIECE_COMPLETE, /* a C took some of it */
};

/**
 * struct bios_hooks - what a subscriber may see of a bio before its done(): any may be NULL
 * @ctx: passed to each
 * @made: bio @b was made (by its Q, or by the D or C that made a bio without one): its
 *	@id is new; its times, flags and pieces are those of its first event
 * @piece: the D or C (@kind) at @t took [@sector, +@nsec) of bio @b (in flight: @b->id
 *	names it), after the bio counted it; a bio made by that event had its @made first
 *
 * For the outputs that draw a bio's pieces (the device requests of a split bio) or need
 * to know a bio from its first event (to find the bio a remapped one came from by @up_id).
 */
struct bios_hooks {
	void *ctx;
	void (*made)(void *ctx, const struct btt_bio *b);
	void (*piece)(void *ctx, const struct btt_bio *b, enum bios_piece_kind kind, uint64_t t,
		      uint64_t sector, uint32_t nsec);
};

/**
 * bios_new() - a model of every bio, empty
 * @done: when not NULL, subscribed at once (bios_subscribe()), with @ctx
 * Return: the model, or NULL when out of memory.
 */
struct bios *bios_new(bios_done_fn done, void *ctx);

/**
 * bios_subscribe() - have @done called (with @ctx) for each bio, after those subscribed
 * before it
 * Return: 0, or -ENOSPC past BIOS_MAX_SUBS.
 */
int bios_subscribe(struct bios *s, bios_done_fn done, void *ctx);

/**
 * bios_hook() - have @h's callbacks (copied) called, after those hooked before it
 * Return: 0, or -ENOSPC past BIOS_MAX_SUBS.
 */
int bios_hook(struct bios *s, const struct bios_hooks *h);

/**
 * bios_set_limits() - give up a bio @stale_ns after its first event, and the oldest when
 * @max_in_flight are kept (0: the default, BIOS_STALE_NS or BIOS_MAX_IN_FLIGHT)
 */
void bios_set_limits(struct bios *s, uint64_t stale_ns, uint32_t max_in_flight);

/**
 * bios_event() - take one event; call for every event of the trace, in time order
 * Return: 0, or -ENOMEM when the model could not grow (the event is then taken only in
 * part; the model stays consistent and may go on).
 */
int bios_event(struct bios *s, const struct blk_event *ev);

/**
 * bios_finish() - deliver the bios still in flight, BTT_BIO_UNFINISHED, oldest first
 */
void bios_finish(struct bios *s);

/**
 * bios_counts() - the totals so far
 * Return: the counts, valid until the next call on @s.
 */
const struct bios_counts *bios_counts(const struct bios *s);

/**
 * bios_free() - free the model (without delivering what is in flight)
 */
void bios_free(struct bios *s);

#endif /* BTT_BIOS_H */
