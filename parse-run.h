/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse's run: the inputs read, merged or sorted, printed and dumped, then the
 * summaries and the end-of-run warnings. Front-end code (it prints, and dies on a fatal
 * error), kept apart from the option parsing and the signal handling of blkparse.c so
 * that the fuzz target (tests/fuzz/fuzz-parse.c) runs the real thing.
 */
#ifndef BLKPARSE_RUN_H
#define BLKPARSE_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "blk/format.h"

/* An option whose order matters to -t's model of the classic tool (compat/parse-model.c). */
struct parse_arg {
	char opt; /* 'i' (an input, -i or not), 'f' (-f) or 'F' (-F) */
	const char *val;
};

/* What the command line asked for (blkparse.c parse_args()). */
struct parse_opts {
	const char **inputs;
	int ninputs;
	const char *input_dir;
	uint32_t act_mask; /* categories shown */
	unsigned int batch;
	unsigned int max_pending; /* pipe mode's reorder window (0: the default; no option) */
	const char *dump; /* -d */
	int dump_msgs; /* !-M */
	const char *output; /* -o */
	int text; /* !-O */
	int quiet;
	int per_process;
	char sort_key;
	int hash_by_name;
	int track;
	uint64_t stop_start, stop_end;
	int verbose;
	int show_cgroup; /* --cgroup-msgs */
	int iowait; /* --iowait: print the I/O wait notes */
	int one_thread; /* render the text and write the dump on the caller's thread (no option:
			 * for the fuzz target, where a thread per short run costs more than it) */
	struct blk_format *fmt[256];
	struct parse_arg *args; /* -i/-f/-F and the inputs, in command-line order */
	int nargs;
};

/*
 * Where the run prints, and how it learns of interrupts (the front-end's signal handler
 * counts them). The callbacks may be NULL: no interrupts.
 */
struct parse_env {
	FILE *out; /* standard output: the text without -o, and the classic tool's notes */
	/* interrupts so far */
	int (*interrupts)(void *ctx);
	/* the input @fd is read from now on; the @cut_at-th interrupt cuts it short */
	void (*watch_input)(void *ctx, int fd, int cut_at);
	/* @fd is about to be closed. Return: 1 if an interrupt cut it short */
	int (*unwatch_input)(void *ctx);
	void *ctx;
};

/**
 * parse_run() - run blkparse with the options @o (formats compiled, inputs named)
 * Prints as blkparse does (to @env->out and stderr); dies on a fatal error.
 * Return: the exit status (0, or 1 after an error). @o stays the caller's.
 */
int parse_run(struct parse_opts *o, const struct parse_env *env);

#endif /* BLKPARSE_RUN_H */
