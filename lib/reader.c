// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "blk/reader.h"
#include "decode.h"

/*
 * The buffer starts at RD_BUF_MIN and doubles while reads fill it, up to RD_BUF_SIZE: a
 * small input (a short pipe burst, a fuzz input) costs 16 KiB, a long one gets 128 KiB
 * reads after a few of them.
 */
#define RD_BUF_MIN (16 * 1024)
#define RD_BUF_SIZE (128 * 1024)
#define RD_ZBUF_SIZE (64 * 1024)
/* a read into the buffer has at least this much room after the unread bytes */
#define RD_READ_ROOM 4096
/* a header plus the largest payload a 16-bit pdu_len can describe */
#define RD_MAX_RECORD (64 + 65535)

struct blk_reader {
	int fd;
	int eof; /* the descriptor (or gzip stream) has no more bytes */
	int failed;
	int regular; /* regular file: reads never wait */
	int swapped; /* -1 unknown */
	int gz;
	int wait_ms; /* how long blk_reader_ready() waits for a pipe */
	int polled; /* a poll found data that no read has taken yet */
	unsigned char *buf;
	size_t cap, pos, end; /* unread bytes are buf[pos, end) */
	size_t max_cap; /* the buffer doubles up to this (RD_BUF_SIZE) */
	uint64_t base; /* input offset of buf[0] */
	uint64_t records;
	uint64_t last_off; /* offset and pdu_len of the last good record */
	unsigned int last_pdu;
	const unsigned char *last_rec; /* its bytes in buf (until the next read) */
	z_stream zs;
	unsigned char *zin;
	int zinit;
	int zdone; /* inflate hit the end of a member with no more input */
	char *name;
	char err[512];
};

static int set_error(struct blk_reader *r, int e, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "'%s': ", r->name);
	if (n < 0 || (size_t)n >= sizeof(r->err) / 2) {
		/* keep room for the message: cut a very long name short */
		n = (int)(sizeof(r->err) / 2);
		memcpy(r->err + n - 6, "...': ", 7);
	}
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = e;
	r->pos = r->end;
	return -e;
}

struct blk_reader *blk_reader_fdopen(int fd, const char *name)
{
	struct blk_reader *r = calloc(1, sizeof(*r));
	struct stat st;

	if (!r)
		return NULL;
	r->fd = fd;
	r->swapped = -1;
	r->cap = RD_BUF_MIN;
	r->max_cap = RD_BUF_SIZE;
	r->buf = malloc(r->cap);
	r->name = strdup(name ? name : "(input)");
	if (!r->buf || !r->name) {
		blk_reader_close(r);
		errno = ENOMEM;
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		r->regular = 1;
	return r;
}

struct blk_reader *blk_reader_open(const char *path)
{
	struct blk_reader *r;
	int fd, e;

