/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk and ioctl layouts of block traces, stated once.
 *
 * Written from the documented kernel ABI (struct blk_io_trace, version 7, and the
 * 2025 version-8 struct blk_io_trace2). Nothing else in the tree redefines them.
 */
#ifndef BLK_TRACE_H
#define BLK_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define BLK_IO_TRACE_MAGIC 0x65617400u
#define BLK_IO_TRACE_MAGIC_MASK 0xffffff00u
#define BLK_IO_TRACE_VERSION 0x07
#define BLK_IO_TRACE2_VERSION 0x08

/* Version-1 record header (48 bytes), followed by pdu_len payload bytes. */
struct blk_io_trace {
	uint32_t magic;
	uint32_t sequence;
	uint64_t time;
	uint64_t sector;
	uint32_t bytes;
	uint32_t action;
	uint32_t pid;
	uint32_t device;
	uint32_t cpu;
	uint16_t error;
	uint16_t pdu_len;
};

/* Version-2 record header (64 bytes): 64-bit action, pid moved before it. */
struct blk_io_trace2 {
	uint32_t magic;
	uint32_t sequence;
	uint64_t time;
	uint64_t sector;
	uint32_t bytes;
	uint32_t pid;
	uint64_t action;
	uint32_t device;
	uint32_t cpu;
	uint16_t error;
	uint16_t pdu_len;
	uint8_t pad[12];
};

_Static_assert(sizeof(struct blk_io_trace) == 48, "blk_io_trace is 48 bytes");
_Static_assert(offsetof(struct blk_io_trace, time) == 8, "time at 8");
_Static_assert(offsetof(struct blk_io_trace, action) == 28, "action at 28");
_Static_assert(offsetof(struct blk_io_trace, device) == 36, "device at 36");
_Static_assert(offsetof(struct blk_io_trace, error) == 44, "error at 44");
_Static_assert(offsetof(struct blk_io_trace, pdu_len) == 46, "pdu_len at 46");
_Static_assert(sizeof(struct blk_io_trace2) == 64, "blk_io_trace2 is 64 bytes");
_Static_assert(offsetof(struct blk_io_trace2, pid) == 28, "v2 pid at 28");
_Static_assert(offsetof(struct blk_io_trace2, action) == 32, "v2 action at 32");
_Static_assert(offsetof(struct blk_io_trace2, device) == 40, "v2 device at 40");
_Static_assert(offsetof(struct blk_io_trace2, error) == 48, "v2 error at 48");
_Static_assert(offsetof(struct blk_io_trace2, pdu_len) == 50, "v2 pdu_len at 50");

/* Categories: bit N of the upper half of the (low 32 bits of the) action word. */
enum blk_tc {
	BLK_TC_READ = 1 << 0,
	BLK_TC_WRITE = 1 << 1,
	BLK_TC_FLUSH = 1 << 2,
	BLK_TC_SYNC = 1 << 3,
	BLK_TC_QUEUE = 1 << 4,
	BLK_TC_REQUEUE = 1 << 5,
	BLK_TC_ISSUE = 1 << 6,
	BLK_TC_COMPLETE = 1 << 7,
	BLK_TC_FS = 1 << 8,
	BLK_TC_PC = 1 << 9,
	BLK_TC_NOTIFY = 1 << 10,
	BLK_TC_AHEAD = 1 << 11,
	BLK_TC_META = 1 << 12,
	BLK_TC_DISCARD = 1 << 13,
	BLK_TC_DRV_DATA = 1 << 14,
	BLK_TC_FUA = 1 << 15,
};
#define BLK_TC_SHIFT 16
#define BLK_TC_ACT(c) ((uint32_t)(c) << BLK_TC_SHIFT)

/* v2-only categories: bits 32.. of the 64-bit action. */
#define BLK_TC2_ZONE_APPEND (1ull << 32)
#define BLK_TC2_ZONE_RESET (1ull << 33)
#define BLK_TC2_ZONE_RESET_ALL (1ull << 34)
#define BLK_TC2_ZONE_FINISH (1ull << 35)
#define BLK_TC2_ZONE_OPEN (1ull << 36)
#define BLK_TC2_ZONE_CLOSE (1ull << 37)
#define BLK_TC2_WRITE_ZEROES (1ull << 38)

