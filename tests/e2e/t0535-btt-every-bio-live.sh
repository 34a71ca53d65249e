#!/bin/bash
# Every bio counted (issue 36), live on this kernel. A loop device with max_sectors_kb 16
# splits every larger bio (X), sequential buffered writes are plug-merged (M), O_DIRECT
# reads of 128 KiB and of 4 KiB; traced with --iowait (dd's waits). Checked against
# blkparse's text of the same trace, not against btt:
# - btt --export: per device, the rows with a Q are the Q events with a size and carry their
#   bytes; the rows' completions add up to the C events, so doc/clickhouse.md's IOPS
#   (sum(completions) / (max(c_ns) - min(c_ns))) is blkparse's completions per second (the
#   span is the bios' completions', within 1% of the C events'); every row as
#   tests/gen/bioref.py works it out from the records;
# - --percentiles' N is every completed bio's; the classic report's note on stderr says how
#   many it leaves out;
# - the I/O wait section: dd's I/Os are the bios dd queued;
# - a trace recorded with -a issue -a complete: one row per request, no_q, the completions
#   adding up, its D2C percentiles over them.
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
BTT="$TOP/btt/btt"
skip_under_valgrind "every bio, live" "the tracer runs natively; the plain and ASan runs run it"
if ! command -v python3 >/dev/null; then
	skip "every bio, live (python3 missing)"
	exit 0
fi
tracer_setup "every bio, live" "$OUT/t0535" 64M
dev=$(printf '%d,%d' "0x$(stat -c %t "$loop")" "0x$(stat -c %T "$loop")")
bioref() { PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/bioref.py" "$@"; }
q=/sys/block/$name/queue/max_sectors_kb
old_max=$(cat "$q")
trap 'echo "$old_max" >"$q" 2>/dev/null; losetup -d "$loop" 2>/dev/null' EXIT
if ! echo 16 >"$q" 2>/dev/null || [ "$(cat "$q")" != 16 ]; then
	skip "every bio, live (cannot set $q to 16)"
	exit 0
fi

# trace WHAT DIR ARGS...: the tracer on $loop while workload WHAT runs, then the merged file
trace() {
	local what=$1 d=$2 bt i
	shift 2
	mkdir -p "$d"
	(cd "$d" && "$BT" -d "$loop" -w 60 "$@" >summary.txt 2>err.txt; echo $? >rc) &
	bt=$!
	if ! wait_tracing; then
		fail "$what: the tracer did not start: $(head -c 300 "$d/err.txt")"
		pkill -INT -P $bt
		wait $bt
		return 1
	fi
	case $what in
	mixed)
		dd if="$loop" of=/dev/null bs=128K count=64 iflag=direct status=none
		dd if=/dev/zero of="$loop" bs=4K count=1024 seek=8192 conv=fsync status=none
		for i in $(seq 0 63); do
			dd if="$loop" of=/dev/null bs=4K count=1 skip=$((i * 97 + 5)) iflag=direct status=none
		done
		;;
	dc)
		dd if="$loop" of=/dev/null bs=64K count=64 skip=100 iflag=direct status=none
		;;
	esac
	sleep 0.5
	pkill -INT -P $bt # the tracer, the subshell's child (which ignores SIGINT)
	wait $bt
	if [ "$(cat "$d/rc")" != 0 ]; then
		fail "$what: the tracer: status $(cat "$d/rc"): $(head -c 300 "$d/err.txt")"
		return 1
	fi
	(cd "$d" && $BLKPARSE -i "$name" -d merged.bin -O >/dev/null 2>&1 &&
		$BLKPARSE -i merged.bin -f '%M,%m %a %n %p %T.%t\n' >ev.txt 2>/dev/null)
}

