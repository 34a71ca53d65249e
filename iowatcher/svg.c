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
#include <string.h>

#include "iowatcher.h"

#define PAD_LEFT 120
#define PAD_TOP 60
#define PAD_BOTTOM 75
#define PAD_RIGHT 230
#define NS 1e9

static const char *const palette[] = {
	"blue",	   "darkgreen", "red",	 "darkviolet", "orange",  "teal",    "brown",
	"#00AA00", "goldenrod", "coral", "black",      "darkred", "fuchsia", "crimson",
};

const char *iow_colour(unsigned int i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

struct plot {
	struct blk_strbuf *sb;
	const struct iow_opts *o;
	const struct iow_frame *f;
	double w, h; /* plot area size */
	double ymax; /* data value at the top of the plot area */
	struct iow_legend legend; /* the current graph's, laid out when it ends */
};

void iow_xml_escape(struct blk_strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			blk_strbuf_addstr(sb, "&amp;");
			break;
		case '<':
			blk_strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			blk_strbuf_addstr(sb, "&gt;");
			break;
		case '"':
			blk_strbuf_addstr(sb, "&quot;");
			break;
		case '\'':
			blk_strbuf_addstr(sb, "&apos;");
			break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
				blk_strbuf_addch(sb, *s);
		}
	}
}

/* @v with exactly two decimals, without stdio */
static void num(struct blk_strbuf *sb, double v)
{
	long long x;

	if (!isfinite(v))
		v = 0;
	x = llround(v * 100.0);
	if (x < 0) {
		blk_strbuf_addch(sb, '-');
		x = -x;
	}
	blk_strbuf_add_u64(sb, (uint64_t)x / 100, 0, 0);
	blk_strbuf_addch(sb, '.');
	blk_strbuf_add_u64(sb, (uint64_t)x % 100, 2, BLK_PAD_ZERO);
}

static void attr(struct blk_strbuf *sb, const char *name, double v)
{
	blk_strbuf_addch(sb, ' ');
	blk_strbuf_addstr(sb, name);
	blk_strbuf_addstr(sb, "=\"");
	num(sb, v);
	blk_strbuf_addch(sb, '"');
}

static void text(struct plot *p, const char *cls, double x, double y, int size, const char *anchor,
		 const char *s)
{
	struct blk_strbuf *sb = p->sb;

	blk_strbuf_addf(sb, "<text class=\"%s\"", cls);
	attr(sb, "x", x);
	attr(sb, "y", y);
	blk_strbuf_addf(sb, " font-size=\"%d\" text-anchor=\"%s\">", size, anchor);
	iow_xml_escape(sb, s);
	blk_strbuf_addstr(sb, "</text>\n");
}

