// SPDX-License-Identifier: GPL-2.0
/*
 * An HTTP/1.1 client for one request per connection: enough for ClickHouse's HTTP interface.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <zlib.h>
#ifdef BLK_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "http.h"

void blk_http_resp_release(struct blk_http_resp *r)
{
	blk_strbuf_release(&r->body);
	r->status = 0;
}

/* The next line in [p, end): its end (before CR LF or LF) in *eol; return the next line. */
static const char *next_line(const char *p, const char *end, const char **eol)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	if (!nl)
		return NULL;
	*eol = (nl > p && nl[-1] == '\r') ? nl - 1 : nl;
	return nl + 1;
}

static int is_header(const char *p, const char *eol, const char *name)
{
	size_t n = strlen(name);

	return (size_t)(eol - p) > n && p[n] == ':' && !strncasecmp(p, name, n);
}

/* The header's value, without surrounding blanks. */
static void header_value(const char *p, const char *eol, const char **v, const char **vend)
{
	p = (const char *)memchr(p, ':', (size_t)(eol - p)) + 1;
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	while (eol > p && (eol[-1] == ' ' || eol[-1] == '\t'))
		eol--;
	*v = p;
	*vend = eol;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The chunked body from @p: 1 complete, 0 incomplete, -EBADMSG. */
static int parse_chunked(const char *p, const char *end, struct blk_http_resp *r)
{
	for (;;) {
		const char *eol, *next = next_line(p, end, &eol), *q;
		size_t size = 0;
		int ndig = 0, h;

		if (!next)
			return 0;
		for (q = p; q < eol && (h = hexval(*q)) >= 0; q++) {
			if (++ndig > 8)
				return -EBADMSG;
			size = size * 16 + (size_t)h;
		}
		if (!ndig || (q < eol && *q != ';' && *q != ' ' && *q != '\t'))
			return -EBADMSG;
		if (size > BLK_HTTP_MAX_RESPONSE)
			return -EBADMSG;
		p = next;
		if (!size) {
			/* trailers, up to an empty line */
			for (;;) {
				next = next_line(p, end, &eol);
				if (!next)
					return 0;
				if (eol == p)
					return 1;
				p = next;
			}
		}
		if ((size_t)(end - p) < size + 1)
			return 0;
		blk_strbuf_add(&r->body, p, size);
		p += size;
		if (*p == '\r') {
			if (end - p < 2)
				return 0;
			p++;
		}
		if (*p != '\n')
			return -EBADMSG;
		p++;
	}
}

int blk_http_parse(const char *buf, size_t len, int eof, struct blk_http_resp *r)
{
	const char *p = buf, *end = buf + len, *eol, *next;
	long long clen;
	int chunked, status;

	blk_strbuf_reset(&r->body);
	r->status = 0;
again:
	next = next_line(p, end, &eol);
	if (!next)
		return (size_t)(end - p) >= 8 && memcmp(p, "HTTP/1.", 7) ? -EBADMSG : 0;
	if (eol - p < 12 || memcmp(p, "HTTP/1.", 7) || p[7] < '0' || p[7] > '9' || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (eol - p > 12 && p[12] != ' '))
		return -EBADMSG;
	status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	clen = -1;
	chunked = 0;
	for (p = next;; p = next) {
		const char *v, *vend;

		next = next_line(p, end, &eol);
		if (!next)
			return 0;
		if (eol == p)
			break;
		if (*p == ' ' || *p == '\t' || !memchr(p, ':', (size_t)(eol - p)))
			return -EBADMSG;
		if (is_header(p, eol, "Content-Length")) {
			long long n = 0;

			header_value(p, eol, &v, &vend);
			if (v == vend || vend - v > 12)
				return -EBADMSG;
			for (; v < vend; v++) {
				if (*v < '0' || *v > '9')
					return -EBADMSG;
				n = n * 10 + (*v - '0');
			}
			if (clen >= 0 && clen != n)
				return -EBADMSG;
			clen = n;
		} else if (is_header(p, eol, "Transfer-Encoding")) {
			header_value(p, eol, &v, &vend);
			if (vend - v != 7 || strncasecmp(v, "chunked", 7))
				return -EBADMSG; /* we never ask for other codings */
			chunked = 1;
		} else if (is_header(p, eol, "Content-Encoding")) {
			header_value(p, eol, &v, &vend);
			if (!(vend - v == 8 && !strncasecmp(v, "identity", 8)))
				return -EBADMSG; /* we send no Accept-Encoding */
		}
	}
	p = next;
	if (status < 200) {
		if (status == 101)
			return -EBADMSG;
		goto again;
	}
	r->status = status;
	if (status == 204 || status == 304)
		return 1;
	if (chunked)
		return parse_chunked(p, end, r);
	if (clen >= 0) {
		if (clen > BLK_HTTP_MAX_RESPONSE)
			return -EBADMSG;
		if ((long long)(end - p) < clen)
			return 0;
		blk_strbuf_add(&r->body, p, (size_t)clen);
		return 1;
	}
	if (!eof)
		return 0;
	blk_strbuf_add(&r->body, p, (size_t)(end - p));
	return 1;
}

void blk_http_first_line(const struct blk_http_resp *r, char *out, size_t outlen)
{
	const char *p = r->body.buf, *end = p + r->body.len;
	size_t n = 0;

	if (!outlen)
		return;
	while (p && p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t'))
		p++;
	for (; p && p < end && *p != '\n' && n + 1 < outlen; p++)
		out[n++] = ((unsigned char)*p < 0x20 || *p == 0x7f) ? ' ' : *p;
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = 0;
}

void blk_http_url_encode(struct blk_strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			blk_strbuf_addch(sb, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			blk_strbuf_add(sb, e, 3);
		}
	}
}

#ifdef BLK_HAVE_LIBDEFLATE
/*
 * libdeflate compresses a whole buffer in one call, at about twice the speed of zlib at the
 * same level and to the same size (bench/bench-export.sh): the export's batches are whole
 * buffers, and compressing them is most of what the export costs the exporter.
 */
int blk_http_gzip(struct blk_strbuf *out, const void *p, size_t n, int level)
{
	struct libdeflate_compressor *c;
	size_t bound, got;

	if (level < 0 || level > 9)
		return -EINVAL;
	c = libdeflate_alloc_compressor(level);
	if (!c)
		return -ENOMEM;
	bound = libdeflate_gzip_compress_bound(c, n);
	got = libdeflate_gzip_compress(c, p, n, blk_strbuf_reserve(out, bound), bound);
	libdeflate_free_compressor(c);
	if (!got)
		return -ENOMEM; /* not within the bound: cannot happen */
	out->len += got;
	return 0;
}
#else
int blk_http_gzip(struct blk_strbuf *out, const void *p, size_t n, int level)
{
	return blk_http_gzip_zlib(out, p, n, level);
}
#endif

/* zlib's gzip: blk_http_gzip() without libdeflate; built either way, so the tests cover both */
int blk_http_gzip_zlib(struct blk_strbuf *out, const void *p, size_t n, int level)
{
	const unsigned char *in = p;
	z_stream z;
	int ret;

	if (level < 0 || level > 9)
		return -EINVAL;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	blk_strbuf_reserve(out, deflateBound(&z, n > 1u << 30 ? 1u << 30 : (uLong)n) + 64);
	do {
		size_t chunk = n > 1u << 30 ? 1u << 30 : n;

		z.next_in = (unsigned char *)in;
		z.avail_in = (uInt)chunk;
		in += chunk;
		n -= chunk;
		do {
			if (out->alloc - out->len < 1024)
				blk_strbuf_grow(out, out->alloc);
			z.next_out = (unsigned char *)out->buf + out->len;
			z.avail_out = (uInt)(out->alloc - out->len - 1);
			ret = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			out->len = (size_t)((char *)z.next_out - out->buf);
			if (ret == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return -ENOMEM;
			}
		} while (z.avail_in || (!n && ret != Z_STREAM_END));
	} while (n);
	deflateEnd(&z);
	return 0;
}

static int wait_fd(int fd, short events, unsigned int ms)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int n;

	do {
		n = poll(&pfd, 1, (int)ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

static int connect_one(const struct addrinfo *ai, unsigned int ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int e = 0;
	socklen_t len = sizeof(e);

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		e = -errno;
		goto fail;
	}
	if ((e = wait_fd(fd, POLLOUT, ms)))
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0) {
		e = -errno;
		goto fail;
	}
	if (!e)
		return fd;
	e = -e;
fail:
	close(fd);
	return e;
}

static int send_all(int fd, const char *p, size_t n, unsigned int ms, int more, int *sent)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		int e;

		if (w > 0) {
			*sent = 1;
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return -errno;
		if ((e = wait_fd(fd, POLLOUT, ms)))
			return e;
	}
	return 0;
}

