// SPDX-License-Identifier: GPL-2.0
/*
 * Optional outputs fed by the I/O model.
 */
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "iomodel.h"
#include "iostat.h"

#define UNPLUG_BUCKETS 21

/* per-device optional files */
struct dev_files {
	FILE *bno[3], *aqd, *pit;
	char *bno_fn[3], *aqd_fn;
	long aqd_n;
	uint64_t unplug[UNPLUG_BUCKETS];
};

static struct dev_files *files_of(struct dev *dip)
{
	static const char rwc[] = "rwc";
	struct dev_files *f = dip->files;
	char dev[64], fn[4096];

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		die("out of memory");
	snprintf(dev, sizeof(dev), "%u,%u", BLK_MAJOR(dip->device), BLK_MINOR(dip->device));
	if (dip->map_name)
		snprintf(dev, sizeof(dev), "%s", dip->map_name);
	for (int i = 0; opts.bno_name && i < 3; i++) {
		snprintf(fn, sizeof(fn), "%s_%s_%c.dat", opts.bno_name, dev, rwc[i]);
		f->bno[i] = file_create(fn, &f->bno_fn[i]);
	}
	if (opts.aqd_name) {
		snprintf(fn, sizeof(fn), "%s_%s_aqd.dat", opts.aqd_name, dev);
		f->aqd = file_create(fn, &f->aqd_fn);
	}
	if (opts.pit_name) {
		/* kept even when empty, as with the reference */
		snprintf(fn, sizeof(fn), "%s_pit.dat", dev);
		f->pit = file_create(fn, NULL);
	}
	dip->files = f;
	return f;
}

static void files_finish(struct dev *dip)
{
	struct dev_files *f = dip->files;
	char dev[64], fn[4096], *name = NULL;
	FILE *fp;

	if (!f)
		return;
	for (int i = 0; i < 3; i++)
		file_close(&f->bno[i], &f->bno_fn[i]);
	file_close(&f->aqd, &f->aqd_fn);
	file_close(&f->pit, NULL);
	if (opts.unplug_name) {
		dev_label(dip, dev, sizeof(dev), 0);
		snprintf(fn, sizeof(fn), "%s_%s.dat", opts.unplug_name, dev);
		fp = file_create(fn, &name);
		for (int i = 0; i < UNPLUG_BUCKETS; i++)
			fprintf(fp, "%d %llu\n", i, (unsigned long long)f->unplug[i]);
		file_close(&fp, &name);
	}
	free(f);
	dip->files = NULL;
}

static int want_files(void)
{
	return opts.bno_name || opts.aqd_name || opts.pit_name || opts.unplug_name;
}

static void aqd_step(struct dev *dip, uint64_t t, int delta)
{
	struct dev_files *f = files_of(dip);
	/* seconds plus nanoseconds, which rounds as the reference does at %lf */
	double secs = (double)(t / 1000000000ULL) + (double)(t % 1000000000ULL) / 1e9;

	/* a completion never takes the depth below zero */
	if (!f->aqd || (delta < 0 && f->aqd_n <= 0))
		return;
	fprintf(f->aqd, "%lf %ld\n", secs, f->aqd_n);
	f->aqd_n += delta;
	fprintf(f->aqd, "%lf %ld\n", secs, f->aqd_n);
}

#define HIST_MAX 1024

static uint64_t qhist[HIST_MAX + 2], dhist[HIST_MAX + 2];

static void size_hist(uint64_t *h, uint32_t bytes)
{
	uint32_t n = bytes >> 9;

	h[n > HIST_MAX ? HIST_MAX + 1 : n]++;
}

void extra_new_dev(struct dev *dip)
{
	/* the per-IO trees and the unplug histogram are written for every device, even
	 * with nothing in them */
	if (opts.pit_name || opts.unplug_name)
		files_of(dip);
}

void extra_queue(struct dev *dip, const struct blk_event *ev)
{
	if (!dip->remapper)
		size_hist(qhist, ev->bytes);
}

void extra_getrq(struct dev *dip, const struct blk_event *ev)
{
	iostat_getrq(dip, ev->time);
}

void extra_merge(struct dev *dip, const struct blk_event *ev)
{
	iostat_merge(dip, !blk_event_is_write(ev));
}

void extra_issue(struct dev *dip, const struct blk_event *ev)
{
	struct dev_files *f;
	unsigned long long s = ev->sector, e = ev->sector + (ev->bytes >> 9);
	double t = bit_time(ev->time);

	if (!dip->remapper)
		size_hist(dhist, ev->bytes);
	iostat_issue(dip, ev->time, !blk_event_is_write(ev), ev->bytes >> 9);
	if (!want_files())
		return;
	f = files_of(dip);
	if (f->bno[0]) {
		fprintf(f->bno[blk_event_is_write(ev) ? 1 : 0], "%15.9lf %llu %llu\n", t, s, e);
		fprintf(f->bno[2], "%15.9lf %llu %llu\n", t, s, e);
	}
	aqd_step(dip, ev->time, 1);
}

void extra_complete(struct dev *dip, const struct blk_event *ev)
{
	if (opts.aqd_name)
		aqd_step(dip, ev->time, -1);
}

/* seconds as the reference prints them: an int, so "no D" (all ones) wraps */
static void pit_time(FILE *fp, uint64_t t)
{
	fprintf(fp, "%d.%09llu", (int)(uint32_t)(t / 1000000000ULL),
		(unsigned long long)(t % 1000000000ULL));
}

