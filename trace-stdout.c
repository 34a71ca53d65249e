// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace -o -: the records of every stream held in a bounded window (blk/window.h) and
 * written to stdout in time order by a thread of their own (trace-stdout.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "trace-stdout.h"

#define STDOUT_WINDOW (128u << 20) /* records held while waiting for the slowest CPU */
#define STDOUT_CHUNK (1u << 20)

static void *stdout_thread(void *arg)
{
	struct bt_run *r = arg;
	struct bt_stdout *so = &r->so;
	size_t cap = STDOUT_CHUNK + 64 + 65536;
	unsigned char *buf = malloc(cap);
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&so->mu);
	if (!buf)
		so->err = -ENOMEM;
	while (buf) {
		size_t n = blk_window_take(so->win, buf, STDOUT_CHUNK,
					   so->pressure || so->readers_done);
		struct timespec ts;

		if (n) {
			int ret;

			so->pressure = 0;
			pthread_cond_broadcast(&so->space);
			pthread_mutex_unlock(&so->mu);
			ret = blk_output_write(so->out, buf, n);
			if (!ret)
				ret = blk_output_flush(so->out);
			pthread_mutex_lock(&so->mu);
			if (ret && !so->err) {
				so->err = ret;
				/* a lost output ends the run (threads block signals: main gets it) */
				kill(getpid(), SIGTERM);
			}
			continue;
		}
		if (so->readers_done)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_nsec -= 1000000000L;
			ts.tv_sec++;
		}
		pthread_cond_timedwait(&so->data, &so->mu, &ts);
	}
	pthread_mutex_unlock(&so->mu);
	free(buf);
	return NULL;
}

int trace_stdout_open(struct bt_run *r)
{
	struct bt_stdout *so = &r->so;
	int ret, nstreams = 0;

	for (int j = 0; j < r->nsrc; j++) {
		r->src[j].win_base = nstreams;
		nstreams += r->ncpus * r->src[j].nout;
	}
	so->out = blk_output_fdopen(STDOUT_FILENO, "(stdout)", BLK_OUTPUT_NOCLOSE);
	so->win = blk_window_new(nstreams, STDOUT_WINDOW);
	if (!so->out || !so->win)
		return error("out of memory");
	pthread_mutex_init(&so->mu, NULL);
	pthread_cond_init(&so->data, NULL);
	pthread_cond_init(&so->space, NULL);
	ret = pthread_create(&so->th, NULL, stdout_thread, r);
	if (ret)
		return error("cannot start the stdout writer: %s", strerror(ret));
	so->started = 1;
	return 0;
}

int trace_stdout_push(struct bt_run *r, int stream, const unsigned char *p, size_t n)
{
	struct bt_stdout *so = &r->so;
	int ret;

	pthread_mutex_lock(&so->mu);
	while ((ret = blk_window_push(so->win, stream, p, n)) == -ENOBUFS && !so->err) {
		so->pressure = 1;
		pthread_cond_signal(&so->data);
		pthread_cond_wait(&so->space, &so->mu);
	}
	if (!ret)
		pthread_cond_signal(&so->data);
	else if (so->err)
		ret = so->err;
	pthread_mutex_unlock(&so->mu);
	return ret;
}

int trace_stdout_close(struct bt_run *r, uint64_t *late)
{
	struct bt_stdout *so = &r->so;
	int ret = 0;

	if (so->started) {
		pthread_mutex_lock(&so->mu);
		so->readers_done = 1;
		pthread_cond_signal(&so->data);
		pthread_mutex_unlock(&so->mu);
		pthread_join(so->th, NULL);
		ret = so->err;
		pthread_mutex_destroy(&so->mu);
		pthread_cond_destroy(&so->data);
		pthread_cond_destroy(&so->space);
	}
	*late = so->win ? blk_window_late(so->win) : 0;
	if (so->out && blk_output_finish(so->out) && !ret)
		ret = -EIO;
	return ret;
}

void trace_stdout_mark(struct bt_run *r, int stream, uint64_t time)
{
	pthread_mutex_lock(&r->so.mu);
	blk_window_mark(r->so.win, stream, time);
	pthread_cond_signal(&r->so.data);
	pthread_mutex_unlock(&r->so.mu);
}
