/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The classic blktrace network protocol (blktrace -l server, blktrace -h client): a 64-byte
 * header before every message; len 0 opens a (device, CPU) stream, 1 closes it (cpu then
 * carries the dropped count), 2 acknowledges, anything else is that many trace bytes.
 */
#ifndef BLK_NET_H
#define BLK_NET_H

#include <stddef.h>
#include <stdint.h>

struct blk_net_hdr {
	uint32_t magic; /* BLK_IO_TRACE_MAGIC, no version: tells the byte order */
	char name[32]; /* trace (device) name */
	uint32_t cpu; /* CPU of the data; on close: dropped events */
	uint32_t max_cpus;
	uint32_t len; /* 0 open, 1 close, 2 ack, else data length */
	uint32_t cl_id; /* client process id */
	uint32_t buf_size, buf_nr, page_size;
};
_Static_assert(sizeof(struct blk_net_hdr) == 64, "network header is 64 bytes");

#define BLK_NET_OPEN 0
#define BLK_NET_CLOSE 1
#define BLK_NET_ACK 2
#define BLK_NET_PORT 8462

/* Connect to @host:@port. Return a socket or -errno (-EHOSTUNREACH etc.). */
int blk_net_connect(const char *host, int port, char *err, size_t errlen);

/* Send a header (and wait for the server's acknowledgement when @len is open/close). */
int blk_net_send_hdr(int fd, const char *name, uint32_t cpu, uint32_t max_cpus, uint32_t len,
		     uint32_t buf_size, uint32_t buf_nr);

/* Send a data message: header and @n bytes. Return 0 or -errno. */
int blk_net_send_data(int fd, const char *name, uint32_t cpu, uint32_t max_cpus, const void *p,
		      size_t n, uint32_t buf_size, uint32_t buf_nr);

struct blk_net_server_opts {
	int port;
	const char *dir; /* output directory (default ".") */
	volatile int *stop; /* set asynchronously to end the server */
};

/*
 * Run a server until *stop: writes DIR/<client-ip>-<YYYY-MM-DD>-<HH:MM:SS>/<name>.blktrace.<cpu>
 * and prints each client's summary on stdout when its last stream closes.
 * Return 0, or -errno if the port cannot be used (message in @err).
 */
int blk_net_server(const struct blk_net_server_opts *o, char *err, size_t errlen);

#endif /* BLK_NET_H */
