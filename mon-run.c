// SPDX-License-Identifier: GPL-2.0
/*
 * blkiomon's run (mon-run.h): pairing, statistics, reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "mon-run.h"
#include "blk/hist.h"

#define SIZE_BUCKETS 16
#define D2C_BUCKETS 25

struct minmax {
	uint64_t min, max, sum, sos, num;
};

/* The classic statistics record (written big-endian with -b, 424 bytes). */
struct mon_stat {
	uint64_t time;
	uint32_t size_hist[SIZE_BUCKETS];
	uint32_t d2c_hist[D2C_BUCKETS];
	uint32_t device;
	struct minmax size_r, size_w, d2c_r, d2c_w, thrput_r, thrput_w;
	uint64_t bidir;
};

struct dstat {
	struct dstat *next;
	struct mon_stat s;
	struct blk_hist d2c; /* percentiles (--percentiles, --csv) */
	uint64_t before_issue; /* in this interval: completions before their issue, left out */
	int used;
};

struct parked {
	struct parked *next;
	struct blk_event ev; /* no payload kept */
};

/*
 * ---- The classic tool's arithmetic, reproduced by default (text and -b records stay
 * byte-identical) ----
 * Its variance squares the sum in 64-bit integers, which wraps for large sums; the rest is
 * double. Its throughput multiplies the request size by 1000 in 32 bits before dividing
 * by the D2C time, which wraps for requests over 4294967 bytes (4 MiB + 3711 bytes, e.g.
 * large discards); --exact-throughput computes it in 64 bits.
 */
static double classic_var(uint64_t sum, uint64_t sos, uint64_t num)
{
	uint64_t sum2 = sum * sum;

	return num ? ((double)sos - (double)sum2 / (double)num) / (double)num : 0.0;
}

static uint64_t throughput(uint32_t bytes, uint64_t d2c_us, int exact)
{
	uint64_t scaled = exact ? (uint64_t)bytes * 1000 : (uint32_t)(bytes * 1000u);

	/* the classic tool divides by zero when D->C is under 1 us: count it as 1 us */
	return scaled / (d2c_us ? d2c_us : 1);
}

/* ---- statistics ---- */

static void minmax_reset(struct minmax *m)
{
	memset(m, 0, sizeof(*m));
	m->min = UINT64_MAX;
}

static void stat_reset(struct mon_stat *s, uint32_t dev)
{
	memset(s, 0, sizeof(*s));
	s->device = dev;
	minmax_reset(&s->size_r);
	minmax_reset(&s->size_w);
	minmax_reset(&s->d2c_r);
	minmax_reset(&s->d2c_w);
	minmax_reset(&s->thrput_r);
	minmax_reset(&s->thrput_w);
}

static void minmax_add(struct minmax *m, uint64_t v)
{
	m->sum += v;
	m->sos += v * v;
	if (v < m->min)
		m->min = v;
	if (v > m->max)
		m->max = v;
	m->num++;
}

/* Bucket i holds values up to first + (delta << (i - 1)); the last one takes the rest. */
static uint64_t bucket_limit(unsigned int i, uint64_t first, uint64_t delta)
{
	return first + (i ? delta << (i - 1) : 0);
}

static void hist_add(uint32_t *h, unsigned int n, uint64_t first, uint64_t delta, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < n - 1 && v > bucket_limit(i, first, delta); i++)
		;
	h[i]++;
}

static struct dstat *get_dstat(struct mon *m, uint32_t dev)
{
	struct dstat *d;

	for (d = m->devs; d; d = d->next)
		if (d->s.device == dev)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		die("out of memory");
	stat_reset(&d->s, dev);
	blk_hist_clear(&d->d2c);
	d->next = m->devs;
	m->devs = d;
	return d;
}

