/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The origin and file of every bio, from the trace's origin notes (include/blk/origin.h:
 * BLK_TN_DIRTY, BLK_TN_FMAP, BLK_TN_FILE, recorded by blktrace --origin), for the sections
 * "I/O by origin" (origins.c) and "I/O by file" (files.c). Made by the origins output; the
 * files output listens to it.
 *
 * Until the first origin note it only looks at notes: a trace without them costs nothing.
 * From then on it follows every bio (model/follow.h), as the cgroup section does.
 * A bio is looked up in the notes at its Q (lib/origin.c: the dirty pages a write covers are
 * charged then, and taken out of the map), its answer kept by the bio's id until it is done,
 * then handed to the listeners with the bio.
 */
#ifndef BTT_ORIGIN_TRACK_H
#define BTT_ORIGIN_TRACK_H

#include <stdint.h>

#include "blk/origin.h"

struct bfollow;
struct btt_bio;
struct btt_view;
struct otrack;

/**
 * struct otrack_io - what the notes said of a bio, at its Q
 * @kind: enum blk_origin_kind
 * @pid, @comm: its origin; @qpid, @qcomm: the task that queued it; @name: the origin's
 *	name, "journal" or "metadata" for those (it lives as long as the tracker)
 * @has_file, @ino, @offset: its first mapped sector's file, and offset in it
 * @shares, @nshares: its bytes per task (they add up to its bytes at Q)
 * @foreign: the bytes of tasks other than the queuer
 */
struct otrack_io {
	int kind;
	uint32_t pid, qpid;
	char comm[16], qcomm[16];
	const char *name;
	int has_file;
	uint64_t ino, offset;
	struct blk_origin_share *shares;
	uint32_t nshares;
	uint64_t foreign;
};

/* called for each bio done (complete, with its Q in the trace after the first note) */
typedef void (*otrack_fn)(void *ctx, const struct btt_bio *b, const struct otrack_io *io);

/**
 * struct otrack_tagger - an output that follows the dirty pages in groups of its own (btt
 * --perfetto's dirtying bursts), called with @ctx:
 * @tag: DIRTY note @ev (its payload @pdu, checked) is about to be taken: the number its
 *	pages get (blk_origin_note_tagged(); 0: none)
 * @dirtied: of the pages of the note just tagged @tag, @pages were new to the map (the
 *	others were dirty already: they keep their first tag)
 * @taken: the Q of bio @id took tagged pages: @tags, @n of them (valid for the call)
 */
struct otrack_tagger {
	void *ctx;
	uint64_t (*tag)(void *ctx, const struct blk_event *ev, const struct blk_dirty_pdu *pdu);
	void (*dirtied)(void *ctx, uint64_t tag, uint64_t pages);
	void (*taken)(void *ctx, uint32_t id, const struct blk_origin_tag *tags, size_t n);
};

/* what the tracker could not use (the bios left out: otrack_follow(), bfollow_say()) */
struct otrack_counts {
	uint64_t notes_bad; /* origin notes skipped (damaged) */
	uint64_t nomem; /* bios looked up without their shares (out of memory) */
};

/* a tracker for the run @v; dies when out of memory */
struct otrack *otrack_new(const struct btt_view *v);
void otrack_free(struct otrack *t);

/* have @fn called with @ctx for each bio done (at most 4 listeners) */
void otrack_listen(struct otrack *t, otrack_fn fn, void *ctx);

/* have @tg tag the dirty pages from the next note on; one tagger (a second: dies) */
void otrack_set_tagger(struct otrack *t, const struct otrack_tagger *tg);

/* whether the trace held an origin note (the sections are printed only then) */
int otrack_following(const struct otrack *t);

/*
 * otrack_io_of() - what the notes said of bio @id at its Q, while it is in flight (until the
 * tracker's done() for it, which comes after those subscribed before the first note), or NULL
 */
const struct otrack_io *otrack_io_of(const struct otrack *t, uint32_t id);

/* the trace ended: the bios of its own model delivered */
void otrack_input_end(struct otrack *t);

/* the notes read (the paths of the files are known at the end of the trace) */
const struct blk_origin *otrack_notes(const struct otrack *t);
const struct otrack_counts *otrack_counts(const struct otrack *t);
const struct bfollow *otrack_follow(const struct otrack *t);

#endif /* BTT_ORIGIN_TRACK_H */
