// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "blk/event.h"
#include "decode.h"

static uint64_t get_be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t get_be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int blk_event_rwbs(const struct blk_event *ev, char *buf)
{
	uint64_t a = ev->action;
	int i = 0;

	if (a & BLK_TC_ACT(BLK_TC_FLUSH))
		buf[i++] = 'F';
	if (a & BLK_TC_ACT(BLK_TC_DISCARD)) {
		buf[i++] = 'D';
	} else if (a & BLK_TC2_ZONE_APPEND) {
		buf[i++] = 'Z';
		buf[i++] = 'A';
	} else if (a & BLK_TC2_ZONE_RESET_ALL) {
		buf[i++] = 'Z';
		buf[i++] = 'R';
		buf[i++] = 'A';
	} else if (a & BLK_TC2_ZONE_RESET) {
		buf[i++] = 'Z';
		buf[i++] = 'R';
	} else if (a & BLK_TC2_ZONE_FINISH) {
		buf[i++] = 'Z';
		buf[i++] = 'F';
	} else if (a & BLK_TC2_ZONE_OPEN) {
		buf[i++] = 'Z';
		buf[i++] = 'O';
	} else if (a & BLK_TC2_ZONE_CLOSE) {
		buf[i++] = 'Z';
		buf[i++] = 'C';
	} else if (a & BLK_TC_ACT(BLK_TC_WRITE)) {
		buf[i++] = 'W';
	} else if (ev->bytes) {
		buf[i++] = 'R';
	} else {
		buf[i++] = 'N';
	}
	if (a & BLK_TC_ACT(BLK_TC_FUA))
		buf[i++] = 'F';
	if (a & BLK_TC_ACT(BLK_TC_AHEAD))
		buf[i++] = 'A';
	if (a & BLK_TC_ACT(BLK_TC_SYNC))
		buf[i++] = 'S';
	if (a & BLK_TC_ACT(BLK_TC_META))
		buf[i++] = 'M';
	buf[i] = '\0';
	return i;
}

uint64_t blk_event_pdu_u64(const struct blk_event *ev)
{
	if (ev->pdu_len < 8)
		return 0;
	return get_be64(ev->pdu);
}

int blk_event_remap(const struct blk_event *ev, struct blk_io_trace_remap *r)
{
	if (ev->pdu_len < sizeof(*r)) {
		memset(r, 0, sizeof(*r));
		return -EINVAL;
	}
	r->device_from = get_be32(ev->pdu);
	r->device_to = get_be32(ev->pdu + 4);
	r->sector_from = get_be64(ev->pdu + 8);
	return 0;
}

size_t blk_event_encode(const struct blk_event *ev, unsigned char *buf)
{
	return encode_event(ev, buf);
}

static const char *const category_names[] = {
	"read", "write", "flush",  "sync",  "queue", "requeue", "issue",    "complete",
	"fs",	"pc",	 "notify", "ahead", "meta",  "discard", "drv_data", "fua",
};

const char blk_category_names[] = "read write flush sync queue requeue issue complete fs pc "
				  "notify ahead meta discard drv_data fua";

int blk_category_from_name(const char *name)
{
	if (!strncasecmp(name, "BLK_TC_", 7))
		name += 7;
	for (unsigned int i = 0; i < sizeof(category_names) / sizeof(category_names[0]); i++)
		if (!strcasecmp(name, category_names[i]))
			return 1 << i;
	return -1;
}
