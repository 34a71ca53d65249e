/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The optional files fed by device events: block numbers of the issues (-B), the active
 * queue depth (-Q), unplug depth histograms (-u), the Q and D size histograms (with -o:
 * NAME_qhist.dat, NAME_dhist.dat) and the messages of the trace (NAME.msg, or stdout).
 */
#ifndef BTT_EXTRAS_H
#define BTT_EXTRAS_H

struct btt;
struct btt_devs;
struct extras;

/* a subscriber to @b->model; the message file is created now */
struct extras *extras_new(struct btt *b);
/* the histograms written, every file closed */
void extras_finish(struct extras *x, const struct btt_devs *d);
void extras_free(struct extras *x);

#endif /* BTT_EXTRAS_H */
