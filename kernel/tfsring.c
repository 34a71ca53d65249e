// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU's ring buffer read from trace_pipe_raw, its pages converted as read or kept in an
 * unnamed file until the trace ends (tfsring.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "blk/backend.h"
#include "tfsconv.h"
#include "tfsring.h"
#include "util.h"

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

/* ---- a CPU's ring ---- */

/* pages read per call at most, so that a busy CPU's records are delivered as they come */
#define RING_READ_PAGES 256

struct tfs_ring {
	int fd; /* per_cpu/cpuN/trace_pipe_raw */
	struct tracefs_cpu *tcpu; /* libtracefs's reader of it */
	unsigned char *page;
	int size; /* of a page as trace_pipe_raw hands it out */
	int cpu;
	struct blk_tfsconv *conv;
	struct tfs_spool *spool; /* the pages kept until the stop, or NULL */
};

int tfs_ring_page_size(const char *dir, const struct blk_tfsconv *conv)
{
	char p[KPATH], v[32];
	long kb;

	snprintf(p, sizeof(p), "%s/buffer_subbuf_size_kb", dir);
	if (!read_str(p, v, sizeof(v)) && (kb = strtol(v, NULL, 10)) > 0 && kb <= 1024)
		return (int)kb * 1024;
	return blk_tfsconv_page_size(conv);
}

struct tfs_ring *tfs_ring_open(int fd, int size, int cpu, struct blk_tfsconv *conv,
			       const char *spool_dir)
{
	struct tfs_ring *r = calloc(1, sizeof(*r));
	int err = ENOMEM;

	if (!r || size <= 0 || !(r->page = malloc((size_t)size))) {
		err = r && size <= 0 ? EINVAL : ENOMEM;
		goto fail;
	}
	r->fd = fd;
	r->size = size;
	r->cpu = cpu;
	r->conv = conv;
	errno = 0;
	r->tcpu = tracefs_cpu_alloc_fd(fd, size, true);
	if (!r->tcpu) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	/* no room for it there: the pages are converted as they are read */
	if (spool_dir)
		r->spool = tfs_spool_new(spool_dir, (size_t)size);
	return r;
fail:
	if (r)
		r->fd = -1;
	tfs_ring_free(r);
	close(fd);
	errno = err;
	return NULL;
}

void tfs_ring_free(struct tfs_ring *r)
{
	if (!r)
		return;
	if (r->tcpu)
		tracefs_cpu_free_fd(r->tcpu);
	if (r->fd >= 0)
		close(r->fd);
	free(r->page);
	tfs_spool_free(r->spool);
	free(r);
}

int tfs_ring_cpu_open(const char *dir, const uint32_t *devnos, int ndevs, int cpu, int fd,
		      blk_tfsconv_comm_fn comm, void *ctx, const char *spool_dir,
		      struct blk_tfsconv **conv, struct tfs_ring **ring, char *err, size_t len)
{
	char p[KPATH], hp[4096];
	int ret;

	*conv = NULL;
	*ring = NULL;
	snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/trace_pipe_raw", dir, cpu);
	if (fd < 0) {
		kerr(err, len, "cannot open '%s': %s", p, strerror(-fd));
		return fd;
	}
	snprintf(p, sizeof(p), "%s/events/header_page", dir);
	ret = read_str(p, hp, sizeof(hp));
	if (!ret && !(*conv = blk_tfsconv_new(hp, devnos, ndevs, (uint32_t)cpu, comm, ctx)))
		ret = -errno;
	if (ret) {
		close(fd);
		kerr(err, len, "cannot read the ring-buffer page layout in '%s': %s", p,
		     strerror(-ret));
		return ret;
	}
	*ring = tfs_ring_open(fd, tfs_ring_page_size(dir, *conv), cpu, *conv, spool_dir);
	if (!*ring) {
		ret = -errno;
		kerr(err, len, "cannot read '%s/per_cpu/cpu%d/trace_pipe_raw': %s", dir, cpu,
		     strerror(-ret));
		return ret;
	}
	return 0;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int convert(struct tfs_ring *r, const void *page, size_t n, uint64_t *last, char *err,
		   size_t len)
{
	int ret = blk_tfsconv_page(r->conv, page, n, last);

	if (ret == -ENOMEM)
		kerr(err, len, "out of memory converting the records of CPU %d", r->cpu);
	else if (ret < 0)
		kerr(err, len, "CPU %d: trace_pipe_raw gave a page that is not one", r->cpu);
	return ret < 0 ? ret : 0;
}

/* wait at most @wait_ms for the ring to have pages to read (tracing_buffers_poll) */
static void wait_ring(struct tfs_ring *r, int wait_ms)
{
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};

	if (wait_ms > 0)
		poll(&pfd, 1, wait_ms);
}

/* the next page of the ring into r->page: its bytes, 0 for none, -errno */
static int read_page(struct tfs_ring *r, char *err, size_t len)
{
	int n = tracefs_cpu_read(r->tcpu, r->page, true);

	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		n = -errno;
		kerr(err, len, "reading trace_pipe_raw of CPU %d: %s", r->cpu, strerror(-n));
		return n;
	}
	return n < 0 ? 0 : n;
}

