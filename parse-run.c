// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse's run (parse-run.h): inputs, the per-record work, the summaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "parse-iowait.h"
#include "parse-origin.h"
#include "parse-run-int.h"
#include "compat/classicmem.h"
#include "compat/parse-model.h"
#include "blk/acct.h"
#include "blk/cgroup.h"
#include "blk/format.h"
#include "blk/iowait.h"
#include "blk/merge.h"
#include "blk/output.h"
#include "blk/pipesort.h"
#include "blk/printq.h"
#include "blk/reader.h"
#include "blk/wallclock.h"

/*
 * -t: the model of the classic tool's heap holds as much memory as that heap (about 0.4 MiB
 * on large-perf); the inputs' buffers are halved to keep the peak near the reference's, the
 * model's work, not the reads, deciding the time (large-perf, medians of 15 interleaved
 * rounds: 2.9 MiB against 3.0 with the default buffers, the reference 2.0; the same time).
 */
#define MODEL_READ_SIZE (64 * 1024)

static int interrupted(const struct parse_run *r)
{
	return r->env->interrupts ? r->env->interrupts(r->env->ctx) : 0;
}

/* Text the classic tool prints through stdio's stdout (flushed at exit when not a tty). */
static void say(struct parse_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct parse_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r->stdout_now) {
		vfprintf(r->o->dump && !strcmp(r->o->dump, "-") ? stderr : r->env->out, fmt, ap);
		fflush(r->env->out);
	} else {
		blk_strbuf_vaddf(&r->stdout_later, fmt, ap);
	}
	va_end(ap);
}

/* the run's origin notes, made at the first one */
/* @path, a regular file read: its file names are read ahead at the first origin note */
static void read_ahead(struct parse_run *r, const char *path)
{
	char **n = realloc(r->ahead, (r->nahead + 1) * sizeof(*n));

	if (!n || !(n[r->nahead] = strdup(path)))
		die("out of memory");
	r->ahead = n;
	r->nahead++;
}

static struct parse_origin *origin_of(struct parse_run *r)
{
	if (!r->po) {
		r->po = parse_origin_new();
		parse_origin_set_dump(r->po, r->dump, r->text != NULL);
	}
	return r->po;
}

/* the origin notes, at an origin note of the inputs: the first reads their names ahead */
static struct parse_origin *origin_in_stream(struct parse_run *r)
{
	struct parse_origin *po = origin_of(r);

	if (r->ahead) {
		parse_origin_names_ahead(po, r->ahead, r->nahead);
		for (size_t i = 0; i < r->nahead; i++)
			free(r->ahead[i]);
		free(r->ahead);
		r->ahead = NULL;
		r->nahead = 0;
	}
	return po;
}

/* a cgroup note of blktrace --origin: kept for the events it names. 0 or -ENOMEM. */
static int take_cgroup(struct parse_run *r, const struct blk_event *ev)
{
	if (!r->cg && !(r->cg = blk_cgmap_new()))
		return -ENOMEM;
	return blk_cgmap_note(r->cg, ev) == -ENOMEM ? -ENOMEM : 0;
}

