// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/origin.c: the file and origin of each I/O from blktrace --origin's notes
 * (trace.h BLK_TN_DIRTY, BLK_TN_FMAP, BLK_TN_FILE): file maps replaced by later ones, dirty
 * pages charged to their first dirtier and taken out by the write that covers them (the map
 * stays as small as the pages dirty at once), journal and metadata labels, damaged notes
 * counted, never taken; tagged pages (a caller's groups of dirty runs) said per tag by the
 * writes that take them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk/origin.h"

#define DEV BLK_MKDEV(7, 0)
#define PAGE 4096u

static int fmap(struct blk_origin *o, uint64_t ino, uint64_t offset, uint64_t sector,
		uint64_t bytes)
{
	struct blk_fmap_pdu pdu = {.ino = ino, .offset = offset, .sector = sector, .bytes = bytes};
	struct blk_event ev;

	blk_event_note(&ev, BLK_TN_FMAP, DEV, 0, 1000, &pdu, sizeof(pdu));
	return blk_origin_note(o, &ev);
}

static int dirty(struct blk_origin *o, uint32_t pid, const char *comm, uint64_t ino, uint64_t index,
		 uint32_t count)
{
	struct blk_dirty_pdu pdu = {.ino = ino, .index = index, .count = count, .page_size = PAGE};
	struct blk_event ev;

	memcpy(pdu.comm, comm, strnlen(comm, sizeof(pdu.comm)));
	blk_event_note(&ev, BLK_TN_DIRTY, DEV, 0, 1000, &pdu, sizeof(pdu));
	ev.pid = pid;
	return blk_origin_note(o, &ev);
}

/* dirty() with the pages tagged @tag: the pages new to the map in *@pages */
static int dirty_tag(struct blk_origin *o, uint32_t pid, uint64_t ino, uint64_t index,
		     uint32_t count, uint64_t tag, uint64_t *pages)
{
	struct blk_dirty_pdu pdu = {.ino = ino, .index = index, .count = count, .page_size = PAGE};
	struct blk_event ev;

	memcpy(pdu.comm, "w", 1);
	blk_event_note(&ev, BLK_TN_DIRTY, DEV, 0, 1000, &pdu, sizeof(pdu));
	ev.pid = pid;
	return blk_origin_note_tagged(o, &ev, tag, pages);
}

static int file(struct blk_origin *o, uint64_t ino, const char *path, size_t len)
{
	unsigned char pdu[64];
	struct blk_event ev;

	memcpy(pdu, &ino, 8);
	memcpy(pdu + 8, path, len);
	blk_event_note(&ev, BLK_TN_FILE, DEV, 0, 1000, pdu, (uint16_t)(8 + len));
	return blk_origin_note(o, &ev);
}

static void io(struct blk_origin *o, int write, uint64_t sector, uint64_t bytes, uint32_t pid,
	       const char *comm, struct blk_origin_result *r)
{
	struct blk_origin_query q = {.device = DEV,
				     .sector = sector,
				     .bytes = bytes,
				     .write = write,
				     .pid = pid,
				     .comm = comm};

	assert_int_equal(blk_origin_io(o, &q, r), 0);
}

static uint64_t share_of(const struct blk_origin_result *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nshares; i++)
		if (r->shares[i].pid == pid)
			return r->shares[i].bytes;
	return 0;
}

