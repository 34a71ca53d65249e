/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the unit tests of lib/reader.c (test-reader*.c): a small, varied set of
 * records. Include after <cmocka.h> and "helpers.h".
 */
#ifndef BLK_TEST_READER_HELPERS_H
#define BLK_TEST_READER_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/trace.h"

#define CAT(c) ((uint64_t)BLK_TC_ACT(c))

/* the payloads of sample_events() */
static const uint8_t sample_pdu8[8] = {0, 0, 0, 0, 0, 0, 0, 3};
static const uint8_t sample_pdu16[16] = {0, 0x80, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0};

/* A small, varied set of records (payloads of 0, 8 and 16 bytes). */
static inline size_t sample_events(struct blk_event *ev, uint8_t version)
{
	ev[0] = test_event(1, 1000, 2, CAT(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_QUEUE, 2048, 4096);
	ev[1] = test_event(2, 2500, 2, CAT(BLK_TC_QUEUE) | BLK_TA_UNPLUG_IO, 0, 0);
	ev[1].pdu = sample_pdu8;
	ev[1].pdu_len = sizeof(sample_pdu8);
	ev[2] = test_event(3, 0x100000000ull, 2, CAT(BLK_TC_QUEUE) | BLK_TA_REMAP, 4096, 65536);
	ev[2].pdu = sample_pdu16;
	ev[2].pdu_len = sizeof(sample_pdu16);
	ev[2].pid = 0x01020304;
	ev[2].error = 0x0a0b;
	ev[2].device = BLK_MKDEV(253, 0x12345);
	ev[3] = test_event(0xfffffffe, 0xfedcba9876543210ull, 2,
			   CAT(BLK_TC_READ | BLK_TC_COMPLETE) | BLK_TA_COMPLETE, 1ull << 40, 512);
	for (int i = 0; i < 4; i++)
		ev[i].version = version;
	if (version == BLK_IO_TRACE2_VERSION)
		ev[3].action |= BLK_TC2_ZONE_RESET;
	return 4;
}

#endif /* BLK_TEST_READER_HELPERS_H */
