/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Front-end helpers shared by the tools (not part of the library): messages and exits.
 */
#ifndef BLK_COMMON_H
#define BLK_COMMON_H

/* Set once in main(): the "<tool>: " prefix of every message. */
void set_progname(const char *name);
const char *progname(void);

/* Print "<tool>: msg" to stderr and exit(1). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Print "<tool>: msg" to stderr; return -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "<tool>: warning: msg" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "hint: msg" to stderr. */
void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A decimal option value in [lo, hi]; anything else (sign, junk, overflow) dies with
 * "option 'OPT': invalid value 'S' (LO..HI)".
 */
unsigned long long parse_opt_num(const char *s, const char *opt, unsigned long long lo,
				 unsigned long long hi);

/*
 * Print the -V line to stdout: the classic tool's version line (@fmt, without a newline),
 * then " (blktrace-ng VERSION)" and a newline, e.g. "blkparse version 1.2.0 (blktrace-ng 0.3)".
 */
void print_version(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Install a library log hook that prints with the tool's prefix. */
void install_log_hook(void);

#endif /* BLK_COMMON_H */
