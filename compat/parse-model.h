/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkparse -t's memory model (classicmem.h) wired to the run (parse-run.h): what the
 * classic tool's start-up allocates, from the command line, and the observation hooks of
 * the accounting (acct.h) and the pipe-mode sorter (pipesort.h) that replay the rest.
 */
#ifndef BLK_COMPAT_PARSE_MODEL_H
#define BLK_COMPAT_PARSE_MODEL_H

#include "blk/acct.h"
#include "blk/pipesort.h"
#include "classicmem.h"
#include "parse-run.h"

/**
 * parse_model_new() - the classic tool's memory after its start-up with the options @o,
 * standard output @out_fd, and the descriptors open now (those of our outputs)
 * Return: the model to free with blk_cmem_free(); NULL when -t is off; dies when out of
 * memory.
 */
struct blk_cmem *parse_model_new(const struct parse_opts *o, int out_fd);

/* Fill @h with hooks that replay the accounting's allocations on @c (NULL: none). */
void parse_model_acct_hooks(struct blk_cmem *c, struct blk_acct_hooks *h);

/* Fill @h with hooks that replay the pipe-mode sorter's allocations on @c (NULL: none). */
void parse_model_pipesort_hooks(struct blk_cmem *c, struct blk_pipesort_hooks *h);

#endif /* BLK_COMPAT_PARSE_MODEL_H */
