// SPDX-License-Identifier: GPL-2.0
#include <errno.h>

#include "blk/frame.h"
#include "decode.h"

long blk_frame(const unsigned char *p, size_t len, int *swapped, struct blk_event *ev)
{
	uint32_t magic;
	size_t hdr;
	int version;

	if (len < 4)
		return 0;
	memcpy(&magic, p, 4);
	if (*swapped < 0) {
		if ((magic & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
			*swapped = 0;
		else if ((bswap32(magic) & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
			*swapped = 1;
		else
			return -EINVAL;
	}
	if (*swapped)
		magic = bswap32(magic);
	if ((magic & BLK_IO_TRACE_MAGIC_MASK) != BLK_IO_TRACE_MAGIC)
		return -EINVAL;
	version = magic & 0xff;
	if (version == BLK_IO_TRACE_VERSION)
		hdr = sizeof(struct blk_io_trace);
	else if (version == BLK_IO_TRACE2_VERSION)
		hdr = sizeof(struct blk_io_trace2);
	else
		return -EPROTONOSUPPORT;
	if (len < hdr)
		return 0;
	if (version == BLK_IO_TRACE_VERSION)
		decode_v1(p, *swapped, ev);
	else
		decode_v2(p, *swapped, ev);
	if (len < hdr + ev->pdu_len)
		return 0;
	ev->pdu = p + hdr;
	ev->offset = 0;
	return (long)(hdr + ev->pdu_len);
}

long blk_frame_count(const unsigned char *p, size_t len, int *swapped, unsigned long *events)
{
	struct blk_event ev;
	unsigned long n = 0;
	size_t off = 0;
	long l;

	while ((l = blk_frame(p + off, len - off, swapped, &ev)) > 0) {
		off += (size_t)l;
		if (!blk_event_is_notify(&ev))
			n++;
	}
	if (events)
		*events = n;
	if (l < 0 && !off)
		return l;
	return (long)off;
}
