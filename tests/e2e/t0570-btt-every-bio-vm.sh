#!/bin/bash
# Every bio counted (issue 36) where the kernel remaps and requeues: Debian's stock 6.1 in
# qemu (tests/vm/), one boot, two runs.
# 1. dm-linear over a partition of the virtio scratch disk, in two targets (a bio across
#    their boundary is split by dm: X on the dm device, the bio cut to its rest), the disk's
#    max_sectors_kb 16 (the disk splits the rest); both devices traced: each bio of the disk
#    comes through two A events (dm onto the partition, the partition onto the disk).
# 2. null_blk at mbps=4 (about 80 KiB per 20 ms tick): 8 concurrent 64 KiB direct writes at
#    a time, those over the tick's budget requeued (R) until the next.
# Checked against blkparse's text of the same trace (the reference's where installed), not
# against btt:
# - btt --export: per device, one row per Q with a size, with its bytes; the rows'
#   completions are the C events; every row as tests/gen/bioref.py works it out from the
#   records; the disk's rows remapped from the dm device, as many as the A events from it;
#   the dm device's split rows its X events; null_blk's rows' requeues its R events;
# - --percentiles: the Q2C N of each device is its Q events;
# - --perfetto: tests/gen/perfetto-btt.py's checks against the text (every Q one completed
#   slice, split bios with their pieces, the driver and queue depths, the rates);
# - the classic report is the reference btt's on the same trace, byte for byte.
. "$(dirname "$0")/../lib.sh"

skip_under_valgrind "every bio in a VM" "the tracer runs natively in the VM; the plain and ASan runs run it"
for tool in dmsetup python3; do
	if ! command -v $tool >/dev/null; then
		skip "every bio in a VM ($tool missing: tests/deps.sh installs it)"
		exit 0
	fi
