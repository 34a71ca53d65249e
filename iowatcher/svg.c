// SPDX-License-Identifier: GPL-2.0
/*
 * The SVG printer: writes the whole page into a blk_strbuf, with coordinates in fixed
 * precision (two decimals) and elements in a fixed order (graphs in the reference order,
 * traces in -t order, grid cells row by row), so the same input gives the same bytes.
 *
 * Every graph is a nested <svg class="graph" id="graph-NAME"> holding, in this order: the
 * panel, a <text class="title">, the axis labels (class "xlabel", "ylabel"), the plot
 * area <rect class="plot-area">, grid lines and tick labels, the data (class "io" cells
 * carrying data-n when a cell holds more than one I/O, or <path class="series">), and the
 * legend entries (class "legend-entry", data-trace="N").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot.h"

static void graph_io(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	struct blk_strbuf *sb = p->sb;
	double mb1 = o->y1 / 2048.0, mb0 = o->y0 / 2048.0, top; /* MiB */
	double step = plot_nice_step(mb1 - mb0 > 0 ? mb1 - mb0 : 1, 4);
	char buf[64];

	plot_begin(p, IOW_G_IO, x, y, "Device IO", "Time (seconds)", "Offset (MiB)");
	plot_time_axis(p);
	top = mb1;
	for (double v = ceil(mb0 / step) * step; v <= top + 1e-9; v += step) {
		double yy = PAD_TOP + p->h - (v - mb0) / (top - mb0) * p->h;

		plot_tick_label(buf, sizeof(buf), v, step);
		plot_text(p, "ytick", PAD_LEFT - 8, yy + 5, 15, "end", buf);
	}
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];

		int order[IOW_MAX_PROCS + 1];

		/* the busiest slot first, so that sparse ones stay visible on top of it */
		for (int s = 0; s <= IOW_MAX_PROCS; s++) {
			int k = s;

			while (k > 0 && t->slot_ios[order[k - 1]] < t->slot_ios[s]) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = s;
		}
		for (int k = 0; k <= IOW_MAX_PROCS; k++) {
			int s = order[k];
			const uint32_t *g = t->grid[s];
			const char *colour;

			if (!g)
				continue;
			if (o->per_process)
				colour = iow_colour((unsigned int)(i * (IOW_MAX_PROCS + 1) + s));
			else
				colour = iow_colour(2 * (unsigned int)i + (unsigned int)s);
			blk_strbuf_addf(sb,
					"<g class=\"io-points\" data-trace=\"%d\" fill=\"%s\">\n",
					i, colour);
			/* one rect per run of occupied cells in a row keeps dense maps small */
			for (unsigned int r = 0; r < o->grid_h; r++) {
				const uint32_t *row = g + (size_t)r * o->grid_w;

				for (unsigned int c = 0; c < o->grid_w; c++) {
					unsigned int e = c;
					uint64_t n = 0;
					double cx, cy, cw;

					if (!row[c])
						continue;
					while (e < o->grid_w && row[e])
						n += row[e++];
					cx = PAD_LEFT + c * p->w / o->grid_w;
					cw = (e - c - 1) * p->w / o->grid_w + 1.5;
					cy = PAD_TOP + p->h - (r + 1) * p->h / o->grid_h;
					if (cx + cw > PAD_LEFT + p->w)
						cx = PAD_LEFT + p->w - cw;
					if (cy > PAD_TOP + p->h - 1.5)
						cy = PAD_TOP + p->h - 1.5;
					blk_strbuf_addstr(sb, "<rect class=\"io\"");
					plot_attr(sb, "x", cx);
					plot_attr(sb, "y", cy);
					plot_attr(sb, "width", cw);
					blk_strbuf_addstr(sb, " height=\"1.50\"");
					if (n > 1)
						blk_strbuf_addf(sb, " data-n=\"%llu\"",
								(unsigned long long)n);
					blk_strbuf_addstr(sb, "/>\n");
					c = e;
				}
			}
			blk_strbuf_addstr(sb, "</g>\n");
		}
	}
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		char lbl[64];

		if (o->per_process) {
			for (unsigned int s = 0; s <= t->nprocs && s <= IOW_MAX_PROCS; s++) {
				const char *name;

				if (!t->grid[s])
					continue;
				name = s < t->nprocs ? iow_proc_name(t, t->procs[s].pid) : "other";
				if (s < t->nprocs)
					snprintf(lbl, sizeof(lbl), " %s(%u)", name ? name : "",
						 t->procs[s].pid);
				else
					snprintf(lbl, sizeof(lbl), " other");
				plot_legend(p, i,
					    iow_colour((unsigned int)(i * (IOW_MAX_PROCS + 1) + s)),
					    o->ntraces > 1 ? t->label : "", lbl, 0);
			}
			continue;
		}
		plot_legend(p, i, iow_colour(2 * (unsigned int)i), o->ntraces > 1 ? t->label : "",
			    " Reads", 0);
		plot_legend(p, i, iow_colour(2 * (unsigned int)i + 1),
			    o->ntraces > 1 ? t->label : "", " Writes", 0);
	}
	if (!o->ntraces || !o->traces[0]->nevents)
		plot_nodata(p, "no I/O in the trace");
	plot_end(p);
}

