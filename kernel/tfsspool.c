// SPDX-License-Identifier: GPL-2.0
/* A CPU's raw ring-buffer pages kept in an unnamed file until the trace ends (tfsspool.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfsspool.h"

/* pages per write to the file and per read back: one system call per 256 KiB of 4 KiB pages */
#define SPOOL_BATCH 64

struct tfs_spool {
	int fd;
	size_t psz;
	unsigned char *wbuf; /* pages not yet written (all of them once the file failed) */
	size_t wn; /* pages in wbuf */
	size_t wi; /* next page of wbuf to give back, once the file's pages are given back */
	unsigned char *rbuf; /* pages read back from the file */
	size_t rn, ri; /* pages in rbuf, next one to give back */
	off_t file_pages; /* whole pages in the file */
	off_t read_pages; /* of them, read back into rbuf */
	int failed; /* -errno: the file could not take more */
	int giving; /* next() was called: add() takes nothing more */
};

static int open_unnamed(const char *dir)
{
	char name[4200];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* a file system without O_TMPFILE: a name, gone as soon as it is open */
	if (snprintf(name, sizeof(name), "%s/.blktrace-spool.XXXXXX", dir) >= (int)sizeof(name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(name, O_CLOEXEC);
	if (fd >= 0)
		unlink(name);
	return fd;
}

struct tfs_spool *tfs_spool_new(const char *dir, size_t page_size)
{
	struct tfs_spool *s;
	int err = ENOMEM;

	if (!page_size) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	s->psz = page_size;
	s->fd = -1;
	s->wbuf = malloc(SPOOL_BATCH * page_size);
	s->rbuf = malloc(SPOOL_BATCH * page_size);
	if (!s->wbuf || !s->rbuf)
		goto fail;
	s->fd = open_unnamed(dir);
	if (s->fd < 0) {
		err = errno;
		goto fail;
	}
	return s;
fail:
	tfs_spool_free(s);
	errno = err;
	return NULL;
}

/* write wbuf to the file; what could not be written stays at its start */
static int flush(struct tfs_spool *s)
{
	size_t want = s->wn * s->psz, done = 0, pages;

	while (done < want) {
		ssize_t n = write(s->fd, s->wbuf + done, want - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s->failed = n < 0 ? -errno : -ENOSPC;
			break;
		}
		done += (size_t)n;
	}
	pages = done / s->psz;
	s->file_pages += (off_t)pages;
	if (s->failed) {
		/* a page written in part is not one: cut it off, the whole page stays here */
		if (done % s->psz && ftruncate(s->fd, s->file_pages * (off_t)s->psz))
			lseek(s->fd, s->file_pages * (off_t)s->psz, SEEK_SET);
		memmove(s->wbuf, s->wbuf + pages * s->psz, (s->wn - pages) * s->psz);
	}
	s->wn -= pages;
	return s->failed;
}

int tfs_spool_add(struct tfs_spool *s, const void *page, size_t len)
{
	unsigned char *p;

	if (s->failed)
		return s->failed;
	if (s->giving || len > s->psz)
		return -EINVAL;
	p = s->wbuf + s->wn * s->psz;
	memcpy(p, page, len);
	memset(p + len, 0, s->psz - len);
	if (++s->wn < SPOOL_BATCH)
		return 0;
	return flush(s);
}

/* the next batch of the file's pages into rbuf, their disk space freed */
static int load(struct tfs_spool *s)
{
	off_t left = s->file_pages - s->read_pages;
	size_t n = left > SPOOL_BATCH ? SPOOL_BATCH : (size_t)left, want = n * s->psz, got = 0;
	off_t at = s->read_pages * (off_t)s->psz;

	while (got < want) {
		ssize_t r = pread(s->fd, s->rbuf + got, want - got, at + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	/* not supported everywhere: the space then comes back when the file is closed */
	fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, (off_t)want);
	s->read_pages += (off_t)n;
	s->rn = n;
	s->ri = 0;
	return 0;
}

const void *tfs_spool_next(struct tfs_spool *s, int *err)
{
	*err = 0;
	s->giving = 1;
	if (s->ri == s->rn && s->read_pages < s->file_pages) {
		*err = load(s);
		if (*err)
			return NULL;
	}
	if (s->ri < s->rn)
		return s->rbuf + s->ri++ * s->psz;
	if (s->wi < s->wn)
		return s->wbuf + s->wi++ * s->psz;
	return NULL;
}

int tfs_spool_failed(const struct tfs_spool *s)
{
	return s->failed;
}

size_t tfs_spool_pending(const struct tfs_spool *s)
{
	return (size_t)(s->file_pages - s->read_pages) + (s->rn - s->ri) + (s->wn - s->wi);
}

void tfs_spool_free(struct tfs_spool *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->wbuf);
	free(s->rbuf);
	free(s);
}
