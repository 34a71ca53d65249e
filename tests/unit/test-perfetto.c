// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/perfetto/perfetto.c and lib/perfetto/perfetto-event.c: the packets of small
 * traces checked byte by byte against encodings worked out by hand from the schema's field
 * numbers (first packet, descriptors, slices, instants, interning, args, flows, counters with
 * and without increments, absolute times, long strings), lanes, the argument checks that keep
 * the file valid, gzip and write errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "blk/output.h"
#include "blk-perfetto/perfetto.h"

#define B(...) ((const unsigned char[]){__VA_ARGS__}), sizeof((const unsigned char[]){__VA_ARGS__})

/* The first packet of a trace with start_ns 1000 and no wall clock. */
static const unsigned char first_1000[] = {
	0x0a, 0x21, /* Trace.packet, 33 bytes */
	0x50, 0x01, /* trusted_packet_sequence_id 1 */
	0x68, 0x03, /* sequence_flags CLEARED | NEEDS */
	0xb8, 0x05, 0x01, /* first_packet_on_sequence */
	0xda, 0x03, 0x03, 0xd0, 0x03, 0x40, /* trace_packet_defaults { timestamp_clock_id 64 } */
	0x32, 0x12, /* clock_snapshot */
	0x0a, 0x05, 0x08, 0x03, 0x10, 0xe8, 0x07, /* { MONOTONIC, 1000 } */
	0x0a, 0x07, 0x08, 0x40, 0x10, 0xe8, 0x07, 0x18, 0x01, /* { 64, 1000, incremental } */
	0x10, 0x03, /* primary_trace_clock MONOTONIC */
};

/* Track 1, a slice track named "d". */
static const unsigned char track_d[] = {
	0x0a, 0x0c, 0x50, 0x01, 0x68, 0x02, /* sequence 1, NEEDS_INCREMENTAL_STATE */
	0xe2, 0x03, 0x05, 0x08, 0x01, 0x12, 0x01, 'd', /* track_descriptor { uuid 1, name } */
};

struct file {
	unsigned char *p;
	size_t n, at; /* at: bytes checked so far */
};

static char *temp_name(char *path, const char *suffix)
{
	int fd;

	snprintf(path, 64, "/tmp/blk-unit-pf-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	assert_true(fd >= 0);
	close(fd);
	return path;
}

static struct file read_file(const char *path, int gz)
{
	struct file f = {NULL, 0, 0};
	size_t cap = 0;
	gzFile z = gzopen(path, "rb");
	int got;

	assert_non_null(z);
	(void)gz; /* gzread reads plain files as they are */
	do {
		if (cap - f.n < 65536) {
			cap = cap ? cap * 2 : 1 << 16;
			f.p = realloc(f.p, cap);
			assert_non_null(f.p);
		}
		got = gzread(z, f.p + f.n, (unsigned int)(cap - f.n));
		assert_true(got >= 0);
		f.n += (size_t)got;
	} while (got > 0);
	gzclose(z);
	return f;
}

/* The next bytes of @f are @want. */
static void expect(struct file *f, const unsigned char *want, size_t n)
{
	if (f->n - f->at < n || memcmp(f->p + f->at, want, n)) {
		print_message("at %zu, got:", f->at);
		for (size_t i = f->at; i < f->n && i < f->at + n + 4; i++)
			print_message(" %02x", f->p[i]);
		print_message("\nwant:");
		for (size_t i = 0; i < n; i++)
			print_message(" %02x", want[i]);
		print_message("\n");
		fail();
	}
	f->at += n;
}

static void expect_end(struct file *f)
{
	assert_int_equal(f->at, f->n);
	free(f->p);
}

static void test_slice(void **state)
{
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto_track t = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_event ev = {.track = 1, .ts = 1500, .name = "x"};
	struct blk_perfetto_stats st;
	struct blk_perfetto *pf;
	struct file f;
	uint64_t uuid = 0;
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &t, &uuid), 0);
	assert_int_equal(uuid, 1);
	assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
	assert_int_equal(blk_perfetto_end_at(pf, 1, 1600), 0);
	blk_perfetto_stats(pf, &st);
	assert_int_equal(st.packets, 4);
	assert_int_equal(st.slices, 1);
	assert_int_equal(st.tracks, 1);
	assert_int_equal(st.interned, 1);
	assert_int_equal(st.absolute, 0);
	assert_int_equal(blk_perfetto_close(pf), 0);

	f = read_file(path, 0);
	assert_int_equal(f.n, st.bytes);
	expect(&f, first_1000, sizeof(first_1000));
	expect(&f, track_d, sizeof(track_d));
	/* begin: timestamp 500 after the clock's 1000; the name interned in the same packet */
	expect(&f, B(0x0a, 0x18, 0x40, 0xf4, 0x03, 0x50, 0x01, 0x68, 0x02,
		     /* track_event { name_iid 1, type BEGIN, track_uuid 1 } */
		     0x5a, 0x06, 0x50, 0x01, 0x48, 0x01, 0x58, 0x01,
		     /* interned_data { event_names { iid 1, name "x" } } */
		     0x62, 0x07, 0x12, 0x05, 0x08, 0x01, 0x12, 0x01, 'x'));
	/* end: timestamp +100, track_event { type END, track_uuid 1 } */
	expect(&f, B(0x0a, 0x0c, 0x40, 0x64, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x04, 0x48, 0x02, 0x58,
		     0x01));
	expect_end(&f);
	unlink(path);
}

