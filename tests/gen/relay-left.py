#!/usr/bin/env python3
"""Leave a relay trace set up and started on a block device, as a relay tracer killed with
SIGKILL leaves it: BLKTRACESETUP (struct blk_user_trace_setup, 72 bytes on x86-64) and
BLKTRACESTART. Prints the kernel's name for the trace. Usage: relay-left.py DEVICE"""
import fcntl
import os
import struct
import sys

SETUP_NR, START_NR = 115, 116


def iowr(t, nr, size):
    return (3 << 30) | (size << 16) | (t << 8) | nr


def main():
    fd = os.open(sys.argv[1], os.O_RDONLY)
    arg = bytearray(struct.pack('=32sH2xII4xQQI4x', b'', 0xffff, 4096, 4, 0, 0, 0))
    fcntl.ioctl(fd, iowr(0x12, SETUP_NR, len(arg)), arg)
    fcntl.ioctl(fd, (0x12 << 8) | START_NR)
    print(bytes(arg[:32]).rstrip(b'\0').decode())


if __name__ == '__main__':
    main()
