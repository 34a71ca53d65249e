// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator model against the real allocator: random scripts of malloc, calloc,
 * realloc and free (small, fast-bin, large-bin and mmap sizes) run in heap-oracle (the C
 * library's malloc, in a fresh process) and in heapemu.c; every block must land at the
 * same heap offset, and every new block must hold the same old word at offset 40 (the
 * word the classic blkparse reads as a request's queue time) unless it is a pointer.
 * The model is of glibc BLK_HEAPEMU_GLIBC (2.36): on another version the comparison is
 * skipped, by the rule of tests/lib.sh's have_modelled_glibc (getconf GNU_LIBC_VERSION, or
 * TEST_GLIBC_VERSION to pretend another one).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "compat/heapemu.h"

#define SLOTS 4096
#ifndef SEEDS
#define SEEDS 6 /* scripts per test; more for a longer search (-DSEEDS=200) */
#endif

struct op {
	uint32_t kind, slot, size, serial;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t pick_size(uint64_t *s, int profile)
{
	uint64_t r = rnd(s) % 100;

	if (profile == 1) /* blkparse-like: records, sort nodes, tracking entries */
		return r < 40 ? 48 : r < 60 ? 64 : r < 80 ? 72 : r < 95 ? 56 : 40;
	if (r < 45)
		return 1 + (uint32_t)(rnd(s) % 128);
	if (r < 75)
		return 129 + (uint32_t)(rnd(s) % 900);
	if (r < 97)
		return 1033 + (uint32_t)(rnd(s) % 70000);
	return 130000 + (uint32_t)(rnd(s) % 80000);
}

static size_t gen_ops(struct op *ops, size_t n, uint64_t seed, int profile)
{
	static uint8_t live[SLOTS];
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t k = 0;

	memset(live, 0, sizeof(live));
	for (uint32_t serial = 1; k < n; serial++) {
		uint32_t slot = (uint32_t)(rnd(&s) % (profile == 1 ? 600 : SLOTS));
		uint64_t r = rnd(&s) % 100;
		struct op *o = &ops[k++];

		o->slot = slot;
		o->serial = serial;
		o->size = pick_size(&s, profile);
		if (!live[slot]) {
			o->kind = r < 15 ? 2 : 1;
			live[slot] = 1;
		} else if (r < 55) {
			o->kind = 4;
			live[slot] = 0;
		} else {
			o->kind = 3;
		}
	}
	return k;
}

static int oracle_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 16);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	strcpy(slash + 1, "heap-oracle");
	return access(buf, X_OK);
}

/* Run @ops through the real allocator; return the number of results (2 words each). */
static size_t run_oracle(const struct op *ops, size_t n, uint64_t *res, size_t max)
{
	char path[4096], in[] = "/tmp/heapemu-in-XXXXXX", out[] = "/tmp/heapemu-out-XXXXXX";
	int fi = mkstemp(in), fo = mkstemp(out), status;
	ssize_t got;
	pid_t pid;

	assert_true(fi >= 0 && fo >= 0);
	assert_int_equal(oracle_path(path, sizeof(path)), 0);
	assert_int_equal(write(fi, ops, n * sizeof(*ops)), (ssize_t)(n * sizeof(*ops)));
	lseek(fi, 0, SEEK_SET);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fi, 0);
		dup2(fo, 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	lseek(fo, 0, SEEK_SET);
	got = read(fo, res, max * 16);
	close(fi);
	close(fo);
	unlink(in);
	unlink(out);
	assert_true(got >= 0);
	return (size_t)got / 16;
}

static void fill(struct blk_heapemu *h, uint64_t p, size_t from, size_t to, uint32_t serial)
{
	for (size_t i = from; i + 8 <= to; i += 8)
		blk_heapemu_put64(h, p + i, ((uint64_t)serial << 8) | 0x5a);
}

