#!/bin/bash
# btrace's exit status is the pipeline's failure, not blkparse's 0 on an empty stream
# (issue 37): a device that does not exist, one another blktrace is tracing, a blkparse that
# fails; a run that works still exits 0.
. "$(dirname "$0")/../lib.sh"

BTRACE="$TOP/btrace"
w="$OUT/t0531"
rm -rf "$w"
mkdir -p "$w"

# a missing device: blktrace's message and its status (no kernel, no root needed)
"$BTRACE" -w 1 /dev/nonexistent-t0531 >"$w/missing.out" 2>"$w/missing.err"; rc=$?
"$TOP/blktrace" -d /dev/nonexistent-t0531 -w 1 -o - >/dev/null 2>"$w/bt-missing.err"; brc=$?
if [ $rc != 0 ] && [ $rc = $brc ] && grep -q "'/dev/nonexistent-t0531'" "$w/missing.err"; then
	pass "btrace on a missing device: exit $rc (blktrace's), its message: $(head -n 1 "$w/missing.err")"
else
	fail "btrace on a missing device: rc=$rc (blktrace's $brc) err: $(head -c 300 "$w/missing.err")"
fi

# a blkparse that fails: its status (here a stand-in blkparse beside a copy of the script)
mkdir -p "$w/bin"
cp "$BTRACE" "$w/bin/btrace"
printf '#!/bin/sh\ncat >/dev/null\necho "blkparse: stand-in failure" >&2\nexit 3\n' >"$w/bin/blkparse"
printf '#!/bin/sh\necho stream\nexit 0\n' >"$w/bin/blktrace"
chmod +x "$w/bin/blkparse" "$w/bin/blktrace"
sh "$w/bin/btrace" /dev/loop0 >/dev/null 2>"$w/parse-fail.err"; rc=$?
if [ $rc = 3 ]; then
	pass "btrace whose blkparse fails: exit 3 (blkparse's)"
else
	fail "btrace whose blkparse fails: rc=$rc $(head -c 300 "$w/parse-fail.err")"
fi
printf '#!/bin/sh\nexec %s "$@"\n' "$BLKPARSE" >"$w/bin/blkparse"
printf '#!/bin/sh\necho "blktrace: stand-in failure" >&2\nexit 4\n' >"$w/bin/blktrace"
sh "$w/bin/btrace" /dev/loop0 >"$w/trace-fail.out" 2>"$w/trace-fail.err"; rc=$?
if [ $rc = 4 ] && grep -q "stand-in failure" "$w/trace-fail.err"; then
	pass "btrace whose blktrace fails with status 4: exit 4"
else
	fail "btrace whose blktrace fails: rc=$rc $(head -c 300 "$w/trace-fail.err")"
fi

skip_under_valgrind "btrace on a live device" "the tracer runs natively; the plain and ASan runs run it"
tracer_setup "btrace on a live device" "$OUT/t0531-live" 64M

# a device another blktrace is tracing: non-zero, blktrace's message naming the device
mkdir -p "$w/holder"
(cd "$w/holder" && exec "$TOP/blktrace" -d "$loop" -w 30 >out.txt 2>err.txt) &
bt=$!
if wait_tracing; then
	"$BTRACE" -w 2 "$loop" >"$w/busy.out" 2>"$w/busy.err"; rc=$?
	if [ $rc != 0 ] && grep -q "$name" "$w/busy.err"; then
		pass "btrace on a device being traced: exit $rc, $(head -n 1 "$w/busy.err")"
	else
		fail "btrace on a device being traced: rc=$rc err: $(head -c 300 "$w/busy.err")"
	fi
else
	fail "btrace on a device being traced: the first tracer did not start: $(head -c 300 "$w/holder/err.txt")"
fi
kill -INT $bt
wait $bt

# a user without the privilege to trace: non-zero, blktrace's message
if command -v setpriv >/dev/null; then
	# the tools in a directory anyone can read (the tree's may not be)
	np=$(mktemp -d /tmp/t0531.XXXXXX)
	cp "$BTRACE" "$TOP/blktrace" "$TOP/blkparse" "$np/"
	chmod 755 "$np" "$np/btrace" "$np/blktrace" "$np/blkparse"
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups sh "$np/btrace" -w 1 "$loop" \
		>"$w/noperm.out" 2>"$w/noperm.err")
	rc=$?
	rm -rf "$np"
	if [ $rc != 0 ] && grep -q "blktrace: " "$w/noperm.err"; then
		pass "btrace as an unprivileged user: exit $rc, $(head -n 1 "$w/noperm.err")"
	else
		fail "btrace as an unprivileged user: rc=$rc err: $(head -c 300 "$w/noperm.err")"
	fi
else
	skip "btrace as an unprivileged user (no setpriv: util-linux)"
fi

# and a run that works: exit 0, the events printed
(cd "$w" && "$BTRACE" -w 3 "$loop" >ok.out 2>ok.err; echo $? >rc) &
bt=$!
wait_tracing
workload "$w/expected.txt"
wait $bt
if [ "$(cat "$w/rc")" = 0 ]; then
	pass "btrace -w 3 on a free device: exit 0"
else
	fail "btrace -w 3 on a free device: rc=$(cat "$w/rc") $(head -c 300 "$w/ok.err")"
fi
check_ios "btrace -w 3" "$w/expected.txt" "$w/ok.out"
