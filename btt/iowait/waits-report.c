// SPDX-License-Identifier: GPL-2.0
/*
 * The section "I/O wait by process" (waits.h): the processes that waited, their devices,
 * the waits on others' I/O, and what could not be counted.
 */
#include <stdlib.h>
#include <string.h>

#include "blk/hist.h"
#include "btt.h"
#include "common.h"
#include "iowait/waits-int.h"
#include "iowait/waits.h"
#include "model/alloc.h"

/* a process with what its threads did per device */
struct prow {
	const struct proc *p;
	struct tdev *devs;
	size_t ndevs, adevs;
};

static int by_wait_time(const void *x, const void *y)
{
	const struct proc *a = ((const struct prow *)x)->p, *b = ((const struct prow *)y)->p;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->tgid < b->tgid ? -1 : a->tgid > b->tgid;
}

static int by_dev(const void *x, const void *y)
{
	uint32_t a = ((const struct tdev *)x)->dev, b = ((const struct tdev *)y)->dev;

	return a < b ? -1 : a > b;
}

static struct prow *fold(const struct waits *w)
{
	struct prow *rows = xcalloc(w->npr ? w->npr : 1, sizeof(*rows));

	for (size_t i = 0; i < w->npr; i++)
		rows[i].p = &w->pr[i];
	for (size_t i = 0; i < w->nth; i++) {
		const struct thread *t = &w->th[i];
		int32_t pi = t->proc;
		uint64_t *v;

		/* a thread that never waited belongs to the process it leads, if that waited */
		if (pi < 0 && (v = u64map_get(&w->pmap, (uint64_t)t->tid + 1)))
			pi = (int32_t)*v;
		if (pi < 0)
			continue;
		for (size_t k = 0; k < t->ndevs; k++) {
			const struct tdev *s = &t->devs[k];
			struct tdev *d = waits_tdev_of(&rows[pi].devs, &rows[pi].ndevs,
						       &rows[pi].adevs, s->dev);

			d->ios += s->ios;
			d->nq2c += s->nq2c;
			d->q2c += s->q2c;
			d->d2c += s->d2c;
			d->nd2c += s->nd2c;
			d->waits += s->waits;
			d->wait_ns += s->wait_ns;
		}
	}
	/* (qsort() of nothing: a process without devices may have no array) */
	for (size_t i = 0; i < w->npr; i++)
		if (rows[i].ndevs)
			qsort(rows[i].devs, rows[i].ndevs, sizeof(struct tdev), by_dev);
	if (w->npr)
		qsort(rows, w->npr, sizeof(*rows), by_wait_time);
	return rows;
}

static void sec(FILE *ofp, uint64_t ns)
{
	fprintf(ofp, " %13.9f", (double)ns / 1.0e9);
}

static void print_procs(const struct waits *w, const struct prow *rows, FILE *ofp)
{
	fprintf(ofp, "%8s %-16s | %7s %13s %13s %13s %13s | %13s %7s\n", "PID", "COMMAND", "WAITS",
		"TOTAL(s)", "P50(s)", "P99(s)", "MAX(s)", "OWN I/O(s)", "OWN");
	for (size_t i = 0; i < w->npr; i++) {
		const struct proc *p = rows[i].p;

		fprintf(ofp, "%8u %-16s | %7llu", p->tgid, p->comm, (unsigned long long)p->waits);
		sec(ofp, p->ns);
		sec(ofp, blk_hist_percentile(p->hist, 50));
		sec(ofp, blk_hist_percentile(p->hist, 99));
		sec(ofp, p->hist->max);
		fprintf(ofp, " |");
		sec(ofp, p->covered);
		fprintf(ofp, " %6.2f%%\n",
			p->ns ? 100.0 * (double)p->covered / (double)p->ns : 0.0);
		for (size_t k = 0; k < rows[i].ndevs; k++) {
			const struct tdev *d = &rows[i].devs[k];

			if (!d->ios)
				continue;
			fprintf(ofp, "%8s %-16s | %7llu I/Os  Q2C avg", "",
				w->devs->v[d->dev]->label, (unsigned long long)d->ios);
			if (d->nq2c)
				sec(ofp, d->q2c / d->nq2c);
			else
				fprintf(ofp, " %13s", "-");
			fprintf(ofp, "  D2C avg");
			if (d->nd2c)
				sec(ofp, d->d2c / d->nd2c);
			else
				fprintf(ofp, " %13s", "-");
			fputc('\n', ofp);
		}
	}
}

static void print_devs(const struct waits *w, const struct prow *rows, FILE *ofp)
{
	fprintf(ofp, "\n%10s | %7s %13s | %8s %-16s %7s %13s %7s\n", "DEV", "WAITS", "TOTAL(s)",
		"MOST PID", "COMMAND", "WAITS", "TOTAL(s)", "SHARE");
	for (size_t i = 0; i < w->devs->nout; i++) {
		uint32_t dev = w->devs->out[i]->idx;
		uint64_t n = 0, ns = 0;
		const struct prow *top = NULL;
		const struct tdev *topd = NULL;

		for (size_t r = 0; r < w->npr; r++)
			for (size_t k = 0; k < rows[r].ndevs; k++) {
				const struct tdev *d = &rows[r].devs[k];

				if (d->dev != dev || !d->waits)
					continue;
				n += d->waits;
				ns += d->wait_ns;
				/* rows are by wait time, then pid: the first of the most wins */
				if (!topd || d->wait_ns > topd->wait_ns) {
					top = &rows[r];
					topd = d;
				}
			}
		fprintf(ofp, "%10s | %7llu", w->devs->out[i]->label, (unsigned long long)n);
		sec(ofp, ns);
		if (!topd) {
			fprintf(ofp, " | %8s\n", "-");
			continue;
		}
		fprintf(ofp, " | %8u %-16s %7llu", top->p->tgid, top->p->comm,
			(unsigned long long)topd->waits);
		sec(ofp, topd->wait_ns);
		fprintf(ofp, " %6.2f%%\n", ns ? 100.0 * (double)topd->wait_ns / (double)ns : 0.0);
	}
}