done
. "$TOP/tests/vm/batch.sh"
vm_ready "every bio in a VM" || exit 0
w="$OUT/vm-every-bio"
rm -rf "$w"
mkdir -p "$w"
BTT="$TOP/btt/btt"
RB=$BLKPARSE
[ -x /usr/bin/blkparse ] && RB=/usr/bin/blkparse
bioref() { PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/bioref.py" "$@"; }

cat >"$w/dm-pre.sh" <<'EOF'
# a partition on the scratch disk, dm-linear over it in two targets of 16 MiB (the second
# 16 MiB further on the partition), then the disk's requests at most 16 KiB
disk=$DEV
printf 'o\nn\np\n1\n2048\n\nw\n' | fdisk "$disk"
i=0
while [ ! -b "${disk}1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
printf '0 32768 linear %s 0\n32768 32768 linear %s 65536\n' "${disk}1" "${disk}1" |
	dmsetup create btlin || return 1
dmsetup table btlin
echo 16 >"/sys/block/${disk##*/}/queue/max_sectors_kb" || return 1
DEV=
for d in /sys/block/dm-*; do DEV=/dev/${d##*/}; done
TRACE_ALSO=$disk
EOF
cat >"$w/dm-work.sh" <<'EOF'
# 128 KiB across the targets' boundary (16 MiB) and away from it, 8 KiB across it, 4 KiB
# writes, all O_DIRECT; buffered writes with fsync (the disk merges them)
io_write $((16 * 1048576 - 65536)) 131072
io_read $((16 * 1048576 - 65536)) 131072
io_read $((16 * 1048576 - 4096)) 8192
i=0
while [ $i -lt 8 ]; do
	io_read $((i * 1048576)) 131072
	io_write $((20 * 1048576 + i * 8192)) 4096
	i=$((i + 1))
done
dd if=/dev/zero of="$DEV" bs=4096 count=64 seek=1024 conv=fsync 2>>/out/workload.log
EOF
echo 'dmsetup remove btlin' >"$w/dm-post.sh"
cat >"$w/rq-work.sh" <<'EOF'
r=0
while [ $r -lt 4 ]; do
	i=0
	while [ $i -lt 8 ]; do
		dd if=/dev/zero of="$DEV" bs=65536 count=1 seek=$((r * 8 + i)) oflag=direct 2>>/out/workload.log &
		i=$((i + 1))
	done
	wait
	r=$((r + 1))
done
EOF

b="$w/batch"
vm_batch_new "$b"
vm_batch_add "$b" "$w/dm" --device virtio --kmod dm_mod --tool "$(command -v dmsetup)" \
	--pre "$w/dm-pre.sh" --post "$w/dm-post.sh" --workload "$w/dm-work.sh" --timeout 120
vm_batch_add "$b" "$w/rq" --device nullb --nullb-params "nr_devices=1 irqmode=1 mbps=4" \
	--workload "$w/rq-work.sh" --timeout 120
vm_batch_boot "$b" "$TOP/blktrace" >"$w/vm.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip "every bio in a VM ($(tail -n 1 "$w/vm.out"))"
	exit 0
elif [ $rc != 0 ]; then
	fail "every bio in a VM: the VM: $(tail -n 3 "$w/vm.out" | tr '\n' ' ')"
	exit 0
fi

# per device "DEV Q QSECTORS C X R" from the text (Q, C and R with a size)
counts() {
	awk '$6 ~ /^[QCXR]$/ && $1 ~ /^[0-9]+,[0-9]+$/ {
		d[$1] = 1
		if ($6 == "X") { x[$1]++; next }
		if ($9 != "+" || $10 == 0) next
		if ($6 == "Q") { q[$1]++; qs[$1] += $10 }
		if ($6 == "C") c[$1]++
		if ($6 == "R") r[$1]++
	}
	END { for (k in d) print k, q[k] + 0, qs[k] + 0, c[k] + 0, x[k] + 0, r[k] + 0 }' "$1"
}
# per device "DEV ROWS SECTORS COMPLETIONS SPLIT REQUEUES REMAPPED-FROM" of the export
rows() {
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		k = $c["major"] "," $c["minor"]; n[k]++; s[k] += $c["bytes"] / 512
		cm[k] += $c["completions"]; sp[k] += $c["split"]; rq[k] += $c["requeues"]
		if ($c["remap_major"] > 0) from[k] = from[k] " " $c["remap_major"] "," $c["remap_minor"]
	}
	END {
		for (k in n) {
			split(from[k], f, " "); delete u; l = ""
			for (i in f) u[f[i]]++
			for (d in u) l = l d "x" u[d] " "
			print k, n[k], s[k], cm[k], sp[k], rq[k], (l == "" ? "-" : l)
		}
	}' "$1"
}
pct_n() { # STAGE MAJ,MIN BTT-OUTPUT: the N of STAGE on the device in --percentiles' table
	local dev
	dev=$(printf '(%3d,%3d)' "${2%,*}" "${2#*,}")
	awk -v st="$1" -v dev="$dev" '$0 ~ "\\| " st " " && index($0, dev) {
		for (i = 1; i < NF; i++) if ($i == st) { print $(i + 1); exit }
	}' "$3"
}

perfetto_ok=1
perfetto_tools "every bio in a VM: --perfetto" || perfetto_ok=0