/* A step of 1, 2, 2.5 or 5 times a power of ten giving about @n intervals up to @max. */
static double nice_step(double max, int n)
{
	double raw = max / n, mag, f;

	if (raw <= 0 || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	if (f <= 1)
		f = 1;
	else if (f <= 2)
		f = 2;
	else if (f <= 2.5)
		f = 2.5;
	else if (f <= 5)
		f = 5;
	else
		f = 10;
	return f * mag;
}

static int decimals_for(double step)
{
	int d = 0;

	while (d < 6 && fabs(step * pow(10, d) - llround(step * pow(10, d))) > 1e-6)
		d++;
	return d;
}

static void tick_label(char *buf, size_t len, double v, double step)
{
	snprintf(buf, len, "%.*f", decimals_for(step), v);
}

/* The time axis: ticks from x0 to x1 in seconds. */
static void time_axis(struct plot *p)
{
	const struct iow_opts *o = p->o;
	double s0 = o->x0 / NS, s1 = o->x1 / NS, span = s1 - s0;
	int nt = o->columns > 1 ? 5 : 10;
	double step = nice_step(span, nt);
	char buf[64];

	for (double v = ceil(s0 / step - 1e-9) * step; v <= s1 + step * 1e-6; v += step) {
		double x = PAD_LEFT + (v - s0) / span * p->w;

		blk_strbuf_addstr(p->sb, "<line class=\"tick\"");
		attr(p->sb, "x1", x);
		attr(p->sb, "y1", PAD_TOP + p->h);
		attr(p->sb, "x2", x);
		attr(p->sb, "y2", PAD_TOP + p->h + 5);
		blk_strbuf_addstr(p->sb, " stroke=\"black\" stroke-width=\"1\"/>\n");
		tick_label(buf, sizeof(buf), fabs(v) < step * 1e-6 ? 0 : v, step);
		text(p, "xtick", x, PAD_TOP + p->h + 22, 15, "middle", buf);
	}
}

/* Value axis from 0 to a nice ceiling of @max (in displayed units); return that ceiling. */
static double value_axis(struct plot *p, double max)
{
	double step = nice_step(max > 0 ? max : 1, 4), top;
	char buf[64];

	top = ceil((max > 0 ? max : 1) / step - 1e-9) * step;
	for (double v = 0; v <= top + step * 1e-6; v += step) {
		double y = PAD_TOP + p->h - v / top * p->h;

		if (v > 0 && v < top - step * 1e-6) {
			blk_strbuf_addstr(p->sb, "<line class=\"grid\"");
			attr(p->sb, "x1", PAD_LEFT);
			attr(p->sb, "y1", y);
			attr(p->sb, "x2", PAD_LEFT + p->w);
			attr(p->sb, "y2", y);
			blk_strbuf_addstr(
				p->sb,
				" stroke=\"lightgray\" stroke-width=\"1\" stroke-dasharray=\"6,8\"/>\n");
		}
		tick_label(buf, sizeof(buf), v, step);
		text(p, "ytick", PAD_LEFT - 8, y + 5, 15, "end", buf);
	}
	return top;
}

static void begin_graph(struct plot *p, int g, double x, double y, const char *title,
			const char *xlabel, const char *ylabel)
{
	struct blk_strbuf *sb = p->sb;
	double pw = PAD_LEFT + p->w + PAD_RIGHT, ph = PAD_TOP + p->h + PAD_BOTTOM;

	blk_strbuf_addf(sb, "<svg class=\"graph\" id=\"graph-%s\"", iow_graph_name(g));
	attr(sb, "x", x);
	attr(sb, "y", y);
	attr(sb, "width", pw);
	attr(sb, "height", ph);
	blk_strbuf_addstr(sb, ">\n<rect class=\"panel\" x=\"10.00\" y=\"5.00\"");
	attr(sb, "width", pw - 25);
	attr(sb, "height", ph - 15);
	blk_strbuf_addstr(sb, " fill=\"white\" stroke=\"#cccccc\" filter=\"url(#shadow)\"/>\n");
	text(p, "title", PAD_LEFT + p->w / 2, 35, 20, "middle", title);
	text(p, "xlabel", PAD_LEFT + p->w / 2, PAD_TOP + p->h + 52, 16, "middle", xlabel);
	blk_strbuf_addstr(sb, "<text class=\"ylabel\"");
	attr(sb, "x", 40);
	attr(sb, "y", PAD_TOP + p->h / 2);
	blk_strbuf_addstr(sb, " transform=\"rotate(-90 40.00 ");
	num(sb, PAD_TOP + p->h / 2);
	blk_strbuf_addstr(sb, ")\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">");
	iow_xml_escape(sb, ylabel);
	blk_strbuf_addstr(sb, "</text>\n<rect class=\"plot-area\"");
	attr(sb, "x", PAD_LEFT);
	attr(sb, "y", PAD_TOP);
	attr(sb, "width", p->w);
	attr(sb, "height", p->h);
	blk_strbuf_addstr(sb, " fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n");
	iow_legend_clear(&p->legend);
}

/* a text of one line as text() writes it, or of several as tspans */
static void legend_text(struct plot *p, const char *cls, const struct iow_legend_item *it)
{
	struct blk_strbuf *sb = p->sb;
	const char *line = p->legend.lines.buf + it->line0;

	blk_strbuf_addstr(sb, "<text");
	if (cls)
		blk_strbuf_addf(sb, " class=\"%s\"", cls);
	attr(sb, "x", it->x);
	attr(sb, "y", it->baseline);
	blk_strbuf_addf(sb, " font-size=\"%d\"%s>", it->size, cls ? " text-anchor=\"start\"" : "");
	if (it->nlines == 1) {
		iow_xml_escape(sb, line);
	} else {
		for (int k = 0; k < it->nlines; k++) {
			blk_strbuf_addstr(sb, "<tspan");
			attr(sb, "x", it->x);
			attr(sb, "y", it->baseline + k * it->pitch);
			blk_strbuf_addch(sb, '>');
			iow_xml_escape(sb, line);
			blk_strbuf_addstr(sb, "</tspan>");
			line += strlen(line) + 1;
		}
	}
	blk_strbuf_addstr(sb, "</text>");
}

/* Lay out and write the legend so far, in the column right of the plot area. */
static void legend_flush(struct plot *p)
{
	struct blk_strbuf *sb = p->sb;
	struct iow_legend *l = &p->legend;
	const struct iow_legend_box box = {
		.x = PAD_LEFT + p->w + 20,
		.top = PAD_TOP,
		.width = PAD_RIGHT - 40,
		.bottom = PAD_TOP + p->h + PAD_BOTTOM - 15,
	};

	iow_legend_layout(l, &box);
	for (size_t i = 0; i < l->shown; i++) {
		const struct iow_legend_item *it = &l->item[i];

		if (it->note) {
			legend_text(p, "legend-note", it);
			blk_strbuf_addch(sb, '\n');
			continue;
		}
		blk_strbuf_addf(sb, "<g class=\"legend-entry\" data-trace=\"%d\">", it->trace);
		blk_strbuf_addstr(sb, "<line");
		attr(sb, "x1", box.x);
		attr(sb, "y1", it->swatch_y);
		attr(sb, "x2", box.x + 24);
		attr(sb, "y2", it->swatch_y);
		blk_strbuf_addf(sb, " stroke=\"%s\" stroke-width=\"4\"%s/>", it->colour,
				it->dashed ? " stroke-dasharray=\"4,3\"" : "");
		legend_text(p, NULL, it);
		blk_strbuf_addstr(sb, "</g>\n");
	}
	iow_legend_clear(l);
}

static void end_graph(struct plot *p)
{
	legend_flush(p);
	if (p->f && p->f->active && p->o->x1 > p->o->x0) {
		double x = PAD_LEFT + (double)(p->f->now - p->o->x0) / (p->o->x1 - p->o->x0) * p->w;

		if (x > PAD_LEFT + p->w)
			x = PAD_LEFT + p->w;
		blk_strbuf_addstr(p->sb, "<line class=\"cursor\"");
		attr(p->sb, "x1", x);
		attr(p->sb, "y1", PAD_TOP);
		attr(p->sb, "x2", x);
		attr(p->sb, "y2", PAD_TOP + p->h);
		blk_strbuf_addstr(p->sb, " stroke=\"gray\" stroke-width=\"1\"/>\n");
	}
	blk_strbuf_addstr(p->sb, "</svg>\n");
}

static void nodata(struct plot *p, const char *why)
{
	legend_flush(p);
	text(p, "nodata", PAD_LEFT + p->w / 2, PAD_TOP + p->h / 2, 16, "middle", why);
}

static void legend(struct plot *p, int trace, const char *colour, const char *label,
		   const char *suffix, int dashed)
{
	iow_legend_entry(&p->legend, trace, colour, label, suffix, dashed);
}

/* buckets shown: all, or in a movie frame those that started before the cursor */
static int nshown(const struct plot *p)
{
	uint64_t bns = iow_bucket_ns(p->o);
	uint64_t n;

	if (!p->f || !p->f->active)
		return IOW_NBUCKETS;
	if (p->f->now < p->o->x0)
		return 0;
	n = (p->f->now - p->o->x0) / bns + 1;
	return n > IOW_NBUCKETS ? IOW_NBUCKETS : (int)n;
}

static int window_buckets(const struct iow_opts *o)
{
	double r = o->rolling > 0 ? o->rolling * NS : (double)(o->x1 - o->x0) / 25.0;
	int w = (int)llround(r / (double)iow_bucket_ns(o));

	return w < 1 ? 1 : w > IOW_NBUCKETS ? IOW_NBUCKETS : w;
}

/*
 * Trailing rolling mean of num[]/den[] (den NULL: per bucket) into out[]; a bucket with
 * nothing in its window is NAN (a gap in the line).
 */
static void rolling(const struct iow_opts *o, const double *numr, const double *den, double scale,
		    double *out)
{
	int w = window_buckets(o);

	for (int i = 0; i < IOW_NBUCKETS; i++) {
		double s = 0, d = 0;
		int lo = i - w + 1 < 0 ? 0 : i - w + 1;

		for (int j = lo; j <= i; j++) {
			s += numr[j];
			d += den ? den[j] : 1;
		}
		out[i] = d > 0 ? s / d * scale : NAN;
	}
}

/* A line through the buckets; a NAN bucket breaks it unless @connect (sampled series). */
static void series_path(struct plot *p, const double *v, double top, const char *colour,
			int connect, int trace)
{
	struct blk_strbuf *sb = p->sb;
	int n = nshown(p), pen = 0;

	blk_strbuf_addf(sb, "<path class=\"series\" data-trace=\"%d\" d=\"", trace);
	for (int i = 0; i < n; i++) {
		double x, y;

		if (isnan(v[i])) {
			pen = pen && connect;
			continue;
		}
		x = PAD_LEFT + (i + 0.5) * p->w / IOW_NBUCKETS;
		y = PAD_TOP + p->h - (v[i] > top ? top : v[i]) / top * p->h;
		blk_strbuf_addstr(sb, pen ? " L" : (sb->buf[sb->len - 1] == '"' ? "M" : " M"));
		num(sb, x);
		blk_strbuf_addch(sb, ' ');
		num(sb, y);
		pen = 1;
	}
	blk_strbuf_addf(sb, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", colour);
}

static double max_of(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] > m)
			m = v[i];
	return m;
}

static const char *trace_colour(int i)
{
	return iow_colour(2 * (unsigned int)i + 1);
}

/* ---- the graphs ---- */

static void graph_io(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	struct blk_strbuf *sb = p->sb;
	double mb1 = o->y1 / 2048.0, mb0 = o->y0 / 2048.0, top; /* MiB */
	double step = nice_step(mb1 - mb0 > 0 ? mb1 - mb0 : 1, 4);
	char buf[64];

	begin_graph(p, IOW_G_IO, x, y, "Device IO", "Time (seconds)", "Offset (MiB)");
	time_axis(p);
	top = mb1;
	for (double v = ceil(mb0 / step) * step; v <= top + 1e-9; v += step) {
		double yy = PAD_TOP + p->h - (v - mb0) / (top - mb0) * p->h;

		tick_label(buf, sizeof(buf), v, step);
		text(p, "ytick", PAD_LEFT - 8, yy + 5, 15, "end", buf);
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
					attr(sb, "x", cx);
					attr(sb, "y", cy);
					attr(sb, "width", cw);
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
				legend(p, i,
				       iow_colour((unsigned int)(i * (IOW_MAX_PROCS + 1) + s)),
				       o->ntraces > 1 ? t->label : "", lbl, 0);
			}
			continue;
		}
		legend(p, i, iow_colour(2 * (unsigned int)i), o->ntraces > 1 ? t->label : "",
		       " Reads", 0);
		legend(p, i, iow_colour(2 * (unsigned int)i + 1), o->ntraces > 1 ? t->label : "",
		       " Writes", 0);
	}
	if (!o->ntraces || !o->traces[0]->nevents)
		nodata(p, "no I/O in the trace");
	end_graph(p);
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
		rolling(o, o->traces[i]->rd_bytes, NULL, 1 / bsec, rd[2 * i]);
		rolling(o, o->traces[i]->wr_bytes, NULL, 1 / bsec, rd[2 * i + 1]);
		for (int k = 0; k < 2; k++)
			if (max_of(rd[2 * i + k], IOW_NBUCKETS) > max)
				max = max_of(rd[2 * i + k], IOW_NBUCKETS);
	}
	unit = scale_bytes(max, &div);
	snprintf(ylabel, sizeof(ylabel), "%s", unit);
	begin_graph(p, IOW_G_TPUT, x, y, "Throughput", "Time (seconds)", ylabel);
	time_axis(p);
	top = value_axis(p, max / div) * div;
	for (int i = 0; i < o->ntraces; i++) {
		series_path(p, rd[2 * i], top, iow_colour(2 * (unsigned int)i), 0, i);
		series_path(p, rd[2 * i + 1], top, iow_colour(2 * (unsigned int)i + 1), 0, i);
	}
	for (int i = 0; i < o->ntraces; i++) {
		const char *l = o->ntraces > 1 ? o->traces[i]->label : "";

		legend(p, i, iow_colour(2 * (unsigned int)i), l, " Reads", 0);
		legend(p, i, iow_colour(2 * (unsigned int)i + 1), l, " Writes", 0);
	}
	if (max <= 0)
		nodata(p, "no data transferred");
	end_graph(p);
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
		rolling(o, o->traces[i]->ios, NULL, 1 / bsec, v[i]);
		if (max_of(v[i], IOW_NBUCKETS) > max)
			max = max_of(v[i], IOW_NBUCKETS);
	}
	begin_graph(p, IOW_G_IOPS, x, y, "IOPs", "Time (seconds)", "IO/s");
	time_axis(p);
	top = value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++)
		series_path(p, v[i], top, trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		legend(p, i, trace_colour(i), o->traces[i]->label, "", 0);
	if (max <= 0)
		nodata(p, "no I/O in the trace");
	end_graph(p);
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
		rolling(o, o->traces[i]->depth_area, NULL, 1 / bns, v[i]);
		if (max_of(v[i], IOW_NBUCKETS) > max)
			max = max_of(v[i], IOW_NBUCKETS);
		any |= o->traces[i]->lat_from != 0;
	}
	begin_graph(p, IOW_G_QDEPTH, x, y, "Queue Depth", "Time (seconds)", "Pending IO");
	time_axis(p);
	top = value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++)
		if (o->traces[i]->lat_from)
			series_path(p, v[i], top, trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		legend(p, i, trace_colour(i), o->traces[i]->label, "", 0);
	if (!any)
		nodata(p, "no data: the trace has no issue or queue events");
	end_graph(p);
	free(v);
}

