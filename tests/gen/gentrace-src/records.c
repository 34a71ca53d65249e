// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace's records: what blktrace would have written, to per-CPU files NAME.blktrace.CPU
 * (NAMEk per device when there are several) or, with --pipe, to one stream on stdout with
 * the CPUs' buffers interleaved in chunks.
 *
 * Every record goes through one global clock (emit), so time stamps strictly increase
 * across all files (and therefore per CPU); a process's first record on a stream is
 * preceded by its process note.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"

#define PDU_MAX 128
#define REC_MAX (sizeof(struct blk_io_trace2) + PDU_MAX)
#define CHUNK 4096		/* --pipe: bytes per CPU buffer before a read round */

/* ---- writing records ---- */

static void swap_header(unsigned char *buf, int v2)
{
	if (v2) {
		struct blk_io_trace2 t;

		memcpy(&t, buf, sizeof(t));
		t.magic = __builtin_bswap32(t.magic);
		t.sequence = __builtin_bswap32(t.sequence);
		t.time = __builtin_bswap64(t.time);
		t.sector = __builtin_bswap64(t.sector);
		t.bytes = __builtin_bswap32(t.bytes);
		t.pid = __builtin_bswap32(t.pid);
		t.action = __builtin_bswap64(t.action);
		t.device = __builtin_bswap32(t.device);
		t.cpu = __builtin_bswap32(t.cpu);
		t.error = __builtin_bswap16(t.error);
		t.pdu_len = __builtin_bswap16(t.pdu_len);
		memcpy(buf, &t, sizeof(t));
	} else {
		struct blk_io_trace t;

		memcpy(&t, buf, sizeof(t));
		t.magic = __builtin_bswap32(t.magic);
		t.sequence = __builtin_bswap32(t.sequence);
		t.time = __builtin_bswap64(t.time);
		t.sector = __builtin_bswap64(t.sector);
		t.bytes = __builtin_bswap32(t.bytes);
		t.action = __builtin_bswap32(t.action);
		t.pid = __builtin_bswap32(t.pid);
		t.device = __builtin_bswap32(t.device);
		t.cpu = __builtin_bswap32(t.cpu);
		t.error = __builtin_bswap16(t.error);
		t.pdu_len = __builtin_bswap16(t.pdu_len);
		memcpy(buf, &t, sizeof(t));
	}
}

static void check_output(struct blk_output *o, int ret)
{
	if (ret < 0)
		die("%s", blk_output_error(o));
}

/* --pipe: one read round of `blktrace -o -`: every CPU buffer, in device and CPU order. */
void rec_pipe_round(struct gen *g)
{
	size_t n = (size_t)g->o->devices * g->o->cpus;

	for (size_t i = 0; i < n; i++) {
		struct gen_stream *s = &g->streams[i];

		if (!s->chunk_len)
			continue;
		check_output(g->pipe_out, blk_output_write(g->pipe_out, s->chunk, s->chunk_len));
		s->chunk_len = 0;
	}
}

static void write_record(struct gen *g, struct gen_stream *s, const struct blk_event *ev)
{
	unsigned char buf[REC_MAX];
	size_t n;

	if (!g->swap && !g->o->pipe) {
		check_output(s->out, blk_output_event(s->out, ev));
		return;
	}
	n = blk_event_encode(ev, buf);
	if (g->swap)
		swap_header(buf, ev->version == BLK_IO_TRACE2_VERSION);
	if (!g->o->pipe) {
		check_output(s->out, blk_output_write(s->out, buf, n));
		return;
	}
	memcpy(s->chunk + s->chunk_len, buf, n);
	s->chunk_len += n;
	if (s->chunk_len >= CHUNK)
		rec_pipe_round(g);
}

/*
 * Write @ev to stream (@dev, @cpu) on behalf of @proc. ev->time is the requested time; the
 * record gets the next free tick of the global clock and ev->time is updated. Header fields
 * the stream owns (version, sequence, device, cpu, pid) are filled in here.
 */
static void emit(struct gen *g, unsigned int dev, unsigned int cpu, unsigned int proc,
		 struct blk_event *ev)
{
	struct gen_stream *s = &g->streams[dev * g->o->cpus + cpu];
	int notify = blk_event_is_notify(ev);

	if (g->done)
		return;
	if (!notify && !(s->seen & (1u << proc))) {
		struct blk_event n;
		char comm[16];

		memset(&n, 0, sizeof(n));
		proc_comm(proc, cpu, comm);
		n.time = ev->time;
		n.action = BLK_TN_ACTION(BLK_TN_PROCESS);
		n.pdu = (const unsigned char *)comm;
		n.pdu_len = sizeof(comm);
		emit(g, dev, cpu, proc, &n);
		s->seen |= 1u << proc;
		if (g->done)
			return;
	}
	if (ev->time <= g->clock)
		ev->time = g->clock + 1;
	g->clock = ev->time;
	ev->version = g->o->v2 ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION;
	ev->sequence = notify ? 0 : ++s->seq;
	ev->device = g->devs[dev].dev;
	ev->cpu = cpu;
	ev->pid = proc_pid(proc, cpu);
	write_record(g, s, ev);
	if (++g->written >= g->o->events)
		g->done = 1;
}

