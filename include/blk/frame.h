/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record framer: where a record starts and ends in a buffer of trace bytes, and what it
 * holds. Every tool that meets the binary format in memory (the tracer's relay and tracefs
 * streams, the network server, the verifiers, the stdout ordering window) frames records
 * with it; the file reader (reader.h) uses the same decoders.
 */
#ifndef BLK_FRAME_H
#define BLK_FRAME_H

#include <stddef.h>

#include "blk/event.h"

/**
 * blk_frame() - decode the record at the start of @p (@len bytes available)
 * @swapped: in: 0 host order, 1 the other byte order, -1 unknown; when -1 it is set from
 *	the magic of this record (and left -1 if the magic fits neither order)
 * Return: the length of the whole record (header + payload) with *@ev filled (ev->pdu
 * points into @p, ev->offset is 0), 0 if @len holds only part of a record, -EINVAL if @p
 * does not start with a record's magic in the byte order *@swapped, or -EPROTONOSUPPORT
 * for a version other than 7 and 8. The payload is not byte-swapped.
 */
long blk_frame(const unsigned char *p, size_t len, int *swapped, struct blk_event *ev);

/**
 * blk_frame_count() - walk the whole records at the start of @p (@len bytes)
 * @events: out (may be NULL): how many of them are not notes (process names, timestamps,
 *	messages are notes)
 * Return: the bytes they take (what follows is a partial record, or not a record at all:
 * the walk stops before it), or -EINVAL/-EPROTONOSUPPORT as blk_frame() when @p does not
 * start with a record.
 */
long blk_frame_count(const unsigned char *p, size_t len, int *swapped, unsigned long *events);

#endif /* BLK_FRAME_H */
