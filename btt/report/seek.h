/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Seek distances between consecutive I/Os of one stream (the Qs or the Ds of a device):
 * their count, mean, "median" and modes as btt 2.09 reports them, and the optional -s and
 * -m files.
 */
#ifndef BTT_SEEK_H
#define BTT_SEEK_H

#include <stddef.h>
#include <stdint.h>

struct seeki;
struct seekahead;

/* where the last I/O of a stream lay, for the distance to the next */
struct seek_pos {
	long long last_start, last_end;
	int absolute; /* -a: from the last end, signed */
};

/*
 * The distance of an I/O of @nsec sectors at @sector from the one before (signed): sums and
 * differences modulo 2^64, as the reference's long long arithmetic gives them on sectors at or
 * beyond 2^63 (a damaged trace), without signed overflow
 */
static inline long long seek_distance(struct seek_pos *pos, uint64_t sector, uint32_t nsec)
{
	long long start = (long long)sector;
	long long end = (long long)(sector + nsec);
	long long dist;

	if (pos->absolute) {
		dist = (long long)((uint64_t)start - (uint64_t)pos->last_end);
	} else if ((pos->last_start <= start && start <= pos->last_end) ||
		   (pos->last_start <= end && end <= pos->last_end)) {
		dist = 0;
	} else if (start > pos->last_end) {
		dist = (long long)((uint64_t)start - (uint64_t)pos->last_end);
	} else {
		dist = (long long)((uint64_t)start - (uint64_t)pos->last_start);
	}
	pos->last_start = start;
	pos->last_end = end;
	return dist;
}
/* the distance as the statistics take it: its magnitude (LLONG_MIN stays itself) */
static inline uint64_t seek_magnitude(long long dist)
{
	return dist < 0 ? 0 - (uint64_t)dist : (uint64_t)dist;
}
/* the fingerprint of a stream of magnitudes, @h after the one before @v (0 to start) */
static inline uint64_t seek_fingerprint(uint64_t h, uint64_t v)
{
	h ^= v;
	h = (h << 29 | h >> 35) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/*
 * A stream of device @dev (its file name) and @kind ("q2q", "d2d"); with @name (-s), the
 * files NAME_DEV_KIND_{r,w,c}.dat; @sps: -m counts; @absolute: -a distances.
 */
struct seeki *seeki_new(const char *name, const char *dev, const char *kind, int sps, int absolute);
/* an I/O of @nsec sectors at @sector, at @time */
void seeki_add(struct seeki *sip, uint64_t time, uint64_t sector, uint32_t nsec, int is_read);
/*
 * The stream is device @dev's (@d2d: its Ds, else its Qs): when @sa (NULL: none) read the
 * same stream ahead, its statistics are taken from there.
 */
void seeki_ahead(struct seeki *sip, struct seekahead *sa, uint32_t dev, int d2d);
/*
 * Before the report: the long streams of @v (NULLs allowed) do their bounded-memory pass
 * two at a time, on a second thread, with runs half as long (the memory of one pass).
 */
void seeki_prepare(struct seeki *const *v, size_t n);
void seeki_free(struct seeki *sip);
/* -m (@sps_name; nothing when NULL): the file of device @dev */
void seeki_sps_write(struct seeki *q2q, struct seeki *d2d, const char *dev, const char *sps_name);

struct mode {
	long long *modes;
	int nmds, alloc;
	long most;
};
long long seeki_nseeks(const struct seeki *sip);
double seeki_mean(const struct seeki *sip);
long long seeki_median(struct seeki *sip);
/* the modes in the reference's post-order; mp->modes is the caller's to free */
void seeki_mode(struct seeki *sip, struct mode *mp);

#endif /* BTT_SEEK_H */
