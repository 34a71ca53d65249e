// SPDX-License-Identifier: GPL-2.0
/*
 * The export's HTTP client: POSTs through libcurl on one connection kept open between
 * requests (HTTP or HTTPS), enough for ClickHouse's HTTP interface; gzip and percent-encoding.
 *
 * libcurl is loaded when the first connection opens (dlopen), not when btt starts: linked,
 * it and the 30 libraries it needs cost every run of btt ~7 ms and ~6 MiB, export or not.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
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

/* the libcurl functions used, from the library loaded at run time */
struct curl_api {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

#define CURL_SONAME "libcurl.so.4"

/*
 * Load libcurl (once per process: dlopen counts references; it is never unloaded, as its TLS
 * library's exit handlers must stay) and find its functions; 0, or -1 with @err set.
 */
static int curl_api_load(struct curl_api *a, char *err, size_t errlen)
{
	void *lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	struct {
		const char *name;
		void **fn;
	} fns[] = {
		{"curl_easy_init", (void **)&a->easy_init},
		{"curl_easy_setopt", (void **)&a->easy_setopt},
		{"curl_easy_perform", (void **)&a->easy_perform},
		{"curl_easy_getinfo", (void **)&a->easy_getinfo},
		{"curl_easy_cleanup", (void **)&a->easy_cleanup},
		{"curl_easy_strerror", (void **)&a->easy_strerror},
		{"curl_slist_append", (void **)&a->slist_append},
		{"curl_slist_free_all", (void **)&a->slist_free_all},
	};

	if (!lib) {
		snprintf(err, errlen,
			 "cannot load libcurl: %s (install it: apt-get install libcurl4)",
			 dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		*fns[i].fn = dlsym(lib, fns[i].name);
		if (!*fns[i].fn) {
			snprintf(err, errlen, "%s has no %s: a libcurl older than 7.73?",
				 CURL_SONAME, fns[i].name);
			return -1;
		}
	}
	return 0;
}

/* One connection to one server: a libcurl easy handle, which keeps the connection open. */
struct blk_http {
	struct curl_api api;
	CURL *c;
	struct curl_slist *hdr, *hdr_gzip; /* without, with Content-Encoding: gzip */
	struct blk_http_conf conf;
	char peer[300]; /* "host:port", for messages */
	char base[300]; /* "http[s]://host:port" */
	char cerr[CURL_ERROR_SIZE];
	/* the request under way */
	const char *body;
	size_t body_len, pos;
	int rewind_ok, sent, too_long, silent;
	struct blk_http_resp *r;
	struct timespec last; /* the last byte that moved */
	curl_off_t last_dl, last_ul;
};

static size_t on_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct blk_http *h = arg;
	size_t n = size * nitems;

	h->sent = 1; /* the request is under way: the server may act on it */
	if (n > h->body_len - h->pos)
		n = h->body_len - h->pos;
	memcpy(buf, h->body + h->pos, n);
	h->pos += n;
	return n;
}

/*
 * libcurl sends a request again, on a new connection, when a connection it kept open turns
 * out dead before any answer: harmless for a query, but an INSERT the server may have taken
 * must not go twice behind the export's back: it fails instead, and the export asks first.
 */
static int on_seek(void *arg, curl_off_t offset, int origin)
{
	struct blk_http *h = arg;

	if (origin != SEEK_SET || offset != 0 || (!h->rewind_ok && h->pos))
		return CURL_SEEKFUNC_CANTSEEK;
	h->pos = 0;
	return CURL_SEEKFUNC_OK;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct blk_http *h = arg;
	size_t n = size * nmemb;

	if (h->r->body.len + n > BLK_HTTP_MAX_RESPONSE) {
		h->too_long = 1;
		return 0;
	}
	blk_strbuf_add(&h->r->body, p, n);
	return n;
}

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000L + (now.tv_nsec - t->tv_nsec) / 1000000L;
}

