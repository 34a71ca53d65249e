// SPDX-License-Identifier: GPL-2.0
/*
 * blkparse 1.2.0's heap, replayed on the allocator model; see classicmem.h.
 *
 * What the classic tool allocates, as observed (an allocation log of /usr/bin/blkparse
 * from Debian's blktrace 1.2.0-5 on glibc 2.36, checked call by call against heapemu.c):
 *   - per -i: its device table grows by 480 bytes (realloc); per -f: 16 copies of the
 *     format; per -F: one copy of the spec's format;
 *   - setlocale(LC_NUMERIC, "en_US"): the C library reads the locale alias file through
 *     stdio (a 472-byte FILE and a 4 KiB buffer, both freed), builds its alias table and
 *     probes two locale paths;
 *   - the output stream (472-byte FILE, 4 KiB buffer), -d's stream and 128 KiB buffer;
 *   - per per-CPU file looked for: the per-CPU table grows to (cpu + 1) x 4512 bytes, the
 *     input name is copied and freed; per file opened: stdout's buffer (first time, for
 *     "Input file ... added"), the CPU bitmap (first time), a 40-byte stream;
 *   - per record read: a 48-byte record (from a cache of up to 1024 freed payload-less
 *     records), grown to 48 + payload, and a 48-byte sort node (from a cache of up to 1024);
 *     notify records are freed at once; the end of a file costs one record, freed again;
 *   - per record handled: held for its CPU until more than batch x files are held, then
 *     the oldest is freed (record and node, to their caches when there is room);
 *   - per new pid: a 40-byte process map entry; per new process with -s: 432 bytes
 *     (calloc); per tracked request: 72 bytes, freed at its completion;
 *   - reading a pipe instead: records and sort nodes per batch as above (notify records
 *     are never freed), devices and per-CPU tables grown as records name them, each
 *     record freed once printed, a 0-byte CPU map allocated and freed by the first
 *     record of a CPU whose sequence is not 1, 32 bytes per sequence gap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classicmem.h"
#include "heapemu.h"

#define DEV_SIZE 480u
#define CPU_SIZE 4512u
#define CPU_FD 8u
#define CPU_FDBLOCK 12u
#define CPU_FNAME 16u
#define CPU_FNAME_LEN 4096u
#define CPU_RB_LAST 4464u
#define CPU_RB_ENTRIES 4472u
#define CPU_LAST_SEQ 4480u
#define CACHE_MAX 1024u
#define PTR_TAG 0x0000555500000000ULL /* stands for a pointer value (randomised in reality) */

struct cm_ent {
	uint64_t bit, t;
};

struct cm_held {
	uint64_t time, order;
	uint32_t device, seq;
	struct cm_ent e;
};

struct cm_pci {
	/*
	 * The classic tool's per-CPU tree of held records, kept as a sorted ring (oldest
	 * first): a CPU's records come nearly in order, so an insert moves few entries.
	 */
	struct cm_held *heap;
	size_t head, n, cap; /* cap: a power of two */
};

struct cm_dev {
	uint32_t devno; /* pipe mode: the device number it was claimed for (0: unclaimed) */
	uint64_t cpus; /* the per-CPU table */
	int ncpus;
	uint64_t cpu_map;
	unsigned int cpu_map_max;
	unsigned int nfiles;
	char *name; /* as the classic tool holds it (after its fix-ups) */
	struct cm_pci *pci;
	int npci;
};

struct cm_stream {
	int dev, cpu;
	unsigned int fd; /* the descriptor its file got */
	struct cm_ent *q; /* records read, not yet handled */
	size_t head, n, cap;
};

struct blk_cmem {
	struct blk_heapemu *h;
	unsigned int batch;
	struct cm_dev *devs;
	int ndevs;
	uint64_t devices;
	struct cm_stream *s;
	int ns;
	uint64_t bitc[CACHE_MAX], tc[CACHE_MAX];
	unsigned int nbitc, ntc;
	int stdout_buf_done;
	size_t stdout_bufsize;
	unsigned char fd_used[1024]; /* the classic tool's open descriptors (lowest free is next) */
	int dir_from_name;
	uint64_t order;
	struct cm_ent cur; /* the record being handled */
	int have_pend;
	struct cm_held pend;
	int pend_dev, pend_cpu;
	int have_note;
	uint64_t note_bit;
	int broken;
	int pipe; /* the input is read as a pipe (-i -) */
	uint64_t read_seq, list_head; /* pipe mode: batches read, last sort node of the batch */
	struct cm_ent *ents; /* pipe mode: records read and not yet freed, by tag */
	uint64_t *free_tags;
	size_t nents, nfree;
	unsigned char img[64 + 65536]; /* a record as the classic tool reads it */
};

