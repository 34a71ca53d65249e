// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace --origin's files and dirtiers (kernel/tfsorigin.h): its file-system events
 * enabled where they are read (the blk tracer's ring, or an instance of their own), the file
 * systems of the traced devices, and the files' paths found at the end by walking their
 * mounts.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "blk/backend.h"
#include "blk/event.h"
#include "blk/trace.h"
#include "fsevents.h"
#include "tfsconv.h"
#include "tfsorigin.h"
#include "util.h"

#define MOUNTS_MAX 8 /* mounts of one device walked at most */

struct tfs_odev {
	char mnt[MOUNTS_MAX][512]; /* where it is mounted, its root mount first */
	int nmnt;
	uint32_t bsize;
	int ext4; /* ext4 (or ext2/3 through it): its reserved inodes are in no directory */
};

/* ext4's reserved inodes (1 to 10: the journal's is 8) but the root's, which no walk finds */
#define EXT4_FIRST_INO 11
#define EXT4_ROOT_INO 2

struct tfs_origin {
	struct blk_fsev *ev;
	const struct blk_backend_cfg *cfg;
	struct tfs_odev *dev;
	unsigned long named, unfound; /* files */
	char *drained; /* per CPU index: read to the end after the stop */
	int ndrained; /* of them (atomic) */
};

const struct blk_fsev *tfs_origin_events(const struct tfs_origin *o)
{
	return o->ev;
}

/* mountinfo's escapes (\040 for a space, ...) undone in place */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* the mounts of each traced device (/proc/self/mountinfo) and its file system's block size */
static void find_mounts(struct tfs_origin *o)
{
	const struct blk_backend_cfg *cfg = o->cfg;
	char line[8192], root[4096], mnt[4096], *fst;
	unsigned int maj, min;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %u:%u %4095s %4095s", &maj, &min, root, mnt) != 4)
			continue;
		unescape(mnt);
		for (int i = 0; i < cfg->ndevs; i++) {
			struct tfs_odev *d = &o->dev[i];
			struct statvfs sv;

			if (cfg->devs[i].devno != (maj << 20 | min) || d->nmnt == MOUNTS_MAX)
				continue;
			if (!strcmp(root, "/") && d->nmnt) {
				/* its root first: the paths as the file system names them */
				memcpy(d->mnt[d->nmnt], d->mnt[0], sizeof(d->mnt[0]));
				snprintf(d->mnt[0], sizeof(d->mnt[0]), "%s", mnt);
			} else {
				snprintf(d->mnt[d->nmnt], sizeof(d->mnt[0]), "%s", mnt);
			}
			d->nmnt++;
			fst = strstr(line, " - ");
			if (fst && !strncmp(fst + 3, "ext", 3))
				d->ext4 = 1;
			if (!d->bsize && !statvfs(mnt, &sv) && sv.f_bsize >= 512 &&
			    !(sv.f_bsize % 512))
				d->bsize = (uint32_t)sv.f_bsize;
		}
	}
	fclose(f);
}

/* "NAME == V1 || NAME == V2 ...", each device's number (a bdi's "MAJ:MIN" if @bdi) */
static void dev_filter(const struct blk_backend_cfg *cfg, const char *name, int bdi, char *buf,
		       size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < cfg->ndevs && n < len; i++) {
		uint32_t d = cfg->devs[i].devno;

		if (bdi)
			n += (size_t)snprintf(buf + n, len - n, "%s%s == \"%u:%u\"",
					      i ? " || " : "", name, d >> 20, d & ((1u << 20) - 1));
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%s == %u", i ? " || " : "", name,
					      d);
	}
}

/*
 * Event @ev enabled where this kernel has it, filtered on the devices by field @field.
 * Return 1 if enabled, 0 if not there (or someone else's), -errno.
 */
static int enable(struct tfs_origin *o, const struct tfs_origin_where *t, enum blk_fsev_ev ev,
		  const char *field, int bdi, char *err, size_t elen)
{
	const char *name = blk_fsev_ev_name(ev);
	char fmt[16384], filter[2048];
	int ret, filtered;

	if (t->format(t->ctx, name, fmt, sizeof(fmt)))
		return 0;
	ret = blk_fsev_set_format(o->ev, ev, fmt);
	if (ret) {
		kerr(err, elen, "--origin: event '%s' lacks a field this tracer reads (%s)", name,
		     strerror(-ret));
		return ret;
	}
	/* a filter the kernel refuses: the devices are told apart here */
	dev_filter(o->cfg, field, bdi, filter, sizeof(filter));
	ret = t->enable(t->ctx, name, filter, &filtered);
	if (ret == -EBUSY) {
		blk_fsev_set_format(o->ev, ev, "");
		return 0;
	}
	if (ret) {
		kerr(err, elen, "--origin: cannot enable event '%s': %s", name, strerror(-ret));
		return ret;
	}
	return 1;
}

