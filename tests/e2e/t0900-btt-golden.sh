#!/bin/bash
# btt against the reference btt 2.09: the stored reports of the bundled real traces (default
# report and range data, the *_fp.dat files, -l/-q, -A, -p), then differential runs against
# /usr/bin/btt on synthetic traces for every option we claim, then behaviour (usage, errors),
# then the --percentiles addition checked against exact percentiles from the -l/-q/-z files.
# Options whose output is not identical yet are reported as XFAIL with the reason.
. "$(dirname "$0")/../lib.sh"

BTT="$TOP/btt/btt"
if [ ! -x "$BTT" ]; then
	fail "btt: $BTT not built"
	exit 0
fi
[ -n "${VALGRIND:-}" ] && BTT="$VG $BTT"
REF_BTT=/usr/bin/btt
[ -x "$REF_BTT" ] || REF_BTT=
# reference outputs stored next to the traces (tests/data, or the shared capture directory)
SHARED=${BTT_REF_DIR:-$TOP/tests/data}
w="$OUT/btt"
rm -rf "$w"
mkdir -p "$w"

# ref_file TRACE FILE: print the path of a stored reference file (decompressed if needed)
ref_file() {
	local t=$1 f=$2 d
	d=$(unpack "$t")
	if [ -f "$d/$f" ]; then
		echo "$d/$f"
	elif [ -f "$SHARED/$t/$f" ]; then
		echo "$SHARED/$t/$f"
	elif [ -f "$SHARED/$t/$f.xz" ]; then
		mkdir -p "$w/ref/$t"
		xz -dc "$SHARED/$t/$f.xz" >"$w/ref/$t/$f"
		echo "$w/ref/$t/$f"
	fi
}

# run_in DIR CMD...: run in a fresh directory (btt writes *_fp.dat into the current one)
run_in() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && "$@" >stdout 2>stderr; echo $? >rc)
}

# ---- 1. stored reference outputs of the real traces ----
skip_vg_traces "btt against the stored reference outputs"
for t in $(bundled_traces); do
	d=$(unpack "$t")
	bin="$d/$t.bin"
	exp=$(ref_file "$t" "$t.btt.txt")
	if [ -z "$exp" ]; then
		skip "btt $t: no stored reference report"
		continue
	fi
	o="$w/$t/default"
	run_in "$o" $BTT -i "$bin"
	[ "$(cat "$o/rc")" = 0 ] || fail "btt $t: exit status $(cat "$o/rc")"
	check_same "btt $t: default report and range data" "$exp" "$o/stdout"
	n=0
	for f in "$SHARED/$t"/*_fp.dat; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		check_same "btt $t: $(basename "$f")" "$f" "$o/$(basename "$f")"
	done
	[ $n -gt 0 ] || skip "btt $t: no stored *_fp.dat files"
	got=$(cd "$o" && ls -- *_fp.dat 2>/dev/null | sort | tr '\n' ' ')
	want=$(cd "$SHARED/$t" 2>/dev/null && ls -- *_fp.dat 2>/dev/null | sort | tr '\n' ' ')
	if [ $n -gt 0 ]; then
		[ "$got" = "$want" ] && pass "btt $t: the same set of _fp.dat files" ||
			fail "btt $t: _fp.dat files: got '$got', want '$want'"
	fi

	exp=$(ref_file "$t" "$t.btt-lq.txt")
	if [ -n "$exp" ]; then
		o="$w/$t/lq"
		run_in "$o" $BTT -i "$bin" -l "$t.d2c" -q "$t.q2c"
		check_same "btt $t -l -q: report" "$exp" "$o/stdout"
		for f in "$SHARED/$t/$t".d2c_*_d2c.dat "$SHARED/$t/$t".q2c_*_q2c.dat; do
			[ -f "$f" ] || continue
			check_same "btt $t -l -q: $(basename "$f")" "$f" "$o/$(basename "$f")"
		done
	fi
	exp=$(ref_file "$t" "$t.btt-A.txt")
	if [ -n "$exp" ]; then
		o="$w/$t/A"
		run_in "$o" $BTT -A -i "$bin"
		check_same "btt $t -A: report" "$exp" "$o/stdout"
	fi
	exp=$(ref_file "$t" "$t.per-io.txt")
	if [ -n "$exp" ]; then
		o="$w/$t/p"
		run_in "$o" $BTT -i "$bin" -p "$t.per-io.txt"
		check_same "btt $t -p: per-IO dump" "$exp" "$o/$t.per-io.txt"
	fi
done

# ---- 2. differential runs against the reference on synthetic traces ----
GEN="$TOP/tests/gen/gentrace"
if [ -z "$REF_BTT" ]; then
	skip "btt differential runs (no reference btt at /usr/bin/btt; apt-get install blktrace)"
elif [ ! -x "$GEN" ] || [ ! -x "$TOP/blkparse" ]; then
	skip "btt differential runs (tests/gen/gentrace or blkparse not built)"
else
	syn="$w/syn"
	mkdir -p "$syn/raw"
	printf 'alpha 8,0\nbeta 8,16\n' >"$syn/devmap"
	bins=""
	for s in 1 2 3; do
		"$GEN" -n 20000 -d $((s % 3 + 1)) -s $s -o g$s -D "$syn/raw" >/dev/null 2>&1
		names=$(cd "$syn/raw" && ls g$s*.blktrace.* | sed 's/\.blktrace\..*//' | sort -u |
			sed 's/^/-i /' | tr '\n' ' ')
		"$TOP/blkparse" $names -D "$syn/raw" -d "$syn/g$s.bin" -O >/dev/null 2>&1
		bins="$bins g$s"
	done
	bins="$bins $(for t in complete-only ext4-mixed multi-dev nullb-randrw part-remap; do echo "$(unpack $t)/$t.bin"; done)"
	# hand-made edge cases: unnamed pids, a dm device with a remap, S/R/M/F, PC and zero-byte
	# events, a completion before its issue, time going backwards, overlapping queued I/Os,
	# a second Q at a waiting Q's sector, unplugs outside a plug, one-sample seek windows
	PYTHONPATH="$TOP/tests/gen" python3 -B - "$syn" <<'PY'
