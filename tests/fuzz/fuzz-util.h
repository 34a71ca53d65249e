/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libFuzzer targets (tests/fuzz/fuzz-*.c): descriptors holding a
 * fuzz input, made without a file system round trip per input where possible.
 */
#ifndef BLK_FUZZ_UTIL_H
#define BLK_FUZZ_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest input a target takes (run-fuzz.sh passes a smaller -max_len). */
#define FUZZ_MAX_INPUT (64 * 1024)

static inline void fuzz_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			abort();
		p += n;
		len -= (size_t)n;
	}
}

/* The read end of a pipe holding @data (write end closed); @len <= FUZZ_MAX_INPUT. */
static inline int fuzz_pipe(const uint8_t *data, size_t len)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		abort();
	/* a pipe holds 64 KiB by default: all of the input fits, no reader needed yet */
	if (len > 65536 && fcntl(p[1], F_SETPIPE_SZ, (int)len) < (int)len)
		abort();
	fuzz_write_all(p[1], data, len);
	close(p[1]);
	return p[0];
}

/* Make the file open as @fd hold exactly @data. */
static inline void fuzz_refill(int fd, const uint8_t *data, size_t len)
{
	if (ftruncate(fd, 0) || (len && pwrite(fd, data, len, 0) != (ssize_t)len))
		abort();
}

/*
 * FNV-1a of @data: a choice a target makes from the whole input, which mutations reshuffle.
 * Not instrumented (nor inlined into a function that is): its loop's comparisons, traced
 * for every byte, were 3% of a run.
 */
__attribute__((no_sanitize("coverage"), noinline)) static inline uint32_t
fuzz_hash(const uint8_t *data, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ *data++) * 16777619u;
	return h;
}

#endif /* BLK_FUZZ_UTIL_H */