/* Action codes: the low 16 bits. */
enum blk_ta {
	BLK_TA_QUEUE = 1,
	BLK_TA_BACKMERGE = 2,
	BLK_TA_FRONTMERGE = 3,
	BLK_TA_GETRQ = 4,
	BLK_TA_SLEEPRQ = 5,
	BLK_TA_REQUEUE = 6,
	BLK_TA_ISSUE = 7,
	BLK_TA_COMPLETE = 8,
	BLK_TA_PLUG = 9,
	BLK_TA_UNPLUG_IO = 10,
	BLK_TA_UNPLUG_TIMER = 11,
	BLK_TA_INSERT = 12,
	BLK_TA_SPLIT = 13,
	BLK_TA_BOUNCE = 14,
	BLK_TA_REMAP = 15,
	BLK_TA_ABORT = 16,
	BLK_TA_DRV_DATA = 17,
	BLK_TA_ZONE_PLUG = 18,
	BLK_TA_ZONE_UNPLUG = 19,
};
#define BLK_TA_CGROUP (1u << 8)

/* Notify codes (with the notify category). */
enum blk_tn {
	BLK_TN_PROCESS = 0,
	BLK_TN_TIMESTAMP = 1,
	BLK_TN_MESSAGE = 2,
};
#define BLK_TN_ACTION(code) (BLK_TC_ACT(BLK_TC_NOTIFY) | (code))

/*
 * I/O wait note (blktrace-ng's own, not written by any kernel): one interval a task spent
 * blocked waiting for I/O, recorded by blktrace --iowait. A version-7 notify record:
 *
 *   magic|7, sequence 0, time = when the wait ENDED (trace clock, ns, as the block records),
 *   sector 0, bytes 0, action = BLK_TN_ACTION(BLK_TN_IOWAIT), pid = the waiting thread (tid),
 *   device = the trace's first device, cpu = the CPU the task went on running on, error 0,
 *   pdu_len = sizeof(struct blk_iowait_pdu), then the payload below.
 *
 * The classic tools skip notify records whose code they do not know (blkparse 1.2.0 and
 * 1.3.0 in file and pipe mode, btt 2.09, blkiomon: checked by tests/e2e/t0545). The tracer
 * writes these records to their own per-CPU files, NAME.iowait.blktrace.CPU beside
 * NAME.blktrace.CPU (which the classic tools never open), and in-band into the -o - stream;
 * blkparse -d carries them into the merged file, their time rebased like the events'.
 *
 * The payload is in the byte order of the host that wrote it (its magic tells which); the
 * version changes only if the meaning of a field changes: new fields are appended, @len
 * grows, and readers ignore what follows the fields they know.
 */
#define BLK_TN_IOWAIT 0x40
#define BLK_IOWAIT_MAGIC 0x54574f49u /* "IOWT" on a little-endian host */
#define BLK_IOWAIT_VERSION 1

/*
 * Device name note (blktrace-ng's own, not written by any kernel): the name of a traced
 * device ("loop0", "sda1", "dm-0"), so that a tool can label the device without a device
 * map (btt -M). A version-7 notify record:
 *
 *   magic|7, sequence 0, time = that of the first record of the stream it starts (trace
 *   clock, ns), sector 0, bytes 0, action = BLK_TN_ACTION(BLK_TN_DEVNAME), pid 0,
 *   device = the device it names, cpu = the stream's CPU, error 0, pdu_len = the name's
 *   length (1 to BLK_DEVNAME_MAX), then the name's bytes (no NUL; printable ASCII, no space).
 *
 * blktrace writes one before the first record of each per-CPU stream of each device (the
 * NAME.blktrace.CPU files, the -o - stream, the network streams), so that whichever of
 * them holds the device's first event, the note comes no later in a merged trace; its
 * time is a record's, so it moves no one's idea of when the trace began. The classic tools
 * skip notify records whose code they do not know (checked by tests/e2e/t0547: only the
 * elapsed times blkparse 1.2.0 -t reads from stale memory move, as with any added record);
 * blkparse -d carries the notes into the merged file.
 */
