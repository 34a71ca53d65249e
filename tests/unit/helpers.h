/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the unit tests: synthetic trace records written byte by byte in a
 * chosen byte order (independent of blk_event_encode()), and temporary files under /tmp.
 * Include after <cmocka.h>.
 */
#ifndef BLK_TEST_HELPERS_H
#define BLK_TEST_HELPERS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <zlib.h>

#include "blk/event.h"
#include "blk/trace.h"

#define TEST_BE 1
#define TEST_LE 0

/* The next number of a xorshift64 sequence in *@s (nonzero): the same everywhere, for tests
 * that draw sizes or values from a fixed seed. */
static inline uint64_t test_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int test_host_be(void)
{
	uint16_t x = 1;
	unsigned char c;

	memcpy(&c, &x, 1);
	return c == 0;
}

/* The byte order that is not the host's. */
static inline int test_foreign_order(void)
{
	return !test_host_be();
}

/* A growable byte buffer holding a synthetic trace. */
struct tbuf {
	unsigned char *p;
	size_t len, cap;
};
#define TBUF_INIT { NULL, 0, 0 }

static inline void tbuf_reserve(struct tbuf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return;
	while (b->cap - b->len < n)
		b->cap = b->cap ? b->cap * 2 : 1024;
	b->p = realloc(b->p, b->cap);
	assert_non_null(b->p);
}

static inline void tbuf_add(struct tbuf *b, const void *p, size_t n)
{
	tbuf_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static inline void tbuf_put(struct tbuf *b, uint64_t v, int size, int be)
{
	unsigned char tmp[8];

	for (int i = 0; i < size; i++) {
		int shift = be ? 8 * (size - 1 - i) : 8 * i;

		tmp[i] = (unsigned char)(v >> shift);
	}
	tbuf_add(b, tmp, (size_t)size);
}

static inline void tbuf_free(struct tbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/*
 * Append @ev as a record of version ev->version (7 if 0) in byte order @be, using
 * ev->pdu_len bytes of ev->pdu. The magic's version byte is @ev's version.
 */
static inline void tbuf_add_event(struct tbuf *b, const struct blk_event *ev, int be)
{
	unsigned int version = ev->version ? ev->version : BLK_IO_TRACE_VERSION;

	tbuf_put(b, BLK_IO_TRACE_MAGIC | version, 4, be);
	tbuf_put(b, ev->sequence, 4, be);
	tbuf_put(b, ev->time, 8, be);
	tbuf_put(b, ev->sector, 8, be);
	tbuf_put(b, ev->bytes, 4, be);
	if (version == BLK_IO_TRACE2_VERSION) {
		tbuf_put(b, ev->pid, 4, be);
		tbuf_put(b, ev->action, 8, be);
	} else {
		tbuf_put(b, (uint32_t)ev->action, 4, be);
		tbuf_put(b, ev->pid, 4, be);
	}
	tbuf_put(b, ev->device, 4, be);
	tbuf_put(b, ev->cpu, 4, be);
	tbuf_put(b, ev->error, 2, be);
	tbuf_put(b, ev->pdu_len, 2, be);
	if (version == BLK_IO_TRACE2_VERSION) {
		static const unsigned char pad[12];

		tbuf_add(b, pad, sizeof(pad));
	}
	tbuf_add(b, ev->pdu, ev->pdu_len);
}

/* An event with the commonly varied fields set; the rest is zero (version 7). */
static inline struct blk_event test_event(uint32_t seq, uint64_t time, uint32_t cpu,
					  uint64_t action, uint64_t sector, uint32_t bytes)
{
	struct blk_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.sequence = seq;
	ev.time = time;
	ev.cpu = cpu;
	ev.action = action;
	ev.sector = sector;
	ev.bytes = bytes;
	ev.pid = 100;
	ev.device = BLK_MKDEV(8, 0);
	ev.version = BLK_IO_TRACE_VERSION;
	return ev;
}

/* Write @n bytes to a new temporary file; its name goes to @path (at least 32 bytes). */
static inline void test_write_temp(char *path, const void *p, size_t n)
{
	const unsigned char *c = p;
	int fd;

	strcpy(path, "/tmp/blk-unit-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	while (n) {
		ssize_t w = write(fd, c, n);

		assert_true(w > 0);
		c += w;
		n -= (size_t)w;
	}
	assert_int_equal(close(fd), 0);
}

/* Write @n bytes gzip-compressed (with zlib's gzopen) to a new temporary file. */
static inline void test_write_temp_gz(char *path, const void *p, size_t n)
{
	gzFile gz;
	int fd;

	strcpy(path, "/tmp/blk-unit-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	gz = gzopen(path, "wb");
	assert_non_null(gz);
	if (n)
		assert_int_equal(gzwrite(gz, p, (unsigned int)n), (int)n);
	assert_int_equal(gzclose(gz), Z_OK);
}

/* Read a whole file into a malloc'ed buffer; *@n gets its size. */
static inline unsigned char *test_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, got;

	assert_non_null(f);
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	fclose(f);
	*n = len;
	return buf;
}

/* Assert the file at @path holds exactly the @len bytes at @want. */
static inline void test_expect_file(const char *path, const void *want, size_t len)
{
	size_t n;
	unsigned char *got = test_read_file(path, &n);

	assert_int_equal(n, len);
	if (len)
		assert_memory_equal(got, want, len);
	free(got);
}

/* Assert the fields a record carries are equal (not offset or pdu pointers). */
static inline void test_assert_event_eq(const struct blk_event *a, const struct blk_event *b)
{
	assert_int_equal(a->sequence, b->sequence);
	assert_int_equal(a->time, b->time);
	assert_int_equal(a->sector, b->sector);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->action, b->action);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->device, b->device);
	assert_int_equal(a->cpu, b->cpu);
	assert_int_equal(a->error, b->error);
	assert_int_equal(a->pdu_len, b->pdu_len);
	if (a->pdu_len)
		assert_memory_equal(a->pdu, b->pdu, a->pdu_len);
}

/*
 * Checks for code run in a child process (test_in_child()), where cmocka's assertions
 * must not be used: they would jump back into the parent's copy of the test runner.
 */
#define CHILD_CHECK(cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return 1;                                                          \
		}                                                                          \
	} while (0)

/*
 * Run @fn(@arg) in a child process, so that memory corruption it causes (a library bug)
 * fails this test instead of killing the whole group. Return 0 if @fn returned 0.
 */
static inline int test_in_child(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg) ? 1 : 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status)) {
		print_error("child died of signal %d\n", WTERMSIG(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		print_error("child exited with %d\n", WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

#endif /* BLK_TEST_HELPERS_H */