import sys, blkrec
codes = {'Q': (1, 4), 'M': (2, 4), 'F': (3, 4), 'G': (4, 4), 'S': (5, 4), 'R': (6, 5), 'D': (7, 6),
         'C': (8, 7), 'P': (9, 4), 'U': (10, 4), 'T': (11, 4), 'I': (12, 4), 'A': (15, 4), 'Z': (1, 9)}
def dv(s):
    a, b = s.split(',')
    return blkrec.mkdev(int(a), int(b))
def trace(lines):
    tr, seq = blkrec.Trace(version=7, endian='<'), 0
    for line in lines:
        f = line.split()
        seq += 1
        if f[0] == 'N':
            tr.note(blkrec.TN_PROCESS, int(f[1]), blkrec.mkdev(8, 0), f[2].encode() + b'\0', seq=seq)
            continue
        if f[0] == 'MSG':
            tr.note(blkrec.TN_MESSAGE, 0, dv(f[2]), ' '.join(f[3:]).encode(),
                    time=int(float(f[1]) * 1e9), seq=seq)
            continue
        t = int(float(f[0]) * 1e9)
        c, cat = codes[f[1]]
        dev = dv(f[5])
        rw = blkrec.TC_WRITE if len(f) > 7 and f[7] == 'W' else blkrec.TC_READ
        act = blkrec.act(c, (1 << cat) | blkrec.TC_FS | rw)
        pdu = b''
        if f[1] in 'UT':
            pdu = blkrec.unplug_pdu(int(f[6]))
        if f[1] == 'A':
            fd, fs = f[7].split(':')
            pdu = blkrec.remap_pdu(dv(fd), dev, int(fs))
        tr.rec(seq, t, int(f[2]), int(f[3]), act, int(f[4]), dev, 0, pdu=pdu)
    return tr.data()
e1 = ["N 10 aaa", "N 20 bbb/1", "N 0 swapper",
      "0.001 G 50 4096 10 8,0", "0.002 Q 100 4096 10 253,0", "0.0021 A 5100 4096 10 8,0 x 253,0:100",
      "0.0022 Q 5100 4096 10 8,0", "0.0023 S 5100 4096 10 8,0", "0.0025 G 5100 4096 20 8,0",
      "0.0026 I 5100 4096 20 8,0", "0.003 D 5100 4096 20 8,0", "0.0031 Z 9000 4096 20 8,0",
      "0.0032 Q 9000 0 20 8,0", "0.004 C 5100 4096 0 8,0", "0.0041 C 100 4096 0 253,0",
      "0.005 Q 200 4096 10 8,0", "0.0051 Q 200 8192 20 8,0", "0.0052 R 200 8192 20 8,0",
      "0.0053 D 200 8192 20 8,0", "0.006 C 200 8192 0 8,0", "0.007 Q 300 4096 10 8,0",
      "0.0071 Q 308 4096 10 8,0", "0.0072 M 308 4096 10 8,0", "0.0073 D 300 8192 10 8,0",
      "0.008 C 300 4096 0 8,0", "0.009 C 308 4096 0 8,0", "0.0095 U 0 0 0 8,0 5",
      "0.0096 P 0 0 0 8,0", "0.0097 T 0 0 0 8,0 12", "0.0098 P 0 0 0 8,0", "0.0099 U 0 0 0 8,0 3",
      "MSG 0.0099 8,0 hello world", "0.0100 Q 400 4096 30 8,0 x W", "0.0101 C 400 4096 0 8,0",
      "0.0102 D 400 4096 30 8,0 x W", "0.5 Q 500 4096 10 8,0", "0.3 C 500 4096 0 8,0",
      "0.6 D 500 4096 10 8,0", "0.61 C 500 4096 10 8,0", "0.0000 Q 999 4096 10 8,16",
      "0.7 F 1000 4096 10 8,0"]