static void test_wall_clock(void **state)
{
	struct blk_perfetto_opts o = {
		.start_ns = 1000,
		.has_wall = 1,
		.wall_ts = 3000,
		.wall_sec = 1700000000,
		.wall_nsec = 5,
	};
	struct blk_perfetto *pf;
	struct file f;
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_close(pf), 0);
	f = read_file(path, 0);
	expect(&f, B(0x0a, 0x2f, 0x50, 0x01, 0x68, 0x03, 0xb8, 0x05, 0x01, 0xda, 0x03, 0x03, 0xd0,
		     0x03, 0x40, 0x32, 0x20, 0x0a, 0x05, 0x08, 0x03, 0x10, 0xe8, 0x07, 0x0a, 0x07,
		     0x08, 0x40, 0x10, 0xe8, 0x07, 0x18, 0x01,
		     /* { REALTIME, 1700000000.000000005 s less the 2000 ns from 1000 to 3000 } */
		     0x0a, 0x0c, 0x08, 0x01, 0x10, 0xb5, 0xf0, 0xa7, 0xb1, 0xe3, 0x9f, 0xe7, 0xcb,
		     0x17, 0x10, 0x03));
	expect_end(&f);
	/* a wall clock before 1970 at the start, or a bad nsec, is refused */
	o.wall_sec = 0;
	o.wall_nsec = 0;
	assert_null(blk_perfetto_open(path, &o));
	assert_int_equal(errno, EINVAL);
	o.wall_sec = 100;
	o.wall_nsec = 1000000000;
	assert_null(blk_perfetto_open(path, &o));
	assert_int_equal(errno, EINVAL);
	unlink(path);
}

