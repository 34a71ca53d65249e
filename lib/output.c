// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "blk/output.h"
#include "decode.h"

#define OUT_FLUSH_AT (128 * 1024)
/* room past the flush size for the line or record that reaches it */
#define OUT_SLACK 4096
/*
 * A write that is not the last ends at a multiple of this in the file, the bytes after it
 * kept for the next: the page cache gives a write folios as large as its alignment allows
 * (ext4 since 6.16), and writes of 72 KiB one after another cost a third more kernel time
 * than writes of 128 KiB each (dd of large-perf's merged trace: 89-91 ms CPU against 71-72).
 */
#define OUT_ALIGN (64 * 1024)

_Static_assert(offsetof(struct blk_io_trace2, time) == offsetof(struct blk_io_trace, time),
	       "the time at the same offset in both versions");

/*
 * The write-behind thread (blk_output_set_async()): the caller fills sb while the thread
 * writes (and compresses) the buffers handed to it before, in order; a hand-over swaps sb
 * with a free buffer. The thread may hold ASYNC_BUFS at once: one that writes slower than
 * the caller fills finds the next buffer waiting instead of sleeping until the caller's
 * wake-up, and once it has caught up and sleeps it is woken when all but one wait for it (or
 * at a flush or the finish), to run through them in one go. Measured on large-perf's -O -d
 * (medians of 31 interleaved rounds, 2026-12-07, quiet machine): 2 buffers 0.105 s, 1 buffer
 * 0.139 s (cat of the files 0.094 s). Spinning for the next buffer instead of sleeping
 * (up to 2026-12-06) won nothing, nor did writes of 192 KiB instead of the flush size.
 * Only the thread touches the descriptor and the z_stream while it runs.
 */
#define ASYNC_BUFS 2

struct out_async {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t more; /* for the thread: a buffer was handed over, or stop */
	pthread_cond_t room; /* for the caller: a buffer was written */
	struct blk_strbuf buf[ASYNC_BUFS]; /* ring: nfull to write from head, then the free */
	/* under mu */
	unsigned int head, nfull;
	int finish; /* the last buffer handed over is the last one (the gzip trailer follows it) */
	int thread_sleeps, caller_sleeps;
	int stop;
	int err; /* the thread's first write error (positive errno) */
};

struct blk_output {
	int fd;
	unsigned int flags;
	int err;
	struct blk_strbuf sb;
	struct out_async *as;
	z_stream zs;
	int zinit;
	unsigned char *zbuf;
	uint64_t off; /* the file offset after the bytes written (handed to the thread) so far */
	char *name;
	char msg[512];
};

