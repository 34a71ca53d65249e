// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/fsevents.c and of blktrace --origin's notes in kernel/tfsconv.c: the
 * events' layouts from this project's 6.18 kernel's format files (tests/data/origin-6.18.*),
 * a ring-buffer page of such events built here word by word, and the dirty runs and file
 * maps the converter makes of it (trace.h BLK_TN_DIRTY, BLK_TN_FMAP).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libgen.h>

#include "blk/event.h"
#include "blk/trace.h"
#include "../../kernel/fsevents.h"
#include "../../kernel/tfsconv.h"
#include "helpers.h"

#define PAGE 4096
#define LOOP0 0x700000u /* 7:0 */
#define SDA 0x800000u /* 8:0, not traced */
#define BSIZE 4096

static char data_dir[4096];

static char *load(const char *name)
{
	char path[4200];
	char *p = calloc(1, 65536);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(p);
	assert_true(fread(p, 1, 65535, f) > 0);
	fclose(f);
	return p;
}

/* ---- a ring-buffer page (header_page of tests/data/tfs-6.18.header_page) ---- */

struct page {
	unsigned char p[PAGE];
	size_t off;
	uint64_t ts; /* of the last event */
};

static void page_init(struct page *pg, uint64_t ts)
{
	memset(pg->p, 0, sizeof(pg->p));
	memcpy(pg->p, &ts, 8);
	pg->off = 16;
	pg->ts = ts;
}

/* an event of @n bytes (a multiple of 4, at most 112) 1000 ns after the last */
static void put_event(struct page *pg, const unsigned char *data, size_t n)
{
	uint32_t h = (uint32_t)(n / 4) | (1000u << 5);

	assert_true(n % 4 == 0 && n <= 112 && pg->off + 4 + n <= PAGE);
	memcpy(pg->p + pg->off, &h, 4);
	memcpy(pg->p + pg->off + 4, data, n);
	pg->off += 4 + n;
	pg->ts += 1000;
}

static void page_commit(struct page *pg)
{
	uint64_t c = pg->off - 16;

	memcpy(pg->p + 8, &c, 8);
}

/* the events, laid out as the format files say (offsets checked against them below) */
struct ev {
	unsigned char b[112];
	size_t n;
};

static void ev_init(struct ev *e, const struct blk_fsev *o, uint16_t type, size_t n, uint32_t pid)
{
	(void)o;
	memset(e, 0, sizeof(*e));
	memcpy(e->b, &type, 2);
	memcpy(e->b + 4, &pid, 4);
	e->n = n;
}

static void set(struct ev *e, size_t off, uint64_t v, size_t size)
{
	memcpy(e->b + off, &v, size); /* little-endian host */
}

static int fmt_id(const char *text)
{
	const char *p = strstr(text, "\nID: ");

	assert_non_null(p);
	return atoi(p + 5);
}

struct fixture {
	struct blk_fsev *o;
	int id_dirty, id_add, id_ext, id_es, id_iomap;
};

static void fixture_init(struct fixture *fx)
{
	static const struct {
		enum blk_fsev_ev ev;
		const char *file;
	} files[] = {
		{BLK_FSEV_EV_DIRTY_FOLIO, "origin-6.18.writeback_dirty_folio.format"},
		{BLK_FSEV_EV_ADD_FOLIO, "origin-6.18.mm_filemap_add_to_page_cache.format"},
		{BLK_FSEV_EV_EXT_MAP, "origin-6.18.ext4_ext_map_blocks_exit.format"},
		{BLK_FSEV_EV_ES_LOOKUP, "origin-6.18.ext4_es_lookup_extent_exit.format"},
		{BLK_FSEV_EV_IOMAP, "origin-6.18.iomap_iter_dstmap.format"},
	};
	int *ids[] = {&fx->id_dirty, &fx->id_add, &fx->id_ext, &fx->id_es, &fx->id_iomap};
	uint32_t devno = LOOP0;

	fx->o = blk_fsev_new(&devno, 1);
	assert_non_null(fx->o);
	blk_fsev_set_block_size(fx->o, 0, BSIZE);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *t = load(files[i].file);

		assert_int_equal(blk_fsev_set_format(fx->o, files[i].ev, t), 0);
		assert_true(blk_fsev_has(fx->o, files[i].ev));
		*ids[i] = fmt_id(t);
		free(t);
	}
	assert_false(blk_fsev_has(fx->o, BLK_FSEV_EV_IND_MAP));
}

/* writeback_dirty_folio: name[32] at 8, ino at 40, index at 48 (56 bytes) */
static void put_dirty(struct page *pg, const struct fixture *fx, uint32_t pid, const char *bdi,
		      uint64_t ino, uint64_t index)
{
	struct ev e;

	ev_init(&e, fx->o, (uint16_t)fx->id_dirty, 56, pid);
	memcpy(e.b + 8, bdi, strlen(bdi));
	set(&e, 40, ino, 8);
	set(&e, 48, index, 8);
	put_event(pg, e.b, e.n);
}

