#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Time our ./blkparse against the reference /usr/bin/blkparse on the same trace.
#
#   bench/bench-blkparse.sh            (or: make bench)
#
# Trace: ../shared/traces/large-perf/large-perf.tar.xz when present (extracted under /tmp),
# else a synthetic 4M-event trace from tests/gen/gentrace.
# Workloads: text output to /dev/null, binary merge (-O -d OUT.bin), and text with -t.
# For each: best-of-3 wall seconds, events/s, peak RSS, ratio ours/reference, and whether
# the outputs of both tools are byte-identical.
#
# Environment: OURS, REF (paths of the two tools), RUNS (default 3), TRACE_TARXZ,
# GEN_EVENTS (default 4000000).
set -u
set -o pipefail

cd "$(dirname "$0")/.." || exit 1

OURS=${OURS:-./blkparse}
REF=${REF:-/usr/bin/blkparse}
RUNS=${RUNS:-3}
TRACE_TARXZ=${TRACE_TARXZ:-../shared/traces/large-perf/large-perf.tar.xz}
GEN=./tests/gen/gentrace
GEN_EVENTS=${GEN_EVENTS:-4000000}

die() {
	echo "bench: $*" >&2
	exit 1
}

[ -x "$OURS" ] || die "'$OURS' not found; run 'make' first"
if [ ! -x "$REF" ]; then
	echo "bench: reference '$REF' not installed; timing ours only" >&2
	REF=
fi

# GNU time gives the peak RSS.
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "bench: installing package 'time' for /usr/bin/time" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 &&
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1; }
	fi
	if [ ! -x "$TIME" ]; then
		echo "bench: /usr/bin/time missing (install package 'time' as root);" \
			"peak RSS not measured" >&2
		TIME=
	fi
fi

TMP=$(mktemp -d /tmp/bench-blkparse.XXXXXX) || die "cannot create a temporary directory"
# shellcheck disable=SC2317 # called from the trap
cleanup() {
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the trace ----
mkdir -p "$TMP/trace"
if [ -f "$TRACE_TARXZ" ]; then
	echo "bench: extracting $TRACE_TARXZ" >&2
	tar -xJf "$TRACE_TARXZ" -C "$TMP/trace" || die "cannot extract '$TRACE_TARXZ'"
	manifest=$(dirname "$TRACE_TARXZ")/MANIFEST.md
	# "Trace input names: large-perf (blkparse/btt: `-i large-perf -D .`)"
	NAME=
	SUBDIR=.
	if [ -f "$manifest" ]; then
		# shellcheck disable=SC2016 # the backquotes are literal
		args=$(sed -n 's/.*`\(-i [^`]*\)`.*/\1/p' "$manifest" | head -n 1)
		NAME=$(sed -n 's/.*-i \([^ ]*\).*/\1/p' <<<"$args")
		d=$(sed -n 's/.*-D \([^ ]*\).*/\1/p' <<<"$args")
		[ -n "$d" ] && SUBDIR=$d
	fi
	if [ -z "$NAME" ]; then
		for f in "$TMP"/trace/*.blktrace.[0-9]*; do
			f=${f##*/}
			NAME=${f%.blktrace.*}
			break
		done
	fi
	DIR=$TMP/trace/$SUBDIR
	LABEL=$(basename "$TRACE_TARXZ" .tar.xz)
else
	[ -x "$GEN" ] || die "'$TRACE_TARXZ' missing and '$GEN' not built; run 'make'"
	echo "bench: '$TRACE_TARXZ' missing; generating $GEN_EVENTS synthetic events" >&2
	"$GEN" -n "$GEN_EVENTS" -c 2 -s 1 -o syn -D "$TMP/trace" || die "gentrace failed"
	NAME=syn
	DIR=$TMP/trace
	LABEL="synthetic (gentrace -n $GEN_EVENTS -c 2)"
fi
ls "$DIR/$NAME".blktrace.* >/dev/null 2>&1 || die "no '$NAME.blktrace.*' files in '$DIR'"
BYTES=$(cat "$DIR/$NAME".blktrace.* | wc -c)

# ---- measuring ----

# run_one OUTFILE CMD...: run once with stdout to OUTFILE; set WALL and RSS (KiB).
run_one() {
	local out=$1
	shift
	if [ -n "$TIME" ]; then
		"$TIME" -f '%e %M' -o "$TMP/time.txt" "$@" >"$out" 2>"$TMP/stderr.txt" || return 1
		read -r WALL RSS <"$TMP/time.txt"
	else
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >"$out" 2>"$TMP/stderr.txt" || return 1
		t1=$(date +%s.%N)
		WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		RSS=
	fi
}

