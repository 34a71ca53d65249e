/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device name notes (the record layout is in trace.h: BLK_TN_DEVNAME): the tracer's name
 * for a traced device, for the tools that label devices (btt's Perfetto and export).
 */
#ifndef BLK_DEVNAME_H
#define BLK_DEVNAME_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blk/event.h"
#include "blk/trace.h"

/* Whether @ev is a device name note (by its action; the name is checked by decode). */
static inline int blk_event_is_devname(const struct blk_event *ev)
{
	return (uint32_t)ev->action == BLK_TN_ACTION(BLK_TN_DEVNAME);
}

/**
 * blk_devname_encode() - the note naming @device @name, at @time on @cpu, into *@ev
 * (version 7; encode it with blk_event_encode()). ev->pdu points into @name (its first
 * BLK_DEVNAME_MAX bytes at most), which must stay valid while @ev is used.
 */
static inline void blk_devname_encode(struct blk_event *ev, uint32_t device, const char *name,
				      uint64_t time, uint32_t cpu)
{
	blk_event_note(ev, BLK_TN_DEVNAME, device, cpu, time, name,
		       (uint16_t)strnlen(name, BLK_DEVNAME_MAX));
}

/**
 * blk_devname_decode() - the name the device name note @ev gives, NUL-terminated into
 * @buf (@size bytes, at least BLK_DEVNAME_MAX + 1 to hold any)
 * Return: 0, or -EINVAL if @ev is not such a note, or its name is empty, too long for
 * @buf or holds a byte that is not printable ASCII (a space included).
 */
static inline int blk_devname_decode(const struct blk_event *ev, char *buf, size_t size)
{
	size_t n = ev->pdu_len;

	if (!blk_event_is_devname(ev) || !n || n > BLK_DEVNAME_MAX || n >= size)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (ev->pdu[i] <= ' ' || ev->pdu[i] > '~')
			return -EINVAL;
	memcpy(buf, ev->pdu, n);
	buf[n] = '\0';
	return 0;
}

#endif /* BLK_DEVNAME_H */
