/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btt: the context of one run (options, devices, the I/O model and its subscribers), and
 * the steps main() takes with it. A program can drive btt without main() (a fuzzer, a
 * test): fill the options, btt_init(), btt_run() over a stream of events (a reader, a
 * merge, a buffer), then btt_report() and btt_release().
 */
#ifndef BTT_BTT_H
#define BTT_BTT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "model/devs.h"
#include "model/iomodel.h"
#include "output.h"

/* -i @input names a regular file (not standard input): the outputs may read it again */
static inline int btt_input_is_file(const char *input)
{
	struct stat st;

	return input && strcmp(input, "-") && !stat(input, &st) && S_ISREG(st.st_mode);
}

struct btt_opts {
	const char *output; /* -o: name.avg, name.dat, name.msg */
	const char *seek_name; /* -s */
	const char *sps_name; /* -m */
	const char *d2c_name; /* -l */
	const char *q2c_name; /* -q */
	const char *q2d_name; /* -z */
	const char *bno_name; /* -B */
	const char *aqd_name; /* -Q */
	const char *unplug_name; /* -u */
	const char *per_io_name; /* -p */
	const char *pit_name; /* -P */
	const char *iostat_name; /* -I */
	const char *devmap_name; /* -M */
	const char *devices; /* -D */
	const char *exes; /* -e */
	const char *input; /* -i, as given ("-": standard input) */
	const char *export_dest; /* --export */
	const char *export_host; /* --host (NULL: the hostname) */
	unsigned int export_batch; /* --export-batch (0: the library's) */
	const char *password_file; /* --password-file */
	const char *ca_file; /* --ca-file */
	int insecure; /* --insecure */
	double range_delta; /* -d */
	double t_start, t_end; /* -t, -T */
	double plat_freq; /* -L */
	int iostat_interval; /* -S */
	int time_bounded;
	int all_data; /* -A */
	int seek_absolute; /* -a */
	int no_remaps; /* -r */
	int easy_parse; /* -X */
	int do_active; /* -Z */
	int percentiles; /* --percentiles (1) / --percentiles-only (2) */
	const char *perfetto_name; /* --perfetto */
	int iowait_only; /* --iowait-only: only the I/O wait section */
};

#define BTT_OPTS_INIT                                    \
	{                                                \
		.range_delta = 0.1, .iostat_interval = 1 \
	}

/**
 * struct btt - one run of btt
 * @opts: filled before btt_init() (BTT_OPTS_INIT gives btt's defaults)
 * @devs: the devices and processes the trace names
 * @model: the I/O model, created by btt_run()
 * @clock: the trace's wall clock, when a wanted output dates its events (output.h)
 * @bios: the model of every bio, when a wanted output counts them (output.h)
 * @bios_nomem: the events the bios model could not take whole (out of memory)
 * @view: what the outputs see of all this
 * @out: the outputs' states, indexed like btt_outputs[] (NULL: not in this run)
 */
struct btt {
	struct btt_opts opts;
	struct btt_devs devs;
	struct iomodel *model;
	struct btt_clock *clock;
	struct bios *bios;
	uint64_t bios_nomem;
	struct btt_view view;
	void **out;
};

/**
 * btt_init() - after the options are set: the registry of devices, with the -M map
 * Return: 0, or -errno when the -M file cannot be read.
 */
int btt_init(struct btt *b);

/**
 * btt_open() - after btt_init(), before the trace is read: the outputs' early step
 * (--perfetto creates its file), so that a bad path fails before any work
 * Return: 0, or -1 when an output failed (what it says is in its state: main.c prints it).
 */
int btt_open(struct btt *b);

/* The state of output @name (output.h), or NULL when it is not in this run. */
void *btt_output(const struct btt *b, const char *name);

/**
 * btt_run() - model *@ev and the events @next gives after it (see iomodel_run())
 * After btt_init(): creates the model and the outputs the options ask for (their files
 * too), then models the stream.
 * @progress: called after each event when not NULL (with @arg)
 * Return: the last status of @next: 0 at the end of the input (or of the -T window),
 * -errno on an error (the model has what came before). Exits with a message when an
 * output file cannot be created, or without memory.
 */
int btt_run(struct btt *b, iomodel_next_fn next, void *src, struct blk_event *ev,
	    void (*progress)(void *arg), void *arg);

/**
 * btt_report() - after btt_run(): the end of the trace for the model, then the report and
 * range data (to stdout, or the -o files) and every other output file, closed
 * Return: 0, or -1 when an output failed to finish (it said why; the others finished).
 * Exits with a message when standard output cannot be written.
 */
int btt_report(struct btt *b);

/* Free everything btt_init(), btt_open() and btt_run() made; @b->opts stays. */
void btt_release(struct btt *b);

#endif /* BTT_BTT_H */
