// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: -f/-F format strings (lib/format.c), compiled and rendered on a few
 * events of every kind the printer distinguishes.
 *
 * Input layout: a control byte, then the format string (up to its first NUL).
 *   bit 0  the elapsed time is known (else %u must fail, and only %u)
 *   bit 1  the wall clock is known (%z)
 *   bit 2  the process name is known (else "(null)")
 *   bit 3  the events are version 8 (64-bit actions, zone appends)
 *   bit 4  the default line (blk_format_default) is rendered too
 * Nothing is printed: lines go into one reused strbuf.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "blk/format.h"
#include "blk/log.h"
#include "blk/strbuf.h"
#include "blk/trace.h"

#define FMT_MAX 512

struct kind {
	const char *act;
	uint64_t action;
	uint16_t pdu_len;
};

#define TC(c) ((uint64_t)BLK_TC_ACT(c))
static const struct kind kinds[] = {
	{"Q", TC(BLK_TC_WRITE | BLK_TC_QUEUE | BLK_TC_SYNC) | BLK_TA_QUEUE, 0},
	{"C", TC(BLK_TC_READ | BLK_TC_COMPLETE | BLK_TC_FS) | BLK_TA_COMPLETE, 0},
	{"D", TC(BLK_TC_PC | BLK_TC_ISSUE) | BLK_TA_ISSUE, 24},
	{"A", TC(BLK_TC_QUEUE) | BLK_TA_REMAP, 16},
	{"UT", TC(BLK_TC_QUEUE) | BLK_TA_UNPLUG_TIMER, 8},
	{"X", TC(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_SPLIT, 8},
	{"M", TC(BLK_TC_DISCARD | BLK_TC_QUEUE | BLK_TC_FUA) | BLK_TA_BACKMERGE, 0},
	{"ZP", TC(BLK_TC_WRITE | BLK_TC_QUEUE) | BLK_TA_ZONE_PLUG | (1ull << 32), 0},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static struct blk_strbuf sb = BLK_STRBUF_INIT;
static unsigned char pdu[64];

static void quiet_log(const char *msg)
{
	(void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	blk_set_log_fn(quiet_log);
	/* a remap payload (big-endian device from, device to, sector) and bytes for the rest */
	for (unsigned int i = 0; i < sizeof(pdu); i++)
		pdu[i] = (unsigned char)(i * 37 + 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[FMT_MAX + 1], err[256];
	struct blk_format *f;
	uint8_t ctl;
	size_t len;

	if (size < 1)
		return 0;
	ctl = data[0];
	len = strnlen((const char *)data + 1, size - 1);
	if (len > FMT_MAX)
		return 0;
	memcpy(spec, data + 1, len);
	spec[len] = '\0';
	f = blk_format_compile(spec, err, sizeof(err));
	if (!f) {
		/* the message quotes the bad part: it must be a string */
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		return 0;
	}
	for (unsigned int k = 0; k < NKINDS; k++) {
		struct blk_event ev = {0};
		struct blk_fmt_ctx c = {0};
		int ret;

		ev.time = 1234567890123ull + k * 1000;
		ev.sector = 2048 + k * 8;
		ev.action = kinds[k].action;
		ev.sequence = k + 1;
		ev.bytes = 4096u << (k % 4);
		ev.pid = 4242;
		ev.device = BLK_MKDEV(8, 16);
		ev.cpu = k % 3;
		ev.error = k == 1 ? 5 : 0;
		ev.version = (ctl & 8) ? BLK_IO_TRACE2_VERSION : BLK_IO_TRACE_VERSION;
		if (!(ctl & 8))
			ev.action &= 0xffffffffull;
		ev.pdu = pdu;
		ev.pdu_len = kinds[k].pdu_len;
		c.act = kinds[k].act;
		c.comm = (ctl & 4) ? "kworker/1:1H" : NULL;
		c.cpu = (int)ev.cpu;
		c.elapsed = (ctl & 1) ? 987654321ull * k : BLK_NO_ELAPSED;
		if (ev.action & TC(BLK_TC_PC)) {
			c.pc_pdu = pdu;
			c.pc_pdu_len = ev.pdu_len;
		}
		c.cg_ino = k;
		c.cg_gen = 7;
		c.have_wall = (ctl >> 1) & 1;
		c.wall_sec = 1700000000 + k;
		c.wall_nsec = 999999999 - k;
		blk_strbuf_reset(&sb);
		ret = blk_format_render(f, &ev, &c, &sb);
		/* -EINVAL exactly when %u has no elapsed time */
		if (ret && (ret != -EINVAL || (ctl & 1) || !blk_format_needs_elapsed(f)))
			abort();
		if (!ret && !(ctl & 1) && blk_format_needs_elapsed(f))
			abort();
		if (ctl & 16)
			blk_format_default(&ev, &c, &sb);
	}
	(void)blk_format_needs_wall(f);
	blk_format_free(f);
	return 0;
}
