// SPDX-License-Identifier: GPL-2.0
/*
 * The file and origin of each I/O, from the tracer's origin notes (blk/origin.h, trace.h
 * BLK_TN_DIRTY, BLK_TN_FMAP, BLK_TN_FILE). Per device, the file maps as sorted extents that
 * do not overlap (a new note cuts the ones it covers); per file seen, its name and its dirty
 * pages as sorted runs of one task's pages, cut as writes take them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/origin.h"

/* sectors and byte counts past this are not a disk's (and their bytes would not fit) */
#define SECTOR_LIMIT (1ull << 50)

struct extent {
	uint64_t start, end; /* sectors [start, end) */
	uint64_t ino, offset; /* the file's bytes from @offset are at @start */
};

struct devmap {
	uint32_t device;
	struct extent *ext;
	size_t n, cap;
};

struct run {
	uint64_t start, end; /* file bytes [start, end): whole pages */
	uint64_t tag; /* the caller's (blk_origin_note_tagged()), 0: none */
	uint32_t pid, page;
	char comm[16];
};

struct file {
	uint32_t device;
	int used;
	int seen; /* named by a DIRTY or FMAP note (else a FILE note named an unknown inode) */
	uint64_t ino;
	char *path;
	struct run *run;
	size_t n, cap;
};

/* the names of the origins, kept as long as the reader (a chunk never moves) */
#define NAME_CHUNK 256

struct name_chunk {
	struct name_chunk *next;
	char name[NAME_CHUNK][16];
	unsigned int n;
};

struct blk_origin {
	struct devmap *dev;
	size_t ndev, capdev;
	struct file *files; /* open addressing, a power of two of slots */
	size_t nfiles, capfiles;
	struct blk_origin_share *shares;
	size_t nshares, capshares;
	struct blk_origin_tag *tags; /* of the I/O being looked up */
	size_t ntags, captags;
	struct name_chunk *names; /* the newest first */
	const char **index; /* open addressing over the names, a power of two of slots */
	size_t nindex, aindex;
	struct blk_origin_stats stats;
};

struct blk_origin *blk_origin_new(void)
{
	return calloc(1, sizeof(struct blk_origin));
}

void blk_origin_free(struct blk_origin *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->ndev; i++)
		free(o->dev[i].ext);
	for (size_t i = 0; i < o->capfiles; i++) {
		free(o->files[i].path);
		free(o->files[i].run);
	}
	while (o->names) {
		struct name_chunk *c = o->names;

		o->names = c->next;
		free(c);
	}
	free(o->index);
	free(o->dev);
	free(o->files);
	free(o->shares);
	free(o->tags);
	free(o);
}

/* room for one more of @size bytes in *@v (@n used of *@cap) */
static int grow(void *v, size_t n, size_t *cap, size_t size)
{
	void **p = v;
	size_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	nv = realloc(*p, c * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*cap = c;
	return 0;
}

/* ---- files: name and dirty pages, by device and inode ---- */

static size_t file_slot(const struct blk_origin *o, uint32_t device, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)device << 40)) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & (o->capfiles - 1);

	while (o->files[i].used && (o->files[i].ino != ino || o->files[i].device != device))
		i = (i + 1) & (o->capfiles - 1);
	return i;
}

static struct file *file_find(const struct blk_origin *o, uint32_t device, uint64_t ino)
{
	size_t i;

	if (!o->nfiles)
		return NULL;
	i = file_slot(o, device, ino);
	return o->files[i].used ? &o->files[i] : NULL;
}

static struct file *file_get(struct blk_origin *o, uint32_t device, uint64_t ino)
{
	struct file *f = file_find(o, device, ino);
	size_t i;

