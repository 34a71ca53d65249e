// SPDX-License-Identifier: GPL-2.0
/*
 * btt --export (see export-out.h), a subscriber of the model of every bio (model/bios.h):
 * each bio that completed (on a device the report shows) becomes one row of the io table,
 * and of the I/O model's notes: each I/O wait one row of the iowait table.
 *
 * The wall clock. Rows carry absolute times, ns since the epoch: the trace time of each
 * stage plus the wall clock of trace time 0, which btt's clock (clock.h: lib/wallclock.c fed
 * with every record as btt_run() reads it) finds from the trace's TN_TIMESTAMP note (and,
 * for a merged file whose events blkparse -d rebased, from the process note of its first
 * event), as blkparse's %z does. The clock is settled at the first row (a merged file has
 * its notes first) and kept for the whole export, so that every row of a trace is on the
 * same base. A trace without a timestamp note is dated at the input file's modification
 * time (standard input: the time btt started), and btt says so.
 *
 * The export is opened at the first row, when the clock and so the trace's identity are
 * known (or at the end, for a trace without completed I/O, so that a bad destination still
 * fails). The identity is the wall clock of time 0 and the first event, with the options
 * that change which rows the model gives (-t, -T, -D, -r): the same trace exported again
 * makes the same export id and the same batch ids, and the library skips what is stored.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk-export/export.h"
#include "blk/iowait.h"
#include "blk/wallclock.h"
#include "btt.h"
#include "common.h"
#include "export/export-out.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/clock.h"
#include "origin/origins.h"
#include "output.h"

#define NS_PER_SEC 1000000000ull

struct export_out {
	const struct btt_opts *o;
	struct btt_devs *devs;
	char host[BLK_ROW_STR_MAX + 1];
	struct blk_export *x;
	struct btt_clock *clock;
	int based; /* the wall clock of time 0 is settled: base_ns */
	uint64_t base_ns;
	enum blk_wall_kind kind;
	int late_note; /* a timestamp note after the clock was settled without one: warned */
	struct blk_event first; /* the first event read (its pdu not kept) */
	time_t started; /* for standard input without a timestamp note */
	uint64_t bad_waits; /* wait notes that could not be decoded: not exported */
	uint64_t no_c; /* bios with no completion in the trace: not exported */
	int dead; /* the export failed (said once): no more rows, btt_report() fails */
	char err[1024];
	/* the sections that read blktrace --origin's notes (origin/origins.h) */
	const struct btt_view *v;
	struct bio_notes_src notes;
};

/* ---- the wall clock ---- */

/* say once that a timestamp note came after the first exported I/O */
static void late_note(struct export_out *xo)
{
	uint64_t t;

	if (xo->late_note || !btt_clock_late_note(xo->clock, &t))
		return;
	xo->late_note = 1;
	warning("'%s': a timestamp note (TN_TIMESTAMP) after the first exported I/O, at trace time %llu.%09llu: not used, the export keeps its clock",
		xo->o->input ? xo->o->input : "-", (unsigned long long)(t / NS_PER_SEC),
		(unsigned long long)(t % NS_PER_SEC));
}

static void utc_string(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / NS_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%09llu UTC", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned long long)(ns % NS_PER_SEC));
}