# best TAG OUTFILE CMD...: best wall and highest peak RSS of $RUNS runs -> BEST_<TAG>, RSS_<TAG>.
best() {
	local tag=$1 out=$2 best='' rss=0 i
	shift 2
	for ((i = 0; i < RUNS; i++)); do
		run_one "$out" "$@" || {
			echo "bench: '$*' failed:" >&2
			head -n 5 "$TMP/stderr.txt" >&2
			return 1
		}
		if [ -z "$best" ] || awk -v a="$WALL" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$WALL
		fi
		[ -n "$RSS" ] && [ "$RSS" -gt "$rss" ] && rss=$RSS
	done
	printf -v "BEST_$tag" '%s' "$best"
	printf -v "RSS_$tag" '%s' "$rss"
}

echo "bench: text output, $RUNS runs each" >&2
best ours_text /dev/null "$OURS" -i "$NAME" -D "$DIR" || die "our blkparse failed"
[ -n "$REF" ] && { best ref_text /dev/null "$REF" -i "$NAME" -D "$DIR" || die "reference failed"; }

echo "bench: binary merge, $RUNS runs each" >&2
best ours_bin /dev/null "$OURS" -i "$NAME" -D "$DIR" -O -d "$TMP/ours.bin" ||
	die "our blkparse failed"
if [ -n "$REF" ]; then
	best ref_bin /dev/null "$REF" -i "$NAME" -D "$DIR" -O -d "$TMP/ref.bin" ||
		die "reference failed"
fi

echo "bench: text with -t (stale times replayed on the allocator model), $RUNS runs each" >&2
best ours_track /dev/null "$OURS" -i "$NAME" -D "$DIR" -t || die "our blkparse failed"
[ -n "$REF" ] && { best ref_track /dev/null "$REF" -i "$NAME" -D "$DIR" -t || die "reference failed"; }

# ---- checking the outputs (and counting the events) ----
echo "bench: comparing outputs" >&2
"$OURS" -i "$NAME" -D "$DIR" >"$TMP/ours.txt" 2>/dev/null
EVENTS=$(awk '/^Events \(.*\): [0-9]+ entries/ { n += $(NF - 1) } END { print n + 0 }' \
	"$TMP/ours.txt")
SAME_TEXT=n/a
SAME_BIN=n/a
SAME_TRACK=n/a
if [ -n "$REF" ]; then
	if cmp -s <("$OURS" -i "$NAME" -D "$DIR" -t 2>/dev/null) <("$REF" -i "$NAME" -D "$DIR" -t 2>/dev/null); then
		SAME_TRACK=SAME
	else
		SAME_TRACK=DIFFERENT
	fi
	if "$REF" -i "$NAME" -D "$DIR" 2>/dev/null | cmp -s "$TMP/ours.txt" -; then
		SAME_TEXT=SAME
	else
		SAME_TEXT=DIFFERENT
	fi
	if cmp -s "$TMP/ours.bin" "$TMP/ref.bin"; then
		SAME_BIN=SAME
	else
		SAME_BIN=DIFFERENT
	fi
fi
rm -f "$TMP/ours.txt" "$TMP/ours.bin" "$TMP/ref.bin"

# ---- the table ----
rate() {
	awk -v n="$EVENTS" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "-" }'
}
mib() {
	if [ -z "$1" ] || [ "$1" = 0 ]; then
		echo "-"
		return
	fi
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}
ratio() {
	if [ -z "$1" ] || [ -z "$2" ] || [ "$1" = 0 ] || [ "$2" = 0 ]; then
		echo "-"
		return
	fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

printf '\ntrace: %s, %s events, %.1f MiB of per-CPU files\n' "$LABEL" "$EVENTS" \
	"$(awk -v b="$BYTES" 'BEGIN { print b / 1048576 }')"
printf '%-16s %-5s %9s %12s %12s %8s\n' workload tool wall_s events/s peak_RSS_MiB output
for w in text bin track; do
	case $w in
	text) wname='text >/dev/null' same=$SAME_TEXT ;;
	bin) wname='binary -O -d' same=$SAME_BIN ;;
	track) wname='text -t' same=$SAME_TRACK ;;
	esac
	o=BEST_ours_$w
	orss=RSS_ours_$w
	printf '%-16s %-5s %9s %12s %12s %8s\n' "$wname" ours "${!o}" "$(rate "${!o}")" \
		"$(mib "${!orss}")" "$same"
	if [ -n "$REF" ]; then
		r=BEST_ref_$w
		rrss=RSS_ref_$w
		printf '%-16s %-5s %9s %12s %12s\n' '' ref "${!r}" "$(rate "${!r}")" "$(mib "${!rrss}")"
		printf '%-16s %-5s %9s %12s %12s\n' '' ratio "$(ratio "${!o}" "${!r}")" '' \
			"$(ratio "${!orss}" "${!rrss}")"
	fi
done
[ -n "$REF" ] || echo "(reference blkparse not installed: no ratios, no output check)"
exit 0
