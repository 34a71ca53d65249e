/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse's run state (parse-run.c), shared with the printing of its records
 * (parse-print.c) only.
 */
#ifndef BLKPARSE_RUN_INT_H
#define BLKPARSE_RUN_INT_H

#include <stdint.h>

#include "blk/acct.h"
#include "blk/event.h"
#include "blk/pipesort.h"
#include "blk/format.h"
#include "blk/strbuf.h"
#include "blk/trace.h"
#include "blk/wallclock.h"
#include "parse-run.h"

#define NS_PER_SEC 1000000000ull

/* A per-CPU input file (file mode): its device, and its stream in the memory model. */
struct file_in {
	struct blk_acct_dev *d;
	int stream;
	int devno_known; /* d's device number is set (it is learned from a first record) */
};

/* Run state shared by the callbacks. */
struct parse_run {
	struct parse_opts *o;
	const struct parse_env *env;
	struct blk_acct *acct;
	struct blk_cmem *cmem; /* -t: the classic tool's memory (compat/), or NULL */
	struct blk_acct_hooks acct_hooks; /* that replay it */
	struct blk_pipesort_hooks sort_hooks;
	struct file_in **fins;
	int nfins;
	struct blk_output *text; /* NULL when no text is produced */
	struct blk_printq *q; /* renders the text on a second thread, or NULL */
	struct blk_strbuf line; /* a message line for the queue */
	struct blk_output *dump;
	struct blk_merge *raw_merge; /* the file merge in raw mode, or NULL */
	struct blk_strbuf stdout_later; /* what the classic tool prints through stdio's stdout */
	int stdout_now; /* stdout is a terminal: print it at once */
	int file_mode;
	uint64_t genesis;
	uint64_t rebase; /* subtracted from the input time of the event being printed */
	struct blk_wallclock *clock; /* for %z */
	int wall_valid; /* wall (below) is that of clock's generation wall_gen and rebase */
	unsigned int wall_gen;
	uint64_t wall_rebase;
	enum blk_wall_kind wall_kind;
	struct blk_fmt_ctx wall; /* only its wall-clock fields are used */
	uint64_t hidden_cgroup; /* cgroup-tagged notes the classic tool hides */
	struct blk_cgmap *cg; /* the tracer's cgroup notes (blk/cgroup.h), NULL before one */
	struct parse_origin *po; /* its origin notes (parse-origin.h), NULL before one */
	char **ahead; /* the regular files read, for their file names at the first origin note */
	size_t nahead;
	const void *input; /* file mode: the input of the event being printed */
	struct parse_waits *waits; /* I/O wait notes (parse-iowait.h), NULL if not used */
	int waits_live; /* waits may be held: side files, or a note taken (else emit is a no-op) */
	uint64_t bad_cpu;
	int have_drv_data;
	int failed;
};

/* a cgroup note of blktrace --origin (the classic tool prints it with --cgroup-msgs) */
static inline int parse_is_cgroup_note(const struct blk_event *ev)
{
	return blk_event_is_notify(ev) && (blk_event_action32(ev) & BLK_TA_CGROUP);
}

/* @ev into the dump (-d), if any. 0, or -EIO (@r->failed set) */
int parse_write_dump(struct parse_run *r, const struct blk_event *ev);
/* The queued text is in the output (written once large); the output is ours again. */
void parse_sync_text(struct parse_run *r);
/* @ev of device @d read on @cpu: its line printed (with -t, its times), then dumped */
void parse_dump_trace(struct parse_run *r, struct blk_acct_dev *d, int cpu, struct blk_event *ev);

#endif /* BLKPARSE_RUN_INT_H */
