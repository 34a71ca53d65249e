// SPDX-License-Identifier: GPL-2.0
/*
 * Optional outputs fed by device events (see event-files.h), a subscriber of the I/O model.
 */
#include <stdlib.h>
#include <string.h>

#include "blk/strbuf.h"
#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "output.h"
#include "report/event-files.h"
#include "report/outfile.h"

#define UNPLUG_BUCKETS 21
#define HIST_MAX 1024
_Static_assert(HIST_MAX < 10000, "hist_write() writes bucket numbers of 4 digits");

/* per-device optional files */
struct dev_files {
	FILE *bno[3], *aqd;
	char *bno_fn[3], *aqd_fn;
	long aqd_n;
	uint64_t unplug[UNPLUG_BUCKETS];
};

struct extras {
	const struct btt_opts *o;
	const struct btt_devs *devs;
	struct dev_files **dev; /* by device index, allocated on first use */
	size_t ndev, adev;
	uint64_t qhist[HIST_MAX + 2], dhist[HIST_MAX + 2];
	FILE *msg_fp;
	char *msg_name;
};

static struct dev_files *files_of(struct extras *x, const struct btt_dev *dip)
{
	static const char rwc[] = "rwc";
	struct dev_files *f = x->dev[dip->idx];
	char fn[4096];

	if (f)
		return f;
	f = xcalloc(1, sizeof(*f));
	for (int i = 0; x->o->bno_name && i < 3; i++) {
		snprintf(fn, sizeof(fn), "%s_%s_%c.dat", x->o->bno_name, dip->name, rwc[i]);
		f->bno[i] = file_create(fn, &f->bno_fn[i]);
	}
	if (x->o->aqd_name) {
		snprintf(fn, sizeof(fn), "%s_%s_aqd.dat", x->o->aqd_name, dip->name);
		f->aqd = file_create(fn, &f->aqd_fn);
	}
	x->dev[dip->idx] = f;
	return f;
}

static int want_files(const struct extras *x)
{
	return x->o->bno_name || x->o->aqd_name || x->o->unplug_name;
}

static void aqd_step(struct extras *x, const struct btt_dev *dip, uint64_t t, int delta)
{
	struct dev_files *f = files_of(x, dip);
	/* seconds plus nanoseconds, which rounds as the reference does at %lf */
	double secs = (double)(t / 1000000000ULL) + (double)(t % 1000000000ULL) / 1e9;

	/* a completion never takes the depth below zero */
	if (!f->aqd || (delta < 0 && f->aqd_n <= 0))
		return;
	fprintf(f->aqd, "%lf %ld\n", secs, f->aqd_n);
	f->aqd_n += delta;
	fprintf(f->aqd, "%lf %ld\n", secs, f->aqd_n);
}

static void size_hist(uint64_t *h, uint32_t n)
{
	h[n > HIST_MAX ? HIST_MAX + 1 : n]++;
}

static void issue(struct extras *x, const struct btt_dev_event *e)
{
	struct dev_files *f;
	unsigned long long s = e->ev->sector, end = e->ev->sector + blk_event_sectors(e->ev);
	double t = (double)e->ev->time / 1.0e9;
	int w = (e->ev->action & BLK_TC_ACT(BLK_TC_WRITE)) != 0;

	if (!e->dev->remapper)
		size_hist(x->dhist, blk_event_sectors(e->ev));
	if (!want_files(x))
		return;
	f = files_of(x, e->dev);
	if (f->bno[0]) {
		fprintf(f->bno[w], "%15.9lf %llu %llu\n", t, s, end);
		fprintf(f->bno[2], "%15.9lf %llu %llu\n", t, s, end);
	}
	aqd_step(x, e->dev, e->ev->time, 1);
}

static void message(struct extras *x, const struct btt_dev_event *e)
{
	if (!x->msg_fp)
		return;
	fprintf(x->msg_fp, "%s %5d.%09u %.*s\n", e->dev->label, (int)(e->ev->time / 1000000000ULL),
		(unsigned int)(e->ev->time % 1000000000ULL), (int)e->len, e->text);
}

static void on_event(void *ctx, const struct btt_dev_event *e)
{
	struct extras *x = ctx;
	uint64_t b;

	switch (e->kind) {
	case BTT_EV_NEW:
		x->dev = array_grow(x->dev, &x->adev, e->dev->idx, sizeof(*x->dev));
		x->dev[x->ndev++] = NULL;
		/* the unplug histogram is written for every device, even with nothing in it */
		if (x->o->unplug_name)
			files_of(x, e->dev);
		break;
	case BTT_EV_QUEUE:
		if (!e->dev->remapper)
			size_hist(x->qhist, blk_event_sectors(e->ev));
		break;
	case BTT_EV_ISSUE:
		issue(x, e);
		break;
	case BTT_EV_COMPLETE:
		if (x->o->aqd_name)
			aqd_step(x, e->dev, e->ev->time, -1);
		break;
	case BTT_EV_UNPLUG:
		/* every U counts, plugged or not */
		b = e->count / 5;
		if (x->o->unplug_name)
			files_of(x, e->dev)
				->unplug[b >= UNPLUG_BUCKETS - 1 ? UNPLUG_BUCKETS - 1 : b]++;
		break;
	case BTT_EV_MESSAGE:
		message(x, e);
		break;
	default:
		break;
	}
}

