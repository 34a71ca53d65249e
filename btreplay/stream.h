/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replay of one replay file (a stream): the scan that validates and counts it before the
 * replay, and the thread that re-issues its bunches onto the target with libaio, keeping the
 * recorded time between bunches (or as fast as possible).
 */
#ifndef BTREPLAY_STREAM_H
#define BTREPLAY_STREAM_H

#include <libaio.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "replay-file.h"
#include "target.h"

/* What every replay thread shares: the settings, and the start of the current iteration. */
struct rp_shared {
	int write_enable; /* issue recorded writes as writes (else as reads) */
	int no_stalls; /* issue bunches as fast as possible, ignoring time */
	unsigned long acc; /* divide the recorded time between bunches by this */
	unsigned long iterations;
	size_t nstreams; /* replay files in all (named in a hint) */
	const volatile sig_atomic_t *stop; /* set to stop every thread */
	uint64_t genesis; /* the earliest bunch time stamp of all streams */
	pthread_barrier_t ready, go; /* each iteration: the threads are ready, t0 is set */
	struct timespec t0; /* start of the current iteration (CLOCK_MONOTONIC) */
};

/* What one replay file holds, from the scan before the replay. */
struct rp_scan {
	uint64_t bunches, pkts, reads, writes, flushes, big, bytes;
	uint64_t first_ts, last_ts, max_bytes;
};

/* One replay file: one thread, one aio context. */
struct rp_stream {
	struct rp_shared *sh;
	const struct rf_input *in;
	struct rp_target *tgt;
	int cpu; /* CPU the thread is pinned to */
	FILE *f;
	FILE *rep; /* -vv log */
	struct rp_scan scan;
	pthread_t th;
	int started;
	io_context_t ctx;
	struct iocb *iocbs;
	struct iocb **free;
	struct iocb **batch;
	struct io_event *events;
	int nfree, nbatch;
	void *rbuf, *wbuf;
	/* counted by the thread, read by main after join */
	uint64_t ios, reads, writes, as_reads, flushes, skipped, bytes;
	uint64_t errors, short_ios, late_max_ns;
	int failed;
	char errmsg[600];
};

/*
 * The setup steps below print what went wrong (naming the file, with a hint) and return -1;
 * they return 0 on success.
 */

/* Open s->in->path and check its file header. */
int stream_open(struct rp_stream *s);

/* Read the bunches once: check each I/O against s->tgt and fill in s->scan. */
int stream_scan(struct rp_stream *s);

/* The aio context and the I/O buffers of a stream with I/O to replay (after the scan). */
int stream_setup_aio(struct rp_stream *s);

/*
 * The replay thread of stream @arg: each iteration, wait at s->sh->ready and s->sh->go, then
 * replay. A failure is kept in s->failed and s->errmsg.
 */
void *stream_thread(void *arg);

/* Free what the stream holds; @s may be half set up. */
void stream_release(struct rp_stream *s);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t rp_now_ns(void);

#endif /* BTREPLAY_STREAM_H */