#define BLK_TN_DEVNAME 0x41
#define BLK_DEVNAME_MAX 63

/*
 * Cgroup notes (blktrace-ng's own, not written by any kernel): which cgroup each I/O event
 * was charged to, recorded by blktrace --origin. The kernel's blk_cgroup trace option tags
 * an event with BLK_TA_CGROUP and puts the cgroup id (8 bytes) before its payload; the
 * classic 1.2.0 tools reject such events, so the tracer writes the event untagged, as it
 * would be without the option, and carries the id in these notes instead:
 *
 * BLK_TN_CGROUP, a run: the events of the note's device and CPU whose sequence numbers are
 * @first to @first + @count - 1 were tagged with cgroup @id, except plugs and unplugs
 * (BLK_TA_PLUG, BLK_TA_UNPLUG_IO, BLK_TA_UNPLUG_TIMER), which the kernel never tags and a
 * run passes over (they come between a request's G and D). A version-7 notify record:
 *
 *   magic|7, sequence 0, time = that of the run's first event, sector 0, bytes 0,
 *   action = BLK_TN_ACTION(BLK_TN_CGROUP), pid 0, device and cpu = the events', error 0,
 *   pdu_len = sizeof(struct blk_cgroup_pdu), then the payload below.
 *
 * It comes before the run's first event in the same stream (per-CPU file, -o - stream,
 * network stream), so a reader knows an event's cgroup when it reads the event, and
 * blkparse -d, which writes notes as it reads them, keeps it ahead of them. A run ends where
 * the cgroup changes, at another untagged event, and where the tracer hands a batch of records
 * on: one note per run of a task's I/O rather than one per event (a record is 48 bytes, a
 * note 64), and exact whatever order a reader merges the streams in, since an event is named
 * by its device, CPU and sequence number, which merging, -o - and -d keep.
 *
 * BLK_TN_CGPATH: the path of cgroup @id in the hierarchy of the io (v2) or blkio (v1)
 * controller, "/" for its root, as in /proc/PID/cgroup. Same header as above but
 * time = that of the run note it comes before, pdu_len = 8 + the path's length (1 to
 * BLK_CGPATH_MAX), then the id (u64) and the path's bytes (no NUL). Written once per stream,
 * before the first run note that names the id; an id whose directory the tracer did not
 * find (the cgroup was removed before it looked) gets no path note: tools name it by number.
 *
 * The id is the kernel's cgroup id: the inode number of the cgroup's directory (on 64-bit
 * kernels; on 32-bit ones the inode number in the low half and a generation in the high
 * half), printed by blkparse 1.3.0's %g as "%x,%x" of its low and high halves. Payloads are
 * in the byte order of the host that wrote them (the magic tells which). The classic tools
 * skip notify records whose code they do not know (checked by tests/e2e/t0548).
 */
#define BLK_TN_CGROUP 0x42
#define BLK_TN_CGPATH 0x43
#define BLK_CGPATH_MAX 4000

struct blk_cgroup_pdu {
	uint64_t id; /* the cgroup id (kernel's cgroup_id(), as in the tagged payload) */
	uint32_t first; /* sequence number of the run's first event */
	uint32_t count; /* events in the run */
};
_Static_assert(sizeof(struct blk_cgroup_pdu) == 16, "cgroup run payload is 16 bytes");

