// SPDX-License-Identifier: GPL-2.0
/* blkparse's summaries: per device and CPU, and per process (lib/acct.c counts them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acct-int.h"
#include "blk/acct.h"

/* The classic size ladder: values above 1,000,000 are divided by 1000 with a suffix. */
static void size_cnv(struct blk_strbuf *sb, uint64_t num, int in_kb)
{
	static const char suff[] = {'\0', 'K', 'M', 'G', 'P'};
	unsigned int i = in_kb ? 1 : 0;

	while (num > 1000 * 1000ull && i < sizeof(suff) - 1) {
		i++;
		num /= 1000;
	}
	blk_strbuf_addf(sb, "%'8llu", (unsigned long long)num);
	if (suff[i])
		blk_strbuf_addch(sb, suff[i]);
}

static void pair(struct blk_strbuf *sb, const char *l, uint64_t lc, uint64_t lkb, const char *r,
		 uint64_t rc, uint64_t rkb)
{
	blk_strbuf_addstr(sb, l);
	size_cnv(sb, lc, 0);
	blk_strbuf_add(sb, ", ", 2);
	size_cnv(sb, lkb, 1);
	blk_strbuf_add(sb, "iB\t", 3);
	blk_strbuf_addstr(sb, r);
	size_cnv(sb, rc, 0);
	blk_strbuf_add(sb, ", ", 2);
	size_cnv(sb, rkb, 1);
	blk_strbuf_add(sb, "iB\n", 3);
}

static void pair_count(struct blk_strbuf *sb, const char *l, uint64_t lc, const char *r,
		       uint64_t rc)
{
	blk_strbuf_addstr(sb, l);
	size_cnv(sb, lc, 0);
	blk_strbuf_add(sb, "\t\t", 2);
	blk_strbuf_addstr(sb, r);
	size_cnv(sb, rc, 0);
	blk_strbuf_addch(sb, '\n');
}

static void dump_io_stats(struct blk_strbuf *sb, const struct blk_acct_dev *d,
			  const struct io_stats *s, const char *title)
{
	blk_strbuf_addstr(sb, title);
	blk_strbuf_addch(sb, '\n');
	pair(sb, " Reads Queued:    ", s->qreads, s->qread_kb + (s->qread_b >> 10),
	     " Writes Queued:    ", s->qwrites, s->qwrite_kb + (s->qwrite_b >> 10));
	pair(sb, " Read Dispatches: ", s->ireads, s->iread_kb + (s->iread_b >> 10),
	     " Write Dispatches: ", s->iwrites, s->iwrite_kb + (s->iwrite_b >> 10));
	pair_count(sb, " Reads Requeued:  ", s->rrqueue, " Writes Requeued:  ", s->wrqueue);
	pair(sb, " Reads Completed: ", s->creads, s->cread_kb + (s->cread_b >> 10),
	     " Writes Completed: ", s->cwrites, s->cwrite_kb + (s->cwrite_b >> 10));
	pair(sb, " Read Merges:     ", s->mreads, s->mread_kb + (s->mread_b >> 10),
	     " Write Merges:     ", s->mwrites, s->mwrite_kb + (s->mwrite_b >> 10));
	if (d) {
		blk_strbuf_addf(sb, " Read depth:      %'8u%8c\t", (unsigned int)d->max_depth[0],
				' ');
		blk_strbuf_addf(sb, " Write depth:      %'8u\n", (unsigned int)d->max_depth[1]);
	}
	if (s->qreads_pc || s->qwrites_pc || s->ireads_pc || s->iwrites_pc || s->rrqueue_pc ||
	    s->wrqueue_pc || s->creads_pc || s->cwrites_pc) {
		pair(sb, " PC Reads Queued: ", s->qreads_pc, s->qread_kb_pc + (s->qread_b_pc >> 10),
		     " PC Writes Queued: ", s->qwrites_pc,
		     s->qwrite_kb_pc + (s->qwrite_b_pc >> 10));
		pair(sb, " PC Read Disp.:   ", s->ireads_pc, s->iread_kb_pc + (s->iread_b_pc >> 10),
		     " PC Write Disp.:   ", s->iwrites_pc,
		     s->iwrite_kb_pc + (s->iwrite_b_pc >> 10));
		pair_count(sb, " PC Reads Req.:   ", s->rrqueue_pc,
			   " PC Writes Req.:   ", s->wrqueue_pc);
		pair_count(sb, " PC Reads Compl.: ", s->creads_pc,
			   " PC Writes Compl.: ", s->cwrites_pc);
	}
	blk_strbuf_addf(sb, " IO unplugs:      %'8llu%8c\t", (unsigned long long)s->io_unplugs,
			' ');
	blk_strbuf_addf(sb, " Timer unplugs:    %'8llu\n", (unsigned long long)s->timer_unplugs);
}

