// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic Perfetto trace of block I/O through include/blk-perfetto/perfetto.h, as
 * the btt export will: three devices (sda, sdb, and dm-0 remapped onto sdb) with overlapping I/Os on
 * lanes, stage slices Q2G G2I I2D D2C inside each I/O, counters (in flight and queued as
 * increments, MB/s as a double, IOPS), instants (unplug, requeue, messages), flows (a process's
 * "queued" instant to its I/O, a dm-0 I/O to its sdb I/O), a process and a thread track, a
 * wall-clock snapshot. The I/Os are made first, then their events are played in time order.
 *
 *   perfetto-synth [-n IOS] [-s SEED] OUT        trace to OUT (gzip if it ends in .gz); prints
 *                                                 what it wrote as JSON, computed from the I/Os
 *                                                 themselves, and the writer's byte counts
 *   perfetto-synth --broken KIND OUT             a deliberately broken trace (lower layer:
 *                                                 blk-perfetto/protobuf.h packets), to see the
 *                                                 checker fail
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/output.h"
#include "blk-perfetto/perfetto.h"
#include "blk-perfetto/protobuf.h"

#define NDEV 3
#define DM 2 /* dm-0, remapped onto sdb */
#define LOWER 1
#define WINDOW 1000000 /* counter windows of 1 ms */
#define PID 4321
#define TID 4322

static const char *const dev_name[NDEV] = {"8,0 (sda)", "8,16 (sdb)", "253,0 (dm-0)"};
static const char *const stage_name[4] = {"Q2G", "G2I", "I2D", "D2C"};

struct io {
	int dev;
	int write;
	uint32_t bytes;
	uint64_t sector;
	uint64_t t[5]; /* Q G I D C (dm-0: Q and C only) */
	int lower; /* dm-0: index of its sdb I/O; sdb: index of its dm-0 I/O; else -1 */
	uint64_t flow_in; /* the process's "queued" -> this I/O */
	uint64_t flow_down; /* dm-0 I/O -> its sdb I/O */
	uint64_t lane;
	int error;
};

enum step_kind { S_DONE, S_STAGE, S_QUEUE, S_WINDOW, S_MESSAGE };

struct step {
	uint64_t ts;
	int kind; /* order at one time: completions first, so that lanes are reused */
	int io; /* or the window / message number */
	int stage; /* S_STAGE: the stage that begins (1..3) */
};

struct synth {
	struct blk_perfetto *pf;
	struct io *io;
	int nio;
	uint64_t dev_track[NDEV], inflight[NDEV], queued[NDEV], mbps[NDEV], iops[NDEV];
	unsigned int lanes[NDEV];
	uint64_t proc, thread;
	int64_t n_inflight[NDEV], n_queued[NDEV];
	uint64_t done_bytes[NDEV], done_ios[NDEV];
	int unplugs, requeues, messages, flows;
	uint64_t rng;
};

static uint64_t rnd(struct synth *s, uint64_t lo, uint64_t hi)
{
	s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (s->rng >> 33) % (hi - lo + 1);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "perfetto-synth: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void ok(int ret, const char *what)
{
	if (ret)
		die(what, ret);
}

static int cmp_step(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->io != y->io)
		return x->io - y->io;
	return x->stage - y->stage;
}