/* The longest silence of the peer: no byte moving either way for timeout_ms ends it. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct blk_http *h = arg;

	(void)dltotal;
	(void)ultotal;
	if (dlnow != h->last_dl || ulnow != h->last_ul) {
		h->last_dl = dlnow;
		h->last_ul = ulnow;
		clock_gettime(CLOCK_MONOTONIC, &h->last);
		return 0;
	}
	if (ms_since(&h->last) >= (long)h->conf.timeout_ms) {
		h->silent = 1;
		return 1;
	}
	return 0;
}

static int setup(struct blk_http *h, char *err, size_t errlen)
{
	const struct blk_http_conf *c = &h->conf;
	CURL *e = h->c;
	int ok = 1;

	snprintf(h->peer, sizeof(h->peer), strchr(c->host, ':') ? "[%s]:%d" : "%s:%d", c->host,
		 c->port);
	snprintf(h->base, sizeof(h->base), "%s://%s", c->tls ? "https" : "http", h->peer);
	/* no Expect: 100-continue (a round trip more); the body is no form */
	h->hdr = h->api.slist_append(NULL, "Expect:");
	if (h->hdr)
		h->hdr = h->api.slist_append(h->hdr, "Content-Type:");
	if (h->hdr)
		h->hdr = h->api.slist_append(h->hdr, "Accept:");
	h->hdr_gzip = h->api.slist_append(NULL, "Expect:");
	if (h->hdr_gzip)
		h->hdr_gzip = h->api.slist_append(h->hdr_gzip, "Content-Type:");
	if (h->hdr_gzip)
		h->hdr_gzip = h->api.slist_append(h->hdr_gzip, "Accept:");
	if (h->hdr_gzip)
		h->hdr_gzip = h->api.slist_append(h->hdr_gzip, "Content-Encoding: gzip");
	if (!h->hdr || !h->hdr_gzip) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
#define SET(opt, v) (ok = ok && h->api.easy_setopt(e, opt, v) == CURLE_OK)
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_ERRORBUFFER, h->cerr);
	SET(CURLOPT_PROTOCOLS_STR, c->tls ? "https" : "http");
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SET(CURLOPT_USERAGENT, "blktrace-ng");
	SET(CURLOPT_POST, 1L);
	SET(CURLOPT_READFUNCTION, on_read);
	SET(CURLOPT_READDATA, h);
	SET(CURLOPT_SEEKFUNCTION, on_seek);
	SET(CURLOPT_SEEKDATA, h);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, h);
	SET(CURLOPT_NOPROGRESS, 0L);
	SET(CURLOPT_XFERINFOFUNCTION, on_progress);
	SET(CURLOPT_XFERINFODATA, h);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_ms);
	/*
	 * below the keep_alive_timeout of ClickHouse's shipped config.xml (3 s): no request on a
	 * connection that the server is closing (libcurl sees one it has closed already)
	 */
	SET(CURLOPT_MAXAGE_CONN, 2L);
	SET(CURLOPT_TCP_NODELAY, 1L);
	/*
	 * straight to the server, as before libcurl: no proxy from http_proxy and the like, which
	 * would carry a password meant for a loopback server over the network
	 */
	SET(CURLOPT_PROXY, "");
	if (c->tls) {
		SET(CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
		SET(CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
		if (c->ca_file)
			SET(CURLOPT_CAINFO, c->ca_file);
	}
	if (c->user || c->password) {
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		SET(CURLOPT_USERNAME, c->user && c->user[0] ? c->user : "default");
		SET(CURLOPT_PASSWORD, c->password ? c->password : "");
	}
#undef SET
	if (!ok) {
		snprintf(err, errlen, "libcurl refuses an option: %s",
			 h->cerr[0] ? h->cerr : "too old?");
		return -EPROTO;
	}
	return 0;
}

struct blk_http *blk_http_open(const struct blk_http_conf *c, char *err, size_t errlen)
{
	struct blk_http *h;
	int ret;

	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (curl_api_load(&h->api, err, errlen)) {
		free(h);
		errno = ENOPKG;
		return NULL;
	}
	/* the first handle also starts libcurl (thread-safe since 7.84) */
	if (!(h->c = h->api.easy_init())) {
		free(h);
		snprintf(err, errlen, "cannot start libcurl (out of memory?)");
		errno = ENOMEM;
		return NULL;
	}
	h->conf = *c;
	ret = setup(h, err, errlen);
	if (ret) {
		blk_http_close(h);
		errno = -ret;
		return NULL;
	}
	return h;
}

void blk_http_close(struct blk_http *h)
{
	if (!h)
		return;
	h->api.easy_cleanup(h->c);
	h->api.slist_free_all(h->hdr);
	h->api.slist_free_all(h->hdr_gzip);
	free(h);
}

/* What a failed transfer means: -errno and a message naming the peer. */
static int transfer_error(struct blk_http *h, CURLcode rc, char *err, size_t errlen)
{
	const char *why = h->cerr[0] ? h->cerr : h->api.easy_strerror(rc);
	long oserr = 0;

	h->api.easy_getinfo(h->c, CURLINFO_OS_ERRNO, &oserr);
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(err, errlen, "cannot resolve '%s': %s", h->conf.host, why);
		return -EADDRNOTAVAIL;
	case CURLE_COULDNT_CONNECT:
		if (!oserr)
			oserr = ECONNREFUSED;
		snprintf(err, errlen, "cannot connect to '%s': %s", h->peer, strerror((int)oserr));
		return -(int)oserr;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(err, errlen, "cannot connect to '%s': no answer (timed out)", h->peer);
		return -ETIMEDOUT;
	case CURLE_ABORTED_BY_CALLBACK:
		if (h->pos < h->body_len)
			snprintf(err, errlen, "'%s' took no data for %u ms", h->peer,
				 h->conf.timeout_ms);
		else
			snprintf(err, errlen, "no answer from '%s' in %u ms", h->peer,
				 h->conf.timeout_ms);
		return -ETIMEDOUT;
	case CURLE_WRITE_ERROR:
		if (!h->too_long)
			break;
		snprintf(err, errlen, "response from '%s' longer than %d bytes", h->peer,
			 BLK_HTTP_MAX_RESPONSE);
		return -EMSGSIZE;
	case CURLE_SEND_ERROR:
		snprintf(err, errlen, "cannot send to '%s': %s", h->peer,
			 oserr ? strerror((int)oserr) : why);
		return oserr == ECONNRESET ? -ECONNRESET : -EPIPE;
	case CURLE_RECV_ERROR:
		snprintf(err, errlen, "cannot read from '%s': %s", h->peer,
			 oserr ? strerror((int)oserr) : why);
		return -ECONNRESET;
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SEND_FAIL_REWIND:
		snprintf(err, errlen, "connection to '%s' closed before a complete response",
			 h->peer);
		return -ECONNRESET;
	case CURLE_PEER_FAILED_VERIFICATION:
		snprintf(err, errlen,
			 "the certificate of '%s' is not trusted: %s (a private CA: --ca-file)",
			 h->peer, why);
		return -EKEYREJECTED;
	case CURLE_SSL_CACERT_BADFILE:
		snprintf(err, errlen, "cannot use CA file '%s': %s",
			 h->conf.ca_file ? h->conf.ca_file : "(the system's)", why);
		return -EINVAL;
	case CURLE_SSL_CONNECT_ERROR:
		snprintf(err, errlen, "TLS handshake with '%s' failed: %s", h->peer, why);
		return -EPROTO;
	case CURLE_OUT_OF_MEMORY:
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	default:
		break;
	}
	snprintf(err, errlen, "request to '%s' failed: %s", h->peer, why);
	return -EPROTO;
}

