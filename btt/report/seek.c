// SPDX-License-Identifier: GPL-2.0
/*
 * Seek distances between consecutive I/Os of one stream (Q or D of a device): a tree of
 * distance buckets for mean, "median" and modes, and the optional -s files.
 */
#include <float.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blk/strbuf.h"
#include "common.h"
#include "report/outfile.h"
#include "report/seek.h"
#include "report/seekahead.h"
#include "report/seekstat.h"

struct seeki {
	struct seekstat *dist; /* the distances, for median and modes */
	struct seekstat_result res;
	int finished;
	long long tot_seeks;
	double total_sectors;
	struct seek_pos pos;
	uint64_t fp; /* seek_fingerprint() of the stream */
	struct seekahead *ahead; /* NULL: none */
	uint32_t dev;
	int d2d;
	int recorded; /* -s or -m: seek_record() */
	FILE *rfp, *wfp, *cfp;
	char *rfn, *wfn, *cfn;
	/* -m: seeks per second, in windows of at least a second */
	struct blk_strbuf sps;
	int sps_on;
	double sps_start, sps_last;
	long sps_n;
};

struct seeki *seeki_new(const char *name, const char *dev, const char *kind, int sps, int absolute)
{
	struct seeki *sip = calloc(1, sizeof(*sip));
	char fn[4096];

	if (!sip || !(sip->dist = seekstat_new(0)))
		die("out of memory");
	if (name) {
		snprintf(fn, sizeof(fn), "%s_%s_%s_r.dat", name, dev, kind);
		sip->rfp = file_create(fn, &sip->rfn);
		snprintf(fn, sizeof(fn), "%s_%s_%s_w.dat", name, dev, kind);
		sip->wfp = file_create(fn, &sip->wfn);
		snprintf(fn, sizeof(fn), "%s_%s_%s_c.dat", name, dev, kind);
		sip->cfp = file_create(fn, &sip->cfn);
	}
	sip->sps_on = sps;
	sip->recorded = name || sps;
	sip->pos.absolute = absolute;
	return sip;
}

void seeki_ahead(struct seeki *sip, struct seekahead *sa, uint32_t dev, int d2d)
{
	sip->ahead = sa;
	sip->dev = dev;
	sip->d2d = d2d;
}

/* one window: seeks per second, or the count when the window has no length */
static void sps_emit(struct seeki *sip)
{
	double delta = sip->sps_last - sip->sps_start;
	double rate = (double)sip->sps_n;

	if (sip->sps_n != 1 && delta >= DBL_EPSILON)
		rate /= delta;
	blk_strbuf_addf(&sip->sps, "%15.9lf %.2lf\n", sip->sps_start, rate);
}

/* -s and -m: the seek's lines, and its second's count */
static __attribute__((noinline)) void seek_record(struct seeki *sip, uint64_t time, long long dist,
						  int is_read)
{
	char rw = is_read ? 'r' : 'w';
	FILE *fp = is_read ? sip->rfp : sip->wfp;

	if (fp)
		fprintf(fp, "%15.9lf %13lld %c\n", (double)time / 1.0e9, dist, rw);
	if (sip->cfp)
		fprintf(sip->cfp, "%15.9lf %13lld %c\n", (double)time / 1.0e9, dist, rw);
	if (sip->sps_on) {
		double t = (double)time / 1.0e9;

		if (sip->sps_n == 0) {
			sip->sps_start = t;
		} else if (t - sip->sps_start >= 1.0) {
			sps_emit(sip);
			sip->sps_start = t;
			sip->sps_n = 0;
		}
		sip->sps_n++;
		sip->sps_last = t;
	}
}

void seeki_add(struct seeki *sip, uint64_t time, uint64_t sector, uint32_t nsec, int is_read)
{
	long long dist = seek_distance(&sip->pos, sector, nsec);
	uint64_t mag;

	if (sip->recorded)
		seek_record(sip, time, dist, is_read);
	mag = seek_magnitude(dist);
	sip->tot_seeks++;
	sip->total_sectors += (double)(long long)mag;
	sip->fp = seek_fingerprint(sip->fp, mag);
	if (seekstat_add(sip->dist, mag))
		die("%s", seekstat_error(sip->dist));
}

long long seeki_nseeks(const struct seeki *sip)
{
	return sip->tot_seeks;
}

double seeki_mean(const struct seeki *sip)
{
	return sip->total_sectors / (double)sip->tot_seeks;
}