/* on_record() for what is not a record to merge: the end, a bad CPU, notes, messages */
static int __attribute__((noinline)) on_other(struct parse_run *r, enum blk_merge_note what,
					      void *owner, int cpu, const struct blk_event *ev)
{
	struct file_in *fi = r->file_mode ? owner : NULL;
	struct blk_acct_dev *d = fi ? fi->d : NULL;
	int stream = fi ? fi->stream : -1;
	uint32_t a;

	if (what == BLK_NOTE_END) {
		blk_cmem_eof(r->cmem, stream);
		return 0;
	}
	if (what == BLK_NOTE_BAD_CPU) {
		blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_BAD_CPU);
		if (!r->bad_cpu++)
			error("cpu %d trace info has error cpu %u (record at offset %llu dropped; further ones are counted)",
			      cpu, ev->cpu, (unsigned long long)ev->offset);
		return 0;
	}
	if (r->text)
		blk_wallclock_record(r->clock, ev);
	a = blk_event_action32(ev);
	if (!blk_event_is_notify(ev) || a == BLK_TN_ACTION(BLK_TN_MESSAGE) ||
	    (r->o->show_cgroup && (a & ~BLK_TA_CGROUP) == BLK_TN_ACTION(BLK_TN_MESSAGE))) {
		/* a record to merge; pipe mode lists devices in order of their first one */
		blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_QUEUED);
		if (!r->file_mode)
			d = blk_acct_dev(r->acct, ev->device, NULL);
		else if (d && !blk_acct_dev_devno(d))
			/* file mode: the device number is learned from its first record */
			blk_acct_dev_set_devno(d, ev->device);
		if (fi && d && blk_acct_dev_devno(d)) {
			fi->devno_known = 1;
			/* on_record() returns at once for its plain records from now on */
			if (r->raw_merge && !r->cmem && !r->text)
				blk_merge_quiet(r->raw_merge, fi);
		}
		return d ? 0 : -ENOMEM;
	}
	blk_cmem_record(r->cmem, stream, ev, BLK_CMEM_NOTE);
	if (blk_event_is_iowait(ev)) {
		/* handed out in time order, rebased, with the events (parse-iowait.h) */
		parse_waits_take(r->waits, ev);
		r->waits_live = 1;
		blk_cmem_note_done(r->cmem);
		return 1;
	}
	switch (a) {
	case BLK_TN_ACTION(BLK_TN_PROCESS):
		blk_acct_set_comm(r->acct, ev->pid, (const char *)ev->pdu, ev->pdu_len);
		break;
	default:
		if (parse_is_cgroup_note(ev))
			r->hidden_cgroup++;
		else if ((blk_event_is_cgroup(ev) || blk_event_is_cgpath(ev)) && take_cgroup(r, ev))
			return -ENOMEM;
		else if ((r->text || r->dump) &&
			 (blk_event_is_dirty(ev) || blk_event_is_fmap(ev) ||
			  blk_event_is_file(ev)) &&
			 parse_origin_note(origin_in_stream(r), ev, fi) && r->dump &&
			 !blk_event_is_file(ev)) {
			/* -d: written in its place among the events (parse-origin.h) */
			blk_cmem_note_done(r->cmem);
			return 1;
		}
		break;
	}
	blk_cmem_note_done(r->cmem);
	return parse_write_dump(r, ev) ? -EIO : 1;
}

/*
 * Notes are taken as records are read, never merged (except messages). The common case, a
 * data record of a file whose device is known, returns at once; the rest is on_other().
 */
static int on_record(void *arg, enum blk_merge_note what, void *owner, int cpu,
		     const struct blk_event *ev)
{
	struct parse_run *r = arg;
	struct file_in *fi = owner;

	if (what == BLK_NOTE_RECORD && r->file_mode && fi->devno_known && !r->cmem &&
	    !blk_event_is_notify(ev)) {
		if (r->text)
			blk_wallclock_record(r->clock, ev);
		return 0;
	}
	return on_other(r, what, owner, cpu, ev);
}

static int shown(const struct parse_opts *o, const struct blk_event *ev)
{
	return (blk_event_action32(ev) & (o->act_mask << BLK_TC_SHIFT)) != 0;
}

/* Strip "NAME.blktrace.N" to NAME; split a directory part off. */
static void split_input(const char *in, const char *dir_opt, char **dir, char **name)
{
	char *n = strdup(in), *p, *slash;

	if (!n)
		die("out of memory");
	p = strstr(n, ".blktrace.");
	if (p)
		*p = '\0';
	slash = strrchr(n, '/');
	if (slash) {
		*slash = '\0';
		*dir = strdup(n[0] ? n : "/");
		*name = strdup(slash + 1);
		free(n);
	} else {
		*dir = dir_opt ? strdup(dir_opt) : NULL;
		*name = n;
	}
}

/*
 * -t: replay the classic tool's memory to print its stale times (compat/parse-model.h);
 * not when there is no text.
 */
static void start_model(struct parse_run *r)
{
	r->cmem = r->text ? parse_model_new(r->o, fileno(r->env->out)) : NULL;
	if (!r->cmem)
		return;
	parse_model_acct_hooks(r->cmem, &r->acct_hooks);
	parse_model_pipesort_hooks(r->cmem, &r->sort_hooks);
	blk_acct_set_hooks(r->acct, &r->acct_hooks);
}

