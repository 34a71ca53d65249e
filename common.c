// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "version.h"
#include "blk/log.h"

static const char *prog = "blk";

void set_progname(const char *name)
{
	const char *s = strrchr(name, '/');

	prog = s ? s + 1 : name;
}

const char *progname(void)
{
	return prog;
}

static void report(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	int n;

	n = snprintf(buf, sizeof(buf), "%s", prefix);
	if (n < 0)
		return;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	n = (int)strlen(buf);
	if (n < (int)sizeof(buf) - 1)
		buf[n++] = '\n';
	fflush(stdout);
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

void die(const char *fmt, ...)
{
	char pre[128];
	va_list ap;

	snprintf(pre, sizeof(pre), "%s: ", prog);
	va_start(ap, fmt);
	report(pre, fmt, ap);
	va_end(ap);
	exit(1);
}

int error(const char *fmt, ...)
{
	char pre[128];
	va_list ap;

	snprintf(pre, sizeof(pre), "%s: ", prog);
	va_start(ap, fmt);
	report(pre, fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	char pre[128];
	va_list ap;

	snprintf(pre, sizeof(pre), "%s: warning: ", prog);
	va_start(ap, fmt);
	report(pre, fmt, ap);
	va_end(ap);
}

void hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("hint: ", fmt, ap);
	va_end(ap);
}

static void log_hook(const char *msg)
{
	error("%s", msg);
}

void install_log_hook(void)
{
	blk_set_log_fn(log_hook);
}

unsigned long long parse_opt_num(const char *s, const char *opt, unsigned long long lo,
				 unsigned long long hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end || errno || *s == '-' || v < lo || v > hi)
		die("option '%s': invalid value '%s' (%llu..%llu)", opt, s, lo, hi);
	return v;
}

void print_version(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (blktrace-ng %s)\n", BLKTRACE_NG_VERSION);
}
