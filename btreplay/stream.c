// SPDX-License-Identifier: GPL-2.0
/*
 * The replay of one replay file: scan it once to check it against its target and count what
 * it holds, then, in a thread pinned to a CPU, issue its bunches with libaio and O_DIRECT at
 * the recorded time (divided by -x) or as fast as possible (-N).
 */
#include <errno.h>
#include <libaio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "replay-file.h"
#include "target.h"
#include "stream.h"

#define RP_DEPTH 512 /* iocbs per replay file (one aio context each) */
#define RP_MAX_IO (64u << 20) /* larger packets (whole-device discards) are skipped */
#define RP_SLEEP_SLICE_NS 100000000ll /* sleeps are cut into slices to notice a stop */
#define NSEC 1000000000ll

/* ---- before the replay: open, scan, set up ---- */

/* Read the next bunch of @f at *@off into @hdr/@pkts; 1, 0 at the end, -1 on damage. */
static int read_bunch(FILE *f, const char *name, uint64_t *off, struct rf_bunch_hdr *hdr,
		      struct rf_pkt *pkts, char *err, size_t elen)
{
	size_t n = fread(hdr, 1, sizeof(*hdr), f);

	if (n == 0 && !ferror(f))
		return 0;
	if (n != sizeof(*hdr))
		goto short_read;
	if (hdr->npkts < 1 || hdr->npkts > RF_MAX_PKTS) {
		snprintf(err, elen, "'%s': bad bunch of %llu packets at offset %llu (damaged?)",
			 name, (unsigned long long)hdr->npkts, (unsigned long long)*off);
		return -1;
	}
	n = fread(pkts, sizeof(*pkts), hdr->npkts, f);
	if (n != hdr->npkts)
		goto short_read;
	*off += sizeof(*hdr) + hdr->npkts * sizeof(*pkts);
	return 1;
short_read:
	if (ferror(f))
		snprintf(err, elen, "'%s': read error at offset %llu: %s", name,
			 (unsigned long long)*off, strerror(errno));
	else
		snprintf(err, elen, "'%s': truncated bunch at offset %llu", name,
			 (unsigned long long)*off);
	return -1;
}

/* Check one packet against the target; if it cannot work, say so naming both: -1. */
static int check_pkt(const struct rp_stream *s, const struct rf_pkt *p, uint64_t off)
{
	const struct rp_target *t = s->tgt;
	uint64_t start = p->sector << 9;

	if (!p->nbytes || p->nbytes > RP_MAX_IO)
		return 0;
	if (p->sector > (UINT64_MAX >> 9) || start + p->nbytes > t->size) {
		error("'%s': the I/O at sector %llu (%llu bytes, bunch at offset %llu) lies beyond the end of '%s' (%llu bytes)",
		      s->in->path, (unsigned long long)p->sector, (unsigned long long)p->nbytes,
		      (unsigned long long)off, t->path, (unsigned long long)t->size);
		hint("replay onto a device at least as large as the recorded one (map it with -M)");
		return -1;
	}
	if (start % t->lbs || p->nbytes % t->lbs) {
		error("'%s': the I/O at sector %llu (%llu bytes) is not aligned to the %u-byte blocks of '%s'",
		      s->in->path, (unsigned long long)p->sector, (unsigned long long)p->nbytes,
		      t->lbs, t->path);
		hint("direct I/O must be aligned to the device's logical block size; replay onto a device with %s-byte blocks",
		     p->nbytes % 4096 || start % 4096 ? "512" : "smaller");
		return -1;
	}
	return 0;
}

int stream_open(struct rp_stream *s)
{
	struct rf_file_hdr fh;
	int ret;

	s->f = fopen(s->in->path, "re");
	if (!s->f)
		return error("cannot open '%s': %s", s->in->path, strerror(errno));
	if (fread(&fh, sizeof(fh), 1, s->f) != 1) {
		error("'%s': %s", s->in->path,
		      ferror(s->f) ? strerror(errno) : "too short for a replay file header");
		return -1;
	}
	ret = rf_check_hdr(&fh);
	if (ret) {
		error("'%s': %s", s->in->path,
		      ret == -EPROTO
			      ? "written on a host of the other byte order (replay files are in host order)"
			      : "not a replay file (bad version; btrecord writes version 0x10000)");
		return -1;
	}
	return 0;
}