/* mm_filemap_add_to_page_cache: i_ino at 16, index at 24, s_dev at 32, order at 36 */
static void put_add(struct page *pg, const struct fixture *fx, uint32_t dev, uint64_t ino,
		    uint64_t index, unsigned int order)
{
	struct ev e;

	ev_init(&e, fx->o, (uint16_t)fx->id_add, 40, 1);
	set(&e, 16, ino, 8);
	set(&e, 24, index, 8);
	set(&e, 32, dev, 4);
	set(&e, 36, order, 1);
	put_event(pg, e.b, e.n);
}

/* ext4_es_lookup_extent_exit: dev 8, ino 16, lblk 24, len 28, pblk 32, status 40, found 44 */
static void put_es(struct page *pg, const struct fixture *fx, uint64_t ino, uint32_t lblk,
		   uint32_t len, uint64_t pblk, unsigned int status)
{
	struct ev e;

	ev_init(&e, fx->o, (uint16_t)fx->id_es, 48, 2);
	set(&e, 8, LOOP0, 4);
	set(&e, 16, ino, 8);
	set(&e, 24, lblk, 4);
	set(&e, 28, len, 4);
	set(&e, 32, pblk, 8);
	set(&e, 40, status, 1);
	set(&e, 44, 1, 4);
	put_event(pg, e.b, e.n);
}

/* ext4_ext_map_blocks_exit: dev 8, ino 16, pblk 32, lblk 40, len 44, ret 52 */
static void put_ext(struct page *pg, const struct fixture *fx, uint64_t ino, uint32_t lblk,
		    uint32_t len, uint64_t pblk, int ret)
{
	struct ev e;

	ev_init(&e, fx->o, (uint16_t)fx->id_ext, 56, 3);
	set(&e, 8, LOOP0, 4);
	set(&e, 16, ino, 8);
	set(&e, 32, pblk, 8);
	set(&e, 40, lblk, 4);
	set(&e, 44, len, 4);
	set(&e, 52, (uint32_t)ret, 4);
	put_event(pg, e.b, e.n);
}

/* iomap_iter_dstmap: dev 8, ino 16, addr 24, offset 32, length 40, type 48, bdev 52 */
static void put_iomap(struct page *pg, const struct fixture *fx, uint32_t bdev, uint64_t ino,
		      uint64_t addr, uint64_t offset, uint64_t length, unsigned int type)
{
	struct ev e;

	ev_init(&e, fx->o, (uint16_t)fx->id_iomap, 56, 4);
	set(&e, 8, bdev, 4);
	set(&e, 16, ino, 8);
	set(&e, 24, addr, 8);
	set(&e, 32, offset, 8);
	set(&e, 40, length, 8);
	set(&e, 48, type, 2);
	set(&e, 52, bdev, 4);
	put_event(pg, e.b, e.n);
}

/* the notes staged for device 0, decoded */
struct notes {
	int n;
	uint32_t code[64], pid[64];
	uint64_t time[64];
	struct blk_dirty_pdu d[64];
	struct blk_fmap_pdu f[64];
};

static void staged(struct blk_tfsconv *c, struct notes *ns)
{
	unsigned long events;
	size_t n, off = 0;
	const unsigned char *p = blk_tfsconv_staged(c, 0, &n, &events);

	memset(ns, 0, sizeof(*ns));
	assert_int_equal(events, 0);
	while (off < n) {
		struct blk_io_trace t;

		memcpy(&t, p + off, sizeof(t));
		assert_true(t.action & BLK_TC_ACT(BLK_TC_NOTIFY));
		assert_true(ns->n < 64);
		ns->code[ns->n] = t.action & 0xffff;
		ns->pid[ns->n] = t.pid;
		ns->time[ns->n] = t.time;
		assert_int_equal(t.device, LOOP0);
		if (ns->code[ns->n] == BLK_TN_DIRTY) {
			assert_int_equal(t.pdu_len, sizeof(struct blk_dirty_pdu));
			memcpy(&ns->d[ns->n], p + off + sizeof(t), sizeof(struct blk_dirty_pdu));
		} else if (ns->code[ns->n] == BLK_TN_FMAP) {
			assert_int_equal(t.pdu_len, sizeof(struct blk_fmap_pdu));
			memcpy(&ns->f[ns->n], p + off + sizeof(t), sizeof(struct blk_fmap_pdu));
		}
		ns->n++;
		off += sizeof(t) + t.pdu_len;
	}
	assert_int_equal(off, n);
}

static const char *fake_comm(void *ctx, uint32_t pid, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, "task-%u", pid);
	return buf;
}

