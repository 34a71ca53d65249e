/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --perfetto=FILE: every bio of the trace on a Perfetto timeline (ui.perfetto.dev), a
 * subscriber of the model of every bio (model/bios.h) and of the I/O model. What the file holds is described in doc/btt.1 (PERFETTO).
 *
 * The output (output.h): open() creates the file before the trace is read, new()
 * subscribes it to the model, input_end() hands what is left to the drawing (a second
 * thread), which finishes it while the report is written, finish() waits for it and
 * closes the file (a valid trace whatever came before). Nothing is printed: an error
 * stops the export, and the front-end prints pfout_error() and pfout_hint(), and the
 * remarks of pfout_note() (what could not be drawn), once.
 */
#ifndef BTT_PERFETTO_OUT_H
#define BTT_PERFETTO_OUT_H

struct btt_output_ops;
struct pfout;

extern const struct btt_output_ops perfetto_output;

/* The first error, as "cannot ... 'FILE': strerror", or NULL; its remedy, or NULL. */
const char *pfout_error(const struct pfout *p);
const char *pfout_hint(const struct pfout *p);
/* After finish(): remark @i (0, 1, ...) on what was not drawn, NULL after the last. */
const char *pfout_note(const struct pfout *p, unsigned int i);

#endif /* BTT_PERFETTO_OUT_H */
