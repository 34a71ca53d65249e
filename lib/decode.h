/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decoders of the two record versions, shared inside the library by the reader's fast
 * path and the framer (frame.c), and the encoder, shared by blk_event_encode() and the
 * output's writer: static inline so that the per-record calls inline.
 */
#ifndef BLK_LIB_DECODE_H
#define BLK_LIB_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blk/event.h"
#include "blk/trace.h"

static inline uint32_t bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}

/*
 * Each field is loaded straight from the buffer: a copy of the header through a struct on
 * the stack made the loads wait for the stores (this runs once per record).
 */
#define FIELD(dst, type, name)                                                          \
	do {                                                                            \
		_Static_assert(sizeof(dst) == sizeof(((type *)0)->name), "field size"); \
		memcpy(&(dst), p + offsetof(type, name), sizeof(dst));                  \
	} while (0)

/* the fields both record versions share, from the other byte order (not the action) */
static inline void swap_fields(struct blk_event *ev)
{
	ev->sequence = bswap32(ev->sequence);
	ev->time = __builtin_bswap64(ev->time);
	ev->sector = __builtin_bswap64(ev->sector);
	ev->bytes = bswap32(ev->bytes);
	ev->pid = bswap32(ev->pid);
	ev->device = bswap32(ev->device);
	ev->cpu = bswap32(ev->cpu);
	ev->error = __builtin_bswap16(ev->error);
	ev->pdu_len = __builtin_bswap16(ev->pdu_len);
}

static inline void decode_v1(const unsigned char *p, int swap, struct blk_event *ev)
{
	uint32_t action;

	FIELD(ev->sequence, struct blk_io_trace, sequence);
	FIELD(ev->time, struct blk_io_trace, time);
	FIELD(ev->sector, struct blk_io_trace, sector);
	FIELD(ev->bytes, struct blk_io_trace, bytes);
	FIELD(action, struct blk_io_trace, action);
	FIELD(ev->pid, struct blk_io_trace, pid);
	FIELD(ev->device, struct blk_io_trace, device);
	FIELD(ev->cpu, struct blk_io_trace, cpu);
	FIELD(ev->error, struct blk_io_trace, error);
	FIELD(ev->pdu_len, struct blk_io_trace, pdu_len);
	if (swap) {
		swap_fields(ev);
		action = bswap32(action);
	}
	ev->action = action;
	ev->version = BLK_IO_TRACE_VERSION;
}

static inline void decode_v2(const unsigned char *p, int swap, struct blk_event *ev)
{
	FIELD(ev->sequence, struct blk_io_trace2, sequence);
	FIELD(ev->time, struct blk_io_trace2, time);
	FIELD(ev->sector, struct blk_io_trace2, sector);
	FIELD(ev->bytes, struct blk_io_trace2, bytes);
	FIELD(ev->pid, struct blk_io_trace2, pid);
	FIELD(ev->action, struct blk_io_trace2, action);
	FIELD(ev->device, struct blk_io_trace2, device);
	FIELD(ev->cpu, struct blk_io_trace2, cpu);
	FIELD(ev->error, struct blk_io_trace2, error);
	FIELD(ev->pdu_len, struct blk_io_trace2, pdu_len);
	if (swap) {
		swap_fields(ev);
		ev->action = __builtin_bswap64(ev->action);
	}
	ev->version = BLK_IO_TRACE2_VERSION;
}

/* store @v at @buf + the offset of @name in @type (the field's own size) */
#define PUT(buf, type, name, v)                                        \
	do {                                                           \
		__typeof__(((type *)0)->name) v_ = (v);                \
		memcpy((buf) + offsetof(type, name), &v_, sizeof(v_)); \
	} while (0)

/*
 * blk_event_encode(), inline for the dump's writer (output.c). Each field is stored straight
 * into @buf: a header built in a struct on the stack and then copied made the copy's wide
 * loads wait for the narrow stores (this runs once per record of a dump).
 */
static inline size_t encode_event(const struct blk_event *ev, unsigned char *buf)
{
	size_t hdr;

	if (ev->version == BLK_IO_TRACE2_VERSION) {
		memset(buf + offsetof(struct blk_io_trace2, pad), 0,
		       sizeof(((struct blk_io_trace2 *)0)->pad));
		PUT(buf, struct blk_io_trace2, magic, BLK_IO_TRACE_MAGIC | BLK_IO_TRACE2_VERSION);
		PUT(buf, struct blk_io_trace2, sequence, ev->sequence);
		PUT(buf, struct blk_io_trace2, time, ev->time);
		PUT(buf, struct blk_io_trace2, sector, ev->sector);
		PUT(buf, struct blk_io_trace2, bytes, ev->bytes);
		PUT(buf, struct blk_io_trace2, pid, ev->pid);
		PUT(buf, struct blk_io_trace2, action, ev->action);
		PUT(buf, struct blk_io_trace2, device, ev->device);
		PUT(buf, struct blk_io_trace2, cpu, ev->cpu);
		PUT(buf, struct blk_io_trace2, error, ev->error);
		PUT(buf, struct blk_io_trace2, pdu_len, ev->pdu_len);
		hdr = sizeof(struct blk_io_trace2);
	} else {
		PUT(buf, struct blk_io_trace, magic, BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION);
		PUT(buf, struct blk_io_trace, sequence, ev->sequence);
		PUT(buf, struct blk_io_trace, time, ev->time);
		PUT(buf, struct blk_io_trace, sector, ev->sector);
		PUT(buf, struct blk_io_trace, bytes, ev->bytes);
		PUT(buf, struct blk_io_trace, action, (uint32_t)ev->action);
		PUT(buf, struct blk_io_trace, pid, ev->pid);
		PUT(buf, struct blk_io_trace, device, ev->device);
		PUT(buf, struct blk_io_trace, cpu, ev->cpu);
		PUT(buf, struct blk_io_trace, error, ev->error);
		PUT(buf, struct blk_io_trace, pdu_len, ev->pdu_len);
		hdr = sizeof(struct blk_io_trace);
	}
	if (ev->pdu_len)
		memcpy(buf + hdr, ev->pdu, ev->pdu_len);
	return hdr + ev->pdu_len;
}

#undef PUT

#endif /* BLK_LIB_DECODE_H */
