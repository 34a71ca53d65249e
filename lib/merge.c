// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/merge.h"
#include "blk/output.h"
#include "decode.h"

/* Raw mode: a record of a batch, as the dump writes it. */
struct blk_merge_raw {
	uint64_t time; /* as read (ns) */
	uint32_t action; /* the low 32 bits */
	uint32_t len; /* header and payload */
	const unsigned char *data; /* the record in host byte order: blk_event_encode()'s bytes */
};

struct mstream {
	struct blk_reader *r;
	void *owner;
	int cpu;
	int done;
	struct blk_event *ev; /* the current batch (raw mode: the record being read) */
	struct blk_merge_raw *raw; /* raw mode: the current batch */
	unsigned int n, head;
	uint64_t head_time; /* ev[head].time, as read (the caller may change the record) */
	unsigned char *arena; /* payload copies of the batch */
	size_t arena_len, arena_cap;
	int64_t order; /* tie-break: the later (re)queued goes first */
	int quiet; /* raw mode: plain records are not shown to the callback (blk_merge_quiet()) */
	/*
	 * Raw mode: the batch's records follow each other in memory; when all of them are
	 * host-order version 7 ones (flat), blk_merge_dump_raw() walks their bytes from those
	 * of record head on (at), and a batch that stayed in the reader's buffer has no slots.
	 */
	int flat;
	const unsigned char *at;
};

struct blk_merge {
	unsigned int batch;
	int raw; /* blk_merge_set_raw() */
	blk_merge_note_fn fn;
	void *arg;
	struct mstream **s;
	unsigned int ns, cap;
	struct mstream **heap;
	unsigned int nheap;
	uint64_t top_time; /* heap[0]->head_time, or UINT64_MAX when the heap is empty */
	int64_t order;
	struct mstream *cur; /* stream of the record last returned, to requeue */
	int fresh; /* cur's head is the next record, not the one last returned (a dump's prime) */
	char **errors;
	unsigned int nerrors;
};

struct blk_merge *blk_merge_new(unsigned int batch, blk_merge_note_fn fn, void *arg)
{
	struct blk_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->batch = batch ? batch : 512;
	m->top_time = UINT64_MAX;
	m->fn = fn;
	m->arg = arg;
	return m;
}

static int before(const struct mstream *a, const struct mstream *b)
{
	if (a->head_time != b->head_time)
		return a->head_time < b->head_time;
	return a->order < b->order;
}

/*
 * The classic tool keeps its inputs in a list sorted by next-record time: an input is
 * inserted before the inputs of equal time, but never before the head. A heap keyed on
 * (time, order) with a decreasing order reproduces that.
 */
