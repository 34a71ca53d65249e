/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hooks from the I/O model into the optional outputs (extras.c): block-number dumps,
 * queue depth, iostat, per-IO dumps, unplug histograms, Q2D histogram, messages.
 */
#ifndef BTT_IOMODEL_H
#define BTT_IOMODEL_H

#include "btt.h"

void extra_new_dev(struct dev *dip);
void extra_queue(struct dev *dip, const struct blk_event *ev);
void extra_getrq(struct dev *dip, const struct blk_event *ev);
void extra_merge(struct dev *dip, const struct blk_event *ev);
void extra_issue(struct dev *dip, const struct blk_event *ev);
void extra_complete(struct dev *dip, const struct blk_event *ev);
void extra_q2d(struct qio *q, uint64_t q2d);
void extra_q_done(struct qio *q, const struct blk_event *c);
void extra_per_io(struct qio *q, const struct blk_event *c);
void extra_per_io_end(void);
void extra_pit(struct dev *dip, struct qio **qs, size_t n, const struct blk_event *c);
void extra_unplug(struct dev *dip, uint64_t depth, int timer);
void extra_message(const struct blk_event *ev);
void extras_init(void);
void extras_finish(void);

#endif /* BTT_IOMODEL_H */
