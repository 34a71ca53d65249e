/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the export: the handle, shared by export.c (destinations, batches, the TSV sink)
 * and clickhouse.c (the ClickHouse sink), which export.c calls and which calls nothing back.
 */
#ifndef BLK_LIB_EXPORT_INT_H
#define BLK_LIB_EXPORT_INT_H

#include <stdint.h>

#include "blk-export/export.h"
#include "blk-export/schema.h"
#include "blk/strbuf.h"

#ifndef __hidden
#define __hidden __attribute__((visibility("hidden")))
#endif

/* The batch being filled for one table; the struct lives as long as the export. */
struct export_batch {
	enum blk_table_id table;
	const struct blk_table *t;
	struct blk_strbuf raw; /* its rows, encoded */
	uint64_t nrows;
	uint64_t no; /* its number in the export: 0, 1, ... */
	uint64_t first_row; /* the number of its first row in the table's rows of the export */
	uint64_t id; /* its batch id (export.c, batch_id_of()) */
	uint64_t day; /* the UTC day of its rows */
	uint64_t tmin, tmax; /* the range of its rows' time column */
};

/*
 * blk_schema_rowbinary_to_native() - append @nrows rows of table @t, @len bytes of RowBinary
 * at @rows, as one block of ClickHouse's Native format: the column and row counts, then each
 * column's name, type and values. The server reads a column's values at once, where it takes
 * RowBinary value by value (a third less of its time for the same rows). Return 0, or -EINVAL
 * when @rows are not @nrows rows of @t.
 */
__hidden int blk_schema_rowbinary_to_native(struct blk_strbuf *sb, const struct blk_table *t,
					    const void *rows, size_t len, uint64_t nrows);

struct ch_sender; /* clickhouse.c: the thread that stores the batches */
struct blk_http; /* http.h */

struct blk_export {
	struct blk_export_dest d;
	struct blk_export_opts o; /* with defaults filled in; strings are ours below */
	char *host, *trace_id, *password, *ca_file;
	uint64_t export_id;
	struct export_batch b[BLK_TABLE_NR];
	struct blk_export_stats st;
	int error; /* sticky: the first error, -errno */
	char errmsg[640];
	/* tsv */
	int fd[BLK_TABLE_NR];
	char *path[BLK_TABLE_NR], *tmp[BLK_TABLE_NR];
	/* clickhouse */
	struct ch_sender *snd;
	struct blk_http *http; /* the connection: the caller's until the sender starts, then its */
	char peer[300]; /* "host:port", for messages */
};

/*
 * The ClickHouse sink (clickhouse.c). blk_export_ch_open() checks the tables and starts the
 * sender, a thread that compresses and stores the batches handed to it, one after the other in
 * the order given (sends each, or finds it stored already), while the caller fills the next
 * ones. blk_export_ch_submit() hands @b over (its rows move to the sender; @b->raw comes back
 * empty), once the sender is done with the batch before; blk_export_ch_drain() waits until
 * every batch handed over is stored. Both return 0, or the sender's error (-errno, message in
 * @err): after its first error the sender stores nothing more, and every later call returns
 * that error. blk_export_ch_stats() adds the sender's counts (batches, batches_present,
 * rows_present, retries, checks, bytes_sent) to @st. blk_export_ch_stop() ends the sender (with
 * @abandon, a batch not yet taken is dropped and no attempt is retried) and frees it, and
 * closes the connection; NULL x->snd and x->http are fine.
 */
__hidden int blk_export_ch_open(struct blk_export *x, char *err, size_t errlen);
__hidden int blk_export_ch_submit(struct blk_export *x, struct export_batch *b, char *err,
				  size_t errlen);
__hidden int blk_export_ch_drain(struct blk_export *x, char *err, size_t errlen);
__hidden void blk_export_ch_stats(const struct blk_export *x, struct blk_export_stats *st);
__hidden void blk_export_ch_stop(struct blk_export *x, int abandon);

#endif /* BLK_LIB_EXPORT_INT_H */
