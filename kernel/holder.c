// SPDX-License-Identifier: GPL-2.0
/* Who holds a tracing file open (kernel/holder.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holder.h"
#include "util.h"

int blk_holder_suffix(const char *link, const void *ctx)
{
	size_t n = strlen(link), m = strlen(ctx);

	return n >= m && !strcmp(link + n - m, ctx);
}

int blk_holder_prefix(const char *link, const void *ctx)
{
	return !strncmp(link, ctx, strlen(ctx));
}

int blk_holder_blk_pipe(const char *link, const void *ctx)
{
	(void)ctx;
	return strstr(link, "/per_cpu/cpu") && !strstr(link, "/instances/") &&
	       (blk_holder_suffix(link, "/trace_pipe") ||
		blk_holder_suffix(link, "/trace_pipe_raw"));
}

/* does process @pid have a file open that @match accepts? */
static int holds(int pid, blk_holder_match_fn match, const void *ctx)
{
	char p[64], fp[320], link[KPATH];
	struct dirent *fe;
	DIR *fds;
	int found = 0;

	snprintf(p, sizeof(p), "/proc/%d/fd", pid);
	fds = opendir(p);
	if (!fds)
		return 0;
	while (!found && (fe = readdir(fds))) {
		ssize_t n;

		snprintf(fp, sizeof(fp), "%s/%s", p, fe->d_name);
		n = readlink(fp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = match(link, ctx);
	}
	closedir(fds);
	return found;
}

int blk_holder_find(blk_holder_match_fn match, const void *ctx, char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		int pid = atoi(de->d_name);

		if (pid > 0 && pid != getpid() && holds(pid, match, ctx))
			found = pid;
	}
	closedir(proc);
	if (found) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/comm", found);
		if (read_str(p, comm, len))
			snprintf(comm, len, "?");
	}
	return found;
}

int blk_pid_alive(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}
