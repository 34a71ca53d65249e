/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --perfetto=FILE: every I/O of the trace on a Perfetto timeline (ui.perfetto.dev), a
 * subscriber of the I/O model. What the file holds is described in doc/btt.1 (PERFETTO).
 *
 * Lifecycle: pfout_open() creates the file before the trace is read, pfout_subscribe()
 * attaches the export to the model, pfout_input_end() (after iomodel_finish()) hands what
 * is left to the drawing, pfout_finish() waits for it and closes the file, pfout_free()
 * frees it. Nothing is printed: an error stops the
 * export, and the front-end prints pfout_error() and pfout_hint(), and the remarks of
 * pfout_note() (what could not be drawn), once.
 */
#ifndef BTT_PERFETTO_OUT_H
#define BTT_PERFETTO_OUT_H

#include <stdint.h>

struct btt;
struct iomodel;
struct pfout;

/**
 * pfout_open() - with --perfetto, create its file as b->pf (b->pf stays NULL without)
 * Return: 0, or -1 when the file cannot be created (the message is in pfout_error()).
 * Exits when out of memory.
 */
int pfout_open(struct btt *b);

/* Subscribe @p (NULL: nothing) to @m, before the first event. */
void pfout_subscribe(struct pfout *p, struct iomodel *m);

/* The trace ended at @last_time (after iomodel_finish()): what is left to draw is handed to
 * the drawing now, which finishes it while the caller goes on (its report); NULL allowed. */
void pfout_input_end(struct pfout *p, uint64_t last_time);

/**
 * pfout_finish() - the end of the trace at @last_time: I/Os still drawn are closed, the
 * file is finished and closed (a valid trace whatever came before)
 * Return: 0, or -1 when writing failed (see pfout_error()). NULL is allowed.
 */
int pfout_finish(struct pfout *p, uint64_t last_time);

/* The first error, as "cannot ... 'FILE': strerror", or NULL; its remedy, or NULL. */
const char *pfout_error(const struct pfout *p);
const char *pfout_hint(const struct pfout *p);

/* After pfout_finish(): remark @i (0, 1, ...) on what was not drawn, NULL after the last. */
const char *pfout_note(const struct pfout *p, unsigned int i);

/* Free @p (NULL allowed); closes the file if pfout_finish() was not called. */
void pfout_free(struct pfout *p);

#endif /* BTT_PERFETTO_OUT_H */
