/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blktrace --origin's file-system events (kernel/fsevents.c): the tracepoints that tie a page
 * to the task that dirtied it and a file's bytes to their place on the device, recognised by
 * their type number (common_type) in the blk tracer's ring and decoded with their format
 * files' layouts, for the converter (tfsconv.c) to write as origin notes (trace.h
 * BLK_TN_DIRTY, BLK_TN_FMAP). Pure functions and a set of inode numbers; internal to
 * kernel/ (the tracefs backend and the unit test of the converter).
 */
#ifndef BLK_KERNEL_FSEVENTS_H
#define BLK_KERNEL_FSEVENTS_H

#include <stddef.h>
#include <stdint.h>

/* The events, by what they tell. */
enum blk_fsev_ev {
	BLK_FSEV_EV_DIRTY_FOLIO, /* writeback/writeback_dirty_folio */
	BLK_FSEV_EV_DIRTY_PAGE, /* writeback/writeback_dirty_page (kernels before 5.19) */
	BLK_FSEV_EV_ADD_FOLIO, /* filemap/mm_filemap_add_to_page_cache (a folio's pages) */
	BLK_FSEV_EV_EXT_MAP, /* ext4/ext4_ext_map_blocks_exit */
	BLK_FSEV_EV_IND_MAP, /* ext4/ext4_ind_map_blocks_exit */
	BLK_FSEV_EV_ES_LOOKUP, /* ext4/ext4_es_lookup_extent_exit */
	BLK_FSEV_EV_IOMAP, /* iomap/iomap_iter_dstmap */
	/* writeback's maps (XFS's buffered writes): the same iomap fields */
	BLK_FSEV_EV_IOMAP_IOEND, /* iomap/iomap_add_to_ioend */
	BLK_FSEV_EV_IOMAP_WPMAP, /* iomap/iomap_writepage_map (older kernels) */
	BLK_FSEV_NEV,
};

/* The tracefs name ("group/event") of @ev. */
const char *blk_fsev_ev_name(enum blk_fsev_ev ev);

/* What an event said. */
enum blk_fsev_kind {
	BLK_FSEV_NONE, /* one of ours that says nothing to keep (a hole, another device) */
	BLK_FSEV_DIRTY, /* page @index of @ino became dirty (task @pid) */
	BLK_FSEV_FOLIO, /* a folio of 2^@order pages at @index of @ino entered the page cache */
	BLK_FSEV_FMAP, /* @bytes at @offset of @ino are at @sector */
};

struct blk_fsev_rec {
	enum blk_fsev_kind kind;
	int dev; /* index of the traced device */
	uint32_t pid;
	uint64_t ino;
	uint64_t index; /* DIRTY, FOLIO: in pages */
	unsigned int order; /* FOLIO */
	uint64_t offset, sector, bytes; /* FMAP */
};

/* The layouts of the events enabled, the traced devices and their file systems' blocks. */
struct blk_fsev;

/* For the @ndevs traced devices @devnos (kernel encoding, as in records). NULL: ENOMEM. */
struct blk_fsev *blk_fsev_new(const uint32_t *devnos, int ndevs);
void blk_fsev_free(struct blk_fsev *o);

/**
 * blk_fsev_set_format() - recognise event @ev by the layout in @format (the text of its
 * format file)
 * Return: 0, -EINVAL if the text is not understood, -EPROTO if the event lacks a field read.
 */
int blk_fsev_set_format(struct blk_fsev *o, enum blk_fsev_ev ev, const char *format);

/* Whether @ev is recognised (its format was set). */
int blk_fsev_has(const struct blk_fsev *o, enum blk_fsev_ev ev);

/* The size of a page (bytes): what a folio index counts. */
uint32_t blk_fsev_page_size(const struct blk_fsev *o);

/* The block size of the file system on device index @dev (0: none; its ext4 maps are left). */
void blk_fsev_set_block_size(struct blk_fsev *o, int dev, uint32_t bytes);

/**
 * blk_fsev_decode() - the event at @data (@len bytes, common_type first), if it is one of
 * ours
 * Return: 1 with *@r filled (its kind BLK_FSEV_NONE when there is nothing to keep), 0 if
 * it is not one of ours.
 */
int blk_fsev_decode(const struct blk_fsev *o, const unsigned char *data, size_t len,
		    struct blk_fsev_rec *r);

/* ---- a set of inode numbers ---- */

struct blk_fsev_inos {
	uint64_t *slot; /* ino + 1, 0 = free (inode 2^64 - 1 is not one) */
	size_t cap, n;
};

#define BLK_FSEV_INOS_INIT \
	{                  \
		NULL, 0, 0 \
	}

/* Add @ino. Return 1 if it was new, 0 if not, -ENOMEM. */
int blk_fsev_inos_add(struct blk_fsev_inos *s, uint64_t ino);

/* Whether @ino is in @s. */
int blk_fsev_inos_has(const struct blk_fsev_inos *s, uint64_t ino);

void blk_fsev_inos_release(struct blk_fsev_inos *s);

#endif /* BLK_KERNEL_FSEVENTS_H */