e2 = ["N 10 aaa", "0.001 Q 1000 65536 10 8,0", "0.0011 Q 1016 4096 10 8,0", "0.0012 Q 1040 4096 10 8,0",
      "0.0013 Q 900 4096 10 8,0", "0.0014 Q 1100 4096 10 8,0", "0.0015 Q 1010 4096 10 8,0",
      "0.002 G 1016 4096 10 8,0", "0.0021 G 1020 4096 10 8,0", "0.0022 I 1045 4096 10 8,0",
      "0.0023 M 1001 4096 10 8,0", "0.003 D 1000 65536 10 8,0", "0.0031 D 900 4096 10 8,0",
      "0.004 C 990 131072 0 8,0", "0.0041 C 1100 4096 0 8,0", "0.005 Q 2000 4096 10 8,0",
      "0.0051 D 2000 4096 10 8,0", "0.0052 Q 2000 4096 10 8,0", "0.0053 D 2000 4096 10 8,0",
      "0.006 C 2000 4096 0 8,0", "0.0061 C 2000 4096 0 8,0", "0.007 Q 3000 4096 10 8,0",
      "0.007 Q 3008 4096 10 8,0", "0.007 D 3000 8192 10 8,0", "0.007 C 3000 8192 10 8,0",
      "1.2 Q 5000 4096 10 8,0", "1.2 D 5000 4096 10 8,0", "1.3 C 5000 4096 10 8,0",
      "3.5 Q 5000 4096 10 8,0", "3.6 D 5000 4096 10 8,0", "3.7 C 5000 4096 10 8,0"]
# times far from their Q (over 4.29 s, or before it): kept apart from the 32-bit offsets
e3 = ["N 10 aaa", "1.0 Q 1000 4096 10 8,0", "6.0 G 1000 4096 10 8,0", "6.5 I 1000 4096 10 8,0",
      "12.0 D 1000 4096 10 8,0", "13.0 C 1000 4096 0 8,0", "20.0 Q 2000 4096 10 8,0",
      "19.0 G 2000 4096 10 8,0", "21.0 I 2000 4096 10 8,0", "22.0 D 2000 4096 10 8,0",
      "23.0 C 2000 4096 0 8,0", "30.0 Q 3000 4096 10 8,0", "35.0 Q 3008 4096 10 8,0",
      "35.1 M 3008 4096 10 8,0", "40.0 D 3000 8192 10 8,0", "41.0 C 3000 8192 0 8,0",
      "50.0 Q 4000 4096 10 8,0", "56.0 G 4000 4096 10 8,0", "57.0 Q 4000 4096 10 8,0",
      "57.5 I 4000 4096 10 8,0", "58.0 D 4000 4096 10 8,0", "59.0 C 4000 4096 0 8,0",
      "60.0 Q 5000 4096 10 8,0", "70.0 G 5000 4096 10 8,0", "70.5 S 5000 4096 10 8,0",
      "75.0 G 5000 4096 10 8,0", "80.0 Q 6000 4096 10 8,0", "85.0 I 6000 4096 10 8,0",
      "85.5 I 6000 4096 10 8,0", "90.0 D 6000 4096 10 8,0", "90.1 C 6000 4096 0 8,0",
      "91.0 Q 7000 4096 10 8,0", "91.1 G 7000 4096 10 8,0", "99.0 I 7000 4096 10 8,0",
      "99.1 I 7000 4096 10 8,0", "99.2 D 7000 4096 10 8,0", "99.3 C 7000 4096 0 8,0"]
# devices without activity of their own: one only named by a message, one with D and C but
# no Q, one only a remap target; a plug still open at the end; a process that only completes
e4 = ["N 10 aaa", "MSG 0.001 8,32 only a message", "0.002 D 100 4096 10 8,48",
      "0.003 C 100 4096 0 8,48", "0.004 Q 200 4096 10 8,0", "0.005 A 300 4096 10 8,64 x 8,0:200",
      "0.006 G 200 4096 10 8,0", "0.007 D 200 4096 10 8,0", "0.008 C 200 4096 0 8,0",
      "0.009 U 0 0 0 8,80 3", "0.010 P 0 0 0 8,0", "0.011 C 500 4096 77 8,0",
      "0.012 Q 600 4096 10 8,0", "0.013 Q 608 4096 10 8,0", "0.014 D 600 8192 10 8,0"]