for run in dm rq; do
	d="$w/$run"
	if [ "$(cat "$d/blktrace.rc" 2>/dev/null)" != 0 ]; then
		fail "$run: the tracer in the VM: status $(cat "$d/blktrace.rc" 2>/dev/null): $(head -c 300 "$d/blktrace.stderr" 2>/dev/null)"
		continue
	fi
	names=$(cd "$d/trace" && ls -- *.blktrace.0 | sed 's/\.blktrace\.0$//')
	inputs=()
	for n in $names; do inputs+=(-i "$n"); done
	# the text of the per-CPU files: blkparse gives the events of a merged file each
	# CPU's times from its own first, not one time line
	(cd "$d/trace" && $RB "${inputs[@]}" >"$d/text.txt" 2>"$d/text.err" &&
		$BLKPARSE "${inputs[@]}" -d "$d/merged.bin" -O >/dev/null 2>&1) ||
		{ fail "$run: blkparse: $(head -n 2 "$d/text.err")"; continue; }
	(cd "$d" && $BTT -i merged.bin --export="tsv:$d/x" --percentiles >btt.out 2>btt.err) ||
		{ fail "$run: btt --export: $(head -n 2 "$d/btt.err")"; continue; }
	while read -r dev nq nqs nc nx nr; do
		read -r _ rn rs rc rsplit rreq rfrom <<<"$(rows "$d/x/io.tsv" | grep "^$dev ")"
		[ "$rn" = "$nq" ] && [ "$rs" = "$nqs" ] &&
			pass "$run: $dev: export: one row per bio queued ($rn, $((rs / 2)) KiB), as blkparse counts the Q events" ||
			fail "$run: $dev: export: ${rn:-0} rows ($rs sectors), blkparse: $nq Q ($nqs sectors)"
		[ "$rc" = "$nc" ] && pass "$run: $dev: export: the rows' completions are the $nc C events" ||
			fail "$run: $dev: export: completions $rc, C events $nc"
		n=$(pct_n Q2C "$dev" "$d/btt.out")
		[ "$n" = "$nq" ] && pass "$run: $dev: --percentiles: Q2C over every bio queued ($n)" ||
			fail "$run: $dev: --percentiles: Q2C N ${n:-none}, Q events $nq"
		case $run in
		dm)
			if [ "$nx" -gt 0 ] && [ "${dev%%,*}" = 253 ]; then
				[ "$rsplit" = "$nx" ] &&
					pass "$run: $dev: dm split $nx bios (X, the bio cut to its rest), each exported as one row, split" ||
					fail "$run: $dev: $nx X events, $rsplit rows split"
				dm=$dev
			elif [ "${dev%%,*}" != 253 ]; then
				na=$(grep -cE "^ *$dev .* A .* [0-9]+ \+ [1-9][0-9]* <- \(253," "$d/text.txt")
				[ "$na" -gt 0 ] && [ "$rfrom" = "253,0x$na" ] &&
					pass "$run: $dev: its $na rows remapped from the dm device (253,0), through the partition: as many as the text's A events from it with a size" ||
					fail "$run: $dev: rows remapped from: '$rfrom'; A events from the dm device: $na"
				[ "$nx" -gt 0 ] && [ "$rsplit" -gt 0 ] &&
					pass "$run: $dev: the disk split bios too ($nx X, $rsplit bios)" ||
					fail "$run: $dev: expected splits on the disk: $nx X, $rsplit split rows"
			fi
			;;
		rq)
			[ "$nr" -gt 0 ] && [ "$rreq" = "$nr" ] &&
				pass "$run: $dev: the rows' requeues are the $nr R events" ||
				fail "$run: $dev: requeues in the rows ${rreq:-0}, R events $nr (want some)"
			;;
		esac
	done < <(counts "$d/text.txt" | sort)
	[ "$run" = dm ] && [ -z "${dm:-}" ] && fail "dm: no split on the dm device (253,*): $(counts "$d/text.txt" | tr '\n' ' ')"
	res=$(bioref export "$d/merged.bin" "$d/x/io.tsv")
	[ "${res%% *}" = ok ] && pass "$run: export: every row as the records give the bio ($res)" ||
		fail "$run: export: $res"
	# the classic report: the reference's
	if [ -x /usr/bin/btt ]; then
		(cd "$d" && $BTT -i merged.bin >classic.txt 2>/dev/null && /usr/bin/btt -i merged.bin >ref.txt 2>/dev/null)
		check_same "$run: the classic report is the reference btt's, byte for byte" "$d/ref.txt" "$d/classic.txt"
	else
		skip "$run: the classic report against the reference (Debian's blktrace not installed)"
	fi
	if [ $perfetto_ok = 1 ]; then
		if (cd "$d" && $BTT -i merged.bin -q q --perfetto="$d/pf.pftrace" >pf-btt.txt 2>pf.err) &&
			"$PY" "$TOP/tests/gen/perfetto-check.py" --schema "$SHARED_DIR/perfetto" --dump "$d/dump.json" \
				"$d/pf.pftrace" >"$d/summary.json" 2>"$d/check.err"; then
			pass "$run: perfetto-check finds nothing wrong in the export"
			"$PY" "$TOP/tests/gen/perfetto-btt.py" --name "$run" --dump "$d/dump.json" --summary "$d/summary.json" \
				--q2c "$d/q" --report "$d/pf-btt.txt" --blkparse "$d/text.txt" 2>"$d/cmp.err" ||
				fail "$run: perfetto-btt.py could not compare: $(tail -n 2 "$d/cmp.err")"
		else
			fail "$run: btt --perfetto: $(head -n 2 "$d/pf.err" "$d/check.err" 2>/dev/null | tr '\n' ' ')"
		fi
	fi
done
