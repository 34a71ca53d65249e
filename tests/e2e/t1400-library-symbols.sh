#!/bin/bash
# One library per layer (issue 35): every global symbol of each library carries that library's
# prefix, the libraries depend on one another one way only (the Perfetto writer and the
# export use the core library, the core uses neither, neither uses the other), and blkparse,
# blktrace and blkiomon hold no Perfetto, protobuf, HTTP or export code and link no libcurl or
# libdeflate (the export's gzip). Read with nm and readelf from the built files; nothing runs.
. "$(dirname "$0")/../lib.sh"

if ! command -v nm >/dev/null || ! command -v readelf >/dev/null; then
	skip "library symbols (nm and readelf from binutils are needed)"
	exit 0
fi

core=lib/libblk.a
perfetto=lib/perfetto/libblkperfetto.a
export=lib/export/libblkexport.a
# the prefixes of each library, and of the two that the core and the tools must not hold
core_re='^blk_'
perfetto_re='^blk_(pb|perfetto)_'
export_re='^blk_(export|http|schema)_'
extra_re='^blk_(pb|perfetto|export|http|schema)_'

# the global symbols a file defines, or those it needs, one a line; the ones a sanitizer's
# instrumentation adds (__odr_asan.NAME, __asan_*, __ubsan_*, __sanitizer_*: the ASan run of
# make check builds the tree with them) are the compiler's, not the library's
san_re='^__(odr_asan|asan_|ubsan_|sanitizer_|sancov_)'
defined() {
	nm -g --defined-only "$TOP/$1" 2>/dev/null | awk 'NF == 3 { print $3 }' | grep -Ev "$san_re" | sort -u
}
needed() { nm -u "$TOP/$1" 2>/dev/null | awk '{ print $NF }' | grep -Ev "$san_re" | sort -u; }
# the first few lines of a list, on one line
few() { head -n 5 | tr '\n' ' '; }
# pass with $1 if $bad is empty, else fail with $2 and the first few lines of $bad
verdict() {
	if [ -z "$bad" ]; then
		pass "$1"
	else
		fail "$2 $(echo "$bad" | few)"
	fi
}

# lib prefix-regex what
check_prefix() {
	local bad n

	if [ ! -f "$TOP/$1" ]; then
		fail "$1 is not built"
		return
	fi
	n=$(defined "$1" | wc -l)
	bad=$(defined "$1" | grep -Ev "$2")
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		pass "$1: all $n global symbols carry its prefix ($3)"
	else
		fail "$1: global symbols without its prefix ($3): $(echo "$bad" | few)"
	fi
}
check_prefix "$core" "$core_re" "blk_"
check_prefix "$perfetto" "$perfetto_re" "blk_pb_, blk_perfetto_"
check_prefix "$export" "$export_re" "blk_export_, blk_http_, blk_schema_"

# the core library defines and needs nothing of the other two
bad=$( (defined "$core"; needed "$core") | grep -E "$extra_re")
verdict "$core holds and uses no Perfetto, protobuf, HTTP or export symbol" "$core holds or uses:"
# the two others use the core library, not each other
bad=$(needed "$perfetto" | grep -E "$export_re")
verdict "$perfetto uses nothing of $export" "$perfetto uses"
bad=$(needed "$export" | grep -E "$perfetto_re")
verdict "$export uses nothing of $perfetto" "$export uses"

# the tools without Perfetto or the export: no symbol of those libraries, no HTTP client
# (libcurl) or libdeflate, neither linked in nor needed from a shared library
for t in blkparse blktrace blkiomon; do
	if [ ! -x "$TOP/$t" ]; then
		fail "$t is not built"
		continue
	fi
	bad=$(nm "$TOP/$t" 2>/dev/null | awk 'NF == 3 { print $3 }' |
		grep -E "$extra_re|^(curl|libdeflate)_" | sort -u)
	verdict "$t holds no Perfetto, protobuf, HTTP or export code" "$t holds"
	bad=$(readelf -d "$TOP/$t" 2>/dev/null | grep -E 'NEEDED.*(libcurl|libdeflate)' |
		sed 's/.*\[\(.*\)\].*/\1/')
	verdict "$t links neither libcurl nor libdeflate" "$t needs"
done
