#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Interrupt a command as Ctrl-C does: SIGINT to its whole process group.

    interrupt.py write STREAM COPY PER DELAY ON_SIGNAL
        Write the records of the trace STREAM to stdout, PER records every DELAY seconds,
        and the same bytes to COPY. On SIGINT or SIGTERM: ON_SIGNAL 'drain:K'
        writes K more chunks at once and closes (a tracer draining its buffers), 'hang'
        writes nothing more and keeps stdout open until killed. The whole stream written:
        closes. Exit status 0, or 1 on a write error (a reader that went away).

    interrupt.py run [options] -- CMD...
        Run CMD in a new process group, SIGINT and SIGTERM at their default (whatever this
        script inherited), send SIGINT to the group, wait for CMD and print one line
        'rc=N writer=N secs=S' (rc -N: killed by signal N; secs: from the last signal to the
        end of CMD; writer: the feeder's status, '-' without one).
          --feed 'STREAM COPY PER DELAY ON_SIGNAL'  CMD's stdin is a writer as above, in the group
          --stdout FILE      CMD's stdout (default /dev/null)
          --stderr FILE      CMD's stderr (default: this script's)
          --wait S           seconds before the first signal (default 1), counted with --feed
                             from when CMD has read 192 KiB (a slow start meets no signal)
          --ready FILE       without --feed: wait as with it, FILE being the copy file
                             of a writer that CMD starts itself
          --after-bytes N    instead: once N bytes of CMD's stdout were read (stdout is then
                             a pipe read 4 KiB at a time, so that CMD waits on its writes)
          --signals N        signals to send, 0.5 s apart (default 1)
          --timeout S        kill the group if CMD runs longer after the signals (default 20)
"""
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blkrec  # noqa: E402 (the record layout, tests/gen/blkrec.py)


def records(path):
    data = open(path, 'rb').read()
    for r in blkrec.records(data):
        yield data[r.offset:r.end]


def write(stream, copy, per, delay, on_signal):
    recs = list(records(stream))
    stop = []
    signal.signal(signal.SIGINT, lambda s, f: stop.append(s))
    signal.signal(signal.SIGTERM, lambda s, f: stop.append(s))
    left = None
    with open(copy, 'wb') as cp:
        for i in range(0, len(recs), per):
            if stop and left is None:
                if on_signal == 'hang':
                    cp.close()
                    while True:
                        time.sleep(60)
                left = int(on_signal.split(':')[1])
            if left is not None:
                if left == 0:
                    break
                left -= 1
            chunk = b''.join(recs[i:i + per])
            try:
                os.write(1, chunk)
            except OSError as e:
                print('interrupt.py: write failed: %s' % e.strerror, file=sys.stderr)
                return 1
            cp.write(chunk)
            cp.flush()
            if left is None:
                time.sleep(delay)
    return 0


def default_signals(pgid):
    def fn():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setpgid(0, pgid)
    return fn


def run(argv):
    opts = {'--wait': '1', '--signals': '1', '--timeout': '20'}
    while argv and argv[0] != '--':
        opts[argv[0]] = argv[1]
        argv = argv[2:]
    cmd = argv[1:]
    err = open(opts['--stderr'], 'w') if '--stderr' in opts else None
    writer, pgid = None, 0
    stdin = subprocess.DEVNULL
    if '--feed' in opts:
        writer = subprocess.Popen([sys.executable, os.path.abspath(__file__), 'write'] +
                                  opts['--feed'].split(), stdout=subprocess.PIPE,
                                  preexec_fn=default_signals(0))
        pgid = writer.pid
        stdin = writer.stdout
    slow = '--after-bytes' in opts
    out = subprocess.PIPE if slow else open(opts.get('--stdout', os.devnull), 'wb')
    p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err,
                         preexec_fn=default_signals(pgid))
    pgid = pgid or p.pid
    if writer:
        writer.stdout.close()
    if slow:
        got = bytearray()
        while len(got) < int(opts['--after-bytes']):
            b = p.stdout.read(4096)
            if not b:
                break
            got += b
            time.sleep(0.01)
    else:
        copy = opts['--feed'].split()[1] if writer else opts.get('--ready')
        if copy:
            # CMD has started reading (its handlers are set: a slow start, e.g. under
            # valgrind, must not meet the signal first) once the writer got past what the
            # pipe holds: the writer copies what it wrote to the copy file as it goes
            t0 = time.time()
            while time.time() - t0 < 30 and p.poll() is None:
                if os.path.exists(copy) and os.path.getsize(copy) >= 3 * 65536:
                    break
                time.sleep(0.02)
        time.sleep(float(opts['--wait']))
    for i in range(int(opts['--signals'])):
        if i:
            time.sleep(0.5)
        try:
            os.killpg(pgid, signal.SIGINT)
        except ProcessLookupError:
            pass
    t0 = time.time()
    if slow:
        got += p.stdout.read()
        with open(opts.get('--stdout', os.devnull), 'wb') as f:
            f.write(got)
    try:
        rc = p.wait(timeout=float(opts['--timeout']))
    except subprocess.TimeoutExpired:
        rc = 'timeout'
    secs = time.time() - t0
    if writer and 'hang' not in opts['--feed']:
        try:
            writer.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if rc == 'timeout':
        p.wait()
    wrc = '-'
    if writer:
        wrc = writer.wait()
    print('rc=%s writer=%s secs=%.1f' % (rc, wrc, secs))
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == 'write':
        a = sys.argv[2:]
        return write(a[0], a[1], int(a[2]), float(a[3]), a[4])
    if len(sys.argv) > 1 and sys.argv[1] == 'run':
        return run(sys.argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
