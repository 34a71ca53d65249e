// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/frame.h"
#include "blk/window.h"

struct wstream {
	unsigned char *buf;
	size_t head, tail, cap; /* held records are buf[head, tail) */
	uint64_t mark; /* nothing older than this will be pushed */
	uint64_t head_time; /* time of the record at head (when head < tail) */
	size_t head_len;
};

struct blk_window {
	struct wstream *s;
	int n;
	size_t bytes, limit;
	uint64_t last; /* time of the last record taken */
	int taken;
	uint64_t late;
};

struct blk_window *blk_window_new(int nstreams, size_t max_bytes)
{
	struct blk_window *w;

	if (nstreams <= 0) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->s = calloc((size_t)nstreams, sizeof(*w->s));
	if (!w->s) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->n = nstreams;
	w->limit = max_bytes;
	return w;
}

void blk_window_free(struct blk_window *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++)
		free(w->s[i].buf);
	free(w->s);
	free(w);
}

/* the record at the stream's head: its time and length (records were checked on push) */
static void load_head(struct wstream *s)
{
	struct blk_event ev;
	int swapped = 0;

	s->head_len = (size_t)blk_frame(s->buf + s->head, s->tail - s->head, &swapped, &ev);
	s->head_time = ev.time;
}

int blk_window_push(struct blk_window *w, int stream, const unsigned char *p, size_t n)
{
	struct wstream *s = &w->s[stream];
	struct blk_event ev;
	uint64_t last = s->mark;
	size_t off = 0;
	int swapped = 0;

	if (!n)
		return 0;
	if (w->bytes >= w->limit)
		return -ENOBUFS;
	while (off < n) {
		long l = blk_frame(p + off, n - off, &swapped, &ev);

		if (l <= 0)
			return -EINVAL;
		if (w->taken && ev.time < w->last)
			w->late++;
		if (ev.time > last)
			last = ev.time;
		off += (size_t)l;
	}
	if (s->cap - s->tail < n) {
		size_t held = s->tail - s->head, cap = s->cap ? s->cap : 64 * 1024;
		unsigned char *nb;

		if (s->head && held + n <= s->cap) {
			/* room enough once the taken records are dropped */
			memmove(s->buf, s->buf + s->head, held);
		} else {
			while (cap < held + n)
				cap *= 2;
			nb = malloc(cap);
			if (!nb)
				return -ENOMEM;
			if (held)
				memcpy(nb, s->buf + s->head, held);
			free(s->buf);
			s->buf = nb;
			s->cap = cap;
		}
		s->head = 0;
		s->tail = held;
	}
	memcpy(s->buf + s->tail, p, n);
	if (s->head == s->tail) {
		s->tail += n;
		load_head(s);
	} else {
		s->tail += n;
	}
	w->bytes += n;
	s->mark = last;
	return 0;
}

void blk_window_mark(struct blk_window *w, int stream, uint64_t time)
{
	if (time > w->s[stream].mark)
		w->s[stream].mark = time;
}

size_t blk_window_take(struct blk_window *w, unsigned char *out, size_t max, int flush)
{
	size_t done = 0;

	for (;;) {
		uint64_t limit = UINT64_MAX, best_t = UINT64_MAX;
		int best = -1;

		/* the oldest head, and how far every empty stream has come */
		for (int i = 0; i < w->n; i++) {
			struct wstream *s = &w->s[i];

			if (s->head == s->tail) {
				if (s->mark < limit)
					limit = s->mark;
			} else if (s->head_time < best_t) {
				best_t = s->head_time;
				best = i;
			}
		}
		if (best < 0 || (!flush && best_t > limit))
			break;
		{
			struct wstream *s = &w->s[best];

			if (done && done + s->head_len > max)
				break;
			memcpy(out + done, s->buf + s->head, s->head_len);
			done += s->head_len;
			w->bytes -= s->head_len;
			s->head += s->head_len;
			if (!w->taken || best_t > w->last)
				w->last = best_t;
			w->taken = 1;
			if (s->head == s->tail)
				s->head = s->tail = 0;
			else
				load_head(s);
		}
	}
	return done;
}

size_t blk_window_bytes(const struct blk_window *w)
{
	return w->bytes;
}

size_t blk_window_limit(const struct blk_window *w)
{
	return w->limit;
}

uint64_t blk_window_late(const struct blk_window *w)
{
	return w->late;
}
