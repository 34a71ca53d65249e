/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O by origin": per device and origin (a task, the journal, metadata), the bios the
 * trace's origin notes charge to it (origin/track.h), their bytes (each task's share of a
 * bio exactly; those the task did not queue itself, "by others", apart), and their Q2C mean
 * and 99th percentile. Ours, not btt 2.09's: printed only for a trace with origin notes.
 */
#ifndef BTT_ORIGINS_H
#define BTT_ORIGINS_H

struct otrack;

extern const struct btt_output_ops origins_output;

/* the tracker the origins output made (for the files output), or NULL for a NULL @state */
struct otrack *origins_track(void *state);

#endif /* BTT_ORIGINS_H */
