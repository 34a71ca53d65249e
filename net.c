// SPDX-License-Identifier: GPL-2.0
/*
 * Network mode of blktrace: client helpers and the server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk/frame.h"
#include "blk/net.h"
#include "blk/output.h"
#include "blk/trace.h"

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = recv(fd, c, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int blk_net_connect(const char *host, int port, char *err, size_t errlen)
{
	struct addrinfo hints, *res, *ai;
	char ports[16];
	int fd = -1, ret, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ports, sizeof(ports), "%d", port);
	ret = getaddrinfo(host, ports, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	ret = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s port %d: %s", host, port,
			 strerror(-ret));
		return ret;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void fill_hdr(struct blk_net_hdr *h, const char *name, uint32_t cpu, uint32_t max_cpus,
		     uint32_t len, uint32_t buf_size, uint32_t buf_nr)
{
	memset(h, 0, sizeof(*h));
	h->magic = BLK_IO_TRACE_MAGIC;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->cpu = cpu;
	h->max_cpus = max_cpus;
	h->len = len;
	h->cl_id = (uint32_t)getpid();
	h->buf_size = buf_size;
	h->buf_nr = buf_nr;
	h->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
}

int blk_net_send_hdr(int fd, const char *name, uint32_t cpu, uint32_t max_cpus, uint32_t len,
		     uint32_t buf_size, uint32_t buf_nr)
{
	struct blk_net_hdr h;
	int ret;

	fill_hdr(&h, name, cpu, max_cpus, len, buf_size, buf_nr);
	ret = send_all(fd, &h, sizeof(h));
	if (ret || (len != BLK_NET_OPEN && len != BLK_NET_CLOSE))
		return ret;
	/* the server acknowledges opens and closes */
	return recv_all(fd, &h, sizeof(h));
}

int blk_net_send_data(int fd, const char *name, uint32_t cpu, uint32_t max_cpus, const void *p,
		      size_t n, uint32_t buf_size, uint32_t buf_nr)
{
	struct blk_net_hdr h;
	int ret;

	while (n) {
		/* lengths 0..2 are control messages: never send a data message that short */
		size_t chunk = n > (1u << 30) ? (1u << 30) : n;

		if (chunk <= BLK_NET_ACK)
			chunk = n;
		fill_hdr(&h, name, cpu, max_cpus, (uint32_t)chunk, buf_size, buf_nr);
		ret = send_all(fd, &h, sizeof(h));
		if (!ret)
			ret = send_all(fd, p, chunk);
		if (ret)
			return ret;
		p = (const char *)p + chunk;
		n -= chunk;
	}
	return 0;
}

/* ---- server ---- */

#define MAX_CONNS 1024
#define MAX_STREAMS 4096

struct stream {
	int host;
	char name[32];
	uint32_t cpu;
	struct blk_output *out;
	uint64_t bytes, events;
	unsigned char *acc; /* a partial record left from the last message, then the next one */
	size_t nacc, cap;
	int swapped; /* the records' byte order, -1 unknown */
	int damaged; /* the stream held something that is not a record: counting stopped */
	uint64_t drops; /* reported by the client's close */
};

struct host {
	char addr[64];
	char dir[4096];
	int opens;
};

struct conn {
	int fd;
	int host;
	int swap; /* -1 unknown */
};

struct server {
	struct stream s[MAX_STREAMS];
	int ns;
	struct host *h[MAX_CONNS];
	int nh;
	struct conn c[MAX_CONNS];
	int nc;
	const char *dir;
};

static uint32_t sw32(uint32_t v, int swap)
{
	return swap ? __builtin_bswap32(v) : v;
}

