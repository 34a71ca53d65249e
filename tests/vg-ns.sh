#!/bin/bash
# vg-ns.sh COMMAND ARGS...: runs the valgrind run (make valgrind) in a mount namespace of its
# own where /usr/lib/debug holds only the dynamic loader's debug file. Each valgrind start
# otherwise reads libc's separate debug file (4 MB, libc6-dbg), 0.13 of the 0.28 CPU s that
# `valgrind --tool=none /bin/true` takes; the run starts some 650 valgrinds. valgrind needs
# only ld.so's symbols (its mandatory strlen redirection); a report's frames inside libc then
# name its exported functions (write, snprintf) and "???" for its internal ones, our own
# frames stay as they are. Only where it can be done safely: as root, with unshare, and with
# the loader's debug file found by its build-id; otherwise the command runs as it is.
# VG_NS=0 turns it off.
run_plain() { exec "$@"; }
[ "${1:-}" = --inside ] && {
	# in the new namespace: $2 the directory to show as /usr/lib/debug
	dir=$2
	shift 2
	mount --bind "$dir" /usr/lib/debug || echo "vg-ns: cannot bind $dir over /usr/lib/debug; the valgrind run reads all debug files" >&2
	exec "$@"
}
[ "${VG_NS:-1}" = 0 ] && run_plain "$@"
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v readelf >/dev/null || run_plain "$@"
top=$(cd "$(dirname "$0")/.." && pwd)
# the loader our programs name (PT_INTERP), its build-id, its debug file
interp=$(readelf -lW "$top/blkparse" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || run_plain "$@"
id=$(readelf -nW "$(readlink -f "$interp")" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1)
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ ${#id} -gt 2 ] && [ -f "$dbg" ] || run_plain "$@"
out=${TEST_OUT:-$top/tests/out}
ns=$out/debug-ld
rm -rf "$ns"
mkdir -p "$ns/.build-id/${id:0:2}" && cp "$dbg" "$ns/.build-id/${id:0:2}/" || run_plain "$@"
unshare -m true 2>/dev/null || run_plain "$@"
exec unshare -m --propagation private "$0" --inside "$ns" "$@"
