/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iowatcher: graphs of block I/O traces. Shared types of the front-end's modules:
 * source.c (opening a trace), series.c (binning the event stream), svg.c (the printer; its
 * graphs share plot.c's primitives through plot.h, the latency graphs are in svg-latency.c),
 * html.c (the report page), run.c (tracing a device, external converters), main.c.
 */
#ifndef IOWATCHER_H
#define IOWATCHER_H

#include <stdint.h>

#include "blk/event.h"
#include "blk/hist.h"
#include "blk/strbuf.h"

#define IOW_MAX_TRACES 64
#define IOW_MAX_DEVS 64
#define IOW_NBUCKETS 200 /* time buckets of the line graphs */
#define IOW_NBANDS 40 /* time slices of the latency percentile bands */
#define IOW_NLOG 256 /* latency histogram: 4 bins per power of two of ns */
#define IOW_MAX_PROCS 12 /* -P: distinct processes coloured; the rest is "other" */
#define IOW_MAX_PIDS 4096 /* -P: processes counted to find the busiest */
#define IOW_GRID_Y_MAX 2048 /* rows of the I/O map grid, whatever the graph height */
#define IOW_GRID_X_MAX 4096 /* columns of the I/O map grid */

enum iow_graph {
	IOW_G_IO,
	IOW_G_TPUT,
	IOW_G_FIO,
	IOW_G_CPU_SYS,
	IOW_G_CPU_IO,
	IOW_G_CPU_IRQ,
	IOW_G_CPU_SOFT,
	IOW_G_CPU_USER,
	IOW_G_LATENCY,
	IOW_G_LATHIST,
	IOW_G_QDEPTH,
	IOW_G_IOPS,
	IOW_G_NR,
};

/* the CPU graphs, as mpstat columns */
enum iow_cpu {
	IOW_CPU_SYS,
	IOW_CPU_IO,
	IOW_CPU_IRQ,
	IOW_CPU_SOFT,
	IOW_CPU_USER,
	IOW_CPU_NR,
};

/* Index of graph @name ("io", "queue-depth", ...), or -1. */
int iow_graph_from_name(const char *name);
const char *iow_graph_name(int g);

struct iow_dev {
	uint32_t dev;
	uint64_t max_end; /* highest sector + length seen (pass 1) */
	uint64_t base; /* first sector of its bank on the I/O map */
	uint32_t inflight;
};

struct iow_proc {
	uint32_t pid;
	char comm[20];
};

/* An in-flight table: (device, sector) -> issue time, open addressing, bounded. */
struct iow_inflight {
	struct iow_slot {
		uint64_t sector;
		uint64_t time;
		uint32_t dev;
		uint32_t used;
	} * slot;
	uint64_t mask;
	uint64_t n;
	uint64_t dropped;
};

struct iow_trace {
	const char *arg; /* as given to -t */
	char *path; /* a merged file, or NULL */
	char *dir, *base; /* per-CPU files DIR/BASE.blktrace.N */
	char **bases; /* -t DIR: every BASE with DIR/BASE.blktrace.0 (sorted) */
	unsigned int nbases;
	char *label;
	char *mpstat; /* NAME.mpstat when present */
	int damaged; /* the input ends in damage (reported once) */

	/* pass 1 */
	uint64_t t_max;
	uint64_t nq, nd, nc, nevents;
	unsigned int ndevs;
	struct iow_dev devs[IOW_MAX_DEVS];
	uint64_t bank_end; /* sum of the device extents */
	unsigned int io_act, tput_act, lat_from; /* BLK_TA_* codes (0: none) */

	/* pass 2 */
	double rd_bytes[IOW_NBUCKETS], wr_bytes[IOW_NBUCKETS], ios[IOW_NBUCKETS];
	double lat_sum[IOW_NBUCKETS], lat_n[IOW_NBUCKETS], depth_area[IOW_NBUCKETS];
	struct blk_hist *bands; /* IOW_NBANDS histograms */
	uint64_t lat_log[IOW_NLOG];
	struct blk_hist lat_all;
	uint64_t last_depth_t;
	uint32_t depth;
	struct iow_inflight fl;
	uint64_t plotted, rd_ios, wr_ios, rd_total, wr_total, lat_max;
	double lat_total;
	/* grid of the I/O map: one per slot (reads, writes; or per process with -P) */
	uint32_t *grid[IOW_MAX_PROCS + 1];
	uint64_t slot_ios[IOW_MAX_PROCS + 1];
	unsigned int nprocs;
	struct iow_proc procs[IOW_MAX_PROCS]; /* -P: the busiest processes */
	/* pass 1 with -P: Q, D and C events per process (the first IOW_MAX_PIDS seen) */
	unsigned int npids;
	struct iow_pid_count {
		uint32_t pid;
		uint32_t used;
		uint64_t n[3];
	} * pids;
	/* process names from notify records */
	unsigned int nnames;
	struct iow_proc names[256];

	/* CPU percentages from mpstat, per bucket */
	double cpu[IOW_CPU_NR][IOW_NBUCKETS];
	double cpu_n[IOW_NBUCKETS];
};

struct iow_fio {
	char *path;
	char *label;
	uint64_t t_max; /* ns */
	double sum[IOW_NBUCKETS], n[IOW_NBUCKETS];
};

struct iow_opts {
	struct iow_trace *traces[IOW_MAX_TRACES];
	int ntraces;
	struct iow_fio *fios[IOW_MAX_TRACES];
	int nfios;
	const char *labels[IOW_MAX_TRACES];
	int nlabels;
	const char *title;
	const char *output;
	const char *html;
	int graphs[IOW_G_NR];
	int only_seen;
	const char *devices[64];
	int ndevices;
	const char *dest_dir;
	int prog;
	char **prog_argv;
	int movie; /* 0: no, 1: rect, 2: spindle */
	const char *codec;
	int keep_frames;
	unsigned int movie_seconds; /* length of a movie (0: 30 s) */
	double rolling; /* seconds, 0: default */
	int height, width, columns;
	double xmin, xmax; /* seconds; < 0: unset */
	double ymin, ymax; /* MB; < 0: unset */
	int io_act; /* 0: auto */
	int per_process;

	/* derived */
	uint64_t t_end; /* ns, right edge of the x axis (before zoom) */
	uint64_t x0, x1; /* ns, the plotted time window */
	uint64_t y_end; /* sectors, top of the I/O map (before zoom) */
	uint64_t y0, y1; /* sectors, the plotted offset window */
	unsigned int grid_w, grid_h;
};

/* source.c: one trace's event stream */
struct iow_source;
typedef void (*iow_event_fn)(struct iow_trace *t, const struct blk_event *ev, void *arg);

/* Resolve -t @arg into a merged file or per-CPU files. Return 0, or -1 with a message. */
int iow_trace_resolve(struct iow_trace *t);

/*
 * Call @fn for every event of @t in time order, times rebased to the first event; notify
 * records are not passed on (process names are kept in @t). Return 0; 1 if the input is
 * damaged (the events before the damage were passed on; the message is printed on the
 * first walk only and t->damaged set); or -1 with a message if it cannot be read.
 */
int iow_trace_walk(struct iow_trace *t, iow_event_fn fn, void *arg);

/* series.c */
int iow_pass1(struct iow_opts *o);
void iow_layout(struct iow_opts *o);
int iow_pass2(struct iow_opts *o);
int iow_fio_load(struct iow_opts *o);
void iow_mpstat_load(struct iow_opts *o);
uint64_t iow_bucket_ns(const struct iow_opts *o);
const char *iow_proc_name(const struct iow_trace *t, uint32_t pid);
void iow_trace_free(struct iow_trace *t);

/* one I/O map slot of @t for an event (read/write, or process with -P) */
unsigned int iow_io_slot(struct iow_opts *o, struct iow_trace *t, const struct blk_event *ev);
/* the grid cell of an event, or -1 when it falls outside the zoom window */
long iow_io_cell(const struct iow_opts *o, const struct iow_trace *t, const struct blk_event *ev);

/* svg.c: the SVG page; plot.c: its colours and XML escaping */
struct iow_frame {
	int active; /* a movie frame: plot up to @now, with a cursor */
	uint64_t now;
};
void iow_svg(struct blk_strbuf *sb, const struct iow_opts *o, const struct iow_frame *f);
const char *iow_colour(unsigned int i);
void iow_xml_escape(struct blk_strbuf *sb, const char *s);

/* legend.c: the legend column of a graph */
struct iow_legend_item {
	int trace; /* entries: data-trace */
	const char *colour; /* entries: the swatch (a static string) */
	int dashed, note;
	size_t text; /* offset of the whole text in iow_legend.text */
	/* the layout: lines NUL-terminated one after the other from iow_legend.lines + line0 */
	size_t line0;
	int nlines, size; /* font size in px */
	double x, baseline, pitch; /* the text's left edge, first baseline, line pitch */
	double swatch_y; /* entries: the swatch line's y */
};

struct iow_legend {
	struct iow_legend_item *item;
	size_t n, cap, nentries;
	size_t shown; /* after iow_legend_layout(): items placed (the first ones) */
	struct blk_strbuf text, lines;
};

/* the column: left edge, top, width and the lowest a text may reach */
struct iow_legend_box {
	double x, top, width, bottom;
};

/* An entry: a swatch of @colour and the text @label@suffix (both copied). */
void iow_legend_entry(struct iow_legend *l, int trace, const char *colour, const char *label,
		      const char *suffix, int dashed);
/* A note, formatted: shown after the entries, smaller, without a swatch. */
void iow_legend_note(struct iow_legend *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Lay out the items of @l within @b: at 15 px (notes 13) with the texts on one line when
 * they fit, else wrapped, else smaller, else cut, and the last resort counts the entries
 * left out. Sets each item's placement and l->shown.
 */
void iow_legend_layout(struct iow_legend *l, const struct iow_legend_box *b);
/* Forget the items (memory kept for the next graph). */
void iow_legend_clear(struct iow_legend *l);
void iow_legend_release(struct iow_legend *l);
/* The estimated width in px of @s at font @size (see legend.c). */
double iow_text_width(const char *s, double size);

/* html.c */
int iow_html(const struct iow_opts *o, const struct blk_strbuf *svg, const char *path);

/* run.c */
int iow_trace_devices(struct iow_opts *o);
int iow_write_file(const char *path, const struct blk_strbuf *sb);
int iow_svg_to_png(const struct blk_strbuf *svg, const char *png);
int iow_movie(struct iow_opts *o);

#endif /* IOWATCHER_H */
