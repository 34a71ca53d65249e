#!/bin/bash
# The cgroup of every I/O (issue 39, section 1; include/blk/trace.h BLK_TN_CGROUP and
# BLK_TN_CGPATH), live through tracefs: two blkio (cgroup v1) cgroups, one nested, each with
# a dd doing a known number of O_DIRECT reads of a loop device, traced with
# 'blktrace --origin':
# - blkparse's %G names each Q by its cgroup's path and %g prints its id as blkparse 1.3.0
#   prints a tagged record's ("INO,0" in hex, the directory's inode number): exact per-cgroup
#   counts, in the per-CPU files, in blkparse -d's merged file and through -o - | blkparse -i -;
# - the tracer puts options/blk_cgroup back as found, and after SIGKILL 'blktrace -k' does;
# - blkparse 1.2.0 (/usr/bin/blkparse) reads the files without a word and prints exactly
#   what it prints for the same files without the notes (the records are the untagged ones
#   blktrace writes without --origin).
. "$(dirname "$0")/../lib.sh"

BT="$TOP/blktrace"
RB=/usr/bin/blkparse
NA=37 NB=23 # the direct reads of each cgroup's dd
skip_under_valgrind "blktrace --origin live" "a live kernel trace; the plain and ASan runs run it"
B=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
if is_root && [ -z "$B" ]; then
	skip "blktrace --origin live (no cgroup v1 hierarchy with the blkio controller mounted)"
	exit 0
fi
tracer_setup "blktrace --origin live" "$OUT/t0548" 64M
if [ ! -e "$T/options/blk_cgroup" ]; then
	skip "blktrace --origin live (the kernel's blk tracer has no blk_cgroup option: CONFIG_BLK_CGROUP)"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	skip "blktrace --origin live (python3 missing: it strips the notes for the 1.2.0 comparison)"
	exit 0
fi
CA="blktrace-ng-t0548-$$-a" CB="blktrace-ng-t0548-$$-b"
mkdir "$B/$CA" "$B/$CB" "$B/$CB/sub" || {
	fail "cannot make cgroups under $B"
	exit 0
}
trap 'rmdir "$B/$CA" "$B/$CB/sub" "$B/$CB" 2>/dev/null; losetup -d "$loop" 2>/dev/null' EXIT
ida=$(stat -c %i "$B/$CA") idb=$(stat -c %i "$B/$CB/sub")
was=$(cat "$T/options/blk_cgroup")
tstate() { # the top-level tracefs settings the tracer and -k touch
	local f
	for f in tracing_on current_tracer trace_clock options/bin options/blk_cgroup buffer_size_kb; do
		echo "$f=$(cat "$T/$f")"
	done
}
before=$(tstate)

# in_cgroup CGROUP COUNT SKIP: a dd reading COUNT 4 KiB blocks O_DIRECT, in CGROUP
in_cgroup() {
	sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if="$2" of=/dev/null bs=4096 count="$3" skip="$4" iflag=direct status=none' \
		sh "$B/$1" "$loop" "$2" "$3"
}
workload() {
	in_cgroup "$CA" $NA 0
	in_cgroup "$CB/sub" $NB 1000
}
# counts FILE: "PATH ID COUNT" of the Q lines of a blkparse -f '%a %G %g\n' output
counts() {
	awk '$1 == "Q" { n[$2 " " $3]++ } END { for (k in n) print k, n[k] }' "$1" | sort
}
want=$(printf '/%s %x,0 %d\n/%s %x,0 %d\n' "$CA" "$ida" $NA "$CB/sub" "$idb" $NB | sort)

# 1. per-CPU files
d="$w/files"
mkdir -p "$d"
(cd "$d" && exec "$BT" --origin -d "$loop" -o t >out.txt 2>err.txt) &
bt=$!
if ! wait_tracing; then
	fail "the tracer did not start: $(head -c 300 "$d/err.txt")"
	kill -INT $bt
	wait $bt
	exit 0
