/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet export: rows of the tables of schema.h, in batches, to a destination.
 *
 *   clickhouse://[USER@]HOST[:PORT]/DATABASE[?distributed=1]
 *   clickhouses://[USER@]HOST[:PORT]/DATABASE[?distributed=1]
 *       ClickHouse's HTTP interface (PORT 8123 by default), or its HTTPS interface (PORT
 *       8443 by default; the server's certificate checked unless the options say insecure),
 *       on one connection kept open (libcurl); the user and the password (the options', never
 *       in the destination) by basic authentication, never in the URL. Each batch is one
 *       INSERT INTO DATABASE.io (columns) FORMAT Native: one block, its rows encoded as
 *       RowBinary while the batch fills and turned into columns by the sender; gzip-compressed
 *       unless the gzip level is 0 (the default to a loopback host). With
 *       distributed=1 the rows go to io_all and iowait_all (schema.h's Distributed tables)
 *       with insert_distributed_sync=1.
 *   tsv:DIR
 *       DIR/io.tsv and DIR/iowait.tsv (DIR is created if missing), each with a header line
 *       of column names, in ClickHouse's TabSeparated escaping; written under temporary
 *       names and renamed into place by blk_export_close().
 *
 * Batches. Rows are encoded as they come into one batch per table; a batch ends at
 * BLK_EXPORT_BATCH_ROWS rows or BLK_EXPORT_BATCH_BYTES encoded bytes (or the options'
 * limits), and before a row of another UTC day, so that a batch is one part of one
 * partition of a MergeTree table: one INSERT that the server applies whole or not at all.
 * Memory is one batch of encoded rows per table and the body of the batch being sent, its
 * Native copy (and, compressed, that copy compressed): at most 3 x the batch bytes, 4 x
 * compressed; pipelined, one more batch of rows), whatever the trace length.
 *
 * No row twice. Each row carries the export's id (a hash of the host label and the trace
 * identity, see blk_export_opts) and its batch's id (a hash of the export id, the table, the
 * batch limits, the batch's number, and its first row's number and values). When an INSERT's outcome is unknown (the connection broke after the
 * request was sent, the answer timed out), the exporter waits until no query with the
 * batch's query id runs on the server any more, asks how many rows with that batch id the
 * server holds, and sends the batch again only if there are none. A new export asks the same
 * for its first batches until one is absent, so that an export run again skips what an
 * earlier run stored. doc/clickhouse.md says why this is exact, and where it is not.
 */
#ifndef BLK_EXPORT_H
#define BLK_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "blk-export/schema.h"

#define BLK_EXPORT_BATCH_ROWS 65536u
#define BLK_EXPORT_BATCH_BYTES (16u << 20)
/* A batch is one block of the server's INSERT: below its max_insert_block_size (1048576). */
#define BLK_EXPORT_MAX_BATCH_ROWS 1000000u
#define BLK_EXPORT_MAX_BATCH_BYTES (256u << 20)
#define BLK_EXPORT_CLICKHOUSE_PORT 8123
#define BLK_EXPORT_CLICKHOUSES_PORT 8443

enum blk_export_kind {
	BLK_EXPORT_CLICKHOUSE,
	BLK_EXPORT_TSV,
};

/* A parsed destination. */
struct blk_export_dest {
	enum blk_export_kind kind;
	char host[256]; /* clickhouse: name or address (IPv6 without brackets) */
	int port;
	char database[65];
	int tls; /* clickhouses:// */
	char user[65]; /* "" for the server's default user */
	int distributed; /* insert into io_all/iowait_all, insert_distributed_sync=1 */
	char dir[4096]; /* tsv */
};

/*
 * blk_export_dest_parse() - parse @s (the forms above) into @d
 * Return: 0, or -EINVAL with a message in @err that quotes the bad part (a password in the
 * destination is refused, and not quoted).
 */
int blk_export_dest_parse(const char *s, struct blk_export_dest *d, char *err, size_t errlen);

