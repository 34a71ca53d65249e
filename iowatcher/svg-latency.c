// SPDX-License-Identifier: GPL-2.0
/*
 * The latency graphs of the SVG page: the latency over time (the rolling mean, with p50 to
 * p99 bands per time slice) and the histogram of all latencies on a log scale.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot.h"

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

void svg_graph_latency(struct plot *p, double x, double y)
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

		plot_rolling(o, t->lat_sum, t->lat_n, 1, v[i]);
		if (plot_max(v[i], IOW_NBUCKETS) > max)
			max = plot_max(v[i], IOW_NBUCKETS);
		for (int b = 0; b < IOW_NBANDS; b++) {
			double p99 = (double)blk_hist_percentile(&t->bands[b], 99);

			if (p99 > max)
				max = p99;
		}
		any |= t->lat_all.n != 0;
	}
	unit = scale_ns(max, &div);
	snprintf(ylabel, sizeof(ylabel), "latency (%s)", unit);
	plot_begin(p, IOW_G_LATENCY, x, y, "IO Latency", "Time (seconds)", ylabel);
	plot_time_axis(p);
	top = plot_value_axis(p, max / div) * div;
	nb = (plot_nshown(p) * IOW_NBANDS + IOW_NBUCKETS - 1) / IOW_NBUCKETS;
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
			plot_attr(sb, "x", PAD_LEFT + b * bw);
			plot_attr(sb, "y", y99);
			plot_attr(sb, "width", bw);
			plot_attr(sb, "height", y50 - y99);
			blk_strbuf_addf(sb,
					" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\"/>\n",
					plot_trace_colour(i));
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
				plot_num(sb, PAD_LEFT + (b + 0.5) * bw);
				blk_strbuf_addch(sb, ' ');
				plot_num(sb, PAD_TOP + p->h - pv[b] / top * p->h);
				pen = 1;
			}
			blk_strbuf_addf(
				sb,
				"\" fill=\"none\" stroke=\"%s\" stroke-width=\"1\" stroke-dasharray=\"%s\"/>\n",
				plot_trace_colour(i), k ? "2,3" : "6,3");
		}
	}
	for (int i = 0; i < o->ntraces; i++)
		if (o->traces[i]->lat_all.n)
			plot_series(p, v[i], top, plot_trace_colour(i), 0, i);
	for (int i = 0; i < o->ntraces; i++)
		plot_legend(p, i, plot_trace_colour(i), o->traces[i]->label,
			    o->traces[i]->lat_all.n ? " mean" : " (no data)", 0);
	if (any) {
		iow_legend_note(&p->legend, "shaded: p50 to p99");
		iow_legend_note(&p->legend, "dashed: p50, dotted: p99");
	} else {
		plot_nodata(p, "no data: the trace has no issue or queue events");
	}
	plot_end(p);
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

void svg_graph_lathist(struct plot *p, double x, double y)
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
	plot_begin(p, IOW_G_LATHIST, x, y, "Latency Histogram", "Latency (log scale)", "% of IOs");
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
		plot_attr(sb, "x1", xx);
		plot_attr(sb, "y1", PAD_TOP + p->h);
		plot_attr(sb, "x2", xx);
		plot_attr(sb, "y2", PAD_TOP + p->h + 5);
		blk_strbuf_addstr(sb, " stroke=\"black\" stroke-width=\"1\"/>\n");
		plot_text(p, "xtick", xx, PAD_TOP + p->h + 22, 15, "middle", buf);
	}
	if (max <= 0) {
		plot_value_axis(p, 1);
		plot_nodata(p, "no data: the trace has no issue or queue events");
		plot_end(p);
		return;
	}
	top = plot_value_axis(p, max);
	for (int i = 0; i < o->ntraces; i++) {
		const struct iow_trace *t = o->traces[i];
		double bw = p->w / (lhi - llo);
		double x0 = PAD_LEFT + (lo - llo) * bw;

		if (!t->lat_all.n)
			continue;
		blk_strbuf_addf(sb, "<path class=\"series hist\" data-trace=\"%d\" d=\"M", i);
		plot_num(sb, x0);
		blk_strbuf_addch(sb, ' ');
		plot_num(sb, PAD_TOP + p->h);
		for (int b = lo; b <= hi; b++) {
			double yy =
				PAD_TOP + p->h - 100.0 * t->lat_log[b] / t->lat_all.n / top * p->h;
			double xa = PAD_LEFT + (b - llo) * bw, xb = PAD_LEFT + (b + 1 - llo) * bw;

			if (xa < PAD_LEFT)
				xa = PAD_LEFT;
			if (xb > PAD_LEFT + p->w)
				xb = PAD_LEFT + p->w;
			blk_strbuf_addstr(sb, " L");
			plot_num(sb, xa);
			blk_strbuf_addch(sb, ' ');
			plot_num(sb, yy);
			blk_strbuf_addstr(sb, " L");
			plot_num(sb, xb);
			blk_strbuf_addch(sb, ' ');
			plot_num(sb, yy);
		}
		blk_strbuf_addstr(sb, " L");
		plot_num(sb, PAD_LEFT + (hi + 1 - llo) * bw > PAD_LEFT + p->w
				     ? PAD_LEFT + p->w
				     : PAD_LEFT + (hi + 1 - llo) * bw);
		blk_strbuf_addch(sb, ' ');
		plot_num(sb, PAD_TOP + p->h);
		blk_strbuf_addf(
			sb,
			"\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\" stroke-width=\"2\"/>\n",
			plot_trace_colour(i), plot_trace_colour(i));
	}
	for (int i = 0; i < o->ntraces; i++)
		plot_legend(p, i, plot_trace_colour(i), o->traces[i]->label, "", 0);
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
	plot_end(p);
}
