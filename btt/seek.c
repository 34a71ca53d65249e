// SPDX-License-Identifier: GPL-2.0
/*
 * Seek distances between consecutive I/Os of one stream (Q or D of a device): a tree of
 * distance buckets for mean, "median" and modes, and the optional -s files.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "blk/strbuf.h"

/* one distance and how many seeks had it; allocated in blocks */
struct seek_bkt {
	struct rb_node rb;
	long long sectors;
	long nseeks;
};

#define BKT_BLOCK 1024

struct bkt_block {
	struct bkt_block *next;
	struct seek_bkt b[BKT_BLOCK];
};

struct seeki {
	struct rb_root root;
	struct bkt_block *blocks;
	unsigned int nfree;
	long long tot_seeks;
	double total_sectors;
	long long last_start, last_end;
	FILE *rfp, *wfp, *cfp;
	char *rfn, *wfn, *cfn;
	/* -m: seeks per second, in windows of at least a second */
	struct blk_strbuf sps;
	int sps_on;
	double sps_start, sps_last;
	long sps_n;
};

struct seeki *seeki_new(const char *name, const char *dev, const char *kind)
{
	struct seeki *sip = calloc(1, sizeof(*sip));
	char fn[4096];

	if (!sip)
		die("out of memory");
	if (name) {
		snprintf(fn, sizeof(fn), "%s_%s_%s_r.dat", name, dev, kind);
		sip->rfp = file_create(fn, &sip->rfn);
		snprintf(fn, sizeof(fn), "%s_%s_%s_w.dat", name, dev, kind);
		sip->wfp = file_create(fn, &sip->wfn);
		snprintf(fn, sizeof(fn), "%s_%s_%s_c.dat", name, dev, kind);
		sip->cfp = file_create(fn, &sip->cfn);
	}
	sip->sps_on = opts.sps_name != NULL;
	return sip;
}

static long long seek_dist(struct seeki *sip, long long start, long long end)
{
	long long dist;

	if (opts.seek_absolute) {
		dist = start - sip->last_end;
	} else if ((sip->last_start <= start && start <= sip->last_end) ||
		   (sip->last_start <= end && end <= sip->last_end)) {
		dist = 0;
	} else if (start > sip->last_end) {
		dist = start - sip->last_end;
	} else {
		dist = start - sip->last_start;
	}
	sip->last_start = start;
	sip->last_end = end;
	return dist;
}

static void bucket_add(struct seeki *sip, long long dist)
{
	struct rb_node **p = &sip->root.node, *parent = NULL;
	struct seek_bkt *b;

	while (*p) {
		parent = *p;
		b = rb_entry(parent, struct seek_bkt, rb);
		if (dist < b->sectors) {
			p = &parent->left;
		} else if (dist > b->sectors) {
			p = &parent->right;
		} else {
			b->nseeks++;
			return;
		}
	}
	if (!sip->nfree) {
		struct bkt_block *blk = malloc(sizeof(*blk));

		if (!blk)
			die("out of memory");
		blk->next = sip->blocks;
		sip->blocks = blk;
		sip->nfree = BKT_BLOCK;
	}
	b = &sip->blocks->b[BKT_BLOCK - sip->nfree--];
	b->sectors = dist;
	b->nseeks = 1;
	rb_link_node(&b->rb, parent, p);
	rb_insert_color(&b->rb, &sip->root);
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

void seeki_add(struct seeki *sip, uint64_t time, uint64_t sector, uint32_t bytes, int is_read)
{
	long long start = (long long)sector;
	long long end = start + (bytes >> 9);
	long long dist = seek_dist(sip, start, end);
	char rw = is_read ? 'r' : 'w';
	FILE *fp = is_read ? sip->rfp : sip->wfp;

	if (fp)
		fprintf(fp, "%15.9lf %13lld %c\n", bit_time(time), dist, rw);
	if (sip->cfp)
		fprintf(sip->cfp, "%15.9lf %13lld %c\n", bit_time(time), dist, rw);
	if (sip->sps_on) {
		double t = bit_time(time);

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
	dist = llabs(dist);
	sip->tot_seeks++;
	sip->total_sectors += (double)dist;
	bucket_add(sip, dist);
}

long long seeki_nseeks(const struct seeki *sip)
{
	return sip->tot_seeks;
}

double seeki_mean(const struct seeki *sip)
{
	return sip->total_sectors / (double)sip->tot_seeks;
}

/* the first bucket, in pre-order, that alone holds half of the seeks (as the reference) */
static int median_walk(const struct rb_node *n, long long target, long long *rv)
{
	const struct seek_bkt *b = rb_entry(n, struct seek_bkt, rb);

	if (b->nseeks >= target) {
		*rv = b->sectors;
		return 1;
	}
	if (n->left && median_walk(n->left, target, rv))
		return 1;
	if (n->right && median_walk(n->right, target, rv))
		return 1;
	return 0;
}

long long seeki_median(const struct seeki *sip)
{
	long long rv = 0;

	if (sip->tot_seeks == 0 || !sip->root.node)
		return 0;
	median_walk(sip->root.node, sip->tot_seeks / 2, &rv);
	return rv;
}

static void mode_walk(const struct rb_node *n, struct mode *mp)
{
	const struct seek_bkt *b = rb_entry(n, struct seek_bkt, rb);

	/* post-order, as the reference walks it: the order of equal modes depends on it */
	if (n->left)
		mode_walk(n->left, mp);
	if (n->right)
		mode_walk(n->right, mp);
	if (b->nseeks >= mp->most) {
		if (b->nseeks > mp->most)
			mp->nmds = 0;
		if (mp->nmds == mp->alloc) {
			mp->alloc = mp->alloc ? mp->alloc * 2 : 8;
			mp->modes = realloc(mp->modes, (size_t)mp->alloc * sizeof(*mp->modes));
			if (!mp->modes)
				die("out of memory");
		}
		mp->modes[mp->nmds++] = b->sectors;
		mp->most = b->nseeks;
	}
}

void seeki_mode(const struct seeki *sip, struct mode *mp)
{
	memset(mp, 0, sizeof(*mp));
	if (sip->root.node)
		mode_walk(sip->root.node, mp);
}

/*
 * -m: the reference opens the same file for the Q2Q and the D2D stream, so the second
 * open truncates the first and both write from offset 0; the Q2Q text, flushed last,
 * lies over the D2D text, and the file is removed as empty when the D2D stream wrote
 * nothing. Reproduce that file.
 */
void seeki_sps_write(struct seeki *q2q, struct seeki *d2d, const char *dev)
{
	struct seeki *s[2] = {d2d, q2q};
	char fn[4096], *name = NULL, *buf;
	size_t len = 0;
	FILE *fp;

	if (!opts.sps_name)
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
	snprintf(fn, sizeof(fn), "%s_%s.dat", opts.sps_name, dev);
	fp = file_create(fn, &name);
	fwrite(buf, 1, len, fp);
	free(buf);
	file_close(&fp, &name);
}

void seeki_free(struct seeki *sip)
{
	if (!sip)
		return;
	while (sip->blocks) {
		struct bkt_block *next = sip->blocks->next;

		free(sip->blocks);
		sip->blocks = next;
	}
	blk_strbuf_release(&sip->sps);
	file_close(&sip->rfp, &sip->rfn);
	file_close(&sip->wfp, &sip->wfn);
	file_close(&sip->cfp, &sip->cfn);
	free(sip);
}
