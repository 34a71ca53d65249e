#!/bin/bash
# iowatcher legends stay on the page (issue 18, item 9): with long -l labels (the issue's
# "loop0 50/50" and "loop1 30/70", whose histogram notes ran past the 1050 px page, and
# longer, wider and non-ASCII ones) over five traces, every legend entry and note must lie
# within its graph (a nested <svg>, which clips what passes its edge) and so within the page.
# Two checks: an estimate from the SVG alone, x + the sum of a width per class of
# character (narrow such as 'f', 'r', 't', space: 0.42 em; other lower case and digits:
# 0.64; capitals: 0.79; 'm', 'w', 'M', 'W', '@', '%': 1.02; other ASCII: 0.84; anything
# else: 1.0), each the widest of its class in DejaVu Sans and Liberation Sans, so a bound
# for those two fonts without kerning; and the real extents measured by headless Chromium
# (getBoundingClientRect of each text) with the fonts a viewer gets on Debian: Chromium's
# own sans-serif (Liberation Sans), and DejaVu Sans (rsvg-convert's).
. "$(dirname "$0")/../lib.sh"

IOWBIN="$TOP/iowatcher/iowatcher"
if [ ! -x "$IOWBIN" ]; then
	fail "iowatcher is built ($IOWBIN missing)"
	exit 0
fi
read -ra VG <<<"$VG" # the valgrind run's command (tests/lib.sh), or none
if ! command -v python3 >/dev/null; then
	skip "iowatcher legend layout (python3 missing)"
	exit 0
fi
w="$OUT/iowatcher-legend"
rm -rf "$w"
mkdir -p "$w"

args=()
labels=("loop0 50/50" "loop1 30/70" "a much longer label for the third trace of five"
	"WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW" "ümlaut täst ünïcödé – dashes")
i=0
for t in nullb-randrw ext4-mixed multi-dev part-remap complete-only; do
	d=$(unpack "$t")
	args+=(-t "$d/$t.bin" -l "${labels[$i]}")
	i=$((i + 1))
done
# the issue's case, then five traces, then two columns of narrower graphs
"${VG[@]}" "$IOWBIN" -t "$(unpack nullb-randrw)/nullb-randrw.bin" -l "loop0 50/50" \
	-t "$(unpack ext4-mixed)/ext4-mixed.bin" -l "loop1 30/70" -o "$w/two.svg" 2>"$w/two.err" ||
	fail "iowatcher with two labelled traces: $(head -c 200 "$w/two.err")"
"${VG[@]}" "$IOWBIN" "${args[@]}" -o "$w/five.svg" 2>"$w/five.err" ||
	fail "iowatcher with five labelled traces: $(head -c 200 "$w/five.err")"
"${VG[@]}" "$IOWBIN" "${args[@]}" -c 2 -w 500 -h 200 -o "$w/cols.svg" 2>"$w/cols.err" ||
	fail "iowatcher -c 2 -w 500 -h 200 with five labelled traces: $(head -c 200 "$w/cols.err")"

# legend.py SVG LABEL...: the estimate, and the completeness of the entries
cat >"$w/legend.py" <<'EOF'
import sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
labels = sys.argv[2:]
def em(c):
    if c in 'fijlrt .,:;\'|!I()[]-/\\':
        return 0.42
    if c in 'mwMW@%':
        return 1.02
    if c.islower() and c.isascii() or c.isdigit() and c.isascii():
        return 0.64
    if c.isupper() and c.isascii():
        return 0.79
    return 0.84 if c.isascii() else 1.0
page = float(root.get('width'))
bad, n = [], 0
def lines(t):
    ts = [s for s in t.iter(NS + 'tspan')]
    if not ts:
        return [(float(t.get('x')), t.text or '')]
    return [(float(s.get('x')), s.text or '') for s in ts]
for g in root.iter(NS + 'svg'):
    if g.get('class') != 'graph':
        continue
    gx, gw = float(g.get('x')), float(g.get('width'))
    name = g.get('id')
    texts = []
    for e in g.iter(NS + 'g'):
        if e.get('class') == 'legend-entry':
            texts += [(t, 'entry') for t in e.iter(NS + 'text')]
    texts += [(t, 'note') for t in g.iter(NS + 'text') if t.get('class') == 'legend-note']
    entries = []
    for t, kind in texts:
        size = float(t.get('font-size'))
        for x, s in lines(t):
            n += 1
            right = gx + x + sum(em(c) for c in s) * size
            if gx + x < gx or right > gx + gw or right > page:
                bad.append('%s: %r ends at about %.0f, the graph at %.0f' % (name, s, right, gx + gw))
        if kind == 'entry':
            entries.append(''.join(s for _, s in lines(t)).replace(' ', ''))
    # with room for all, every entry names its trace's label in full
    if any('more entr' in ''.join(t.itertext()) for t, _ in texts):
        continue
    for lab in labels:
        if not any(e.startswith(lab.replace(' ', '')) for e in entries):
            bad.append('%s: no entry with the label %r' % (name, lab))
