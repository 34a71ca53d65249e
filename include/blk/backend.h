/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One interface to the kernel's block tracing, whatever carries it: the relay files of
 * BLKTRACESETUP (the classic path) or the ftrace blk tracer in tracefs (under kernel
 * lockdown). A backend sets tracing up for a set of devices, hands out each CPU's records
 * in the classic record format (host order, per-device sequence numbers, process-name and
 * timestamp notes), counts what the kernel lost, and puts everything back as found.
 *
 * The block backends (relay, tracefs) and the I/O wait backend share this interface.
 *
 * Life cycle: open -> start -> read (one thread per CPU, each calling only with its own
 * CPU index) and tick (the controlling thread, about every 250 ms) -> stop -> read until
 * it returns 0 (drain) -> lost -> close. close() is the only call needed on every path
 * after a successful open.
 */
#ifndef BLK_BACKEND_H
#define BLK_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* A device to trace. The caller opens it and owns the descriptor. */
struct blk_backend_dev {
	const char *path; /* as the user named it */
	int fd; /* the open block device */
	uint32_t devno; /* kernel encoding (major << 20 | minor), as in records */
	char sysname[64]; /* block name in sysfs ("loop0", "sda1"; '/' as '_') */
	char name[64]; /* set by open(): the kernel's trace name (relay), else sysname */
};

struct blk_backend_cfg {
	struct blk_backend_dev *devs;
	int ndevs;
	const int *cpus; /* online CPUs; records are read per index into this */
	int ncpus;
	uint64_t act_mask; /* categories to trace, 0 = all */
	unsigned int buf_kb, nbuf; /* buffer size (KiB) and count, as -b and -n give them */
	int buf_default; /* neither -b nor -n given: the backend may size its buffers itself */
	const char *debugfs; /* -r, or NULL: where to look for debugfs */
	/*
	 * tracefs only: a directory on the output's file system where the raw ring-buffer
	 * pages may be kept while tracing runs and converted when it stops (per-CPU files:
	 * nobody reads the records before the end), or NULL to convert them as they are read.
	 */
	const char *spool_dir;
	/*
	 * tracefs only (--origin): turn the blk tracer's blk_cgroup option on and carry each
	 * event's cgroup in notes (trace.h BLK_TN_CGROUP, BLK_TN_CGPATH).
	 */
	int origin;
	/* I/O wait backend only (--iowait): */
	const char *iowait_source; /* "auto" (or NULL), "module", "kprobe", "sched" */
	int iowait_all; /* sched source: keep the sleeps without an I/O in flight too */
	unsigned int iowait_maxactive; /* kprobe source: kretprobe instances (0: 2 x CPUs) */
};

/* Where a backend delivers what it reads. */
struct blk_backend_sink {
	/*
	 * Whole records (@n bytes, host order) of device @dev read on CPU index @k; @events
	 * of them are I/O events (the rest are notes). Return 0, or -errno to make read() fail.
	 */
	int (*records)(void *ctx, int dev, int k, const unsigned char *p, size_t n,
		       unsigned long events);
	/* Nothing older than @time (trace clock, ns) will come from @dev on CPU index @k. */
	void (*mark)(void *ctx, int dev, int k, uint64_t time);
	void *ctx;
};

struct blk_backend;