static const char *scale_ns(double max, double *div)
{
	if (max >= 10e9) {
		*div = 1e9;
		return "s";
	}
	if (max >= 10e6) {
		*div = 1e6;
		return "ms";
	}
	if (max >= 10e3) {
		*div = 1e3;
		return "us";
	}
	*div = 1;
	return "ns";
}

static void graph_latency(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double max = 0, div, top;
	double(*v)[IOW_NBUCKETS] = calloc((size_t)o->ntraces, sizeof(*v));
	char ylabel[32];
	const char *unit;
	int any = 0, nb;

	if (!v)
		return;
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];

		rolling(o, t->lat_sum, t->lat_n, 1, v[i]);
		if (max_of(v[i], IOW_NBUCKETS) > max)
			max = max_of(v[i], IOW_NBUCKETS);
		for (int b = 0; b < IOW_NBANDS; b++) {
			double p99 = (double)blk_hist_percentile(&t->bands[b], 99);

			if (p99 > max)
				max = p99;
		}
		any |= t->lat_all.n != 0;
	}
	unit = scale_ns(max, &div);
	snprintf(ylabel, sizeof(ylabel), "latency (%s)", unit);
	begin_graph(p, IOW_G_LATENCY, x, y, "IO Latency", "Time (seconds)", ylabel);
	time_axis(p);
	top = value_axis(p, max / div) * div;
	nb = (nshown(p) * IOW_NBANDS + IOW_NBUCKETS - 1) / IOW_NBUCKETS;
	/* percentile bands first, so that the mean line stays on top */
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		struct blk_strbuf *sb = p->sb;
		double p50[IOW_NBANDS], p99[IOW_NBANDS];
		double bw = p->w / IOW_NBANDS;

		for (int b = 0; b < IOW_NBANDS; b++) {
			p50[b] = t->bands[b].n && b < nb
					 ? (double)blk_hist_percentile(&t->bands[b], 50)
					 : NAN;
			p99[b] = t->bands[b].n && b < nb
					 ? (double)blk_hist_percentile(&t->bands[b], 99)
					 : NAN;
		}
		for (int b = 0; b < IOW_NBANDS; b++) {
			double y50, y99;

			if (isnan(p50[b]))
				continue;
			y50 = PAD_TOP + p->h - p50[b] / top * p->h;
			y99 = PAD_TOP + p->h - p99[b] / top * p->h;
			blk_strbuf_addf(sb, "<rect class=\"band\" data-trace=\"%d\"", i);
			attr(sb, "x", PAD_LEFT + b * bw);
			attr(sb, "y", y99);
			attr(sb, "width", bw);
			attr(sb, "height", y50 - y99);
			blk_strbuf_addf(sb,
					" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\"/>\n",
					trace_colour(i));
		}
		for (int k = 0; k < 2; k++) {
			double *pv = k ? p99 : p50;
			int pen = 0;

			blk_strbuf_addf(sb, "<path class=\"series %s\" data-trace=\"%d\" d=\"",
					k ? "p99" : "p50", i);
			for (int b = 0; b < IOW_NBANDS; b++) {
				if (isnan(pv[b])) {
					pen = 0;
					continue;
				}
				blk_strbuf_addstr(sb,
						  pen ? " L"
						      : (sb->buf[sb->len - 1] == '"' ? "M" : " M"));
				num(sb, PAD_LEFT + (b + 0.5) * bw);
				blk_strbuf_addch(sb, ' ');
				num(sb, PAD_TOP + p->h - pv[b] / top * p->h);
				pen = 1;
			}
			blk_strbuf_addf(
				sb,
				"\" fill=\"none\" stroke=\"%s\" stroke-width=\"1\" stroke-dasharray=\"%s\"/>\n",
				trace_colour(i), k ? "2,3" : "6,3");
		}
	}
	for (int i = 0; i < o->ntraces; i++)
		if (o->traces[i]->lat_all.n)
			series_path(p, v[i], top, trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		legend(p, i, trace_colour(i), o->traces[i]->label,
		       o->traces[i]->lat_all.n ? " mean" : " (no data)", 0);
	if (any) {
		iow_legend_note(&p->legend, "shaded: p50 to p99");
		iow_legend_note(&p->legend, "dashed: p50, dotted: p99");
	} else {
		nodata(p, "no data: the trace has no issue or queue events");
	}
	end_graph(p);
	free(v);
}