static void test_args_flows_counters(void **state)
{
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_track tc = {
		.type = BLK_PERFETTO_TRACK_COUNTER,
		.name = "c",
		.unit = BLK_PERFETTO_UNIT_COUNT,
		.incremental = 1,
	};
	const struct blk_perfetto_arg args[] = {BLK_PERFETTO_UINT("n", 7),
						BLK_PERFETTO_ISTR("s", "v")};
	const uint64_t flow = 5;
	const struct blk_perfetto_value val = {.track = 2, .value = 4};
	struct blk_perfetto_event in = {.track = 1,
					.ts = 1000,
					.name = "x",
					.args = args,
					.nargs = 2,
					.flows = &flow,
					.nflows = 1};
	struct blk_perfetto_event late = {.track = 1, .ts = 1500, .name = "x"};
	struct blk_perfetto_event b = {.track = 1,
				       .ts = 2000,
				       .name = "y",
				       .terminating_flows = &flow,
				       .nterminating = 1,
				       .values = &val,
				       .nvalues = 1};
	struct blk_perfetto_stats st;
	struct blk_perfetto *pf;
	struct file f;
	uint64_t u1, u2;
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u1), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &tc, &u2), 0);
	assert_int_equal(u2, 2);
	assert_int_equal(blk_perfetto_instant(pf, &in), 0);
	assert_int_equal(blk_perfetto_counter(pf, 2, 2000, 5), 0);
	assert_int_equal(blk_perfetto_counter(pf, 2, 2000, 3), 0);
	assert_int_equal(blk_perfetto_instant(pf, &late), 0);
	assert_int_equal(blk_perfetto_begin(pf, &b), 0);
	blk_perfetto_stats(pf, &st);
	assert_int_equal(st.absolute, 1);
	assert_int_equal(st.counters, 3);
	assert_int_equal(st.instants, 2);
	assert_int_equal(st.interned, 5);
	assert_int_equal(blk_perfetto_close(pf), 0);

	f = read_file(path, 0);
	assert_int_equal(f.n, st.bytes);
	expect(&f, first_1000, sizeof(first_1000));
	expect(&f, track_d, sizeof(track_d));
	/* track_descriptor { uuid 2, counter { unit COUNT, is_incremental }, name "c" } */
	expect(&f, B(0x0a, 0x12, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x0b, 0x08, 0x02, 0x42, 0x04,
		     0x18, 0x02, 0x28, 0x01, 0x12, 0x01, 'c'));
	/* the instant, at the clock's base: timestamp 0 */
	expect(&f, B(0x0a, 0x44, 0x40, 0x00, 0x50, 0x01, 0x68, 0x02,
		     /* track_event { name_iid 1, INSTANT, track 1, */
		     0x5a, 0x1d, 0x50, 0x01, 0x48, 0x03, 0x58, 0x01,
		     /* debug_annotations { name_iid 1, uint_value 7 } */
		     0x22, 0x04, 0x08, 0x01, 0x18, 0x07,
		     /* debug_annotations { name_iid 2, string_value_iid 1 } */
		     0x22, 0x05, 0x08, 0x02, 0x88, 0x01, 0x01,
		     /* flow_ids 5 (fixed64) } */
		     0xf9, 0x02, 0x05, 0, 0, 0, 0, 0, 0, 0,
		     /* interned_data { event_names "x", debug_annotation_names "n" "s",
			debug_annotation_string_values "v" } */
		     0x62, 0x1d, 0x12, 0x05, 0x08, 0x01, 0x12, 0x01, 'x', 0x1a, 0x05, 0x08, 0x01,
		     0x12, 0x01, 'n', 0x1a, 0x05, 0x08, 0x02, 0x12, 0x01, 's', 0xea, 0x01, 0x05,
		     0x08, 0x01, 0x12, 0x01, 'v'));
	/* counter 5 at +1000: counter_value 5 (the first value is its own difference from 0) */
	expect(&f, B(0x0a, 0x10, 0x40, 0xe8, 0x07, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x07, 0x48, 0x04,
		     0x58, 0x02, 0xf0, 0x01, 0x05));
	/* counter 3 at +0: the difference -2, ten bytes */
	expect(&f, B(0x0a, 0x18, 0x40, 0x00, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x10, 0x48, 0x04, 0x58,
		     0x02, 0xf0, 0x01, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
	/* an instant at 1500, before the last packet's 2000: absolute, timestamp_clock_id 3 */
	expect(&f, B(0x0a, 0x12, 0x40, 0xdc, 0x0b, 0xd0, 0x03, 0x03, 0x50, 0x01, 0x68, 0x02, 0x5a,
		     0x06, 0x50, 0x01, 0x48, 0x03, 0x58, 0x01));
	/* the begin at 2000: +0 from the last relative packet (the absolute one left it) */
	expect(&f, B(0x0a, 0x26, 0x40, 0x00, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x15, 0x50, 0x02, 0x48,
		     0x01, 0x58, 0x01,
		     /* terminating_flow_ids 5 */
		     0x81, 0x03, 0x05, 0, 0, 0, 0, 0, 0, 0,
		     /* extra_counter_track_uuids 2, extra_counter_values 1 (4 - 3) */
		     0xf8, 0x01, 0x02, 0x60, 0x01,
		     /* interned_data { event_names { iid 2, "y" } } */
		     0x62, 0x07, 0x12, 0x05, 0x08, 0x02, 0x12, 0x01, 'y'));
	expect_end(&f);
	unlink(path);
}

/* a builder of expected bytes */
struct want {
	unsigned char b[1024];
	size_t n;
};

static void w_bytes(struct want *w, const void *p, size_t n)
{
	assert_true(w->n + n <= sizeof(w->b));
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void w_varint(struct want *w, uint64_t v)
{
	while (v >= 0x80) {
		w->b[w->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	w->b[w->n++] = (unsigned char)v;
}

/* field @key (already shifted, with its wire type) holding the message @m */
static void w_msg(struct want *w, unsigned int key, const struct want *m)
{
	w_varint(w, key);
	w_varint(w, m->n);
	w_bytes(w, m->b, m->n);
}

/*
 * Messages of 128 bytes and more (a length of two bytes, at each level: the argument, the
 * track event, the packet) and a name too long to intern (written inline), each as worked
 * out from the schema.
 */
static void test_long_strings(void **state)
{
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	char text[201], name[301];
	struct blk_perfetto_arg a = BLK_PERFETTO_STR("t", text);
	struct blk_perfetto_event e1 = {.track = 1, .ts = 1000, .name = "x", .args = &a, .nargs = 1};
	struct blk_perfetto_event e2 = {.track = 1, .ts = 1000, .name = name};
	static const unsigned char head[] = {0x40, 0x00, 0x50, 0x01, 0x68, 0x02};
	struct want ann = {.n = 0}, te = {.n = 0}, in = {.n = 0}, pkt = {.n = 0}, all = {.n = 0};
	struct blk_perfetto *pf;
	struct file f;
	uint64_t u;
	char path[64];

	(void)state;
	memset(text, 'a', 200);
	text[200] = '\0';
	memset(name, 'n', 300);
	name[300] = '\0';
	pf = blk_perfetto_open(temp_name(path, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	assert_int_equal(blk_perfetto_instant(pf, &e1), 0);
	assert_int_equal(blk_perfetto_instant(pf, &e2), 0);
	assert_int_equal(blk_perfetto_close(pf), 0);

	/* debug_annotations { name_iid 1, string_value (200 bytes) } */
	w_bytes(&ann, B(0x08, 0x01));
	w_varint(&ann, 6 << 3 | 2);
	w_varint(&ann, 200);
	w_bytes(&ann, text, 200);
	/* track_event { name_iid 1, INSTANT, track 1, the annotation } */
	w_bytes(&te, B(0x50, 0x01, 0x48, 0x03, 0x58, 0x01));
	w_msg(&te, 4 << 3 | 2, &ann);
	/* interned_data { event_names { 1, "x" }, debug_annotation_names { 1, "t" } } */
	w_bytes(&in, B(0x12, 0x05, 0x08, 0x01, 0x12, 0x01, 'x', 0x1a, 0x05, 0x08, 0x01, 0x12, 0x01, 't'));
	w_bytes(&pkt, head, sizeof(head));
	w_msg(&pkt, 11 << 3 | 2, &te);
	w_msg(&pkt, 12 << 3 | 2, &in);
	w_msg(&all, 1 << 3 | 2, &pkt);
	/* track_event { name (300 bytes, inline), INSTANT, track 1 }, nothing interned */
	te.n = pkt.n = 0;
	w_varint(&te, 23 << 3 | 2);
	w_varint(&te, 300);
	w_bytes(&te, name, 300);
	w_bytes(&te, B(0x48, 0x03, 0x58, 0x01));
	w_bytes(&pkt, head, sizeof(head));
	w_msg(&pkt, 11 << 3 | 2, &te);
	w_msg(&all, 1 << 3 | 2, &pkt);
	assert_true(ann.n >= 128 && pkt.n >= 128);

	f = read_file(path, 0);
	expect(&f, first_1000, sizeof(first_1000));
	expect(&f, track_d, sizeof(track_d));
	expect(&f, all.b, all.n);
	expect_end(&f);
	unlink(path);
}

/* events of fixed names on a slice track, with @flags: begins, stage-like ends and begins */
static void write_fixed(const char *path, unsigned int flags)
{
	static const char *const names[] = {"io", "Q2G", "G2D", "D2C"};
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	char buf[8];
	struct blk_perfetto_arg a[2] = {BLK_PERFETTO_UINT("sector", 0),
					BLK_PERFETTO_ISTR("rwbs", buf)};
	struct blk_perfetto_event ev = {.track = 1, .args = a, .nargs = 2, .flags = flags};
	struct blk_perfetto *pf = blk_perfetto_open(path, NULL);
	uint64_t u;

	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	for (int i = 0; i < 300; i++) {
		/* a buffer whose text changes: an arg value, not fixed */
		snprintf(buf, sizeof(buf), "%c", "RWD"[i % 3]);
		for (int k = 0; k < 4; k++) {
			ev.ts = (uint64_t)i * 100 + (uint64_t)k * 10;
			ev.name = names[k];
			a[0].v.u = (uint64_t)i;
			if (k > 1)
				assert_int_equal(blk_perfetto_end_at(pf, 1, ev.ts), 0);
			assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
		}
		assert_int_equal(blk_perfetto_end_at(pf, 1, (uint64_t)i * 100 + 50), 0);
		assert_int_equal(blk_perfetto_end_at(pf, 1, (uint64_t)i * 100 + 50), 0);
	}
	assert_int_equal(blk_perfetto_close(pf), 0);
}

/*
 * Files @p1 and @p2 hold the same bytes (@p2's once uncompressed, if it is gzip), more than
 * @min of them; both are removed. Return: their number.
 */
static size_t same_files(const char *p1, const char *p2, size_t min)
{
	struct file f1 = read_file(p1, 0), f2 = read_file(p2, 1);
	size_t n = f1.n;

	assert_true(f1.n > min);
	assert_int_equal(f1.n, f2.n);
	assert_memory_equal(f1.p, f2.p, f1.n);
	free(f1.p);
	free(f2.p);
	unlink(p1);
	unlink(p2);
	return n;
}

/* Names said to be fixed (found by their address alone): the same file as without. */
static void test_fixed_names(void **state)
{
	char p1[64], p2[64];

	(void)state;
	write_fixed(temp_name(p1, ""), 0);
	write_fixed(temp_name(p2, ""),
		    BLK_PERFETTO_EV_FIXED_NAME | BLK_PERFETTO_EV_FIXED_ARG_NAMES);
	same_files(p1, p2, 300 * 5 * 4);
}

/*
 * An I/O's slice and stages as btt draws them, into @path: with the iids of
 * blk_perfetto_intern() and blk_perfetto_slices() (@lean), or with blk_perfetto_begin() and
 * _end() and the strings themselves; the same bytes either way. Both intern the names first.
 */
static void write_stages(const char *path, int lean)
{
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_track tc = {
		.type = BLK_PERFETTO_TRACK_COUNTER, .name = "c", .incremental = 1};
	const struct blk_perfetto_value val = {.track = 2, .value = 4};
	struct blk_perfetto *pf = blk_perfetto_open(path, &o);
	uint64_t u, io, q2d, d2c, rwbs;

	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &tc, &u), 0);
	assert_int_equal(io = blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, "R 4 KiB"), 1);
	assert_int_equal(q2d = blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, "Q2D"), 2);
	assert_int_equal(d2c = blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, "D2C"), 3);
	assert_int_equal(rwbs = blk_perfetto_intern(pf, BLK_PERFETTO_ARG_STRING, "R"), 1);
	for (int i = 0; i < 200; i++) {
		uint64_t t = 1000 + 40000 * (uint64_t)i;
		struct blk_perfetto_arg a[] = {BLK_PERFETTO_UINT("sector", (uint64_t)i * 8),
					       BLK_PERFETTO_ISTR("rwbs", "R")};
		struct blk_perfetto_event b = {
			.track = 1, .ts = t, .name = "R 4 KiB", .args = a, .nargs = 2};
		struct blk_perfetto_event st = {.track = 1, .ts = t, .name = "Q2D"};

		if (lean) {
			a[1] = (struct blk_perfetto_arg)BLK_PERFETTO_IID("rwbs", rwbs);
			b.name = NULL;
			b.name_iid = io;
			assert_int_equal(blk_perfetto_begin(pf, &b), 0);
			assert_int_equal(blk_perfetto_slices(pf, 1, t, 0, q2d, NULL, 0), 0);
			/* a counter value riding on the stages' end and begin */
			assert_int_equal(blk_perfetto_slices(pf, 1, t + 1000 + 90 * (uint64_t)i, 1,
							     d2c, &val, 1),
					 0);
			assert_int_equal(blk_perfetto_slices(pf, 1, t + 30000, 2, 0, NULL, 0), 0);
			continue;
		}
		assert_int_equal(blk_perfetto_begin(pf, &b), 0);
		assert_int_equal(blk_perfetto_begin(pf, &st), 0);
		st.ts = t + 1000 + 90 * (uint64_t)i;
		st.values = &val;
		st.nvalues = 1;
		assert_int_equal(blk_perfetto_end(pf, &st), 0);
		st.name = "D2C";
		st.values = NULL;
		st.nvalues = 0;
		assert_int_equal(blk_perfetto_begin(pf, &st), 0);
		assert_int_equal(blk_perfetto_end_at(pf, 1, t + 30000), 0);
		assert_int_equal(blk_perfetto_end_at(pf, 1, t + 30000), 0);
	}
	assert_int_equal(blk_perfetto_close(pf), 0);
}

static void test_slices_iids(void **state)
{
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_arg bad_arg = BLK_PERFETTO_IID("a", 2);
	struct blk_perfetto_event ev = {.track = 1, .ts = 1000, .name_iid = 2};
	struct blk_perfetto_stats st;
	struct blk_perfetto *pf;
	char p1[64], p2[64];
	struct file f1;
	uint64_t u, x;

	(void)state;
	write_stages(temp_name(p1, ""), 1);
	write_stages(temp_name(p2, ""), 0);
	/* 200 I/Os of 6 packets; time deltas of one to three bytes */
	same_files(p1, p2, 200 * 6 * 14);

	/* what is refused writes nothing */
	pf = blk_perfetto_open(temp_name(p1, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	assert_int_equal(blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, NULL), 0);
	assert_int_equal(blk_perfetto_intern(pf, (enum blk_perfetto_string_kind)7, "x"), 0);
	assert_int_equal(x = blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, "x"), 1);
	assert_int_equal(blk_perfetto_intern(pf, BLK_PERFETTO_EVENT_NAME, "x"), 1);
	assert_int_equal(blk_perfetto_slices(pf, 1, 1000, 1, x, NULL, 0), -EINVAL); /* none open */
	assert_int_equal(blk_perfetto_slices(pf, 1, 1000, 0, 2, NULL, 0), -EINVAL); /* no iid 2 */
	assert_int_equal(blk_perfetto_slices(pf, 9, 1000, 0, x, NULL, 0), -EINVAL); /* no track */
	assert_int_equal(blk_perfetto_begin(pf, &ev), -EINVAL);
	ev.name_iid = x;
	ev.args = &bad_arg; /* no string value was interned */
	ev.nargs = 1;
	assert_int_equal(blk_perfetto_begin(pf, &ev), -EINVAL);
	ev.nargs = 0;
	assert_int_equal(blk_perfetto_slices(pf, 1, 1000, 0, x, NULL, 0), 0);
	assert_int_equal(blk_perfetto_slices(pf, 1, 999, 1, 0, NULL, 0), -EINVAL); /* back in time */
	assert_int_equal(blk_perfetto_slices(pf, 1, 1000, 2, 0, NULL, 0), -EINVAL); /* one open */
	assert_int_equal(blk_perfetto_slices(pf, 1, 1100, 1, 0, NULL, 0), 0);
	blk_perfetto_stats(pf, &st);
	assert_int_equal(st.packets, 4);
	assert_int_equal(st.slices, 1);
	assert_int_equal(blk_perfetto_close(pf), 0);
	f1 = read_file(p1, 0);
	f1.at = sizeof(first_1000) + sizeof(track_d);
	/* the begin of "x" by its iid: as test_slice's, its definition in the packet */
	expect(&f1, B(0x0a, 0x17, 0x40, 0x00, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x06, 0x50, 0x01, 0x48,
		      0x01, 0x58, 0x01, 0x62, 0x07, 0x12, 0x05, 0x08, 0x01, 0x12, 0x01, 'x'));
	expect(&f1, B(0x0a, 0x0c, 0x40, 0x64, 0x50, 0x01, 0x68, 0x02, 0x5a, 0x04, 0x48, 0x02, 0x58,
		      0x01));
	expect_end(&f1);
	unlink(p1);
}

static void test_descriptors(void **state)
{
	struct blk_perfetto_track dev = {.type = BLK_PERFETTO_TRACK_SLICE,
					 .name = "8,0 (sda)",
					 .child_ordering = BLK_PERFETTO_ORDER_EXPLICIT,
					 .description = "h"};
	struct blk_perfetto_track ctr = {.type = BLK_PERFETTO_TRACK_COUNTER,
					 .parent = 1,
					 .name = "MB/s",
					 .unit_name = "MB/s",
					 .unit_multiplier = 2,
					 .y_axis_share_key = "k",
					 .rank = -1,
					 .merge = BLK_PERFETTO_MERGE_NONE};
	struct blk_perfetto_track proc = {.type = BLK_PERFETTO_TRACK_PROCESS,
					  .parent = 1, /* not written: processes are top-level */
					  .pid = 1234,
					  .name = "fio",
					  .has_ts = 1,
					  .ts = 1001};
	struct blk_perfetto_track thr = {
		.type = BLK_PERFETTO_TRACK_THREAD, .pid = 1234, .tid = 1235, .name = "fio"};
	struct blk_perfetto_opts o = {.start_ns = 1000};
	struct blk_perfetto *pf;
	struct file f;
	uint64_t u;
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), &o);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &dev, &u), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &ctr, &u), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &proc, &u), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &thr, &u), 0);
	assert_int_equal(u, 4);
	assert_int_equal(blk_perfetto_close(pf), 0);
	f = read_file(path, 0);
	expect(&f, first_1000, sizeof(first_1000));
	/* { uuid 1, name, description "h", child_ordering EXPLICIT } */
	expect(&f, B(0x0a, 0x19, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x12, 0x08, 0x01, 0x12, 0x09,
		     '8', ',', '0', ' ', '(', 's', 'd', 'a', ')', 0x72, 0x01, 'h', 0x58, 0x03));
	/* { uuid 2, parent 1, counter { unit_name, unit_multiplier 2, y_axis_share_key },
	 *   name, sibling_order_rank -1, sibling_merge_behavior NONE } */
	expect(&f, B(0x0a, 0x2b, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x24, 0x08, 0x02, 0x28, 0x01,
		     0x42, 0x0b, 0x32, 0x04, 'M', 'B', '/', 's', 0x20, 0x02, 0x3a, 0x01, 'k', 0x12,
		     0x04, 'M', 'B', '/', 's', 0x60, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0x01, 0x78, 0x02));
	/* at +1: { uuid 3, process { pid 1234, process_name } } */
	expect(&f, B(0x0a, 0x15, 0x40, 0x01, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x0c, 0x08, 0x03,
		     0x1a, 0x08, 0x08, 0xd2, 0x09, 0x32, 0x03, 'f', 'i', 'o'));
	/* { uuid 4, thread { pid 1234, tid 1235, thread_name } } */
	expect(&f, B(0x0a, 0x16, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x0f, 0x08, 0x04, 0x22, 0x0b,
		     0x08, 0xd2, 0x09, 0x10, 0xd3, 0x09, 0x2a, 0x03, 'f', 'i', 'o'));
	expect_end(&f);
	unlink(path);
}