/* Read until the response is complete: 0, or -errno (a message naming the peer in @err). */
static int read_response(int fd, const struct blk_http_post *p, const char *peer,
			 struct blk_http_resp *r, char *err, size_t errlen)
{
	struct blk_strbuf in = BLK_STRBUF_INIT;
	int ret;

	for (;;) {
		ssize_t n;

		if ((ret = wait_fd(fd, POLLIN, p->timeout_ms))) {
			if (ret == -ETIMEDOUT)
				snprintf(err, errlen, "no answer from '%s' in %u ms", peer,
					 p->timeout_ms);
			else
				snprintf(err, errlen, "cannot read from '%s': %s", peer,
					 strerror(-ret));
			break;
		}
		n = recv(fd, blk_strbuf_reserve(&in, 65536), 65536, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			ret = -errno;
			snprintf(err, errlen, "cannot read from '%s': %s", peer, strerror(-ret));
			break;
		}
		in.len += (size_t)n;
		if (in.len > BLK_HTTP_MAX_RESPONSE) {
			ret = -EMSGSIZE;
			snprintf(err, errlen, "response from '%s' longer than %d bytes", peer,
				 BLK_HTTP_MAX_RESPONSE);
			break;
		}
		ret = blk_http_parse(in.buf, in.len, n == 0, r);
		if (ret == 1) {
			ret = 0;
			break;
		}
		if (ret < 0) {
			snprintf(err, errlen, "'%s' answered with something that is not HTTP",
				 peer);
			break;
		}
		if (n == 0) {
			ret = -ECONNRESET;
			snprintf(err, errlen,
				 "connection to '%s' closed before a complete response", peer);
			break;
		}
	}
	blk_strbuf_release(&in);
	return ret;
}