static struct blk_heapemu *H(struct blk_cmem *c)
{
	return c->h;
}

int blk_cmem_failed(const struct blk_cmem *c)
{
	return !c || c->broken || blk_heapemu_failed(c->h);
}

static void fail(struct blk_cmem *c)
{
	c->broken = 1;
}

static uint64_t xmalloc(struct blk_cmem *c, size_t n)
{
	return blk_heapemu_malloc(H(c), n);
}

static void put_zero(struct blk_cmem *c, uint64_t p, size_t n)
{
	static const unsigned char z[512];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		blk_heapemu_write(H(c), p, z, k);
		p += k;
		n -= k;
	}
}

static void put32(struct blk_cmem *c, uint64_t p, uint32_t v)
{
	blk_heapemu_write(H(c), p, &v, 4);
}

static void put_ptr(struct blk_cmem *c, uint64_t p, uint64_t target)
{
	blk_heapemu_put64(H(c), p, target ? PTR_TAG + target : 0);
}

static uint64_t strdup_at(struct blk_cmem *c, const char *s)
{
	size_t n = strlen(s) + 1;
	uint64_t p = xmalloc(c, n);

	blk_heapemu_write(H(c), p, s, n);
	return p;
}

/* ---- start-up ---- */

static void format_copies(struct blk_cmem *c, const char *fmt, int n)
{
	for (int i = 0; i < n; i++)
		strdup_at(c, fmt);
}

/*
 * resize_devices(): the device table grows by one zeroed entry. Return its slot (the
 * entry's heap address in *@at), or NULL.
 */
static struct cm_dev *new_device(struct blk_cmem *c, uint64_t *at)
{
	struct cm_dev *nd = realloc(c->devs, (size_t)(c->ndevs + 1) * sizeof(*nd));

	if (!nd) {
		fail(c);
		return NULL;
	}
	c->devs = nd;
	memset(&nd[c->ndevs], 0, sizeof(*nd));
	c->devices = blk_heapemu_realloc(H(c), c->devices, (size_t)(c->ndevs + 1) * DEV_SIZE);
	*at = c->devices + (uint64_t)c->ndevs * DEV_SIZE;
	put_zero(c, *at, DEV_SIZE);
	return &nd[c->ndevs++];
}

static void add_device(struct blk_cmem *c, const char *name)
{
	const char *b = strstr(name, ".blktrace.");
	struct cm_dev *d;
	uint64_t at;

	d = new_device(c, &at);
	if (!d)
		return;
	/* the classic tool cuts "NAME.blktrace.N" back to NAME before looking for files */
	d->name = strndup(name, b ? (size_t)(b - name) : strlen(name));
	if (!d->name)
		fail(c);
	put_ptr(c, at + 8, 1);
}

/* setlocale(LC_NUMERIC, "en_US") on a system without that locale (Debian's default). */
static void locale_setup(struct blk_cmem *c, const char *alias)
{
	uint64_t file = xmalloc(c, 472), buf = xmalloc(c, 4096), map, str, p;
	int fd = alias ? open(alias, O_RDONLY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		unsigned char b[4096];
		ssize_t n;

		/* stdio reads the file block by block into the same buffer (read here without
		 * stdio's FILE and buffer, which cost as much as the rest of the set-up) */
		while ((n = read(fd, b, sizeof(b))) > 0)
			blk_heapemu_write(H(c), buf, b, (size_t)n);
		close(fd);
	}
	map = xmalloc(c, 1600);
	str = xmalloc(c, 1024);
	str = blk_heapemu_realloc(H(c), str, 2048);
	(void)map;
	(void)str;
	blk_heapemu_release(H(c), buf);
	blk_heapemu_release(H(c), file);
	p = strdup_at(c, "/usr/lib/locale/en_US/LC_NUMERIC");
	blk_heapemu_release(H(c), p);
	strdup_at(c, "/usr/lib/locale/en_US/LC_NUMERIC");
	xmalloc(c, 56);
	strdup_at(c, "/usr/lib/locale/en/LC_NUMERIC");
	xmalloc(c, 48);
}

