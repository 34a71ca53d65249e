// SPDX-License-Identifier: GPL-2.0
/*
 * The export tables: their columns (stated once, here), the values of a row, the two row
 * encoders and the DDL.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk-export/schema.h"
#include "export-int.h"

#define S BLK_COL_STRING
#define U32 BLK_COL_UINT32
#define I32 BLK_COL_INT32
#define U64 BLK_COL_UINT64

/*
 * The doc strings end up as SQL comments in the DDL: they hold no semicolon and no quote
 * (clickhouse-client --multiquery splits at semicolons), which a unit test checks.
 */
static const struct blk_column io_cols[BLK_IO_NCOLS] = {
	[BLK_IO_HOST] = {"host", S, "the traced machine"},
	[BLK_IO_DEVICE] = {"device", S, "device name, or MAJOR,MINOR"},
	[BLK_IO_MAJOR] = {"major", U32, "device number"},
	[BLK_IO_MINOR] = {"minor", U32, ""},
	[BLK_IO_PID] = {"pid", U32, "process that queued the I/O"},
	[BLK_IO_COMM] = {"comm", S, "its name"},
	[BLK_IO_RWBS] = {"rwbs", S, "operation and flags as blkparse prints them (R, W, WS...)"},
	[BLK_IO_SECTOR] = {"sector", U64, "first sector (512 bytes)"},
	[BLK_IO_BYTES] = {"bytes", U32, "size in bytes"},
	[BLK_IO_Q_NS] = {"q_ns", U64, "queued (Q), ns since the epoch, 0 if not seen"},
	[BLK_IO_G_NS] = {"g_ns", U64, "got a request (G), 0 if not seen (a merged I/O)"},
	[BLK_IO_I_NS] = {"i_ns", U64, "inserted into the scheduler (I), 0 if not seen"},
	[BLK_IO_D_NS] = {"d_ns", U64, "issued to the driver (D), 0 if not seen"},
	[BLK_IO_C_NS] = {"c_ns", U64, "completed (C): partitions and orders the table"},
	[BLK_IO_Q2G_NS] = {"q2g_ns", U64, "g_ns - q_ns, 0 unless both were seen"},
	[BLK_IO_G2I_NS] = {"g2i_ns", U64, "i_ns - g_ns, 0 unless both were seen"},
	[BLK_IO_I2D_NS] = {"i2d_ns", U64, "d_ns - i_ns, 0 unless both were seen"},
	[BLK_IO_D2C_NS] = {"d2c_ns", U64, "c_ns - d_ns, 0 unless both were seen"},
	[BLK_IO_Q2C_NS] = {"q2c_ns", U64, "c_ns - q_ns, 0 unless both were seen"},
	[BLK_IO_MERGED] = {"merged", U32,
			   "1 if it shares a device request with other bios, else 0"},
	[BLK_IO_SPLIT] = {"split", U32, "1 if split (X) into several device requests, else 0"},
	[BLK_IO_PIECES] = {"pieces", U32, "device requests (D) it went out in"},
	[BLK_IO_COMPLETIONS] =
		{"completions", U32,
		 "device completions (C) counted on this row: sum() gives the device IOPS"},
	[BLK_IO_REQUEUES] = {"requeues", U32, "requeues (R) of it"},
	[BLK_IO_NO_Q] = {"no_q", U32, "1 if its Q is not in the trace (q_ns 0, pid 0), else 0"},
	[BLK_IO_UNFINISHED] = {"unfinished", U32,
			       "1 if some of it never completed in the trace, else 0"},
	[BLK_IO_REMAP_MAJOR] = {"remap_major", U32, "device it was remapped from, 0 if none"},
	[BLK_IO_REMAP_MINOR] = {"remap_minor", U32, ""},
	[BLK_IO_REMAP_SECTOR] = {"remap_sector", U64, "its sector on that device"},
	[BLK_IO_ERROR] = {"error", I32, "completion error, 0 or -errno"},
	[BLK_IO_CGROUP] = {"cgroup", S, "cgroup charged: its path, else its id, empty if none"},
	[BLK_IO_ORIGIN_PID] = {"origin_pid", U32,
			       "the task it was for: the dirtier of its data, else pid"},
	[BLK_IO_ORIGIN_COMM] = {"origin_comm", S, "its name, or journal or metadata"},
	[BLK_IO_FILE] = {"file", S, "file read or written: path, else ino N, empty if none"},
	[BLK_IO_FILE_OFFSET] = {"file_offset", U64, "where in that file it starts, in bytes"},
	[BLK_IO_EXPORT_ID] = {"export_id", U64, "the export: a hash of host and trace identity"},
	[BLK_IO_BATCH_ID] = {"batch_id", U64, "the INSERT that carried the row"},
};

