// SPDX-License-Identifier: GPL-2.0
/*
 * The origin and file of every bio (see track.h): the notes into lib/origin.c, each bio's
 * answer at its Q kept by the bio's id until it is done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/origin.h"
#include "blk/reader.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/devs.h"
#include "model/follow.h"
#include "model/iomodel.h"
#include "origin/track.h"
#include "output.h"

#define MAX_LISTENERS 4

struct listener {
	otrack_fn fn;
	void *ctx;
};

struct slot {
	struct otrack_io io;
	int kept; /* the bio's Q was looked up */
};

/* a task's name as its process note gives it (btt's process names stop at a '/') */
struct name {
	uint32_t pid;
	char comm[16]; /* "" : a free slot */
};

struct otrack {
	struct bfollow *follow;
	struct blk_origin *notes;
	struct slot *slot; /* by bio id */
	size_t aslot;
	struct name *names; /* open addressing, a power of two of slots */
	size_t nnames, anames;
	struct listener l[MAX_LISTENERS];
	int nl;
	struct otrack_tagger tagger; /* tagger.tag: set */
	struct otrack_counts counts;
	const char *input; /* the trace (a regular file: its names read ahead), or NULL */
	int names_ahead; /* its file names were taken at the first origin note */
};

static size_t name_slot(const struct otrack *t, uint32_t pid)
{
	size_t i = (size_t)((pid * 0x9e3779b97f4a7c15ull) >> 32) & (t->anames - 1);

	while (t->names[i].comm[0] && t->names[i].pid != pid)
		i = (i + 1) & (t->anames - 1);
	return i;
}

static const char *name_of(const struct otrack *t, uint32_t pid)
{
	return t->nnames ? t->names[name_slot(t, pid)].comm : "";
}

/* a process note: the first name of a pid stays, as btt's */
static void name_note(struct otrack *t, const struct blk_event *ev)
{
	size_t len = strnlen((const char *)ev->pdu, ev->pdu_len < 15 ? ev->pdu_len : 15), i;

	if (!len || (t->nnames && t->names[name_slot(t, ev->pid)].comm[0]))
		return;
	if ((t->nnames + 1) * 2 > t->anames) {
		struct name *old = t->names;
		size_t oldn = t->anames;

		t->anames = t->anames ? t->anames * 2 : 64;
		t->names = xcalloc(t->anames, sizeof(*t->names));
		for (i = 0; i < oldn; i++)
			if (old[i].comm[0])
				t->names[name_slot(t, old[i].pid)] = old[i];
		free(old);
	}
	i = name_slot(t, ev->pid);
	t->names[i].pid = ev->pid;
	memcpy(t->names[i].comm, ev->pdu, len);
	t->nnames++;
}

/* a Q: what the notes say of the bio it made */
static void on_queued(void *ctx, const struct blk_event *ev, uint32_t id)
{
	struct otrack *t = ctx;
	struct blk_origin_query q = blk_origin_query_of(ev, name_of(t, ev->pid));
	struct blk_origin_result r;
	struct otrack_io *io;

	t->slot = array_grow_zero(t->slot, &t->aslot, id, sizeof(*t->slot));
	io = &t->slot[id].io;
	free(io->shares);
	memset(io, 0, sizeof(*io));
	t->slot[id].kept = 1;
	if (blk_origin_io(t->notes, &q, &r) < 0)
		t->counts.nomem++;
	io->kind = r.kind;
	io->name = r.kind == BLK_ORIGIN_JOURNAL || r.kind == BLK_ORIGIN_METADATA
			   ? blk_origin_kind_name(r.kind)
			   : r.name;
	io->pid = r.pid;
	memcpy(io->comm, r.comm, sizeof(io->comm));
	io->qpid = ev->pid;
	strncpy(io->qcomm, q.comm, sizeof(io->qcomm) - 1);
	io->has_file = r.has_file;
	io->ino = r.ino;
	io->offset = r.offset;
	io->foreign = r.foreign;
	if (r.ntags && t->tagger.tag)
		t->tagger.taken(t->tagger.ctx, id, r.tags, r.ntags);
	if (r.nshares) {
		io->shares = xmalloc(r.nshares * sizeof(*io->shares));
		memcpy(io->shares, r.shares, r.nshares * sizeof(*io->shares));
		io->nshares = (uint32_t)r.nshares;
	}
}

