/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O by file": the top files by bytes and by Q2C time (the sum over their bios), each with
 * its I/Os, bytes read and written, and its readers and writers (the bytes of each task),
 * from the origins output's tracker (origin/track.h: the trace's origin notes). Ours, not
 * btt 2.09's: printed only for a trace with origin notes.
 */
#ifndef BTT_FILES_H
#define BTT_FILES_H

extern const struct btt_output_ops files_output;

#endif /* BTT_FILES_H */