static void account(struct mon *m, const struct blk_event *d, const struct blk_event *c)
{
	uint64_t d2c = (c->time - d->time) / 1000, size = d->bytes, thrput;
	struct dstat *ds = get_dstat(m, d->device);
	uint32_t dir = (uint32_t)(c->action >> BLK_TC_SHIFT) & (BLK_TC_READ | BLK_TC_WRITE);

	if (!d2c)
		m->zero_d2c++;
	thrput = throughput(d->bytes, d2c, m->o->exact_thrput);
	if (dir & BLK_TC_READ) {
		minmax_add(&ds->s.thrput_r, thrput);
		minmax_add(&ds->s.size_r, size);
		minmax_add(&ds->s.d2c_r, d2c);
	} else if (dir & BLK_TC_WRITE) {
		minmax_add(&ds->s.thrput_w, thrput);
		minmax_add(&ds->s.size_w, size);
		minmax_add(&ds->s.d2c_w, d2c);
	} else {
		ds->s.bidir++;
	}
	hist_add(ds->s.size_hist, SIZE_BUCKETS, 0, 1024, size);
	hist_add(ds->s.d2c_hist, D2C_BUCKETS, 0, 8, d2c);
	blk_hist_add(&ds->d2c, d2c);
	ds->used = 1;
	m->matched++;
}

#define MATCH_BITS BLK_TC_ACT(BLK_TC_READ | BLK_TC_WRITE | BLK_TC_FS | BLK_TC_PC)

static void debug_event(struct mon *m, const char *what, const struct blk_event *ev)
{
	if (!m->debug)
		return;
	fprintf(m->debug, "%s: %u,%u sector %llu bytes %u action 0x%x time %llu\n", what,
		BLK_MAJOR(ev->device), BLK_MINOR(ev->device), (unsigned long long)ev->sector,
		ev->bytes, (uint32_t)ev->action, (unsigned long long)ev->time);
}

static void park(struct mon *m, struct parked *p)
{
	p->next = m->park[p->ev.sector % PARK_BUCKETS];
	m->park[p->ev.sector % PARK_BUCKETS] = p;
}

static void recycle(struct mon *m, struct parked *p)
{
	p->next = m->free_parked;
	m->free_parked = p;
}

/*
 * Pair each issue with its completion (same device, sector and direction bits) as the
 * classic tool does: of the two records that meet, the older by time must be the issue and
 * the younger the completion; otherwise the older one is dropped and the younger waits.
 * A completion read before its issue (a stream out of time order: per-CPU chunks) still
 * pairs, and no D2C is negative.
 */
static void pair(struct mon *m, const struct blk_event *ev)
{
	struct parked **pp = &m->park[ev->sector % PARK_BUCKETS], *p;
	const struct blk_event *old, *young;

	for (; (p = *pp); pp = &p->next) {
		if (p->ev.device == ev->device && p->ev.sector == ev->sector &&
		    ((uint32_t)p->ev.action & MATCH_BITS) == ((uint32_t)ev->action & MATCH_BITS))
			break;
	}
	if (p) {
		int parked_older = p->ev.time < ev->time; /* a tie: the record read is older */

		*pp = p->next;
		old = parked_older ? &p->ev : ev;
		young = parked_older ? ev : &p->ev;
		if (blk_event_has_cat(old, BLK_TC_ISSUE) &&
		    blk_event_has_cat(young, BLK_TC_COMPLETE)) {
			account(m, old, young);
			recycle(m, p);
			return;
		}
		if (ev->time < p->ev.time && blk_event_has_cat(&p->ev, BLK_TC_ISSUE) &&
		    blk_event_has_cat(ev, BLK_TC_COMPLETE)) {
			/*
			 * A completion older than the issue read before it: it completes an
			 * earlier request (an unordered stream). Taken as a pair, its D2C would
			 * be negative; counted, and dropped as the classic tool drops it.
			 */
			struct dstat *ds = get_dstat(m, ev->device);

			ds->before_issue++;
			ds->used = 1;
			m->before_issue++;
		}
		debug_event(m, "mismatch", old);
		m->dropped++;
		if (!parked_older) {
			park(m, p); /* the parked record is the younger: it waits on */
			return;
		}
		recycle(m, p);
	}
	p = m->free_parked;
	if (p)
		m->free_parked = p->next;
	else if (!(p = malloc(sizeof(*p))))
		die("out of memory");
	p->ev = *ev;
	p->ev.pdu = NULL;
	p->ev.pdu_len = 0;
	park(m, p);
}