/* a later map of the same sectors replaces the earlier, and cuts what it covers */
static void maps_replaced(void **state)
{
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_result r;
	uint64_t ino, off;
	const char *path;

	(void)state;
	assert_non_null(o);
	/* file 10: 1 MiB at sector 1000 */
	assert_int_equal(fmap(o, 10, 0, 1000, 1 << 20), 1);
	assert_int_equal(blk_origin_file(o, DEV, 1000 + 8, &ino, &off, &path), 1);
	assert_int_equal(ino, 10);
	assert_int_equal(off, 8 * 512);
	assert_null(path);
	/* file 11 reuses 64 KiB in its middle (sectors 1256..1383) */
	assert_int_equal(fmap(o, 11, 4096, 1256, 65536), 1);
	assert_int_equal(blk_origin_file(o, DEV, 1300, &ino, &off, &path), 1);
	assert_int_equal(ino, 11);
	assert_int_equal(off, 4096 + 44 * 512);
	/* file 10 still before and after it, at the right offsets */
	assert_int_equal(blk_origin_file(o, DEV, 1255, &ino, &off, &path), 1);
	assert_int_equal(ino, 10);
	assert_int_equal(off, 255 * 512);
	assert_int_equal(blk_origin_file(o, DEV, 1384, &ino, &off, &path), 1);
	assert_int_equal(ino, 10);
	assert_int_equal(off, 384 * 512);
	/* file 12 covers all of it and more: the whole of both is gone */
	assert_int_equal(fmap(o, 12, 0, 900, 2 << 20), 1);
	for (uint64_t s = 900; s < 900 + 4096; s += 97) {
		assert_int_equal(blk_origin_file(o, DEV, s, &ino, &off, &path), 1);
		assert_int_equal(ino, 12);
		assert_int_equal(off, (s - 900) * 512);
	}
	assert_int_equal(blk_origin_file(o, DEV, 900 + 4096, &ino, &off, &path), 0);
	assert_int_equal(blk_origin_file(o, BLK_MKDEV(8, 0), 1000, &ino, &off, &path), 0);
	/* a read there: its file and offset, charged to its reader */
	assert_int_equal(file(o, 12, "/mnt/c", 6), 1);
	io(o, 0, 1000, 8192, 77, "cat", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	assert_int_equal(r.pid, 77);
	assert_string_equal(r.comm, "cat");
	assert_true(r.has_file);
	assert_int_equal(r.ino, 12);
	assert_int_equal(r.offset, 100 * 512);
	assert_string_equal(r.path, "/mnt/c");
	assert_int_equal(r.nshares, 1);
	assert_int_equal(share_of(&r, 77), 8192);
	assert_int_equal(r.foreign, 0);
	blk_origin_free(o);
}

/* dirty pages go to their dirtiers by bytes, and out of the map when written */
static void dirty_pages(void **state)
{
	const char *name;
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_stats st;
	struct blk_origin_result r;

	(void)state;
	assert_non_null(o);
	/* file 20: 64 pages at sector 0 */
	assert_int_equal(fmap(o, 20, 0, 0, 64 * PAGE), 1);
	assert_int_equal(dirty(o, 100, "dd", 20, 0, 10), 1);
	assert_int_equal(dirty(o, 200, "db", 20, 10, 30), 1);
	/* dirtied again by another task before written: the first dirtier stays */
	assert_int_equal(dirty(o, 300, "late", 20, 5, 10), 1);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 40);
	/* the flusher writes pages 0..15: 10 pages of dd's, 6 of db's */
	io(o, 1, 0, 16 * PAGE, 9, "kworker/u8:2", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_DIRTIER);
	assert_int_equal(r.pid, 100);
	assert_string_equal(r.comm, "dd");
	assert_string_equal(r.name, "dd");
	name = r.name; /* kept as long as the reader: the same pointer for the same name */
	assert_int_equal(share_of(&r, 100), 10 * PAGE);
	assert_int_equal(share_of(&r, 200), 6 * PAGE);
	assert_int_equal(share_of(&r, 300), 0);
	assert_int_equal(share_of(&r, 9), 0);
	assert_int_equal(r.foreign, 16 * PAGE);
	assert_int_equal(r.ino, 20);
	assert_int_equal(r.offset, 0);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 24);
	/* the same pages again: nobody dirtied them since, the flusher keeps them */
	io(o, 1, 0, 16 * PAGE, 9, "kworker/u8:2", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	assert_int_equal(r.pid, 9);
	assert_int_equal(share_of(&r, 9), 16 * PAGE);
	assert_int_equal(r.foreign, 0);
	/* half a page in the middle of db's run: its page goes, the run splits in two */
	io(o, 1, 20 * 8 + 2, 1024, 9, "kworker/u8:2", &r);
	assert_int_equal(r.pid, 200);
	assert_string_equal(r.name, "db");
	assert_int_equal(share_of(&r, 200), 1024);
	assert_int_equal(r.offset, 20 * PAGE + 1024);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 23);
	assert_int_equal(st.dirty_runs, 2);
	/* a write of all 64 pages: the rest of db's 23 pages, 41 pages nobody dirtied */
	io(o, 1, 0, 64 * PAGE, 9, "kworker/u8:2", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	assert_int_equal(r.pid, 9);
	assert_int_equal(share_of(&r, 200), 23 * PAGE);
	assert_int_equal(share_of(&r, 9), 41 * PAGE);
	assert_int_equal(r.foreign, 23 * PAGE);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 0);
	assert_int_equal(st.dirty_runs, 0);
	assert_int_equal(st.max_dirty_pages, 40);
	/* a name that is not printable is shown with '?' for its odd bytes */
	assert_int_equal(dirty(o, 101,
			       "a\tb\x80"
			       "c",
			       20, 63, 1),
			 1);
	io(o, 1, 63 * 8, PAGE, 9, "kworker/u8:2", &r);
	assert_int_equal(r.pid, 101);
	assert_string_equal(r.name, "a?b?c");
	/* a read does not take dirty pages */
	assert_int_equal(dirty(o, 100, "dd", 20, 0, 1), 1);
	io(o, 1, 0, PAGE, 9, "kworker/u8:2", &r);
	assert_ptr_equal(r.name, name);
	assert_int_equal(dirty(o, 100, "dd", 20, 0, 1), 1);
	io(o, 0, 0, PAGE, 5, "cat", &r);
	assert_int_equal(r.pid, 5);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 1);
	blk_origin_free(o);
}