static const struct blk_column iowait_cols[BLK_IOWAIT_NCOLS] = {
	[BLK_IOWAIT_HOST] = {"host", S, "the traced machine"},
	[BLK_IOWAIT_DEVICE] = {"device", S,
			       "device of its I/O in flight, as the note names it, empty if none"},
	[BLK_IOWAIT_MAJOR] = {"major", U32, "its number, 0 if unknown"},
	[BLK_IOWAIT_MINOR] = {"minor", U32, ""},
	[BLK_IOWAIT_PID] = {"pid", U32, "process (thread group) that waited"},
	[BLK_IOWAIT_TID] = {"tid", U32, "thread that waited"},
	[BLK_IOWAIT_COMM] = {"comm", S, "its name"},
	[BLK_IOWAIT_START_NS] = {"start_ns", U64,
				 "wait began, ns since the epoch: partitions and orders the table"},
	[BLK_IOWAIT_DURATION_NS] = {"duration_ns", U64, "how long it waited"},
	[BLK_IOWAIT_SOURCE] = {"source", S, "how it was captured: module, kprobe or sched"},
	[BLK_IOWAIT_CPU] = {"cpu", U32, "CPU it waited on"},
	[BLK_IOWAIT_WAKER_CPU] = {"waker_cpu", I32, "CPU that woke it, -1 if unknown"},
	[BLK_IOWAIT_EXPORT_ID] = {"export_id", U64,
				  "the export: a hash of host and trace identity"},
	[BLK_IOWAIT_BATCH_ID] = {"batch_id", U64, "the INSERT that carried the row"},
};

static const struct blk_table tables[BLK_TABLE_NR] = {
	/* the columns from cgroup to file_offset came later: not in the batch ids */
	[BLK_TABLE_IO] = {"io", io_cols, BLK_IO_NCOLS, BLK_IO_C_NS, "host, device, c_ns",
			  "one row per bio that completed (btt --export)", BLK_IO_CGROUP},
	[BLK_TABLE_IOWAIT] = {"iowait", iowait_cols, BLK_IOWAIT_NCOLS, BLK_IOWAIT_START_NS,
			      "host, device, start_ns",
			      "one row per I/O wait (blktrace --iowait, btt --export)",
			      BLK_IOWAIT_EXPORT_ID},
};

const struct blk_table *blk_schema_table(enum blk_table_id id)
{
	return (unsigned int)id < BLK_TABLE_NR ? &tables[id] : NULL;
}

const char *blk_schema_col_type_name(enum blk_col_type type)
{
	switch (type) {
	case BLK_COL_STRING:
		return "String";
	case BLK_COL_UINT32:
		return "UInt32";
	case BLK_COL_INT32:
		return "Int32";
	case BLK_COL_UINT64:
		return "UInt64";
	}
	return "?";
}

static int set_str_max(union blk_value *v, const char *s, const char *what, size_t max, char *err,
		       size_t errlen)
{
	size_t n = s ? strlen(s) : 0;

	if (n > max) {
		snprintf(err, errlen, "%s '%.32s...' is longer than %zu bytes", what, s, max);
		return -EINVAL;
	}
	v->s.p = s ? s : "";
	v->s.len = n;
	return 0;
}

static int set_str(union blk_value *v, const char *s, const char *what, char *err, size_t errlen)
{
	return set_str_max(v, s, what, BLK_ROW_STR_MAX, err, errlen);
}