struct blk_cmem *blk_cmem_new(const struct blk_cmem_opts *o)
{
	/* all but the record image, written before each use (80 KiB not to clear) */
	struct blk_cmem *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	memset(c, 0, offsetof(struct blk_cmem, img));
	c->h = blk_heapemu_new();
	if (!c->h) {
		free(c);
		return NULL;
	}
	c->batch = o->batch;
	c->stdout_bufsize = o->stdout_bufsize;
	for (int i = 0; i < o->nargs; i++) {
		const struct blk_cmem_arg *a = &o->args[i];

		if (a->opt == 'i') {
			add_device(c, a->val);
		} else if (a->opt == 'p') {
			strdup_at(c, a->val); /* the pipe's name */
			c->pipe = 1;
		} else if (a->opt == 'f')
			format_copies(c, a->val, 16);
		else if (a->opt == 'F' && strlen(a->val) >= 2)
			format_copies(c, a->val + 2, 1);
	}
	locale_setup(c, o->locale_alias);
	/* the text output stream: a FILE and the 4 KiB buffer given to setvbuf() */
	xmalloc(c, 472);
	xmalloc(c, 4096);
	if (o->fds_open)
		memcpy(c->fd_used, o->fds_open,
		       o->nfds < sizeof(c->fd_used) ? o->nfds : sizeof(c->fd_used));
	else
		c->fd_used[0] = c->fd_used[1] = c->fd_used[2] = 1;
	if (o->dump) {
		if (o->dump == 1)
			xmalloc(c, 472);
		xmalloc(c, 128 * 1024);
		if (o->dump == 2)
			c->stdout_buf_done = 1; /* stdout got -d's buffer */
	}
	return c;
}

void blk_cmem_free(struct blk_cmem *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->ndevs; i++) {
		for (int k = 0; k < c->devs[i].npci; k++)
			free(c->devs[i].pci[k].heap);
		free(c->devs[i].pci);
		free(c->devs[i].name);
	}
	for (int i = 0; i < c->ns; i++)
		free(c->s[i].q);
	free(c->ents);
	free(c->free_tags);
	free(c->devs);
	free(c->s);
	blk_heapemu_free(c->h);
	free(c);
}

/* ---- input files ---- */

static void resize_cpus(struct blk_cmem *c, struct cm_dev *d, int cpu)
{
	uint64_t n = (uint64_t)cpu + 1;

	d->cpus = blk_heapemu_realloc(H(c), d->cpus, n * CPU_SIZE);
	if (!d->cpus) {
		fail(c);
		return;
	}
	put_zero(c, d->cpus + (uint64_t)d->ncpus * CPU_SIZE, (n - (uint64_t)d->ncpus) * CPU_SIZE);
	d->ncpus = (int)n;
	for (int i = 0; i < d->ncpus; i++) {
		uint64_t pci = d->cpus + (uint64_t)i * CPU_SIZE;
		uint32_t fd;

		blk_heapemu_read(H(c), pci + CPU_FD, &fd, 4);
		if (!fd) {
			put32(c, pci + CPU_FD, UINT32_MAX);
			put_zero(c, pci + CPU_RB_LAST, 16);
			blk_heapemu_put64(H(c), pci + CPU_LAST_SEQ, UINT64_MAX);
		}
	}
}

static void mark_online(struct blk_cmem *c, struct cm_dev *d, int cpu)
{
	if ((unsigned int)cpu >= d->cpu_map_max || !d->cpu_map) {
		unsigned int nmax = ((unsigned int)cpu + 64) & ~63u;
		uint64_t map = blk_heapemu_calloc(H(c), nmax / 8);

		if (d->cpu_map)
			blk_heapemu_release(H(c), d->cpu_map);
		d->cpu_map = map;
		d->cpu_map_max = nmax;
	}
}