	if (f)
		return f;
	if ((o->nfiles + 1) * 2 > o->capfiles) {
		size_t cap = o->capfiles ? o->capfiles * 2 : 64, oldcap = o->capfiles;
		struct file *old = o->files;

		o->files = calloc(cap, sizeof(*o->files));
		if (!o->files) {
			o->files = old;
			return NULL;
		}
		o->capfiles = cap;
		for (i = 0; i < oldcap; i++)
			if (old[i].used)
				o->files[file_slot(o, old[i].device, old[i].ino)] = old[i];
		free(old);
	}
	i = file_slot(o, device, ino);
	f = &o->files[i];
	f->used = 1;
	f->device = device;
	f->ino = ino;
	o->nfiles++;
	return f;
}

static int run_insert(struct file *f, size_t at, const struct run *r)
{
	if (grow(&f->run, f->n, &f->cap, sizeof(*f->run)))
		return -ENOMEM;
	memmove(&f->run[at + 1], &f->run[at], (f->n - at) * sizeof(*f->run));
	f->run[at] = *r;
	f->n++;
	return 0;
}

static void run_remove(struct file *f, size_t at)
{
	memmove(&f->run[at], &f->run[at + 1], (f->n - at - 1) * sizeof(*f->run));
	f->n--;
}

/* the first run of @f ending after byte @b */
static size_t run_after(const struct file *f, uint64_t b)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->run[mid].end <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void count_pages(struct blk_origin *o, int64_t pages, int64_t runs)
{
	o->stats.dirty_pages += (uint64_t)pages;
	o->stats.dirty_runs += (uint64_t)runs;
	if (o->stats.dirty_pages > o->stats.max_dirty_pages)
		o->stats.max_dirty_pages = o->stats.dirty_pages;
	if (o->stats.dirty_runs > o->stats.max_dirty_runs)
		o->stats.max_dirty_runs = o->stats.dirty_runs;
}

/* the pages of @r (a run) not dirty yet in @f (*@added of them): the first dirtier of a page
 * stays */
static int dirty_add(struct blk_origin *o, struct file *f, const struct run *r, uint64_t *added)
{
	size_t i = run_after(f, r->start);
	uint64_t c = r->start;

	*added = 0;
	while (c < r->end) {
		struct run piece = *r;
		size_t prev;

		if (i < f->n && f->run[i].start <= c) {
			c = f->run[i++].end;
			continue;
		}
		piece.start = c;
		piece.end = i < f->n && f->run[i].start < r->end ? f->run[i].start : r->end;
		c = piece.end;
		count_pages(o, (int64_t)((piece.end - piece.start) / piece.page), 0);
		*added += (piece.end - piece.start) / piece.page;
		prev = i - 1;
		if (i && f->run[prev].end == piece.start && f->run[prev].pid == piece.pid &&
		    f->run[prev].page == piece.page && f->run[prev].tag == piece.tag &&
		    !memcmp(f->run[prev].comm, piece.comm, 16)) {
			f->run[prev].end = piece.end; /* the same task's pages go on */
			continue;
		}
		if (run_insert(f, i, &piece))
			return -ENOMEM;
		count_pages(o, 0, 1);
		i++;
	}
	return 0;
}

int blk_origin_dirty_pdu(const struct blk_event *ev, struct blk_dirty_pdu *pdu)
{
	if (ev->pdu_len < sizeof(*pdu))
		return -EINVAL;
	memcpy(pdu, ev->pdu, sizeof(*pdu));
	if (!pdu->count || !pdu->page_size || pdu->index > UINT64_MAX / pdu->page_size - pdu->count)
		return -EINVAL;
	return 0;
}

