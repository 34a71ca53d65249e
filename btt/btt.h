/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btt: shared state of the timeline analyser (options, devices, processes, queued I/Os).
 */
#ifndef BTT_BTT_H
#define BTT_BTT_H

#include <stdint.h>
#include <stdio.h>

#include "blk/event.h"
#include "blk/hist.h"
#include "qtree.h"

#define NO_TIME ((uint64_t)-1)

struct btt_opts {
	const char *input;
	const char *output; /* -o: name.avg, name.dat, name.msg */
	const char *seek_name; /* -s */
	const char *sps_name; /* -m */
	const char *d2c_name; /* -l */
	const char *q2c_name; /* -q */
	const char *q2d_name; /* -z */
	const char *bno_name; /* -B */
	const char *aqd_name; /* -Q */
	const char *unplug_name; /* -u */
	const char *per_io_name; /* -p */
	const char *pit_name; /* -P */
	const char *iostat_name; /* -I */
	const char *devmap_name; /* -M */
	const char *devices; /* -D */
	const char *exes; /* -e */
	double range_delta; /* -d */
	/* the shortest gap, in ns, that bit_time() puts past range_delta (UINT64_MAX:
	 * none does); a range test is then one integer comparison */
	uint64_t range_gap;
	int range_never;
	double t_start, t_end; /* -t, -T */
	double plat_freq; /* -L */
	int iostat_interval; /* -S */
	int time_bounded;
	int all_data; /* -A */
	int seek_absolute; /* -a */
	int no_remaps; /* -r */
	int easy_parse; /* -X */
	int do_active; /* -Z */
	int verbose;
	int percentiles; /* --percentiles (1) / --percentiles-only (2) */
};

extern struct btt_opts opts;

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

/* later minus earlier, or 1 ns if not later */
static inline uint64_t tdelta(uint64_t from, uint64_t to)
{
	return from < to ? to - from : 1;
}

static inline double bit_time(uint64_t t)
{
	return (double)t / 1.0e9;
}

/* activity ranges of one region (system, device or process) */
struct range {
	uint64_t start, end;
};

struct ranges {
	struct range *v;
	size_t n, alloc;
};

struct region {
	struct ranges q, c;
};

/* room for element @n of the array @v of @size-byte elements (doubling *@alloc); exits on no memory */
void *array_grow(void *v, size_t *alloc, size_t n, size_t size);
/* after the options: the gap that starts a new range, from -d */
void ranges_init(void);
void region_add(struct ranges *rs, uint64_t t);
void region_release(struct region *reg);

/*
 * The issue times of the requests issued and not yet completed (a sorted multiset): a
 * completion's live interval starts at one of them, so only they can be where a new
 * interval reaches back into the live periods.
 */
struct dset_entry {
	uint64_t t;
	uint32_t n; /* 0: gone, dropped lazily */
};

struct dset {
	struct dset_entry *v; /* ascending times */
	size_t head, len, alloc; /* entries v[head, len) */
	size_t live; /* sum of n */
};

void dset_add(struct dset *s, uint64_t t);
void dset_del(struct dset *s, uint64_t t);
void dset_release(struct dset *s);

/* a live period, or several in a row that a new interval can only merge all together */
struct live_span {
	uint64_t start, end; /* of the first and the last period */
	uint64_t total; /* live ns of its periods */
	long n; /* periods */
};

/* union of D..C intervals */
struct live {
	uint64_t end; /* end of the latest interval seen */
	uint64_t total; /* live time of the folded periods */
	long nfolded;
	struct live_span *v; /* periods still open to merging, oldest first */
	size_t n, alloc;
	size_t compact_at; /* span count at which they are grouped again */
};

/*
 * The interval [@dt, @ct] of a completion; @s holds the issue times of the requests
 * still in flight, @dt among them.
 */
void live_add(struct live *lp, uint64_t dt, uint64_t ct, const struct dset *s);
/* number of periods, total live ns */
void live_totals(const struct live *lp, long *n, uint64_t *total);
void live_release(struct live *lp);
void live_dump(const struct live *lp, const char *name, float base);

struct seeki;
struct seeki *seeki_new(const char *name, const char *dev, const char *kind);
void seeki_add(struct seeki *sip, uint64_t time, uint64_t sector, uint32_t bytes, int is_read);
/*
 * Before the report: the long streams of @v (NULLs allowed) do their bounded-memory pass
 * two at a time, on a second thread, with runs half as long (the memory of one pass).
 */
void seeki_prepare(struct seeki *const *v, size_t n);
void seeki_free(struct seeki *sip);
void seeki_sps_write(struct seeki *q2q, struct seeki *d2d, const char *dev);

struct mode {
	long long *modes;
	int nmds, alloc;
	long most;
};
long long seeki_nseeks(const struct seeki *sip);
double seeki_mean(const struct seeki *sip);
long long seeki_median(struct seeki *sip);
void seeki_mode(struct seeki *sip, struct mode *mp);

/* per-second completion counts ("_fp.dat") */
struct fp_counter {
	FILE *iops, *mbps;
	char *iops_name, *mbps_name;
	long cur;
	uint64_t ios, sectors;
};

struct proc;
struct dev;

#define Q2D_BUCKETS 10

/*
 * --percentiles: the histograms of a device (and, but the last, in total). The last one
 * holds the D2C times seen before the device's first Q, which the classic model ignores:
 * a trace recorded with "-a issue -a complete" has no Q, and then they are its D2C.
 */
enum { HIST_Q2C, HIST_D2C, HIST_Q2D, HIST_D2C_NO_Q, HIST_NR };

/* the times a queued I/O records after its Q */
enum qio_time { QT_G, QT_S, QT_I, QT_M, QT_D, QT_N };

