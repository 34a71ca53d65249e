// SPDX-License-Identifier: GPL-2.0
/*
 * gentrace's world: the processes that do I/O (what kind, how often, through which
 * partition), the passthrough commands one of them sends, and the names and pids the
 * trace's process notes give them.
 */
#include <stdio.h>
#include <string.h>

#include "gen.h"

#define KBLOCKD_PID 20000

/* Its size is the header's NPROC: a different count does not compile. */
const struct gen_proc procs[] = {
	{ 2301, "fio", GK_RANDREAD, 300, 0 },
	{ 2302, "fio", GK_RANDWRITE, 250, 0 },
	{ 1187, "postgres", GK_DB, 120, 0 },
	{ 193, "kworker/u8:2", GK_WRITEBACK, 100, 0 },
	{ 3322, "tar", GK_READAHEAD, 80, 1 },
	{ 612, "jbd2/sda1-8", GK_JOURNAL, 60, 1 },
	{ 3401, "find", GK_META, 40, 1 },
	{ 5120, "smartctl", GK_PC, 4, 0 },
	{ 5201, "fstrim", GK_DISCARD, 2, 1 },
};

/* Its size is the header's NCDB. */
const struct gen_cdb cdbs[] = {
	{ 0, 0, { 0 } },
	{ 6, 0, { 0x00 } },					/* TEST UNIT READY */
	{ 6, 96, { 0x12, 0x00, 0x00, 0x00, 0x60, 0x00 } },	/* INQUIRY */
	/* ATA PASS-THROUGH(16) SMART READ DATA */
	{ 16, 512, { 0x85, 0x08, 0x0e, 0x00, 0xd0, 0x00, 0x01, 0x00, 0x00, 0x00, 0x4f, 0x00,
		     0xc2, 0x00, 0xb0, 0x00 } },
	{ 10, 8, { 0x25 } },					/* READ CAPACITY(10) */
};

uint32_t proc_pid(unsigned int proc, unsigned int cpu)
{
	if (proc < NPROC)
		return procs[proc].pid;
	return proc == PROC_IDLE ? 0 : KBLOCKD_PID + cpu;
}

void proc_comm(unsigned int proc, unsigned int cpu, char comm[16])
{
	memset(comm, 0, 16);
	if (proc < NPROC)
		snprintf(comm, 16, "%s", procs[proc].comm);
	else if (proc == PROC_IDLE)
		snprintf(comm, 16, "swapper/%u", cpu);
	else
		snprintf(comm, 16, "kworker/%u:1H", cpu);
}
