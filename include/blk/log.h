/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's only channel for diagnostics: a hook the front-end sets once, before any
 * thread starts. The default prefixes "libblk: " and writes to stderr.
 */
#ifndef BLK_LOG_H
#define BLK_LOG_H

#include <stdarg.h>

typedef void (*blk_log_fn)(const char *msg);

/* Install @fn (NULL restores the default). Not thread-safe: call before starting threads. */
void blk_set_log_fn(blk_log_fn fn);

/* Format a message and hand it to the hook. */
void blk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* BLK_LOG_H */
