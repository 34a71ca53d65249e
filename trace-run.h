/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blktrace's run (trace-run.c): the sources (a block backend; with --origin on the relay
 * backend, its file-system events' side backend; with --iowait the I/O wait backend; all
 * behind include/blk/backend.h), their reader threads, the outputs
 * (per-CPU files, the time-ordered -o - stream, or the network), the end-of-run summary
 * and the teardown on every path. blktrace.c parses the options, opens the devices and
 * calls trace_run().
 */
#ifndef BLKTRACE_RUN_H
#define BLKTRACE_RUN_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "blk/backend.h"
#include "blk/output.h"
#include "blk/window.h"

#define MAX_CPUS 4096
#define MAX_DEVS 64
#define MAX_SRCS 3

enum backend { BACKEND_AUTO, BACKEND_RELAY, BACKEND_TRACEFS };

struct bt_opts {
	const char *devs[MAX_DEVS];
	int ndevs;
	uint64_t act_mask; /* 0 = all */
	unsigned int buf_kb;
	unsigned int nbuf;
	int buf_given; /* -b or -n given */
	const char *output; /* -o */
	const char *outdir; /* -D */
	const char *debugfs; /* -r */
	unsigned int stopwatch;
	int kill;
	int listen;
	const char *host;
	int port;
	int no_sendfile;
	enum backend backend;
	const char *iowait; /* --iowait[=SOURCE]: NULL (off), "auto", "module", "kprobe", "sched" */
	int iowait_all; /* --iowait-all */
	unsigned int iowait_maxactive; /* --iowait-maxactive */
	int origin; /* --origin: each I/O's cgroup, dirtier and file */
};

/*
 * Counters of one output stream (written by the one thread that reads it). After a failed
 * file output, events and bytes are what its file holds, and unwritten the events read
 * from the kernel that are not in it.
 */
struct bt_count {
	uint64_t events, bytes;
	uint64_t unwritten;
	int failed; /* the output failed: unwritten counts, blk_output_error() says why */
	int named; /* the device name note is written (block devices' streams) */
};

struct bt_run;
struct bt_src;

struct bt_reader {
	struct bt_run *run;
	struct bt_src *src;
	int k; /* CPU index it reads (0 for a one_reader backend, which reads them all) */
	int cpu;
	pthread_t th;
	int started;
	int err;
	char errmsg[512];
};

/*
 * One backend and what it writes: @nout output streams (a block backend's devices; the I/O
 * wait backend's one, NAME.iowait) of ncpus CPU indexes each, slot i * ncpus + k.
 */
struct bt_src {
	const struct blk_backend_ops *ops;
	struct blk_backend *be;
	struct blk_backend_cfg cfg;
	int nout;
	char name[MAX_DEVS][64]; /* of each output: summary, network stream name */
	char outbase[MAX_DEVS][4096]; /* of each output: files outbase.blktrace.CPU */
	struct blk_output **out;
	struct bt_count *cnt;
	int *nfd; /* network client: the connection of each slot */
	int nreaders;
	struct bt_reader *rd;
	int win_base; /* first stream of the -o - window */
};

/* -o -: the records of every stream merged in time order before they go to stdout */
struct bt_stdout {
	struct blk_output *out;
	struct blk_window *win;
	pthread_mutex_t mu;
	pthread_cond_t data, space; /* something to take / room to push */
	pthread_t th;
	int started;
	int pressure; /* a reader waits for room: take even what is not yet ordered */
	int readers_done; /* every reader has ended: take everything, then end */
	int err;
};

struct bt_run {
	struct bt_opts *o;
	struct blk_backend_dev devs[MAX_DEVS];
	int ndevs;
	int cpus[MAX_CPUS];
	int ncpus;
	struct bt_src src[MAX_SRCS];
	int nsrc;
	struct bt_stdout so;
	int to_stdout;
	int net; /* network client (-h) */
	char spool_dir[4200]; /* per-CPU files: their directory (for the tracefs backend's pages) */
	int draining; /* stop requested: read what is left, then end (atomic) */
	int reader_failed; /* a reader ended with an error (atomic) */
	volatile sig_atomic_t *stop; /* set by the signal handler */
};

/*
 * trace_run() - trace @r's devices until a signal, the stopwatch or the end of a device's
 * tracing, then drain, print the summary and put everything back
 * Return: 1 if something failed (reported on stderr), else 0.
 */
int trace_run(struct bt_run *r);

/* Free what trace_run() allocated (outputs, window); @r itself stays the caller's. */
void trace_run_release(struct bt_run *r);

#endif /* BLKTRACE_RUN_H */
