// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse's I/O wait notes: side files merged on their own (the classic tool never opens
 * them, so -t's model of its memory must not see them either), in-band notes queued, both
 * handed out in time order between the events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "blk/iowait.h"
#include "blk/merge.h"
#include "blk/reader.h"
#include "parse-iowait.h"

struct parse_waits {
	struct parse_waits_opts o;
	struct blk_merge *m; /* the side files, NULL until one is found */
	struct blk_iowait_queue *q; /* in-band notes */
	int have_la; /* la: the next record of m */
	struct blk_event la;
	unsigned char *la_pdu;
	size_t la_cap;
	uint64_t last_rebase;
	uint64_t emitted, early, damaged, full, bad_cpu, others;
	struct blk_strbuf line; /* a wait's line, for the print queue */
};

struct parse_waits *parse_waits_new(const struct parse_waits_opts *o)
{
	struct parse_waits *w;

	if (!o->print && !o->dump)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->q = blk_iowait_queue_new(0)))
		die("out of memory");
	w->o = *o;
	return w;
}

void parse_waits_free(struct parse_waits *w)
{
	if (!w)
		return;
	blk_merge_free(w->m);
	blk_iowait_queue_free(w->q);
	free(w->la_pdu);
	blk_strbuf_release(&w->line);
	free(w);
}

/* side files: every record is merged; a record on the wrong CPU is counted */
static int on_side_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
			  const struct blk_event *ev)
{
	struct parse_waits *w = arg;

	(void)owner;
	(void)cpu;
	(void)ev;
	if (what == BLK_NOTE_BAD_CPU)
		w->bad_cpu++;
	return 0;
}

int parse_waits_add_files(struct parse_waits *w, const char *dir, const char *name)
{
	char path[8192];
	int opened = 0;

	if (!w)
		return 0;
	for (int cpu = 0;; cpu++) {
		struct blk_reader *rd;
		struct stat st;

		snprintf(path, sizeof(path), "%s%s%s.iowait.blktrace.%d", dir ? dir : "",
			 dir ? "/" : "", name, cpu);
		if (stat(path, &st))
			break;
		if (!st.st_size)
			continue;
		if (!w->m && !(w->m = blk_merge_new(w->o.batch, on_side_record, w)))
			die("out of memory");
		rd = blk_reader_open(path);
		if (!rd)
			die("cannot open '%s': %s", path, strerror(errno));
		if (blk_merge_add(w->m, rd, NULL, cpu))
			die("out of memory");
		opened++;
	}
	return opened;
}

/* Print and dump @ev with @rebase subtracted. Return 0 or -EIO (dump failed). */
static int emit_one(struct parse_waits *w, const struct blk_event *ev, uint64_t rebase)
{
	struct blk_output *text = w->o.text;
	struct blk_iowait_pdu pdu;
	struct blk_event e = *ev;
	int ret;

	if (!blk_event_is_iowait(ev)) {
		w->others++;
		return 0;
	}
	ret = blk_iowait_rebase(&e, &pdu, rebase);
	if (ret == -ERANGE) {
		/* it ended before the first event: a merged trace has no time for it */
		w->early++;
		return 0;
	}
	if (ret) {
		/* carried as it is, as any note the reader does not know */
		w->damaged++;
		if (w->o.dump && blk_output_event(w->o.dump, ev))
			return -EIO;
		return 0;
	}
	if (e.time < w->o.stop_start || e.time > w->o.stop_end)
		return 0;
	w->emitted++;
	if (w->o.print && w->o.q) {
		/* in order with the event lines the printing thread renders into the output */
		blk_iowait_format(&e, &w->line);
		ret = blk_printq_text(w->o.q, w->line.buf, w->line.len);
		blk_strbuf_reset(&w->line);
		if (ret)
			return -EIO;
	} else if (w->o.print && text) {
		blk_iowait_format(&e, blk_output_sb(text));
		if (blk_output_check(text))
			return -EIO;
	}
	if (w->o.dump && blk_output_event(w->o.dump, &e))
		return -EIO;
	return 0;
}

