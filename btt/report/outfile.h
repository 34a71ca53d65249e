/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btt's output files: created up front (a file that cannot be created ends the run), and
 * removed at the end when nothing was written to them, as the reference does.
 */
#ifndef BTT_OUTFILE_H
#define BTT_OUTFILE_H

#include <stdio.h>

/*
 * Create (truncate) @name for writing; exits with a message naming it when it cannot.
 * With @saved, *@saved gets a copy of the name (freed by file_close()), which also marks
 * the file for removal if it stays empty.
 */
FILE *file_create(const char *name, char **saved);

/*
 * Close *@fp if open and set it to NULL; with @name (from file_create()), remove the file
 * if nothing was written to it and free the name. A write error is reported, not fatal.
 */
void file_close(FILE **fp, char **name);

#endif /* BTT_OUTFILE_H */