	if (!strcmp(path, "-"))
		fd = dup(STDIN_FILENO);
	else
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	r = blk_reader_fdopen(fd, path);
	if (!r) {
		e = errno;
		close(fd);
		errno = e;
	}
	return r;
}

void blk_reader_close(struct blk_reader *r)
{
	if (!r)
		return;
	if (r->zinit)
		inflateEnd(&r->zs);
	if (r->fd >= 0)
		close(r->fd);
	free(r->zin);
	free(r->buf);
	free(r->name);
	free(r);
}

const char *blk_reader_name(const struct blk_reader *r)
{
	return r->name;
}

const char *blk_reader_error(const struct blk_reader *r)
{
	return r->err;
}

int blk_reader_swapped(const struct blk_reader *r)
{
	return r->swapped == 1;
}

int blk_reader_compressed(const struct blk_reader *r)
{
	return r->gz;
}

void blk_reader_set_buf_size(struct blk_reader *r, size_t bytes)
{
	r->max_cap = bytes > RD_BUF_MIN ? bytes : RD_BUF_MIN;
}

uint64_t blk_reader_offset(const struct blk_reader *r)
{
	return r->base + r->pos;
}

uint64_t blk_reader_records(const struct blk_reader *r)
{
	return r->records;
}

const unsigned char *blk_reader_last_native(const struct blk_reader *r)
{
	uint32_t magic;

	if (!r->records || r->swapped)
		return NULL;
	memcpy(&magic, r->last_rec, 4);
	return magic == (BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION) ? r->last_rec : NULL;
}

static ssize_t raw_read(struct blk_reader *r, void *dst, size_t len)
{
	ssize_t n;

	for (;;) {
		n = read(r->fd, dst, len);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* Start gzip decoding: the bytes already in buf[pos,end) are compressed input. */
static int start_gzip(struct blk_reader *r)
{
	size_t have = r->end - r->pos;

	r->zin = malloc(RD_ZBUF_SIZE > have ? RD_ZBUF_SIZE : have);
	if (!r->zin)
		return -ENOMEM;
	memcpy(r->zin, r->buf + r->pos, have);
	memset(&r->zs, 0, sizeof(r->zs));
	if (inflateInit2(&r->zs, 15 + 32) != Z_OK)
		return -ENOMEM;
	r->zinit = 1;
	r->zs.next_in = r->zin;
	r->zs.avail_in = (uInt)have;
	r->gz = 1;
	r->end = r->pos;
	return 0;
}

/* Decompress into buf[end, cap). Return bytes produced, 0 at end, or -errno. */
static ssize_t gz_fill(struct blk_reader *r)
{
	size_t room = r->cap - r->end;
	int ret;

	if (r->zdone)
		return 0;
	r->zs.next_out = r->buf + r->end;
	r->zs.avail_out = (uInt)room;
	while (r->zs.avail_out == room) {
		if (r->zs.avail_in == 0) {
			ssize_t n = raw_read(r, r->zin, RD_ZBUF_SIZE);

			if (n < 0)
				return -errno;
			if (n == 0) {
				r->zdone = 1;
				/* input ended inside a gzip member */
				if (r->zs.total_in)
					return -ENODATA;
				break;
			}
			r->zs.next_in = r->zin;
			r->zs.avail_in = (uInt)n;
		}
		ret = inflate(&r->zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			/* concatenated members are allowed, as gzip allows them */
			if (inflateReset(&r->zs) != Z_OK)
				return -EIO;
			continue;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return -EBADMSG;
		if (ret == Z_BUF_ERROR && r->zs.avail_in)
			return -EBADMSG;
	}
	return (ssize_t)(room - r->zs.avail_out);
}

/* Make at least @need unread bytes available. Return 1, 0 at EOF (short), or -errno. */
static int fill(struct blk_reader *r, size_t need)
{
	while (r->end - r->pos < need) {
		ssize_t n;

		if (r->eof)
			return 0;
		/*
		 * The unread bytes move to the front whenever the room after them is short,
		 * before the buffer may grow: growing while the room before them lay unused
		 * doubled the buffer at each such read of a pipe (a read that ended just short
		 * of the last 4 KiB), without bound on a long live input.
		 */
		if (r->pos > 0 &&
		    (r->cap - r->end < RD_READ_ROOM || r->cap - r->pos < need + RD_READ_ROOM)) {
			memmove(r->buf, r->buf + r->pos, r->end - r->pos);
			r->base += r->pos;
			r->end -= r->pos;
			r->pos = 0;
		}
		while (r->cap - r->pos < need + RD_READ_ROOM) {
			size_t ncap = r->cap * 2;
			unsigned char *nb = realloc(r->buf, ncap);

			if (!nb)
				return -ENOMEM;
			r->buf = nb;
			r->cap = ncap;
		}
		r->polled = 0;
		if (r->gz) {
			n = gz_fill(r);
			if (n < 0)
				return (int)n;
		} else {
			n = raw_read(r, r->buf + r->end, r->cap - r->end);
			if (n < 0)
				return -errno;
		}
		if (n == 0) {
			r->eof = 1;
			return 0;
		}
		if ((size_t)n == r->cap - r->end && r->cap < r->max_cap) {
			/*
			 * The read filled the buffer: more is coming, read more at a time. A
			 * regular file goes to the full size at once: each size left behind
			 * is freed memory whose pages stay touched.
			 */
			size_t ncap = r->regular ? r->max_cap : r->cap * 2;
			unsigned char *nb = realloc(r->buf, ncap);

			if (!nb)
				return -ENOMEM;
			r->buf = nb;
			r->cap = ncap;
		}
		r->end += (size_t)n;
		if (!r->gz && r->base == 0 && r->records == 0 && r->end >= 2 && r->pos == 0 &&
		    r->buf[0] == 0x1f && r->buf[1] == 0x8b) {
			int e = start_gzip(r);

			if (e)
				return e;
		}
	}
	return 1;
}

static int ready_within(struct blk_reader *r, int ms)
{
	struct pollfd p;

	if (r->eof || r->failed || r->regular)
		return 1;
	if (r->end - r->pos >= sizeof(struct blk_io_trace)) {
		/* a whole record buffered (or damage to report) counts as ready */
		const unsigned char *p = r->buf + r->pos;
		uint32_t magic;
		uint16_t pdu;
		size_t hdr = sizeof(struct blk_io_trace), off = 46;

		memcpy(&magic, p, 4);
		if (r->swapped == 1)
			magic = __builtin_bswap32(magic);
		if ((magic & 0xff) == BLK_IO_TRACE2_VERSION) {
			hdr = sizeof(struct blk_io_trace2);
			off = 50;
		}
		if ((magic & BLK_IO_TRACE_MAGIC_MASK) != BLK_IO_TRACE_MAGIC)
			return 1;
		if (r->end - r->pos >= hdr) {
			memcpy(&pdu, p + off, 2);
			if (r->swapped == 1)
				pdu = __builtin_bswap16(pdu);
			if (r->end - r->pos >= hdr + pdu)
				return 1;
		}
	}
	if ((r->gz && r->zs.avail_in) || r->polled)
		return 1;
	p.fd = r->fd;
	p.events = POLLIN;
	p.revents = 0;
	r->polled = poll(&p, 1, ms) > 0;
	return r->polled;
}

int blk_reader_ready(struct blk_reader *r)
{
	return ready_within(r, r->wait_ms);
}

int blk_reader_would_wait(struct blk_reader *r)
{
	return !ready_within(r, 0);
}

void blk_reader_set_wait(struct blk_reader *r, int ms)
{
	r->wait_ms = ms;
}

static int io_error(struct blk_reader *r, int ret, uint64_t off)
{
	if (ret == -ENODATA || ret == -EBADMSG)
		return set_error(
			r, -ret,
			"compressed data %s in the record at offset %llu (truncated or damaged .gz file)",
			ret == -ENODATA ? "ends early" : "is corrupt", (unsigned long long)off);
	return set_error(r, -ret, "read error at offset %llu: %s", (unsigned long long)off,
			 strerror(-ret));
}

/* @ev, decoded from the @hdr-byte header at @p (input offset @off): step over the record */
static int take(struct blk_reader *r, struct blk_event *ev, unsigned char *p, size_t hdr,
		uint64_t off)
{
	ev->pdu = p + hdr;
	ev->offset = off;
	r->last_rec = p;
	r->pos += hdr + ev->pdu_len;
	r->records++;
	r->last_off = off;
	r->last_pdu = ev->pdu_len;
	return 1;
}

/* Everything but the common case (blk_reader_next()): kept apart, so that the common case
 * needs few registers and its calls are cheap. */
static int __attribute__((noinline)) next_slow(struct blk_reader *r, struct blk_event *ev)
{
	unsigned char *p;
	uint32_t magic, m;
	uint64_t off;
	size_t hdr;
	int ret, version;

	if (r->failed)
		return 0;
	ret = fill(r, 4);
	if (ret < 0)
		return io_error(r, ret, blk_reader_offset(r));
	off = blk_reader_offset(r);
	if (ret == 0) {
		if (r->end == r->pos)
			return 0;
		return set_error(
			r, EPIPE,
			"truncated record at offset %llu: input ends after %zu bytes of a record header (trace cut short; every complete record before it was used)",
			(unsigned long long)off, r->end - r->pos);
	}
	p = r->buf + r->pos;
	memcpy(&magic, p, 4);
	if (r->swapped < 0) {
		if ((magic & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
			r->swapped = 0;
		else if ((bswap32(magic) & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
			r->swapped = 1;
		else
			return set_error(
				r, EINVAL,
				"not a block trace: bad magic 0x%08x at offset %llu (expected 0x%08x-0x%08x%s)",
				magic, (unsigned long long)off,
				BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
				BLK_IO_TRACE_MAGIC | BLK_IO_TRACE2_VERSION,
				r->gz ? ", after gzip decompression" : "");
	}
	m = r->swapped ? bswap32(magic) : magic;
	if ((m & BLK_IO_TRACE_MAGIC_MASK) != BLK_IO_TRACE_MAGIC) {
		if (r->records && r->last_pdu)
			return set_error(
				r, EINVAL,
				"bad magic 0x%08x at offset %llu (the record at offset %llu claims a %u-byte payload: corrupt pdu_len or damaged data)",
				m, (unsigned long long)off, (unsigned long long)r->last_off,
				r->last_pdu);
		return set_error(r, EINVAL,
				 "bad magic 0x%08x at offset %llu (damaged or not a trace file)", m,
				 (unsigned long long)off);
	}
	version = m & 0xff;
	if (version == BLK_IO_TRACE_VERSION)
		hdr = sizeof(struct blk_io_trace);
	else if (version == BLK_IO_TRACE2_VERSION)
		hdr = sizeof(struct blk_io_trace2);
	else
		return set_error(
			r, EINVAL,
			"unsupported trace version %d at offset %llu (versions 7 and 8 are known)",
			version, (unsigned long long)off);
	ret = fill(r, hdr);
	if (ret < 0)
		return io_error(r, ret, off);
	if (ret == 0)
		return set_error(
			r, EPIPE,
			"truncated record at offset %llu: input ends after %zu of %zu header bytes (trace cut short; every complete record before it was used)",
			(unsigned long long)off, r->end - r->pos, hdr);
	p = r->buf + r->pos;
	if (version == BLK_IO_TRACE_VERSION)
		decode_v1(p, r->swapped, ev);
	else
		decode_v2(p, r->swapped, ev);
	if (ev->pdu_len) {
		ret = fill(r, hdr + ev->pdu_len);
		if (ret < 0)
			return io_error(r, ret, off);
		if (ret == 0)
			return set_error(
				r, EPIPE,
				"truncated record at offset %llu: pdu_len %u but only %zu payload bytes follow (trace cut short or corrupt pdu_len)",
				(unsigned long long)off, ev->pdu_len, r->end - r->pos - hdr);
		p = r->buf + r->pos;
	}
	if (ev->cpu >= BLK_MAX_CPUS)
		return set_error(
			r, EINVAL,
			"impossible cpu %u in the record at offset %llu (damaged data or wrong byte order)",
			ev->cpu, (unsigned long long)off);
	if (r->swapped && ev->pdu_len >= 8 &&
	    blk_event_action32(ev) == BLK_TN_ACTION(BLK_TN_TIMESTAMP)) {
		uint32_t w[2];

		/* the two words of a timestamp note are in the tracing host's order */
		memcpy(w, p + hdr, 8);
		w[0] = bswap32(w[0]);
		w[1] = bswap32(w[1]);
		memcpy(p + hdr, w, 8);
	}
	return take(r, ev, p, hdr, off);
}

/*
 * The length of the plain record at @p (@left bytes buffered): a host-order version-7 record
 * of CPU @want_cpu, not a note, wholly buffered; 0 for anything else.
 */
static inline size_t plain_len(const unsigned char *p, size_t left, uint32_t want_cpu)
{
	uint32_t magic, cpu, action;
	uint16_t pdu_len;

	if (left < sizeof(struct blk_io_trace))
		return 0;
	FIELD(magic, struct blk_io_trace, magic);
	FIELD(pdu_len, struct blk_io_trace, pdu_len);
	FIELD(cpu, struct blk_io_trace, cpu);
	FIELD(action, struct blk_io_trace, action);
	if (magic != (BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION) || cpu != want_cpu ||
	    (action & BLK_TC_ACT(BLK_TC_NOTIFY)) || left < sizeof(struct blk_io_trace) + pdu_len)
		return 0;
	return sizeof(struct blk_io_trace) + pdu_len;
}

const unsigned char *blk_reader_plain_span(struct blk_reader *r, uint32_t want_cpu,
					   unsigned int max, unsigned int *n, size_t *len)
{
	const unsigned char *start = r->buf + r->pos, *p = start, *last = NULL;
	size_t left = r->end - r->pos, l;
	unsigned int k = 0;

	*n = 0;
	*len = 0;
	if (r->swapped || r->failed)
		return NULL;
	while (k < max && (l = plain_len(p, left, want_cpu))) {
		last = p;
		p += l;
		left -= l;
		k++;
	}
	if (!k)
		return NULL;
	r->last_rec = last;
	r->last_off = r->base + (size_t)(last - r->buf);
	r->last_pdu = (uint16_t)((size_t)(p - last) - sizeof(struct blk_io_trace));
	r->pos += (size_t)(p - start);
	r->records += k;
	*n = k;
	*len = (size_t)(p - start);
	return start;
}

int blk_reader_next(struct blk_reader *r, struct blk_event *ev)
{
	/* the common case first: a host-order version-7 record, wholly buffered */
	if (!r->swapped && r->end - r->pos >= sizeof(struct blk_io_trace) && !r->failed) {
		const unsigned char *p = r->buf + r->pos;
		uint32_t magic, cpu;
		uint16_t pdu_len;

		FIELD(magic, struct blk_io_trace, magic);
		FIELD(pdu_len, struct blk_io_trace, pdu_len);
		FIELD(cpu, struct blk_io_trace, cpu);
		if (magic == (BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION) &&
		    r->end - r->pos >= sizeof(struct blk_io_trace) + pdu_len &&
		    cpu < BLK_MAX_CPUS) {
			decode_v1(p, 0, ev);
			return take(r, ev, (unsigned char *)p, sizeof(struct blk_io_trace),
				    r->base + r->pos);
		}
	}
	return next_slow(r, ev);
}