print('ok %d' % n if not bad and n else 'bad: ' + '; '.join(bad[:4]) + (' (no legend text)' if not n else ''))
EOF
for f in two five cols; do
	if [ $f = two ]; then
		res=$(python3 "$w/legend.py" "$w/$f.svg" "loop0 50/50" "loop1 30/70")
	else
		res=$(python3 "$w/legend.py" "$w/$f.svg" "${labels[@]}")
	fi
	case $res in
	ok*) pass "$f.svg: ${res#ok } legend lines within their graph by a per-character bound, every label shown" ;;
	*) fail "$f.svg: legend by a per-character bound: $res" ;;
	esac
done

# measured: each SVG inline in a page whose script writes the extents of the legend texts
measure() { # svg font-family page
	python3 - "$1" "$2" "$3" <<'EOF'
import sys
svg, font, page = sys.argv[1:]
s = open(svg, encoding='utf-8').read()
s = s[s.index('<svg'):]
if font != 'default':
    s = s.replace('font-family="sans-serif"', 'font-family="%s"' % font, 1)
open(page, 'w', encoding='utf-8').write('''<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body { margin: 0 }</style></head><body>''' + s + '''<pre id="out"></pre><script>
var root = document.querySelector('svg'), r0 = root.getBoundingClientRect(), out = [], n = 0;
root.querySelectorAll('svg.graph').forEach(function (g) {
  var gx = +g.getAttribute('x'), gy = +g.getAttribute('y');
  var gw = +g.getAttribute('width'), gh = +g.getAttribute('height');
  g.querySelectorAll('g.legend-entry text, text.legend-note').forEach(function (t) {
    var b = t.getBoundingClientRect(), x0 = b.left - r0.left, x1 = b.right - r0.left;
    var y1 = b.bottom - r0.top;
    n++;
    if (x0 < gx - 0.5 || x1 > gx + gw + 0.5 || x1 > root.width.baseVal.value + 0.5 || y1 > gy + gh + 0.5)
      out.push('bad: ' + g.id + ': "' + t.textContent + '" spans x ' + x0.toFixed(1) + '..' +
        x1.toFixed(1) + ', bottom ' + y1.toFixed(1) + '; the graph x ' + gx + '..' + (gx + gw) +
        ', bottom ' + (gy + gh));
  });
});
out.push('measured ' + n);
document.getElementById('out').textContent = out.join('\\n');
</script></body></html>''')
EOF
}
have_chromium=0
command -v chromium >/dev/null && have_chromium=1
if [ $have_chromium = 0 ] && is_root; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >"$w/apt.log" 2>&1 &&
		have_chromium=1
fi
if [ $have_chromium = 1 ]; then
	for f in two five cols; do
		for font in default "DejaVu Sans"; do
			tag=${font// /}
			measure "$w/$f.svg" "$font" "$w/$f-$tag.html"
			# through the memo (tests/lib.sh): our SVG is the same in the plain, ASan
			# and valgrind runs, and Chromium took some 4 CPU s a page (15 of this
			# script's 25 in each run); its profile an empty directory of the run's
			prof="$w/prof-$f-$tag"
			rm -rf "$prof"
			mkdir -p "$prof"
			memo -i "$w/$f-$tag.html" timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
				--disable-background-networking --disable-component-update --disable-sync \
				--user-data-dir="$prof" --dump-dom "file://$w/$f-$tag.html" \
				>"$w/$f-$tag.dom" 2>"$w/$f-$tag.log"
			rm -rf "$prof"
			res=$(python3 -c '
import html, re, sys
s = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<pre id=\"out\">(.*?)</pre>", s, re.S)
print(html.unescape(m.group(1)) if m else "bad: no result from the page")' "$w/$f-$tag.dom")
			n=$(echo "$res" | sed -n 's/^measured //p')
			if echo "$res" | grep -q '^bad'; then
				fail "$f.svg in Chromium ($font font): $(echo "$res" | grep '^bad' | head -n 3 | tr '\n' ' ')"
			elif [ "${n:-0}" -gt 0 ]; then
				pass "$f.svg in Chromium ($font font): all $n legend texts within their graph"
			else
				fail "$f.svg in Chromium ($font font): nothing measured: $(tail -n 2 "$w/$f-$tag.log")"
			fi
		done
	done
else
	skip "legend extents measured in Chromium (chromium not installed; apt-get install chromium as root)"
fi