# live periods on devices created after ones without any (a message, a Q never issued)
e5 = ["MSG 0.001 8,32 hello", "0.002 Q 50 4096 10 8,64", "0.010 Q 100 4096 10 8,16",
      "0.011 D 100 4096 10 8,16", "0.012 C 100 4096 0 8,16", "0.020 Q 100 4096 10 8,48",
      "0.021 C 100 4096 0 8,48", "0.030 Q 100 4096 10 8,0", "0.031 D 100 4096 10 8,0",
      "0.032 C 100 4096 0 8,0"]
# a slow request over 40 fast ones with idle gaps between them, completed once in order
# (e6) and once with its completion recorded out of time order (e7, a known gap)
e6 = ["0.0005 Q 9000 4096 10 8,1", "0.0005 D 9000 4096 10 8,1"]
e7 = list(e6)
for i in range(1, 61):
    t = i * 0.002
    io = ["%.6f Q %d 4096 10 8,1" % (t, i * 8), "%.6f D %d 4096 10 8,1" % (t, i * 8),
          "%.6f C %d 4096 10 8,1" % (t + 0.001, i * 8)]
    e6 += io
    e7 += io
    if i == 40:
        e6.append("0.083 C 9000 4096 10 8,1")
        e7.append("0.051 C 9000 4096 10 8,1")
for name, lines in (('e1', e1), ('e2', e2), ('e3', e3), ('e4', e4), ('e5', e5), ('e6', e6),
                    ('e7', e7)):
    open('%s/%s.bin' % (sys.argv[1], name), 'wb').write(trace(lines))