/* Settle the wall clock of trace time 0, and say when it is not the trace's own. */
static void settle_clock(struct export_out *xo)
{
	const char *in = xo->o->input ? xo->o->input : "-";
	int64_t sec = 0;
	long nsec = 0;
	char when[64];
	struct stat st;
	int mtime;

	xo->based = 1;
	xo->kind = btt_clock_base(xo->clock, &sec, &nsec);
	if (btt_clock_first(xo->clock))
		xo->first = *btt_clock_first(xo->clock);
	if (xo->kind != BLK_WALL_NONE) {
		xo->base_ns = sec > 0 ? (uint64_t)sec * NS_PER_SEC + (uint64_t)nsec : 0;
		if (xo->kind == BLK_WALL_GUESSED) {
			utc_string(when, sizeof(when), xo->base_ns + xo->first.time);
			warning("'%s': no process note of the first event: the export takes it to come at the timestamp note (%s); times may be early by the time from the start of tracing to that note",
				in, when);
		}
		return;
	}
	/* no timestamp note: the file's modification time, or now, at time 0 */
	mtime = strcmp(in, "-") && stat(in, &st) == 0;
	if (mtime)
		xo->base_ns =
			(uint64_t)st.st_mtim.tv_sec * NS_PER_SEC + (uint64_t)st.st_mtim.tv_nsec;
	else
		xo->base_ns = (uint64_t)xo->started * NS_PER_SEC;
	utc_string(when, sizeof(when), xo->base_ns);
	warning("'%s' has no timestamp note (TN_TIMESTAMP): the export dates trace time 0 at %s, the %s",
		in, when,
		mtime		   ? "file's modification time"
		: !strcmp(in, "-") ? "time btt started (standard input)"
				   : "time btt started");
	hint("blktrace records the note when tracing starts; give the trace as blktrace and blkparse -d wrote it");
}

static inline uint64_t wall(const struct export_out *xo, uint64_t t)
{
	return t == NO_TIME ? 0 : xo->base_ns + t;
}

/*
 * The classic network server (blktrace -l) keeps what a client sends in a directory
 * ADDR-YYYY-MM-DD-HH:MM:SS: a merged trace made there is that client's, not this machine's.
 * Return: 1 and its address in @host, or 0.
 */
static int net_server_host(const char *input, char *host, size_t len)
{
	static const char pat[] = "-dddd-dd-dd-dd:dd:dd";
	char path[PATH_MAX], *dir, *slash;
	size_t n, plen = sizeof(pat) - 1;

	if (!strcmp(input, "-") || !realpath(input, path))
		return 0;
	slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0;
	*slash = '\0';
	dir = strrchr(path, '/');
	dir = dir ? dir + 1 : path;
	n = strlen(dir);
	if (n <= plen || n - plen >= len)
		return 0;
	for (size_t i = 0; i < plen; i++)
		if (pat[i] == 'd' ? !isdigit((unsigned char)dir[n - plen + i])
				  : dir[n - plen + i] != pat[i])
			return 0;
	memcpy(host, dir, n - plen);
	host[n - plen] = '\0';
	return 1;
}

/* ---- the destination ---- */

/*
 * The export failed (-errno @e): the error and a hint said once, the rows not stored
 * dropped, and no more taken; the rest of the run (the report, the other files) goes on.
 */
static void failed(struct export_out *xo, int e)
{
	xo->dead = 1;
	const char *db = "DB";
	struct blk_export_dest d;
	char ignored[8];
	int ch = 0;

	blk_export_discard(xo->x);
	xo->x = NULL;
	error("%s", xo->err);
	if (!blk_export_dest_parse(xo->o->export_dest, &d, ignored, sizeof(ignored)) &&
	    d.kind == BLK_EXPORT_CLICKHOUSE) {
		db = d.database;
		ch = 1;
	}
	switch (e) {
	case ENOENT:
		if (ch)
			hint("create the tables first: btt --clickhouse-schema | clickhouse-client --database %s --multiquery",
			     db);
		break;
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ETIMEDOUT:
		if (ch && d.tls)
			hint("is the server running? clickhouses:// takes its HTTPS port (8443 unless given)");
		else
			hint("is the server running? clickhouse:// takes its HTTP port (8123 unless given)");
		break;
	case EEXIST:
		hint("export the trace with the batch size of its first export (--export-batch)");
		break;
	default:
		break;
	}
}

/* The trace's identity: the same for every export of the same trace (see the top). */
static void trace_id(const struct export_out *xo, char *buf, size_t len)
{
	const struct btt_opts *o = xo->o;

	snprintf(
		buf, len,
		"btt-export 2 wall %llu kind %d first %llu %u %u %u %u range %d %.9g %.9g devices %s remaps %d",
		(unsigned long long)xo->base_ns, (int)xo->kind, (unsigned long long)xo->first.time,
		xo->first.device, xo->first.cpu, xo->first.pid, xo->first.sequence, o->time_bounded,
		o->t_start, o->t_end, o->devices ? o->devices : "-", o->no_remaps);
}

