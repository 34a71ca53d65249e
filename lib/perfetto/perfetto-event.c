// SPDX-License-Identifier: GPL-2.0
/*
 * The events of the Perfetto trace writer (include/blk-perfetto/perfetto.h): slices, instants and
 * counters on the tracks perfetto.c made.
 */
#include <errno.h>
#include <string.h>

#include "blk/output.h"
#include "perfetto-int.h"

/* ---- events ---- */

static int slice_track(const struct pf_track *tr)
{
	return tr && tr->type != BLK_PERFETTO_TRACK_COUNTER;
}

/* Check the counter values of an event at @ts; put their differences in @v. */
static int check_values(struct blk_perfetto *pf, const struct blk_perfetto_value *values,
			unsigned int n, uint64_t ts, int64_t *v)
{
	if (n > MAX_VALUES)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		struct pf_track *tr = pf_track_of(pf, values[i].track);

		if (!tr || tr->type != BLK_PERFETTO_TRACK_COUNTER || ts < tr->last_ts)
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (values[j].track == values[i].track)
				return -EINVAL;
		v[i] = values[i].value;
		if (tr->incremental)
			v[i] = (int64_t)((uint64_t)values[i].value - (uint64_t)tr->last_value);
	}
	return 0;
}

static void commit_values(struct blk_perfetto *pf, const struct blk_perfetto_value *values,
			  unsigned int n, uint64_t ts)
{
	for (unsigned int i = 0; i < n; i++) {
		struct pf_track *tr = pf_track_of(pf, values[i].track);

		tr->last_ts = ts;
		tr->last_value = values[i].value;
	}
	pf->st.counters += n;
}

/* whether @iid is one of the iids given to strings of @kind */
static inline int iid_valid(const struct blk_perfetto *pf, int kind, uint64_t iid)
{
	return iid && iid <= pf->next_iid[kind];
}

static int check_args(const struct blk_perfetto *pf, const struct blk_perfetto_arg *a,
		      unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!a[i].name || (unsigned int)a[i].type > BLK_PERFETTO_ARG_IID)
			return -EINVAL;
		if (a[i].type == BLK_PERFETTO_ARG_IID && !iid_valid(pf, K_ARG_STRING, a[i].v.u))
			return -EINVAL;
		if ((a[i].type == BLK_PERFETTO_ARG_STR || a[i].type == BLK_PERFETTO_ARG_ISTR) &&
		    !a[i].v.s)
			return -EINVAL;
	}
	return 0;
}

/* The debug annotations @a (checked by check_args()). */
static void put_args(struct blk_perfetto *pf, const struct blk_perfetto_arg *a, unsigned int n)
{
	struct blk_pb *pb = &pf->pkt;

	for (unsigned int i = 0; i < n; i++) {
		blk_pb_begin(pb, F_EV_ANNOTATIONS);
		blk_perfetto_put_str(pf, K_ARG_NAME, F_ARG_NAME_IID, F_ARG_NAME, a[i].name);
		switch (a[i].type) {
		case BLK_PERFETTO_ARG_INT:
			blk_pb_int(pb, F_ARG_INT, a[i].v.i);
			break;
		case BLK_PERFETTO_ARG_UINT:
			blk_pb_varint(pb, F_ARG_UINT, a[i].v.u);
			break;
		case BLK_PERFETTO_ARG_BOOL:
			blk_pb_varint(pb, F_ARG_BOOL, !!a[i].v.u);
			break;
		case BLK_PERFETTO_ARG_STR:
			blk_pb_string(pb, F_ARG_STRING, a[i].v.s);
			break;
		case BLK_PERFETTO_ARG_ISTR:
			blk_perfetto_put_str(pf, K_ARG_STRING, F_ARG_STRING_IID, F_ARG_STRING,
					     a[i].v.s);
			break;
		case BLK_PERFETTO_ARG_IID:
			blk_pb_varint(pb, F_ARG_STRING_IID, a[i].v.u);
			break;
		case BLK_PERFETTO_ARG_DOUBLE:
			blk_pb_double(pb, F_ARG_DOUBLE, a[i].v.d);
			break;
		}
		blk_pb_end(pb);
	}
}

