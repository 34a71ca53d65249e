// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace --origin's file-system events decoded (kernel/fsevents.h): each one's layout from
 * its format file (ftrace.c's parser), the entries of the ring recognised by their type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftrace.h"
#include "fsevents.h"

/* the fields read, by event; absent ones are NULL */
struct evfmt {
	int set;
	struct blk_ftrace_format fmt;
	const struct blk_ftrace_field *dev, *ino, *index, *order, *name;
	const struct blk_ftrace_field *pblk, *lblk, *len, *ret, *status, *found;
	const struct blk_ftrace_field *addr, *offset, *length, *type;
};

struct blk_fsev {
	struct evfmt ev[BLK_FSEV_NEV];
	uint32_t *devnos;
	uint32_t *bsize; /* per device: the block size of its file system, 0 if none */
	int ndevs;
	uint32_t page_size; /* the kernel's page (the unit of folio indexes) */
};

static const char *const ev_names[BLK_FSEV_NEV] = {
	[BLK_FSEV_EV_DIRTY_FOLIO] = "writeback/writeback_dirty_folio",
	[BLK_FSEV_EV_DIRTY_PAGE] = "writeback/writeback_dirty_page",
	[BLK_FSEV_EV_ADD_FOLIO] = "filemap/mm_filemap_add_to_page_cache",
	[BLK_FSEV_EV_EXT_MAP] = "ext4/ext4_ext_map_blocks_exit",
	[BLK_FSEV_EV_IND_MAP] = "ext4/ext4_ind_map_blocks_exit",
	[BLK_FSEV_EV_ES_LOOKUP] = "ext4/ext4_es_lookup_extent_exit",
	[BLK_FSEV_EV_IOMAP] = "iomap/iomap_iter_dstmap",
	[BLK_FSEV_EV_IOMAP_IOEND] = "iomap/iomap_add_to_ioend",
	[BLK_FSEV_EV_IOMAP_WPMAP] = "iomap/iomap_writepage_map",
};

/* ext4's extent status bits (fs/ext4/extents_status.h, as its trace prints them) */
#define ES_WRITTEN 0x1
#define ES_UNWRITTEN 0x2
#define ES_DELAYED 0x4
#define ES_HOLE 0x8
/* iomap types (include/linux/iomap.h) */
#define IOMAP_MAPPED 2
#define IOMAP_UNWRITTEN 3
#define IOMAP_NULL_ADDR (~0ull)

const char *blk_fsev_ev_name(enum blk_fsev_ev ev)
{
	return ev >= 0 && ev < BLK_FSEV_NEV ? ev_names[ev] : "?";
}

struct blk_fsev *blk_fsev_new(const uint32_t *devnos, int ndevs)
{
	struct blk_fsev *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->devnos = calloc((size_t)ndevs + 1, sizeof(*o->devnos));
	o->bsize = calloc((size_t)ndevs + 1, sizeof(*o->bsize));
	if (!o->devnos || !o->bsize) {
		blk_fsev_free(o);
		return NULL;
	}
	memcpy(o->devnos, devnos, (size_t)ndevs * sizeof(*devnos));
	o->ndevs = ndevs;
	o->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	return o;
}

void blk_fsev_free(struct blk_fsev *o)
{
	if (!o)
		return;
	free(o->devnos);
	free(o->bsize);
	free(o);
}

int blk_fsev_set_format(struct blk_fsev *o, enum blk_fsev_ev ev, const char *format)
{
	struct evfmt *e = &o->ev[ev];
	const struct blk_ftrace_format *f = &e->fmt;
	int ok = 1;

	memset(e, 0, sizeof(*e));
	if (blk_ftrace_format_parse(format, &e->fmt))
		return -EINVAL;
#define F(x, n) (e->x = blk_ftrace_field(f, n))
	switch (ev) {
	case BLK_FSEV_EV_DIRTY_FOLIO:
	case BLK_FSEV_EV_DIRTY_PAGE:
		ok = F(name, "name") && F(ino, "ino") && F(index, "index");
		break;
	case BLK_FSEV_EV_ADD_FOLIO:
		/* without the order (kernels before 6.7): single pages */
		F(order, "order");
		ok = F(dev, "s_dev") && F(ino, "i_ino") && F(index, "index");
		break;
	case BLK_FSEV_EV_EXT_MAP:
	case BLK_FSEV_EV_IND_MAP:
		ok = F(dev, "dev") && F(ino, "ino") && F(pblk, "pblk") && F(lblk, "lblk") &&
		     F(len, "len") && F(ret, "ret");
		break;
	case BLK_FSEV_EV_ES_LOOKUP:
		ok = F(dev, "dev") && F(ino, "ino") && F(pblk, "pblk") && F(lblk, "lblk") &&
		     F(len, "len") && F(status, "status") && F(found, "found");
		break;
	case BLK_FSEV_EV_IOMAP:
	case BLK_FSEV_EV_IOMAP_IOEND:
	case BLK_FSEV_EV_IOMAP_WPMAP:
		/* the device the address is on: bdev (the file system's own dev where absent) */
		if (!F(dev, "bdev"))
			F(dev, "dev");
		ok = e->dev && F(ino, "ino") && F(addr, "addr") && F(offset, "offset") &&
		     F(length, "length") && F(type, "type");
		break;
	default:
		return -EINVAL;
	}
#undef F
	if (!ok)
		return -EPROTO;
	e->set = 1;
	return 0;
}

int blk_fsev_has(const struct blk_fsev *o, enum blk_fsev_ev ev)
{
	return o->ev[ev].set;
}

uint32_t blk_fsev_page_size(const struct blk_fsev *o)
{
	return o->page_size;
}

void blk_fsev_set_block_size(struct blk_fsev *o, int dev, uint32_t bytes)
{
	if (dev >= 0 && dev < o->ndevs)
		o->bsize[dev] = bytes;
}

static int dev_index(const struct blk_fsev *o, uint32_t devno)
{
	for (int i = 0; i < o->ndevs; i++)
		if (o->devnos[i] == devno)
			return i;
	return -1;
}

/* a bdi's name, "MAJ:MIN", as a device number (kernel encoding); ~0u if it is not one */
static uint32_t bdi_devno(const char *name)
{
	unsigned int maj, min;
	char end;

	if (sscanf(name, "%u:%u%c", &maj, &min, &end) != 2 || maj >= 4096 || min >= (1u << 20))
		return ~0u;
	return maj << 20 | min;
}

#define GET(e, x) ((uint64_t)blk_ftrace_get_int((e)->x, data, len))

/* an ext4 map in file-system blocks: a note where it maps blocks and the block size is known */
static void ext4_map(const struct blk_fsev *o, uint64_t lblk, uint64_t pblk, uint64_t n,
		     struct blk_fsev_rec *r)
{
	uint64_t bs = o->bsize[r->dev];

	if (!bs || !pblk || !n || n > (1ull << 32) / 2)
		return;
	r->kind = BLK_FSEV_FMAP;
	r->offset = lblk * bs;
	r->sector = pblk * (bs / 512);
	r->bytes = n * bs;
}

int blk_fsev_decode(const struct blk_fsev *o, const unsigned char *data, size_t len,
		    struct blk_fsev_rec *r)
{
	const struct evfmt *e = NULL;
	uint16_t type;
	int which = -1;
	char name[64];

	if (len < 8)
		return 0;
	memcpy(&type, data, sizeof(type));
	for (int i = 0; i < BLK_FSEV_NEV; i++)
		if (o->ev[i].set && o->ev[i].fmt.id == type) {
			e = &o->ev[i];
			which = i;
			break;
		}
	if (!e)
		return 0;
	memset(r, 0, sizeof(*r));
	r->kind = BLK_FSEV_NONE;
	memcpy(&r->pid, data + 4, sizeof(r->pid)); /* common_pid */
	r->ino = GET(e, ino);
	if (which == BLK_FSEV_EV_DIRTY_FOLIO || which == BLK_FSEV_EV_DIRTY_PAGE) {
		blk_ftrace_get_str(e->name, data, len, name, sizeof(name));
		r->dev = dev_index(o, bdi_devno(name));
	} else {
		r->dev = dev_index(o, (uint32_t)GET(e, dev));
	}
	if (r->dev < 0 || !r->ino)
		return 1;
	switch (which) {
	case BLK_FSEV_EV_DIRTY_FOLIO:
	case BLK_FSEV_EV_DIRTY_PAGE:
		r->kind = BLK_FSEV_DIRTY;
		r->index = GET(e, index);
		break;
	case BLK_FSEV_EV_ADD_FOLIO:
		r->kind = BLK_FSEV_FOLIO;
		r->index = GET(e, index);
		r->order = e->order ? (unsigned int)GET(e, order) : 0;
		if (r->order > 20)
			r->kind = BLK_FSEV_NONE;
		break;
	case BLK_FSEV_EV_EXT_MAP:
	case BLK_FSEV_EV_IND_MAP:
		/* ret > 0: that many blocks mapped (or unwritten) from lblk on */
		if ((int64_t)GET(e, ret) > 0)
			ext4_map(o, GET(e, lblk), GET(e, pblk), GET(e, len), r);
		break;
	case BLK_FSEV_EV_ES_LOOKUP: {
		uint64_t st = GET(e, status);

		/* a cached extent on disk: not delayed (no blocks yet) nor a hole */
		if (GET(e, found) && (st & (ES_WRITTEN | ES_UNWRITTEN)) &&
		    !(st & (ES_DELAYED | ES_HOLE)))
			ext4_map(o, GET(e, lblk), GET(e, pblk), GET(e, len), r);
		break;
	}
	case BLK_FSEV_EV_IOMAP:
	case BLK_FSEV_EV_IOMAP_IOEND:
	case BLK_FSEV_EV_IOMAP_WPMAP: {
		uint64_t t = GET(e, type), addr = GET(e, addr);
		int64_t off = (int64_t)GET(e, offset);
		uint64_t n = GET(e, length);

		if ((t == IOMAP_MAPPED || t == IOMAP_UNWRITTEN) && addr != IOMAP_NULL_ADDR &&
		    off >= 0 && n && !(addr % 512)) {
			r->kind = BLK_FSEV_FMAP;
			r->offset = (uint64_t)off;
			r->sector = addr / 512;
			r->bytes = n;
		}
		break;
	}
	default:
		break;
	}
	return 1;
}

/* ---- a set of inode numbers ---- */

static size_t ino_slot(const uint64_t *slot, size_t cap, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);

	while (slot[i] && slot[i] != key)
		i = (i + 1) & (cap - 1);
	return i;
}

int blk_fsev_inos_add(struct blk_fsev_inos *s, uint64_t ino)
{
	uint64_t key = ino + 1;
	size_t i;

	if (!key)
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *ns = calloc(cap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++)
			if (s->slot[j])
				ns[ino_slot(ns, cap, s->slot[j])] = s->slot[j];
		free(s->slot);
		s->slot = ns;
		s->cap = cap;
	}
	i = ino_slot(s->slot, s->cap, key);
	if (s->slot[i])
		return 0;
	s->slot[i] = key;
	s->n++;
	return 1;
}

int blk_fsev_inos_has(const struct blk_fsev_inos *s, uint64_t ino)
{
	return s->cap && ino + 1 && s->slot[ino_slot(s->slot, s->cap, ino + 1)] == ino + 1;
}

void blk_fsev_inos_release(struct blk_fsev_inos *s)
{
	free(s->slot);
	s->slot = NULL;
	s->cap = s->n = 0;
}
