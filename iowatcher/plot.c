// SPDX-License-Identifier: GPL-2.0
/*
 * The drawing primitives of the SVG printer (plot.h): numbers in fixed precision, text,
 * the time and value axes, a graph's panel, legend and movie cursor, and the rolling-mean
 * series of the line graphs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

static const char *const palette[] = {
	"blue",	   "darkgreen", "red",	 "darkviolet", "orange",  "teal",    "brown",
	"#00AA00", "goldenrod", "coral", "black",      "darkred", "fuchsia", "crimson",
};

const char *iow_colour(unsigned int i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

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
void plot_num(struct blk_strbuf *sb, double v)
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

void plot_text(struct plot *p, const char *cls, double x, double y, int size, const char *anchor,
	       const char *s)
{
	struct blk_strbuf *sb = p->sb;

	blk_strbuf_addf(sb, "<text class=\"%s\"", cls);
	plot_attr(sb, "x", x);
	plot_attr(sb, "y", y);
	blk_strbuf_addf(sb, " font-size=\"%d\" text-anchor=\"%s\">", size, anchor);
	iow_xml_escape(sb, s);
	blk_strbuf_addstr(sb, "</text>\n");
}

/* A step of 1, 2, 2.5 or 5 times a power of ten giving about @n intervals up to @max. */
double plot_nice_step(double max, int n)
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

void plot_tick_label(char *buf, size_t len, double v, double step)
{
	snprintf(buf, len, "%.*f", decimals_for(step), v);
}

/* The time axis: ticks from x0 to x1 in seconds. */
void plot_time_axis(struct plot *p)
{
	const struct iow_opts *o = p->o;
	double s0 = o->x0 / NS, s1 = o->x1 / NS, span = s1 - s0;
	int nt = o->columns > 1 ? 5 : 10;
	double step = plot_nice_step(span, nt);
	char buf[64];

	for (double v = ceil(s0 / step - 1e-9) * step; v <= s1 + step * 1e-6; v += step) {
		double x = PAD_LEFT + (v - s0) / span * p->w;

		blk_strbuf_addstr(p->sb, "<line class=\"tick\"");
		plot_attr(p->sb, "x1", x);
		plot_attr(p->sb, "y1", PAD_TOP + p->h);
		plot_attr(p->sb, "x2", x);
		plot_attr(p->sb, "y2", PAD_TOP + p->h + 5);
		blk_strbuf_addstr(p->sb, " stroke=\"black\" stroke-width=\"1\"/>\n");
		plot_tick_label(buf, sizeof(buf), fabs(v) < step * 1e-6 ? 0 : v, step);
		plot_text(p, "xtick", x, PAD_TOP + p->h + 22, 15, "middle", buf);
	}
}

/* Value axis from 0 to a nice ceiling of @max (in displayed units); return that ceiling. */
double plot_value_axis(struct plot *p, double max)
{
	double step = plot_nice_step(max > 0 ? max : 1, 4), top;
	char buf[64];

	top = ceil((max > 0 ? max : 1) / step - 1e-9) * step;
	for (double v = 0; v <= top + step * 1e-6; v += step) {
		double y = PAD_TOP + p->h - v / top * p->h;

		if (v > 0 && v < top - step * 1e-6) {
			blk_strbuf_addstr(p->sb, "<line class=\"grid\"");
			plot_attr(p->sb, "x1", PAD_LEFT);
			plot_attr(p->sb, "y1", y);
			plot_attr(p->sb, "x2", PAD_LEFT + p->w);
			plot_attr(p->sb, "y2", y);
			blk_strbuf_addstr(
				p->sb,
				" stroke=\"lightgray\" stroke-width=\"1\" stroke-dasharray=\"6,8\"/>\n");
		}
		plot_tick_label(buf, sizeof(buf), v, step);
		plot_text(p, "ytick", PAD_LEFT - 8, y + 5, 15, "end", buf);
	}
	return top;
}

