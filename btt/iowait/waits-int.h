/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of "I/O wait by process" (waits.h), shared by its tracking (waits.c) and its
 * section (waits-report.c) only.
 */
#ifndef BTT_WAITS_INT_H
#define BTT_WAITS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/alloc.h"
#include "model/iomodel.h"
#include "model/u64map.h"

struct blk_hist;
struct bios;
struct btt_devs;

#define MAX_THREADS 65536
#define MAX_PROCS 4096
#define MAX_INFLIGHT 4096 /* per thread */
#define MAX_SPANS 256 /* per thread */
#define NO_DEV UINT32_MAX

struct span {
	uint64_t a, b;
};

/* what a thread (or, once folded, a process) did on one device */
struct tdev {
	uint32_t dev; /* device index */
	uint64_t ios; /* bios queued */
	uint64_t nq2c, q2c, d2c, nd2c; /* completed bios, their Q2C and D2C sums (ns) */
	uint64_t waits, wait_ns; /* waits on this device */
};

struct thread {
	uint32_t tid;
	int32_t proc; /* index in waits.pr; -1 until a wait names its process */
	uint64_t *inflight; /* Q times, ascending */
	size_t ninflight, ainflight;
	struct span *spans;
	size_t nspans, aspans;
	uint64_t forgot_b; /* the latest end of a span forgotten (MAX_SPANS) */
	uint64_t last_c; /* the last completion of its I/Os, on device last_c_dev */
	uint32_t last_c_dev;
	struct tdev *devs;
	size_t ndevs, adevs;
	uint32_t last_dev; /* the index in devs last used */
};

/* a task whose I/O ended waits of a process without I/O of its own (BLK_IOWAIT_F_WAKER_IO) */
struct waker {
	uint32_t tid;
	char comm[17];
	uint64_t waits, ns;
};

#define MAX_WAKERS 4 /* per process; the others' waits are in its totals only */

struct proc {
	uint32_t tgid;
	char comm[17];
	uint64_t waits, ns, covered;
	struct blk_hist *hist;
	uint64_t others_waits, others_ns; /* waits on another task's I/O */
	struct waker wk[MAX_WAKERS];
	size_t nwk;
	uint64_t untied_waits, untied_ns; /* blktrace --iowait-all: sleeps tied to no I/O */
};

struct waits {
	struct btt_devs *devs;
	int iowait_only; /* --iowait-only */
	int bounded;
	double t_start, t_end;
	struct u64map tmap; /* tid + 1 -> index in th */
	struct thread *th;
	size_t nth, ath;
	struct {
		uint32_t tid, idx; /* idx + 1, 0: empty */
	} cache[64]; /* the threads seen last, by tid % 64 */
	struct u64map pmap; /* tgid + 1 -> index in pr */
	struct proc *pr;
	size_t npr, apr;
	unsigned int sources; /* 1 << enum blk_iowait_source of the waits counted */
	uint64_t notes, bad, no_io, outside, no_dev, untracked, approx, overflow;
	uint64_t others; /* waits on another task's I/O */
	uint64_t untied_ns; /* no_io sleeps of processes without a counted wait */
	/*
	 * The bios' completions (model/bios.h): btt's other outputs' model when one runs
	 * (@bios_from 0), else one of our own made at the first wait note (a trace without
	 * waits pays nothing for it): the I/Os queued before @bios_from complete as the
	 * classic model pairs them, which loses split bios (@classic_lost of them).
	 */
	struct bios *own;
	int use_bios;
	uint64_t bios_from, classic_lost, nomem;
	/*
	 * A regular file: the model's I/Os are taken from the first wait note on (@sub then
	 * subscribed), those before it read again from @replay (model/replay.h), so that a
	 * trace without waits costs nothing per I/O. NULL: taken from the first event.
	 */
	const char *replay;
	struct iomodel *model;
	struct btt_io_sub sub;
	int replay_errno; /* the file could not be read again: the I/Os before are missing */
};

/* the device @dev (index) in the array *@v of *@n (*@alloc allocated), added when new */
static inline struct tdev *waits_tdev_of(struct tdev **v, size_t *n, size_t *alloc, uint32_t dev)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].dev == dev)
			return &(*v)[i];
	*v = array_grow(*v, alloc, *n, sizeof(**v));
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].dev = dev;
	return &(*v)[(*n)++];
}

#endif /* BTT_WAITS_INT_H */