PY
	bins="$bins e1 e2 e3 e4 e5"
	# random traces of odd events (tests/gen/btt-edge.py): seeds that once differed
	for s in 5 6 7 27 34 45 202 214; do
		memo -o "$syn/r$s.bin" python3 "$TOP/tests/gen/btt-edge.py" "$syn/r$s.bin" $s 300
		bins="$bins r$s"
	done
	# slow requests among fast ones on two devices (tests/gen/btt-slow.py): a completion's
	# live interval reaches back over hundreds of live periods (btt before 2026-11-30
	# folded all but the last 256 and counted too many)
	for s in 3 21; do
		memo -o "$syn/slow$s.bin" python3 "$TOP/tests/gen/btt-slow.py" "$syn/slow$s.bin" $s 8000 mixed
		bins="$bins slow$s"
	done
	# under valgrind, one synthetic and one real trace are enough
	[ -n "${VALGRIND:-}" ] && bins="g1 $(unpack ext4-mixed)/ext4-mixed.bin"
	# ref_all DIR OPTS...: the reference btt with OPTS on each trace of $bins, as run_in runs
	# it, into DIR/N (N: the trace's place in $bins). Through the memo (tests/lib.sh), one
	# call for them all: the plain, ASan and valgrind runs give the reference the same traces
	# and options (some 700 runs here, a fifth of this script's CPU time in each run), and a
	# call of its own for each run cost the memo more than the run saved.
	ref_all() {
		local dir=$1 b list=()
		shift
		for b in $bins; do
			[ -f "$b" ] || b="$syn/$b.bin"
			list+=("$b")
		done
		rm -rf "$dir"
		mkdir -p "$dir"
		memo -C "$dir" bash -c 'ref=$1 n=$2 i=0
			shift 2
			bins=("${@:1:n}")
			shift "$n"
			for b in "${bins[@]}"; do
				i=$((i + 1))
				mkdir "$i"
				(cd "$i" && "$ref" -i "$b" "$@" >stdout 2>stderr; echo $? >rc)
			done' ref-all "$REF_BTT" "${#list[@]}" "${list[@]}" "$@" >/dev/null 2>&1
	}
	# diffrun WHAT BIN REFDIR OPTS...: compare stdout, stderr-free status and every file
	# written with the reference's in REFDIR (ref_all's)
	diffrun() {
		local what=$1 bin=$2 ref=$3 x r
		shift 3
		x=$(md5sum <<<"$bin $*")
		x=${x:0:8}
		run_in "$syn/o.$x" $BTT -i "$bin" "$@"
		# -v: progress, rate and wall time differ from run to run: compared without them, in
		# a copy of the reference's files (the other runs' stdout holds none of them: the
		# files compared as they are, less stderr; ~700 runs here, a process each saved)
		r=$ref
		if grep -qF -e ' traces @ ' -e ' t (' -e $'\r' "$ref/stdout" "$syn/o.$x/stdout"; then
			r=$syn/r.$x
			rm -rf "$r"
			cp -r "$ref" "$r"
			sed -i -e 's/ traces @ [0-9.]* Ktps in [0-9.]* seconds/ traces @ X Ktps in X seconds/' \
				-e 's/ *[0-9]* t ( *[0-9.]*%)//g' -e 's/\r//g' \
				"$r/stdout" "$syn/o.$x/stdout"
		fi
		if diff -r -x stderr "$r" "$syn/o.$x" >"$syn/d.$x"; then
			echo same
		else
			echo "differ: $(head -c 300 "$syn/d.$x" | tr '\n' ' ')"
		fi
	}
	claim() { # claim WHAT OPTS...: identical output on every test trace
		local what=$1 b r bad="" n=0
		shift
		ref_all "$syn/ref" "$@"
		for b in $bins; do
			n=$((n + 1))
			[ -f "$b" ] || b="$syn/$b.bin"
			r=$(diffrun "$what" "$b" "$syn/ref/$n" "$@")
			[ "$r" = same ] || bad="$bad $(basename "$b"): $r"
		done
		[ -z "$bad" ] && pass "btt $what: identical to the reference on every trace" ||
			fail "btt $what:$bad"
	}
	gap() { # gap WHAT WHY OPTS...: a known difference, reported as XFAIL while it lasts
		local what=$1 why=$2 b r bad="" n=0
		shift 2
		ref_all "$syn/ref" "$@"
		for b in $bins; do
			n=$((n + 1))
			[ -f "$b" ] || b="$syn/$b.bin"
			r=$(diffrun "$what" "$b" "$syn/ref/$n" "$@")
			[ "$r" = same ] || bad=1
		done
		[ -z "$bad" ] && pass "btt $what: identical to the reference (known gap closed)" ||
			echo "XFAIL: btt $what (known gap: $why)"
	}
	claim "default" 
	claim "-o NAME (avg, dat, msg, q/d histograms)" -o out
	claim "-A" -A
	claim "-a" -a
	claim "-r" -r
	claim "-d 0.5" -d 0.5
	# (the reference crashes when -D names no device of the trace: only g1 and g2 have 8,16)
	bins_all=$bins
	bins="g1 g2"
	claim "-D 8,16" -D "8,16"
	claim "-D 8,0;8,16 -A" -D "8,0;8,16" -A
	bins="e6"
	claim "-Z, a slow request spanning 40 live periods" -Z
	bins="e7"
	gap "-Z, the same completed out of time order" \
		"btt 2.09 merges only the periods its tree search meets; see btt(1)" -Z
	bins="e5"
	claim "-Z -D 8,0;8,16 (live rows in -D order)" -Z -D "8,0;8,16"
	claim "-Z -D 8,48;8,0;8,32" -Z -D "8,48;8,0;8,32"
	bins=$bins_all
	claim "-e fio,tar" -e fio,tar
	claim "-e ''" -e ""
	claim "-t/-T window" -t 0.05 -T 0.3
	claim "-T alone" -T 1.0
	claim "-t alone" -t 0.1
	claim "-M device map" -M "$syn/devmap"
	claim "-l/-q/-z latency files" -l lat -q q2c -z q2d
	claim "-p per-IO dump" -p perio
	claim "-B block numbers" -B bno
	claim "-Q active queue depth" -Q aqd
	claim "-u unplug histogram" -u up
	claim "-P per-IO trees" -P pit
	claim "-s seek files" -s sk
	claim "-I iostat" -I io.txt
	claim "-I iostat -S 2" -I io.txt -S 2
	claim "-v (stdout and files)" -v
	claim "-X easy-parse file" -o x -X
	claim "-s/-m seeks per second" -s sk -m sps
	claim "-Z live periods" -Z
	claim "-L periodic latencies" -L 0.1
	claim "-L, -Q, -P, -B, -u with -M names" -M "$syn/devmap" -L 0.05 -Q q -P p -B b -u u
	# larger traces: the seek distances go through the temporary file, and both ways of
	# finding the median and modes (tied modes rebuild the tree; one mode does not) are
	# compared with the reference (not under valgrind: too slow)
	if [ -z "${VALGRIND:-}" ]; then
		"$GEN" -n 400000 -s 7 -o big -D "$syn/raw" >/dev/null 2>&1
		"$TOP/blkparse" -i big -D "$syn/raw" -d "$syn/big.bin" -O >/dev/null 2>&1
		bins="big $(unpack nullb-randrw)/nullb-randrw.bin"
		claim "default and -X, 400k events (seek distances spilled)" -o x -X
		# one mode by far (distance 0): no tree; many modes: the tree rebuilt
		modes=$(grep -h -A4 'Seek Information' "$syn"/o.*/x.avg | grep -c '(' )
		[ "$modes" -gt 0 ] || fail "btt 400k: no seek tables in the report"
		# over 256k queued I/Os (requests that never complete): events are then taken in
		# batches whose insertions descend together; payloads (notes, remaps, unplugs)
		# are copied with them
		PYTHONPATH="$TOP/tests/gen" python3 -B - "$syn/pile.bin" <<'PY'
