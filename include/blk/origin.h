/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Origin notes (the record layouts are in trace.h: BLK_TN_DIRTY, BLK_TN_FMAP, BLK_TN_FILE),
 * and what a reader makes of them (lib/origin.c): for each I/O, the file it reads or writes
 * and the task it is for (its origin).
 *
 * - FMAP notes give, per device, sector ranges -> (inode, offset in the file); a later note
 *   for the same sectors replaces the earlier.
 * - DIRTY runs give each page's dirtier (pid, name), kept until a write I/O covering the
 *   page is queued: then the page is charged to its dirtier and forgotten. The dirty pages
 *   are kept as runs, so memory follows the pages dirty at once, not the trace's length
 *   (plus one small record per file seen, for its name).
 * - FILE notes name the inodes (at the end of the trace: a reader printing as it goes knows
 *   the name only of files named before).
 * - A caller may tag the pages of each DIRTY note with a number of its own
 *   (blk_origin_note_tagged(): btt --perfetto's dirtying bursts); a write then says how many
 *   pages of each tag it took (blk_origin_result.tags).
 *
 * The origin of an I/O (blk_origin_io()): a write of file data goes to the task that dirtied
 * most of its bytes (the bytes of each task counted exactly in its shares); a read, or a
 * write no dirty run covers, to the task that queued it; an I/O queued by a task named
 * "jbd2/..." is the journal's; a write no file map covers, queued by a kernel writeback or
 * file-system thread (kworker/, flush-, kswapd, jbd2/, xfsaild/, xfs-, ext4-, btrfs-...), is metadata, else the queuer's.
 */
#ifndef BLK_ORIGIN_H
#define BLK_ORIGIN_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/trace.h"

/* Whether @ev is a dirty run / file map / file name note (by its action). */
static inline int blk_event_is_dirty(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_DIRTY);
}

static inline int blk_event_is_fmap(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_FMAP);
}

static inline int blk_event_is_file(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_FILE);
}

/* What a reader knows of origins: opaque; one per run of a tool, used by one thread. */
struct blk_origin;

/* Counts of what was taken and what could not be used, for the tool to say. */
struct blk_origin_stats {
	uint64_t dirty, fmaps, files; /* notes taken (files: of an inode a map or run names) */
	uint64_t bad; /* notes too short, empty, or with a path too long or not printable */
	uint64_t unknown; /* FILE notes of an inode no DIRTY or FMAP note named: unused */
	uint64_t dirty_pages, max_dirty_pages; /* pages waiting for their write now, at most */
	uint64_t dirty_runs, max_dirty_runs; /* the runs holding them now, at most */
};

/**
 * blk_origin_dirty_pdu() - the payload of DIRTY note @ev into *@pdu, checked as
 * blk_origin_note() checks it (a run of at least one page, of a page size, that ends
 * before 2^64 bytes)
 * Return: 0, or -EINVAL for a damaged note.
 */
int blk_origin_dirty_pdu(const struct blk_event *ev, struct blk_dirty_pdu *pdu);

/* blk_origin_result.kind */
enum blk_origin_kind {
	BLK_ORIGIN_QUEUER = 0, /* the task that queued it (a read, an unattributed write) */
	BLK_ORIGIN_DIRTIER, /* the task that dirtied most of its bytes */
	BLK_ORIGIN_JOURNAL, /* queued by the journal thread (jbd2/...) */
	BLK_ORIGIN_METADATA, /* a write of no file, queued by a writeback or fs thread */
};

/* The bytes of an I/O charged to one task. */
struct blk_origin_share {
	uint32_t pid;
	char comm[16]; /* NUL terminated */
	uint64_t bytes;
};

/*
 * The dirty pages of one tag (blk_origin_note_tagged()) a write took: @bytes of the I/O's
 * (those it covers of them), @pages out of the map (the whole pages it touched).
 */
struct blk_origin_tag {
	uint64_t tag;
	uint64_t bytes;
	uint64_t pages;
};

/**
 * struct blk_origin_query - an I/O, as its Q shows it
 * @device, @sector, @bytes: where (512-byte sectors) and how much
 * @write: nonzero for a write
 * @pid, @comm: the task that queued it (@comm "" when not known)
 */
struct blk_origin_query {
	uint32_t device;
	uint64_t sector;
	uint64_t bytes;
	int write;
	uint32_t pid;
	const char *comm;
};

