// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a fuzz input is a trace byte stream (plain or gzip) fed through the
 * library the way blkparse uses it.
 *
 * Input layout: byte 0 is a control byte, the rest is trace data.
 *   bit 0     mode: 0 = pipe mode (blk_reader pass, then blk_pipesort), 1 = file mode
 *             (the data is split in two halves, merged as CPU 0 and CPU 1 with blk_merge)
 *   bits 1-2  batch size: 512 (the default), 1, 4, 32
 *   bit 3     pipe mode: small reorder window (max_pending 8) to force stalled releases
 *   bit 4     acct hash_by_name (-h)
 *   bits 5-6  acct sort key (-S): none, Q, w, c
 *   bit 7     repeat the data (each half in file mode) to at least 320 KiB, so the reader
 *             refills and compacts its 256 KiB buffer with records straddling the refill
 * The pipe-mode sorter reads from a pipe (as blkparse reading standard input), the other
 * passes from a memfd (a regular file).
 * Accounting always has track_ios (-t), per_process (-s) and verbose (-v) on. Every emitted
 * record is accounted, rendered with blk_format_default() and with a compiled format using
 * every field, into a blk_strbuf; the end-of-run summaries are printed into a strbuf too.
 * Nothing is written to stdout or stderr: the library's log hook is a no-op.
 *
 * Build and run: tests/fuzz/run-fuzz.sh (make fuzz), which compiles it with every lib
 * source and -fsanitize=fuzzer,address,undefined.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "blk/acct.h"
#include "blk/event.h"
#include "blk/format.h"
#include "blk/log.h"
#include "blk/merge.h"
#include "blk/pipesort.h"
#include "blk/reader.h"
#include "blk/strbuf.h"
#include "compat/classicmem.h"
#include "compat/parse-model.h"

#define NS_PER_SEC 1000000000ull
#define ALL_FIELDS "%a %c %C %d %D %e %m %M %n %N %p %P %s %S %t %T %U %z\n"

static struct blk_format *all_fmt;

struct run {
	struct blk_acct *acct;
	struct blk_cmem *cmem;		/* the classic tool's memory (-t's stale times) */
	struct blk_acct_hooks acct_hooks; /* that replay it (compat/parse-model.h) */
	struct blk_pipesort_hooks sort_hooks;
	int stream[2];			/* file mode: model stream of CPU 0 and 1 */
	int file_mode;
	uint64_t genesis;
	int have_ts;
	uint64_t ts_time;
	int64_t ts_sec;
	long ts_nsec;
	uint64_t sink;			/* keeps results observable */
	struct blk_strbuf line;		/* rendered lines (reset per record) */
};

static void quiet_log(const char *msg)
{
	(void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	blk_set_log_fn(quiet_log);
	all_fmt = blk_format_compile(ALL_FIELDS, err, sizeof(err));
	if (!all_fmt)
		abort();
	return 0;
}

#define REPEAT_MIN (320 * 1024)
#define PIPE_MAX (1024 * 1024)

static void write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			abort();
		p += n;
		len -= (size_t)n;
	}
}

/*
 * A descriptor at offset 0 over a private copy of @data, repeated to REPEAT_MIN bytes if
 * @repeat: the read end of a pipe holding all of it (write end closed) if @want_pipe and it
 * fits, else a memfd.
 */
static int data_fd(const uint8_t *data, size_t len, int repeat, int want_pipe)
{
	size_t reps = 1, total;
	uint8_t *buf = NULL;
	const uint8_t *src = data;
	int fd;

	if (repeat && len && len < REPEAT_MIN)
		reps = (REPEAT_MIN + len - 1) / len;
	total = len * reps;
	if (reps > 1) {
		buf = malloc(total);
		if (!buf)
			abort();
		for (size_t i = 0; i < reps; i++)
			memcpy(buf + i * len, data, len);
		src = buf;
	}
	if (want_pipe && total <= PIPE_MAX) {
		int p[2], sz;

		if (pipe2(p, O_CLOEXEC))
			abort();
		sz = fcntl(p[1], F_GETPIPE_SZ);
		if (sz >= 0 && (size_t)sz < total)
			sz = fcntl(p[1], F_SETPIPE_SZ, (int)total);
		/* all of it must fit, or the write would wait for a reader that never comes */
		if (sz >= 0 && (size_t)sz >= total) {
			write_all(p[1], src, total);
			close(p[1]);
			free(buf);
			return p[0];
		}
		close(p[0]);
		close(p[1]);
	}
	fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	write_all(fd, src, total);
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	free(buf);
	return fd;
}