import random, sys, blkrec
random.seed(11)
DEV, DEV1 = blkrec.mkdev(8, 0), blkrec.mkdev(8, 1)
out, seq, t = [], 0, 0
def rec(code, cat, sector, nbytes, pid=100, dev=DEV, pdu=b''):
    global seq, t
    seq += 1
    t += 1000
    act = blkrec.act(code, (1 << cat) | blkrec.TC_FS | blkrec.TC_WRITE)
    out.append(blkrec.encode(7, '<', seq, t, sector, nbytes, act, pid, dev, 0, pdu))
out.append(blkrec.encode_note(7, '<', blkrec.TN_PROCESS, 100, DEV, b'pile\0'))
live = []
for i in range(300000):
    s = random.randrange(0, 1 << 30) * 8
    rec(1, 4, s, 4096)
    if i > 250000 and i % 50 == 0:
        live.append(s)
    if i > 260000 and i % 97 == 0 and live:
        s = live.pop(0)
        rec(4, 4, s, 4096)
        rec(12, 4, s, 4096)
        rec(7, 6, s, 4096)
        rec(8, 7, s, 4096, pid=0)
    if i > 270000 and i % 1001 == 0:
        rec(10, 4, 0, 0, pdu=blkrec.unplug_pdu(i % 7))
        rec(15, 4, s + 8, 4096, dev=DEV1, pdu=blkrec.remap_pdu(DEV, DEV1, s))
        name = ('pid %d' % i).encode() + b'\0'
        out.append(blkrec.encode_note(7, '<', blkrec.TN_PROCESS, 200 + i, DEV, name, time=t))
open(sys.argv[1], 'wb').write(b''.join(out))
PY
		bins="pile"
		claim "300k I/Os that never complete (batched insertions)" -o x -p pio -l l -q q -A
		# 40k requests that never complete, then 200k of which one in ten waits 4.4 s:
		# the tree is laid out again while such requests are in flight, their G, I and D
		# times too far from their Q for 32 bits (kept by node index, which changes)
		memo -o "$syn/relayout.bin" python3 "$TOP/tests/gen/btt-slow.py" "$syn/relayout.bin" 1 200000 relayout
		bins="relayout"
		claim "tree laid out again with far times in flight" -o x -l l -q q -A
		# 20k requests issued at once and never completed, then 100k that complete: the
		# live periods are grouped among many issue times in flight
		memo -o "$syn/burst.bin" python3 "$TOP/tests/gen/btt-slow.py" "$syn/burst.bin" 1 100000 burst
		bins="burst"
		claim "live periods among 20k issue times in flight" -o x -Z
		bins=$bins_all
	else
		for what in 'default and -X, 400k events (seek distances spilled)' '300k I/Os that never complete (batched insertions)' 'tree laid out again with far times in flight' 'live periods among 20k issue times in flight'; do
			skip "btt $what: not under valgrind (traces of 200k-400k events take minutes there; the plain and ASan runs compare them)"
		done
	fi
	# damaged traces from the fuzz target (tests/fuzz/crashes/btt, less its 3 control
	# bytes): a D2D seek of 2^63 - 192 sectors, whose overall median btt summed as a double
	# (2^63 as a long long: undefined, printed -9223372036854775808; the reference sums in
	# long long and prints the device's median)
	tail -c +4 "$TOP/tests/fuzz/crashes/btt/ubsan-report-overall-median-2e63" >"$syn/far-median.bin"
	bins="far-median"
	claim "a seek median near 2^63 (the overall median summed as the reference sums it)"
	bins=$bins_all
fi

# ---- 3. behaviour ----
d=$(unpack ext4-mixed)
o="$w/behave"
mkdir -p "$o"
(cd "$o" && $BTT -h >h.out 2>h.err)
rc=$?
[ $rc = 0 ] && grep -q -- '--per-io-dump' "$o/h.out" && [ ! -s "$o/h.err" ] &&
	pass "btt -h: usage on stdout, status 0" || fail "btt -h: status $rc"
(cd "$o" && $BTT >n.out 2>n.err)
rc=$?
[ $rc = 2 ] && grep -q '^btt: no input file' "$o/n.err" && grep -q '^hint: ' "$o/n.err" &&
	pass "btt without -i: usage error (status 2) with a hint" || fail "btt without -i: status $rc"
(cd "$o" && $BTT -i x -Y >b.out 2>b.err)
rc=$?
[ $rc = 2 ] && grep -q "^btt: unknown option '-Y'" "$o/b.err" &&
	pass "btt with an unknown option: status 2, names it" || fail "btt -Y: status $rc"
# an input without records: no report and no files, as with the reference
mkdir -p "$o/empty"
: >"$o/empty.bin"
(cd "$o/empty" && $BTT -i "$o/empty.bin" -o e >../e.out 2>../e.err)
rc=$?
[ $rc = 0 ] && [ ! -s "$o/e.out" ] && [ -z "$(ls "$o/empty")" ] &&
	pass "btt on an empty trace: no output, no files, status 0" ||
	fail "btt on an empty trace: status $rc, files: $(ls "$o/empty" | tr '\n' ' ')"
