// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: btt's real run (btt.h: btt_init(), btt_run() — the I/O model and every
 * output subscribed to it —, btt_report(), btt_release()) over a fuzzed merged trace, as
 * btt's main() drives it.
 *
 * Input layout: three control bytes, then trace data (plain or gzip).
 *   byte 0  bit 0  -o (the report in files; else on stdout, which is /dev/null here)
 *           bit 1  -A      bit 2  -a      bit 3  -r      bit 4  -X      bit 5  -Z
 *           bits 6-7  none, --percentiles, --percentiles-only, or --iowait-only with
 *                     --perfetto /dev/null
 *   byte 1  bit 0  -s (with bit 1: -m as well)     bit 2  -l, -q, -z
 *           bit 3  -B      bit 4  -Q, -u      bit 5  -p, -P      bit 6  -I
 *           bit 7  -L 0.5
 *   byte 2  bits 0-1  -t 0.001 / -T 0.5: none, -t, -T, both
 *           bits 2-3  -d: 0.1 (the default), 0.000001, 1, 0
 *           bit 4  -D 8,0;8,16;253,0     bit 5  -e fio,kworker
 *           bit 6  -S 2 (iostat interval)   bit 7  -M (a device map)
 * The stream is read from a regular file (a memfd), as btt reads -i. Every file btt
 * writes goes to a null stream: run-fuzz.sh links btt/report/outfile.c (file_create(),
 * file_close(), the one place btt creates and removes files) with its fopen(), fclose()
 * and unlink() renamed to fuzz_btt_fopen(), fuzz_btt_fclose() and fuzz_btt_unlink()
 * below: the names btt makes are checked and what it writes is formatted and counted
 * (flushed at fclose()), but no file is created (an
 * input with many devices would make hundreds: the per-device *_fp.dat files, -P, -L,
 * -Z, ...) and none is left in the current directory. stdout is /dev/null too; messages go to
 * stderr (run-fuzz.sh closes it while fuzzing). The -M map is read from a memfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btt.h"
#include "common.h"
#include "fuzz-util.h"
#include "blk/log.h"
#include "blk/reader.h"

/*
 * A null stream: what /dev/null would keep (nothing), but ftell() tells its size. Closed
 * streams are kept for the next file_create() (opening and closing a stream through
 * ASan's interceptors, three allocations each, was 10% of a run that opens 30 files).
 */
struct null_file {
	FILE *fp;
	off64_t size;
	int open;
	struct null_file *next; /* in the list of closed streams */
};

struct fuzz_state {
	char devmap[32]; /* /proc/self/fd/N of a memfd */
	int memfd;
	struct null_file *closed; /* streams to reuse */
	/* the stdio buffer of every null stream: what they hold is thrown away, so they can
	 * share one (one stdio buffer of 8 KiB a file, allocated and filled by ASan, was 5% of
	 * the run with the many files an input opens) */
	char iobuf[8192];
};

static struct fuzz_state fz = {.memfd = -1};

static void quiet_log(const char *msg)
{
	(void)msg;
}

static ssize_t null_write(void *cookie, const char *buf, size_t len)
{
	struct null_file *nf = cookie;

	(void)buf;
	if (!nf->open)
		abort(); /* written after fclose() */
	nf->size += (off64_t)len;
	return (ssize_t)len;
}

/*
 * What btt asks (SEEK_CUR 0: ftell()), and two moves of ours: SEEK_SET 0 (rewind()) starts
 * a reused stream, SEEK_END 0 closes it (fuzz_btt_fclose()).
 */
static int null_seek(void *cookie, off64_t *pos, int whence)
{
	struct null_file *nf = cookie;

	if (*pos || (whence != SEEK_CUR && !nf->open == (whence == SEEK_END)))
		abort(); /* a move of btt's, or a stream closed twice */
	if (whence == SEEK_SET) {
		nf->open = 1;
		nf->size = 0;
	} else if (whence == SEEK_END) {
		nf->open = 0;
		nf->next = fz.closed;
		fz.closed = nf;
	}
	*pos = nf->size;
	return 0;
}

/*
 * btt's file_create(): a file to write, named as btt names it. An empty name or one too
 * long fails as fopen() would; every other name gets a stream that keeps nothing, like
 * /dev/null, without the system calls (an input may name a few hundred devices, each with
 * files of its own).
 */
FILE *fuzz_btt_fopen(const char *name, const char *mode);
FILE *fuzz_btt_fopen(const char *name, const char *mode)
{
	static const cookie_io_functions_t null_io = {.write = null_write, .seek = null_seek};
	struct null_file *nf;

	if (!name || !mode || (mode[0] != 'w' && mode[0] != 'a'))
		abort(); /* btt/report/outfile.c only creates files */
	if (!*name || strlen(name) >= 4096) {
		errno = *name ? ENAMETOOLONG : ENOENT;
		return NULL;
	}
	nf = fz.closed;
	if (nf) {
		fz.closed = nf->next;
		rewind(nf->fp);
		if (!nf->open || ftell(nf->fp))
			abort();
		return nf->fp;
	}
	nf = calloc(1, sizeof(*nf));
	if (!nf || !(nf->fp = fopencookie(nf, mode, null_io)) ||
	    setvbuf(nf->fp, fz.iobuf, _IOFBF, sizeof(fz.iobuf)))
		abort();
	nf->open = 1;
	return nf->fp;
}

