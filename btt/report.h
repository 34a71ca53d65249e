/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The classic report (All Devices averages, per-device overhead, merges, seeks, plugs,
 * active requests and live periods; with -A the per-process and per-device tables and the
 * Q2D histogram; with -X the .xvg file) and the range data that follows it.
 */
#ifndef BTT_REPORT_H
#define BTT_REPORT_H

#include <stdio.h>

struct btt;

/* the report of @b's statistics on @ofp (after stats_finish() and devs_sort_procs()) */
void report_print(const struct btt *b, FILE *ofp);
/* the activity ranges (the .dat data) */
void ranges_print(const struct btt *b, FILE *ofp);

#endif /* BTT_REPORT_H */