(cd "$o" && $BTT -i x -d abc >b.out 2>b.err)
rc=$?
[ $rc = 2 ] && grep -q "option '--range-delta'" "$o/b.err" &&
	pass "btt -d abc: the message names the option" || fail "btt -d abc: status $rc: $(cat "$o/b.err")"
(cd "$o" && $BTT -i x -m sps >b.out 2>b.err)
rc=$?
[ $rc = 2 ] && grep -q -- "--seeks" "$o/b.err" && pass "btt -m without -s: usage error" ||
	fail "btt -m without -s: status $rc"
(cd "$o" && $BTT -i "$o/missing.bin" >m.out 2>m.err)
rc=$?
[ $rc = 1 ] && grep -q "missing.bin" "$o/m.err" && pass "btt on a missing file: status 1, names it" ||
	fail "btt on a missing file: status $rc"
(cd "$o" && $BTT -V >v.out 2>&1)
# the classic line, then the suite's version (include/version.h) in parentheses
ngv=$(sed -n 's/^#define BLKTRACE_NG_VERSION "\(.*\)"$/\1/p' "$TOP/include/version.h")
grep -qx "btt version 2.09 (blktrace-ng $ngv)" "$o/v.out" && pass "btt -V" || fail "btt -V: $(cat "$o/v.out")"
# -D naming a device the trace does not have (the reference crashes): an empty report
run_in "$o/D" $BTT -i "$d/ext4-mixed.bin" -D "9,9"
[ "$(cat "$o/D/rc")" = 0 ] && grep -q '^ Total Sys |' "$o/D/stdout" && ! grep -q '254, 16' "$o/D/stdout" &&
	pass "btt -D with an absent device: a report without devices, status 0" ||
	fail "btt -D 9,9: status $(cat "$o/D/rc")"
# --do-active is -Z (btt 2.09 wires it to -z)
run_in "$o/Z" $BTT -i "$d/ext4-mixed.bin" --do-active
[ -s "$o/Z/sys_live.dat" ] && [ -s "$o/Z/254,16_live.dat" ] && pass "btt --do-active writes the live files" ||
	fail "btt --do-active: $(ls "$o/Z" | tr '\n' ' ')"
# a truncated trace: the events before the damage are analysed, the error names the offset
head -c 100000 "$d/ext4-mixed.bin" >"$o/trunc.bin"
(cd "$o" && $BTT -i "$o/trunc.bin" >t.out 2>t.err)
rc=$?
[ $rc = 1 ] && grep -q 'trunc.bin' "$o/t.err" && grep -q 'offset' "$o/t.err" &&
	grep -q '^# Total System' "$o/t.out" &&
	pass "btt on a truncated trace: report of what was read, error with the offset, status 1" ||
	fail "btt on a truncated trace: status $rc: $(head -c 200 "$o/t.err")"
# gzip-compressed input is read through the library reader
gzip -c "$d/ext4-mixed.bin" >"$o/gz.bin"
(cd "$o" && $BTT -i "$o/gz.bin" >gz.out 2>gz.err)
exp=$(ref_file ext4-mixed ext4-mixed.btt.txt)
[ -n "$exp" ] && check_same "btt on a gzip-compressed trace" "$exp" "$o/gz.out"