void extra_pit(struct dev *dip, struct qio **qs, size_t n, const struct blk_event *c)
{
	struct dev_files *f;
	uint64_t d_time = NO_TIME;

	if (!opts.pit_name)
		return;
	f = files_of(dip);
	for (size_t i = 0; i < n; i++) {
		uint64_t t = qio_time(qs[i], QT_D);

		pit_time(f->pit, qs[i]->time);
		fputc(' ', f->pit);
		if (t != NO_TIME)
			d_time = t;
	}
	fputs("| ", f->pit);
	pit_time(f->pit, d_time);
	fputs(" | ", f->pit);
	pit_time(f->pit, c->time);
	fputc('\n', f->pit);
}

void extra_q2d(struct qio *q, uint64_t q2d)
{
	if (opts.all_data)
		q2d_hist_add(qio_dev(q)->q2d_hist, q2d);
}

void extra_q_done(struct qio *q, const struct blk_event *c)
{
	iostat_complete(qio_dev(q), q, c->time);
}

static void per_io_line(const char *lead, uint64_t t, char kind, uint64_t sec, uint32_t n)
{
	fprintf(bs.per_io_fp, "%s %15.9lf %c %10llu+%-4u\n", lead, bit_time(t), kind,
		(unsigned long long)sec, n);
}

void extra_per_io(struct qio *q, const struct blk_event *c)
{
	static const char pad[] = "        ";
	char lead[80];

	if (!bs.per_io_fp)
		return;
	static const struct {
		enum qio_time k;
		char c;
	} later[] = {{QT_G, 'G'}, {QT_I, 'I'}, {QT_M, 'M'}};
	uint64_t sec = qio_sector(q), t;
	uint32_t nsec = qio_nsec(q);

	snprintf(lead, sizeof(lead), "%3u,%-3u:", BLK_MAJOR(qio_dev(q)->device),
		 BLK_MINOR(qio_dev(q)->device));
	per_io_line(lead, q->time, 'Q', sec, nsec);
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		if ((t = qio_time(q, later[i].k)) != NO_TIME)
			per_io_line(pad, t, later[i].c, sec, nsec);
	if ((t = qio_time(q, QT_D)) != NO_TIME)
		per_io_line(pad, t, 'D', q->d_sec, q->d_nsec);
	per_io_line(pad, c->time, 'C', c->sector, c->bytes >> 9);
	fputc('\n', bs.per_io_fp);
}

void extra_per_io_end(void)
{
	if (bs.per_io_fp)
		fputs("-----------------------------------------\n", bs.per_io_fp);
}

void extra_unplug(struct dev *dip, uint64_t depth, int timer)
{
	uint64_t b = depth / 5;

	if (!opts.unplug_name || timer)
		return;
	files_of(dip)->unplug[b >= UNPLUG_BUCKETS - 1 ? UNPLUG_BUCKETS - 1 : b]++;
}

void extra_message(const struct blk_event *ev)
{
	size_t n = strnlen((const char *)ev->pdu, ev->pdu_len);
	struct dev *dip = dev_find(ev->device);
	char lab[64];

	if (!bs.msg_fp || !dip)
		return;
	dev_label(dip, lab, sizeof(lab), 1);
	fprintf(bs.msg_fp, "%s %5d.%09u %.*s\n", lab, (int)(ev->time / 1000000000ULL),
		(unsigned int)(ev->time % 1000000000ULL), (int)n, (const char *)ev->pdu);
}

static char *msg_name, *per_io_name;

static void hist_write(const char *suffix, const uint64_t *h, char kind)
{
	char fn[4096], *name = NULL;
	FILE *fp;

	snprintf(fn, sizeof(fn), "%s_%s.dat", opts.output, suffix);
	fp = file_create(fn, &name);
	if (kind == 'Q')
		fprintf(fp, "# BTT histogram data\n");
	fprintf(fp, "# %c buckets\n", kind);
	for (int i = 1; i <= HIST_MAX; i++)
		fprintf(fp, "%4d %lld\n", i, (long long)h[i]);
	fprintf(fp, "\n# %c bucket for > %d\n%4d %lld\n", kind, HIST_MAX, HIST_MAX,
		(long long)h[HIST_MAX + 1]);
	file_close(&fp, &name);
}

void extras_init(void)
{
	char fn[4096];

	if (opts.output) {
		snprintf(fn, sizeof(fn), "%s.msg", opts.output);
		bs.msg_fp = file_create(fn, &msg_name);
	} else {
		bs.msg_fp = stdout;
	}
	if (opts.per_io_name)
		bs.per_io_fp = file_create(opts.per_io_name, &per_io_name);
	iostat_init();
}

void extras_finish(void)
{
	if (bs.msg_fp != stdout) {
		/* name.msg stays even when empty, as with the reference */
		free(msg_name);
		msg_name = NULL;
		file_close(&bs.msg_fp, NULL);
	}
	bs.msg_fp = NULL;
	file_close(&bs.per_io_fp, &per_io_name);
	for (size_t i = 0; i < bs.ndevs; i++)
		files_finish(bs.devs[i]);
	if (opts.output) {
		hist_write("qhist", qhist, 'Q');
		hist_write("dhist", dhist, 'D');
	}
}