/* the pages of a tag taken by a write: its bytes and whole pages, per tag */
static const struct blk_origin_tag *tag_of(const struct blk_origin_result *r, uint64_t tag)
{
	for (size_t i = 0; i < r->ntags; i++)
		if (r->tags[i].tag == tag)
			return &r->tags[i];
	return NULL;
}

/* tagged pages: one task's adjacent runs stay apart by tag; writes say what they took */
static void tags(void **state)
{
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_stats st;
	struct blk_origin_result r;
	uint64_t pages = 99;

	(void)state;
	assert_non_null(o);
	assert_int_equal(fmap(o, 50, 0, 0, 64 * PAGE), 1);
	/* one task, pages 0..9 under tag 1, 10..19 under tag 2, 20..29 untagged */
	assert_int_equal(dirty_tag(o, 100, 50, 0, 10, 1, &pages), 1);
	assert_int_equal(pages, 10);
	assert_int_equal(dirty_tag(o, 100, 50, 10, 10, 2, &pages), 1);
	assert_int_equal(pages, 10);
	assert_int_equal(dirty_tag(o, 100, 50, 20, 10, 0, &pages), 1);
	assert_int_equal(pages, 10);
	/* pages dirty already stay their first tag's: 5 of these 10 are new */
	assert_int_equal(dirty_tag(o, 100, 50, 25, 10, 3, &pages), 1);
	assert_int_equal(pages, 5);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 35);
	assert_int_equal(st.dirty_runs, 4);
	/* after tag 3's run an untagged page is a run of its own; the next one joins it */
	assert_int_equal(dirty_tag(o, 100, 50, 35, 1, 0, &pages), 1);
	assert_int_equal(dirty_tag(o, 100, 50, 36, 1, 0, &pages), 1);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_runs, 5);
	/* a write of pages 8..11 and half of page 12: 2 + 0.5 pages of tag 2... */
	io(o, 1, 8 * 8, 4 * PAGE + 2048, 9, "kworker/u8:2", &r);
	assert_int_equal(r.ntags, 2);
	assert_int_equal(r.tags[0].tag, 1);
	assert_int_equal(r.tags[0].bytes, 2 * PAGE);
	assert_int_equal(r.tags[0].pages, 2);
	assert_int_equal(r.tags[1].tag, 2);
	assert_int_equal(r.tags[1].bytes, 2 * PAGE + 2048);
	assert_int_equal(r.tags[1].pages, 3); /* the half page goes whole */
	assert_int_equal(share_of(&r, 100), 4 * PAGE + 2048);
	/* ...a write over the rest: no tag for untagged pages, tag 3's 5 pages */
	io(o, 1, 0, 64 * PAGE, 9, "kworker/u8:2", &r);
	assert_int_equal(r.ntags, 3);
	assert_int_equal(tag_of(&r, 1)->pages, 8);
	assert_int_equal(tag_of(&r, 1)->bytes, 8 * PAGE);
	assert_int_equal(tag_of(&r, 2)->pages, 7);
	assert_int_equal(tag_of(&r, 3)->pages, 5);
	assert_null(tag_of(&r, 0));
	assert_int_equal(share_of(&r, 100), (8 + 7 + 10 + 5 + 2) * PAGE);
	blk_origin_stats(o, &st);
	assert_int_equal(st.dirty_pages, 0);
	/* a read takes nothing: no tags; other notes have no pages */
	assert_int_equal(dirty_tag(o, 100, 50, 0, 1, 4, &pages), 1);
	io(o, 0, 0, PAGE, 5, "cat", &r);
	assert_int_equal(r.ntags, 0);
	pages = 7;
	assert_int_equal(dirty_tag(o, 100, 50, 0, 0, 4, &pages), -EINVAL);
	assert_int_equal(pages, 0);
	blk_origin_free(o);
}

