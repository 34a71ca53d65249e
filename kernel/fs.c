// SPDX-License-Identifier: GPL-2.0
/*
 * Discovery of debugfs and tracefs mounts, and of the online CPUs.
 */
#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "blk/kernel.h"

#define DEBUGFS_MAGIC 0x64626720
#define TRACEFS_MAGIC 0x74726163

static int has_magic(const char *path, long magic)
{
	struct statfs st;

	return !statfs(path, &st) && (long)st.f_type == magic;
}

static int find_mount(const char *type, char *buf, size_t len)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *m;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, type)) {
			snprintf(buf, len, "%s", m->mnt_dir);
			ret = 0;
			break;
		}
	}
	endmntent(f);
	return ret;
}

int blk_find_debugfs(const char *hint, int mount_it, char *buf, size_t len)
{
	if (hint) {
		if (!has_magic(hint, DEBUGFS_MAGIC))
			return -ENOENT;
		snprintf(buf, len, "%s", hint);
		return 0;
	}
	if (!find_mount("debugfs", buf, len))
		return 0;
	if (!mount_it)
		return -ENOENT;
	if (mount("none", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	snprintf(buf, len, "/sys/kernel/debug");
	return 0;
}

int blk_find_tracefs(int mount_it, char *buf, size_t len)
{
	char dbg[4096];

	if (!find_mount("tracefs", buf, len))
		return 0;
	if (!find_mount("debugfs", dbg, sizeof(dbg))) {
		snprintf(buf, len, "%s/tracing", dbg);
		if (has_magic(buf, TRACEFS_MAGIC))
			return 0;
	}
	if (!mount_it)
		return -ENOENT;
	if (mount("none", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	snprintf(buf, len, "/sys/kernel/tracing");
	return 0;
}

int blk_online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char line[4096], *p, *tok;
	int n = 0;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (tok = strtok_r(line, ",\n", &p); tok; tok = strtok_r(NULL, ",\n", &p)) {
		int a, b;

		if (sscanf(tok, "%d-%d", &a, &b) == 2) {
			for (int c = a; c <= b && n < max; c++)
				cpus[n++] = c;
		} else if (sscanf(tok, "%d", &a) == 1 && n < max) {
			cpus[n++] = a;
		}
	}
	return n;
}