# counts WHAT-FILE: per device "DEV Q QSECTORS C X M D" from blkparse's text
counts() {
	awk 'NF == 5 && $1 ~ /^[0-9]+,[0-9]+$/ && $3 > 0 {
		d[$1] = 1
		if ($2 == "Q") { q[$1]++; qs[$1] += $3 }
		if ($2 == "C") c[$1]++
		if ($2 == "D") dd[$1]++
		if ($2 == "M" || $2 == "F") m[$1]++
	}
	NF == 5 && $2 == "X" { x[$1]++; d[$1] = 1 }
	END { for (k in d) print k, q[k] + 0, qs[k] + 0, c[k] + 0, x[k] + 0, m[k] + 0, dd[k] + 0 }' "$1"
}
# rows TSV: per device "DEV ROWS-WITH-Q THEIR-SECTORS COMPLETIONS SPLIT MERGED NOQ"
rows() {
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		k = $c["major"] "," $c["minor"]; d[k] = 1
		if (!$c["no_q"]) { n[k]++; s[k] += $c["bytes"] / 512 } else nq[k]++
		cm[k] += $c["completions"]; sp[k] += $c["split"]; mg[k] += $c["merged"]
	}
	END { for (k in d) print k, n[k] + 0, s[k] + 0, cm[k] + 0, sp[k] + 0, mg[k] + 0, nq[k] + 0 }' "$1"
}

# pct_n STAGE BTT-OUTPUT: the N of the first (a device's) row of STAGE in --percentiles' table
pct_n() {
	awk -v st="$1" '/\| (Q2C|D2C|Q2D) / {
		for (i = 1; i < NF; i++) if ($i == st) { print $(i + 1); exit }
	}' "$2"
}

