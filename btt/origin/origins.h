/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "I/O by origin": per device and origin (a task, the journal, metadata), the bios the
 * trace's origin notes charge to it (origin/track.h), their bytes (each task's share of a
 * bio exactly; those the task did not queue itself, "by others", apart), and their Q2C mean
 * and 99th percentile. Ours, not btt 2.09's: printed only for a trace with origin notes.
 */
#ifndef BTT_ORIGINS_H
#define BTT_ORIGINS_H

#include <stdint.h>

struct btt_bio;
struct btt_view;
struct otrack;

extern const struct btt_output_ops origins_output;

/* the tracker the origins output made (for the files output), or NULL for a NULL @state */
struct otrack *origins_track(void *state);

/*
 * What the trace's notes say of a bio, for the outputs that go as the trace goes (--export,
 * --perfetto): its cgroup (@cgroup its path, NULL when not named: @cgroup_id), its origin
 * (@origin the task's name, or "journal"/"metadata"), its file (@path, NULL when not named:
 * @ino) and where in it it starts. Strings live as long as the run.
 */
struct bio_notes {
	int has_cgroup, has_origin, has_file;
	uint64_t cgroup_id;
	const char *cgroup, *origin, *path;
	uint32_t origin_pid;
	uint64_t ino, offset;
};

/* where bio_notes_of() finds them: the cgroup and origin outputs, found at the first call */
struct bio_notes_src {
	int looked;
	const void *cgroups;
	const struct otrack *track;
};

/*
 * bio_notes_of() - what the notes say of bio @b of the run @v, into *@n; call it in a done()
 * of the bios model subscribed at the start: the sections that read the notes keep it by the
 * bio's id until their own done(), which comes after (they subscribe at their first note)
 */
void bio_notes_of(struct bio_notes_src *s, const struct btt_view *v, const struct btt_bio *b,
		  struct bio_notes *n);

#endif /* BTT_ORIGINS_H */