fi
during=$(cat "$T/options/blk_cgroup")
workload
sleep 0.3
kill -INT $bt
wait $bt
rc=$?
after=$(cat "$T/options/blk_cgroup")
if [ $rc = 0 ] && [ "$during" = 1 ] && [ "$after" = "$was" ] &&
	grep -q -- "--origin: the cgroup of each I/O, named from the cgroup v1 hierarchy at $B" "$d/err.txt"; then
	pass "blktrace --origin: blk_cgroup on while tracing, back to $was after; says the hierarchy ($B)"
else
	fail "blktrace --origin: rc=$rc blk_cgroup during=$during after=$after (was $was): $(tr '\n' ' ' <"$d/err.txt" | head -c 400)"
fi
if grep -q "^  Cgroups: 2 named from $B, 0 not found there (named by number)$" "$d/out.txt"; then
	pass "the summary says how the cgroups were named: $(grep Cgroups "$d/out.txt")"
else
	fail "the summary's cgroup line: $(tr '\n' ' ' <"$d/out.txt")"
fi
(cd "$d" && $BLKPARSE -i t -f '%a %G %g\n' >cg.txt 2>cg.err)
got=$(counts "$d/cg.txt")
if [ "$got" = "$want" ]; then
	pass "per-CPU files: Q per cgroup exact: $(echo $got)"
else
	fail "per-CPU files: Q per cgroup: got '$(echo $got)', want '$(echo $want)'"
fi
# every event of a request carries it (G D C too), plugs and unplugs never, as 1.3.0 prints
bad=$(awk '($1 == "P" || $1 == "U") && $3 != "0,0" || ($1 ~ /^[GDC]$/ && $3 == "0,0")' "$d/cg.txt" | head -3)
nd=$(awk '$1 == "D" && $2 != "-"' "$d/cg.txt" | wc -l)
if [ -z "$bad" ] && [ "$nd" = $((NA + NB)) ]; then
	pass "G, D and C carry the cgroup ($nd dispatches), plugs and unplugs 0,0"
else
	fail "cgroups of the other events: $nd dispatches named; wrong: $bad"
fi

# 2. blkparse -d: the merged file keeps the notes ahead of their events
(cd "$d" && $BLKPARSE -i t -d merged.bin -O >/dev/null 2>&1 && $BLKPARSE -i merged.bin -f '%a %G %g\n' >m.txt 2>m.err)
got=$(counts "$d/m.txt")
if [ "$got" = "$want" ]; then
	pass "blkparse -d's merged file: the same per-cgroup counts"
else
	fail "merged file: Q per cgroup: got '$(echo $got)', want '$(echo $want)'"
fi