static struct blk_reader *data_reader(const uint8_t *data, size_t len, const char *name,
				      int repeat, int want_pipe)
{
	int fd = data_fd(data, len, repeat, want_pipe);
	struct blk_reader *r = blk_reader_fdopen(fd, name);

	if (!r)
		abort();
	return r;
}

/* The note callback, as blkparse's on_record(): notify records are consumed here. */
static int on_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
		     const struct blk_event *ev)
{
	struct run *r = arg;
	struct blk_acct_dev *d = owner;
	int stream = r->file_mode && cpu >= 0 && cpu < 2 ? r->stream[cpu] : -1;
	uint32_t a;

	if (what == BLK_NOTE_END) {
		blk_cmem_eof(r->cmem, stream);
		return 0;
	}
	if (what == BLK_NOTE_BAD_CPU) {
		blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_BAD_CPU);
		r->sink += ev->cpu;
		return 0;
	}
	a = blk_event_action32(ev);
	if (!r->file_mode)
		d = blk_acct_dev(r->acct, ev->device, NULL);
	else if (d && !blk_acct_dev_devno(d) && !blk_event_is_notify(ev))
		blk_acct_dev_set_devno(d, ev->device);
	if (!d)
		return -ENOMEM;
	if (!blk_event_is_notify(ev) || a == BLK_TN_ACTION(BLK_TN_MESSAGE)) {
		if (r->file_mode)
			blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_QUEUED);
		return 0;
	}
	blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_NOTE);
	switch (a) {
	case BLK_TN_ACTION(BLK_TN_PROCESS):
		blk_acct_set_comm(r->acct, ev->pid, (const char *)ev->pdu, ev->pdu_len);
		r->sink += blk_acct_comm(r->acct, ev->pid) != NULL;
		break;
	case BLK_TN_ACTION(BLK_TN_TIMESTAMP):
		if (ev->pdu_len == 8) {
			uint32_t w[2];

			memcpy(w, ev->pdu, 8);
			r->have_ts = 1;
			r->ts_time = ev->time;
			r->ts_sec = w[0];
			r->ts_nsec = (long)w[1];
		}
		break;
	default:
		break;
	}
	blk_cmem_note_done(r->cmem);
	return 1;
}

static void fill_wall(struct run *r, struct blk_fmt_ctx *c)
{
	int64_t delta;

	c->have_wall = r->have_ts;
	if (!r->have_ts)
		return;
	delta = (int64_t)(r->genesis - r->ts_time);
	c->wall_sec = r->ts_sec + delta / (int64_t)NS_PER_SEC;
	c->wall_nsec = r->ts_nsec + (long)(delta % (int64_t)NS_PER_SEC);
	if (c->wall_nsec < 0) {
		c->wall_nsec += (long)NS_PER_SEC;
		c->wall_sec--;
	} else if (c->wall_nsec >= (long)NS_PER_SEC) {
		c->wall_nsec -= (long)NS_PER_SEC;
		c->wall_sec++;
	}
}

/* A message line, as blkparse's print_message(). */
static void render_message(struct run *r, const struct blk_event *ev, int cgroup)
{
	const unsigned char *p = ev->pdu;
	size_t len = ev->pdu_len;

	blk_strbuf_addf(&r->line, "%3d,%-3d %2d %8s %5d.%09lu %5u ", BLK_MAJOR(ev->device),
			BLK_MINOR(ev->device), (int)ev->cpu, "0",
			(int)(uint32_t)(ev->time / NS_PER_SEC), (unsigned long)(ev->time % NS_PER_SEC),
			cgroup ? ev->pid : 0);
	if (cgroup && len >= 8) {
		uint32_t id[2];

		memcpy(id, p, 8);
		blk_strbuf_addf(&r->line, "%x,%x ", id[0], id[1]);
		p += 8;
		len -= 8;
	}
	blk_strbuf_addf(&r->line, "%2s %3s ", "m", "N");
	blk_strbuf_add(&r->line, p, strnlen((const char *)p, len));
	blk_strbuf_addch(&r->line, '\n');
}