static void test_lanes(void **state)
{
	struct blk_perfetto_track dev = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_event ev = {.ts = 10, .name = "x"};
	struct blk_perfetto_stats st;
	struct blk_perfetto *pf;
	struct file f;
	unsigned int set, set2;
	uint64_t u, l[6];
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), NULL);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &dev, &u), 0);
	assert_int_equal(blk_perfetto_lanes_new(pf, 9, "I/O", 0, &set), -EINVAL);
	assert_int_equal(blk_perfetto_lanes_new(pf, 1, "I/O", 0, &set), 0);
	assert_int_equal(blk_perfetto_lanes_new(pf, 1, "other", 1, &set2), 0);
	assert_int_equal(blk_perfetto_lane_take(pf, 7, &u), -EINVAL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(blk_perfetto_lane_take(pf, set, &l[i]), 0);
	assert_int_equal(l[0], 2);
	assert_int_equal(l[3], 5);
	/* the lowest free lane comes first, whatever order they were given back in */
	assert_int_equal(blk_perfetto_lane_give(pf, l[2]), 0);
	assert_int_equal(blk_perfetto_lane_give(pf, l[0]), 0);
	assert_int_equal(blk_perfetto_lane_give(pf, l[0]), -EINVAL);
	assert_int_equal(blk_perfetto_lane_give(pf, 1), -EINVAL);
	assert_int_equal(blk_perfetto_lane_take(pf, set, &u), 0);
	assert_int_equal(u, l[0]);
	assert_int_equal(blk_perfetto_lane_take(pf, set, &u), 0);
	assert_int_equal(u, l[2]);
	assert_int_equal(blk_perfetto_lane_take(pf, set, &l[4]), 0);
	assert_int_equal(l[4], 6);
	assert_int_equal(blk_perfetto_lane_take(pf, set2, &l[5]), 0);
	assert_int_equal(l[5], 7);
	/* a lane with a slice open cannot be given back */
	ev.track = l[1];
	assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
	assert_int_equal(blk_perfetto_lane_give(pf, l[1]), -EBUSY);
	assert_int_equal(blk_perfetto_end_at(pf, l[1], 20), 0);
	assert_int_equal(blk_perfetto_lane_give(pf, l[1]), 0);
	blk_perfetto_stats(pf, &st);
	assert_int_equal(st.tracks, 7);
	assert_int_equal(blk_perfetto_close(pf), 0);

	f = read_file(path, 0);
	f.at = 2 + f.p[1]; /* the first packet */
	expect(&f, B(0x0a, 0x0c, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x05, 0x08, 0x01, 0x12, 0x01,
		     'd'));
	/* lanes: { uuid, parent 1, name "I/O" }; rank 0 is not written */
	for (int i = 2; i <= 5; i++)
		expect(&f, B(0x0a, 0x10, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x09, 0x08,
			     (unsigned char)i, 0x28, 0x01, 0x12, 0x03, 'I', '/', 'O'));
	expect(&f, B(0x0a, 0x10, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x09, 0x08, 0x06, 0x28, 0x01,
		     0x12, 0x03, 'I', '/', 'O'));
	expect(&f, B(0x0a, 0x14, 0x50, 0x01, 0x68, 0x02, 0xe2, 0x03, 0x0d, 0x08, 0x07, 0x28, 0x01,
		     0x12, 0x05, 'o', 't', 'h', 'e', 'r', 0x60, 0x01));
	free(f.p);
	unlink(path);
}