int blk_http_post(const struct blk_http_post *p, struct blk_http_resp *r, int *sent, char *err,
		  size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct blk_strbuf head = BLK_STRBUF_INIT;
	struct addrinfo *ai, *a;
	char port[16], peer[300];
	int fd = -1, ret, sret;

	*sent = 0;
	snprintf(port, sizeof(port), "%d", p->port);
	snprintf(peer, sizeof(peer), strchr(p->host, ':') ? "[%s]:%d" : "%s:%d", p->host, p->port);
	ret = getaddrinfo(p->host, port, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "cannot resolve '%s': %s", p->host,
			 ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EADDRNOTAVAIL;
	}
	ret = -EHOSTUNREACH;
	for (a = ai; a && fd < 0; a = a->ai_next) {
		fd = connect_one(a, p->connect_ms);
		if (fd < 0)
			ret = fd;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to '%s': %s", peer,
			 ret == -ETIMEDOUT ? "no answer (timed out)" : strerror(-ret));
		return ret;
	}
	blk_strbuf_addf(&head,
			"POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: blktrace-ng\r\n"
			"Content-Length: %zu\r\n",
			p->target, peer, p->body_len);
	if (p->content_encoding)
		blk_strbuf_addf(&head, "Content-Encoding: %s\r\n", p->content_encoding);
	blk_strbuf_addstr(&head, "Connection: close\r\n\r\n");
	sret = send_all(fd, head.buf, head.len, p->timeout_ms, p->body_len > 0, sent);
	if (!sret)
		sret = send_all(fd, p->body, p->body_len, p->timeout_ms, 0, sent);
	blk_strbuf_release(&head);
	if (sret == -ETIMEDOUT) {
		snprintf(err, errlen, "'%s' took no data for %u ms", peer, p->timeout_ms);
		ret = sret;
		goto out;
	}
	/*
	 * A server that refuses a request early answers and closes without reading it all: our
	 * send then fails, and its answer, which says why, is what to report.
	 */
	ret = read_response(fd, p, peer, r, err, errlen);
	if (sret && ret) {
		snprintf(err, errlen, "cannot send to '%s': %s", peer, strerror(-sret));
		ret = sret;
	}
out:
	close(fd);
	return ret;
}
