/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -I FILE: iostat-like statistics, one block of rows per -S seconds of trace time and a
 * cumulative block at the end, computed the way btt 2.09 computes them.
 */
#ifndef BTT_IOSTAT_H
#define BTT_IOSTAT_H

#include <stdint.h>

struct btt;
struct iostat;

/* a subscriber to @b->model for -I (NULL without it); its file is created now */
struct iostat *iostat_new(struct btt *b);
/* the cumulative block, stamped with @last_time (of the last event taken); file closed */
void iostat_finish(struct iostat *s, uint64_t last_time);
void iostat_free(struct iostat *s);

#endif /* BTT_IOSTAT_H */