static int new_stream(struct blk_cmem *c, int dev, int cpu, unsigned int fd)
{
	struct cm_stream *ns = realloc(c->s, (size_t)(c->ns + 1) * sizeof(*ns));
	uint64_t ms;

	if (!ns) {
		fail(c);
		return -1;
	}
	c->s = ns;
	memset(&ns[c->ns], 0, sizeof(*ns));
	ns[c->ns].dev = dev;
	ns[c->ns].cpu = cpu;
	ns[c->ns].fd = fd;
	ms = xmalloc(c, 40);
	put_zero(c, ms, 40);
	put32(c, ms + 32, (uint32_t)cpu);
	return c->ns++;
}

int blk_cmem_file(struct blk_cmem *c, int dev, int cpu, const char *path, enum blk_cmem_file st)
{
	struct cm_dev *d;
	uint64_t pci, p;
	unsigned int fd;
	char *slash;
	size_t plen;

	if (blk_cmem_failed(c))
		return -1;
	if (dev < 0 || dev >= c->ndevs || cpu < 0 || cpu > 4096) {
		fail(c);
		return -1;
	}
	d = &c->devs[dev];
	if (cpu >= d->ncpus)
		resize_cpus(c, d, cpu);
	if (blk_cmem_failed(c))
		return -1;
	pci = d->cpus + (uint64_t)cpu * CPU_SIZE;
	put32(c, pci, (uint32_t)cpu);
	put32(c, pci + CPU_FDBLOCK, UINT32_MAX);
	/* the name is copied to find its directory part; a "dir/name" becomes "name" */
	p = strdup_at(c, d->name);
	slash = strrchr(d->name, '/');
	if (slash && !(slash == d->name + 1 && d->name[0] == '.')) {
		p = strdup_at(c, d->name);
		memmove(d->name, slash + 1, strlen(slash + 1) + 1);
	}
	blk_heapemu_release(H(c), p);
	plen = strlen(path);
	if (plen >= CPU_FNAME_LEN - 1)
		plen = CPU_FNAME_LEN - 2;
	blk_heapemu_write(H(c), pci + CPU_FNAME, path, plen);
	put_zero(c, pci + CPU_FNAME + plen, 1);
	if (st != BLK_CMEM_OPENED)
		return -1;
	fd = 3;
	while (fd < sizeof(c->fd_used) - 1 && c->fd_used[fd])
		fd++;
	c->fd_used[fd] = 1;
	put32(c, pci + CPU_FD, fd);
	put32(c, pci + CPU_FDBLOCK, 1); /* its first (blocking) read sets this */
	if (!c->stdout_buf_done) {
		c->stdout_buf_done = 1;
		if (c->stdout_bufsize)
			xmalloc(c, c->stdout_bufsize);
	}
	mark_online(c, d, cpu);
	d->nfiles++;
	if (cpu >= d->npci) {
		struct cm_pci *np = realloc(d->pci, (size_t)(cpu + 1) * sizeof(*np));

		if (!np) {
			fail(c);
			return -1;
		}
		memset(np + d->npci, 0, (size_t)(cpu + 1 - d->npci) * sizeof(*np));
		d->pci = np;
		d->npci = cpu + 1;
	}
	if (blk_cmem_failed(c))
		return -1;
	{
		int sn = new_stream(c, dev, cpu, fd);

		if (sn < 0)
			fail(c); /* a file the model cannot follow: stop rather than drift */
		return sn;
	}
}

/* ---- records ---- */

static uint64_t bit_alloc(struct blk_cmem *c)
{
	if (c->nbitc)
		return c->bitc[--c->nbitc];
	return xmalloc(c, 48);
}

static void bit_free(struct blk_cmem *c, uint64_t bit)
{
	uint16_t pdu_len;

	blk_heapemu_read(H(c), bit + 46, &pdu_len, 2);
	if (c->nbitc < CACHE_MAX && !pdu_len) {
		/* the cache links through the record's time field */
		put_ptr(c, bit + 8, c->nbitc ? c->bitc[c->nbitc - 1] : 0);
		c->bitc[c->nbitc++] = bit;
	} else {
		blk_heapemu_release(H(c), bit);
	}
}

static uint64_t t_alloc(struct blk_cmem *c)
{
	if (c->ntc)
		return c->tc[--c->ntc];
	return xmalloc(c, 48);
}

static void t_free(struct blk_cmem *c, uint64_t t)
{
	if (c->ntc < CACHE_MAX) {
		put_ptr(c, t + 32, c->ntc ? c->tc[c->ntc - 1] : 0);
		c->tc[c->ntc++] = t;
	} else {
		blk_heapemu_release(H(c), t);
	}
}