static void *extras_new(const struct btt_view *v, void *opened)
{
	struct extras *x = xcalloc(1, sizeof(*x));
	const struct btt_opts *o = v->opts;
	struct btt_io_sub sub = {
		.ctx = x,
		/* only what the options ask for: messages always, sizes with -o */
		.events = 1u << BTT_EV_NEW | 1u << BTT_EV_MESSAGE,
		.dev_event = on_event,
	};
	char fn[4096];

	if (o->output)
		sub.events |= 1u << BTT_EV_QUEUE | 1u << BTT_EV_ISSUE;
	if (o->bno_name || o->aqd_name || o->unplug_name)
		sub.events |= 1u << BTT_EV_ISSUE;
	if (o->aqd_name)
		sub.events |= 1u << BTT_EV_COMPLETE;
	if (o->unplug_name)
		sub.events |= 1u << BTT_EV_UNPLUG;
	(void)opened;
	x->o = o;
	x->devs = v->devs;
	if (o->output) {
		snprintf(fn, sizeof(fn), "%s.msg", o->output);
		x->msg_fp = file_create(fn, &x->msg_name);
	} else {
		x->msg_fp = stdout;
	}
	if (iomodel_subscribe(v->model, &sub) < 0)
		die("internal error: too many subscribers");
	return x;
}

static void files_finish(struct extras *x, const struct btt_dev *dip)
{
	struct dev_files *f = x->dev[dip->idx];
	char fn[4096], *name = NULL;
	FILE *fp;

	if (!f)
		return;
	for (int i = 0; i < 3; i++)
		file_close(&f->bno[i], &f->bno_fn[i]);
	file_close(&f->aqd, &f->aqd_fn);
	if (x->o->unplug_name) {
		snprintf(fn, sizeof(fn), "%s_%s.dat", x->o->unplug_name, dip->name);
		fp = file_create(fn, &name);
		for (int i = 0; i < UNPLUG_BUCKETS; i++)
			fprintf(fp, "%d %llu\n", i, (unsigned long long)f->unplug[i]);
		file_close(&fp, &name);
	}
	free(f);
	x->dev[dip->idx] = NULL;
}

static void hist_write(const char *output, const char *suffix, const uint64_t *h, char kind)
{
	char fn[4096], *name = NULL;
	FILE *fp;

	snprintf(fn, sizeof(fn), "%s_%s.dat", output, suffix);
	fp = file_create(fn, &name);
	if (kind == 'Q')
		fprintf(fp, "# BTT histogram data\n");
	fprintf(fp, "# %c buckets\n", kind);
	/*
	 * "%4d %lld\n" per bucket, formatted here: 1,024 fprintf calls cost more than a short
	 * run (and most buckets are empty)
	 */
	for (int i = 1; i <= HIST_MAX;) {
		char buf[4096], *p = buf;

		for (; i <= HIST_MAX && p < buf + sizeof(buf) - 48; i++) {
			p[0] = i >= 1000 ? (char)('0' + i / 1000) : ' ';
			p[1] = i >= 100 ? (char)('0' + i / 100 % 10) : ' ';
			p[2] = i >= 10 ? (char)('0' + i / 10 % 10) : ' ';
			p[3] = (char)('0' + i % 10);
			p[4] = ' ';
			p += 5;
			if (h[i])
				p = blk_put_s64(p, (int64_t)h[i], 0);
			else
				*p++ = '0';
			*p++ = '\n';
		}
		fwrite(buf, 1, (size_t)(p - buf), fp);
	}
	fprintf(fp, "\n# %c bucket for > %d\n%4d %lld\n", kind, HIST_MAX, HIST_MAX,
		(long long)h[HIST_MAX + 1]);
	file_close(&fp, &name);
}

static int extras_finish(void *state, uint64_t t_last)
{
	struct extras *x = state;

	(void)t_last;
	if (x->msg_fp && x->msg_fp != stdout) {
		/* name.msg stays even when empty, as with the reference */
		free(x->msg_name);
		x->msg_name = NULL;
		file_close(&x->msg_fp, NULL);
	}
	x->msg_fp = NULL;
	for (size_t i = 0; i < x->ndev; i++)
		files_finish(x, x->devs->v[i]);
	if (x->o->output) {
		hist_write(x->o->output, "qhist", x->qhist, 'Q');
		hist_write(x->o->output, "dhist", x->dhist, 'D');
	}
	return 0;
}

static void extras_free(void *state)
{
	struct extras *x = state;

	free(x->dev);
	free(x);
}

const struct btt_output_ops event_files_output = {
	.name = "event-files",
	.new = extras_new,
	.finish = extras_finish,
	.free = extras_free,
};
