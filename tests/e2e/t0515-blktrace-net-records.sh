#!/bin/bash
# The network server counts records with the library's framer: a client (written here from
# the protocol, not our tracer) sends version-7 and version-8 records in both byte orders,
# split across messages at awkward places; the server's summary must count exactly the I/O
# events sent and its files must hold exactly the bytes sent. No kernel tracing needed.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
w="$OUT/btnetrec"
rm -rf "$w"; mkdir -p "$w/srv"
port=$(free_port)
(cd "$w" && exec "$BT" -l -p "$port" -D srv >server.out 2>server.err) &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
sleep 0.5

for case in "7 <" "8 <" "8 >" "7 >"; do
	set -- $case
	v=$1 e=$2
	tag="v$v$( [ "$e" = "<" ] && echo le || echo be)"
	PYTHONPATH="$TOP/tests/gen" python3 -B - "$port" "$v" "$e" "$w/$tag.sent" "$tag" <<'PY' >"$w/$tag.client" 2>&1
import socket, struct, sys, blkrec
port, version, e, sent, tag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
t = blkrec.Trace(version=version, endian=e)
events = 0
for i in range(300):
    if i % 7 == 0:  # a process-name note
        t.note(blkrec.TN_PROCESS, 100 + i, blkrec.mkdev(8, 0), b'fio\0' + bytes(12), time=1000 * i)
    else:
        pdu = bytes(range(i % 40))  # payloads of 0..39 bytes
        t.rec(i, 1000 * i, 8 * i, 4096, blkrec.act(blkrec.TA_QUEUE, blkrec.TC_READ), 100,
              blkrec.mkdev(8, 0), 0, pdu=pdu)
        events += 1
data = t.data()
open(sent, 'wb').write(data)

def hdr(length, cpu=0):
    # the network protocol's message header (struct blk_net_hdr, include/blk/net.h)
    return struct.pack(e + 'I32sIIIIIII', blkrec.MAGIC, tag.encode(), cpu, 1, length, 4242, 512 * 1024, 4, 4096)

s = socket.create_connection(('127.0.0.1', port))
s.sendall(hdr(0))
s.recv(64)
off, k = 0, 0
while off < len(data):
    n = [37, 3, 64, 100, 5, 48, 65][k % 7]  # cut headers and payloads anywhere (1 and 2 are control lengths)
    chunk = data[off:off + n]
    s.sendall(hdr(len(chunk)) + chunk)
    off += n
    k += 1
s.sendall(hdr(1, cpu=0))
s.recv(64)
s.close()
print(events)
PY
done
sleep 1
kill -INT $srv; wait $srv 2>/dev/null
trap - EXIT
for case in v7le v8le v8be v7be; do
	want=$(tail -n 1 "$w/$case.client")
	got=$(awk -v n="=== $case ===" '$0 == n { f = 1; next } f && /Total:/ { print $2; exit }' "$w/server.out")
	# each client's run gets a directory named by its start time: find the file by name
	file=$(ls "$w"/srv/127.0.0.1-*/"$case.blktrace.0" 2>/dev/null | head -n 1)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "network server, $case records split across messages: counts $got events, as sent"
	else
		fail "network server, $case: counted '$got', sent '$want' $(head -c 200 "$w/server.err" "$w/$case.client")"
	fi
	if [ -n "$file" ] && cmp -s "$w/$case.sent" "$file"; then
		pass "network server, $case: the file holds exactly the bytes sent"
	else
		fail "network server, $case: file differs from what was sent"
	fi
done