static void stop_model(struct parse_run *r)
{
	blk_acct_set_hooks(r->acct, NULL);
	blk_cmem_free(r->cmem);
	r->cmem = NULL;
}

static struct file_in *new_file_in(struct parse_run *r, struct blk_acct_dev *d, int stream)
{
	struct file_in **n = realloc(r->fins, (size_t)(r->nfins + 1) * sizeof(*n));
	struct file_in *fi = malloc(sizeof(*fi));

	if (!n || !fi)
		die("out of memory");
	r->fins = n;
	fi->d = d;
	fi->stream = stream;
	fi->devno_known = 0;
	r->fins[r->nfins++] = fi;
	return fi;
}

static int add_file_inputs(struct parse_run *r, struct blk_merge *m, int idx)
{
	const char *in = r->o->inputs[idx];
	char *dir, *name, path[8192];
	struct blk_acct_dev *d;
	int found = 0, nonempty = 0;

	split_input(in, r->o->input_dir, &dir, &name);
	d = blk_acct_dev(r->acct, 0, name);
	if (!d)
		die("out of memory");
	for (int cpu = 0;; cpu++) {
		struct blk_reader *rd;
		struct stat st;
		int stream;

		if (dir)
			snprintf(path, sizeof(path), "%s/%s.blktrace.%d", dir, name, cpu);
		else
			snprintf(path, sizeof(path), "%s.blktrace.%d", name, cpu);
		if (stat(path, &st)) {
			size_t l = strlen(path);

			/* a compressed per-CPU file may carry the .gz suffix */
			snprintf(path + l, sizeof(path) - l, ".gz");
			if (stat(path, &st)) {
				path[l] = '\0';
				blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_MISSING);
				break;
			}
		}
		found++;
		if (!st.st_size) {
			blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_EMPTY);
			continue;
		}
		rd = blk_reader_open(path);
		if (!rd)
			die("cannot open '%s': %s", path, strerror(errno));
		if (r->cmem)
			blk_reader_set_buf_size(rd, MODEL_READ_SIZE);
		nonempty++;
		read_ahead(r, path);
		say(r, "Input file %s added\n", path);
		stream = blk_cmem_file(r->cmem, idx, cpu, path, BLK_CMEM_OPENED);
		if (blk_merge_add(m, rd, new_file_in(r, d, stream), cpu))
			die("out of memory");
	}
	if (!found) {
		free(dir);
		free(name);
		return 0;
	}
	if (parse_waits_add_files(r->waits, dir, name) > 0)
		r->waits_live = 1;
	/* the relay backend's origin notes, beside the block files (parse-origin.h) */
	if ((r->text || r->dump) && parse_origin_side_exists(dir, name))
		parse_origin_add_files(origin_of(r), dir, name);
	if (!nonempty)
		warning("all trace files of '%s' are empty (no events were recorded)", in);
	free(dir);
	free(name);
	return 1;
}

static int is_pipe_input(const char *in)
{
	struct stat st;

	if (!strcmp(in, "-"))
		return 1;
	return !stat(in, &st) && S_ISFIFO(st.st_mode);
}

static int is_plain_file(const char *in)
{
	struct stat st;

	return !strstr(in, ".blktrace.") && !stat(in, &st) && S_ISREG(st.st_mode);
}

/*
 * An error that ends the run: the text printed so far and the dump written so far are
 * written out first (their threads joined), as the classic tool leaves them, then the
 * message.
 */
static void stop_outputs(struct parse_run *r)
{
	if (r->q) {
		parse_sync_text(r);
		blk_printq_free(r->q);
		r->q = NULL;
	}
	if (r->text)
		blk_output_finish(r->text);
	if (r->dump)
		blk_output_finish(r->dump);
}

#define run_die(r, ...)           \
	do {                      \
		stop_outputs(r);  \
		die(__VA_ARGS__); \
	} while (0)

/*
 * The file loop without text (-O) into a dump: each record is written as the merge keeps it,
 * its time rebased, never decoded again (blk_merge_dump_raw()); the waits held are written
 * before the first record that ends after them. Return as blk_merge_dump_raw(): > 0 if
 * stopped before the end.
 */