struct blk_output *blk_output_fdopen(int fd, const char *name, unsigned int flags)
{
	struct blk_output *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->fd = fd;
	o->flags = flags;
	{
		off_t at = lseek(fd, 0, SEEK_CUR);

		o->off = at > 0 ? (uint64_t)at : 0;
	}
	o->name = strdup(name ? name : "(output)");
	/* the buffer grows with the text up to the flush size: a short output stays small */
	blk_strbuf_grow(&o->sb, 4096);
	if (!o->name)
		goto fail;
	if (flags & BLK_OUTPUT_GZIP) {
		o->zbuf = malloc(OUT_FLUSH_AT);
		if (!o->zbuf || deflateInit2(&o->zs, (flags & BLK_OUTPUT_GZIP_FAST) ? 1 : 6,
					     Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto fail;
		o->zinit = 1;
	}
	return o;
fail:
	free(o->zbuf);
	free(o->name);
	blk_strbuf_release(&o->sb);
	free(o);
	errno = ENOMEM;
	return NULL;
}

struct blk_output *blk_output_open(const char *path, unsigned int flags)
{
	struct blk_output *o;
	int fd, e;

	if (!strcmp(path, "-"))
		return blk_output_fdopen(STDOUT_FILENO, "(stdout)", flags | BLK_OUTPUT_NOCLOSE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	o = blk_output_fdopen(fd, path, flags);
	if (!o) {
		e = errno;
		close(fd);
		errno = e;
	}
	return o;
}

struct blk_strbuf *blk_output_sb(struct blk_output *o)
{
	return &o->sb;
}

static int set_err(struct blk_output *o, int e)
{
	if (!o->err) {
		o->err = e;
		snprintf(o->msg, sizeof(o->msg), "'%s': write failed: %s", o->name, strerror(e));
	}
	return -o->err;
}

/* Write @n bytes. Return 0 or a positive errno (the caller records it). */
static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int deflate_out(struct blk_output *o, const void *p, size_t n, int flush)
{
	int ret, e;

	o->zs.next_in = (unsigned char *)p;
	o->zs.avail_in = (uInt)n;
	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = OUT_FLUSH_AT;
		ret = deflate(&o->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return EIO;
		e = write_all(o->fd, o->zbuf, OUT_FLUSH_AT - o->zs.avail_out);
		if (e)
			return e;
	} while (o->zs.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

/* Write (or compress and write) @n bytes of pending text. Return 0 or a positive errno. */
static int put_out(struct blk_output *o, const void *p, size_t n, int finish)
{
	if (o->zinit)
		return deflate_out(o, p, n, finish ? Z_FINISH : Z_NO_FLUSH);
	return n ? write_all(o->fd, p, n) : 0;
}

static void *async_thread(void *arg)
{
	struct blk_output *o = arg;
	struct out_async *a = o->as;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct blk_strbuf *b;
		int e = 0, last;

		while (!a->nfull && !a->stop) {
			a->thread_sleeps = 1;
			pthread_cond_wait(&a->more, &a->mu);
			a->thread_sleeps = 0;
		}
		if (!a->nfull)
			break;
		b = &a->buf[a->head];
		last = a->finish && a->nfull == 1;
		pthread_mutex_unlock(&a->mu);
		/* after an error the rest is dropped: the caller reports the first error */
		if (!a->err)
			e = put_out(o, b->buf, b->len, last);
		b->len = 0;
		pthread_mutex_lock(&a->mu);
		if (e && !a->err)
			a->err = e;
		a->head = (a->head + 1) % ASYNC_BUFS;
		a->nfull--;
		if (a->caller_sleeps)
			pthread_cond_signal(&a->room);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/*
 * Hand the pending buffer to the thread but its last @keep bytes, which stay pending; with
 * @wait, until all is written. Under no lock.
 */
static int async_drain(struct blk_output *o, int finish, int wait, size_t keep)
{
	struct out_async *a = o->as;
	struct blk_strbuf t, *b;
	int e;

	pthread_mutex_lock(&a->mu);
	while (a->nfull == ASYNC_BUFS) {
		a->caller_sleeps = 1;
		pthread_cond_wait(&a->room, &a->mu);
		a->caller_sleeps = 0;
	}
	b = &a->buf[(a->head + a->nfull) % ASYNC_BUFS];
	t = *b;
	*b = o->sb;
	o->sb = t;
	o->sb.len = 0;
	if (keep) {
		if (o->sb.alloc < keep + 1)
			blk_strbuf_grow(&o->sb, keep);
		b->len -= keep;
		memcpy(o->sb.buf, b->buf + b->len, keep);
		o->sb.len = keep;
	}
	a->finish = finish;
	a->nfull++;
	/* a sleeping thread: woken when all but one buffer wait, or for a flush or the finish */
	if (a->thread_sleeps && (a->nfull + 1 >= ASYNC_BUFS || wait))
		pthread_cond_signal(&a->more);
	while (wait && a->nfull) {
		a->caller_sleeps = 1;
		pthread_cond_wait(&a->room, &a->mu);
		a->caller_sleeps = 0;
	}
	e = a->err;
	pthread_mutex_unlock(&a->mu);
	return e ? set_err(o, e) : 0;
}

static void async_free(struct out_async *a)
{
	pthread_cond_destroy(&a->more);
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->mu);
	for (unsigned int i = 0; i < ASYNC_BUFS; i++)
		blk_strbuf_release(&a->buf[i]);
	free(a);
}

static void async_stop(struct blk_output *o)
{
	struct out_async *a = o->as;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	if (a->err)
		set_err(o, a->err);
	async_free(a);
	o->as = NULL;
}

int blk_output_set_async(struct blk_output *o)
{
	struct out_async *a;
	sigset_t all, old;
	int e;

	if (o->as || o->fd < 0)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* each at its size once (the caller's own grows to it once filled): no buffer of an
	 * earlier size left behind in the heap, its pages touched */
	for (unsigned int i = 0; i < ASYNC_BUFS; i++)
		blk_strbuf_grow(&a->buf[i], OUT_FLUSH_AT + OUT_SLACK);
	if (o->sb.alloc < OUT_FLUSH_AT + OUT_SLACK)
		blk_strbuf_grow(&o->sb, OUT_FLUSH_AT + OUT_SLACK - o->sb.len);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->more, NULL);
	pthread_cond_init(&a->room, NULL);
	o->as = a;
	/* signals stay with the caller's thread, whose handlers expect them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&a->thread, NULL, async_thread, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		async_free(a);
		o->as = NULL;
		return -e;
	}
	return 0;
}

/*
 * Of the pending bytes, those after the last multiple of OUT_ALIGN in the file, kept for the
 * next write; none for the last write or a flush (@all), for compressed output, or when the
 * pending bytes reach no such multiple.
 */
static size_t aligned_keep(const struct blk_output *o, int all)
{
	size_t cut = (size_t)((o->off + o->sb.len) % OUT_ALIGN);

	return all || o->zinit || cut >= o->sb.len ? 0 : cut;
}

static int drain(struct blk_output *o, int finish, int wait)
{
	size_t keep;
	int e;

	if (o->err) {
		o->sb.len = 0;
		return -o->err;
	}
	keep = aligned_keep(o, finish || wait);
	o->off += o->sb.len - keep;
	if (o->as)
		return async_drain(o, finish, wait || finish, keep);
	e = put_out(o, o->sb.buf, o->sb.len - keep, finish);
	memmove(o->sb.buf, o->sb.buf + o->sb.len - keep, keep);
	o->sb.len = keep;
	return e ? set_err(o, e) : 0;
}

int blk_output_check(struct blk_output *o)
{
	if (o->sb.len >= OUT_FLUSH_AT)
		return drain(o, 0, 0);
	return o->err ? -o->err : 0;
}

int blk_output_write(struct blk_output *o, const void *p, size_t n)
{
	blk_strbuf_add(&o->sb, p, n);
	return blk_output_check(o);
}

int blk_output_event(struct blk_output *o, const struct blk_event *ev)
{
	size_t need = sizeof(struct blk_io_trace2) + ev->pdu_len;

	if (o->sb.alloc - o->sb.len < need + 1)
		blk_strbuf_grow(&o->sb, need);
	o->sb.len += encode_event(ev, (unsigned char *)o->sb.buf + o->sb.len);
	if (o->sb.len >= OUT_FLUSH_AT)
		return drain(o, 0, 0);
	return o->err ? -o->err : 0;
}

int blk_output_raw_bytes(struct blk_output *o, const unsigned char *data, size_t len,
			 uint64_t rebase)
{
	const unsigned char *end = data + len;

	/* a write (a hand-over) each time the pending bytes reach the flush size, the span split
	 * between records there: the buffers never grow past the flush size and a record */
	while (data < end) {
		unsigned char *b, *p, *lim;
		const unsigned char *q = data;
		size_t n, first;
		uint16_t pdu_len;

		memcpy(&pdu_len, data + offsetof(struct blk_io_trace, pdu_len), sizeof(pdu_len));
		first = sizeof(struct blk_io_trace) + pdu_len;
		if ((size_t)(end - data) < first)
			return -EINVAL; /* the span ends inside a record */
		if (o->sb.alloc - o->sb.len < first + 1)
			blk_strbuf_grow(&o->sb, first > OUT_FLUSH_AT ? first : OUT_FLUSH_AT);
		b = (unsigned char *)o->sb.buf;
		p = b + o->sb.len;
		lim = b + o->sb.alloc - 1;
		/* as much as there is room for, in one copy; the records wholly in it are kept */
		n = (size_t)(end - data) < (size_t)(lim - p) ? (size_t)(end - data)
							     : (size_t)(lim - p);
		memcpy(p, data, n);
		/* the records' bounds and times read from the source: just stored, the copy's
		 * bytes would make each load wait for the stores */
		while ((size_t)(q - data) + sizeof(struct blk_io_trace) <= n) {
			size_t at = (size_t)(q - data), l;
			uint64_t time;

			memcpy(&pdu_len, q + offsetof(struct blk_io_trace, pdu_len),
			       sizeof(pdu_len));
			l = sizeof(struct blk_io_trace) + pdu_len;
			if (l > n - at)
				break;
			memcpy(&time, q + offsetof(struct blk_io_trace, time), sizeof(time));
			time -= rebase;
			memcpy(p + at + offsetof(struct blk_io_trace, time), &time, sizeof(time));
			q += l;
			if ((size_t)(p - b) + at + l >= OUT_FLUSH_AT)
				break;
		}
		o->sb.len = (size_t)(p - b) + (size_t)(q - data);
		data = q;
		if (o->sb.len >= OUT_FLUSH_AT && drain(o, 0, 0))
			return -o->err;
	}
	return o->err ? -o->err : 0;
}

int blk_output_record(struct blk_output *o, const unsigned char *rec, size_t len, uint64_t time)
{
	unsigned char *p;

	if (o->sb.alloc - o->sb.len < len + 1)
		blk_strbuf_grow(&o->sb, len > OUT_FLUSH_AT ? len : OUT_FLUSH_AT);
	p = (unsigned char *)o->sb.buf + o->sb.len;
	memcpy(p, rec, len);
	/* both versions keep the time at offset 8 */
	memcpy(p + offsetof(struct blk_io_trace, time), &time, sizeof(time));
	o->sb.len += len;
	return blk_output_check(o);
}

int blk_output_flush(struct blk_output *o)
{
	return drain(o, 0, 1);
}

int blk_output_finish(struct blk_output *o)
{
	int ret;

	if (o->fd < 0)
		return o->err ? -o->err : 0;
	ret = drain(o, 1, 1);
	async_stop(o);
	if (!ret && o->err)
		ret = -o->err;
	if (o->zinit) {
		deflateEnd(&o->zs);
		o->zinit = 0;
	}
	if (!(o->flags & BLK_OUTPUT_NOCLOSE)) {
		if (close(o->fd) && !ret)
			ret = set_err(o, errno);
	}
	o->fd = -1;
	return ret;
}

void blk_output_free(struct blk_output *o)
{
	if (!o)
		return;
	async_stop(o);
	if (o->zinit)
		deflateEnd(&o->zs);
	if (o->fd >= 0 && !(o->flags & BLK_OUTPUT_NOCLOSE))
		close(o->fd);
	free(o->zbuf);
	free(o->name);
	blk_strbuf_release(&o->sb);
	free(o);
}

int blk_output_close(struct blk_output *o)
{
	int ret;

	if (!o)
		return 0;
	ret = blk_output_finish(o);
	blk_output_free(o);
	return ret;
}

const char *blk_output_error(const struct blk_output *o)
{
	return o->msg;
}