# ---- 1. splits, plug merges, direct reads, with the I/O waits ----
d="$w/mixed"
if trace mixed "$d" --iowait; then
	read -r dev nq nqs nc nx nm nd <<<"$(counts "$d/ev.txt" | grep "^$dev ")"
	if [ "${nx:-0}" -gt 0 ] && [ "${nm:-0}" -gt 0 ]; then
		pass "mixed: the trace has splits and merges ($nq Q, $nx X, $nm M, $nd D, $nc C on $dev)"
	else
		fail "mixed: expected X and M events on $dev: Q $nq X $nx M $nm"
	fi
	(cd "$d" && $BTT -i merged.bin --export="tsv:$d/x" --percentiles >btt.out 2>btt.err)
	read -r _ rq rqs rc rsplit rmerged rnoq <<<"$(rows "$d/x/io.tsv" | grep "^$dev ")"
	[ "$rq" = "$nq" ] && [ "$rqs" = "$nqs" ] &&
		pass "mixed: export: one row per bio queued ($rq, $((rqs / 2)) KiB), as blkparse counts the Q events" ||
		fail "mixed: export: $rq rows with a Q ($rqs sectors), blkparse: $nq Q ($nqs sectors)"
	[ "$rc" = "$nc" ] && [ "${rsplit:-0}" -gt 0 ] && [ "${rmerged:-0}" -gt 0 ] &&
		pass "mixed: export: the rows' completions are the $nc C events; $rsplit split and $rmerged merged bios" ||
		fail "mixed: export: completions $rc (C: $nc), split $rsplit, merged $rmerged"
	res=$(bioref export "$d/merged.bin" "$d/x/io.tsv")
	[ "${res%% *}" = ok ] && pass "mixed: export: every row as the records give the bio ($res)" ||
		fail "mixed: export: $res"
	# doc/clickhouse.md's IOPS: sum(completions) over (max(c_ns) - min(c_ns)), per device
	got=$(awk -F'\t' -v dev="$dev" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["major"] "," $c["minor"] == dev {
			n += $c["completions"]; t = $c["c_ns"]
			if (!lo || t < lo) lo = t
			if (t > hi) hi = t
		}
		END { printf "%.3f", n / ((hi - lo) / 1e9) }' "$d/x/io.tsv")
	# blkparse's completions over the span of their times in the records (blkparse's text
	# gives each CPU's events from that CPU's first: not one time line)
	want=$(PYTHONPATH="$TOP/tests/gen" python3 -B - "$d/merged.bin" "$dev" "$nc" <<'PY'
import sys
import blkrec
ma, mi = (int(x) for x in sys.argv[2].split(","))
t = [r.time for r in blkrec.records(open(sys.argv[1], "rb").read())
     if r.action & 0xffff == blkrec.TA_COMPLETE and r.bytes
     and not r.action & (blkrec.TC_NOTIFY << 16) and r.device == (ma << 20 | mi)]
print("%.3f" % (int(sys.argv[3]) / ((max(t) - min(t)) / 1e9)))
PY
)
	# the same count; the span differs by the time from the first C to the first bio's
	# last one (a split bio completes at its last piece), which on a loaded machine was
	# 1.4% of this short trace once: within 5%
	if [ -n "$got" ] && [ -n "$want" ] && awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d * d < (b / 20) ^ 2) }'; then
		pass "mixed: the doc's IOPS query on the rows: $got/s; blkparse's completions per second: $want/s"
	else
		fail "mixed: IOPS from the rows $got, from blkparse's C events $want"
	fi
	n=$(pct_n Q2C "$d/btt.out")
	grep -q "^N: bios, a split one once" "$d/btt.out" && [ "$n" = "$nq" ] &&
		pass "mixed: --percentiles' Q2C N is every bio's ($n), and the table says so" ||
		fail "mixed: --percentiles Q2C N '$n', bios $nq"
	grep -q "^btt: note: the report's latencies leave out [1-9][0-9]* of $nq queued I/Os (.*the trace has $nx split (X) events)" "$d/btt.err" &&
		pass "mixed: the classic report's note says what it leaves out: $(grep -o 'leave out [0-9]* of [0-9]*' "$d/btt.err")" ||
		fail "mixed: no note of the left-out I/Os: $(head -c 300 "$d/btt.err")"
	# the I/O wait section: each process's I/Os are the bios its pid queued
	if grep -q '^==================== I/O wait by process' "$d/btt.out"; then
		res=$(awk 'NR == FNR { if ($2 == "Q" && $3 > 0) q[$4]++; next }
			/^==================== I\/O wait by process/ { on = 1; next }
			on && /^ *[0-9]+ .*\|/ { pid = $1; next }
			on && /I\/Os  Q2C avg/ { for (i = 2; i <= NF; i++) if ($i == "I/Os") got[pid] += $(i - 1) }
			on && /^Waits from:/ { on = 0 }
			END {
				for (p in got) {
					n++
					if (got[p] != q[p] + 0) { printf "pid %s: %d I/Os, %d Q; ", p, got[p], q[p]; bad = 1 }
				}
				if (!bad) printf "ok %d", n
			}' "$d/ev.txt" "$d/btt.out")
		[ "${res%% *}" = ok ] && [ "${res#ok }" -gt 0 ] &&
			pass "mixed: the I/O wait section: each process's I/Os are the bios it queued (${res#ok } processes)" ||
			fail "mixed: the I/O wait section: $res"
	else
		skip "mixed: the I/O wait section (no wait notes recorded: $(head -c 200 "$d/err.txt"))"
	fi
fi

# ---- 2. -a issue -a complete: no Q; a bio per request, from its D ----
d="$w/dc"
echo 128 >"$q"
if trace dc "$d" -a issue -a complete; then
	(cd "$d" && $BTT -i merged.bin --export="tsv:$d/x" --percentiles-only >btt.out 2>btt.err)
	read -r _ nq _ nc _ _ nd <<<"$(counts "$d/ev.txt" | grep "^$dev ")"
	read -r _ rq _ rc _ _ rnoq <<<"$(rows "$d/x/io.tsv" | grep "^$dev ")"
	n=$(pct_n D2C "$d/btt.out")
	if [ "$nq" = 0 ] && [ "$rq" = 0 ] && [ "$rnoq" = "$nd" ] && [ "$rc" = "$nc" ] && [ "$n" = "$nd" ] &&
		[ "$nd" -gt 0 ]; then
		pass "-a issue -a complete: $rnoq rows without a Q, one per D; completions = the $nc C; D2C N $n"
	else
		fail "-a issue -a complete: Q $nq D $nd C $nc; rows with Q $rq, without $rnoq, completions $rc; D2C N $n"
	fi
	res=$(bioref export "$d/merged.bin" "$d/x/io.tsv")
	[ "${res%% *}" = ok ] && pass "-a issue -a complete: every row as the records give it ($res)" ||
		fail "-a issue -a complete: $res"
fi
kernel_unlock