/* Account and render one emitted record (blkparse's dump_trace()/print_event()). */
static void emit(struct run *r, struct blk_acct_dev *d, int cpu, struct blk_event *ev)
{
	uint32_t a = blk_event_action32(ev);
	struct blk_fmt_ctx c = { 0 };
	int ret;

	blk_strbuf_reset(&r->line);
	if (a == BLK_TN_ACTION(BLK_TN_MESSAGE)) {
		render_message(r, ev, 0);
	} else if (blk_event_is_notify(ev) && (a & BLK_TA_CGROUP)) {
		render_message(r, ev, 1);
	} else {
		fill_wall(r, &c);
		ret = blk_acct_event(r->acct, d, cpu, ev, &c);
		if (ret > 0) {
			struct blk_event shown = *ev;

			if (c.act[0] == 'A') {
				struct blk_io_trace_remap rm;

				if (!blk_event_remap(&shown, &rm))
					shown.device = rm.device_to;
			}
			blk_format_default(&shown, &c, &r->line);
			if (blk_format_render(all_fmt, &shown, &c, &r->line))
				abort();	/* the format has no %u */
		}
	}
	blk_acct_count(d, ev->time);
	r->sink += r->line.len;
}

static void finish(struct run *r)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	uint32_t first;

	blk_acct_print_procs(r->acct, &sb);
	blk_acct_print_devs(r->acct, &sb);
	r->sink += sb.len + blk_acct_bad_actions(r->acct, &first);
	blk_strbuf_release(&sb);
}

/* Pass 1: every record with a bare reader, until end of input or damage. */
static void reader_pass(const uint8_t *data, size_t len, struct run *r, int repeat)
{
	struct blk_reader *rd = data_reader(data, len, "fuzz", repeat, 0);
	struct blk_event ev;
	char rwbs[BLK_RWBS_LEN];
	int ret;

	while ((ret = blk_reader_next(rd, &ev)) > 0) {
		struct blk_io_trace_remap rm;
		unsigned char *enc = malloc(64 + (size_t)ev.pdu_len);

		if (!enc)
			abort();
		r->sink += (uint64_t)blk_event_rwbs(&ev, rwbs) + blk_event_pdu_u64(&ev);
		if (!blk_event_remap(&ev, &rm))
			r->sink += rm.sector_from;
		r->sink += blk_event_encode(&ev, enc);
		free(enc);
		r->sink += blk_reader_ready(rd);
	}
	r->sink += (uint64_t)ret + strlen(blk_reader_error(rd)) + blk_reader_offset(rd) +
		   blk_reader_records(rd) + (uint64_t)blk_reader_swapped(rd) +
		   (uint64_t)blk_reader_compressed(rd) + strlen(blk_reader_name(rd));
	blk_reader_close(rd);
}

static void count_skip(void *arg, uint32_t dev, int cpu, uint64_t first, uint64_t last)
{
	struct run *r = arg;

	r->sink += dev + (uint64_t)cpu + first + last;
}

/* Pass 2: the pipe-mode sorter (blkparse's run_pipe_mode()). */
static void pipe_mode(const uint8_t *data, size_t len, struct run *r, unsigned int batch,
		      unsigned int max_pending, int repeat)
{
	struct blk_pipesort_opts po = { 0 };
	struct blk_pipesort *ps;
	struct blk_event ev;
	int ret;

	po.batch = batch;
	po.max_pending = max_pending;
	po.stop_end = UINT64_MAX;
	po.fn = on_record;
	po.arg = r;
	po.hooks = &r->sort_hooks;
	ps = blk_pipesort_new(data_reader(data, len, "fuzz-pipe", repeat, 1), &po);
	if (!ps)
		abort();
	for (;;) {
		struct blk_acct_dev *d;

		r->sink += blk_pipesort_needs_input(ps);
		ret = blk_pipesort_next(ps, &ev);
		if (ret <= 0)
			break;
		d = blk_acct_dev(r->acct, ev.device, NULL);
		if (!d)
			abort();
		blk_acct_seen(d, (int)ev.cpu);
		blk_acct_last_time(d, ev.time);
		emit(r, d, (int)ev.cpu, &ev);
	}
	if (ret < 0)
		abort();	/* the callback never fails but on ENOMEM */
	for (unsigned int i = 0; i < blk_acct_ndevs(r->acct); i++) {
		struct blk_acct_dev *d = blk_acct_dev_at(r->acct, i);
		uint64_t ranges, missing;

		blk_pipesort_skips(ps, blk_acct_dev_devno(d), &ranges, &missing);
		blk_acct_set_skips(d, ranges, missing);
		blk_pipesort_each_skip(ps, blk_acct_dev_devno(d), count_skip, r);
		r->sink += blk_acct_dev_events(d);
	}
	r->sink += blk_pipesort_forced(ps);
	if (blk_pipesort_error(ps))
		r->sink += strlen(blk_pipesort_error(ps));
	blk_pipesort_free(ps);
}

