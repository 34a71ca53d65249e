/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little of HTTP/1.1 that the ClickHouse export needs: POSTs through libcurl on one
 * connection kept open from request to request (HTTP, or HTTPS with the peer's certificate
 * checked), with timeouts and basic authentication; gzip bodies (Content-Encoding: gzip) and
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

struct blk_http_conf {
	const char *host; /* name or address; IPv6 without brackets */
	int port;
	int tls; /* HTTPS */
	const char *ca_file; /* HTTPS: the CAs to trust (PEM); NULL: the system's */
	int insecure; /* HTTPS: do not check the peer's certificate */
	const char *user; /* basic authentication (NULL: none; "" with a password: default) */
	const char *password; /* NULL: none */
	unsigned int connect_ms; /* connect timeout (TLS handshake included) */
	unsigned int timeout_ms; /* longest silence of the peer once connected */
};

struct blk_http; /* one server, its connection kept open */

/*
 * blk_http_open() - a client for the server of @c (copied; its strings must outlive it)
 * Nothing is sent yet. Return: the client, or NULL with errno and a message in @err.
 */
struct blk_http *blk_http_open(const struct blk_http_conf *c, char *err, size_t errlen);

/* Close @h's connection and free it; NULL is fine. */
void blk_http_close(struct blk_http *h);

struct blk_http_post {
	const char *target; /* "/?query=..." (already percent-encoded) */
	int gzip; /* the body is gzip (Content-Encoding: gzip) */
	const void *body;
	size_t body_len;
	/*
	 * libcurl may send the request again on a new connection when the one kept open
	 * proves dead with no answer: for queries that change nothing (an INSERT's outcome is
	 * then unknown instead: -ECONNRESET with *sent set).
	 */
	int may_repeat;
};

/*
 * blk_http_post() - POST @p's body on @h's connection (opened if needed); the response in @r
 * @sent: set to 1 once the request may have reached the server (it may have acted on it), 0
 *        when it cannot have.
 * Return: 0 with @r filled, whatever its status; or -errno with a message in @err:
 * -EADDRNOTAVAIL (the host name does not resolve), -ECONNREFUSED, -ETIMEDOUT, -ECONNRESET
 * (also: the connection ended before a complete response), -EPIPE, -EHOSTUNREACH,
 * -ENETUNREACH, -EKEYREJECTED (the peer's certificate is not trusted), -EINVAL (the CA file),
 * -EPROTO (TLS handshake, or another failure), -EMSGSIZE (response too long), -ENOMEM.
 */
int blk_http_post(struct blk_http *h, const struct blk_http_post *p, struct blk_http_resp *r,
		  int *sent, char *err, size_t errlen);

#endif /* BLK_HTTP_H */
