// SPDX-License-Identifier: GPL-2.0
/*
 * btt --perfetto's bios (model/bios.h, issue 36): each bio a slice on its device's "I/O"
 * lanes from its Q (or, without one, its first D or C) to its last C, its stages inside
 * (Q2G, G2I, I2D, D2C: the first G, I and D at its sectors), or on "I/O not completed" when
 * the model gave it up; a split bio's pieces (the device requests it went out in, from
 * each one's D to its last C) on the "I/O pieces" lanes. A bio gets its slot when it is
 * made (its "queued" record, which holds the watermark: perfetto-out.c) and is drawn when
 * it is done.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/iomodel.h"
#include "output.h"
#include "perfetto/pfpipe.h"
#include "perfetto/pfstate.h"

/* ---- slots ---- */

static void slot_free(struct pfout *p, uint32_t i)
{
	p->slots[i].gen++;
	p->slots[i].next = p->free_slot;
	p->free_slot = i;
}

static uint32_t slot_new(struct pfout *p)
{
	uint32_t i, got[256];
	size_t n;

	if (p->free_slot == NONE) {
		/* the slots the drawing is done with */
		n = pfpipe_take_freed(p->d, got, 256);
		for (size_t k = 0; k < n; k++)
			slot_free(p, got[k]);
	}
	i = p->free_slot;

	if (i != NONE) {
		p->free_slot = p->slots[i].next;
	} else {
		p->slots = array_grow(p->slots, &p->aslots, p->nslots, sizeof(*p->slots));
		i = (uint32_t)p->nslots++;
		p->slots[i].gen = 0;
		p->slots[i].pc = NULL;
		p->slots[i].apc = 0;
		p->slots[i].bflows = NULL; /* (handed to the drawing with the run: NULL again) */
		p->slots[i].nbflows = 0;
	}
	return i;
}

static void flight_add(struct pfout *p, uint32_t i)
{
	struct slot *s = &p->slots[i];

	s->prev = p->tail;
	s->next = NONE;
	if (p->tail != NONE)
		p->slots[p->tail].next = i;
	else
		p->head = i;
	p->tail = i;
}

static void flight_del(struct pfout *p, uint32_t i)
{
	struct slot *s = &p->slots[i];

	if (s->prev != NONE)
		p->slots[s->prev].next = s->next;
	else
		p->head = s->next;
	if (s->next != NONE)
		p->slots[s->next].prev = s->prev;
	else
		p->tail = s->prev;
}

/* the device of @device once the I/O model named it (BTT_EV_NEW: described), or NULL */
static const struct btt_dev *dev_of(struct pfout *p, uint32_t device)
{
	const struct btt_dev *d = p->last_dev;

	if (d && d->device == device)
		return d;
	d = devs_find(p->v->devs, device);
	if (!d || d->idx >= p->ndev)
		return NULL;
	p->last_dev = d;
	return d;
}

/* the process of a bio with a Q once the I/O model named it (it took its Q), or NULL */
static const struct btt_proc *proc_of(struct pfout *p, const struct btt_bio *b)
{
	if (b->t_q == NO_TIME)
		return NULL;
	if (!p->last_proc || p->last_pid != b->pid) {
		const struct btt_proc *pr = procs_find(p->v->devs, b->pid);

		if (!pr)
			return NULL;
		p->last_proc = pr;
		p->last_pid = b->pid;
	}
	return p->last_proc;
}

/* "split, merged"...: the bio's "bio" argument, kinds[] of kind_of() */
static unsigned int kind_of(const struct btt_bio *b)
{
	return (b->flags & BTT_BIO_SPLIT ? 1u : 0) | (b->flags & BTT_BIO_MERGED ? 2u : 0) |
	       (b->flags & BTT_BIO_NO_Q ? 4u : 0) | (b->requeues ? 8u : 0);
}

void pfout_kinds_init(struct pfout *p)
{
	static const char *const word[] = {"split", "merged", "no Q", "requeued"};

	for (unsigned int k = 1; k < 16; k++) {
		char *o = p->kinds[k];

		o[0] = '\0';
		for (unsigned int w = 0; w < 4; w++)
			if (k & 1u << w)
				snprintf(o + strlen(o), sizeof(p->kinds[k]) - strlen(o), "%s%s",
					 o[0] ? ", " : "", word[w]);
	}
}

/* its first event: its Q, or the D or C that made it */
static uint64_t first_time(const struct btt_bio *b)
{
	if (b->t_q != NO_TIME)
		return b->t_q;
	return b->t_first_d != NO_TIME ? b->t_first_d : b->t_last_c;
}