/* The I/Os: per device an arrival every 1-20 us, long D2C, so that many overlap. */
static void make_ios(struct synth *s, int per_dev)
{
	uint64_t next[NDEV] = {1000000, 1000000, 1000000};

	s->io = calloc((size_t)per_dev * 4, sizeof(*s->io));
	if (!s->io)
		die("calloc", ENOMEM);
	for (int i = 0; i < per_dev * NDEV; i++) {
		int d = i % NDEV;
		struct io *io = &s->io[s->nio++];

		io->dev = d;
		io->lower = -1;
		io->write = (int)rnd(s, 0, 2) == 0;
		io->bytes = 512u << rnd(s, 0, 8);
		io->sector = rnd(s, 0, 1u << 30) & ~7ull;
		next[d] += rnd(s, 1000, 20000);
		io->t[0] = next[d];
		io->error = i % 97 == 5 ? -5 : 0;
		if (d == DM) {
			/* remapped at Q + 500 ns onto an sdb I/O; completes 1 us after it */
			struct io *lo = &s->io[s->nio++];

			*lo = *io;
			lo->dev = LOWER;
			lo->sector += 2048;
			lo->t[0] = io->t[0] + 500;
			lo->lower = (int)(io - s->io);
			io->lower = (int)(lo - s->io);
			io = lo;
		}
		io->t[1] = io->t[0] + rnd(s, 100, 2000);
		io->t[2] = io->t[1] + rnd(s, 100, 5000);
		io->t[3] = io->t[2] + rnd(s, 500, 20000);
		io->t[4] = io->t[3] + rnd(s, 20000, 500000);
		if (io->lower >= 0)
			s->io[io->lower].t[4] = io->t[4] + 1000;
	}
}

static void track(struct synth *s, const struct blk_perfetto_track *t, uint64_t *uuid)
{
	ok(blk_perfetto_track_new(s->pf, t, uuid), "track");
}

static void make_tracks(struct synth *s)
{
	for (int d = 0; d < NDEV; d++) {
		track(s,
		      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_SLICE,
						   .name = dev_name[d],
						   .child_ordering = BLK_PERFETTO_ORDER_EXPLICIT},
		      &s->dev_track[d]);
		ok(blk_perfetto_lanes_new(s->pf, s->dev_track[d], "I/O", 0, &s->lanes[d]), "lanes");
		track(s,
		      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_COUNTER,
						   .parent = s->dev_track[d],
						   .name = "in flight",
						   .rank = 1,
						   .unit = BLK_PERFETTO_UNIT_COUNT,
						   .incremental = 1},
		      &s->inflight[d]);
		track(s,
		      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_COUNTER,
						   .parent = s->dev_track[d],
						   .name = "queued",
						   .rank = 2,
						   .unit = BLK_PERFETTO_UNIT_COUNT,
						   .incremental = 1},
		      &s->queued[d]);
		track(s,
		      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_COUNTER,
						   .parent = s->dev_track[d],
						   .name = "MB/s",
						   .rank = 3,
						   .unit_name = "MB/s"},
		      &s->mbps[d]);
		track(s,
		      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_COUNTER,
						   .parent = s->dev_track[d],
						   .name = "IOPS",
						   .rank = 4,
						   .unit_name = "IOPS"},
		      &s->iops[d]);
	}
	track(s,
	      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_PROCESS,
					   .pid = PID,
					   .name = "fio",
					   .has_ts = 1,
					   .ts = 1000000},
	      &s->proc);
	track(s,
	      &(struct blk_perfetto_track){.type = BLK_PERFETTO_TRACK_THREAD,
					   .pid = PID,
					   .tid = TID,
					   .name = "fio",
					   .has_ts = 1,
					   .ts = 1000000},
	      &s->thread);
}

