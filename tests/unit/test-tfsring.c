// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/tfsring.c's spool: the pages come back byte for byte in the order added
 * (short pages padded with zeros), across batches; a file that fails part-way (a size limit:
 * EFBIG, as a full disk gives ENOSPC) takes no more pages and loses none of those added,
 * whole or in part; nothing is left in the directory; a directory that cannot hold it fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../kernel/tfsring.h"

#define PSZ 4096

static void fill(unsigned char *p, size_t len, unsigned int i)
{
	for (size_t j = 0; j < len; j++)
		p[j] = (unsigned char)(i * 31 + j * 7 + (j >> 8));
}

/* page @i as added (@len bytes of its pattern) must be what @got holds, zeros after */
static void check_page(const unsigned char *got, unsigned int i, size_t len)
{
	unsigned char want[PSZ];

	memset(want, 0, sizeof(want));
	fill(want, len, i);
	assert_memory_equal(got, want, PSZ);
}

static size_t len_of(unsigned int i)
{
	return i % 5 == 4 ? 100 + i : PSZ; /* some short pages, as a drain reads them */
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	return n;
}

static void round_trip(unsigned int n)
{
	char dir[] = "/tmp/test-tfsring.XXXXXX";
	unsigned char page[PSZ];
	struct tfs_spool *s;
	const unsigned char *p;
	int err;

	assert_non_null(mkdtemp(dir));
	s = tfs_spool_new(dir, PSZ);
	assert_non_null(s);
	assert_int_equal(entries(dir), 0);
	for (unsigned int i = 0; i < n; i++) {
		fill(page, len_of(i), i);
		assert_int_equal(tfs_spool_add(s, page, len_of(i)), 0);
	}
	assert_int_equal(tfs_spool_failed(s), 0);
	assert_int_equal(tfs_spool_pending(s), n);
	for (unsigned int i = 0; i < n; i++) {
		p = tfs_spool_next(s, &err);
		assert_non_null(p);
		check_page(p, i, len_of(i));
		assert_int_equal(tfs_spool_pending(s), n - i - 1);
	}
	assert_null(tfs_spool_next(s, &err));
	assert_int_equal(err, 0);
	/* given back: it takes no more */
	assert_int_equal(tfs_spool_add(s, page, PSZ), -EINVAL);
	tfs_spool_free(s);
	assert_int_equal(entries(dir), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_empty(void **state)
{
	(void)state;
	round_trip(0);
}

static void test_within_a_batch(void **state)
{
	(void)state;
	round_trip(10);
}

static void test_many_batches(void **state)
{
	(void)state;
	round_trip(64 * 5 + 17);
}

/* the file may hold @limit bytes: past that, writes fail (EFBIG) */
static void failing(rlim_t limit, unsigned int n)
{
	char dir[] = "/tmp/test-tfsring.XXXXXX";
	unsigned char page[PSZ];
	struct rlimit old, lim;
	struct tfs_spool *s;
	const unsigned char *p;
	unsigned int added = 0;
	int err, failed = 0;

	assert_non_null(mkdtemp(dir));
	s = tfs_spool_new(dir, PSZ);
	assert_non_null(s);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = limit;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (unsigned int i = 0; i < n; i++) {
		fill(page, len_of(i), i);
		err = tfs_spool_add(s, page, len_of(i));
		added++;
		if (err) {
			assert_int_equal(err, -EFBIG);
			failed = 1;
			break;
		}
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(failed);
	assert_int_equal(tfs_spool_failed(s), -EFBIG);
	/* it takes nothing more, and says why */
	assert_int_equal(tfs_spool_add(s, page, PSZ), -EFBIG);
	assert_int_equal(tfs_spool_pending(s), added);
	for (unsigned int i = 0; i < added; i++) {
		p = tfs_spool_next(s, &err);
		assert_non_null(p);
		check_page(p, i, len_of(i));
	}
	assert_null(tfs_spool_next(s, &err));
	assert_int_equal(err, 0);
	tfs_spool_free(s);
	assert_int_equal(rmdir(dir), 0);
}

static void test_fails_at_a_batch(void **state)
{
	(void)state;
	failing(2 * 64 * PSZ, 1000); /* two batches fit whole, the third not at all */
}

static void test_fails_inside_a_page(void **state)
{
	(void)state;
	failing(3 * 64 * PSZ + 5 * PSZ + 1000, 1000); /* the fourth batch in part, a page cut */
}

static void test_no_directory(void **state)
{
	(void)state;
	errno = 0;
	assert_null(tfs_spool_new("/nonexistent/test-tfsring", PSZ));
	assert_int_equal(errno, ENOENT);
	assert_null(tfs_spool_new("/tmp", 0));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_within_a_batch),
		cmocka_unit_test(test_many_batches),
		cmocka_unit_test(test_fails_at_a_batch),
		cmocka_unit_test(test_fails_inside_a_page),
		cmocka_unit_test(test_no_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
