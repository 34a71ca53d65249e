#!/bin/bash
# verify_blkparse and blkrawverify: the same reports and exit status as the reference 1.2.0
# tools on good and broken input (where the reference's output is defined), and our own
# handling of damaged trace files (offset reported, checking resumes after the damage).
. "$(dirname "$0")/../lib.sh"

VB="$TOP/verify_blkparse"
RV="$TOP/blkrawverify"
if [ -n "${VALGRIND:-}" ]; then
	VB="$VG $VB"
	RV="$VG $RV"
fi
REF_VB=/usr/bin/verify_blkparse
REF_RV=/usr/bin/blkrawverify
have_ref_vb() { [ -x "$REF_VB" ]; }
have_ref_rv() { [ -x "$REF_RV" ]; }

w="$OUT/verify"
rm -rf "$w"
mkdir -p "$w"

# ---------------------------------------------------------------- verify_blkparse

# vb_run OUT COMMAND...: stdout and the exit status into OUT, stderr into OUT.err
vb_run() {
	local out=$1
	shift
	"$@" >"$out" 2>"$out.err"
	echo "exit $?" >>"$out"
}

# the reference follows only CPUs below the number online here (see verify_blkparse(1))
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
max_cpu() { awk '$1 ~ /^[0-9]+,[0-9]+$/ && $2 ~ /^[0-9]+$/ && $2 > m { m = $2 } END { print m + 0 }' "$1"; }

vb_compare() { # what file
	local what=$1 f=$2 name
	if ! have_ref_vb; then
		skip "verify_blkparse $what: same output as the reference (no $REF_VB)"
		return
	fi
	if [ "$(max_cpu "$f")" -ge "$ncpu" ]; then
		skip "verify_blkparse $what: same output as the reference (trace CPUs >= $ncpu CPUs online here)"
		return
	fi
	name=$(basename "$f")
	vb_run "$w/$name.ref" $REF_VB "$f"
	vb_run "$w/$name.got" $VB "$f"
	check_same "verify_blkparse $what: same output and exit status as the reference" \
		"$w/$name.ref" "$w/$name.got"
}

