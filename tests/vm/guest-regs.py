#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
guest-regs.py SOCKET KALLSYMS [--times N]

Where each vCPU of a running VM of tests/vm is, by name: asks qemu's monitor on SOCKET
(run-trace.sh with VM_MONITOR=SOCKET, which also boots the kernel with nokaslr) for
"info registers -a", N times one second apart (default 3), and prints per sample and CPU
its RIP and RSP, the RIP as symbol+offset from KALLSYMS, and whether interrupts are on
(EFLAGS bit 9). A CPU whose RIP stays put with interrupts off is the one that hangs the
others. KALLSYMS: OUTDIR/kallsyms of any run booted with VM_MONITOR set (the VM's
/proc/kallsyms; with nokaslr the addresses are the same in every boot of that kernel; the
System.map of Debian's kernel package is a stub).
"""
import argparse
import bisect
import os
import re
import socket
import sys
import time


def load_map(path):
    addrs, names = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                addrs.append(int(parts[0], 16))
                names.append(parts[2])
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def symbol(syms, addr):
    addrs, names = syms
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0 or addr - addrs[i] > 1 << 20:
        return "?"
    return "%s+0x%x" % (names[i], addr - addrs[i])


def ask(path, command):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.settimeout(1.0)
    out = b""

    def drain():
        nonlocal out
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except socket.timeout:
            pass

    drain()
    out = b""
    s.sendall((command + "\n").encode())
    drain()
    s.close()
    return out.decode(errors="replace")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("socket", help="qemu's monitor (VM_MONITOR)")
    ap.add_argument("kallsyms", help="OUTDIR/kallsyms of a run booted with VM_MONITOR set")
    ap.add_argument("--times", type=int, default=3, help="samples, a second apart (default 3)")
    a = ap.parse_args(argv[1:])
    sock, mp, times = a.socket, a.kallsyms, a.times
    if not os.path.exists(mp):
        sys.stderr.write("guest-regs.py: '%s': no such file (the kallsyms of a run booted with VM_MONITOR set)\n" % mp)
        return 2
    syms = load_map(mp)
    for k in range(times):
        try:
            text = ask(sock, "info registers -a")
        except OSError as e:
            sys.stderr.write("guest-regs.py: '%s': %s (is a VM running with VM_MONITOR=%s?)\n"
                             % (sock, e.strerror or e, sock))
            return 1
        cpus = re.split(r"^CPU#(\d+)", text, flags=re.M)
        for i in range(1, len(cpus) - 1, 2):
            regs = cpus[i + 1]
            rip = re.search(r"RIP=([0-9a-f]{16})", regs)
            rsp = re.search(r"RSP=([0-9a-f]{16})", regs)
            fl = re.search(r"RFL=([0-9a-f]{8})", regs)
            if not rip:
                continue
            r = int(rip.group(1), 16)
            irq = "on" if fl and int(fl.group(1), 16) & 0x200 else "off"
            print("sample %d cpu %s rip %016x %-40s rsp %s interrupts %s"
                  % (k + 1, cpus[i], r, symbol(syms, r), rsp.group(1) if rsp else "?", irq))
        if k + 1 < times:
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