static uint64_t read_record(struct blk_cmem *c, const struct blk_event *ev)
{
	uint64_t bit = bit_alloc(c);

	blk_event_encode(ev, c->img);
	blk_heapemu_write(H(c), bit, c->img, 48);
	if (ev->pdu_len) {
		bit = blk_heapemu_realloc(H(c), bit, 48 + (size_t)ev->pdu_len);
		blk_heapemu_write(H(c), bit + 48, ev->pdu, ev->pdu_len);
	}
	return bit;
}

static int push(struct blk_cmem *c, struct cm_stream *s, struct cm_ent e)
{
	if (s->head == s->n) {
		s->head = 0;
		s->n = 0;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		struct cm_ent *n;

		if (s->head) {
			memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof(*n));
			s->n -= s->head;
			s->head = 0;
		}
		if (s->n == s->cap) {
			n = realloc(s->q, nc * sizeof(*n));
			if (!n) {
				fail(c);
				return -1;
			}
			s->q = n;
			s->cap = nc;
		}
	}
	s->q[s->n++] = e;
	return 0;
}

void blk_cmem_record(struct blk_cmem *c, int stream, const struct blk_event *ev,
		     enum blk_cmem_rec kind)
{
	struct cm_stream *s;
	struct cm_ent e;

	if (blk_cmem_failed(c))
		return;
	if (ev->version != BLK_IO_TRACE_VERSION) {
		fail(c); /* the classic tool does not read these */
		return;
	}
	if (kind == BLK_CMEM_NOTE && (c->pipe || (stream >= 0 && stream < c->ns))) {
		c->have_note = 1;
		c->note_bit = read_record(c, ev);
		return;
	}
	if (stream < 0 || stream >= c->ns)
		return;
	s = &c->s[stream];
	e.bit = read_record(c, ev);
	if (kind == BLK_CMEM_BAD_CPU)
		return; /* dropped without being freed */
	e.t = t_alloc(c);
	put_zero(c, e.t, 48);
	put_ptr(c, e.t, e.bit);
	if (s->n > s->head)
		put_ptr(c, s->q[s->n - 1].t + 32, e.t);
	push(c, s, e);
}

void blk_cmem_note_done(struct blk_cmem *c)
{
	if (blk_cmem_failed(c) || !c->have_note)
		return;
	c->have_note = 0;
	if (!c->pipe) /* reading a pipe, the classic tool never frees them */
		bit_free(c, c->note_bit);
}

void blk_cmem_eof(struct blk_cmem *c, int stream)
{
	if (blk_cmem_failed(c) || stream < 0 || stream >= c->ns)
		return;
	/* a record is taken for the read that finds the end, and given back */
	bit_free(c, bit_alloc(c));
	/* then the file is closed: its descriptor is free again, its slot says -1 */
	{
		struct cm_dev *d = &c->devs[c->s[stream].dev];
		uint64_t pci = d->cpus + (uint64_t)c->s[stream].cpu * CPU_SIZE;

		if (c->s[stream].fd < sizeof(c->fd_used))
			c->fd_used[c->s[stream].fd] = 0;
		c->s[stream].fd = UINT32_MAX;
		put32(c, pci + CPU_FD, UINT32_MAX);
	}
}

/* ---- handling ---- */

static int held_less(const struct cm_held *a, const struct cm_held *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->device != b->device)
		return a->device < b->device;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->order < b->order;
}

static void held_push(struct blk_cmem *c, struct cm_pci *p, const struct cm_held *x)
{
	size_t i, mask;

	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 256;
		struct cm_held *n = malloc(nc * sizeof(*n));

		if (!n) {
			fail(c);
			return;
		}
		for (i = 0; i < p->n; i++)
			n[i] = p->heap[(p->head + i) & (p->cap - 1)];
		free(p->heap);
		p->heap = n;
		p->cap = nc;
		p->head = 0;
	}
	mask = p->cap - 1;
	/* from the newest end, move later records up one place */
	for (i = p->n; i && held_less(x, &p->heap[(p->head + i - 1) & mask]); i--)
		p->heap[(p->head + i) & mask] = p->heap[(p->head + i - 1) & mask];
	p->heap[(p->head + i) & mask] = *x;
	p->n++;
}

