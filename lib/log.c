// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blk/log.h"

static void default_log(const char *msg)
{
	char buf[1100];
	int n = snprintf(buf, sizeof(buf), "libblk: %s\n", msg);

	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

/* The one piece of mutable global state in the library, set before threads start. */
static blk_log_fn log_hook = default_log;

void blk_set_log_fn(blk_log_fn fn)
{
	log_hook = fn ? fn : default_log;
}

void blk_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_hook(buf);
}
