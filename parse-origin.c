// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse's origin notes (see parse-origin.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "blk/merge.h"
#include "blk/reader.h"
#include "parse-origin.h"
#include "blk/reader.h"

/*
 * the most notes waiting for their time (some 7 MB): past it the oldest is taken at once (a
 * filter that prints few events leaves them waiting; blkparse reads some 512 records ahead
 * per input)
 */
#define PO_MAX_WAITING (1u << 16)
/* the I/Os remembered from their Q to their C, by device and first sector */
#define PO_SLOTS 4096

struct slot {
	uint32_t device;
	uint64_t sector;
	int used;
	struct blk_fmt_origin o;
};

/* a DIRTY or FMAP note waiting for its time */
struct pnote {
	const void *input; /* the input it was read from (file mode), or NULL */
	struct blk_event ev;
	unsigned char pdu[40]; /* its payload (what the note's struct holds of it) */
};

/* the notes of one device and CPU waiting, in the order read (their stream's) */
struct stream {
	uint32_t device, cpu;
	struct pnote *q;
	size_t head, n, cap; /* q[head .. n) wait */
};

struct parse_origin {
	struct blk_origin *notes;
	struct stream *st;
	size_t nst, ast, waiting;
	struct slot slot[PO_SLOTS];
	struct blk_fmt_origin cur;
	struct blk_output *dump; /* -d: the notes written as taken */
	int no_apply; /* -d without text: only written */
	int names_ahead; /* the inputs' FILE notes were taken ahead: not again as read */
	int dump_failed;
	/*
	 * the side files (NAME.origin.blktrace.N), NULL if none; la: their next record (in the
	 * merge's batch, valid until the next take), NULL if not taken yet
	 */
	struct blk_merge *side;
	struct blk_event *la;
	uint64_t side_bad_cpu, side_others;
};

struct parse_origin *parse_origin_new(void)
{
	struct parse_origin *p = calloc(1, sizeof(*p));

	if (!p || !(p->notes = blk_origin_new()))
		die("out of memory for the origin notes");
	return p;
}

void parse_origin_free(struct parse_origin *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nst; i++)
		free(p->st[i].q);
	free(p->st);
	blk_origin_free(p->notes);
	blk_merge_free(p->side);
	free(p);
}

static void take(struct parse_origin *p, const struct blk_event *ev)
{
	/* a FILE note was written as read; the runs and maps now, in their place */
	if (p->dump && !blk_event_is_file(ev) && blk_output_event(p->dump, ev))
		p->dump_failed = 1;
	if (!p->no_apply && !(p->names_ahead && blk_event_is_file(ev)) &&
	    blk_origin_note(p->notes, ev) == -ENOMEM)
		die("out of memory for the origin notes");
}

/*
 * The FILE notes of @path taken (and with @dump, written into the dump, ahead of the runs
 * and maps: the tracer writes them at the end). A damaged record ends it: the run itself, or
 * the merge, says where. 0, or -errno when @path cannot be opened.
 */
static int read_names(struct parse_origin *p, const char *path, int dump)
{
	struct blk_reader *rd = blk_reader_open(path);
	struct blk_event ev;

	if (!rd)
		return -errno;
	while (blk_reader_next(rd, &ev) > 0) {
		if (!blk_event_is_file(&ev))
			continue;
		if (dump && p->dump && blk_output_event(p->dump, &ev))
			p->dump_failed = 1;
		if (!p->no_apply && blk_origin_note(p->notes, &ev) == -ENOMEM)
			die("out of memory for the origin notes");
	}
	blk_reader_close(rd);
	return 0;
}

void parse_origin_names_ahead(struct parse_origin *p, char *const *paths, size_t n)
{
	/* (a file that cannot be read: the run itself says so when it gets there) */
	for (size_t i = 0; i < n && !p->no_apply; i++)
		if (!read_names(p, paths[i], 0))
			p->names_ahead = 1;
}

static struct stream *stream_of(struct parse_origin *p, uint32_t device, uint32_t cpu)
{
	struct stream *s;

	for (size_t i = 0; i < p->nst; i++)
		if (p->st[i].device == device && p->st[i].cpu == cpu)
			return &p->st[i];
	if (p->nst == p->ast) {
		p->ast = p->ast ? p->ast * 2 : 16;
		p->st = realloc(p->st, p->ast * sizeof(*p->st));
		if (!p->st)
			die("out of memory for the origin notes");
	}
	s = &p->st[p->nst++];
	memset(s, 0, sizeof(*s));
	s->device = device;
	s->cpu = cpu;
	return s;
}

