#!/bin/bash
# Synthetic traces (tests/gen/gentrace): byte order, version-8 records, and differential
# runs against the reference blkparse on traces of other shapes (CPUs, devices, seeds).
. "$(dirname "$0")/../lib.sh"

gen="$TOP/tests/gen/gentrace"
w="$OUT/syn"
rm -rf "$w"; mkdir -p "$w"

"$gen" -n 50000 -c 3 -s 11 -o le -D "$w"
"$gen" -n 50000 -c 3 -s 11 -o be -D "$w" --big-endian
"$gen" -n 50000 -c 3 -s 11 -o v2 -D "$w" --v2
(cd "$w" && $BLKPARSE -i le | sed '/^Input file/d; s/(le)/(X)/' >le.txt 2>/dev/null)
(cd "$w" && $BLKPARSE -i be | sed '/^Input file/d; s/(be)/(X)/' >be.txt 2>/dev/null)
(cd "$w" && $BLKPARSE -i v2 | sed '/^Input file/d; s/(v2)/(X)/' >v2.txt 2>/dev/null)
check_same "big-endian trace gives the same text as little-endian" "$w/le.txt" "$w/be.txt"
check_same "version-8 (v2) records give the same text as version 7" "$w/le.txt" "$w/v2.txt"
(cd "$w" && $BLKPARSE -i v2 -d v2.bin -O >/dev/null 2>&1 && $BLKPARSE -i v2.bin | sed 's/(.*,.*)/(X)/' >v2-rt.txt)
(cd "$w" && $BLKPARSE -i le -d le.bin -O >/dev/null 2>&1 && $BLKPARSE -i le.bin | sed 's/(.*,.*)/(X)/' >le-rt.txt)
check_same "v2 records survive -d and read back like v1" "$w/le-rt.txt" "$w/v2-rt.txt"
if cmp -s "$w/le-rt.txt" /dev/null; then fail "round trip produced nothing"; fi

if [ ! -x /usr/bin/blkparse ]; then
	skip "differential runs against the reference (apt-get install blktrace)"
	exit 0