static struct blk_tfsconv *converter(const struct fixture *fx)
{
	char *hp = load("tfs-6.18.header_page");
	uint32_t devno = LOOP0;
	struct blk_tfsconv *c = blk_tfsconv_new(hp, &devno, 1, 0, fake_comm, NULL);

	assert_non_null(c);
	blk_tfsconv_set_origin(c, fx->o);
	free(hp);
	return c;
}

static void dirty_runs(void **state)
{
	struct fixture fx;
	struct blk_tfsconv *c;
	struct page pg;
	struct notes ns;
	uint64_t last = 0, nd, nf;
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);

	(void)state;
	fixture_init(&fx);
	c = converter(&fx);
	page_init(&pg, 5000000);
	/* folios of 16 pages, their size from the page cache's event before */
	put_add(&pg, &fx, LOOP0, 12, 0, 4);
	put_dirty(&pg, &fx, 100, "7:0", 12, 0);
	put_add(&pg, &fx, LOOP0, 12, 16, 4);
	put_dirty(&pg, &fx, 100, "7:0", 12, 16);
	/* one page (no folio seen): still the next page of the run */
	put_dirty(&pg, &fx, 100, "7:0", 12, 32);
	/* another task: another run; another device: nothing */
	put_dirty(&pg, &fx, 101, "7:0", 12, 33);
	put_dirty(&pg, &fx, 100, "8:0", 12, 34);
	put_add(&pg, &fx, SDA, 12, 34, 2);
	/* a gap: a new run */
	put_dirty(&pg, &fx, 100, "7:0", 12, 40);
	page_commit(&pg);
	/* none of them is a blk entry, nor skipped as a foreign one */
	assert_int_equal(blk_tfsconv_page(c, pg.p, PAGE, &last), 0);
	assert_int_equal(blk_tfsconv_skipped(c), 0);
	staged(c, &ns);
	assert_int_equal(ns.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ns.code[i], BLK_TN_DIRTY);
		assert_int_equal(ns.d[i].ino, 12);
		assert_int_equal(ns.d[i].page_size, page);
	}
	assert_int_equal(ns.pid[0], 100);
	assert_int_equal(ns.d[0].index, 0);
	assert_int_equal(ns.d[0].count, 33);
	assert_string_equal(ns.d[0].comm, "task-100");
	assert_int_equal(ns.time[0], 5000000 + 2000); /* the first page's dirtying */
	assert_int_equal(ns.pid[1], 101);
	assert_int_equal(ns.d[1].index, 33);
	assert_int_equal(ns.d[1].count, 1);
	assert_int_equal(ns.d[2].index, 40);
	/* the batch handed on: the next page starts a new run */
	blk_tfsconv_clear(c, 0);
	page_init(&pg, 6000000);
	put_dirty(&pg, &fx, 100, "7:0", 12, 41);
	page_commit(&pg);
	assert_int_equal(blk_tfsconv_page(c, pg.p, PAGE, &last), 0);
	staged(c, &ns);
	assert_int_equal(ns.n, 1);
	assert_int_equal(ns.d[0].index, 41);
	blk_tfsconv_origin_counts(c, &nd, &nf);
	assert_int_equal(nd, 4);
	assert_int_equal(nf, 0);
	assert_true(blk_fsev_inos_has(blk_tfsconv_inos(c, 0), 12));
	assert_false(blk_fsev_inos_has(blk_tfsconv_inos(c, 0), 13));
	assert_int_equal(blk_tfsconv_last(c, 0), 6000000 + 1000);
	blk_tfsconv_free(c);
	blk_fsev_free(fx.o);
}