/* bio @b was made: a slot, its process's "queued" instant (with a Q) */
static void made(struct pfout *p, const struct btt_bio *b)
{
	const struct btt_dev *dev = dev_of(p, b->device);
	int no_q = b->t_q == NO_TIME;
	uint32_t i, u;
	struct slot *s;
	struct pf_io *io;
	struct pf_rec r;

	if (!dev) {
		p->undrawn++;
		return;
	}
	i = slot_new(p);
	s = &p->slots[i];
	/* field by field: a compound literal is zeroed with a rep stos first (a third of
	 * made()); flow_out[] past nflow_out, lane and lane_idx are not read */
	io = &s->io;
	io->sector = b->sector;
	io->action = b->action & ~(uint64_t)0xffff;
	io->bio_sector = 0;
	io->from_sector = b->from_sector;
	io->flow_in = no_q ? 0 : ++p->next_flow;
	io->flow_from = 0;
	io->proc = proc_of(p, b);
	io->lost = io->kind = NULL;
	io->pid = b->pid;
	io->nsec = b->nsec;
	io->dev = dev->idx;
	io->from_device = b->from_device;
	io->pieces = 0;
	io->error = 0;
	io->nflow_out = io->set = io->piece = io->nostage = 0;
	io->has_cgroup = io->has_origin = io->has_file = 0;
	io->remapped = !!(b->flags & BTT_BIO_REMAPPED);
	io->no_q = (uint8_t)no_q;
	s->t_q = first_time(b);
	s->t_a = NO_TIME;
	s->npc = 0;
	if (s->io.remapped) {
		/* the flow from the bio it comes from (in flight: drawn later) */
		u = b->up_id ? pfout_slot_of(p, b->up_id) : NONE;
		if (u != NONE && p->slots[u].io.nflow_out < PF_MAX_FLOWS_OUT) {
			struct slot *up = &p->slots[u];

			s->io.flow_from = ++p->next_flow;
			up->io.flow_out[up->io.nflow_out++] = s->io.flow_from;
			if (up->t_a == NO_TIME)
				up->t_a = b->t_remap;
			s->up = u;
			s->up_gen = up->gen;
		} else {
			p->no_upper++;
		}
	}
	p->byid = array_grow_zero(p->byid, &p->abyid, b->id, sizeof(*p->byid));
	p->byid[b->id] = i + 1;
	if (p->bursts)
		pfburst_made(p, b->id, i);
	flight_add(p, i);
	r = pfout_rec(p, s->t_q, 0, PFR_QUEUED, i, 0, 0);
	pfpipe_queued(p->d, &r, &s->io, p->now);
}

static void piece_add(struct pfout *p, struct slot *s, uint64_t t, uint64_t sector, uint32_t nsec)
{
	if (s->npc >= MAX_PIECES) {
		p->pieces_over++;
		return;
	}
	s->pc = array_grow(s->pc, &s->apc, s->npc, sizeof(*s->pc));
	s->pc[s->npc++] = (struct piece){t, NO_TIME, sector, nsec};
}

/* a D or C took [@sector, +@nsec) of bio @b: the pieces of a split one are kept */
static void piece(struct pfout *p, const struct btt_bio *b, enum bios_piece_kind k, uint64_t t,
		  uint64_t sector, uint32_t nsec)
{
	uint32_t i;
	struct slot *s;

	if (k == BIOS_PIECE_ISSUE && b->pieces < 2 && !(b->flags & BTT_BIO_SPLIT))
		return; /* most bios: one piece, its D and C are the bio's */
	if (k == BIOS_PIECE_REISSUE || (i = pfout_slot_of(p, b->id)) == NONE)
		return;
	s = &p->slots[i];
	if (k == BIOS_PIECE_COMPLETE) {
		for (uint32_t j = 0; j < s->npc; j++)
			if (s->pc[j].sector < sector + nsec &&
			    sector < s->pc[j].sector + s->pc[j].nsec)
				s->pc[j].t_c = t;
		return;
	}
	if (!s->npc && b->pieces >= 2) {
		/* split without an X: its first piece is the rest of it (a guess where this
		 * one lies inside) */
		uint64_t lo = b->sector, hi = b->sector + b->nsec;

		if (sector == lo && sector + nsec < hi)
			lo = sector + nsec;
		else if (sector > lo && sector + nsec == hi)
			hi = sector;
		piece_add(p, s, b->t_first_d, lo, (uint32_t)(hi - lo));
	}
	piece_add(p, s, t, sector, nsec);
}

