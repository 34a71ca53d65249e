#!/bin/bash
# iowatcher: render every bundled trace and check the SVG with a real XML parser (graphs,
# titles, axis labels, points inside the axes, one plotted I/O per completion), several
# traces and their legend, graph selection, zoom, PNG through rsvg-convert, a headless
# Chromium rendering, the HTML report, per-CPU input, determinism and usage errors.
. "$(dirname "$0")/../lib.sh"

IOWBIN="$TOP/iowatcher/iowatcher"
w="$OUT/iowatcher"
if [ ! -x "$IOWBIN" ]; then
	fail "iowatcher is built ($IOWBIN missing)"
	exit 1
fi
read -ra VG <<<"$VG" # the valgrind run's command (tests/lib.sh), or none
iow() { "${VG[@]}" "$IOWBIN" "$@"; }
# a private directory, so that concurrent runs of the suite do not clobber each other; it
# replaces $OUT/iowatcher (kept for inspection: SVGs, PNGs, the Chromium screenshot) at the end
final=$w
w=$(mktemp -d "$OUT/iowatcher.XXXXXX")
MEMO_SCRATCH=$w
finish() {
	rm -rf "$final"
	mv "$w" "$final" 2>/dev/null || rm -rf "$w"
}
trap finish EXIT
if ! command -v python3 >/dev/null; then
	skip "iowatcher SVG checks (python3 is not installed)"
	exit 0
fi

# check-svg.py FILE [key=value...]: prints "ok ..." or "bad: reason" lines
cat >"$w/check-svg.py" <<'EOF'
import re, sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'
args = dict(a.split('=', 1) for a in sys.argv[2:])
try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    print('bad: XML does not parse: %s' % e)
    sys.exit(0)
except OSError as e:
    print('bad: cannot read the SVG: %s' % e)
    sys.exit(0)
if root.tag != NS + 'svg':
    print('bad: root element is %s' % root.tag)
    sys.exit(0)
for e in root.iter():
    for k, v in e.attrib.items():
        if 'href' in k or 'url(' in v and 'url(#' not in v:
            print('bad: external reference %s=%s' % (k, v))
    if e.tag in (NS + 'script', NS + 'image', NS + 'foreignObject'):
        print('bad: element %s' % e.tag)

graphs = {}
for g in root.iter(NS + 'svg'):
    if g.get('class') == 'graph':
        graphs[g.get('id')[len('graph-'):]] = g
print('graphs ' + ' '.join(graphs))
want = args.get('graphs', '').split(',') if args.get('graphs') else []
for name in want:
    if name not in graphs:
        print('bad: graph %s missing' % name)
if 'exact' in args and sorted(graphs) != sorted(want):
    print('bad: graphs %s, expected exactly %s' % (sorted(graphs), sorted(want)))

def texts(g, cls):
    return [''.join(t.itertext()).strip() for t in g.iter(NS + 'text') if cls in (t.get('class') or '').split()]

nums = re.compile(r'-?[0-9]+(?:\.[0-9]+)?')
plotted = 0
for name, g in graphs.items():
    for cls in ('title', 'xlabel', 'ylabel'):
        t = texts(g, cls)
        if len(t) != 1 or not t[0]:
            print('bad: graph %s has no %s' % (name, cls))
    if not texts(g, 'xtick') or not texts(g, 'ytick'):
        print('bad: graph %s has no tick labels' % name)
    pa = [r for r in g.iter(NS + 'rect') if r.get('class') == 'plot-area']
    if len(pa) != 1:
        print('bad: graph %s has %d plot areas' % (name, len(pa)))
        continue
    x0, y0 = float(pa[0].get('x')), float(pa[0].get('y'))
    x1, y1 = x0 + float(pa[0].get('width')), y0 + float(pa[0].get('height'))
    eps = 0.01
    def inside(x, y):
        return x0 - eps <= x <= x1 + eps and y0 - eps <= y <= y1 + eps
    outside = 0
    for r in g.iter(NS + 'rect'):
        c = r.get('class')
        if c not in ('io', 'band'):
            continue
        x, y = float(r.get('x')), float(r.get('y'))
        if not (inside(x, y) and inside(x + float(r.get('width')), y + float(r.get('height')))):
            outside += 1
        if c == 'io':
            plotted += int(r.get('data-n', '1'))
    npath = 0
    for p in g.iter(NS + 'path'):
        if 'series' not in (p.get('class') or '').split():
            continue
        v = [float(n) for n in nums.findall(p.get('d'))]
        npath += 1
        for i in range(0, len(v) - 1, 2):
            if not inside(v[i], v[i + 1]):
                outside += 1
    if outside:
        print('bad: graph %s has %d points outside its axes' % (name, outside))
    if name != 'io' and name in args.get('lines', '').split(',') and npath == 0:
        print('bad: graph %s draws no line' % name)
    legend = sorted(set(e.get('data-trace') for e in g.iter(NS + 'g') if e.get('class') == 'legend-entry'))
    labels = [''.join(e.itertext()).strip() for e in g.iter(NS + 'g') if e.get('class') == 'legend-entry']
    print('legend %s %d %s' % (name, len(legend), '|'.join(labels)))
