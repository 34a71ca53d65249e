/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the I/O wait backend: its state, shared by iowait.c (the backend: reading,
 * merging, delivering) and iowait-src.c (the sources: choosing one, setting up its events,
 * decoding them; blktrace -k). iowait.c calls iowait-src.c, never the other way round.
 */
#ifndef BLK_KERNEL_IOWAIT_INT_H
#define BLK_KERNEL_IOWAIT_INT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "blk/backend.h"
#include "ftrace.h"
#include "blk/iowait.h"
#include "blk/waitjoin.h"
#include "blk/wakefilter.h"

#define INST_PREFIX "blktrace-iowait-"
#define KPROBE_PREFIX "blktrace_iowait_"
#define MODULE_PARAMS "/sys/module/blk_iowait/parameters"
#define IW_BUF_KB "4096"
/* the reader is woken when a CPU's buffer is this full (percent), else every wait_ms */
#define IW_WATERMARK "25"
#define IW_WATERMARK_PAGES 256 /* 25% of IW_BUF_KB in 4 KiB pages */
#define MAX_MAP 12
#define MAX_PROBES 6
#define TGID_CACHE 1024

/* What a raw event is, and where its fields are. */
struct evmap {
	int id;
	enum blk_wj_kind kind;
	enum blk_iowait_func func;
	int check_state; /* sched_switch without the kernel filter: check prev_state here */
	struct blk_ftrace_format fmt;
	const struct blk_ftrace_field *pid, *comm, *state, *target, *dev, *sector, *nr, *type,
		*tgid, *dur, *waker, *sleep, *fn;
};

/* Decoded events of one CPU not yet merged (a ring of a power of 2, grown as needed). */
struct fifo {
	struct blk_wj_event *v;
	size_t head, n, cap;
};

struct iw_cpu {
	int fd;
	uint64_t drained; /* CLOCK_MONOTONIC before the last read that found nothing more */
	struct fifo q;
	uint64_t base_lost;
	unsigned char *stage; /* encoded notes for this CPU's stream */
	size_t len, cap;
	unsigned long nrec;
};

struct iw_backend {
	struct blk_backend base;
	const struct blk_backend_cfg *cfg;
	char tfs[4096];
	enum blk_iowait_source src;
	char why[2048];
	char note[512];
	struct blk_ftrace_inst *inst;
	char probes[MAX_PROBES][96]; /* GROUP/EVENT of the kprobe events we added */
	struct tracefs_dynevent *probe_ev[MAX_PROBES]; /* and each as libtracefs has it */
	int nprobes;
	unsigned int maxactive;
	struct evmap map[MAX_MAP];
	int nmap;
	int dev_filtered; /* the block events are filtered on the devices by the kernel */
	struct blk_ftrace_pages *pages; /* read by the one reader thread */
	unsigned char *page;
	size_t page_size;
	struct blk_wj *wj;
	struct iw_cpu *cpu;
	long long missed_base, missed_seen;
	uint64_t pages_bad, pages_lost;
	int started, stopped, said_missed;
	int watermark; /* the instance takes buffer_percent: poll() the buffers */
	int early_wakes; /* poll() returned with far less than the watermark, in a row */
	struct blk_wf *wf; /* sched: the waking filter (wakefilter.h), or NULL */
	char waking[32]; /* the waking event enabled (sched/sched_waking or sched_wakeup) */
	int wf_dirty; /* the filter must be written again now */
	struct pollfd *pfd;
	struct {
		int32_t tid, tgid;
	} tgids[TGID_CACHE];
};

/* Pick the source for b->cfg, b->why saying which and why not the better ones; for the
 * kprobe source its probes are defined. Return 0 or -errno (reason in @why). */
int iw_choose(struct iw_backend *b, char *why, size_t len);

/* Enable the chosen source's events in b->inst and map them. Return 0 or -errno. */
int iw_setup_events(struct iw_backend *b, char *err, size_t len);

/* Remove the kprobe events defined (once no instance has them enabled). */
void iw_remove_probes(struct iw_backend *b);

/* Waits the source's probes missed so far (module, kprobe), 0 (sched), or -1. */
long long iw_missed_now(const struct iw_backend *b);

/* Decode one raw event of CPU index @k into its fifo (blk_ftrace_rec_fn; arg: iw_walk). */
struct iw_walk {
	struct iw_backend *b;
	int k;
};
int iw_on_raw(void *arg, const struct blk_ftrace_rec *r);

#endif /* BLK_KERNEL_IOWAIT_INT_H */
