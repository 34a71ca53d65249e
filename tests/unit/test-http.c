// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/export/http.c: the body's first line, percent-encoding, gzip framing
 * (header, CRC-32 and length checked by hand), and blk_http_post() through libcurl against a
 * scripted server (request bytes with basic authentication, lost and refused requests,
 * timeouts, a closed port, a name that does not resolve).
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

static struct blk_http *client(int port, const char *host, unsigned int timeout_ms)
{
	struct blk_http_conf c = {.host = host,
				  .port = port,
				  .user = "w",
				  .password = "p&",
				  .connect_ms = 2000,
				  .timeout_ms = timeout_ms};
	char err[300];
	struct blk_http *h = blk_http_open(&c, err, sizeof(err));

	assert_non_null(h);
	return h;
}

static struct blk_http_post post_of(const char *body, size_t n)
{
	struct blk_http_post p = {.target = "/?query=SELECT%201", .body = body, .body_len = n};

	return p;
}

static void test_post(void **state)
{
	static const char ok[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n1\n\r\n0\r\n\r\n";
	static const char refuse[] =
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 8\r\n\r\nCode: 99";
	static const struct fake_step steps[] = {
		/* basic authentication (w:p&), never in the URL; no Expect, no form */
		{FAKE_REPLY,
		 "POST /?query=SELECT%201 HTTP/1.1\r\nHost: 127.0.0.1:|\r\n"
		 "Authorization: Basic dzpwJg==\r\n|Content-Length: 6\r\n|"
		 "Content-Encoding: gzip\r\n|\r\n\r\nbody!\n",
		 ok, 0},
		{FAKE_CLOSE, NULL, NULL, 0},
		{FAKE_CLOSE_EARLY, NULL, NULL, 0},
		{FAKE_REPLY_EARLY, NULL, refuse, 0},
		{FAKE_STALL, NULL, NULL, 0},
	};
	struct blk_http_resp r = BLK_HTTP_RESP_INIT;
	struct fake_server fs;
	struct blk_http_post p;
	struct blk_http *h;
	size_t big = 8u << 20;
	char err[300], *body;
	int sent, ret;

	(void)state;
	fake_server_start(&fs, steps, (int)N(steps));
	body = calloc(1, big); /* after the fork: the server's copy would be a leak */
	h = client(fs.port, "127.0.0.1", 3000);
	/* the request as sent, the chunked answer decoded */
	p = post_of("body!\n", 6);
	p.gzip = 1;
	assert_int_equal(blk_http_post(h, &p, &r, &sent, err, sizeof(err)), 0);
	assert_int_equal(sent, 1);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 2);
	assert_memory_equal(r.body.buf, "1\n", 2);
	/* the answer lost: the request was sent, the outcome is unknown */
	p = post_of("x", 1);
	ret = blk_http_post(h, &p, &r, &sent, err, sizeof(err));
	assert_int_equal(ret, -ECONNRESET);
	assert_int_equal(sent, 1);
	assert_non_null(strstr(err, "closed before a complete response"));
	/* the request cut in the middle of a large body */
	p = post_of(body, big);
	ret = blk_http_post(h, &p, &r, &sent, err, sizeof(err));
	if (ret != -ECONNRESET && ret != -EPIPE)
		print_error("cut request: %d %s\n", ret, err);
	assert_true(ret == -ECONNRESET || ret == -EPIPE);
	assert_int_equal(sent, 1);
	/* a server that answers before reading the body (and closes gracefully): its answer counts */
	p = post_of(body, big);
	ret = blk_http_post(h, &p, &r, &sent, err, sizeof(err));
	if (ret)
		print_error("early refusal: %d %s\n", ret, err);
	assert_int_equal(ret, 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.body.len, 8);
	blk_http_close(h);
	/* no answer in time */
	h = client(fs.port, "127.0.0.1", 300);
	p = post_of("x", 1);
	assert_int_equal(blk_http_post(h, &p, &r, &sent, err, sizeof(err)), -ETIMEDOUT);
	assert_non_null(strstr(err, "no answer from '127.0.0.1:"));
	assert_non_null(strstr(err, "' in 300 ms"));
	assert_int_equal(fake_server_wait(&fs), 0);
	blk_http_close(h);

	/* nothing listening: refused, nothing sent */
	h = client(fake_closed_port(), "127.0.0.1", 3000);
	p = post_of("x", 1);
	assert_int_equal(blk_http_post(h, &p, &r, &sent, err, sizeof(err)), -ECONNREFUSED);
	assert_int_equal(sent, 0);
	assert_non_null(strstr(err, "cannot connect to '127.0.0.1:"));
	assert_non_null(strstr(err, "': Connection refused"));
	blk_http_close(h);
	/* a name that does not resolve */
	h = client(80, "no-such-host.invalid", 3000);
	assert_int_equal(blk_http_post(h, &p, &r, &sent, err, sizeof(err)), -EADDRNOTAVAIL);
	assert_int_equal(sent, 0);
	assert_non_null(strstr(err, "cannot resolve 'no-such-host.invalid'"));
	blk_http_close(h);
	blk_http_resp_release(&r);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_line),
		cmocka_unit_test(test_url_encode),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_post),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