/* the destination opened at the first row (or at the end): 0, or -1 (said, as failed()) */
static int open_export(struct export_out *xo)
{
	struct blk_export_opts eo = BLK_EXPORT_OPTS_INIT;
	char id[512];

	if (!xo->based)
		settle_clock(xo);
	trace_id(xo, id, sizeof(id));
	eo.host = xo->host;
	eo.trace_id = id;
	eo.batch_rows = xo->o->export_batch;
	eo.pipelined = 1; /* compress and send while the model runs */
	eo.password_file = xo->o->password_file;
	eo.password = getenv("CLICKHOUSE_PASSWORD"); /* never on the command line */
	eo.ca_file = xo->o->ca_file;
	eo.insecure = xo->o->insecure;
	xo->x = blk_export_open(xo->o->export_dest, &eo, xo->err, sizeof(xo->err));
	if (!xo->x) {
		failed(xo, errno);
		return -1;
	}
	return 0;
}

/* the completion's error as the rows carry it: 0 or -errno (the kernel's is a u16) */
static int32_t io_error(uint16_t e)
{
	int32_t v = (int16_t)e;

	return v > 0 ? -v : v;
}

/*
 * Who and what bio @b was for, from the trace's notes (blktrace --origin, bio_notes_of()),
 * into @r. Without notes: no cgroup, no file, the queuer as the origin. @cgbuf and @fbuf
 * hold the cgroup id or "ino N" when not named.
 */
static void notes_of(struct export_out *xo, const struct btt_bio *b, struct blk_io_row *r,
		     char *cgbuf, size_t cglen, char *fbuf, size_t flen)
{
	struct bio_notes n;

	bio_notes_of(&xo->notes, xo->v, b, &n);
	r->origin_pid = n.has_origin ? n.origin_pid : r->pid;
	r->origin_comm = n.has_origin ? n.origin : r->comm;
	if (n.has_cgroup && !n.cgroup)
		snprintf(cgbuf, cglen, "%llu", (unsigned long long)n.cgroup_id);
	r->cgroup = !n.has_cgroup ? NULL : n.cgroup ? n.cgroup : cgbuf;
	if (n.has_file && !n.path)
		snprintf(fbuf, flen, "ino %llu", (unsigned long long)n.ino);
	r->file = !n.has_file ? NULL : n.path ? n.path : fbuf;
	r->file_offset = n.has_file ? n.offset : 0;
}

/*
 * One io row per bio (model/bios.h) on a device the report shows that completed, whole
 * or in part: a split bio is one row with its pieces; the bios merged into one request
 * each have their own; those made from a D or C (their Q not in the trace) are marked.
 * A bio with no completion in the trace has no row: counted, and said at the end.
 */