int stream_scan(struct rp_stream *s)
{
	struct rf_bunch_hdr hdr;
	struct rf_pkt pkts[RF_MAX_PKTS];
	uint64_t off = sizeof(struct rf_file_hdr);
	char err[600];
	int ret;

	while ((ret = read_bunch(s->f, s->in->path, &off, &hdr, pkts, err, sizeof(err))) > 0) {
		if (!s->scan.bunches)
			s->scan.first_ts = hdr.time_stamp;
		s->scan.bunches++;
		s->scan.last_ts = hdr.time_stamp;
		for (uint64_t i = 0; i < hdr.npkts; i++) {
			const struct rf_pkt *p = &pkts[i];

			if (check_pkt(s, p, off - sizeof(hdr) - hdr.npkts * sizeof(*p)))
				return -1;
			s->scan.pkts++;
			if (!p->nbytes) {
				s->scan.flushes += !p->rw;
				continue;
			}
			if (p->nbytes > RP_MAX_IO) {
				s->scan.big++;
				continue;
			}
			if (p->rw)
				s->scan.reads++;
			else
				s->scan.writes++;
			s->scan.bytes += p->nbytes;
			if (p->nbytes > s->scan.max_bytes)
				s->scan.max_bytes = p->nbytes;
		}
	}
	if (ret < 0) {
		error("%s", err);
		hint("make the replay files again with btrecord");
		return -1;
	}
	if (s->scan.big)
		warning("'%s': %llu I/Os larger than %u MiB will be skipped (discards of whole devices?)",
			s->in->path, (unsigned long long)s->scan.big, RP_MAX_IO >> 20);
	return 0;
}

/* A page-aligned buffer of @n bytes, or NULL after saying so. */
static void *alloc_buf(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t sz = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	void *p;

	if (posix_memalign(&p, (size_t)pg, sz ? sz : (size_t)pg)) {
		error("out of memory (%zu-byte I/O buffer)", sz);
		return NULL;
	}
	return p;
}

/* Writes carry a fixed, incompressible pattern rather than zeros that devices may elide. */
static void fill_pattern(void *buf, size_t n, uint64_t seed)
{
	uint64_t *w = buf, x = seed;

	for (size_t i = 0; i < n / 8; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		w[i] = z ^ (z >> 31);
	}
}

int stream_setup_aio(struct rp_stream *s)
{
	int ret;

	ret = io_setup(RP_DEPTH, &s->ctx);
	if (ret < 0) {
		error("io_setup for '%s' failed: %s", s->in->path, strerror(-ret));
		if (ret == -EAGAIN)
			hint("the system-wide limit of asynchronous I/O events is reached; raise /proc/sys/fs/aio-max-nr (%zu replay files need %zu)",
			     s->sh->nstreams, s->sh->nstreams * RP_DEPTH);
		else if (ret == -ENOSYS)
			hint("this kernel has no asynchronous I/O (CONFIG_AIO)");
		return -1;
	}
	s->iocbs = calloc(RP_DEPTH, sizeof(*s->iocbs));
	s->free = calloc(RP_DEPTH, sizeof(*s->free));
	s->batch = calloc(RP_DEPTH, sizeof(*s->batch));
	s->events = calloc(RP_DEPTH, sizeof(*s->events));
	if (!s->iocbs || !s->free || !s->batch || !s->events)
		return error("out of memory");
	for (int i = 0; i < RP_DEPTH; i++)
		s->free[i] = &s->iocbs[i];
	s->nfree = RP_DEPTH;
	s->rbuf = alloc_buf(s->scan.max_bytes);
	if (!s->rbuf)
		return -1;
	if (s->sh->write_enable && s->scan.writes) {
		s->wbuf = alloc_buf(s->scan.max_bytes);
		if (!s->wbuf)
			return -1;
		fill_pattern(s->wbuf, s->scan.max_bytes, 0x62747265706c6179ull + (uint64_t)s->cpu);
	}
	return 0;
}