/* memory follows the pages dirty at once: a long trace of dirty-then-write keeps it small */
static void bounded(void **state)
{
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_stats st;
	struct blk_origin_result r;

	(void)state;
	assert_non_null(o);
	/* one file of 1 GiB at sector 0; 100,000 rounds of 4 scattered dirty pages, written */
	assert_int_equal(fmap(o, 30, 0, 0, 1ull << 30), 1);
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t page = (i * 7919) % 262144;

		assert_int_equal(dirty(o, (uint32_t)(1000 + i % 3), "w", 30, page, 4), 1);
		if (i >= 8) {
			uint64_t old = ((i - 8) * 7919) % 262144;

			io(o, 1, old * 8, 4 * PAGE, 9, "kworker/0:1", &r);
		}
	}
	blk_origin_stats(o, &st);
	assert_true(st.max_dirty_pages <= 9 * 4);
	assert_true(st.max_dirty_runs <= 9 * 2);
	assert_int_equal(st.dirty, 100000);
	blk_origin_free(o);
}

/* journal, metadata, and writes of no file by a user task */
static void labels(void **state)
{
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_result r;

	(void)state;
	assert_non_null(o);
	io(o, 1, 500, 4096, 44, "jbd2/loop0-8", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_JOURNAL);
	assert_int_equal(r.pid, 44);
	assert_string_equal(blk_origin_kind_name(r.kind), "journal");
	io(o, 1, 600, 4096, 9, "kworker/u8:2", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_METADATA);
	assert_string_equal(blk_origin_kind_name(r.kind), "metadata");
	io(o, 1, 600, 4096, 55, "postgres", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	assert_int_equal(r.pid, 55);
	assert_false(r.has_file);
	io(o, 0, 600, 4096, 9, "kworker/u8:2", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	/* a file system's thread (XFS's log tail pusher) writes metadata; dd does not */
	io(o, 1, 700, 4096, 12, "xfsaild/sda1", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_METADATA);
	io(o, 1, 700, 4096, 13, "dd", &r);
	assert_int_equal(r.kind, BLK_ORIGIN_QUEUER);
	blk_origin_free(o);
}

/* damaged notes are counted and skipped */
static void bad_notes(void **state)
{
	struct blk_origin *o = blk_origin_new();
	struct blk_origin_stats st;
	struct blk_dirty_pdu pdu = {.ino = 1, .count = 1, .page_size = PAGE};
	struct blk_event ev;
	char longpath[BLK_FILE_PATH_MAX + 2];
	unsigned char big[8 + sizeof(longpath)];
	uint64_t ino = 40;

	(void)state;
	assert_non_null(o);
	/* short */
	blk_event_note(&ev, BLK_TN_DIRTY, DEV, 0, 1000, &pdu, sizeof(pdu) - 1);
	assert_int_equal(blk_origin_note(o, &ev), -EINVAL);
	blk_event_note(&ev, BLK_TN_FMAP, DEV, 0, 1000, &pdu, 31);
	assert_int_equal(blk_origin_note(o, &ev), -EINVAL);
	assert_int_equal(file(o, 40, "", 0), -EINVAL);
	/* empty */
	assert_int_equal(dirty(o, 1, "x", 1, 0, 0), -EINVAL);
	assert_int_equal(fmap(o, 1, 0, 0, 0), -EINVAL);
	/* a name before its map is kept; one of an inode nothing maps is counted unknown */
	assert_int_equal(file(o, 41, "/z", 2), 1);
	assert_int_equal(file(o, 40, "/a", 2), 1);
	assert_int_equal(fmap(o, 40, 0, 8, 4096), 1);
	assert_string_equal(blk_origin_path(o, DEV, 40), "/a");
	assert_int_equal(file(o, 42, "/a\n", 3), -EINVAL);
	memset(longpath, 'a', sizeof(longpath));
	memcpy(big, &ino, 8);
	memcpy(big + 8, longpath, BLK_FILE_PATH_MAX + 1);
	ino = 43;
	memcpy(big, &ino, 8);
	blk_event_note(&ev, BLK_TN_FILE, DEV, 0, 1000, big, 8 + BLK_FILE_PATH_MAX + 1);
	assert_int_equal(blk_origin_note(o, &ev), -EINVAL);
	assert_null(blk_origin_path(o, DEV, 43));
	/* the longest path is fine; a second name for the inode leaves the first */
	assert_int_equal(fmap(o, 43, 0, 16, 4096), 1);
	blk_event_note(&ev, BLK_TN_FILE, DEV, 0, 1000, big, 8 + BLK_FILE_PATH_MAX);
	assert_int_equal(blk_origin_note(o, &ev), 1);
	assert_int_equal(file(o, 43, "/b", 2), 1);
	assert_int_equal(strlen(blk_origin_path(o, DEV, 43)), BLK_FILE_PATH_MAX);
	assert_string_equal(blk_origin_path(o, DEV, 40), "/a");
	/* other notes are not ours */
	blk_event_note(&ev, BLK_TN_DEVNAME, DEV, 0, 1000, "sda", 3);
	assert_int_equal(blk_origin_note(o, &ev), 0);
	blk_origin_stats(o, &st);
	assert_int_equal(st.bad, 7);
	assert_int_equal(st.unknown, 1);
	assert_int_equal(st.fmaps, 2);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.dirty, 0);
	/* many files: the table grows */
	for (uint64_t i = 1000; i < 1300; i++) {
		char p[32];
		int n = snprintf(p, sizeof(p), "/f%llu", (unsigned long long)i);

		assert_int_equal(fmap(o, i, 0, i * 100, 4096), 1);
		assert_int_equal(file(o, i, p, (size_t)n), 1);
	}
	assert_string_equal(blk_origin_path(o, DEV, 1234), "/f1234");
	blk_origin_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_replaced), cmocka_unit_test(dirty_pages),
		cmocka_unit_test(bounded),	 cmocka_unit_test(labels),
		cmocka_unit_test(bad_notes),	 cmocka_unit_test(tags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
