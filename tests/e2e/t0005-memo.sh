#!/bin/bash
# memo (tests/lib.sh), which lets the three runs of make check share what the reference
# tools, generators and checkers give for the same bytes: a result is replayed only for the
# same command on the same bytes, with its stdout, stderr, status and files; anything else
# runs again; a result naming its run's own path is not kept.
. "$(dirname "$0")/../lib.sh"
w="$OUT/memo-test"
rm -rf "$w"
mkdir -p "$w/a" "$w/b"
export MEMO_DIR="$w/cache"
mkdir -p "$MEMO_DIR"
# a "tool" that counts its runs, prints, fails with status 3 and writes a file
cat >"$w/tool.sh" <<'SH'
#!/bin/bash
echo run >>"$COUNT"
echo "out: $(cat "$1")"
echo "err: $(wc -c <"$1")" >&2
cp "$1" "$2"
echo made >made.txt
exit 3
SH
chmod +x "$w/tool.sh"
export COUNT="$w/count"
runs() { wc -l <"$COUNT" 2>/dev/null || echo 0; }
echo hello >"$w/a/in"
memo -o "$w/a/copy" "$w/tool.sh" "$w/a/in" "$w/a/copy" >"$w/o1" 2>"$w/e1"
rc1=$?
rm -f "$w/a/copy"
memo -o "$w/a/copy" "$w/tool.sh" "$w/a/in" "$w/a/copy" >"$w/o2" 2>"$w/e2"
rc2=$?
if [ "$(runs)" = 1 ] && [ $rc1 = 3 ] && [ $rc2 = 3 ] && cmp -s "$w/o1" "$w/o2" &&
	cmp -s "$w/e1" "$w/e2" && [ "$(cat "$w/o2")" = "out: hello" ] && cmp -s "$w/a/in" "$w/a/copy"; then
	pass "memo replays stdout, stderr, the status and an -o file for the same bytes (one run)"
else
	fail "memo replay: runs $(runs), rc $rc1/$rc2, out '$(cat "$w/o2")'"
fi
echo world >"$w/a/in"
out=$(memo -o "$w/a/copy" "$w/tool.sh" "$w/a/in" "$w/a/copy" 2>/dev/null)
if [ "$(runs)" = 2 ] && [ "$out" = "out: world" ]; then
	pass "memo runs again when an input file's bytes change"
else
	fail "memo after a change: runs $(runs), out '$out'"
fi
# -C DIR: run there, all DIR holds after comes back; its bytes before are part of the key
echo x >"$w/b/in"
memo -C "$w/b" "$w/tool.sh" in out >/dev/null 2>&1
rm -f "$w/b/out" "$w/b/made.txt"
memo -C "$w/b" "$w/tool.sh" in out >/dev/null 2>&1
if [ "$(runs)" = 3 ] && [ "$(cat "$w/b/made.txt" 2>/dev/null)" = made ] && cmp -s "$w/b/in" "$w/b/out"; then
	pass "memo -C DIR replays the files the command left in DIR"
else
	fail "memo -C: runs $(runs), made.txt '$(cat "$w/b/made.txt" 2>/dev/null)'"
fi
echo y >"$w/b/extra"
memo -C "$w/b" "$w/tool.sh" in out >/dev/null 2>&1
[ "$(runs)" = 4 ] && pass "memo -C DIR runs again when DIR holds other bytes" ||
	fail "memo -C with other bytes in DIR: runs $(runs)"
# a NAME standing for NAME.* files (blkparse -i NAME): their bytes count
echo 1 >"$w/a/t.blktrace.0"
memo sh -c 'cat "$0.blktrace.0"' "$w/a/t" >/dev/null 2>&1
echo 2 >"$w/a/t.blktrace.0"
out=$(memo sh -c 'cat "$0.blktrace.0"' "$w/a/t" 2>/dev/null)
[ "$out" = 2 ] && pass "memo hashes NAME.* for an argument NAME that is no file" ||
	fail "memo with NAME.*: '$out'"
# a result naming this run's path is not kept
memo echo "$w" >/dev/null
memo echo "$w" >/dev/null
if [ "$(grep -c "^nokeep .* echo @OUT/memo-test$" "$MEMO_DIR/log")" = 2 ]; then
	pass "memo keeps no result that names its run's own path"
else
	fail "memo kept a result naming its run's path: $(tail -n 2 "$MEMO_DIR/log" | tr '\n' ' ')"
fi
# without MEMO_DIR every call runs
out=$(MEMO_DIR= memo -o "$w/a/copy" "$w/tool.sh" "$w/a/in" "$w/a/copy" 2>/dev/null)
out=$(MEMO_DIR= memo -o "$w/a/copy" "$w/tool.sh" "$w/a/in" "$w/a/copy" 2>/dev/null)
[ "$(runs)" = 6 ] && [ "$out" = "out: world" ] && pass "memo without MEMO_DIR runs every call" ||
	fail "memo without MEMO_DIR: runs $(runs)"
