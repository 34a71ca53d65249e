/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a damaged trace file on past the damage: whether the reader stopped on damage,
 * where records start again, a reader from there, and its messages with the offsets counted
 * from the start of the file.
 */
#ifndef VERIFY_RESYNC_H
#define VERIFY_RESYNC_H

#include <stddef.h>
#include <stdint.h>

struct blk_reader;

/* Whether the reader's error @ret is about the data rather than about reading it. */
int resync_is_damage(int ret);

/**
 * resync_find() - the first offset at or after @from where records start again in @path: the
 * first place that holds a magic word (of either version, in either byte order) and from
 * which the reader decodes two records, or one and a clean end
 * Return: the offset, or -1 if there is none (or the file cannot be read).
 */
int64_t resync_find(const char *path, uint64_t from);

/* A reader of @path from byte @off on; its offsets count from there. NULL with errno set. */
struct blk_reader *resync_open_at(const char *path, uint64_t off);

/*
 * A reader started at byte @base counts offsets from there: copy @msg (which starts with
 * the quoted file name @name) to @buf with every "offset N" after the name made absolute.
 */
void resync_abs_offsets(const char *msg, uint64_t base, const char *name, char *buf, size_t size);

#endif /* VERIFY_RESYNC_H */