/* ---- the fast path: an event encoded straight into the output's buffer ---- */

#define FAST_ARGS 8

static inline unsigned char *put_varint(unsigned char *w, uint64_t v)
{
	/* most are small (time deltas, track uuids, iids): one or two bytes without a loop */
	if (__builtin_expect(v < 0x80, 1)) {
		*w = (unsigned char)v;
		return w + 1;
	}
	if (v < 0x4000) {
		w[0] = (unsigned char)(v | 0x80);
		w[1] = (unsigned char)(v >> 7);
		return w + 2;
	}
	while (v >= 0x80) {
		*w++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*w++ = (unsigned char)v;
	return w;
}

static inline unsigned char *put_field(unsigned char *w, uint32_t field, uint64_t v)
{
	return put_varint(put_varint(w, (uint64_t)field << 3 | BLK_PB_VARINT), v);
}

static inline unsigned char *put_fixed64(unsigned char *w, uint32_t field, uint64_t v)
{
	w = put_varint(w, (uint64_t)field << 3 | BLK_PB_I64);
	for (int i = 0; i < 8; i++)
		*w++ = (unsigned char)(v >> (8 * i));
	return w;
}

/* a nested message of @field: its key and one byte for its length, at which it returns */
static inline unsigned char *open_msg(unsigned char **w, uint32_t field)
{
	unsigned char *len = put_varint(*w, (uint64_t)field << 3 | BLK_PB_LEN);

	*w = len + 1;
	return len;
}

/* the message whose length byte is at @len ends at @w: its length, the shortest varint */
static inline unsigned char *close_msg(unsigned char *len, unsigned char *w)
{
	size_t body = (size_t)(w - len - 1), n;

	if (__builtin_expect(body < 0x80, 1)) {
		*len = (unsigned char)body;
		return w;
	}
	n = blk_pb_varint_size(body);
	memmove(len + n, len + 1, body);
	blk_pb_put_varint(len, body);
	return w + n - 1;
}

/* the sequence's id, and after its first packet its flags (pf->seq_hdr: all eight bytes are
 * copied, @w needs the room) */
static inline unsigned char *put_seq(const struct blk_perfetto *pf, unsigned char *w)
{
	if (!pf->st.packets)
		return put_field(w, F_PKT_SEQUENCE_ID, pf->seq);
	memcpy(w, pf->seq_hdr, sizeof(pf->seq_hdr));
	return w + pf->seq_hdr_len;
}

/* a TracePacket @delta after the sequence's time (its length byte returned, as open_msg()) */
static inline unsigned char *open_relative(const struct blk_perfetto *pf, unsigned char **w,
					   uint64_t delta)
{
	unsigned char *pkt = open_msg(w, F_TRACE_PACKET);

	*w = put_seq(pf, put_field(*w, F_PKT_TIMESTAMP, delta));
	return pkt;
}

/* a TracePacket at @ts on the sequence (its length byte returned, as open_msg()), its time
 * relative when it can be (pf->pkt_relative) */
static inline unsigned char *open_packet(struct blk_perfetto *pf, unsigned char **w, uint64_t ts)
{
	unsigned char *pkt;

	pf->pkt_relative = ts >= pf->seq_ts;
	if (pf->pkt_relative)
		return open_relative(pf, w, ts - pf->seq_ts);
	pkt = open_msg(w, F_TRACE_PACKET);
	*w = put_field(*w, F_PKT_TIMESTAMP, ts);
	*w = put_field(*w, F_PKT_CLOCK_ID, pf->clock);
	*w = put_seq(pf, *w);
	return pkt;
}

/* the packet encoded in @sb from @start to @w (at @ts) is written: the state it changed
 * committed, or the output's error */
static inline int close_packet(struct blk_perfetto *pf, struct blk_strbuf *sb,
			       const unsigned char *start, const unsigned char *w, uint64_t ts)
{
	int ret;

	sb->len += (size_t)(w - start);
	if ((ret = blk_output_check(pf->out))) {
		pf->err = ret;
		return ret;
	}
	blk_pb_reset(&pf->pending);
	if (pf->pkt_relative)
		pf->seq_ts = ts;
	pf->st.packets++;
	pf->st.bytes += (size_t)(w - start);
	return 0;
}

/*
 * The packet of @ev (checked by event(); @v: its counter values to write) as the slow path
 * (pkt_begin(), the fields, pkt_finish()) would write it, byte for byte, encoded in the
 * output's buffer. Return: 0 or an output error; 1 when a string is not interned (the slow
 * path writes it inline; the strings interned here are found again there).
 */
static int event_fast(struct blk_perfetto *pf, int type, const struct blk_perfetto_event *ev,
		      const int64_t *v)
{
	uint64_t cat = 0, name = 0, an[FAST_ARGS], as[FAST_ARGS];
	size_t bound, slen[FAST_ARGS];
	struct blk_strbuf *sb;
	unsigned char *start, *w, *pkt, *te;
	int fixed = !!(ev->flags & BLK_PERFETTO_EV_FIXED_NAME),
	    fixed_args = !!(ev->flags & BLK_PERFETTO_EV_FIXED_ARG_NAMES);

	if (ev->nargs > FAST_ARGS)
		return 1;
	/* interned in the slow path's order: category, name, each argument's name and value */
	if (type != TYPE_SLICE_END) {
		if (ev->category &&
		    !(cat = blk_perfetto_iid_of_inline(pf, K_CATEGORY, ev->category, fixed)))
			return 1;
		if (!(name = ev->name_iid) &&
		    !(name = blk_perfetto_iid_of_inline(pf, K_NAME, ev->name, fixed)))
			return 1;
	}
	bound = 64 + pf->pending.len + 11 * (ev->nflows + ev->nterminating) + 22 * ev->nvalues;
	for (unsigned int i = 0; i < ev->nargs; i++) {
		const struct blk_perfetto_arg *a = &ev->args[i];

		if (!(an[i] = blk_perfetto_iid_of_inline(pf, K_ARG_NAME, a->name, fixed_args)))
			return 1;
		bound += 32;
		if (a->type == BLK_PERFETTO_ARG_ISTR &&
		    !(as[i] = blk_perfetto_iid_of(pf, K_ARG_STRING, a->v.s, 0)))
			return 1;
		if (a->type == BLK_PERFETTO_ARG_STR)
			bound += (slen[i] = strlen(a->v.s));
	}

	sb = blk_output_sb(pf->out);
	if (sb->alloc - sb->len < bound + 1)
		blk_strbuf_grow(sb, bound);
	start = w = (unsigned char *)sb->buf + sb->len;
	pkt = open_packet(pf, &w, ev->ts);
	te = open_msg(&w, F_PKT_TRACK_EVENT);
	if (type != TYPE_SLICE_END) {
		if (cat)
			w = put_field(w, F_EV_CATEGORY_IIDS, cat);
		w = put_field(w, F_EV_NAME_IID, name);
	}
	w = put_field(w, F_EV_TYPE, (uint64_t)type);
	w = put_field(w, F_EV_TRACK, ev->track);
	for (unsigned int i = 0; i < ev->nargs; i++) {
		const struct blk_perfetto_arg *a = &ev->args[i];
		unsigned char *m = open_msg(&w, F_EV_ANNOTATIONS);
		uint64_t bits;

		w = put_field(w, F_ARG_NAME_IID, an[i]);
		switch (a->type) {
		case BLK_PERFETTO_ARG_INT:
			w = put_field(w, F_ARG_INT, (uint64_t)a->v.i);
			break;
		case BLK_PERFETTO_ARG_UINT:
			w = put_field(w, F_ARG_UINT, a->v.u);
			break;
		case BLK_PERFETTO_ARG_BOOL:
			w = put_field(w, F_ARG_BOOL, !!a->v.u);
			break;
		case BLK_PERFETTO_ARG_STR:
			w = put_varint(w, (uint64_t)F_ARG_STRING << 3 | BLK_PB_LEN);
			w = put_varint(w, slen[i]);
			memcpy(w, a->v.s, slen[i]);
			w += slen[i];
			break;
		case BLK_PERFETTO_ARG_ISTR:
			w = put_field(w, F_ARG_STRING_IID, as[i]);
			break;
		case BLK_PERFETTO_ARG_IID:
			w = put_field(w, F_ARG_STRING_IID, a->v.u);
			break;
		case BLK_PERFETTO_ARG_DOUBLE:
			memcpy(&bits, &a->v.d, sizeof(bits));
			w = put_fixed64(w, F_ARG_DOUBLE, bits);
			break;
		}
		w = close_msg(m, w);
	}
	for (unsigned int i = 0; i < ev->nflows; i++)
		w = pf->varint_flows ? put_field(w, F_EV_FLOWS_OLD, ev->flows[i])
				     : put_fixed64(w, F_EV_FLOWS, ev->flows[i]);
	for (unsigned int i = 0; i < ev->nterminating; i++)
		w = pf->varint_flows
			    ? put_field(w, F_EV_TERMINATING_FLOWS_OLD, ev->terminating_flows[i])
			    : put_fixed64(w, F_EV_TERMINATING_FLOWS, ev->terminating_flows[i]);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		w = put_field(w, F_EV_EXTRA_TRACKS, ev->values[i].track);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		w = put_field(w, F_EV_EXTRA_VALUES, (uint64_t)v[i]);
	w = close_msg(te, w);
	if (pf->pending.len) {
		unsigned char *m = open_msg(&w, F_PKT_INTERNED_DATA);

		memcpy(w, pf->pending.buf, pf->pending.len);
		w = close_msg(m, w + pf->pending.len);
	}
	w = close_msg(pkt, w);

	return close_packet(pf, sb, start, w, ev->ts);
}

/*
 * The commonest events (an I/O's stages: a slice's end, or a begin with a fixed name met
 * before) with nothing else on them, nothing to intern and no counter values: written as
 * event_fast() writes them, byte for byte, with none of its steps for what they lack (on
 * large-perf they were 7 in 8 events, ~300 instructions each). Return: 0 or an output
 * error; 1 when @ev is not such an event (nothing written).
 */
static int event_simple(struct blk_perfetto *pf, int type, const struct blk_perfetto_event *ev)
{
	struct blk_strbuf *sb;
	unsigned char *start, *w, *pkt, *te;
	uint64_t name = 0;

	if ((ev->nargs | ev->nflows | ev->nterminating | ev->nvalues) || pf->pending.len)
		return 1;
	if (type != TYPE_SLICE_END) {
		const struct pf_recent *r;

		if (ev->category)
			return 1;
		if (!(name = ev->name_iid)) {
			r = pf_recent_of(pf, K_NAME, ev->name);
			if (!(ev->flags & BLK_PERFETTO_EV_FIXED_NAME) || r->s != ev->name ||
			    r->kind != K_NAME)
				return 1;
			name = r->iid;
		}
	}
	sb = blk_output_sb(pf->out);
	if (sb->alloc - sb->len < 64 + 1)
		blk_strbuf_grow(sb, 64);
	start = w = (unsigned char *)sb->buf + sb->len;
	pkt = open_packet(pf, &w, ev->ts);
	te = open_msg(&w, F_PKT_TRACK_EVENT);
	if (type != TYPE_SLICE_END)
		w = put_field(w, F_EV_NAME_IID, name);
	w = put_field(w, F_EV_TYPE, (uint64_t)type);
	w = put_field(w, F_EV_TRACK, ev->track);
	w = close_msg(te, w);
	w = close_msg(pkt, w);
	return close_packet(pf, sb, start, w, ev->ts);
}

static int event(struct blk_perfetto *pf, int type, const struct blk_perfetto_event *ev)
{
	struct pf_track *tr = pf_track_of(pf, ev->track);
	struct blk_pb *pb = &pf->pkt;
	int64_t v[MAX_VALUES];
	int ret;

	if (pf->err)
		return pf->err;
	if (!slice_track(tr) || ev->ts < tr->last_ts)
		return -EINVAL;
	if (type == TYPE_SLICE_END && !tr->depth)
		return -EINVAL;
	if (type != TYPE_SLICE_END &&
	    (ev->name_iid ? !iid_valid(pf, K_NAME, ev->name_iid) : !ev->name))
		return -EINVAL;
	if (type == TYPE_SLICE_BEGIN && tr->depth >= BLK_PERFETTO_MAX_DEPTH)
		return -EINVAL;
	ret = event_simple(pf, type, ev);
	if (ret < 0)
		return ret;
	if (!ret)
		goto written;
	if ((ev->nflows && !ev->flows) || (ev->nterminating && !ev->terminating_flows) ||
	    (ev->nargs && !ev->args) || (ev->nvalues && !ev->values))
		return -EINVAL;
	for (unsigned int i = 0; i < ev->nflows; i++)
		if (!ev->flows[i])
			return -EINVAL;
	for (unsigned int i = 0; i < ev->nterminating; i++)
		if (!ev->terminating_flows[i])
			return -EINVAL;
	if ((ret = check_args(pf, ev->args, ev->nargs)))
		return ret;
	if ((ret = check_values(pf, ev->values, ev->nvalues, ev->ts, v)))
		return ret;

	ret = event_fast(pf, type, ev, v);
	if (ret < 0)
		return ret;
	if (!ret)
		goto written;
	blk_perfetto_pkt_begin(pf, 1, ev->ts);
	blk_pb_begin(pb, F_PKT_TRACK_EVENT);
	if (type != TYPE_SLICE_END) {
		if (ev->category)
			blk_perfetto_put_str(pf, K_CATEGORY, F_EV_CATEGORY_IIDS, F_EV_CATEGORIES,
					     ev->category);
		if (ev->name_iid)
			blk_pb_varint(pb, F_EV_NAME_IID, ev->name_iid);
		else
			blk_perfetto_put_str(pf, K_NAME, F_EV_NAME_IID, F_EV_NAME, ev->name);
	}
	blk_pb_varint(pb, F_EV_TYPE, (uint64_t)type);
	blk_pb_varint(pb, F_EV_TRACK, ev->track);
	put_args(pf, ev->args, ev->nargs);
	for (unsigned int i = 0; i < ev->nflows; i++)
		if (pf->varint_flows)
			blk_pb_varint(pb, F_EV_FLOWS_OLD, ev->flows[i]);
		else
			blk_pb_fixed64(pb, F_EV_FLOWS, ev->flows[i]);
	for (unsigned int i = 0; i < ev->nterminating; i++)
		if (pf->varint_flows)
			blk_pb_varint(pb, F_EV_TERMINATING_FLOWS_OLD, ev->terminating_flows[i]);
		else
			blk_pb_fixed64(pb, F_EV_TERMINATING_FLOWS, ev->terminating_flows[i]);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		blk_pb_varint(pb, F_EV_EXTRA_TRACKS, ev->values[i].track);
	for (unsigned int i = 0; i < ev->nvalues; i++)
		blk_pb_int(pb, F_EV_EXTRA_VALUES, v[i]);
	blk_pb_end(pb);
	if ((ret = blk_perfetto_pkt_finish(pf)))
		return ret;
written:
	if (!pf->pkt_relative)
		pf->st.absolute++;
	tr->last_ts = ev->ts;
	if (type == TYPE_SLICE_BEGIN) {
		tr->depth++;
		pf->st.slices++;
	} else if (type == TYPE_SLICE_END) {
		tr->depth--;
	} else {
		pf->st.instants++;
	}
	commit_values(pf, ev->values, ev->nvalues, ev->ts);
	return 0;
}

/* ---- an I/O's stages: ends and a begin at one time, nothing else on them ---- */

#define SLICES_MAX_VALUES 4

/*
 * One packet of blk_perfetto_slices() at @w: a slice's end (@iid 0) or begin (@iid its
 * name's) on @track, @delta after the sequence's time, with @nvalues counter values (@values,
 * their differences @v). Return: where it ends.
 */
static inline unsigned char *slice_packet(const struct blk_perfetto *pf, unsigned char *w,
					  uint64_t delta, uint64_t iid, uint64_t track,
					  const struct blk_perfetto_value *values, const int64_t *v,
					  unsigned int nvalues)
{
	unsigned char *pkt = open_relative(pf, &w, delta), *te = open_msg(&w, F_PKT_TRACK_EVENT);

	if (iid)
		w = put_field(w, F_EV_NAME_IID, iid);
	w = put_field(w, F_EV_TYPE, iid ? TYPE_SLICE_BEGIN : TYPE_SLICE_END);
	w = put_field(w, F_EV_TRACK, track);
	for (unsigned int i = 0; i < nvalues; i++)
		w = put_field(w, F_EV_EXTRA_TRACKS, values[i].track);
	for (unsigned int i = 0; i < nvalues; i++)
		w = put_field(w, F_EV_EXTRA_VALUES, (uint64_t)v[i]);
	w = close_msg(te, w);
	return close_msg(pkt, w);
}

/*
 * The packets of blk_perfetto_slices() (checked, @v its values' differences), encoded as
 * open_packet() and event_fast() would: at a time not before the sequence's, after its first
 * packet, nothing pending to intern, @iid the name's (0: none). The packets after the first
 * are at the same time (delta 0).
 */
static int slices_fast(struct blk_perfetto *pf, uint64_t track, uint64_t ts, unsigned int nend,
		       uint64_t iid, const struct blk_perfetto_value *values, const int64_t *v,
		       unsigned int nvalues)
{
	struct blk_strbuf *sb = blk_output_sb(pf->out);
	/* a packet without values: at most 2 + 10 + 8 + 2 + 11 + 2 + 11 bytes */
	size_t bound = (nend + 1) * 48 + nvalues * 22;
	unsigned char *start, *w;
	int ret;

	if (sb->alloc - sb->len < bound + 1)
		blk_strbuf_grow(sb, bound);
	start = w = (unsigned char *)sb->buf + sb->len;
	w = slice_packet(pf, w, ts - pf->seq_ts, nend ? 0 : iid, track, values, v, nvalues);
	for (unsigned int k = 1; k < nend; k++)
		w = slice_packet(pf, w, 0, 0, track, NULL, NULL, 0);
	if (nend && iid)
		w = slice_packet(pf, w, 0, iid, track, NULL, NULL, 0);
	sb->len += (size_t)(w - start);
	if ((ret = blk_output_check(pf->out))) {
		pf->err = ret;
		return ret;
	}
	pf->seq_ts = ts;
	pf->st.packets += nend + !!iid;
	pf->st.bytes += (size_t)(w - start);
	return 0;
}

int blk_perfetto_slices(struct blk_perfetto *pf, uint64_t track, uint64_t ts, unsigned int nend,
			uint64_t name_iid, const struct blk_perfetto_value *values,
			unsigned int nvalues)
{
	struct pf_track *tr = pf_track_of(pf, track);
	int64_t v[MAX_VALUES];
	int ret;

	if (pf->err)
		return pf->err;
	if (!slice_track(tr) || ts < tr->last_ts || tr->depth < nend ||
	    (name_iid &&
	     (tr->depth - nend >= BLK_PERFETTO_MAX_DEPTH || !iid_valid(pf, K_NAME, name_iid))) ||
	    (nvalues && !values))
		return -EINVAL;
	if (nvalues && (ret = check_values(pf, values, nvalues, ts, v)))
		return ret;
	if (pf->st.packets && ts >= pf->seq_ts && !pf->pending.len &&
	    nvalues <= SLICES_MAX_VALUES) {
		if ((ret = slices_fast(pf, track, ts, nend, name_iid, values, v, nvalues)))
			return ret;
		tr->last_ts = ts;
		tr->depth -= nend;
		if (name_iid) {
			tr->depth++;
			pf->st.slices++;
		}
		commit_values(pf, values, nvalues, ts);
		return 0;
	}
	/* the general way, one event after the other, the values on the first */
	for (unsigned int k = 0; k < nend + !!name_iid; k++) {
		struct blk_perfetto_event ev = {.track = track, .ts = ts, .name_iid = name_iid};

		if (!k) {
			ev.values = values;
			ev.nvalues = nvalues;
		}
		if ((ret = event(pf, k < nend ? TYPE_SLICE_END : TYPE_SLICE_BEGIN, &ev)))
			return ret;
	}
	return 0;
}

int blk_perfetto_begin(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_SLICE_BEGIN, ev);
}

