/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-IO files: -p FILE lists each completed I/O with its stage times (and a line of
 * dashes after each completion), -P writes <dev>_pit.dat, a line per completion with the
 * Q times of the I/Os it took, the last issue and the completion.
 */
#ifndef BTT_PERIO_H
#define BTT_PERIO_H

struct btt;
struct perio;

/* a subscriber to @b->model for -p and -P (NULL when neither is given) */
struct perio *perio_new(struct btt *b);
void perio_free(struct perio *p);

#endif /* BTT_PERIO_H */