static int take_dirty(struct blk_origin *o, const struct blk_event *ev, uint64_t tag,
		      uint64_t *added)
{
	struct blk_dirty_pdu pdu;
	struct run r;
	struct file *f;

	if (blk_origin_dirty_pdu(ev, &pdu))
		return -EINVAL;
	f = file_get(o, ev->device, pdu.ino);
	if (!f)
		return -ENOMEM;
	f->seen = 1;
	memset(&r, 0, sizeof(r));
	r.start = pdu.index * pdu.page_size;
	r.end = r.start + (uint64_t)pdu.count * pdu.page_size;
	r.tag = tag;
	r.pid = ev->pid;
	r.page = pdu.page_size;
	/* the name as far as its NUL, a byte that is not printable shown as '?' */
	for (size_t i = 0; i < 15 && pdu.comm[i]; i++)
		r.comm[i] = pdu.comm[i] >= ' ' && pdu.comm[i] <= '~' ? pdu.comm[i] : '?';
	if (dirty_add(o, f, &r, added))
		return -ENOMEM;
	o->stats.dirty++;
	return 1;
}

/* ---- file maps, per device ---- */

static struct devmap *devmap_find(const struct blk_origin *o, uint32_t device)
{
	for (size_t i = 0; i < o->ndev; i++)
		if (o->dev[i].device == device)
			return &o->dev[i];
	return NULL;
}

