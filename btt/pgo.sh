#!/bin/sh
# Build btt/btt with profile-guided optimisation (btt.mk: "make pgo", opt-in): the
# sources are compiled with counters, that build reads the real traces bundled with the
# tests (tests/data/*/*.bin.xz: the default report, then -A with -l and -q files), and the
# sources are compiled again with the counts, which tell the compiler the common paths.
# Without those traces or xz, the second build simply has no profile (the code "make LTO=1"
# gives). The objects and counts stay in btt/pgo/.
#
# usage: CC=.. CPPFLAGS=.. CFLAGS=.. LDFLAGS=.. LIBS=.. sh btt/pgo.sh "SOURCES" TRACE.bin.xz...
set -eu
srcs=$1
shift
dir=btt/pgo
top=$(pwd)

# one source -> btt/pgo/its_path.o (the same name in both builds: the counts follow it)
obj() {
	echo "$dir/$(echo "$1" | tr / _ | sed 's/\.c$/.o/')"
}

# $1: the flags of this build, $2: the program
build() {
	objs=
	for s in $srcs; do
		o=$(obj "$s")
		# shellcheck disable=SC2086 # the flags are lists
		$CC $CPPFLAGS $CFLAGS $1 -c -o "$o" "$s"
		objs="$objs $o"
	done
	# shellcheck disable=SC2086
	$CC $CFLAGS $1 $LDFLAGS -o "$2" $objs $LIBS
}

rm -rf "$dir"
mkdir -p "$dir"
echo "btt: profile-guided build (instrumented build, training on $# bundled traces, final build)"
build "-fprofile-generate -fprofile-update=atomic" "$dir/btt-train"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trained=0
for t in "$@"; do
	xz -dc "$t" >"$tmp/t.bin" 2>/dev/null || continue
	# in the temporary directory: btt writes its *_fp.dat files where it runs
	(cd "$tmp" &&
		"$top/$dir/btt-train" -i t.bin -o out >/dev/null 2>&1 &&
		"$top/$dir/btt-train" -i t.bin -A -l l -q q >/dev/null 2>&1) &&
		trained=$((trained + 1))
done
if [ "$trained" = 0 ]; then
	echo "btt: no trace could be used for training (is xz installed?): built without a profile" >&2
fi

rm -f "$dir"/*.o
build "-fprofile-use -fprofile-partial-training -Wno-missing-profile" btt/btt
