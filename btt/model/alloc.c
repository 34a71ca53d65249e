// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation helpers of btt (see alloc.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "model/alloc.h"

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

void *array_grow_slow(void *v, size_t *alloc, size_t n, size_t size)
{
	while (*alloc <= n)
		*alloc = *alloc ? *alloc * 2 : 16;
	v = realloc(v, *alloc * size);
	if (!v)
		die("out of memory");
	return v;
}

void *array_grow_zero_slow(void *v, size_t *alloc, size_t n, size_t size)
{
	size_t old = *alloc;

	v = array_grow_slow(v, alloc, n, size);
	memset((char *)v + old * size, 0, (*alloc - old) * size);
	return v;
}
