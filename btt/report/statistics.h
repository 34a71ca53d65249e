/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The statistics of the classic report, kept for the system, each device and each
 * process as the I/O model delivers stages, completions and device events: min/avg/max
 * of each phase, activity ranges, request counts, plugs, seeks and the Q2D histogram.
 */
#ifndef BTT_STATISTICS_H
#define BTT_STATISTICS_H

#include <stddef.h>
#include <stdint.h>

#include "report/ranges.h"

struct btt_view;
struct seekahead;
struct btt_devs;
struct btt_proc;

/* min/avg/max accumulator of latencies or sizes, as the report prints them */
struct avg {
	uint64_t min, max, total;
	long n;
};

enum avg_kind {
	AV_Q2Q,
	AV_Q2A,
	AV_Q2G,
	AV_S2G,
	AV_G2I,
	AV_Q2M,
	AV_I2D,
	AV_M2D,
	AV_D2C,
	AV_Q2C,
	AV_Q2Q_DM,
	AV_Q2A_DM,
	AV_Q2C_DM,
	AV_BLKS,
	AV_NR
};

struct avgs {
	struct avg a[AV_NR];
};

static inline void avg_add(struct avg *ap, uint64_t t)
{
	if (ap->n++ == 0) {
		ap->min = ap->max = t;
	} else if (t < ap->min) {
		ap->min = t;
	} else if (t > ap->max) {
		ap->max = t;
	}
	ap->total += t;
}

#define Q2D_BUCKETS 10

struct dev_stats {
	struct avgs avgs;
	uint64_t last_q;
	struct region regions;
	struct seeki *q2q_seek, *d2d_seek;
	long n_qs, n_ds;
	uint64_t n_act_q, t_act_q;
	int is_plugged;
	long nplugs, nplugs_t;
	uint64_t nios_up, nios_upt;
	double last_plug, plugged_time, start_time, end_time;
	uint64_t q2d_hist[Q2D_BUCKETS]; /* -A */
};

struct proc_stats {
	struct avgs avgs;
	uint64_t last_q;
	struct region regions;
};

/**
 * struct stats - the report's statistics
 * @dev: by device index (@ndev of them)
 * @proc: by process index, up to the last process that had any (see stats_proc())
 */
struct stats {
	const struct btt_view *v; /* the run */
	struct avgs all;
	uint64_t last_q;
	struct region all_regions;
	struct dev_stats *dev;
	size_t ndev, adev;
	struct proc_stats *proc;
	size_t nproc, aproc;
	struct range_gap gap;
	const char *seek_name; /* -s */
	struct seekahead *ahead; /* the seek streams read ahead, or NULL */
	int sps, seek_absolute, all_data; /* -m, -a, -A */
};

/* a subscriber to @v->model */
struct stats *stats_new(const struct btt_view *v);
/* the trace ended: each device's end, plugs still open counted */
void stats_finish(struct stats *s, const struct btt_devs *d);
/* the statistics of process @pip, or NULL when it had none */
const struct proc_stats *stats_proc(const struct stats *s, const struct btt_proc *pip);
void stats_free(struct stats *s);

#endif /* BTT_STATISTICS_H */