/*
 * btt's file_close(): the stream is flushed (what it holds is counted, as fclose() would
 * write it) and kept for a later file_create(). Closing one twice aborts; so does writing
 * to it after (when that is flushed).
 */
int fuzz_btt_fclose(FILE *fp);
int fuzz_btt_fclose(FILE *fp)
{
	int rc = fflush(fp);

	if (fseeko(fp, 0, SEEK_END))
		abort();
	return rc;
}

/* btt's file_close() removes a file nothing was written to: there is none to remove. */
int fuzz_btt_unlink(const char *name);
int fuzz_btt_unlink(const char *name)
{
	if (!name || !*name)
		abort();
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char map[] = "sda 8,0\nsdb 8,16\ndm-0 253,0\n";
	int null, mapfd;

	(void)argc;
	(void)argv;
	set_progname("btt");
	blk_set_log_fn(quiet_log);
	null = open("/dev/null", O_WRONLY);
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
		abort();
	close(null);
	mapfd = memfd_create("fuzz-btt-devmap", 0);
	if (mapfd < 0)
		abort();
	fuzz_write_all(mapfd, (const uint8_t *)map, sizeof(map) - 1);
	snprintf(fz.devmap, sizeof(fz.devmap), "/proc/self/fd/%d", mapfd);
	fz.memfd = memfd_create("fuzz-btt", MFD_CLOEXEC);
	if (fz.memfd < 0)
		abort();
	return 0;
}

static void set_opts(struct btt_opts *o, uint8_t c0, uint8_t c1, uint8_t c2)
{
	static const double deltas[4] = {0.1, 0.000001, 1, 0};

	if (c0 & 1)
		o->output = "o";
	o->all_data = (c0 >> 1) & 1;
	o->seek_absolute = (c0 >> 2) & 1;
	o->no_remaps = (c0 >> 3) & 1;
	o->easy_parse = (c0 >> 4) & 1;
	o->do_active = (c0 >> 5) & 1;
	o->percentiles = (c0 >> 6) == 3 ? 0 : c0 >> 6;
	if ((c0 >> 6) == 3) {
		o->iowait_only = 1;
		o->perfetto_name = "/dev/null";
	}
	if (c1 & 1) {
		o->seek_name = "seek";
		if (c1 & 2)
			o->sps_name = "sps";
	}
	if (c1 & 4) {
		o->d2c_name = "d2c";
		o->q2c_name = "q2c";
		o->q2d_name = "q2d";
	}
	if (c1 & 8)
		o->bno_name = "bno";
	if (c1 & 16) {
		o->aqd_name = "aqd";
		o->unplug_name = "unplug";
	}
	if (c1 & 32) {
		o->per_io_name = "per-io";
		o->pit_name = "pit";
	}
	if (c1 & 64)
		o->iostat_name = "iostat";
	if (c1 & 128)
		o->plat_freq = 0.5;
	if (c2 & 1) {
		o->t_start = 0.001;
		o->time_bounded = 1;
	}
	if (c2 & 2) {
		o->t_end = 0.5;
		o->time_bounded = 1;
	}
	o->range_delta = deltas[(c2 >> 2) & 3];
	if (c2 & 16)
		o->devices = "8,0;8,16;253,0";
	if (c2 & 32)
		o->exes = "fio,kworker";
	if (c2 & 64)
		o->iostat_interval = 2;
	if (c2 & 128)
		o->devmap_name = fz.devmap;
}

static int next_record(void *src, struct blk_event *ev)
{
	return blk_reader_next(src, ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btt b = {.opts = BTT_OPTS_INIT};
	struct blk_reader *r;
	struct blk_event ev;
	int fd;

	if (size < 3 || size > FUZZ_MAX_INPUT)
		return 0;
	if (fz.memfd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	set_opts(&b.opts, data[0], data[1], data[2]);
	data += 3;
	size -= 3;

	/* what btt's main() does with -i FILE, less the -v progress and the read-ahead thread */
	if (btt_init(&b) < 0 || btt_open(&b) < 0)
		abort(); /* the device map is ours, /dev/null can be written */
	fuzz_refill(fz.memfd, data, size);
	fd = dup(fz.memfd);
	if (fd < 0 || lseek(fd, 0, SEEK_SET))
		abort();
	r = blk_reader_fdopen(fd, "fuzz");
	if (!r)
		abort();
	if (blk_reader_next(r, &ev) > 0) {
		btt_run(&b, next_record, r, &ev, NULL, NULL);
		btt_report(&b);
	}
	blk_reader_close(r);
	btt_release(&b);
	return 0;
}