# good input: every stored blkparse output of every bundled trace
skip_vg_traces "verify_blkparse on the stored blkparse outputs"
for t in $(bundled_traces); do
	d=$(unpack "$t")
	for f in "$d"/*.blkparse*.txt; do
		vb_compare "$(basename "$f")" "$f"
	done
done

# broken input: lines swapped, repeated, dropped and given other times
src=$(unpack ext4-mixed)
txt="$src/ext4-mixed.blkparse.txt"
mutate() { # seed > out
	awk -v seed="$1" 'BEGIN { srand(seed) }
		{ line[NR] = $0 }
		END {
			n = NR
			for (k = 0; k < 6; k++) {
				i = 2 + int(rand() * (n - 400))
				op = int(rand() * 4)
				if (op == 0) { t = line[i]; line[i] = line[i + 1]; line[i + 1] = t }
				else if (op == 1) line[i + 1] = line[i]
				else if (op == 2) line[i] = line[i + 2]
				else sub(/[0-9]+\.[0-9]+/, int(rand() * 3) "." sprintf("%09d", int(rand() * 1e9)), line[i])
			}
			for (i = 1; i <= n; i++) print line[i]
		}' "$txt"
}
for s in 1 2 3 4 5 6 7 8; do
	mutate $s >"$w/mut$s.txt"
	vb_compare "broken text #$s" "$w/mut$s.txt"
done

# known answers, reference or not
cat >"$w/known.txt" <<'EOF'
  8,0    0        5     1.000000000  10  Q   R 8 + 8 [a]
  8,0    1        5     0.500000000  10  Q   R 8 + 8 [a]
  8,0    1        5     0.600000000  10  Q   R 8 + 8 [a]
  8,0    0        7     0.400000000  10  Q   R 8 + 8 [a]
CPU0 (8,0):
  8,0    0        8     0.100000000  10  Q   R 8 + 8 [a]
EOF
cat >"$w/known.exp" <<'EOF'
last:   8,0    0        5     1.000000000  10  Q   R 8 + 8 [a]
this:   8,0    1        5     0.500000000  10  Q   R 8 + 8 [a]
alias on sequence 5
last:   8,0    1        5     0.600000000  10  Q   R 8 + 8 [a]
this:   8,0    0        7     0.400000000  10  Q   R 8 + 8 [a]
Events 4: 2 unordered, 1 aliases
exit 1
EOF
vb_run "$w/known.got" $VB "$w/known.txt"
check_same "verify_blkparse: unordered pair, alias, totals, stop at the summary, exit 1" \
	"$w/known.exp" "$w/known.got"
vb_compare "known answers" "$w/known.txt"
$VB - <"$w/known.txt" >"$w/known-stdin.got" 2>/dev/null
echo "exit $?" >>"$w/known-stdin.got"
check_same "verify_blkparse: '-' reads standard input" "$w/known.exp" "$w/known-stdin.got"

# intentional differences: high CPU numbers, long lines
printf '  8,0   37        1     1.000000000  1  Q   R 8 + 8 [a]\n  8,0    1        1     0.5  1  Q   R 8 + 8 [a]\n' >"$w/cpu37.txt"
vb_run "$w/cpu37.got" $VB "$w/cpu37.txt"
if grep -q "^Events 2: 1 unordered, 0 aliases" "$w/cpu37.got" && grep -q "^exit 1" "$w/cpu37.got"; then
	pass "verify_blkparse: CPU 37 is followed whatever the CPUs online here"
else
	fail "verify_blkparse: CPU 37: $(cat "$w/cpu37.got")"
fi
printf '  8,0   -1        1     1.000000000  1  Q\n' >"$w/cpuneg.txt"
vb_run "$w/cpuneg.got" $VB "$w/cpuneg.txt"
if grep -q "^exit 1" "$w/cpuneg.got" && grep -q "^verify_blkparse: .*line 1: impossible cpu -1" "$w/cpuneg.got.err"; then
	pass "verify_blkparse: a negative CPU ends the check with an error naming the line, exit 1"
else
	fail "verify_blkparse: negative CPU: $(cat "$w/cpuneg.got" "$w/cpuneg.got.err")"
fi
{
	printf '  8,0    0        1     1.000000000  1  m   N %0400d\n' 0
	printf '  8,0    0        2     0.5  1  Q   R 8 + 8 [a]\n'
} >"$w/long.txt"
vb_run "$w/long.got" $VB "$w/long.txt"
if grep -q "^Events 2: 1 unordered" "$w/long.got" && [ "$(grep -c '^last: .*0000$' "$w/long.got")" = 1 ]; then
	pass "verify_blkparse: a 450-character line is read whole"
else
	fail "verify_blkparse: long line: $(cut -c1-100 "$w/long.got")"
fi

# usage and file errors
$VB >/dev/null 2>"$w/usage.err"; rc=$?
if [ $rc = 2 ] && grep -q "^verify_blkparse: no input file given" "$w/usage.err"; then
	pass "verify_blkparse: no argument is a usage error, exit 2"
else
	fail "verify_blkparse: no argument: rc=$rc $(cat "$w/usage.err")"
fi
$VB "$w/no-such-file" >/dev/null 2>"$w/nofile.err"; rc=$?
if [ $rc = 1 ] && grep -q "^verify_blkparse: cannot open '.*no-such-file': No such file or directory" "$w/nofile.err"; then
	pass "verify_blkparse: missing file is reported, exit 1"
else
	fail "verify_blkparse: missing file: rc=$rc $(cat "$w/nofile.err")"
fi
$VB "$w/known.txt" >/dev/full 2>"$w/full.err"; rc=$?
if [ $rc = 1 ] && grep -q "No space left on device" "$w/full.err"; then
	pass "verify_blkparse: a failed write of the report is reported, exit 1"
else
	fail "verify_blkparse: /dev/full: rc=$rc $(cat "$w/full.err")"
fi

# ---------------------------------------------------------------- blkrawverify

# the reference prints "bytes" twice and mislabels categories; compare without those lines
norm() {
	awk '/Dump /{ nb = 0 } /^ +bytes:/{ if (++nb == 2) next } /^ +(action|pid):/{ next } { print }' "$1"
}

# rv DIR NAME TAG [DEV...]: run in DIR; stdout+status to NAME.TAG, details to NAME.TAG.vo
rv() {
	local dir=$1 name=$2 tag=$3 tool=$RV
	shift 3
	[ "$tag" = ref ] && tool=$REF_RV
	(cd "$dir" && $tool "$@" >"$name.$tag" 2>"$name.$tag.err"; echo "exit $?" >>"$name.$tag")
	for d in "$@"; do
		if [ -f "$dir/$d.verify.out" ]; then
			mv "$dir/$d.verify.out" "$dir/$name.$tag.$(basename "$d").vo"
		fi
	done
}

rv_compare() { # what dir name exact|norm dev...
	local what=$1 dir=$2 name=$3 mode=$4 d ok=1 how=""
	shift 4
	[ "$mode" = norm ] && how=" (dumps without action and pid lines)"
	rv "$dir" "$name" got "$@"
	if ! have_ref_rv; then
		skip "blkrawverify $what: same output as the reference (no $REF_RV)"
		return
	fi
	rv "$dir" "$name" ref "$@"
	if ! cmp -s "$dir/$name.ref" "$dir/$name.got"; then
		ok=0
	fi
	for d in "$@"; do
		d=$(basename "$d")
		if [ "$mode" = exact ]; then
			cmp -s "$dir/$name.ref.$d.vo" "$dir/$name.got.$d.vo" || ok=0
		else
			cmp -s <(norm "$dir/$name.ref.$d.vo") <(norm "$dir/$name.got.$d.vo") || ok=0
		fi
	done
	if [ $ok = 1 ]; then
		pass "blkrawverify $what: same stdout, exit status and .verify.out$how as the reference"
	else
		fail "blkrawverify $what: differs from the reference"
		diff "$dir/$name.ref" "$dir/$name.got" | head -n 4 | sed 's/^/    /'
		for d in "$@"; do
			d=$(basename "$d")
			diff <(norm "$dir/$name.ref.$d.vo") <(norm "$dir/$name.got.$d.vo") | head -n 6 | sed 's/^/    /'
		done
	fi
}

# good input: every bundled trace, and both devices of multi-dev in one run
skip_vg_traces "blkrawverify on the per-CPU files"
for t in $(bundled_traces); do
	d=$(unpack "$t")
	devs=()
	for f in "$d"/*.blktrace.0; do
		f=$(basename "$f")
		devs+=("${f%.blktrace.0}")
	done
	mkdir -p "$w/good-$t"
	for f in "$d"/*.blktrace.*; do ln -sf "$f" "$w/good-$t/"; done
	rv_compare "$t" "$w/good-$t" good exact "${devs[@]}"
	if grep -q "^exit 0" "$w/good-$t/good.got" && ! grep -q "bad" "$w/good-$t/good.got"; then
		pass "blkrawverify $t: every record valid, exit 0"
	else
		fail "blkrawverify $t: $(cat "$w/good-$t/good.got")"
	fi
done

# synthetic traces: 4 CPUs, big-endian, version 8
gen="$TOP/tests/gen/gentrace"
if [ -x "$gen" ]; then
	g="$w/gen"
	mkdir -p "$g"
	"$gen" -n 20000 -c 4 -o le -D "$g" >/dev/null
	"$gen" -n 20000 -c 3 -o be --big-endian -D "$g" >/dev/null
	"$gen" -n 5000 -c 2 -o v2 --v2 -D "$g" >/dev/null
	rv_compare "synthetic 4-CPU trace" "$g" le exact le
	rv_compare "synthetic big-endian trace" "$g" be exact be
	rv "$g" v2 got v2
	if grep -q "^exit 0" "$g/v2.got" && grep -q "2336 valid +          0 invalid" "$g/v2.got.v2.vo"; then
		pass "blkrawverify: version-8 records are checked (the reference calls them unsupported)"
	else
		fail "blkrawverify v2: $(cat "$g/v2.got") $(grep processed "$g/v2.got.v2.vo")"
	fi
else
	skip "blkrawverify synthetic traces (no tests/gen/gentrace; run make)"
fi

if ! command -v python3 >/dev/null; then
	skip "blkrawverify broken traces (needs python3)"
	exit 0
fi

# record offsets of a trace file, one a line, then the end
bounds() { python3 -B "$TOP/tests/gen/blkrec.py" bounds "$1"; }
# poke FILE OFFSET FIELD VALUE: set a header field (as tests/gen/blkrec.py names them) of the
# record at OFFSET (value or "rec:OFF", that field of the record at OFF)
poke() { python3 -B "$TOP/tests/gen/blkrec.py" poke "$@"; }

t0="$src/ext4-mixed.blktrace.0"
mapfile -t b < <(bounds "$t0")
# record 99 has an 8-byte payload, record 100 none; record 0 is a time-stamp note
r99=${b[99]} r100=${b[100]} r101=${b[101]} r300=${b[300]} r500=${b[500]} r501=${b[501]}
meta=$(PYTHONPATH="$TOP/tests/gen" python3 -B - "$t0" <<'PY'
import sys, blkrec as b
for n, r in enumerate(b.records(open(sys.argv[1], 'rb').read())):
    if n > 10 and r.action & (b.TC_META << 16) and not r.action & b.NOTIFY:
        print(r.offset)
        break
PY
)

mk() { # name: a copy of ext4-mixed as $w/name/t.blktrace.{0,1}, file 0 to be damaged
	rm -rf "${w:?}/$1"
	mkdir -p "$w/$1"
	cp "$t0" "$w/$1/t.blktrace.0"
	cp "$src/ext4-mixed.blktrace.1" "$w/$1/t.blktrace.1"
}

# broken records the reference reports: compared with it
mk seq && poke "$w/seq/t.blktrace.0" "$r100" seq "rec:${b[95]}"
rv_compare "repeated sequence" "$w/seq" x norm t
mk gap && poke "$w/gap/t.blktrace.0" "$r100" seq 2000
rv_compare "sequence jump (the records after it go backwards)" "$w/gap" x norm t
mk time && poke "$w/time/t.blktrace.0" "$r100" time "rec:${b[90]}"
rv_compare "time going backwards" "$w/time" x norm t
mk cpu && poke "$w/cpu/t.blktrace.0" "$r100" cpu 1
rv_compare "wrong cpu field" "$w/cpu" x norm t
mk dev && poke "$w/dev/t.blktrace.0" "$r100" device 0x800001
rv_compare "other device" "$w/dev" x norm t
mk note && poke "$w/note/t.blktrace.0" 0 cpu 3
rv_compare "first record (a note) with a wrong cpu field" "$w/note" x norm t
mk meta && poke "$w/meta/t.blktrace.0" "$meta" cpu 1
rv_compare "metadata write with a wrong cpu field" "$w/meta" x norm t

f="$w/seq/x.got.t.vo"
if grep -q "Dump bad seq" "$f" && grep -q "^         1 seq$" "$f" && grep -q "3677 valid +          1 invalid (100.0%)" "$f"; then
	pass "blkrawverify: repeated sequence dumped as 'bad seq', counted, summary"
else
	fail "blkrawverify: repeated sequence: $(grep -E 'Dump|processed' "$f" | head -n 4)"
fi
if grep -q "action: __BLK_TN_TIMESTAMP | BLK_TC_NOTIFY $" "$w/note/x.got.t.vo" &&
	grep -q "     pid: 0$" "$w/note/x.got.t.vo"; then
	pass "blkrawverify: a note's dump names it __BLK_TN_TIMESTAMP | BLK_TC_NOTIFY and shows its pid"
else
	fail "blkrawverify: note dump: $(grep -E 'action|pid' "$w/note/x.got.t.vo")"
fi
if grep -A7 "Dump bad cpu" "$w/meta/x.got.t.vo" | grep -q "action: .*| BLK_TC_META " &&
	! grep -A7 "Dump bad cpu" "$w/meta/x.got.t.vo" | grep -q "BLK_TC_DISCARD"; then
	pass "blkrawverify: a metadata write's dump shows BLK_TC_META (the reference says BLK_TC_DISCARD)"
else
	fail "blkrawverify: meta dump: $(grep -A7 'Dump bad cpu' "$w/meta/x.got.t.vo" | grep action)"
fi

# damage: the reader stops there; we report the offset and resume where records decode
expect_damage() { # what name stdout-line valid invalid pattern-in-details
	local what=$1 n=$2 line=$3 valid=$4 inval=$5 pat=$6 f="$w/$2/x.got.t.vo"
	if grep -q "^exit 1" "$w/$n/x.got" && grep -qF -- "$line" "$w/$n/x.got" &&
		grep -qE "^ +$valid valid \+ +$inval invalid" "$f" && grep -qE "$pat" "$f" &&
		grep -q "^blkrawverify: 't.blktrace.0': " "$w/$n/x.got.err"; then
		pass "blkrawverify $what: '$line', $valid valid + $inval invalid, $(grep -oE "$pat" "$f" | head -n 1)"
	else
		fail "blkrawverify $what: $(cat "$w/$n/x.got" "$w/$n/x.got.err" | head -n 4) / $(grep -E 'processed|Damaged|again|follows' "$f" | head -n 4)"
	fi
}
same_stdout() { # what name
	if ! have_ref_rv; then
		skip "blkrawverify $1: same stdout as the reference (no $REF_RV)"
		return
	fi
	rv "$w/$2" x ref t
	check_same "blkrawverify $1: same stdout and exit status as the reference" "$w/$2/x.ref" "$w/$2/x.got"
	if cmp -s <(grep processed "$w/$2/x.ref.t.vo") <(grep processed "$w/$2/x.got.t.vo"); then
		pass "blkrawverify $1: same valid and invalid counts as the reference"
	else
		fail "blkrawverify $1: counts: $(grep processed "$w/$2/x.ref.t.vo" "$w/$2/x.got.t.vo" | tr -s ' ')"
	fi
}

mk magic && poke "$w/magic/t.blktrace.0" "$r100" magic 0
rv "$w/magic" x got t
expect_damage "bad magic" magic "CPU 0 -- 1 bad" 3677 1 \
	"bad magic 0x00000000 at offset $r100 .*|records start again at offset $r101 \(48 bytes skipped\)"
grep -q "records start again at offset $r101 (48 bytes skipped)" "$w/magic/x.got.t.vo" &&
	pass "blkrawverify bad magic: resumes at the next record, offset $r101" ||
	fail "blkrawverify bad magic: $(grep -A2 Damaged "$w/magic/x.got.t.vo")"
same_stdout "bad magic (record without payload)" magic

mk magicpdu && poke "$w/magicpdu/t.blktrace.0" "$r99" magic 0
rv "$w/magicpdu" x got t
expect_damage "bad magic on a record with a payload" magicpdu "CPU 0 -- 1 bad" 3677 1 \
	"records start again at offset $r100 \(56 bytes skipped\)"

mk pdulen && poke "$w/pdulen/t.blktrace.0" "$r100" pdu_len 61695
rv "$w/pdulen" x got t
expect_damage "absurd pdu_len" pdulen "CPU 0 -- 1 bad" 3678 1 \
	"records start again at offset $r101, inside the 61695-byte payload the record at offset $r100 claims"

mk cutpdu && head -c $((r99 + 52)) "$t0" >"$w/cutpdu/t.blktrace.0"
rv "$w/cutpdu" x got t
expect_damage "file cut inside a payload" cutpdu "CPU 0 -- 1 bad" 93 1 \
	"truncated record at offset $r99: pdu_len 8 but only 4 payload bytes follow"
same_stdout "file cut inside a payload" cutpdu

mk cuthdr && head -c $((r100 + 22)) "$t0" >"$w/cuthdr/t.blktrace.0"
rv "$w/cuthdr" x got t
expect_damage "file cut inside a header (the reference ignores it)" cuthdr "CPU 0 -- 1 bad" 94 1 \
	"no record follows in the last 22 bytes"

mk version && poke "$w/version/t.blktrace.0" "$r100" magic 0x65617406
rv "$w/version" x got t
expect_damage "version 6 record (the reference stops the file, exit 0)" version "CPU 0 -- 1 bad" 3677 1 \
	"unsupported trace version 6 at offset $r100"

mk two && poke "$w/two/t.blktrace.0" "$r100" magic 0 && poke "$w/two/t.blktrace.0" "$r300" magic 0 &&
	poke "$w/two/t.blktrace.0" "$r500" pdu_len 9000
rv "$w/two" x got t
if grep -q "CPU 0 -- 3 bad" "$w/two/x.got" &&
	grep -q "'t.blktrace.0': bad magic 0x00000000 at offset $r300 " "$w/two/x.got.t.vo" &&
	grep -q "records start again at offset $r501, inside the 9000-byte payload the record at offset $r500 claims" "$w/two/x.got.t.vo" &&
	grep -qE "3676 valid \+ +3 invalid" "$w/two/x.got.t.vo"; then
	pass "blkrawverify: three damaged places in one file, all offsets counted from the file start"
else
	fail "blkrawverify three damages: $(cat "$w/two/x.got") $(grep -A2 Damaged "$w/two/x.got.t.vo")"
fi

mk garbage
python3 -c "
import sys
d = open('$t0', 'rb').read()
open('$w/garbage/t.blktrace.0', 'wb').write(d[:$r100] + bytes(70001) + d[$r100:])"
rv "$w/garbage" x got t
expect_damage "70001 zero bytes between two records" garbage "CPU 0 -- 1 bad" 3678 1 \
	"records start again at offset $((r100 + 70001)) \(70001 bytes skipped\)"

mk random && python3 -c "
import random
open('$w/random/t.blktrace.0', 'wb').write(bytes(random.Random(1).randrange(256) for _ in range(65536)))"
rv "$w/random" x got t
expect_damage "random bytes" random "CPU 0 -- 1 bad" 0 1 "not a block trace: bad magic 0x[0-9a-f]+ at offset 0"

mk gz && gzip -c "$t0" >"$w/gz/t.blktrace.0"
rv "$w/gz" x got t
if grep -q "^exit 0" "$w/gz/x.got" && grep -qE "3678 valid \+ +0 invalid" "$w/gz/x.got.t.vo"; then
	pass "blkrawverify: a gzip-compressed CPU file is checked like the plain one"
else
	fail "blkrawverify gz: $(cat "$w/gz/x.got")"
fi

# usage and file errors
(cd "$w" && $RV no-such-dev >no-dev.out 2>no-dev.err); rc=$?
if [ $rc = 1 ] && grep -q "^blkrawverify: no trace files found for 'no-such-dev'" "$w/no-dev.err" &&
	grep -q "^Verifying no-such-dev$" "$w/no-dev.out"; then
	pass "blkrawverify: a device without files is reported, exit 1"
else
	fail "blkrawverify: no files: rc=$rc $(cat "$w/no-dev.err")"
fi
$RV >/dev/null 2>"$w/rv-usage.err"; rc=$?
if [ $rc = 2 ] && grep -q "^blkrawverify: no device given" "$w/rv-usage.err"; then
	pass "blkrawverify: no argument is a usage error, exit 2"
else
	fail "blkrawverify: no argument: rc=$rc $(cat "$w/rv-usage.err")"
fi
mkdir -p "$w/isdir/t.blktrace.0"
rv "$w/isdir" x got t
if grep -q "^exit 1" "$w/isdir/x.got" && grep -q "read error at offset 0: Is a directory" "$w/isdir/x.got.err"; then
	pass "blkrawverify: an unreadable CPU file is reported, exit 1"
else
	fail "blkrawverify: unreadable: $(cat "$w/isdir/x.got" "$w/isdir/x.got.err")"
fi
mk outdir && mkdir "$w/outdir/t.verify.out"
(cd "$w/outdir" && $RV t >x.got 2>x.err); rc=$?
if [ $rc = 1 ] && grep -q "cannot create 't.verify.out'" "$w/outdir/x.err" && grep -q "^    CPU 1 $" "$w/outdir/x.got"; then
	pass "blkrawverify: details file that cannot be created: reported, CPUs still checked, exit 1"
else
	fail "blkrawverify: details file: rc=$rc $(cat "$w/outdir/x.got" "$w/outdir/x.err")"
fi