# ---- 4. percentiles (an addition): bounded relative error against exact values ----
vi=0
for t in ext4-mixed multi-dev nullb-randrw; do
	vi=$((vi + 1))
	VG_SAMPLE=1 vg_sample $vi "btt $t --percentiles (4 checks)" || continue
	d=$(unpack "$t")
	o="$w/$t/pct"
	run_in "$o" $BTT -i "$d/$t.bin" --percentiles -l lat -q lat -z lat
	exp=$(ref_file "$t" "$t.btt.txt")
	if [ -n "$exp" ]; then
		# the classic report is unchanged; the table comes after the device sections
		awk '/^==================== Latency Percentiles/ { skip = 1 }
			!skip { print } skip && /^     Total \| Q2D/ { skip = 2; next }
			skip == 2 && /^$/ { skip = 0 }' "$o/stdout" >"$o/classic"
		check_same "btt $t --percentiles: classic report unchanged" "$exp" "$o/classic"
	fi
	run_in "$o.only" $BTT -i "$d/$t.bin" --percentiles-only
	awk '/^==================== Latency Percentiles/ { on = 1 } on { print }
		on && /^$/ && done { exit } /^     Total \| Q2D/ { done = 1 }' "$o/stdout" >"$o/table"
	check_same "btt $t --percentiles-only: only the table" "$o/table" "$o.only/stdout"
	PYTHONPATH="$TOP/tests/gen" python3 -B "$TOP/tests/gen/bioref.py" pct "$d/$t.bin" >"$o/exact"
	res=$(python3 - "$o" <<'PY'
import glob, math, os, sys
d = sys.argv[1]
P = (50, 90, 99, 99.9, 99.99, 100)
rows = {}
for line in open(os.path.join(d, 'table')):
    if '|' not in line:
        continue
    dev, rest = line.split('|', 1)
    f = rest.split()
    if len(f) == 8 and f[0] in ('Q2C', 'D2C', 'Q2D'):
        rows[(dev.replace(' ', ''), f[0])] = (int(f[1]), [float(x) for x in f[2:]])
bad, n = [], 0
def check(key, kind, vals):
    global n
    if (key, kind) not in rows:
        bad.append('no row %s %s' % (key, kind))
        return
    cnt, got = rows[(key, kind)]
    if cnt != len(vals):
        bad.append('%s %s: N %d, file has %d' % (key, kind, cnt, len(vals)))
    for p, g in zip(P, got):
        exact = vals[max(0, math.ceil(p * len(vals) / 100 - 1e-9) - 1)]
        n += 1
        # 1/64 from the histogram, plus the table's rounding to the nanosecond
        if abs(g * 1e9 - exact) > exact / 64 + 1:
            bad.append('%s %s p%s: %.9f vs exact %.9f' % (key, kind, p, g, exact / 1e9))
# the exact values: every bio, worked out from the trace's records (tests/gen/bioref.py)
for line in open(os.path.join(d, 'exact')):
    f = line.split()
    dev = f[0] if f[0] == 'Total' else '(%d,%d)' % tuple(int(x) for x in f[0].split(','))
    check(dev, f[1], [int(x) for x in f[3:]])
print('ok %d' % n if not bad and n else 'bad ' + '; '.join(bad[:5]) + (' (none checked)' if not n else ''))
PY
)
	case $res in
	ok*) pass "btt $t --percentiles: ${res#ok } values within 1/64 of the exact percentiles" ;;
	*) fail "btt $t --percentiles: $res" ;;
	esac
done

# the seek distances go to a temporary file in $TMPDIR: elsewhere with the same report,
# and an unwritable directory is an error naming it
d=$(unpack nullb-randrw)
w="$OUT/btt-tmpdir"
rm -rf "$w"
mkdir -p "$w/tmp" "$w/a" "$w/b"
(cd "$w/a" && TMPDIR="$w/tmp" $BTT -i "$d/nullb-randrw.bin" -o out >/dev/null 2>&1)
(cd "$w/b" && $BTT -i "$d/nullb-randrw.bin" -o out >/dev/null 2>&1)
if cmp -s "$w/a/out.avg" "$w/b/out.avg" && [ -z "$(ls -A "$w/tmp")" ]; then
	pass "btt TMPDIR=DIR: the same report, nothing left in DIR"
else
	fail "btt TMPDIR=DIR: reports differ or files left: $(ls -A "$w/tmp")"
fi
# (not under valgrind, which needs TMPDIR for files of its own)
(cd "$w/b" && TMPDIR=/nonexistent/btt-tmp "$TOP/btt/btt" -i "$d/nullb-randrw.bin" -o out >/dev/null 2>"$w/err")
rc=$?
if [ $rc = 1 ] && grep -q '/nonexistent/btt-tmp' "$w/err" && grep -q 'TMPDIR' "$w/err"; then
	pass "btt with an unwritable TMPDIR: exit 1, the error names it ($(head -c 120 "$w/err"))"
else
	fail "btt with an unwritable TMPDIR: rc=$rc $(head -c 200 "$w/err")"
fi

# a big trace cut mid-record, read ahead on a second thread: the same error and offset as
# blkparse (which reads on its own thread), the records before it analysed
d=$(unpack nullb-randrw)
w="$OUT/btt-cut"
rm -rf "$w"
mkdir -p "$w"
head -c 1000003 "$d/nullb-randrw.bin" >"$w/cut.bin"
(cd "$w" && $BTT -i "$w/cut.bin" -o out >/dev/null 2>"$w/btt.err")
rc=$?
"$TOP/blkparse" -i "$w/cut.bin" >/dev/null 2>"$w/bp.err"
bo=$(grep -o 'offset [0-9]*' "$w/btt.err" | head -n 1)
po=$(grep -o 'offset [0-9]*' "$w/bp.err" | head -n 1)
if [ $rc = 1 ] && [ -n "$bo" ] && [ "$bo" = "$po" ] && grep -q 'truncated' "$w/btt.err" &&
	grep -q '^Q2C ' "$w/out.avg"; then
	pass "btt on a 1 MB trace cut mid-record: exit 1, '$bo' as blkparse reports it, report of the rest"
else
	fail "btt on a cut trace: rc=$rc btt '$bo' blkparse '$po': $(head -c 200 "$w/btt.err")"
fi
