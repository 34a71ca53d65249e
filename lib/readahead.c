// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "blk/readahead.h"

enum { RA_FREE, RA_FULL, RA_HELD };

struct ra_slot {
	unsigned char *buf;
	ssize_t len; /* bytes read, 0 at end of file, -errno */
	int state;
};

struct blk_readahead {
	int fd;
	size_t size, headroom;
	int nbuf;
	struct ra_slot *slot;
	int fill_i, get_i; /* next slot to fill; next slot to hand out */
	int stop, ended;
	pthread_mutex_t mu;
	pthread_cond_t full, free;
	pthread_t thread;
};

/* Fill @p with up to @size bytes: short only at end of file. */
static ssize_t read_full(int fd, unsigned char *p, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, p + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return got ? (ssize_t)got : -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void *ra_thread(void *arg)
{
	struct blk_readahead *ra = arg;

	for (;;) {
		struct ra_slot *s;
		ssize_t n;
		int i;

		pthread_mutex_lock(&ra->mu);
		while (!ra->stop && ra->slot[ra->fill_i].state != RA_FREE)
			pthread_cond_wait(&ra->free, &ra->mu);
		if (ra->stop) {
			pthread_mutex_unlock(&ra->mu);
			break;
		}
		i = ra->fill_i;
		pthread_mutex_unlock(&ra->mu);

		s = &ra->slot[i];
		n = read_full(ra->fd, s->buf + ra->headroom, ra->size);

		pthread_mutex_lock(&ra->mu);
		s->len = n;
		s->state = RA_FULL;
		ra->fill_i = (i + 1) % ra->nbuf;
		pthread_cond_signal(&ra->full);
		pthread_mutex_unlock(&ra->mu);
		if (n <= 0)
			break; /* end of file or error: the consumer sees it in this slot */
	}
	return NULL;
}

/* Free the buffers and @ra; with @sync, also the lock and the conditions. */
static void ra_free(struct blk_readahead *ra, int sync)
{
	if (sync) {
		pthread_mutex_destroy(&ra->mu);
		pthread_cond_destroy(&ra->full);
		pthread_cond_destroy(&ra->free);
	}
	if (ra->slot)
		for (int i = 0; i < ra->nbuf; i++)
			free(ra->slot[i].buf);
	free(ra->slot);
	free(ra);
}

struct blk_readahead *blk_readahead_start(int fd, size_t size, size_t headroom, int nbuf)
{
	struct blk_readahead *ra = calloc(1, sizeof(*ra));
	int e;

	if (!ra)
		return NULL;
	ra->fd = fd;
	ra->size = size;
	ra->headroom = headroom;
	ra->nbuf = nbuf < 2 ? 2 : nbuf;
	ra->slot = calloc((size_t)ra->nbuf, sizeof(*ra->slot));
	if (!ra->slot)
		goto nomem;
	for (int i = 0; i < ra->nbuf; i++) {
		ra->slot[i].buf = malloc(headroom + size);
		if (!ra->slot[i].buf)
			goto nomem;
	}
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->full, NULL);
	pthread_cond_init(&ra->free, NULL);
	e = pthread_create(&ra->thread, NULL, ra_thread, ra);
	if (e) {
		ra_free(ra, 1);
		errno = e;
		return NULL;
	}
	return ra;
nomem:
	ra_free(ra, 0);
	errno = ENOMEM;
	return NULL;
}

int blk_readahead_get(struct blk_readahead *ra, unsigned char **buf, size_t *len)
{
	struct ra_slot *s;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	if (ra->ended)
		return 0;
	pthread_mutex_lock(&ra->mu);
	s = &ra->slot[ra->get_i];
	while (s->state != RA_FULL)
		pthread_cond_wait(&ra->full, &ra->mu);
	n = s->len;
	if (n > 0) {
		s->state = RA_HELD;
		ra->get_i = (ra->get_i + 1) % ra->nbuf;
	} else {
		ra->ended = 1; /* the thread has stopped; the slot stays as it is */
	}
	pthread_mutex_unlock(&ra->mu);
	if (n < 0)
		return (int)n;
	if (n > 0) {
		*buf = s->buf;
		*len = (size_t)n;
	}
	return 0;
}

void blk_readahead_put(struct blk_readahead *ra, unsigned char *buf)
{
	pthread_mutex_lock(&ra->mu);
	for (int i = 0; i < ra->nbuf; i++) {
		if (ra->slot[i].buf == buf && ra->slot[i].state == RA_HELD) {
			ra->slot[i].state = RA_FREE;
			pthread_cond_signal(&ra->free);
			break;
		}
	}
	pthread_mutex_unlock(&ra->mu);
}

void blk_readahead_stop(struct blk_readahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	pthread_cond_signal(&ra->free);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->thread, NULL);
	ra_free(ra, 1);
}
