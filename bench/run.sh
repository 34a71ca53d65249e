#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: every benchmark of the suite against the classic tools, side by side, with the
# results written to a file of their own (bench/out/results-DATE.txt) headed by the machine
# and the date, and printed as they come. The README gives only the ratios to expect.
#
#   bench/run.sh [bench-blkparse bench-btt bench-perfetto ...]   (default: those three)
#
# Each benchmark takes its own environment (RUNS, GEN_EVENTS, ...: see its header). The
# benchmarks that need the test VM or a ClickHouse server (bench-blktrace-vm.sh,
# bench-export.sh, bench-iowait-host.sh, bench-origin.sh) are run by name.
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1
mkdir -p bench/out
out=bench/out/results-$(date -u +%Y%m%dT%H%M%SZ).txt
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(bench-blkparse bench-btt bench-perfetto)

{
	echo "# blktrace-ng benchmarks, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "# tree: $(git describe --always --dirty 2>/dev/null || echo unknown)"
	echo "# machine: $(uname -srm), $(nproc) CPUs," \
		"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
rc=0
for b in "${benches[@]}"; do
	b=${b%.sh}
	[ -x "bench/$b.sh" ] || { echo "bench: no benchmark 'bench/$b.sh'" >&2; rc=2; continue; }
	echo "## $b" | tee -a "$out"
	"./bench/$b.sh" 2>&1 | tee -a "$out" || rc=1
done
echo "# results: $out"
exit $rc
