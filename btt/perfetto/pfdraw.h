/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drawing side of btt --perfetto (perfetto-out.c decides what and when): the tracks of
 * each device (its lanes of I/O slices, its counters), the process tracks, and the events on
 * them, written with blk-perfetto/perfetto.h in the order they are asked for.
 *
 * Counter values wait: a value at time t is written with the next event drawn at t (as an
 * extra counter value, a few bytes), or on its own when the next event is later
 * (pfdraw_flush() writes the waiting ones).
 *
 * Every function returns 0 or the first -errno of the writer (sticky: after an error,
 * nothing more is written). Times earlier than a track's last event are moved up to it,
 * so the file never goes back in time on a track.
 */
#ifndef BTT_PFDRAW_H
#define BTT_PFDRAW_H

#include <stdint.h>

#include "model/devs.h"

struct blk_output;
struct blk_perfetto_opts;
struct pfdraw;

#define PF_MAX_FLOWS_OUT 4
#define PF_MAX_BURST_FLOWS 16 /* flows into one bio from the bursts that dirtied its data */

/* the counters of a device */
enum pf_ctr { PF_DRIVER, PF_QUEUED, PF_RMB, PF_WMB, PF_RIOPS, PF_WIOPS, PF_NCTR };

/* which lanes: the completed bios, the pieces of split ones (the device requests they went
 * out in), the bios given up before their last completion */
enum pf_set { PF_SET_IO, PF_SET_PIECE, PF_SET_LOST, PF_NSETS };

/**
 * struct pf_io - a bio (or a piece of one) as the drawing needs it (perfetto-out.c fills it)
 * @lane, @lane_idx, @set: its lane while it is drawn (set by pfdraw_begin())
 * @flow_in: the flow from its process's "queued" instant (0: none, a bio without a Q);
 *	@flow_from: from the bio it was remapped from (0: none); @flow_out: to the bios it
 *	became (remaps)
 * @lost: why it left without a completion (a string for its "lost" argument), or NULL
 * @kind: its "bio" argument ("split", "no Q, merged"...: a fixed string), NULL: none
 * @pieces: a split bio's pieces (its "pieces" argument when above 1); @bio_sector: a
 *	piece's bio (its "bio-sector" argument)
 * @no_q: a bio without a Q (no "queued" instant, no pid or process argument); @piece: a
 *	piece (not a bio: on the "I/O pieces" lanes, not counted in the "queued" counter, no
 *	pid or process argument: its bio's)
 * @nostage: no stage slice inside (a bio made by its C: pfdraw_stage() not called)
 * @has_cgroup, @has_origin, @has_file: what the trace's notes say of it (cgroup and origin
 *	notes, blktrace --origin), its "cgroup" (@cgroup, else "cgroup-id" @cgroup_id),
 *	"origin" and "origin-pid" (@origin, @origin_pid), "file" (@file, else "file-ino"
 *	@file_ino) and "file-offset" arguments; the strings live as long as the run
 */
struct pf_io {
	uint64_t sector, action, bio_sector, from_sector;
	uint64_t flow_in, flow_from;
	uint64_t flow_out[PF_MAX_FLOWS_OUT];
	uint64_t lane;
	const struct btt_proc *proc;
	const char *lost, *kind;
	const char *cgroup, *origin, *file;
	uint64_t cgroup_id, file_ino, file_offset;
	uint32_t pid, nsec, dev, from_device, lane_idx, pieces, origin_pid;
	uint16_t error;
	uint8_t nflow_out, set, remapped, no_q, piece, nostage;
	uint8_t has_cgroup, has_origin, has_file;
};

/* A drawing onto @out (the caller's; it must outlive the drawing). Exits without memory. */
struct pfdraw *pfdraw_new(struct blk_output *out);

/* Start the trace (its first packet) with @o: before any other call. */
int pfdraw_start(struct pfdraw *d, const struct blk_perfetto_opts *o);

/* 1 once pfdraw_start() succeeded */
int pfdraw_started(const struct pfdraw *d);

/* The tracks of device @dev (its index dev->idx), described now. */
int pfdraw_device(struct pfdraw *d, const struct btt_dev *dev);

/* Counter @c of device @dev has value @v from @ts on (an integer counter: waits, see above). */
int pfdraw_counter(struct pfdraw *d, uint32_t dev, enum pf_ctr c, uint64_t ts, int64_t v);

/*
 * Device @dev's "queued" counter moved by @by at @ts: +1 where an I/O's slice begins, -1
 * where it ends, counted here in the order drawn (not in btt's: a slice drawn 1 ns wide,
 * Q2C 0 or queued at the trace's last time, ends after the I/Os that btt lets go after it
 * at that time).
 */