/* Calls that would make the trace invalid fail and write nothing. */
static void test_refused(void **state)
{
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_track tc = {
		.type = BLK_PERFETTO_TRACK_COUNTER, .name = "c", .incremental = 1};
	struct blk_perfetto_track bad = ts;
	const struct blk_perfetto_value vs[2] = {{2, 1}, {2, 2}};
	const struct blk_perfetto_value vbad = {1, 1};
	const struct blk_perfetto_arg noname = {.name = NULL, .type = BLK_PERFETTO_ARG_INT};
	const struct blk_perfetto_arg nostr = BLK_PERFETTO_STR("s", NULL);
	const uint64_t zero = 0;
	struct blk_perfetto_event ev = {.track = 1, .ts = 100, .name = "x"};
	struct blk_perfetto_stats st0, st;
	struct blk_perfetto *pf;
	struct file f;
	uint64_t u;
	char path[64];

	(void)state;
	pf = blk_perfetto_open(temp_name(path, ""), NULL);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	assert_int_equal(blk_perfetto_track_new(pf, &tc, &u), 0);
	assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
	blk_perfetto_stats(pf, &st0);

	bad.parent = 3;
	assert_int_equal(blk_perfetto_track_new(pf, &bad, &u), -EINVAL);
	bad.parent = 0;
	bad.incremental = 1;
	assert_int_equal(blk_perfetto_track_new(pf, &bad, &u), -EINVAL);
	bad.incremental = 0;
	bad.type = 9;
	assert_int_equal(blk_perfetto_track_new(pf, &bad, &u), -EINVAL);
	/* an end on a track with nothing open, twice on one open slice */
	assert_int_equal(blk_perfetto_end_at(pf, 2, 200), -EINVAL);
	assert_int_equal(blk_perfetto_end_at(pf, 3, 200), -EINVAL);
	assert_int_equal(blk_perfetto_end_at(pf, 0, 200), -EINVAL);
	/* back in time on the track */
	ev.ts = 99;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	assert_int_equal(blk_perfetto_end_at(pf, 1, 99), -EINVAL);
	ev.ts = 100;
	/* slices on a counter track, counters on a slice track */
	ev.track = 2;
	assert_int_equal(blk_perfetto_begin(pf, &ev), -EINVAL);
	ev.track = 1;
	assert_int_equal(blk_perfetto_counter(pf, 1, 100, 1), -EINVAL);
	assert_int_equal(blk_perfetto_counter_double(pf, 2, 100, 1.5), -EINVAL);
	ev.values = &vbad;
	ev.nvalues = 1;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.values = vs;
	ev.nvalues = 2;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.nvalues = 0;
	/* no name, a nameless arg, a NULL string, flow id 0 */
	ev.name = NULL;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.name = "x";
	ev.args = &noname;
	ev.nargs = 1;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.args = &nostr;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.nargs = 0;
	ev.flows = &zero;
	ev.nflows = 1;
	assert_int_equal(blk_perfetto_instant(pf, &ev), -EINVAL);
	ev.nflows = 0;
	ev.terminating_flows = &zero;
	ev.nterminating = 1;
	assert_int_equal(blk_perfetto_begin(pf, &ev), -EINVAL);
	ev.nterminating = 0;
	blk_perfetto_stats(pf, &st);
	assert_memory_equal(&st, &st0, sizeof(st));

	/* nesting: BLK_PERFETTO_MAX_DEPTH slices open at once, not one more */
	for (int i = 1; i < BLK_PERFETTO_MAX_DEPTH; i++)
		assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
	assert_int_equal(blk_perfetto_begin(pf, &ev), -EINVAL);
	for (int i = 0; i < BLK_PERFETTO_MAX_DEPTH; i++)
		assert_int_equal(blk_perfetto_end_at(pf, 1, 300), 0);
	assert_int_equal(blk_perfetto_end_at(pf, 1, 300), -EINVAL);
	blk_perfetto_stats(pf, &st);
	assert_int_equal(st.packets, st0.packets + 2 * BLK_PERFETTO_MAX_DEPTH - 1);
	assert_int_equal(blk_perfetto_close(pf), 0);
	f = read_file(path, 0);
	assert_int_equal(f.n, st.bytes);
	free(f.p);
	unlink(path);
}

