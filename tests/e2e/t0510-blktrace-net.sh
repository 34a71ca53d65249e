#!/bin/bash
# Network mode over loopback: a server (ours, or the reference's) writes the files of a
# client that traces a loop device; every I/O of the workload must be in them.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
if ! is_root; then
	skip "network mode tests (need root for loop devices and tracing)"
	exit 0
fi
kernel_lock
w="$OUT/btnet"
rm -rf "$w"; mkdir -p "$w"
truncate -s 64M "$w/disk.img"
loop=$(loop_attach "$w/disk.img" 2>/dev/null) || { skip "network mode tests (losetup failed)"; exit 0; }
srv=
trap 'losetup -d "$loop" 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null' EXIT
name=$(basename "$loop")
port=$(free_port)

run_case() { # label server-binary client-extra-args
	local label=$1 server=$2 extra=$3 d="$w/$4" dir
	port=$(free_port)
	mkdir -p "$d/srv"
	(cd "$d" && exec "$server" -l -p "$port" -D srv >server.out 2>server.err) &
	srv=$!
	sleep 0.7
	(cd "$d" && "$BT" -d "$loop" -h 127.0.0.1 -p "$port" -w 4 $extra >client.out 2>client.err; echo $? >client.rc) &
	local cl=$!
	wait_tracing
	workload "$d/expected.txt"
	wait $cl
	sleep 0.5
	kill -INT $srv 2>/dev/null
	wait $srv 2>/dev/null
	srv=
	dir=$(ls -d "$d"/srv/127.0.0.1-* 2>/dev/null | head -n1)
	if [ "$(cat "$d/client.rc")" = 0 ] && [ -n "$dir" ] && [ -s "$dir/$name.blktrace.0" -o -s "$dir/$name.blktrace.1" ]; then
		pass "$label: client exit 0, server wrote $(ls "$dir" | tr '\n' ' ')"
	else
		fail "$label: client rc=$(cat "$d/client.rc"), $(head -c 300 "$d/client.err") $(head -c 200 "$d/server.err")"
		return
	fi
	(cd "$dir" && $BLKPARSE -i "$name" >"$d/parsed.txt" 2>/dev/null)
	check_ios "$label" "$d/expected.txt" "$d/parsed.txt"
	if grep -q "Total:" "$d/server.out"; then
		pass "$label: the server printed the client's summary"
	else
		fail "$label: no summary from the server: $(head -c 200 "$d/server.out")"
	fi
}

run_case "our server, our client (a connection per device per CPU)" "$BT" "" ours
run_case "our server, our client -s (one connection per CPU)" "$BT" "-s" ours-s
if [ -x /usr/sbin/blktrace ]; then
	run_case "reference server (blktrace 1.2.0 -l), our client" /usr/sbin/blktrace "" ref
else
	skip "reference server interop (apt-get install blktrace)"
fi
