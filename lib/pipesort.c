// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/pipesort.h"

#define PS_INLINE_PDU 64

struct pnode {
	struct blk_event ev;
	uint64_t tag; /* the observer's tag (blk_pipesort_hooks.record_read) */
	uint64_t batch;
	uint64_t rebase; /* subtracted from the record's time */
	uint32_t idx;
	unsigned char *big; /* payload larger than the inline space */
	struct pnode *next_free;
	unsigned char inl[PS_INLINE_PDU];
};

struct pskip {
	uint64_t start, end;
	uint64_t tag; /* the observer's tag (blk_pipesort_hooks.gap_recorded) */
	struct pskip *prev, *next;
};

struct pcpu {
	uint64_t last_seq; /* (unsigned long)-1 until the first record */
	uint32_t smallest_seq;
	uint64_t pending; /* records of this CPU in the window */
	int seen;
	struct pskip *head, *tail;
};

#define PS_CPU_CHUNK 64

struct pdev {
	uint32_t dev;
	struct pcpu **cpus; /* sparse: chunks of PS_CPU_CHUNK CPUs */
	unsigned int nchunks;
};

struct blk_pipesort {
	struct blk_reader *r;
	struct blk_pipesort_opts o;
	struct pnode **heap;
	size_t nheap, heap_cap;
	struct pnode *free_nodes;
	struct pnode *out; /* node last returned, released on the next call */
	/*
	 * The batch just read; when it came in order, its records are taken from
	 * batchv[run_head, run_len) in turn, each when it comes before the heap's first,
	 * instead of going through the heap (the order is the same: node_before() is total).
	 */
	struct pnode **batchv;
	size_t run_head, run_len;
	uint64_t batchno;
	uint64_t genesis;
	int eof, force;
	int eof_mid; /* the input ended inside a batch: the classic tool reads once more */
	int failed;
	uint64_t forced;
	struct pdev *devs;
	unsigned int ndevs;
	char *err;
};