static int dump_raw(struct parse_run *r, struct blk_merge *m)
{
	const struct parse_opts *o = r->o;
	/* as shown() and the loop of run_file_mode() */
	struct blk_merge_dump dump = {.act_mask = (uint32_t)o->act_mask << BLK_TC_SHIFT,
				      .msgs = o->dump_msgs,
				      .rebase = r->genesis,
				      .start = o->stop_start,
				      .end = o->stop_end};
	unsigned int k = 0;
	int ret = 1;

	/* the rebase of the waits (r->waits_live) is the same all along */
	if (parse_waits_emit(r->waits, 0, r->genesis))
		r->failed = 1;
	while (!r->failed) {
		unsigned int taken;

		/* an interrupt is looked for every 256 records (it stops before the next) */
		if (!(k & 255) && interrupted(r))
			return 1;
		/* after a batch was read too: its notes may have brought waits, runs and maps */
		dump.pause = r->waits_live ? parse_waits_due(r->waits) : UINT64_MAX;
		if (parse_origin_due(r->po) < dump.pause)
			dump.pause = parse_origin_due(r->po);
		ret = blk_merge_dump_raw(m, r->dump, &dump, 256 - (k & 255), &taken);
		k += taken;
		if (ret == BLK_DUMP_MORE)
			continue;
		if (ret == BLK_DUMP_PAUSE) {
			/* the waits that end before the next record come first, and the notes */
			if (parse_waits_emit(r->waits, dump.pause, r->genesis))
				r->failed = 1;
			if (r->po)
				parse_origin_emit_until(r->po, dump.pause);
			continue;
		}
		if (ret == BLK_DUMP_STOP)
			return 1;
		if (ret == BLK_DUMP_OUTPUT) {
			r->failed = 1;
			return 1;
		}
		break; /* the end, or -errno */
	}
	return r->failed ? 1 : ret;
}

/*
 * The dump is written beside the merge on a thread of its own (without one, as it comes):
 * large-perf's -O -d, medians of 21 interleaved rounds on 2026-12-07's quiet machine,
 * 0.114 s against 0.144 s without the thread (cat of the files: 0.098 s).
 */
static void start_dump_thread(struct parse_run *r)
{
	if (r->dump && !r->o->one_thread)
		blk_output_set_async(r->dump);
}

static void run_file_mode(struct parse_run *r)
{
	struct parse_opts *o = r->o;
	struct blk_merge *m = blk_merge_new(o->batch, on_record, r);
	struct blk_event *ev;
	void *owner;
	int cpu, ret = 1; /* > 0 after the loop: more records may follow */
	int raw = !r->text && r->dump; /* without text nothing reads a decoded record */

	if (!m)
		run_die(r, "out of memory");
	r->file_mode = 1;
	if (raw) {
		if (blk_merge_set_raw(m))
			run_die(r, "out of memory");
		r->raw_merge = m;
	}
	start_model(r);
	for (int i = 0; i < o->ninputs; i++) {
		if (!add_file_inputs(r, m, i)) {
			error("No input files found for %s", o->inputs[i]);
			hint("expected %s%s%s.blktrace.0 (per-CPU trace files, see -D), a merged trace file, or '-' for stdin",
			     o->input_dir ? o->input_dir : "", o->input_dir ? "/" : "",
			     o->inputs[i]);
			stop_outputs(r);
			exit(1);
		}
	}
	start_dump_thread(r);
	if (!blk_merge_peek_time(m, &r->genesis))
		r->genesis = 0;
	r->rebase = r->genesis;
	if (raw)
		ret = dump_raw(r, m);
	for (unsigned int k = 0; !raw; k++) {
		struct file_in *fi;
		struct blk_acct_dev *d;

		/* an interrupt is looked for every 256 records (it stops before the next) */
		if (!(k & 255) && interrupted(r))
			break;
		ret = blk_merge_take(m, &ev, &owner, &cpu);
		if (ret <= 0)
			break;
		fi = owner;
		d = fi->d;
		if (parse_waits_emit(r->waits, ev->time, r->genesis))
			r->failed = 1;
		if (!r->text) {
			/* nothing reads the counts without text: the dump is all */
			ev->time -= r->genesis;
			if (ev->time > o->stop_end)
				break;
			if (r->po)
				parse_origin_emit(r->po, ev, fi, ev->time + r->genesis);
			if (shown(o, ev) && ev->time >= o->stop_start &&
			    (o->dump_msgs ||
			     blk_event_action32(ev) != BLK_TN_ACTION(BLK_TN_MESSAGE)))
				parse_write_dump(r, ev);
			if (r->failed)
				break;
			continue;
		}
		blk_acct_seen(d, cpu);
		ev->time -= r->genesis;
		blk_cmem_handle(r->cmem, fi->stream, ev->time);
		if (ev->time > o->stop_end)
			break;
		blk_acct_last_time(d, ev->time);
		r->input = fi;
		if (shown(o, ev) && ev->time >= o->stop_start)
			parse_dump_trace(r, d, cpu, ev);
		if (r->text)
			blk_cmem_retire(r->cmem, fi->stream, ev->time, ev->device,
					(uint32_t)ev->sequence);
		if (r->failed)
			break;
	}
	if (ret < 0 && ret != -EIO)
		run_die(r, "%s", strerror(-ret));
	if (!interrupted(r) && !r->failed && parse_waits_emit(r->waits, UINT64_MAX, r->genesis))
		r->failed = 1;
	if (ret > 0 && interrupted(r))
		warning("interrupted: the rest of the input was not read (the summary covers the events before)");
	for (unsigned int i = 0; i < blk_merge_nerrors(m); i++) {
		error("%s", blk_merge_error(m, i));
		r->failed = 1;
	}
	r->raw_merge = NULL;
	blk_merge_free(m);
	stop_model(r);
	for (int i = 0; i < r->nfins; i++)
		free(r->fins[i]);
	free(r->fins);
}

