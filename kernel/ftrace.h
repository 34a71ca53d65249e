/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events through a private tracefs instance (kernel/ftrace.c): the instance and the
 * events enabled in it (libtracefs), kprobe events, and the binary ring-buffer pages of
 * per_cpu/cpuN/trace_pipe_raw with the event layouts of their format files (libtraceevent:
 * kbuffer and tep_parse_format). The page and format decoders are pure functions (unit
 * tested on pages built in the tests); the rest reads and writes tracefs.
 */
#ifndef BLK_FTRACE_H
#define BLK_FTRACE_H

#include <stddef.h>
#include <stdint.h>

/* ---- ring-buffer pages ---- */

/* The page layout of a ring buffer (libtraceevent's kbuffer reads the pages). */
struct blk_ftrace_pages;

/**
 * blk_ftrace_pages_new() - the layout the text of events/header_page describes
 * Return: the layout (free with blk_ftrace_pages_free()), or NULL with errno set (EINVAL:
 * the text is not understood).
 */
struct blk_ftrace_pages *blk_ftrace_pages_new(const char *header_page);

/* The size of a page (sub-buffer) as header_page gives it. */
int blk_ftrace_pages_size(const struct blk_ftrace_pages *pg);

void blk_ftrace_pages_free(struct blk_ftrace_pages *pg);

/* One event of a page: its timestamp (trace clock) and its data (common_type first). */
struct blk_ftrace_rec {
	uint64_t ts;
	const unsigned char *data;
	size_t len;
};

/* Called for each event; return 0 to go on, anything else stops the walk with it. */
typedef int (*blk_ftrace_rec_fn)(void *arg, const struct blk_ftrace_rec *rec);

/**
 * blk_ftrace_page_walk() - call @fn for each event of the page @p (@len bytes as read) in
 * the layout @pg (not thread-safe: one @pg per reading thread)
 * @missed: out: events the kernel lost just before this page (overwritten ones), as far as
 *	it says (1 if it only says that some were), 0 if none
 * Return: the number of events, what @fn returned if it stopped the walk (> 0 or < 0:
 * negative values are kept apart from -EINVAL by the caller's own choice of codes), or
 * -EINVAL for a page that is damaged (a length beyond the page).
 */
int blk_ftrace_page_walk(struct blk_ftrace_pages *pg, const unsigned char *p, size_t len,
			 blk_ftrace_rec_fn fn, void *arg, uint64_t *missed);

/* ---- event formats ---- */

#define BLK_FTRACE_MAX_FIELDS 48

struct blk_ftrace_field {
	char name[64];
	unsigned int offset, size;
	int is_signed;
	int data_loc; /* __data_loc: a u32 with the offset (low 16 bits) and length (high 16) */
	int rel_loc; /* __rel_loc: the same, the offset from the end of the field */
	int array; /* a char[N] array */
};

struct blk_ftrace_format {
	char name[64];
	int id;
	int nfields;
	struct blk_ftrace_field f[BLK_FTRACE_MAX_FIELDS];
};

/**
 * blk_ftrace_format_parse() - an event's layout from the text of its format file (parsed by
 * libtraceevent)
 * Return: 0, or -EINVAL if it has no ID or no field, -E2BIG beyond BLK_FTRACE_MAX_FIELDS.
 */
int blk_ftrace_format_parse(const char *text, struct blk_ftrace_format *fmt);

/* The field called @name, or NULL. The pointer stays valid while @fmt does. */
const struct blk_ftrace_field *blk_ftrace_field(const struct blk_ftrace_format *fmt,
						const char *name);

/* The integer in field @f of the event @data (@len bytes), sign-extended; 0 if outside. */
int64_t blk_ftrace_get_int(const struct blk_ftrace_field *f, const unsigned char *data, size_t len);

/* The string in field @f (char[N] or __data_loc char[]) into @buf, NUL-terminated. */
void blk_ftrace_get_str(const struct blk_ftrace_field *f, const unsigned char *data, size_t len,
			char *buf, size_t blen);

/* ---- a private instance of tracefs ---- */

struct blk_ftrace_inst;

/**
 * blk_ftrace_inst_new() - create tracefs instance @name (instances/NAME under @tracefs),
 * its recording off
 * Return: the instance (free with blk_ftrace_inst_free()), or NULL with errno set and the
 * reason in @err (EEXIST: an instance of that name exists).
 */
struct blk_ftrace_inst *blk_ftrace_inst_new(const char *tracefs, const char *name, char *err,
					    size_t len);

/* The instance's directory. */
const char *blk_ftrace_inst_dir(const struct blk_ftrace_inst *in);

