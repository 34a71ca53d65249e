/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the files of kernel/ (not part of the public headers). */
#ifndef BLK_KERNEL_UTIL_H
#define BLK_KERNEL_UTIL_H

#include <limits.h>
#include <stddef.h>

/*
 * The path buffers of kernel/: a tracefs or debugfs mount point is at most KPATH_DIR bytes;
 * KPATH_SUB holds one plus a short name below it (an instance, block/NAME, a device's trace
 * directory), KPATH a file below that (per_cpu/cpuN/trace_pipe, events/.../enable). A longer
 * name is cut by snprintf() and its open fails naming the cut path.
 */
#define KPATH_DIR PATH_MAX
#define KPATH_SUB (PATH_MAX + 104)
#define KPATH (PATH_MAX + 304)

/* Format a message into @err (@len bytes; nothing when @err is NULL). */
void kerr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Read a small sysfs/tracefs file into @buf, trailing newlines and blanks cut. 0 or -errno. */
int read_str(const char *path, char *buf, size_t len);

/* Write @s to a sysfs/tracefs file (truncating). 0 or -errno. */
int write_str(const char *path, const char *s);

#endif /* BLK_KERNEL_UTIL_H */