static struct cm_held held_pop(struct cm_pci *p)
{
	struct cm_held top = p->heap[p->head];

	p->head = (p->head + 1) & (p->cap - 1);
	p->n--;
	return top;
}

static void apply_retire(struct blk_cmem *c)
{
	struct cm_dev *d;
	struct cm_pci *p;

	if (!c->have_pend)
		return;
	c->have_pend = 0;
	d = &c->devs[c->pend_dev];
	if (c->pend_cpu >= d->npci)
		return;
	p = &d->pci[c->pend_cpu];
	/*
	 * Past batch x files held records, the oldest one goes: when the ring is at that limit,
	 * it is the new one or the ring's oldest, and the ring never holds more (one power of
	 * two fewer entries than pushing first and popping after).
	 */
	if (p->n >= (size_t)c->batch * d->nfiles) {
		struct cm_held o = c->pend;

		if (p->n && !held_less(&c->pend, &p->heap[p->head])) {
			o = held_pop(p);
			held_push(c, p, &c->pend);
		}
		bit_free(c, o.e.bit);
		t_free(c, o.e.t);
		return;
	}
	held_push(c, p, &c->pend);
}

void blk_cmem_handle(struct blk_cmem *c, int stream, uint64_t time)
{
	struct cm_stream *s;

	if (blk_cmem_failed(c) || stream < 0 || stream >= c->ns)
		return;
	apply_retire(c);
	s = &c->s[stream];
	if (s->head >= s->n) {
		fail(c); /* the model lost step with the merge */
		return;
	}
	c->cur = s->q[s->head++];
	blk_heapemu_put64(H(c), c->cur.bit + 8, time);
}

void blk_cmem_retire(struct blk_cmem *c, int stream, uint64_t time, uint32_t device,
		     uint32_t sequence)
{
	if (blk_cmem_failed(c) || stream < 0 || stream >= c->ns)
		return;
	c->have_pend = 1;
	c->pend_dev = c->s[stream].dev;
	c->pend_cpu = c->s[stream].cpu;
	c->pend.time = time;
	c->pend.device = device;
	c->pend.seq = sequence;
	c->pend.order = c->order++;
	c->pend.e = c->cur;
}

/* ---- pipe mode ---- */

/* get_dev_info(): the device's slot, claiming an unused one or growing the table. */
static struct cm_dev *pipe_dev(struct blk_cmem *c, uint32_t devno)
{
	struct cm_dev *d;
	uint64_t at;

	for (int i = 0; i < c->ndevs; i++) {
		if (!c->devs[i].devno) {
			c->devs[i].devno = devno;
			blk_heapemu_put64(H(c), c->devices + (uint64_t)i * DEV_SIZE, devno);
		}
		if (c->devs[i].devno == devno)
			return &c->devs[i];
	}
	d = new_device(c, &at);
	if (!d)
		return NULL;
	d->devno = devno;
	blk_heapemu_put64(H(c), at, devno);
	return d;
}

uint64_t blk_cmem_pipe_record(struct blk_cmem *c, const struct blk_event *ev)
{
	struct cm_ent e;
	uint64_t tag;

	if (blk_cmem_failed(c))
		return 0;
	if (ev->version != BLK_IO_TRACE_VERSION) {
		fail(c);
		return 0;
	}
	e.bit = read_record(c, ev);
	e.t = t_alloc(c);
	put_zero(c, e.t, 48);
	put_ptr(c, e.t, e.bit);
	put_ptr(c, e.t + 32, c->list_head); /* pushed on the batch's list */
	blk_heapemu_put64(H(c), e.t + 40, c->read_seq);
	c->list_head = e.t;
	pipe_dev(c, ev->device);
	if (c->nfree) {
		tag = c->free_tags[--c->nfree];
	} else {
		struct cm_ent *n = realloc(c->ents, (c->nents + 1) * sizeof(*n));
		uint64_t *f = realloc(c->free_tags, (c->nents + 1) * sizeof(*f));

		if (n)
			c->ents = n;
		if (f)
			c->free_tags = f;
		if (!n || !f) {
			fail(c);
			return 0;
		}
		tag = c->nents++;
	}
	c->ents[tag] = e;
	return tag + 1;
}