static void sum_stats(struct io_stats *t, const struct io_stats *s)
{
	const uint64_t *src = (const uint64_t *)s;
	uint64_t *dst = (uint64_t *)t;

	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

static void dev_name(const struct blk_acct_dev *d, char *buf, size_t len)
{
	if (d->name)
		snprintf(buf, len, "%s", d->name);
	else
		snprintf(buf, len, "%u,%u", BLK_MAJOR(d->devno), BLK_MINOR(d->devno));
}

void blk_acct_print_devs(struct blk_acct *a, struct blk_strbuf *sb)
{
	for (unsigned int i = 0; i < a->ndevs; i++) {
		struct blk_acct_dev *d = a->devs[i];
		struct io_stats total;
		char name[4096], title[4200];
		unsigned int blocks = 0;
		uint64_t msec, rrate = 0, wrate = 0;
		double ratio;

		memset(&total, 0, sizeof(total));
		dev_name(d, name, sizeof(name));
		if (i > 0)
			blk_strbuf_addch(sb, '\n');
		for (unsigned int c = 0; c < d->nchunks * CPU_CHUNK; c++) {
			struct acct_cpu *pc = cpu_at(d, c);

			if (!d->cpus[c / CPU_CHUNK]) {
				c |= CPU_CHUNK - 1; /* a chunk never used: skip it whole */
				continue;
			}
			if (!pc->nelems)
				continue;
			sum_stats(&total, &pc->ios);
			snprintf(title, sizeof(title), "CPU%u (%s):", c, name);
			dump_io_stats(sb, d, &pc->ios, title);
			blocks++;
		}
		if (blocks > 1) {
			blk_strbuf_addch(sb, '\n');
			snprintf(title, sizeof(title), "Total (%s):", name);
			dump_io_stats(sb, NULL, &total, title);
		}
		msec = (d->last_time - d->first_time) / 1000000;
		if (msec) {
			rrate = (1000 * total.cread_kb + total.cread_b) / msec;
			wrate = (1000 * total.cwrite_kb + total.cwrite_b) / msec;
		}
		blk_strbuf_addf(sb, "\nThroughput (R/W): %lluKiB/s / %lluKiB/s\n",
				(unsigned long long)rrate, (unsigned long long)wrate);
		blk_strbuf_addf(sb, "Events (%s): %'llu entries\n", name,
				(unsigned long long)d->events);
		if (!d->skips && !d->events)
			ratio = 0.0;
		else
			ratio = 100.0 * ((double)d->seq_skips / (double)(d->events + d->seq_skips));
		blk_strbuf_addf(sb, "Skips: %'llu forward (%'llu - %5.1lf%%)\n",
				(unsigned long long)d->skips, (unsigned long long)d->seq_skips,
				ratio);
	}
}

static uint64_t sort_value(const struct proc *p, char key)
{
	const struct io_stats *s = &p->ios;

	switch (key) {
	case 'Q':
		return s->qread_kb + s->qwrite_kb;
	case 'q':
		return s->qreads + s->qwrites;
	case 'R':
		return s->qread_kb;
	case 'r':
		return s->qreads;
	case 'W':
		return s->qwrite_kb;
	case 'w':
		return s->qwrites;
	case 'C':
		return s->cread_kb + s->cwrite_kb;
	case 'c':
		return s->creads + s->cwrites;
	default:
		return 0;
	}
}

static int proc_cmp(const void *x, const void *y, void *arg)
{
	const struct proc *a = *(const struct proc *const *)x;
	const struct proc *b = *(const struct proc *const *)y;
	char key = *(const char *)arg;
	int r;

	if (key && key != 'N') {
		uint64_t va = sort_value(a, key), vb = sort_value(b, key);

		if (va != vb)
			return va < vb ? -1 : 1;
	}
	r = strverscmp(a->comm, b->comm);
	if (r)
		return r;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

void blk_acct_print_procs(struct blk_acct *a, struct blk_strbuf *sb)
{
	struct proc **v = malloc((a->nprocs ? a->nprocs : 1) * sizeof(*v));

	if (!v)
		return;
	if (a->nprocs)
		memcpy(v, a->procs, a->nprocs * sizeof(*v));
	qsort_r(v, a->nprocs, sizeof(*v), proc_cmp, &a->o.sort_key);
	for (size_t i = 0; i < a->nprocs; i++) {
		struct proc *p = v[i];
		char title[64];

		if (p->more_than_one)
			snprintf(title, sizeof(title), "%s (%u, ...)", p->comm, p->pid);
		else
			snprintf(title, sizeof(title), "%s (%u)", p->comm, p->pid);
		dump_io_stats(sb, NULL, &p->ios, title);
		blk_strbuf_addf(sb, " Allocation wait: %'8llu%8c\t",
				(unsigned long long)(p->longest_allocation_wait[0] / 1000), ' ');
		blk_strbuf_addf(sb, " Allocation wait:  %'8llu\n",
				(unsigned long long)(p->longest_allocation_wait[1] / 1000));
		blk_strbuf_addf(sb, " Dispatch wait:   %'8llu%8c\t",
				(unsigned long long)(p->longest_dispatch_wait[0] / 1000), ' ');
		blk_strbuf_addf(sb, " Dispatch wait:    %'8llu\n",
				(unsigned long long)(p->longest_dispatch_wait[1] / 1000));
		blk_strbuf_addf(sb, " Completion wait: %'8llu%8c\t",
				(unsigned long long)(p->longest_completion_wait[0] / 1000), ' ');
		blk_strbuf_addf(sb, " Completion wait:  %'8llu\n",
				(unsigned long long)(p->longest_completion_wait[1] / 1000));
	}
	blk_strbuf_addch(sb, '\n');
	free(v);
}