/*
 * The waits of each process on other tasks' I/O (the sched source: woken by a task that
 * queued I/O on a traced device while it slept: a journal thread's commit ending an fsync),
 * and the sleeps no source tied to an I/O (blktrace --iowait-all)
 */
static void print_others(const struct waits *w, const struct prow *rows, FILE *ofp)
{
	int any = 0;

	for (size_t i = 0; i < w->npr; i++)
		any |= rows[i].p->others_waits || rows[i].p->untied_waits;
	if (!any)
		return;
	fprintf(ofp, "\n%8s %-16s | %7s %13s | %8s %-16s %7s %13s | %13s\n", "PID", "COMMAND",
		"WAITS", "ON OTHERS(s)", "WOKEN BY", "COMMAND", "WAITS", "TOTAL(s)", "NOT TIED(s)");
	for (size_t i = 0; i < w->npr; i++) {
		const struct proc *p = rows[i].p;

		if (!p->others_waits && !p->untied_waits)
			continue;
		fprintf(ofp, "%8u %-16s | %7llu", p->tgid, p->comm,
			(unsigned long long)p->others_waits);
		sec(ofp, p->others_ns);
		for (size_t k = 0; k < p->nwk || k == 0; k++) {
			if (k)
				fprintf(ofp, "%8s %-16s | %7s %13s", "", "", "", "");
			if (k < p->nwk) {
				fprintf(ofp, " | %8u %-16s %7llu", p->wk[k].tid, p->wk[k].comm,
					(unsigned long long)p->wk[k].waits);
				sec(ofp, p->wk[k].ns);
			} else {
				fprintf(ofp, " | %8s %-16s %7s %13s", "-", "", "", "");
			}
			fprintf(ofp, " |");
			if (k == 0 && (w->no_io || p->untied_waits))
				sec(ofp, p->untied_ns);
			else
				fprintf(ofp, " %13s", "-");
			fputc('\n', ofp);
		}
	}
}

static void print_notes(const struct waits *w, FILE *ofp)
{
	static const char *const src[] = {"unknown", "module", "kprobe", "sched"};
	int first = 1;

	fprintf(ofp, "\nWaits from:");
	for (unsigned int s = 0; s < 4; s++)
		if (w->sources & (1u << s)) {
			fprintf(ofp, "%s %s", first ? "" : ",", src[s]);
			first = 0;
		}
	if (first)
		fprintf(ofp, " none");
	fputc('\n', ofp);
	if (w->sources & (1u << BLK_IOWAIT_SRC_SCHED))
		fprintf(ofp,
			"  (sched: uninterruptible sleeps during which the task had an I/O of its own in flight)\n");
	if (w->others)
		fprintf(ofp,
			"  (and %llu sleeps without: the task that woke them had queued I/O on a traced device meanwhile; ON OTHERS above: a journal thread (jbd2/...) is a commit an fsync waited for)\n",
			(unsigned long long)w->others);
#define NOTE(v, text)                                                             \
	do {                                                                      \
		if (v)                                                            \
			fprintf(ofp, "%llu " text "\n", (unsigned long long)(v)); \
	} while (0)
	if (w->replay_errno)
		fprintf(ofp,
			"the trace could not be read again for its I/Os before the first wait note (%s): those are not counted\n",
			strerror(w->replay_errno));
	NOTE(w->no_dev, "waits ended by no I/O of a traced device (in no device's line)");
	NOTE(w->no_io,
	     "sleeps tied to no I/O (blktrace --iowait-all): not counted in WAITS; NOT TIED above");
	if (w->untied_ns)
		fprintf(ofp, "%.9f s of them of processes with no counted wait\n",
			(double)w->untied_ns / 1.0e9);
	NOTE(w->outside, "waits outside the -t/-T window: not counted");
	NOTE(w->bad, "I/O wait notes could not be read (damaged, or a newer version): not counted");
	NOTE(w->untracked,
	     "waits or I/Os of processes or threads past the tables' bounds: not counted");
	NOTE(w->approx,
	     "waits of threads that completed many I/Os without waiting may have had more own-I/O time than shown (older I/Os are forgotten)");
	NOTE(w->overflow, "I/Os queued past a thread's in-flight bound were not followed");
	NOTE(w->nomem, "events the model of every bio could not take whole (out of memory)");
	NOTE(w->classic_lost,
	     "I/Os queued before the first wait note never completed as btt 2.09 pairs them (split bios): not in the Q2C and D2C averages");
#undef NOTE
}

void waits_print(const struct waits *w, FILE *ofp)
{
	struct prow *rows;

	fprintf(ofp, "==================== I/O wait by process ====================\n\n");
	if (!w->notes) {
		fprintf(ofp,
			"No I/O wait notes in this trace (blktrace --iowait records them).\n\n");
		return;
	}
	rows = fold(w);
	print_procs(w, rows, ofp);
	print_devs(w, rows, ofp);
	print_others(w, rows, ofp);
	print_notes(w, ofp);
	fputc('\n', ofp);
	for (size_t i = 0; i < w->npr; i++)
		free(rows[i].devs);
	free(rows);
}
