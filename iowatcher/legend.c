// SPDX-License-Identifier: GPL-2.0
/*
 * The legend of a graph laid out in its column right of the plot: entries (a colour
 * swatch and a text) and, after them, notes. Labels are the user's (-l) and can be long:
 * a text wider than the column is wrapped at spaces (a word wider than the column is
 * broken), and when the column is too short for everything the font shrinks, down to
 * LEGEND_MIN_SIZE; past that, each text keeps one line (cut, with an ellipsis) and the
 * entries that still do not fit are counted in a last note. Widths are estimated per
 * character, from the wider of DejaVu Sans and Liberation Sans (what "sans-serif" is for
 * rsvg-convert and Chromium on Debian; Arial and Helvetica are narrower); a character
 * outside ASCII counts as a full em.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "iowatcher.h"

#define LEGEND_SIZE 15 /* entries; notes are 2 smaller */
#define LEGEND_MIN_SIZE 8
#define LEGEND_SWATCH 32 /* from the column's left edge to an entry's text */
#define LEGEND_MAX_LINES 4

/* advance widths of ' ' to '~' in 1/1000 em: the larger of DejaVu Sans and Liberation Sans */
static const unsigned short ascii_width[95] = {
	318,  401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337,
	637,  637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 557,
	1016, 685, 686, 723, 770, 667, 611, 778, 752, 295, 500, 667, 558, 863, 748, 788,
	667,  788, 723, 667, 611, 732, 685, 989, 686, 667, 686, 391, 337, 391, 838, 557,
	500,  613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612,
	635,  635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,
};

static const char ellipsis[] = "\xe2\x80\xa6";

/* width in 1/1000 em of the @n bytes at @s */
static unsigned long width_em(const char *s, size_t n)
{
	unsigned long w = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 32 && c < 127)
			w += ascii_width[c - 32];
		else if (c >= 0xc0 || c < 0x80)
			w += 1000; /* a multibyte character's lead byte, or a control */
	}
	return w;
}

double iow_text_width(const char *s, double size)
{
	return (double)width_em(s, strlen(s)) * size / 1000.0;
}

/* the length in bytes of the character at @s (UTF-8; a stray byte is one) */
static size_t char_len(const char *s, size_t n)
{
	size_t j = 1;

	while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80)
		j++;
	return j;
}

/* the length of the longest prefix of the @n bytes at @s no wider than @max (whole chars) */
static size_t fit_prefix(const char *s, size_t n, unsigned long max)
{
	unsigned long w = 0;
	size_t i = 0;

	while (i < n) {
		size_t j = i + char_len(s + i, n - i);

		w += width_em(s + i, j - i);
		if (w > max)
			break;
		i = j;
	}
	return i;
}

static void add_line(struct blk_strbuf *out, const char *s, size_t n)
{
	blk_strbuf_add(out, s, n);
	blk_strbuf_addch(out, '\0');
}

/*
 * Wrap @s into lines no wider than @max em/1000 (at most @maxl; the last one cut with an
 * ellipsis if the text goes on), appended to @out NUL-terminated; return their number,
 * or -1 if it needs more than @maxl lines and @cut is 0.
 */
static int wrap(struct blk_strbuf *out, const char *s, unsigned long max, int maxl, int cut)
{
	size_t start = out->len;
	int nl = 0;

	/* a text that fits stays as it is (leading space and all: the SVG ignores it) */
	if (width_em(s, strlen(s)) <= max) {
		add_line(out, s, strlen(s));
		return 1;
	}
	while (*s == ' ')
		s++;
	while (*s) {
		size_t n = strlen(s), k = fit_prefix(s, n, max);

		if (k < n) {
			/* the last space after a comma or colon that fits ("p99 1ms" stays
			 * whole), else the last space, else break the word */
			size_t sp = k;

			while (sp > 0 && !(s[sp] == ' ' && strchr(",:;", s[sp - 1])))
				sp--;
			if (!sp)
				for (sp = k; sp > 0 && s[sp] != ' ';)
					sp--;
			if (sp > 0)
				k = sp;
			else if (!k)
				k = char_len(s, n); /* a column narrower than one character */
		}
		if (nl + 1 == maxl && k < n) {
			unsigned long e = width_em(ellipsis, 3);

			if (!cut) {
				out->len = start;
				return -1;
			}
			k = fit_prefix(s, n, max > e ? max - e : 0);
			while (k > 0 && s[k - 1] == ' ')
				k--;
			blk_strbuf_add(out, s, k);
			add_line(out, ellipsis, 3);
			return nl + 1;
		}
		while (k > 0 && s[k - 1] == ' ')
			k--;
		add_line(out, s, k);
		nl++;
		s += k;
		while (*s == ' ')
			s++;
	}
	if (!nl) {
		add_line(out, "", 0);
		nl = 1;
	}
	return nl;
}

