// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse's records printed and dumped (parse-run-int.h): the default line, -f/-F, the
 * messages, and the wall clock of %z.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "parse-origin.h"
#include "parse-run-int.h"
#include "blk/cgroup.h"
#include "blk/output.h"
#include "blk/printq.h"

int parse_write_dump(struct parse_run *r, const struct blk_event *ev)
{
	if (!r->dump)
		return 0;
	if (blk_output_event(r->dump, ev)) {
		r->failed = 1;
		return -EIO;
	}
	return 0;
}

/*
 * Wall clock of printed time 0, for %z: the input's (wallclock.h) plus what was subtracted
 * from the event's time; computed again only when either changes.
 */
static void fill_wall(struct parse_run *r, struct blk_fmt_ctx *c)
{
	if (!r->wall_valid || r->wall_gen != blk_wallclock_generation(r->clock) ||
	    r->wall_rebase != r->rebase) {
		int64_t sec;
		long nsec;

		r->wall_valid = 1;
		r->wall_gen = blk_wallclock_generation(r->clock);
		r->wall_rebase = r->rebase;
		r->wall_kind = blk_wallclock_base(r->clock, &sec, &nsec);
		r->wall.have_wall = r->wall_kind != BLK_WALL_NONE;
		if (r->wall.have_wall) {
			nsec += (long)(r->rebase % NS_PER_SEC);
			sec += (int64_t)(r->rebase / NS_PER_SEC);
			if (nsec >= (long)NS_PER_SEC) {
				nsec -= (long)NS_PER_SEC;
				sec++;
			}
			r->wall.wall_sec = sec;
			r->wall.wall_nsec = nsec;
		}
	}
	c->have_wall = r->wall.have_wall;
	c->wall_sec = r->wall.wall_sec;
	c->wall_nsec = r->wall.wall_nsec;
}

/* The queued text is in the output (written once large); the output is ours again. */
void parse_sync_text(struct parse_run *r)
{
	if (r->q && blk_printq_sync(r->q))
		r->failed = 1;
}

static void print_message(struct parse_run *r, const struct blk_event *ev, int cgroup)
{
	struct blk_strbuf *sb = r->q ? &r->line : blk_output_sb(r->text);
	const unsigned char *p = ev->pdu;
	size_t len = ev->pdu_len;

	blk_strbuf_addf(sb, "%3d,%-3d %2d %8s %5d.%09lu %5u ", BLK_MAJOR(ev->device),
			BLK_MINOR(ev->device), (int)ev->cpu, "0",
			(int)(uint32_t)(ev->time / NS_PER_SEC),
			(unsigned long)(ev->time % NS_PER_SEC), cgroup ? ev->pid : 0);
	if (cgroup && len >= 8) {
		uint32_t id[2];

		memcpy(id, p, 8);
		blk_strbuf_addf(sb, "%x,%x ", id[0], id[1]);
		p += 8;
		len -= 8;
	}
	blk_strbuf_addf(sb, "%2s %3s ", "m", "N");
	blk_strbuf_add(sb, p, strnlen((const char *)p, len));
	blk_strbuf_addch(sb, '\n');
	if (r->q) {
		if (blk_printq_text(r->q, sb->buf, sb->len))
			r->failed = 1;
		blk_strbuf_reset(sb);
	}
}

/*
 * Print the line of @in. Return the device the dump shows: a remap's target when the default
 * line shows it. @in stays as it is; the rare lines that show it changed use a copy.
 */
static uint32_t print_event(struct parse_run *r, struct blk_acct_dev *d, int cpu,
			    const struct blk_event *in)
{
	struct blk_fmt_ctx c = {0};
	const struct blk_event *ev = in;
	struct blk_event shown;
	struct blk_format *f;
	int ret;

	fill_wall(r, &c);
	if (r->o->show_cgroup && (blk_event_action32(ev) & BLK_TA_CGROUP)) {
		/* as blkparse 1.3.0: the cgroup id comes first in the payload */
		shown = *in;
		ev = &shown;
		shown.action &= ~(uint64_t)BLK_TA_CGROUP;
		if (shown.pdu_len >= 8) {
			memcpy(&c.cg_ino, shown.pdu, 4);
			memcpy(&c.cg_gen, shown.pdu + 4, 4);
			shown.pdu += 8;
			shown.pdu_len -= 8;
		}
	} else if (r->cg) {
		uint64_t id;

		/* blktrace --origin's notes name the cgroup the kernel tagged the event with */
		if (blk_cgmap_lookup(r->cg, ev, &id)) {
			c.cg_ino = (uint32_t)id;
			c.cg_gen = (uint32_t)(id >> 32);
			c.cg_path = blk_cgmap_path(r->cg, id);
		}
	}
	ret = blk_acct_event(r->acct, d, cpu, ev, &c);
	if (ret > 0 && r->po)
		c.origin = parse_origin_event(r->po, ev, r->input, ev->time + r->rebase, c.comm);
	if (ret <= 0) {
		if (ret == 0)
			r->have_drv_data = 1;
		return ev->device;
	}
	f = r->o->fmt[(unsigned char)c.act[0]];
	if (!f && c.act[0] == 'A') {
		struct blk_io_trace_remap rm;

		/*
		 * the default line (and the dump) show the device the I/O was remapped to; a
		 * -f/-F format, and then the dump, keep the record's own, as 1.2.0
		 */
		if (!blk_event_remap(ev, &rm)) {
			if (ev != &shown) {
				shown = *in;
				ev = &shown;
			}
			shown.device = rm.device_to;
		}
	}
	if (r->q) {
		/* a line that cannot be rendered stops the run below, after the lines before it */
		if (!f || !blk_format_needs_elapsed(f) || c.elapsed != BLK_NO_ELAPSED) {
			if (blk_printq_event(r->q, f, ev, &c))
				r->failed = 1;
			return ev->device;
		}
		parse_sync_text(r);
	}
	if (f) {
		if (blk_format_render(f, ev, &c, blk_output_sb(r->text))) {
			/* as the classic tool: what was printed so far stays, then stop */
			blk_output_finish(r->text);
			if (r->stdout_later.len)
				fwrite(r->stdout_later.buf, 1, r->stdout_later.len, r->env->out);
			die("Expecting elapsed value: the format uses %%u, but the '%s' record of sector %llu at %llu.%09llu has none (%%u needs -t and a matched request)",
			    c.act, (unsigned long long)ev->sector,
			    (unsigned long long)(ev->time / NS_PER_SEC),
			    (unsigned long long)(ev->time % NS_PER_SEC));
		}
	} else {
		blk_format_default(ev, &c, blk_output_sb(r->text));
	}
	if (blk_output_check(r->text))
		r->failed = 1;
	return ev->device;
}

void parse_dump_trace(struct parse_run *r, struct blk_acct_dev *d, int cpu, struct blk_event *ev)
{
	uint32_t a = blk_event_action32(ev);
	int is_msg = a == BLK_TN_ACTION(BLK_TN_MESSAGE);

	if (r->text) {
		if (is_msg)
			print_message(r, ev, 0);
		else if (parse_is_cgroup_note(ev))
			print_message(r, ev, 1);
		else
			/* the dump keeps the record as read, but with a remap's target device */
			ev->device = print_event(r, d, cpu, ev);
	}
	blk_acct_count(d, ev->time);
	if (r->o->dump_msgs || !is_msg)
		parse_write_dump(r, ev);
}
