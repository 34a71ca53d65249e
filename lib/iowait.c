// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/iowait.h"
#include "blk/strbuf.h"

static uint32_t sw32(uint32_t v, int swap)
{
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t sw64(uint64_t v, int swap)
{
	return swap ? __builtin_bswap64(v) : v;
}

int blk_iowait_decode(const struct blk_event *ev, struct blk_iowait *w)
{
	struct blk_iowait_pdu p;
	uint16_t version, len;
	int swap;

	if (!blk_event_is_iowait(ev) || !ev->pdu || ev->pdu_len < BLK_IOWAIT_PDU_BASE)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	memcpy(&p, ev->pdu, ev->pdu_len < sizeof(p) ? ev->pdu_len : sizeof(p));
	if (p.magic == BLK_IOWAIT_MAGIC)
		swap = 0;
	else if (p.magic == __builtin_bswap32(BLK_IOWAIT_MAGIC))
		swap = 1;
	else
		return -EINVAL;
	version = swap ? __builtin_bswap16(p.version) : p.version;
	len = swap ? __builtin_bswap16(p.len) : p.len;
	if (version != BLK_IOWAIT_VERSION)
		return -EPROTONOSUPPORT;
	if (len < BLK_IOWAIT_PDU_BASE || len > ev->pdu_len)
		return -EINVAL;
	/* the waker's fields: only where the flag says they were written */
	if ((p.flags & BLK_IOWAIT_F_WAKER_IO) && len < sizeof(p))
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->end = ev->time;
	w->duration = sw64(p.duration, swap);
	w->start = (int64_t)(w->end - w->duration);
	w->rebase = sw64(p.rebase, swap);
	w->tgid = sw32(p.tgid, swap);
	w->tid = sw32(p.tid, swap);
	w->device = ev->device;
	w->io_dev = sw32(p.io_dev, swap);
	w->cpu = (int)ev->cpu;
	w->waker_cpu = (int32_t)sw32((uint32_t)p.waker_cpu, swap);
	w->sleep_cpu = (int32_t)sw32((uint32_t)p.sleep_cpu, swap);
	w->source = (enum blk_iowait_source)p.source;
	w->func = (enum blk_iowait_func)p.func;
	w->flags = p.flags;
	memcpy(w->comm, p.comm, sizeof(p.comm));
	w->comm[sizeof(p.comm)] = '\0';
	if (w->flags & BLK_IOWAIT_F_WAKER_IO) {
		w->waker_tid = sw32(p.waker_tid, swap);
		memcpy(w->waker_comm, p.waker_comm, sizeof(p.waker_comm));
		w->waker_comm[sizeof(p.waker_comm)] = '\0';
	}
	return 0;
}

void blk_iowait_encode(const struct blk_iowait *w, struct blk_iowait_pdu *pdu, struct blk_event *ev)
{
	memset(pdu, 0, sizeof(*pdu));
	pdu->magic = BLK_IOWAIT_MAGIC;
	pdu->version = BLK_IOWAIT_VERSION;
	pdu->len = (w->flags & BLK_IOWAIT_F_WAKER_IO) ? sizeof(*pdu) : BLK_IOWAIT_PDU_BASE;
	pdu->duration = w->duration;
	pdu->tgid = w->tgid;
	pdu->tid = w->tid;
	pdu->io_dev = w->io_dev;
	pdu->waker_cpu = w->waker_cpu;
	pdu->sleep_cpu = w->sleep_cpu;
	pdu->source = (uint8_t)w->source;
	pdu->flags = (uint8_t)w->flags;
	pdu->func = (uint8_t)w->func;
	memcpy(pdu->comm, w->comm, strnlen(w->comm, sizeof(pdu->comm)));
	if (w->flags & BLK_IOWAIT_F_WAKER_IO) {
		pdu->waker_tid = w->waker_tid;
		memcpy(pdu->waker_comm, w->waker_comm,
		       strnlen(w->waker_comm, sizeof(pdu->waker_comm)));
	}
	memset(ev, 0, sizeof(*ev));
	ev->time = w->end;
	ev->action = BLK_TN_ACTION(BLK_TN_IOWAIT);
	ev->pid = w->tid;
	ev->device = w->device;
	ev->cpu = (uint32_t)w->cpu;
	ev->version = BLK_IO_TRACE_VERSION;
	ev->pdu = (const unsigned char *)pdu;
	ev->pdu_len = pdu->len;
}

int blk_iowait_rebase(struct blk_event *ev, struct blk_iowait_pdu *pdu, uint64_t amount)
{
	struct blk_iowait w;
	int ret = blk_iowait_decode(ev, &w), swap;
	size_t len;

	if (ret)
		return ret;
	if (ev->time < amount)
		return -ERANGE;
	/* only the fields known are carried: what a later version appended is cut */
	len = (w.flags & BLK_IOWAIT_F_WAKER_IO) ? sizeof(*pdu) : BLK_IOWAIT_PDU_BASE;
	memset(pdu, 0, sizeof(*pdu));
	memcpy(pdu, ev->pdu, len);
	swap = pdu->magic != BLK_IOWAIT_MAGIC;
	pdu->rebase = sw64(w.rebase + amount, swap);
	pdu->len = swap ? __builtin_bswap16((uint16_t)len) : (uint16_t)len;
	ev->pdu = (const unsigned char *)pdu;
	ev->pdu_len = (uint16_t)len;
	ev->time -= amount;
	return 0;
}

const char *blk_iowait_source_name(enum blk_iowait_source s)
{
	switch (s) {
	case BLK_IOWAIT_SRC_MODULE:
		return "module";
	case BLK_IOWAIT_SRC_KPROBE:
		return "kprobe";
	case BLK_IOWAIT_SRC_SCHED:
		return "sched";
	default:
		return "unknown";
	}
}

const char *blk_iowait_func_name(enum blk_iowait_func f)
{
	switch (f) {
	case BLK_IOWAIT_FN_IO_SCHEDULE:
		return "io_schedule";
	case BLK_IOWAIT_FN_IO_SCHEDULE_TIMEOUT:
		return "io_schedule_timeout";
	case BLK_IOWAIT_FN_BLK_IO_SCHEDULE:
		return "blk_io_schedule";
	default:
		return NULL;
	}
}

static void add_cpu(struct blk_strbuf *sb, const char *key, int cpu)
{
	if (cpu < 0)
		blk_strbuf_addf(sb, " %s=-", key);
	else
		blk_strbuf_addf(sb, " %s=%d", key, cpu);
}

int blk_iowait_format(const struct blk_event *ev, struct blk_strbuf *sb)
{
	struct blk_iowait w;
	const char *fn;
	uint64_t mag;
	int ret = blk_iowait_decode(ev, &w);

	if (ret)
		return ret;
	blk_strbuf_addf(sb, "%3d,%-3d %2d %8s %5d.%09lu %5u %2s %3s [%s] start=%s",
			BLK_MAJOR(w.device), BLK_MINOR(w.device), w.cpu, "0",
			(int)(uint32_t)(w.end / 1000000000ull),
			(unsigned long)(w.end % 1000000000ull), w.tid, "w", "N", w.comm,
			w.start < 0 ? "-" : "");
	mag = w.start < 0 ? (uint64_t)0 - (uint64_t)w.start : (uint64_t)w.start;
	blk_strbuf_addf(sb, "%llu.%09llu ns=%llu", (unsigned long long)(mag / 1000000000ull),
			(unsigned long long)(mag % 1000000000ull), (unsigned long long)w.duration);
	if (w.flags & BLK_IOWAIT_F_TGID_UNKNOWN)
		blk_strbuf_addstr(sb, " tgid=-");
	else
		blk_strbuf_addf(sb, " tgid=%u", w.tgid);
	add_cpu(sb, "sleep_cpu", w.sleep_cpu);
	add_cpu(sb, "waker_cpu", w.waker_cpu);
	blk_strbuf_addf(sb, " source=%s", blk_iowait_source_name(w.source));
	if (w.flags & BLK_IOWAIT_F_IO)
		blk_strbuf_addf(sb, " io=%u,%u", BLK_MAJOR(w.io_dev), BLK_MINOR(w.io_dev));
	else if (w.flags & BLK_IOWAIT_F_IO_CHECKED)
		blk_strbuf_addstr(sb, " io=none");
	fn = blk_iowait_func_name(w.func);
	if (fn)
		blk_strbuf_addf(sb, " func=%s", fn);
	if (w.flags & BLK_IOWAIT_F_WAKER_IO)
		blk_strbuf_addf(sb, " woken_by=%u[%s]", w.waker_tid, w.waker_comm);
	blk_strbuf_addch(sb, '\n');
	return 0;
}

/* ---- the queue: a binary min-heap on (time, push order) ---- */

#define INLINE_PDU 64

struct qent {
	struct blk_event ev;
	uint64_t order;
	unsigned char *big; /* payload longer than INLINE_PDU */
	unsigned char pdu[INLINE_PDU];
};

struct blk_iowait_queue {
	struct qent **heap;
	size_t n, cap, max;
	uint64_t order;
};

struct blk_iowait_queue *blk_iowait_queue_new(size_t max)
{
	struct blk_iowait_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->max = max ? max : 65536;
	return q;
}

static void qent_free(struct qent *e)
{
	if (e)
		free(e->big);
	free(e);
}

void blk_iowait_queue_free(struct blk_iowait_queue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		qent_free(q->heap[i]);
	free(q->heap);
	free(q);
}

static int before(const struct qent *a, const struct qent *b)
{
	return a->ev.time < b->ev.time || (a->ev.time == b->ev.time && a->order < b->order);
}

int blk_iowait_queue_push(struct blk_iowait_queue *q, const struct blk_event *ev)
{
	struct qent *e;
	size_t i;

	if (q->n >= q->max)
		return 1;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct qent **h;

		if (cap > q->max)
			cap = q->max;
		h = realloc(q->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		q->heap = h;
		q->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ev = *ev;
	if (ev->pdu_len > INLINE_PDU) {
		e->big = malloc(ev->pdu_len);
		if (!e->big) {
			free(e);
			return -ENOMEM;
		}
		memcpy(e->big, ev->pdu, ev->pdu_len);
		e->ev.pdu = e->big;
	} else {
		if (ev->pdu_len)
			memcpy(e->pdu, ev->pdu, ev->pdu_len);
		e->ev.pdu = e->pdu;
	}
	e->order = q->order++;
	for (i = q->n++; i > 0 && before(e, q->heap[(i - 1) / 2]); i = (i - 1) / 2)
		q->heap[i] = q->heap[(i - 1) / 2];
	q->heap[i] = e;
	return 0;
}

int blk_iowait_queue_peek(struct blk_iowait_queue *q, struct blk_event *ev)
{
	if (!q->n)
		return 0;
	*ev = q->heap[0]->ev;
	return 1;
}

void blk_iowait_queue_pop(struct blk_iowait_queue *q)
{
	struct qent *last;
	size_t i = 0;

	if (!q->n)
		return;
	qent_free(q->heap[0]);
	last = q->heap[--q->n];
	if (!q->n)
		return;
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(q->heap[c + 1], q->heap[c]))
			c++;
		if (!before(q->heap[c], last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = last;
}

size_t blk_iowait_queue_len(const struct blk_iowait_queue *q)
{
	return q->n;
}