/*
 * one queued I/O, from Q until the completion that covers it: the payload of its node in
 * its device's tree (qtree.h), which holds its sector and length. The later times are
 * kept as offsets from the Q (qio_time(), qio_set_time()).
 */
struct qio {
	uint64_t time;
	uint32_t who; /* the device and process of its Q: index in bs.who */
	uint32_t dt[QT_N]; /* 0: none; QT_FAR: in bs.far; else time - Q's time + 1 */
	/* only with -p (the payload ends here otherwise, see qio_size()) */
	uint64_t d_sec; /* the issue that took it, for the per-IO dump */
	uint32_t d_nsec;
};

#define QT_FAR UINT32_MAX

struct dev {
	uint32_t device;
	uint32_t idx; /* in bs.devs */
	int pre_culling;
	int remapper;
	const char *map_name; /* -M */
	struct qtree qt; /* its queued I/Os, nodes in bs.qpool */
	long n_qs, n_ds;
	uint64_t n_act_q, t_act_q;
	struct avgs avgs;
	uint64_t last_q;
	struct region regions;
	struct seeki *q2q_seek, *d2d_seek;
	struct live live;
	int is_plugged;
	long nplugs, nplugs_t;
	uint64_t nios_up, nios_upt;
	double last_plug, plugged_time, start_time, end_time;
	uint64_t last_ns; /* time of the last event taken (end_time once the trace ends) */
	struct fp_counter fp;
	FILE *d2c_fp, *q2c_fp, *q2d_fp;
	char *d2c_fn, *q2c_fn, *q2d_fn;
	/* --percentiles: Q2C, D2C, Q2D; and D2C before the device's first Q (HIST_D2C_NO_Q) */
	struct blk_hist *hist;
	struct u64map d_no_q; /* issues before the first Q: start sector + 1 -> issue time */
	uint64_t q2d_hist[Q2D_BUCKETS]; /* -A */
	struct dev_files *files; /* -B -Q -u -P */
	struct plat *plat[3]; /* -L: Q2C, D2C, Q2D */
	struct dev_iostat *iostat; /* -I */
};

struct proc {
	char *name;
	struct region regions;
	struct avgs avgs;
	uint64_t last_q;
	uint32_t idx; /* its own number (its place in bs.procs when it was registered) */
	uint32_t who_dev, who; /* its last pair in bs.who: device index + 1 (0: none), index */
};

/* a device and a process that queued I/O on it (a queued I/O names its pair: 4 bytes) */
struct who {
	uint32_t dev; /* index in bs.devs */
	struct proc *pip;
};

/* global state */
struct btt_state {
	struct dev **devs; /* in creation order */
	size_t ndevs, adevs;
	struct dev **out; /* shown devices, in report order (devs_order) */
	size_t nout;
	struct proc **procs;
	size_t nprocs, aprocs;
	struct who *who; /* the pairs queued I/Os name */
	size_t nwho, awho;
	struct u64map who_map; /* device << 32 | process index, + 1 -> pair */
	struct avgs all;
	uint64_t last_q;
	struct region all_regions;
	struct live all_live;
	struct dset issued; /* issue times of the requests in flight */
	struct fp_counter sys_fp;
	struct blk_hist hist[HIST_D2C_NO_Q]; /* --percentiles: Q2C, D2C, Q2D in total */
	FILE *msg_fp;
	FILE *per_io_fp;
	int done;
	uint64_t last_time; /* of the last event taken */
	uint64_t n_traces; /* records other than notes, for -v */
	struct qpool qpool; /* the nodes of every device's tree of queued I/Os */
	struct u64map far; /* times too far from their Q for a 32-bit offset: by node and kind */
	uint32_t relayout_at; /* queued I/Os at which the nodes are laid out again */
	uint64_t relayout_events; /* events since the last layout */
};

extern struct btt_state bs;

/* iomodel.c: the queued I/Os of every device, all dropped at once */
void qio_release_all(void);
uint64_t qio_time(const struct qio *q, enum qio_time k); /* NO_TIME if none */
uint64_t qio_sector(const struct qio *q);
uint32_t qio_nsec(const struct qio *q);

static inline struct dev *qio_dev(const struct qio *q)
{
	return bs.devs[bs.who[q->who].dev];
}

/* devs.c */
void devs_drop_ios(void);
struct dev *dev_find(uint32_t device);
struct dev *dev_get(uint32_t device, uint64_t time);
struct proc *proc_find(uint32_t pid);
struct proc *proc_get(uint32_t pid);
void proc_register(uint32_t pid, const char *name);
int dev_shown(const struct dev *dip);
void dev_label(const struct dev *dip, char *buf, size_t len, int parens);
void devs_sort_procs(void);
void devs_order(void);
void devs_release(void);
int devmap_load(const char *path);

/* iomodel.c */
void iomodel_event(const struct blk_event *ev);
void iomodel_finish(void);

/* files.c */
FILE *file_create(const char *name, char **saved);
void file_close(FILE **fp, char **name);
void fp_init(struct fp_counter *fc, const char *prefix);
void fp_add(struct fp_counter *fc, uint64_t time, uint32_t sectors);
void fp_finish(struct fp_counter *fc);
void latency_write(FILE *fp, uint64_t when, uint64_t lat);
/* -L: windowed average latency, one per device and kind (0 q2c, 1 d2c, 2 q2d) */
void plat_add(struct dev *dip, int kind, uint64_t when, uint64_t lat);
void plat_finish(struct dev *dip);

/* report.c */
void report_print(FILE *ofp);
void ranges_print(FILE *ofp);
void q2d_hist_add(uint64_t *h, uint64_t q2d);

/* pct.c */
void pct_print(FILE *ofp);

#endif /* BTT_BTT_H */
