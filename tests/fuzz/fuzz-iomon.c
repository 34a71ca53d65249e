// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: blkiomon's real stream processing (mon-run.c: pairing, statistics,
 * interval reports in every output format) over a fuzzed binary trace stream.
 *
 * Input layout: a control byte, then trace data (plain or gzip).
 *   bit 0  --trace-time (else intervals by wall clock, as blkiomon by default)
 *   bit 1  --percentiles      bit 2  --exact-throughput
 *   bit 3  -h (text report)   bit 4  -D (debug)   bit 5  --csv
 *   bit 6  -b (binary records) and -d (driver data copies)
 *   bit 7  the stream is a pipe (else a regular file)
 * The interval is 1 s. Text outputs go to /dev/null, binary ones to /dev/null too;
 * messages to stderr (run-fuzz.sh closes it while fuzzing).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "fuzz-util.h"
#include "mon-run.h"
#include "blk/log.h"
#include "blk/output.h"
#include "blk/reader.h"

static FILE *devnull;
static int memfd = -1;

static void quiet_log(const char *msg)
{
	(void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	set_progname("blkiomon");
	blk_set_log_fn(quiet_log);
	devnull = fopen("/dev/null", "w");
	memfd = memfd_create("fuzz-iomon", MFD_CLOEXEC);
	if (!devnull || memfd < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mon_opts o = {.interval = 1, .msg_id = 1};
	struct mon m = {.o = &o, .msq = -1};
	struct blk_reader *r;
	uint8_t ctl;
	int fd;

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	if (!devnull)
		LLVMFuzzerInitialize(NULL, NULL);
	ctl = data[0];
	data++;
	size--;
	o.trace_time = ctl & 1;
	o.percentiles = (ctl >> 1) & 1;
	o.exact_thrput = (ctl >> 2) & 1;
	if (ctl & 8)
		m.human = devnull;
	if (ctl & 16)
		m.debug = devnull;
	if (ctl & 32)
		m.csv = devnull;
	if (ctl & 64) {
		m.binary = blk_output_open("/dev/null", 0);
		m.lldd = blk_output_open("/dev/null", 0);
		if (!m.binary || !m.lldd)
			abort();
	}
	if (ctl & 128) {
		fd = fuzz_pipe(data, size);
	} else {
		fuzz_refill(memfd, data, size);
		fd = dup(memfd);
		if (fd < 0 || lseek(fd, 0, SEEK_SET))
			abort();
	}
	r = blk_reader_fdopen(fd, "(stdin)");
	if (!r)
		abort();
	mon_run(&m, r);
	blk_reader_close(r);
	blk_output_close(m.binary);
	blk_output_close(m.lldd);
	return 0;
}