/* a run of three records: the slice's begin at @t0, its one stage @name, its end at @t1 */
static struct pf_run *short_run(struct pfout *p, uint32_t i, uint64_t t0, const char *name,
				uint64_t t1)
{
	struct pf_run *run = pfpipe_run(p->d, i);

	run->io = p->slots[i].io;
	run->rseq = p->seq;
	run->rts[0] = run->rts[1] = t0;
	run->rname[1] = name;
	run->rts[2] = t1 > t0 ? t1 : t0 + 1;
	run->rn = 3;
	p->seq += 3;
	return run;
}

/* the pieces of the bio of slot @bi (ended at @stop): each a slice on the "I/O pieces" lanes */
static void draw_pieces(struct pfout *p, uint32_t bi, uint64_t stop)
{
	uint32_t n = p->slots[bi].npc;

	p->split++;
	p->pieces += n;
	for (uint32_t j = 0; j < n; j++) {
		struct piece pc = p->slots[bi].pc[j];
		uint32_t i = slot_new(p); /* p->slots may move */
		struct slot *s = &p->slots[i], *bs = &p->slots[bi];
		struct pf_rec r;

		s->io = (struct pf_io){
			.sector = pc.sector,
			.action = bs->io.action,
			.proc = bs->io.proc,
			.pid = bs->io.pid,
			.nsec = pc.nsec,
			.dev = bs->io.dev,
			.bio_sector = bs->io.sector,
			.set = PF_SET_PIECE,
			.piece = 1,
		};
		s->npc = 0;
		r = pfout_rec(p, pc.t_d, 0, PFR_QUEUED, i, 0, 0);
		pfpipe_queued(p->d, &r, &s->io, p->now);
		short_run(p, i, pc.t_d, p->names[L_D][pc.t_c == NO_TIME ? L_NR : L_C],
			  pc.t_c == NO_TIME ? stop : pc.t_c);
	}
}

/* the reasons of enum btt_bio_gone, for the "lost" argument */
static const char *const gone_why[] = {
	"not completed",
	"still in flight when the trace ended",
	"given up: in flight for more than 60 s (BIOS_STALE_NS)",
	"given up: the model's memory limit",
};

/* the thread of bio @b (slot @i) completed it: the flow of its next wait starts here */
static void last_completed(struct pfout *p, const struct btt_bio *b, uint32_t i)
{
	/* most bios in a row are one thread's: its value is looked up once */
	uint64_t v = (uint64_t)i << 32 | p->slots[i].gen, *lc;

	if (p->lastc_v && p->lastc_pid == b->pid) {
		*p->lastc_v = v;
	} else if ((lc = u64map_get(&p->lastc, (uint64_t)b->pid + 1))) {
		*lc = v;
		p->lastc_v = lc;
		p->lastc_pid = b->pid;
	} else {
		if (u64map_put(&p->lastc, (uint64_t)b->pid + 1, v) < 0)
			die("out of memory");
		p->lastc_v = NULL;
	}
}

/*
 * What the trace's notes say of bio @b, for its slice's arguments: the sections that read them
 * keep it by the bio's id until their done(), which comes after ours (they subscribe at their
 * first note, we at the start)
 */
static void notes_of(struct pfout *p, const struct btt_bio *b, struct pf_io *io)
{
	struct bio_notes n;

	bio_notes_of(&p->bio_notes, p->v, b, &n);
	io->has_cgroup = (uint8_t)n.has_cgroup;
	io->cgroup = n.cgroup;
	io->cgroup_id = n.cgroup_id;
	io->has_origin = (uint8_t)n.has_origin;
	io->origin = n.origin;
	io->origin_pid = n.origin_pid;
	io->has_file = (uint8_t)n.has_file;
	io->file = n.path;
	io->file_ino = n.ino;
	io->file_offset = n.offset;
}

/*
 * bio @b is done (or given up): its slice, stage by stage, and its pieces; @now: in its
 * done() (not deferred: what the notes say of it is still kept)
 */
