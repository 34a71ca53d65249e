#!/bin/bash
# make install / make uninstall as a packager runs them: PREFIX and DESTDIR honoured, every
# program and man page in place and usable from there, and uninstall removes exactly them.
. "$(dirname "$0")/../lib.sh"

d="$OUT/install"
rm -rf "$d"; mkdir -p "$d"
# a build leaves the next make nothing to do: make check starts makes beside each other (the
# valgrind run's, this script's install), and one that built the generators' and unit tests'
# objects again (make had deleted them as intermediate files) wrote into the tree while the
# ASan run copied it (make check failed: "tar: ./tests/gen: file changed as we read it") and
# relinked programs other scripts were running
units=$(cd "$TOP" && ls tests/unit/test-*.c | sed 's/\.c$//')
# shellcheck disable=SC2086 # a list of targets
if make -q -C "$TOP" all $units >/dev/null 2>&1; then
	pass "after the build, make has nothing left to do (no object rebuilt by a later make)"
else
	# shellcheck disable=SC2086
	fail "after the build, make would still run: $(make -n -C "$TOP" all $units 2>&1 | head -n 2 | cut -c1-120 | tr '\n' ' ')"
fi
if ! make -s -C "$TOP" install DESTDIR="$d" PREFIX=/usr >"$d.log" 2>&1; then
	fail "make install DESTDIR=... PREFIX=/usr: $(tail -n 3 "$d.log" | tr '\n' ' ')"
	exit 0
fi
progs="blktrace blkparse blkiomon btt iowatcher btrecord btreplay verify_blkparse blkrawverify btrace"
missing=""
for p in $progs; do
	[ -x "$d/usr/bin/$p" ] || missing="$missing $p"
done
[ -z "$missing" ] && pass "make install: all $(echo $progs | wc -w) programs in DESTDIR/usr/bin, executable" ||
	fail "make install: missing or not executable:$missing"
pages=$(cd "$TOP/doc" && ls *.1 *.8)
missing=""
for m in $pages; do
	[ -f "$d/usr/share/man/man${m##*.}/$m" ] || missing="$missing $m"
done
[ -z "$missing" ] && pass "make install: $(echo $pages | wc -w) man pages in DESTDIR/usr/share/man/man1 and man8" ||
	fail "make install: man pages missing:$missing"
# the installed programs run from there, alone (no source tree needed)
bad=""
for p in blkparse blkiomon btt iowatcher btrecord btreplay verify_blkparse blkrawverify blktrace; do
	(cd / && "$d/usr/bin/$p" --help >/dev/null 2>&1) || bad="$bad $p"
done
[ -z "$bad" ] && pass "the installed programs run from DESTDIR (--help exits 0)" || fail "installed programs failing --help:$bad"
data=$(unpack ext4-mixed)
if (cd "$data" && "$d/usr/bin/blkparse" -i ext4-mixed -D . >"$d.out" 2>/dev/null) &&
	cmp -s "$data/ext4-mixed.blkparse.txt" "$d.out"; then
	pass "installed blkparse prints the reference text for the bundled ext4 trace"
else
	fail "installed blkparse output differs from the reference on ext4-mixed"
fi
make -s -C "$TOP" uninstall DESTDIR="$d" PREFIX=/usr >>"$d.log" 2>&1
left=$(find "$d" -type f | wc -l)
[ "$left" = 0 ] && pass "make uninstall removes every installed file" ||
	fail "make uninstall left $left files: $(find "$d" -type f | head -n 3 | tr '\n' ' ')"
