/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -I: iostat-like statistics fed by the I/O model.
 */
#ifndef BTT_IOSTAT_H
#define BTT_IOSTAT_H

#include "btt.h"

void iostat_init(void);
/* called with every event's time: prints a block when an interval has passed */
void iostat_check_time(uint64_t stamp);
void iostat_getrq(struct dev *dip, uint64_t time);
void iostat_merge(struct dev *dip, int rd);
void iostat_issue(struct dev *dip, uint64_t time, int rd, uint32_t sectors);
void iostat_complete(struct dev *dip, const struct qio *q, uint64_t time);
/* the cumulative block, stamped with the time of the last event */
void iostat_finish(uint64_t last_time);

#endif /* BTT_IOSTAT_H */
