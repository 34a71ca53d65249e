/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation helpers of btt: out of memory ends the program with a message (btt keeps no
 * state worth saving when it cannot grow).
 */
#ifndef BTT_ALLOC_H
#define BTT_ALLOC_H

#include <stddef.h>

/* malloc(), calloc(), strdup() that never return NULL */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);

/*
 * Room for element @n of the array @v of @size-byte elements: doubles *@alloc when @n
 * reaches it, and returns the (possibly moved) array.
 */
void *array_grow_slow(void *v, size_t *alloc, size_t n, size_t size);

static inline void *array_grow(void *v, size_t *alloc, size_t n, size_t size)
{
	return n < *alloc ? v : array_grow_slow(v, alloc, n, size);
}

/* array_grow(), the elements it adds zeroed (for arrays indexed by a number, 0: none) */
void *array_grow_zero_slow(void *v, size_t *alloc, size_t n, size_t size);

static inline void *array_grow_zero(void *v, size_t *alloc, size_t n, size_t size)
{
	return n < *alloc ? v : array_grow_zero_slow(v, alloc, n, size);
}

#endif /* BTT_ALLOC_H */
