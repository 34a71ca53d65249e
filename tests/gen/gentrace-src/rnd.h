/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gentrace's random numbers: splitmix64, small, fast and the same everywhere (rand() is
 * neither). Inline: the generator draws several numbers per record.
 */
#ifndef GENTRACE_RND_H
#define GENTRACE_RND_H

#include <stdint.h>

struct rnd {
	uint64_t s;
};

static inline uint64_t rnd_next(struct rnd *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t rnd_below(struct rnd *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd_next(r) * n) >> 64);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rnd_range(struct rnd *r, uint64_t lo, uint64_t hi)
{
	return lo + rnd_below(r, hi - lo + 1);
}

/* True once in @n draws on average. */
static inline int one_in(struct rnd *r, uint64_t n)
{
	return rnd_below(r, n) == 0;
}

#endif /* GENTRACE_RND_H */
