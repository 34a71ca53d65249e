/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A scripted HTTP server for the unit tests of the HTTP client and of the ClickHouse export:
 * a child process on 127.0.0.1 that takes one connection per step, checks that the request
 * holds what the step expects, and answers with the step's bytes (or closes, or stalls).
 * Include after <cmocka.h>.
 */
#ifndef BLK_TEST_FAKESERVER_H
#define BLK_TEST_FAKESERVER_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

enum fake_action {
	FAKE_REPLY, /* read the request, send .reply, close */
	FAKE_CLOSE, /* read the request, close without a reply (a lost answer) */
	FAKE_CLOSE_EARLY, /* read the head and half the body, close (a lost request) */
	FAKE_REPLY_EARLY, /* read the head only, send .reply, close gracefully (a server that refuses) */
	FAKE_STALL, /* read the request, then wait 2 s without answering */
};

struct fake_step {
	enum fake_action action;
	const char *expect; /* substrings of the request, separated by '|' (NULL: any) */
	const char *reply;
	size_t reply_len; /* 0: strlen(reply) */
};

struct fake_server {
	pid_t pid;
	int port;
};

/* Read the request: the head, and the body (@part 0), half of it (1) or none of it (2). */
static inline int fake_read(int fd, char **req, size_t *len, int part)
{
	size_t cap = 1 << 16, n = 0, want = 0;
	char *buf = malloc(cap), *end = NULL;

	while (!end || n < want) {
		ssize_t r;

		if (cap - n < 65536) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = 0;
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			const char *cl = strstr(buf, "Content-Length: ");
			size_t body = cl ? strtoul(cl + 16, NULL, 10) : 0;

			body = part == 0 ? body : part == 1 ? body / 2 : 0;
			want = (size_t)(end + 4 - buf) + body;
		}
	}
	buf[n] = 0;
	*req = buf;
	*len = n;
	return end ? 0 : -1;
}

/* Does @req hold every '|'-separated part of @expect? */
static inline int fake_matches(const char *req, size_t len, const char *expect)
{
	char part[4096];

	while (expect && *expect) {
		const char *bar = strchr(expect, '|');
		size_t n = bar ? (size_t)(bar - expect) : strlen(expect);

		memcpy(part, expect, n);
		part[n] = 0;
		if (!memmem(req, len, part, n)) {
			fprintf(stderr, "fakeserver: request lacks '%s':\n%.600s\n", part, req);
			return 0;
		}
		expect = bar ? bar + 1 : expect + n;
	}
	return 1;
}

static inline void fake_serve(int lfd, const struct fake_step *steps, int n)
{
	alarm(20);
	for (int i = 0; i < n; i++) {
		const struct fake_step *s = &steps[i];
		int fd = accept(lfd, NULL, NULL);
		char *req;
		size_t len;
		int part = s->action == FAKE_CLOSE_EARLY   ? 1
			   : s->action == FAKE_REPLY_EARLY ? 2
							   : 0;

		if (fd < 0)
			_exit(100);
		fake_read(fd, &req, &len, part);
		if (!fake_matches(req, len, s->expect))
			_exit(10 + i);
		free(req);
		if (s->action == FAKE_REPLY || s->action == FAKE_REPLY_EARLY) {
			static const char cc[] = "Connection: close\r\n";
			size_t rl = s->reply_len ? s->reply_len : strlen(s->reply);
			const char *eol = memchr(s->reply, '\n', rl);
			size_t hl = eol ? (size_t)(eol + 1 - s->reply) : 0, n = 0;
			char *out = malloc(rl + sizeof(cc));

			/*
			 * One connection per step: the client must not keep it for the next. One
			 * write: a close with the request unread resets the connection, and drops
			 * what is not sent yet.
			 */
			memcpy(out, s->reply, hl);
			n = hl;
			if (hl) {
				memcpy(out + n, cc, sizeof(cc) - 1);
				n += sizeof(cc) - 1;
			}
			memcpy(out + n, s->reply + hl, rl - hl);
			n += rl - hl;
			if (write(fd, out, n) != (ssize_t)n)
				_exit(101);
			free(out);
		}
		if (s->action == FAKE_REPLY_EARLY) {
			char sink[65536];

			/*
			 * A server that refuses early closes gracefully: with the body unread, a
			 * plain close resets the connection, and a reset that reaches the client
			 * before it has read the answer discards it (seen under valgrind)
			 */
			shutdown(fd, SHUT_WR);
			while (read(fd, sink, sizeof(sink)) > 0)
				;
		}
		if (s->action == FAKE_STALL)
			sleep(2);
		close(fd);
	}
	_exit(0);
}

/* Start a server for @steps; its port in @fs->port. */
static inline void fake_server_start(struct fake_server *fs, const struct fake_step *steps, int n)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	fs->port = ntohs(a.sin_port);
	fflush(NULL);
	fs->pid = fork();
	assert_true(fs->pid >= 0);
	if (fs->pid == 0)
		fake_serve(lfd, steps, n);
	close(lfd);
}

/* Wait (up to 20 s) for the server; return its exit status (0: every step as expected). */
static inline int fake_server_wait(struct fake_server *fs)
{
	int status;

	for (int i = 0; i < 2000; i++) {
		pid_t p = waitpid(fs->pid, &status, WNOHANG);
		struct timespec ts = {0, 10000000};

		if (p == fs->pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
		nanosleep(&ts, NULL);
	}
	kill(fs->pid, SIGKILL);
	waitpid(fs->pid, &status, 0);
	return 255;
}

/* A free port with nothing listening on it (bound, then closed). */
static inline int fake_closed_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	return ntohs(a.sin_port);
}

#endif /* BLK_TEST_FAKESERVER_H */