void plot_begin(struct plot *p, int g, double x, double y, const char *title, const char *xlabel,
		const char *ylabel)
{
	struct blk_strbuf *sb = p->sb;
	double pw = PAD_LEFT + p->w + PAD_RIGHT, ph = PAD_TOP + p->h + PAD_BOTTOM;

	blk_strbuf_addf(sb, "<svg class=\"graph\" id=\"graph-%s\"", iow_graph_name(g));
	plot_attr(sb, "x", x);
	plot_attr(sb, "y", y);
	plot_attr(sb, "width", pw);
	plot_attr(sb, "height", ph);
	blk_strbuf_addstr(sb, ">\n<rect class=\"panel\" x=\"10.00\" y=\"5.00\"");
	plot_attr(sb, "width", pw - 25);
	plot_attr(sb, "height", ph - 15);
	blk_strbuf_addstr(sb, " fill=\"white\" stroke=\"#cccccc\" filter=\"url(#shadow)\"/>\n");
	plot_text(p, "title", PAD_LEFT + p->w / 2, 35, 20, "middle", title);
	plot_text(p, "xlabel", PAD_LEFT + p->w / 2, PAD_TOP + p->h + 52, 16, "middle", xlabel);
	blk_strbuf_addstr(sb, "<text class=\"ylabel\"");
	plot_attr(sb, "x", 40);
	plot_attr(sb, "y", PAD_TOP + p->h / 2);
	blk_strbuf_addstr(sb, " transform=\"rotate(-90 40.00 ");
	plot_num(sb, PAD_TOP + p->h / 2);
	blk_strbuf_addstr(sb, ")\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">");
	iow_xml_escape(sb, ylabel);
	blk_strbuf_addstr(sb, "</text>\n<rect class=\"plot-area\"");
	plot_attr(sb, "x", PAD_LEFT);
	plot_attr(sb, "y", PAD_TOP);
	plot_attr(sb, "width", p->w);
	plot_attr(sb, "height", p->h);
	blk_strbuf_addstr(sb, " fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n");
	iow_legend_clear(&p->legend);
}

/* a text of one line as plot_text() writes it, or of several as tspans */
static void legend_text(struct plot *p, const char *cls, const struct iow_legend_item *it)
{
	struct blk_strbuf *sb = p->sb;
	const char *line = p->legend.lines.buf + it->line0;

	blk_strbuf_addstr(sb, "<text");
	if (cls)
		blk_strbuf_addf(sb, " class=\"%s\"", cls);
	plot_attr(sb, "x", it->x);
	plot_attr(sb, "y", it->baseline);
	blk_strbuf_addf(sb, " font-size=\"%d\"%s>", it->size, cls ? " text-anchor=\"start\"" : "");
	if (it->nlines == 1) {
		iow_xml_escape(sb, line);
	} else {
		for (int k = 0; k < it->nlines; k++) {
			blk_strbuf_addstr(sb, "<tspan");
			plot_attr(sb, "x", it->x);
			plot_attr(sb, "y", it->baseline + k * it->pitch);
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
		plot_attr(sb, "x1", box.x);
		plot_attr(sb, "y1", it->swatch_y);
		plot_attr(sb, "x2", box.x + 24);
		plot_attr(sb, "y2", it->swatch_y);
		blk_strbuf_addf(sb, " stroke=\"%s\" stroke-width=\"4\"%s/>", it->colour,
				it->dashed ? " stroke-dasharray=\"4,3\"" : "");
		legend_text(p, NULL, it);
		blk_strbuf_addstr(sb, "</g>\n");
	}
	iow_legend_clear(l);
}

void plot_end(struct plot *p)
{
	legend_flush(p);
	if (p->f && p->f->active && p->o->x1 > p->o->x0) {
		double x = PAD_LEFT + (double)(p->f->now - p->o->x0) / (p->o->x1 - p->o->x0) * p->w;

		if (x > PAD_LEFT + p->w)
			x = PAD_LEFT + p->w;
		blk_strbuf_addstr(p->sb, "<line class=\"cursor\"");
		plot_attr(p->sb, "x1", x);
		plot_attr(p->sb, "y1", PAD_TOP);
		plot_attr(p->sb, "x2", x);
		plot_attr(p->sb, "y2", PAD_TOP + p->h);
		blk_strbuf_addstr(p->sb, " stroke=\"gray\" stroke-width=\"1\"/>\n");
	}
	blk_strbuf_addstr(p->sb, "</svg>\n");
}

void plot_nodata(struct plot *p, const char *why)
{
	legend_flush(p);
	plot_text(p, "nodata", PAD_LEFT + p->w / 2, PAD_TOP + p->h / 2, 16, "middle", why);
}

void plot_legend(struct plot *p, int trace, const char *colour, const char *label,
		 const char *suffix, int dashed)
{
	iow_legend_entry(&p->legend, trace, colour, label, suffix, dashed);
}

/* buckets shown: all, or in a movie frame those that started before the cursor */
int plot_nshown(const struct plot *p)
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
void plot_rolling(const struct iow_opts *o, const double *numr, const double *den, double scale,
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
void plot_series(struct plot *p, const double *v, double top, const char *colour, int connect,
		 int trace)
{
	struct blk_strbuf *sb = p->sb;
	int n = plot_nshown(p), pen = 0;

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
		plot_num(sb, x);
		blk_strbuf_addch(sb, ' ');
		plot_num(sb, y);
		pen = 1;
	}
	blk_strbuf_addf(sb, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", colour);
}

double plot_max(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] > m)
			m = v[i];
	return m;
}

const char *plot_trace_colour(int i)
{
	return iow_colour(2 * (unsigned int)i + 1);
}