/* blk_origin_query_of() - the query of the Q @ev, queued by a task named @comm */
static inline struct blk_origin_query blk_origin_query_of(const struct blk_event *ev,
							  const char *comm)
{
	struct blk_origin_query q = {
		.device = ev->device,
		.sector = ev->sector,
		.bytes = ev->bytes,
		.write = blk_event_is_write(ev),
		.pid = ev->pid,
		.comm = comm,
	};

	return q;
}

/**
 * struct blk_origin_result - what the notes say of an I/O; valid until the next call on
 * the same struct blk_origin
 * @kind: enum blk_origin_kind
 * @pid, @comm: the origin task (the queuer for all but BLK_ORIGIN_DIRTIER); @name: its
 *	name too, "-" when not known, kept as long as the reader (for a caller that keeps it)
 * @has_file: a file map covers its first mapped sector: @ino, @offset (bytes into the
 *	file there), @path (NULL when no FILE note named the inode so far)
 * @shares, @nshares: its bytes per task, in the order first met; they add up to the I/O's
 *	bytes (a write's dirtied bytes to their dirtiers, the rest to the queuer)
 * @foreign: the bytes charged to a task other than the queuer
 * @tags, @ntags: the tagged dirty pages it took, per tag in the order first met (none
 *	without tags: blk_origin_note_tagged())
 */
struct blk_origin_result {
	int kind;
	uint32_t pid;
	char comm[16];
	const char *name;
	int has_file;
	uint64_t ino, offset;
	const char *path;
	const struct blk_origin_share *shares;
	size_t nshares;
	uint64_t foreign;
	const struct blk_origin_tag *tags;
	size_t ntags;
};

/**
 * blk_origin_new() - an empty reader
 * Return: the reader (free with blk_origin_free(), NULL allowed there), or NULL (no memory).
 */
struct blk_origin *blk_origin_new(void);
void blk_origin_free(struct blk_origin *o);

/**
 * blk_origin_note() - take the origin note @ev (DIRTY, FMAP or FILE; other records are
 * left alone); call in the trace's order, before the I/Os that follow it
 * Return: 1 taken, 0 not an origin note, -EINVAL an origin note that is damaged (counted,
 * skipped), -ENOMEM. A FILE note may come before the notes that name its inode; one whose
 * inode none names is counted by blk_origin_stats() (unknown).
 */
int blk_origin_note(struct blk_origin *o, const struct blk_event *ev);

/**
 * blk_origin_note_tagged() - blk_origin_note(), the pages of a DIRTY note tagged @tag
 * @tag: the caller's number for them (0: none); pages of one task next to each other are
 *	one run only under one tag, and a write that takes tagged pages says so (tags)
 * @pages: set to the pages of the note new to the map (0 for other notes): a page dirty
 *	already stays its first dirtier's, and its tag
 * Return: as blk_origin_note().
 */
int blk_origin_note_tagged(struct blk_origin *o, const struct blk_event *ev, uint64_t tag,
			   uint64_t *pages);

/**
 * blk_origin_io() - the file and origin of the I/O @q, from the notes taken so far; a
 * write takes the dirty pages it covers out of the map (call it once per queued I/O, in
 * the trace's order)
 * Return: 0 with *@r filled, -ENOMEM (*@r then says the queuer, with no shares).
 */
int blk_origin_io(struct blk_origin *o, const struct blk_origin_query *q,
		  struct blk_origin_result *r);

/**
 * blk_origin_file() - the file at @sector of @device, from the maps taken so far (no dirty
 * page is taken)
 * Return: 1 with *@ino, *@offset and *@path (NULL when not named) set, 0 when no map has it.
 */
int blk_origin_file(const struct blk_origin *o, uint32_t device, uint64_t sector, uint64_t *ino,
		    uint64_t *offset, const char **path);

/**
 * blk_origin_path() - the path of inode @ino of @device, from its FILE note
 * Return: the path (it lives as long as @o), or NULL.
 */
const char *blk_origin_path(const struct blk_origin *o, uint32_t device, uint64_t ino);

/* blk_origin_stats() - what was taken and skipped so far into *@st (unknown: counted now) */
void blk_origin_stats(const struct blk_origin *o, struct blk_origin_stats *st);

/* blk_origin_kind_name() - "task", "journal", "metadata" (dirtier and queuer: "task") */
const char *blk_origin_kind_name(int kind);

#endif /* BLK_ORIGIN_H */
