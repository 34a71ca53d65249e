// SPDX-License-Identifier: GPL-2.0
/*
 * One run of btt (see btt.h): the outputs the options ask for (the table of output.h)
 * subscribe to the I/O model, the model reads the stream, and the outputs write what
 * they found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btt.h"
#include "common.h"
#include "model/alloc.h"
#include "model/bios.h"
#include "model/clock.h"
#include "report/outfile.h"

int btt_init(struct btt *b)
{
	b->out = xcalloc(btt_noutputs, sizeof(*b->out));
	b->view = (struct btt_view){.opts = &b->opts, .devs = &b->devs, .states = b->out};
	devs_init(&b->devs, b->opts.devices);
	if (b->opts.devmap_name)
		return devs_load_map(&b->devs, b->opts.devmap_name);
	return 0;
}

static int wanted(const struct btt_output_ops *ops, const struct btt_opts *o)
{
	return !ops->wanted || ops->wanted(o);
}

int btt_open(struct btt *b)
{
	for (size_t i = 0; i < btt_noutputs; i++) {
		const struct btt_output_ops *ops = btt_outputs[i];

		if (ops->open && wanted(ops, &b->opts) && ops->open(&b->view, &b->out[i]) < 0)
			return -1;
	}
	return 0;
}

void *btt_output(const struct btt *b, const char *name)
{
	return btt_view_output(&b->view, name);
}

/* the bios model reads every event the I/O model takes */
static void bios_take(void *ctx, const struct blk_event *ev)
{
	struct btt *b = ctx;

	if (bios_event(b->bios, ev) < 0 && !b->bios_nomem++)
		warning("out of memory for the model of every bio: the counts of every I/O (--export, --perfetto, --percentiles, the I/O waits) are short from trace time %llu.%09llu on",
			(unsigned long long)(ev->time / 1000000000),
			(unsigned long long)(ev->time % 1000000000));
}

int btt_run(struct btt *b, iomodel_next_fn next, void *src, struct blk_event *ev,
	    void (*progress)(void *arg), void *arg)
{
	struct iomodel_opts mo = {
		.time_bounded = b->opts.time_bounded,
		.t_start = b->opts.t_start,
		.t_end = b->opts.t_end,
		.no_remaps = b->opts.no_remaps,
	};
	unsigned int flags = 0;

	b->model = iomodel_new(&b->devs, &mo);
	b->view.model = b->model;
	for (size_t i = 0; i < btt_noutputs; i++)
		if (wanted(btt_outputs[i], &b->opts))
			flags |= btt_outputs[i]->flags;
	/* one wall clock for the outputs that date events, shown every record as it is read */
	if (flags & BTT_OUTPUT_CLOCK)
		b->clock = b->view.clock = btt_clock_new(&next, &src, ev);
	/* one model of every bio, for the outputs that count them (none: it costs nothing) */
	if (flags & BTT_OUTPUT_BIOS) {
		b->bios = b->view.bios = bios_new(NULL, NULL);
		if (!b->bios)
			die("out of memory");
		iomodel_subscribe(b->model, &(struct btt_io_sub){.ctx = b, .event = bios_take});
	}
	/* in table order, the files are created as the reference creates them */
	for (size_t i = 0; i < btt_noutputs; i++)
		if (wanted(btt_outputs[i], &b->opts))
			b->out[i] = btt_outputs[i]->new (&b->view, b->out[i]);
	return iomodel_run(b->model, next, src, ev, progress, arg);
}

int btt_report(struct btt *b)
{
	char fn[4096], *avg_name = NULL;
	uint64_t t_last;
	FILE *avg_fp = stdout;
	int ret = 0;

	iomodel_finish(b->model);
	if (b->bios)
		bios_finish(b->bios);
	t_last = iomodel_last_time(b->model);
	for (size_t i = 0; i < btt_noutputs; i++)
		if (b->out[i] && btt_outputs[i]->input_end)
			btt_outputs[i]->input_end(b->out[i], t_last);
	devs_sort_procs(&b->devs);

	if (b->opts.output) {
		snprintf(fn, sizeof(fn), "%s.avg", b->opts.output);
		avg_fp = file_create(fn, &avg_name);
	}
	for (size_t i = 0; i < btt_noutputs; i++)
		if (b->out[i] && btt_outputs[i]->report)
			btt_outputs[i]->report(b->out[i], avg_fp);
	if (avg_fp != stdout)
		file_close(&avg_fp, &avg_name);
	else if (fflush(stdout) != 0 || ferror(stdout))
		die("write error on standard output: %s", strerror(errno));

	/* every output finishes its files, whatever another's failure */
	for (size_t i = 0; i < btt_noutputs; i++) {
		const struct btt_output_ops *ops = btt_outputs[i];

		if (b->out[i] && ops->finish && ops->finish(b->out[i], t_last) < 0)
			ret = -1;
	}
	return ret;
}

void btt_release(struct btt *b)
{
	for (size_t i = btt_noutputs; b->out && i-- > 0;) {
		if (b->out[i] && btt_outputs[i]->free)
			btt_outputs[i]->free(b->out[i]);
		b->out[i] = NULL;
	}
	free(b->out);
	b->out = NULL;
	b->view.states = NULL;
	btt_clock_free(b->clock);
	bios_free(b->bios);
	iomodel_free(b->model);
	devs_release(&b->devs);
	b->model = b->view.model = NULL;
	b->clock = b->view.clock = NULL;
	b->bios = b->view.bios = NULL;
}
