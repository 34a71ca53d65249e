/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small map from nonzero 64-bit keys to 64-bit values, and the multiplicative hash that
 * the queued I/Os' tables share with it.
 */
#ifndef BTT_U64MAP_H
#define BTT_U64MAP_H

#include <stdint.h>

/* the home slot of @key in a table of 1 << @bits slots (Fibonacci hashing) */
static inline uint32_t u64_home(uint64_t key, unsigned int bits)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/*
 * A small open-addressing map from nonzero 64-bit keys to 64-bit values (linear probing,
 * at most 3/4 full, backward-shift deletion). Zeroed is empty.
 */
struct u64map {
	uint64_t *key; /* 0 is an empty slot */
	uint64_t *val;
	unsigned int bits; /* 1 << bits slots */
	uint32_t n;
};

uint64_t *u64map_get(const struct u64map *m, uint64_t key); /* NULL when absent */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val); /* a new key; -1: no memory */
void u64map_del(struct u64map *m, uint64_t key); /* a present key */
void u64map_free(struct u64map *m);

#endif /* BTT_U64MAP_H */
