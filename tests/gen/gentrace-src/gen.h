/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gentrace's modules (tests/gen/gentrace.c is the program: options and main):
 *   world.c    the processes that do I/O and the passthrough commands they send
 *   records.c  the output: per-CPU files or --pipe's stream, one record at a time on the
 *              global clock (emit), with the process notes each stream needs
 *   model.c    the requests in flight: their heap, and each one's life after issue
 *              (completion, requeue, the flush sequence)
 *   submit.c   the submission paths of each kind of process, and the run
 *   die.c      the fatal message
 * They call each other in that order only (submit -> model -> records -> world, die).
 */
#ifndef GENTRACE_GEN_H
#define GENTRACE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/output.h"
#include "blk/trace.h"
#include "rnd.h"

#define QDEPTH 32		/* requests in flight per device */
#define NSEC 1000000000ull
#define PART_START 2048		/* first sector of partition 1 on every disk */

#define TC(c) ((uint64_t)BLK_TC_ACT(BLK_TC_##c))

struct gen_opts {
	uint64_t events;
	uint64_t seed;
	unsigned int cpus;
	unsigned int devices;
	const char *name;
	const char *dir;
	int big_endian;
	int v2;
	int pipe;
};

/* ---- the world: world.c ---- */

enum gen_kind {
	GK_RANDREAD,
	GK_RANDWRITE,
	GK_DB,
	GK_WRITEBACK,
	GK_READAHEAD,
	GK_JOURNAL,
	GK_META,
	GK_PC,
	GK_DISCARD,
};

struct gen_proc {
	uint32_t pid;
	const char *comm;
	enum gen_kind kind;
	unsigned int weight;
	int part;		/* goes through partition 1, so every bio is remapped (A) */
};

#define NPROC 9				/* entries of procs[] */
#define PROC_IDLE NPROC			/* swapper/N, pid 0: completions in interrupts */
#define PROC_KBLOCKD (NPROC + 1)	/* kworker/N:1H: asynchronous dispatch */

extern const struct gen_proc procs[NPROC];

/* A passthrough command (old kernels attach the CDB to every PC record). */
struct gen_cdb {
	unsigned char len;
	uint32_t bytes;
	unsigned char cdb[16];
};

#define NCDB 5				/* entries of cdbs[]; the first is none */

extern const struct gen_cdb cdbs[NCDB];

/* The pid of @proc (an index of procs[], PROC_IDLE or PROC_KBLOCKD) on @cpu. */
uint32_t proc_pid(unsigned int proc, unsigned int cpu);

/* Its command name, NUL-padded to 16 bytes, as the kernel's process notes hold it. */
void proc_comm(unsigned int proc, unsigned int cpu, char comm[16]);

/* ---- the generator's state ---- */

/* What happens to a request next. */
enum gen_step {
	ST_COMPLETE,
	ST_REQUEUE,
	ST_INSERT,
	ST_ISSUE,
	ST_FL_PRE_ISSUE,	/* preflush: D FN */
	ST_FL_PRE_DONE,		/* C FN */
	ST_FL_DATA_ISSUE,	/* the data, without F bits */
	ST_FL_DATA_DONE,
	ST_FL_POST_ISSUE,	/* postflush for FUA emulation */
	ST_FL_POST_DONE,
	ST_FL_END,		/* the original request completes with 0 bytes */
};

struct gen_req {
	uint64_t time;		/* of the next step */
	uint64_t order;		/* tie-break: heap order is total */
	uint64_t sector;
	uint64_t cats;		/* category bits of the request, without FS/PC */
	uint32_t bytes;
	uint16_t dev;
	uint16_t cpu;		/* CPU of the next step */
	uint16_t owner_cpu;
	uint16_t error;
	uint8_t proc;		/* process of the next step */
	uint8_t owner;		/* submitting process */
	uint8_t step;
	uint8_t cdb;		/* PC request: index into cdbs[], else 0 */
};

struct gen_dev {
	uint32_t dev;
	uint32_t part;
	uint64_t cursor[NPROC];	/* next sector of each sequential stream */
	unsigned int inflight;
};

struct gen_stream {
	struct blk_output *out;		/* per-CPU file, or NULL with --pipe */
	unsigned char *chunk;		/* --pipe: pending bytes of this CPU */
	size_t chunk_len;
	uint32_t seq;
	uint32_t seen;			/* processes that already have a TN_PROCESS here */
};

struct gen {
	const struct gen_opts *o;
	struct rnd r;
	struct gen_dev *devs;
	struct gen_stream *streams;	/* [dev * cpus + cpu] */
	struct gen_req *heap;
	size_t nheap;
	uint64_t order;
	uint64_t clock;			/* time of the last record */
	uint64_t next;			/* requested time of the next submission */
	uint64_t written;
	struct blk_output *pipe_out;
	uint16_t proc_cpu[NPROC];
	int swap;
	int done;
};

/* Who is doing something, where, and when it may happen next. */
struct gen_ctx {
	unsigned int dev;
	unsigned int cpu;
	unsigned int proc;
	uint64_t t;
};

/* Categories of a request record: file-system or passthrough. */
static inline uint64_t rq_cats(const struct gen_req *rq)
{
	return rq->cats | (rq->cdb ? TC(PC) : TC(FS));
}

/* ---- records.c ---- */

/* Open the per-CPU files of every device (or the --pipe stream); dies on failure. */
void streams_open(struct gen *g);

/* Finish and free them; 0, or -1 after printing what failed. */
int streams_close(struct gen *g);

/* --pipe: one read round of `blktrace -o -`: every CPU buffer, in device and CPU order. */
void rec_pipe_round(struct gen *g);

/* A short pause between two records of the same code path. */
uint64_t rec_gap(struct gen *g);

/* Write one I/O record now (c->t) and move c->t a little past it. */
void rec_io(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
	    uint32_t bytes, uint16_t error, const void *pdu, unsigned int pdu_len);

/* The same with an 8-byte big-endian payload @val (unplug counts, split points). */
void rec_io_u64(struct gen *g, struct gen_ctx *c, unsigned int code, uint64_t cats, uint64_t sector,
		uint32_t bytes, uint64_t val);

/* Write one notify record (BLK_TN_@code) now and move c->t a little past it. */
void rec_note(struct gen *g, struct gen_ctx *c, unsigned int code, const void *pdu,
	      unsigned int pdu_len);

/* A record of request @rq: with its CDB as payload when it is a passthrough request. */
void rec_rq(struct gen *g, struct gen_ctx *c, unsigned int code, const struct gen_req *rq,
	    uint64_t cats, uint64_t sector, uint32_t bytes, uint16_t error);

/* ---- model.c ---- */

/* The request was just issued at @t: schedule its completion (or, rarely, a requeue). */
void model_after_issue(struct gen *g, struct gen_req *rq, uint64_t t, enum gen_step done);

/* Schedule @step of @rq a little after @t, on kblockd of its submitting CPU. */
void model_then(struct gen *g, struct gen_req *rq, enum gen_step step, uint64_t t);

/* Let every request step that is due by @t happen first, so that time only moves forward. */
void model_drain(struct gen *g, uint64_t t);

/* Wait (in simulated time) until @need more requests fit on the device of @c. */
void model_make_room(struct gen *g, struct gen_ctx *c, unsigned int need);

/* ---- submit.c ---- */

/* Write the trace: the start notes, then submissions until -n records are written. */
void gen_run(struct gen *g);

/* ---- die.c ---- */

/* Print "gentrace: " and the message to stderr, exit 1. */
__attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...);

#endif /* GENTRACE_GEN_H */
