// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kernel/tfsconv.c on pages captured from this project's 6.18 kernel: one run
 * of the blk tracer with a small workload on both CPUs (tests/data/tfs-6.18.*), its ring read
 * twice: first through per_cpu/cpuN/trace with the "bin" option (what the trace_pipe read
 * path converted), then as raw pages through per_cpu/cpuN/trace_pipe_raw. The records the
 * converter makes of the pages must be, byte for byte, what the bin path made of the same
 * events: sequence numbers, pids, CPU, time, pdu and process notes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libgen.h>

#include "blk/cgroup.h"
#include "blk/kernel.h"
#include "../../kernel/ftrace.h"
#include "../../kernel/tfsconv.h"
#include "helpers.h"

#define PAGE 4096
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)

static char data_dir[4096];

struct blob {
	unsigned char *p;
	size_t n;
};

static struct blob load(const char *name)
{
	char path[4200];
	struct blob b = {NULL, 0};
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b.p = calloc(1, (size_t)n + 1);
	assert_non_null(b.p);
	assert_int_equal(fread(b.p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b.n = (size_t)n;
	return b;
}

static const char *fake_comm(void *ctx, uint32_t pid, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, "task-%u", pid);
	return buf;
}

/*
 * What the trace_pipe read path made of the bin output @b of CPU @cpu for the device
 * @devno: each record's time from the bin header's time stamp, a sequence number per
 * device, a process note before a pid's first event. Return the records; @events counted.
 */
static struct blob bin_records(struct blob b, uint32_t cpu, uint32_t devno, unsigned long *events)
{
	const char *hdr = "# tracer: blk\n#\n";
	struct tbuf out = TBUF_INIT;
	uint32_t seen[256], nseen = 0, seq = 0;
	size_t off = strlen(hdr);
	struct blob r;