/* the statistics from the stream read ahead, when it is this one: 1, else 0 */
static int adopt(struct seeki *sip)
{
	if (sip->finished || !sip->ahead ||
	    !seekahead_take(sip->ahead, sip->dev, sip->d2d, (uint64_t)sip->tot_seeks, sip->fp,
			    &sip->res))
		return 0;
	sip->finished = 1;
	return 1;
}

static void finish(struct seeki *sip)
{
	if (sip->finished || adopt(sip))
		return;
	sip->finished = 1;
	if (seekstat_finish(sip->dist, &sip->res))
		die("%s", seekstat_error(sip->dist));
}

struct prep {
	struct seekstat **ss;
	size_t n;
	atomic_size_t next;
	int failed[];
};

static void *prep_work(void *arg)
{
	struct prep *pp = arg;
	size_t i;

	while ((i = atomic_fetch_add(&pp->next, 1)) < pp->n)
		pp->failed[i] = seekstat_prepare(pp->ss[i], 2) < 0;
	return NULL;
}

void seeki_prepare(struct seeki *const *v, size_t n)
{
	struct prep *pp = calloc(1, sizeof(*pp) + n * sizeof(int));
	struct seekstat **ss = malloc((n ? n : 1) * sizeof(*ss));
	pthread_t th;
	int threaded;

	if (!pp || !ss)
		die("out of memory");
	pp->ss = ss;
	for (size_t i = 0; i < n; i++)
		if (v[i] && !v[i]->finished && !adopt(v[i]) && seekstat_long(v[i]->dist))
			ss[pp->n++] = v[i]->dist;
	/* one long stream is left to finish() as it is */
	if (pp->n >= 2) {
		atomic_init(&pp->next, 0);
		threaded = pthread_create(&th, NULL, prep_work, pp) == 0;
		prep_work(pp);
		if (threaded)
			pthread_join(th, NULL);
		for (size_t i = 0; i < pp->n; i++)
			if (pp->failed[i])
				die("%s", seekstat_error(ss[i]));
	}
	free(ss);
	free(pp);
}

/* the first bucket, in pre-order, that alone holds half of the seeks (as the reference) */
long long seeki_median(struct seeki *sip)
{
	finish(sip);
	return sip->res.median;
}

/* the modes in the reference's post-order; mp->modes is the caller's to free */
void seeki_mode(struct seeki *sip, struct mode *mp)
{
	finish(sip);
	memset(mp, 0, sizeof(*mp));
	mp->nmds = sip->res.nmds;
	mp->alloc = mp->nmds;
	mp->most = sip->res.most;
	mp->modes = malloc((size_t)(mp->nmds ? mp->nmds : 1) * sizeof(*mp->modes));
	if (!mp->modes)
		die("out of memory");
	memcpy(mp->modes, sip->res.modes, (size_t)mp->nmds * sizeof(*mp->modes));
}

/*
 * -m: the reference opens the same file for the Q2Q and the D2D stream, so the second
 * open truncates the first and both write from offset 0; the Q2Q text, flushed last,
 * lies over the D2D text, and the file is removed as empty when the D2D stream wrote
 * nothing. Reproduce that file.
 */
void seeki_sps_write(struct seeki *q2q, struct seeki *d2d, const char *dev, const char *sps_name)
{
	struct seeki *s[2] = {d2d, q2q};
	char fn[4096], *name = NULL, *buf;
	size_t len = 0;
	FILE *fp;

	if (!sps_name)
		return;
	for (int i = 0; i < 2; i++) {
		if (s[i]->sps_n)
			sps_emit(s[i]);
		if (s[i]->sps.len > len)
			len = s[i]->sps.len;
	}
	buf = calloc(1, len + 1);
	if (!buf)
		die("out of memory");
	for (int i = 0; i < 2; i++)
		if (s[i]->sps.len)
			memcpy(buf, s[i]->sps.buf, s[i]->sps.len);
	/* the file is removed at exit when the D2D stream wrote nothing to it */
	if (!d2d->sps.len)
		len = 0;
	snprintf(fn, sizeof(fn), "%s_%s.dat", sps_name, dev);
	fp = file_create(fn, &name);
	fwrite(buf, 1, len, fp);
	free(buf);
	file_close(&fp, &name);
}

void seeki_free(struct seeki *sip)
{
	if (!sip)
		return;
	seekstat_free(sip->dist);
	free(sip->res.modes);
	blk_strbuf_release(&sip->sps);
	file_close(&sip->rfp, &sip->rfn);
	file_close(&sip->wfp, &sip->wfn);
	file_close(&sip->cfp, &sip->cfn);
	free(sip);
}