/* Call hook @name of @ps's observer, if there is one. */
#define HOOK(ps, name, ...)                                                     \
	do {                                                                    \
		if ((ps)->o.hooks && (ps)->o.hooks->name)                       \
			(ps)->o.hooks->name((ps)->o.hooks->ctx, ##__VA_ARGS__); \
	} while (0)
#define HOOK_TAG(ps, name, ...)                                         \
	((ps)->o.hooks && (ps)->o.hooks->name                           \
		 ? (ps)->o.hooks->name((ps)->o.hooks->ctx, __VA_ARGS__) \
		 : 0)

struct blk_pipesort *blk_pipesort_new(struct blk_reader *r, const struct blk_pipesort_opts *o)
{
	struct blk_pipesort *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->r = r;
	ps->o = *o;
	if (!ps->o.batch)
		ps->o.batch = 512;
	if (!ps->o.stop_end)
		ps->o.stop_end = UINT64_MAX;
	if (!ps->o.max_pending) {
		uint64_t w = (uint64_t)ps->o.batch * 64;

		ps->o.max_pending =
			(unsigned int)(w < 65536 ? 65536 : (w > 1u << 24 ? 1u << 24 : w));
	}
	blk_reader_set_wait(r, ps->o.wait_ms);
	ps->batchv = calloc(ps->o.batch, sizeof(*ps->batchv));
	if (!ps->batchv) {
		free(ps);
		return NULL;
	}
	return ps;
}

static struct pcpu *get_cpu(struct blk_pipesort *ps, uint32_t dev, uint32_t cpu)
{
	struct pdev *d = NULL;

	for (unsigned int i = 0; i < ps->ndevs; i++) {
		if (ps->devs[i].dev == dev) {
			d = &ps->devs[i];
			break;
		}
	}
	if (!d) {
		struct pdev *nd = realloc(ps->devs, (ps->ndevs + 1) * sizeof(*nd));

		if (!nd)
			return NULL;
		ps->devs = nd;
		d = &ps->devs[ps->ndevs++];
		memset(d, 0, sizeof(*d));
		d->dev = dev;
	}
	if (cpu >= BLK_MAX_CPUS)
		return NULL;
	if (cpu / PS_CPU_CHUNK >= d->nchunks) {
		unsigned int n = cpu / PS_CPU_CHUNK + 1;
		struct pcpu **nc = realloc(d->cpus, n * sizeof(*nc));

		if (!nc)
			return NULL;
		for (unsigned int i = d->nchunks; i < n; i++)
			nc[i] = NULL;
		d->cpus = nc;
		d->nchunks = n;
	}
	if (!d->cpus[cpu / PS_CPU_CHUNK]) {
		struct pcpu *c = calloc(PS_CPU_CHUNK, sizeof(*c));

		if (!c)
			return NULL;
		for (unsigned int i = 0; i < PS_CPU_CHUNK; i++) {
			c[i].last_seq = (uint64_t)-1;
			c[i].smallest_seq = UINT32_MAX;
		}
		d->cpus[cpu / PS_CPU_CHUNK] = c;
	}
	return &d->cpus[cpu / PS_CPU_CHUNK][cpu % PS_CPU_CHUNK];
}

/* Each CPU slot @pc (number @i) of @d that exists; chunks never used are skipped whole. */
#define for_each_pcpu(d, i, pc)                                                      \
	for (unsigned int i = 0; i < (d)->nchunks * PS_CPU_CHUNK;                    \
	     i = (d)->cpus[i / PS_CPU_CHUNK] ? i + 1 : (i | (PS_CPU_CHUNK - 1)) + 1) \
		if (((pc) = (d)->cpus[i / PS_CPU_CHUNK]                              \
				    ? &(d)->cpus[i / PS_CPU_CHUNK][i % PS_CPU_CHUNK] \
				    : NULL))

static const struct pdev *find_dev(const struct blk_pipesort *ps, uint32_t dev)
{
	for (unsigned int i = 0; i < ps->ndevs; i++)
		if (ps->devs[i].dev == dev)
			return &ps->devs[i];
	return NULL;
}

static int node_before(const struct pnode *a, const struct pnode *b)
{
	if (a->ev.time != b->ev.time)
		return a->ev.time < b->ev.time;
	if (a->ev.device != b->ev.device)
		return a->ev.device < b->ev.device;
	if (a->ev.sequence != b->ev.sequence)
		return a->ev.sequence < b->ev.sequence;
	if (a->batch != b->batch)
		return a->batch < b->batch;
	/* within a batch the classic tool inserts the last-read record first */
	return a->idx > b->idx;
}

static int heap_push(struct blk_pipesort *ps, struct pnode *n)
{
	size_t i;

	if (ps->nheap == ps->heap_cap) {
		size_t nc = ps->heap_cap ? ps->heap_cap * 2 : 1024;
		struct pnode **nh = realloc(ps->heap, nc * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		ps->heap = nh;
		ps->heap_cap = nc;
	}
	i = ps->nheap++;
	while (i) {
		size_t p = (i - 1) / 2;

		if (!node_before(n, ps->heap[p]))
			break;
		ps->heap[i] = ps->heap[p];
		i = p;
	}
	ps->heap[i] = n;
	return 0;
}

static struct pnode *heap_pop(struct blk_pipesort *ps)
{
	struct pnode *top = ps->heap[0], *last = ps->heap[--ps->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= ps->nheap)
			break;
		if (c + 1 < ps->nheap && node_before(ps->heap[c + 1], ps->heap[c]))
			c++;
		if (!node_before(ps->heap[c], last))
			break;
		ps->heap[i] = ps->heap[c];
		i = c;
	}
	if (ps->nheap)
		ps->heap[i] = last;
	return top;
}

/* Records in the window: the heap's and the run's. */
static size_t npending(const struct blk_pipesort *ps)
{
	return ps->nheap + (ps->run_len - ps->run_head);
}

/* The first record in the window (NULL if none); *@from_run says where it is. */
static struct pnode *first(const struct blk_pipesort *ps, int *from_run)
{
	struct pnode *r = ps->run_head < ps->run_len ? ps->batchv[ps->run_head] : NULL;
	struct pnode *h = ps->nheap ? ps->heap[0] : NULL;

	*from_run = r && (!h || node_before(r, h));
	return *from_run ? r : h;
}

static void node_free(struct blk_pipesort *ps, struct pnode *n)
{
	free(n->big);
	n->big = NULL;
	n->next_free = ps->free_nodes;
	ps->free_nodes = n;
}

static struct pnode *node_alloc(struct blk_pipesort *ps, const struct blk_event *ev)
{
	struct pnode *n = ps->free_nodes;

	if (n)
		ps->free_nodes = n->next_free;
	else if (!(n = malloc(sizeof(*n))))
		return NULL;
	n->big = NULL;
	n->ev = *ev;
	if (ev->pdu_len > PS_INLINE_PDU) {
		n->big = malloc(ev->pdu_len);
		if (!n->big) {
			node_free(ps, n);
			return NULL;
		}
		memcpy(n->big, ev->pdu, ev->pdu_len);
		n->ev.pdu = n->big;
	} else {
		memcpy(n->inl, ev->pdu, ev->pdu_len);
		n->ev.pdu = n->inl;
	}
	return n;
}

/*
 * Sort @n nodes that are nearly in order (a merged trace, where only records of the same
 * time from different CPUs may be swapped) by insertion, giving up after a few moves per
 * record: a batch far from order goes through the heap instead. Return 1 if sorted.
 */
static int sort_run(struct pnode **a, size_t n)
{
	size_t budget = 4 * n;

	for (size_t i = 1; i < n; i++) {
		struct pnode *x = a[i];
		size_t j = i;

		while (j > 0 && node_before(x, a[j - 1])) {
			if (!budget--) {
				a[j] = x; /* still every node once, for the heap */
				return 0;
			}
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
	return 1;
}

/* Read one batch. Return records added, 0 at end of input, or -errno. */
static int read_batch(struct blk_pipesort *ps)
{
	unsigned int n = 0, w;
	struct blk_event ev;
	uint64_t youngest = 0;
	int ret;

	/* what is left of the last run goes into the heap (in order: each push is one step) */
	for (; ps->run_head < ps->run_len; ps->run_head++) {
		if (heap_push(ps, ps->batchv[ps->run_head])) {
			while (ps->run_head < ps->run_len)
				node_free(ps, ps->batchv[ps->run_head++]);
			return -ENOMEM;
		}
	}
	ps->run_head = ps->run_len = 0;
	while (n < ps->o.batch) {
		struct pnode *node;

		/* the first record of a batch may wait; later ones are taken only if ready */
		if (n && !blk_reader_ready(ps->r))
			break;
		ret = blk_reader_next(ps->r, &ev);
		if (ret <= 0) {
			if (ret < 0) {
				ps->failed = 1;
				ps->err = strdup(blk_reader_error(ps->r));
			}
			ps->eof = 1;
			ps->eof_mid = n > 0;
			HOOK(ps, input_end);
			break;
		}
		if (ps->o.fn) {
			ret = ps->o.fn(ps->o.arg, BLK_NOTE_RECORD, NULL, (int)ev.cpu, &ev);
			if (ret < 0)
				goto fail;
			if (ret > 0)
				continue;
		}
		node = node_alloc(ps, &ev);
		if (!node) {
			ret = -ENOMEM;
			goto fail;
		}
		node->tag = HOOK_TAG(ps, record_read, &ev);
		node->batch = ps->batchno;
		node->idx = n;
		ps->batchv[n++] = node;
	}
	if (!n)
		return 0;
	ps->batchno++;
	HOOK(ps, batch_read);
	if (!ps->genesis) {
		/* as the classic tool: recomputed while the genesis found is 0 */
		uint64_t g = UINT64_MAX;

		for (unsigned int i = 0; i < n; i++)
			if (ps->batchv[i]->ev.time < g)
				g = ps->batchv[i]->ev.time;
		ps->genesis = g;
	}
	/* the records kept are gathered, in read order, at batchv[w, n) */
	w = n;
	for (unsigned int k = n; k-- > 0;) {
		struct pnode *node = ps->batchv[k];
		struct pcpu *pc;

		node->ev.time -= ps->genesis;
		node->rebase = ps->genesis;
		if (node->ev.time < youngest || !youngest)
			youngest = node->ev.time;
		HOOK(ps, record_sorted, node->tag, node->ev.device, node->ev.cpu, node->ev.time);
		pc = get_cpu(ps, node->ev.device, node->ev.cpu);
		if (!pc) {
			node_free(ps, node);
			continue;
		}
		pc->seen = 1;
		if (node->ev.sequence < pc->smallest_seq)
			pc->smallest_seq = node->ev.sequence;
		if (node->ev.time >= ps->o.stop_end || node->ev.time < ps->o.stop_start) {
			HOOK(ps, record_released, node->tag);
			node_free(ps, node);
			continue;
		}
		ps->batchv[--w] = node; /* w > k: the records not yet looked at stay */
		pc->pending++;
	}
	if (youngest > ps->o.stop_end)
		ps->eof = 1;
	if (sort_run(ps->batchv + w, n - w)) {
		ps->run_head = w;
		ps->run_len = n;
		return (int)n;
	}
	for (unsigned int i = w; i < n; i++) {
		if (heap_push(ps, ps->batchv[i])) {
			while (i < n)
				node_free(ps, ps->batchv[i++]);
			return -ENOMEM;
		}
	}
	return (int)n;
fail:
	while (n-- > 0)
		node_free(ps, ps->batchv[n]);
	return ret;
}

static void insert_skip(struct blk_pipesort *ps, struct pcpu *pc, uint64_t start, uint64_t end)
{
	struct pskip *s;

	for (s = pc->tail; s; s = s->prev) {
		if (end + 1 == s->start) {
			s->start = start;
			return;
		}
		if (start == s->end + 1) {
			s->end = end;
			return;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->start = start;
	s->end = end;
	s->tag = HOOK_TAG(ps, gap_recorded, start, end);
	s->prev = pc->tail;
	if (pc->tail)
		pc->tail->next = s;
	else
		pc->head = s;
	pc->tail = s;
}

static void remove_skip(struct blk_pipesort *ps, struct pcpu *pc, struct pskip *s)
{
	HOOK(ps, gap_filled, s->tag);
	if (s->prev)
		s->prev->next = s->next;
	else
		pc->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		pc->tail = s->prev;
	free(s);
}

/* A late record fills part of a gap: carve it out. Return 1 if @seq was in a gap. */
static int carve_skip(struct blk_pipesort *ps, struct pcpu *pc, uint64_t seq)
{
	for (struct pskip *s = pc->tail; s; s = s->prev) {
		if (seq < s->start || seq > s->end)
			continue;
		if (s->start == seq) {
			if (s->end == seq)
				remove_skip(ps, pc, s);
			else
				s->start++;
		} else if (s->end == seq) {
			s->end--;
		} else {
			uint64_t end = s->end;

			s->end = seq - 1;
			insert_skip(ps, pc, seq + 1, end);
		}
		return 1;
	}
	return 0;
}

/* Whether every CPU seen on @dev has a record in the window. */
static int cpus_present(struct blk_pipesort *ps, uint32_t dev)
{
	const struct pdev *d = find_dev(ps, dev);

	if (!d)
		return 1;
	const struct pcpu *pc;

	for_each_pcpu(d, i, pc) if (pc->seen && !pc->pending) return 0;
	return 1;
}

/* The check of the CPUs present, for the observer (blk_pipesort_hooks.cpu_check). */
static void cpu_check(struct blk_pipesort *ps)
{
	uint64_t mask = 0;

	if (!ps->o.hooks || !ps->o.hooks->cpu_check)
		return;
	for (size_t i = 0; i < ps->nheap; i++)
		if (ps->heap[i]->ev.cpu < 64)
			mask |= 1ULL << ps->heap[i]->ev.cpu;
	for (size_t i = ps->run_head; i < ps->run_len; i++)
		if (ps->batchv[i]->ev.cpu < 64)
			mask |= 1ULL << ps->batchv[i]->ev.cpu;
	ps->o.hooks->cpu_check(ps->o.hooks->ctx, mask);
}

/* Return 0 if @n may be emitted now, 1 to wait for more input. */
static int check_sequence(struct blk_pipesort *ps, struct pnode *n, int force)
{
	struct pcpu *pc = get_cpu(ps, n->ev.device, n->ev.cpu);
	uint64_t expected, seq = n->ev.sequence;

	if (!pc || blk_event_action32(&n->ev) == BLK_TN_ACTION(BLK_TN_MESSAGE))
		return 0;
	expected = pc->last_seq + 1;
	if (!expected) {
		if (seq == 1)
			return 0;
		if (seq != pc->smallest_seq && !force && !cpus_present(ps, n->ev.device))
			return 1;
		if (seq != 0)
			cpu_check(ps); /* the classic tool maps the CPUs present */
		return 0;
	}
	if (seq == expected)
		return 0;
	if (expected >= pc->smallest_seq && !force)
		return 1;
	if (carve_skip(ps, pc, seq))
		return 0;
	if (expected < seq)
		insert_skip(ps, pc, expected, seq - 1);
	return 0;
}

int blk_pipesort_next(struct blk_pipesort *ps, struct blk_event *ev)
{
	int ret;

	if (ps->out) {
		/* printed: the classic tool frees it at once (it holds none back in pipe mode) */
		HOOK(ps, record_released, ps->out->tag);
		node_free(ps, ps->out);
		ps->out = NULL;
	}
	for (;;) {
		if (npending(ps)) {
			int from_run;
			struct pnode *n = first(ps, &from_run);
			int force = ps->force || npending(ps) > ps->o.max_pending;

			if (!check_sequence(ps, n, force)) {
				struct pcpu *pc = get_cpu(ps, n->ev.device, n->ev.cpu);

				if (!ps->force && force)
					ps->forced++;
				if (from_run)
					ps->run_head++;
				else
					heap_pop(ps);
				if (pc) {
					pc->pending--;
					if (blk_event_action32(&n->ev) !=
					    BLK_TN_ACTION(BLK_TN_MESSAGE))
						pc->last_seq = n->ev.sequence;
				}
				ps->out = n;
				*ev = n->ev;
				return 1;
			}
		}
		if (ps->eof) {
			if (ps->eof_mid) {
				/* the classic tool's next read finds the end again */
				ps->eof_mid = 0;
				HOOK(ps, input_end);
			}
			if (npending(ps) && !ps->force) {
				ps->force = 1;
				continue;
			}
			return 0;
		}
		ret = read_batch(ps);
		if (ret < 0)
			return ret;
	}
}

uint64_t blk_pipesort_rebase(const struct blk_pipesort *ps)
{
	return ps->out ? ps->out->rebase : ps->genesis;
}

int blk_pipesort_needs_input(const struct blk_pipesort *ps)
{
	return !ps->eof && !ps->force;
}

const char *blk_pipesort_error(const struct blk_pipesort *ps)
{
	return ps->failed ? ps->err : NULL;
}

void blk_pipesort_skips(const struct blk_pipesort *ps, uint32_t dev, uint64_t *ranges,
			uint64_t *missing)
{
	const struct pdev *d = find_dev(ps, dev);

	*ranges = *missing = 0;
	if (!d)
		return;
	const struct pcpu *pc;

	for_each_pcpu(d, i, pc)
	{
		for (struct pskip *s = pc->head; s; s = s->next) {
			(*ranges)++;
			*missing += s->end - s->start + 1;
		}
	}
}

void blk_pipesort_each_skip(const struct blk_pipesort *ps, uint32_t dev,
			    void (*fn)(void *arg, uint32_t dev, int cpu, uint64_t first,
				       uint64_t last),
			    void *arg)
{
	const struct pdev *d = find_dev(ps, dev);

	if (!d)
		return;
	const struct pcpu *pc;

	for_each_pcpu(d, i, pc) for (struct pskip *s = pc->head; s; s = s->next)
		fn(arg, dev, (int)i, s->start, s->end);
}

uint64_t blk_pipesort_forced(const struct blk_pipesort *ps)
{
	return ps->forced;
}

void blk_pipesort_free(struct blk_pipesort *ps)
{
	struct pnode *n;

	if (!ps)
		return;
	if (ps->out)
		node_free(ps, ps->out);
	for (size_t i = 0; i < ps->nheap; i++)
		node_free(ps, ps->heap[i]);
	for (size_t i = ps->run_head; i < ps->run_len; i++)
		node_free(ps, ps->batchv[i]);
	while ((n = ps->free_nodes)) {
		ps->free_nodes = n->next_free;
		free(n);
	}
	for (unsigned int i = 0; i < ps->ndevs; i++) {
		struct pdev *d = &ps->devs[i];
		struct pcpu *pc;

		for_each_pcpu(d, c, pc)
		{
			struct pskip *s = pc->head, *nx;

			for (; s; s = nx) {
				nx = s->next;
				free(s);
			}
		}
		for (unsigned int c = 0; c < d->nchunks; c++)
			free(d->cpus[c]);
		free(d->cpus);
	}
	free(ps->devs);
	free(ps->heap);
	free(ps->batchv);
	free(ps->err);
	blk_reader_close(ps->r);
	free(ps);
}