static void on_bio(void *ctx, const struct btt_bio *b)
{
	struct export_out *xo = ctx;
	const struct btt_dev *dip = devs_find(xo->devs, b->device);
	const struct btt_proc *pip = b->pid ? procs_find(xo->devs, b->pid) : NULL;
	struct blk_event q = {.action = b->action, .bytes = b->nsec << 9};
	char rwbs[BLK_RWBS_LEN], cgbuf[24], fbuf[32];
	struct blk_io_row r;
	int ret;

	if (!dip || !dip->shown)
		return;
	if (b->t_last_c == NO_TIME) {
		xo->no_c++;
		return;
	}
	if (xo->dead || (!xo->x && open_export(xo) < 0))
		return;
	late_note(xo);
	blk_event_rwbs(&q, rwbs);
	r = (struct blk_io_row){
		.device = devs_out_name(dip),
		.major = BLK_MAJOR(b->device),
		.minor = BLK_MINOR(b->device),
		.pid = b->pid,
		.comm = pip ? pip->name : "",
		.rwbs = rwbs,
		.sector = b->sector,
		.bytes = b->nsec << 9,
		.q_ns = wall(xo, b->t_q),
		.g_ns = wall(xo, b->t_first_g),
		.i_ns = wall(xo, b->t_first_i),
		.d_ns = wall(xo, b->t_first_d),
		.c_ns = wall(xo, b->t_last_c),
		.merged = !!(b->flags & BTT_BIO_MERGED),
		.split = !!(b->flags & BTT_BIO_SPLIT),
		.pieces = b->pieces,
		.completions = b->completions,
		.requeues = b->requeues,
		.no_q = !!(b->flags & BTT_BIO_NO_Q),
		.unfinished = !!(b->flags & BTT_BIO_UNFINISHED),
		.error = io_error(b->error),
	};
	if (b->flags & BTT_BIO_REMAPPED) {
		r.remap_major = BLK_MAJOR(b->from_device);
		r.remap_minor = BLK_MINOR(b->from_device);
		r.remap_sector = b->from_sector;
	}
	notes_of(xo, b, &r, cgbuf, sizeof(cgbuf), fbuf, sizeof(fbuf));
	ret = blk_export_io(xo->x, &r, xo->err, sizeof(xo->err));
	if (ret < 0)
		failed(xo, -ret);
}

/*
 * One iowait row per wait note (blkparse --iowait's lines), within -t/-T by its end as the
 * model's window, whatever -D (a wait is a task's, not a device's): start = wall(end) -
 * duration, the device of the task's I/O in flight the note names (io=), empty without one.
 */
static void on_note(void *ctx, const struct blk_event *ev)
{
	struct export_out *xo = ctx;
	const struct btt_dev *dip = NULL;
	char dname[BTT_LABEL_LEN];
	struct blk_iowait w;
	struct blk_iowait_row r;
	int64_t start;
	int ret;

	late_note(xo);
	if (!blk_event_is_iowait(ev))
		return;
	if (blk_iowait_decode(ev, &w)) {
		xo->bad_waits++;
		return;
	}
	if (xo->o->time_bounded) {
		double s = (double)w.end / 1.0e9;

		if (s < xo->o->t_start || s > xo->o->t_end)
			return;
	}
	if (xo->dead || (!xo->x && open_export(xo) < 0))
		return;
	dname[0] = '\0';
	if (w.flags & BLK_IOWAIT_F_IO) {
		dip = devs_find(xo->devs, w.io_dev);
		if (dip)
			snprintf(dname, sizeof(dname), "%s", devs_out_name(dip));
		else
			snprintf(dname, sizeof(dname), "%u,%u", BLK_MAJOR(w.io_dev),
				 BLK_MINOR(w.io_dev));
	}
	start = (int64_t)xo->base_ns + w.start;
	r = (struct blk_iowait_row){
		.device = dname,
		.major = dname[0] ? BLK_MAJOR(w.io_dev) : 0,
		.minor = dname[0] ? BLK_MINOR(w.io_dev) : 0,
		.pid = w.tgid,
		.tid = w.tid,
		.comm = w.comm,
		.start_ns = start > 0 ? (uint64_t)start : 0,
		.duration_ns = w.duration,
		.source = blk_iowait_source_name(w.source),
		.cpu = (uint32_t)w.cpu,
		.waker_cpu = w.waker_cpu,
	};
	ret = blk_export_iowait(xo->x, &r, xo->err, sizeof(xo->err));
	if (ret < 0)
		failed(xo, -ret);
}

struct export_out *export_out_new(const struct btt_view *v)
{
	struct export_out *xo;
	struct btt_io_sub sub = {.note = on_note};