static void on_bio(void *ctx, const struct btt_bio *b, int counted)
{
	struct otrack *t = ctx;
	struct slot *s = b->id < t->aslot ? &t->slot[b->id] : NULL;

	if (!s || !s->kept)
		return;
	if (counted)
		for (int i = 0; i < t->nl; i++)
			t->l[i].fn(t->l[i].ctx, b, &s->io);
	free(s->io.shares);
	memset(s, 0, sizeof(*s));
}

/*
 * The tracer names the files at the end of the trace (trace.h BLK_TN_FILE): for a trace in a
 * regular file, the FILE notes are read ahead at the first origin note, so that the outputs
 * that go as the trace goes (the export's rows, Perfetto's slices) have the paths too. A
 * stream (standard input) names them at its end: those outputs say "ino N" until then.
 */
static void names_ahead(struct otrack *t)
{
	struct blk_reader *r;
	struct blk_event ev;

	t->names_ahead = -1; /* tried */
	if (!btt_input_is_file(t->input) || !(r = blk_reader_open(t->input)))
		return;
	/* a damaged record ends it: the run itself says where, and takes what follows then */
	while (blk_reader_next(r, &ev) > 0) {
		int ret = blk_event_is_file(&ev) ? blk_origin_note(t->notes, &ev) : 0;

		if (ret == -ENOMEM)
			die("out of memory for the origin notes");
		if (ret < 0)
			t->counts.notes_bad++;
	}
	blk_reader_close(r);
	t->names_ahead = 1;
}

/* a DIRTY note, its pages tagged as the tagger says */
static int tagged_note(struct otrack *t, const struct blk_event *ev)
{
	struct blk_dirty_pdu pdu;
	uint64_t tag = 0, pages;
	int ret;

	if (!blk_origin_dirty_pdu(ev, &pdu))
		tag = t->tagger.tag(t->tagger.ctx, ev, &pdu);
	ret = blk_origin_note_tagged(t->notes, ev, tag, &pages);
	if (ret > 0 && tag)
		t->tagger.dirtied(t->tagger.ctx, tag, pages);
	return ret;
}

static void on_note(void *ctx, const struct blk_event *ev)
{
	struct otrack *t = ctx;
	int ret;

	if ((uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_PROCESS)) {
		name_note(t, ev);
		return;
	}
	/* read ahead already (names_ahead()) */
	if (t->names_ahead > 0 && blk_event_is_file(ev))
		return;
	if (t->tagger.tag && blk_event_is_dirty(ev))
		ret = tagged_note(t, ev);
	else
		ret = blk_origin_note(t->notes, ev);
	if (ret > 0 && !t->names_ahead)
		names_ahead(t);

	if (ret == -ENOMEM)
		die("out of memory for the origin notes");
	if (ret < 0)
		t->counts.notes_bad++;
	if (ret > 0)
		bfollow_start(t->follow);
}

struct otrack *otrack_new(const struct btt_view *v)
{
	struct otrack *t = xcalloc(1, sizeof(*t));

	t->follow = bfollow_new(
		v, &(struct bfollow_ops){.ctx = t, .queued = on_queued, .done = on_bio});
	t->notes = blk_origin_new();
	t->input = v->opts->input;
	if (!t->notes ||
	    iomodel_subscribe(v->model, &(struct btt_io_sub){.ctx = t, .note = on_note}) < 0)
		die("out of memory for the origin sections");
	return t;
}

void otrack_listen(struct otrack *t, otrack_fn fn, void *ctx)
{
	if (t->nl == MAX_LISTENERS)
		die("too many listeners of the origin notes");
	t->l[t->nl].fn = fn;
	t->l[t->nl++].ctx = ctx;
}

void otrack_set_tagger(struct otrack *t, const struct otrack_tagger *tg)
{
	if (t->tagger.tag)
		die("internal error: a second tagger of the dirty pages");
	t->tagger = *tg;
}

const struct otrack_io *otrack_io_of(const struct otrack *t, uint32_t id)
{
	return id < t->aslot && t->slot[id].kept ? &t->slot[id].io : NULL;
}

int otrack_following(const struct otrack *t)
{
	return bfollow_following(t->follow);
}

void otrack_input_end(struct otrack *t)
{
	bfollow_input_end(t->follow);
}

const struct blk_origin *otrack_notes(const struct otrack *t)
{
	return t->notes;
}

const struct otrack_counts *otrack_counts(const struct otrack *t)
{
	return &t->counts;
}

const struct bfollow *otrack_follow(const struct otrack *t)
{
	return t->follow;
}

void otrack_free(struct otrack *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->aslot; i++)
		free(t->slot[i].io.shares);
	free(t->slot);
	free(t->names);
	bfollow_free(t->follow);
	blk_origin_free(t->notes);
	free(t);
}
