/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory of blkparse 1.2.0 in file mode, replayed on the allocator model (heapemu.h).
 *
 * The classic tool allocates its -t tracking entries with malloc() and never initialises
 * their times, so a request first seen at its issue or insert shows the difference to
 * whatever the reused memory held: an old record, a freed entry, a file name, text of the
 * locale alias file. To print the same numbers we make the same allocations, in the same
 * order and with the same contents: start-up (options, locale, stdio), one stream per
 * per-CPU file read in batches, the record and sort-node caches, the records held back per
 * CPU before they are freed, the process maps and the tracking entries themselves.
 *
 * Calls follow the classic tool's order of work; blkparse.c and acct.c make them. When
 * the model cannot follow (out of memory, an input the classic tool would not read),
 * blk_cmem_failed() turns true and the stale values read as zero from then on. Every
 * call takes a NULL model too, and then does nothing.
 */
#ifndef BLK_CLASSICMEM_H
#define BLK_CLASSICMEM_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"

struct blk_cmem;

/* An option that allocates while the classic tool parses its command line. */
struct blk_cmem_arg {
	char opt; /* 'i' (input name), 'p' (the input read as a pipe), 'f' (-f), 'F' (-F) */
	const char *val;
};

struct blk_cmem_opts {
	const struct blk_cmem_arg *args; /* in command-line order, inputs last */
	int nargs;
	unsigned int batch; /* -b */
	int output_file; /* -o given */
	int dump; /* 0: no -d, 1: -d FILE, 2: -d - */
	size_t stdout_bufsize; /* what stdio gives stdout (its st_blksize), 0 if unbuffered */
	const char *locale_alias; /* path of the locale alias file the C library reads */
	/*
	 * Descriptors open when the inputs are opened (@nfds entries, nonzero = open): files
	 * are numbered lowest free first, and a number shows in a freed per-CPU slot.
	 */
	const unsigned char *fds_open;
	size_t nfds;
};

/* Return: the model after the classic tool's start-up, or NULL (ENOMEM). */
struct blk_cmem *blk_cmem_new(const struct blk_cmem_opts *o);
void blk_cmem_free(struct blk_cmem *c);
int blk_cmem_failed(const struct blk_cmem *c);

enum blk_cmem_file { BLK_CMEM_MISSING, BLK_CMEM_EMPTY, BLK_CMEM_OPENED };

/*
 * The classic tool looks for input @dev's (0-based, command-line order) file of @cpu at
 * @path. Return: for BLK_CMEM_OPENED, the stream number for the calls below; else -1.
 */
int blk_cmem_file(struct blk_cmem *c, int dev, int cpu, const char *path, enum blk_cmem_file st);

enum blk_cmem_rec {
	BLK_CMEM_QUEUED, /* a record kept for merging */
	BLK_CMEM_NOTE, /* a notify record, freed once handled (call blk_cmem_note_done) */
	BLK_CMEM_BAD_CPU, /* a record of another CPU, dropped (and leaked) */
};

/* A record of @stream was read into its batch. */
void blk_cmem_record(struct blk_cmem *c, int stream, const struct blk_event *ev,
		     enum blk_cmem_rec kind);
void blk_cmem_note_done(struct blk_cmem *c);
/* The end of @stream's file was reached while reading a batch. */
void blk_cmem_eof(struct blk_cmem *c, int stream);

/* The next merged record (of @stream, time rebased to @time) is taken. */
void blk_cmem_handle(struct blk_cmem *c, int stream, uint64_t time);
/* After it was printed: it is held back for its CPU, and the oldest one freed. */
void blk_cmem_retire(struct blk_cmem *c, int stream, uint64_t time, uint32_t device,
		     uint32_t sequence);

/*
 * Pipe mode (-i -): the classic tool reads batches of @batch records, sorts each batch
 * (newest first), and frees a record as soon as it is printed; notify records are never
 * freed. blk_cmem_record() with a stream of -1 and BLK_CMEM_NOTE for those.
 */
/* A record kept for merging was read. Return: its tag for the calls below. */
uint64_t blk_cmem_pipe_record(struct blk_cmem *c, const struct blk_event *ev);
/* A read found the end of the input. */
void blk_cmem_pipe_eof(struct blk_cmem *c);
/* A batch was read; it is sorted next. */
void blk_cmem_pipe_batch(struct blk_cmem *c);
/* The batch is sorted: @tag's time is rebased to @time, its CPU looked up. */
void blk_cmem_pipe_sorted(struct blk_cmem *c, uint64_t tag, uint32_t device, uint32_t cpu,
			  uint64_t time);
/* @tag was dropped (outside -w), or printed: its memory is given back. */
void blk_cmem_pipe_release(struct blk_cmem *c, uint64_t tag);
/* The sequence check looked at the CPUs present (@mask: CPUs below 64 in the window). */
void blk_cmem_pipe_cpu_check(struct blk_cmem *c, uint64_t mask);
/* A gap in a CPU's sequence numbers is recorded; one is dropped (filled). */
uint64_t blk_cmem_skip_new(struct blk_cmem *c, uint64_t start, uint64_t end);
void blk_cmem_skip_free(struct blk_cmem *c, uint64_t addr);

/* A process map entry (pid, name) is created; a per-process statistics block. */
void blk_cmem_ppm_new(struct blk_cmem *c, uint32_t pid, const char *comm);
void blk_cmem_ppi_new(struct blk_cmem *c);

/* The words a new tracking entry holds: allocation, queue and dispatch times. */
struct blk_cmem_track {
	uint64_t addr;
	uint64_t allocation_time, queue_time, dispatch_time;
};

/* A tracking entry is allocated; fills @t with its address and stale times. */
void blk_cmem_track_new(struct blk_cmem *c, struct blk_cmem_track *t);
/* It is freed holding these values (sector and the four times). */
void blk_cmem_track_free(struct blk_cmem *c, uint64_t addr, uint64_t sector,
			 const uint64_t times[4]);

#endif /* BLK_CLASSICMEM_H */
