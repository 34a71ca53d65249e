// SPDX-License-Identifier: GPL-2.0
/*
 * Replay targets: direct-I/O opening, geometry, and the mounted-device check.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "target.h"

int target_open(struct rp_target *t, unsigned int flags)
{
	int oflags = O_DIRECT | O_CLOEXEC | ((flags & TARGET_WRITE) ? O_RDWR : O_RDONLY);
	struct stat st;
	int fd, e;

	t->fd = -1;
	if (stat(t->path, &st))
		return -errno;
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return -ENOTBLK;
	if (S_ISBLK(st.st_mode) && (flags & TARGET_EXCL))
		oflags |= O_EXCL;
	fd = open(t->path, oflags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		goto fail;
	t->is_blk = S_ISBLK(st.st_mode);
	if (t->is_blk) {
		unsigned long long size;
		int lbs;

		t->rdev = st.st_rdev;
		if (ioctl(fd, BLKGETSIZE64, &size) || ioctl(fd, BLKSSZGET, &lbs))
			goto fail;
		t->size = size;
		t->lbs = lbs > 0 ? (unsigned int)lbs : 512;
	} else {
		t->size = (uint64_t)st.st_size;
		t->lbs = 512;
	}
	t->fd = fd;
	return 0;
fail:
	e = errno;
	close(fd);
	return -e;
}

void target_release(struct rp_target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->path);
	t->path = NULL;
}

/* The whole-disk device of partition @d, or 0 if @d is not a partition. */
static dev_t parent_of(dev_t d)
{
	char p[128], buf[64];
	unsigned int ma, mi;
	FILE *f;
	int ok;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", major(d), minor(d));
	if (access(p, F_OK))
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../dev", major(d), minor(d));
	f = fopen(p, "re");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%u:%u", &ma, &mi) == 2;
	fclose(f);
	return ok ? makedev(ma, mi) : 0;
}

static int related(dev_t d, dev_t target)
{
	return d == target || (major(d) && parent_of(d) == target);
}

/* Undo the octal escapes (\040 for a space) of the mount table, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The mount point and source of a mountinfo line, and its device number (0 if none). */
static int parse_mountinfo(char *line, char **mnt, char **src, dev_t *d)
{
	unsigned int ma, mi;
	char *f[6], *sep, *save = NULL;
	int i;

	sep = strstr(line, " - ");
	if (!sep)
		return -1;
	*sep = '\0';
	for (i = 0; i < 6; i++) {
		f[i] = strtok_r(i ? NULL : line, " ", &save);
		if (!f[i])
			break;
	}
	if (i < 5 || sscanf(f[2], "%u:%u", &ma, &mi) != 2)
		return -1;
	*d = makedev(ma, mi);
	*mnt = f[4];
	save = NULL;
	if (!strtok_r(sep + 3, " ", &save)) /* file system type */
		return -1;
	*src = strtok_r(NULL, " \n", &save);
	return *src ? 0 : -1;
}

int target_mounted(dev_t rdev, char *dev, size_t dlen, char *mnt, size_t mlen)
{
	char *line = NULL, *m, *src;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0) {
		struct stat st;
		dev_t d;
		int hit;

		if (parse_mountinfo(line, &m, &src, &d))
			continue;
		unescape(m);
		unescape(src);
		hit = related(d, rdev);
		/* file systems on several devices (btrfs) show an anonymous number: the source */
		if (!hit && src[0] == '/' && !stat(src, &st) && S_ISBLK(st.st_mode))
			hit = related(st.st_rdev, rdev);
		if (hit) {
			snprintf(dev, dlen, "%s", src);
			snprintf(mnt, mlen, "%s", m);
			found = 1;
		}
	}
	free(line);
	fclose(f);
	return found;
}