static void print_skip(void *arg, uint32_t dev, int cpu, uint64_t first, uint64_t last)
{
	(void)arg;
	(void)cpu;
	fprintf(stderr, "(%d,%d): skipping %llu -> %llu\n", BLK_MAJOR(dev), BLK_MINOR(dev),
		(unsigned long long)first, (unsigned long long)last);
}

static void run_pipe_mode(struct parse_run *r, const char *in)
{
	struct parse_opts *o = r->o;
	struct blk_pipesort_opts po = {0};
	struct blk_pipesort *ps;
	struct blk_reader *rd;
	struct blk_event ev;
	int fd, ret;

	start_dump_thread(r);
	fd = strcmp(in, "-") ? open(in, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	rd = fd < 0 ? NULL : blk_reader_fdopen(fd, in);
	if (!rd)
		run_die(r, "cannot open '%s': %s", in, strerror(errno));
	if (r->env->watch_input)
		r->env->watch_input(r->env->ctx, fd, is_pipe_input(in) ? 2 : 1);
	if (!is_pipe_input(in))
		read_ahead(r, in);
	po.batch = o->batch;
	po.max_pending = o->max_pending;
	/*
	 * A batch ends when the pipe stays empty for 20 ms (the classic tool ends it as soon
	 * as a read would block, which makes its order depend on scheduling); events are
	 * still printed within that time of arriving.
	 */
	po.wait_ms = 20;
	po.stop_start = o->stop_start;
	po.stop_end = o->stop_end;
	po.fn = on_record;
	po.arg = r;
	/* the classic tool reads a pipe (not a merged file, which it cannot read at all) */
	if (is_pipe_input(in)) {
		start_model(r);
		if (r->cmem)
			po.hooks = &r->sort_hooks;
	}
	ps = blk_pipesort_new(rd, &po);
	if (!ps)
		run_die(r, "out of memory");
	for (int printed = 0;; printed = 1) {
		struct blk_acct_dev *d;
		uint64_t base;

		/* what was printed is written out before the input is waited for */
		if (r->text && blk_pipesort_needs_input(ps) && blk_reader_would_wait(rd)) {
			parse_sync_text(r);
			if (blk_output_flush(r->text))
				r->failed = 1;
		}
		ret = blk_pipesort_next(ps, &ev);
		if (ret <= 0)
			break;
		/*
		 * The waits that ended before this event come after the one printed last, and
		 * on its time base: the classic tool takes its genesis again while it is 0 (a
		 * merged file's first event is at 0), so that the times printed go back to 0 at
		 * its second batch, and a wait between the two batches has no time on the new base
		 */
		base = printed ? r->rebase : blk_pipesort_rebase(ps);
		r->rebase = blk_pipesort_rebase(ps);
		if (parse_waits_emit(r->waits, ev.time + r->rebase, base))
			r->failed = 1;
		d = blk_acct_dev(r->acct, ev.device, NULL);
		if (!d)
			run_die(r, "out of memory");
		blk_acct_seen(d, (int)ev.cpu);
		blk_acct_last_time(d, ev.time);
		/* -d without text: the origin notes due before it go first (parse-origin.h) */
		if (r->po && !r->text)
			parse_origin_emit(r->po, &ev, NULL, ev.time + r->rebase);
		if (shown(o, &ev))
			parse_dump_trace(r, d, (int)ev.cpu, &ev);
		if (r->failed)
			break;
	}
	if (ret < 0 && ret != -EIO)
		run_die(r, "%s", strerror(-ret));
	if (!r->failed && parse_waits_emit(r->waits, UINT64_MAX, blk_pipesort_rebase(ps)))
		r->failed = 1;
	for (unsigned int i = 0; i < blk_acct_ndevs(r->acct); i++) {
		struct blk_acct_dev *d = blk_acct_dev_at(r->acct, i);
		uint64_t ranges, missing;

		blk_pipesort_skips(ps, blk_acct_dev_devno(d), &ranges, &missing);
		blk_acct_set_skips(d, ranges, missing);
		if (o->verbose)
			blk_pipesort_each_skip(ps, blk_acct_dev_devno(d), print_skip, NULL);
	}
	if (blk_pipesort_forced(ps))
		warning("%llu records were released from a stalled reorder window (sequence gaps in the input)",
			(unsigned long long)blk_pipesort_forced(ps));
	/* before the descriptor is closed (and its number reused) */
	if (r->env->unwatch_input && r->env->unwatch_input(r->env->ctx)) {
		warning("interrupted: stopped reading '%s' before its end (the summary covers the %llu records read)",
			in, (unsigned long long)blk_reader_records(rd));
		if (blk_pipesort_error(ps))
			hint("the last record was cut short: %s", blk_pipesort_error(ps));
	} else if (blk_pipesort_error(ps)) {
		error("%s", blk_pipesort_error(ps));
		r->failed = 1;
	}
	blk_pipesort_free(ps);
	stop_model(r);
}

static int uses_wall(const struct parse_opts *o)
{
	for (int i = 0; i < 256; i++)
		if (o->fmt[i] && blk_format_needs_wall(o->fmt[i]))
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int parse_run(struct parse_opts *op, const struct parse_env *env)
{
	struct parse_opts o = *op;
	struct parse_run r = {0};
	uint32_t bad_first;
	uint64_t bad;
	int dump_stdout, pipe_in = 0;

	r.o = &o;
	r.env = env;
	dump_stdout = o.dump && !strcmp(o.dump, "-");
	r.stdout_now = isatty(fileno(env->out)) && !dump_stdout;
	{
		struct blk_acct_opts ao = {o.per_process, o.hash_by_name, o.track, o.verbose,
					   o.sort_key};

		r.acct = blk_acct_new(&ao);
		r.clock = blk_wallclock_new();
		if (!r.acct || !r.clock)
			die("out of memory");
	}
	if (o.dump) {
		r.dump = blk_output_open(o.dump, ends_with(o.dump, ".gz") ? BLK_OUTPUT_GZIP : 0);
		if (!r.dump)
			die("cannot create '%s': %s", o.dump, strerror(errno));
		/* its thread: start_dump_thread(), once the mode is known */
	}
	if (o.text) {
		if (o.output)
			r.text = blk_output_open(o.output,
						 ends_with(o.output, ".gz") ? BLK_OUTPUT_GZIP : 0);
		else if (!dump_stdout)
			r.text =
				blk_output_fdopen(fileno(env->out), "(stdout)", BLK_OUTPUT_NOCLOSE);
		if (o.output && !r.text)
			die("cannot create '%s': %s", o.output, strerror(errno));
		/* without a thread, the lines are rendered as they come */
		if (r.text && !o.one_thread)
			r.q = blk_printq_new(r.text);
	}
	{
		struct parse_waits_opts wo = {.print = o.iowait && (o.act_mask & BLK_TC_NOTIFY),
					      .text = r.text,
					      .q = r.q,
					      .dump = r.dump,
					      .batch = o.batch,
					      .stop_start = o.stop_start,
					      .stop_end = o.stop_end};

		r.waits = parse_waits_new(&wo);
	}
	for (int i = 0; i < o.ninputs; i++)
		if (is_pipe_input(o.inputs[i]))
			pipe_in = i + 1;
	if (pipe_in)
		run_pipe_mode(&r, o.inputs[pipe_in - 1]);
	else if (o.ninputs == 1 && is_plain_file(o.inputs[0]))
		run_pipe_mode(&r, o.inputs[0]);
	else
		run_file_mode(&r);

	if (r.text) {
		struct blk_strbuf *sb = blk_output_sb(r.text);

		parse_sync_text(&r);
		blk_printq_free(r.q);
		r.q = NULL;

		if (o.per_process)
			blk_acct_print_procs(r.acct, sb);
		if (!o.quiet)
			blk_acct_print_devs(r.acct, sb);
		if (blk_output_finish(r.text)) {
			error("%s", blk_output_error(r.text));
			r.failed = 1;
		}
	}
	/* -d: the origin notes still waiting (parse-origin.h) */
	if (r.po && parse_origin_flush(r.po))
		r.failed = 1;
	if (r.dump && blk_output_finish(r.dump)) {
		error("%s", blk_output_error(r.dump));
		hint("the binary dump '%s' is incomplete", o.dump);
		r.failed = 1;
	}
	if (r.have_drv_data && !o.dump)
		say(&r,
		    "\ndiscarded traces containing low-level device driver specific data (only available in binary output)\n");
	if (r.stdout_later.len) {
		FILE *f = dump_stdout ? stderr : env->out;

		fwrite(r.stdout_later.buf, 1, r.stdout_later.len, f);
		if (fflush(f))
			r.failed = 1;
	}
	bad = blk_acct_bad_actions(r.acct, &bad_first);
	if (bad) {
		warning("%llu records with an action blkparse does not know (first: 0x%x) were counted but not printed",
			(unsigned long long)bad, bad_first);
		if ((bad_first & BLK_TA_CGROUP) && !o.show_cgroup)
			hint("the action carries the cgroup flag: --cgroup decodes such records");
	}
	if (r.bad_cpu)
		warning("%llu records were dropped because their cpu field did not match their file",
			(unsigned long long)r.bad_cpu);
	if (r.wall_kind == BLK_WALL_GUESSED && uses_wall(&o)) {
		warning("%%z may be early: the input is a merged trace (its events start at 0) and its first event has no process note to date it");
		hint("%%z takes that event to be at the start of tracing; the per-CPU trace files give the exact time");
	}
	if (r.cg) {
		struct blk_cgmap_stats cs;

		blk_cgmap_stats(r.cg, &cs);
		if (cs.bad)
			warning("%llu cgroup notes of blktrace --origin were damaged and skipped: the events they name show no cgroup (%%g 0,0, %%G -)",
				(unsigned long long)cs.bad);
	}
	if (r.po) {
		struct blk_origin_stats os;

		parse_origin_stats(r.po, &os);
		if (os.bad + os.unknown)
			warning("%llu origin notes of blktrace --origin were damaged or named an unknown file, and were skipped",
				(unsigned long long)(os.bad + os.unknown));
		if (parse_origin_side_report(r.po))
			r.failed = 1;
	}
	parse_waits_report(r.waits);
	parse_waits_free(r.waits);
	if (r.hidden_cgroup && !o.show_cgroup) {
		warning("%llu cgroup-tagged message records were not shown (blkparse 1.2.0 hides them)",
			(unsigned long long)r.hidden_cgroup);
		hint("--cgroup prints them");
	}
	blk_output_free(r.text);
	blk_output_free(r.dump);
	blk_strbuf_release(&r.stdout_later);
	blk_strbuf_release(&r.line);
	blk_acct_free(r.acct);
	blk_wallclock_free(r.clock);
	blk_cgmap_free(r.cg);
	parse_origin_free(r.po);
	for (size_t i = 0; i < r.nahead; i++)
		free(r.ahead[i]);
	free(r.ahead);
	return r.failed ? 1 : 0;
}
