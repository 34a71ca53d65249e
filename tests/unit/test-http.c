// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/export/http.c: response parsing (lengths, chunks, interim answers, every
 * prefix of a response incomplete, malformed ones) against hand-written bytes, the body's
 * first line, percent-encoding, gzip framing (header, CRC-32 and length checked by hand),
 * and blk_http_post() against a scripted server (request bytes, lost and refused requests,
 * timeouts, a closed port).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/http.h"
#include "fakeserver.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct parse_case {
	const char *resp;
	int eof; /* parse with the connection closed */
	int status;
	const char *body;
} parse_cases[] = {
	{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, 200, "hello"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 200, ""},
	{"HTTP/1.0 404 Not Found\nContent-Length: 3\n\nabc", 0, 404, "abc"}, /* bare LF */
	{"HTTP/1.1 200 OK\r\ncontent-length:   2  \r\n\r\nok", 0, 200, "ok"},
	/* what ClickHouse 18.16 sends: chunked, even for an empty INSERT answer */
	{"HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 23:06:43 GMT\r\nConnection: Keep-Alive\r\n"
	 "Content-Type: text/plain; charset=UTF-8\r\nX-ClickHouse-Server-Display-Name: vm\r\n"
	 "Transfer-Encoding: chunked\r\nKeep-Alive: timeout=10\r\n\r\n0\r\n\r\n",
	 0, 200, ""},
	{"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
	 "5f\r\nCode: 60, e.displayText() = DB::Exception: Table x.io doesn't exist., "
	 "e.what() = DB::Exception\n\r\n0\r\n\r\n",
	 0, 404,
	 "Code: 60, e.displayText() = DB::Exception: Table x.io doesn't exist., "
	 "e.what() = DB::Exception\n"},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n"
	 "0\r\nTrailer: x\r\n\r\n",
	 0, 200, "abc0123456789"},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\n0\n\n", 0, 200, "ab"},
	/* an interim answer first */
	{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 0, 200, "x"},
	/* no length: the body ends with the connection */
	{"HTTP/1.1 500 Internal Server Error\r\n\r\nCode: 1\nmore", 1, 500, "Code: 1\nmore"},
	{"HTTP/1.1 204 No Content\r\n\r\n", 0, 204, ""},
};

static void test_parse(void **state)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;

	(void)state;
	for (size_t i = 0; i < N(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		size_t len = strlen(c->resp);

		assert_int_equal(blk_http_parse(c->resp, len, c->eof, &r), 1);
		assert_int_equal(r.status, c->status);
		assert_int_equal(r.body.len, strlen(c->body));
		assert_memory_equal(r.body.buf ? r.body.buf : "", c->body, r.body.len);
		/* every shorter prefix is incomplete, not an error (with the body ending at EOF,
		 * only while the headers are incomplete) */
		for (size_t n = 0; n < len; n++) {
			int ret = blk_http_parse(c->resp, n, 0, &r);

			if (ret != 0)
				print_error("case %zu: prefix %zu: %d\n", i, n, ret);
			assert_int_equal(ret, 0);
		}
	}
	blk_http_resp_release(&r);
}

static const char *const bad_cases[] = {
	"HTTQ/1.1 200 OK\r\n\r\n",
	"garbage that is long enough",
	"HTTP/1.1 2x0 OK\r\n\r\n",
	"HTTP/1.1 200OK\r\n\r\n",
	"HTTP/1.1 700 What\r\n\r\n",
	"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
	"HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3x\r\nabc\r\n",
	"HTTP/1.1 101 Switching Protocols\r\n\r\n",
};

static void test_parse_bad(void **state)
{
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;

	(void)state;
	for (size_t i = 0; i < N(bad_cases); i++) {
		int ret = blk_http_parse(bad_cases[i], strlen(bad_cases[i]), 0, &r);

		if (ret != -EBADMSG)
			print_error("bad case %zu: %d\n", i, ret);
		assert_int_equal(ret, -EBADMSG);
	}
	/* complete headers, short body, connection closed: still incomplete (the caller says so) */
	{
		const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";

		assert_int_equal(blk_http_parse(s, strlen(s), 1, &r), 0);
	}
	blk_http_resp_release(&r);
}

