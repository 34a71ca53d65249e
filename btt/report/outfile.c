// SPDX-License-Identifier: GPL-2.0
/*
 * btt's output files (see outfile.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "model/alloc.h"
#include "report/outfile.h"

FILE *file_create(const char *name, char **saved)
{
	FILE *fp = fopen(name, "w");

	if (!fp) {
		error("cannot create '%s': %s", name, strerror(errno));
		exit(1);
	}
	if (saved)
		*saved = xstrdup(name);
	return fp;
}

void file_close(FILE **fp, char **name)
{
	long size;

	if (!*fp)
		return;
	size = ftell(*fp);
	if (fclose(*fp) != 0)
		error("write error on '%s': %s", name && *name ? *name : "?", strerror(errno));
	if (size == 0 && name && *name)
		unlink(*name);
	*fp = NULL;
	if (name) {
		free(*name);
		*name = NULL;
	}
}