/*
 * Origin notes (blktrace-ng's own, not written by any kernel): what ties an I/O to the
 * file it reads or writes and to the task that dirtied its data, recorded by blktrace
 * --origin from tracepoints enabled beside the blk tracer (blktrace(8) says which) and
 * written in the same per-CPU streams as the events, in time order with them. Version-7
 * notify records; sector 0, bytes 0, error 0; payloads in the byte order of the host that
 * wrote them (the magic tells which). The classic tools skip notify records whose code they
 * do not know. Only file systems on a whole traced device are covered: the device a note
 * names is a traced device, and sectors count from its start.
 *
 * BLK_TN_DIRTY, a run of pages one task dirtied: pages @index to @index + @count - 1 (of
 * @page_size bytes) of file @ino on the note's device. time = the first page's dirtying,
 * pid = the dirtying task (thread id), cpu = the CPU it ran on, pdu_len =
 * sizeof(struct blk_dirty_pdu). The kernel tells when a clean page becomes dirty
 * (writeback:writeback_dirty_folio), so a page dirtied again before it is written back
 * is charged to its first dirtier until then.
 *
 * BLK_TN_FMAP, where a file's bytes are on the device: bytes @offset to @offset + @bytes - 1
 * of file @ino are at sectors (512 bytes) @sector on of the note's device. time = when the
 * file system looked the mapping up or made it (before the I/O that uses it is queued),
 * pid = the task, cpu = its CPU, pdu_len = sizeof(struct blk_fmap_pdu). A later note for the
 * same sectors replaces an earlier one (blocks freed and reused).
 *
 * BLK_TN_FILE, the name of a file: pid 0, time = that of the last record of its stream,
 * pdu_len = 8 + the path's length (1 to BLK_FILE_PATH_MAX), then the inode number (u64) and
 * the absolute path's bytes (no NUL) as the tracer found it at the end of the trace. Written
 * once per file seen in a DIRTY or FMAP note that still existed then; a file deleted before
 * the end gets none (tools name it by inode number).
 */
#define BLK_TN_DIRTY 0x44
#define BLK_TN_FMAP 0x45
#define BLK_TN_FILE 0x46
#define BLK_FILE_PATH_MAX 4000

struct blk_dirty_pdu {
	uint64_t ino; /* the file's inode number */
	uint64_t index; /* its first page dirtied (file offset / page_size) */
	uint32_t count; /* pages in the run */
	uint32_t page_size; /* bytes per page */
	char comm[16]; /* the dirtying task's name, NUL padded */
};
_Static_assert(sizeof(struct blk_dirty_pdu) == 40, "dirty run payload is 40 bytes");

struct blk_fmap_pdu {
	uint64_t ino; /* the file's inode number */
	uint64_t offset; /* bytes into the file */
	uint64_t sector; /* where they start on the device (512-byte sectors) */
	uint64_t bytes; /* how many */
};
_Static_assert(sizeof(struct blk_fmap_pdu) == 32, "file map payload is 32 bytes");

/* Where a wait was measured. */
enum blk_iowait_source {
	BLK_IOWAIT_SRC_UNKNOWN = 0,
	BLK_IOWAIT_SRC_MODULE = 1, /* kernel/iowait module: kretprobes on io_schedule & co */
	BLK_IOWAIT_SRC_KPROBE = 2, /* tracefs kprobe events on the same functions */
	BLK_IOWAIT_SRC_SCHED = 3, /* sched_switch (state D) to sched_waking: any D sleep */
};

enum blk_iowait_flags {
	/* the task had an I/O on a traced device in flight when the wait began */
	BLK_IOWAIT_F_IO = 1 << 0,
	/* ... and that was checked (sched source); without it, nothing is known either way */
	BLK_IOWAIT_F_IO_CHECKED = 1 << 1,
	/* tgid not known (the task had ended before it was looked up): tgid is the tid */
	BLK_IOWAIT_F_TGID_UNKNOWN = 1 << 2,
	/*
	 * sched source, without an I/O of its own in flight: the task that woke it had queued
	 * I/O on a traced device while it slept (a journal thread's commit that an fsync waited
	 * for); waker_tid and waker_comm name it (the payload's len is 88)
	 */
	BLK_IOWAIT_F_WAKER_IO = 1 << 3,
};

/* The kernel function the task waited in (module and kprobe sources). */
enum blk_iowait_func {
	BLK_IOWAIT_FN_UNKNOWN = 0,
	BLK_IOWAIT_FN_IO_SCHEDULE = 1,
	BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT = 2,
	BLK_IOWAIT_FN_BLK_IO_SCHEDULE = 3,
};