/*
 * The notes due before event @ev of @input (read at input time @t), taken in time order:
 * those of time @t or before, and those read before it from the same input (a per-CPU file;
 * in pipe mode, or for a merged file, the one input). The first keeps the notes in step with
 * the events whatever the read-ahead; the second takes them no later than the order they
 * were written in, where their times are not the events' (a merged file of blkparse -d,
 * whose events are rebased and its notes not: there, in the order -d read them).
 */
static int due(const struct pnote *n, const struct blk_event *ev, const void *input, uint64_t t)
{
	return n->ev.time <= t || (n->input == input && n->ev.offset < ev->offset);
}

/* the stream whose next note is the earliest, of those due before @ev (all when @ev is NULL) */
static struct stream *earliest(struct parse_origin *p, const struct blk_event *ev,
			       const void *input, uint64_t t)
{
	struct stream *best = NULL;

	for (size_t i = 0; i < p->nst; i++) {
		struct stream *s = &p->st[i];

		if (s->head == s->n || (ev && !due(&s->q[s->head], ev, input, t)))
			continue;
		if (!best || s->q[s->head].ev.time < best->q[best->head].ev.time)
			best = s;
	}
	return best;
}

static void take_next(struct parse_origin *p, struct stream *s)
{
	s->q[s->head].ev.pdu = s->q[s->head].pdu;
	take(p, &s->q[s->head].ev);
	s->head++;
	p->waiting--;
}

/* the side files' next record into p->la; 0 when they have none left */
static int fill_lookahead(struct parse_origin *p)
{
	void *owner;
	int cpu;

	if (!p->la && p->side && blk_merge_take(p->side, &p->la, &owner, &cpu) <= 0)
		p->la = NULL;
	return p->la != NULL;
}

/*
 * The side files' runs and maps of input time @t or before, queued for their time as
 * in-band ones are (their names were taken when the files were opened)
 */
static void pull(struct parse_origin *p, uint64_t t)
{
	while (fill_lookahead(p) && p->la->time <= t) {
		const struct blk_event *n = p->la;

		p->la = NULL;
		if (blk_event_is_file(n))
			continue;
		if (!blk_event_is_dirty(n) && !blk_event_is_fmap(n)) {
			p->side_others++;
			continue;
		}
		/* (copied; no event's input is the merge: only the time says when it is due) */
		parse_origin_note(p, n, p->side);
	}
}

static void take_due(struct parse_origin *p, const struct blk_event *ev, const void *input,
		     uint64_t t)
{
	struct stream *s;

	if (p->side)
		pull(p, t);
	while (p->waiting && (s = earliest(p, ev, input, t)))
		take_next(p, s);
}

int parse_origin_note(struct parse_origin *p, const struct blk_event *ev, const void *input)
{
	struct stream *s;
	struct pnote *n;

	if (blk_event_is_file(ev)) {
		take(p, ev); /* a name: whenever it comes */
		return 1;
	}
	if (!blk_event_is_dirty(ev) && !blk_event_is_fmap(ev))
		return 0;
	s = stream_of(p, ev->device, ev->cpu);
	if (s->head && s->head * 2 >= s->n) {
		memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof(*s->q));
		s->n -= s->head;
		s->head = 0;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->q = realloc(s->q, s->cap * sizeof(*s->q));
		if (!s->q)
			die("out of memory for the origin notes");
	}
	n = &s->q[s->n++];
	n->input = input;
	n->ev = *ev;
	n->ev.pdu_len = ev->pdu_len < sizeof(n->pdu) ? ev->pdu_len : sizeof(n->pdu);
	memcpy(n->pdu, ev->pdu, n->ev.pdu_len);
	if (++p->waiting > PO_MAX_WAITING)
		take_next(p, earliest(p, NULL, NULL, 0));
	return 1;
}

static struct slot *slot_of(struct parse_origin *p, uint32_t device, uint64_t sector)
{
	uint64_t h = (sector ^ ((uint64_t)device << 40)) * 0x9e3779b97f4a7c15ull;

	return &p->slot[(h >> 40) % PO_SLOTS];
}

