// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "blk/output.h"

#define OUT_FLUSH_AT (128 * 1024)

struct blk_output {
	int fd;
	unsigned int flags;
	int err;
	struct blk_strbuf sb;
	z_stream zs;
	int zinit;
	unsigned char *zbuf;
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
	o->name = strdup(name ? name : "(output)");
	/* the buffer grows with the text up to the flush size: a short output stays small */
	blk_strbuf_grow(&o->sb, 4096);
	if (!o->name)
		goto fail;
	if (flags & BLK_OUTPUT_GZIP) {
		o->zbuf = malloc(OUT_FLUSH_AT);
		if (!o->zbuf ||
		    deflateInit2(&o->zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
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

static int write_all(struct blk_output *o, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(o->fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return set_err(o, errno);
		}
		if (w == 0)
			return set_err(o, EIO);
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int deflate_out(struct blk_output *o, const void *p, size_t n, int flush)
{
	int ret;

	o->zs.next_in = (unsigned char *)p;
	o->zs.avail_in = (uInt)n;
	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = OUT_FLUSH_AT;
		ret = deflate(&o->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return set_err(o, EIO);
		if (write_all(o, o->zbuf, OUT_FLUSH_AT - o->zs.avail_out))
			return -o->err;
	} while (o->zs.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static int drain(struct blk_output *o, int finish)
{
	int ret = 0;

	if (o->err) {
		o->sb.len = 0;
		return -o->err;
	}
	if (o->zinit)
		ret = deflate_out(o, o->sb.buf, o->sb.len, finish ? Z_FINISH : Z_NO_FLUSH);
	else if (o->sb.len)
		ret = write_all(o, o->sb.buf, o->sb.len);
	o->sb.len = 0;
	return ret;
}

int blk_output_check(struct blk_output *o)
{
	if (o->sb.len >= OUT_FLUSH_AT)
		return drain(o, 0);
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
	o->sb.len += blk_event_encode(ev, (unsigned char *)o->sb.buf + o->sb.len);
	return blk_output_check(o);
}

int blk_output_flush(struct blk_output *o)
{
	return drain(o, 0);
}

int blk_output_finish(struct blk_output *o)
{
	int ret;

	if (o->fd < 0)
		return o->err ? -o->err : 0;
	ret = drain(o, 1);
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