void blk_cmem_pipe_eof(struct blk_cmem *c)
{
	if (!blk_cmem_failed(c))
		bit_free(c, bit_alloc(c));
}

void blk_cmem_pipe_batch(struct blk_cmem *c)
{
	if (blk_cmem_failed(c))
		return;
	c->read_seq++;
	c->list_head = 0;
}

void blk_cmem_pipe_sorted(struct blk_cmem *c, uint64_t tag, uint32_t device, uint32_t cpu,
			  uint64_t time)
{
	struct cm_dev *d;

	if (blk_cmem_failed(c) || !tag || tag > c->nents)
		return;
	blk_heapemu_put64(H(c), c->ents[tag - 1].bit + 8, time);
	d = pipe_dev(c, device);
	if (!d || cpu > 4096) {
		fail(c);
		return;
	}
	if ((int)cpu >= d->ncpus)
		resize_cpus(c, d, (int)cpu);
	if (!blk_cmem_failed(c))
		put32(c, d->cpus + (uint64_t)cpu * CPU_SIZE, cpu);
}

void blk_cmem_pipe_release(struct blk_cmem *c, uint64_t tag)
{
	if (blk_cmem_failed(c) || !tag || tag > c->nents)
		return;
	bit_free(c, c->ents[tag - 1].bit);
	t_free(c, c->ents[tag - 1].t);
	c->free_tags[c->nfree++] = tag - 1;
}

void blk_cmem_pipe_cpu_check(struct blk_cmem *c, uint64_t mask)
{
	uint64_t p;

	if (blk_cmem_failed(c))
		return;
	/* a bitmap sized by a CPU count never set in pipe mode: malloc(0) */
	p = xmalloc(c, 0);
	blk_heapemu_put64(H(c), p, mask);
	blk_heapemu_release(H(c), p);
}

uint64_t blk_cmem_skip_new(struct blk_cmem *c, uint64_t start, uint64_t end)
{
	uint64_t p;

	if (blk_cmem_failed(c))
		return 0;
	p = xmalloc(c, 32);
	blk_heapemu_put64(H(c), p, start);
	blk_heapemu_put64(H(c), p + 8, end);
	put_zero(c, p + 16, 16);
	return p;
}

void blk_cmem_skip_free(struct blk_cmem *c, uint64_t addr)
{
	if (blk_cmem_failed(c) || !addr)
		return;
	put_zero(c, addr + 16, 16);
	blk_heapemu_release(H(c), addr);
}

/* ---- processes and tracking entries ---- */

void blk_cmem_ppm_new(struct blk_cmem *c, uint32_t pid, const char *comm)
{
	char name[16];
	uint64_t p;

	if (blk_cmem_failed(c))
		return;
	p = xmalloc(c, 40);
	put_zero(c, p, 40);
	put32(c, p, pid);
	memset(name, 0, sizeof(name));
	strncpy(name, comm, sizeof(name) - 1);
	blk_heapemu_write(H(c), p + 4, name, sizeof(name));
}

void blk_cmem_ppi_new(struct blk_cmem *c)
{
	if (!blk_cmem_failed(c))
		blk_heapemu_calloc(H(c), 432);
}

void blk_cmem_track_new(struct blk_cmem *c, struct blk_cmem_track *t)
{
	memset(t, 0, sizeof(*t));
	if (blk_cmem_failed(c))
		return;
	t->addr = xmalloc(c, 72);
	if (blk_cmem_failed(c))
		return;
	t->allocation_time = blk_heapemu_get64(H(c), t->addr + 40);
	t->queue_time = blk_heapemu_get64(H(c), t->addr + 48);
	t->dispatch_time = blk_heapemu_get64(H(c), t->addr + 56);
}

void blk_cmem_track_free(struct blk_cmem *c, uint64_t addr, uint64_t sector,
			 const uint64_t times[4])
{
	if (blk_cmem_failed(c) || !addr)
		return;
	put_ptr(c, addr, addr);
	put_ptr(c, addr + 8, 0);
	put_ptr(c, addr + 16, 0);
	put_ptr(c, addr + 24, 1);
	blk_heapemu_put64(H(c), addr + 32, sector);
	for (int i = 0; i < 4; i++)
		blk_heapemu_put64(H(c), addr + 40 + 8 * (uint64_t)i, times[i]);
	blk_heapemu_release(H(c), addr);
}