struct blk_export_opts {
	const char *host; /* the rows' host label (required): at most BLK_ROW_STR_MAX bytes */
	/*
	 * The trace's identity (required): the same string for every export of the same trace
	 * (so that an export run again finds what it stored), another for another trace; e.g. the
	 * wall clock of its start and its devices. Copied.
	 */
	const char *trace_id;
	unsigned int batch_rows; /* 0: BLK_EXPORT_BATCH_ROWS */
	size_t batch_bytes; /* 0: BLK_EXPORT_BATCH_BYTES */
	int gzip_level; /* -1: 0 to loopback, else 1 (fast); 0: not compressed; up to 9 */
	unsigned int connect_ms; /* 0: 5000 */
	unsigned int timeout_ms; /* longest silence of the server; 0: 60000 */
	unsigned int retries; /* attempts after the first, on connection loss; 0: 8 */
	unsigned int backoff_ms; /* first pause between attempts, doubled each time; 0: 200 */
	unsigned int backoff_max_ms; /* 0: 5000 */
	/*
	 * ClickHouse: 0, each batch is stored before the call that ends it returns; 1, batches
	 * are compressed and stored by a thread of the export, in order, one at a time, while
	 * the caller fills the next (a call that ends a batch while the one before is being
	 * stored waits for it): the error of a batch comes back from a later call (the one that ends the
	 * next batch, or blk_export_flush() and blk_export_close(), which wait for them all).
	 * No batch is sent after one that failed. tsv: no effect.
	 */
	int pipelined;
	/*
	 * ClickHouse's password (copied), or NULL; @password_file, if set, names a file that
	 * holds it (its first line) and that only its owner may read (else -EACCES). A password
	 * over plain clickhouse:// to a host that is not loopback is refused (-EINVAL) unless
	 * @insecure.
	 */
	const char *password;
	const char *password_file;
	const char *ca_file; /* clickhouses://: the CAs to trust (PEM); NULL: the system's */
	int insecure; /* clickhouses://: no certificate check; clickhouse://: a password allowed */
};
#define BLK_EXPORT_OPTS_INIT     \
	{                        \
		.gzip_level = -1 \
	}

struct blk_export_stats {
	uint64_t rows[BLK_TABLE_NR]; /* rows taken */
	uint64_t batches[BLK_TABLE_NR]; /* batches ended: sent, or found stored */
	uint64_t batches_present; /* batches found already stored, not sent again */
	uint64_t rows_present; /* their rows */
	uint64_t retries; /* attempts after a connection loss or a busy server */
	uint64_t checks; /* questions to the server whether a batch is stored */
	uint64_t bytes_raw; /* encoded rows */
	uint64_t bytes_sent; /* request bodies as sent (compressed), counting re-sends */
};

struct blk_export;

/*
 * blk_export_open() - open the destination @dest for an export
 * For ClickHouse this checks that the database's tables exist with the columns of schema.h
 * (types included), so that a wrong schema fails here and not in the middle of a trace.
 * Return: a handle for blk_export_close() (or blk_export_discard()), or NULL with errno set
 * and a message in @err: EINVAL (bad @dest or options), ENOENT (no such table or database),
 * EPROTO (the table's columns differ), ECONNREFUSED, ETIMEDOUT, EADDRNOTAVAIL and the other
 * errors of blk_http_post() (the server cannot be reached), EACCES (the server refused our
 * user, or a password file that others than its owner may read), EKEYREJECTED (the server's
 * certificate is not trusted), ENOTDIR, EACCES... (tsv: the directory or files cannot be made).
 */
struct blk_export *blk_export_open(const char *dest, const struct blk_export_opts *o, char *err,
				   size_t errlen);

/*
 * blk_export_io() - add one io row; blk_export_iowait() - one iowait row
 * The row is encoded at once (its strings are not kept). A batch that fills is sent before
 * the call returns, with the retries of the options (pipelined: handed to the sender).
 * Return: 0, or -errno with a message in @err: -EINVAL (a string too long), -EPROTO (the
 * server rejected an INSERT: its status and its own message), -ENOENT (the table went away),
 * -EACCES (a read-only user), the connection errors of blk_http_post() once the retries are
 * spent, -EEXIST (the server holds part of a batch, or rows of this export in other
 * batches: an earlier export of the same trace with other batch limits), -EIO (tsv: write
 * failed). After an error, every later call returns it again.
 */
int blk_export_io(struct blk_export *x, const struct blk_io_row *r, char *err, size_t errlen);
int blk_export_iowait(struct blk_export *x, const struct blk_iowait_row *r, char *err,
		      size_t errlen);

/* Send the batches begun (not needed before blk_export_close()). Return as above. */
int blk_export_flush(struct blk_export *x, char *err, size_t errlen);

/* The counts so far. */
void blk_export_get_stats(const struct blk_export *x, struct blk_export_stats *s);

/*
 * The export id of @x (the export_id column of its rows): a hash of the host label and the
 * trace identity, the same for every export of the same trace from the same host.
 */
uint64_t blk_export_id(const struct blk_export *x);

/*
 * blk_export_close() - flush, finish (tsv: rename the files into place) and free @x
 * @st: NULL, or where to put the final counts.
 * Return: 0, or the first error (message in @err); @x is freed in every case.
 */
int blk_export_close(struct blk_export *x, struct blk_export_stats *st, char *err, size_t errlen);

/* Free @x without sending what is left (tsv: the temporary files are removed). NULL is fine. */
void blk_export_discard(struct blk_export *x);

#endif /* BLK_EXPORT_H */