static int find_host(struct server *sv, const char *addr)
{
	struct host *h;
	time_t now = time(NULL);
	struct tm tm;

	for (int i = 0; i < sv->nh; i++)
		if (sv->h[i] && !strcmp(sv->h[i]->addr, addr))
			return i;
	if (sv->nh == MAX_CONNS)
		return -1;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -1;
	snprintf(h->addr, sizeof(h->addr), "%s", addr);
	gmtime_r(&now, &tm);
	snprintf(h->dir, sizeof(h->dir), "%s/%s-%04d-%02d-%02d-%02d:%02d:%02d", sv->dir, addr,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	sv->h[sv->nh] = h;
	return sv->nh++;
}

static struct stream *find_stream(struct server *sv, int host, const char *name, uint32_t cpu)
{
	char path[4200];
	struct stream *s;

	for (int i = 0; i < sv->ns; i++) {
		s = &sv->s[i];
		if (s->host == host && s->cpu == cpu && !strncmp(s->name, name, sizeof(s->name)))
			return s;
	}
	if (sv->ns == MAX_STREAMS || cpu >= BLK_MAX_CPUS)
		return NULL;
	s = &sv->s[sv->ns];
	memset(s, 0, sizeof(*s));
	s->swapped = -1;
	s->host = host;
	s->cpu = cpu;
	snprintf(s->name, sizeof(s->name), "%s", name);
	mkdir(sv->h[host]->dir, 0755);
	snprintf(path, sizeof(path), "%s/%s.blktrace.%u", sv->h[host]->dir, s->name, cpu);
	s->out = blk_output_open(path, 0);
	if (!s->out) {
		fprintf(stderr, "blktrace: server: cannot create '%s': %s\n", path,
			strerror(errno));
		return NULL;
	}
	sv->ns++;
	return s;
}

/* Count the I/O events passing through (records may straddle messages). */
static void count_records(struct stream *s, const unsigned char *p, size_t n)
{
	unsigned long events;
	long used;

	if (s->damaged)
		return;
	if (s->cap - s->nacc < n) {
		size_t cap = s->nacc + n;
		unsigned char *nb = realloc(s->acc, cap);

		if (!nb) {
			fprintf(stderr,
				"blktrace: server: out of memory counting the records of %s, CPU %u (the data is still written)\n",
				s->name, s->cpu);
			s->damaged = 1;
			return;
		}
		s->acc = nb;
		s->cap = cap;
	}
	memcpy(s->acc + s->nacc, p, n);
	s->nacc += n;
	used = blk_frame_count(s->acc, s->nacc, &s->swapped, &events);
	if (used < 0) {
		fprintf(stderr,
			"blktrace: server: the stream of %s, CPU %u holds something that is not a trace record after %llu events (the data is still written; its count stops here)\n",
			s->name, s->cpu, (unsigned long long)s->events);
		s->damaged = 1;
		return;
	}
	s->events += events;
	memmove(s->acc, s->acc + used, s->nacc - (size_t)used);
	s->nacc -= (size_t)used;
}

static void print_host_stats(struct server *sv, int host)
{
	char last[32] = "";

	for (int i = 0; i < sv->ns; i++) {
		struct stream *s = &sv->s[i];
		uint64_t ev = 0, bytes = 0, drops = 0;

		if (s->host != host || !strcmp(last, s->name))
			continue;
		snprintf(last, sizeof(last), "%s", s->name);
		printf("=== %s ===\n", s->name);
		for (int k = i; k < sv->ns; k++) {
			struct stream *t = &sv->s[k];

			if (t->host != host || strcmp(t->name, s->name))
				continue;
			printf("  CPU%3u: %20llu events, %8llu KiB data\n", t->cpu,
			       (unsigned long long)t->events,
			       (unsigned long long)((t->bytes + 1023) / 1024));
			ev += t->events;
			bytes += t->bytes;
			if (t->drops > drops)
				drops = t->drops;
		}
		printf("  Total:  %20llu events (dropped %llu), %8llu KiB data\n",
		       (unsigned long long)ev, (unsigned long long)drops,
		       (unsigned long long)((bytes + 1023) / 1024));
	}
	fflush(stdout);
}

/* Handle one message on @c. Return 0, or -1 to drop the connection. */
static int handle(struct server *sv, struct conn *c)
{
	struct blk_net_hdr h, ack;
	struct stream *s;
	uint32_t len;
	int ret;

	if (!sv->h[c->host])
		return -1;
	ret = recv_all(c->fd, &h, sizeof(h));
	if (ret)
		return -1;
	if (c->swap < 0) {
		if ((h.magic & BLK_IO_TRACE_MAGIC_MASK) == BLK_IO_TRACE_MAGIC)
			c->swap = 0;
		else if ((__builtin_bswap32(h.magic) & BLK_IO_TRACE_MAGIC_MASK) ==
			 BLK_IO_TRACE_MAGIC)
			c->swap = 1;
		else {
			fprintf(stderr,
				"blktrace: server: bad magic 0x%08x from %s: not a blktrace client\n",
				h.magic, sv->h[c->host]->addr);
			return -1;
		}
	}
	len = sw32(h.len, c->swap);
	h.name[sizeof(h.name) - 1] = '\0';
	s = NULL;
	if (len == BLK_NET_CLOSE) {
		/* a close carries the dropped count in place of a CPU */
		for (int i = 0; i < sv->ns && !s; i++)
			if (sv->s[i].host == c->host &&
			    !strncmp(sv->s[i].name, h.name, sizeof(h.name)))
				s = &sv->s[i];
	} else {
		s = find_stream(sv, c->host, h.name, sw32(h.cpu, c->swap));
		if (!s)
			return -1;
	}
	if (len == BLK_NET_OPEN || len == BLK_NET_CLOSE) {
		struct host *ho = sv->h[c->host];

		if (len == BLK_NET_OPEN) {
			ho->opens++;
		} else {
			if (s)
				s->drops = sw32(h.cpu,
						c->swap); /* the device's total, on every close */
			ho->opens--;
		}
		ack = h;
		ack.len = sw32(BLK_NET_ACK, c->swap);
		if (send_all(c->fd, &ack, sizeof(ack)))
			return -1;
		if (len == BLK_NET_CLOSE && ho->opens <= 0) {
			for (int i = 0; i < sv->ns; i++) {
				if (sv->s[i].host != c->host || !sv->s[i].out)
					continue;
				if (blk_output_finish(sv->s[i].out))
					fprintf(stderr, "blktrace: server: %s\n",
						blk_output_error(sv->s[i].out));
			}
			print_host_stats(sv, c->host);
			/* the run is over: the next one from this host gets a new directory */
			for (int i = 0; i < sv->ns;) {
				if (sv->s[i].host == c->host) {
					blk_output_free(sv->s[i].out);
					free(sv->s[i].acc);
					sv->s[i] = sv->s[--sv->ns];
				} else {
					i++;
				}
			}
			free(sv->h[c->host]);
			sv->h[c->host] = NULL;
		}
		return 0;
	}
	{
		unsigned char buf[65536];

		while (len) {
			size_t k = len < sizeof(buf) ? len : sizeof(buf);

			if (recv_all(c->fd, buf, k))
				return -1;
			count_records(s, buf, k);
			s->bytes += k;
			if (s->out && blk_output_write(s->out, buf, k)) {
				fprintf(stderr, "blktrace: server: %s\n", blk_output_error(s->out));
				return -1;
			}
			len -= (uint32_t)k;
		}
	}
	return 0;
}

int blk_net_server(const struct blk_net_server_opts *o, char *err, size_t errlen)
{
	struct server *sv = calloc(1, sizeof(*sv));
	struct sockaddr_in6 a6;
	struct pollfd pfd[MAX_CONNS + 1];
	int lfd, one = 1, ret = 0;

	if (!sv)
		return -ENOMEM;
	sv->dir = o->dir ? o->dir : ".";
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-ret));
		goto out;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_any;
	a6.sin6_port = htons((uint16_t)o->port);
	if (bind(lfd, (struct sockaddr *)&a6, sizeof(a6)) || listen(lfd, 16)) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on port %d: %s", o->port, strerror(-ret));
		goto out;
	}
	printf("server: waiting for connections...\n");
	fflush(stdout);
	while (!*o->stop) {
		int n = 0;

		pfd[n].fd = lfd;
		pfd[n++].events = POLLIN;
		for (int i = 0; i < sv->nc; i++) {
			pfd[n].fd = sv->c[i].fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, 500) <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && sv->nc < MAX_CONNS) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);

			if (fd >= 0) {
				char addr[64] = "unknown";
				int h;

				if (ss.ss_family == AF_INET6) {
					struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

					if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
						inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], addr,
							  sizeof(addr));
					else
						inet_ntop(AF_INET6, &s6->sin6_addr, addr,
							  sizeof(addr));
				} else if (ss.ss_family == AF_INET) {
					inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr,
						  addr, sizeof(addr));
				}
				h = find_host(sv, addr);
				if (h < 0) {
					close(fd);
				} else {
					sv->c[sv->nc].fd = fd;
					sv->c[sv->nc].host = h;
					sv->c[sv->nc].swap = -1;
					sv->nc++;
				}
			}
		}
		for (int i = 1; i < n; i++) {
			struct conn *c;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			c = NULL;
			for (int k = 0; k < sv->nc; k++)
				if (sv->c[k].fd == pfd[i].fd)
					c = &sv->c[k];
			if (c && handle(sv, c)) {
				close(c->fd);
				*c = sv->c[--sv->nc];
			}
		}
	}
out:
	if (lfd >= 0)
		close(lfd);
	for (int i = 0; i < sv->nc; i++)
		close(sv->c[i].fd);
	for (int i = 0; i < sv->ns; i++) {
		blk_output_close(sv->s[i].out);
		free(sv->s[i].acc);
	}
	for (int i = 0; i < sv->nh; i++)
		free(sv->h[i]);
	free(sv);
	return ret;
}
