/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The suite's version: the one definition. Every tool's -V prints its classic version
 * line unchanged, then this in parentheses (print_version() in common.c). The Makefile
 * reads it from here ("make version").
 */
#ifndef BLK_VERSION_H
#define BLK_VERSION_H

#define BLKTRACE_NG_VERSION "0.3"

#endif /* BLK_VERSION_H */