const struct blk_fmt_origin *parse_origin_event(struct parse_origin *p, const struct blk_event *ev,
						const void *input, uint64_t t, const char *comm)
{
	unsigned int code = (unsigned int)(ev->action & 0xffff);
	struct slot *s;

	if (blk_event_is_notify(ev))
		return NULL;
	take_due(p, ev, input, t);
	if (!ev->bytes)
		return NULL;
	s = slot_of(p, ev->device, ev->sector);
	if (code == BLK_TA_QUEUE) {
		struct blk_origin_query q = blk_origin_query_of(ev, comm);
		struct blk_origin_result r;

		blk_origin_io(p->notes, &q, &r);
		s->used = 1;
		s->device = ev->device;
		s->sector = ev->sector;
		s->o.pid = r.pid;
		s->o.name = r.kind == BLK_ORIGIN_JOURNAL || r.kind == BLK_ORIGIN_METADATA
				    ? blk_origin_kind_name(r.kind)
				    : r.name;
		s->o.has_file = r.has_file;
		s->o.ino = r.ino;
		s->o.offset = r.offset;
		s->o.path = r.path;
		return &s->o;
	}
	memset(&p->cur, 0, sizeof(p->cur));
	if (s->used && s->device == ev->device && s->sector == ev->sector) {
		p->cur = s->o;
		if (code == BLK_TA_COMPLETE)
			s->used = 0;
	}
	p->cur.has_file = blk_origin_file(p->notes, ev->device, ev->sector, &p->cur.ino,
					  &p->cur.offset, &p->cur.path);
	/* the file without the origin (its Q not remembered): %o %O print "-" */
	return p->cur.name || p->cur.has_file ? &p->cur : NULL;
}

void parse_origin_stats(const struct parse_origin *p, struct blk_origin_stats *st)
{
	blk_origin_stats(p->notes, st);
}

static void side_path(char *buf, size_t len, const char *dir, const char *name, int cpu)
{
	snprintf(buf, len, "%s%s%s.origin.blktrace.%d", dir ? dir : "", dir ? "/" : "", name, cpu);
}

int parse_origin_side_exists(const char *dir, const char *name)
{
	char path[8192];
	struct stat st;

	side_path(path, sizeof(path), dir, name, 0);
	return !stat(path, &st);
}

/* side files: every record is merged; a record on the wrong CPU is counted */
static int on_side_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
			  const struct blk_event *ev)
{
	struct parse_origin *p = arg;

	(void)owner;
	(void)cpu;
	(void)ev;
	if (what == BLK_NOTE_BAD_CPU)
		p->side_bad_cpu++;
	return 0;
}

int parse_origin_add_files(struct parse_origin *p, const char *dir, const char *name)
{
	char path[8192];
	int opened = 0, ret;

	for (int cpu = 0;; cpu++) {
		struct blk_reader *rd;
		struct stat st;

		side_path(path, sizeof(path), dir, name, cpu);
		if (stat(path, &st))
			break;
		if (!st.st_size)
			continue;
		/* its names first, so that every event can be named, as btt names them */
		ret = read_names(p, path, 1);
		if (ret < 0)
			die("cannot open '%s': %s", path, strerror(-ret));
		if (!p->side && !(p->side = blk_merge_new(512, on_side_record, p)))
			die("out of memory");
		rd = blk_reader_open(path);
		if (!rd)
			die("cannot open '%s': %s", path, strerror(errno));
		if (blk_merge_add(p->side, rd, NULL, cpu))
			die("out of memory");
		opened++;
	}
	return opened;
}

int parse_origin_side_report(const struct parse_origin *p)
{
	unsigned int n = p->side ? blk_merge_nerrors(p->side) : 0;

	for (unsigned int i = 0; i < n; i++)
		error("%s", blk_merge_error(p->side, i));
	if (n)
		hint("the origin notes after the damage are not read: those I/Os show no origin or file");
	if (p->side_bad_cpu)
		warning("%llu records of the origin files were dropped because their cpu field did not match their file",
			(unsigned long long)p->side_bad_cpu);
	if (p->side_others)
		warning("%llu records of the origin files are not origin notes and were skipped",
			(unsigned long long)p->side_others);
	return n > 0;
}

void parse_origin_set_dump(struct parse_origin *p, struct blk_output *dump, int apply)
{
	p->dump = dump;
	p->no_apply = !apply;
}

void parse_origin_emit(struct parse_origin *p, const struct blk_event *ev, const void *input,
		       uint64_t t)
{
	take_due(p, ev, input, t);
}

uint64_t parse_origin_due(struct parse_origin *p)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; p && i < p->nst; i++)
		if (p->st[i].head < p->st[i].n && p->st[i].q[p->st[i].head].ev.time < t)
			t = p->st[i].q[p->st[i].head].ev.time;
	if (p && fill_lookahead(p) && p->la->time < t)
		t = p->la->time;
	return t;
}

void parse_origin_emit_until(struct parse_origin *p, uint64_t t)
{
	struct stream *s;

	if (p->side)
		pull(p, t);
	while (p->waiting && (s = earliest(p, NULL, NULL, 0)) && s->q[s->head].ev.time <= t)
		take_next(p, s);
}

int parse_origin_flush(struct parse_origin *p)
{
	struct stream *s;

	if (p->side)
		pull(p, UINT64_MAX);
	while (p->waiting && (s = earliest(p, NULL, NULL, 0)))
		take_next(p, s);
	return p->dump_failed ? -EIO : 0;
}
