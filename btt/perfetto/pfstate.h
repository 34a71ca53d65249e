/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of btt --perfetto, shared by perfetto-out.c (the output, the ordering, the
 * counters and the waits), pfbios.c (the bios of model/bios.h, drawn as slices) and
 * pfburst.c (the dirtying bursts of a trace with origin notes). Private to btt/perfetto/.
 */
#ifndef BTT_PFSTATE_H
#define BTT_PFSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "model/bios.h"
#include "model/u64map.h"
#include "origin/origins.h"
#include "output.h"
#include "perfetto/pfdraw.h"
#include "perfetto/pforder.h"
#include "perfetto/pfpipe.h"
#include "perfetto/pfsort.h"

#define NONE UINT32_MAX
#define MAX_NOTES 16
#define MAX_PIECES 64 /* the pieces of a split bio drawn (the others counted) */

/* the stages, in the order a bio meets them (their letters: perfetto-out.c) */
enum pf_letter { L_Q, L_A, L_G, L_I, L_M, L_D, L_C, L_NR };

/* a piece of a split bio: a device request it went out in (t_c: its last C, or NO_TIME) */
struct piece {
	uint64_t t_d, t_c, sector;
	uint32_t nsec;
};

/* a bio from its first event until its slice is drawn (the drawing frees it: pfsort.h) */
struct slot {
	struct pf_io io;
	uint64_t t_q, t_a; /* t_q: its Q, or its first event without one */
	uint32_t gen;
	uint32_t prev, next; /* the list of bios in flight, by Q; next: the free list */
	uint32_t up, up_gen; /* io.flow_from: the slot of the bio it was remapped from */
	struct piece *pc; /* its pieces, once split (the array stays with the slot) */
	size_t apc;
	uint32_t npc;
	uint32_t nbflows; /* the flows into it from dirtying bursts (pfburst.c), bflows: */
	uint64_t *bflows; /* malloc()ed (PF_MAX_BURST_FLOWS), the drawing's with its run */
};

/* a hook of the bios model whose bio cannot be drawn yet (see on_made()) */
enum { PEND_MADE, PEND_PIECE, PEND_DONE };
struct pend {
	struct btt_bio b;
	uint64_t t, sector;
	uint32_t nsec;
	uint8_t what, kind;
};

struct dstate {
	int64_t driver;
	uint64_t win, bytes[2], ios[2]; /* the current throughput window */
	uint64_t c_before_q; /* completions before the device's first Q */
	int had_q;
};

struct otrack;
struct pfbursts;

struct pfout {
	const struct btt_view *v;
	char *path;
	struct blk_output *out;
	struct pfpipe *d; /* the drawing (on a second thread) */
	int started;
	uint64_t first_ts;
	struct slot *slots;
	size_t nslots, aslots;
	uint32_t free_slot, head, tail;
	uint32_t *byid; /* the bios model's btt_bio.id -> slot + 1 (0: not drawn) */
	size_t abyid;
	struct pend *pend; /* the hooks waiting for their device (see on_made()) */
	size_t npend, apend;
	const struct btt_dev *last_dev; /* of the last bio made */
	const struct btt_proc *last_proc; /* the process of last_pid (NULL: none yet) */
	uint32_t last_pid;
	struct u64map lastc; /* tid + 1 -> slot << 32 | gen of its last I/O completed */
	uint64_t *lastc_v; /* the value of lastc_pid in lastc (NULL: none; a put moves values) */
	uint32_t lastc_pid;
	struct u64map wend; /* tid + 1 -> the end of its last wait drawn */
	struct u64map tgids; /* tid + 1 -> its tgid, from its wait notes */
	struct pfbursts *bursts; /* the dirtying bursts (pfburst.c), from the first DIRTY note */
	uint64_t burst_check; /* a burst may be drawn once the newest event reaches it (the
			       * events' clock; UINT64_MAX: never) */
	uint64_t seq, now, next_flow;
	uint64_t mark; /* the watermark last said to the drawing */
	struct dstate *dev;
	size_t ndev, adev;
	char names[L_NR][L_NR + 1][8]; /* "Q2G"..., [x][L_NR]: "after D" */
	char kinds[16][32]; /* the "bio" arguments, by kind_of() */
	struct bio_notes_src bio_notes; /* the outputs reading the trace's notes (origin/origins.h) */
	uint64_t no_upper, undrawn, no_q, gone[4]; /* gone: by enum btt_bio_gone */
	uint64_t split, pieces, pieces_over; /* split bios drawn, their pieces, those left out */
	uint64_t stage_late; /* stages left out: after the bio's D */
	uint64_t waits, wait_bad, wait_overlap;
	struct pfsort_stats st; /* the drawing's, at the end */
	int err, finished, ended;
	char msg[600], hint[200];
	char *notes[MAX_NOTES];
	unsigned int nnotes;
};