int blk_schema_io_values(const struct blk_io_row *r, const char *host, uint64_t export_id,
			 uint64_t batch_id, union blk_value *v, char *err, size_t errlen)
{
	int ret;

	if ((ret = set_str(&v[BLK_IO_HOST], host, "host name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IO_DEVICE], r->device, "device name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IO_COMM], r->comm, "process name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IO_RWBS], r->rwbs, "RWBS", err, errlen)) ||
	    (ret = set_str_max(&v[BLK_IO_CGROUP], r->cgroup, "cgroup path", BLK_ROW_PATH_MAX, err,
			       errlen)) ||
	    (ret = set_str(&v[BLK_IO_ORIGIN_COMM], r->origin_comm, "origin name", err, errlen)) ||
	    (ret = set_str_max(&v[BLK_IO_FILE], r->file, "file path", BLK_ROW_PATH_MAX, err,
			       errlen)))
		return ret;
	v[BLK_IO_MAJOR].u = r->major;
	v[BLK_IO_MINOR].u = r->minor;
	v[BLK_IO_PID].u = r->pid;
	v[BLK_IO_SECTOR].u = r->sector;
	v[BLK_IO_BYTES].u = r->bytes;
	v[BLK_IO_Q_NS].u = r->q_ns;
	v[BLK_IO_G_NS].u = r->g_ns;
	v[BLK_IO_I_NS].u = r->i_ns;
	v[BLK_IO_D_NS].u = r->d_ns;
	v[BLK_IO_C_NS].u = r->c_ns;
	v[BLK_IO_Q2G_NS].u = blk_interval_ns(r->q_ns, r->g_ns);
	v[BLK_IO_G2I_NS].u = blk_interval_ns(r->g_ns, r->i_ns);
	v[BLK_IO_I2D_NS].u = blk_interval_ns(r->i_ns, r->d_ns);
	v[BLK_IO_D2C_NS].u = blk_interval_ns(r->d_ns, r->c_ns);
	v[BLK_IO_Q2C_NS].u = blk_interval_ns(r->q_ns, r->c_ns);
	v[BLK_IO_MERGED].u = r->merged;
	v[BLK_IO_SPLIT].u = r->split;
	v[BLK_IO_PIECES].u = r->pieces;
	v[BLK_IO_COMPLETIONS].u = r->completions;
	v[BLK_IO_REQUEUES].u = r->requeues;
	v[BLK_IO_NO_Q].u = r->no_q;
	v[BLK_IO_UNFINISHED].u = r->unfinished;
	v[BLK_IO_REMAP_MAJOR].u = r->remap_major;
	v[BLK_IO_REMAP_MINOR].u = r->remap_minor;
	v[BLK_IO_REMAP_SECTOR].u = r->remap_sector;
	v[BLK_IO_ERROR].i = r->error;
	v[BLK_IO_ORIGIN_PID].u = r->origin_pid;
	v[BLK_IO_FILE_OFFSET].u = r->file_offset;
	v[BLK_IO_EXPORT_ID].u = export_id;
	v[BLK_IO_BATCH_ID].u = batch_id;
	return 0;
}

int blk_schema_iowait_values(const struct blk_iowait_row *r, const char *host, uint64_t export_id,
			     uint64_t batch_id, union blk_value *v, char *err, size_t errlen)
{
	int ret;

	if ((ret = set_str(&v[BLK_IOWAIT_HOST], host, "host name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IOWAIT_DEVICE], r->device, "device name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IOWAIT_COMM], r->comm, "process name", err, errlen)) ||
	    (ret = set_str(&v[BLK_IOWAIT_SOURCE], r->source, "source", err, errlen)))
		return ret;
	v[BLK_IOWAIT_MAJOR].u = r->major;
	v[BLK_IOWAIT_MINOR].u = r->minor;
	v[BLK_IOWAIT_PID].u = r->pid;
	v[BLK_IOWAIT_TID].u = r->tid;
	v[BLK_IOWAIT_START_NS].u = r->start_ns;
	v[BLK_IOWAIT_DURATION_NS].u = r->duration_ns;
	v[BLK_IOWAIT_CPU].u = r->cpu;
	v[BLK_IOWAIT_WAKER_CPU].i = r->waker_cpu;
	v[BLK_IOWAIT_EXPORT_ID].u = export_id;
	v[BLK_IOWAIT_BATCH_ID].u = batch_id;
	return 0;
}

static inline char *put_le32(char *p, uint64_t v)
{
	uint32_t le = htole32((uint32_t)v);

	memcpy(p, &le, 4);
	return p + 4;
}

static inline char *put_le64(char *p, uint64_t v)
{
	uint64_t le = htole64(v);

	memcpy(p, &le, 8);
	return p + 8;
}

/* a LEB128 length at @p; past it */
static char *put_len(char *p, size_t n)
{
	do {
		*p++ = (char)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
		n >>= 7;
	} while (n);
	return p;
}