static void io_queue(struct synth *s, int i)
{
	struct io *io = &s->io[i];
	char name[32], sector[32];
	const char *rwbs = io->write ? "WS" : "R";
	struct blk_perfetto_arg args[6] = {
		BLK_PERFETTO_UINT("sector", io->sector), BLK_PERFETTO_UINT("bytes", io->bytes),
		BLK_PERFETTO_ISTR("rwbs", rwbs),	 BLK_PERFETTO_INT("pid", PID),
		BLK_PERFETTO_ISTR("process", "fio"),
	};
	struct blk_perfetto_event ev = {.ts = io->t[0], .name = name, .args = args, .nargs = 5};
	struct blk_perfetto_value v;

	snprintf(name, sizeof(name), "%s %u KiB", io->write ? "W" : "R", io->bytes / 1024);
	if (io->bytes < 1024)
		snprintf(name, sizeof(name), "%s %u B", io->write ? "W" : "R", io->bytes);
	ok(blk_perfetto_lane_take(s->pf, s->lanes[io->dev], &io->lane), "lane");
	ev.track = io->lane;
	if (io->dev == LOWER && io->lower >= 0) {
		/* the end of the dm-0 I/O's flow, and where it came from */
		snprintf(sector, sizeof(sector), "253,0 %" PRIu64, s->io[io->lower].sector);
		args[5] = (struct blk_perfetto_arg)BLK_PERFETTO_STR("remapped-from", sector);
		ev.nargs = 6;
		ev.terminating_flows = &s->io[io->lower].flow_down;
		ev.nterminating = 1;
	} else {
		/* the process queued it: its instant starts the flow that ends on the I/O */
		struct blk_perfetto_event q = {.track = s->proc, .ts = io->t[0], .name = "queued"};

		io->flow_in = blk_perfetto_flow_new(s->pf);
		q.flows = &io->flow_in;
		q.nflows = 1;
		ok(blk_perfetto_instant(s->pf, &q), "queued");
		ev.terminating_flows = &io->flow_in;
		ev.nterminating = 1;
		s->flows++;
	}
	if (io->dev == DM) {
		/* bio-based: no queue, no stages; its flow goes on to the sdb I/O */
		struct blk_perfetto_value vi = {s->inflight[DM], ++s->n_inflight[DM]};

		io->flow_down = blk_perfetto_flow_new(s->pf);
		ev.flows = &io->flow_down;
		ev.nflows = 1;
		ev.values = &vi;
		ev.nvalues = 1;
		ok(blk_perfetto_begin(s->pf, &ev), "dm I/O");
		s->flows++;
		return;
	}
	v = (struct blk_perfetto_value){s->queued[io->dev], ++s->n_queued[io->dev]};
	ev.values = &v;
	ev.nvalues = 1;
	ok(blk_perfetto_begin(s->pf, &ev), "I/O");
	ok(blk_perfetto_begin(s->pf, &(struct blk_perfetto_event){.track = io->lane,
								  .ts = io->t[0],
								  .name = stage_name[0]}),
	   "Q2G");
	if (io->dev == 0 && i % 16 == 0) {
		struct blk_perfetto_arg a = BLK_PERFETTO_UINT("count", (uint64_t)(i % 5 + 1));

		ok(blk_perfetto_instant(s->pf,
					&(struct blk_perfetto_event){.track = s->dev_track[0],
								     .ts = io->t[0],
								     .name = "unplug",
								     .args = &a,
								     .nargs = 1}),
		   "unplug");
		s->unplugs++;
	}
}

static void io_stage(struct synth *s, int i, int stage)
{
	struct io *io = &s->io[i];
	struct blk_perfetto_event ev = {.track = io->lane, .ts = io->t[stage]};
	struct blk_perfetto_value v[2];

	ok(blk_perfetto_end(s->pf, &ev), "stage end");
	ev.name = stage_name[stage];
	if (stage == 3) {
		/* dispatched: one more in flight, one less queued */
		v[0] = (struct blk_perfetto_value){s->inflight[io->dev], ++s->n_inflight[io->dev]};
		v[1] = (struct blk_perfetto_value){s->queued[io->dev], --s->n_queued[io->dev]};
		ev.values = v;
		ev.nvalues = 2;
	}
	ok(blk_perfetto_begin(s->pf, &ev), "stage begin");
	if (stage == 3 && io->dev == 1 && i % 50 == 1) {
		ok(blk_perfetto_instant(s->pf, &(struct blk_perfetto_event){.track = io->lane,
									    .ts = io->t[3],
									    .name = "requeue"}),
		   "requeue");
		s->requeues++;
	}
}