/* the first extent of @d ending after sector @s */
static size_t ext_after(const struct devmap *d, uint64_t s)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ext[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ext_insert(struct devmap *d, size_t at, const struct extent *e)
{
	if (grow(&d->ext, d->n, &d->cap, sizeof(*d->ext)))
		return -ENOMEM;
	memmove(&d->ext[at + 1], &d->ext[at], (d->n - at) * sizeof(*d->ext));
	d->ext[at] = *e;
	d->n++;
	return 0;
}

/* map @e, cutting what it covers out of the extents there */
static int fmap_add(struct devmap *d, const struct extent *e)
{
	size_t i = ext_after(d, e->start);

	while (i < d->n && d->ext[i].start < e->end) {
		struct extent *x = &d->ext[i];

		if (x->start < e->start && x->end > e->end) {
			/* @e inside @x: @x's tail after @e stays too */
			struct extent tail = *x;

			tail.offset += (e->end - x->start) << 9;
			tail.start = e->end;
			x->end = e->start;
			if (ext_insert(d, i + 1, &tail))
				return -ENOMEM;
			i++;
			break;
		}
		if (x->start < e->start) {
			x->end = e->start;
			i++;
		} else if (x->end > e->end) {
			x->offset += (e->end - x->start) << 9;
			x->start = e->end;
			break;
		} else {
			memmove(x, x + 1, (d->n - i - 1) * sizeof(*x));
			d->n--;
		}
	}
	return ext_insert(d, i, e);
}

static int take_fmap(struct blk_origin *o, const struct blk_event *ev)
{
	struct blk_fmap_pdu pdu;
	struct devmap *d;
	struct extent e;
	struct file *f;

	if (ev->pdu_len < sizeof(pdu))
		return -EINVAL;
	memcpy(&pdu, ev->pdu, sizeof(pdu));
	if (!pdu.bytes || pdu.bytes >= SECTOR_LIMIT || pdu.sector >= SECTOR_LIMIT ||
	    pdu.offset >= UINT64_MAX / 2)
		return -EINVAL;
	f = file_get(o, ev->device, pdu.ino);
	if (!f)
		return -ENOMEM;
	f->seen = 1;
	d = devmap_find(o, ev->device);
	if (!d) {
		if (grow(&o->dev, o->ndev, &o->capdev, sizeof(*o->dev)))
			return -ENOMEM;
		d = &o->dev[o->ndev++];
		memset(d, 0, sizeof(*d));
		d->device = ev->device;
	}
	e.start = pdu.sector;
	e.end = pdu.sector + ((pdu.bytes + 511) >> 9);
	e.ino = pdu.ino;
	e.offset = pdu.offset;
	if (fmap_add(d, &e))
		return -ENOMEM;
	o->stats.fmaps++;
	return 1;
}

static int take_file(struct blk_origin *o, const struct blk_event *ev)
{
	size_t n = ev->pdu_len;
	struct file *f;
	uint64_t ino;

	if (n <= 8 || n - 8 > BLK_FILE_PATH_MAX)
		return -EINVAL;
	for (size_t i = 8; i < n; i++)
		if (ev->pdu[i] < ' ' || ev->pdu[i] > '~')
			return -EINVAL;
	memcpy(&ino, ev->pdu, 8);
	/* a name may come before the maps (a reader taking names as it reads, maps in time
	   order): an inode no DIRTY or FMAP note names is counted by blk_origin_stats() */
	f = file_get(o, ev->device, ino);
	if (!f)
		return -ENOMEM;
	if (f->path)
		return 1; /* every stream names it: the first one stays */
	f->path = malloc(n - 8 + 1);
	if (!f->path)
		return -ENOMEM;
	memcpy(f->path, ev->pdu + 8, n - 8);
	f->path[n - 8] = '\0';
	o->stats.files++;
	return 1;
}

int blk_origin_note_tagged(struct blk_origin *o, const struct blk_event *ev, uint64_t tag,
			   uint64_t *pages)
{
	uint64_t added = 0;
	int ret;

	if (blk_event_is_dirty(ev))
		ret = take_dirty(o, ev, tag, &added);
	else if (blk_event_is_fmap(ev))
		ret = take_fmap(o, ev);
	else if (blk_event_is_file(ev))
		ret = take_file(o, ev);
	else
		ret = 0;
	if (ret == -EINVAL)
		o->stats.bad++;
	if (pages)
		*pages = ret > 0 ? added : 0;
	return ret;
}

int blk_origin_note(struct blk_origin *o, const struct blk_event *ev)
{
	return blk_origin_note_tagged(o, ev, 0, NULL);
}

/* ---- the I/Os ---- */

static size_t name_slot(const struct blk_origin *o, const char *s)
{
	size_t h = 5381, i;

	for (const char *c = s; *c; c++)
		h = h * 33 + (unsigned char)*c;
	for (i = h & (o->aindex - 1); o->index[i] && strcmp(o->index[i], s);
	     i = (i + 1) & (o->aindex - 1))
		;
	return i;
}

/* @s (at most 15 bytes: a task's name), kept as long as @o; NULL when out of memory */
static const char *intern(struct blk_origin *o, const char *s)
{
	size_t i;
	char *n;

	if (o->nindex && o->index[i = name_slot(o, s)])
		return o->index[i];
	if ((o->nindex + 1) * 2 > o->aindex) {
		const char **old = o->index;
		size_t oldn = o->aindex;

		o->index = calloc(o->aindex ? o->aindex * 2 : 64, sizeof(*o->index));
		if (!o->index) {
			o->index = old;
			return NULL;
		}
		o->aindex = o->aindex ? o->aindex * 2 : 64;
		for (i = 0; i < oldn; i++)
			if (old[i])
				o->index[name_slot(o, old[i])] = old[i];
		free(old);
	}
	if (!o->names || o->names->n == NAME_CHUNK) {
		struct name_chunk *c = calloc(1, sizeof(*c));

		if (!c)
			return NULL;
		c->next = o->names;
		o->names = c;
	}
	n = o->names->name[o->names->n++];
	memcpy(n, s, strnlen(s, 15));
	o->index[name_slot(o, n)] = n;
	o->nindex++;
	return n;
}

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* whether a task named @comm is a kernel writeback or file-system thread */
static int kernel_thread(const char *comm)
{
	static const char *const threads[] = {
		"kworker/", "flush-", "kswapd", "jbd2/",     "xfsaild/",  "xfs-",
		"xfs_",	    "ext4-",  "btrfs-", "writeback", "kcompactd", "khugepaged",
	};

	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
		if (prefix(comm, threads[i]))
			return 1;
	return 0;
}

/* @bytes more to @pid (a share of its own, or the one it has) */
static int share_add(struct blk_origin *o, uint32_t pid, const char *comm, uint64_t bytes)
{
	struct blk_origin_share *s;

	for (size_t i = 0; i < o->nshares; i++)
		if (o->shares[i].pid == pid) {
			o->shares[i].bytes += bytes;
			return 0;
		}
	if (grow(&o->shares, o->nshares, &o->capshares, sizeof(*o->shares)))
		return -ENOMEM;
	s = &o->shares[o->nshares++];
	s->pid = pid;
	memset(s->comm, 0, sizeof(s->comm));
	strncpy(s->comm, comm, sizeof(s->comm) - 1);
	s->bytes = bytes;
	return 0;
}

/* @bytes and @pages more of tag @tag taken by the I/O being looked up */
static int tag_add(struct blk_origin *o, uint64_t tag, uint64_t bytes, uint64_t pages)
{
	for (size_t i = 0; i < o->ntags; i++)
		if (o->tags[i].tag == tag) {
			o->tags[i].bytes += bytes;
			o->tags[i].pages += pages;
			return 0;
		}
	if (grow(&o->tags, o->ntags, &o->captags, sizeof(*o->tags)))
		return -ENOMEM;
	o->tags[o->ntags++] = (struct blk_origin_tag){tag, bytes, pages};
	return 0;
}

/*
 * The dirty pages of @f in bytes [@a, @b): their bytes to their dirtiers (and their tags),
 * and the pages out of the map. Return: the bytes charged, or -ENOMEM.
 */
static int64_t dirty_take(struct blk_origin *o, struct file *f, uint64_t a, uint64_t b)
{
	size_t i = run_after(f, a);
	int64_t got = 0;

	while (i < f->n && f->run[i].start < b) {
		struct run *r = &f->run[i];
		uint64_t lo = a > r->start ? a : r->start, hi = b < r->end ? b : r->end;
		uint64_t plo = lo / r->page * r->page, phi = (hi + r->page - 1) / r->page * r->page;

		if (share_add(o, r->pid, r->comm, hi - lo))
			return -ENOMEM;
		got += (int64_t)(hi - lo);
		if (plo < r->start)
			plo = r->start;
		if (phi > r->end)
			phi = r->end;
		if (r->tag && tag_add(o, r->tag, hi - lo, (phi - plo) / r->page))
			return -ENOMEM;
		count_pages(o, -(int64_t)((phi - plo) / r->page), 0);
		if (plo > r->start && phi < r->end) {
			struct run tail = *r;

			tail.start = phi;
			r->end = plo;
			if (run_insert(f, i + 1, &tail))
				return -ENOMEM;
			count_pages(o, 0, 1);
			break;
		}
		if (plo > r->start) {
			r->end = plo;
			i++;
		} else if (phi < r->end) {
			r->start = phi;
			break;
		} else {
			run_remove(f, i);
			count_pages(o, 0, -1);
		}
	}
	if (!f->n) {
		free(f->run);
		f->run = NULL;
		f->cap = 0;
	}
	return got;
}

static void set_file(struct blk_origin_result *r, const struct file *f, uint64_t offset)
{
	r->has_file = 1;
	r->ino = f->ino;
	r->offset = offset;
	r->path = f->path;
}

/* the mapped parts of @q: the file of the first, and a write's dirtied bytes */
static int64_t walk_maps(struct blk_origin *o, const struct blk_origin_query *q,
			 struct blk_origin_result *r)
{
	struct devmap *d = devmap_find(o, q->device);
	uint64_t lo = q->sector << 9, hi = lo + q->bytes; /* the I/O's bytes on the device */
	int64_t dirtied = 0;

	if (!d || q->sector >= SECTOR_LIMIT || q->bytes >= SECTOR_LIMIT)
		return 0;
	for (size_t i = ext_after(d, q->sector); i < d->n && d->ext[i].start << 9 < hi; i++) {
		const struct extent *x = &d->ext[i];
		uint64_t s = lo > x->start << 9 ? lo : x->start << 9;
		uint64_t e = hi < x->end << 9 ? hi : x->end << 9;
		uint64_t a = x->offset + (s - (x->start << 9)); /* file bytes [a, a + e - s) */
		struct file *f = file_find(o, q->device, x->ino);
		int64_t got;

		if (!f)
			continue;
		if (!r->has_file)
			set_file(r, f, a);
		if (!q->write)
			continue;
		got = dirty_take(o, f, a, a + (e - s));
		if (got < 0)
			return got;
		dirtied += got;
	}
	return dirtied;
}

int blk_origin_io(struct blk_origin *o, const struct blk_origin_query *q,
		  struct blk_origin_result *r)
{
	const char *comm = q->comm ? q->comm : "";
	int64_t dirtied;
	size_t top = 0;

	memset(r, 0, sizeof(*r));
	o->nshares = 0;
	o->ntags = 0;
	r->kind = BLK_ORIGIN_QUEUER;
	r->pid = q->pid;
	strncpy(r->comm, comm, sizeof(r->comm) - 1);
	r->shares = o->shares;
	dirtied = walk_maps(o, q, r);
	if (dirtied < 0)
		goto nomem;
	if (prefix(comm, "jbd2/"))
		r->kind = BLK_ORIGIN_JOURNAL;
	else if (q->write && !r->has_file && kernel_thread(comm))
		r->kind = BLK_ORIGIN_METADATA;
	if ((uint64_t)dirtied < q->bytes &&
	    share_add(o, q->pid, comm, q->bytes - (uint64_t)dirtied))
		goto nomem;
	for (size_t i = 0; i < o->nshares; i++) {
		if (o->shares[i].bytes > o->shares[top].bytes)
			top = i;
		if (o->shares[i].pid != q->pid)
			r->foreign += o->shares[i].bytes;
	}
	r->shares = o->shares;
	r->nshares = o->nshares;
	r->tags = o->tags;
	r->ntags = o->ntags;
	if (r->kind == BLK_ORIGIN_QUEUER && o->nshares && o->shares[top].pid != q->pid) {
		r->kind = BLK_ORIGIN_DIRTIER;
		r->pid = o->shares[top].pid;
		memcpy(r->comm, o->shares[top].comm, sizeof(r->comm));
	}
	r->name = intern(o, r->comm[0] ? r->comm : "-");
	if (!r->name)
		goto nomem;
	return 0;
nomem:
	o->nshares = 0;
	o->ntags = 0;
	r->nshares = 0;
	r->ntags = 0;
	r->foreign = 0;
	r->name = "-";
	return -ENOMEM;
}

int blk_origin_file(const struct blk_origin *o, uint32_t device, uint64_t sector, uint64_t *ino,
		    uint64_t *offset, const char **path)
{
	const struct devmap *d = devmap_find(o, device);
	const struct extent *x;
	size_t i;

	if (!d || (i = ext_after(d, sector)) == d->n || d->ext[i].start > sector)
		return 0;
	x = &d->ext[i];
	*ino = x->ino;
	*offset = x->offset + ((sector - x->start) << 9);
	*path = blk_origin_path(o, device, x->ino);
	return 1;
}

const char *blk_origin_path(const struct blk_origin *o, uint32_t device, uint64_t ino)
{
	const struct file *f = file_find(o, device, ino);

	return f ? f->path : NULL;
}

void blk_origin_stats(const struct blk_origin *o, struct blk_origin_stats *st)
{
	*st = o->stats;
	st->unknown = 0;
	for (size_t i = 0; i < o->capfiles; i++)
		if (o->files[i].used && o->files[i].path && !o->files[i].seen)
			st->unknown++;
	st->files -= st->unknown;
}

const char *blk_origin_kind_name(int kind)
{
	return kind == BLK_ORIGIN_JOURNAL    ? "journal"
	       : kind == BLK_ORIGIN_METADATA ? "metadata"
					     : "task";
}
