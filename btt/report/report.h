/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The classic report (All Devices averages, per-device overhead, merges, seeks, plugs,
 * active requests and live periods; with -A the per-process and per-device tables and the
 * Q2D histogram; with -X the .xvg file) and the range data that follows it.
 */
#ifndef BTT_REPORT_H
#define BTT_REPORT_H

struct btt_output_ops;

/*
 * The classic report (output.h): its statistics (statistics.c) subscribed to the model, the
 * report printed (after every output's input_end()), -m's files at finish; its state,
 * for btt_view_output(v, "report"), is the struct stats
 */
extern const struct btt_output_ops report_output;
/* the activity ranges (the .dat data): on stdout after the report, or in NAME.dat */
extern const struct btt_output_ops ranges_output;

#endif /* BTT_REPORT_H */