# 3. blkparse 1.2.0 reads the files as it reads them without the notes
strip_notes() { # SRC DST: the records of SRC but the cgroup notes (codes 0x42, 0x43)
	python3 - "$1" "$2" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, o = [], 0
while o + 48 <= len(d):
    action, plen = struct.unpack_from('<I', d, o + 28)[0], struct.unpack_from('<H', d, o + 46)[0]
    if not (action & (1 << 26) and (action & 0xffff) in (0x42, 0x43)):
        out.append(d[o:o + 48 + plen])
    o += 48 + plen
open(sys.argv[2], 'wb').write(b''.join(out + [d[o:]]))
EOF
}
if [ -x $RB ]; then
	mkdir -p "$d/plain"
	for f in "$d"/t.blktrace.*; do
		strip_notes "$f" "$d/plain/$(basename "$f")"
	done
	nnotes=$(($(cat "$d"/t.blktrace.* | wc -c) - $(cat "$d"/plain/t.blktrace.* | wc -c)))
	for o in "" -s -q; do
		(cd "$d" && $RB -i t $o >"ref$o.txt" 2>"ref$o.err")
		r1=$?
		(cd "$d/plain" && $RB -i t $o >"ref$o.txt" 2>"ref$o.err")
		if [ $r1 = 0 ] && [ ! -s "$d/ref$o.err" ] && [ "$nnotes" -gt 0 ] &&
			cmp -s "$d/ref$o.txt" "$d/plain/ref$o.txt"; then
			pass "blkparse 1.2.0 $o reads the --origin files without a word, as without the notes ($nnotes bytes of notes)"
		else
			fail "blkparse 1.2.0 $o on the --origin files: rc=$r1 $(head -c 300 "$d/ref$o.err") $(diff "$d/ref$o.txt" "$d/plain/ref$o.txt" | head -5)"
		fi
	done
	# ours prints for them what the reference prints (the notes show nowhere by default)
	for o in "" -s -q; do
		(cd "$d" && $BLKPARSE -i t $o >"ours$o.txt" 2>"ours$o.err")
		check_same "our blkparse $o on the --origin files prints what blkparse 1.2.0 prints" \
			"$d/ref$o.txt" "$d/ours$o.txt"
	done
	if have_modelled_glibc; then
		(cd "$d" && $RB -i t -t >ref-t.txt 2>&1 && $BLKPARSE -i t -t >ours-t.txt 2>&1)
		check_same "our blkparse -t on the --origin files: the reference's text, stale times included" \
			"$d/ref-t.txt" "$d/ours-t.txt"
	else
		skip "blkparse -t on the --origin files (the host's glibc is not the modelled one: doc/blkparse.1 -t)"
	fi
	nq=$(awk '$6 == "Q"' "$d/ref.txt" | wc -l)
	[ "$nq" = $((NA + NB)) ] && pass "blkparse 1.2.0 prints the $nq queued reads" ||
		fail "blkparse 1.2.0 prints $nq Q, want $((NA + NB))"
	(cd "$d" && $RB -i - <merged.bin >rm.txt 2>rm.err)
	nq=$(awk '$6 == "Q"' "$d/rm.txt" | wc -l)
	[ "$nq" = $((NA + NB)) ] && [ ! -s "$d/rm.err" ] &&
		pass "blkparse 1.2.0 -i - reads the merged file: $nq Q, nothing on stderr" ||
		fail "blkparse 1.2.0 -i - < merged file: $nq Q; $(head -c 300 "$d/rm.err")"
else
	skip "blkparse 1.2.0 on --origin files (no /usr/bin/blkparse: apt-get install blktrace)"
fi

# 3b. btt on the merged file: the notes change nothing
strip_notes "$d/merged.bin" "$d/merged-plain.bin"
BTT="$TOP/btt/btt"
(cd "$d" && $BTT -i merged.bin >btt.txt 2>&1 && $BTT -i merged-plain.bin >btt-plain.txt 2>&1)
sed -i 's/merged-plain\.bin/merged.bin/g' "$d/btt-plain.txt"
# btt's "I/O by cgroup" section (its title, a blank line, the table, a blank line, the
# counts, a blank line): each dd's direct reads on its cgroup's line; the rest unchanged
awk '/^==================== I\/O by cgroup/ { s = 1; b = 0; next }
	s && /^$/ { if (++b == 3) s = 0; next }
	s { if (b == 1 && !/^CGROUP/) print > "'"$d/btt-cg.txt"'"; next }
	{ print }' "$d/btt.txt" >"$d/btt-rest.txt"
check_same "btt on the merged --origin file: the notes change nothing but add I/O by cgroup" \
	"$d/btt-plain.txt" "$d/btt-rest.txt"
ios() { # PATH: the I/Os of its lines
	awk -F'|' -v p="$1" '{ split($1, a, " "); split($2, b, " ") } a[1] == p { n += b[1] }
		END { print n + 0 }' "$d/btt-cg.txt" 2>/dev/null
}
ga=$(ios "/$CA")
gb=$(ios "/$CB/sub")
if [ "$ga" = $NA ] && [ "$gb" = $NB ]; then
	pass "btt's I/O by cgroup: /$CA $NA I/Os, /$CB/sub $NB, as the dds read"
else
	fail "btt's I/O by cgroup: /$CA $ga I/Os (want $NA), /$CB/sub $gb (want $NB) ($d/btt-cg.txt)"
fi
if [ -x /usr/bin/btt ]; then
	(cd "$d" && /usr/bin/btt -i merged.bin >rbtt.txt 2>&1 && /usr/bin/btt -i merged-plain.bin >rbtt-plain.txt 2>&1)
	sed -i 's/merged-plain\.bin/merged.bin/g' "$d/rbtt-plain.txt"
	check_same "btt 2.09 on the merged --origin file: the notes change nothing" "$d/rbtt-plain.txt" "$d/rbtt.txt"