/* A small trace of many events, written by the same calls to @path. */
static void write_many(const char *path, struct blk_perfetto_stats *st)
{
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_event ev = {.track = 1, .name = "io"};
	struct blk_perfetto_arg a = BLK_PERFETTO_UINT("sector", 0);
	struct blk_perfetto *pf = blk_perfetto_open(path, NULL);
	uint64_t u;

	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	ev.args = &a;
	ev.nargs = 1;
	for (int i = 0; i < 20000; i++) {
		ev.ts = (uint64_t)i * 1000;
		a.v.u = (uint64_t)i * 8;
		assert_int_equal(blk_perfetto_begin(pf, &ev), 0);
		assert_int_equal(blk_perfetto_end_at(pf, 1, ev.ts + 500), 0);
	}
	blk_perfetto_stats(pf, st);
	assert_int_equal(blk_perfetto_close(pf), 0);
}

static void test_gzip(void **state)
{
	struct blk_perfetto_stats st1, st2;
	char p1[64], p2[64];
	unsigned char magic[2];
	FILE *fp;

	(void)state;
	write_many(temp_name(p1, ""), &st1);
	write_many(temp_name(p2, ".gz"), &st2);
	assert_memory_equal(&st1, &st2, sizeof(st1));
	fp = fopen(p2, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(magic, 1, 2, fp), 2);
	fclose(fp);
	assert_int_equal(magic[0], 0x1f);
	assert_int_equal(magic[1], 0x8b);
	assert_int_equal(same_files(p1, p2, 0), st1.bytes);
}

