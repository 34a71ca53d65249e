/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The accounting's state (lib/acct.c keeps it, lib/acct-print.c prints its summaries):
 * private to the two, not installed, not for other modules.
 */
#ifndef BLK_ACCT_INT_H
#define BLK_ACCT_INT_H

#include <stdint.h>

#include "blk/acct.h"

struct io_stats {
	uint64_t qreads, qwrites, creads, cwrites, mreads, mwrites;
	uint64_t ireads, iwrites, rrqueue, wrqueue;
	uint64_t qread_kb, qwrite_kb, cread_kb, cwrite_kb;
	uint64_t iread_kb, iwrite_kb, mread_kb, mwrite_kb;
	uint64_t qread_b, qwrite_b, cread_b, cwrite_b;
	uint64_t iread_b, iwrite_b, mread_b, mwrite_b;
	uint64_t qreads_pc, qwrites_pc, ireads_pc, iwrites_pc;
	uint64_t rrqueue_pc, wrqueue_pc, creads_pc, cwrites_pc;
	uint64_t qread_kb_pc, qwrite_kb_pc, iread_kb_pc, iwrite_kb_pc;
	uint64_t qread_b_pc, qwrite_b_pc, iread_b_pc, iwrite_b_pc;
	uint64_t io_unplugs, timer_unplugs;
};

#define CPU_CHUNK 64

struct acct_cpu {
	struct io_stats ios;
	uint64_t nelems;
};

/* A request followed for -t, keyed by its current start sector. */
struct track {
	uint64_t sector;
	uint32_t pid; /* whose name the request carries */
	uint64_t allocation_time, queue_time, dispatch_time;
	uint64_t tag; /* the observer's (blk_acct_hooks.track_new), 0 if none */
	struct track *next;
};

struct blk_acct_dev {
	uint32_t devno;
	char *name; /* -i name, or NULL in pipe mode */
	struct acct_cpu **cpus; /* sparse: chunks of CPU_CHUNK CPUs */
	unsigned int nchunks;
	int last_cpu; /* the CPU last looked up (-1: none), and its counters */
	struct acct_cpu *last_pc;
	uint64_t events;
	uint64_t first_time, last_time;
	uint64_t cur_depth[2], max_depth[2];
	uint64_t skips, seq_skips;
	struct track **tracks; /* hash by sector */
	size_t ntrack_buckets, ntracks;
};

struct comm_ent {
	uint32_t pid;
	char comm[16];
};

/* Names are kept in blocks and never move: blk_acct_comm()'s pointers stay valid. */
#define COMM_BLOCK 256
struct comm_block {
	struct comm_block *next;
	struct comm_ent e[COMM_BLOCK];
};

struct proc {
	uint32_t pid; /* the first pid seen */
	char comm[16];
	int more_than_one;
	struct io_stats ios;
	uint64_t longest_allocation_wait[2];
	uint64_t longest_dispatch_wait[2];
	uint64_t longest_completion_wait[2];
};

struct blk_acct {
	struct blk_acct_opts o;
	struct blk_acct_hooks hooks; /* the observer (all NULL: none) */
	struct blk_acct_dev **devs;
	unsigned int ndevs;
	struct comm_ent **comms; /* NULL: a free slot */
	size_t ncomm, comm_cap; /* open addressing, power-of-two capacity */
	struct comm_block *comm_blocks; /* the newest first, holding ncomm % COMM_BLOCK */
	struct proc **procs; /* insertion order */
	size_t nprocs, procs_cap;
	size_t *proc_idx; /* open addressing over procs (by pid or by name) */
	size_t proc_idx_cap;
	uint64_t bad_actions;
	uint32_t first_bad;
};

/* the counters of @cpu on @d, NULL when it has none */
static inline struct acct_cpu *cpu_at(const struct blk_acct_dev *d, unsigned int cpu)
{
	unsigned int c = cpu / CPU_CHUNK;

	if (c >= d->nchunks || !d->cpus[c])
		return NULL;
	return &d->cpus[c][cpu % CPU_CHUNK];
}

#endif /* BLK_ACCT_INT_H */
