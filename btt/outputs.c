// SPDX-License-Identifier: GPL-2.0
/*
 * The table of btt's outputs (output.h). The rows are in the order the reference creates
 * its files; the report's sections come out in the same order (the classic report, the
 * percentiles, the I/O waits, then the range data).
 */
#include <string.h>

#include "export/export-out.h"
#include "iowait/waits.h"
#include "origin/files.h"
#include "origin/origins.h"
#include "output.h"
#include "perfetto/perfetto-out.h"
#include "report/active-periods.h"
#include "report/event-files.h"
#include "report/cgroups.h"
#include "report/iops-mbps.h"
#include "report/iostat.h"
#include "report/latency.h"
#include "report/per-io.h"
#include "report/percentiles.h"
#include "report/report.h"
#include "report/statistics.h"

const struct btt_output_ops *const btt_outputs[] = {
	&export_output, /* --export (ours: before the reference's files, as it always was) */
	&report_output, /* the classic report: its statistics (statistics.c), -s, -m */
	&iops_mbps_output, /* sys_iops_fp.dat, sys_mbps_fp.dat and per device */
	&latency_output, /* -l, -q, -z, -L */
	&event_files_output, /* -B, -Q, -u, NAME.msg, NAME_qhist.dat, NAME_dhist.dat */
	&per_io_output, /* -p, -P */
	&percentiles_output, /* --percentiles */
	&active_periods_output, /* the report's live periods, -Z */
	&iostat_output, /* -I */
	&perfetto_output, /* --perfetto */
	&waits_output, /* I/O wait by process */
	&cgroups_output, /* I/O by cgroup (a trace with cgroup notes) */
	&origins_output, /* I/O by origin (a trace with origin notes) */
	&files_output, /* I/O by file (the same), from the origins output's tracker */
	&ranges_output, /* the range data (stdout, or NAME.dat) */
};

const size_t btt_noutputs = sizeof(btt_outputs) / sizeof(btt_outputs[0]);

int btt_output_index(const char *name)
{
	for (size_t i = 0; i < btt_noutputs; i++)
		if (!strcmp(btt_outputs[i]->name, name))
			return (int)i;
	return -1;
}

void *btt_view_output(const struct btt_view *v, const char *name)
{
	int i = btt_output_index(name);

	return i < 0 || !v->states ? NULL : v->states[i];
}
