/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decoded, version-independent view of one trace record.
 */
#ifndef BLK_EVENT_H
#define BLK_EVENT_H

#include <stdint.h>
#include <string.h>

#include "blk/trace.h"

struct blk_event {
	uint64_t time; /* ns */
	uint64_t sector;
	uint64_t action; /* 64-bit: code | categories << 16 | v2 categories << 32 */
	uint64_t offset; /* byte offset of the record in its input */
	uint32_t sequence;
	uint32_t bytes;
	uint32_t pid;
	uint32_t device;
	uint32_t cpu;
	uint16_t error;
	uint16_t pdu_len;
	uint8_t version; /* 7 or 8 */
	const unsigned char *pdu; /* pdu_len bytes, borrowed */
};

/* The low 32 bits, as the classic tools compare them. */
static inline uint32_t blk_event_action32(const struct blk_event *ev)
{
	return (uint32_t)ev->action;
}

static inline unsigned int blk_event_code(const struct blk_event *ev)
{
	return (unsigned int)(ev->action & 0xffff);
}

static inline int blk_event_has_cat(const struct blk_event *ev, uint32_t cat)
{
	return (blk_event_action32(ev) & BLK_TC_ACT(cat)) != 0;
}

static inline int blk_event_is_notify(const struct blk_event *ev)
{
	return blk_event_has_cat(ev, BLK_TC_NOTIFY);
}

static inline int blk_event_is_write(const struct blk_event *ev)
{
	return blk_event_has_cat(ev, BLK_TC_WRITE);
}

/**
 * blk_event_note() - a version-7 note of @code (BLK_TN_*) for @device on @cpu at @time, with
 * the @len bytes at @pdu as payload, into *@ev (sequence, sector, bytes, pid and error 0;
 * encode it with blk_event_encode()). @pdu must stay valid while @ev is used.
 */
static inline void blk_event_note(struct blk_event *ev, unsigned int code, uint32_t device,
				  uint32_t cpu, uint64_t time, const void *pdu, uint16_t len)
{
	memset(ev, 0, sizeof(*ev));
	ev->time = time;
	ev->action = BLK_TN_ACTION(code);
	ev->device = device;
	ev->cpu = cpu;
	ev->version = BLK_IO_TRACE_VERSION;
	ev->pdu = (const unsigned char *)pdu;
	ev->pdu_len = len;
}

/* The length of the record @ev was decoded from: its version's header and the payload. */
static inline unsigned int blk_event_record_len(const struct blk_event *ev)
{
	return (ev->version == BLK_IO_TRACE2_VERSION ? (unsigned int)sizeof(struct blk_io_trace2)
						     : (unsigned int)sizeof(struct blk_io_trace)) +
	       ev->pdu_len;
}

/* bytes >> 9, as printed */
static inline unsigned int blk_event_sectors(const struct blk_event *ev)
{
	return ev->bytes >> 9;
}

/* CPU numbers at or above this are treated as damage (the kernel allows at most 8192). */
#define BLK_MAX_CPUS 65536

#define BLK_RWBS_LEN 16

/**
 * blk_category_from_name() - the category bit named @name ("read", "WRITE",
 * "BLK_TC_QUEUE", ...), as blktrace -a and blkparse -a take it
 * Return: the bit (1 << n, for the upper half of the action), or -1 if unknown.
 */
int blk_category_from_name(const char *name);

/* The category names, for messages: "read write flush ... fua". */
extern const char blk_category_names[];

/**
 * blk_event_rwbs() - fill @buf (BLK_RWBS_LEN bytes) with the RWBS string of @ev
 * Return: length of the string.
 */
int blk_event_rwbs(const struct blk_event *ev, char *buf);

/**
 * blk_event_pdu_u64() - the payload's first 8 bytes as a big-endian integer
 * Return: the value, or 0 if the payload is shorter than 8 bytes.
 */
uint64_t blk_event_pdu_u64(const struct blk_event *ev);

/**
 * blk_event_remap() - decode a remap payload into host order
 * Return: 0, or -EINVAL if the payload is too short.
 */
int blk_event_remap(const struct blk_event *ev, struct blk_io_trace_remap *r);

/**
 * blk_event_encode() - write @ev as a host-order record of its version
 * @buf must hold 64 + ev->pdu_len bytes.
 * Return: bytes written.
 */
size_t blk_event_encode(const struct blk_event *ev, unsigned char *buf);

#endif /* BLK_EVENT_H */