static void file_maps(void **state)
{
	struct fixture fx;
	struct blk_tfsconv *c;
	struct page pg;
	struct notes ns;
	uint64_t last = 0, nd, nf;

	(void)state;
	fixture_init(&fx);
	c = converter(&fx);
	page_init(&pg, 7000000);
	/* a cached extent (written): blocks 0-21 at block 1000 */
	put_es(&pg, &fx, 12, 0, 22, 1000, 0x1);
	/* the same again, and a part of it: nothing new */
	put_es(&pg, &fx, 12, 0, 22, 1000, 0x1 | 0x10);
	put_iomap(&pg, &fx, LOOP0, 12, 1002ull * BSIZE, 2 * BSIZE, 4 * BSIZE, 2);
	/* holes and delayed extents say nothing */
	put_es(&pg, &fx, 12, 30, 10, 0, 0x8);
	put_es(&pg, &fx, 12, 40, 10, 0, 0x4);
	/* mapped on: the next blocks in the file and on the disk grow the map */
	put_ext(&pg, &fx, 12, 22, 3, 1022, 3);
	/* not mapped (ret 0) */
	put_ext(&pg, &fx, 12, 25, 1, 0, 0);
	/* iomap, in bytes: another file; a hole; another device */
	put_iomap(&pg, &fx, LOOP0, 13, 1u << 21, 0, 65536, 2);
	put_iomap(&pg, &fx, LOOP0, 13, ~0ull, 65536, 65536, 0);
	put_iomap(&pg, &fx, SDA, 13, 1u << 22, 0, 65536, 2);
	page_commit(&pg);
	assert_int_equal(blk_tfsconv_page(c, pg.p, PAGE, &last), 0);
	staged(c, &ns);
	assert_int_equal(ns.n, 2);
	assert_int_equal(ns.code[0], BLK_TN_FMAP);
	assert_int_equal(ns.pid[0], 2);
	assert_int_equal(ns.f[0].ino, 12);
	assert_int_equal(ns.f[0].offset, 0);
	assert_int_equal(ns.f[0].sector, 1000 * (BSIZE / 512));
	assert_int_equal(ns.f[0].bytes, 25 * BSIZE);
	assert_int_equal(ns.code[1], BLK_TN_FMAP);
	assert_int_equal(ns.f[1].ino, 13);
	assert_int_equal(ns.f[1].offset, 0);
	assert_int_equal(ns.f[1].sector, (1u << 21) / 512);
	assert_int_equal(ns.f[1].bytes, 65536);
	/* blocks reused: the new owner's map, and then the old one again is not a repeat */
	blk_tfsconv_clear(c, 0);
	page_init(&pg, 8000000);
	put_es(&pg, &fx, 14, 0, 1, 1000, 0x1);
	put_es(&pg, &fx, 12, 0, 22, 1000, 0x1);
	put_es(&pg, &fx, 12, 0, 22, 1000, 0x1);
	page_commit(&pg);
	assert_int_equal(blk_tfsconv_page(c, pg.p, PAGE, &last), 0);
	staged(c, &ns);
	assert_int_equal(ns.n, 2);
	assert_int_equal(ns.f[0].ino, 14);
	assert_int_equal(ns.f[1].ino, 12);
	assert_int_equal(ns.f[1].bytes, 22 * BSIZE);
	blk_tfsconv_origin_counts(c, &nd, &nf);
	assert_int_equal(nd, 0);
	assert_int_equal(nf, 4);
	blk_tfsconv_free(c);
	blk_fsev_free(fx.o);
}

static void without_block_size_or_format(void **state)
{
	struct fixture fx;
	struct blk_fsev_rec r;
	struct page pg;

	(void)state;
	fixture_init(&fx);
	/* no file system known on the device: ext4's maps (in blocks) are left out */
	blk_fsev_set_block_size(fx.o, 0, 0);
	page_init(&pg, 1);
	put_es(&pg, &fx, 12, 0, 22, 1000, 0x1);
	assert_int_equal(blk_fsev_decode(fx.o, pg.p + 20, 48, &r), 1);
	assert_int_equal(r.kind, BLK_FSEV_NONE);
	/* not one of ours: a type no format has */
	pg.p[20] = 7;
	pg.p[21] = 0;
	assert_int_equal(blk_fsev_decode(fx.o, pg.p + 20, 48, &r), 0);
	/* a format without the fields read */
	assert_int_equal(blk_fsev_set_format(fx.o, BLK_FSEV_EV_IOMAP,
					     "name: x\nID: 5\nformat:\n\tfield:int a;\toffset:8;\t"
					     "size:4;\tsigned:1;\n\nprint fmt: \"\"\n"),
			 -EPROTO);
	assert_int_equal(blk_fsev_set_format(fx.o, BLK_FSEV_EV_IOMAP, "nothing"), -EINVAL);
	blk_fsev_free(fx.o);
}

static void inode_set(void **state)
{
	struct blk_fsev_inos s = BLK_FSEV_INOS_INIT;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(blk_fsev_inos_add(&s, i * 7919), 1);
	assert_int_equal(blk_fsev_inos_add(&s, 7919), 0);
	assert_int_equal(s.n, 1000);
	for (uint64_t i = 0; i < 1000; i++)
		assert_true(blk_fsev_inos_has(&s, i * 7919));
	assert_false(blk_fsev_inos_has(&s, 1));
	assert_int_equal(blk_fsev_inos_add(&s, ~0ull), 0);
	blk_fsev_inos_release(&s);
	assert_false(blk_fsev_inos_has(&s, 0));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dirty_runs),
		cmocka_unit_test(file_maps),
		cmocka_unit_test(without_block_size_or_format),
		cmocka_unit_test(inode_set),
	};
	char self[4096];

	(void)argc;
	/* tests/unit/test-tfsorigin -> tests/data */
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(data_dir, sizeof(data_dir), "%s/../data", dirname(self));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
