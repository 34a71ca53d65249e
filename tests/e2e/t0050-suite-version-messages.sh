#!/bin/bash
# Messages and versions across the tools (issue 18, item 12):
# - every tool's -V and --version: the classic line, unchanged (the reference's own, where
#   it is installed, without its path), then " (blktrace-ng V)" with V from the one
#   definition in include/version.h; tools the classic suite gives no version option
#   (iowatcher, verify_blkparse, blkrawverify) print "TOOL (blktrace-ng V)";
# - blktrace with no device says "blktrace: no device given" before the usage (exit 1, as
#   the classic tool, which prints only the usage);
# - btt -i NAME where NAME.blktrace.0 exists: the error, then a hint with the commands to
#   merge the per-CPU files, which work: btt on the merged file gives the stored report.
. "$(dirname "$0")/../lib.sh"

w="$OUT/suite-version"
rm -rf "$w"
mkdir -p "$w"
V=$(sed -n 's/^#define BLKTRACE_NG_VERSION "\(.*\)"$/\1/p' "$TOP/include/version.h")
if [ -z "$V" ]; then
	fail "include/version.h defines BLKTRACE_NG_VERSION"
	exit 0
fi
mkv=$(make -s -C "$TOP" version 2>/dev/null)
[ "$mkv" = "$V" ] && pass "make version: $V, as include/version.h" ||
	fail "make version says '$mkv', include/version.h '$V'"

# classic: the reference's line without its directory, else the documented one
classic() { # tool reference-path documented-line
	local ref
	if [ -x "$2" ] && ref=$("$2" -V 2>/dev/null) && [ -n "$ref" ]; then
		echo "${ref#"$(dirname "$2")/"}"
	else
		echo "$3"
	fi
}
check_v() { # what binary expected
	local opt out rc
	if [ ! -x "$2" ]; then
		fail "$1 -V: $2 not built"
		return
	fi
	for opt in -V --version; do
		out=$("$2" $opt 2>"$w/err")
		rc=$?
		if [ $rc = 0 ] && [ "$out" = "$3" ] && [ ! -s "$w/err" ]; then
			pass "$1 $opt: '$out'"
		else
			fail "$1 $opt: exit $rc, '$out' (expected '$3'), stderr '$(head -c 100 "$w/err")'"
		fi
	done
}
check_v blkparse "$TOP/blkparse" \
	"$(classic blkparse /usr/bin/blkparse 'blkparse version 1.2.0') (blktrace-ng $V)"
check_v blktrace "$TOP/blktrace" \
	"$(classic blktrace /usr/sbin/blktrace 'blktrace version 2.0.0') (blktrace-ng $V)"
check_v btt "$TOP/btt/btt" "$(classic btt /usr/bin/btt 'btt version 2.09') (blktrace-ng $V)"
check_v blkiomon "$TOP/blkiomon" \
	"$(classic blkiomon /usr/bin/blkiomon 'blkiomon version 0.3') (blktrace-ng $V)"
# the reference btrecord/btreplay print "btrecord -- version 1.0.0" to stderr; ours has
# always printed the line below on stdout (btrecord.8)
check_v btrecord "$TOP/btreplay/btrecord" \
	"btrecord version 2.0.0 (replay files version 1.0.0) (blktrace-ng $V)"
check_v btreplay "$TOP/btreplay/btreplay" \
	"btreplay version 2.0.0 (replay files version 1.0.0) (blktrace-ng $V)"
check_v iowatcher "$TOP/iowatcher/iowatcher" "iowatcher (blktrace-ng $V)"
check_v verify_blkparse "$TOP/verify_blkparse" "verify_blkparse (blktrace-ng $V)"
check_v blkrawverify "$TOP/blkrawverify" "blkrawverify (blktrace-ng $V)"
# blktrace's -v is a version option too (classic)
out=$("$TOP/blktrace" -v 2>/dev/null)
[ "$out" = "$(classic blktrace /usr/sbin/blktrace 'blktrace version 2.0.0') (blktrace-ng $V)" ] &&
	pass "blktrace -v: the same line" || fail "blktrace -v: '$out'"

# blktrace without a device (nothing is traced: it stops while reading its options)
for args in "-w 1" "-I /dev/null"; do
	# shellcheck disable=SC2086
	"$TOP/blktrace" $args >"$w/bt.out" 2>"$w/bt.err"
	rc=$?
	if [ $rc = 1 ] && [ "$(sed -n 1p "$w/bt.err")" = "blktrace: no device given" ] &&
		sed -n 2p "$w/bt.err" | grep -q '^Usage: blktrace' && [ ! -s "$w/bt.out" ]; then
		pass "blktrace $args: 'blktrace: no device given', then the usage, exit 1"
	else
		fail "blktrace $args: exit $rc, stderr: $(head -n 2 "$w/bt.err" | tr '\n' '|')"
	fi
done

# btt on the base name of per-CPU files
d=$(unpack nullb-randrw)
mkdir -p "$w/pc"
for f in "$d"/nullb-randrw.blktrace.*; do
	cp "$f" "$w/pc/loop0.blktrace.${f##*.blktrace.}"
done
(cd "$w/pc" && "$TOP/btt/btt" -i loop0 >btt.out 2>btt.err)
rc=$?
e1=$(sed -n 1p "$w/pc/btt.err")
h=$(sed -n 2p "$w/pc/btt.err")
want="hint: 'loop0' looks like per-CPU trace files (loop0.blktrace.0 ...): run 'blkparse -i loop0 -d loop0.bin -O' and then 'btt -i loop0.bin'"
if [ $rc = 1 ] && [ "$e1" = "btt: cannot open 'loop0': No such file or directory" ] && [ "$h" = "$want" ]; then
	pass "btt -i loop0 (per-CPU files loop0.blktrace.N): the error, then the hint to merge them"
else
	fail "btt -i loop0: exit $rc: $(head -n 2 "$w/pc/btt.err" | tr '\n' '|')"
fi
# the hint's commands, run as given (ours on PATH), give the report of the merged trace
cmds=$(echo "$h" | sed -n "s/.*run '\([^']*\)' and then '\([^']*\)'$/\1;\2/p")
exp="$d/nullb-randrw.btt.txt"
if [ -n "$cmds" ] && [ -f "$exp" ]; then
	(cd "$w/pc" && export PATH="$TOP:$TOP/btt:$PATH" && sh -c "${cmds%%;*}" >merge.out 2>&1 &&
		sh -c "${cmds#*;}" >hint.out 2>hint.err)
	check_same "btt -i loop0: the hint's two commands give the merged trace's report" "$exp" \
		"$w/pc/hint.out"
else
	fail "btt -i loop0: no commands in the hint, or no stored report ($exp)"
fi
# a name with no per-CPU files gets no such hint
(cd "$w/pc" && "$TOP/btt/btt" -i nosuch >n.out 2>n.err)
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$w/pc/n.err")" = 1 ] && grep -q "^btt: cannot open 'nosuch'" "$w/pc/n.err" &&
	pass "btt -i nosuch: the error alone" || fail "btt -i nosuch: exit $rc: $(cat "$w/pc/n.err")"
