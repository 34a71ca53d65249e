/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The replay file that btrecord writes and btreplay reads, stated once, and the lookup of
 * per-CPU files (NAME.MID.CPU) in a directory that both tools share.
 *
 * A replay file holds the queued I/Os of one device as seen on one CPU, in host byte order
 * and with the layout of the classic tools on 64-bit hosts:
 *
 *   file header  u64 version (0x10000 = 1.0.0), u64 genesis (time of the first I/O),
 *                u64 bunches, u64 packets
 *   then bunches u64 npkts, u64 time stamp (trace time of the bunch's first I/O),
 *                followed by npkts packets of u64 sector, u64 bytes, u32 rw (1 = read)
 *                and 4 bytes of padding (written as zeros)
 *
 * The counts in the file header leave out the last bunch, as the classic btrecord's do (it
 * rewrites the header before writing that bunch); readers go by the end of the file.
 */
#ifndef BTREPLAY_REPLAY_FILE_H
#define BTREPLAY_REPLAY_FILE_H

#include <stddef.h>
#include <stdint.h>

#define RF_VERSION 0x10000ull /* (1 << 16) | (0 << 8) | 0 */
#define RF_MAX_PKTS 512 /* packets in one bunch, at most */

struct rf_file_hdr {
	uint64_t version;
	uint64_t genesis;
	uint64_t nbunches;
	uint64_t npkts;
};

struct rf_bunch_hdr {
	uint64_t npkts;
	uint64_t time_stamp;
};

struct rf_pkt {
	uint64_t sector;
	uint64_t nbytes;
	uint32_t rw;
	uint32_t pad;
};

_Static_assert(sizeof(struct rf_file_hdr) == 32, "replay file header is 32 bytes");
_Static_assert(sizeof(struct rf_bunch_hdr) == 16, "bunch header is 16 bytes");
_Static_assert(sizeof(struct rf_pkt) == 24, "packet is 24 bytes");
_Static_assert(offsetof(struct rf_pkt, rw) == 16, "packet rw at 16");

/* One per-CPU file found in a directory. */
struct rf_input {
	char *dev; /* the device part of the name (as given, or as found with any_dev) */
	char *path; /* dir/dev.mid.cpu */
	int cpu;
};

struct rf_list {
	struct rf_input *v;
	size_t n, alloc;
};
#define RF_LIST_INIT       \
	{                  \
		NULL, 0, 0 \
	}

/**
 * rf_find() - append to @l the files "@dev.@mid.N" (N a CPU number) found in @dir, by CPU
 * @dev: a device name, which may contain a directory part; NULL finds every device
 *
 * Return: the number of files appended, or -errno if @dir cannot be read (ENOMEM too).
 * With @dev NULL, files are sorted by device name, then CPU. The strings belong to @l.
 */
int rf_find(struct rf_list *l, const char *dir, const char *dev, const char *mid);

/**
 * rf_find_devs() - rf_find() for each of the devices @devs[0..@ndevs), in that order; a name
 * given again is looked up once
 * @which: set to the index in @devs of the device the lookup stopped at
 *
 * Return: 0 when every device has files; 1 when @devs[*@which] has none; -errno when
 * looking for those of @devs[*@which] failed. The lookup stops at the first such device.
 */
int rf_find_devs(struct rf_list *l, const char *dir, const char *const *devs, int ndevs,
		 const char *mid, int *which);

/* Free the entries of @l and leave it empty. */
void rf_list_release(struct rf_list *l);

/**
 * rf_check_hdr() - check the file header @h of a replay file
 * Return: 0, -EPROTO if it was written on a host of the other byte order, or -EINVAL
 * (another version, or not a replay file).
 */
int rf_check_hdr(const struct rf_file_hdr *h);

#endif /* BTREPLAY_REPLAY_FILE_H */