static void print_minmax(FILE *f, const char *name, const struct minmax *mm)
{
	double avg = mm->num ? (double)mm->sum / (double)mm->num : 0.0;
	double var = classic_var(mm->sum, mm->sos, mm->num); /* --csv has no variance */

	fprintf(f, "%s: num %llu, min %lld, max %llu, sum %llu, squ %llu, avg %.1f, var %.1f\n",
		name, (unsigned long long)mm->num, (long long)mm->min, (unsigned long long)mm->max,
		(unsigned long long)mm->sum, (unsigned long long)mm->sos, avg, var);
}

static void print_hist(FILE *f, const char *name, const uint32_t *h, unsigned int n, uint64_t first,
		       uint64_t delta)
{
	unsigned int i;

	fprintf(f, "%s:\n", name);
	for (i = 0; i < n - 1; i++) {
		fprintf(f, "   %10llu:%6u", (unsigned long long)bucket_limit(i, first, delta),
			h[i]);
		if (!((i + 1) % 4))
			fprintf(f, "\n");
	}
	fprintf(f, "    >%8llu:%6u\n", (unsigned long long)bucket_limit(i - 1, first, delta), h[i]);
}

static void put_be(unsigned char **p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*(*p)++ = (unsigned char)(v >> (8 * i));
}

static size_t encode_stat(const struct mon_stat *s, unsigned char *buf)
{
	unsigned char *p = buf;
	const struct minmax *mm[6] = {&s->size_r, &s->size_w,	&s->d2c_r,
				      &s->d2c_w,  &s->thrput_r, &s->thrput_w};

	put_be(&p, s->time, 8);
	for (int i = 0; i < SIZE_BUCKETS; i++)
		put_be(&p, s->size_hist[i], 4);
	for (int i = 0; i < D2C_BUCKETS; i++)
		put_be(&p, s->d2c_hist[i], 4);
	put_be(&p, s->device, 4);
	for (int i = 0; i < 6; i++) {
		put_be(&p, mm[i]->min, 8);
		put_be(&p, mm[i]->max, 8);
		put_be(&p, mm[i]->sum, 8);
		put_be(&p, mm[i]->sos, 8);
		put_be(&p, mm[i]->num, 8);
	}
	put_be(&p, s->bidir, 8);
	return (size_t)(p - buf);
}

