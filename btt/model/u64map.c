// SPDX-License-Identifier: GPL-2.0
/*
 * A small open-addressing map from nonzero 64-bit keys to 64-bit values (see u64map.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/u64map.h"

uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
	uint32_t mask = (1u << m->bits) - 1, h;

	if (!m->n)
		return NULL;
	for (h = u64_home(key, m->bits); m->key[h]; h = (h + 1) & mask)
		if (m->key[h] == key)
			return &m->val[h];
	return NULL;
}

static void u64map_place(struct u64map *m, uint64_t key, uint64_t val)
{
	uint32_t mask = (1u << m->bits) - 1, h;

	for (h = u64_home(key, m->bits); m->key[h]; h = (h + 1) & mask)
		;
	m->key[h] = key;
	m->val[h] = val;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((uint64_t)(m->n + 1) * 4 > (3ull << m->bits)) {
		/* at most 3/4 full */
		struct u64map g = {.bits = m->bits ? m->bits + 1 : 6, .n = m->n};

		g.key = calloc((size_t)1 << g.bits, sizeof(*g.key));
		g.val = malloc(((size_t)1 << g.bits) * sizeof(*g.val));
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			return -1;
		}
		for (size_t i = 0; m->bits && i < ((size_t)1 << m->bits); i++)
			if (m->key[i])
				u64map_place(&g, m->key[i], m->val[i]);
		u64map_free(m);
		*m = g;
	}
	u64map_place(m, key, val);
	m->n++;
	return 0;
}

/* backward-shift deletion: no tombstones */
void u64map_del(struct u64map *m, uint64_t key)
{
	uint32_t mask = (1u << m->bits) - 1, h, j;

	for (h = u64_home(key, m->bits); m->key[h] != key; h = (h + 1) & mask)
		;
	for (j = (h + 1) & mask; m->key[j]; j = (j + 1) & mask) {
		uint32_t hj = u64_home(m->key[j], m->bits);

		if (((j - hj) & mask) >= ((j - h) & mask)) {
			m->key[h] = m->key[j];
			m->val[h] = m->val[j];
			h = j;
		}
	}
	m->key[h] = 0;
	m->n--;
}

void u64map_free(struct u64map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}