fi

# 4. -o - | blkparse -i -
d="$w/pipe"
mkdir -p "$d"
("$BT" --origin -d "$loop" -o - 2>"$d/err.txt" | $BLKPARSE -i - -f '%a %G %g\n' >"$d/cg.txt" 2>"$d/cg.err") &
pp=$!
if wait_tracing; then
	workload
	sleep 0.3
	kill -INT "$(pgrep -n -f "^$BT --origin -d $loop -o -")" 2>/dev/null
fi
wait $pp
got=$(counts "$d/cg.txt")
if [ "$got" = "$want" ] && [ "$(cat "$T/options/blk_cgroup")" = "$was" ]; then
	pass "-o - | blkparse -i -: the same per-cgroup counts; blk_cgroup back to $was"
else
	fail "-o - | blkparse -i -: got '$(echo $got)', want '$(echo $want)'; $(head -c 300 "$d/err.txt")"
fi

# 5. SIGKILL: blktrace -k puts blk_cgroup back from the state file
d="$w/kill"
mkdir -p "$d"
(cd "$d" && exec "$BT" --origin -d "$loop" >/dev/null 2>err.txt) &
bt=$!
if wait_tracing; then
	kill -KILL $bt
	wait $bt 2>/dev/null
	left=$(cat "$T/options/blk_cgroup")
	"$BT" -k -d "$loop" >"$d/k.out" 2>&1
	now=$(cat "$T/options/blk_cgroup")
	if [ "$left" = 1 ] && [ "$now" = "$was" ] && grep -q "options/blk_cgroup=$was" "$d/k.out"; then
		pass "after SIGKILL blk_cgroup is left on; blktrace -k puts it back: $(tr '\n' ' ' <"$d/k.out")"
	else
		fail "SIGKILL: blk_cgroup left=$left, after -k $now (was $was): $(tr '\n' ' ' <"$d/k.out")"
		echo "$was" >"$T/options/blk_cgroup"
		"$BT" -k -d "$loop" >/dev/null 2>&1
	fi
else
	fail "SIGKILL: the tracer did not start: $(head -c 300 "$d/err.txt")"
	kill -INT $bt
	wait $bt
fi

# 5b. the same without the state file (/run not writable, or removed): -k turns it off (what
# -k cannot know then, trace_clock, buffer_size_kb and tracing_on, the test puts back)
(cd "$d" && exec "$BT" --origin -d "$loop" >/dev/null 2>err2.txt) &
bt=$!
if wait_tracing; then
	clock=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$T/trace_clock") kb=$(sed 's/ .*//' "$T/buffer_size_kb")
	kill -KILL $bt
	wait $bt 2>/dev/null
	oldclock=$(sed -n 's/^trace_clock //p' /run/blktrace-ng/tracefs.state)
	oldkb=$(sed -n 's/^buffer_size_kb //p' /run/blktrace-ng/tracefs.state)
	oldon=$(sed -n 's/^tracing_on //p' /run/blktrace-ng/tracefs.state)
	rm -f /run/blktrace-ng/tracefs.state
	"$BT" -k -d "$loop" >"$d/k2.out" 2>&1
	now=$(cat "$T/options/blk_cgroup")
	[ -n "$oldclock" ] && echo "$oldclock" >"$T/trace_clock"
	[ -n "$oldkb" ] && echo "$oldkb" >"$T/buffer_size_kb"
	[ -n "$oldon" ] && echo "$oldon" >"$T/tracing_on"
	if [ "$now" = 0 ] && grep -q "options/blk_cgroup=0" "$d/k2.out"; then
		pass "without the state file, blktrace -k turns blk_cgroup off and says so: $(tr '\n' ' ' <"$d/k2.out")"
	else
		fail "without the state file: blk_cgroup $now after -k (clock was $clock, $kb KiB): $(tr '\n' ' ' <"$d/k2.out")"
	fi
	echo "$was" >"$T/options/blk_cgroup"
else
	fail "SIGKILL without state file: the tracer did not start: $(head -c 300 "$d/err2.txt")"
	kill -INT $bt
	wait $bt
fi

