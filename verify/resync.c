// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a damaged trace file on past the damage. The search for where records start again
 * leaves deciding what a record is to the reader: it tries each place that holds a magic word
 * and takes the first from which the reader decodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk/event.h"
#include "blk/frame.h"
#include "blk/reader.h"
#include "resync.h"

void resync_abs_offsets(const char *msg, uint64_t base, const char *name, char *buf, size_t size)
{
	const char *p = msg, *hit;
	size_t pos = 0, skip = strlen(name) + 4;
	int n;

	if (!base || strncmp(msg, "'", 1) || strncmp(msg + 1, name, skip - 4) ||
	    strncmp(msg + skip - 3, "': ", 3))
		skip = 0;
	n = snprintf(buf, size, "%.*s", (int)skip, msg);
	pos = n > 0 ? (size_t)n : 0;
	p = msg + skip;
	while (base && pos < size && (hit = strstr(p, "offset ")) != NULL) {
		char *end;
		unsigned long long v;

		hit += strlen("offset ");
		errno = 0;
		v = strtoull(hit, &end, 10);
		if (end == hit || errno)
			break;
		n = snprintf(buf + pos, size - pos, "%.*s%llu", (int)(hit - p), p,
			     v + (unsigned long long)base);
		if (n < 0)
			break;
		pos += (size_t)n;
		p = end;
	}
	if (pos < size)
		snprintf(buf + pos, size - pos, "%s", p);
}

struct blk_reader *resync_open_at(const char *path, uint64_t off)
{
	struct blk_reader *r;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (lseek(fd, (off_t)off, SEEK_SET) != (off_t)off) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	r = blk_reader_fdopen(fd, path);
	if (!r) {
		e = errno;
		close(fd);
		errno = e;
	}
	return r;
}

/*
 * Whether the reader decodes @path from byte @off on: two records, or one and a clean end.
 * This leaves deciding what a record is to the reader.
 */
static int records_at(const char *path, uint64_t off)
{
	struct blk_reader *r = resync_open_at(path, off);
	struct blk_event ev;
	int ok = 0, ret;

	if (!r)
		return 0;
	if (blk_reader_next(r, &ev) == 1) {
		ret = blk_reader_next(r, &ev);
		ok = ret == 1 || (ret == 0 && !*blk_reader_error(r));
	}
	blk_reader_close(r);
	return ok;
}

/* Whether @p (@n bytes) starts like a record the library knows, in either byte order. */
static int is_record_start(const unsigned char *p, size_t n)
{
	struct blk_event ev;
	int swapped = -1;

	return blk_frame(p, n, &swapped, &ev) >= 0;
}

int64_t resync_find(const char *path, uint64_t from)
{
	/* the magic's "a" is its second or third byte, whatever the byte order */
	const unsigned char key = (BLK_IO_TRACE_MAGIC >> 16) & 0xff;
	unsigned char buf[65536];
	uint64_t pos = from; /* file offset of buf[0] */
	int64_t found = -1;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (found < 0 && (n = pread(fd, buf, sizeof(buf), (off_t)pos)) >= 4) {
		const unsigned char *p = buf + 1, *end = buf + n - 1;

		/* a word starts 1 or 2 bytes before its "a": look for it in buf[1, n - 1) */
		while (found < 0 && p < end && (p = memchr(p, key, (size_t)(end - p))) != NULL) {
			for (int back = 2; back >= 1; back--) {
				const unsigned char *w = p - back;

				if (w >= buf && w + 4 <= buf + n &&
				    is_record_start(w, (size_t)(buf + n - w)) &&
				    records_at(path, pos + (uint64_t)(w - buf))) {
					found = (int64_t)(pos + (uint64_t)(w - buf));
					break;
				}
			}
			p++;
		}
		if (n < (ssize_t)sizeof(buf))
			break;
		/* a word may straddle the end: start the next window 3 bytes back */
		pos += (uint64_t)n - 3;
	}
	close(fd);
	return found;
}

int resync_is_damage(int ret)
{
	return ret == -EINVAL || ret == -EPIPE || ret == -EBADMSG || ret == -ENODATA;
}