	if (!v->opts->export_dest)
		return NULL;
	xo = xcalloc(1, sizeof(*xo));
	xo->o = v->opts;
	xo->devs = v->devs;
	xo->v = v;
	xo->started = time(NULL);
	if (v->opts->export_host)
		snprintf(xo->host, sizeof(xo->host), "%s", v->opts->export_host);
	else if (v->opts->input && net_server_host(v->opts->input, xo->host, sizeof(xo->host)))
		;
	else if (gethostname(xo->host, sizeof(xo->host) - 1) < 0 || !xo->host[0])
		die("cannot tell this machine's name for the rows' host: %s", strerror(errno));
	xo->clock = v->clock;
	sub.ctx = xo;
	if (iomodel_subscribe(v->model, &sub) < 0 || bios_subscribe(v->bios, on_bio, xo) < 0)
		die("internal error: too many subscribers");
	return xo;
}

int export_out_finish(struct export_out *xo)
{
	struct blk_export_stats st = {0};
	struct blk_export_dest d;
	char where[400];
	uint64_t nb;
	int ret;

	if (!xo)
		return 0;
	if (xo->dead || (!xo->x && open_export(xo) < 0))
		return -1;
	late_note(xo);
	if (xo->bad_waits)
		warning("'%s': %llu I/O wait notes could not be read (damaged, or a newer version): not exported",
			xo->o->input ? xo->o->input : "-", (unsigned long long)xo->bad_waits);
	if (xo->no_c)
		warning("'%s': %llu bios have no completion in the trace (in flight when it ended, or their C lost): not exported",
			xo->o->input ? xo->o->input : "-", (unsigned long long)xo->no_c);
	ret = blk_export_close(xo->x, &st, xo->err, sizeof(xo->err));
	xo->x = NULL;
	if (ret < 0) {
		failed(xo, -ret);
		return -1;
	}
	nb = st.batches[BLK_TABLE_IO] + st.batches[BLK_TABLE_IOWAIT];
	/* the destination without its user and password */
	if (blk_export_dest_parse(xo->o->export_dest, &d, where, sizeof(where)))
		snprintf(where, sizeof(where), "?");
	else if (d.kind == BLK_EXPORT_TSV)
		snprintf(where, sizeof(where), "tsv:%s", d.dir);
	else
		snprintf(where, sizeof(where), "%s:%d/%s%s", d.host, d.port, d.database,
			 d.distributed ? " (distributed)" : "");
	fprintf(stderr,
		"%s: exported %llu I/Os and %llu I/O waits of host '%s' to '%s': %llu batch%s (%llu found stored), %llu bytes sent\n",
		progname(), (unsigned long long)st.rows[BLK_TABLE_IO],
		(unsigned long long)st.rows[BLK_TABLE_IOWAIT], xo->host, where,
		(unsigned long long)nb, nb == 1 ? "" : "es", (unsigned long long)st.batches_present,
		(unsigned long long)st.bytes_sent);
	return 0;
}

void export_out_free(struct export_out *xo)
{
	if (!xo)
		return;
	blk_export_discard(xo->x);
	free(xo);
}

/* ---- the output (output.h) ---- */

static int export_wanted(const struct btt_opts *o)
{
	return o->export_dest != NULL;
}

static void *export_new(const struct btt_view *v, void *opened)
{
	(void)opened;
	return export_out_new(v);
}

static int export_finish(void *state, uint64_t t_last)
{
	(void)t_last;
	return export_out_finish(state);
}

static void export_free(void *state)
{
	export_out_free(state);
}

const struct btt_output_ops export_output = {
	.name = "export",
	.flags = BTT_OUTPUT_CLOCK | BTT_OUTPUT_BIOS,
	.wanted = export_wanted,
	.new = export_new,
	.finish = export_finish,
	.free = export_free,
};

int export_out_schema(FILE *fp, const char *cluster, const char *shard_db)
{
	struct blk_strbuf sb = BLK_STRBUF_INIT;
	char err[256];

	if (blk_schema_ddl(&sb, cluster, shard_db ? shard_db : "", err, sizeof(err)) < 0) {
		blk_strbuf_release(&sb);
		return error("option '--cluster': %s", err);
	}
	fwrite(sb.buf, 1, sb.len, fp);
	blk_strbuf_release(&sb);
	return 0;
}