int blk_http_post(struct blk_http *h, const struct blk_http_post *p, struct blk_http_resp *r,
		  int *sent, char *err, size_t errlen)
{
	struct blk_strbuf url = BLK_STRBUF_INIT;
	CURLcode rc;
	long status = 0;
	int ret = 0;

	blk_strbuf_reset(&r->body);
	r->status = 0;
	h->body = p->body;
	h->body_len = p->body_len;
	h->pos = 0;
	h->rewind_ok = p->may_repeat;
	h->sent = h->too_long = h->silent = 0;
	h->r = r;
	h->cerr[0] = 0;
	h->last_dl = h->last_ul = 0;
	clock_gettime(CLOCK_MONOTONIC, &h->last);
	blk_strbuf_addstr(&url, h->base);
	blk_strbuf_addstr(&url, p->target);
	blk_strbuf_reserve(&url, 0)[0] = 0;
	if (h->api.easy_setopt(h->c, CURLOPT_URL, url.buf) != CURLE_OK ||
	    h->api.easy_setopt(h->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->body_len) !=
		    CURLE_OK ||
	    h->api.easy_setopt(h->c, CURLOPT_HTTPHEADER, p->gzip ? h->hdr_gzip : h->hdr) !=
		    CURLE_OK) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	rc = h->api.easy_perform(h->c);
	if (rc == CURLE_OK) {
		h->api.easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &status);
		r->status = (int)status;
	} else {
		ret = transfer_error(h, rc, err, errlen);
	}
out:
	*sent = h->sent;
	h->r = NULL;
	blk_strbuf_release(&url);
	return ret;
}
