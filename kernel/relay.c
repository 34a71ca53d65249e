// SPDX-License-Identifier: GPL-2.0
/*
 * The classic relay interface: BLKTRACESETUP(2)/START/STOP/TEARDOWN on a block device,
 * per-CPU relay files and the dropped counter in debugfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "blk/kernel.h"
#include "blk/trace.h"

#define BLKTRACESETUP _IOWR(0x12, BLKTRACESETUP_NR, struct blk_user_trace_setup)
#define BLKTRACESETUP2 _IOWR(0x12, BLKTRACESETUP2_NR, struct blk_user_trace_setup2)
#define BLKTRACESTART _IO(0x12, BLKTRACESTART_NR)
#define BLKTRACESTOP _IO(0x12, BLKTRACESTOP_NR)
#define BLKTRACETEARDOWN _IO(0x12, BLKTRACETEARDOWN_NR)

int blk_relay_setup(int fd, struct blk_relay_setup *s)
{
	struct blk_user_trace_setup2 v2;
	struct blk_user_trace_setup v1;

	memset(&v2, 0, sizeof(v2));
	v2.act_mask = s->act_mask ? s->act_mask : ~0ull;
	v2.buf_size = s->buf_size;
	v2.buf_nr = s->buf_nr;
	if (!ioctl(fd, BLKTRACESETUP2, &v2)) {
		snprintf(s->name, sizeof(s->name), "%s", v2.name);
		s->version = 2;
		return 0;
	}
	if (errno == EBUSY)
		return -EBUSY;
	memset(&v1, 0, sizeof(v1));
	v1.act_mask = (uint16_t)(s->act_mask ? s->act_mask : 0xffff);
	v1.buf_size = s->buf_size;
	v1.buf_nr = s->buf_nr;
	if (ioctl(fd, BLKTRACESETUP, &v1))
		return -errno;
	snprintf(s->name, sizeof(s->name), "%s", v1.name);
	s->version = 1;
	return 0;
}

int blk_relay_start(int fd)
{
	return ioctl(fd, BLKTRACESTART) ? -errno : 0;
}

int blk_relay_stop(int fd)
{
	return ioctl(fd, BLKTRACESTOP) ? -errno : 0;
}

int blk_relay_teardown(int fd)
{
	return ioctl(fd, BLKTRACETEARDOWN) ? -errno : 0;
}

long long blk_relay_dropped(const char *debugfs, const char *name)
{
	char path[4200], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/block/%s/dropped", debugfs, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return atoll(buf);
}