int pfdraw_queued_step(struct pfdraw *d, uint32_t dev, uint64_t ts, int by);

/* The same for a rate (a floating-point value, written at once). */
int pfdraw_rate(struct pfdraw *d, uint32_t dev, enum pf_ctr c, uint64_t ts, double v);

/* The "queued" instant of @io on its process's track at @ts (the start of @io->flow_in). */
int pfdraw_queued(struct pfdraw *d, const struct pf_io *io, uint64_t ts);

/**
 * struct pf_wait - an I/O wait as the drawing needs it (perfetto-out.c fills it)
 * @tgid, @tid, @comm: the waiting process and thread, its name
 * @duration: the wait's, for its argument (the slice is drawn from begin to end)
 * @source: how it was captured ("sched"...); @io_dev: the device of its I/O in flight
 *	when @has_io
 * @flow: the flow from the completion of the task's last I/O before the wait's end,
 *	which the wait's end terminates (0: none)
 */
struct pf_wait {
	uint64_t duration, flow;
	const char *source;
	uint32_t tgid, tid, io_dev;
	int has_io;
	char comm[17];
};

/*
 * The slice "iowait" of @w from @ts on its thread's track (made at its first wait, under
 * its process's track), and its end at @ts.
 */
int pfdraw_wait_begin(struct pfdraw *d, const struct pf_wait *w, uint64_t ts);
int pfdraw_wait_end(struct pfdraw *d, const struct pf_wait *w, uint64_t ts);

/**
 * struct pf_burst - a dirtying burst as the drawing needs it (pfburst.c fills it; the
 * drawing frees it, a malloc()ed block, with its flows after it)
 * @tid, @tgid, @comm: the thread that dirtied the pages, its process (@tgid: from its I/O
 *	wait notes, else its tid) and its name
 * @device, @ino, @file: the file (@file its path, NULL when not named: by inode); @offset:
 *	the bytes into it of the burst's first run
 * @pages, @bytes: the pages it dirtied (those dirty already not counted), their bytes;
 *	@unwritten: of them, those no write had taken when it was drawn
 * @ns: from its first run to its last; @ios: the bios that wrote its pages
 * @before: how long before the trace's time 0 it began (a merged file of blkparse -d
 *	starts at its first event; the instant is drawn at 0), 0: not before
 * @flows, @nflows: the flows to those bios' slices (the first PF_MAX_BURST_FLOWS of each)
 */
struct pf_burst {
	uint64_t ino, offset, pages, bytes, unwritten, ns, before;
	const char *file;
	uint32_t tid, tgid, device, ios, nflows;
	char comm[16];
	uint64_t flows[];
};

/*
 * The instant "dirty" of @b at @ts on its thread's track: a thread track of its own (one
 * per thread, another when a burst drawn later is timed earlier), which the trace processor
 * shows on the thread's one track, with its I/O waits.
 */
int pfdraw_burst(struct pfdraw *d, const struct pf_burst *b, uint64_t ts);

/*
 * The slice of @io from @ts on the lowest free lane of its set (io->set); @bflows, @nbflows:
 * the flows into it from the dirtying bursts whose pages it wrote (NULL, 0: none).
 */
int pfdraw_begin(struct pfdraw *d, struct pf_io *io, uint64_t ts, const uint64_t *bflows,
		 unsigned int nbflows);

/* Stage @name of @io from @ts (the end of the one before unless @first); @name stays as it
 * is at its address as long as the drawing lives (a fixed string, blk-perfetto/perfetto.h). */
int pfdraw_stage(struct pfdraw *d, struct pf_io *io, uint64_t ts, const char *name, int first);

/*
 * The end of @io's last stage and of its slice at @ts; its lane goes back to the pool.
 * @flow: a flow that starts at the slice's end (a wait it ended), 0: none.
 */
int pfdraw_end(struct pfdraw *d, struct pf_io *io, uint64_t ts, uint64_t flow);

/* An instant @name on device @dev's track, with argument @arg: @text, or @value if NULL;
 * @name and @arg are fixed strings (see pfdraw_stage()). */
int pfdraw_instant(struct pfdraw *d, uint32_t dev, uint64_t ts, const char *name, const char *arg,
		   const char *text, uint64_t value);

/* Write the counter values still waiting. */
int pfdraw_flush(struct pfdraw *d);

/* Counts for the remarks: lanes made, per set. */
uint64_t pfdraw_lanes(const struct pfdraw *d, enum pf_set set);

/* Finish the writer (the output stays open: the caller closes it) and free @d (NULL allowed). */
int pfdraw_free(struct pfdraw *d);

#endif /* BTT_PFDRAW_H */