/* File mode: two halves as the per-CPU files of one device (blkparse's run_file_mode()). */
static void file_mode(const uint8_t *data, size_t len, struct run *r, unsigned int batch,
		      int repeat)
{
	struct blk_merge *m = blk_merge_new(batch, on_record, r);
	struct blk_acct_dev *d;
	struct blk_event ev;
	size_t half = len / 2;
	void *owner;
	int cpu, ret;

	if (!m)
		abort();
	r->file_mode = 1;
	d = blk_acct_dev(r->acct, 0, "fuzz");
	if (!d)
		abort();
	r->stream[0] = blk_cmem_file(r->cmem, 0, 0, "fuzz.blktrace.0",
				     half ? BLK_CMEM_OPENED : BLK_CMEM_EMPTY);
	if (half && blk_merge_add(m, data_reader(data, half, "fuzz.blktrace.0", repeat, 0), d, 0))
		abort();
	r->stream[1] = blk_cmem_file(r->cmem, 0, 1, "fuzz.blktrace.1",
				     len - half ? BLK_CMEM_OPENED : BLK_CMEM_EMPTY);
	if (len - half && blk_merge_add(m, data_reader(data + half, len - half, "fuzz.blktrace.1",
						      repeat, 0), d, 1))
		abort();
	blk_cmem_file(r->cmem, 0, 2, "fuzz.blktrace.2", BLK_CMEM_MISSING);
	if (!blk_merge_peek_time(m, &r->genesis))
		r->genesis = 0;
	while ((ret = blk_merge_next(m, &ev, &owner, &cpu)) > 0) {
		struct blk_acct_dev *od = owner;

		blk_acct_seen(od, cpu);
		ev.time -= r->genesis;
		blk_cmem_handle(r->cmem, r->stream[cpu & 1], ev.time);
		blk_acct_last_time(od, ev.time);
		emit(r, od, cpu, &ev);
		blk_cmem_retire(r->cmem, r->stream[cpu & 1], ev.time, ev.device,
				(uint32_t)ev.sequence);
	}
	if (ret < 0)
		abort();
	for (unsigned int i = 0; i < blk_merge_nerrors(m); i++)
		r->sink += strlen(blk_merge_error(m, i));
	blk_merge_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int batches[4] = { 512, 1, 4, 32 };
	static const char sort_keys[4] = { 0, 'Q', 'w', 'c' };
	struct blk_acct_opts ao = { 0 };
	struct run r = { 0 };
	uint8_t ctl;

	if (size < 1)
		return 0;
	if (!all_fmt)
		LLVMFuzzerInitialize(NULL, NULL);
	ctl = data[0];
	data++;
	size--;

	ao.per_process = 1;
	ao.track_ios = 1;
	ao.verbose = 1;
	ao.hash_by_name = (ctl >> 4) & 1;
	ao.sort_key = sort_keys[(ctl >> 5) & 3];
	r.acct = blk_acct_new(&ao);
	if (!r.acct)
		abort();
	{
		/* the classic tool's memory, as blkparse -t models it (classicmem.h) */
		struct blk_cmem_arg arg = { (ctl & 1) ? 'i' : 'p', (ctl & 1) ? "fuzz" : "-" };
		struct blk_cmem_opts co = { 0 };

		co.args = &arg;
		co.nargs = 1;
		co.batch = batches[(ctl >> 1) & 3];
		co.stdout_bufsize = 4096;
		r.cmem = blk_cmem_new(&co);
		if (!r.cmem)
			abort();
		parse_model_acct_hooks(r.cmem, &r.acct_hooks);
		parse_model_pipesort_hooks(r.cmem, &r.sort_hooks);
		blk_acct_set_hooks(r.acct, &r.acct_hooks);
	}

	if (ctl & 1) {
		file_mode(data, size, &r, batches[(ctl >> 1) & 3], ctl >> 7);
	} else {
		reader_pass(data, size, &r, ctl >> 7);
		pipe_mode(data, size, &r, batches[(ctl >> 1) & 3], (ctl & 8) ? 8 : 0, ctl >> 7);
	}
	finish(&r);

	blk_strbuf_release(&r.line);
	blk_acct_free(r.acct);
	blk_cmem_free(r.cmem);
	/* observable, so no pass is optimised away */
	__asm__ volatile("" : : "r"(r.sink));
	return 0;
}
