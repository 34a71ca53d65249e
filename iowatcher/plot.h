/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iowatcher's drawing primitives (plot.c), shared by the graphs of the SVG page: svg.c
 * (the page, the I/O map, throughput, IOPs, queue depth, fio and CPU graphs) and
 * svg-latency.c (the latency graph and the latency histogram). Internal to the SVG printer.
 *
 * A graph is drawn between plot_begin() and plot_end(), which frame it in its panel and lay
 * out its legend; coordinates are written with two decimals by plot_num() and plot_attr().
 */
#ifndef IOWATCHER_PLOT_H
#define IOWATCHER_PLOT_H

#include <stddef.h>

#include "iowatcher.h"

/* a graph's panel around its plot area, in pixels */
#define PAD_LEFT 120
#define PAD_TOP 60
#define PAD_BOTTOM 75
#define PAD_RIGHT 230
#define NS 1e9

struct plot {
	struct blk_strbuf *sb;
	const struct iow_opts *o;
	const struct iow_frame *f;
	double w, h; /* plot area size */
	double ymax; /* data value at the top of the plot area */
	struct iow_legend legend; /* the current graph's, laid out when it ends */
};

/* plot.c: numbers and text */
void plot_num(struct blk_strbuf *sb, double v);

/* ` NAME="V"` with V as plot_num() writes it; inline: the I/O map writes one per cell side */
static inline void plot_attr(struct blk_strbuf *sb, const char *name, double v)
{
	blk_strbuf_addch(sb, ' ');
	blk_strbuf_addstr(sb, name);
	blk_strbuf_addstr(sb, "=\"");
	plot_num(sb, v);
	blk_strbuf_addch(sb, '"');
}

void plot_text(struct plot *p, const char *cls, double x, double y, int size, const char *anchor,
	       const char *s);
double plot_nice_step(double max, int n);
void plot_tick_label(char *buf, size_t len, double v, double step);

/* plot.c: a graph's frame, axes and legend */
void plot_time_axis(struct plot *p);
double plot_value_axis(struct plot *p, double max);
void plot_begin(struct plot *p, int g, double x, double y, const char *title, const char *xlabel,
		const char *ylabel);
void plot_end(struct plot *p);
void plot_nodata(struct plot *p, const char *why);
void plot_legend(struct plot *p, int trace, const char *colour, const char *label,
		 const char *suffix, int dashed);

/* plot.c: the line graphs' series */
int plot_nshown(const struct plot *p);
void plot_rolling(const struct iow_opts *o, const double *numr, const double *den, double scale,
		  double *out);
void plot_series(struct plot *p, const double *v, double top, const char *colour, int connect,
		 int trace);
double plot_max(const double *v, int n);
const char *plot_trace_colour(int i);

/* svg-latency.c */
void svg_graph_latency(struct plot *p, double x, double y);
void svg_graph_lathist(struct plot *p, double x, double y);

#endif