/* flows as varints (BLK_PERFETTO_VARINT_FLOWS) or fixed64: the fields each writes */
static void test_varint_flows(void **state)
{
	static const unsigned char old_start[] = {0xa0, 0x02, 0x05}, old_end[] = {0xd0, 0x02, 0x07};
	static const unsigned char start[] = {0xf9, 0x02, 0x05, 0, 0, 0, 0, 0, 0, 0};
	static const unsigned char end[] = {0x81, 0x03, 0x07, 0, 0, 0, 0, 0, 0, 0};
	struct blk_perfetto_track t = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	uint64_t flow = 5, term = 7, uuid;
	struct blk_perfetto_event ev = {.track = 1, .ts = 10, .name = "x", .flows = &flow,
					.nflows = 1, .terminating_flows = &term, .nterminating = 1};
	char path[64];

	(void)state;
	for (int varint = 0; varint < 2; varint++) {
		struct blk_perfetto_opts o = {.flags = varint ? BLK_PERFETTO_VARINT_FLOWS : 0};
		struct blk_perfetto *pf = blk_perfetto_open(temp_name(path, ""), &o);
		struct file f;

		assert_non_null(pf);
		assert_int_equal(blk_perfetto_track_new(pf, &t, &uuid), 0);
		assert_int_equal(blk_perfetto_instant(pf, &ev), 0);
		assert_int_equal(blk_perfetto_close(pf), 0);
		f = read_file(path, 0);
		assert_int_equal(memmem(f.p, f.n, old_start, sizeof(old_start)) != NULL, varint);
		assert_int_equal(memmem(f.p, f.n, old_end, sizeof(old_end)) != NULL, varint);
		assert_int_equal(memmem(f.p, f.n, start, sizeof(start)) != NULL, !varint);
		assert_int_equal(memmem(f.p, f.n, end, sizeof(end)) != NULL, !varint);
		free(f.p);
		unlink(path);
	}
}

