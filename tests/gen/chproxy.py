#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""chproxy.py: an HTTP proxy in front of a ClickHouse server that loses one INSERT on purpose,
so that the export's retries are tested on a known fault (tests/e2e/t1300-clickhouse.sh).

    chproxy.py --target PORT (--drop-response N | --drop-request N)

It listens on a free port of 127.0.0.1, prints it on the first line of stdout, and forwards
each request (one per connection) to 127.0.0.1:PORT. The Nth request whose query is an
INSERT (counting from 1) is lost:
  --drop-response N   forwarded whole, the server's answer read, then the client's connection
                      closed without a reply: the server has the rows, the client cannot know;
  --drop-request N    half its body read, then the connection closed: the server never sees
                      it.
It logs one line per request to stderr and runs until killed.
"""
import argparse
import socket
import sys


def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d:
            return None, None
        data += d
    head, body = data.split(b"\r\n\r\n", 1)
    n = 0
    for h in head.split(b"\r\n")[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    return head, (body, n)


def read_all(s):
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            return out
        out += d


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", type=int, required=True)
    p.add_argument("--drop-response", type=int, default=0)
    p.add_argument("--drop-request", type=int, default=0)
    a = p.parse_args()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print(srv.getsockname()[1], flush=True)
    inserts = 0
    while True:
        c, _ = srv.accept()
        head, rest = read_request(c)
        if head is None:
            c.close()
            continue
        body, n = rest
        line = head.split(b"\r\n")[0]
        is_insert = b"query=INSERT" in line
        if is_insert:
            inserts += 1
        if is_insert and inserts == a.drop_request:
            while len(body) < n // 2:
                d = c.recv(65536)
                if not d:
                    break
                body += d
            print("chproxy: insert %d: request dropped after %d of %d bytes" %
                  (inserts, len(body), n), file=sys.stderr, flush=True)
            c.close()
            continue
        while len(body) < n:
            d = c.recv(65536)
            if not d:
                break
            body += d
        s = socket.create_connection(("127.0.0.1", a.target))
        s.sendall(head + b"\r\n\r\n" + body)
        answer = read_all(s)
        s.close()
        status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
        if is_insert and inserts == a.drop_response:
            print("chproxy: insert %d: forwarded (%s), response dropped" % (inserts, status),
                  file=sys.stderr, flush=True)
            c.close()
            continue
        print("chproxy: %s: %s" % ("insert %d" % inserts if is_insert else "query", status),
              file=sys.stderr, flush=True)
        c.sendall(answer)
        c.close()


main()