static struct iow_legend_item *new_item(struct iow_legend *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->item = realloc(l->item, l->cap * sizeof(*l->item));
		if (!l->item)
			die("out of memory");
	}
	memset(&l->item[l->n], 0, sizeof(l->item[0]));
	return &l->item[l->n++];
}

void iow_legend_entry(struct iow_legend *l, int trace, const char *colour, const char *label,
		      const char *suffix, int dashed)
{
	struct iow_legend_item *it = new_item(l);

	it->trace = trace;
	it->colour = colour;
	it->dashed = dashed;
	it->text = l->text.len;
	blk_strbuf_addstr(&l->text, label ? label : "");
	blk_strbuf_addstr(&l->text, suffix);
	blk_strbuf_addch(&l->text, '\0');
	l->nentries++;
}

void iow_legend_note(struct iow_legend *l, const char *fmt, ...)
{
	struct iow_legend_item *it = new_item(l);
	va_list ap;

	it->note = 1;
	it->text = l->text.len;
	va_start(ap, fmt);
	blk_strbuf_vaddf(&l->text, fmt, ap);
	va_end(ap);
	blk_strbuf_addch(&l->text, '\0');
}

/*
 * Place every item with entries at font @size (notes 2 smaller), starting at @top; lines
 * wrap into @maxl (cut: the last cut with an ellipsis). Return the number of items that
 * fit above @bottom: all of them, or fewer (only when cut).
 */
static size_t place(struct iow_legend *l, const struct iow_legend_box *b, int size, int maxl,
		    int cut)
{
	double y = b->top, unit = size / 15.0;
	int nsize = size - 2 < 7 ? 7 : size - 2, first_note = 1;

	l->lines.len = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct iow_legend_item *it = &l->item[i];
		const char *s = l->text.buf + it->text;
		int fs = it->note ? nsize : size, nl;
		double avail = it->note ? b->width : b->width - LEGEND_SWATCH, pitch;

		if (avail < fs)
			avail = fs;
		it->line0 = l->lines.len;
		nl = wrap(&l->lines, s, (unsigned long)(avail * 1000.0 / fs), maxl, cut);
		if (nl < 0)
			return 0;
		it->nlines = nl;
		it->size = fs;
		it->x = b->x + (it->note ? 0 : LEGEND_SWATCH);
		if (it->note) {
			/* the notes start 10 below the entries' pitch, 17 apart (at 13) */
			pitch = nsize * 17.0 / 13.0;
			if (first_note)
				y += 20 * unit - pitch;
			first_note = 0;
			it->baseline = y + pitch;
			y += nl * pitch;
		} else {
			/* entries 22 apart (at 15), the swatch 5 above the baseline */
			pitch = size * 1.2;
			it->baseline = y + 15 * unit;
			it->swatch_y = it->baseline - 5 * unit;
			y += 22 * unit + (nl - 1) * pitch;
		}
		it->pitch = pitch;
		if (it->baseline + (nl - 1) * pitch + 0.25 * fs > b->bottom) {
			if (!cut)
				return 0;
			return i;
		}
	}
	return l->n;
}

void iow_legend_layout(struct iow_legend *l, const struct iow_legend_box *b)
{
	size_t shown;

	l->shown = l->n;
	if (!l->n)
		return;
	for (int size = LEGEND_SIZE; size >= LEGEND_MIN_SIZE; size--)
		if (place(l, b, size, LEGEND_MAX_LINES, 0) == l->n)
			return;
	/* too much for the column at the smallest size: cut long texts, then one line each */
	if (place(l, b, LEGEND_MIN_SIZE, LEGEND_MAX_LINES, 1) == l->n)
		return;
	shown = place(l, b, LEGEND_MIN_SIZE, 1, 1);
	if (shown < l->n) {
		/* and a count of the entries left out, in place of the last one shown */
		size_t left = 0;

		shown = shown ? shown - 1 : 0;
		for (size_t i = shown; i < l->n; i++)
			left += !l->item[i].note;
		l->n = shown;
		iow_legend_note(l, "and %zu more entr%s", left, left == 1 ? "y" : "ies");
		shown = place(l, b, LEGEND_MIN_SIZE, 1, 1);
	}
	l->shown = shown;
}

void iow_legend_clear(struct iow_legend *l)
{
	l->n = l->nentries = l->shown = 0;
	l->text.len = 0;
	l->lines.len = 0;
}

void iow_legend_release(struct iow_legend *l)
{
	free(l->item);
	blk_strbuf_release(&l->text);
	blk_strbuf_release(&l->lines);
	memset(l, 0, sizeof(*l));
}