/* Write @value to the instance's file @rel ("trace_clock", ...). Return 0 or -errno. */
int blk_ftrace_inst_write(struct blk_ftrace_inst *in, const char *rel, const char *value);

/*
 * Enable event @event ("sched/sched_switch") in the instance, with @filter (NULL: none;
 * a filter the kernel refuses is left out: *@filtered says whether it was set).
 * Return: 0 or -errno (ENOENT: no such event).
 */
int blk_ftrace_inst_enable(struct blk_ftrace_inst *in, const char *event, const char *filter,
			   int *filtered);

/* The format of @event (events/GROUP/NAME/format of the instance). Return 0 or -errno. */
int blk_ftrace_inst_format(struct blk_ftrace_inst *in, const char *event,
			   struct blk_ftrace_format *fmt);

/* The text of that file into @buf (@len bytes). Return 0 or -errno (-ENOENT: no such event). */
int blk_ftrace_inst_format_text(struct blk_ftrace_inst *in, const char *event, char *buf,
				size_t len);

/* Open per_cpu/cpu@cpu/trace_pipe_raw, non-blocking. Return the fd or -errno. */
int blk_ftrace_inst_open_cpu(struct blk_ftrace_inst *in, int cpu);

/* Events lost on @cpu so far (overrun + dropped events of per_cpu/cpuN/stats). */
uint64_t blk_ftrace_inst_lost(struct blk_ftrace_inst *in, int cpu);

/* Whether the instance still exists and records (a tracer's own check: removed from outside?). */
int blk_ftrace_inst_alive(struct blk_ftrace_inst *in);

/*
 * Turn recording off, disable what was enabled, remove the instance (the caller has closed
 * its trace_pipe_raw descriptors) and free @in (NULL allowed). Return 0 or the first -errno.
 */
int blk_ftrace_inst_free(struct blk_ftrace_inst *in);

/**
 * blk_ftrace_inst_del_left() - blktrace -k for the instances instances/PREFIXPID under
 * @tracefs: those of a tracer that runs are turned off (it notices, ends and removes its
 * instance itself): *@stopped counts them; those of a tracer that is gone (killed with
 * SIGKILL) are turned off, their events disabled and removed: *@removed counts them,
 * *@failed those that could not be.
 */
void blk_ftrace_inst_del_left(const char *tracefs, const char *prefix, int *stopped, int *removed,
			      int *failed);

/* ---- kprobe events (the global kprobe_events file) ---- */

struct tracefs_dynevent; /* libtracefs's dynamic event */

/**
 * blk_ftrace_kprobe_add() - define kprobe event @group/@event on function @fn (through
 * libtracefs's dynamic events: kprobe_events is appended to, never truncated)
 * @fetch: its fetch arguments ("comm=$comm"), or NULL
 * @retprobe: a return probe (kretprobe), with @maxactive instances at most (0: the
 *	kernel's default)
 * @out: set to the event, for blk_ftrace_kprobe_del()
 * Return: 0 or -errno (EPERM under lockdown, ENOENT or EINVAL for a function the kernel
 * cannot probe, EINVAL also for a maxactive it does not take).
 */
int blk_ftrace_kprobe_add(const char *group, const char *event, const char *fn, const char *fetch,
			  int retprobe, unsigned int maxactive, struct tracefs_dynevent **out);

/* Remove kprobe event @ev (its events disabled first) and free it. Return 0 or -errno. */
int blk_ftrace_kprobe_del(struct tracefs_dynevent *ev);

/*
 * Remove the kprobe events left by tracers that are gone: groups named @prefix followed by
 * the pid of a process that no longer runs. Return how many were removed; *@failed counts
 * those that could not be.
 */
int blk_ftrace_kprobe_del_left(const char *prefix, int *failed);

/*
 * nmissed of "GROUP/EVENT" in kprobe_profile (where 6.1 names it EVENT alone: the first
 * of that name then), or -errno.
 */
long long blk_ftrace_kprobe_missed(const char *tracefs, const char *group_event);

/* ---- small tracefs helpers ---- */

/* Read file @path into @buf (trailing newlines cut). Return 0 or -errno. */
int blk_ftrace_read(const char *path, char *buf, size_t len);

/* Write @s to file @path (O_TRUNC). Return 0 or -errno. */
int blk_ftrace_write(const char *path, const char *s);

/*
 * The name of @pid the kernel saved in @tracefs's saved_cmdlines (global: the tasks its
 * events met lately) into @buf, or NULL when it has none.
 */
const char *blk_ftrace_saved_comm(const char *tracefs, uint32_t pid, char *buf, size_t len);

#endif /* BLK_FTRACE_H */