static void compare(uint64_t seed, size_t n, int profile)
{
	struct op *ops = calloc(n, sizeof(*ops));
	uint64_t *res = calloc(n, 16), slot[SLOTS] = {0};
	size_t slot_size[SLOTS] = {0}, nres, r = 0, words = 0;
	struct blk_heapemu *h = blk_heapemu_new();

	assert_non_null(ops);
	assert_non_null(res);
	assert_non_null(h);
	n = gen_ops(ops, n, seed, profile);
	nres = run_oracle(ops, n, res, n);
	for (size_t i = 0; i < n; i++) {
		const struct op *o = &ops[i];
		uint64_t p = 0, w = 0;

		if (o->kind == 4) {
			blk_heapemu_release(h, slot[o->slot]);
			slot[o->slot] = 0;
			continue;
		}
		if (o->kind == 1)
			p = blk_heapemu_malloc(h, o->size);
		else if (o->kind == 2)
			p = blk_heapemu_calloc(h, o->size);
		else
			p = blk_heapemu_realloc(h, slot[o->slot], o->size);
		assert_true(p != 0);
		assert_true(r < nres);
		if (res[2 * r] != UINT64_MAX) {
			if (p != res[2 * r])
				fail_msg("seed %llu op %zu (kind %u size %u): model 0x%llx, glibc 0x%llx",
					 (unsigned long long)seed, i, o->kind, o->size,
					 (unsigned long long)p, (unsigned long long)res[2 * r]);
			if (o->size >= 48 && o->kind != 3 && res[2 * r + 1] < (1ULL << 40)) {
				w = blk_heapemu_get64(h, p + 40);
				if (w != res[2 * r + 1])
					fail_msg("seed %llu op %zu: old word 0x%llx, glibc 0x%llx",
						 (unsigned long long)seed, i,
						 (unsigned long long)w,
						 (unsigned long long)res[2 * r + 1]);
				words++;
			}
		}
		r++;
		if (o->kind == 3 && o->size > slot_size[o->slot])
			fill(h, p, slot_size[o->slot] & ~(size_t)7, o->size, o->serial);
		else if (o->kind != 3)
			fill(h, p, 0, o->size, o->serial);
		slot[o->slot] = p;
		slot_size[o->slot] = o->size;
	}
	assert_int_equal(r, nres);
	assert_false(blk_heapemu_failed(h));
	/* the comparison of old contents did happen */
	assert_true(words > n / 20);
	blk_heapemu_free(h);
	free(ops);
	free(res);
}

/* tests/lib.sh's have_modelled_glibc; prints the SKIP line when it is not */
static int modelled_glibc(void)
{
	const char *v = getenv("TEST_GLIBC_VERSION");
	char buf[64];

	if (!v && confstr(_CS_GNU_LIBC_VERSION, buf, sizeof(buf)) && !strncmp(buf, "glibc ", 6))
		v = buf + 6;
	if (v && !strcmp(v, BLK_HEAPEMU_GLIBC))
		return 1;
	print_message("SKIP: the model against the real allocator (the -t model replays glibc %s's allocator; this machine has glibc %s)\n",
		      BLK_HEAPEMU_GLIBC, v ? v : "unknown");
	return 0;
}

static void test_mixed_sizes(void **state)
{
	(void)state;
	if (!modelled_glibc())
		skip();
	for (uint64_t seed = 1; seed <= SEEDS; seed++)
		compare(seed, 20000, 0);
}

static void test_blkparse_sizes(void **state)
{
	(void)state;
	if (!modelled_glibc())
		skip();
	for (uint64_t seed = 1; seed <= (SEEDS + 1) / 2 + 1; seed++)
		compare(seed, 50000, 1);
}

static void test_first_block(void **state)
{
	struct blk_heapemu *h = blk_heapemu_new();
	uint64_t a, b;

	(void)state;
	assert_non_null(h);
	/* the allocator's cache table (0x290 bytes) comes first */
	a = blk_heapemu_malloc(h, 10);
	assert_int_equal(a, 0x2a0);
	b = blk_heapemu_malloc(h, 10);
	assert_int_equal(b, 0x2c0);
	blk_heapemu_put64(h, b, 77);
	blk_heapemu_put64(h, b + 8, 78);
	blk_heapemu_release(h, b);
	/* a freed block comes back first; the cache cleared its second word */
	assert_int_equal(blk_heapemu_malloc(h, 20), b);
	assert_int_equal(blk_heapemu_get64(h, b + 8), 0);
	/* the heap starts at 132 KiB and grows by the page */
	assert_int_equal(blk_heapemu_size(h), 0x21000);
	blk_heapemu_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_block),
		cmocka_unit_test(test_mixed_sizes),
		cmocka_unit_test(test_blkparse_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
