/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text rendering of events: the classic default line and compiled -f/-F formats.
 */
#ifndef BLK_FORMAT_H
#define BLK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "blk/event.h"
#include "blk/strbuf.h"

#define BLK_NO_ELAPSED ((uint64_t)-1)

/*
 * The origin and file of an event's I/O (%o, %O, %f, %F), from blktrace --origin's notes
 * (blk/origin.h); the strings live as long as the run.
 */
struct blk_fmt_origin {
	uint32_t pid; /* the origin task (%o) */
	const char *name; /* its name, or "journal", "metadata" (%O); NULL: not known */
	int has_file; /* a file map covers it: */
	uint64_t ino, offset; /* its inode, and the offset into the file in bytes (%F) */
	const char *path; /* the file's path (%f), NULL: printed "ino N" */
};

/* What an event's line needs besides the record itself. */
struct blk_fmt_ctx {
	const char *act; /* "Q", "UT", "A", ... */
	const char *comm; /* process name, NULL if unknown (printed "(null)") */
	int cpu;
	uint64_t elapsed; /* ns, or BLK_NO_ELAPSED */
	const unsigned char *pc_pdu; /* payload to dump in hex (PC requests), or NULL */
	unsigned int pc_pdu_len;
	uint32_t cg_ino, cg_gen; /* cgroup id of the record (%g), 0,0 if none */
	const char *cg_path; /* its path (%G), NULL if not known (%G prints the id) */
	const struct blk_fmt_origin *origin; /* NULL: none known (%o %O %f %F print "-") */
	int have_wall; /* wall clock of time 0 known (for %z) */
	int64_t wall_sec;
	long wall_nsec;
};

struct blk_format;

/**
 * blk_format_compile() - compile a -f/-F format string
 * On error returns NULL and writes a message (quoting the bad part) into @err.
 * Return: a format to free with blk_format_free().
 */
struct blk_format *blk_format_compile(const char *spec, char *err, size_t errlen);

void blk_format_free(struct blk_format *f);

/* 1 if @f uses %u (elapsed time), which needs -t. */
int blk_format_needs_elapsed(const struct blk_format *f);

/* 1 if @f uses %z (wall-clock time). */
int blk_format_needs_wall(const struct blk_format *f);

/**
 * blk_format_render() - append @ev rendered with @f to @sb
 * Return: 0, or -EINVAL if the format asks for %u and c->elapsed is BLK_NO_ELAPSED.
 */
int blk_format_render(const struct blk_format *f, const struct blk_event *ev,
		      const struct blk_fmt_ctx *c, struct blk_strbuf *sb);

/* Append the classic default line of @ev (header, action tail, newline) to @sb. */
void blk_format_default(const struct blk_event *ev, const struct blk_fmt_ctx *c,
			struct blk_strbuf *sb);

/* Append the default header (device ... RWBS and a space) with @seq_str as sequence if set. */
void blk_format_header(const struct blk_event *ev, const struct blk_fmt_ctx *c, const char *rwbs,
		       struct blk_strbuf *sb);

/* Append a payload as two-digit hex bytes, ending in " .." where the rest is zero. */
void blk_format_pdu_hex(struct blk_strbuf *sb, const unsigned char *p, unsigned int len);

/* Append HH:MM:SS.uuuuuu (local time) of @t ns after the wall-clock base in @c. */
void blk_format_wall(struct blk_strbuf *sb, const struct blk_fmt_ctx *c, uint64_t t);

#endif /* BLK_FORMAT_H */