/* The row's size is known before it is written: one reserve, then plain stores. */
void blk_schema_row_rowbinary(struct blk_strbuf *sb, const struct blk_table *t,
			      const union blk_value *v)
{
	size_t size = 0;
	char *p;

	for (unsigned int c = 0; c < t->ncols; c++)
		size += t->cols[c].type == BLK_COL_STRING ? 10 + v[c].s.len : 8;
	p = blk_strbuf_reserve(sb, size);
	for (unsigned int c = 0; c < t->ncols; c++) {
		switch (t->cols[c].type) {
		case BLK_COL_STRING:
			p = put_len(p, v[c].s.len);
			memcpy(p, v[c].s.p, v[c].s.len);
			p += v[c].s.len;
			break;
		case BLK_COL_UINT32:
		case BLK_COL_INT32:
			p = put_le32(p, v[c].u);
			break;
		case BLK_COL_UINT64:
			p = put_le64(p, v[c].u);
			break;
		}
	}
	sb->len = (size_t)(p - sb->buf);
}

/* a LEB128 length at *@p (before @end) into *@n; 0, or -1 when it does not fit */
static int get_len(const unsigned char **p, const unsigned char *end, size_t *n)
{
	unsigned int shift = 0;

	*n = 0;
	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		*n |= (size_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* the bytes of a LEB128 length */
static size_t len_size(size_t n)
{
	size_t k = 1;

	while (n >>= 7)
		k++;
	return k;
}

/* a string as a LEB128 length and its bytes at @p; past it */
static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	p = put_len(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* the bytes of the RowBinary value of @type at @p (before @end), or 0 when cut short */
static size_t value_size(const unsigned char *p, const unsigned char *end, enum blk_col_type type)
{
	const unsigned char *q = p;
	size_t n;

	if (type != BLK_COL_STRING)
		n = type == BLK_COL_UINT64 ? 8 : 4;
	else if (get_len(&q, end, &n))
		return 0;
	return (size_t)(end - q) < n ? 0 : (size_t)(q - p) + n;
}

/* the bytes of column @c's name and type in a Native block */
static size_t col_header(const struct blk_column *c)
{
	size_t a = strlen(c->name), b = strlen(blk_schema_col_type_name(c->type));

	return len_size(a) + a + len_size(b) + b;
}

int blk_schema_rowbinary_to_native(struct blk_strbuf *sb, const struct blk_table *t,
				   const void *rows, size_t len, uint64_t nrows)
{
	const unsigned char *p, *end = (const unsigned char *)rows + len;
	size_t size[BLK_ROW_MAX_COLS] = {0}, total;
	char *out, *cur[BLK_ROW_MAX_COLS];

	/* the size of each column's values: fixed, or its strings' (a first pass) */
	p = rows;
	for (uint64_t r = 0; r < nrows; r++)
		for (unsigned int c = 0; c < t->ncols; c++) {
			size_t w = value_size(p, end, t->cols[c].type);

			if (!w)
				return -EINVAL;
			p += w;
			size[c] += w;
		}
	if (p != end)
		return -EINVAL;
	/* the block: its column and row counts, then each column's name, type and values */
	total = len_size(t->ncols) + len_size(nrows);
	for (unsigned int c = 0; c < t->ncols; c++)
		total += col_header(&t->cols[c]) + size[c];
	out = blk_strbuf_reserve(sb, total);
	out = put_len(put_len(out, t->ncols), nrows);
	for (unsigned int c = 0; c < t->ncols; c++) {
		out = put_str(out, t->cols[c].name);
		out = put_str(out, blk_schema_col_type_name(t->cols[c].type));
		cur[c] = out;
		out += size[c];
	}
	/* the values, each to its column (the second pass) */
	p = rows;
	for (uint64_t r = 0; r < nrows; r++)
		for (unsigned int c = 0; c < t->ncols; c++) {
			size_t w = value_size(p, end, t->cols[c].type);

			memcpy(cur[c], p, w);
			cur[c] += w;
			p += w;
		}
	sb->len += total;
	return 0;
}

static void tsv_str(struct blk_strbuf *sb, const char *s, size_t n)
{
	char *p = blk_strbuf_reserve(sb, 2 * n);

	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\\':
			*p++ = '\\';
			*p++ = '\\';
			break;
		case '\t':
			*p++ = '\\';
			*p++ = 't';
			break;
		case '\n':
			*p++ = '\\';
			*p++ = 'n';
			break;
		case '\r':
			*p++ = '\\';
			*p++ = 'r';
			break;
		default:
			*p++ = s[i];
		}
	}
	sb->len = (size_t)(p - sb->buf);
}

void blk_schema_row_tsv(struct blk_strbuf *sb, const struct blk_table *t, const union blk_value *v)
{
	for (unsigned int c = 0; c < t->ncols; c++) {
		if (c)
			blk_strbuf_addch(sb, '\t');
		switch (t->cols[c].type) {
		case BLK_COL_STRING:
			tsv_str(sb, v[c].s.p, v[c].s.len);
			break;
		case BLK_COL_INT32:
			blk_strbuf_add_s64(sb, v[c].i, 0, 0);
			break;
		default:
			blk_strbuf_add_u64(sb, v[c].u, 0, 0);
		}
	}
	blk_strbuf_addch(sb, '\n');
}

void blk_schema_table_names(struct blk_strbuf *sb, const struct blk_table *t, const char *sep)
{
	for (unsigned int c = 0; c < t->ncols; c++) {
		if (c)
			blk_strbuf_addstr(sb, sep);
		blk_strbuf_addstr(sb, t->cols[c].name);
	}
}

int blk_schema_ident_ok(const char *s)
{
	size_t n = 0;

	if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (; s[n]; n++) {
		char c = s[n];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return n <= 64;
}

static void ddl_table(struct blk_strbuf *sb, const struct blk_table *t)
{
	blk_strbuf_addf(sb, "-- %s\nCREATE TABLE IF NOT EXISTS %s\n(\n", t->doc, t->name);
	for (unsigned int c = 0; c < t->ncols; c++) {
		const struct blk_column *col = &t->cols[c];

		blk_strbuf_addf(sb, "    %s %s%s", col->name, blk_schema_col_type_name(col->type),
				c + 1 < t->ncols ? "," : "");
		if (col->doc[0])
			blk_strbuf_addf(sb, " -- %s", col->doc);
		blk_strbuf_addch(sb, '\n');
	}
	blk_strbuf_addf(sb,
			")\nENGINE = MergeTree\nPARTITION BY intDiv(%s, %llu)\nORDER BY (%s);\n\n",
			t->cols[t->time_col].name, (unsigned long long)BLK_DAY_NS, t->order_by);
}

int blk_schema_ddl(struct blk_strbuf *sb, const char *cluster, const char *shard_db, char *err,
		   size_t errlen)
{
	if (cluster && !blk_schema_ident_ok(cluster)) {
		snprintf(err, errlen,
			 "cluster name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
			 cluster);
		return -EINVAL;
	}
	if (cluster && (!shard_db || (shard_db[0] && !blk_schema_ident_ok(shard_db)))) {
		snprintf(err, errlen,
			 "database name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
			 shard_db ? shard_db : "(none)");
		return -EINVAL;
	}
	blk_strbuf_addstr(
		sb,
		"-- blktrace-ng fleet export (doc/clickhouse.md), for\n"
		"-- clickhouse-client --database DB --multiquery (ClickHouse 18.16 or later).\n"
		"-- Times are UInt64 nanoseconds since the epoch (UTC), 0 when a stage did not\n"
		"-- happen (no Nullable columns). Partitions are UTC days: the time column\n"
		"-- divided by 86400e9, the number of days since 1970-01-01.\n\n");
	for (int i = 0; i < BLK_TABLE_NR; i++)
		ddl_table(sb, &tables[i]);
	if (!cluster)
		return 0;
	blk_strbuf_addf(
		sb,
		"-- Distributed tables over cluster %s, sharded by batch_id: each batch is one\n"
		"-- INSERT into one shard. Insert with insert_distributed_sync=1.\n",
		cluster);
	for (int i = 0; i < BLK_TABLE_NR; i++)
		blk_strbuf_addf(sb,
				"CREATE TABLE IF NOT EXISTS %s_all AS %s\n"
				"ENGINE = Distributed(%s, '%s', %s, batch_id);\n%s",
				tables[i].name, tables[i].name, cluster, shard_db, tables[i].name,
				i + 1 < BLK_TABLE_NR ? "\n" : "");
	return 0;
}