static void finished(struct pfout *p, const struct btt_bio *b, int now)
{
	uint64_t t[L_NR], prev, stop, lim;
	struct pf_run *run;
	uint32_t i = pfout_slot_of(p, b->id);
	struct slot *s;
	int lost = !!(b->flags & BTT_BIO_UNFINISHED), no_q = b->t_q == NO_TIME;
	int last, n, first;

	if (i == NONE)
		return;
	s = &p->slots[i];
	p->byid[b->id] = 0;
	flight_del(p, i);
	if (lost)
		p->gone[b->gone < 4 ? b->gone : 0]++;
	if (no_q)
		p->no_q++;
	/* its run (pfsort.h): the slice's begin, each stage from its start, the end */
	if (s->nbflows) {
		pfpipe_bflows(p->d, i, s->bflows, s->nbflows); /* the drawing's now */
		s->bflows = NULL;
		s->nbflows = 0;
	}
	run = pfpipe_run(p->d, i);
	run->io = s->io;
	run->io.error = lost ? 0 : b->error;
	run->io.lost = lost ? gone_why[b->gone < 4 ? b->gone : 0] : NULL;
	run->io.set = lost ? PF_SET_LOST : PF_SET_IO;
	run->io.kind = kind_of(b) ? p->kinds[kind_of(b)] : NULL;
	run->io.pieces = b->pieces;
	if (now)
		notes_of(p, b, &run->io);
	run->up = s->up;
	run->up_gen = s->up_gen;
	/* at least 1 ns; the stages in their order, each inside the one before */
	prev = s->t_q;
	/* given up: drawn to the time it was (the newest event), else to its last C */
	stop = b->t_last_c;
	if (lost && (stop == NO_TIME || stop < p->now))
		stop = p->now;
	stop = stop > prev ? stop : prev + 1;
	t[L_A] = s->t_a;
	t[L_G] = b->t_first_g;
	t[L_I] = b->t_first_i;
	t[L_M] = NO_TIME;
	t[L_D] = b->t_first_d;
	/* D2C above all: a G or I timed after the D is left out, not the D */
	lim = t[L_D] != NO_TIME && t[L_D] >= prev && t[L_D] <= stop ? t[L_D] : stop;
	/* without a Q: from its first event, its D or its C */
	first = last = !no_q ? L_Q : b->t_first_d != NO_TIME ? L_D : L_C;
	n = 0;
	run->rseq = p->seq;
	run->rts[n++] = prev;
	for (int l = first + 1; l <= L_D; l++) {
		if (t[l] == NO_TIME)
			continue;
		if (t[l] < prev || t[l] > (l < L_D ? lim : stop)) {
			if (l < L_D && t[l] > lim && t[l] <= stop)
				p->stage_late++;
			continue;
		}
		run->rts[n] = prev;
		run->rname[n++] = p->names[last][l];
		prev = t[l];
		last = l;
	}
	if (last == L_C) {
		run->io.nostage = 1; /* made by its C: no stage */
	} else {
		run->rts[n] = prev;
		run->rname[n++] = p->names[last][lost ? L_NR : L_C];
	}
	run->rts[n++] = stop;
	run->rn = (uint8_t)n;
	p->seq += n;
	if (!lost && !no_q)
		last_completed(p, b, i);
	if (p->slots[i].npc > 1 || (p->slots[i].npc && b->pieces > 1))
		draw_pieces(p, i, stop);
}

/* the hooks of the bios model come during an event, before the I/O model takes it: a bio
 * whose device (or process) the I/O model has not named yet waits, with what follows it,
 * for the next event (on_tick()) */
static void defer(struct pfout *p, int what, const struct btt_bio *b, int kind, uint64_t t,
		  uint64_t sector, uint32_t nsec)
{
	p->pend = array_grow(p->pend, &p->apend, p->npend, sizeof(*p->pend));
	p->pend[p->npend++] = (struct pend){*b, t, sector, nsec, (uint8_t)what, (uint8_t)kind};
}

void pfout_flush_pending(struct pfout *p)
{
	for (size_t k = 0; k < p->npend; k++) {
		const struct pend *e = &p->pend[k];

		if (e->what == PEND_MADE)
			made(p, &e->b);
		else if (e->what == PEND_PIECE)
			piece(p, &e->b, e->kind, e->t, e->sector, e->nsec);
		else
			finished(p, &e->b, 0);
	}
	p->npend = 0;
	if (p->bursts)
		pfburst_unstash(p);
}

void pfout_on_made(void *ctx, const struct btt_bio *b)
{
	struct pfout *p = ctx;

	if (p->npend || !dev_of(p, b->device) || (b->t_q != NO_TIME && !proc_of(p, b)))
		defer(p, PEND_MADE, b, 0, 0, 0, 0);
	else
		made(p, b);
}

void pfout_on_piece(void *ctx, const struct btt_bio *b, enum bios_piece_kind k, uint64_t t,
		    uint64_t sector, uint32_t nsec)
{
	struct pfout *p = ctx;

	if (p->npend)
		defer(p, PEND_PIECE, b, k, t, sector, nsec);
	else
		piece(p, b, k, t, sector, nsec);
}

void pfout_on_bio(void *ctx, const struct btt_bio *b)
{
	struct pfout *p = ctx;

	if (p->npend)
		defer(p, PEND_DONE, b, 0, 0, 0, 0);
	else
		finished(p, b, 1);
}