static void io_done(struct synth *s, int i)
{
	struct io *io = &s->io[i];
	struct blk_perfetto_arg a[2] = {BLK_PERFETTO_INT("error", io->error),
					BLK_PERFETTO_UINT("merged-into", io->sector - 8)};
	struct blk_perfetto_value v = {s->inflight[io->dev], --s->n_inflight[io->dev]};
	struct blk_perfetto_event ev = {
		.track = io->lane, .ts = io->t[4], .values = &v, .nvalues = 1};

	if (io->dev != DM)
		ok(blk_perfetto_end_at(s->pf, io->lane, io->t[4]), "D2C end");
	if (io->error) {
		ev.args = a;
		ev.nargs = 1;
	} else if (io->dev == 0 && i % 40 == 3) {
		ev.args = a + 1;
		ev.nargs = 1;
	}
	ok(blk_perfetto_end(s->pf, &ev), "I/O end");
	ok(blk_perfetto_lane_give(s->pf, io->lane), "give");
	s->done_bytes[io->dev] += io->bytes;
	s->done_ios[io->dev]++;
}

static void window(struct synth *s, uint64_t ts)
{
	for (int d = 0; d < NDEV; d++) {
		ok(blk_perfetto_counter_double(s->pf, s->mbps[d], ts,
					       (double)s->done_bytes[d] / 1e6 / (WINDOW / 1e9)),
		   "MB/s");
		ok(blk_perfetto_counter(s->pf, s->iops[d], ts,
					(int64_t)(s->done_ios[d] * (1000000000 / WINDOW))),
		   "IOPS");
		s->done_bytes[d] = s->done_ios[d] = 0;
	}
}

static void message(struct synth *s, int n, uint64_t ts)
{
	char text[64];
	struct blk_perfetto_arg a = BLK_PERFETTO_STR("text", text);

	snprintf(text, sizeof(text), "synthetic message %d", n);
	ok(blk_perfetto_instant(s->pf, &(struct blk_perfetto_event){.track = s->dev_track[n % NDEV],
								    .ts = ts,
								    .name = "message",
								    .args = &a,
								    .nargs = 1}),
	   "message");
	s->messages++;
}