struct tfs_origin *tfs_origin_open(const struct tfs_origin_where *t,
				   const struct blk_backend_cfg *cfg, char *what, size_t wlen,
				   char *err, size_t elen)
{
	struct tfs_origin *o = calloc(1, sizeof(*o));
	uint32_t devnos[64];
	int ret = 0, fs = 0;
	size_t n;

	if (!o || cfg->ndevs > 64)
		goto nomem;
	o->cfg = cfg;
	o->dev = calloc((size_t)cfg->ndevs, sizeof(*o->dev));
	o->drained = calloc((size_t)cfg->ncpus, 1);
	for (int i = 0; i < cfg->ndevs; i++)
		devnos[i] = cfg->devs[i].devno;
	o->ev = blk_fsev_new(devnos, cfg->ndevs);
	if (!o->dev || !o->drained || !o->ev)
		goto nomem;
	find_mounts(o);
	for (int i = 0; i < cfg->ndevs; i++) {
		blk_fsev_set_block_size(o->ev, i, o->dev[i].bsize);
		fs |= o->dev[i].bsize != 0;
	}
	ret = enable(o, t, BLK_FSEV_EV_DIRTY_FOLIO, "name", 1, err, elen);
	if (!ret)
		ret = enable(o, t, BLK_FSEV_EV_DIRTY_PAGE, "name", 1, err, elen);
	if (ret >= 0)
		ret = enable(o, t, BLK_FSEV_EV_ADD_FOLIO, "s_dev", 0, err, elen);
	/* ext4's maps count in blocks: of use on a device with a file system mounted */
	for (int e = BLK_FSEV_EV_EXT_MAP; fs && ret >= 0 && e <= BLK_FSEV_EV_ES_LOOKUP; e++)
		ret = enable(o, t, (enum blk_fsev_ev)e, "dev", 0, err, elen);
	if (ret >= 0)
		ret = enable(o, t, BLK_FSEV_EV_IOMAP, "bdev", 0, err, elen);
	if (ret >= 0)
		ret = enable(o, t, BLK_FSEV_EV_IOMAP_IOEND, "bdev", 0, err, elen);
	if (!ret)
		ret = enable(o, t, BLK_FSEV_EV_IOMAP_WPMAP, "bdev", 0, err, elen);
	if (ret < 0)
		goto fail;
	n = (size_t)snprintf(what, wlen, "; files and dirtiers from");
	for (int e = 0; e < BLK_FSEV_NEV && n < wlen; e++)
		if (blk_fsev_has(o->ev, (enum blk_fsev_ev)e))
			n += (size_t)snprintf(what + n, wlen - n, " %s", blk_fsev_ev_name(e));
	for (int i = 0; i < cfg->ndevs && n < wlen; i++) {
		if (!o->dev[i].nmnt)
			n += (size_t)snprintf(
				what + n, wlen - n,
				"; %s: no file system mounted from it (no file maps, no file names)",
				cfg->devs[i].path);
	}
	return o;
nomem:
	ret = -ENOMEM;
	kerr(err, elen, "out of memory");
fail:
	tfs_origin_free(o);
	errno = -ret;
	return NULL;
}

void tfs_origin_free(struct tfs_origin *o)
{
	if (!o)
		return;
	blk_fsev_free(o->ev);
	free(o->dev);
	free(o->drained);
	free(o);
}

/* ---- the files' names ---- */

/* a file named: its inode and path */
struct named {
	uint64_t ino;
	char *path;
};

/* the walk of one device's mounts (nftw() takes no argument: one walk at a time) */
struct walk {
	dev_t dev;
	struct blk_fsev_inos want, seen;
	struct named *v;
	size_t n, cap;
	int nomem;
};

static __thread struct walk *cur;

static int on_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	struct walk *w = cur;
	size_t len = strlen(path);

	(void)flag;
	(void)ftw;
	if (sb->st_dev != w->dev || !blk_fsev_inos_has(&w->want, (uint64_t)sb->st_ino) ||
	    blk_fsev_inos_has(&w->seen, (uint64_t)sb->st_ino) || len > BLK_FILE_PATH_MAX)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct named *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n].ino = (uint64_t)sb->st_ino;
	w->v[w->n].path = strdup(path);
	if (!w->v[w->n].path || blk_fsev_inos_add(&w->seen, (uint64_t)sb->st_ino) < 0)
		goto nomem;
	w->n++;
	/* all found: the walk ends */
	return w->seen.n == w->want.n;
nomem:
	w->nomem = 1;
	return -1;
}