/* End an interval at wall-clock second @when: print and reset every device with data. */
static void report(struct mon *m, time_t when, const char *label)
{
	for (struct dstat *d = m->devs; d; d = d->next) {
		struct mon_stat *s = &d->s;
		char tbuf[64];

		if (!d->used)
			continue;
		s->time = (uint64_t)when;
		if (m->human) {
			FILE *f = m->human;

			if (label)
				fprintf(f, "\ntime: %s\n", label);
			else
				fprintf(f, "\ntime: %s", ctime_r(&when, tbuf));
			fprintf(f, "device: %u,%u\n", BLK_MAJOR(s->device), BLK_MINOR(s->device));
			print_minmax(f, "sizes read (bytes)", &s->size_r);
			print_minmax(f, "sizes write (bytes)", &s->size_w);
			print_minmax(f, "d2c read (usec)", &s->d2c_r);
			print_minmax(f, "d2c write (usec)", &s->d2c_w);
			print_minmax(f, "throughput read (bytes/msec)", &s->thrput_r);
			print_minmax(f, "throughput write (bytes/msec)", &s->thrput_w);
			print_hist(f, "sizes histogram (bytes)", s->size_hist, SIZE_BUCKETS, 0,
				   1024);
			print_hist(f, "d2c histogram (usec)", s->d2c_hist, D2C_BUCKETS, 0, 8);
			fprintf(f, "bidirectional requests: %llu\n", (unsigned long long)s->bidir);
			if (d->before_issue) /* an addition: never printed for an ordered stream */
				fprintf(f, "completions before their issue (left out): %llu\n",
					(unsigned long long)d->before_issue);
			if (m->o->percentiles)
				fprintf(f,
					"d2c percentiles (usec): p50 %llu, p99 %llu, p99.9 %llu, max %llu\n",
					(unsigned long long)blk_hist_percentile(&d->d2c, 50),
					(unsigned long long)blk_hist_percentile(&d->d2c, 99),
					(unsigned long long)blk_hist_percentile(&d->d2c, 99.9),
					(unsigned long long)d->d2c.max);
			fflush(f);
		}
		if (m->csv) {
			const struct minmax *r = &s->size_r, *w = &s->size_w;

			fprintf(m->csv,
				"%lld,%u,%u,%llu,%llu,%llu,%llu,%.1f,%.1f,%llu,%llu,%llu,%llu\n",
				(long long)when, BLK_MAJOR(s->device), BLK_MINOR(s->device),
				(unsigned long long)r->num, (unsigned long long)w->num,
				(unsigned long long)r->sum, (unsigned long long)w->sum,
				s->d2c_r.num ? (double)s->d2c_r.sum / (double)s->d2c_r.num : 0.0,
				s->d2c_w.num ? (double)s->d2c_w.sum / (double)s->d2c_w.num : 0.0,
				(unsigned long long)blk_hist_percentile(&d->d2c, 50),
				(unsigned long long)blk_hist_percentile(&d->d2c, 99),
				(unsigned long long)blk_hist_percentile(&d->d2c, 99.9),
				(unsigned long long)s->bidir);
			fflush(m->csv);
		}
		if (m->binary || m->msq >= 0) {
			unsigned char buf[sizeof(long) + 512];
			size_t n = encode_stat(s, buf + sizeof(long));

			if (m->binary && (blk_output_write(m->binary, buf + sizeof(long), n) ||
					  blk_output_flush(m->binary)))
				die("%s", blk_output_error(m->binary));
			if (m->msq >= 0) {
				long mtype = m->o->msg_id;

				memcpy(buf, &mtype, sizeof(mtype));
				if (msgsnd(m->msq, buf, n, 0))
					error("msgsnd: %s", strerror(errno));
			}
		}
		stat_reset(s, s->device);
		blk_hist_clear(&d->d2c);
		d->before_issue = 0;
		d->used = 0;
	}
}

/*
 * The end of the trace-time interval after the one ending at @end, where a record at @t
 * goes next. The intervals in between hold no record, and report() prints nothing for
 * them: skip them all at once (a record far ahead, say a damaged time, would otherwise
 * cost one call per interval: 2^62 ns ahead, 4.6e9 calls). Saturates at UINT64_MAX.
 */
static uint64_t next_end(uint64_t end, uint64_t interval, uint64_t t)
{
	if (t >= end && t - end >= interval)
		end += (t - end) / interval * interval;
	return end > UINT64_MAX - interval ? UINT64_MAX : end + interval;
}

