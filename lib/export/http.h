/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little of HTTP/1.1 that the ClickHouse export needs, over plain sockets: a POST on a
 * new connection (Connection: close) with timeouts, its response parsed (Content-Length,
 * chunked, or up to the end of the connection), gzip bodies (Content-Encoding: gzip) and
 * percent-encoding of query parameters. Private to the export library (and its unit test):
 * callers use include/blk-export/export.h.
 */
#ifndef BLK_HTTP_H
#define BLK_HTTP_H

#include <stddef.h>

#include "blk/strbuf.h"

/* The largest response kept (status line, headers and body); a longer one is an error. */
#define BLK_HTTP_MAX_RESPONSE (1 << 20)

struct blk_http_resp {
	int status; /* e.g. 200 */
	struct blk_strbuf body; /* the body, de-chunked */
};
#define BLK_HTTP_RESP_INIT         \
	{                          \
		0, BLK_STRBUF_INIT \
	}

/* Free @r's body and re-initialise @r. */
void blk_http_resp_release(struct blk_http_resp *r);

/*
 * blk_http_parse() - parse a response from the @len bytes received so far
 * @eof: the peer has closed the connection (ends a body that has no length).
 * Interim 1xx responses are skipped. @r's body is replaced on every call.
 * Return: 1 when the response is complete (@r filled), 0 when more bytes are needed,
 * -EBADMSG if the bytes are not an HTTP/1.x response.
 */
int blk_http_parse(const char *buf, size_t len, int eof, struct blk_http_resp *r);

/*
 * blk_http_first_line() - the first non-empty line of @r's body, for messages: control
 * characters become spaces, trailing spaces go, cut at @outlen - 1 bytes. "" if none.
 */
void blk_http_first_line(const struct blk_http_resp *r, char *out, size_t outlen);

/* Append @s percent-encoded (all but RFC 3986's unreserved characters). */
void blk_http_url_encode(struct blk_strbuf *sb, const char *s);

/*
 * blk_http_gzip() - append @n bytes at @p compressed as one gzip member (RFC 1952: header,
 * deflate data, CRC-32 and length), at zlib @level 0..9 (0: stored, no compression, but
 * framed and checksummed all the same); with libdeflate where the build found it, else zlib.
 * Return: 0, -EINVAL for a bad level, -ENOMEM.
 */
int blk_http_gzip(struct blk_strbuf *out, const void *p, size_t n, int level);

/* blk_http_gzip() through zlib: what blk_http_gzip() is on a build without libdeflate */
int blk_http_gzip_zlib(struct blk_strbuf *out, const void *p, size_t n, int level);

struct blk_http_post {
	const char *host; /* name or address; IPv6 without brackets */
	int port;
	const char *target; /* "/?query=..." (already percent-encoded) */
	const char *content_encoding; /* NULL, or e.g. "gzip" */
	const void *body;
	size_t body_len;
	unsigned int connect_ms; /* connect timeout */
	unsigned int timeout_ms; /* longest wait for the peer once connected */
};

/*
 * blk_http_post() - POST @p's body on a new connection and read the response into @r
 * @sent: set to 1 once any byte of the request has been written to the socket (the server
 *        may then have acted on it), 0 before.
 * Return: 0 with @r filled, whatever its status; or -errno with a message in @err:
 * -EADDRNOTAVAIL (the host name does not resolve), -ECONNREFUSED, -ETIMEDOUT, -ECONNRESET
 * (also: the connection ended before a complete response), -EPIPE, -EHOSTUNREACH,
 * -ENETUNREACH, -EBADMSG (not an HTTP response), -EMSGSIZE (response too long), -ENOMEM.
 */
int blk_http_post(const struct blk_http_post *p, struct blk_http_resp *r, int *sent, char *err,
		  size_t errlen);

#endif /* BLK_HTTP_H */