# 6. --origin with the relay backend (t0527 traces with it in the VM, cgroups, files and dirtiers): here,
# under lockdown, the relay files refuse, and the tracer says so; blk_cgroup stays as it was
cg_before=$(cat "$T/options/blk_cgroup" 2>/dev/null)
"$BT" --origin --backend=relay -d "$loop" -w 1 -D "$w/relay" >/dev/null 2>"$w/relay.err"
rc=$?
cg_after=$(cat "$T/options/blk_cgroup" 2>/dev/null)
if [ $rc = 0 ]; then
	pass "--origin --backend=relay: traced (relay files readable on this kernel)"
elif [ $rc = 1 ] && grep -q "relay files\|BLKTRACESETUP" "$w/relay.err" && [ "$cg_after" = "$cg_before" ]; then
	pass "--origin --backend=relay: the relay path's own error, blk_cgroup left at $cg_after: $(head -n 1 "$w/relay.err")"
else
	fail "--origin --backend=relay: rc=$rc, blk_cgroup $cg_before -> $cg_after: $(head -c 300 "$w/relay.err")"
fi

# 6b. a relay tracer with --origin killed with SIGKILL leaves blk_cgroup on (the classic
# tools reject the records it tags): blktrace -k, tearing its relay trace down, resets it
if python3 "$TOP/tests/gen/relay-left.py" "$loop" >"$w/left.out" 2>&1; then
	echo 1 >"$T/options/blk_cgroup"
	"$BT" -k -d "$loop" >/dev/null 2>"$w/kill.err"
	rc=$?
	cg_after=$(cat "$T/options/blk_cgroup")
	echo 0 >"$T/options/blk_cgroup"
	[ $rc = 0 ] && [ "$cg_after" = 0 ] && grep -q "reset .*blk_cgroup" "$w/kill.err" &&
		pass "blktrace -k after a relay --origin tracer: its trace torn down and blk_cgroup reset, said: $(head -n 1 "$w/kill.err")" ||
		fail "blktrace -k after a relay --origin tracer: rc=$rc, blk_cgroup $cg_after: $(head -c 300 "$w/kill.err")"
else
	"$BT" -k -d "$loop" >/dev/null 2>&1
	skip "blktrace -k after a relay --origin tracer (BLKTRACESETUP refused here: $(tail -n 1 "$w/left.out"))"
fi

# 7. damaged notes: a path with a control byte, a run of no events: counted and said, the
# events they name show no cgroup, nothing else changes
d="$w/files" x="$w/damaged"
mkdir -p "$x"
cp "$d"/t.blktrace.* "$x/"
python3 - "$x" <<'PY'
import glob, struct, sys
done = set()
for f in sorted(glob.glob(sys.argv[1] + '/t.blktrace.*')):
    d = bytearray(open(f, 'rb').read())
    o = 0
    while o + 48 <= len(d):
        a, pl = struct.unpack_from('<I', d, o + 28)[0], struct.unpack_from('<H', d, o + 46)[0]
        code = a & 0xffff if a & (1 << 26) else None
        if code == 0x43 and 'path' not in done:
            d[o + 48 + 9] = 7  # a control byte in the path
            done.add('path')
        elif code == 0x42 and 'path' in done and 'run' not in done:
            struct.pack_into('<I', d, o + 48 + 12, 0)  # a run of no events
            done.add('run')
        o += 48 + pl
    open(f, 'wb').write(d)
PY
(cd "$x" && $BLKPARSE -i t -f '%a %G %g\n' >cg.txt 2>cg.err)
rc=$?
if [ $rc = 0 ] && grep -q "cgroup notes of blktrace --origin were damaged and skipped" "$x/cg.err" &&
	[ "$(grep -c '^Q' "$x/cg.txt")" = $((NA + NB)) ]; then
	pass "damaged notes: counted and said, every event still printed: $(head -n 1 "$x/cg.err")"
else
	fail "damaged notes: rc=$rc $(head -c 300 "$x/cg.err")"
fi

now=$(tstate)
if [ "$now" = "$before" ]; then
	pass "every tracefs setting as found at the end"
else
	fail "tracefs settings at the end differ: $(diff <(echo "$before") <(echo "$now") | tr '\n' ' ')"
fi