static void play(struct synth *s)
{
	size_t n = 0, cap = (size_t)s->nio * 5 + 1024;
	struct step *st = malloc(cap * sizeof(*st));
	uint64_t end = 0;

	if (!st)
		die("malloc", ENOMEM);
	for (int i = 0; i < s->nio; i++) {
		struct io *io = &s->io[i];

		st[n++] = (struct step){io->t[0], S_QUEUE, i, 0};
		st[n++] = (struct step){io->t[4], S_DONE, i, 0};
		if (io->dev != DM)
			for (int k = 1; k <= 3; k++)
				st[n++] = (struct step){io->t[k], S_STAGE, i, k};
		if (io->t[4] > end)
			end = io->t[4];
	}
	for (uint64_t w = 1; w * WINDOW <= end + WINDOW && n < cap - 8; w++)
		st[n++] = (struct step){w * WINDOW, S_WINDOW, (int)w, 0};
	for (int m = 0; m < 6; m++)
		st[n++] =
			(struct step){1000000 + (uint64_t)m * (end - 1000000) / 6, S_MESSAGE, m, 0};
	qsort(st, n, sizeof(*st), cmp_step);
	for (size_t k = 0; k < n; k++) {
		switch (st[k].kind) {
		case S_QUEUE:
			io_queue(s, st[k].io);
			break;
		case S_STAGE:
			io_stage(s, st[k].io, st[k].stage);
			break;
		case S_DONE:
			io_done(s, st[k].io);
			break;
		case S_WINDOW:
			window(s, st[k].ts);
			break;
		case S_MESSAGE:
			message(s, st[k].io, st[k].ts);
			break;
		}
	}
	/* the thread's one slice covers the whole run */
	free(st);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Largest number of I/Os of device @d open at once (completions first at equal times). */
static int peak(const struct synth *s, int d)
{
	int cur = 0, max = 0;
	uint64_t *b = malloc((size_t)s->nio * 2 * sizeof(*b));
	size_t n = 0;

	if (!b)
		die("malloc", ENOMEM);
	for (int i = 0; i < s->nio; i++) {
		if (s->io[i].dev != d)
			continue;
		b[n++] = s->io[i].t[0] << 1 | 1;
		b[n++] = s->io[i].t[4] << 1;
	}
	qsort(b, n, sizeof(*b), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		cur += (b[i] & 1) ? 1 : -1;
		if (cur > max)
			max = cur;
	}
	free(b);
	return max;
}

/* What the trace holds, from the I/Os (not from the writer): JSON on stdout. */
static void report(const struct synth *s, const struct blk_perfetto_stats *st)
{
	printf("{\n  \"devices\": {\n");
	for (int d = 0; d < NDEV; d++) {
		uint64_t ios = 0, total = 0, stage_total[4] = {0};

		for (int i = 0; i < s->nio; i++) {
			const struct io *io = &s->io[i];

			if (io->dev != d)
				continue;
			ios++;
			total += io->t[4] - io->t[0];
			for (int k = 0; k < 4 && d != DM; k++)
				stage_total[k] += io->t[k + 1] - io->t[k];
		}
		printf("    \"%s\": {\"ios\": %" PRIu64 ", \"io_total_ns\": %" PRIu64
		       ", \"lanes\": %d, \"stages\": {",
		       dev_name[d], ios, total, peak(s, d));
		for (int k = 0; k < 4 && d != DM; k++)
			printf("%s\"%s\": %" PRIu64, k ? ", " : "", stage_name[k], stage_total[k]);
		printf("}}%s\n", d < NDEV - 1 ? "," : "");
	}
	printf("  },\n  \"flows\": %d, \"unplugs\": %d, \"requeues\": %d, \"messages\": %d,\n",
	       s->flows, s->unplugs, s->requeues, s->messages);
	printf("  \"writer\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64
	       ", \"slices\": %" PRIu64 ", \"instants\": %" PRIu64 ", \"counters\": %" PRIu64
	       ", \"tracks\": %" PRIu64 ", \"interned\": %" PRIu64 ", \"absolute\": %" PRIu64
	       "}\n}\n",
	       st->packets, st->bytes, st->slices, st->instants, st->counters, st->tracks,
	       st->interned, st->absolute);
}

static int synth(const char *path, int per_dev, uint64_t seed)
{
	struct blk_perfetto_opts o = {.start_ns = 1000000,
				      .has_wall = 1,
				      .wall_ts = 1000000,
				      .wall_sec = 1700000000,
				      .wall_nsec = 123456789};
	struct synth s = {.rng = seed};
	struct blk_perfetto_stats st;
	uint64_t last = 0;

	make_ios(&s, per_dev);
	s.pf = blk_perfetto_open(path, &o);
	if (!s.pf)
		die(path, errno);
	make_tracks(&s);
	ok(blk_perfetto_begin(s.pf, &(struct blk_perfetto_event){.track = s.thread,
								 .ts = 1000000,
								 .name = "submit loop"}),
	   "thread");
	play(&s);
	for (int i = 0; i < s.nio; i++)
		if (s.io[i].t[4] > last)
			last = s.io[i].t[4];
	ok(blk_perfetto_end_at(s.pf, s.thread, last + 1), "thread end");
	blk_perfetto_stats(s.pf, &st);
	ok(blk_perfetto_close(s.pf), path);
	report(&s, &st);
	free(s.io);
	return 0;
}

/* ---- broken files, written packet by packet with the encoder ---- */

struct raw {
	struct blk_output *out;
	struct blk_pb pb;
};

/* Start a packet holding a track event (type, track, name iid or 0, the state flags) at
 * relative time @dt; the packet and its track_event stay open for more fields. */
static void raw_event(struct raw *r, uint64_t dt, int type, uint64_t track, uint64_t name_iid)
{
	blk_pb_reset(&r->pb);
	blk_pb_begin(&r->pb, 1);
	blk_pb_varint(&r->pb, 8, dt);
	blk_pb_varint(&r->pb, 10, 1);
	blk_pb_varint(&r->pb, 13, 2);
	blk_pb_begin(&r->pb, 11);
	if (name_iid)
		blk_pb_varint(&r->pb, 10, name_iid);
	blk_pb_varint(&r->pb, 9, (uint64_t)type);
	blk_pb_varint(&r->pb, 11, track);
}

/* Close whatever is open. */
static void raw_close(struct raw *r)
{
	while (r->pb.depth)
		ok(blk_pb_end(&r->pb), "encode");
}

static void raw_write(struct raw *r)
{
	raw_close(r);
	ok(blk_output_write(r->out, r->pb.buf, r->pb.len), "write");
}

/* the first packet: defaults and clocks as the writer has them, plus interned name 1 "x" */
static void raw_start(struct raw *r)
{
	blk_pb_reset(&r->pb);
	blk_pb_begin(&r->pb, 1);
	blk_pb_varint(&r->pb, 10, 1);
	blk_pb_varint(&r->pb, 13, 3);
	blk_pb_begin(&r->pb, 59);
	blk_pb_varint(&r->pb, 58, 64);
	blk_pb_end(&r->pb);
	blk_pb_begin(&r->pb, 6);
	blk_pb_begin(&r->pb, 1);
	blk_pb_varint(&r->pb, 1, 3);
	blk_pb_varint(&r->pb, 2, 1000);
	blk_pb_end(&r->pb);
	blk_pb_begin(&r->pb, 1);
	blk_pb_varint(&r->pb, 1, 64);
	blk_pb_varint(&r->pb, 2, 1000);
	blk_pb_varint(&r->pb, 3, 1);
	blk_pb_end(&r->pb);
	blk_pb_varint(&r->pb, 2, 3);
	blk_pb_end(&r->pb);
	blk_pb_begin(&r->pb, 12);
	blk_pb_begin(&r->pb, 2);
	blk_pb_varint(&r->pb, 1, 1);
	blk_pb_string(&r->pb, 2, "x");
	blk_pb_end(&r->pb);
	blk_pb_end(&r->pb);
	raw_write(r);
}

static void raw_track(struct raw *r, uint64_t uuid, int counter)
{
	blk_pb_reset(&r->pb);
	blk_pb_begin(&r->pb, 1);
	blk_pb_varint(&r->pb, 10, 1);
	blk_pb_varint(&r->pb, 13, 2);
	blk_pb_begin(&r->pb, 60);
	blk_pb_varint(&r->pb, 1, uuid);
	blk_pb_string(&r->pb, 2, counter ? "c" : "t");
	if (counter) {
		blk_pb_begin(&r->pb, 8);
		blk_pb_end(&r->pb);
	}
	blk_pb_end(&r->pb);
	raw_write(r);
}

static int broken(const char *kind, const char *path)
{
	struct raw r = {.pb = BLK_PB_INIT};
	int known = 1;

	r.out = blk_output_open(path, 0);
	if (!r.out)
		die(path, errno);
	raw_start(&r);
	raw_track(&r, 1, 0);
	raw_track(&r, 2, 1);
	if (!strcmp(kind, "end-without-begin")) {
		raw_event(&r, 10, 1, 1, 1);
		raw_write(&r);
		raw_event(&r, 10, 2, 1, 0);
		raw_write(&r);
		raw_event(&r, 10, 2, 1, 0);
		raw_write(&r);
	} else if (!strcmp(kind, "undescribed-track")) {
		raw_event(&r, 10, 1, 3, 1);
		raw_write(&r);
		raw_event(&r, 10, 2, 3, 0);
		raw_write(&r);
		raw_track(&r, 3, 0);
	} else if (!strcmp(kind, "undefined-iid")) {
		raw_event(&r, 10, 3, 1, 2);
		raw_write(&r);
	} else if (!strcmp(kind, "iid-on-other-sequence")) {
		/* name 1 exists on sequence 1, not on sequence 2 (which clears its own state) */
		blk_pb_reset(&r.pb);
		blk_pb_begin(&r.pb, 1);
		blk_pb_varint(&r.pb, 8, 2000);
		blk_pb_varint(&r.pb, 58, 3);
		blk_pb_varint(&r.pb, 10, 2);
		blk_pb_varint(&r.pb, 13, 3);
		blk_pb_begin(&r.pb, 11);
		blk_pb_varint(&r.pb, 10, 1);
		blk_pb_varint(&r.pb, 9, 3);
		blk_pb_varint(&r.pb, 11, 1);
		raw_write(&r);
	} else if (!strcmp(kind, "flow-one-end")) {
		raw_event(&r, 10, 3, 1, 1);
		blk_pb_fixed64(&r.pb, 47, 77);
		raw_write(&r);
	} else if (!strcmp(kind, "counter-on-slice-track")) {
		raw_event(&r, 10, 4, 1, 0);
		blk_pb_varint(&r.pb, 30, 1);
		raw_write(&r);
	} else if (!strcmp(kind, "slice-on-counter-track")) {
		raw_event(&r, 10, 3, 2, 1);
		raw_write(&r);
	} else if (!strcmp(kind, "time-backwards")) {
		/* an end before its begin: 1000 + 5000 on the incremental clock, then 4000 */
		raw_event(&r, 5000, 1, 1, 1);
		raw_write(&r);
		raw_event(&r, 4000, 2, 1, 0);
		blk_pb_end(&r.pb);
		blk_pb_varint(&r.pb, 58, 3);
		raw_write(&r);
	} else if (!strcmp(kind, "no-incremental-state")) {
		/* a sequence that uses state it never cleared */
		blk_pb_reset(&r.pb);
		blk_pb_begin(&r.pb, 1);
		blk_pb_varint(&r.pb, 8, 2000);
		blk_pb_varint(&r.pb, 58, 3);
		blk_pb_varint(&r.pb, 10, 3);
		blk_pb_varint(&r.pb, 13, 2);
		blk_pb_begin(&r.pb, 11);
		blk_pb_string(&r.pb, 23, "y");
		blk_pb_varint(&r.pb, 9, 3);
		blk_pb_varint(&r.pb, 11, 1);
		raw_write(&r);
	} else if (!strcmp(kind, "unclosed-slice")) {
		raw_event(&r, 10, 1, 1, 1);
		raw_write(&r);
	} else if (!strcmp(kind, "truncated")) {
		raw_event(&r, 10, 3, 1, 1);
		raw_close(&r);
		r.pb.len -= 3;
		ok(blk_output_write(r.out, r.pb.buf, r.pb.len), "write");
	} else {
		known = 0;
	}
	blk_pb_release(&r.pb);
	ok(blk_output_close(r.out), path);
	if (!known) {
		fprintf(stderr, "perfetto-synth: unknown broken kind '%s'\n", kind);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int per_dev = 300;
	uint64_t seed = 1;
	int i = 1;

	if (argc == 4 && !strcmp(argv[1], "--broken"))
		return broken(argv[2], argv[3]);
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-n"))
			per_dev = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else
			break;
	}
	if (i != argc - 1 || per_dev <= 0) {
		fprintf(stderr, "usage: perfetto-synth [-n IOS] [-s SEED] OUT\n"
				"       perfetto-synth --broken KIND OUT\n");
		return 2;
	}
	return synth(argv[i], per_dev, seed);
}
