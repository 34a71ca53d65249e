/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The optional files fed by device events: block numbers of the issues (-B), the active
 * queue depth (-Q), unplug depth histograms (-u), the Q and D size histograms (with -o:
 * NAME_qhist.dat, NAME_dhist.dat) and the messages of the trace (NAME.msg, or stdout).
 */
#ifndef BTT_EVENT_FILES_H
#define BTT_EVENT_FILES_H

struct btt_output_ops;

/* the output (output.h): the message file is created at new(), the histograms written and
 * every file closed at finish() */
extern const struct btt_output_ops event_files_output;

#endif /* BTT_EVENT_FILES_H */