static uint64_t code_cat(unsigned int code)
{
	switch (code) {
	case BLK_TA_REQUEUE:
		return TC(REQUEUE);
	case BLK_TA_ISSUE:
		return TC(ISSUE);
	case BLK_TA_COMPLETE:
		return TC(COMPLETE);
	case BLK_TA_SPLIT:
	case BLK_TA_BOUNCE:
		return 0;
	default:
		return TC(QUEUE);
	}
}

/* A short pause between two records of the same code path. */
uint64_t rec_gap(struct gen *g)
{
	return rnd_range(&g->r, 150, one_in(&g->r, 8) ? 40000 : 4000);
}

/* Write one I/O record now (c->t) and move c->t a little past it. */
void rec_io(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
	    uint32_t bytes, uint16_t error, const void *pdu, unsigned int pdu_len)
{
	struct blk_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.time = c->t;
	ev.action = code | code_cat(code) | cats;
	ev.sector = sector;
	ev.bytes = bytes;
	ev.error = error;
	ev.pdu = pdu;
	ev.pdu_len = (uint16_t)pdu_len;
	emit(g, c->dev, c->cpu, c->proc, &ev);
	c->t = ev.time + rec_gap(g);
}

/* The same with an 8-byte big-endian payload @val. */
void rec_io_u64(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
		uint32_t bytes, uint64_t val)
{
	unsigned char pdu[8];

	for (int i = 0; i < 8; i++)
		pdu[i] = (unsigned char)(val >> (56 - 8 * i));
	rec_io(g, c, code, cats, sector, bytes, 0, pdu, sizeof(pdu));
}

/* Write one notify record now (c->t) and move c->t a little past it. */
void rec_note(struct gen *g, struct gen_ctx *c, unsigned int code, const void *pdu,
	      unsigned int pdu_len)
{
	struct blk_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.time = c->t;
	ev.action = BLK_TN_ACTION(code);
	ev.pdu = pdu;
	ev.pdu_len = (uint16_t)pdu_len;
	emit(g, c->dev, c->cpu, c->proc, &ev);
	c->t = ev.time + rec_gap(g);
}

/* A record of request @rq: with its CDB as payload when it is a passthrough request. */
void rec_rq(struct gen *g, struct gen_ctx *c, unsigned int code, const struct gen_req *rq,
	    uint64_t cats, uint64_t sector, uint32_t bytes, uint16_t error)
{
	if (rq->cdb)
		rec_io(g, c, code, cats, sector, bytes, error, cdbs[rq->cdb].cdb,
		       cdbs[rq->cdb].len);
	else
		rec_io(g, c, code, cats, sector, bytes, error, NULL, 0);
}

/* ---- the files ---- */

static void mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		die("path too long: '%s'", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			die("cannot create directory '%s': %s", buf, strerror(errno));
		*p = '/';
	}
}

void streams_open(struct gen *g)
{
	const struct gen_opts *o = g->o;
	char path[4096];

	for (unsigned int d = 0; d < o->devices; d++) {
		struct gen_dev *dev = &g->devs[d];
		unsigned int major = d < 16 ? 8 : 65 + (d - 16) / 16;
		unsigned int minor = (d % 16) * 16;

		dev->dev = BLK_MKDEV(major, minor);
		dev->part = BLK_MKDEV(major, minor + 1);
		for (unsigned int c = 0; c < o->cpus; c++) {
			struct gen_stream *s = &g->streams[d * o->cpus + c];
			char num[16] = "";
			int n;

			if (o->pipe) {
				s->chunk = malloc(CHUNK + REC_MAX);
				if (!s->chunk)
					die("out of memory");
				continue;
			}
			if (o->devices > 1)
				snprintf(num, sizeof(num), "%u", d);
			if (o->name[0] == '/' || !o->dir)
				n = snprintf(path, sizeof(path), "%s%s.blktrace.%u", o->name, num,
					     c);
			else
				n = snprintf(path, sizeof(path), "%s/%s%s.blktrace.%u", o->dir,
					     o->name, num, c);
			if (n < 0 || (size_t)n >= sizeof(path))
				die("output path too long for '%s'", o->name);
			mkdirs(path);
			s->out = blk_output_open(path, 0);
			if (!s->out)
				die("cannot create '%s': %s", path, strerror(errno));
		}
	}
	if (o->pipe) {
		g->pipe_out = blk_output_open("-", 0);
		if (!g->pipe_out)
			die("cannot write to standard output: %s", strerror(errno));
	}
}

int streams_close(struct gen *g)
{
	size_t n = (size_t)g->o->devices * g->o->cpus;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct gen_stream *s = &g->streams[i];

		if (s->out && blk_output_finish(s->out) < 0) {
			fprintf(stderr, "gentrace: %s\n", blk_output_error(s->out));
			ret = -1;
		}
		blk_output_free(s->out);
		free(s->chunk);
	}
	if (g->pipe_out) {
		if (blk_output_finish(g->pipe_out) < 0) {
			fprintf(stderr, "gentrace: %s\n", blk_output_error(g->pipe_out));
			ret = -1;
		}
		blk_output_free(g->pipe_out);
	}
	return ret;
}