/* record @kind at @ts (@counter: a counter value, first at its time), with @slot, @x, @v */
static inline struct pf_rec pfout_rec(struct pfout *p, uint64_t ts, int counter, uint32_t kind,
				      uint32_t slot, unsigned int x, uint64_t v)
{
	return (struct pf_rec){.ts = ts,
			       .order = (counter ? 0 : 1ull << 63) | p->seq++,
			       .v = v,
			       .x = (uint16_t)x,
			       .kind = (uint16_t)kind,
			       .slot = slot};
}

/* the trace's start (its first packet), once: at the first event, or when drawing needs it */
static inline void pfout_start(struct pfout *p)
{
	if (!p->started && !p->err) {
		pfpipe_begin(p->d, p->first_ts, p->v->clock);
		p->started = 1;
	}
}

/* ---- pfbios.c ---- */

/* the "bio" arguments (pfout.kinds), at the start */
void pfout_kinds_init(struct pfout *p);
/* the hooks that waited (see pfout_on_made()): made, pieces, done, in their order */
void pfout_flush_pending(struct pfout *p);
/* the bios model's hooks (bios_hook()) and done() (bios_subscribe()), @ctx the pfout */
void pfout_on_made(void *ctx, const struct btt_bio *b);
void pfout_on_piece(void *ctx, const struct btt_bio *b, enum bios_piece_kind k, uint64_t t,
		    uint64_t sector, uint32_t nsec);
void pfout_on_bio(void *ctx, const struct btt_bio *b);

/* the slot of bio @id, or NONE */
static inline uint32_t pfout_slot_of(const struct pfout *p, uint32_t id)
{
	return id < p->abyid && p->byid[id] ? p->byid[id] - 1 : NONE;
}

/* ---- pfburst.c ---- */

#define PF_BURST_STALE_NS 60000000000ull /* a burst is given up this long after it began */
#define PF_BURST_MAX_OPEN 65536u /* the oldest given up once this many more began */
#define PF_BURST_MAX_FLOWS 4096u /* flows from one burst */

/* what the bursts could not draw, for the remarks */
struct pfburst_stats {
	uint64_t stale, limit; /* bursts given up (BURST_STALE_NS, BURST_MAX_OPEN) */
	uint64_t late; /* writes of pages of bursts given up: no flow */
	uint64_t io_full, burst_full, no_slice; /* flows not drawn: past PF_MAX_BURST_FLOWS,
						 * PF_BURST_MAX_FLOWS, to bios not drawn */
	uint64_t zero; /* bursts of no page of their own, not drawn */
	uint64_t before; /* bursts before time 0 (a merged file), drawn at 0 */
	uint64_t early; /* given up at the limit before the first event: not drawn */
};

/* A DIRTY note @ev: from the first, the bursts follow the origin tracker's dirty pages. */
void pfburst_note(struct pfout *p, const struct blk_event *ev);
/* The newest event is at @now (events' clock): the bursts due are drawn (p->burst_check). */
void pfburst_check(struct pfout *p, uint64_t now);
/* Bio @id got slot @i (made late): the flows from bursts its Q took are its. */
void pfburst_made(struct pfout *p, uint32_t id, uint32_t i);
/* The late bios were made: the flows of those that were not are taken back. */
void pfburst_unstash(struct pfout *p);
/* The trace ended: every burst left is drawn. */
void pfburst_end(struct pfout *p);
/* What was not drawn, into *@st. */
void pfburst_stats(const struct pfout *p, struct pfburst_stats *st);
void pfburst_free(struct pfout *p);

#endif /* BTT_PFSTATE_H */
