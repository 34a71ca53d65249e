#!/bin/bash
# iowatcher -o takes its format from the name's ending (issue 18, item 11): .svg, .png, and
# with -m a video container; any other name (x.jpg, x, x.html, a movie name without -m, a
# picture name with -m) used to get an SVG written under it. Now it is a usage error: exit
# status 2, a message naming the option and the name, a hint listing the names that
# work, and no file written. Names that work still do (in any case).
. "$(dirname "$0")/../lib.sh"

IOWBIN="$TOP/iowatcher/iowatcher"
if [ ! -x "$IOWBIN" ]; then
	fail "iowatcher is built ($IOWBIN missing)"
	exit 0
fi
read -ra VG <<<"$VG" # the valgrind run's command (tests/lib.sh), or none
w="$OUT/iowatcher-output"
rm -rf "$w"
mkdir -p "$w"
bin="$(unpack ext4-mixed)/ext4-mixed.bin"

# bad NAME KIND [options...]: KIND is "output" or "movie", the hint must list WANT...
bad() {
	local name=$1 kind=$2 rc err hint
	shift 2
	rm -f "$w/$name"
	(cd "$w" && "${VG[@]}" "$IOWBIN" -t "$bin" "$@" -o "$name" >out.txt 2>err.txt)
	rc=$?
	err=$(sed -n 1p "$w/err.txt")
	hint=$(sed -n 2p "$w/err.txt")
	if [ $rc != 2 ]; then
		fail "-o $name $*: exit status $rc, expected 2 (a usage error)"
	elif [ "$err" != "iowatcher: option '-o': unknown $kind type '$name'" ]; then
		fail "-o $name $*: message '$err'"
	elif [ "$kind" = output ] && ! { [[ $hint == hint:*FILE.svg*FILE.png*-m*.mp4* ]]; }; then
		fail "-o $name $*: the hint does not list .svg, .png and -m .mp4: '$hint'"
	elif [ "$kind" = movie ] && ! [[ $hint == hint:*.mp4*.mkv* ]]; then
		fail "-o $name $*: the hint does not list the movie names: '$hint'"
	elif [ -e "$w/$name" ]; then
		fail "-o $name $*: a file '$name' was written anyway"
	else
		pass "-o $name $*: usage error (exit 2): $err / $hint"
	fi
}
bad x.jpg output
bad x output
bad x.txt output
bad x.html output
grep -q -- "--html=FILE" "$w/err.txt" && pass "-o x.html: the hint points at --html" ||
	fail "-o x.html: no pointer to --html: $(cat "$w/err.txt")"
bad x.mp4 output
grep -q "a movie needs -m" "$w/err.txt" && pass "-o x.mp4 without -m: the hint says a movie needs -m" ||
	fail "-o x.mp4 without -m: $(cat "$w/err.txt")"
# with -m: checked before anything runs (no ffmpeg needed for the error)
bad y.svg movie -m
bad y.gif movie -m

# names that work
(cd "$w" && "${VG[@]}" "$IOWBIN" -t "$bin" -o ok.svg 2>ok.err)
rc=$?
if [ $rc = 0 ] && head -n 2 "$w/ok.svg" | grep -q '^<svg xmlns="http://www.w3.org/2000/svg"'; then
	pass "-o ok.svg writes an SVG"
else
	fail "-o ok.svg: exit $rc: $(head -c 200 "$w/ok.err")"
fi
(cd "$w" && "${VG[@]}" "$IOWBIN" -t "$bin" -o OK.SVG 2>ok2.err)
rc=$?
if [ $rc = 0 ] && cmp -s "$w/ok.svg" "$w/OK.SVG"; then
	pass "-o OK.SVG: the ending in any case"
else
	fail "-o OK.SVG: exit $rc: $(head -c 200 "$w/ok2.err")"
fi
if command -v rsvg-convert >/dev/null; then
	(cd "$w" && "${VG[@]}" "$IOWBIN" -t "$bin" -o ok.png 2>png.err)
	rc=$?
	if [ $rc = 0 ] && [ "$(head -c 4 "$w/ok.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
		pass "-o ok.png writes a PNG"
	else
		fail "-o ok.png: exit $rc: $(head -c 200 "$w/png.err")"
	fi
else
	skip "-o ok.png (rsvg-convert not installed; apt-get install librsvg2-bin)"
fi