static void test_first_line(void **state)
{
	static const struct {
		const char *body;
		size_t out;
		const char *want;
	} cases[] = {
		{"Code: 60, e.displayText() = x\nStack trace:\n", 100,
		 "Code: 60, e.displayText() = x"},
		{"\r\n\n  first\tline  \r\nsecond", 100, "first line"},
		{"", 100, ""},
		{"abcdef", 4, "abc"},
		{"a\x01"
		 "b\x7f"
		 "c",
		 100, "a b c"},
	};
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	char out[100];

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		blk_strbuf_reset(&r.body);
		blk_strbuf_addstr(&r.body, cases[i].body);
		blk_http_first_line(&r, out, cases[i].out);
		assert_string_equal(out, cases[i].want);
	}
	blk_http_resp_release(&r);
	blk_http_first_line(&r, out, sizeof(out)); /* no body at all */
	assert_string_equal(out, "");
}

static void test_url_encode(void **state)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	const char *want =
		"INSERT%20INTO%20db.io%20%28a%2C%20b%29%20FORMAT%20RowBinary-_.~%27%26%3D%25%C3%A9";

	(void)state;
	blk_http_url_encode(&sb, "INSERT INTO db.io (a, b) FORMAT RowBinary-_.~'&=%\xc3\xa9");
	assert_int_equal(sb.len, strlen(want));
	assert_memory_equal(sb.buf, want, sb.len);
	blk_strbuf_release(&sb);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* @gz is one gzip member of @n bytes at @p: header, CRC-32 and size trailer, inflates back */
static void assert_gzip_of(const struct blk_strbuf *gz, const unsigned char *p, size_t n)
{
	const unsigned char *g = (const unsigned char *)gz->buf;
	unsigned char *back = malloc(n + 1);
	z_stream z;

	assert_true(gz->len >= 18);
	assert_int_equal(g[0], 0x1f); /* ID1 ID2 */
	assert_int_equal(g[1], 0x8b);
	assert_int_equal(g[2], 8); /* CM: deflate */
	assert_int_equal(g[3], 0); /* FLG: no name, no extra */
	assert_int_equal(le32(g + gz->len - 8), (uint32_t)crc32(0, p, (uInt)n));
	assert_int_equal(le32(g + gz->len - 4), (uint32_t)n);
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (unsigned char *)g;
	z.avail_in = (uInt)gz->len;
	z.next_out = back;
	z.avail_out = (uInt)n + 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, n);
	assert_int_equal(z.avail_in, 0); /* exactly one member, nothing after it */
	assert_memory_equal(back, p, n);
	inflateEnd(&z);
	free(back);
}

typedef int gzip_fn(struct blk_strbuf *out, const void *p, size_t n, int level);

/* blk_http_gzip() (libdeflate where built with it) and zlib's, which is blk_http_gzip()
 * elsewhere */
static void check_gzip(gzip_fn *blk_http_gzip)
{
	size_t n = 3u << 20;
	unsigned char *p = malloc(n);
	struct blk_strbuf gz = BLK_STRBUF_INIT;
	uint64_t x = 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		p[i] = (unsigned char)(i % 512 < 256 ? (x >> 56) : 'a' + i % 7); /* half noise */
	}
	for (int level = 0; level <= 9; level += 3) {
		blk_strbuf_reset(&gz);
		assert_int_equal(blk_http_gzip(&gz, p, n, level), 0);
		assert_gzip_of(&gz, p, n);
		if (level == 0)
			assert_true(gz.len > n); /* stored: framed, not smaller */
		else
			assert_true(gz.len < n * 3 / 4);
	}
	/* appends after what is there; empty input */
	blk_strbuf_reset(&gz);
	blk_strbuf_addstr(&gz, "XY");
	assert_int_equal(blk_http_gzip(&gz, "", 0, 1), 0);
	assert_memory_equal(gz.buf, "XY", 2);
	{
		struct blk_strbuf tail = {gz.buf + 2, gz.len - 2, gz.len - 1};

		assert_gzip_of(&tail, (const unsigned char *)"", 0);
	}
	assert_int_equal(blk_http_gzip(&gz, p, 10, 10), -EINVAL);
	assert_int_equal(blk_http_gzip(&gz, p, 10, -1), -EINVAL);
	blk_strbuf_release(&gz);
	free(p);
}