static void lat_label(char *buf, size_t len, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.3gs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else
		snprintf(buf, len, "%.3gns", ns);
}

static void graph_lathist(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	struct blk_strbuf *sb = p->sb;
	int lo = IOW_NLOG, hi = -1;
	double max = 0, top, dlo, dhi, llo, lhi;

	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];

		for (int b = 0; b < IOW_NLOG; b++) {
			if (!t->lat_log[b])
				continue;
			if (b < lo)
				lo = b;
			if (b > hi)
				hi = b;
			if (100.0 * t->lat_log[b] / t->lat_all.n > max)
				max = 100.0 * t->lat_log[b] / t->lat_all.n;
		}
	}
	begin_graph(p, IOW_G_LATHIST, x, y, "Latency Histogram", "Latency (log scale)", "% of IOs");
	if (hi < 0) {
		/* an empty axis from 1us to 1ms */
		lo = 40;
		hi = 79;
	}
	/* the x axis spans whole powers of ten around the data, in bins of a quarter octave */
	dlo = floor(log10(pow(2, lo / 4.0)) + 1e-9);
	dhi = ceil(log10(pow(2, (hi + 1) / 4.0)) - 1e-9);
	if (dhi <= dlo)
		dhi = dlo + 1;
	llo = dlo * log2(10) * 4;
	lhi = dhi * log2(10) * 4;
	for (double d = dlo; d <= dhi + 1e-9; d++) {
		double xx = PAD_LEFT + (d - dlo) / (dhi - dlo) * p->w;
		char buf[32];

		lat_label(buf, sizeof(buf), pow(10, d));
		blk_strbuf_addstr(sb, "<line class=\"tick\"");
		attr(sb, "x1", xx);
		attr(sb, "y1", PAD_TOP + p->h);
		attr(sb, "x2", xx);
		attr(sb, "y2", PAD_TOP + p->h + 5);
		blk_strbuf_addstr(sb, " stroke=\"black\" stroke-width=\"1\"/>\n");
		text(p, "xtick", xx, PAD_TOP + p->h + 22, 15, "middle", buf);
	}
	if (max <= 0) {
		value_axis(p, 1);
		nodata(p, "no data: the trace has no issue or queue events");
		end_graph(p);
		return;
	}
	top = value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		double bw = p->w / (lhi - llo);
		double x0 = PAD_LEFT + (lo - llo) * bw;

		if (!t->lat_all.n)
			continue;
		blk_strbuf_addf(sb, "<path class=\"series hist\" data-trace=\"%d\" d=\"M", i);
		num(sb, x0);
		blk_strbuf_addch(sb, ' ');
		num(sb, PAD_TOP + p->h);
		for (int b = lo; b <= hi; b++) {
			double yy =
				PAD_TOP + p->h - 100.0 * t->lat_log[b] / t->lat_all.n / top * p->h;
			double xa = PAD_LEFT + (b - llo) * bw, xb = PAD_LEFT + (b + 1 - llo) * bw;

			if (xa < PAD_LEFT)
				xa = PAD_LEFT;
			if (xb > PAD_LEFT + p->w)
				xb = PAD_LEFT + p->w;
			blk_strbuf_addstr(sb, " L");
			num(sb, xa);
			blk_strbuf_addch(sb, ' ');
			num(sb, yy);
			blk_strbuf_addstr(sb, " L");
			num(sb, xb);
			blk_strbuf_addch(sb, ' ');
			num(sb, yy);
		}
		blk_strbuf_addstr(sb, " L");
		num(sb, PAD_LEFT + (hi + 1 - llo) * bw > PAD_LEFT + p->w
				? PAD_LEFT + p->w
				: PAD_LEFT + (hi + 1 - llo) * bw);
		blk_strbuf_addch(sb, ' ');
		num(sb, PAD_TOP + p->h);
		blk_strbuf_addf(
			sb,
			"\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\" stroke-width=\"2\"/>\n",
			trace_colour(i), trace_colour(i));
	}
	for (int i = 0; i < o->ntraces; i++)
		legend(p, i, trace_colour(i), o->traces[i]->label, "", 0);
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		char a[24], b[24];

		if (!t->lat_all.n)
			continue;
		lat_label(a, sizeof(a), (double)blk_hist_percentile(&t->lat_all, 50));
		lat_label(b, sizeof(b), (double)blk_hist_percentile(&t->lat_all, 99));
		iow_legend_note(&p->legend, "%s%sp50 %s, p99 %s", o->ntraces > 1 ? t->label : "",
				o->ntraces > 1 ? ": " : "", a, b);
	}
	end_graph(p);
}

