/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact counts of a long stream of values, and the two statistics the classic btt reads off
 * its red-black tree of value buckets: the "median" (the first bucket in pre-order that
 * holds at least half of the values, 0 when none does) and the modes (the most frequent
 * values, in post-order). Both depend on the tree's shape, so they are computed on the
 * same tree, built at the end from the spilled stream.
 *
 * Memory while values arrive: a small buffer (the rest goes to an unlinked temporary file
 * in $TMPDIR, or /tmp). At the end, about 20 bytes per value of the stream for a moment.
 */
#ifndef BTT_SEEKSTAT_H
#define BTT_SEEKSTAT_H

#include <stddef.h>
#include <stdint.h>

struct seekstat;

struct seekstat_result {
	long long median;
	long long *modes; /* in the classic post-order; malloc'd, the caller frees it */
	int nmds;
	long most; /* how often each mode occurred */
};

/* @membuf: values kept in memory before the temporary file is used (0: a default). */
struct seekstat *seekstat_new(size_t membuf);
/* 0, or -1 with seekstat_error() set (the temporary file could not be written). */
int seekstat_add(struct seekstat *ss, uint64_t v);
/*
 * A stream too long to sort in memory is first counted in bounded memory (its frequent
 * values, else sorted runs merged from the temporary file): 1 when this one is.
 */
int seekstat_long(const struct seekstat *ss);
/*
 * Do that pass now (nothing for a short stream), with runs of 1/@share of the usual
 * length: @share passes on as many threads use the memory of one. Streams are
 * independent: different ones may be prepared at once. 0, or -1 with seekstat_error().
 */
int seekstat_prepare(struct seekstat *ss, unsigned int share);
/* 0, or -1 with seekstat_error() set. Call once; @res is zeroed for an empty stream. */
int seekstat_finish(struct seekstat *ss, struct seekstat_result *res);
const char *seekstat_error(const struct seekstat *ss);
void seekstat_free(struct seekstat *ss);

#endif /* BTT_SEEKSTAT_H */