static void test_gzip(void **state)
{
	(void)state;
	check_gzip(blk_http_gzip);
	check_gzip(blk_http_gzip_zlib);
}

static struct blk_http_post post_to(int port, const char *body, size_t n)
{
	struct blk_http_post p = {.host = "127.0.0.1",
				  .port = port,
				  .target = "/?query=SELECT%201",
				  .body = body,
				  .body_len = n,
				  .connect_ms = 2000,
				  .timeout_ms = 3000};
	return p;
}

static void test_post(void **state)
{
	static const char ok[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n1\n\r\n0\r\n\r\n";
	static const char refuse[] =
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 8\r\n\r\nCode: 99";
	static const struct fake_step steps[] = {
		{FAKE_REPLY,
		 "POST /?query=SELECT%201 HTTP/1.1\r\nHost: 127.0.0.1:|\r\nContent-Length: 6\r\n|"
		 "Content-Encoding: gzip\r\n|Connection: close\r\n\r\nbody!\n",
		 ok, 0},
		{FAKE_CLOSE, NULL, NULL, 0},
		{FAKE_CLOSE_EARLY, NULL, NULL, 0},
		{FAKE_REPLY_EARLY, NULL, refuse, 0},
		{FAKE_STALL, NULL, NULL, 0},
	};
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	struct fake_server fs;
	struct blk_http_post p;
	size_t big = 8u << 20;
	char err[300], *body;
	int sent, ret;

	(void)state;
	fake_server_start(&fs, steps, (int)N(steps));
	body = calloc(1, big); /* after the fork: the server's copy would be a leak */
	/* the request as sent, the chunked answer decoded */
	p = post_to(fs.port, "body!\n", 6);
	p.content_encoding = "gzip";
	assert_int_equal(blk_http_post(&p, &r, &sent, err, sizeof(err)), 0);
	assert_int_equal(sent, 1);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 2);
	assert_memory_equal(r.body.buf, "1\n", 2);
	/* the answer lost: the request was sent, the outcome is unknown */
	p = post_to(fs.port, "x", 1);
	ret = blk_http_post(&p, &r, &sent, err, sizeof(err));
	assert_int_equal(ret, -ECONNRESET);
	assert_int_equal(sent, 1);
	assert_non_null(strstr(err, "closed before a complete response"));
	/* the request cut in the middle of a large body */
	p = post_to(fs.port, body, big);
	ret = blk_http_post(&p, &r, &sent, err, sizeof(err));
	assert_true(ret == -ECONNRESET || ret == -EPIPE);
	assert_int_equal(sent, 1);
	/* a server that answers before reading the body (and closes): its answer is what counts */
	p = post_to(fs.port, body, big);
	ret = blk_http_post(&p, &r, &sent, err, sizeof(err));
	if (ret)
		print_error("early refusal: %d %s\n", ret, err);
	assert_int_equal(ret, 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.body.len, 8);
	/* no answer in time */
	p = post_to(fs.port, "x", 1);
	p.timeout_ms = 300;
	assert_int_equal(blk_http_post(&p, &r, &sent, err, sizeof(err)), -ETIMEDOUT);
	assert_non_null(strstr(err, "no answer from '127.0.0.1:"));
	assert_non_null(strstr(err, "' in 300 ms"));
	assert_int_equal(fake_server_wait(&fs), 0);

	/* nothing listening: refused, nothing sent */
	p = post_to(fake_closed_port(), "x", 1);
	assert_int_equal(blk_http_post(&p, &r, &sent, err, sizeof(err)), -ECONNREFUSED);
	assert_int_equal(sent, 0);
	assert_non_null(strstr(err, "cannot connect to '127.0.0.1:"));
	assert_non_null(strstr(err, "': Connection refused"));
	/* a name that does not resolve */
	p = post_to(80, "x", 1);
	p.host = "no-such-host.invalid";
	assert_int_equal(blk_http_post(&p, &r, &sent, err, sizeof(err)), -EADDRNOTAVAIL);
	assert_non_null(strstr(err, "cannot resolve 'no-such-host.invalid'"));
	blk_http_resp_release(&r);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	   cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_first_line), cmocka_unit_test(test_url_encode),
		cmocka_unit_test(test_gzip),	   cmocka_unit_test(test_post),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
