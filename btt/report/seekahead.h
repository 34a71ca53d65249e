/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seek streams read ahead. The classic statistics of a seek stream (its median and
 * modes, seekstat.h) can only be worked out once the stream has ended, and take a fifth of
 * btt's time at the end of a run. When the input is a file, a thread of its own reads it
 * a second time, from the start, for nothing but the Qs and Ds of each device, and works
 * out their statistics while the I/O model is still busy with the first reading.
 *
 * What the model gives the report decides: a stream of the report is taken from here only
 * when it has the same length and fingerprint (seek_fingerprint()) as the stream read
 * ahead; otherwise (options that leave events out, a file that changed) the report works
 * it out itself as before.
 */
#ifndef BTT_SEEKAHEAD_H
#define BTT_SEEKAHEAD_H

#include <stdint.h>

#include "report/seekstat.h"

struct btt_opts;
struct seekahead;

/*
 * Start reading @o->input ahead, or NULL: it is no file, the machine has one CPU, or an
 * option filters what the report sees (-D, -e) in ways the reading ahead does not follow,
 * or --perfetto's drawing thread has the second CPU.
 */
struct seekahead *seekahead_start(const struct btt_opts *o);
/*
 * The statistics of device @dev's stream (@d2d: its Ds, else its Qs), when read ahead with
 * @n values of fingerprint @fp: 1 and *@res (the caller's to free), else 0. The first call
 * waits for the reading ahead to end.
 */
int seekahead_take(struct seekahead *sa, uint32_t dev, int d2d, uint64_t n, uint64_t fp,
		   struct seekstat_result *res);
/* stop (waiting for the thread) and free @sa (NULL allowed) */
void seekahead_free(struct seekahead *sa);

#endif /* BTT_SEEKAHEAD_H */