/* device index @i: the files of its notes found and staged in @into as file notes */
static int name_dev(struct tfs_origin *o, int i, struct blk_tfsconv *const *convs, int nconv,
		    struct blk_tfsconv *into, uint32_t cpu)
{
	const struct tfs_odev *d = &o->dev[i];
	uint32_t devno = o->cfg->devs[i].devno;
	struct walk w;
	uint64_t last = 0;
	struct blk_fsev_inos skip = BLK_FSEV_INOS_INIT;
	int ret = 0;

	memset(&w, 0, sizeof(w));
	w.dev = makedev(devno >> 20, devno & ((1u << 20) - 1));
	for (int k = 0; k < nconv; k++) {
		const struct blk_fsev_inos *s = blk_tfsconv_inos(convs[k], i);

		for (size_t j = 0; j < s->cap; j++) {
			uint64_t ino = s->slot[j] - 1;

			if (!s->slot[j])
				continue;
			/* not in the tree: not found without a walk through all of it */
			if (d->ext4 && ino < EXT4_FIRST_INO && ino != EXT4_ROOT_INO) {
				if (blk_fsev_inos_add(&skip, ino) < 0)
					w.nomem = 1;
				continue;
			}
			if (blk_fsev_inos_add(&w.want, ino) < 0)
				w.nomem = 1;
		}
		if (blk_tfsconv_last(convs[k], i) > last)
			last = blk_tfsconv_last(convs[k], i);
	}
	/*
	 * the block device's own page cache (the file system's metadata buffers, dirtied by
	 * jbd2): its inode number is the device number; named by the device's path
	 */
	if (blk_fsev_inos_has(&w.want, devno)) {
		struct stat sb = {.st_dev = w.dev, .st_ino = devno};

		cur = &w;
		on_file(o->cfg->devs[i].path, &sb, 0, NULL);
	}
	cur = &w;
	for (int m = 0; m < d->nmnt && !w.nomem && w.want.n && w.seen.n < w.want.n; m++)
		nftw(d->mnt[m], on_file, 64, FTW_MOUNT | FTW_PHYS);
	cur = NULL;
	for (size_t j = 0; j < w.n && !w.nomem; j++) {
		size_t len = strlen(w.v[j].path);
		unsigned char *pdu = malloc(8 + len);
		struct blk_event n;

		if (!pdu) {
			w.nomem = 1;
			break;
		}
		memcpy(pdu, &w.v[j].ino, 8);
		memcpy(pdu + 8, w.v[j].path, len);
		blk_event_note(&n, BLK_TN_FILE, devno, cpu, last, pdu, (uint16_t)(8 + len));
		ret = blk_tfsconv_put(into, i, &n);
		free(pdu);
		if (ret)
			w.nomem = 1;
	}
	o->named += w.n;
	o->unfound += w.want.n - w.n + skip.n;
	blk_fsev_inos_release(&skip);
	for (size_t j = 0; j < w.n; j++)
		free(w.v[j].path);
	free(w.v);
	blk_fsev_inos_release(&w.want);
	blk_fsev_inos_release(&w.seen);
	return w.nomem ? -ENOMEM : 0;
}

int tfs_origin_name(struct tfs_origin *o, struct blk_tfsconv *const *convs, int nconv,
		    struct blk_tfsconv *into, uint32_t cpu)
{
	int ret = 0;

	for (int i = 0; i < o->cfg->ndevs && !ret; i++)
		ret = name_dev(o, i, convs, nconv, into, cpu);
	return ret;
}

int tfs_origin_drained(struct tfs_origin *o, int k, struct blk_tfsconv *const *convs,
		       uint64_t *last)
{
	struct blk_tfsconv *into = convs[k];
	int ret;

	if (o->drained[k])
		return 0;
	o->drained[k] = 1;
	if (__atomic_add_fetch(&o->ndrained, 1, __ATOMIC_ACQ_REL) != o->cfg->ncpus)
		return 0;
	ret = tfs_origin_name(o, convs, o->cfg->ncpus, into, (uint32_t)o->cfg->cpus[k]);
	if (ret)
		return ret;
	for (int i = 0; i < o->cfg->ndevs; i++) {
		uint64_t t = blk_tfsconv_last(into, i);

		if (t > *last)
			*last = t;
	}
	return 1;
}

void tfs_origin_report(const struct tfs_origin *o, struct blk_tfsconv *const *convs, int nconv,
		       char *msg, size_t len)
{
	uint64_t dirty = 0, fmap = 0;

	for (int k = 0; k < nconv; k++) {
		uint64_t d, f;

		blk_tfsconv_origin_counts(convs[k], &d, &f);
		dirty += d;
		fmap += f;
	}
	snprintf(msg, len,
		 "Origin: %llu dirty runs, %llu file maps, %lu files named (%lu not found)",
		 (unsigned long long)dirty, (unsigned long long)fmap, o->named, o->unfound);
}
