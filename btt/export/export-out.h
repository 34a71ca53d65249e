/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btt --export=DEST: one row per completed I/O of the I/O model into the fleet export
 * (include/blk-export/export.h: ClickHouse or tsv:DIR), with the stage times on the wall clock of
 * the trace's TN_TIMESTAMP note (lib/wallclock.c, as blkparse's %z). doc/clickhouse.md has
 * the tables and the queries that give btt's report back.
 */
#ifndef BTT_EXPORT_OUT_H
#define BTT_EXPORT_OUT_H

#include <stdio.h>

#include "model/iomodel.h"

struct btt_output_ops;
struct btt_view;
struct export_out;

/*
 * export_out_new() - a subscriber to @v->model for --export (NULL without it); its rows
 * are dated by @v->clock (btt_run() makes it for an output with BTT_OUTPUT_CLOCK).
 * Exits with one message when the destination is bad.
 */
struct export_out *export_out_new(const struct btt_view *v);

/*
 * export_out_finish() - after the trace: the rows left are sent and the destination
 * finished (tsv: the files renamed into place); one line of counts on stderr.
 * Return: 0, or -1 when the export failed (its message and hint printed, the rows not
 * stored dropped).
 */
int export_out_finish(struct export_out *xo);

/* Free @xo (NULL allowed); an export not finished is discarded. */
void export_out_free(struct export_out *xo);
/* the output (output.h): export_out_new(), _finish(), _free() for --export */
extern const struct btt_output_ops export_output;

/*
 * export_out_schema() - --clickhouse-schema: the DDL (blk_schema_ddl()) on @fp, with the
 * Distributed tables over @cluster (NULL: none) whose shards hold the tables in @shard_db.
 * Return: 0, or -1 after printing an error.
 */
int export_out_schema(FILE *fp, const char *cluster, const char *shard_db);

#endif /* BTT_EXPORT_OUT_H */
