// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse -t's memory model wired to the run; see parse-model.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "parse-model.h"

/*
 * Mark in @fds (@n entries) the descriptors open now: from /proc/self/fd (a few entries to
 * read, not @n system calls), less the one the listing itself uses; else one fcntl() each.
 * Read with getdents64() into a buffer on the stack: opendir()'s 32 KiB buffer, allocated
 * for every run, showed in the fuzz target's profile.
 */
static void open_fds(unsigned char *fds, size_t n)
{
	int d = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[2048] __attribute__((aligned(8)));
	ssize_t got;

	memset(fds, 0, n);
	if (d < 0) {
		for (size_t fd = 0; fd < n; fd++)
			fds[fd] = fcntl((int)fd, F_GETFD) != -1;
		return;
	}
	while ((got = getdents64(d, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			char *end;
			unsigned long fd = strtoul(e->d_name, &end, 10);

			if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && !*end && fd < n &&
			    (int)fd != d)
				fds[fd] = 1;
			off += e->d_reclen;
		}
	}
	close(d);
}

/* The classic tool reads "-" and a FIFO as a pipe (parse-run.c decides the same way). */
static int reads_as_pipe(const char *in)
{
	struct stat st;

	if (!strcmp(in, "-"))
		return 1;
	return !stat(in, &st) && S_ISFIFO(st.st_mode);
}

struct blk_cmem *parse_model_new(const struct parse_opts *o, int out_fd)
{
	struct blk_cmem_opts co = {0};
	struct blk_cmem_arg *args;
	struct blk_cmem *c;
	struct stat st;
	unsigned char fds[1024];
	int piped = 0;

	if (!o->track)
		return NULL;
	args = calloc((size_t)o->nargs + 1, sizeof(*args));
	if (!args)
		die("out of memory");
	/* the classic tool reads its first pipe input as such, the others as names */
	for (int i = 0; i < o->nargs; i++) {
		args[i].opt = o->args[i].opt;
		args[i].val = o->args[i].val;
		if (args[i].opt == 'i' && !piped && reads_as_pipe(args[i].val)) {
			args[i].opt = 'p';
			piped = 1;
		}
	}
	co.args = args;
	co.nargs = o->nargs;
	co.batch = o->batch;
	co.output_file = o->output != NULL;
	co.dump = o->dump ? (strcmp(o->dump, "-") ? 1 : 2) : 0;
	co.stdout_bufsize = fstat(out_fd, &st) ? 0 : (size_t)st.st_blksize;
	co.locale_alias = "/usr/share/locale/locale.alias";
	co.fds_open = fds;
	co.nfds = sizeof(fds);
	/* our output files are open, as the classic tool's are when it opens its inputs */
	open_fds(fds, sizeof(fds));
	c = blk_cmem_new(&co);
	free(args);
	if (!c)
		die("out of memory");
	return c;
}

/* ---- the accounting: process map, per-process blocks, tracking entries ---- */

static void comm_added(void *ctx, uint32_t pid, const char *comm)
{
	blk_cmem_ppm_new(ctx, pid, comm);
}

static void proc_missed(void *ctx)
{
	blk_cmem_ppi_new(ctx);
}

static void track_new(void *ctx, struct blk_acct_track_init *t)
{
	struct blk_cmem_track m;

	/* the classic tool's entry is malloc()ed: its times are what the memory held */
	blk_cmem_track_new(ctx, &m);
	t->tag = m.addr;
	t->allocation_time = m.allocation_time;
	t->queue_time = m.queue_time;
	t->dispatch_time = m.dispatch_time;
}

static void track_freed(void *ctx, uint64_t tag, uint64_t sector, const uint64_t times[4])
{
	blk_cmem_track_free(ctx, tag, sector, times);
}

void parse_model_acct_hooks(struct blk_cmem *c, struct blk_acct_hooks *h)
{
	memset(h, 0, sizeof(*h));
	if (!c)
		return;
	h->comm_added = comm_added;
	h->proc_missed = proc_missed;
	h->track_new = track_new;
	h->track_freed = track_freed;
	h->ctx = c;
}

/* ---- the pipe-mode sorter: records, batches, sequence gaps ---- */

static uint64_t record_read(void *ctx, const struct blk_event *ev)
{
	return blk_cmem_pipe_record(ctx, ev);
}

static void input_end(void *ctx)
{
	blk_cmem_pipe_eof(ctx);
}

static void batch_read(void *ctx)
{
	blk_cmem_pipe_batch(ctx);
}

static void record_sorted(void *ctx, uint64_t tag, uint32_t device, uint32_t cpu, uint64_t time)
{
	blk_cmem_pipe_sorted(ctx, tag, device, cpu, time);
}

static void record_released(void *ctx, uint64_t tag)
{
	blk_cmem_pipe_release(ctx, tag);
}

static void cpu_check(void *ctx, uint64_t mask)
{
	blk_cmem_pipe_cpu_check(ctx, mask);
}

static uint64_t gap_recorded(void *ctx, uint64_t start, uint64_t end)
{
	return blk_cmem_skip_new(ctx, start, end);
}

static void gap_filled(void *ctx, uint64_t tag)
{
	blk_cmem_skip_free(ctx, tag);
}

void parse_model_pipesort_hooks(struct blk_cmem *c, struct blk_pipesort_hooks *h)
{
	memset(h, 0, sizeof(*h));
	if (!c)
		return;
	h->record_read = record_read;
	h->input_end = input_end;
	h->batch_read = batch_read;
	h->record_sorted = record_sorted;
	h->record_released = record_released;
	h->cpu_check = cpu_check;
	h->gap_recorded = gap_recorded;
	h->gap_filled = gap_filled;
	h->ctx = c;
}
