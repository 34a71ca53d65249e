/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tables of the fleet export (btt --export, doc/clickhouse.md): `io`, one row per bio
 * that completed, and `iowait`, one row per I/O wait. Each table's columns are stated once, in the table
 * below (name, type, meaning); the DDL printer, the column list of an INSERT, the TSV header
 * and both row encoders (ClickHouse's RowBinary, TSV) all walk that one list.
 *
 * Times are UInt64 nanoseconds since the epoch (UTC). No column is Nullable: a stage that did
 * not happen has time 0, and an interval with a missing end has 0 (so does one whose later
 * stage precedes the earlier one, which btt's model never produces).
 */
#ifndef BLK_SCHEMA_H
#define BLK_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "blk/strbuf.h"

enum blk_col_type {
	BLK_COL_STRING,
	BLK_COL_UINT32,
	BLK_COL_INT32,
	BLK_COL_UINT64,
};

struct blk_column {
	const char *name;
	enum blk_col_type type;
	const char *doc; /* one line, printed as a comment in the DDL */
};

enum blk_table_id {
	BLK_TABLE_IO,
	BLK_TABLE_IOWAIT,
	BLK_TABLE_NR,
};

struct blk_table {
	const char *name; /* "io", "iowait" */
	const struct blk_column *cols;
	unsigned int ncols;
	unsigned int time_col; /* the column that partitions (by UTC day) and ends the order */
	const char *order_by; /* the sorting key, e.g. "host, device, c_ns" */
	const char *doc;
	/*
	 * the leading columns a batch's id hashes (export.c): those of the schema before the
	 * columns added since, so that a trace exported before them makes the same ids again
	 */
	unsigned int id_cols;
};

/* Nanoseconds in a day: a row's partition is its time column divided by this. */
#define BLK_DAY_NS 86400000000000ULL

/* The longest string a row may carry in a column (host and device names, comm, RWBS). */
#define BLK_ROW_STR_MAX 255
/* the longest path (the cgroup and file columns): a tracer's notes hold at most 4000 */
#define BLK_ROW_PATH_MAX 4096

/* Columns of io, in table (and encoding) order. */
enum blk_io_col {
	BLK_IO_HOST,
	BLK_IO_DEVICE,
	BLK_IO_MAJOR,
	BLK_IO_MINOR,
	BLK_IO_PID,
	BLK_IO_COMM,
	BLK_IO_RWBS,
	BLK_IO_SECTOR,
	BLK_IO_BYTES,
	BLK_IO_Q_NS,
	BLK_IO_G_NS,
	BLK_IO_I_NS,
	BLK_IO_D_NS,
	BLK_IO_C_NS,
	BLK_IO_Q2G_NS,
	BLK_IO_G2I_NS,
	BLK_IO_I2D_NS,
	BLK_IO_D2C_NS,
	BLK_IO_Q2C_NS,
	BLK_IO_MERGED,
	BLK_IO_SPLIT,
	BLK_IO_PIECES,
	BLK_IO_COMPLETIONS,
	BLK_IO_REQUEUES,
	BLK_IO_NO_Q,
	BLK_IO_UNFINISHED,
	BLK_IO_REMAP_MAJOR,
	BLK_IO_REMAP_MINOR,
	BLK_IO_REMAP_SECTOR,
	BLK_IO_ERROR,
	BLK_IO_CGROUP,
	BLK_IO_ORIGIN_PID,
	BLK_IO_ORIGIN_COMM,
	BLK_IO_FILE,
	BLK_IO_FILE_OFFSET,
	BLK_IO_EXPORT_ID,
	BLK_IO_BATCH_ID,
	BLK_IO_NCOLS,
};

/* Columns of iowait, in table (and encoding) order. */
enum blk_iowait_col {
	BLK_IOWAIT_HOST,
	BLK_IOWAIT_DEVICE,
	BLK_IOWAIT_MAJOR,
	BLK_IOWAIT_MINOR,
	BLK_IOWAIT_PID,
	BLK_IOWAIT_TID,
	BLK_IOWAIT_COMM,
	BLK_IOWAIT_START_NS,
	BLK_IOWAIT_DURATION_NS,
	BLK_IOWAIT_SOURCE,
	BLK_IOWAIT_CPU,
	BLK_IOWAIT_WAKER_CPU,
	BLK_IOWAIT_EXPORT_ID,
	BLK_IOWAIT_BATCH_ID,
	BLK_IOWAIT_NCOLS,
};

#define BLK_ROW_MAX_COLS BLK_IO_NCOLS

/* One value of a row: .u for unsigned, .i for signed, .s for strings (not NUL-terminated). */
union blk_value {
	uint64_t u;
	int64_t i;
	struct {
		const char *p;
		size_t len;
	} s;
};

/*
 * One bio, as btt's model of every bio knows it (btt/model/bios.h). Strings are borrowed for
 * the call only; NULL is the empty string. Times are ns since the epoch, 0 for a stage that
 * did not happen; for a split bio, the first G, I and D of its pieces and the last C.
 */
struct blk_io_row {
	const char *device; /* name ("sda"), or "MAJOR,MINOR" when it has none */
	uint32_t major, minor;
	uint32_t pid; /* the process that queued it */
	const char *comm; /* that process's name */
	const char *rwbs; /* as blkparse prints it: "R", "WS", "WFSM"... */
	uint64_t sector;
	uint32_t bytes;
	uint64_t q_ns, g_ns, i_ns, d_ns, c_ns;
	uint32_t merged; /* 1: it shares a device request with other bios (M, F) */
	uint32_t split; /* 1: split (X) */
	uint32_t pieces; /* the device requests (D) it went out in */
	uint32_t completions; /* C events counted for it: over the rows, the device's */
	uint32_t requeues; /* R events that gave some of it back */
	uint32_t no_q; /* 1: its Q is not in the trace (made from a D or C) */
	uint32_t unfinished; /* 1: given up before all its sectors completed */
	uint32_t remap_major, remap_minor; /* where it was remapped from (0, 0: not remapped) */
	uint64_t remap_sector;
	int32_t error; /* the completion's error (0, or -errno) */
	/* who and what it was for (blktrace --origin's notes; NULL: "") */
	const char *cgroup; /* its cgroup's path, else its id in decimal; "" if none */
	uint32_t origin_pid; /* the task it was for: the dirtier of its data, else the queuer */
	const char *origin_comm; /* its name; "journal" or "metadata" for those */
	const char *file; /* the file it reads or writes: path, else "ino N"; "" if none */
	uint64_t file_offset; /* where in the file it starts (0 without a file) */
};

/* One I/O wait: a task blocked on I/O (blktrace --iowait). Strings as for blk_io_row. */
struct blk_iowait_row {
	const char *device; /* the device of its I/O in flight, "" if none known (0, 0) */
	uint32_t major, minor;
	uint32_t pid, tid;
	const char *comm;
	uint64_t start_ns, duration_ns;
	const char *source; /* "module", "kprobe" or "sched" */
	uint32_t cpu; /* where it waited */
	int32_t waker_cpu; /* where it was woken, -1 if unknown */
};

/* The description of table @id; NULL if @id is out of range. Static; never freed. */
const struct blk_table *blk_schema_table(enum blk_table_id id);

/*
 * blk_schema_io_values() - the values of one io row, in column order
 * @v: BLK_IO_NCOLS values; its strings point into @r and @host, valid as long as they are.
 * The derived intervals are computed here from the stage times. @export_id and @batch_id
 * identify the export and the batch the row goes in (see export.h).
 * Return: 0, or -EINVAL if a string is longer than BLK_ROW_STR_MAX (message in @err).
 */
int blk_schema_io_values(const struct blk_io_row *r, const char *host, uint64_t export_id,
			 uint64_t batch_id, union blk_value *v, char *err, size_t errlen);

/* The same for an iowait row (@v: BLK_IOWAIT_NCOLS values). */
int blk_schema_iowait_values(const struct blk_iowait_row *r, const char *host, uint64_t export_id,
			     uint64_t batch_id, union blk_value *v, char *err, size_t errlen);

/* The interval from @from to @to, or 0 when either is 0 or @to precedes @from. */
static inline uint64_t blk_interval_ns(uint64_t from, uint64_t to)
{
	return from && to && to >= from ? to - from : 0;
}

/*
 * blk_schema_row_rowbinary() - append one row in ClickHouse's RowBinary format: integers little
 * endian at their width, strings as a LEB128 length and the bytes.
 */
void blk_schema_row_rowbinary(struct blk_strbuf *sb, const struct blk_table *t,
			      const union blk_value *v);

/*
 * blk_schema_row_tsv() - append one row as a TSV line in ClickHouse's TabSeparated escaping:
 * backslash, tab, newline and carriage return in strings become \\, \t, \n and \r; other
 * bytes are written as they are. Integers in decimal.
 */
void blk_schema_row_tsv(struct blk_strbuf *sb, const struct blk_table *t, const union blk_value *v);

/* Append the column names of @t separated by @sep ("\t" for a TSV header, ", " for SQL). */
void blk_schema_table_names(struct blk_strbuf *sb, const struct blk_table *t, const char *sep);

/* The ClickHouse name of a column type ("UInt64"...). */
const char *blk_schema_col_type_name(enum blk_col_type type);

/*
 * blk_schema_ddl() - append the DDL of both tables, with unqualified names, for
 * `clickhouse-client --database DB --multiquery`: MergeTree tables `io` and `iowait`
 * partitioned by UTC day of their time column, ordered by (host, device, time).
 * @cluster: NULL, or the name of a cluster of the servers' configuration: then also the
 *           Distributed tables io_all and iowait_all over it, sharded by batch_id (a batch
 *           goes to one shard whole);
 * @shard_db: the database that holds io and iowait on every shard (needed with @cluster;
 *           "" means each replica's <default_database> of the cluster's configuration).
 * Return: 0, or -EINVAL if a name is not an identifier ([A-Za-z_][A-Za-z0-9_]*), message
 * in @err.
 */
int blk_schema_ddl(struct blk_strbuf *sb, const char *cluster, const char *shard_db, char *err,
		   size_t errlen);

/* Nonzero if @s is a plain SQL identifier: [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes. */
int blk_schema_ident_ok(const char *s);

#endif /* BLK_SCHEMA_H */