print('plotted %d' % plotted)
EOF

ensure_pkg() { # program package
	command -v "$1" >/dev/null && return 0
	is_root || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >"$w/apt-$2.log" 2>&1
	command -v "$1" >/dev/null
}

# run "what" check-svg.py arguments: PASS when no "bad:" line
check_svg() { # what file args...
	local what=$1 f=$2 out
	shift 2
	out=$(python3 "$w/check-svg.py" "$f" "$@")
	echo "$out" >"$f.check"
	if echo "$out" | grep -q '^bad:'; then
		fail "$what"
		echo "$out" | grep '^bad:' | head -n 5 | sed 's/^/    /'
		return 1
	fi
	pass "$what"
}

count_act() { # file action
	"$TOP/blkparse" -q -i "$1" -f '%a\n' | grep -c "^$2\$"
}

ALL=io,tput,latency,latency-hist,queue-depth,iops
have_rsvg=0
ensure_pkg rsvg-convert librsvg2-bin && have_rsvg=1

for name in nullb-randrw ext4-mixed multi-dev part-remap complete-only; do
	d=$(unpack "$name")
	bin="$d/$name.bin"
	svg="$w/$name.svg"
	if ! iow -t "$bin" -o "$svg" 2>"$w/$name.err"; then
		fail "$name: iowatcher renders the trace"
		sed 's/^/    /' "$w/$name.err" | head -n 5
		continue
	fi
	pass "$name: iowatcher renders the trace"
	check_svg "$name: SVG parses; every graph has a title, axis labels, ticks; points inside the axes" \
		"$svg" graphs=$ALL lines=tput,iops
	# the I/O map plots each completion once (-a C); by default it plots queue events
	nc=$(count_act "$bin" C)
	iow -t "$bin" -a C -O io -o "$w/$name-c.svg"
	got=$(python3 "$w/check-svg.py" "$w/$name-c.svg" | sed -n 's/^plotted //p')
	if [ "$got" = "$nc" ]; then
		pass "$name: the I/O map (-a C) plots $got I/Os, the number of completions"
	else
		fail "$name: the I/O map (-a C) plots $got I/Os, blkparse counts $nc completions"
	fi
	nq=$(count_act "$bin" Q)
	[ "$nq" = 0 ] && nq=$nc
	got=$(sed -n 's/^plotted //p' "$svg.check")
	if [ "$got" = "$nq" ]; then
		pass "$name: the default I/O map plots $got I/Os, the number of queue events (or completions)"
	else
		fail "$name: the default I/O map plots $got I/Os, expected $nq"
	fi
	if [ "$have_rsvg" = 1 ]; then
		if memo -o "$w/$name.png" rsvg-convert -o "$w/$name.png" "$svg" 2>"$w/$name.rsvg.err" &&
			[ "$(head -c 4 "$w/$name.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
			pass "$name: rsvg-convert renders the SVG"
		else
			fail "$name: rsvg-convert renders the SVG"
			head -n 3 "$w/$name.rsvg.err" | sed 's/^/    /'
		fi
	fi
done
[ "$have_rsvg" = 1 ] || skip "rendering with rsvg-convert (not installed; apt-get install librsvg2-bin as root)"

d1=$(unpack nullb-randrw)
d2=$(unpack ext4-mixed)
d3=$(unpack multi-dev)

# per-CPU input gives the same picture as the merged file
if iow -t "$d1/nullb-randrw" -o "$w/percpu.svg" && cmp -s "$w/percpu.svg" "$w/nullb-randrw.svg"; then
	pass "per-CPU files (-t NAME) give the same SVG as the merged file"
else
	fail "per-CPU files (-t NAME) give the same SVG as the merged file"
fi
# NAME.dump (the reference's merged file name), and gzip-compressed per-CPU files
cp "$d2/ext4-mixed.bin" "$w/dumpy.dump"
iow -t "$w/dumpy" -O io -a C -o "$w/dumpy.svg"
got=$(python3 "$w/check-svg.py" "$w/dumpy.svg" | sed -n 's/^plotted //p')
if [ "$got" = "$(count_act "$d2/ext4-mixed.bin" C)" ]; then
	pass "-t NAME reads NAME.dump"
else
	fail "-t NAME reads NAME.dump (plotted '$got')"
fi
mkdir -p "$w/gz"
for f in "$d1"/nullb-randrw.blktrace.*; do
	gzip -c "$f" >"$w/gz/$(basename "$f").gz"
done
if iow -t "$w/gz/nullb-randrw" -o "$w/gz.svg" && cmp -s "$w/gz.svg" "$w/nullb-randrw.svg"; then
	pass "gzip-compressed per-CPU files (NAME.blktrace.N.gz) give the same SVG"
else
	fail "gzip-compressed per-CPU files (NAME.blktrace.N.gz) give the same SVG"
fi
# a directory of per-CPU files of several devices: one trace, the devices in banks
if iow -t "$d3" -o "$w/dir.svg" && cmp -s "$w/dir.svg" "$w/multi-dev.svg"; then
	pass "-t DIR (per-CPU files of two devices) gives the same SVG as their merged file"
else
	fail "-t DIR (per-CPU files of two devices) gives the same SVG as their merged file"
fi
# determinism
iow -t "$d2/ext4-mixed.bin" -o "$w/again.svg"
check_same "the same trace gives the same SVG bytes" "$w/ext4-mixed.svg" "$w/again.svg"

# two traces on the same axes, with labels and a title
iow -t "$d1/nullb-randrw.bin" -t "$d2/ext4-mixed.bin" -l "rand rw" -l "ext4 & co" \
	-T "Two <traces>" -o "$w/two.svg"
check_svg "two traces: SVG valid, points inside the axes" "$w/two.svg" graphs=$ALL
leg=$(grep '^legend iops ' "$w/two.svg.check")
if [ "$leg" = "legend iops 2 rand rw|ext4 & co" ]; then
	pass "two traces give two legend entries with the -l labels"
else
	fail "two traces give two legend entries with the -l labels (got '$leg')"
fi
leg=$(grep '^legend io ' "$w/two.svg.check")
if [ "$leg" = "legend io 2 rand rw Reads|rand rw Writes|ext4 & co Reads|ext4 & co Writes" ]; then
	pass "two traces: the I/O map legend has reads and writes of each"
else
	fail "two traces: the I/O map legend (got '$leg')"
fi
if python3 -c "
import sys, xml.etree.ElementTree as ET
r = ET.parse('$w/two.svg').getroot()
t = [''.join(e.itertext()) for e in r.iter('{http://www.w3.org/2000/svg}text') if e.get('class') == 'page-title']
sys.exit(t != ['Two <traces>'])"; then
	pass "-T title is drawn (escaped for XML)"
else
	fail "-T title is drawn (escaped for XML)"
fi

# graph selection, zoom, size and columns
iow -t "$d3/multi-dev.bin" -O io -O queue_depth -O iops -o "$w/only.svg"
check_svg "-O selects graphs (queue_depth spelling accepted)" "$w/only.svg" graphs=io,queue-depth,iops exact=1
iow -t "$d3/multi-dev.bin" -N latency -N latency-hist -N tput -o "$w/no.svg"
check_svg "-N removes graphs" "$w/no.svg" graphs=io,queue-depth,iops exact=1
iow -t "$d1/nullb-randrw.bin" -x 0.5:1.5 -y 100:600 -r 0.05 -w 500 -h 200 -c 2 -o "$w/zoom.svg"
check_svg "-x/-y zoom, -r, -w/-h, -c 2: points stay inside the axes" "$w/zoom.svg" graphs=$ALL
got=$(sed -n 's/^plotted //p' "$w/zoom.svg.check")
all=$(sed -n 's/^plotted //p' "$w/nullb-randrw.svg.check")
if [ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -lt "$all" ]; then
	pass "zoomed I/O map plots only the I/Os in the window ($got of $all)"
else
	fail "zoomed I/O map plots only the I/Os in the window ($got of $all)"
fi
iow -t "$d2/ext4-mixed.bin" -P -O io -o "$w/pp.svg"
check_svg "-P colours the I/O map per process" "$w/pp.svg" graphs=io
n=$(grep '^legend io ' "$w/pp.svg.check" | tr '|' '\n' | grep -c '(')
if [ "$n" -ge 2 ]; then
	pass "-P: the legend names $n processes"
else
	fail "-P: the legend names processes (got $n)"
fi

# fio bandwidth logs
printf '0, 1000, 0, 4096\n500, 3000, 1, 4096\n1000, 2000, 0, 4096\n1500, 4000, 2, 4096\n' >"$w/fio_bw.log"
iow -t "$d2/ext4-mixed.bin" -F "$w/fio_bw.log" -O fio -O tput -o "$w/fio.svg"
check_svg "-F plots a fio bandwidth log" "$w/fio.svg" graphs=fio,tput exact=1 lines=fio

# CPU graphs from mpstat output saved next to the trace
mkdir -p "$w/mp"
cp "$d2/ext4-mixed.bin" "$w/mp/"
{
	printf 'Linux 6.1.0 (vm) \t11/30/2026 \t_x86_64_\t(2 CPU)\n\n'
	for i in 1 2 3 4 5; do
		printf '09:40:0%d     CPU    %%usr   %%nice    %%sys %%iowait    %%irq   %%soft  %%steal  %%guest  %%gnice   %%idle\n' $((i - 1))
		printf '09:40:0%d     all   %d.00    0.00    %d.00   %d.00    0.50    1.00    0.00    0.00    0.00   50.00\n' $i $((10 + i)) $((5 + i)) $((30 - i))
		printf '09:40:0%d       0    1.00    0.00    1.00    1.00    0.00    0.00    0.00    0.00    0.00   97.00\n\n' $i
	done
	printf 'Average:     all    1.00    0.00    1.00    1.00    0.00    0.00    0.00    0.00    0.00   97.00\n'
} >"$w/mp/ext4-mixed.mpstat"
iow -t "$w/mp/ext4-mixed.bin" -N io -N tput -N latency -N latency-hist -N queue-depth -N iops -o "$w/cpu.svg"
check_svg "CPU graphs from NAME.mpstat next to the trace" "$w/cpu.svg" \
	graphs=cpu-sys,cpu-io,cpu-irq,cpu-soft,cpu-user exact=1 lines=cpu-sys,cpu-io,cpu-irq,cpu-soft,cpu-user
iow -t "$d2/ext4-mixed.bin" -N io -N tput -N latency -N latency-hist -N queue-depth -N iops -o "$w/nocpu.svg"
check_svg "no CPU graphs without mpstat output" "$w/nocpu.svg" graphs= exact=1

# PNG output and the HTML report
if [ "$have_rsvg" = 1 ]; then
	if iow -t "$d2/ext4-mixed.bin" -o "$w/out.png" &&
		[ "$(head -c 4 "$w/out.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
		pass "-o FILE.png writes a PNG"
	else
		fail "-o FILE.png writes a PNG"
	fi
fi
iow -t "$d1/nullb-randrw.bin" -t "$d2/ext4-mixed.bin" -o "$w/rep.svg" --html "$w/rep.html"
if grep -q '<table class="summary">' "$w/rep.html" && grep -q '<svg xmlns' "$w/rep.html" &&
	! grep -Eq '<(script|link)|src=' "$w/rep.html" &&
	grep -q "<td>nullb-randrw</td>" "$w/rep.html"; then
	pass "--html writes one self-contained page with the summary table and the SVG inline"
else
	fail "--html writes one self-contained page with the summary table and the SVG inline"
fi
if [ -x "$TOP/btt/btt" ] || [ -f "$TOP/btt" ]; then
	mkdir -p "$w/cwd"
	(cd "$w/cwd" && iow -t "$d2/ext4-mixed.bin" -o "$w/cwd/r.svg" --html "$w/cwd/r.html")
	if grep -q '<h2>btt: ext4-mixed</h2>' "$w/cwd/r.html" && grep -q 'All Devices' "$w/cwd/r.html" &&
		[ "$(ls "$w/cwd")" = "$(printf 'r.html\nr.svg')" ]; then
		pass "--html includes our btt's report and leaves no btt data files behind"
	else
		fail "--html includes our btt's report and leaves no btt data files behind ($(ls "$w/cwd" | tr '\n' ' '))"
	fi
else
	skip "--html with btt tables (btt is not built yet)"
fi
# a Perfetto file written beside the trace (btt --perfetto, as make demo does) is linked from
# the page: by its name beside the page, by its absolute path elsewhere; none, no link
mkdir -p "$w/pf/sub"
cp "$d2/ext4-mixed.bin" "$w/pf/"
if [ -x "$TOP/btt/btt" ] && "$TOP/btt/btt" -i "$w/pf/ext4-mixed.bin" --perfetto="$w/pf/ext4-mixed.pftrace" >/dev/null 2>&1; then
	iow -t "$w/pf/ext4-mixed.bin" -o "$w/pf/r.svg" --html "$w/pf/r.html"
	iow -t "$w/pf/ext4-mixed.bin" -o "$w/pf/sub/r.svg" --html "$w/pf/sub/r.html"
	if grep -q '<p>Perfetto trace of ext4-mixed: <a href="ext4-mixed.pftrace">' "$w/pf/r.html" &&
		grep -q "<a href=\"$(cd "$w/pf" && pwd -P)/ext4-mixed.pftrace\">" "$w/pf/sub/r.html" &&
		! grep -q 'Perfetto trace' "$w/rep.html"; then
		pass "--html links the Perfetto file written beside the trace (by name beside the page, by path elsewhere; no link without one)"
	else
		fail "--html and the Perfetto file beside the trace: $(grep -o '<p>Perfetto[^<]*<a href="[^"]*"' "$w/pf/r.html" "$w/pf/sub/r.html" "$w/rep.html" | tr '\n' ' ')"
	fi
else
	skip "--html's Perfetto link (our btt is not built or --perfetto failed)"
fi
nc=$(count_act "$d2/ext4-mixed.bin" C)
if grep -q "<td>ext4-mixed</td><td>[0-9]*</td><td>[0-9]*</td><td>[0-9]*</td><td>$nc</td>" "$w/rep.html"; then
	pass "--html: the summary counts $nc completions for ext4-mixed, as blkparse does"
else
	fail "--html: the summary counts $nc completions for ext4-mixed"
fi

# headless Chromium renders the SVG (the browser a user opens it with)
if ensure_pkg chromium chromium; then
	prof=$(mktemp -d)
	rm -f "$w/chromium.png"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$prof" --screenshot="$w/chromium.png" --window-size=1400,2000 \
		"file://$w/two.svg" >"$w/chromium.log" 2>&1
	rm -rf "$prof"
	if [ -s "$w/chromium.png" ] && [ "$(head -c 4 "$w/chromium.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then
		pass "headless Chromium renders the SVG ($final/chromium.png)"
	else
		fail "headless Chromium renders the SVG"
		tail -n 3 "$w/chromium.log" | sed 's/^/    /'
	fi
else
	skip "headless Chromium rendering (chromium not installed; apt-get install chromium as root)"
fi

# errors
iow -t "$w/nonexistent" -o "$w/x.svg" 2>"$w/err.txt"
rc=$?
if [ $rc = 1 ] && grep -q "^iowatcher: no trace found for '$w/nonexistent'" "$w/err.txt"; then
	pass "a missing trace is an error naming it (exit 1)"
else
	fail "a missing trace is an error naming it (exit $rc: $(head -n 1 "$w/err.txt"))"
fi
iow -t "$d2/ext4-mixed.bin" -O nosuch 2>"$w/err.txt"
rc=$?
if [ $rc = 2 ] && grep -q "unknown graph 'nosuch'" "$w/err.txt"; then
	pass "an unknown graph name is a usage error (exit 2)"
else
	fail "an unknown graph name is a usage error (exit $rc)"
fi
for v in 1.5 0 3601 1e20 x; do
	iow -t "$d2/ext4-mixed.bin" -m --movie-length=$v -o "$w/never.mp4" 2>"$w/err.txt"
	rc=$?
	if [ $rc = 2 ] && grep -q "option '--movie-length'" "$w/err.txt" && [ ! -e "$w/never.mp4" ]; then
		pass "--movie-length=$v is a usage error (exit 2): $(head -n 1 "$w/err.txt")"
	else
		fail "--movie-length=$v: exit $rc, $(head -n 1 "$w/err.txt")"
	fi
done
head -c 1000 /dev/urandom >"$w/garbage.bin"
iow -t "$w/garbage.bin" -o "$w/g.svg" 2>"$w/err.txt"
rc=$?
if [ $rc = 1 ] && grep -q "garbage.bin" "$w/err.txt"; then
	pass "a file that is not a trace is an error naming it (exit 1)"
else
	fail "a file that is not a trace is an error naming it (exit $rc)"
fi

head -c 100000 "$d2/ext4-mixed.bin" >"$w/cut.bin"
rm -f "$w/cut.svg"
iow -t "$w/cut.bin" -o "$w/cut.svg" 2>"$w/err.txt"
rc=$?
got=$(python3 "$w/check-svg.py" "$w/cut.svg" 2>/dev/null | sed -n 's/^plotted //p')
if [ $rc = 1 ] && grep -q "cut.bin'.*offset 99960" "$w/err.txt" && [ "${got:-0}" -gt 0 ]; then
	pass "a truncated trace: error with the offset (exit 1), the events before it are still drawn ($got)"
else
	fail "a truncated trace: exit $rc, $got I/Os drawn: $(head -n 1 "$w/err.txt")"
fi

# movie mode through ffmpeg
if command -v ffmpeg >/dev/null && [ "$have_rsvg" = 1 ]; then
	# 2 s (40 frames, each an SVG made and rendered): the default 30 s is 600 of them
	(cd "$w" && iow -t "$d2/ext4-mixed.bin" -m --movie-length=2 -O io -O iops -w 200 -h 80 -o "$w/movie.mp4" 2>"$w/movie.err")
	if [ -s "$w/movie.mp4" ] && ! ls -d "$w"/io-movie-* >/dev/null 2>&1 &&
		grep -q '^iowatcher: rendering 40 frames into ' "$w/movie.err"; then
		pass "-m --movie-length=2 makes a movie of 40 frames with ffmpeg and removes its frames"
	else
		fail "-m --movie-length=2 makes a movie of 40 frames with ffmpeg and removes its frames"
		tail -n 3 "$w/movie.err" | sed 's/^/    /'
	fi
else
	skip "movie mode (needs ffmpeg and rsvg-convert)"
fi
# -d/-p: trace a scratch loop device with our blktrace while a program runs, then plot it
live_tests() {
	local img loop T n
	if ! is_root; then
		skip "iowatcher -d/-p (needs root for a loop device and tracing)"
		return
	fi
	T=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	if [ ! -d /sys/kernel/debug/block ] && { [ -z "$T" ] || ! grep -qw blk "$T/available_tracers" 2>/dev/null; }; then
		skip "iowatcher -d/-p (no block tracing support in this kernel)"
		return
	fi
	kernel_lock
	img="$w/disk.img"
	truncate -s 64M "$img"
	loop=$(loop_attach "$img" 2>/dev/null)
	if [ -z "$loop" ]; then
		skip "iowatcher -d/-p (losetup failed: no loop device support)"
		return
	fi
	# the kernel's block tracer is one per machine: wait for another test's tracer to finish
	for try in 1 2 3 4 5 6; do
		(cd "$w" && timeout 120 "$IOWBIN" -d "$loop" -D "$w/live" -t live -p -o "$w/live.svg" -- \
			dd if=/dev/zero of="$loop" bs=4096 count=200 oflag=direct status=none \
			>"$w/live.out" 2>"$w/live.err")
		rc=$?
		n=$("$TOP/blkparse" -q -i "$w/live/live" -f '%a %S\n' 2>/dev/null | grep -c '^C ')
		# the kernel's tracer is global: another test's tracer starting or stopping on this
		# machine takes it away from ours (busy, or events missing); try again later
		[ $rc = 0 ] && [ "$n" -ge 200 ] && break
		grep -q -e "Device or resource busy" -e "already in use" -e "has no events" "$w/live.err" || [ "$n" -gt 0 ] || break
		sleep 5
	done
	if grep -q -e "Device or resource busy" -e "already in use" "$w/live.err"; then
		skip "iowatcher -d/-p (the kernel's block tracer stayed busy with another tracer)"
		losetup -d "$loop"
		return
	fi
	if [ $rc = 0 ] && [ "$n" -ge 200 ] && python3 "$w/check-svg.py" "$w/live.svg" | grep -q "^plotted [1-9]"; then
		pass "-d DEV -p PROG: traces the device while the program runs ($n completions) and plots it"
	else
		fail "-d DEV -p PROG: rc=$rc, $n completions traced: $(tail -n 2 "$w/live.err" | tr '\n' ' ')"
	fi
	check_svg "-d DEV -p PROG: the SVG is valid" "$w/live.svg" graphs=$ALL
	# without -p: trace until interrupted
	for try in 1 2 3 4 5 6; do
		(cd "$w" && exec timeout 120 "$IOWBIN" -d "$loop" -D "$w/live2" -o "$w/live2.svg" \
			>"$w/live2.out" 2>"$w/live2.err") &
		pid=$!
		sleep 3
		dd if="$loop" of=/dev/null bs=4096 count=100 iflag=direct status=none
		sleep 1
		kill -INT $pid 2>/dev/null
		wait $pid
		rc=$?
		grep -q -e "Device or resource busy" -e "already in use" -e "has no events" "$w/live2.err" || break
		sleep 5
	done
	if grep -q -e "Device or resource busy" -e "already in use" "$w/live2.err"; then
		skip "iowatcher -d without -p (the kernel's block tracer stayed busy with another tracer)"
		losetup -d "$loop"
		return
	fi
	if [ $rc = 0 ] && grep -q "Tracing until interrupted" "$w/live2.err" &&
		python3 "$w/check-svg.py" "$w/live2.svg" | grep -q "^plotted [1-9]"; then
		pass "-d DEV without -p: traces until SIGINT, then plots"
	else
		fail "-d DEV without -p: rc=$rc $(tail -n 2 "$w/live2.err" | tr '\n' ' ')"
	fi
	# two devices: one trace, each device in its own bank of the I/O map
	truncate -s 32M "$w/disk2.img"
	loop2=$(loop_attach "$w/disk2.img" 2>/dev/null)
	if [ -n "$loop2" ]; then
		for try in 1 2 3 4 5 6; do
			rm -rf "$w/live3"
			(cd "$w" && timeout 120 "$IOWBIN" -d "$loop" -d "$loop2" -D "$w/live3" -t two -p \
				-O io -a C -o "$w/live3.svg" -- sh -c "dd if=/dev/zero of=$loop bs=4096 count=50 oflag=direct status=none; dd if=/dev/zero of=$loop2 bs=4096 count=30 oflag=direct status=none" \
				>"$w/live3.out" 2>"$w/live3.err")
			rc=$?
			got=$(python3 "$w/check-svg.py" "$w/live3.svg" 2>/dev/null | sed -n 's/^plotted //p')
			[ $rc = 0 ] && [ "${got:-0}" -ge 80 ] && break
			sleep 5
		done
		if [ $rc = 0 ] && [ "${got:-0}" -ge 80 ] && [ -d "$w/live3/two" ] &&
			[ "$(ls "$w/live3/two" | grep -c '\.blktrace\.0$')" = 2 ]; then
			pass "-d DEV1 -d DEV2 -p: per-device files in DIR/NAME/, plotted as one trace ($got I/Os)"
		elif grep -q -e "Device or resource busy" -e "already in use" "$w/live3.err"; then
			skip "iowatcher -d DEV1 -d DEV2 (the kernel's block tracer stayed busy with another tracer)"
		else
			fail "-d DEV1 -d DEV2 -p: rc=$rc, plotted '$got': $(tail -n 2 "$w/live3.err" | tr '\n' ' ')"
		fi
		losetup -d "$loop2"
	fi
	losetup -d "$loop"
}
live_tests
exit 0