struct blk_backend_ops {
	const char *name; /* "relay", "tracefs" */
	/*
	 * Set tracing up for @cfg's devices (@cfg must outlive the backend). Return a
	 * backend, or NULL with errno set and the reason in @err; on failure everything it
	 * touched is already put back.
	 */
	struct blk_backend *(*open)(const struct blk_backend_cfg *cfg, char *err, size_t len);
	/* Start recording. Return 0 or -errno (message in @err). */
	int (*start)(struct blk_backend *b, char *err, size_t len);
	/*
	 * Read what CPU index @k has, waiting at most @wait_ms for something to arrive.
	 * Return 1 if records were delivered, 0 if there was nothing, or -errno (message in
	 * @err; -ENOMEM when a buffer could not grow: never a silent drop).
	 */
	int (*read)(struct blk_backend *b, int k, int wait_ms, const struct blk_backend_sink *sink,
		    char *err, size_t len);
	/*
	 * Periodic check from the controlling thread. Return 0; 1 with a notice in @msg
	 * (something was adapted, e.g. a buffer grown after losses); -ESHUTDOWN with the
	 * reason in @msg when a device's tracing was turned off from outside (blktrace -k):
	 * the run should end; or another -errno.
	 */
	int (*tick)(struct blk_backend *b, char *msg, size_t len);
	/* Stop recording (what was recorded can still be read). Return 0 or -errno. */
	int (*stop)(struct blk_backend *b);
	/* Events the kernel lost for @dev on CPU index @k (relay: per device, on index 0). */
	uint64_t (*lost)(struct blk_backend *b, int dev, int k);
	/* Bytes of @dev's stream on CPU index @k that were not records and were skipped. */
	uint64_t (*skipped)(struct blk_backend *b, int dev, int k);
	/*
	 * Tear down and put back every setting touched; frees @b (NULL allowed).
	 * Return 0 or the first -errno, with a message in @err.
	 */
	int (*close)(struct blk_backend *b, char *err, size_t len);
	/*
	 * 0: read() is called by one thread per CPU index, each pinned to its CPU. 1: by
	 * one thread with index 0 only, which delivers the records of every CPU index.
	 */
	int one_reader;
	/*
	 * What its records count, for the summary: NULL for "events" (a block backend), else
	 * its unit ("waits", "notes"): a side stream, all of whose records count, and whose
	 * losses are said apart: "%llu @lost_unit of NAME were lost (@lost_why)".
	 */
	const char *unit;
	const char *lost_unit, *lost_why;
	/* Optional: what it uses and why, to say once it is open (valid while @b lives). */
	const char *(*describe)(struct blk_backend *b);
	/* Optional: a line of its own for the end-of-run summary. Return 1 with @msg, or 0. */
	int (*report)(struct blk_backend *b, char *msg, size_t len);
};

/* Every backend's handle starts with its ops. */
struct blk_backend {
	const struct blk_backend_ops *ops;
};

extern const struct blk_backend_ops blk_backend_relay;
extern const struct blk_backend_ops blk_backend_tracefs;

/*
 * --origin's file-system events beside the relay backend, whose kernel records none: the
 * events tfsorigin.h names, in a private tracefs instance (instances/blktrace-origin-PID) on
 * the clock of the relay records, turned into origin notes (trace.h BLK_TN_DIRTY,
 * BLK_TN_FMAP, BLK_TN_FILE) in an output stream per device (NAME.origin), one per CPU index
 * with a reader each. lost() counts the events the instance's ring lost on CPU index k, for
 * each device.
 */
extern const struct blk_backend_ops blk_backend_fsside;

/*
 * A second kind of backend: the I/O waits of the tasks (blktrace --iowait), beside a block
 * backend. It reads cfg->devs only to know their I/O (the sched source keeps the sleeps of
 * tasks with an I/O in flight on them); its records are I/O wait notes (trace.h), all
 * delivered as device 0 (its own output stream, NAME.iowait), one stream per CPU index, by
 * one reader (one_reader). lost() counts on (0, k): the CPU's ring buffer overruns, plus on
 * index 0 the waits its probes missed (kretprobe maxactive). Its open() says in describe()
 * which source it uses (the blk_iowait module's tracepoints, else tracefs kprobe events,
 * else the scheduler tracepoints) and why the better ones are not available.
 */
extern const struct blk_backend_ops blk_backend_iowait;

/* How far behind "now" a CPU may still deliver records after it read nothing (ns). */
#define BLK_BACKEND_SLACK_NS 20000000ull

#endif /* BLK_BACKEND_H */