	assert_memory_equal(b.p, hdr, off);
	*events = 0;
	while (off < b.n) {
		struct blk_tfs_ent e;
		struct blk_io_trace t;
		struct blk_event ev;
		int known = 0;

		assert_true(off + sizeof(e) + sizeof(t) <= b.n);
		memcpy(&e, b.p + off, sizeof(e));
		memcpy(&t, b.p + off + sizeof(e), sizeof(t));
		assert_int_equal(t.magic, BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION);
		/* the bin path's time is the ring's time stamp; the record's CPU is the ring's */
		assert_true(t.time == e.ts);
		assert_int_equal(e.cpu, cpu);
		assert_int_equal(t.cpu, cpu);
		memset(&ev, 0, sizeof(ev));
		ev.time = t.time;
		ev.sector = t.sector;
		ev.bytes = t.bytes;
		ev.action = t.action;
		ev.pid = t.pid;
		ev.device = t.device;
		ev.cpu = cpu;
		ev.error = t.error;
		ev.pdu_len = t.pdu_len;
		ev.pdu = b.p + off + sizeof(e) + sizeof(t);
		ev.version = BLK_IO_TRACE_VERSION;
		off += sizeof(e) + sizeof(t) + t.pdu_len;
		if (t.device != devno)
			continue;
		if (!blk_event_is_notify(&ev)) {
			for (uint32_t i = 0; i < nseen; i++)
				known |= seen[i] == ev.pid;
			if (!known) {
				struct blk_event n = ev;
				unsigned char pdu[16] = {0};
				char comm[64];

				assert_true(nseen < 256);
				seen[nseen++] = ev.pid;
				fake_comm(NULL, ev.pid, comm, sizeof(comm));
				memcpy(pdu, comm, strnlen(comm, 15));
				n.action = BLK_TN_ACTION(BLK_TN_PROCESS);
				n.sector = 0;
				n.bytes = 0;
				n.error = 0;
				n.pdu = pdu;
				n.pdu_len = sizeof(pdu);
				tbuf_reserve(&out, 64 + 16);
				out.len += blk_event_encode(&n, out.p + out.len);
			}
			ev.sequence = ++seq;
			(*events)++;
		}
		tbuf_reserve(&out, 64 + ev.pdu_len);
		out.len += blk_event_encode(&ev, out.p + out.len);
	}
	r.p = out.p;
	r.n = out.len;
	return r;
}

/* Convert the pages @raw of CPU @cpu; return the staged records of device 0. */
static struct blob raw_records(struct blob raw, uint32_t cpu, uint32_t devno, unsigned long *events,
			       int *entries, struct blk_tfsconv **keep)
{
	struct blk_tfsconv *c;
	struct blob hp = load("tfs-6.18.header_page"), r;
	const unsigned char *p;
	uint64_t last = 0;
	size_t n;

	c = blk_tfsconv_new((const char *)hp.p, &devno, 1, cpu, fake_comm, NULL);
	assert_non_null(c);
	assert_int_equal(blk_tfsconv_page_size(c), PAGE);
	assert_int_equal(raw.n % PAGE, 0);
	*entries = 0;
	for (size_t off = 0; off < raw.n; off += PAGE) {
		int ret = blk_tfsconv_page(c, raw.p + off, PAGE, &last);

		assert_true(ret >= 0);
		*entries += ret;
	}
	p = blk_tfsconv_staged(c, 0, &n, events);
	r.p = malloc(n + 1);
	assert_non_null(r.p);
	memcpy(r.p, p, n);
	r.n = n;
	free(hp.p);
	if (keep)
		*keep = c;
	else
		blk_tfsconv_free(c);
	return r;
}

static void same_records_as_bin(void **state)
{
	(void)state;
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		char name[64];
		struct blob raw, bin, want, got;
		unsigned long we, ge;
		int entries;

		snprintf(name, sizeof(name), "tfs-6.18.cpu%u.raw", cpu);
		raw = load(name);
		snprintf(name, sizeof(name), "tfs-6.18.cpu%u.bin", cpu);
		bin = load(name);
		want = bin_records(bin, cpu, 0x700000, &we);
		got = raw_records(raw, cpu, 0x700000, &ge, &entries, NULL);
		assert_true(we > 10);
		assert_int_equal(ge, we);
		assert_int_equal((unsigned long)entries, we);
		assert_int_equal(got.n, want.n);
		assert_memory_equal(got.p, want.p, want.n);
		free(raw.p);
		free(bin.p);
		free(want.p);
		free(got.p);
	}
}

/* The offset of the first entry's blk_io_trace in a page of the capture (a small event). */
#define FIRST_ENTRY 20

static void notes_other_devices_and_foreign_entries(void **state)
{
	struct blob raw = load("tfs-6.18.cpu1.raw"), bin = load("tfs-6.18.cpu1.bin");
	struct blob want, got;
	struct blk_tfsconv *c;
	unsigned long we, ge;
	uint32_t action = BLK_TN_ACTION(BLK_TN_MESSAGE), dev = 0x800001;
	int entries;

	(void)state;
	/* the first entry made a message note, in both reads: no sequence, not an event */
	assert_int_equal(raw.p[16] & 31, 12); /* a 48-byte entry */
	memcpy(raw.p + FIRST_ENTRY + 28, &action, 4);
	memcpy(bin.p + 16 + 16 + 28, &action, 4);
	want = bin_records(bin, 1, 0x700000, &we);
	got = raw_records(raw, 1, 0x700000, &ge, &entries, NULL);
	assert_int_equal(ge, we);
	assert_int_equal(got.n, want.n);
	assert_memory_equal(got.p, want.p, want.n);
	free(want.p);
	free(got.p);

	/* an entry of another device: counted as a blk entry, no record */
	memcpy(raw.p + FIRST_ENTRY + 36, &dev, 4);
	got = raw_records(raw, 1, 0x700000, &ge, &entries, &c);
	assert_int_equal(ge, we);
	assert_int_equal(got.n, want.n - sizeof(struct blk_io_trace)); /* the note */
	assert_int_equal(blk_tfsconv_skipped(c), 0);
	blk_tfsconv_free(c);
	free(got.p);

	/* an entry recorded on another CPU is not the blk tracer's: skipped, its bytes counted */
	dev = 7;
	memcpy(raw.p + FIRST_ENTRY + 40, &dev, 4);
	got = raw_records(raw, 1, 0x700000, &ge, &entries, &c);
	assert_int_equal(blk_tfsconv_skipped(c), 48);
	assert_int_equal(blk_tfsconv_missed(c), 0);
	blk_tfsconv_free(c);
	free(got.p);
	free(raw.p);
	free(bin.p);
}