/*
 * While tracing runs, the pages go to the spool as they are; once stopped (or when the
 * spool's file fails: a full disk) they come back and are converted, a batch per call.
 * Return 0 with @b filled, 1 when the spool is done (freed: the ring is read as it comes
 * from now on), or -errno.
 */
static int spool_read(struct tfs_ring *r, int wait_ms, int stopped, struct tfs_ring_batch *b,
		      char *err, size_t len)
{
	int ret;

	if (!stopped && !tfs_spool_failed(r->spool)) {
		wait_ring(r, wait_ms);
		for (int pages = 0; pages < RING_READ_PAGES; pages++) {
			int n = read_page(r, err, len);

			if (n <= 0) {
				if (n < 0)
					return n;
				break;
			}
			b->got = 1;
			if (tfs_spool_add(r->spool, r->page, (size_t)n))
				break;
		}
		b->kept = 1;
		/* the file failed: what it kept is converted from now on */
		if (!tfs_spool_failed(r->spool))
			return 0;
		b->got = 0;
		b->kept = 0;
	}
	for (int pages = 0; pages < RING_READ_PAGES; pages++) {
		const void *p = tfs_spool_next(r->spool, &ret);

		if (!p) {
			if (ret) {
				kerr(err, len, "reading back the pages kept for CPU %d: %s", r->cpu,
				     strerror(-ret));
				return ret;
			}
			break;
		}
		if ((ret = convert(r, p, (size_t)r->size, &b->last, err, len)))
			return ret;
		b->got = 1;
	}
	if (b->got) {
		b->now = mono_now();
		return 0;
	}
	tfs_spool_free(r->spool);
	r->spool = NULL;
	return 1;
}

int tfs_ring_read(struct tfs_ring *r, int wait_ms, int stopped, struct tfs_ring_batch *b, char *err,
		  size_t len)
{
	int ret;

	memset(b, 0, sizeof(*b));
	if (r->spool) {
		ret = spool_read(r, wait_ms, stopped, b, err, len);
		if (ret <= 0)
			return ret;
		wait_ms = 0;
	}
	wait_ring(r, wait_ms);
	b->now = mono_now();
	for (int pages = 0; pages < RING_READ_PAGES; pages++) {
		int n = read_page(r, err, len);

		if (n < 0)
			return n;
		if (!n)
			break;
		if ((ret = convert(r, r->page, (size_t)n, &b->last, err, len)))
			return ret;
		b->got = 1;
	}
	return 0;
}

int tfs_ring_deliver(struct blk_tfsconv *conv, int ndevs, int k, const struct tfs_ring_batch *b,
		     int all, const struct blk_backend_sink *sink, char *err, size_t len)
{
	for (int i = 0; i < ndevs; i++) {
		unsigned long events;
		size_t n;
		const unsigned char *p = blk_tfsconv_staged(conv, i, &n, &events);

		if (n) {
			int ret;

			if (all)
				events = blk_tfsconv_staged_records(conv, i);
			ret = sink->records(sink->ctx, i, k, p, n, events);
			blk_tfsconv_clear(conv, i);
			if (ret) {
				kerr(err, len, "%s", strerror(-ret));
				return ret;
			}
		}
		if (sink->mark)
			sink->mark(sink->ctx, i, k,
				   b->got && b->last ? b->last : b->now - BLK_BACKEND_SLACK_NS);
	}
	return 0;
}