static const char *scale_bytes(double max, double *div)
{
	static const char *const units[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
	int u = 0;

	*div = 1;
	while (u < 4 && max / *div >= 1024) {
		*div *= 1024;
		u++;
	}
	return units[u];
}

static void graph_tput(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double bsec = (double)iow_bucket_ns(o) / NS, max = 0, div, top;
	double(*rd)[IOW_NBUCKETS] = calloc((size_t)o->ntraces * 2, sizeof(*rd));
	char ylabel[32];
	const char *unit;

	if (!rd)
		return;
	for (int i = 0; i < o->ntraces; i++) {
		plot_rolling(o, o->traces[i]->rd_bytes, NULL, 1 / bsec, rd[2 * i]);
		plot_rolling(o, o->traces[i]->wr_bytes, NULL, 1 / bsec, rd[2 * i + 1]);
		for (int k = 0; k < 2; k++)
			if (plot_max(rd[2 * i + k], IOW_NBUCKETS) > max)
				max = plot_max(rd[2 * i + k], IOW_NBUCKETS);
	}
	unit = scale_bytes(max, &div);
	snprintf(ylabel, sizeof(ylabel), "%s", unit);
	plot_begin(p, IOW_G_TPUT, x, y, "Throughput", "Time (seconds)", ylabel);
	plot_time_axis(p);
	top = plot_value_axis(p, max / div) * div;
	for (int i = 0; i < o->ntraces; i++) {
		plot_series(p, rd[2 * i], top, iow_colour(2 * (unsigned int)i), 0, i);
		plot_series(p, rd[2 * i + 1], top, iow_colour(2 * (unsigned int)i + 1), 0, i);
	}
	for (int i = 0; i < o->ntraces; i++) {
		const char *l = o->ntraces > 1 ? o->traces[i]->label : "";

		plot_legend(p, i, iow_colour(2 * (unsigned int)i), l, " Reads", 0);
		plot_legend(p, i, iow_colour(2 * (unsigned int)i + 1), l, " Writes", 0);
	}
	if (max <= 0)
		plot_nodata(p, "no data transferred");
	plot_end(p);
	free(rd);
}

static void graph_iops(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double bsec = (double)iow_bucket_ns(o) / NS, max = 0, top;
	double(*v)[IOW_NBUCKETS] = calloc((size_t)o->ntraces, sizeof(*v));

	if (!v)
		return;
	for (int i = 0; i < o->ntraces; i++) {
		plot_rolling(o, o->traces[i]->ios, NULL, 1 / bsec, v[i]);
		if (plot_max(v[i], IOW_NBUCKETS) > max)
			max = plot_max(v[i], IOW_NBUCKETS);
	}
	plot_begin(p, IOW_G_IOPS, x, y, "IOPs", "Time (seconds)", "IO/s");
	plot_time_axis(p);
	top = plot_value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++)
		plot_series(p, v[i], top, plot_trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		plot_legend(p, i, plot_trace_colour(i), o->traces[i]->label, "", 0);
	if (max <= 0)
		plot_nodata(p, "no I/O in the trace");
	plot_end(p);
	free(v);
}

static void graph_qdepth(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double bns = (double)iow_bucket_ns(o), max = 0, top;
	double(*v)[IOW_NBUCKETS] = calloc((size_t)o->ntraces, sizeof(*v));
	int any = 0;

	if (!v)
		return;
	for (int i = 0; i < o->ntraces; i++) {
		plot_rolling(o, o->traces[i]->depth_area, NULL, 1 / bns, v[i]);
		if (plot_max(v[i], IOW_NBUCKETS) > max)
			max = plot_max(v[i], IOW_NBUCKETS);
		any |= o->traces[i]->lat_from != 0;
	}
	plot_begin(p, IOW_G_QDEPTH, x, y, "Queue Depth", "Time (seconds)", "Pending IO");
	plot_time_axis(p);
	top = plot_value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++)
		if (o->traces[i]->lat_from)
			plot_series(p, v[i], top, plot_trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		plot_legend(p, i, plot_trace_colour(i), o->traces[i]->label, "", 0);
	if (!any)
		plot_nodata(p, "no data: the trace has no issue or queue events");
	plot_end(p);
	free(v);
}

static void graph_fio(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double max = 0, top;
	double(*v)[IOW_NBUCKETS] = calloc((size_t)o->nfios, sizeof(*v));

	if (!v)
		return;
	for (int i = 0; i < o->nfios; i++) {
		plot_rolling(o, o->fios[i]->sum, o->fios[i]->n, 1, v[i]);
		if (plot_max(v[i], IOW_NBUCKETS) > max)
			max = plot_max(v[i], IOW_NBUCKETS);
	}
	plot_begin(p, IOW_G_FIO, x, y, "Fio Throughput", "Time (seconds)", "KiB/s");
	plot_time_axis(p);
	top = plot_value_axis(p, max);
	for (int i = 0; i < o->nfios; i++)
		plot_series(p, v[i], top, iow_colour(2 * (unsigned int)i + 1), 1, i);
	for (int i = 0; i < o->nfios; i++)
		plot_legend(p, i, iow_colour(2 * (unsigned int)i + 1), o->fios[i]->label, "", 0);
	plot_end(p);
	free(v);
}

static const char *const cpu_titles[IOW_CPU_NR] = {
	"CPU System Time", "CPU IO Wait Time", "CPU IRQ Time", "CPU SoftIRQ Time", "CPU User Time",
};

static void graph_cpu(struct plot *p, int g, int c, double x, double y)
{
	const struct iow_opts *o = p->o;
	double v[IOW_NBUCKETS];

	plot_begin(p, g, x, y, cpu_titles[c], "Time (seconds)", "Percent");
	plot_time_axis(p);
	plot_value_axis(p, 100);
	for (int i = 0; i < o->ntraces; i++) {
		if (!o->traces[i]->mpstat)
			continue;
		plot_rolling(o, o->traces[i]->cpu[c], o->traces[i]->cpu_n, 1, v);
		plot_series(p, v, 100, plot_trace_colour(i), 1, i);
		plot_legend(p, i, plot_trace_colour(i), o->traces[i]->label, "", 0);
	}
	plot_end(p);
}

static int graph_available(const struct iow_opts *o, int g)
{
	if (!o->graphs[g])
		return 0;
	if (g == IOW_G_FIO)
		return o->nfios > 0;
	if (g >= IOW_G_CPU_SYS && g <= IOW_G_CPU_USER) {
		for (int i = 0; i < o->ntraces; i++)
			if (o->traces[i]->mpstat)
				return 1;
		return 0;
	}
	if (!o->ntraces)
		return 0;
	return 1;
}

void iow_svg(struct blk_strbuf *sb, const struct iow_opts *o, const struct iow_frame *f)
{
	struct plot p = {.sb = sb, .o = o, .f = f, .w = o->width, .h = o->height};
	double pw = PAD_LEFT + p.w + PAD_RIGHT, ph = PAD_TOP + p.h + PAD_BOTTOM;
	double band = o->title ? 50 : 10;
	int n = 0, rows;
	long width, height;

	for (int g = 0; g < IOW_G_NR; g++)
		n += graph_available(o, g);
	rows = (n + o->columns - 1) / o->columns;
	width = (long)ceil(pw * (n < o->columns ? (n ? n : 1) : o->columns));
	height = (long)ceil(band + rows * ph + 10);
	width += width & 1;
	height += height & 1;
	blk_strbuf_addstr(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	blk_strbuf_addf(
		sb,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%ld\" height=\"%ld\" viewBox=\"0 0 %ld %ld\" font-family=\"sans-serif\">\n",
		width, height, width, height);
	blk_strbuf_addstr(sb, "<title>");
	iow_xml_escape(sb, o->title ? o->title : "iowatcher");
	blk_strbuf_addstr(
		sb,
		"</title>\n<defs>\n<filter id=\"shadow\" x=\"-5%\" y=\"-5%\" width=\"115%\" height=\"115%\">\n"
		" <feOffset result=\"offOut\" in=\"SourceAlpha\" dx=\"4\" dy=\"4\"/>\n"
		" <feGaussianBlur result=\"blurOut\" in=\"offOut\" stdDeviation=\"2\"/>\n"
		" <feComponentTransfer in=\"blurOut\" result=\"fadeOut\"><feFuncA type=\"linear\" slope=\"0.4\"/></feComponentTransfer>\n"
		" <feBlend in=\"SourceGraphic\" in2=\"fadeOut\" mode=\"normal\"/>\n"
		"</filter>\n</defs>\n");
	blk_strbuf_addf(sb, "<rect x=\"0\" y=\"0\" width=\"%ld\" height=\"%ld\" fill=\"white\"/>\n",
			width, height);
	if (o->title)
		plot_text(&p, "page-title", width / 2.0, 35, 25, "middle", o->title);
	if (!n)
		plot_text(&p, "nodata", width / 2.0, band + 40, 16, "middle", "no graphs selected");
	n = 0;
	for (int g = 0; g < IOW_G_NR; g++) {
		double x, y;

		if (!graph_available(o, g))
			continue;
		x = (n % o->columns) * pw;
		y = band + (n / o->columns) * ph;
		n++;
		switch (g) {
		case IOW_G_IO:
			graph_io(&p, x, y);
			break;
		case IOW_G_TPUT:
			graph_tput(&p, x, y);
			break;
		case IOW_G_FIO:
			graph_fio(&p, x, y);
			break;
		case IOW_G_LATENCY:
			svg_graph_latency(&p, x, y);
			break;
		case IOW_G_LATHIST:
			svg_graph_lathist(&p, x, y);
			break;
		case IOW_G_QDEPTH:
			graph_qdepth(&p, x, y);
			break;
		case IOW_G_IOPS:
			graph_iops(&p, x, y);
			break;
		default:
			graph_cpu(&p, g, g - IOW_G_CPU_SYS, x, y);
			break;
		}
	}
	blk_strbuf_addstr(sb, "</svg>\n");
	iow_legend_release(&p.legend);
}