static void heap_push(struct blk_merge *m, struct mstream *s)
{
	unsigned int i = m->nheap++;

	s->order = --m->order;
	if (i && m->heap[0]->head_time == s->head_time)
		m->heap[0]->order = --m->order; /* keep the head in front */
	while (i) {
		unsigned int p = (i - 1) / 2;

		if (!before(s, m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = s;
	m->top_time = m->heap[0]->head_time;
}

/* @s into the root's place, sifted down (the root's old occupant is the caller's) */
static void sift_down(struct blk_merge *m, struct mstream *s)
{
	unsigned int i = 0;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && before(m->heap[c + 1], m->heap[c]))
			c++;
		if (!before(m->heap[c], s))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = s;
}

static struct mstream *heap_pop(struct blk_merge *m)
{
	struct mstream *top = m->heap[0], *last = m->heap[--m->nheap];

	if (m->nheap)
		sift_down(m, last);
	m->top_time = m->nheap ? m->heap[0]->head_time : UINT64_MAX;
	return top;
}

/*
 * heap_push(m, @s) and then heap_pop(m), when @s comes after the top (a later time): the top
 * comes out and @s takes its place, sifted down once. The keys are those the two would give,
 * so the order records come out in is the same.
 */
static struct mstream *heap_swap_top(struct blk_merge *m, struct mstream *s)
{
	struct mstream *top = m->heap[0];

	s->order = --m->order; /* as heap_push(); the head's time is not s's, so it keeps its own */
	if (m->nheap == 1)
		m->heap[0] = s; /* two inputs, the common case: nothing to sift */
	else
		sift_down(m, s);
	m->top_time = m->heap[0]->head_time;
	return top;
}

static int add_error(struct blk_merge *m, const char *msg)
{
	char **e = realloc(m->errors, (m->nerrors + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	m->errors = e;
	e[m->nerrors] = strdup(msg);
	if (!e[m->nerrors])
		return -ENOMEM;
	m->nerrors++;
	return 0;
}

/*
 * The arena starts where a batch of plain records usually ends (64 KiB; its pages are
 * touched only as used), not at 4 KiB doubling: each size left behind stays touched.
 */
#define ARENA_FIRST (64 * 1024)

static int __attribute__((noinline)) arena_grow(struct mstream *s, size_t len)
{
	size_t nc = s->arena_cap ? s->arena_cap * 2 : ARENA_FIRST;
	unsigned char *na;

	while (nc - s->arena_len < len)
		nc *= 2;
	na = realloc(s->arena, nc);
	if (!na)
		return -ENOMEM;
	s->arena = na;
	s->arena_cap = nc;
	return 0;
}

/* Room for @len more bytes in the arena of @s. Return 0 or -ENOMEM. */
static inline int arena_reserve(struct mstream *s, size_t len)
{
	return s->arena_cap - s->arena_len >= len ? 0 : arena_grow(s, len);
}

/*
 * Raw mode: the record @ev was read into slot @n; its bytes go into the arena as the dump
 * writes them: as read when the input is a host-order version 7 one (the same bytes
 * encode_event() would give), encoded otherwise.
 */
static int store_raw(struct mstream *s, unsigned int n, const struct blk_event *ev)
{
	unsigned int len = blk_event_record_len(ev);
	const unsigned char *rec = blk_reader_last_native(s->r);
	struct blk_merge_raw *rr = &s->raw[n];
	unsigned char *p;

	if (arena_reserve(s, len))
		return -ENOMEM;
	p = s->arena + s->arena_len;
	if (!rec && ev->version == BLK_IO_TRACE2_VERSION)
		s->flat = 0;
	if (rec) {
		/* the header in a fixed-size copy (inlined), then the payload */
		memcpy(p, rec, sizeof(struct blk_io_trace));
		if (ev->pdu_len)
			memcpy(p + sizeof(struct blk_io_trace), rec + sizeof(struct blk_io_trace),
			       ev->pdu_len);
	} else {
		encode_event(ev, p);
	}
	rr->time = ev->time;
	rr->action = blk_event_action32(ev);
	rr->len = len;
	/* an offset until the arena is final, as the payloads' */
	rr->data = (const unsigned char *)(uintptr_t)s->arena_len;
	s->arena_len += len;
	return 0;
}

/*
 * The slots @rr[0..@k) for the @k plain records at @p, one after the other: each one's data
 * @base plus its offset from @p (@base: @p itself, or the arena offset of @p while the arena
 * may still move, see prime()). Return: the bytes of the @k records.
 */
static size_t span_slots(struct blk_merge_raw *rr, unsigned int k, const unsigned char *p,
			 uintptr_t base)
{
	const unsigned char *start = p;

	for (struct blk_merge_raw *end = rr + k; rr < end; rr++) {
		uint16_t pdu_len;

		FIELD(pdu_len, struct blk_io_trace, pdu_len);
		FIELD(rr->time, struct blk_io_trace, time);
		FIELD(rr->action, struct blk_io_trace, action);
		rr->len = sizeof(struct blk_io_trace) + pdu_len;
		rr->data = (const unsigned char *)(base + (uintptr_t)(p - start));
		p += rr->len;
	}
	return (size_t)(p - start);
}

/* the slots from @n on for the @k plain records of @span (@len bytes), copied to the arena */
static int span_to_arena(struct mstream *s, unsigned int n, const unsigned char *span,
			 unsigned int k, size_t len)
{
	if (arena_reserve(s, len))
		return -ENOMEM;
	memcpy(s->arena + s->arena_len, span, len);
	s->arena_len += span_slots(&s->raw[n], k, s->arena + s->arena_len, s->arena_len);
	return (int)k;
}

/*
 * Raw mode, blk_merge_quiet(): the plain records at the reader's position, up to @max of
 * them, go into the slots from @n on undecoded, with one copy. Return the number stored,
 * 0 if the next record is not a plain one, or -ENOMEM.
 */
static int store_span(struct mstream *s, unsigned int n, unsigned int max)
{
	unsigned int k;
	size_t len;
	const unsigned char *span = blk_reader_plain_span(s->r, (uint32_t)s->cpu, max, &k, &len);

	return span ? span_to_arena(s, n, span, k, len) : 0;
}

/*
 * Raw mode, blk_merge_quiet(), at a batch's start: when the whole batch (@max records) is
 * plain records at the reader's position, they stay where the reader holds them, one copy
 * fewer than store_span(): valid until the next call on the reader, which comes with the
 * next batch, once every record of this one was taken. Fewer (the reader's buffer ends
 * before the batch, or a record that is not plain): copied as store_span() does, and the
 * batch goes on (its size decides the order of records of equal times, as the classic
 * tool's). Return the number of records (the batch whole if @max), 0 if the next record is
 * not a plain one, or -ENOMEM; *@direct: whether they stayed in place.
 */
static int first_span(struct mstream *s, unsigned int max, int *direct)
{
	unsigned int k;
	size_t len;
	const unsigned char *p = blk_reader_plain_span(s->r, (uint32_t)s->cpu, max, &k, &len);

	*direct = 0;
	if (!p)
		return 0;
	if (k < max)
		return span_to_arena(s, 0, p, k, len);
	/* no slots: blk_merge_dump_raw() walks the bytes */
	s->at = p;
	*direct = 1;
	return (int)k;
}

/*
 * Read the next batch of @s. Return records queued, or -errno from the callback. Each record
 * is decoded into its slot of the batch, which blk_merge_take() hands out as it is. Once a
 * batch: not inlined, so that blk_merge_take()'s common path stays short.
 */
static int __attribute__((noinline)) prime(struct blk_merge *m, struct mstream *s)
{
	unsigned int i, n = 0;
	int ret;

	s->arena_len = 0;
	s->flat = 1;
	i = 0;
	if (s->quiet && !s->done) {
		int direct, k = first_span(s, m->batch, &direct);

		if (k < 0)
			return k;
		if (direct) {
			const unsigned char *p = s->at;

			s->n = (unsigned int)k;
			s->head = 0;
			FIELD(s->head_time, struct blk_io_trace, time);
			return k;
		}
		n = i = (unsigned int)k;
	}
	for (; !s->done && i < m->batch; i++) {
		struct blk_event *ev = m->raw ? s->ev : &s->ev[n];

		if (s->quiet) {
			int k = store_span(s, n, m->batch - i);

			if (k < 0)
				return k;
			if (k > 0) {
				n += (unsigned int)k;
				i += (unsigned int)k - 1;
				continue;
			}
		}
		ret = blk_reader_next(s->r, ev);
		if (ret <= 0) {
			if (ret < 0 && add_error(m, blk_reader_error(s->r)))
				return -ENOMEM;
			s->done = 1;
			if (m->fn) {
				ret = m->fn(m->arg, BLK_NOTE_END, s->owner, s->cpu, NULL);
				if (ret < 0)
					return ret;
			}
			break;
		}
		if (ev->cpu != (uint32_t)s->cpu) {
			if (m->fn) {
				ret = m->fn(m->arg, BLK_NOTE_BAD_CPU, s->owner, s->cpu, ev);
				if (ret < 0)
					return ret;
			}
			continue;
		}
		if (m->fn) {
			ret = m->fn(m->arg, BLK_NOTE_RECORD, s->owner, s->cpu, ev);
			if (ret < 0)
				return ret;
			if (ret > 0) {
				i--; /* consumed notes do not count toward a batch */
				continue;
			}
		}
		if (m->raw) {
			if (store_raw(s, n, ev))
				return -ENOMEM;
		} else if (ev->pdu_len) {
			if (arena_reserve(s, ev->pdu_len))
				return -ENOMEM;
			memcpy(s->arena + s->arena_len, ev->pdu, ev->pdu_len);
			/* store the offset now; pointers are fixed once the arena is final */
			ev->pdu = (const unsigned char *)(uintptr_t)s->arena_len;
			s->arena_len += ev->pdu_len;
		}
		n++;
	}
	if (m->raw) {
		for (i = 0; i < n; i++)
			s->raw[i].data = s->arena + (uintptr_t)s->raw[i].data;
		s->at = s->arena;
	} else {
		for (i = 0; i < n; i++) {
			if (s->ev[i].pdu_len)
				s->ev[i].pdu = s->arena + (uintptr_t)s->ev[i].pdu;
		}
	}
	s->n = n;
	s->head = 0;
	if (n)
		s->head_time = m->raw ? s->raw[0].time : s->ev[0].time;
	return (int)n;
}

int blk_merge_add(struct blk_merge *m, struct blk_reader *r, void *owner, int cpu)
{
	struct mstream *s;
	int ret;

	if (m->ns == m->cap) {
		unsigned int nc = m->cap ? m->cap * 2 : 8;
		struct mstream **ns = realloc(m->s, nc * sizeof(*ns));
		struct mstream **nh;

		if (!ns)
			return -ENOMEM;
		m->s = ns;
		nh = realloc(m->heap, nc * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		m->heap = nh;
		m->cap = nc;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ev = calloc(m->raw ? 1 : m->batch, sizeof(*s->ev));
	if (m->raw)
		s->raw = calloc(m->batch, sizeof(*s->raw));
	if (!s->ev || (m->raw && !s->raw)) {
		free(s->ev);
		free(s);
		return -ENOMEM;
	}
	s->r = r;
	s->owner = owner;
	s->cpu = cpu;
	m->s[m->ns++] = s;
	ret = prime(m, s);
	if (ret > 0)
		heap_push(m, s);
	return ret < 0 ? ret : 0;
}

/*
 * After a record of the current input was taken (its head already moved on): the input stays
 * in front while its next record is not later than every other input's; otherwise it goes
 * back into the heap and the heap's first comes out as the current input. Return 1 if there
 * is a current input, 0 if not (the heap's first is next, if any), or -errno.
 */
static int requeue(struct blk_merge *m)
{
	struct mstream *s = m->cur;
	int ret;

	if (!s)
		return 0;
	if (s->head >= s->n) {
		ret = prime(m, s);
		if (ret <= 0) {
			m->cur = NULL;
			return ret;
		}
	} else {
		s->head_time = m->raw ? s->raw[s->head].time : s->ev[s->head].time;
	}
	if (s->head_time <= m->top_time)
		return 1;
	/* later than the top (so the heap is not empty): the two change places */
	m->cur = heap_swap_top(m, s);
	return 1;
}

int blk_merge_peek_time(struct blk_merge *m, uint64_t *t)
{
	if (m->cur || !m->nheap)
		return 0;
	*t = m->top_time;
	return 1;
}

/* blk_merge_take() when the current input does not simply stay in front */
static int __attribute__((noinline))
take_slow(struct blk_merge *m, struct blk_event **ev, void **owner, int *cpu)
{
	struct mstream *s;
	int ret;

	if (m->raw)
		return -EINVAL; /* raw mode: blk_merge_dump_raw() */
	ret = requeue(m);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		s = m->cur;
	} else {
		if (!m->nheap)
			return 0;
		s = heap_pop(m);
		m->cur = s;
	}
	*ev = &s->ev[s->head];
	*owner = s->owner;
	*cpu = s->cpu;
	return 1;
}

int blk_merge_take(struct blk_merge *m, struct blk_event **ev, void **owner, int *cpu)
{
	struct mstream *s = m->cur;

	/* the common case: the next record of the current input, still first */
	if (s && ++s->head < s->n) {
		s->head_time = s->ev[s->head].time;
		if (s->head_time <= m->top_time) {
			*ev = &s->ev[s->head];
			*owner = s->owner;
			*cpu = s->cpu;
			return 1;
		}
	}
	return take_slow(m, ev, owner, cpu);
}

int blk_merge_set_raw(struct blk_merge *m)
{
	if (m->ns)
		return -EBUSY;
	m->raw = 1;
	return 0;
}

int blk_merge_quiet(struct blk_merge *m, void *owner)
{
	if (!m->raw)
		return -EINVAL;
	for (unsigned int i = 0; i < m->ns; i++)
		if (m->s[i]->owner == owner)
			m->s[i]->quiet = 1;
	return 0;
}

/* the bytes of record head of the batch */
static inline const unsigned char *head_bytes(const struct mstream *s)
{
	return s->flat ? s->at : s->raw[s->head].data;
}

/* the length of the version 7 record at @p */
static inline size_t v7_len(const unsigned char *p)
{
	uint16_t pdu_len;

	FIELD(pdu_len, struct blk_io_trace, pdu_len);
	return sizeof(struct blk_io_trace) + pdu_len;
}

/*
 * Write records [@from, @to) of @s, whose bytes run from @pf to @pt, their times rebased:
 * a flat batch's in one go, another's record by record. Return 0 or -errno.
 */
static int put_span(struct blk_output *o, const struct mstream *s, unsigned int from,
		    unsigned int to, const unsigned char *pf, const unsigned char *pt,
		    uint64_t rebase)
{
	if (s->flat)
		return pt > pf ? blk_output_raw_bytes(o, pf, (size_t)(pt - pf), rebase) : 0;
	for (; from < to; from++) {
		const struct blk_merge_raw *rr = &s->raw[from];
		int ret = blk_output_record(o, rr->data, rr->len, rr->time - rebase);

		if (ret)
			return ret;
	}
	return 0;
}

int blk_merge_dump_raw(struct blk_merge *m, struct blk_output *o, const struct blk_merge_dump *d,
		       unsigned int max, unsigned int *taken)
{
	struct mstream *s = m->cur;
	const unsigned char *p, *from;
	unsigned int i, fi, left = max;
	int first, ret = BLK_DUMP_MORE;

	*taken = 0;
	if (!m->raw || !max)
		return -EINVAL;
	if (!s) {
		if (!m->nheap)
			return BLK_DUMP_END;
		s = heap_pop(m);
		m->cur = s;
		m->fresh = 1;
	}
	/*
	 * Record i of input s (its bytes at p) is the next one to take; from (record fi): the
	 * first unwritten one.
	 */
	p = head_bytes(s);
	i = s->head;
	first = m->fresh; /* taken whatever its time (the current input's first) */
	if (!first) {
		p += s->flat ? v7_len(p) : s->raw[i].len;
		i++;
	}
	m->fresh = 0;
	from = p;
	fi = i;
	for (;;) {
		uint64_t t, rt;
		uint32_t a;
		size_t len;

		if (i == s->n) {
			/* the batch is all taken: the next one is read, then back to the caller */
			if (put_span(o, s, fi, i, from, p, d->rebase))
				goto failed;
			s->head = i;
			*taken = max - left;
			ret = requeue(m);
			if (ret < 0)
				return ret;
			m->fresh = ret > 0; /* the (new) current input's head not taken yet */
			return BLK_DUMP_MORE;
		}
		if (s->flat) {
			FIELD(t, struct blk_io_trace, time);
			FIELD(a, struct blk_io_trace, action);
			len = v7_len(p);
		} else {
			t = s->raw[i].time;
			a = s->raw[i].action;
			len = s->raw[i].len;
		}
		if (!first && t > m->top_time) {
			/* another input's record comes first: the two change places, as requeue() */
			if (put_span(o, s, fi, i, from, p, d->rebase))
				goto failed;
			s->head = i;
			s->head_time = t;
			s->at = p;
			s = heap_swap_top(m, s);
			m->cur = s;
			i = fi = s->head;
			from = p = head_bytes(s);
			first = 1;
			continue;
		}
		if (t >= d->pause) {
			/* the next record, not taken: the caller's turn first */
			s->head = i;
			s->at = p;
			m->fresh = 1;
			ret = BLK_DUMP_PAUSE;
			break;
		}
		first = 0;
		rt = t - d->rebase;
		left--;
		if (rt > d->end) {
			/* taken, not written: the dump ends before it */
			if (put_span(o, s, fi, i, from, p, d->rebase))
				goto failed;
			s->head = i;
			s->at = p;
			*taken = max - left;
			return BLK_DUMP_STOP;
		}
		if (!(a & d->act_mask) || rt < d->start ||
		    (!d->msgs && a == BLK_TN_ACTION(BLK_TN_MESSAGE))) {
			/* left out: what comes before it is written, the rest of the run goes on */
			if (put_span(o, s, fi, i, from, p, d->rebase))
				goto failed;
			from = p + len;
			fi = i + 1;
		}
		if (!left) {
			/* @max records taken: the last one is the head */
			s->head = i;
			s->at = p;
			p += len;
			i++;
			break;
		}
		p += len;
		i++;
	}
	if (put_span(o, s, fi, i, from, p, d->rebase))
		goto failed;
	*taken = max - left;
	return ret;
failed:
	*taken = max - left;
	return BLK_DUMP_OUTPUT;
}

int blk_merge_next(struct blk_merge *m, struct blk_event *ev, void **owner, int *cpu)
{
	struct blk_event *p;
	int ret = blk_merge_take(m, &p, owner, cpu);

	if (ret > 0)
		*ev = *p;
	return ret;
}

unsigned int blk_merge_nerrors(const struct blk_merge *m)
{
	return m->nerrors;
}

const char *blk_merge_error(const struct blk_merge *m, unsigned int i)
{
	return i < m->nerrors ? m->errors[i] : "";
}

void blk_merge_free(struct blk_merge *m)
{
	if (!m)
		return;
	for (unsigned int i = 0; i < m->ns; i++) {
		blk_reader_close(m->s[i]->r);
		free(m->s[i]->ev);
		free(m->s[i]->raw);
		free(m->s[i]->arena);
		free(m->s[i]);
	}
	for (unsigned int i = 0; i < m->nerrors; i++)
		free(m->errors[i]);
	free(m->errors);
	free(m->s);
	free(m->heap);
	free(m);
}