/* ---- the replay threads ---- */

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC + t->tv_nsec;
}

int64_t rp_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

static void fail(struct rp_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct rp_stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	s->failed = 1;
}

/* Sleep until @deadline (CLOCK_MONOTONIC ns), in slices so that a stop (*@stop) is noticed. */
static void sleep_until(int64_t deadline, const volatile sig_atomic_t *stop)
{
	for (;;) {
		int64_t now = rp_now_ns(), until = deadline;
		struct timespec ts;

		if (now >= deadline || *stop)
			return;
		if (until - now > RP_SLEEP_SLICE_NS)
			until = now + RP_SLEEP_SLICE_NS;
		ts.tv_sec = until / NSEC;
		ts.tv_nsec = until % NSEC;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void complete(struct rp_stream *s, const struct io_event *ev)
{
	struct iocb *cb = ev->obj;
	long res = (long)ev->res;
	size_t want = cb->u.c.nbytes;

	if (res < 0) {
		if (!s->errors++)
			warning("%s of %zu bytes at sector %llu on '%s' failed: %s (replaying '%s'; further errors are counted)",
				cb->aio_lio_opcode == IO_CMD_PWRITE ? "write" : "read", want,
				(unsigned long long)(cb->u.c.offset >> 9), s->tgt->path,
				strerror((int)-res), s->in->path);
	} else if ((size_t)res != want) {
		s->short_ios++;
	}
	s->free[s->nfree++] = cb;
}

/* Collect at least @min completions. */
static int reap(struct rp_stream *s, int min)
{
	int inflight = RP_DEPTH - s->nfree - s->nbatch;

	if (min > inflight)
		min = inflight;
	while (inflight > 0) {
		int r = io_getevents(s->ctx, min, RP_DEPTH, s->events, NULL);

		if (r == -EINTR)
			continue;
		if (r < 0) {
			fail(s, "io_getevents on '%s' failed: %s", s->tgt->path, strerror(-r));
			return -1;
		}
		for (int i = 0; i < r; i++)
			complete(s, &s->events[i]);
		break;
	}
	return 0;
}

static int submit(struct rp_stream *s)
{
	struct iocb **list = s->batch;
	int n = s->nbatch, tries = 0;

	while (n > 0) {
		int r = io_submit(s->ctx, n, list);

		if (r == -EAGAIN || r == -EINTR) {
			if (++tries > 1000) {
				fail(s, "io_submit on '%s' keeps failing: %s", s->tgt->path,
				     strerror(-r));
				return -1;
			}
			s->nbatch = n;
			if (reap(s, 1))
				return -1;
			continue;
		}
		if (r < 0) {
			fail(s, "io_submit on '%s' failed: %s", s->tgt->path, strerror(-r));
			return -1;
		}
		list += r;
		n -= r;
	}
	s->nbatch = 0;
	return 0;
}

static struct iocb *get_iocb(struct rp_stream *s)
{
	if (!s->nfree && (submit(s) || reap(s, 1)))
		return NULL;
	return s->nfree ? s->free[--s->nfree] : NULL;
}

static void log_io(struct rp_stream *s, char op, const struct rf_pkt *p)
{
	if (s->rep)
		fprintf(s->rep, "\t%c %12llu %10llu\n", op, (unsigned long long)p->sector,
			(unsigned long long)p->nbytes);
}

/* Issue one packet (or queue it in the batch); return -1 on a fatal error. */
static int issue(struct rp_stream *s, const struct rf_pkt *p)
{
	int write = !p->rw && s->sh->write_enable;
	struct iocb *cb;

	if (!p->nbytes || p->nbytes > RP_MAX_IO) {
		if (!p->nbytes && write) {
			/* a flush: issued from this thread, in order, so that it stays on this CPU */
			if (submit(s))
				return -1;
			log_io(s, 'F', p);
			if (fdatasync(s->tgt->fd) && !s->errors++)
				warning("flush of '%s' failed: %s (replaying '%s'; further errors are counted)",
					s->tgt->path, strerror(errno), s->in->path);
			s->flushes++;
		} else {
			log_io(s, '-', p);
			s->skipped++;
		}
		return 0;
	}
	cb = get_iocb(s);
	if (!cb)
		return -1;
	if (write)
		io_prep_pwrite(cb, s->tgt->fd, s->wbuf, p->nbytes, (long long)(p->sector << 9));
	else
		io_prep_pread(cb, s->tgt->fd, s->rbuf, p->nbytes, (long long)(p->sector << 9));
	s->batch[s->nbatch++] = cb;
	log_io(s, write ? 'W' : p->rw ? 'R' : 'r', p);
	s->ios++;
	s->bytes += p->nbytes;
	if (write)
		s->writes++;
	else if (p->rw)
		s->reads++;
	else
		s->as_reads++;
	return 0;
}

static void replay_once(struct rp_stream *s, unsigned long iter)
{
	const struct rp_shared *sh = s->sh;
	int64_t t0 = ts_ns(&sh->t0);
	struct rf_bunch_hdr hdr;
	struct rf_pkt pkts[RF_MAX_PKTS];
	uint64_t off = sizeof(struct rf_file_hdr);
	char err[600];
	int ret = 0;

	if (fseeko(s->f, (off_t)off, SEEK_SET)) {
		fail(s, "'%s': seek failed: %s", s->in->path, strerror(errno));
		return;
	}
	if (s->rep)
		fprintf(s->rep, "# iteration %lu of '%s' onto '%s'\n", iter + 1, s->in->path,
			s->tgt->path);
	while (!*sh->stop &&
	       (ret = read_bunch(s->f, s->in->path, &off, &hdr, pkts, err, sizeof(err))) > 0) {
		uint64_t rel = hdr.time_stamp > sh->genesis ? hdr.time_stamp - sh->genesis : 0;
		int64_t deadline = t0 + (int64_t)(rel / sh->acc), late;

		if (!sh->no_stalls)
			sleep_until(deadline, sh->stop);
		if (*sh->stop)
			break;
		late = rp_now_ns() - deadline;
		if (!sh->no_stalls && late > 0 && (uint64_t)late > s->late_max_ns)
			s->late_max_ns = (uint64_t)late;
		if (s->rep)
			fprintf(s->rep,
				"%llu.%09llu bunch of %llu at +%llu.%09llu (late %lld ns)\n",
				(unsigned long long)((rp_now_ns() - t0) / NSEC),
				(unsigned long long)((rp_now_ns() - t0) % NSEC),
				(unsigned long long)hdr.npkts, (unsigned long long)(rel / NSEC),
				(unsigned long long)(rel % NSEC),
				(long long)(sh->no_stalls ? 0 : late));
		for (uint64_t i = 0; i < hdr.npkts; i++)
			if (issue(s, &pkts[i]))
				return;
		if (submit(s))
			return;
		/* collect what has completed so far, without waiting */
		if (s->nfree < RP_DEPTH) {
			int r = io_getevents(s->ctx, 0, RP_DEPTH, s->events, &(struct timespec){0});

			for (int i = 0; i < r; i++)
				complete(s, &s->events[i]);
		}
	}
	if (ret < 0)
		fail(s, "%s", err);
}

void *stream_thread(void *arg)
{
	struct rp_stream *s = arg;
	struct rp_shared *sh = s->sh;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret)
		warning("cannot pin the replay of '%s' to CPU %d: %s", s->in->path, s->cpu,
			strerror(ret));
	for (unsigned long it = 0; it < sh->iterations; it++) {
		pthread_barrier_wait(&sh->ready);
		pthread_barrier_wait(&sh->go);
		if (s->failed || *sh->stop)
			continue;
		replay_once(s, it);
		while (s->nfree + s->nbatch < RP_DEPTH && !reap(s, RP_DEPTH))
			;
	}
	return NULL;
}

void stream_release(struct rp_stream *s)
{
	if (s->iocbs)
		io_destroy(s->ctx);
	if (s->f)
		fclose(s->f);
	if (s->rep)
		fclose(s->rep);
	free(s->iocbs);
	free(s->free);
	free(s->batch);
	free(s->events);
	free(s->rbuf);
	free(s->wbuf);
}
