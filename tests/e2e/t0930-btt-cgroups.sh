#!/bin/bash
# btt's "I/O by cgroup" section (btt/report/cgroups.c) on a trace with cgroup notes made by
# tests/gen/cgtrace.py, which computes the rows itself from the I/Os it generates: per cgroup
# (a path note's path, "id N" without one, "(no cgroup note)" for I/Os no run names) and device,
# the I/Os and bytes exactly, the Q2C and D2C means to the nanosecond, their 99th percentiles
# within the histogram's 1/64; the bios before the first note counted apart. The same events
# without the notes: the report is the same but for the section, which it does not print.
. "$(dirname "$0")/../lib.sh"

GEN="$TOP/tests/gen/cgtrace.py"
BTT="$TOP/btt/btt"
[ -n "${VALGRIND:-}" ] && BTT="$TOP/tests/vg.sh $BTT"
if ! command -v python3 >/dev/null; then
	skip "btt cgroups (python3 missing)"
	exit 0
fi
w="$OUT/t0930"
rm -rf "$w"
mkdir -p "$w"
python3 "$GEN" "$w/cg.bin" "$w/cg.exp" || fail "btt cgroups: the generator failed"
python3 "$GEN" --no-notes "$w/plain.bin" "$w/plain.exp" || fail "btt cgroups: the generator failed"
$BTT -i "$w/cg.bin" >"$w/cg.out" 2>"$w/cg.err" || fail "btt cgroups: btt failed: $(head -c 300 "$w/cg.err")"
$BTT -i "$w/plain.bin" >"$w/plain.out" 2>"$w/plain.err" ||
	fail "btt cgroups: btt failed on the trace without notes: $(head -c 300 "$w/plain.err")"

# the section's rows as "name<TAB>maj,min<TAB>ios<TAB>bytes<TAB>q2c<TAB>q2cp99<TAB>d2c<TAB>d2cp99"
# (the section: its title, a blank line, the table, a blank line, the counts, a blank line)
section() { # FILE: 1 the table's rows, 0 the report without the section
	awk -v want="$2" '/^==================== I\/O by cgroup/ { s = 1; b = 0; next }
		s && /^$/ { if (++b == 3) s = 0; next }
		s { if (want && b == 1 && !/^CGROUP/) print; next }
		!want { print }' "$1"
}
section "$w/cg.out" 1 |
	sed -E 's/^(.*[^ ]) +\( *([0-9]+), *([0-9]+)\) \| +([0-9]+) +([0-9]+) \| +([0-9.]+) +([0-9.]+) \| +([0-9.]+) +([0-9.]+)$/\1\t\2,\3\t\4\t\5\t\6\t\7\t\8\t\9/' >"$w/rows"
if out=$(python3 - "$w/cg.exp" "$w/rows" <<'EOF'
import sys
exp = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
got = [l.rstrip('\n').split('\t') for l in open(sys.argv[2])]
exp = [e for e in exp if e[0] != 'no_q']
bad = []
if len(exp) != len(got):
    bad.append('%d rows, want %d' % (len(got), len(exp)))
for e, g in zip(exp, got):
    if len(g) != 8 or e[:4] != g[:4]:
        bad.append('row %s, want %s' % (g[:4], e[:4]))
        continue
    for k, what in ((4, 'Q2C avg'), (6, 'D2C avg')):
        if abs(float(g[k]) - float(e[k])) > 1.5e-9:
            bad.append('%s %s: %s %s, want %s' % (e[0], e[1], what, g[k], e[k]))
    for k, what in ((5, 'Q2C p99'), (7, 'D2C p99')):
        v, want = round(float(g[k]) * 1e9), int(e[k])
        if not want <= v <= want + want / 64 + 1:
            bad.append('%s %s: %s %d ns, want %d ns (+1/64)' % (e[0], e[1], what, v, want))
print('; '.join(bad) if bad else 'ok %d' % len(exp))
EOF
); [ "${out%% *}" = ok ]; then
	pass "btt cgroups: ${out#ok } rows (cgroup by path, by id, none; two devices): I/Os, bytes, Q2C and D2C mean and p99 as computed"
else
	fail "btt cgroups: $out ($w/rows against $w/cg.exp)"
fi
want=$(sed -n 's/^no_q\t//p' "$w/cg.exp")
grep -q "^$want bios queued before the first cgroup note (or whose Q is not in the trace): not in the table\$" "$w/cg.out" &&
	pass "btt cgroups: the $want bios queued before the first note are counted apart" ||
	fail "btt cgroups: no line counting the $want bios queued before the first note"
grep -q "^1 cgroups with no path note" "$w/cg.out" &&
	pass "btt cgroups: the cgroup without a path note is said" ||
	fail "btt cgroups: the cgroup without a path note is not said"
# the rest of the report is the same without the notes, and the section is not printed
section "$w/cg.out" 0 >"$w/cg.rest"
cp "$w/plain.out" "$w/plain.rest"
if cmp -s "$w/cg.rest" "$w/plain.rest" && ! grep -q "I/O by cgroup" "$w/plain.out"; then
	pass "btt cgroups: the notes change nothing else in the report; without them there is no section"
else
	fail "btt cgroups: the report differs beyond the section ($w/cg.rest, $w/plain.rest)"
fi
# with --percentiles, btt's own model of every bio runs from the start: the same section
$BTT -i "$w/cg.bin" --percentiles >"$w/pct.out" 2>"$w/pct.err" ||
	fail "btt cgroups: btt --percentiles failed: $(head -c 300 "$w/pct.err")"
section "$w/cg.out" 1 >"$w/rows.own"
section "$w/pct.out" 1 >"$w/rows.shared"
cmp -s "$w/rows.own" "$w/rows.shared" && [ -s "$w/rows.own" ] &&
	pass "btt cgroups: the same rows when btt's model of every bio runs from the start (--percentiles)" ||
	fail "btt cgroups: other rows with --percentiles ($w/rows.own, $w/rows.shared)"