static void graph_fio(struct plot *p, double x, double y)
{
	const struct iow_opts *o = p->o;
	double max = 0, top;
	double(*v)[IOW_NBUCKETS] = calloc((size_t)o->nfios, sizeof(*v));

	if (!v)
		return;
	for (int i = 0; i < o->nfios; i++) {
		rolling(o, o->fios[i]->sum, o->fios[i]->n, 1, v[i]);
		if (max_of(v[i], IOW_NBUCKETS) > max)
			max = max_of(v[i], IOW_NBUCKETS);
	}
	begin_graph(p, IOW_G_FIO, x, y, "Fio Throughput", "Time (seconds)", "KiB/s");
	time_axis(p);
	top = value_axis(p, max);
	for (int i = 0; i < o->nfios; i++)
		series_path(p, v[i], top, iow_colour(2 * (unsigned int)i + 1), 1, i);
	for (int i = 0; i < o->nfios; i++)
		legend(p, i, iow_colour(2 * (unsigned int)i + 1), o->fios[i]->label, "", 0);
	end_graph(p);
	free(v);
}

static const char *const cpu_titles[IOW_CPU_NR] = {
	"CPU System Time", "CPU IO Wait Time", "CPU IRQ Time", "CPU SoftIRQ Time", "CPU User Time",
};

static void graph_cpu(struct plot *p, int g, int c, double x, double y)
{
	const struct iow_opts *o = p->o;
	double v[IOW_NBUCKETS];

	begin_graph(p, g, x, y, cpu_titles[c], "Time (seconds)", "Percent");
	time_axis(p);
	value_axis(p, 100);
	for (int i = 0; i < o->ntraces; i++) {
		if (!o->traces[i]->mpstat)
			continue;
		rolling(o, o->traces[i]->cpu[c], o->traces[i]->cpu_n, 1, v);
		series_path(p, v, 100, trace_colour(i), 1, i);
		legend(p, i, trace_colour(i), o->traces[i]->label, "", 0);
	}
	end_graph(p);
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
		text(&p, "page-title", width / 2.0, 35, 25, "middle", o->title);
	if (!n)
		text(&p, "nodata", width / 2.0, band + 40, 16, "middle", "no graphs selected");
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
			graph_latency(&p, x, y);
			break;
		case IOW_G_LATHIST:
			graph_lathist(&p, x, y);
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