int blk_perfetto_end(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_SLICE_END, ev);
}

int blk_perfetto_end_at(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts)
{
	struct blk_perfetto_event ev = {.track = track_uuid, .ts = ts};

	return event(pf, TYPE_SLICE_END, &ev);
}

int blk_perfetto_instant(struct blk_perfetto *pf, const struct blk_perfetto_event *ev)
{
	return event(pf, TYPE_INSTANT, ev);
}

static int counter(struct blk_perfetto *pf, uint64_t uuid, uint64_t ts, int is_double,
		   int64_t value, double d)
{
	struct pf_track *tr = pf_track_of(pf, uuid);
	struct blk_pb *pb = &pf->pkt;
	int ret;

	if (pf->err)
		return pf->err;
	if (!tr || tr->type != BLK_PERFETTO_TRACK_COUNTER || ts < tr->last_ts ||
	    (is_double && tr->incremental))
		return -EINVAL;
	blk_perfetto_pkt_begin(pf, 1, ts);
	blk_pb_begin(pb, F_PKT_TRACK_EVENT);
	blk_pb_varint(pb, F_EV_TYPE, TYPE_COUNTER);
	blk_pb_varint(pb, F_EV_TRACK, uuid);
	if (is_double)
		blk_pb_double(pb, F_EV_DOUBLE_COUNTER, d);
	else if (tr->incremental)
		blk_pb_int(pb, F_EV_COUNTER, (int64_t)((uint64_t)value - (uint64_t)tr->last_value));
	else
		blk_pb_int(pb, F_EV_COUNTER, value);
	blk_pb_end(pb);
	if ((ret = blk_perfetto_pkt_finish(pf)))
		return ret;
	if (!pf->pkt_relative)
		pf->st.absolute++;
	tr->last_ts = ts;
	tr->last_value = value;
	pf->st.counters++;
	return 0;
}

int blk_perfetto_counter(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts, int64_t value)
{
	return counter(pf, track_uuid, ts, 0, value, 0);
}

int blk_perfetto_counter_double(struct blk_perfetto *pf, uint64_t track_uuid, uint64_t ts,
				double value)
{
	return counter(pf, track_uuid, ts, 1, 0, value);
}