fi
# ref DIR CMD...: the reference blkparse in DIR, on the per-CPU files there (or what its stdin
# or -s FILE gives it), through the memo (tests/lib.sh): the plain, ASan and valgrind runs hand
# it the same generated traces
ref() {
	local dir=$1 f ins=()
	shift
	for f in "$dir"/*.blktrace.*; do [ -e "$f" ] && ins+=(-i "$f"); done
	(cd "$dir" && memo "${ins[@]}" "$@")
}
n=0
vi=0
for spec in "1 1 1" "2 2 7" "4 1 3" "8 1 5" "2 3 9"; do
	vi=$((vi + 1))
	vg_sample $vi "differential runs on the synthetic trace '$spec' (CPUs, devices, seed)" || continue
	set -- $spec
	cpus=$1 devs=$2 seed=$3
	d="$w/d$n"; n=$((n + 1))
	"$gen" -n 40000 -c "$cpus" -d "$devs" -s "$seed" -o t -D "$d"
	ins=()
	for f in "$d"/*.blktrace.0; do f=$(basename "$f"); ins+=(-i "${f%.blktrace.0}"); done
	for opts in "" "-s" "-q -s -h" "-f %D_%c_%s_%T.%t_%p_%a_%d_%S_%n_%N_%e_%C_%5M_%-4m|%%\n -F U,%U_%a\n -F X,%U_%-3a|\n" "-a write -a complete" "-b 7" "-t"; do
		[ "$opts" = -t ] && ! needs_modelled_glibc "same as the reference: $cpus CPUs, $devs devices, seed $seed, options '-t'" && continue
		ref "$d" /usr/bin/blkparse "${ins[@]}" $opts >"$d/ref.txt" 2>/dev/null
		(cd "$d" && $BLKPARSE "${ins[@]}" $opts >ours.txt 2>/dev/null)
		check_same "same as the reference: $cpus CPUs, $devs devices, seed $seed, options '${opts:-(none)}'" "$d/ref.txt" "$d/ours.txt"
	done
	ref "$d" -o ref.bin /usr/bin/blkparse "${ins[@]}" -d ref.bin -O >/dev/null 2>&1
	(cd "$d" && $BLKPARSE "${ins[@]}" -d ours.bin -O >/dev/null 2>&1)
	check_same "same -d dump as the reference: $cpus CPUs, $devs devices, seed $seed" "$d/ref.bin" "$d/ours.bin"
	(cd "$d" && memo -s ref.bin /usr/bin/blkparse -i - >ref-pipe.txt 2>/dev/null)
	(cd "$d" && $BLKPARSE -i - <ref.bin >ours-pipe.txt 2>/dev/null)
	check_same "same pipe-mode text as the reference: $cpus CPUs, $devs devices, seed $seed" "$d/ref-pipe.txt" "$d/ours-pipe.txt"
done

# a remap whose record device is neither end of the remap: the default line and its dump
# show the target device, a -f/-F format and then the dump the record's own
d="$w/remap-dev"
mkdir -p "$d"
PYTHONPATH="$TOP/tests/gen" python3 -B - "$d/rm.blktrace.0" <<'PY'
import sys, blkrec as b
t = b.Trace(version=7, endian='<')
cats = b.TC_QUEUE | b.TC_FS | b.TC_READ
# a queue on 8,0, then its remap from 8,1 to 8,2 recorded on 8,0
t.rec(1, 500, 100, 4096, b.act(b.TA_QUEUE, cats), 10, b.mkdev(8, 0), 0)
t.rec(2, 1000, 100, 4096, b.act(b.TA_REMAP, cats), 10, b.mkdev(8, 0), 0,
      pdu=b.remap_pdu(b.mkdev(8, 1), b.mkdev(8, 2), 777))
open(sys.argv[1], 'wb').write(t.data())
PY
for opts in "" "-f %D|%M,%m|%S|%a\n" "-F A,%D_%a\n" "-q"; do
	(cd "$d" && /usr/bin/blkparse -i rm $opts -d ref.bin >ref.txt 2>/dev/null)
	(cd "$d" && $BLKPARSE -i rm $opts -d ours.bin >ours.txt 2>/dev/null)
	check_same "remap to another device, options '${opts:-(none)}': same text" "$d/ref.txt" "$d/ours.txt"
	check_same "remap to another device, options '${opts:-(none)}': same -d dump" "$d/ref.bin" "$d/ours.bin"
done

# -t on random edge-case traces split per CPU (several devices, one maybe device-mapper,
# merges, requeues, remaps, completions without issue, time stepping back): the times the
# classic tool computes from reused memory must come out the same (compat/classicmem.c)
# (the rest of this file: -t only, compared where the model's C library is)
if needs_modelled_glibc "-t on random edge-case traces, from files and from a pipe, and with 70 CPUs"; then
vi=0
for spec in "101 3000" "17 5000" "150 3500 ordered" "219 8000" "22 2000 ordered" "9 6000"; do
	vi=$((vi + 1))
	vg_sample $vi "-t on the random trace '$spec'" || continue
	set -- $spec
	d="$w/edge$1"
	mkdir -p "$d"
	python3 "$TOP/tests/gen/btt-edge.py" "$d/m.bin" "$1" "$2" ${3:-} >/dev/null
	ins=$(python3 "$TOP/tests/gen/split-percpu.py" "$d/m.bin" "$d" "$1")
	for opts in "-t" "-t -s" "-t -b 3" "-t -w 0.0001:1 -a issue" "-t -o out.txt"; do
		rm -f "$d/out.txt"
		(cd "$d" && /usr/bin/blkparse $ins $opts >ref.txt 2>/dev/null; [ -f out.txt ] && mv out.txt ref.txt)
		(cd "$d" && $BLKPARSE $ins $opts >ours.txt 2>/dev/null; [ -f out.txt ] && mv out.txt ours.txt)
		check_same "random trace $1 ($2 events${3:+, ${3:-}}), options '$opts': same as the reference" "$d/ref.txt" "$d/ours.txt"
	done
done

# -t reading a pipe (-i -): the classic tool's batches, sort and immediate frees are
# replayed too; real merged traces (the bundled ones) and random time-ordered ones (seeds
# whose reference output does not vary from run to run: on some traces the classic tool
# reads a pointer as a time, which address randomisation changes at every run)
skip_vg_traces "-t from a pipe (3 option sets)"
for t in $(bundled_traces); do
	dd=$(unpack "$t")
	for opts in "-t" "-t -s -b 7" "-t -w 0.01:0.5"; do
		(cd "$dd" && /usr/bin/blkparse -i - $opts <"$t.bin" >"$w/$t-pipe-ref.txt" 2>/dev/null)
		(cd "$dd" && $BLKPARSE -i - $opts <"$t.bin" >"$w/$t-pipe-ours.txt" 2>/dev/null)
		check_same "$t read from a pipe, options '$opts': same as the reference" "$w/$t-pipe-ref.txt" "$w/$t-pipe-ours.txt"
	done
done
vi=0
for seed in 4 14 28; do
	vi=$((vi + 1))
	vg_sample $vi "-t from a pipe on the random time-ordered trace $seed" || continue
	d="$w/pipe$seed"
	mkdir -p "$d"
	python3 "$TOP/tests/gen/btt-edge.py" "$d/m.bin" "$seed" 4000 ordered >/dev/null
	(cd "$d" && /usr/bin/blkparse -i - -t <m.bin >ref.txt 2>/dev/null)
	(cd "$d" && $BLKPARSE -i - -t <m.bin >ours.txt 2>/dev/null)
	check_same "random time-ordered trace $seed read from a pipe with -t: same as the reference" "$d/ref.txt" "$d/ours.txt"
done

# -t with many CPUs: the classic tool's per-CPU table outgrows the heap (mmap, mremap)
# and its CPU bitmap is reallocated past 64 CPUs
d="$w/cpus70"
mkdir -p "$d"
"$gen" -n 30000 -c 70 -d 1 -s 9 -o t -D "$d"
(cd "$d" && /usr/bin/blkparse -i t -t >ref.txt 2>/dev/null)
(cd "$d" && $BLKPARSE -i t -t >ours.txt 2>/dev/null)
check_same "70 CPUs with -t: same as the reference" "$d/ref.txt" "$d/ours.txt"
fi
