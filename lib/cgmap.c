// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup of each event, from the tracer's cgroup notes (blk/cgroup.h, trace.h
 * BLK_TN_CGROUP): per device and CPU, the runs of sequence numbers each note names, looked
 * up as events are printed (in sequence order, so mostly the run looked at last or the
 * next one); and the path of each id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk/cgroup.h"

struct run {
	uint32_t first, count;
	uint64_t id;
};

struct stream {
	uint32_t device, cpu;
	struct run *run;
	size_t n, cap;
	size_t cur; /* the run found last */
	int unsorted; /* a run came before one taken earlier: search them all */
};

struct path {
	uint64_t id;
	char *path; /* NULL: a free slot */
};

struct blk_cgmap {
	struct stream *st;
	size_t nst, capst, last;
	struct path *paths; /* open addressing, a power of two of slots */
	size_t npaths, cappaths;
	struct blk_cgmap_stats stats;
};

struct blk_cgmap *blk_cgmap_new(void)
{
	return calloc(1, sizeof(struct blk_cgmap));
}

void blk_cgmap_free(struct blk_cgmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nst; i++)
		free(m->st[i].run);
	for (size_t i = 0; i < m->cappaths; i++)
		free(m->paths[i].path);
	free(m->st);
	free(m->paths);
	free(m);
}

static struct stream *find_stream(struct blk_cgmap *m, uint32_t device, uint32_t cpu, int add)
{
	struct stream *s;

	if (m->last < m->nst && m->st[m->last].device == device && m->st[m->last].cpu == cpu)
		return &m->st[m->last];
	for (size_t i = 0; i < m->nst; i++)
		if (m->st[i].device == device && m->st[i].cpu == cpu) {
			m->last = i;
			return &m->st[i];
		}
	if (!add)
		return NULL;
	if (m->nst == m->capst) {
		size_t cap = m->capst ? m->capst * 2 : 8;
		struct stream *n = realloc(m->st, cap * sizeof(*n));

		if (!n)
			return NULL;
		m->st = n;
		m->capst = cap;
	}
	s = &m->st[m->nst];
	memset(s, 0, sizeof(*s));
	s->device = device;
	s->cpu = cpu;
	m->last = m->nst++;
	return s;
}

static size_t path_slot(const struct blk_cgmap *m, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (m->cappaths - 1);

	while (m->paths[i].path && m->paths[i].id != id)
		i = (i + 1) & (m->cappaths - 1);
	return i;
}

static int path_grow(struct blk_cgmap *m)
{
	size_t cap = m->cappaths ? m->cappaths * 2 : 64;
	struct path *old = m->paths;
	size_t oldcap = m->cappaths;

	m->paths = calloc(cap, sizeof(*m->paths));
	if (!m->paths) {
		m->paths = old;
		return -ENOMEM;
	}
	m->cappaths = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].path)
			m->paths[path_slot(m, old[i].id)] = old[i];
	free(old);
	return 0;
}

static int take_path(struct blk_cgmap *m, const struct blk_event *ev)
{
	size_t n = ev->pdu_len, i;
	uint64_t id;
	char *p;

	if (n <= 8 || n - 8 > BLK_CGPATH_MAX)
		return -EINVAL;
	for (i = 8; i < n; i++)
		if (ev->pdu[i] < ' ' || ev->pdu[i] > '~')
			return -EINVAL;
	memcpy(&id, ev->pdu, 8);
	if ((m->npaths + 1) * 2 > m->cappaths && path_grow(m))
		return -ENOMEM;
	i = path_slot(m, id);
	if (m->paths[i].path)
		return 1; /* every stream names it: the first one stays */
	p = malloc(n - 8 + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, ev->pdu + 8, n - 8);
	p[n - 8] = '\0';
	m->paths[i].id = id;
	m->paths[i].path = p;
	m->npaths++;
	m->stats.paths++;
	return 1;
}

static int take_run(struct blk_cgmap *m, const struct blk_event *ev)
{
	struct blk_cgroup_pdu pdu;
	struct stream *s;

	if (ev->pdu_len < sizeof(pdu))
		return -EINVAL;
	memcpy(&pdu, ev->pdu, sizeof(pdu));
	if (!pdu.count)
		return -EINVAL;
	s = find_stream(m, ev->device, ev->cpu, 1);
	if (!s)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct run *n = realloc(s->run, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->run = n;
		s->cap = cap;
	}
	if (s->n && pdu.first < s->run[s->n - 1].first)
		s->unsorted = 1;
	s->run[s->n].first = pdu.first;
	s->run[s->n].count = pdu.count;
	s->run[s->n].id = pdu.id;
	s->n++;
	m->stats.runs++;
	return 1;
}

int blk_cgmap_note(struct blk_cgmap *m, const struct blk_event *ev)
{
	int ret;

	if (blk_event_is_cgroup(ev))
		ret = take_run(m, ev);
	else if (blk_event_is_cgpath(ev))
		ret = take_path(m, ev);
	else
		return 0;
	if (ret == -EINVAL)
		m->stats.bad++;
	return ret;
}

static int in_run(const struct run *r, uint32_t seq)
{
	return seq - r->first < r->count;
}

int blk_cgmap_lookup(struct blk_cgmap *m, const struct blk_event *ev, uint64_t *id)
{
	struct stream *s;
	size_t lo, hi;

	*id = 0;
	if (blk_event_is_notify(ev) || blk_cgroup_untagged(ev->action))
		return 0;
	if (!m->nst || !(s = find_stream(m, ev->device, ev->cpu, 0)) || !s->n)
		return 0;
	if (s->cur < s->n && in_run(&s->run[s->cur], ev->sequence))
		goto found;
	if (s->cur + 1 < s->n && in_run(&s->run[s->cur + 1], ev->sequence)) {
		s->cur++;
		goto found;
	}
	if (s->unsorted) {
		/* the latest run that names it, as a reader going through the notes would */
		for (size_t i = s->n; i-- > 0;)
			if (in_run(&s->run[i], ev->sequence)) {
				s->cur = i;
				goto found;
			}
		return 0;
	}
	/* the last run starting at or before the sequence number */
	lo = 0;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->run[mid].first <= ev->sequence)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !in_run(&s->run[lo - 1], ev->sequence))
		return 0;
	s->cur = lo - 1;
found:
	*id = s->run[s->cur].id;
	return 1;
}

const char *blk_cgmap_path(const struct blk_cgmap *m, uint64_t id)
{
	if (!m->npaths)
		return NULL;
	return m->paths[path_slot(m, id)].path;
}

void blk_cgmap_stats(const struct blk_cgmap *m, struct blk_cgmap_stats *st)
{
	uint64_t *seen;
	size_t nseen = 0, total = 0;

	*st = m->stats;
	st->unnamed = 0;
	for (size_t i = 0; i < m->nst; i++)
		total += m->st[i].n;
	seen = total ? malloc(total * sizeof(*seen)) : NULL;
	if (!seen)
		return;
	/* the distinct ids without a path */
	for (size_t i = 0; i < m->nst; i++)
		for (size_t j = 0; j < m->st[i].n; j++) {
			uint64_t id = m->st[i].run[j].id;
			size_t k;

			if (blk_cgmap_path(m, id))
				continue;
			for (k = 0; k < nseen && seen[k] != id; k++)
				;
			if (k == nseen)
				seen[nseen++] = id;
		}
	st->unnamed = nseen;
	free(seen);
}