void parse_waits_take(struct parse_waits *w, const struct blk_event *ev)
{
	struct blk_event first;
	int ret;

	if (!w)
		return;
	ret = blk_iowait_queue_push(w->q, ev);
	if (ret == 1) {
		/* the events lag far behind: the earliest goes out now, maybe out of order */
		w->full++;
		if (blk_iowait_queue_peek(w->q, &first))
			emit_one(w, &first, w->last_rebase);
		blk_iowait_queue_pop(w->q);
		ret = blk_iowait_queue_push(w->q, ev);
	}
	if (ret < 0)
		die("out of memory");
}

/* the side files' next record into w->la (copied: the merge reuses its buffer) */
static int fill_lookahead(struct parse_waits *w)
{
	struct blk_event ev;
	void *owner;
	int cpu;

	if (w->have_la || !w->m)
		return w->have_la;
	if (blk_merge_next(w->m, &ev, &owner, &cpu) <= 0)
		return 0;
	if (ev.pdu_len > w->la_cap) {
		unsigned char *n = realloc(w->la_pdu, ev.pdu_len);

		if (!n)
			die("out of memory");
		w->la_pdu = n;
		w->la_cap = ev.pdu_len;
	}
	if (ev.pdu_len)
		memcpy(w->la_pdu, ev.pdu, ev.pdu_len);
	w->la = ev;
	w->la.pdu = w->la_pdu;
	w->have_la = 1;
	return 1;
}

/* parse_waits_emit() when a wait may be due: apart, so that the common case is a short call */
static int __attribute__((noinline))
emit_until(struct parse_waits *w, uint64_t until, uint64_t rebase)
{
	for (;;) {
		struct blk_event qe;
		int in_q = blk_iowait_queue_peek(w->q, &qe), in_f = fill_lookahead(w);
		int ret;

		if (in_f && (!in_q || w->la.time <= qe.time)) {
			if (w->la.time > until)
				return 0;
			w->have_la = 0;
			ret = emit_one(w, &w->la, rebase);
		} else if (in_q) {
			if (qe.time > until)
				return 0;
			ret = emit_one(w, &qe, rebase);
			blk_iowait_queue_pop(w->q);
		} else {
			return 0;
		}
		if (ret)
			return ret;
	}
}

int parse_waits_emit(struct parse_waits *w, uint64_t until, uint64_t rebase)
{
	if (!w)
		return 0;
	w->last_rebase = rebase;
	/* nothing held and no side files (no in-band waits so far): the common case */
	if (!w->m && !blk_iowait_queue_len(w->q))
		return 0;
	return emit_until(w, until, rebase);
}

uint64_t parse_waits_due(struct parse_waits *w)
{
	struct blk_event qe;
	uint64_t t = UINT64_MAX;

	if (!w || (!w->m && !blk_iowait_queue_len(w->q)))
		return UINT64_MAX;
	if (blk_iowait_queue_peek(w->q, &qe))
		t = qe.time;
	if (fill_lookahead(w) && w->la.time < t)
		t = w->la.time;
	return t;
}

void parse_waits_report(struct parse_waits *w)
{
	if (!w)
		return;
	for (unsigned int i = 0; w->m && i < blk_merge_nerrors(w->m); i++)
		error("%s", blk_merge_error(w->m, i));
	if (w->early)
		warning("%llu I/O waits ended before the trace's first event and were left out (a merged trace has no time for them)",
			(unsigned long long)w->early);
	if (w->damaged)
		warning("%llu I/O wait notes have a payload this blkparse cannot read; they were not printed (the dump carries them as they are)",
			(unsigned long long)w->damaged);
	if (w->full)
		warning("%llu I/O waits were handed out ahead of their events (more than 65536 waited for the events to catch up)",
			(unsigned long long)w->full);
	if (w->bad_cpu)
		warning("%llu records of the I/O wait files were dropped because their cpu field did not match their file",
			(unsigned long long)w->bad_cpu);
	if (w->others)
		warning("%llu records of the I/O wait files are not I/O wait notes and were skipped",
			(unsigned long long)w->others);
}
