/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btt's outputs: everything btt writes (the classic report, its per-IO and histogram
 * files, --perfetto, --export, the I/O waits) is an output, a row of one table
 * (btt_outputs[], outputs.c) that btt.c walks at each step of a run:
 *
 *   btt_open()    open()       early work that must fail before the trace is read
 *   btt_run()     new()        the state, subscribed to the I/O model (files created now)
 *   btt_report()  input_end()  the trace ended (t_last: the time of the last event)
 *                 report()     its part of the report (stdout, or NAME.avg with -o)
 *                 finish()     its files written and closed
 *   btt_release() free()
 *
 * A row whose wanted() says no (or whose new() gives NULL) has no state, and none of its
 * hooks is called; a NULL hook is skipped. Rows run in table order at every step (free()
 * in reverse): the order the reference creates its files in, which is also the order of
 * the report's sections. An output sees the run through a struct btt_view, not struct btt.
 *
 * Adding an output: one file with its hooks and its const struct btt_output_ops, its
 * extern in the file's header, and one row in outputs.c (report/iops-mbps.c is the
 * smallest).
 */
#ifndef BTT_OUTPUT_H
#define BTT_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bios;
struct btt_clock;
struct btt_devs;
struct btt_opts;
struct iomodel;

/**
 * struct btt_view - what an output sees of the run
 * @opts: btt's options
 * @devs: the devices and processes of the trace
 * @model: the I/O model to subscribe to (set by btt_run(), before the first new())
 * @clock: the trace's wall clock, made only when a wanted output has BTT_OUTPUT_CLOCK
 *         (NULL otherwise)
 * @bios: the model of every bio (model/bios.h), made only when a wanted output has
 *        BTT_OUTPUT_BIOS (NULL otherwise): subscribe with bios_subscribe() in new(); the
 *        bios still in flight are delivered (BTT_BIO_UNFINISHED) before any input_end()
 * @states: the outputs' states, indexed like btt_outputs[]: read through btt_view_output()
 */
struct btt_view {
	const struct btt_opts *opts;
	struct btt_devs *devs;
	struct iomodel *model;
	struct btt_clock *clock;
	struct bios *bios;
	void *const *states;
};

enum btt_output_flags {
	BTT_OUTPUT_CLOCK = 1 << 0, /* dates its events on the wall clock (@view->clock) */
	BTT_OUTPUT_BIOS = 1 << 1, /* counts every bio (@view->bios): the outputs that are ours */
};

/**
 * struct btt_output_ops - one output
 * @name: what btt_view_output() and btt_output() find it by
 * @flags: enum btt_output_flags
 * @wanted: whether the options ask for it (NULL: always)
 * @open: optional, at btt_open(), before the trace is read (to fail early: a file that
 *        cannot be created); *@state gets what it made, even on failure. Return 0 or -1.
 * @new: at btt_run(): the output's state, subscribed to @v->model; @opened is what @open
 *       made (NULL without @open). NULL: nothing to do for this run.
 * @input_end: the trace ended at @t_last, before any report
 * @report: its section of the report, on @avg
 * @finish: its files written and closed. Return 0, or -1 when it failed (its message
 *          printed): the other outputs still finish, and btt_report() returns -1.
 * @free: the state freed (after @finish, or without it)
 */
struct btt_output_ops {
	const char *name;
	unsigned int flags;
	int (*wanted)(const struct btt_opts *o);
	int (*open)(const struct btt_view *v, void **state);
	void *(*new)(const struct btt_view *v, void *opened);
	void (*input_end)(void *state, uint64_t t_last);
	void (*report)(void *state, FILE *avg);
	int (*finish)(void *state, uint64_t t_last);
	void (*free)(void *state);
};

/* the table (outputs.c), btt_noutputs rows */
extern const struct btt_output_ops *const btt_outputs[];
extern const size_t btt_noutputs;

/* the index of output @name in btt_outputs[], or -1 */
int btt_output_index(const char *name);

/**
 * btt_view_output() - the state of the sibling output @name (its state type is the
 * one its own header declares), to read at report() or finish() time
 * Return: the state, or NULL when that output is not in this run (or not made yet).
 */
void *btt_view_output(const struct btt_view *v, const char *name);

#endif /* BTT_OUTPUT_H */