struct blk_iowait_pdu {
	uint32_t magic; /* BLK_IOWAIT_MAGIC, in the writer's byte order */
	uint16_t version; /* BLK_IOWAIT_VERSION */
	uint16_t len; /* bytes of payload the writer filled (>= 64) */
	uint64_t duration; /* ns: the wait began at the record's time minus this */
	uint64_t rebase; /* ns subtracted from the record's time by blkparse -d (0 as recorded) */
	uint32_t tgid; /* process */
	uint32_t tid; /* thread (also the record's pid) */
	uint32_t io_dev; /* with BLK_IOWAIT_F_IO: that I/O's device (record encoding), else 0 */
	int32_t waker_cpu; /* the CPU that woke the task, -1 if not known */
	int32_t sleep_cpu; /* the CPU the wait began on, -1 if not known */
	uint8_t source; /* enum blk_iowait_source */
	uint8_t flags; /* enum blk_iowait_flags */
	uint8_t func; /* enum blk_iowait_func */
	uint8_t reserved; /* 0 */
	char comm[16]; /* task name, NUL padded */
	/* appended: written (len 88) only with BLK_IOWAIT_F_WAKER_IO, else len is 64 */
	uint32_t waker_tid; /* the task that woke it */
	uint32_t reserved2; /* 0 */
	char waker_comm[16]; /* its name, NUL padded */
};
#define BLK_IOWAIT_PDU_BASE 64 /* the payload without the waker's fields */
_Static_assert(sizeof(struct blk_iowait_pdu) == 88, "iowait payload is 88 bytes");
_Static_assert(offsetof(struct blk_iowait_pdu, waker_tid) == BLK_IOWAIT_PDU_BASE,
	       "iowait waker_tid at 64");
_Static_assert(offsetof(struct blk_iowait_pdu, duration) == 8, "iowait duration at 8");
_Static_assert(offsetof(struct blk_iowait_pdu, rebase) == 16, "iowait rebase at 16");
_Static_assert(offsetof(struct blk_iowait_pdu, tgid) == 24, "iowait tgid at 24");
_Static_assert(offsetof(struct blk_iowait_pdu, waker_cpu) == 36, "iowait waker_cpu at 36");
_Static_assert(offsetof(struct blk_iowait_pdu, source) == 44, "iowait source at 44");
_Static_assert(offsetof(struct blk_iowait_pdu, comm) == 48, "iowait comm at 48");

/* Remap payload (big-endian on disk). */
struct blk_io_trace_remap {
	uint32_t device_from;
	uint32_t device_to;
	uint64_t sector_from;
};
_Static_assert(sizeof(struct blk_io_trace_remap) == 16, "remap pdu is 16 bytes");

/* Kernel dev_t encoding used in the device field. */
#define BLK_MAJOR(dev) ((unsigned int)((dev) >> 20))
#define BLK_MINOR(dev) ((unsigned int)((dev)&0xfffff))
#define BLK_MKDEV(ma, mi) (((uint32_t)(ma) << 20) | (uint32_t)(mi))

/* Ioctl argument of BLKTRACESETUP. */
struct blk_user_trace_setup {
	char name[32];
	uint16_t act_mask;
	uint32_t buf_size;
	uint32_t buf_nr;
	uint64_t start_lba;
	uint64_t end_lba;
	uint32_t pid;
};

/* Ioctl argument of BLKTRACESETUP2 (192 bytes). */
struct blk_user_trace_setup2 {
	char name[64];
	uint64_t act_mask;
	uint32_t buf_size;
	uint32_t buf_nr;
	uint64_t start_lba;
	uint64_t end_lba;
	uint32_t pid;
	uint32_t flags;
	uint64_t reserved[11];
};
_Static_assert(sizeof(struct blk_user_trace_setup2) == 192, "setup2 is 192 bytes");
_Static_assert(offsetof(struct blk_user_trace_setup2, act_mask) == 64, "setup2 act_mask at 64");

#endif /* BLK_TRACE_H */