int mon_run(struct mon *m, struct blk_reader *r)
{
	const struct mon_opts *o = m->o;
	struct blk_event ev;
	struct timespec start;
	uint64_t first_time = 0, interval_ns, cur_end = 0;
	time_t next_wall;
	int ret, have_first = 0;

	interval_ns = (uint64_t)o->interval * 1000000000ull;
	clock_gettime(CLOCK_REALTIME, &start);
	next_wall = start.tv_sec + (time_t)o->interval;
	for (;;) {
		if (!o->trace_time) {
			struct timespec now;
			long long ms;

			clock_gettime(CLOCK_REALTIME, &now);
			ms = ((long long)next_wall - now.tv_sec) * 1000 - now.tv_nsec / 1000000;
			blk_reader_set_wait(r, ms > 0 ? (int)ms : 0);
			if (ms <= 0 || !blk_reader_ready(r)) {
				clock_gettime(CLOCK_REALTIME, &now);
				if (now.tv_sec >= next_wall) {
					report(m, next_wall, NULL);
					next_wall += (time_t)o->interval;
				}
				continue;
			}
		}
		ret = blk_reader_next(r, &ev);
		if (ret <= 0)
			break;
		if (blk_event_action32(&ev) == BLK_TN_ACTION(BLK_TN_TIMESTAMP) && ev.pdu_len >= 8) {
			uint32_t w[2];

			memcpy(w, ev.pdu, 8);
			m->have_ts = 1;
			m->ts_sec = w[0];
			m->ts_time = ev.time;
		}
		if (blk_event_code(&ev) == BLK_TA_DRV_DATA && m->lldd) {
			if (blk_output_event(m->lldd, &ev))
				die("%s", blk_output_error(m->lldd));
			continue;
		}
		if (blk_event_is_notify(&ev) ||
		    !blk_event_has_cat(&ev, BLK_TC_ISSUE | BLK_TC_COMPLETE))
			continue;
		if (o->trace_time) {
			if (!have_first) {
				have_first = 1;
				first_time = ev.time;
				cur_end = first_time > UINT64_MAX - interval_ns
						  ? UINT64_MAX
						  : first_time + interval_ns;
				/*
				 * The timestamp note pairs wall and trace time only when both are
				 * on the same clock: in a blkparse -d dump the events are rebased
				 * and the note is not, so it cannot be used there.
				 */
				if (m->have_ts && (ev.time < m->ts_time ||
						   ev.time - m->ts_time > 86400ull * 1000000000ull))
					m->have_ts = 0;
			}
			while (ev.time >= cur_end && cur_end != UINT64_MAX) {
				char label[64];

				snprintf(label, sizeof(label), "%llu s",
					 (unsigned long long)((cur_end - first_time) /
							      1000000000ull));
				report(m,
				       (time_t)(m->have_ts ? m->ts_sec : 0) +
					       (time_t)((cur_end -
							 (m->have_ts ? m->ts_time : first_time)) /
							1000000000ull),
				       m->have_ts ? NULL : label);
				cur_end = next_end(cur_end, interval_ns, ev.time);
			}
		}
		pair(m, &ev);
	}
	if (ret < 0)
		error("%s", blk_reader_error(r));
	/* unlike the classic tool, the last (partial) interval is reported too */
	if (o->trace_time && have_first) {
		char label[64];

		snprintf(label, sizeof(label), "%llu s (end of trace)",
			 (unsigned long long)((cur_end - first_time) / 1000000000ull));
		report(m,
		       (time_t)(m->have_ts ? m->ts_sec : 0) +
			       (time_t)((cur_end - (m->have_ts ? m->ts_time : first_time)) /
					1000000000ull),
		       m->have_ts ? NULL : label);
	} else if (!o->trace_time) {
		report(m, time(NULL), NULL);
	}
	for (int i = 0; i < PARK_BUCKETS; i++) {
		for (struct parked *p = m->park[i], *n; p; p = n) {
			n = p->next;
			debug_event(m, "leftover", &p->ev);
			m->leftover++;
			free(p);
		}
		m->park[i] = NULL;
	}
	for (struct parked *p = m->free_parked, *n; p; p = n) {
		n = p->next;
		free(p);
	}
	m->free_parked = NULL;
	if (m->debug)
		fprintf(m->debug,
			"matched %llu, dropped %llu, leftover %llu, D2C under 1 us %llu, completions before their issue %llu\n",
			(unsigned long long)m->matched, (unsigned long long)m->dropped,
			(unsigned long long)m->leftover, (unsigned long long)m->zero_d2c,
			(unsigned long long)m->before_issue);
	if (m->before_issue) {
		warning("%llu completions came before the issue they met (the input is not in time order); they were left out of the statistics",
			(unsigned long long)m->before_issue);
		hint("blktrace -o - sends each CPU's records in chunks; a saved stream sorted with 'blkparse -i FILE -d SORTED -O' pairs them all");
	}
	if (m->zero_d2c)
		warning("%llu requests completed less than 1 us after issue (the classic blkiomon dies on them); their throughput was computed with 1 us",
			(unsigned long long)m->zero_d2c);
	for (struct dstat *d = m->devs, *n; d; d = n) {
		n = d->next;
		free(d);
	}
	m->devs = NULL;
	return ret;
}