static void lost_events_in_page_headers(void **state)
{
	struct blob raw = load("tfs-6.18.cpu0.raw"), hp = load("tfs-6.18.header_page");
	uint32_t devno = 0x700000;
	struct blk_tfsconv *c;
	uint64_t commit, last = 0, count = 1234;
	int n, m;

	(void)state;
	c = blk_tfsconv_new((const char *)hp.p, &devno, 1, 0, fake_comm, NULL);
	assert_non_null(c);
	n = blk_tfsconv_page(c, raw.p, PAGE, &last);
	assert_true(n > 0);
	assert_int_equal(blk_tfsconv_missed(c), 0);
	/* missed events, their number stored after the data */
	memcpy(&commit, raw.p + 8, 8);
	assert_true(16 + commit + 8 <= PAGE);
	memcpy(raw.p + 16 + commit, &count, 8);
	commit |= RB_MISSED_EVENTS | RB_MISSED_STORED;
	memcpy(raw.p + 8, &commit, 8);
	m = blk_tfsconv_page(c, raw.p, PAGE, &last);
	assert_int_equal(m, n);
	assert_int_equal(blk_tfsconv_missed(c), 1234);
	/* missed events without their number: at least one */
	commit &= ~RB_MISSED_STORED;
	memcpy(raw.p + 8, &commit, 8);
	assert_int_equal(blk_tfsconv_page(c, raw.p, PAGE, &last), n);
	assert_int_equal(blk_tfsconv_missed(c), 1235);
	/*
	 * as a 64-bit 6.18 kernel writes the flags (added as an int: bits 32-63 set too), seen
	 * on a live trace with a 16 KiB ring: the page is still read
	 */
	commit |= 0xffffffffc0000000ull;
	memcpy(raw.p + 8, &commit, 8);
	assert_int_equal(blk_tfsconv_page(c, raw.p, PAGE, &last), n);
	assert_int_equal(blk_tfsconv_missed(c), 2469);
	blk_tfsconv_free(c);
	/* a header page that is not one */
	errno = 0;
	assert_null(blk_tfsconv_new("nothing here", &devno, 1, 0, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	free(raw.p);
	free(hp.p);
}


/*
 * Pages the blk tracer wrote with its blk_cgroup option on (tests/data/tfs-6.18-cg.*: loop0,
 * 4 direct reads in a cgroup of id 297, 3 in one of id 311, 2 in the root, id 1; on CPU 0,
 * completions on either CPU): every tagged entry becomes the untagged record (its payload
 * without the id), and the run and path notes before them give each event, through
 * lib/cgmap.c, the id the kernel tagged it with; plugs and unplugs none.
 */
struct tagged {
	uint64_t id[512]; /* by sequence number: the entry's tag, 0 untagged */
	uint16_t pdu_len[512]; /* the entry's payload without the id */
	uint32_t n; /* events */
};

static int expect_entry(void *arg, const struct blk_ftrace_rec *r)
{
	struct tagged *t = arg;
	struct blk_io_trace e;

	if (r->len < sizeof(e))
		return 0;
	memcpy(&e, r->data, sizeof(e));
	if (e.device != 0x700000 || (e.action & BLK_TC_ACT(BLK_TC_NOTIFY)))
		return 0;
	assert_true(t->n + 1 < 512);
	t->n++;
	t->id[t->n] = 0;
	t->pdu_len[t->n] = e.pdu_len;
	if (e.action & BLK_TA_CGROUP) {
		assert_true(e.pdu_len >= 8);
		memcpy(&t->id[t->n], r->data + sizeof(e), 8);
		t->pdu_len[t->n] = (uint16_t)(e.pdu_len - 8);
	}
	return 0;
}

static const char *fake_cgpath(void *ctx, uint64_t id, char *buf, size_t len)
{
	(*(int *)ctx)++;
	if (id == 311)
		return NULL; /* not found: named by number */
	snprintf(buf, len, id == 1 ? "/" : "/cg-%llu", (unsigned long long)id);
	return buf;
}

static void cgroup_tags_become_notes(void **state)
{
	struct blob hp = load("tfs-6.18.header_page");
	uint32_t devno = 0x700000;
	int tagged_cpus = 0;

	(void)state;
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		char name[64];
		struct blob raw;
		struct tagged want = {{0}, {0}, 0};
		struct blk_ftrace_pages *pg = blk_ftrace_pages_new((const char *)hp.p);
		struct blk_tfsconv *c = blk_tfsconv_new((const char *)hp.p, &devno, 1, cpu,
							 fake_comm, NULL);
		struct blk_cgmap *m = blk_cgmap_new();
		const unsigned char *p;
		uint64_t missed, last = 0;
		unsigned long events;
		uint32_t got = 0, named = 0;
		size_t n, off = 0;
		int asked = 0, paths = 0;

		assert_non_null(pg);
		assert_non_null(c);
		assert_non_null(m);
		snprintf(name, sizeof(name), "tfs-6.18-cg.cpu%u.raw", cpu);
		raw = load(name);
		assert_true(blk_ftrace_page_walk(pg, raw.p, PAGE, expect_entry, &want, &missed) >=
			    0);
		blk_tfsconv_set_cgpath(c, fake_cgpath, &asked);
		assert_true(blk_tfsconv_page(c, raw.p, PAGE, &last) >= 0);
		p = blk_tfsconv_staged(c, 0, &n, &events);
		assert_int_equal(events, want.n);
		while (off < n) {
			struct blk_io_trace t;
			struct blk_event ev;
			uint64_t id;

			assert_true(off + sizeof(t) <= n);
			memcpy(&t, p + off, sizeof(t));
			memset(&ev, 0, sizeof(ev));
			ev.sequence = t.sequence;
			ev.action = t.action;
			ev.device = t.device;
			ev.cpu = t.cpu;
			ev.pdu = p + off + sizeof(t);
			ev.pdu_len = t.pdu_len;
			ev.version = BLK_IO_TRACE_VERSION;
			off += sizeof(t) + t.pdu_len;
			/* no record is tagged any more */
			assert_int_equal(t.action & BLK_TA_CGROUP, 0);
			if (blk_event_is_notify(&ev)) {
				paths += blk_event_is_cgpath(&ev);
				assert_true(blk_cgmap_note(m, &ev) >= 0);
				continue;
			}
			got++;
			assert_int_equal(t.sequence, got);
			assert_int_equal(t.pdu_len, want.pdu_len[got]);
			blk_cgmap_lookup(m, &ev, &id);
			assert_int_equal(id, want.id[got]);
			named += id != 0;
			if (id == 297)
				assert_string_equal(blk_cgmap_path(m, id), "/cg-297");
			if (id == 1)
				assert_string_equal(blk_cgmap_path(m, id), "/");
			if (id == 311)
				assert_null(blk_cgmap_path(m, id));
		}
		assert_int_equal(off, n);
		assert_int_equal(got, want.n);
		if (named) {
			tagged_cpus++;
			/* asked once per id, until found (311: asked again at each run) */
			assert_true(asked >= paths);
		}
		blk_cgmap_free(m);
		blk_tfsconv_free(c);
		blk_ftrace_pages_free(pg);
		free(raw.p);
	}
	assert_true(tagged_cpus >= 1);
	free(hp.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_records_as_bin),
		cmocka_unit_test(notes_other_devices_and_foreign_entries),
		cmocka_unit_test(lost_events_in_page_headers),
		cmocka_unit_test(cgroup_tags_become_notes),
	};
	char self[4096];

	(void)argc;
	/* tests/unit/test-tfsconv -> tests/data */
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(data_dir, sizeof(data_dir), "%s/../data", dirname(self));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
