// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: blkparse's real run (parse-run.c: on_record, the merge or the pipe-mode
 * sorter, accounting, printing, the dump, the -t model, the summaries) over a fuzzed trace.
 *
 * Input layout: two control bytes, then trace data (plain or gzip).
 *   byte 0  bit 0     mode: 0 = one input read in pipe mode, 1 = file mode (the data split
 *                     in two halves, the per-CPU files NAME.blktrace.0 and .1 of one input)
 *           bits 1-2  -b: 512 (the default), 1, 4, 32
 *           bit 3     pipe mode: a reorder window of 8 records (stalled releases)
 *           bit 4     -h
 *           bits 5-6  -S: none, Q, w, c
 *           bit 7     pipe mode: the input is a regular file given by name (a merged
 *                     trace), not a pipe
 *   byte 1  bit 0     no -t     bit 1  no -s     bit 2  no -v     bit 3  --cgroup
 *           bit 4     -d /dev/null (with bit 3 of byte 0 in file mode: -M as well)
 *           bit 5     -w 0.000001:0.5
 *           bits 6-7  text: default lines, -f with every field, -F for a few actions, -O
 * (Byte 1 = 0 is what the first fuzz target always did: -t -s -v.)
 * One input in 256, chosen by a hash of all its bytes, runs with the print and dump
 * threads (blkparse's own set-up); the others render and dump on the caller's thread.
 * Text goes to /dev/null; messages go to stderr (run-fuzz.sh closes it while fuzzing).
 * Files live in a directory made once (on /dev/shm when there is one); an input only
 * rewrites them. Formats are compiled once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "fuzz-util.h"
#include "parse-run.h"
#include "blk/format.h"
#include "blk/log.h"

/* every field but %u (which dies without a matched -t request, as blkparse does) */
#define ALL_FIELDS "%a %c %C %d %D %e %g %m %M %n %N %p %P %s %S %t %T %U %z|%5T.%9t %-4a %8s\n"

static const char *const per_action[][2] = {
	{"C", "%D %a %d %S + %n (%e) [%C]\n"},
	{"Q", "%D %a %d %S + %n [%C] %z\n"},
	{"A", "%M,%m %a %P|\n"},
	{"X", "%U_%-3a|%g\n"},
};

struct fuzz_state {
	char dir[64], name[96], path[2][112], plain[112];
	char per_spec[4][64]; /* "X,FORMAT", as -F takes it */
	int fd[2], plain_fd;
	FILE *devnull;
	struct blk_format *all, *per[4];
	char all_spec[sizeof(ALL_FIELDS)];
};

static struct fuzz_state fz;

static void quiet_log(const char *msg)
{
	(void)msg;
}

static void cleanup(void)
{
	for (int i = 0; i < 2; i++)
		unlink(fz.path[i]);
	unlink(fz.plain);
	rmdir(fz.dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];
	struct stat st;

	(void)argc;
	(void)argv;
	set_progname("blkparse");
	blk_set_log_fn(quiet_log);
	snprintf(fz.dir, sizeof(fz.dir), "%s/fuzz-parse.XXXXXX",
		 !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
	if (!mkdtemp(fz.dir))
		abort();
	atexit(cleanup);
	snprintf(fz.name, sizeof(fz.name), "%s/fuzz", fz.dir);
	for (int i = 0; i < 2; i++) {
		snprintf(fz.path[i], sizeof(fz.path[i]), "%s.blktrace.%d", fz.name, i);
		fz.fd[i] = open(fz.path[i], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fz.fd[i] < 0)
			abort();
	}
	snprintf(fz.plain, sizeof(fz.plain), "%s/merged.bin", fz.dir);
	fz.plain_fd = open(fz.plain, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fz.devnull = fopen("/dev/null", "w");
	if (fz.plain_fd < 0 || !fz.devnull)
		abort();
	memcpy(fz.all_spec, ALL_FIELDS, sizeof(ALL_FIELDS));
	fz.all = blk_format_compile(fz.all_spec, err, sizeof(err));
	for (int i = 0; i < 4; i++) {
		snprintf(fz.per_spec[i], sizeof(fz.per_spec[i]), "%s,%s", per_action[i][0],
			 per_action[i][1]);
		fz.per[i] = blk_format_compile(fz.per_spec[i] + 2, err, sizeof(err));
	}
	if (!fz.all || !fz.per[0] || !fz.per[1] || !fz.per[2] || !fz.per[3])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int batches[4] = {512, 1, 4, 32};
	static const char sort_keys[4] = {0, 'Q', 'w', 'c'};
	struct parse_env env = {0};
	struct parse_opts o = {0};
	struct parse_arg args[6];
	const char *inputs[1];
	char fdpath[32];
	uint8_t c0, c1;
	int fd = -1, threads;

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	if (!fz.devnull)
		LLVMFuzzerInitialize(NULL, NULL);
	threads = fuzz_hash(data, size) % 256 == 0; /* see o.one_thread below */
	c0 = data[0];
	c1 = size > 1 ? data[1] : 0;
	data += size > 1 ? 2 : 1;
	size -= size > 1 ? 2 : 1;

	/* the options, as blkparse's parse_args() leaves them */
	o.inputs = inputs;
	o.args = args;
	o.act_mask = 0xffff;
	o.batch = batches[(c0 >> 1) & 3];
	o.dump_msgs = 1;
	o.text = 1;
	o.stop_end = UINT64_MAX;
	o.hash_by_name = (c0 >> 4) & 1;
	o.sort_key = sort_keys[(c0 >> 5) & 3];
	o.per_process = !(c1 & 2) || o.sort_key;
	o.track = !(c1 & 1);
	o.verbose = !(c1 & 4);
	o.show_cgroup = (c1 >> 3) & 1;
	if (c1 & 16) {
		o.dump = "/dev/null";
		o.dump_msgs = !((c0 & 1) && (c0 & 8));
	}
	if (c1 & 32) {
		o.stop_start = 1000;
		o.stop_end = 500000000;
	}
	switch (c1 >> 6) {
	case 1:
		for (const char *p = "ABCDFGIMPQRSTUWX"; *p; p++)
			o.fmt[(unsigned char)*p] = fz.all;
		args[o.nargs++] = (struct parse_arg){'f', fz.all_spec};
		break;
	case 2:
		for (int i = 0; i < 4; i++) {
			o.fmt[(unsigned char)per_action[i][0][0]] = fz.per[i];
			args[o.nargs++] = (struct parse_arg){'F', fz.per_spec[i]};
		}
		break;
	case 3:
		o.text = 0;
		break;
	}
	if (c0 & 1) {
		size_t half = size / 2;

		fuzz_refill(fz.fd[0], data, half);
		fuzz_refill(fz.fd[1], data + half, size - half);
		inputs[0] = fz.name;
	} else {
		o.max_pending = (c0 & 8) ? 8 : 0;
		if (c0 & 128) {
			fuzz_refill(fz.plain_fd, data, size);
			inputs[0] = fz.plain;
		} else {
			fd = fuzz_pipe(data, size);
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
			inputs[0] = fdpath;
		}
	}
	/* the print and dump threads for one input in 256: a thread per short run costs more
	 * than the run. Chosen by a hash of the whole input, not by its control bytes (it was
	 * c0 == c1): the pipe-mode seeds start with 0 0, the threads' edges keep such inputs
	 * in the corpus, and mutations mostly keep the first bytes (36% of a corpus grown for
	 * 3 minutes ran threads); a mutation of one now is threaded as rarely as any other */
	o.one_thread = !threads;
	o.ninputs = 1;
	args[o.nargs++] = (struct parse_arg){'i', inputs[0]};

	env.out = fz.devnull;
	parse_run(&o, &env);
	if (fd >= 0)
		close(fd);
	return 0;
}