static void test_write_error(void **state)
{
	struct blk_perfetto_track ts = {.type = BLK_PERFETTO_TRACK_SLICE, .name = "d"};
	struct blk_perfetto_event ev = {.track = 1, .name = "x"};
	struct blk_perfetto *pf;
	uint64_t u;
	int ret = 0, i;

	(void)state;
	if (access("/dev/full", W_OK)) {
		skip();
		return;
	}
	pf = blk_perfetto_open("/dev/full", NULL);
	assert_non_null(pf);
	assert_int_equal(blk_perfetto_track_new(pf, &ts, &u), 0);
	/* the output writes once it holds 128 KiB: the error comes back then, and sticks */
	for (i = 0; i < 100000 && !ret; i++) {
		ev.ts = (uint64_t)i;
		ret = blk_perfetto_instant(pf, &ev);
	}
	assert_int_equal(ret, -ENOSPC);
	assert_true(i > 1000);
	assert_int_equal(blk_perfetto_instant(pf, &ev), -ENOSPC);
	assert_int_equal(blk_perfetto_counter(pf, 1, 1, 1), -ENOSPC);
	assert_non_null(strstr(blk_output_error(blk_perfetto_output(pf)), "'/dev/full'"));
	assert_int_equal(blk_perfetto_close(pf), -ENOSPC);
	/* a directory cannot be opened */
	assert_null(blk_perfetto_open("/", NULL));
	assert_int_equal(errno, EISDIR);
	blk_perfetto_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_wall_clock),
		cmocka_unit_test(test_args_flows_counters),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_fixed_names),
		cmocka_unit_test(test_slices_iids),
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_varint_flows),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
